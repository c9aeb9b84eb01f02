"""The family-aware one-run bound (``family="gaussian"``, Xiang et al. 2025): it covers μ-GDP
mechanisms at their exact μ, reaches most of the true ε where the assumption-free bound does
not, and says that it assumes μ-GDP."""

import math

import numpy as np
import pytest

from dpclaims.audit import one_run, one_run_audit
from dpclaims.audit.one_run_family import family_p_value
from dpclaims.errors import InputError
from dpclaims.gdp import gdp_epsilon

DELTA, ALPHA = 1e-5, 0.05


def _correct_counts(n, k, mu, reps, seed):
    """Correct guesses ("in" for the k highest, "out" for the k lowest) of ``reps`` runs of the
    Gaussian mechanism N(μ, 1) / N(0, 1) on ``n`` canaries, vectorised over runs."""
    rng = np.random.default_rng(seed)
    included = rng.random((reps, n)) < 0.5
    scores = rng.standard_normal((reps, n)) + mu * included
    ranked = np.take_along_axis(included, np.argsort(scores, axis=1), axis=1)
    return ranked[:, n - k :].sum(axis=1) + (~ranked[:, :k]).sum(axis=1)


def _false_violations(n, k, mu, mu_tested, reps=400, seed=0):
    """Share of runs whose family bound exceeds ε(``mu_tested``): the p-value at
    ``mu_tested`` below α (one p-value per distinct count)."""
    correct = _correct_counts(n, k, mu, reps, seed)
    values, times = np.unique(correct, return_counts=True)
    hits = np.array([family_p_value(2 * k - v, 2 * k, n, mu_tested) < ALPHA for v in values])
    return float(times[hits].sum() / reps)


@pytest.mark.parametrize("mu,k", [(1.0, 250), (2.0, 50)])
def test_family_bound_covers_gaussian_mechanisms_at_their_exact_mu(mu, k):
    reps = 400
    limit = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert _false_violations(1_000, k, mu, mu, reps) <= limit
    # the same check flags a mechanism leaking more than the μ tested (it can fail)
    assert _false_violations(1_000, k, mu, 0.6 * mu, reps) > 0.5


def test_family_bound_reaches_most_of_the_true_epsilon_at_1e4_canaries():
    n, mu = 10_000, 1.0
    rng = np.random.default_rng(3)
    included = rng.random(n) < 0.5
    scores = rng.standard_normal(n) + mu * included
    truth = gdp_epsilon(mu, DELTA)
    common = dict(epsilon=truth, delta=DELTA, k_plus=n // 4, k_minus=n // 4)
    family = one_run_audit(scores, included, family="gaussian", **common)
    free = one_run_audit(scores, included, **common)
    assert 0.8 <= family.epsilon_lower / truth <= 1.0
    assert free.epsilon_lower / truth < 0.4
    assert family.assumption == "gaussian-family" and family.family == "gaussian"


def test_family_violation_is_worded_as_conditional():
    def leaky(included, rng):
        return rng.standard_normal(included.size) + 2.0 * included

    result = one_run(leaky, 2_000, epsilon=1.0, delta=DELTA, family="gaussian")
    assert result.verdict == "violation"
    line = result.line()
    assert "violation assuming μ-GDP" in line and "valid only if the mechanism is μ-GDP" in line
    default = one_run(leaky, 2_000, epsilon=1.0, delta=DELTA)
    assert default.family is None and "assuming" not in default.line()


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(family="laplace"), "family must be one of 'gaussian', got 'laplace'"),
        (dict(family="gaussian", assumption="gaussian-dp"), "drop assumption='gaussian-dp'"),
        (dict(family="gaussian", delta=0.0), "needs delta > 0"),
    ],
)
def test_family_input_checks_name_the_argument(kwargs, needle):
    scores, included = np.arange(10.0), np.arange(10) % 2 == 0
    call = dict(epsilon=1.0, delta=DELTA) | kwargs
    with pytest.raises(InputError) as caught:
        one_run_audit(scores, included, **call)
    message = str(caught.value)
    assert needle in message and "\n" not in message
