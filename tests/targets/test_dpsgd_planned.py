"""DP-SGD audits with the test planned from the claim (issue #27): the limit in every cell,
the mutants caught at 10^4 trials, correct DP-SGD never a violation."""

import numpy as np
import pytest

from dpclaims.audit import audit
from dpclaims.audit.bounds import epsilon_ceiling, joint_ceiling, trials_for_epsilon
from dpclaims.audit.threshold import Planned
from dpclaims.errors import InputError
from dpclaims.losses import LogisticLoss, SquaredLoss
from dpclaims.targets.dpsgd import (
    PLANS,
    canary_data,
    dpsgd_target,
    optimal_limit,
    planned_test,
    planned_threshold,
)
from dpclaims.targets.mutants.baselines import half_noise, no_clip


def _audit(target, trials, seed=0, test=None):
    test = test or planned_test(target, trials=trials)
    return audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=target.claim,
        trials=trials,
        seed=seed,
        test=test,
    )


def test_plan_sees_only_the_claim(dpsgd):
    """The plan is a function of the claimed release and ε: a mutant (same claim) gets the same
    tests.  At T = 10, ε = 2, 10^4 trials the claim's test alone would not catch half the
    noise, so the violation's test (a rarer event) joins it, union 2."""
    data = canary_data(LogisticLoss(), n=16, d=3)
    correct = planned_test(dpsgd_target(dpsgd(), data), trials=10_000)
    mutant = planned_test(dpsgd_target(half_noise(dpsgd()), data), trials=10_000)
    assert correct == mutant
    plan = correct.threshold
    assert isinstance(plan, Planned) and plan.number_of_tests() == 2
    claim_test, violation_test = plan.tests
    assert violation_test.rank < claim_test.rank
    alone = planned_test(dpsgd_target(dpsgd(), data), trials=10_000, violation=None).threshold
    assert alone.number_of_tests() == 1
    final = planned_test(dpsgd_target(dpsgd(), data, threat_model="final"), trials=10_000)
    assert {t.direction for t in final.threshold.tests} <= {0, 3}  # canary shows high


def test_a_violation_nothing_catches_buys_no_union(dpsgd):
    """T = 100, ε = 1 at 10^3 trials: no plan is predicted to catch half the noise (the audit
    certifies ~0.66 of it), so the claim's test is planned alone, the bound of a correct
    mechanism keeping the whole failure probability (limit 0.19); without ε, both tests."""
    release = dpsgd(epsilon=1.0, steps=100).step_release
    plan = planned_threshold(release, trials=1_000, delta=1e-5, epsilon=1.0)
    assert plan == planned_threshold(release, trials=1_000, delta=1e-5, violation=None)
    assert planned_threshold(release, trials=1_000, delta=1e-5).number_of_tests() == 2


def test_planned_threshold_is_the_plan_of_a_release_for_users_own_transcripts(dpsgd):
    alg = dpsgd()
    data = canary_data(LogisticLoss(), n=16, d=3)
    for threat in ("all-iterates", "final"):
        plan = planned_threshold(
            alg.step_release, trials=5_000, delta=1e-5, threat_model=threat, epsilon=2.0
        )
        target = dpsgd_target(alg, data, threat_model=threat)
        assert plan == planned_test(target, trials=5_000).threshold
    with pytest.raises(InputError, match="threat_model"):
        planned_threshold(alg.step_release, trials=5_000, delta=1e-5, threat_model="hidden")
    with pytest.raises(InputError, match="ReleaseModel"):
        planned_threshold(alg, trials=5_000, delta=1e-5)


def test_plan_rejects_other_targets(dpsgd):
    target = dpsgd_target(dpsgd(), canary_data(LogisticLoss(), n=8, d=3))
    with pytest.raises(InputError, match="dpsgd_target"):
        planned_test(target.__class__(**{**target.__dict__, "mechanism": len}), trials=1000)


def test_all_iterates_planned_audit_reaches_the_limit(dpsgd):
    """Median over 21 seeds at 10^4 trials, T = 10, ε = 4 (the benchmark's cell: 0.98 of the
    limit over 301 draws of the claim's law; the 48-test Quantiles grid got 0.88)."""
    alg = dpsgd(epsilon=4.0)
    target = dpsgd_target(alg, canary_data(LogisticLoss(), n=16, d=3))
    test = planned_test(target, trials=10_000)
    certified = np.median([_audit(target, 10_000, seed, test).epsilon_lower for seed in range(21)])
    limit = optimal_limit(alg.step_release, trials=10_000, delta=1e-5, draws=100_000).epsilon
    assert 0.9 * limit < certified < 1.25 * limit


@pytest.mark.parametrize("mutant", [half_noise, no_clip], ids=["half-noise", "no-clip"])
@pytest.mark.parametrize("loss", [LogisticLoss(), SquaredLoss()])
def test_mutants_are_violations_at_ten_thousand_trials(mutant, loss, dpsgd):
    target = dpsgd_target(mutant(dpsgd(loss)), canary_data(loss, n=16, d=3))
    result = _audit(target, 10_000)
    assert result.verdict == "violation", result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 4.0])
@pytest.mark.parametrize("seed", range(2))
def test_half_noise_is_caught_at_ten_thousand_trials_where_quantiles_needed_more(
    epsilon, seed, dpsgd
):
    target = dpsgd_target(half_noise(dpsgd(epsilon=epsilon)), canary_data(LogisticLoss(), n=32))
    result = _audit(target, 10_000, seed)
    assert result.verdict == "violation", result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0, 8.0])
def test_correct_dpsgd_is_never_a_violation_over_four_seeds(epsilon, dpsgd):
    target = dpsgd_target(dpsgd(epsilon=epsilon), canary_data(LogisticLoss(), n=32))
    test = planned_test(target, trials=10_000)
    for seed in range(4):
        assert _audit(target, 10_000, seed, test).verdict != "violation"


def test_a_claim_only_the_violations_test_can_refute_plans_it_alone(dpsgd):
    """At 10^4 trials two tests certify at most 7.87 and one 8.08: at ε = 8, T = 100 only the
    violation's test alone can refute the claim on a skipped clip (``violation=10``, the
    canary's norm), and ``auto`` takes it (a correct mechanism then certifies 1.9 instead of
    3.6: worth the catch); half the noise is refuted by no plan, so the default keeps the
    claim's test."""
    assert joint_ceiling(10_000, alpha=0.025, delta=1e-5) < 8.0
    assert joint_ceiling(10_000, alpha=0.05, delta=1e-5) > 8.0
    release = dpsgd(epsilon=8.0, steps=100).step_release
    options = {"trials": 10_000, "delta": 1e-5, "epsilon": 8.0}
    tenfold = {
        plan: planned_threshold(release, plan=plan, violation=10, **options) for plan in PLANS
    }
    assert tenfold["auto"] == tenfold["violation"]
    assert tenfold["violation"].number_of_tests() == 1 and tenfold["both"].number_of_tests() == 2
    assert tenfold["violation"].tests[0].rank == tenfold["both"].tests[1].rank
    default = planned_threshold(release, **options)
    assert default == planned_threshold(release, plan="claim", **options)
    with pytest.raises(InputError, match="plan"):
        planned_threshold(release, trials=10_000, delta=1e-5, plan="violation", violation=None)


@pytest.mark.slow
def test_skipped_clip_at_epsilon_eight_is_caught_at_ten_thousand_trials_over_many_steps(dpsgd):
    """T = 100: the canary is sampled in all but (7/8)^100 of the runs, so the skipped clip
    separates them perfectly and one test reaches its ceiling, 8.08 > 8 (the test planned
    alone for the tenfold violation a norm-10 canary shows when its clip is skipped)."""
    target = dpsgd_target(no_clip(dpsgd(epsilon=8.0, steps=100)), canary_data(LogisticLoss()))
    test = planned_test(target, trials=10_000, violation=10)
    result = _audit(target, 10_000, test=test)
    assert result.verdict == "violation", result.summary()


def test_epsilon_eight_needs_about_nine_thousand_trials_of_a_perfect_audit():
    """The ceiling of any audit (one test, zero errors, Clopper–Pearson at 95%): ε = 8 is
    certifiable only from 8,929 trials per dataset; at 10^4 the ceiling is 8.11."""
    assert trials_for_epsilon(8.0, delta=1e-5) == 8_929
    assert epsilon_ceiling(10_000, delta=1e-5) == pytest.approx(8.113, abs=1e-3)
    assert epsilon_ceiling(1_000, delta=1e-5) < 6
