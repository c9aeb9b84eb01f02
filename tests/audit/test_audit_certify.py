"""The audit's public steps on their own: certifying scores and counts computed without
dpclaims' trial runner, and collecting then certifying gives what ``audit`` gives."""

import numpy as np
import pytest

from dpclaims.audit import (
    AuditTest,
    Bonferroni,
    Counts,
    Criterion,
    Quantiles,
    Split,
    audit,
    certify_fixed,
    certify_scores,
)
from dpclaims.audit.certify import fixed_tests, split_alpha
from dpclaims.audit.collect import Collector, Layout, ScoreCounts, Streams
from dpclaims.audit.scores import Score
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim


def laplace_scores(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the Laplace mechanism (ε = 1) on neighbouring answers 0 and 1, drawn by numpy."""
    rng = np.random.default_rng(seed)
    return rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n)


@pytest.mark.parametrize("strategy", [Quantiles(), Split(), Bonferroni(grid=8), "auto"])
def test_scores_computed_elsewhere_certify_a_valid_tight_bound(strategy):
    s0, s1 = laplace_scores(100_000, seed=0)
    found = certify_scores(s0, s1, strategy=strategy, confidence=0.95)
    assert 0.8 < found.epsilon_lower <= 1.0
    assert found.test.n_negative + found.test.n_positive <= 200_000


def test_scores_said_to_be_oriented_pay_half_the_union_and_stay_valid():
    # the Laplace scores rise with d1 (a monotone function of their log ratio): oriented, the
    # bound is at least as large, still below the true ε = 1, at twice the per-test alpha
    s0, s1 = laplace_scores(100_000, seed=0)
    every = certify_scores(s0, s1, strategy=Quantiles())
    oriented = certify_scores(s0, s1, strategy=Quantiles(), oriented=True)
    assert oriented.alpha == pytest.approx(2 * every.alpha)
    assert every.epsilon_lower <= oriented.epsilon_lower <= 1.0


def test_oriented_must_be_a_bool():
    s0, s1 = laplace_scores(100, seed=0)
    with pytest.raises(InputError, match="oriented must be True or False"):
        certify_scores(s0, s1, oriented="yes")


def test_scores_of_one_law_rarely_certify_anything():
    positive = [
        certify_scores(*np.random.default_rng(i).laplace(size=(2, 500))).epsilon_lower > 0
        for i in range(100)
    ]
    assert np.mean(positive) <= 0.05


def test_counts_add_up_over_chunks_counted_anywhere():
    s0, s1 = laplace_scores(50_000, seed=1)
    criterion, strategy = Criterion(), Split()
    alpha = split_alpha(strategy, 0.95)
    tests = fixed_tests(
        strategy, (s0[:10_000], s1[:10_000]), n_certify=40_000, alpha=alpha, criterion=criterion
    )
    whole = Counts.of(s0[10_000:], s1[10_000:], tests.thresholds)
    parts = [
        Counts.of(a, b, tests.thresholds)
        for a, b in zip(np.array_split(s0[10_000:], 3), np.array_split(s1[10_000:], 3), strict=True)
    ]
    summed = Counts(
        above0=sum(p.above0 for p in parts),
        n0=sum(p.n0 for p in parts),
        above1=sum(p.above1 for p in parts),
        n1=sum(p.n1 for p in parts),
    )
    assert certify_fixed(summed, tests) == certify_fixed(whole, tests)
    assert certify_fixed(whole, tests) == certify_scores(s0, s1, strategy=strategy)
    assert tests.tests() == 1


def gauss(data, rng, trials):
    return data + rng.standard_normal((trials, 1))


def test_collecting_then_certifying_is_what_audit_does():
    seed, trials, strategy = 5, 20_000, Split()
    n_cal = round(strategy.fraction * trials)
    streams = Streams(mechanism=gauss, d0=0.0, d1=1.0, seed=seed)
    score = Score("user:first", lambda x: x[:, 0])
    with Collector(streams=streams, layout=Layout(trials=trials, calibration=n_cal)) as run:
        held = run.calibration()
        alpha, criterion = split_alpha(strategy, 0.95), Criterion(delta=1e-5)
        scores = (score(held.cal0), score(held.cal1))
        tests = fixed_tests(
            strategy, scores, n_certify=trials - n_cal, alpha=alpha, criterion=criterion
        )
        counts = run.counts(ScoreCounts(score, tests.thresholds, 1), (held.rest0, held.rest1))
    certified = certify_fixed(counts, tests, confidence=0.95, criterion=criterion)

    def first(x):
        return x[:, 0]

    result = audit(
        gauss,
        0.0,
        1.0,
        trials=trials,
        seed=seed,
        claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
        test=AuditTest(statistic=first, threshold=strategy),
        execution=Execution(backend="serial"),
    )
    assert result.epsilon_lower == certified.epsilon_lower
    assert result.provenance.threshold == certified.test.threshold


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Split(fraction=1.5), "fraction"),
        (lambda: Bonferroni(grid=1), "Bonferroni.grid"),
        (lambda: Quantiles(grid=0), "Quantiles.grid"),
        (lambda: Criterion(ci="wald"), "ci"),
        (lambda: certify_scores([0.0], [1.0]), "at least 2"),
    ],
)
def test_strategy_and_criterion_options_are_checked_where_they_live(build, match):
    with pytest.raises(InputError, match=match):
        build()
