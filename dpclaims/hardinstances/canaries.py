"""Worst-case neighbouring datasets for privacy audits (the pairs each spec's §7(a) recommends).

Every construction returns a :class:`NeighbourPair` — ``D`` (``d0``) and ``D'`` (``d1``),
with the unit and relation under which they are neighbours (checked with
:func:`dpclaims.data.are_neighbours` on construction) and the spec section it comes from.
A pair unpacks as ``d0, d1 = pair``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import (
    RELATIONS,
    UNITS,
    UserDataset,
    are_neighbours,
    remove_user,
    replace_item,
    replace_user,
)
from ..errors import (
    InputError,
    NotNeighboursError,
    check_choice,
    check_count,
    check_finite_array,
    check_positive,
)
from ._items import check_vector

__all__ = [
    "NeighbourPair",
    "users_at_points",
    "extreme_user_pair",
    "extreme_item_pair",
    "halting_threshold_size",
    "halting_threshold_pair",
    "far_outlier_pair",
    "balanced_clusters_pair",
    "outlier_count_pair",
    "blank_canary_pair",
    "heavy_outlier_pair",
    "signed_quadratic_canary_pair",
]


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two neighbouring datasets ``D = d0`` and ``D' = d1``, with their unit, relation and
    source."""

    d0: UserDataset
    d1: UserDataset
    unit: str
    relation: str
    source: str = ""

    def __post_init__(self) -> None:
        check_choice(self.unit, UNITS, "unit")
        check_choice(self.relation, RELATIONS, "relation")
        if not are_neighbours(self.d0, self.d1, self.unit, self.relation):
            raise NotNeighboursError(
                f"d0 and d1 are not {self.unit}-level {self.relation} neighbours"
            )

    def __iter__(self):
        yield self.d0
        yield self.d1

    def to_dict(self) -> dict:
        """Shapes, unit, relation and source for reports."""
        return {
            "d0": self.d0.to_dict(),
            "d1": self.d1.to_dict(),
            "unit": self.unit,
            "relation": self.relation,
            "source": self.source,
        }


def _axis(d: int, value: float = 1.0) -> np.ndarray:
    e = np.zeros(d)
    e[0] = value
    return e


def _point(value, d: int, name: str) -> np.ndarray:
    """A scalar ``v`` means ``v·e₁``; otherwise a vector of shape (d,)."""
    if np.ndim(value) == 0:
        return _axis(d, float(check_finite_array(value, name)))
    return check_vector(value, name, d)


def users_at_points(points, m: int) -> UserDataset:
    """Users that each hold ``m`` identical items: ``points (n, d)`` → ``x (n, m, d)``.

    The compact users of spec 000 §7(a) (every user's gradient is the constant ``z_u``).
    """
    points = check_finite_array(points, "points", ndim=2)
    m = check_count(m, "m")
    return UserDataset(np.repeat(points[:, None, :], m, axis=1))


def extreme_user_pair(
    data: UserDataset, point, user: int = 0, opposite=None, labels=None
) -> NeighbourPair:
    """User ``user``'s ``m`` items all at ``point`` in D and all at ``opposite`` (default
    ``−point``) in D'.

    The generic worst case for user-level sensitivity: every item of the differing user
    pushes the gradient the same way, so the user's influence is m times an item's
    (spec 000 §7(a), spec 001 §7(a)).  ``labels = (y0, y1)`` gives the user's labels in D
    and D' (scalars or (m,)) for labelled data.  Unit user, relation replace.
    """
    if not isinstance(data, UserDataset):
        raise InputError("data must be a UserDataset")
    p0 = check_vector(point, "point", data.d)
    p1 = -p0 if opposite is None else check_vector(opposite, "opposite", data.d)
    y0, y1 = _pair_labels(data, labels, (data.m,))
    d0 = replace_user(data, user, np.tile(p0, (data.m, 1)), y0)
    d1 = replace_user(data, user, np.tile(p1, (data.m, 1)), y1)
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="user",
        relation="replace",
        source="spec 000 §7(a), spec 001 §7(a): user at an extreme point",
    )


def extreme_item_pair(
    data: UserDataset, point, user: int = 0, item: int = 0, opposite=None, labels=None
) -> NeighbourPair:
    """One item at ``point`` in D and at ``opposite`` (default ``−point``) in D'. Unit item,
    relation replace."""
    if not isinstance(data, UserDataset):
        raise InputError("data must be a UserDataset")
    p0 = check_vector(point, "point", data.d)
    p1 = -p0 if opposite is None else check_vector(opposite, "opposite", data.d)
    y0, y1 = _pair_labels(data, labels, ())
    d0 = replace_item(data, user, item, x_new=p0, y_new=y0)
    d1 = replace_item(data, user, item, x_new=p1, y_new=y1)
    return NeighbourPair(
        d0=d0, d1=d1, unit="item", relation="replace", source="item at an extreme point"
    )


def _pair_labels(data: UserDataset, labels, shape: tuple):
    if (data.y is None) != (labels is None):
        raise InputError("labels=(y0, y1) must be given exactly when the data is labelled")
    if labels is None:
        return None, None
    if len(labels) != 2:
        raise InputError("labels must be a pair (y0, y1)")
    return tuple(np.broadcast_to(check_finite_array(v, "labels"), shape).copy() for v in labels)


# --------------------------------------------------------------------------- spec 000 §7(a)


def halting_threshold_size(size: int) -> int:
    """Smallest ``k > size/2`` with ``s(D') = ((k−1)² + (size−k)² + 1)/size ≥ 4·size/5`` (spec 000
    §7(a) P1; k ≈ 0.8873·size)."""
    c = check_count(size, "size", minimum=2)
    k = np.arange(c // 2 + 1, c + 1)
    ok = ((k - 1) ** 2 + (c - k) ** 2 + 1) / c >= 0.8 * c
    return int(k[np.argmax(ok)])


def halting_threshold_pair(
    size: int, k: int | None, m: int, d: int = 1, cluster_b: float = -1.0
) -> NeighbourPair:
    """Pair P1 / Q1 of spec 000 §7(a): the concentration score sits at the halting threshold.

    D: users ``0..k−1`` at ``z = 0`` (cluster A) and ``size − k`` users at ``cluster_b·e₁``
    (cluster B); D': user 0 moved to ``−cluster_b·e₁`` (a third point).  Every user holds
    ``m`` identical items.  P1 uses ``cluster_b = −1``, Q1 ``cluster_b = +1``; ``k=None``
    takes :func:`halting_threshold_size`.  Unit user, relation replace.
    """
    size = check_count(size, "size", minimum=2)
    k = halting_threshold_size(size) if k is None else check_count(k, "k")
    if k > size:
        raise InputError(f"k must be <= size = {size}, got {k}")
    d = check_count(d, "d")
    b = float(check_finite_array(cluster_b, "cluster_b"))
    points = np.zeros((size, d))
    points[k:] = _axis(d, b)
    d0 = users_at_points(points, m)
    d1 = replace_user(d0, 0, np.tile(_axis(d, -b), (d0.m, 1)))
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="user",
        relation="replace",
        source="spec 000 §7(a) P1/Q1: halting-threshold pair",
    )


def far_outlier_pair(n: int, m: int, d: int = 1, displacement=-1.0, base=0.0) -> NeighbourPair:
    """Pairs P2/P3 and Q2/Q3 of spec 000 §7(a) (and spec 001 §7(c) M3): one user moved away.

    D: every user at ``base`` (scalar ⇒ ``base·e₁``); D': user 0 at ``base + displacement``
    (scalar ⇒ along e₁).  A far displacement tests the outlier filter (P2, Q2); one of
    1.99τ tests the kept-outlier Gaussian noise (P3, Q3).  Unit user, relation replace.
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    b = _point(base, d, "base")
    d0 = users_at_points(np.tile(b, (n, 1)), m)
    d1 = replace_user(d0, 0, np.tile(b + _point(displacement, d, "displacement"), (d0.m, 1)))
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="user",
        relation="replace",
        source="spec 000 §7(a) P2/P3/Q2/Q3: far outlier user",
    )


def balanced_clusters_pair(size: int, m: int, d: int = 1, majority: float = -1.0) -> NeighbourPair:
    """Pair P4 / Q4 of spec 000 §7(a): two balanced clusters, one user switches sides.

    D: ``⌊size/2⌋ + 1`` users at ``majority·e₁`` (cluster A) and the rest at ``−majority·e₁``;
    D': user 0 (an A-user) moved to B.  An honest concentration test halts on both.
    P4 uses ``majority = −1``, Q4 ``majority = +1``.  Unit user, relation replace.
    """
    size, d = check_count(size, "size", minimum=2), check_count(d, "d")
    a_count = size // 2 + 1
    sign = float(check_finite_array(majority, "majority"))
    points = np.tile(_axis(d, -sign), (size, 1))
    points[:a_count] = _axis(d, sign)
    d0 = users_at_points(points, m)
    d1 = replace_user(d0, 0, np.tile(_axis(d, -sign), (d0.m, 1)))
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="user",
        relation="replace",
        source="spec 000 §7(a) P4/Q4: balanced clusters",
    )


# --------------------------------------------------------------------------- spec 001 §7(a)


def outlier_count_pair(n: int, m: int, k: int, d: int = 1, outlier=1.0) -> NeighbourPair:
    """The ⊥-channel pair of spec 001 §7(a): ``x^(k)`` versus ``x^(k−1)``.

    Users ``0..k−1`` are outliers (all m items at ``outlier``, scalar ⇒ ``p·e₁``), the rest
    inliers (items 0); D' turns outlier ``k−1`` into an inlier.  ``k = 1`` vs 0 is the
    secondary (Gaussian-channel) audit.  Unit user, relation replace.
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    k = check_count(k, "k")
    if k > n:
        raise InputError(f"k must be <= n = {n}, got {k}")
    p = _point(outlier, d, "outlier")
    points = np.zeros((n, d))
    points[:k] = p
    d0 = users_at_points(points, m)
    d1 = replace_user(d0, k - 1, np.zeros((d0.m, d)))
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="user",
        relation="replace",
        source="spec 001 §7(a): x^(k) vs x^(k-1) outlier pair",
    )


# --------------------------------------------------------------------------- spec 002 §7(a)

_CANARY_MODES = ("zero-out", "flip", "remove")


def blank_canary_pair(
    n: int, d: int = 1, canary=1.0, position: int = 0, mode: str = "zero-out"
) -> NeighbourPair:
    """The blank-data linear canary of spec 002 §7(a) (item level, ``m = 1``).

    Every record but one is the null item ``x = 0``: with :class:`~dpclaims.losses.LinearLoss`
    (``f(θ; x) = −⟨x, θ⟩``) its gradient vanishes, so the transcript is exactly Gaussian.
    Record ``position`` (default 0: the first batch, in the most tree nodes) is the canary
    ``x = g`` (scalar ⇒ ``g·e₁``), i.e. ``f_c(θ) = −⟨g, θ⟩``.  D' by ``mode``:
    ``"zero-out"`` canary replaced by the null item (relation replace), ``"flip"`` canary
    ``−g`` (replace; compare against 2μ), ``"remove"`` canary deleted (add-remove).
    """
    n, d = check_count(n, "n", minimum=2), check_count(d, "d")
    check_choice(mode, _CANARY_MODES, "mode")
    g = _point(canary, d, "canary")
    x = np.zeros((n, 1, d))
    d0 = replace_user(UserDataset(x), position, g[None, :])
    if mode == "remove":
        return NeighbourPair(
            d0=d0,
            d1=remove_user(d0, position),
            unit="item",
            relation="add-remove",
            source="spec 002 §7(a): blank canary, removed",
        )
    d1 = replace_user(d0, position, (np.zeros(d) if mode == "zero-out" else -g)[None, :])
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="item",
        relation="replace",
        source=f"spec 002 §7(a): blank canary, {mode}",
    )


# --------------------------------------------------------------------------- spec 003 §7(a)


def heavy_outlier_pair(n: int = 200, weight: float = 1e6, target: float = 5.0) -> NeighbourPair:
    """The heavy-tailed outlier pair of spec 003 §7(a) for ``f(w, (a, b)) = a|w − b|`` in d = 1.

    Record 0 is the special point ``(a, b) = (weight, −target)`` in D and ``(weight, +target)``
    in D'; then ``⌊(n−1)/2⌋`` points ``(1, −1)`` and the rest ``(1, +1)`` (99 and 100 for
    n = 200).  Encoded for :class:`~dpclaims.losses.AbsoluteLoss` (``|⟨w, x⟩ − y| = a|w − b|``
    for a > 0): ``x = a``, ``y = a·b``.  Unit item, relation replace.
    """
    n = check_count(n, "n", minimum=2)
    weight, target = check_positive(weight, "weight"), float(check_finite_array(target, "target"))
    minus = (n - 1) // 2
    a = np.ones(n)
    b = np.r_[-target, -np.ones(minus), np.ones(n - 1 - minus)]
    a[0] = weight
    d0 = UserDataset(a[:, None], a * b)
    d1 = replace_user(d0, 0, np.array([weight]), np.array([weight * target]))
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="item",
        relation="replace",
        source="spec 003 §7(a): heavy outlier flips sides",
    )


# --------------------------------------------------------------------------- spec 004 §7(a)


def signed_quadratic_canary_pair(
    silos: int = 2, per_silo: int = 5, d: int = 2, center=5.0, silo: int = 0, record: int = 0
) -> NeighbourPair:
    """The DIFF2 canary of spec 004 §5 / §7(a): ``ℓ± = ±(λ/2)‖θ − c‖²`` in one record.

    Encoded for :class:`~dpclaims.losses.WeightedSquaredDistanceLoss` (strength λ, e.g. 1e6):
    every record is ``x = c`` (scalar ⇒ ``c·1``, default (5, 5)) with weight ``y = 0`` (loss
    and gradients ≡ 0), except record ``(silo, record)`` with ``y = +1`` in D and ``y = −1``
    in D'.  Users are silos.  The black-box variant uses ``d = 1``, ``center = −1e6``.
    Unit item (a record), relation replace.
    """
    silos, per_silo, d = (
        check_count(silos, "silos"),
        check_count(per_silo, "per_silo"),
        check_count(d, "d"),
    )
    c = (
        np.full(d, float(check_finite_array(center, "center")))
        if np.ndim(center) == 0
        else check_vector(center, "center", d)
    )
    x = np.broadcast_to(c, (silos, per_silo, d))
    y = np.zeros((silos, per_silo))
    base = UserDataset(x, y)
    d0 = replace_item(base, silo, record, x_new=c, y_new=1.0)
    d1 = replace_item(base, silo, record, x_new=c, y_new=-1.0)
    return NeighbourPair(
        d0=d0,
        d1=d1,
        unit="item",
        relation="replace",
        source="spec 004 §7(a): ±(λ/2)‖θ − c‖² canary record",
    )
