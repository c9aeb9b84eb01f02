"""Planned order-statistic tests: certified like Quantiles, union over the planned tests only,
planned from a model of the scores (issue #27)."""

import numpy as np
import pytest
from scipy import stats

from dpclaims.audit import AuditTest, audit
from dpclaims.audit.bounds import epsilon_from_rates, joint_upper
from dpclaims.audit.certify import certify_scores
from dpclaims.audit.threshold import (
    Criterion,
    Planned,
    PlannedTest,
    Quantiles,
    certify_quantiles,
    certify_ranked,
    plan_quantile_tests,
    predicted_epsilon,
    predicted_power,
    quantile_ranks,
)
from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim

CRITERION = Criterion(delta=1e-5)


def _gaussian_model(mu):
    """Survival functions of N(0, 1) and N(mu, 1) on a grid: (thresholds, (above0, above1))."""
    t = np.linspace(-10.0, mu + 10.0, 20_001)
    return t, (stats.norm.sf(t), stats.norm.sf(t - mu))


def test_planned_tests_are_the_quantile_tests_they_name():
    """A Planned strategy holding every Quantiles test with its tilt certifies the same bound
    (one union over the same 4 × ranks tests)."""
    rng = np.random.default_rng(1)
    s0, s1 = rng.standard_normal(800), rng.standard_normal(700) + 1.5
    best, alpha, tilts = certify_quantiles(s0, s1, grid=6, confidence=0.95, criterion=CRITERION)
    ranks = quantile_ranks(700, 6)
    tests = tuple(
        PlannedTest(direction, int(k), float(tilt))
        for (direction, k), tilt in zip(
            [(d, k) for d in range(4) for k in ranks], tilts, strict=True
        )
    )
    test, planned_alpha, _, grid = Planned(tests=tests).certify_held(
        s0, s1, confidence=0.95, criterion=CRITERION
    )
    assert planned_alpha == pytest.approx(alpha) and grid == len(tests)
    assert test.epsilon_lower == pytest.approx(best.epsilon_lower)
    assert (test.direction, test.false_positives) == (best.direction, best.false_positives)


def test_one_planned_test_matches_brute_force():
    rng = np.random.default_rng(2)
    s0, s1 = rng.standard_normal(500), rng.standard_normal(400) + 2.0
    for direction, (neg, pos) in {0: (s0, s1), 3: (s1, s0)}.items():
        found = certify_ranked(
            s0,
            s1,
            np.array([direction]),
            np.array([7]),
            np.array([0.5]),
            alpha=0.05,
            criterion=CRITERION,
        )
        if direction == 0:  # d1 if score > t, t the 8th largest of s0
            t = np.sort(neg)[-8]
            fp, fn = np.sum(neg > t), np.sum(pos <= t)
        else:  # d0 if score <= t, below the 8th smallest of s1
            t = np.sort(neg)[7]
            fp, fn = np.sum(neg < t), np.sum(pos >= t)
        assert fp == 7 and found.false_positives == 7 and found.false_negatives == fn
        bounds = joint_upper(7, len(neg), fn, len(pos), 0.05, "clopper-pearson", 0.5)
        assert found.epsilon_lower == pytest.approx(
            float(np.min(epsilon_from_rates(*bounds, 1e-5)))
        )


def test_plan_picks_the_rank_a_model_predicts_best_and_it_certifies_there():
    """Gaussian scores at μ = 1.5: the planned test, one union term, beats the 48-test
    Quantiles grid on the median of 9 seeds (3.55 against 3.31), and its false-positive rate
    moves to the tail as N grows."""
    thresholds, above = _gaussian_model(1.5)
    plans = {
        n: plan_quantile_tests(thresholds, above, trials=n, criterion=CRITERION)
        for n in (1_000, 10_000)
    }
    assert all(len(p.tests) == 1 and p.number_of_tests() == 1 for p in plans.values())
    assert plans[10_000].tests[0].rank / 10_000 < plans[1_000].tests[0].rank / 1_000
    rng = np.random.default_rng(3)
    planned, grid = [], []
    for _ in range(9):
        s0, s1 = rng.standard_normal(10_000), rng.standard_normal(10_000) + 1.5
        planned.append(certify_scores(s0, s1, strategy=plans[10_000], criterion=CRITERION))
        grid.append(certify_scores(s0, s1, strategy=Quantiles(), criterion=CRITERION))
    assert np.median([c.epsilon_lower for c in planned]) > np.median(
        [c.epsilon_lower for c in grid]
    )


def test_plan_spreads_several_tests_over_rank_octaves_and_union():
    thresholds, above = _gaussian_model(2.0)
    plan = plan_quantile_tests(thresholds, above, trials=5_000, tests=3)
    places = {(t.direction, int(np.log2(t.rank + 1.0))) for t in plan.tests}
    assert len(places) == 3 and plan.number_of_tests() == 3
    one = plan_quantile_tests(thresholds, above, trials=5_000, union=2)
    assert one.number_of_tests() == 1
    with pytest.raises(InputError, match="union"):
        plan_quantile_tests(thresholds, above, trials=5_000, tests=2, union=1)


def test_planned_audit_is_calibrated_on_identical_datasets():
    thresholds, above = _gaussian_model(1.0)
    plan = plan_quantile_tests(thresholds, above, trials=300, tests=2)
    rng = np.random.default_rng(4)
    positive = [
        certify_scores(
            rng.standard_normal(300), rng.standard_normal(300), strategy=plan
        ).epsilon_lower
        > 0
        for _ in range(400)
    ]
    assert np.mean(positive) <= 0.05


def test_planned_strategy_runs_in_an_audit_and_reports_its_tests():
    thresholds, above = _gaussian_model(2.0)
    plan = plan_quantile_tests(thresholds, above, trials=2_000, criterion=CRITERION)

    def gauss(data, rng, trials):
        return data + rng.standard_normal((trials, 1))

    result = audit(
        gauss,
        0.0,
        2.0,
        claim=PrivacyClaim(epsilon=20.0, delta=1e-5),
        trials=2_000,
        seed=0,
        test=AuditTest(threshold=plan),
    )
    assert result.provenance.threshold_strategy == "planned"
    assert result.provenance.grid_size == 1
    assert result.provenance.ci_alpha == pytest.approx(0.05)
    assert result.epsilon_lower > 0


def test_planned_test_values_are_checked():
    with pytest.raises(InputError, match="direction"):
        PlannedTest(4, 0)
    with pytest.raises(InputError, match="rank"):
        PlannedTest(0, -1)
    with pytest.raises(InputError, match="tilt"):
        PlannedTest(0, 1, 0.0)
    with pytest.raises(InputError, match="tests"):
        Planned(tests=())
    with pytest.raises(InputError, match="1-D"):
        plan_quantile_tests(np.zeros(3), (np.zeros(3), np.zeros(2)), trials=100)


def test_predicted_epsilon_is_a_pessimistic_median_and_grows_with_the_leakage():
    """Gaussian scores at μ = 1.5, 10^4 trials: the prediction (PLAN_SPREAD standard errors
    short) sits below the median certified over 41 seeds and within 15% of it; the same test
    predicts more on μ = 3 and a plan of two tests pays the union on each."""
    thresholds, above = _gaussian_model(1.5)
    plan = plan_quantile_tests(thresholds, above, trials=10_000, criterion=CRITERION)
    predicted = predicted_epsilon(plan, thresholds, above, trials=10_000, criterion=CRITERION)
    certified = np.median(_certified(plan, mu=1.5, trials=10_000, runs=41, seed=4))
    assert 0.85 * certified < predicted < certified
    wider, leaky = _gaussian_model(3.0)
    assert predicted_epsilon(plan, wider, leaky, trials=10_000, criterion=CRITERION) > predicted
    twice = Planned(tests=plan.tests + (PlannedTest(0, 3),))
    assert predicted_epsilon(twice, thresholds, above, trials=10_000, criterion=CRITERION) < (
        predicted
    )


def test_predicted_power_is_the_rate_at_which_a_plan_certifies_above_a_claim():
    """Gaussian scores: the test planned for μ = 1.5 at 5,000 trials, scores at μ = 2.5 and
    claims of ε = 4.8, 5.0 and 5.2 (the certified median is 5.02): the predicted probability
    of certifying more is within 0.12 of the rate over 200 seeds (0.91 / 0.59 / 0.20 against
    0.84 / 0.54 / 0.14); a claim far below is caught surely, one far above never."""
    thresholds, above = _gaussian_model(1.5)
    plan = plan_quantile_tests(thresholds, above, trials=5_000, criterion=CRITERION)
    leaky_t, leaky = _gaussian_model(2.5)
    certified = _certified(plan, mu=2.5, trials=5_000, runs=200, seed=5)
    for claim in (4.8, 5.0, 5.2):
        power = predicted_power(
            plan, leaky_t, leaky, trials=5_000, epsilon=claim, criterion=CRITERION
        )
        assert abs(power - np.mean(certified > claim)) < 0.12, claim
    assert predicted_power(plan, leaky_t, leaky, trials=5_000, epsilon=0.1) == 1.0
    assert predicted_power(plan, leaky_t, leaky, trials=5_000, epsilon=20.0) == 0.0
    with pytest.raises(InputError, match="plan must be a Planned"):
        predicted_power(Quantiles(), leaky_t, leaky, trials=5_000, epsilon=1.0)
    with pytest.raises(InputError, match="epsilon"):
        predicted_power(plan, leaky_t, leaky, trials=5_000, epsilon=-1.0)


def _certified(plan, *, mu, trials, runs, seed):
    """What ``plan`` certifies on ``runs`` draws of N(0, 1) against N(mu, 1) scores (runs,)."""
    rng = np.random.default_rng(seed)
    return np.array(
        [
            certify_scores(
                rng.standard_normal(trials),
                rng.standard_normal(trials) + mu,
                strategy=plan,
                criterion=CRITERION,
            ).epsilon_lower
            for _ in range(runs)
        ]
    )
