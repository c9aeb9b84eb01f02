"""Threshold tests on a scalar score: vectorised error counts, choice, certification.

For a threshold ``t`` the event is ``{score > t}`` or ``{score <= t}`` and either
dataset may play "positive" — four *directions*.  All error counts for all
thresholds come from one sort and ``searchsorted`` (no loop over thresholds).

Every error count is a function of the *above counts* ``#{score > t}`` of each
dataset (:func:`counts_above`), which add up over chunks of trials: a long audit
reduces each chunk to them on its worker and certifies from the sums
(:func:`certify_counts`, :func:`tradeoff_from_counts`).

How the test is chosen is a *strategy*, a small frozen value passed as ``AuditTest(threshold=...)``:
:class:`Split` (chosen on a calibration split), :class:`Bonferroni` (a grid fixed on the
calibration split, all certified), :class:`Quantiles` (thresholds at order statistics of the
certifying data itself, no split for a fixed score), :class:`Planned` (a few such order-statistic
tests chosen in advance from a model of the scores, e.g. their law under the claim) and
:class:`Auto` (the default: the one measured best for the trial count, see
``benchmarks/bench_audit_tightness.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from dpclaims.gdp import gdp_mu

from ..errors import InputError, check_choice, check_count, check_positive
from .bounds import (
    CI_METHODS,
    JOINT_CORNERS,
    epsilon_from_rates,
    joint_upper,
    rate_upper,
    tilt_of,
)

__all__ = [
    "DIRECTIONS",
    "ALL_DIRECTIONS",
    "ORIENTED_DIRECTIONS",
    "Split",
    "Bonferroni",
    "Quantiles",
    "PlannedTest",
    "Planned",
    "plan_quantile_tests",
    "predicted_epsilon",
    "predicted_power",
    "Auto",
    "ThresholdStrategy",
    "Strategy",
    "STRATEGIES",
    "MAX_CALIBRATION_TRIALS",
    "MAX_HELD_VALUES",
    "STRATEGY_NAMES",
    "strategy_named",
    "Criterion",
    "DEFAULT_CRITERION",
    "Counts",
    "Events",
    "quantile_ranks",
    "certify_quantiles",
    "certify_ranked",
    "ThresholdChoice",
    "Certified",
    "candidate_thresholds",
    "bonferroni_thresholds",
    "counts_above",
    "error_counts",
    "error_counts_from_above",
    "choose_threshold",
    "certify",
    "certify_counts",
    "tradeoff_thresholds",
    "tradeoff_curve",
    "tradeoff_from_counts",
]

DIRECTIONS = ("d1 if score > t", "d1 if score <= t", "d0 if score > t", "d0 if score <= t")
"""The four tests: which dataset is called "positive" and on which side of ``t``."""

ALL_DIRECTIONS = (0, 1, 2, 3)
"""Every direction: a score of unknown orientation (a user's statistic, the identity)."""

ORIENTED_DIRECTIONS = (0, 3)
"""The directions of a score that estimates the log ratio log p1/p0 (every learned score): d1
above a threshold, d0 below one.  By the Neyman–Pearson lemma these are the most powerful tests
of d0 against d1 and of d1 against d0 on the exact ratio; the two others call the dataset the
score leans *away from* positive.  Dropping them halves the union bound of a
:class:`Quantiles` audit on a learned score (``benchmarks/bench_blackbox_llr.py``)."""

PREDICTION_ALPHA = 0.02
"""Calibration rates are replaced by their 98% upper bounds when predicting what a test certifies
(chosen on the tightness benchmark: less pessimism picks lucky extreme thresholds, more wastes
power)."""

QUANTILE_TRUE_POSITIVES = 200
"""[DEFAULT, ours] A :class:`Quantiles` test at rank ``k`` shapes its joint region
(:func:`~dpclaims.audit.bounds.tilt_of`) for ``k + QUANTILE_TRUE_POSITIVES`` true positives:
its true-positive count is not known before certifying, and the tests that win on the tightness
benchmark at 10^3-10^4 trials have about that many (within a factor 2 of the standard-error ratio
in every cell; ``2 k + 200`` missed Laplace at ε = 0.5 by a factor 2.2)."""

PLAN_SPREAD = 0.5
"""[DEFAULT, ours] :func:`plan_quantile_tests` ranks tests by what they certify with their true
positives this many standard errors below the model's expectation, so that among near-equal
tests the steadier wins.  On the 24 DP-SGD cells of ``benchmarks/bench_dpsgd.py`` (the claim's
exact law, 1001 / 301 / 41 draws at 10³ / 10⁴ / 10⁵ trials) 0.5 gives a median of at least 0.92
of the optimal test's limit in every cell; 1.0 gave 0.89 at T = 10, ε = 1, 10³ (a rank too
far in the bulk) and 0 a 10th percentile of 0 there."""

POWER_Z = 8.0
"""Spreads beyond which :func:`predicted_power` reads a probability as 0 or 1."""

PLAN_STEP = 1.25
"""Factor on the negatives' mass over which :func:`plan_quantile_tests` takes the slope of the
model's trade-off curve."""

MAX_THRESHOLDS_PER_TAIL = 256
"""Candidate thresholds per tail when scores take many values (geometrically spaced ranks)."""


MAX_CALIBRATION_TRIALS = 200_000
"""Cap on calibration trials per dataset: the calibration split is held in memory, so it is
bounded; beyond it more calibration barely moves the chosen test (all further trials
certify)."""

MAX_HELD_VALUES = 10_000_000
"""Auto holds every output in memory (trials × output width ≤ this, per dataset) to certify on
order statistics; beyond it the certification is streamed (Split)."""

MIN_SPLIT = 20
"""Fewest trials of each of the calibration and the certification split."""

LEARNED_FRACTION = 0.1
"""The share of the trials on which :class:`Quantiles` (the default for continuous outputs)
learns a score; the rest certify.  The score chosen on it is refitted on all of it.  On the
DP-SGD transcripts of ``benchmarks/bench_blackbox_llr.py`` (54 cells, 3 seeds, 10⁴ trials per
side) the default audit certified 0.958 of the exact likelihood ratio pooled, against 0.922
with a share of 0.2 and the chosen fit kept on half of it; cells below 0.85 of it: 9 against 16
(measured before the smooth-hinge candidate; with it 0.970 and 5).  A 5 % share was measured
too: more violations found on the benchmark's trials, fewer on others, and more cells below 0.85."""


@runtime_checkable
class ThresholdStrategy(Protocol):
    """How an audit chooses and certifies its tests; adding a strategy is one class.

    ``held`` strategies certify at order statistics of all held outputs; the others fix their
    tests on a calibration split and certify counts of the rest (see
    :func:`~dpclaims.audit.certify.fixed_tests`).
    """

    name: ClassVar[str]
    held: ClassVar[bool]
    fraction: float

    def calibration_size(self, trials: int, *, cap: float = MAX_CALIBRATION_TRIALS) -> int:
        """Trials per dataset (of ``trials``) that learn the score or fix the tests."""
        ...

    def held_trials(self, trials: int) -> int:
        """Trials per dataset whose outputs an audit of ``trials`` holds in memory."""
        ...

    def number_of_tests(self) -> int | None:
        """Tests certified jointly, fixed before the data (None when the data sets it)."""
        ...

    def check_calibration(self, trials: int) -> None:
        """An :class:`InputError` unless both splits of ``trials`` have :data:`MIN_SPLIT`."""
        ...

    def for_audit(
        self, trials: int, probe: Callable[[], np.ndarray], *, histogram: bool
    ) -> ThresholdStrategy:
        """The strategy an audit of ``trials`` per dataset runs, given ``probe() -> (n, k)``, a
        few outputs of d0 drawn on their own seed (called only by strategies that need it)."""
        ...

    def for_scores(self) -> ThresholdStrategy:
        """The strategy that certifies fixed scores (all of them at hand)."""
        ...

    def calibration_share(self, trials: int, certification_trials: int) -> float:
        """The share of ``trials`` reported as calibration."""
        ...


@dataclass(frozen=True)
class _Fraction:
    """What every strategy shares: the calibration ``fraction`` and its size."""

    held: ClassVar[bool] = False

    def calibration_size(self, trials: int, *, cap: float = MAX_CALIBRATION_TRIALS) -> int:
        return min(int(round(self.fraction * trials)), cap)

    def held_trials(self, trials: int) -> int:
        return self.calibration_size(trials)

    def number_of_tests(self) -> int | None:
        return None

    def check_calibration(self, trials: int) -> None:
        n_cal = self.calibration_size(trials)
        if n_cal < MIN_SPLIT or trials - n_cal < MIN_SPLIT:
            raise InputError(
                f"a fraction of {self.fraction!r} leaves {n_cal} calibration and "
                f"{trials - n_cal} certification trials; each needs at least {MIN_SPLIT}: raise "
                "trials or move the strategy's fraction towards 0.5 (e.g. "
                "threshold=Split(fraction=0.5))"
            )

    def for_audit(
        self, trials: int, probe: Callable[[], np.ndarray], *, histogram: bool
    ) -> ThresholdStrategy:
        return self

    def for_scores(self) -> ThresholdStrategy:
        return self

    def calibration_share(self, trials: int, certification_trials: int) -> float:
        return float(self.fraction)


@dataclass(frozen=True)
class Split(_Fraction):
    """Learn the score and choose one test on the first ``fraction`` of each dataset's trials
    (at most :data:`MAX_CALIBRATION_TRIALS`); certify it on the rest, no correction needed.

    Measured certified / limit, median over seeds, ε ∈ {0.5, ..., 8} (docs/benchmarks.md,
    "Audit tightness"): Gaussian 0.00-0.77 at 10^3 trials, 0.00-0.91 at 10^4, 0.88-0.99 at 10^5,
    0.93-0.98 at 10^6, 0.88-0.91 at 10^7 (the calibration cap); Laplace 0.65-1.01 at 10^3,
    0.94-0.99 at 10^4, ≥ 0.97 from 10^5.  Best of all strategies for pure-ε Laplace at
    small N, worst for the Gaussian there.
    """

    fraction: float = 0.2
    name = "calibration"

    def __post_init__(self) -> None:
        _check_fraction(self.fraction)

    def number_of_tests(self) -> int:
        return 1

    def fix_tests(
        self, s0: np.ndarray, s1: np.ndarray, *, n_certify: int, alpha: float, criterion: Criterion
    ) -> tuple[np.ndarray, Events, int]:
        """The one test :func:`choose_threshold` picks on calibration scores ``s0``, ``s1``:
        ``(thresholds (1,), events (1,), grid 1)``."""
        choice = choose_threshold(
            s0, s1, n_certify=(n_certify, n_certify), alpha=alpha, criterion=criterion
        )
        tests = np.array([choice.threshold])
        directions = np.array([choice.direction])
        events = Events(thresholds=tests, directions=directions, tilts=np.array([choice.tilt]))
        return tests, events, 1


@dataclass(frozen=True)
class Bonferroni(_Fraction):
    """``grid`` thresholds at quantile levels fixed in advance of the calibration split (first
    ``fraction`` of the trials), each certified in 4 directions on the rest with a Bonferroni
    correction over all ``8 * grid`` bounds.

    Measured certified / limit: 0.29-0.92 at 10^3 trials, 0.45-0.96 at 10^4, 0.84-1.00 at
    10^5, 0.90-1.00 at 10^6; never the best (the split and the correction both cost).
    """

    grid: int = 32
    fraction: float = 0.2
    name = "bonferroni"

    def __post_init__(self) -> None:
        check_count(self.grid, "Bonferroni.grid", minimum=2)
        _check_fraction(self.fraction)

    def number_of_tests(self) -> int:
        return len(DIRECTIONS) * self.grid

    def fix_tests(
        self, s0: np.ndarray, s1: np.ndarray, *, n_certify: int, alpha: float, criterion: Criterion
    ) -> tuple[np.ndarray, Events, int]:
        """``grid`` pre-set quantiles of the pooled calibration scores in every direction, each
        test's joint region shaped by its calibration counts: ``(thresholds (T,), events
        (4 T,), grid)``."""
        tests = bonferroni_thresholds(np.concatenate([s0, s1]), self.grid, n_certify)
        directions = np.tile(np.arange(len(DIRECTIONS)), len(tests))
        fp, n_neg, fn, n_pos = error_counts(s0, s1, tests)
        tilts = tilt_of(fp, n_neg[:, None], fn, n_pos[:, None]).T.ravel()  # by threshold
        thresholds = np.repeat(tests, len(DIRECTIONS))
        events = Events(thresholds=thresholds, directions=directions, tilts=tilts)
        return tests, events, self.grid


@dataclass(frozen=True)
class Quantiles(_Fraction):
    """Thresholds at order statistics of the *certifying* scores, at ranks fixed in advance.

    For each dataset as "negative" and each tail, the threshold is its ``k``-th most
    extreme score for every ``k`` in :func:`quantile_ranks` ``(n, grid)``.  The negative
    mass beyond the ``(k+1)``-th order statistic is Beta(k + 1, n - k) distributed for any
    score law (ties only make it smaller), exactly the Clopper–Pearson law of ``k`` false
    positives, and the threshold is independent of the other dataset's trials, whose
    count is then binomial: every test is certified as if fixed in advance, on *all*
    trials, with a joint bound on its two rates (:func:`~dpclaims.audit.bounds.joint_levels`),
    and a union bound over the ``4 * len(ranks)`` tests (4 directions × ranks) makes the best
    of them valid at ``confidence``.  A fixed score (a user
    ``statistic``, or the identity on 1-D outputs) needs no split; a learned score is fitted
    on the first ``fraction`` of the trials, which then do not certify, and, since it
    estimates log p1/p0, is tested in its two :data:`ORIENTED_DIRECTIONS` only
    (``2 * len(ranks)`` tests).  All scores are held
    in memory (8 bytes per trial and dataset).

    ``grid``: ranks per tail (``None``: :func:`default_grid` of the trial count).
    ``fraction``: the learned score's share of the trials, :data:`LEARNED_FRACTION` by default.

    Measured certified / limit: Gaussian 0.68-0.93 at 10^3 trials, 0.60-0.92 at 10^4,
    0.89-0.96 at 10^5, 0.96-1.00 at 10^6, 0.95-0.97 at 10^7; Laplace 0.60-0.96 at 10^3,
    0.90-0.97 at 10^4, ≥ 0.94 from 10^5.  Its worst cell is far above the split's.
    """

    grid: int | None = None
    fraction: float = LEARNED_FRACTION
    name = "quantiles"
    held = True

    def __post_init__(self) -> None:
        if self.grid is not None:
            check_count(self.grid, "Quantiles.grid")
        _check_fraction(self.fraction)

    def held_trials(self, trials: int) -> int:
        return trials

    def calibration_size(self, trials: int, *, cap: float = MAX_CALIBRATION_TRIALS) -> int:
        """``fraction`` of ``trials``, at least :data:`MIN_SPLIT` (a score learned on fewer
        rows is noise), at most ``cap``."""
        return min(max(int(round(self.fraction * trials)), MIN_SPLIT), cap)

    def for_audit(
        self, trials: int, probe: Callable[[], np.ndarray], *, histogram: bool
    ) -> ThresholdStrategy:
        width = probe().shape[1]
        if trials * width > MAX_HELD_VALUES:
            raise InputError(
                f"threshold=Quantiles holds all {trials} × {width} outputs per "
                f"dataset, more than {MAX_HELD_VALUES:,}; use threshold='calibration' "
                "(streamed) or fewer trials"
            )
        return self

    def calibration_share(self, trials: int, certification_trials: int) -> float:
        return (trials - certification_trials) / trials

    def certify_held(
        self,
        s0: np.ndarray,
        s1: np.ndarray,
        *,
        confidence: float,
        criterion: Criterion,
        oriented: bool = False,
    ) -> tuple[Certified, float, np.ndarray, int]:
        """Certify at order statistics of the certifying scores ``s0 (n0,)``, ``s1 (n1,)``:
        ``(best test, alpha per test, tilts (tests,), grid)`` (:func:`certify_quantiles`).
        ``oriented``: the score estimates log p1/p0, so only its :data:`ORIENTED_DIRECTIONS`
        are tested."""
        grid = self.grid or default_grid(len(s0))
        test, alpha, tilts = certify_quantiles(
            s0,
            s1,
            grid=grid,
            confidence=confidence,
            criterion=criterion,
            directions=ORIENTED_DIRECTIONS if oriented else ALL_DIRECTIONS,
        )
        return test, alpha, tilts, grid

    def ranks(self, n: int) -> np.ndarray:
        """The ranks (int64, sorted) of the tests certified on ``n`` scores per dataset."""
        return quantile_ranks(n, self.grid or default_grid(n))


@dataclass(frozen=True)
class Auto(_Fraction):
    """The default: :class:`Quantiles` when the scores fit in memory and the outputs are
    continuous, else :class:`Split` (discrete outputs tie at order statistics and need the
    histogram score; very long audits stream their certification).

    ``fraction``: the calibration share of whichever it runs; ``None`` (the default) keeps
    each one's own (:data:`LEARNED_FRACTION` for :class:`Quantiles`, 0.2 for :class:`Split`).
    """

    fraction: float | None = None
    name = "auto"

    def __post_init__(self) -> None:
        if self.fraction is not None:
            _check_fraction(self.fraction)

    def calibration_size(self, trials: int, *, cap: float = MAX_CALIBRATION_TRIALS) -> int:
        """The split's (the most either strategy takes), for the check of ``trials`` made
        before the outputs choose one."""
        return Split(**self._options()).calibration_size(trials, cap=cap)

    def for_audit(
        self, trials: int, probe: Callable[[], np.ndarray], *, histogram: bool
    ) -> ThresholdStrategy:
        outputs = probe()
        fits = trials * outputs.shape[1] <= MAX_HELD_VALUES
        ties = len(np.unique(outputs, axis=0)) < len(outputs)
        if fits and not ties and not histogram:
            return Quantiles(**self._options())
        return Split(**self._options())

    def for_scores(self) -> ThresholdStrategy:
        return Quantiles(**self._options())

    def _options(self) -> dict:
        return {} if self.fraction is None else {"fraction": self.fraction}


Strategy = ThresholdStrategy

STRATEGIES: dict[str, type] = {cls.name: cls for cls in (Auto, Split, Bonferroni, Quantiles)}
"""The strategies by their string form, each meaning the strategy with its default options."""

STRATEGY_NAMES = tuple(STRATEGIES)


def strategy_named(strategy: str | ThresholdStrategy) -> ThresholdStrategy:
    """``strategy`` as a value: an instance as given, or a name of :data:`STRATEGY_NAMES`."""
    if isinstance(strategy, ThresholdStrategy):
        return strategy
    check_choice(strategy, STRATEGY_NAMES, "threshold")
    return STRATEGIES[strategy]()


def _check_fraction(fraction: object) -> None:
    number = isinstance(fraction, (int, float, np.integer, np.floating))
    if isinstance(fraction, bool) or not number or not 0.0 < fraction < 1.0:
        raise InputError(
            f"the strategy's fraction must be a number in (0, 1), got {fraction!r}; "
            "pass e.g. Split(fraction=0.2)"
        )


@dataclass(frozen=True, kw_only=True)
class Criterion:
    """How a test's error counts become a bound: one-sided ``ci`` upper bounds on both rates,
    tests ranked by ``objective`` (``"epsilon"`` at ``delta``, or ``"mu"`` for Gaussian DP)."""

    delta: float = 0.0
    ci: str = "clopper-pearson"
    objective: str = "epsilon"

    def __post_init__(self) -> None:
        check_choice(self.ci, CI_METHODS, "ci")
        check_choice(self.objective, ("epsilon", "mu"), "objective")


DEFAULT_CRITERION = Criterion()
"""Clopper–Pearson bounds ranking tests by ε at δ = 0."""


@dataclass(frozen=True, kw_only=True)
class Counts:
    """Above counts ``#{score > t}`` (T,) of ``n0`` d0 and ``n1`` d1 trials at T fixed thresholds.

    They add up over chunks of trials (see :func:`counts_above`); every error count of every
    direction is a function of them (:func:`error_counts_from_above`).
    """

    above0: np.ndarray
    n0: int
    above1: np.ndarray
    n1: int

    @classmethod
    def of(cls, s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray) -> Counts:
        """The counts of scores ``s0 (n0,)``, ``s1 (n1,)`` at ``thresholds (T,)``."""
        above0, above1 = counts_above(s0, thresholds), counts_above(s1, thresholds)
        return cls(above0=above0, n0=len(s0), above1=above1, n1=len(s1))

    def errors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:func:`error_counts_from_above` of these counts."""
        return error_counts_from_above(self.above0, self.n0, self.above1, self.n1)

    def take(self, index: np.ndarray | slice) -> Counts:
        """The counts at ``thresholds[index]``."""
        above0, above1 = self.above0[index], self.above1[index]
        return Counts(above0=above0, n0=self.n0, above1=above1, n1=self.n1)


@dataclass(frozen=True, kw_only=True)
class Events:
    """Fixed tests: the event at ``thresholds[j]`` in direction ``directions[j]``, its two rates
    bounded jointly with the region shaped by ``tilts[j]`` (all (T,); tilts default to 1, see
    :func:`~dpclaims.audit.bounds.joint_levels`)."""

    thresholds: np.ndarray
    directions: np.ndarray
    tilts: np.ndarray | None = None

    def __post_init__(self) -> None:
        thresholds = np.atleast_1d(np.asarray(self.thresholds, dtype=np.float64))
        directions = np.atleast_1d(np.asarray(self.directions, dtype=np.int64))
        tilts = np.ones(len(thresholds)) if self.tilts is None else self.tilts
        object.__setattr__(self, "thresholds", thresholds)
        object.__setattr__(self, "directions", directions)
        object.__setattr__(self, "tilts", np.atleast_1d(np.asarray(tilts, dtype=np.float64)))


def default_grid(n: int) -> int:
    """Ranks per tail for :class:`Quantiles` at ``n`` certifying trials:
    ``max(12, 2 ceil(log10 n))`` (12 up to 10^6, 14 at 10^7; on the tightness benchmark 12 beat
    8 and 16 at 10^3-10^4)."""
    return max(12, 2 * math.ceil(math.log10(max(n, 10))))


def quantile_ranks(n: int, grid: int) -> np.ndarray:
    """Ranks ``k`` (int64, sorted, distinct) fixed before seeing data: 0 and ``grid - 1`` ranks
    geometric from 1 to ``n / 2``."""
    ranks = np.concatenate([[0], np.round(np.geomspace(1, max(n / 2, 1), max(grid - 1, 1)))])
    return np.unique(np.clip(ranks, 0, n - 1).astype(np.int64))


@dataclass(frozen=True)
class PlannedTest:
    """One order-statistic test fixed in advance: in ``direction`` (an index of
    :data:`DIRECTIONS`), the threshold is the negative dataset's ``rank``-th most extreme score
    on the event's side (rank 0: the most extreme), its joint region shaped by ``tilt``."""

    direction: int
    rank: int
    tilt: float = 1.0

    def __post_init__(self) -> None:
        if self.direction not in range(len(DIRECTIONS)):
            raise InputError(
                f"PlannedTest.direction must be an index of DIRECTIONS (0-3), got "
                f"{self.direction!r}"
            )
        object.__setattr__(self, "rank", check_count(self.rank, "PlannedTest.rank", minimum=0))
        tilt = self.tilt
        number = isinstance(tilt, (int, float, np.integer, np.floating))
        if not number or isinstance(tilt, bool) or not (math.isfinite(tilt) and tilt > 0):
            raise InputError(f"PlannedTest.tilt must be a positive number, got {self.tilt!r}")


@dataclass(frozen=True)
class Planned(Quantiles):
    """Order-statistic tests planned before any trial: :class:`Quantiles` restricted to the
    few ``tests`` (direction, rank, tilt) a model of the scores predicts to certify most.

    Each test is certified on all certifying scores exactly as a :class:`Quantiles` test (the
    negative mass beyond an order statistic is Beta-distributed whatever the score's law); the
    union bound runs over ``len(tests)`` tests instead of ``4 × grid``, which is what a model
    buys.  The model must not be fitted on the certifying trials: the claim's own law of a
    fixed statistic (:func:`plan_quantile_tests`, e.g. ``dpclaims.targets.dpsgd.planned_test``)
    is the intended source.  Ranks beyond a dataset's trials are clipped to its last score.
    A learned score is fitted on the first ``fraction`` of the trials, as for Quantiles.
    """

    tests: tuple[PlannedTest, ...] = ()
    name = "planned"

    def __post_init__(self) -> None:
        super().__post_init__()
        tests = tuple(self.tests)
        if not tests or not all(isinstance(t, PlannedTest) for t in tests):
            raise InputError(
                "Planned needs tests=(PlannedTest(direction, rank, tilt), ...), at least one; "
                "plan them with plan_quantile_tests"
            )
        object.__setattr__(self, "tests", tests)

    def number_of_tests(self) -> int:
        return len(self.tests)

    def certify_held(
        self,
        s0: np.ndarray,
        s1: np.ndarray,
        *,
        confidence: float,
        criterion: Criterion,
        oriented: bool = False,
    ) -> tuple[Certified, float, np.ndarray, int]:
        """Certify the planned tests on scores ``s0 (n0,)``, ``s1 (n1,)``: ``(best test,
        alpha per test, tilts (tests,), number of tests)``.  The plan's directions are its own
        (``oriented`` changes nothing)."""
        alpha = (1.0 - confidence) / len(self.tests)
        directions = np.array([t.direction for t in self.tests])
        ranks = np.array([t.rank for t in self.tests])
        tilts = np.array([t.tilt for t in self.tests], dtype=np.float64)
        test = certify_ranked(s0, s1, directions, ranks, tilts, alpha=alpha, criterion=criterion)
        return test, alpha, tilts, len(self.tests)

    def ranks(self, n: int) -> np.ndarray:
        return np.unique(np.minimum([t.rank for t in self.tests], n - 1)).astype(np.int64)


def plan_quantile_tests(
    thresholds: np.ndarray,
    above: tuple[np.ndarray, np.ndarray],
    *,
    trials: int,
    confidence: float = 0.95,
    criterion: Criterion = DEFAULT_CRITERION,
    tests: int = 1,
    directions: tuple[int, ...] = (0, 1, 2, 3),
    union: int | None = None,
) -> Planned:
    """The :class:`Planned` strategy whose ``tests`` order-statistic tests a model of the scores
    predicts to certify most at ``trials`` trials per dataset, ``PLAN_SPREAD`` standard errors
    short of its expected counts (so that among near-equal tests the steadier wins).

    The model is the scores' survival functions ``above = (P0(s > t), P1(s > t))`` (G,) each at
    sorted ``thresholds`` (G,) (e.g. the claimed mechanism's law of a fixed statistic).  At rank
    k the negative mass beyond the order statistic is Beta(k + 1, n − k), mean
    ``(k + 1)/(n + 1)``; the threshold with that mass under the model gives the positives'
    predicted count outside the event, ``fn``; ``(k, fn)`` go through the certification's
    joint bound (alpha ``(1 − confidence)/union``, region tilted by :func:`tilt_of` of the
    predicted counts), the true positives taken :data:`PLAN_SPREAD` standard errors low (their
    binomial spread and that of the threshold, the slope of the model's trade-off curve in
    log-log scale over ``sqrt(k + 1)``).  The ``tests`` best ranks are taken from different
    rank octaves (a second test next to the first adds union cost and nothing else).
    ``union``: the tests of the plan this one joins (their ``tests`` concatenated into one
    :class:`Planned`, e.g. tests planned under two models), which set the union bound (default
    ``tests``).
    """
    trials = check_count(trials, "trials", minimum=2)
    tests = check_count(tests, "tests")
    union = tests if union is None else check_count(union, "union", minimum=tests)
    ranks = np.unique(np.round(np.geomspace(1, trials // 2 + 1, 600)).astype(np.int64) - 1)
    value, tilt = _predictions(
        thresholds, above, directions, ranks, None,
        trials=trials, alpha=(1.0 - confidence) / union, criterion=criterion,
    )  # fmt: skip
    chosen: list[PlannedTest] = []
    octave = np.floor(np.log2(ranks + 1.0))
    taken: set[tuple[int, float]] = set()
    for flat in np.argsort(-value, axis=None, kind="stable"):
        row, col = np.unravel_index(flat, value.shape)
        if (row, octave[col]) in taken:
            continue
        taken.add((row, octave[col]))
        chosen.append(PlannedTest(int(directions[row]), int(ranks[col]), float(tilt[row, col])))
        if len(chosen) == tests:
            break
    return Planned(tests=tuple(chosen))


def predicted_epsilon(
    plan: Planned,
    thresholds: np.ndarray,
    above: tuple[np.ndarray, np.ndarray],
    *,
    trials: int,
    confidence: float = 0.95,
    criterion: Criterion = DEFAULT_CRITERION,
) -> float:
    """What ``plan`` is predicted to certify at ``trials`` per dataset on scores whose survival
    functions are ``above`` (G,) each at ``thresholds`` (G,): the best of its tests, each as
    :func:`plan_quantile_tests` predicts it (its own tilt, :data:`PLAN_SPREAD` standard errors
    short, union bound over the plan's tests)."""
    trials = check_count(trials, "trials", minimum=2)
    _check_plan(plan)
    alpha = (1.0 - confidence) / plan.number_of_tests()
    best = 0.0
    for test in plan.tests:
        value, _ = _predictions(
            thresholds, above, (test.direction,), np.array([test.rank]), test.tilt,
            trials=trials, alpha=alpha, criterion=criterion,
        )  # fmt: skip
        best = max(best, float(value[0, 0]))
    return best


def predicted_power(
    plan: Planned,
    thresholds: np.ndarray,
    above: tuple[np.ndarray, np.ndarray],
    *,
    trials: int,
    epsilon: float,
    confidence: float = 0.95,
    criterion: Criterion = DEFAULT_CRITERION,
) -> float:
    """The predicted probability that ``plan`` certifies more than ``epsilon`` at ``trials`` per
    dataset on scores whose survival functions are ``above`` (G,) at ``thresholds`` (G,): for
    each test, ``Φ(z)`` where its prediction with the true positives ``z`` standard errors low
    equals ``epsilon`` (the normal model of :func:`plan_quantile_tests`); the best of its tests
    (a lower bound on the probability that one of them does)."""
    trials = check_count(trials, "trials", minimum=2)
    _check_plan(plan)
    epsilon = check_positive(epsilon, "epsilon")
    alpha = (1.0 - confidence) / plan.number_of_tests()
    best = 0.0
    for test in plan.tests:

        def excess(z: float, test: PlannedTest = test) -> float:
            value, _ = _predictions(
                thresholds, above, (test.direction,), np.array([test.rank]), test.tilt,
                trials=trials, alpha=alpha, criterion=criterion, spread=z,
            )  # fmt: skip
            return float(value[0, 0]) - epsilon

        low, high = -POWER_Z, POWER_Z
        if excess(low) <= 0:
            continue
        if excess(high) > 0:
            return 1.0
        for _ in range(40):  # the prediction falls as z grows
            middle = 0.5 * (low + high)
            low, high = (middle, high) if excess(middle) > 0 else (low, middle)
        best = max(best, 0.5 * (1.0 + math.erf(0.5 * (low + high) / math.sqrt(2.0))))
    return best


def _check_plan(plan: Any) -> None:
    if not isinstance(plan, Planned):
        raise InputError(
            f"plan must be a Planned strategy (from plan_quantile_tests), got {type(plan).__name__}"
        )


def _predictions(
    thresholds: np.ndarray,
    above: tuple[np.ndarray, np.ndarray],
    directions: tuple[int, ...],
    ranks: np.ndarray,
    tilt: float | None,
    *,
    trials: int,
    alpha: float,
    criterion: Criterion,
    spread: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Predicted certified ε and tilts (directions, ranks) of the order-statistic tests at
    ``ranks`` (R,) in ``directions``, each bounded at ``alpha`` with its region shaped by
    ``tilt`` (None: the tilt of its predicted counts), the true positives ``spread`` standard
    errors low (default :data:`PLAN_SPREAD`); see :func:`plan_quantile_tests`."""
    spread = PLAN_SPREAD if spread is None else spread
    thresholds = np.asarray(thresholds, dtype=np.float64)
    above0, above1 = (np.clip(np.asarray(a, dtype=np.float64), 0.0, 1.0) for a in above)
    if not (thresholds.shape == above0.shape == above1.shape) or thresholds.ndim != 1:
        raise InputError("thresholds and the two survival functions must be 1-D of one length")
    mass = (ranks + 1.0) / (trials + 1.0)
    values, tilts = [], []
    for direction in directions:
        neg_in, pos_in = _event_rates(direction, above0, above1)
        order = np.argsort(neg_in, kind="stable")
        # the positives' mass inside the event where the negatives' is `mass`, and the slope
        # of log(positives' mass) in log(negatives' mass) there
        pos = np.interp(mass, neg_in[order], pos_in[order])
        wider = np.interp(mass * PLAN_STEP, neg_in[order], pos_in[order])
        slope = np.log(np.maximum(wider, 1e-300) / np.maximum(pos, 1e-300)) / math.log(PLAN_STEP)
        # the count of true positives, taken `spread` standard errors low: its own binomial
        # spread and the order statistic's (the negative mass has relative spread 1/sqrt(k+1))
        tp = trials * pos
        error = np.sqrt(1.0 / np.maximum(tp, 0.5) + slope**2 / (ranks + 1.0))
        fn = np.maximum(trials - tp * np.exp(-spread * error), 0.0)
        shape = tilt_of(ranks, trials, fn, trials) if tilt is None else np.full(len(ranks), tilt)
        bounds = joint_upper(ranks, trials, fn, trials, alpha, criterion.ci, shape)
        values.append(np.min(epsilon_from_rates(*bounds, criterion.delta), axis=0))
        tilts.append(shape)
    return np.array(values), np.array(tilts)


def _event_rates(direction: int, above0: np.ndarray, above1: np.ndarray):
    """``(negatives' mass inside the event, positives' mass inside it)`` of ``direction`` at
    each modelled threshold, from the survival functions ``above0``, ``above1`` (G,)."""
    match direction:
        case 0:  # d1 if score > t: d0 negative
            return above0, above1
        case 1:  # d1 if score <= t
            return 1.0 - above0, 1.0 - above1
        case 2:  # d0 if score > t: d1 negative
            return above1, above0
        case _:  # d0 if score <= t
            return 1.0 - above1, 1.0 - above0


def certify_quantiles(
    s0: np.ndarray,
    s1: np.ndarray,
    *,
    grid: int,
    confidence: float,
    criterion: Criterion = DEFAULT_CRITERION,
    directions: tuple[int, ...] = ALL_DIRECTIONS,
) -> tuple[Certified, float, np.ndarray]:
    """Certify the :class:`Quantiles` tests in ``directions`` on certifying scores
    ``s0 (n0,)``, ``s1 (n1,)``.

    Returns the best test (its ``false_positives`` is the rank ``k`` the bound uses; with
    ties the event may hold fewer), the failure probability of each test's joint bound
    ``(1 - confidence) / (len(directions) * len(ranks))`` and the tests' tilts
    (len(directions) * len(ranks),).
    """
    n0, n1 = len(s0), len(s1)
    ranks = quantile_ranks(min(n0, n1), grid)
    tested = _check_directions(directions)
    alpha = (1.0 - confidence) / (len(tested) * len(ranks))
    directions = np.repeat(tested, len(ranks))
    fp = np.tile(ranks, len(tested))
    n_neg = np.where(directions < 2, n0, n1)
    n_pos = np.where(directions < 2, n1, n0)
    tilts = tilt_of(fp, n_neg, n_pos - np.minimum(fp + QUANTILE_TRUE_POSITIVES, n_pos), n_pos)
    test = certify_ranked(s0, s1, directions, fp, tilts, alpha=alpha, criterion=criterion)
    return test, alpha, tilts


def _check_directions(directions: Any) -> np.ndarray:
    """``directions`` as int64 (D,): distinct indices into :data:`DIRECTIONS`, at least one."""
    tested = np.asarray(directions).ravel()
    if (
        len(tested) == 0
        or tested.dtype.kind not in "iu"
        or len(np.unique(tested)) != len(tested)
        or not np.all((tested >= 0) & (tested < len(DIRECTIONS)))
    ):
        raise InputError(
            f"directions must be distinct integers among 0-3 (indices into DIRECTIONS), got "
            f"{directions!r}; use ALL_DIRECTIONS or ORIENTED_DIRECTIONS"
        )
    return tested.astype(np.int64)


def certify_ranked(
    s0: np.ndarray,
    s1: np.ndarray,
    directions: np.ndarray,
    ranks: np.ndarray,
    tilts: np.ndarray,
    *,
    alpha: float,
    criterion: Criterion = DEFAULT_CRITERION,
) -> Certified:
    """The best of the order-statistic tests ``(directions[j], ranks[j])`` (J,) on scores
    ``s0 (n0,)``, ``s1 (n1,)``, each with a joint bound failing with probability ``alpha``
    shaped by ``tilts[j]``.

    In a direction whose event is ``{score > t}`` the threshold is the negative dataset's
    ``(k+1)``-th largest score (k negatives above it); in one whose event is ``{score <= t}``,
    just below its ``(k+1)``-th smallest.  The negative mass in the event is then
    Beta(k + 1, n − k) for any score law (Clopper–Pearson of k false positives) and the
    positives' count is binomial given the threshold (see :class:`Quantiles`).
    """
    sorted_scores = (np.sort(s0), np.sort(s1))
    directions = np.asarray(directions, dtype=np.int64)
    thresholds = np.empty(len(directions))
    fp = np.empty(len(directions), dtype=np.int64)
    fn = np.empty(len(directions), dtype=np.int64)
    n_neg = np.empty(len(directions), dtype=np.int64)
    n_pos = np.empty(len(directions), dtype=np.int64)
    for direction in range(len(DIRECTIONS)):
        at = directions == direction
        if not np.any(at):
            continue
        neg, pos = sorted_scores[direction // 2], sorted_scores[1 - direction // 2]
        k = np.minimum(np.asarray(ranks)[at], len(neg) - 1)
        if direction % 2 == 0:  # {score > t}: k negatives above the (k+1)-th largest
            t = neg[len(neg) - 1 - k]
            misses = np.searchsorted(pos, t, side="right")
        else:  # {score < the (k+1)-th smallest}, written {score <= t}
            lowest = neg[k]
            t = np.nextafter(lowest, -np.inf)
            misses = len(pos) - np.searchsorted(pos, lowest, side="left")
        thresholds[at], fp[at], fn[at] = t, k, misses
        n_neg[at], n_pos[at] = len(neg), len(pos)
    events = Events(thresholds=thresholds, directions=directions, tilts=tilts)
    return _best_test(events, (fp, n_neg, fn, n_pos), alpha=alpha, criterion=criterion)


@dataclass(frozen=True)
class ThresholdChoice:
    """A test chosen on calibration data and the value it predicts (ε, or μ for
    ``objective="mu"``)."""

    threshold: float
    direction: int
    predicted: float
    tilt: float = 1.0


@dataclass(frozen=True)
class Certified:
    """Error counts of a fixed test on certification data and their upper bounds."""

    threshold: float
    direction: int
    false_positives: int
    n_negative: int
    false_negatives: int
    n_positive: int
    fpr_upper: float
    fnr_upper: float
    epsilon_lower: float
    mu: float
    tilt: float = 1.0


def candidate_thresholds(scores: np.ndarray, per_tail: int = MAX_THRESHOLDS_PER_TAIL) -> np.ndarray:
    """Sorted candidate thresholds for pooled ``scores (n,)``.

    All distinct values when there are at most ``2 * per_tail`` of them; otherwise the
    order statistics at ``per_tail`` geometrically spaced ranks from each end (dense
    in the tails, where the best tests for ε live).
    """
    values = np.sort(scores)
    distinct = (
        values[np.concatenate([[True], values[1:] != values[:-1]])] if len(values) else values
    )
    if len(distinct) <= 2 * per_tail:
        return distinct
    n = len(values)
    ranks = np.unique(np.round(np.geomspace(1, n / 2, per_tail)).astype(np.int64)) - 1
    return np.unique(np.concatenate([values[ranks], values[n - 1 - ranks]]))


def bonferroni_thresholds(scores: np.ndarray, grid_size: int, n_certify: int) -> np.ndarray:
    """``grid_size`` thresholds: quantiles of calibration ``scores`` at levels fixed in advance.

    The levels depend only on ``grid_size`` and the certification size (geometric
    in both tails from ``10 / n_certify`` to 1/2), never on the certifying data.
    """
    low = min(0.5, 10.0 / n_certify)
    half = np.geomspace(low, 0.5, max(1, grid_size // 2 + grid_size % 2))
    levels = np.unique(np.concatenate([half, 1.0 - half]))[:grid_size]
    return np.quantile(scores, levels)


def counts_above(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """``#{scores > t}`` for every threshold: int64 (T,) from scores (n,) and thresholds (T,).

    One sort of the scores and a lookup of each threshold in them: ``n - #{scores <= t}``
    (a NaN score sorts last and counts as above every threshold).  Faster than placing each
    score among the thresholds (contiguous sort instead of n random lookups).
    """
    ordered = np.sort(np.asarray(scores, dtype=np.float64))
    below = np.searchsorted(ordered, np.asarray(thresholds, dtype=np.float64), side="right")
    return (len(ordered) - below).astype(np.int64)


def error_counts(
    s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Error counts of the four :data:`DIRECTIONS` at every threshold.

    Parameters
    ----------
    s0, s1 : scores of d0 and d1 trials, shapes (n0,), (n1,)
    thresholds : (T,)

    Returns
    -------
    false_positives (4, T), n_negative (4,), false_negatives (4, T), n_positive (4,)
    """
    return error_counts_from_above(
        counts_above(s0, thresholds), len(s0), counts_above(s1, thresholds), len(s1)
    )


def error_counts_from_above(
    above0: np.ndarray, n0: int, above1: np.ndarray, n1: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`error_counts` from the above counts ``above0``, ``above1`` (T,) of ``n0``, ``n1``
    trials."""
    above0, above1 = np.asarray(above0), np.asarray(above1)
    fp = np.stack([above0, n0 - above0, above1, n1 - above1])
    fn = np.stack([n1 - above1, above1, n0 - above0, above0])
    return fp, np.array([n0, n0, n1, n1]), fn, np.array([n1, n1, n0, n0])


_SWAP = np.array([3, 2, 1, 0])
"""``false_negatives == false_positives[_SWAP]`` and ``n_positive == n_negative[_SWAP]`` (see
:func:`error_counts`)."""


def choose_threshold(
    s0: np.ndarray,
    s1: np.ndarray,
    *,
    n_certify: tuple[int, int],
    alpha: float,
    criterion: Criterion = DEFAULT_CRITERION,
) -> ThresholdChoice:
    """Pick the test (threshold, direction) on calibration scores ``s0``, ``s1``.

    The objective is what the test is predicted to certify on ``n_certify = (n0, n1)``
    certification trials of d0 and d1: each calibration error rate is replaced by its
    one-sided upper bound at level ``1 - PREDICTION_ALPHA`` (pessimistic, to damp the winner's
    curse of picking the luckiest extreme threshold), scaled to the certification size, and put
    through the same upper bounds (``alpha``, ``criterion``) as the certification, the region of
    each shaped by the predicted counts (:func:`~dpclaims.audit.bounds.tilt_of`).
    """
    ci = criterion.ci
    thresholds = candidate_thresholds(np.concatenate([s0, s1]))
    fp, n_neg, _, _ = error_counts(s0, s1, thresholds)
    n0, n1 = n_certify
    neg_cert = np.array([n0, n0, n1, n1])[:, None]
    fp_pred = rate_upper(fp, n_neg[:, None], PREDICTION_ALPHA, ci) * neg_cert
    # each direction's false negatives are another direction's false positives
    predicted = (fp_pred, neg_cert, fp_pred[_SWAP], neg_cert[_SWAP])
    tilts = tilt_of(*predicted)
    value = _ranked_values(predicted, alpha, criterion, tilts)
    direction, index = np.unravel_index(int(np.argmax(value)), value.shape)
    return ThresholdChoice(
        float(thresholds[index]),
        int(direction),
        float(value[direction, index]),
        float(tilts[direction, index]),
    )


def certify(
    s0: np.ndarray,
    s1: np.ndarray,
    events: Events,
    *,
    alpha: float,
    criterion: Criterion = DEFAULT_CRITERION,
) -> Certified:
    """Certify each fixed test of ``events`` on scores ``s0 (n0,)``, ``s1 (n1,)``; return the best.

    Each test's joint bound on its two rates fails with probability ``alpha``; the caller sets
    ``alpha`` so that the bounds of all tests hold together (one test → ``1 - confidence``; a
    fixed grid → Bonferroni).  ``criterion.objective`` ("epsilon" or "mu") says which value
    ranks them.
    """
    counts = Counts.of(s0, s1, events.thresholds)
    return certify_counts(counts, events, alpha=alpha, criterion=criterion)


def certify_counts(
    counts: Counts, events: Events, *, alpha: float, criterion: Criterion = DEFAULT_CRITERION
) -> Certified:
    """:func:`certify` from :class:`Counts` at ``events.thresholds`` (summed over chunks)."""
    fp_all, n_neg_all, fn_all, n_pos_all = counts.errors()
    directions, cols = events.directions, np.arange(len(events.thresholds))
    fp, fn = fp_all[directions, cols], fn_all[directions, cols]
    errors = (fp, n_neg_all[directions], fn, n_pos_all[directions])
    return _best_test(events, errors, alpha=alpha, criterion=criterion)


RANK_CORNER = JOINT_CORNERS // 2
"""The corner whose value first bounds each candidate test from above (:func:`_ranked_values`)."""

RANK_BATCH = 32
"""Candidate tests bounded at every corner at a time (:func:`_ranked_values`)."""


def _values(fp, n_neg, fn, n_pos, alpha: float, criterion: Criterion, tilts, corners=slice(None)):
    """Each test's value (ε, or μ for ``objective="mu"``) from its counts (N,): the smallest
    over ``corners`` of its joint region (all: the value :func:`_bounded` certifies)."""
    fpr_u, fnr_u = joint_upper(fp, n_neg, fn, n_pos, alpha, criterion.ci, tilts, corners=corners)
    if criterion.objective == "mu":
        return np.min(gdp_mu(fpr_u, fnr_u), axis=0)
    return np.min(epsilon_from_rates(fpr_u, fnr_u, criterion.delta), axis=0)


def _ranked_values(predicted: tuple, alpha: float, criterion: Criterion, tilts) -> np.ndarray:
    """The tests' values (shape of ``tilts``) where one may be the largest, smaller numbers
    elsewhere: their argmax, and the value there, are those of the exact values of all tests,
    for a fraction of the bounds.

    A value is the smallest over the region's corners, so its value at :data:`RANK_CORNER` is
    an upper bound, exact where it is 0 (values are >= 0).  The other tests are bounded in
    full, :data:`RANK_BATCH` at a time in decreasing order of that upper bound, until the next
    one's falls below the best value found: no test left can reach it.
    """
    flat = [np.broadcast_to(v, tilts.shape).ravel() for v in (*predicted, tilts)]
    value = _values(*flat[:4], alpha, criterion, flat[4], corners=[RANK_CORNER])
    order = np.argsort(-value, kind="stable")
    order, best = order[value[order] > 0], -np.inf
    for start in range(0, len(order), RANK_BATCH):
        if value[order[start]] < best:
            break
        batch = order[start : start + RANK_BATCH]
        value[batch] = _values(*(v[batch] for v in flat[:4]), alpha, criterion, flat[4][batch])
        best = max(best, float(np.max(value[batch])))
    return value.reshape(tilts.shape)


def _bounded(fp, n_neg, fn, n_pos, alpha: float, criterion: Criterion, tilts) -> tuple:
    """Each test's certified value from its error counts (broadcast shape S), with the joint
    bound on its two rates at failure probability ``alpha``, shaped by ``tilts`` (S,)
    (:func:`~dpclaims.audit.bounds.joint_upper`): the smallest value over the corners.

    Returns ``value`` (S,) (ε, or μ for ``objective="mu"``) and, at the corner that gives it,
    ``(fpr_upper, fnr_upper, epsilon, mu)``, each (S,).
    """
    fpr_u, fnr_u = joint_upper(fp, n_neg, fn, n_pos, alpha, criterion.ci, tilts)  # (J, S)
    eps = epsilon_from_rates(fpr_u, fnr_u, criterion.delta)
    mu = gdp_mu(fpr_u, fnr_u)
    values = mu if criterion.objective == "mu" else eps
    corner = np.expand_dims(np.argmin(values, axis=0), 0)
    at = [np.take_along_axis(v, corner, axis=0)[0] for v in (fpr_u, fnr_u, eps, mu)]
    return np.min(values, axis=0), tuple(at)


def _best_test(events: Events, errors: tuple, *, alpha: float, criterion: Criterion) -> Certified:
    """Bound every test of ``events`` (T,) from its ``errors`` ``(fp, n_negative, fn,
    n_positive)``, each (T,), with a joint bound on both rates failing with probability
    ``alpha``, and return the one ``criterion.objective`` ranks best, as :class:`Certified`."""
    fp, n_neg, fn, n_pos = errors
    value, (fpr_u, fnr_u, eps, mu) = _bounded(fp, n_neg, fn, n_pos, alpha, criterion, events.tilts)
    best = int(np.argmax(value))
    return Certified(
        threshold=float(events.thresholds[best]),
        direction=int(events.directions[best]),
        false_positives=int(fp[best]),
        n_negative=int(n_neg[best]),
        false_negatives=int(fn[best]),
        n_positive=int(n_pos[best]),
        fpr_upper=float(fpr_u[best]),
        fnr_upper=float(fnr_u[best]),
        epsilon_lower=float(eps[best]),
        mu=float(mu[best]),
        tilt=float(events.tilts[best]),
    )


def tradeoff_thresholds(scores: np.ndarray, points: int = 101) -> np.ndarray:
    """``-inf`` and the distinct quantiles of ``scores (n,)`` at ``points`` equally spaced levels:
    (T,) sorted.  Between scores near ±1e308 the interpolated quantile overflows to ±inf, a
    threshold as good as any there."""
    with np.errstate(over="ignore", invalid="ignore"):
        levels = np.quantile(scores, np.linspace(0.0, 1.0, points))
    return np.concatenate([[-np.inf], np.unique(levels)])


def tradeoff_curve(
    s0: np.ndarray, s1: np.ndarray, direction: int, points: int = 101
) -> list[list[float]]:
    """Empirical (FPR, FNR) pairs of ``direction`` at ``points`` pooled-quantile thresholds, sorted
    by FPR."""
    thresholds = tradeoff_thresholds(np.concatenate([s0, s1]), points)
    return tradeoff_from_counts(Counts.of(s0, s1, thresholds), direction)


def tradeoff_from_counts(counts: Counts, direction: int) -> list[list[float]]:
    """Empirical (FPR, FNR) pairs of ``direction`` from :class:`Counts` at fixed thresholds,
    sorted by FPR."""
    fp, n_neg, fn, n_pos = counts.errors()
    fpr = fp[direction] / n_neg[direction]
    fnr = fn[direction] / n_pos[direction]
    order = np.lexsort((-fnr, fpr))
    return [[float(a), float(b)] for a, b in zip(fpr[order], fnr[order], strict=True)]
