"""The ceiling (#17, must-show 1): no certified bound exceeds it, and at the suggested trial count
a mechanism whose ε is above the claim is caught in at least 90% of seeds."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.audit import (
    AuditTest,
    alpha_per_test,
    audit,
    audit_ceiling,
    epsilon_ceiling,
    epsilon_from_rates,
    trials_for_epsilon,
    trials_to_certify,
)
from dpclaims.audit.bounds import TILTS, joint_upper
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim

SEEDS = range(1, 21)
P_RARE, EPS_RARE = 0.012, 1.5


def uniform_shift(data, rng, trials):
    """d + U(0, 1): on d0 = 0, d1 = 0.5 the outputs above 1 are impossible under d0 (ε = ∞)."""
    return data + rng.random(trials)


def rare_response(data, rng, trials):
    """With probability P_RARE, randomized response at ε = 1.5 on the bit ``data``; else 2.

    The pair (0, 1) has exact ε = 1.5, but only 1.2% of the trials carry it: an audit at 12,000
    trials estimates it and cannot certify more than 1; the suggested count catches it.
    """
    keep = rng.random(trials) < math.exp(EPS_RARE) / (1 + math.exp(EPS_RARE))
    bit = np.where(keep, data, 1 - data)
    return np.where(rng.random(trials) < P_RARE, bit, 2).astype(float)


def perfect(data, rng, trials):
    return np.full(trials, float(data)) + 0.0 * rng.random(trials)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 10**7),
    confidence=st.floats(0.5, 0.999),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.1]),
    tests=st.integers(1, 256),
)
def test_ceiling_bounds_every_region_and_inverts(n, confidence, delta, tests):
    alpha = alpha_per_test(confidence, tests)
    ceiling = epsilon_ceiling(n, confidence=confidence, delta=delta, tests=tests)
    assert ceiling == pytest.approx(
        max(0.0, math.log((1 - delta) / (1 - alpha ** (1 / n)))), rel=1e-9, abs=1e-12
    )
    # no counts certify more, whatever the region's tilt (the bound falls in each count)
    some = np.array([0, 1, n // 2, n])
    fp, fn = np.meshgrid(some, some)
    for tilt in TILTS[::4]:
        bounds = joint_upper(fp, n, fn, n, alpha, "clopper-pearson", tilt)
        assert np.all(np.min(epsilon_from_rates(*bounds, delta), axis=0) <= ceiling + 1e-12)
    if ceiling > 0.01:
        target = 0.9 * ceiling
        m = trials_for_epsilon(target, confidence=confidence, delta=delta, tests=tests)
        assert m <= n
        assert epsilon_ceiling(m, confidence=confidence, delta=delta, tests=tests) > target
        if m > 1:
            assert epsilon_ceiling(m - 1, confidence=confidence, delta=delta, tests=tests) <= target


def test_no_certified_bound_exceeds_the_ceiling_and_separation_reaches_it():
    for mechanism, d1, trials in (
        (perfect, 1.0, 300),
        (uniform_shift, 0.5, 5_000),
        (rare_response, 1, 5_000),
    ):
        for seed in range(3):
            for strategy in ("calibration", "bonferroni"):
                r = audit(
                    mechanism,
                    0.0 if d1 != 1 else 0,
                    d1,
                    trials=trials,
                    seed=seed,
                    claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
                    test=AuditTest(threshold=strategy),
                    execution=Execution(backend="serial", progress=False),
                )
                tests = 1 if strategy == "calibration" else 4 * r.provenance.grid_size
                closed = epsilon_ceiling(
                    r.certification_trials, confidence=0.95, delta=1e-5, tests=tests
                )
                # the ceiling of the certified tests' regions, at most the one known before
                assert r.ceiling <= closed + 1e-12
                assert closed == audit_ceiling(trials, delta=1e-5, threshold=strategy)
                assert r.epsilon_lower <= r.ceiling + 1e-12
                if mechanism is perfect:
                    assert r.epsilon_lower == pytest.approx(r.ceiling) and r.infinite


def test_a_claim_above_the_ceiling_is_inconclusive_and_the_suggested_count_catches_infinity():
    first = audit(
        uniform_shift,
        0.0,
        0.5,
        trials=2_000,
        seed=0,
        claim=PrivacyClaim(epsilon=8.0, delta=1e-5),
        execution=Execution(backend="serial"),
    )
    assert first.ceiling < 8.0 and first.verdict == "inconclusive"
    needs = f"it needs about {first.trials_needed:,}"
    assert first.reason == f"this audit cannot reach ε = 8 with 2,000 trials; {needs}"
    assert first.infinite and "ε = ∞ on this pair" in first.summary()
    caught = [
        audit(
            uniform_shift,
            0.0,
            0.5,
            trials=first.trials_needed,
            seed=seed,
            claim=PrivacyClaim(epsilon=8.0, delta=1e-5),
            execution=Execution(backend="serial"),
        ).verdict
        == "violation"
        for seed in SEEDS
    ]
    assert np.mean(caught) >= 0.9


def test_a_finite_violation_missed_at_few_trials_is_caught_at_the_suggested_count():
    first = audit(
        rare_response,
        0,
        1,
        trials=12_000,
        seed=0,
        claim=PrivacyClaim(epsilon=1.0),
        test=AuditTest(method="histogram"),
        execution=Execution(backend="serial"),
    )
    assert first.verdict in ("consistent", "consistent_weak") and first.epsilon_estimate > 1.0
    # missed, but the verdict line says so
    assert first.trials_needed is not None and "would certify a violation" in first.verdict_line
    verdicts = [
        audit(
            rare_response,
            0,
            1,
            trials=first.trials_needed,
            seed=seed,
            claim=PrivacyClaim(epsilon=1.0),
            test=AuditTest(method="histogram"),
            execution=Execution(backend="serial"),
        )
        for seed in SEEDS
    ]
    assert np.mean([r.verdict == "violation" for r in verdicts]) >= 0.9
    assert all(r.epsilon_lower <= r.ceiling for r in verdicts)


def test_trials_to_certify_is_none_when_the_test_cannot_reach_the_claim():
    assert trials_to_certify(1.0, 0.5, 0.5) is None  # the rates say ε = 0
    # error-free rates need what the ceiling needs (up to the search grid's 2% steps)
    assert (
        trials_for_epsilon(6.0) <= trials_to_certify(6.0, 0.0, 0.0) <= 1.1 * trials_for_epsilon(6.0)
    )
    # rates of a test at ε = 1.5 need more trials to certify 1 the rarer the event
    assert trials_to_certify(1.0, 0.1 * math.exp(-1.5), 0.9) < trials_to_certify(
        1.0, 0.01 * math.exp(-1.5), 0.99
    )


def svt_without_query_noise(queries, rng, trials):
    """AboveThreshold with a noisy threshold but exact queries: the index of the first query at or
    above T + Lap(2), or len(queries) (Lyu, Su, Li 2017, Alg. 5's flaw)."""
    noisy_threshold = 0.5 + rng.laplace(scale=2.0, size=(trials, 1))
    above = np.asarray(queries)[None, :] >= noisy_threshold
    return np.where(above.any(axis=1), above.argmax(axis=1), len(queries)).astype(float)


@pytest.mark.parametrize("name", ["svt", "dp-sgd-no-clip"])
def test_infinite_privacy_loss_reaches_the_ceiling_and_says_so(name):
    if name == "svt":  # "below, then above" happens on d0 = (0, 1) and never on d1 = (1, 0)
        mechanism, d0, d1 = svt_without_query_noise, (0.0, 1.0), (1.0, 0.0)
    else:
        from dpclaims.targets.catalog import audit_target

        target = audit_target(name, PrivacyClaim(11.5, 1e-5, "item", "add-remove"))
        mechanism, d0, d1 = target.mechanism, target.d0, target.d1
    r = audit(
        mechanism,
        d0,
        d1,
        trials=20_000,
        seed=0,
        claim=PrivacyClaim(epsilon=11.5, delta=1e-5, unit="item", relation="add-remove"),
        execution=Execution(backend="serial"),
    )
    assert r.verdict == "inconclusive" and r.reason.startswith("this audit cannot reach ε = 11.5")
    assert r.infinite and r.false_positives == 0
    assert r.ceiling - r.epsilon_lower < math.log(10)
    certifying = {"svt": 16_000, "dp-sgd-no-clip": 18_000}[name]  # split 0.2, learned 0.1
    assert f"ε = ∞ on this pair as far as {certifying:,} trials can show" in r.summary()
    low = audit(
        mechanism,
        d0,
        d1,
        trials=4_000,
        seed=1,
        claim=PrivacyClaim(epsilon=1.0, delta=1e-5, unit="item", relation="add-remove"),
        execution=Execution(backend="serial"),
    )
    assert low.verdict == "violation" and low.infinite
