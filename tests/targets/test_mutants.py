import math

import pytest

from dpclaims.audit import audit
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.targets.mutants import Mutant, get_mutant, list_mutants, register_mutant


def test_generic_mutants_are_registered_with_their_true_epsilon():
    names = [m.name for m in list_mutants(paper="generic")]
    assert names == [
        "gaussian-half-noise",
        "gaussian-item-noise",
        "laplace-half-scale",
        "noisy-max-value",
        "dp-sgd-no-clip",
    ]
    assert get_mutant("laplace-half-scale").true_epsilon == 2.0
    assert 2.0 < get_mutant("gaussian-half-noise").true_epsilon < 2.3
    assert math.isinf(get_mutant("dp-sgd-no-clip").true_epsilon)
    assert all(m.kind == "privacy" for m in list_mutants(kind="privacy", paper="generic"))


@pytest.mark.parametrize("name", ["gaussian-half-noise", "laplace-half-scale"])
def test_a_generic_mutant_builds_an_auditable_violation(name):
    target = get_mutant(name).build()
    result = audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=target.claim,
        trials=50_000,
        seed=1,
        execution=Execution(backend="serial"),
    )
    assert result.verdict == "violation"
    assert result.epsilon_lower <= get_mutant(name).true_epsilon


def test_registry_errors():
    with pytest.raises(InputError, match="unknown mutant"):
        get_mutant("nope")
    with pytest.raises(InputError, match="kind must be one of"):
        list_mutants(kind="speed")
    clash = Mutant("laplace-half-scale", "generic", "privacy", "different", 3.0, build=dict)
    with pytest.raises(InputError, match="already registered"):
        register_mutant(clash)
    with pytest.raises(InputError, match="true_epsilon"):
        Mutant("x", "generic", "privacy", "d", -1.0, build=dict)
