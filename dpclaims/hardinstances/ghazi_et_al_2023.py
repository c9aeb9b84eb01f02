"""Instances for the rate tests of spec 001 §7(b) (Ghazi et al. 2023), as per-user sufficient
statistics.

The losses of these tests (quadratic, linear, and the absolute loss on point-mass data)
depend on the data only through item means, so datasets are built directly as
:class:`~dpclaims.data.GroupedMeans` with an exact "virtual m"
(spec §7(b) "per-user sufficient statistics"): cube items ``z ∈ (b/√d){±1}^d`` have group means
``(b/√d)(2·Binomial(size·m, p_k)/(size·m) − 1)`` exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.data import GroupedMeans, neighbour_distance
from dpclaims.errors import InputError, check_count
from dpclaims.hardinstances._items import check_rng
from dpclaims.hardinstances.quadratic import QuadraticHypercubeInstance

__all__ = [
    "cube_group_means",
    "prescribed_mean_data",
    "point_mass_data",
    "repeated_item_users",
    "block_boundaries",
    "TwoCampCount",
    "tie_break_pair",
]


def block_boundaries(n: int, blocks) -> np.ndarray:
    """Sorted group boundaries ``0 = b_0 < … < b_g = n`` covering every ``(lo, hi)`` of
    ``blocks``."""
    n = check_count(n, "n")
    points = {0, n}
    for lo, hi in blocks:
        points.update((int(lo), int(hi)))
    return np.array(sorted(points), dtype=np.int64)


def cube_group_means(
    instance: QuadraticHypercubeInstance,
    n: int,
    m: int,
    rng: np.random.Generator,
    *,
    boundaries=None,
) -> GroupedMeans:
    """Exact law of the group means of ``n × m`` i.i.d. cube items of ``instance``.

    ``boundaries`` (sorted, from 0 to n) pools consecutive users into groups (default: one
    group per user, i.e. :meth:`QuadraticHypercubeInstance.user_means`).
    """
    if not isinstance(instance, QuadraticHypercubeInstance):
        raise InputError("instance must be a QuadraticHypercubeInstance")
    n, m, rng = check_count(n, "n"), check_count(m, "m"), check_rng(rng)
    if boundaries is None:
        return GroupedMeans.per_user(instance.user_means(n, m, rng), m)
    b = np.asarray(boundaries, dtype=np.int64)
    if b[0] != 0 or b[-1] != n or np.any(np.diff(b) < 1):
        raise InputError(f"boundaries must increase strictly from 0 to n = {n}, got {b.tolist()}")
    sizes = np.diff(b)
    scale = instance.scale / math.sqrt(instance.d)
    prob = (1.0 + instance.mean / scale) / 2.0
    items = sizes[:, None] * m
    counts = rng.binomial(items, prob[None, :])
    return GroupedMeans(means=scale * (2.0 * counts - items) / items, sizes=sizes, m=m)


def prescribed_mean_data(n: int, m: int, mean) -> GroupedMeans:
    """One group of ``n`` users whose items average exactly ``mean (d,)`` (spec RT-6: the
    excess of the linear loss depends on the data only through x̄)."""
    mean = np.asarray(mean, dtype=np.float64)
    sizes = np.array([check_count(n, "n")])
    return GroupedMeans(means=mean[None, :], sizes=sizes, m=check_count(m, "m"))


def point_mass_data(n: int, m: int, boundaries=None, value: float = 0.0) -> GroupedMeans:
    """Every item equals ``value`` (d = 1): the sharp-minimum distribution of spec RT-8."""
    n, m = check_count(n, "n"), check_count(m, "m")
    b = np.array([0, n]) if boundaries is None else np.asarray(boundaries, dtype=np.int64)
    means = np.full((len(b) - 1, 1), float(value))
    return GroupedMeans(means=means, sizes=np.diff(b), m=m, point_mass=True)


def repeated_item_users(
    n: int, m: int, d: int, rng: np.random.Generator, scale: float = 1.0
) -> GroupedMeans:
    """Worst-case, non-exchangeable data of spec RT-12: user u holds ``m`` copies of one cube
    item."""
    n, m, d, rng = check_count(n, "n"), check_count(m, "m"), check_count(d, "d"), check_rng(rng)
    items = scale / math.sqrt(d) * rng.choice([-1.0, 1.0], size=(n, d))
    return GroupedMeans.per_user(items, m, point_mass=True)


@dataclass(frozen=True)
class TwoCampCount:
    """A generic f for Algorithm 1 (Theorem 3.3 holds for every deterministic f) whose release
    moves as far as the proof allows between neighbours.

    Users are in camp A (mean < 0) or camp B (mean > 0).  On a sub-dataset with ``a`` A-users
    and ``b`` B-users, ``f = unit·(b − a)`` when one camp is empty (every deletion moves f by at
    most ``unit``: stable at every radius when ``unit ≤ Δ``) and ``f = jump·a·b`` when both are
    present (any deletion inside moves f by ≥ jump: unstable).  So ``s*(x) = min(a, b)`` and
    the chosen set deletes the smaller camp (the A camp on a tie: the first state in C order).
    ``minimiser(values (t, 1), weights (N, t)) -> (B, N, 1)``, the interface of the exact
    minimisers of :mod:`dpclaims.algorithms.ghazi_et_al_2023.stability`.
    """

    unit: float = 1.0
    jump: float = 1e6

    def minimiser(self, values, weights, *, reg, centre, domain) -> np.ndarray:
        w = np.asarray(weights, dtype=np.float64)
        v = np.asarray(values, dtype=np.float64)[:, 0]
        a, b = w[:, v < 0].sum(axis=1), w[:, v > 0].sum(axis=1)
        out = np.where((a > 0) & (b > 0), self.jump * a * b, self.unit * (b - a))
        rows = 1 if centre is None else np.asarray(centre).shape[0]
        return np.broadcast_to(out[None, :, None], (rows, w.shape[0], 1)).copy()


def tie_break_pair(s: int, m: int = 1) -> tuple[GroupedMeans, GroupedMeans]:
    """The pair of :class:`TwoCampCount` on which Algorithm 1's release moves most.

    ``x`` has ``s + 2`` A-users and ``s`` B-users (``s*(x) = s``: the B camp is deleted, f =
    −(s+2)·unit); ``x'`` turns one A-user into a B-user (``s + 1`` of each, ``s*(x') = s + 1``,
    a tie: the A camp is deleted, f = +(s+1)·unit).  The releases differ by ``(2s + 3)·unit =
    (s*(x) + s*(x') + 2)·unit``, the most the proof of Theorem 3.3 allows (|S| + |S'| + 2
    deletions of at most Δ each), while Pr[⊥] is ``CDF(s−1)`` vs ``CDF(s)``: both channels of
    the mechanism leak at once.
    """
    s = check_count(s, "s")
    x = np.array([-1.0] * (s + 2) + [1.0] * s)[:, None]
    x1 = x.copy()
    x1[s + 1] = 1.0
    d0, d1 = GroupedMeans.per_user(x, m), GroupedMeans.per_user(x1, m)
    if neighbour_distance(d0, d1) != 1:
        raise InputError("the pair must differ in exactly one user")
    return d0, d1
