"""Worst-pair search: screen candidate neighbouring pairs cheaply, certify the best on new trials.

:func:`search` audits a mechanism without being told its worst neighbouring pair:

1. *Screening.*  Every pair of a family's fixed patterns, a few random pairs and a few
   steps of local search around the best pair so far are each screened on
   ``screen_trials`` trials per dataset, drawn from an integer seed of
   ``SeedSequence(seed, spawn_key=(0x5EA2C,))`` (never equal to ``seed``).  A screen is a
   ranking, not an audit (:class:`_Screener`): the audit's candidate scores (``logistic``
   replaced by a closed-form quadratic ``lda``) are fitted on a quarter of its trials and the
   pair's value is the best bound a test on the other three quarters would certify at the
   final size if its error rates held (a screen's own size undervalues rare, telling events);
   ties go to the bound at the screen's own size.  The best pairs are screened again on more
   fresh trials, in the successive-halving rounds of :data:`ROUNDS` (which also correct the
   optimism of a lucky rare event), and the best of the last round is chosen.
2. *Certification.*  The chosen pair is audited once more with ``trials`` trials per
   dataset and the seed ``seed`` itself: exactly ``audit(mechanism, d0*, d1*, seed=seed,
   ...)``.  A screened pair of checked neighbours whose outputs have different widths on its
   two datasets shows ε = ∞, certain: the search stops after its round of screens and returns
   that pair with the verdict ``violation`` (:attr:`SearchResult.certain`), no audit.

Sequential search (``sequential=True``, the CLI's default for a per-call function).  The first
screens run on :data:`~dpclaims.audit.sequential.FIRST_LOOK` trials per dataset (or
``screen_trials`` when smaller), and the screening stops early, after any phase (the fixed
patterns, the random pairs and local steps, each successive-halving round), once the best pair's
screen already shows a violation: its bound at the screen's own size exceeds the claimed ε.
That is a selection rule only (the screens choose, they never certify).  The chosen pair is then
certified by :func:`~dpclaims.audit.sequential.audit_sequential` with the seed ``seed`` (looks
from ``FIRST_LOOK`` to ``trials`` trials per dataset, each on fresh trials of its own seed,
independent of the screens' seeds), so the argument below holds for each look.

Why the final bound keeps its confidence.  The certifying audit draws from
``SeedSequence(seed)`` (spawn keys 0, 1, 2) and every screen from
``SeedSequence(s)`` for another integer ``s``: the streams are independent, as long as
the mechanism draws all its randomness from the ``rng`` it is given (the audit warns
when it does not).  The chosen pair ``(d0*, d1*)`` is a function of the screening outputs
only, hence independent of the certifying trials.  Conditional on any value of that
choice, the certifying audit is an ordinary audit of one fixed neighbouring pair on fresh
trials, so its bound fails with probability at most ``1 - confidence``; averaging over
the choice, the same holds unconditionally.  No correction for the number of screened
pairs is needed (nor taken), because only one pair is ever certified and nothing of the
screening enters its counts.  A lower bound on the privacy loss of one neighbouring pair
is a lower bound on the mechanism's ε (a supremum over all pairs).  The screening values
are a search trace, never reported as certified.

Families of pairs (:class:`PairFamily`: :class:`~dpclaims.targets.pairs.QueryPairs` for query
answers, :class:`~dpclaims.targets.pairs.CanaryPairs` for a user's dataset) are given to
:func:`search`; it imports none.

Cost and progress.  Before screening, a pilot batch of the mechanism times a run and the
whole search (screens and certification) is estimated on stderr, with a smaller trial count
when it is long; then a tqdm bar over the screens on a terminal, or plain progress lines (every
tenth of the screening runs or :data:`LINE_SECONDS`) off one, as in CI.  The screens of each
phase run together on the execution's backend (the blocks of :func:`~dpclaims.execution.
run_trials`, seeded as there), so the same seed screens the same outputs on every backend.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..data import (
    UserDataset,
    read_only,
)
from ..errors import DPClaimsError, InputError, NotNeighboursError, check_confidence, check_trials
from ..execution import (
    DEFAULT_EXECUTION,
    SEED_BLOCK,
    Execution,
    TaskGrid,
    as_batched,
    call_block,
    check_execution,
    child_seed,
    plan_chunks,
    resolve_workers,
    run_blocks,
    session,
)
from ..execution.mechanisms import joined
from ..privacy import PrivacyClaim
from ..resources import FIXED_SECONDS, PROBE_SECONDS, WORKER_SHARE, _duration
from ..vocabulary import Verdict
from .bounds import epsilon_from_rates, rate_upper
from .core import MIN_TRIALS, _check_neighbours, audit, same_data
from .methods import AuditMethod
from .options import DEFAULT_TEST, NO_REFERENCE, AuditTest, Neighbours, Reference
from .result import AuditResult
from .scores import Score, apply_statistic, candidate_scores, fit_score, is_discrete
from .sequential import FIRST_LOOK, audit_sequential, trials_spent
from .threshold import candidate_thresholds, error_counts

__all__ = [
    "PairFamily",
    "SCREEN_TRIALS",
    "RANDOM_PAIRS",
    "LOCAL_STEPS",
    "Pair",
    "SearchEstimate",
    "SearchResult",
    "search",
    "screen_trials_for",
    "describe_change",
    "check_pair_dir",
    "save_pair",
]

SCREEN_TRIALS = 10_000
"""Trials per dataset of each screen."""

RANDOM_PAIRS = 4
"""Random pairs screened after the fixed patterns."""

LOCAL_STEPS = 16
"""Local-search steps (one perturbation of the best pair so far, screened, kept if better)."""

SCREEN_FIT = 0.25
"""Share of each screen's trials (per dataset) that fit the candidate scores; the others rank the
pair."""

SCREEN_PREDICTION_ALPHA = 0.5
"""A screen projects each error rate to the final size at its upper bound at level
``1 - SCREEN_PREDICTION_ALPHA``: at 0.5 about the point rate, except that a count of 0 projects to
~0.7 of a trial rather than to 0 (which would put a lucky extreme threshold at the ceiling).  On
the black-box benchmark the audit's pessimistic 0.02 undervalued SVT1's rare telling events (its
certified ε fell to 0.83), the plain point rate chose lucky extreme thresholds (noisy-max value
fell to 1.95)."""

SCREEN_THRESHOLDS_PER_TAIL = 16
"""Thresholds per tail of a screen's scores (all distinct values when there are at most twice as
many; else geometrically spaced ranks, dense in the tails where rare telling events sit)."""

ROUNDS = ((8, 4), (3, 16))
"""Successive halving after the first screen: ``(keep, factor)`` — the ``keep`` best pairs of the
previous round are screened again on fresh trials, ``factor × screen_trials`` per dataset."""

LINE_SECONDS = 30.0
"""Off a terminal, a progress line at least this often (seconds), besides each tenth of the
screening runs."""

HINT_SECONDS = 120.0
"""A search estimated longer than this (seconds) is shown the largest of :data:`HINT_TRIALS`
that fits in it."""

HINT_TRIALS = (100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000)
"""Trial counts a long search's estimate proposes (with screens of :func:`screen_trials_for`)."""

SCREEN_SECONDS = 0.01
"""Seconds of a screen beyond its mechanism runs (fitting the scores, the thresholds, the
transfers): 37 screens of ``dpclaims audit gaussian --search`` take 0.25 s on two cores."""

_PILOT_KEY = 0x91107
"""Spawn key of the pilot batch that times the mechanism (its outputs are not used)."""

_SEARCH_KEY = 0x5EA2C
"""Spawn key of the screening seeds; the certifying audit uses ``seed`` itself (keys 0, 1, 2)."""

_SWAP = np.array([3, 2, 1, 0])
"""With as many trials of d0 as of d1, direction ``d``'s false negatives at a threshold are
direction ``_SWAP[d]``'s false positives there (:func:`~dpclaims.audit.threshold.error_counts`)."""


@dataclass(frozen=True, eq=False)
class Pair:
    """A candidate neighbouring pair ``d0``, ``d1``, named; ``values``: what a family perturbs.

    ``novel``: the pair holds a value or a shape the data never has (a new class, a dataset
    cut to two users); a mechanism that raises on it drops the pair from the search (listed
    in :attr:`SearchResult.skipped`) instead of failing the search.  ``derived``: how the
    pair's data was derived from the data searched around (``"2 users, derived from --d0:
    its first 2 users"``), empty when it is that data.
    """

    name: str
    d0: Any
    d1: Any
    values: tuple = ()
    novel: bool = False
    derived: str = ""

    @property
    def change(self) -> str:
        """What differs between ``d0`` and ``d1``: which unit, features and/or label
        (:func:`describe_change`), and how their data was derived when it was."""
        change = describe_change(self.d0, self.d1)
        return f"{change}; {self.derived}" if self.derived else change


class PairFamily(Protocol):
    """A family of neighbouring pairs the search screens (:mod:`dpclaims.targets.pairs`)."""

    def patterns(self) -> list[Pair]:
        """The fixed patterns, screened first."""

    def random(self, rng: np.random.Generator) -> Pair:
        """One random pair of the family."""

    def perturb(self, pair: Pair, rng: np.random.Generator) -> Pair:
        """A local move from ``pair``."""

    def neighbour_options(self) -> dict:
        """How the audit checks the family's pairs when not as the claim's records: the
        fields of a :class:`~dpclaims.audit.Neighbours` (``relation``, ``sensitivity``)."""


@dataclass(frozen=True)
class SearchResult:
    """The certifying audit of the chosen pair, and how the pair was found.

    ``screened`` lists ``(name, ε bound at the screen's size)`` in the order tried (not certified
    jointly: a search trace); ``samples`` counts every mechanism run, screening included.
    ``skipped`` lists ``(name, why)`` of pairs left out: outputs of different widths on the
    two datasets (ε = ∞ on that pair, shown by :func:`~dpclaims.audit.replay`), or a
    ``novel`` pair the mechanism refused.

    ``certain``: why ε = ∞ on ``pair``, certain (its outputs have different widths on its two
    datasets, checked neighbours under the claim): the verdict is then ``violation`` and
    ``result`` is None, since no audit can compare such outputs and none is needed.
    """

    result: AuditResult | None
    pair: Pair
    screened: tuple = ()
    skipped: tuple = ()
    screen_trials: int = 0
    screening_samples: int = 0
    samples: int = 0
    wall_time: float = 0.0
    certain: str = ""

    @property
    def epsilon_lower(self) -> float:
        """The certified bound (of the certifying audit; inf on a :attr:`certain` pair)."""
        return math.inf if self.certain else self.result.epsilon_lower

    @property
    def verdict(self) -> Verdict:
        return Verdict.VIOLATION if self.certain else self.result.verdict

    @property
    def reason(self) -> str:
        """The verdict's reason: the certain ε = ∞ and its pair, else the audit's."""
        if self.certain:
            return f"ε = ∞ on the neighbouring pair {self.pair.name}, certain: {self.certain}"
        return self.result.reason

    def to_dict(self) -> dict:
        """The audit's record plus ``search``: the chosen pair, the trace and the sample counts
        (on a :attr:`certain` pair: the verdict, its reason and ``infinite``, no audit)."""
        record = (
            {
                "verdict": Verdict.VIOLATION,
                "reason": self.reason,
                "epsilon_lower": None,
                "infinite": True,
            }
            if self.certain
            else self.result.to_dict()
        )
        return {
            **record,
            "search": {
                "pair": self.pair.name,
                "change": self.pair.change,
                "skipped": [[name, why] for name, why in self.skipped],
                "screen_trials": self.screen_trials,
                "screening_samples": self.screening_samples,
                "samples": self.samples,
                "wall_time": self.wall_time,
                "screened": [[name, value] for name, value in self.screened],
            },
        }


class _WidthsDiffer(InputError):
    """A screened pair whose datasets give outputs of different widths (no audit compares
    them; the search lists the pair as skipped, with this reason)."""


@dataclass(frozen=True, kw_only=True)
class _Screener:
    """Screens candidate pairs: a ranking, not an audit (no probes, no certificate).

    ``mechanism`` runs ``n`` trials per dataset on the screen's own seed (d0, d1 and the score
    fit on its children 0, 1, 2), in the seed blocks of :func:`~dpclaims.execution.run_trials`
    cut into ``chunk``-trial tasks for ``workers`` (:meth:`outputs`); the candidate scores of
    the audit (or the user's ``statistic``) are fitted on the first :data:`SCREEN_FIT` of them
    and evaluated on the rest (:meth:`value`), at the
    thresholds of :func:`~dpclaims.audit.threshold.candidate_thresholds`, in the four
    directions.  The pair's value is ``(projected, own)``: the best bound those empirical error
    rates would certify at ``trials`` trials per dataset (a screen's own size undervalues rare,
    telling events; the optimism of a lucky rare event is what the later, larger rounds
    correct), and the best at the screen's own size (the tie-break, and the trace).
    """

    mechanism: Callable
    trials: int
    delta: float
    alpha: float  # of each rate's bound, 1 - sqrt(confidence): separate bounds rank, not certify
    ci: str
    method: AuditMethod
    statistic: Callable | None
    workers: int
    chunk: int | None

    @classmethod
    def of(
        cls,
        mechanism: Callable,
        trials: int,
        *,
        claim: Any,
        confidence: float,
        test: Any,
        execution: Any,
    ) -> _Screener:
        """The screener of :func:`search` with these options, its statistical options checked
        (the certifying audit checks the rest)."""
        if not isinstance(claim, PrivacyClaim):
            raise InputError(
                "search needs the claim: pass claim=PrivacyClaim(epsilon=1.0, delta=1e-5), got "
                f"{type(claim).__name__}"
            )
        if not isinstance(test, AuditTest):
            raise InputError(
                f"test must be a dpclaims.AuditTest, got {type(test).__name__}; pass e.g. "
                "test=AuditTest(method='threshold')"
            )
        execution = check_execution(execution)
        return cls(
            mechanism=as_batched(mechanism),
            trials=trials,
            delta=claim.delta,
            alpha=1.0 - math.sqrt(check_confidence(confidence)),
            ci=test.ci,
            method=test.behaviour,
            statistic=test.statistic,
            workers=resolve_workers(execution.workers),
            chunk=execution.chunk,
        )

    def outputs(
        self, runner: Any, jobs: list[tuple[Pair, int]], n: int, advance: Callable[[int], None]
    ) -> list[tuple[np.ndarray, np.ndarray] | DPClaimsError]:
        """The outputs ``(x0, x1)`` of each ``(pair, seed)`` of ``jobs`` on ``n`` trials per
        dataset, all run together on the session ``runner`` (``advance(runs)`` as each task
        ends), or the error that stopped one of its datasets."""
        chunks = plan_chunks(n, self.chunk, self.workers)
        heads = [
            (self.mechanism, read_only(data), child_seed(seed, i))
            for pair, seed in jobs
            for i, data in enumerate((pair.d0, pair.d1))
        ]
        tasks = TaskGrid(heads, chunks)
        parts: list = [None] * len(tasks)
        for i, part in runner.stream(_blocks_or_error, tasks):
            parts[i] = part
            advance(sum(hi - lo for _, _, lo, hi in tasks[i][3]))
        per = len(chunks)
        sides = [_joined_or_error(parts[h * per : (h + 1) * per]) for h in range(len(heads))]
        return [
            next((x for x in both if isinstance(x, DPClaimsError)), both)
            for both in zip(sides[::2], sides[1::2], strict=True)
        ]

    def value(self, x0: np.ndarray, x1: np.ndarray, seed: int) -> tuple[float, float]:
        """``(projected, own)`` of a pair's outputs ``x0``, ``x1`` drawn from ``seed``."""
        if x0.shape[1] != x1.shape[1]:
            raise _WidthsDiffer(
                f"outputs have {x0.shape[1]} columns on d0 but {x1.shape[1]} on d1: ε = ∞ on "
                "this pair, certain (an output of one dataset the other never gives); "
                "dpclaims.audit.replay shows it"
            )
        if self.statistic is not None:
            return self._rank(*(apply_statistic(self.statistic, x) for x in (x0, x1)))
        fit = max(2, round(SCREEN_FIT * len(x0)))
        rng = np.random.default_rng(child_seed(seed, 2))
        codes = _outcome_codes(x0), _outcome_codes(x1)
        discrete = is_discrete(np.concatenate([codes[0][:fit], codes[1][:fit]]))
        width = x0.shape[1]
        names = (
            self.method.candidates(width, discrete)
            if discrete
            else candidate_scores(width, discrete, nonlinear=False)
        )
        best = (0.0, 0.0)
        for name in names:
            y0, y1 = codes if name == "histogram_lr" else (x0, x1)
            fitted = (_fit_quadratic if name == "logistic" else fit_score)(
                name, y0[:fit], y1[:fit], rng
            )
            best = max(best, self._rank(fitted(y0[fit:]), fitted(y1[fit:])))
        return best

    def _rank(self, s0: np.ndarray, s1: np.ndarray) -> tuple[float, float]:
        """``(projected, own)`` of scores ``s0``, ``s1`` (n,) over the four directions at
        :data:`SCREEN_THRESHOLDS_PER_TAIL` thresholds per tail: the best bound at ``trials``
        trials per dataset, each rate projected there (:data:`SCREEN_PREDICTION_ALPHA`), and
        the best at the screen's own size."""
        n = len(s0)
        thresholds = candidate_thresholds(np.concatenate([s0, s1]), SCREEN_THRESHOLDS_PER_TAIL)
        fp = error_counts(s0, s1, thresholds)[0]  # (4, T), each direction's n negatives = n
        expected = rate_upper(fp, n, SCREEN_PREDICTION_ALPHA, self.ci) * self.trials
        sizes = np.array([self.trials, n], dtype=np.float64)[:, None, None]
        # (2, 4, T): the projected counts at the final size, the screen's own at its size
        both = rate_upper(np.stack([expected, fp]), sizes, self.alpha, self.ci)
        # each direction's false negatives are another's false positives
        projected, own = (float(np.max(epsilon_from_rates(f, f[_SWAP], self.delta))) for f in both)
        return projected, own


def _blocks_or_error(
    mechanism: Callable, data: Any, seed: np.random.SeedSequence, blocks: list
) -> np.ndarray | DPClaimsError:
    """:func:`~dpclaims.execution.run_blocks`, or the error it raised: a novel pair the
    mechanism refuses drops that pair, not the other screens of its phase."""
    try:
        return run_blocks(mechanism, data, seed, blocks)
    except DPClaimsError as error:
        return error


def _joined_or_error(parts: list) -> np.ndarray | DPClaimsError:
    """One dataset's chunks of outputs joined, or the first error among them."""
    error = next((part for part in parts if isinstance(part, DPClaimsError)), None)
    if error is not None:
        return error
    try:
        return joined(parts)
    except DPClaimsError as error:
        return error


def _outcome_codes(x: np.ndarray) -> np.ndarray:
    """Outputs ``(n, k)`` as one number per row ``(n, 1)``: ``x @ w`` for fixed weights in
    [1, 2) (distinct rows of small integers never share a code).  The histogram score and the
    discreteness check then sort one key instead of ``k`` (5× faster on SVT5's 10 columns); two
    rows that did share a code would only merge two outcomes of a screen's ranking."""
    if x.shape[1] == 1:
        return x
    weights = np.random.default_rng(_SEARCH_KEY).uniform(1.0, 2.0, x.shape[1])
    return (x @ weights)[:, None]


def _fit_quadratic(name: str, x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Score:
    """The screens' stand-in for ``logistic``: ``lda`` on the standardised ``[z, z**2]`` (the
    logistic score's features, so it sees differences in spread too), fitted in closed form:
    the logistic Newton fit took half of a screen's time on 10-column outputs."""
    pooled = np.concatenate([x0, x1])
    k, center, spread = pooled.shape[1], pooled.mean(axis=0), pooled.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)

    def features(x: np.ndarray) -> np.ndarray:
        z = (x - center) / spread
        return np.concatenate([z, z * z], axis=1)

    weights = fit_score("lda", features(x0), features(x1), rng)(np.eye(2 * k))  # lda is x @ w
    linear, square = weights[:k] / spread, weights[k:] / spread**2

    def score(x: np.ndarray) -> np.ndarray:  # features(x) @ weights, without the (n, 2k) array
        moved = x - center
        out = moved @ linear
        moved *= moved
        out += moved @ square
        return out

    return Score(f"{name} (screen: quadratic lda)", score)


def _values(array: np.ndarray) -> str:
    """A unit's labels in a few characters: ``2`` when they are one value, else the list."""
    values = np.unique(array)
    if len(values) == 1:
        return f"{values[0]:g}"
    return (
        "[" + ", ".join(f"{v:g}" for v in np.ravel(array)[:6]) + (", …]" if array.size > 6 else "]")
    )


def _class_change(d0: UserDataset, d1: UserDataset) -> str:
    """``"; class 0 only in d0"`` when a label value is held in one dataset and not the
    other (a class that disappears or appears), else ``""``."""
    if d0.y is None or d1.y is None:
        return ""
    a, b = set(np.unique(d0.y).tolist()), set(np.unique(d1.y).tolist())
    notes = [f"class {v:g} only in {side}" for side, s in (("d0", a - b), ("d1", b - a)) for v in s]
    return "".join(f"; {note}" for note in sorted(notes)[:4])


def describe_change(d0: Any, d1: Any) -> str:
    """One line saying what differs between neighbours ``d0`` and ``d1``.

    Two :class:`~dpclaims.data.UserDataset` s: which user (and item) changed, whether its
    features, its label (``label 1 → 2``) or both, or which user (with its label) is in
    one and not the other; two vectors: how many answers differ and by how much at most.
    """
    if isinstance(d0, UserDataset) and isinstance(d1, UserDataset):
        if d0.n != d1.n:
            big, small, side = (d0, d1, "d0") if d0.n > d1.n else (d1, d0, "d1")
            rows = np.any(big.x[: small.n] != small.x, axis=(1, 2))
            if big.y is not None:
                rows |= np.any(big.y[: small.n] != small.y, axis=1)
            user = int(np.argmax(rows)) if np.any(rows) else small.n
            label = "" if big.y is None else f" with its label {_values(big.y[user])}"
            return f"user {user} only in {side}{label} (added or removed)" + _class_change(d0, d1)
        if d0.x.shape != d1.x.shape:
            return f"shapes differ: {d0.x.shape} vs {d1.x.shape}"
        features = np.any(d0.x != d1.x, axis=2)
        labels = np.zeros_like(features) if d0.y is None else d0.y != d1.y
        units = np.flatnonzero(np.any(features | labels, axis=1))
        if len(units) == 0:
            return "nothing differs"
        parts = []
        for user in units[:3]:
            items = np.flatnonzero(features[user] | labels[user])
            where = f"user {user}" + (f", item {items[0]}" if len(items) == 1 and d0.m > 1 else "")
            what = []
            if np.any(features[user]):
                moved = np.linalg.norm(d0.x[user] - d1.x[user], axis=1).max()
                what.append(f"features (moved by up to {moved:.3g})")
            if np.any(labels[user]):
                changed = labels[user]
                what.append(
                    f"label {_values(d0.y[user][changed])} → {_values(d1.y[user][changed])}"
                )
            if d0.y is not None and not np.any(labels[user]):
                what.append("label kept")
            parts.append(f"{where}: " + ", ".join(what))
        return (
            "; ".join(parts)
            + (f"; {len(units) - 3} more users" if len(units) > 3 else "")
            + (_class_change(d0, d1))
        )
    a, b = np.atleast_1d(np.asarray(d0, dtype=float)), np.atleast_1d(np.asarray(d1, dtype=float))
    if a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    moved = np.abs(a - b)
    return f"{int(np.count_nonzero(moved))} of {a.size} answers differ (by up to {moved.max():g})"


def _differs(pair: Any) -> bool:
    """A :class:`Pair` whose two datasets are not the same data (anything else is refused)."""
    if not isinstance(pair, Pair):
        raise InputError(
            f"pairs must hold dpclaims.audit.search.Pair values, got {type(pair).__name__}"
        )
    return not same_data(pair.d0, pair.d1)


PAIR_FILES = ("d0.npz", "d1.npz")
"""The files :func:`save_pair` writes into its folder."""


def check_pair_dir(folder: str | os.PathLike, *, force: bool = False) -> Path:
    """Check, before any work, that :func:`save_pair` may write ``folder``: a new or empty
    folder, or with ``force`` one that holds nothing but ``d0.npz`` and ``d1.npz`` (so a
    user's other files are never overwritten); its parent must exist."""
    path = Path(folder).expanduser()
    if path.exists() or path.is_symlink():
        if path.is_symlink() or not path.is_dir():
            raise InputError(
                f"--save-pair {str(folder)!r} exists and is not a folder; pass a new folder"
            )
        entries = sorted(entry.name for entry in path.iterdir())
        if entries and not force:
            raise InputError(
                f"--save-pair {str(folder)!r} is not empty; pass --force to replace its "
                "d0.npz and d1.npz, or choose a new folder"
            )
        foreign = [
            name
            for name in entries
            if name not in PAIR_FILES or not (path / name).is_file() or (path / name).is_symlink()
        ]
        if foreign:
            raise InputError(
                f"--save-pair {str(folder)!r} holds {foreign[0]!r}, which dpclaims does not "
                "write there, so it leaves the folder alone; choose a new folder"
            )
    elif not path.parent.is_dir():
        raise InputError(
            f"--save-pair {str(folder)!r}: its parent folder {str(path.parent)!r} does not "
            "exist; create it or choose another folder"
        )
    return path


def save_pair(pair: Pair, folder: str | os.PathLike, *, force: bool = False) -> tuple[Path, Path]:
    """Write ``pair``'s datasets as ``folder/d0.npz`` and ``folder/d1.npz``
    (``numpy.savez`` with ``x`` and, when labelled, ``y``; each file written atomically), so
    the pair can be audited again with ``--d0 folder/d0.npz --d1 folder/d1.npz``.  ``folder``
    is checked by :func:`check_pair_dir`."""
    import io

    from dpclaims.atomic import write_atomic

    if not (isinstance(pair.d0, UserDataset) and isinstance(pair.d1, UserDataset)):
        raise InputError(
            "--save-pair writes UserDataset pairs (x, y); this pair is "
            f"{type(pair.d0).__name__} / {type(pair.d1).__name__}"
        )
    path = check_pair_dir(folder, force=force)
    path.mkdir(exist_ok=True)
    written = []
    for name, data in zip(PAIR_FILES, (pair.d0, pair.d1), strict=True):
        buffer = io.BytesIO()
        arrays = {"x": np.asarray(data.x)} | ({} if data.y is None else {"y": np.asarray(data.y)})
        np.savez(buffer, **arrays)
        written.append(write_atomic(path / name, buffer.getvalue()))
    return written[0], written[1]


def _neighbours(pair: Pair, claim: PrivacyClaim, neighbours: Neighbours | None) -> bool:
    """Whether ``pair`` is checked to be neighbours under the search's claim (and its
    ``neighbours`` option): only then does a certain ε = ∞ on it refute the claim."""
    try:
        notes = _check_neighbours(pair.d0, pair.d1, claim, neighbours)
    except NotNeighboursError:
        return False
    return not notes


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def screen_trials_for(trials: int) -> int:
    """The screens' trials per dataset for ``trials`` certifying ones, as ``dpclaims audit
    --search`` chooses them: a tenth, between ``MIN_TRIALS`` and :data:`SCREEN_TRIALS`."""
    return max(MIN_TRIALS, min(SCREEN_TRIALS, trials // 10))


@dataclass(frozen=True, kw_only=True)
class SearchEstimate:
    """A search's cost, known before it starts: at most ``screens`` screens with
    ``screen_runs`` runs of the mechanism (screens of ``screen_trials``) and ``certify_runs``
    certifying ones, each run taking ``seconds_per_run`` (the wall time of a pilot batch), on
    ``workers`` worker processes (each beyond the first adding ``WORKER_SHARE`` of a speed-up,
    as the audit's estimate), plus :data:`SCREEN_SECONDS` a screen and the audit's
    ``FIXED_SECONDS``.  A sequential search also states ``first_look_runs``: the runs when the
    fixed patterns' screens show a violation and the first look certifies it."""

    screens: int
    screen_runs: int
    certify_runs: int
    screen_trials: int
    seconds_per_run: float
    workers: int
    first_look_runs: int | None = None

    def seconds(self, trials: int | None = None) -> float:
        """Estimated wall seconds of the search, or of the same search with ``trials``
        certifying trials and screens of :func:`screen_trials_for` them."""
        if trials is None:
            return self.screening() + self.certifying(self.certify_runs // 2)
        runs = self.screen_runs * screen_trials_for(trials) / self.screen_trials
        return self._runs(runs) + self.screens * SCREEN_SECONDS + self.certifying(trials)

    def screening(self) -> float:
        """Estimated wall seconds of the screens."""
        return self._runs(self.screen_runs) + self.screens * SCREEN_SECONDS

    def certifying(self, trials: int) -> float:
        """Estimated wall seconds of the certifying audit on ``trials`` trials per dataset."""
        return self._runs(2 * trials) + FIXED_SECONDS

    def _runs(self, runs: float) -> float:
        return runs * self.seconds_per_run / (1.0 + WORKER_SHARE * (self.workers - 1))

    def describe(self) -> str:
        """One line: the runs, their cost, the time, and a smaller trial count when long."""
        workers = "1 worker" if self.workers == 1 else f"{self.workers} workers"
        most = "about" if self.first_look_runs is None else "at most about"
        line = (
            f"search: {most} {self.screen_runs + self.certify_runs:,} mechanism runs "
            f"({self.screen_runs:,} screening, {self.certify_runs:,} certifying) of "
            f"{1e3 * self.seconds_per_run:.2g} ms each on {workers}: {most} "
            f"{_duration(self.seconds())}"
        )
        if self.first_look_runs is not None:
            first = self._runs(self.first_look_runs) + FIXED_SECONDS
            line += (
                f"; a violation the first screens show stops it after about "
                f"{self.first_look_runs:,} runs, about {_duration(first)}"
            )
        smaller = [t for t in HINT_TRIALS if 2 * t < self.certify_runs]
        if self.seconds() <= HINT_SECONDS or not smaller:
            return line
        fits = next((t for t in smaller if self.seconds(t) <= HINT_SECONDS), smaller[-1])
        return f"{line}; --trials {fits} would take about {_duration(self.seconds(fits))}"


def _estimate(
    mechanism: Callable,
    data: Any,
    seed: int,
    *,
    screens: int,
    screen_runs: int,
    trials: int,
    screen_trials: int,
    workers: int,
    first_look_runs: int | None,
) -> SearchEstimate | None:
    """The :class:`SearchEstimate` of a search, its mechanism timed on ``data``: a pilot batch
    of 32 trials, then 4× more until a call takes ``PROBE_SECONDS`` or one seed block (wall
    time: a mechanism may wait rather than compute).  None when the mechanism raises there
    (the screens then report why)."""
    root, size = child_seed(seed, _PILOT_KEY), 32
    while True:
        start = time.perf_counter()
        try:
            call_block(mechanism, read_only(data), root, index=0, size=size)
        except DPClaimsError:
            return None
        elapsed = time.perf_counter() - start
        if elapsed >= PROBE_SECONDS or size >= SEED_BLOCK:
            break
        size = min(4 * size, SEED_BLOCK)
    return SearchEstimate(
        screens=screens,
        screen_runs=screen_runs,
        certify_runs=2 * trials,
        screen_trials=screen_trials,
        seconds_per_run=elapsed / size,
        workers=workers,
        first_look_runs=first_look_runs,
    )


class _Report:
    """The search's estimate and progress on stderr (none when ``show`` is False): a tqdm bar
    over the screened pairs on a terminal; off one (CI logs) plain lines, at each tenth of the
    screening runs and at least every :data:`LINE_SECONDS`."""

    def __init__(self, show: bool | None, pairs: int, runs: int) -> None:
        from tqdm import tqdm

        self.on = show is not False
        self.lines = self.on and not sys.stderr.isatty()
        self.pairs, self.screened, self.done, self.total = pairs, 0, 0, runs
        self.start = self.last = time.perf_counter()
        self.mark = 0.0
        self.bar = tqdm(
            total=pairs,
            file=sys.stderr,
            unit="pair",
            desc="search: screening",
            delay=1.0,
            disable=not self.on or self.lines,
            leave=False,
        )

    def say(self, line: str) -> None:
        if self.on:
            print(line, file=sys.stderr, flush=True)

    def estimate(self, estimate: SearchEstimate | None) -> None:
        if estimate is not None:
            self.say(estimate.describe())

    def pair(self) -> None:
        self.screened += 1
        self.bar.update(1)

    def advance(self, runs: int) -> None:
        """``runs`` more screening runs done: a line when a tenth is passed or it is time."""
        self.done += runs
        now = time.perf_counter()
        share = self.done / self.total
        if not self.lines or (share < self.mark + 0.1 and now - self.last < LINE_SECONDS):
            return
        self.mark, self.last = math.floor(10 * share) / 10, now
        elapsed = now - self.start
        self.say(
            f"search: screening {100 * share:.0f}% ({self.done:,} of {self.total:,} runs, "
            f"{self.screened} of {self.pairs} pairs), {_duration(elapsed)} elapsed, about "
            f"{_duration(elapsed * (1.0 / share - 1.0))} left"
        )

    def certifying(
        self, pair: Pair, trials: int, estimate: SearchEstimate | None, *, sequential: bool
    ) -> None:
        self.bar.close()
        took = _duration(time.perf_counter() - self.start)
        bound = "at most about" if sequential else "about"
        cost = "" if estimate is None else f", {bound} {_duration(estimate.certifying(trials))}"
        looks = f"in looks of {min(FIRST_LOOK, trials):,} up to " if sequential else "on "
        self.say(
            f"search: screened {self.screened} pairs in {took}; certifying {pair.name!r} "
            f"{looks}{trials:,} trials per dataset{cost}"
        )


def _screen_seeds(seed: int, count: int) -> list[int]:
    """``count`` integer seeds from ``child_seed(seed, _SEARCH_KEY)``, none equal to ``seed``."""
    states = child_seed(seed, _SEARCH_KEY).generate_state(count)
    return [int(s) if int(s) != int(seed) else int(s) + 1 for s in states]


def search(
    mechanism: Callable,
    pairs: PairFamily | Sequence[Pair],
    claim: PrivacyClaim | None = None,
    *,
    trials: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    test: AuditTest = DEFAULT_TEST,
    neighbours: Neighbours | None = None,
    execution: Execution = DEFAULT_EXECUTION,
    reference: Reference = NO_REFERENCE,
    screen_trials: int = SCREEN_TRIALS,
    random_pairs: int = RANDOM_PAIRS,
    local_steps: int = LOCAL_STEPS,
    rounds: Sequence[tuple[int, int]] = ROUNDS,
    progress: bool | None = None,
    sequential: bool = False,
) -> SearchResult:
    """Find a neighbouring pair on which ``mechanism`` leaks most, then certify it on fresh trials.

    Parameters
    ----------
    mechanism : as for :func:`~dpclaims.audit.audit`
    pairs : a :class:`PairFamily` (e.g. :func:`dpclaims.targets.pairs.pairs_for`) or
        a fixed list of :class:`Pair` (no random pairs or local search then)
    claim, confidence, test, neighbours, execution, reference : as for
        :func:`~dpclaims.audit.audit`, the same values (the certifying audit takes them all;
        the screens use the claim's δ, ``confidence``, the test's ``ci``, ``method`` and
        ``statistic``, and the execution's backend, workers and chunk)
    trials, seed : trials per dataset and seed of the certifying audit (the screens draw
        their own seeds from ``seed``); the final bound holds at ``confidence`` whatever
        the screening found (module docstring)
    screen_trials : trials per dataset of each screen
    random_pairs, local_steps : random pairs screened, local-search steps (families only)
    rounds : ``(keep, factor)`` rounds of successive halving after the first screen
        (:data:`ROUNDS`)
    progress : the search's estimate on stderr, then a tqdm bar over the screens on a
        terminal or progress lines off one, then the certifying audit's bar on a terminal;
        False: none (default: ``execution.progress``, and shown when that is None too)
    sequential : screens from ``FIRST_LOOK`` trials that stop once the best pair's screen shows
        a violation, and the chosen pair certified by
        :func:`~dpclaims.audit.sequential.audit_sequential` (module docstring)

    Returns
    -------
    SearchResult
    """
    start = time.perf_counter()
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    screen_trials = check_trials(screen_trials, "screen_trials", minimum=MIN_TRIALS)
    random_pairs = check_trials(random_pairs, "random_pairs", minimum=0)
    local_steps = check_trials(local_steps, "local_steps", minimum=0)
    if not isinstance(sequential, (bool, np.bool_)):
        raise InputError(f"sequential must be True or False, got {sequential!r}")
    if sequential:
        screen_trials = min(screen_trials, FIRST_LOOK)
    rounds = tuple(
        (check_trials(k, "rounds keep"), check_trials(f, "rounds factor")) for k, f in rounds
    )
    family = None if isinstance(pairs, (list, tuple)) else pairs
    if family is not None and not all(
        hasattr(family, a) for a in ("patterns", "random", "perturb")
    ):
        raise InputError(
            "pairs must be a pair family (dpclaims.targets.pairs) or a list of Pair "
            "(see dpclaims.audit.search)"
        )
    fixed = [p for p in (list(pairs) if family is None else family.patterns()) if _differs(p)]
    if neighbours is None and family is not None and hasattr(family, "neighbour_options"):
        neighbours = Neighbours(**family.neighbour_options())
    if not fixed:
        raise InputError(
            "pairs must hold at least one dpclaims.audit.search.Pair whose d0 and d1 differ"
        )
    extra = 0 if family is None else random_pairs + local_steps
    first = len(fixed) + extra
    planned = first + sum(keep for keep, _ in rounds)
    seeds = iter(_screen_seeds(seed, planned + 1))
    rng = np.random.default_rng(next(seeds))
    trace: list[tuple[str, float]] = []
    skipped: list[tuple[str, str]] = []
    infinite: list[tuple[Pair, str]] = []  # valid neighbours with a certain ε = ∞
    screener = _Screener.of(
        mechanism, trials, claim=claim, confidence=confidence, test=test, execution=execution
    )
    show = execution.progress if progress is None else progress
    scored: list[tuple[tuple[float, float], int, Pair]] = []
    sized = first + sum(min(keep, first) * factor for keep, factor in rounds)  # in screen_trials
    screen_runs = 2 * screen_trials * sized
    report = _Report(show, planned, screen_runs)

    def screen(pairs: list[Pair], n: int) -> list[tuple[float, float] | None]:
        """The values of ``pairs`` screened together on ``n`` trials per dataset (None: the
        pair is skipped, and why is listed)."""
        jobs = [(pair, next(seeds)) for pair in pairs]
        values: list[tuple[float, float] | None] = []
        for (pair, seed_), out in zip(
            jobs, screener.outputs(runner, jobs, n, report.advance), strict=True
        ):
            report.pair()
            try:
                if isinstance(out, DPClaimsError):
                    raise out
                value = screener.value(*out, seed_)
            except _WidthsDiffer as error:
                skipped.append((pair.name, str(error)))
                if _neighbours(pair, claim, neighbours):
                    infinite.append((pair, str(error)))
                values.append(None)
                continue
            except Exception as error:  # a novel pair the mechanism refuses: not the search's
                if not pair.novel:
                    raise
                why = _first_line(f"{type(error).__name__}: {error}")
                skipped.append((pair.name, f"the mechanism refused it ({why})"))
                values.append(None)
                continue
            trace.append((pair.name, value[1]))
            values.append(value)
        return values

    def shown() -> bool:
        """Sequential: the best pair's screen bound (at its own size) exceeds the claim."""
        return sequential and bool(scored) and max(scored)[0][1] > claim.epsilon

    def add(pairs: list[Pair]) -> None:
        # the same data on both sides can only win a screen by luck
        differ = [pair for pair in pairs if _differs(pair)]
        for pair, value in zip(differ, screen(differ, screen_trials), strict=True):
            if value is not None:
                scored.append((value, len(scored), pair))

    probe = (screener.mechanism, fixed[0].d0)
    with session(execution, tasks=2 * len(fixed), probe=probe) as runner, report.bar:
        estimate = None
        if report.on:
            estimate = _estimate(
                screener.mechanism,
                fixed[0].d0,
                seed,
                screens=planned,
                screen_runs=screen_runs,
                trials=trials,
                screen_trials=screen_trials,
                workers=1 if runner.backend == "serial" else screener.workers,
                first_look_runs=(
                    2 * screen_trials * len(fixed) + 2 * min(FIRST_LOOK, trials)
                    if sequential
                    else None
                ),
            )
        report.estimate(estimate)
        add(fixed)
        if not scored and not infinite:
            raise InputError(
                "no pair could be screened: "
                + "; ".join(f"{name}: {why}" for name, why in skipped[:3])
            )
        if family is not None and not infinite and not shown():
            add([family.random(rng) for _ in range(random_pairs)])
            for _ in range(local_steps):
                if shown():
                    break
                add([family.perturb(max(scored)[2], rng)])
        spent = 2 * screen_trials * (len(scored) + len(skipped))
        for keep, factor in rounds if len(scored) > 1 and not infinite else ():
            if shown():
                break
            best = [(i, p) for _, i, p in sorted(scored, reverse=True)[:keep]]
            again = screen([p for _, p in best], factor * screen_trials)
            scored = [(v, -i, p) for v, (i, p) in zip(again, best, strict=True) if v is not None]
            spent += 2 * factor * screen_trials * len(again)
    if infinite:
        return SearchResult(
            result=None,
            pair=infinite[0][0],
            screened=tuple(trace),
            skipped=tuple(skipped),
            screen_trials=screen_trials,
            screening_samples=spent,
            samples=spent,
            wall_time=time.perf_counter() - start,
            certain=infinite[0][1],
        )
    chosen = max(scored)[2]
    report.certifying(chosen, trials, estimate, sequential=sequential)
    certifying = execution if progress is None else replace(execution, progress=progress)
    certify = partial(audit_sequential, first=min(FIRST_LOOK, trials)) if sequential else audit
    result = certify(
        mechanism, chosen.d0, chosen.d1, claim, trials=trials, confidence=confidence, seed=seed,
        test=test, neighbours=neighbours, execution=certifying, reference=reference,
    )  # fmt: skip
    return SearchResult(
        result=result,
        pair=chosen,
        screened=tuple(trace),
        skipped=tuple(skipped),
        screen_trials=screen_trials,
        screening_samples=spent,
        samples=spent + 2 * (trials_spent(result) if sequential else trials),
        wall_time=time.perf_counter() - start,
    )
