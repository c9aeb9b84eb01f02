"""Problem: the shared problem class, validated once."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpclaims.errors import InputError, check_count, check_positive
from dpclaims.problem import Problem


def test_defaults_and_samples():
    p = Problem(n=100, m=5, epsilon=1.0)
    assert (p.d, p.delta, p.radius, p.smoothness) == (1, 0.0, math.inf, None)
    assert p.samples == 500


@pytest.mark.parametrize(
    "field, value",
    [
        ("n", 0),
        ("m", 1.5),
        ("epsilon", -1.0),
        ("delta", 1.0),
        ("lipschitz", 0.0),
        ("smoothness", math.inf),
        ("strong_convexity", -0.1),
        ("radius", 0.0),
    ],
)
def test_bad_field_names_the_field(field, value):
    with pytest.raises(InputError, match=field):
        Problem(**{"n": 10, "epsilon": 1.0, field: value})


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        Problem(10, 1.0)  # type: ignore[misc]


@given(st.integers(1, 10**6), st.floats(0.01, 100))
def test_replace_keeps_other_fields(n, eps):
    p = Problem(n=7, m=3, d=4, epsilon=2.0, delta=1e-6)
    q = p.replace(n=n, epsilon=eps)
    assert (q.n, q.epsilon, q.m, q.d, q.delta) == (n, eps, 3, 4, 1e-6)


def test_validators():
    assert check_positive(0, "x", allow_zero=True) == 0.0
    assert check_positive(math.inf, "r", allow_inf=True) == math.inf
    with pytest.raises(InputError, match=r"x must be a number > 0, got nan"):
        check_positive(float("nan"), "x", allow_inf=True)
    with pytest.raises(InputError, match="--k 10"):
        check_count(0, "--k")
