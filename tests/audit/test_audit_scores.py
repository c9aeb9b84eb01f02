"""Scores from anywhere: audit_scores gives the audit's result; compared with jax_privacy."""

import numpy as np
import pytest
from scipy import stats

from dpclaims.audit import AuditResult, audit_scores, certify_scores, gdp_epsilon
from dpclaims.audit.threshold import Criterion, Quantiles
from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim


def gaussian_scores(n, mu, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), mu + rng.standard_normal(n)


def lower_hull(points):
    """Indices of the vertices of the lower convex hull of ``points`` (N, 2), sorted by x."""
    keep = np.arange(len(points))
    while len(keep) > 2:
        step = np.diff(points[keep], axis=0)
        dominated = step[:-1, 1] * step[1:, 0] - step[1:, 1] * step[:-1, 0] <= 0
        if not dominated.any():
            break
        keep = keep[np.r_[True, ~dominated, True]]
    return keep


def jax_privacy_epsilon_clopper_pearson(in_scores, out_scores, significance, delta):
    """jax_privacy's ``CanaryScoreAuditor.epsilon_clopper_pearson`` (one-sided, its default
    ``Bonferroni()`` strategy), from its published formula: the thresholds are the vertices of
    the lower hull of the (false-negative, true-negative) counts at every score; at each,
    ε(t) = log(TPR_lb - δ) - log(FPR_ub), both Clopper-Pearson at significance / 2 / T."""
    thresholds = np.concatenate([np.union1d(in_scores, out_scores), [np.inf]])
    n_pos, n_neg = len(in_scores), len(out_scores)
    fn = np.searchsorted(np.sort(in_scores), thresholds, side="left")
    tn = np.searchsorted(np.sort(out_scores), thresholds, side="left")
    hull = lower_hull(np.stack([fn, tn], axis=1).astype(float))
    fn, fp = fn[hull], n_neg - tn[hull]
    level = significance / len(hull) / 2

    def upper(k, n):
        return np.where(k < n, stats.beta.ppf(1 - level, k + 1, n - k), 1.0)

    tpr_lb, fpr_ub = 1 - upper(fn, n_pos), upper(fp, n_neg)
    valid = tpr_lb > delta
    return max(0.0, float(np.max(np.log(tpr_lb[valid] - delta) - np.log(fpr_ub[valid]))))


def test_audit_scores_is_an_audit_result_with_ceiling_and_reach():
    s0, s1 = gaussian_scores(20_000, 1.0)
    r = audit_scores(s0, s1, claim=PrivacyClaim(epsilon=1.0, delta=1e-5))
    assert isinstance(r, AuditResult)
    assert r.reach is not None and r.ceiling > 5
    assert r.verdict in ("consistent", "consistent_weak", "violation")
    criterion = Criterion(delta=1e-5)
    same = certify_scores(s0, s1, strategy=Quantiles(), confidence=0.95, criterion=criterion)
    assert r.epsilon_lower == same.epsilon_lower  # the same certificate
    assert r.provenance.statistic == "user scores"
    assert r.provenance.threshold_strategy == "quantiles"
    assert r.to_dict()["certification_trials"] == 20_000
    assert "audit_scores" in r.warnings[0]


def test_audit_scores_catches_a_violation_and_says_when_it_cannot():
    s0, s1 = gaussian_scores(20_000, 2.0)  # μ = 2: ε ≈ 10 at δ = 1e-5
    assert audit_scores(s0, s1, claim=PrivacyClaim(epsilon=1.0, delta=1e-5)).verdict == "violation"
    few = audit_scores(s0[:30], s1[:30], claim=PrivacyClaim(epsilon=8.0, delta=1e-5))
    assert few.verdict == "inconclusive" and "cannot reach" in few.reason


def test_audit_scores_bad_input():
    with pytest.raises(InputError, match="s0"):
        audit_scores(np.array([np.nan] * 50), np.zeros(50), claim=PrivacyClaim(epsilon=1.0))
    with pytest.raises(InputError, match="at least 20"):
        audit_scores(np.zeros(5), np.zeros(50), claim=PrivacyClaim(epsilon=1.0))
    with pytest.raises(InputError, match="s1"):
        audit_scores(np.zeros(50), np.zeros((50, 2)), claim=PrivacyClaim(epsilon=1.0))
    with pytest.raises(InputError, match="epsilon"):
        audit_scores(np.zeros(50), np.zeros(50))


@pytest.mark.parametrize("mu", [0.0, 0.5, 1.0])
def test_against_jax_privacy_clopper_pearson_formula(mu):
    """Both are valid bounds below the true ε; on null scores both are 0; ours (joint region,
    order statistics) is at least jax_privacy's (separate Clopper-Pearson, every threshold)."""
    s0, s1 = gaussian_scores(20_000, mu, seed=3)
    ours = audit_scores(s0, s1, claim=PrivacyClaim(epsilon=1.0, delta=1e-5)).epsilon_lower
    theirs = jax_privacy_epsilon_clopper_pearson(s1, s0, 0.05, 1e-5)
    true_eps = gdp_epsilon(mu, 1e-5)
    assert ours <= true_eps and theirs <= true_eps
    if mu == 0.0:
        assert ours == theirs == 0.0
    else:
        assert ours >= theirs


def test_formula_matches_jax_privacy_when_installed():
    auditing = pytest.importorskip("jax_privacy.auditing")
    s0, s1 = gaussian_scores(2_000, 1.0, seed=4)
    auditor = auditing.CanaryScoreAuditor(s1, s0)
    expected = auditor.epsilon_clopper_pearson(0.05, 1e-5)
    assert jax_privacy_epsilon_clopper_pearson(s1, s0, 0.05, 1e-5) == pytest.approx(expected)
