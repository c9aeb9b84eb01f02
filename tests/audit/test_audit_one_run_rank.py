"""One-run full-ranking bound for independent Gaussian-DP canaries: statistic, law, calibration."""

import math

import numpy as np
import pytest
from scipy import stats

from dpclaims.audit import audit_one_run_scores, gdp_epsilon, one_run_audit
from dpclaims.audit.one_run_rank import (
    MIN_PER_SIDE,
    mann_whitney_pairs,
    rank_gdp_mu,
    rank_gdp_p_value,
    rank_moments,
)
from dpclaims.errors import InputError

LEVEL = 0.05


def gaussian_run(seed, mu, m=1000):
    """Scores ``N(μ b, 1)`` of independent μ-GDP canaries, inclusion bits ``b``, tie-breakers."""
    rng = np.random.default_rng(seed)
    included = rng.random(m) < 0.5
    return rng.standard_normal(m) + mu * included, included, rng.random(m)


def rank_mu(scores, included, ties, confidence=1 - LEVEL):
    order = np.lexsort((ties, scores))
    n_in = int(included.sum())
    pairs = mann_whitney_pairs(order, included)
    return rank_gdp_mu(pairs, n_in, len(scores) - n_in, confidence)


def consistent_with_level(count, runs):
    """A one-sided binomial test at 1% does not reject "rate <= LEVEL" (an exact level-5% test
    gives LEVEL * runs positives on average, so a bare ``count <= LEVEL * runs`` fails often)."""
    return stats.binom.sf(count - 1, runs, LEVEL) >= 0.01


def test_statistic_is_scipy_mann_whitney_u():
    scores, included, ties = gaussian_run(0, 1.0, m=300)
    ours = mann_whitney_pairs(np.lexsort((ties, scores)), included)
    theirs = stats.mannwhitneyu(scores[included], scores[~included], alternative="greater")
    assert ours == theirs.statistic


def test_moments_match_reference_formulas():
    # μ = 0: E U = n1 n0 / 2 and Var U = n1 n0 (n1 + n0 + 1) / 12 (Mann-Whitney 1947)
    mean, sd = rank_moments(0.0, 300, 200)
    assert mean == pytest.approx(30_000) and sd**2 == pytest.approx(300 * 200 * 501 / 12)
    # the AUC of N(μ, 1) against N(0, 1) is Φ(μ/√2); B - A² from the bivariate normal cdf
    mu, n1, n0 = 1.3, 400, 250
    h = mu / math.sqrt(2)
    auc = stats.norm.cdf(h)
    both = stats.multivariate_normal(mean=[0, 0], cov=[[1, 0.5], [0.5, 1]]).cdf([h, h])
    variance = n1 * n0 * (auc * (1 - auc) + (n1 + n0 - 2) * (both - auc**2))
    mean, sd = rank_moments(mu, n1, n0)
    assert mean == pytest.approx(n1 * n0 * auc) and sd == pytest.approx(math.sqrt(variance), 1e-4)


def test_p_value_at_zero_is_scipy_asymptotic_test():
    scores, included, ties = gaussian_run(1, 0.2, m=400)
    pairs = mann_whitney_pairs(np.lexsort((ties, scores)), included)
    n_in = int(included.sum())
    theirs = stats.mannwhitneyu(
        scores[included], scores[~included], alternative="greater", method="asymptotic"
    )
    assert rank_gdp_p_value(pairs, n_in, 400 - n_in, 0.0) == pytest.approx(theirs.pvalue)


def test_monotone_in_mu_statistic_and_confidence():
    n1, n0 = 500, 500
    p_values = [rank_gdp_p_value(190_000, n1, n0, mu) for mu in np.linspace(0, 2, 21)]
    assert np.all(np.diff(p_values) >= 0)
    mus = [rank_gdp_mu(u, n1, n0) for u in (130_000, 160_000, 190_000, 220_000)]
    assert mus[0] == 0.0 and np.all(np.diff(mus) > 0)
    assert rank_gdp_mu(190_000, n1, n0, 0.99) < rank_gdp_mu(190_000, n1, n0, 0.95)
    mu = rank_gdp_mu(190_000, n1, n0)
    assert rank_gdp_p_value(190_000, n1, n0, mu) < LEVEL
    assert rank_gdp_p_value(190_000, n1, n0, mu + 1e-6) >= LEVEL


def test_too_few_canaries_on_a_side_give_zero():
    assert rank_gdp_mu(49 * 400, MIN_PER_SIDE - 1, 400) == 0.0
    with pytest.raises(InputError, match="pairs_above"):
        rank_gdp_mu(10**6, 100, 100)


def test_null_calibration_200_runs():
    """Identical-distribution scores: positive bounds at the rate of a level-5% test."""
    positive = sum(rank_mu(*gaussian_run(seed, 0.0)) > 0 for seed in range(200))
    assert consistent_with_level(positive, 200)


def test_valid_at_the_boundary_and_on_tied_scores():
    """The bound exceeds the true μ at most at the test's level: on ``N(μ b, 1)`` scores (the
    least favourable μ-GDP pair) and on the same scores rounded to integers (many ties; a pair
    whose ROC lies below the Gaussian one)."""
    mu, runs = 1.0, 400
    above = rounded = 0
    for seed in range(runs):
        scores, included, ties = gaussian_run(10_000 + seed, mu)
        above += rank_mu(scores, included, ties) > mu
        rounded += rank_mu(np.round(scores), included, ties) > mu
    assert consistent_with_level(above, runs) and consistent_with_level(rounded, runs)
    assert rounded <= above


def test_recovers_most_of_the_true_epsilon():
    """At m = 1e4, μ = 1 the full ranking recovers ≥ 90% of ε in each of 5 runs; the
    guess-based Gaussian-DP bound cannot pass 70% there even at its expected counts."""
    mu, delta = 1.0, 1e-5
    true_eps = gdp_epsilon(mu, delta)
    for seed in range(5):
        scores, included, _ = gaussian_run(20_000 + seed, mu, m=10_000)
        found = audit_one_run_scores(scores, included, epsilon=true_eps, delta=delta, seed=seed)
        rank, gdp = found.bound("independent-gaussian-dp"), found.bound("gaussian-dp")
        assert 0.9 * true_eps <= rank.epsilon_lower <= 1.05 * true_eps
        assert gdp.epsilon_lower < 0.7 * true_eps < rank.epsilon_lower


def test_result_states_its_assumption():
    scores, included, _ = gaussian_run(3, 1.0)
    result = one_run_audit(
        scores, included, epsilon=1.0, delta=1e-5, assumption="independent-gaussian-dp"
    )
    n_in = int(included.sum())
    assert result.guesses == n_in * (1000 - n_in) and result.k_plus == result.k_minus == 0
    assert result.verdict == "violation" and result.mu_lower > 0
    assert "assumes independent canaries" in result.line() and "AUC" in result.line()
    with pytest.raises(InputError, match="delta > 0"):
        one_run_audit(scores, included, epsilon=1.0, assumption="independent-gaussian-dp")
