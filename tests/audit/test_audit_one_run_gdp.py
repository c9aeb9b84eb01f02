"""One-run Gaussian-DP bound (Mahloujifar, Melis, Chaudhuri 2024): recursion, calibration."""

import numpy as np
import pytest

from dpclaims.audit import (
    audit_one_run_scores,
    gdp_epsilon,
    gdp_mu_of,
    one_run_audit,
    one_run_gdp_mu,
    one_run_gdp_rejects,
)
from dpclaims.errors import InputError

RUNS = 200
M = 1000


def null_run(seed):
    """Scores with no signal: the same distribution whatever the inclusion bit."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(M), rng.random(M) < 0.5


def gaussian_run(seed, mu, m=M):
    """The canonical μ-GDP canary scores: N(μ·b, 1) for inclusion bit b."""
    rng = np.random.default_rng(seed)
    included = rng.random(m) < 0.5
    return rng.standard_normal(m) + mu * included, included


def test_recursion_is_monotone_in_mu_and_level():
    assert one_run_gdp_rejects(1000, 100, 95, 0.5, 0.05)
    assert not one_run_gdp_rejects(1000, 100, 95, 3.0, 0.05)
    assert not one_run_gdp_rejects(1000, 100, 50, 0.0, 0.05)  # chance level
    mu = one_run_gdp_mu(1000, 100, 95, 0.95)
    assert one_run_gdp_rejects(1000, 100, 95, mu, 0.05)
    assert not one_run_gdp_rejects(1000, 100, 95, mu + 1e-6, 0.05)
    assert one_run_gdp_mu(1000, 100, 95, 0.95, tests=6) < mu


def test_gdp_mu_of_inverts_gdp_epsilon():
    for mu in (0.3, 1.0, 2.5):
        assert gdp_mu_of(gdp_epsilon(mu, 1e-5), 1e-5) == pytest.approx(mu, rel=1e-6)


def test_each_bound_states_its_assumption():
    scores, included = gaussian_run(0, 1.0)
    found = audit_one_run_scores(scores, included, epsilon=1.0, delta=1e-5)
    steinke, gdp, rank = found.bounds
    assert (steinke.assumption, gdp.assumption, rank.assumption) == (
        "none",
        "gaussian-dp",
        "independent-gaussian-dp",
    )
    assert steinke.mu_lower is None and gdp.mu_lower > 0
    assert gdp.grid > 1  # guess counts not fixed: a union bound over the grid
    assert "assumes a Gaussian-DP mechanism" in found.summary()
    assert found.to_dict()["bounds"][1]["assumption"] == "gaussian-dp"
    assert found.verdict == steinke.verdict


def test_fixed_guesses_pay_no_union_bound():
    scores, included = gaussian_run(1, 1.0)
    fixed = one_run_audit(
        scores, included, epsilon=1.0, delta=1e-5, k_plus=50, k_minus=50, assumption="gaussian-dp"
    )
    assert (fixed.grid, fixed.guesses) == (1, 100)


def test_gdp_bound_needs_delta():
    scores, included = gaussian_run(0, 1.0)
    with pytest.raises(InputError, match="delta > 0"):
        one_run_audit(scores, included, epsilon=1.0, assumption="gaussian-dp")
    with pytest.raises(InputError, match="assumption"):
        one_run_audit(scores, included, epsilon=1.0, delta=1e-5, assumption="gaussian")
    assert len(audit_one_run_scores(scores, included, epsilon=1.0).bounds) == 1


def test_null_calibration_200_runs():
    """Identical-distribution scores: each guessing bound positive in at most 5% of 200 runs
    (the full-ranking bound, an exact-level test, is checked in test_audit_one_run_rank)."""
    positive = {"none": 0, "gaussian-dp": 0}
    for seed in range(RUNS):
        scores, included = null_run(seed)
        for assumption in positive:
            bound = one_run_audit(scores, included, epsilon=1.0, delta=1e-5, assumption=assumption)
            positive[assumption] += bound.epsilon_lower > 0
    assert positive["none"] <= 0.05 * RUNS
    assert positive["gaussian-dp"] <= 0.05 * RUNS


@pytest.mark.slow
def test_gdp_bound_is_valid_on_a_gaussian_dp_mechanism():
    """On N(μ b, 1) scores (exactly μ-GDP per canary) the bound stays below the true ε in at
    least 95% of 200 runs."""
    mu, delta = 1.0, 1e-5
    true_eps = gdp_epsilon(mu, delta)
    below = 0
    for seed in range(RUNS):
        scores, included = gaussian_run(1000 + seed, mu)
        result = one_run_audit(
            scores, included, epsilon=true_eps, delta=delta, assumption="gaussian-dp"
        )
        below += result.epsilon_lower <= true_eps
    assert below >= 0.95 * RUNS


def test_matches_jax_privacy_recursion_when_installed():
    auditing = pytest.importorskip("jax_privacy.auditing")
    for m, r, v in ((1000, 100, 93), (10000, 1000, 902), (1000, 40, 40)):
        ours = gdp_epsilon(one_run_gdp_mu(m, r, v, 0.95), 1e-5)
        theirs = auditing._epsilon_one_run_fdp(0.0, m, r, v, 0.05, 1e-5)
        assert ours == pytest.approx(theirs, rel=1e-3, abs=1e-4)
