"""Certifying: scores or counts, a strategy, an interval and a confidence → a certified bound.

This step needs no trial runner: scores computed anywhere (another library, a cluster job, a
one-off script) certify with :func:`certify_scores`, and above counts at tests fixed in advance
with :func:`certify_fixed`.  :func:`dpclaims.audit.audit` collects its trials
(:mod:`dpclaims.audit.collect`) and certifies them with the same functions.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> s0, s1 = rng.laplace(0.0, 1.0, 20_000), rng.laplace(1.0, 1.0, 20_000)
>>> found = certify_scores(s0, s1, strategy=Quantiles(), confidence=0.95)
>>> 0.5 < found.epsilon_lower <= 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, check_confidence
from .bounds import alpha_per_test
from .threshold import (
    DEFAULT_CRITERION,
    DIRECTIONS,
    Certified,
    Counts,
    Criterion,
    Events,
    ThresholdStrategy,
    certify_counts,
    counts_above,
    strategy_named,
    tradeoff_from_counts,
    tradeoff_thresholds,
)

__all__ = [
    "TRADEOFF_POINTS",
    "Certificate",
    "FixedTests",
    "certify_scores",
    "certify_fixed",
    "fixed_tests",
    "split_alpha",
]

TRADEOFF_POINTS = 101
"""Quantile levels of the pooled calibration scores at which the trade-off curve is counted."""


@dataclass(frozen=True, kw_only=True)
class Certificate:
    """The certified test (:class:`~dpclaims.audit.threshold.Certified`: its counts, rate
    bounds, ε lower bound and μ) with its bookkeeping: ``alpha`` the failure probability of each
    test's joint bound on its two rates, ``grid`` the tests per tail (1 for a single test),
    ``certification_trials`` the certifying trials per dataset and ``tradeoff`` the empirical
    (FPR, FNR) points of the chosen direction."""

    test: Certified
    alpha: float
    grid: int
    certification_trials: int
    tradeoff: tuple
    tilts: tuple = (1.0,)

    @property
    def epsilon_lower(self) -> float:
        """The certified ε lower bound (at the criterion's δ)."""
        return self.test.epsilon_lower

    @property
    def mu(self) -> float:
        """The certified Gaussian-DP μ lower bound of the same test."""
        return self.test.mu

    @property
    def direction(self) -> str:
        """The certified event (one of :data:`~dpclaims.audit.threshold.DIRECTIONS`)."""
        return DIRECTIONS[self.test.direction]


@dataclass(frozen=True, kw_only=True)
class FixedTests:
    """Tests fixed on calibration data before the certifying trials are drawn.

    ``events`` (T,) are certified; ``thresholds`` are what the certifying trials are counted
    at: the ``n_tests`` distinct test thresholds, then the trade-off curve's; ``grid`` the
    size of the strategy's grid (1 for a single test).
    """

    events: Events
    thresholds: np.ndarray
    n_tests: int
    grid: int = 1

    def tests(self) -> int:
        """Distinct certified tests (threshold, direction): 1 for :class:`Split`, ``4 * grid``
        for :class:`Bonferroni`."""
        return len(np.unique(np.stack([self.events.thresholds, self.events.directions]), axis=1).T)

    def certify(self, counts: Counts, *, alpha: float, criterion: Criterion) -> Certificate:
        """The best of ``events`` certified from ``counts`` at :attr:`thresholds`."""
        per_test = np.repeat(np.arange(self.n_tests), len(self.events.thresholds) // self.n_tests)
        test = certify_counts(counts.take(per_test), self.events, alpha=alpha, criterion=criterion)
        curve = tradeoff_from_counts(counts.take(slice(self.n_tests, None)), test.direction)
        return Certificate(
            test=test,
            alpha=alpha,
            grid=self.grid,
            certification_trials=counts.n0,
            tradeoff=tuple(tuple(p) for p in curve),
            tilts=tuple(float(t) for t in np.unique(self.events.tilts)),
        )


def split_alpha(strategy: ThresholdStrategy, confidence: float) -> float:
    """Failure probability of each test's joint bound under a split strategy: one test
    (:class:`Split`) or ``grid`` thresholds in 4 directions (:class:`Bonferroni`), its
    :meth:`~dpclaims.audit.threshold.ThresholdStrategy.number_of_tests`."""
    return alpha_per_test(confidence, strategy.number_of_tests())


def fixed_tests(
    strategy: ThresholdStrategy,
    scores: tuple[np.ndarray, np.ndarray],
    *,
    n_certify: int,
    alpha: float,
    criterion: Criterion,
) -> FixedTests:
    """The tests ``strategy`` fixes on calibration ``scores`` ``(s0 (n0,), s1 (n1,))`` for
    ``n_certify`` certifying trials per dataset: the one test :func:`choose_threshold` picks
    (:class:`Split`), or ``grid`` pre-set quantiles of the pooled scores in every direction
    (:class:`Bonferroni`), each test's joint region shaped by its calibration counts (the
    strategy's ``fix_tests``)."""
    s0, s1 = scores
    tests, events, grid = strategy.fix_tests(
        s0, s1, n_certify=n_certify, alpha=alpha, criterion=criterion
    )
    curve = tradeoff_thresholds(np.concatenate([s0, s1]), TRADEOFF_POINTS)
    counted = np.concatenate([tests, curve])
    return FixedTests(events=events, thresholds=counted, n_tests=len(tests), grid=grid)


def certify_fixed(
    counts: Counts,
    tests: FixedTests,
    *,
    confidence: float = 0.95,
    criterion: Criterion = DEFAULT_CRITERION,
) -> Certificate:
    """Certify tests fixed in advance from their above ``counts`` at ``tests.thresholds``, with
    a Bonferroni correction over the distinct tests (see :meth:`FixedTests.tests`).  The tests
    must not depend on the trials that were counted.
    """
    alpha = alpha_per_test(check_confidence(confidence), tests.tests())
    return tests.certify(counts, alpha=alpha, criterion=criterion)


def certify_quantile_scores(
    s0: np.ndarray,
    s1: np.ndarray,
    *,
    strategy: ThresholdStrategy,
    confidence: float,
    criterion: Criterion,
    oriented: bool = False,
) -> Certificate:
    """A held strategy (:class:`~dpclaims.audit.threshold.Quantiles` or
    :class:`~dpclaims.audit.threshold.Planned`) on certifying scores ``s0 (n0,)``, ``s1 (n1,)``
    (its ``certify_held``; ``oriented``: the score estimates log p1/p0), with the trade-off
    curve at the pooled quantiles."""
    test, alpha, tilts, grid = strategy.certify_held(
        s0, s1, confidence=confidence, criterion=criterion, oriented=oriented
    )
    curve = tradeoff_thresholds(np.concatenate([s0, s1]), TRADEOFF_POINTS)
    counts = Counts.of(s0, s1, curve)
    return Certificate(
        test=test,
        alpha=alpha,
        grid=grid,
        certification_trials=len(s0),
        tradeoff=tuple(tuple(p) for p in tradeoff_from_counts(counts, test.direction)),
        tilts=tuple(float(t) for t in np.unique(tilts)),
    )


def certify_scores(
    s0: np.ndarray,
    s1: np.ndarray,
    *,
    strategy: str | ThresholdStrategy = "auto",
    confidence: float = 0.95,
    criterion: Criterion = DEFAULT_CRITERION,
    oriented: bool = False,
) -> Certificate:
    """Certify scores computed anywhere: ``s0 (n0,)``, ``s1 (n1,)`` are a fixed score of
    independent trials of the mechanism on d0 and on d1.

    The score must not have been chosen on these trials.  :class:`Quantiles` and
    :class:`Auto` certify on every score; :class:`Split` and :class:`Bonferroni` fix their
    tests on the first ``fraction`` of each array and certify them on the rest.
    ``oriented=True`` says the score estimates log p1/p0 (larger on d1, e.g. a log-likelihood
    ratio): :class:`Quantiles` then tests only its two Neyman–Pearson directions
    (:data:`~dpclaims.audit.threshold.ORIENTED_DIRECTIONS`), half the union bound.
    """
    strategy = strategy_named(strategy).for_scores()
    confidence = check_confidence(confidence)
    if not isinstance(oriented, bool):
        raise InputError(
            f"oriented must be True or False, got {oriented!r}: True only for a score that "
            "estimates log p1/p0 (larger on d1)"
        )
    s0, s1 = (np.asarray(s, dtype=np.float64).ravel() for s in (s0, s1))
    if min(len(s0), len(s1)) < 2:
        raise InputError("certify_scores needs at least 2 scores of each dataset")
    if strategy.held:
        return certify_quantile_scores(
            s0,
            s1,
            strategy=strategy,
            confidence=confidence,
            criterion=criterion,
            oriented=oriented,
        )
    n_cal = strategy.calibration_size(min(len(s0), len(s1)), cap=math.inf)
    n_certify = min(len(s0), len(s1)) - n_cal
    alpha = split_alpha(strategy, confidence)
    calibration = (s0[:n_cal], s1[:n_cal])
    tests = fixed_tests(
        strategy, calibration, n_certify=n_certify, alpha=alpha, criterion=criterion
    )
    rest0, rest1 = s0[n_cal:], s1[n_cal:]
    counts = Counts(
        above0=counts_above(rest0, tests.thresholds),
        n0=len(rest0),
        above1=counts_above(rest1, tests.thresholds),
        n1=len(rest1),
    )
    return tests.certify(counts, alpha=alpha, criterion=criterion)
