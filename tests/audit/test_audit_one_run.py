"""One-run audit (Steinke, Nasr, Jagielski 2023): p-values, calibration, power."""

import math

import numpy as np
import pytest
from scipy import stats

from dpclaims.audit import one_run, one_run_audit, one_run_epsilon, one_run_p_value
from dpclaims.errors import InputError, MechanismError

EPS = 1.0


def naive_p_value(m, r, v, eps, delta):
    """The loop of the paper's Appendix D, written out."""
    q = 1 / (1 + math.exp(-eps))
    beta = stats.binom.sf(v - 1, r, q)
    alpha, total = 0.0, 0.0
    for i in range(1, v + 1):
        total += stats.binom.pmf(v - i, r, q)
        if total > i * alpha:
            alpha = total / i
    return min(beta + alpha * delta * 2 * m, 1)


@pytest.mark.parametrize(
    "m,r,v,eps,delta",
    [
        (1000, 200, 150, 1.0, 1e-5),
        (1000, 200, 180, 2.0, 1e-3),
        (50, 20, 20, 0.5, 0.0),
        (100, 10, 0, 1.0, 1e-5),
    ],
)
def test_p_value_matches_the_papers_loop(m, r, v, eps, delta):
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(
        naive_p_value(m, r, v, eps, delta), rel=1e-9, abs=1e-15
    )


def test_delta_only_increases_the_p_value_and_lowers_the_bound():
    assert one_run_p_value(1000, 200, 170, 1.0, 1e-4) >= one_run_p_value(1000, 200, 170, 1.0, 0.0)
    assert one_run_epsilon(1000, 200, 170, 1e-4) <= one_run_epsilon(1000, 200, 170, 0.0)


def test_epsilon_bound_is_where_the_p_value_crosses_the_level():
    eps = one_run_epsilon(1000, 200, 170, 1e-5, 0.95)
    assert one_run_p_value(1000, 200, 170, eps, 1e-5) < 0.05
    assert one_run_p_value(1000, 200, 170, eps + 1e-6, 1e-5) >= 0.05 - 1e-9


def rr_canaries(included, rng):
    """Randomized response on each canary's inclusion bit: exactly EPS-DP per canary."""
    keep = rng.random(len(included)) < 1 / (1 + math.exp(-EPS))
    return np.where(keep, included, ~included).astype(float)


def test_one_run_p_values_are_super_uniform_on_an_eps_dp_mechanism():
    p_values = np.array(
        [
            one_run(rr_canaries, 1000, epsilon=EPS, k_plus=100, k_minus=100, seed=seed).p_value
            for seed in range(400)
        ]
    )
    for level in (0.05, 0.2, 0.5):
        assert np.mean(p_values < level) <= level + 3 * math.sqrt(level * (1 - level) / 400)


def test_one_run_bound_stays_below_the_true_epsilon():
    # with r = 40 guesses the exact false-alarm probability is 2.4% (binomial discreteness), so
    # ">= 95% of 400 repetitions" is a robust check rather than a coin flip at the boundary
    results = [
        one_run(rr_canaries, 1000, epsilon=EPS, k_plus=20, k_minus=20, seed=seed)
        for seed in range(400)
    ]
    assert np.mean([r.epsilon_lower <= EPS for r in results]) >= 0.95
    assert np.mean([r.verdict != "violation" for r in results]) >= 0.95


def leaky(included, rng):
    return included.astype(float) + 0.1 * rng.standard_normal(len(included))


def test_one_run_detects_a_non_private_mechanism():
    r = one_run(leaky, 1000, epsilon=EPS, delta=1e-5, k_plus=100, k_minus=100, seed=0)
    assert r.correct == r.guesses == 200
    assert r.verdict == "violation" and r.epsilon_lower > 3.0
    assert r.p_value < 0.05
    assert r.to_dict()["canaries"] == 1000


def test_one_run_audit_counts_guesses():
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    included = np.array([True, False, True, False, False, True])
    r = one_run_audit(scores, included, epsilon=1.0, k_plus=2, k_minus=2)
    # top two (5, 4) guessed in: one right; bottom two (1, 0) guessed out: one right
    assert (r.guesses, r.correct) == (4, 2)


def test_one_run_bad_input():
    with pytest.raises(InputError, match="k_plus"):
        one_run_audit(np.zeros(10), np.zeros(10, bool), epsilon=1.0, k_plus=8, k_minus=8)
    with pytest.raises(InputError, match="included"):
        one_run_audit(np.zeros(10), np.zeros(9, bool), epsilon=1.0)
    with pytest.raises(InputError, match="epsilon"):
        one_run_audit(np.zeros(10), np.zeros(10, bool), epsilon=0.0)
    with pytest.raises(MechanismError, match="shape"):
        one_run(lambda included, rng: np.zeros(3), 10, epsilon=1.0)


def test_too_few_canaries_for_the_default_guesses_says_they_are_defaults():
    """One canary: the message names the default guesses as defaults, never as if set."""
    with pytest.raises(InputError, match=r"k_plus and k_minus by default max\(1, m // 10\)"):
        one_run_audit(np.array([0.5]), np.array([True]), epsilon=1.0)
    with pytest.raises(InputError, match=r"got k_plus=3, k_minus=3"):
        one_run_audit(np.zeros(5), np.zeros(5, bool), epsilon=1.0, k_plus=3, k_minus=3)


def test_every_one_run_door_takes_a_privacy_claim():
    """``claim=PrivacyClaim(...)`` and the loose ε, δ that build it give the same audit; both
    at once, a claim of another type, or neither is one InputError naming the fix."""
    from dpclaims.audit import audit_one_run_scores
    from dpclaims.privacy import PrivacyClaim

    rng = np.random.default_rng(0)
    included = rng.random(200) < 0.5
    scores = included + rng.normal(size=200)
    claim = PrivacyClaim(1.0, 1e-5)
    typed = one_run_audit(scores, included, claim)
    loose = one_run_audit(scores, included, epsilon=1.0, delta=1e-5)
    assert typed == loose and typed.verdict in ("consistent", "consistent_weak")
    both = audit_one_run_scores(scores, included, claim)
    assert both == audit_one_run_scores(scores, included, epsilon=1.0, delta=1e-5)
    assert len(both.bounds) == 3
    run = one_run(lambda inc, rng: inc + rng.normal(size=inc.shape), 200, claim, seed=1)
    assert run == one_run(lambda inc, rng: inc + rng.normal(size=inc.shape), 200, epsilon=1.0,
                          delta=1e-5, seed=1)  # fmt: skip
    with pytest.raises(InputError, match="pass delta inside claim=PrivacyClaim"):
        one_run_audit(scores, included, claim, delta=1e-6)
    with pytest.raises(InputError, match="claim must be a PrivacyClaim, got float"):
        one_run_audit(scores, included, 1.0)
    with pytest.raises(InputError, match="no claim to audit"):
        audit_one_run_scores(scores, included)
