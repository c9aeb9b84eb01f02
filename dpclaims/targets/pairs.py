"""Families of neighbouring pairs that :func:`dpclaims.audit.search.search` screens.

Both directions of a pair are covered: an audit's four tests let either dataset be the
"positive" one, so ``(a, b)`` and ``(b, a)`` are the same audit.

- :class:`QueryPairs` — mechanisms on a vector of ``k`` query answers with ℓ∞
  sensitivity Δ (each answer moves by at most Δ), the setting of StatDP (Ding et al.
  2018, §5.1, Table 1) and DP-Sniper (Bichsel et al. 2021, §6.1): one differs, all
  differ, half up half down, one up rest down, one down rest up, X shape, each in both
  orders; random pairs; local search moving one answer of b, one of both, or all by Δ.
- :class:`CanaryPairs` — mechanisms on a :class:`~dpclaims.data.UserDataset`: one
  user (or item) replaced by canaries built with :mod:`dpclaims.hardinstances.canaries`
  (zero, maximal norm, opposite sign, far outlier, the original values), random
  replacements and local search over the replaced user's values; pairs on datasets derived
  from the data where data-dependent choices leak most (:meth:`CanaryPairs.shape_patterns`:
  tiny data when the claim covers every dataset size, every other unit opposed to the canary,
  tied features; each pair says how its data was derived); on labelled data at most
  :data:`LABEL_PAIRS` label pairs too (a class that disappears or appears, flips, features and
  label together), ranked, so the screening stays bounded.  Labels only add pairs: the
  screening seeds are drawn as before, so unlabelled data screens exactly what it did.
- :func:`pairs_for` — the default family for a mechanism's input.

A family is any object with ``patterns()``, ``random(rng)``, ``perturb(pair, rng)`` and
``neighbour_options()`` (:class:`dpclaims.audit.search.PairFamily`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.audit.search import Pair
from dpclaims.data import (
    RELATIONS,
    UNITS,
    UserDataset,
    remove_user,
    replace_item,
    replace_user,
)
from dpclaims.errors import InputError, check_choice, check_trials
from dpclaims.hardinstances.canaries import extreme_item_pair, extreme_user_pair
from dpclaims.vocabulary import Relation, Unit

__all__ = ["QueryPairs", "CanaryPairs", "pairs_for", "OUTLIER_FACTOR", "MAX_CLASSES", "LABEL_PAIRS"]


OUTLIER_FACTOR = 10.0
"""The far-outlier canary sits at this multiple of the maximal norm."""


MAX_CLASSES = 32
"""Labels are classes when they are integers with at most this many distinct values; else they
are regression labels (negated, pushed to the extremes)."""


LABEL_PAIRS = 8
"""Most label pairs a :class:`CanaryPairs` family screens, the best ranked first
(:meth:`CanaryPairs.label_patterns`): with many classes "the label changed to each other class"
alone would grow the screening without bound.  The search then screens at most 11 feature
patterns + 3 derived-data pairs + 8 label pairs + random and local pairs."""


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
        return {"relation": "query", "sensitivity": self.sensitivity}

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
    it.  These feature canaries keep the unit's original labels; the derived-data pairs of
    :meth:`shape_patterns` follow them.

    Records are (features, label): with labelled data and ``labels=True`` (the default) the
    patterns end with at most :data:`LABEL_PAIRS` label pairs (:meth:`label_patterns`), in
    rank order — a class that disappears, a class that appears, features and label changed
    together, each other class — so a bug that leaks through the labels (the label set read
    off the private data, a label-dependent clip) is screened too.  A user's label change
    sets all its ``m`` items' labels.  ``labels=False`` keeps the feature canaries only.

    ``resize``: whether the claim holds on datasets of every size, so that pairs on a
    dataset of another size (:meth:`tiny`) are neighbours it covers.  None (the default):
    under add-remove only, where the size is private; a replace claim is often made for
    the data's own n (noise fixed for a mean over n users), and a pair of two users would
    then show a violation of a claim never made; True for a replace claim that holds for
    every n (``--derived``).  ``data_name`` names ``data`` in the pairs' ``derived`` notes.
    """

    data: UserDataset
    unit: str = "user"
    relation: str = "replace"
    user: int = 0
    item: int = 0
    scale: float | None = None
    labels: bool = True
    resize: bool | None = None
    data_name: str = "the data"

    def __post_init__(self) -> None:
        if not isinstance(self.data, UserDataset):
            raise InputError(f"data must be a UserDataset, got {type(self.data).__name__}")
        check_choice(self.unit, UNITS, "unit")
        check_choice(self.relation, RELATIONS, "relation")
        if self.relation == Relation.ADD_REMOVE and self.unit == Unit.ITEM and self.data.m > 1:
            raise InputError("item-level add-remove neighbours need m = 1; use relation='replace'")
        if self.scale is None:
            object.__setattr__(
                self, "scale", max(1.0, float(np.max(np.linalg.norm(self.data.items, axis=1))))
            )
        elif not (
            isinstance(self.scale, (int, float)) and math.isfinite(self.scale) and self.scale > 0
        ):
            raise InputError(f"scale must be a finite number > 0, got {self.scale!r}")
        if self.resize not in (None, True, False):
            raise InputError(f"resize must be True, False or None, got {self.resize!r}")

    @property
    def resizes(self) -> bool:
        """Whether pairs on a dataset of another size are screened (see ``resize``)."""
        return self.relation == Relation.ADD_REMOVE if self.resize is None else self.resize

    def _derived(self, data: UserDataset, how: str) -> str:
        """The ``derived`` note of a pair on ``data``, made from :attr:`data` by ``how``."""
        return f"{data.n} users, derived from {self.data_name}: {how}"

    def _original(self) -> np.ndarray:
        x = self.data.x[self.user]
        return np.array(x if self.unit == Unit.USER else x[self.item])

    def _shape(self) -> tuple:
        return (self.data.m, self.data.d) if self.unit == Unit.USER else (self.data.d,)

    def _label_shape(self) -> tuple:
        return (self.data.m,) if self.unit == Unit.USER else ()

    def _unit_labels(self, data: UserDataset) -> np.ndarray | None:
        """The replaced unit's labels in ``data``: ``(m,)`` for a user, ``()`` for an item."""
        if data.y is None:
            return None
        y = data.y[self.user]
        return np.array(y if self.unit == Unit.USER else y[self.item])

    def _labels_of(self, spec: Any, data: UserDataset) -> np.ndarray | None:
        """The unit's labels for a pattern's label ``spec``: None keeps those of ``data``."""
        if data.y is None:
            return None
        if spec is None:
            return self._unit_labels(data)
        return np.broadcast_to(np.asarray(spec, dtype=np.float64), self._label_shape()).copy()

    def _with(self, data: UserDataset, value: np.ndarray, label: Any) -> UserDataset:
        if self.unit == Unit.USER:
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
        derived: str = "",
    ) -> Pair:
        """``v1 = None``: the add-remove pair (user at ``v0``, user removed).  ``labels``: the
        unit's label on each side (None: kept); ``base``: the data the unit sits in (default
        ``data``), ``derived`` how it was made from ``data`` (:attr:`Pair.derived`)."""
        data = self.data if base is None else base
        l0, l1 = (self._labels_of(spec, data) for spec in labels)
        values = (labels, base)
        v0 = np.broadcast_to(np.asarray(v0, dtype=np.float64), self._shape()).copy()
        if v1 is None:
            d0 = self._with(data, v0, l0)
            return Pair(name, d0, remove_user(d0, self.user), (v0, None, *values), novel, derived)
        v1 = np.broadcast_to(np.asarray(v1, dtype=np.float64), self._shape()).copy()
        if np.all(v0 == v0.reshape(-1, self.data.d)[0]) and np.all(
            v1 == v1.reshape(-1, self.data.d)[0]
        ):
            point, opposite = v0.reshape(-1, self.data.d)[0], v1.reshape(-1, self.data.d)[0]
            pair_labels = None if data.y is None else (l0, l1)
            if self.unit == Unit.USER:
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
            return Pair(name, made.d0, made.d1, (v0, v1, *values), novel, derived)
        d0, d1 = self._with(data, v0, l0), self._with(data, v1, l1)
        return Pair(name, d0, d1, (v0, v1, *values), novel, derived)

    def patterns(self) -> list[Pair]:
        """The canary pairs (see the class docstring)."""
        d, s = self.data.d, float(self.scale)
        axis = np.zeros(d)
        axis[0] = 1.0
        diag = np.ones(d) / math.sqrt(d)
        original, zero = self._original(), np.zeros(d)
        out = []
        for where, u in (("e1", axis), ("diagonal", diag)) if d > 1 else (("e1", axis),):
            if self.relation == Relation.ADD_REMOVE:
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
        if self.relation == Relation.ADD_REMOVE:
            out += [
                self._pair("zero vs removed", zero, None),
                self._pair("original vs removed", original, None),
            ]
        else:
            out.append(self._pair("original vs zero", original, zero))
        out += self.shape_patterns()
        if self.labels and self.data.y is not None:
            out += self.label_patterns()[:LABEL_PAIRS]
        return out

    def tiny(self) -> UserDataset | None:
        """The data cut to its first ``max(2, user + 1)`` users (the replaced unit keeps its
        index), or None when that is the data already."""
        keep = max(2, self.user + 1)
        if keep >= self.data.n:
            return None
        return UserDataset(self.data.x[:keep], None if self.data.y is None else self.data.y[:keep])

    def tied(self) -> UserDataset | None:
        """The data with every feature set to the first one (``x[..., j] = x[..., 0]``), or None
        with one feature."""
        if self.data.d < 2:
            return None
        x = np.broadcast_to(self.data.x[..., :1], self.data.x.shape).copy()
        return UserDataset(x, self.data.y)

    def opposed(self) -> UserDataset:
        """Every unit's features at the maximal norm against e1 (``−scale · e1``), labels kept."""
        x = np.zeros_like(np.asarray(self.data.x, dtype=np.float64))
        x[..., 0] = -float(self.scale)
        return UserDataset(x, self.data.y)

    def shape_patterns(self) -> list[Pair]:
        """Pairs on two datasets derived from ``data``, where data-dependent choices leak most.

        - *Tiny data* (:meth:`tiny`: the unit and one other user; only when the claim holds
          on every size, :attr:`resizes`): a normaliser, a threshold or a range computed from
          the private data is at its most sensitive when a unit is half of the data
          (``q · len(data)`` doubles when the unit is added); replace: zero vs maximal norm
          (e1), add-remove: maximal norm (e1) vs removed, original vs removed.
        - *Tied features* (:meth:`tied`: every feature equal to the first): statistics of
          different features (counts, sums, their order) tie, so a mechanism that compares
          them (argmax, a sparse vector's first answer above a threshold, top-k) flips its
          order when the unit moves between two features; replace: maximal norm along e1 vs
          along e2, add-remove: maximal norm (e2) vs removed.
        - *Opposed data* (:meth:`opposed`: every other unit at the maximal norm against e1):
          the others' contributions no longer vary, so what a sampler or a shuffle does with
          the unit shows (which batch it joins, which slot it leaves empty: Chua et al. 2024's
          pair for shuffled batches), and the unit is as far from the rest as it can be;
          replace: maximal norm (e1) vs zero, add-remove: maximal norm (e1) vs removed.

        All are ``novel`` (a mechanism that refuses such a dataset drops the pair) and say how
        their data was derived (:attr:`Pair.derived`).
        """
        d, s = self.data.d, float(self.scale)
        axes = np.eye(d)
        out = []
        tiny = self.tiny() if self.resizes else None
        if tiny is not None:
            how = self._derived(tiny, f"its first {tiny.n} users")
            if self.relation == Relation.ADD_REMOVE:
                out += [
                    self._pair(
                        "tiny data: maximal norm (e1) vs removed",
                        s * axes[0],
                        None,
                        base=tiny,
                        novel=True,
                        derived=how,
                    ),
                    self._pair(
                        "tiny data: original vs removed",
                        self._original(),
                        None,
                        base=tiny,
                        novel=True,
                        derived=how,
                    ),
                ]
            else:
                out.append(
                    self._pair(
                        "tiny data: zero vs maximal norm (e1)",
                        np.zeros(d),
                        s * axes[0],
                        base=tiny,
                        novel=True,
                        derived=how,
                    )
                )
        opposed = self.opposed()
        out.append(
            self._pair(
                "opposed data: maximal norm (e1) vs removed"
                if self.relation == Relation.ADD_REMOVE
                else "opposed data: maximal norm (e1) vs zero",
                s * axes[0],
                None if self.relation == Relation.ADD_REMOVE else np.zeros(d),
                base=opposed,
                novel=True,
                derived=self._derived(opposed, f"every unit at {-s:g}·e1"),
            )
        )
        tied = self.tied()
        if tied is not None:
            how = self._derived(tied, "every feature set to the first")
            if self.relation == Relation.ADD_REMOVE:
                out.append(
                    self._pair(
                        "tied features: maximal norm (e2) vs removed",
                        s * axes[1],
                        None,
                        base=tied,
                        novel=True,
                        derived=how,
                    )
                )
            else:
                out.append(
                    self._pair(
                        "tied features: maximal norm e1 vs e2",
                        s * axes[0],
                        s * axes[1],
                        base=tied,
                        novel=True,
                        derived=how,
                    )
                )
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
        return np.any(y, axis=1) if self.unit == Unit.USER else y

    def _sole_holder(self, label: float, other: float) -> UserDataset:
        """``data`` with every other unit's ``label`` relabelled ``other``: the replaced unit,
        once it holds ``label``, is then the only unit of its class."""
        y = np.array(self.data.y)
        keep = np.zeros(y.shape, dtype=bool)
        if self.unit == Unit.USER:
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
        removal = self.relation == Relation.ADD_REMOVE
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
            how = f"every other unit of class {gone:g} relabelled {other:g}"
            out.append(
                self._pair(
                    f"class {gone:g} disappears (removed)"
                    if removal
                    else f"class {gone:g} disappears (relabelled {other:g})",
                    original,
                    None if removal else original,
                    (gone, None if removal else other),
                    base,
                    derived=self._derived(base, how),
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
            "random", v0, None if self.relation == Relation.ADD_REMOVE else self._random_value(rng)
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
            return self._pair("local", v0, v1, tuple(labels), base, pair.novel, pair.derived)
        side = int(rng.integers(len(sides)))
        if rng.random() < 0.5:
            sides[side] = sides[side] * float(rng.choice([0.5, 2.0]))
        else:
            sides[side] = sides[side] + 0.5 * float(self.scale) * rng.standard_normal(
                sides[side].shape
            ) / math.sqrt(self.data.d)
        v1 = None if v1 is None else sides[1]
        return self._pair("local", sides[0], v1, labels, base, pair.novel, pair.derived)


def pairs_for(
    d0: Any,
    d1: Any = None,
    *,
    unit: str = "user",
    relation: str = "replace",
    sensitivity: float = 1.0,
    resize: bool | None = None,
    data_name: str = "the data",
) -> QueryPairs | CanaryPairs:
    """The default family for a mechanism's input: canaries for a ``UserDataset`` (the replaced
    user is the first one where ``d0`` and ``d1`` differ, else 0; ``resize`` and ``data_name``
    as for :class:`CanaryPairs`), query pairs for a vector."""
    if isinstance(d0, UserDataset):
        user = 0
        if isinstance(d1, UserDataset) and d1.x.shape == d0.x.shape:
            differs = np.flatnonzero(np.any(d0.x != d1.x, axis=(1, 2)))
            user = int(differs[0]) if len(differs) else 0
        return CanaryPairs(
            d0, unit=unit, relation=relation, user=user, resize=resize, data_name=data_name
        )
    if resize:
        raise InputError(
            "--derived makes datasets of another size from a dataset of users; this input is "
            "a vector of query answers: drop --derived"
        )
    vector = np.atleast_1d(np.asarray(d0, dtype=np.float64))
    if vector.ndim != 1:
        raise InputError(
            f"search needs a UserDataset or a vector of query answers, got shape {vector.shape}"
        )
    return QueryPairs(len(vector), sensitivity)
