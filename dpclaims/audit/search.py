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
   ...)``.

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

Families (both directions of a pair are covered: an audit's four tests let either
dataset be the "positive" one, so ``(a, b)`` and ``(b, a)`` are the same audit):

- :class:`QueryPairs` — mechanisms on a vector of ``k`` query answers with ℓ∞
  sensitivity Δ (each answer moves by at most Δ), the setting of StatDP (Ding et al.
  2018, §5.1, Table 1) and DP-Sniper (Bichsel et al. 2021, §6.1): one differs, all
  differ, half up half down, one up rest down, one down rest up, X shape, each in both
  orders; random pairs; local search moving one answer of b, one of both, or all by Δ.
- :class:`CanaryPairs` — mechanisms on a :class:`~dpclaims.data.UserDataset`: one
  user (or item) replaced by canaries built with :mod:`dpclaims.hardinstances.canaries`
  (zero, maximal norm, opposite sign, far outlier, the original values), random
  replacements and local search over the replaced user's values; on labelled data at most
  :data:`LABEL_PAIRS` label pairs too (a class that disappears or appears, flips, features and
  label together), ranked, so the screening stays bounded.  Labels only add pairs: the
  screening seeds are drawn as before, so unlabelled data screens exactly what it did.

The screens show a tqdm bar on stderr (``progress``; default: when stderr is a terminal).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..data import (
    RELATIONS,
    UNITS,
    UserDataset,
    read_only,
    remove_user,
    replace_item,
    replace_user,
)
from ..errors import InputError, check_choice, check_confidence, check_trials
from ..execution import DEFAULT_EXECUTION, SEED_BLOCK, as_batched, child_seed, run_blocks
from ..hardinstances.canaries import extreme_item_pair, extreme_user_pair
from ..privacy import PrivacyClaim
from .bounds import epsilon_from_rates, rate_upper
from .core import MIN_TRIALS, audit, same_data
from .methods import AuditMethod
from .options import DEFAULT_TEST, AuditTest, Neighbours
from .result import AuditResult
from .scores import Score, apply_statistic, candidate_scores, fit_score, is_discrete
from .threshold import candidate_thresholds, error_counts

__all__ = [
    "SCREEN_TRIALS",
    "RANDOM_PAIRS",
    "LOCAL_STEPS",
    "Pair",
    "QueryPairs",
    "CanaryPairs",
    "SearchResult",
    "search",
    "describe_change",
    "check_pair_dir",
    "save_pair",
    "MAX_CLASSES",
    "LABEL_PAIRS",
    "pairs_for",
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

_SEARCH_KEY = 0x5EA2C
"""Spawn key of the screening seeds; the certifying audit uses ``seed`` itself (keys 0, 1, 2)."""

_SWAP = np.array([3, 2, 1, 0])
"""With as many trials of d0 as of d1, direction ``d``'s false negatives at a threshold are
direction ``_SWAP[d]``'s false positives there (:func:`~dpclaims.audit.threshold.error_counts`)."""

OUTLIER_FACTOR = 10.0
"""The far-outlier canary sits at this multiple of the maximal norm."""

MAX_CLASSES = 32
"""Labels are classes when they are integers with at most this many distinct values; else they
are regression labels (negated, pushed to the extremes)."""

LABEL_PAIRS = 8
"""Most label pairs a :class:`CanaryPairs` family screens, the best ranked first
(:meth:`CanaryPairs.label_patterns`): with many classes "the label changed to each other class"
alone would grow the screening without bound.  The search then screens at most 11 feature
patterns + 8 label pairs + random and local pairs, about a third more than unlabelled data."""


@dataclass(frozen=True, eq=False)
class Pair:
    """A candidate neighbouring pair ``d0``, ``d1``, named; ``values``: what a family perturbs.

    ``novel``: the pair holds a value the data never has (a new class); a mechanism that
    raises on it drops the pair from the search (listed in :attr:`SearchResult.skipped`)
    instead of failing the search.
    """

    name: str
    d0: Any
    d1: Any
    values: tuple = ()
    novel: bool = False

    @property
    def change(self) -> str:
        """What differs between ``d0`` and ``d1``: which unit, features and/or label
        (:func:`describe_change`)."""
        return describe_change(self.d0, self.d1)


@dataclass(frozen=True)
class QueryPairs:
    """Pairs of query-answer vectors ``(k,)`` whose entries differ by at most ``sensitivity``.

    The base vector is all ones (scaled by Δ), the other moves entries to 0 or 2Δ:
    StatDP's patterns (Ding et al. 2018, Table 1), used by DP-Sniper (Bichsel et al. 2021).
    """

    k: int
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_trials(self.k, "k"))
        if not (
            isinstance(self.sensitivity, (int, float))
            and math.isfinite(self.sensitivity)
            and self.sensitivity > 0
        ):
            raise InputError(f"sensitivity must be a finite number > 0, got {self.sensitivity!r}")

    def neighbour_options(self) -> dict:
        """How :func:`~dpclaims.audit.audit` checks these pairs: query answers within
        ``sensitivity`` in every coordinate."""
        return {"neighbours": Neighbours(relation="query", sensitivity=self.sensitivity)}

    def _pair(self, name: str, a: np.ndarray, b: np.ndarray) -> Pair:
        a = self.sensitivity * np.asarray(a, dtype=np.float64)
        b = self.sensitivity * np.asarray(b, dtype=np.float64)
        return Pair(name, a, b, (a, b))

    def patterns(self) -> list[Pair]:
        """The fixed patterns (each in both orders where the order matters)."""
        k, ones = self.k, np.ones(self.k)
        half = k // 2
        out = [self._pair("all up", ones, 2 * ones), self._pair("all down", ones, 0 * ones)]
        for where, i in (("first", 0), ("last", k - 1)):
            if k == 1 and where == "last":
                break
            up, down = ones.copy(), ones.copy()
            up[i], down[i] = 2.0, 0.0
            rest_down, rest_up = np.zeros(k), 2 * ones
            rest_down[i], rest_up[i] = 2.0, 0.0
            out += [
                self._pair(f"one up ({where})", ones, up),
                self._pair(f"one down ({where})", ones, down),
            ]
            if k > 1:
                out += [
                    self._pair(f"one up rest down ({where})", ones, rest_down),
                    self._pair(f"one down rest up ({where})", ones, rest_up),
                ]
        if k > 1:
            low_high = np.r_[np.zeros(half), 2 * np.ones(k - half)]
            cross_a = np.r_[np.ones(half), np.zeros(k - half)]
            out += [
                self._pair("half down half up", ones, low_high),
                self._pair("half up half down", ones, low_high[::-1]),
                self._pair("X shape", cross_a, 1 - cross_a),
                self._pair("X shape (reversed)", cross_a[::-1], 1 - cross_a[::-1]),
            ]
        return out

    def random(self, rng: np.random.Generator) -> Pair:
        """``a`` uniform on {0, 1, 2}^k, ``b = a + u`` with ``u`` uniform on {−1, 0, 1}^k."""
        a = rng.integers(0, 3, self.k).astype(np.float64)
        return self._pair("random", a, a + rng.integers(-1, 2, self.k))

    def perturb(self, pair: Pair, rng: np.random.Generator) -> Pair:
        """One move, each with probability 1/3: one answer of ``b`` by ±Δ (kept within Δ of
        ``a``), one answer of both by ±Δ, or every answer of both by ±Δ (a shift against a
        threshold)."""
        a, b = (v / self.sensitivity for v in pair.values)
        a, b = a.copy(), b.copy()
        i, step, move = (
            int(rng.integers(self.k)),
            float(rng.choice([-1.0, 1.0])),
            int(rng.integers(3)),
        )
        if move == 0 and abs(b[i] + step - a[i]) <= 1.0:
            b[i] += step
        elif move == 2:
            a, b = a + step, b + step
        else:
            a[i] += step
            b[i] += step
        return self._pair("local", a, b)


@dataclass(frozen=True)
class CanaryPairs:
    """One user (``unit="user"``) or item (``unit="item"``) of ``data`` replaced by canaries.

    ``scale`` is the "maximal norm" (default: the largest item norm in ``data``, at
    least 1).  Replace relation: pairs of values ``(v0, v1)`` for the replaced unit —
    zero vs maximal norm, maximal norm vs its opposite sign, zero vs a far outlier
    (``OUTLIER_FACTOR × scale``), the original values vs each canary — along ``e₁`` and
    the diagonal.  Add-remove relation: ``data`` with the user at each canary vs without
    it.  These feature canaries keep the unit's original labels.

    Records are (features, label): with labelled data and ``labels=True`` (the default) the
    patterns end with at most :data:`LABEL_PAIRS` label pairs (:meth:`label_patterns`), in
    rank order — a class that disappears, a class that appears, features and label changed
    together, each other class — so a bug that leaks through the labels (the label set read
    off the private data, a label-dependent clip) is screened too.  A user's label change
    sets all its ``m`` items' labels.  ``labels=False`` keeps the feature canaries only.
    """

    data: UserDataset
    unit: str = "user"
    relation: str = "replace"
    user: int = 0
    item: int = 0
    scale: float | None = None
    labels: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.data, UserDataset):
            raise InputError(f"data must be a UserDataset, got {type(self.data).__name__}")
        check_choice(self.unit, UNITS, "unit")
        check_choice(self.relation, RELATIONS, "relation")
        if self.relation == "add-remove" and self.unit == "item" and self.data.m > 1:
            raise InputError("item-level add-remove neighbours need m = 1; use relation='replace'")
        if self.scale is None:
            object.__setattr__(
                self, "scale", max(1.0, float(np.max(np.linalg.norm(self.data.items, axis=1))))
            )
        elif not (
            isinstance(self.scale, (int, float)) and math.isfinite(self.scale) and self.scale > 0
        ):
            raise InputError(f"scale must be a finite number > 0, got {self.scale!r}")

    def _original(self) -> np.ndarray:
        x = self.data.x[self.user]
        return np.array(x if self.unit == "user" else x[self.item])

    def _shape(self) -> tuple:
        return (self.data.m, self.data.d) if self.unit == "user" else (self.data.d,)

    def _label_shape(self) -> tuple:
        return (self.data.m,) if self.unit == "user" else ()

    def _unit_labels(self, data: UserDataset) -> np.ndarray | None:
        """The replaced unit's labels in ``data``: ``(m,)`` for a user, ``()`` for an item."""
        if data.y is None:
            return None
        y = data.y[self.user]
        return np.array(y if self.unit == "user" else y[self.item])

    def _labels_of(self, spec: Any, data: UserDataset) -> np.ndarray | None:
        """The unit's labels for a pattern's label ``spec``: None keeps those of ``data``."""
        if data.y is None:
            return None
        if spec is None:
            return self._unit_labels(data)
        return np.broadcast_to(np.asarray(spec, dtype=np.float64), self._label_shape()).copy()

    def _with(self, data: UserDataset, value: np.ndarray, label: Any) -> UserDataset:
        if self.unit == "user":
            return replace_user(data, self.user, np.broadcast_to(value, self._shape()), label)
        return replace_item(data, self.user, self.item, x_new=value, y_new=label)

    def _pair(
        self,
        name: str,
        v0: np.ndarray,
        v1: np.ndarray | None,
        labels: tuple = (None, None),
        base: UserDataset | None = None,
        novel: bool = False,
    ) -> Pair:
        """``v1 = None``: the add-remove pair (user at ``v0``, user removed).  ``labels``: the
        unit's label on each side (None: kept); ``base``: the data the unit sits in (default
        ``data``)."""
        data = self.data if base is None else base
        l0, l1 = (self._labels_of(spec, data) for spec in labels)
        values = (labels, base)
        v0 = np.broadcast_to(np.asarray(v0, dtype=np.float64), self._shape()).copy()
        if v1 is None:
            d0 = self._with(data, v0, l0)
            return Pair(name, d0, remove_user(d0, self.user), (v0, None, *values), novel)
        v1 = np.broadcast_to(np.asarray(v1, dtype=np.float64), self._shape()).copy()
        if np.all(v0 == v0.reshape(-1, self.data.d)[0]) and np.all(
            v1 == v1.reshape(-1, self.data.d)[0]
        ):
            point, opposite = v0.reshape(-1, self.data.d)[0], v1.reshape(-1, self.data.d)[0]
            pair_labels = None if data.y is None else (l0, l1)
            if self.unit == "user":
                made = extreme_user_pair(
                    data, point, user=self.user, opposite=opposite, labels=pair_labels
                )
            else:
                made = extreme_item_pair(
                    data,
                    point,
                    user=self.user,
                    item=self.item,
                    opposite=opposite,
                    labels=pair_labels,
                )
            return Pair(name, made.d0, made.d1, (v0, v1, *values), novel)
        return Pair(
            name, self._with(data, v0, l0), self._with(data, v1, l1), (v0, v1, *values), novel
        )

    def patterns(self) -> list[Pair]:
        """The canary pairs (see the class docstring)."""
        d, s = self.data.d, float(self.scale)
        axis = np.zeros(d)
        axis[0] = 1.0
        diag = np.ones(d) / math.sqrt(d)
        original, zero = self._original(), np.zeros(d)
        out = []
        for where, u in (("e1", axis), ("diagonal", diag)) if d > 1 else (("e1", axis),):
            if self.relation == "add-remove":
                out += [
                    self._pair(f"maximal norm ({where}) vs removed", s * u, None),
                    self._pair(f"outlier ({where}) vs removed", OUTLIER_FACTOR * s * u, None),
                ]
                continue
            out += [
                self._pair(f"zero vs maximal norm ({where})", zero, s * u),
                self._pair(f"opposite signs ({where})", s * u, -s * u),
                self._pair(f"zero vs outlier ({where})", zero, OUTLIER_FACTOR * s * u),
                self._pair(f"original vs maximal norm ({where})", original, s * u),
                self._pair(f"original vs opposite maximal norm ({where})", original, -s * u),
            ]
        if self.relation == "add-remove":
            out += [
                self._pair("zero vs removed", zero, None),
                self._pair("original vs removed", original, None),
            ]
        else:
            out.append(self._pair("original vs zero", original, zero))
        if self.labels and self.data.y is not None:
            out += self.label_patterns()[:LABEL_PAIRS]
        return out

    def classes(self) -> np.ndarray | None:
        """The labels' distinct values when they are classes (integers, at most
        :data:`MAX_CLASSES` of them), else None (regression labels, or no labels)."""
        if self.data.y is None:
            return None
        values = np.unique(self.data.y)
        if len(values) <= MAX_CLASSES and np.all(values == np.round(values)):
            return values
        return None

    def _holders(self, label: float) -> np.ndarray:
        """Units holding ``label``: users (n,) with any item of it, or items (n, m)."""
        y = self.data.y == label
        return np.any(y, axis=1) if self.unit == "user" else y

    def _sole_holder(self, label: float, other: float) -> UserDataset:
        """``data`` with every other unit's ``label`` relabelled ``other``: the replaced unit,
        once it holds ``label``, is then the only unit of its class."""
        y = np.array(self.data.y)
        keep = np.zeros(y.shape, dtype=bool)
        if self.unit == "user":
            keep[self.user] = True
        else:
            keep[self.user, self.item] = True
        y[(y == label) & ~keep] = other
        return UserDataset(self.data.x, y)

    def label_patterns(self) -> list[Pair]:
        """Every label pair, best ranked first (:meth:`patterns` keeps the first
        :data:`LABEL_PAIRS`).

        Classes (see :meth:`classes`), the rarest class ``c`` (fewest units) and the
        commonest other ``c'``: ``c`` disappears (every other unit of ``c`` relabelled ``c'``,
        then the unit relabelled ``c → c'``; add-remove: that only unit of ``c`` removed with
        its label); a new class ``max + 1`` appears (add-remove: added); the opposite-sign and
        far-outlier canaries with the label changed too (add-remove: the maximal-norm canary of
        class ``c``); the label changed to each other class, rarest first (add-remove: a unit
        of each class removed).  Regression labels, ``L = max(1, max |y|)``: the label negated,
        ``+L`` vs ``−L``, 0 vs ``OUTLIER_FACTOR × L``, opposite signs with labels ``±L``
        (add-remove: a unit at ``+L``, ``−L``, the outlier label, and the maximal-norm canary
        at ``+L``, each vs removed).  A pair holding a label the data never has is marked
        ``novel``: a mechanism that refuses it drops the pair, not the search.
        """
        if self.data.y is None:
            return []
        d, s = self.data.d, float(self.scale)
        e1 = np.zeros(d)
        e1[0] = 1.0
        original, zero, far = self._original(), np.zeros(d), OUTLIER_FACTOR * s * e1
        own = self._unit_labels(self.data)
        removal = self.relation == "add-remove"
        classes = self.classes()
        if classes is None:
            top = max(1.0, float(np.max(np.abs(self.data.y))))
            negated = -own if np.any(own != 0) else np.full_like(own, top)
            if removal:
                return [
                    self._pair(f"label {top:g} vs removed", original, None, (top, None)),
                    self._pair(f"label {-top:g} vs removed", original, None, (-top, None)),
                    self._pair(
                        f"outlier label {OUTLIER_FACTOR * top:g} vs removed",
                        original,
                        None,
                        (OUTLIER_FACTOR * top, None),
                    ),
                    self._pair(
                        f"maximal norm (e1), label {top:g} vs removed", s * e1, None, (top, None)
                    ),
                ]
            return [
                self._pair("label negated", original, original, (None, negated)),
                self._pair(f"labels {top:g} vs {-top:g}", original, original, (top, -top)),
                self._pair(
                    f"labels 0 vs outlier {OUTLIER_FACTOR * top:g}",
                    original,
                    original,
                    (0.0, OUTLIER_FACTOR * top),
                ),
                self._pair(
                    f"opposite signs (e1), labels {top:g} vs {-top:g}",
                    s * e1,
                    -s * e1,
                    (top, -top),
                ),
            ]
        count = {float(c): int(np.count_nonzero(self._holders(c))) for c in classes}
        rarest = sorted(count, key=lambda c: (count[c], c))
        new = float(classes[-1]) + 1.0
        out = []
        if len(rarest) > 1:
            gone = rarest[0]
            other = max(rarest[1:], key=lambda c: (count[c], -c))
            base = self._sole_holder(gone, other)
            out.append(
                self._pair(
                    f"class {gone:g} disappears (removed)"
                    if removal
                    else f"class {gone:g} disappears (relabelled {other:g})",
                    original,
                    None if removal else original,
                    (gone, None if removal else other),
                    base,
                )
            )
        if removal:
            out.append(
                self._pair(f"new class {new:g} vs removed", original, None, (new, None), novel=True)
            )
            out.append(
                self._pair(
                    f"maximal norm (e1), class {rarest[0]:g} vs removed",
                    s * e1,
                    None,
                    (rarest[0], None),
                )
            )
            out += [
                self._pair(f"class {c:g} vs removed", original, None, (c, None))
                for c in rarest
                if not np.all(own == c)
            ]
            return out
        out.append(
            self._pair(f"new class {new:g} appears", original, original, (None, new), novel=True)
        )
        others = [c for c in rarest if not np.all(own == c)]
        if others:
            out += [
                self._pair(
                    f"opposite signs (e1), label → {others[0]:g}",
                    s * e1,
                    -s * e1,
                    (None, others[0]),
                ),
                self._pair(
                    f"zero vs outlier (e1), label → {others[0]:g}", zero, far, (None, others[0])
                ),
            ]
        out += [self._pair(f"label → {c:g}", original, original, (None, c)) for c in others]
        return out

    def _random_value(self, rng: np.random.Generator) -> np.ndarray:
        direction = rng.standard_normal(self.data.d)
        direction /= max(np.linalg.norm(direction), 1e-300)
        return float(self.scale) * 10.0 ** rng.uniform(-1.0, math.log10(OUTLIER_FACTOR)) * direction

    def random(self, rng: np.random.Generator) -> Pair:
        """Two random canaries (random direction, norm log-uniform in [scale/10, 10·scale])."""
        v0 = self._random_value(rng)
        return self._pair(
            "random", v0, None if self.relation == "add-remove" else self._random_value(rng)
        )

    def perturb(self, pair: Pair, rng: np.random.Generator) -> Pair:
        """Move one side by a Gaussian step of size ``scale/2``, or scale them by 2 or ½.  On
        labelled data (with ``labels``), a quarter of the moves set one side's label instead:
        to a class of the data, or (regression) to ``±L`` times a log-uniform factor in
        [1/10, 10]."""
        v0, v1, labels, base = pair.values
        sides = [v0] if v1 is None else [v0, v1]
        if self.labels and self.data.y is not None and rng.random() < 0.25:
            classes, labels = self.classes(), list(labels)
            side = int(rng.integers(len(sides)))
            if classes is not None:
                labels[side] = float(rng.choice(classes))
            else:
                top = max(1.0, float(np.max(np.abs(self.data.y))))
                labels[side] = top * float(rng.choice([-1.0, 1.0])) * 10.0 ** rng.uniform(-1, 1)
            return self._pair("local", v0, v1, tuple(labels), base, pair.novel)
        side = int(rng.integers(len(sides)))
        if rng.random() < 0.5:
            sides[side] = sides[side] * float(rng.choice([0.5, 2.0]))
        else:
            sides[side] = sides[side] + 0.5 * float(self.scale) * rng.standard_normal(
                sides[side].shape
            ) / math.sqrt(self.data.d)
        return self._pair(
            "local", sides[0], None if v1 is None else sides[1], labels, base, pair.novel
        )


@dataclass(frozen=True)
class SearchResult:
    """The certifying audit of the chosen pair, and how the pair was found.

    ``screened`` lists ``(name, ε bound at the screen's size)`` in the order tried (not certified
    jointly: a search trace); ``samples`` counts every mechanism run, screening included.
    ``skipped`` lists ``(name, why)`` of pairs left out: outputs of different widths on the
    two datasets (ε = ∞ on that pair, shown by :func:`~dpclaims.audit.replay`), or a
    ``novel`` pair the mechanism refused.
    """

    result: AuditResult
    pair: Pair
    screened: tuple = ()
    skipped: tuple = ()
    screen_trials: int = 0
    screening_samples: int = 0
    samples: int = 0
    wall_time: float = 0.0

    @property
    def epsilon_lower(self) -> float:
        """The certified bound (of the certifying audit)."""
        return self.result.epsilon_lower

    @property
    def verdict(self) -> str:
        return self.result.verdict

    def to_dict(self) -> dict:
        """The audit's record plus ``search``: the chosen pair, the trace and the sample counts."""
        return {
            **self.result.to_dict(),
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


def pairs_for(
    d0: Any,
    d1: Any = None,
    *,
    unit: str = "user",
    relation: str = "replace",
    sensitivity: float = 1.0,
) -> QueryPairs | CanaryPairs:
    """The default family for a mechanism's input: canaries for a ``UserDataset`` (the replaced
    user is the first one where ``d0`` and ``d1`` differ, else 0), query pairs for a vector."""
    if isinstance(d0, UserDataset):
        user = 0
        if isinstance(d1, UserDataset) and d1.x.shape == d0.x.shape:
            differs = np.flatnonzero(np.any(d0.x != d1.x, axis=(1, 2)))
            user = int(differs[0]) if len(differs) else 0
        return CanaryPairs(d0, unit=unit, relation=relation, user=user)
    vector = np.atleast_1d(np.asarray(d0, dtype=np.float64))
    if vector.ndim != 1:
        raise InputError(
            f"search needs a UserDataset or a vector of query answers, got shape {vector.shape}"
        )
    return QueryPairs(len(vector), sensitivity)


class _WidthsDiffer(InputError):
    """A screened pair whose datasets give outputs of different widths (no audit compares
    them; the search lists the pair as skipped, with this reason)."""


@dataclass(frozen=True, kw_only=True)
class _Screener:
    """Screens a candidate pair: a ranking, not an audit (no probes, no certificate).

    ``mechanism`` runs ``n`` trials per dataset on the screen's own seed (d0, d1 and the score
    fit on its children 0, 1, 2); the candidate scores of the audit (or the user's ``statistic``)
    are fitted on the first :data:`SCREEN_FIT` of them and evaluated on the rest, at the
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

    @classmethod
    def of(cls, mechanism: Callable, trials: int, options: dict) -> _Screener:
        """The screener of ``search(mechanism, trials=trials, **options)``, its statistical
        options checked (the certifying audit checks the rest)."""
        claim = options.get("claim")
        if not isinstance(claim, PrivacyClaim):
            raise InputError(
                "search needs the claim: pass claim=PrivacyClaim(epsilon=1.0, delta=1e-5), got "
                f"{type(claim).__name__}"
            )
        test = options.get("test", DEFAULT_TEST)
        if not isinstance(test, AuditTest):
            raise InputError(
                f"test must be a dpclaims.AuditTest, got {type(test).__name__}; pass e.g. "
                "test=AuditTest(method='threshold')"
            )
        return cls(
            mechanism=as_batched(mechanism),
            trials=trials,
            delta=claim.delta,
            alpha=1.0 - math.sqrt(check_confidence(options.get("confidence", 0.95))),
            ci=test.ci,
            method=test.behaviour,
            statistic=test.statistic,
        )

    def __call__(self, pair: Pair, n: int, seed: int) -> tuple[float, float]:
        """``(projected, own)`` of ``pair`` on ``n`` trials per dataset drawn from ``seed``."""
        x0, x1 = (
            self._outputs(d, child_seed(seed, i), n) for i, d in enumerate((pair.d0, pair.d1))
        )
        if x0.shape[1] != x1.shape[1]:
            raise _WidthsDiffer(
                f"outputs have {x0.shape[1]} columns on d0 but {x1.shape[1]} on d1: ε = ∞ on "
                "this pair, certain (an output of one dataset the other never gives); "
                "dpclaims.audit.replay shows it"
            )
        if self.statistic is not None:
            return self._rank(*(apply_statistic(self.statistic, x) for x in (x0, x1)))
        fit, rng = max(2, round(SCREEN_FIT * n)), np.random.default_rng(child_seed(seed, 2))
        codes = _outcome_codes(x0), _outcome_codes(x1)
        discrete = is_discrete(np.concatenate([codes[0][:fit], codes[1][:fit]]))
        width = x0.shape[1]
        names = (
            self.method.candidates(width, discrete)
            if discrete
            else candidate_scores(width, discrete)
        )
        best = (0.0, 0.0)
        for name in names:
            y0, y1 = codes if name == "histogram_lr" else (x0, x1)
            fitted = (_fit_quadratic if name == "logistic" else fit_score)(
                name, y0[:fit], y1[:fit], rng
            )
            best = max(best, self._rank(fitted(y0[fit:]), fitted(y1[fit:])))
        return best

    def _outputs(self, data: Any, seed: np.random.SeedSequence, n: int) -> np.ndarray:
        sizes = [min(SEED_BLOCK, n - start) for start in range(0, n, SEED_BLOCK)]
        blocks = [(index, size, 0, size) for index, size in enumerate(sizes)]
        return run_blocks(self.mechanism, read_only(data), seed, blocks)

    def _rank(self, s0: np.ndarray, s1: np.ndarray) -> tuple[float, float]:
        """``(projected, own)`` of scores ``s0``, ``s1`` (n,) over the four directions at
        :data:`SCREEN_THRESHOLDS_PER_TAIL` thresholds per tail: the best bound at ``trials``
        trials per dataset, each rate projected there (:data:`SCREEN_PREDICTION_ALPHA`), and
        the best at the screen's own size."""
        n = len(s0)
        thresholds = candidate_thresholds(np.concatenate([s0, s1]), SCREEN_THRESHOLDS_PER_TAIL)
        fp = error_counts(s0, s1, thresholds)[0]  # (4, T), each direction's n negatives = n
        expected = rate_upper(fp, n, SCREEN_PREDICTION_ALPHA, self.ci) * self.trials
        values = []
        for count, size in ((expected, self.trials), (fp, n)):
            fpr = rate_upper(count, size, self.alpha, self.ci)
            fnr = fpr[_SWAP]  # each direction's false negatives: another's false positives
            values.append(float(np.max(epsilon_from_rates(fpr, fnr, self.delta))))
        return values[0], values[1]


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

    from ..reports.atomic import write_atomic

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


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def _screen_bar(progress: bool | None, total: int):
    """A tqdm bar over the screens on stderr (default: only when stderr is a terminal), like
    the audit's; shown after 1 s."""
    import sys

    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else bool(progress)
    return tqdm(
        total=total,
        file=sys.stderr,
        unit="pair",
        desc="search: screening",
        delay=1.0,
        disable=not show,
        leave=False,
    )


def _screen_seeds(seed: int, count: int) -> list[int]:
    """``count`` integer seeds from ``child_seed(seed, _SEARCH_KEY)``, none equal to ``seed``."""
    states = child_seed(seed, _SEARCH_KEY).generate_state(count)
    return [int(s) if int(s) != int(seed) else int(s) + 1 for s in states]


def search(
    mechanism: Callable,
    pairs: QueryPairs | CanaryPairs | Sequence[Pair],
    *,
    trials: int = 100_000,
    seed: int = 0,
    screen_trials: int = SCREEN_TRIALS,
    random_pairs: int = RANDOM_PAIRS,
    local_steps: int = LOCAL_STEPS,
    rounds: Sequence[tuple[int, int]] = ROUNDS,
    progress: bool | None = None,
    **options: Any,
) -> SearchResult:
    """Find a neighbouring pair on which ``mechanism`` leaks most, then certify it on fresh trials.

    Parameters
    ----------
    mechanism : as for :func:`~dpclaims.audit.audit`
    pairs : a family (:class:`QueryPairs`, :class:`CanaryPairs`, see :func:`pairs_for`) or
        a fixed list of :class:`Pair` (no random pairs or local search then)
    trials, seed : trials per dataset and seed of the certifying audit (the screens draw
        their own seeds from ``seed``); the final bound holds at ``confidence`` whatever
        the screening found (module docstring)
    screen_trials : trials per dataset of each screen
    random_pairs, local_steps : random pairs screened, local-search steps (families only)
    rounds : ``(keep, factor)`` rounds of successive halving after the first screen
        (:data:`ROUNDS`)
    progress : a tqdm bar over the screens on stderr, then the certifying audit's (default:
        when stderr is a terminal)
    options : passed to the certifying :func:`~dpclaims.audit.audit` (``claim``,
        ``confidence``, ``test``, ``neighbours``, ``execution``, ``reference``); the screens
        (serial) use the claim's δ, ``confidence`` and the test's ``ci``, ``method`` and
        ``statistic``

    Returns
    -------
    SearchResult
    """
    start = time.perf_counter()
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    screen_trials = check_trials(screen_trials, "screen_trials", minimum=MIN_TRIALS)
    random_pairs = check_trials(random_pairs, "random_pairs", minimum=0)
    local_steps = check_trials(local_steps, "local_steps", minimum=0)
    rounds = tuple(
        (check_trials(k, "rounds keep"), check_trials(f, "rounds factor")) for k, f in rounds
    )
    family = None if isinstance(pairs, (list, tuple)) else pairs
    if family is not None and not all(
        hasattr(family, a) for a in ("patterns", "random", "perturb")
    ):
        raise InputError(
            "pairs must be a QueryPairs/CanaryPairs family or a list of Pair "
            "(see dpclaims.audit.search)"
        )
    fixed = [p for p in (list(pairs) if family is None else family.patterns()) if _differs(p)]
    if family is not None and hasattr(family, "neighbour_options"):
        options = {**family.neighbour_options(), **options}
    if not fixed:
        raise InputError(
            "pairs must hold at least one dpclaims.audit.search.Pair whose d0 and d1 differ"
        )
    extra = 0 if family is None else random_pairs + local_steps
    planned = len(fixed) + extra + sum(keep for keep, _ in rounds)
    seeds = iter(_screen_seeds(seed, planned + 1))
    rng = np.random.default_rng(next(seeds))
    trace: list[tuple[str, float]] = []
    skipped: list[tuple[str, str]] = []
    screener = _Screener.of(mechanism, trials, options)
    scored: list[tuple[tuple[float, float], int, Pair]] = []
    bar = _screen_bar(progress, planned)

    def screen(pair: Pair, n: int) -> tuple[float, float] | None:
        seed_ = next(seeds)
        bar.update(1)
        try:
            value = screener(pair, n, seed_)
        except _WidthsDiffer as error:
            skipped.append((pair.name, str(error)))
            return None
        except Exception as error:  # a novel label the mechanism refuses: not the search's fault
            if not pair.novel:
                raise
            why = _first_line(f"{type(error).__name__}: {error}")
            skipped.append((pair.name, f"the mechanism refused it ({why})"))
            return None
        trace.append((pair.name, value[1]))
        return value

    def add(pair: Pair) -> None:
        if _differs(pair):  # the same data on both sides can only win a screen by luck
            value = screen(pair, screen_trials)
            if value is not None:
                scored.append((value, len(scored), pair))

    with bar:
        for pair in fixed:
            add(pair)
        if not scored:
            raise InputError(
                "no pair could be screened: "
                + "; ".join(f"{name}: {why}" for name, why in skipped[:3])
            )
        if family is not None:
            for _ in range(random_pairs):
                add(family.random(rng))
            for _ in range(local_steps):
                add(family.perturb(max(scored)[2], rng))
        spent = 2 * screen_trials * (len(scored) + len(skipped))
        for keep, factor in rounds if len(scored) > 1 else ():
            again = [
                (screen(p, factor * screen_trials), -i, p)
                for _, i, p in sorted(scored, reverse=True)[:keep]
            ]
            scored = [(v, i, p) for v, i, p in again if v is not None]
            spent += 2 * factor * screen_trials * len(again)
    chosen = max(scored)[2]
    if progress is not None:
        execution = options.get("execution", DEFAULT_EXECUTION)
        options = {**options, "execution": replace(execution, progress=progress)}
    result = audit(mechanism, chosen.d0, chosen.d1, trials=trials, seed=seed, **options)
    return SearchResult(
        result=result,
        pair=chosen,
        screened=tuple(trace),
        skipped=tuple(skipped),
        screen_trials=screen_trials,
        screening_samples=spent,
        samples=spent + 2 * trials,
        wall_time=time.perf_counter() - start,
    )
