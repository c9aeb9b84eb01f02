"""Packings with a certified minimum separation.

Packing (Fano / Assouad / [BD14]) lower bounds index a family of hard
distributions by the points of a packing ``V``; the bound scales with the
packing's size ``|V|`` and its minimum pairwise separation ``s_V``.  Every
:class:`Packing` built here carries its separation *as computed over all pairs*
(the certificate), not as promised by the construction.

* :func:`gilbert_varshamov_code` — binary codes in ``{±1}^d`` with minimum
  Hamming distance ``r`` of at least the Gilbert–Varshamov size
  ``2^d / V(d, r−1)`` (random greedy: while the code is smaller than that, the
  Hamming balls of radius ``r−1`` around it leave a point uncovered, so a
  uniformly random word is accepted with positive probability).
* :func:`sphere_packing` — points on the unit sphere ``S^{d−1}``: the exact
  optimal (Tammes) configurations for ``d ≤ 3`` of spec 003 §5 (``{±1}``, the
  regular polygon, tetrahedron / octahedron / icosahedron) and greedy random
  packings otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.distance import cdist

from ..errors import InputError, check_choice, check_count, check_finite_array, check_positive
from ._items import check_rng

__all__ = [
    "Packing",
    "hamming_ball_volume",
    "gilbert_varshamov_bound",
    "gilbert_varshamov_code",
    "sphere_packing",
    "exact_sphere_packing",
    "min_pairwise_distance",
]

METRICS = ("euclidean", "hamming")
_BLOCK = 2048
EXHAUSTIVE_MAX_D = 20  # codes this short are completed by a sweep over all 2^d words


def min_pairwise_distance(points: np.ndarray, metric: str = "euclidean") -> float:
    """Smallest distance over all pairs of rows of ``points (N, d)`` (``inf`` if N < 2).

    ``metric="hamming"`` counts differing coordinates (not the fraction scipy uses).
    Computed blockwise with :func:`scipy.spatial.distance.cdist`, so memory stays
    ``O(block · N)``.
    """
    points = check_finite_array(points, "points", ndim=2)
    check_choice(metric, METRICS, "metric")
    count, d = points.shape
    best = math.inf
    for start in range(0, count - 1, _BLOCK):
        block = points[start : start + _BLOCK]
        dist = cdist(block, points[start:], metric=metric)
        if metric == "hamming":
            dist = np.rint(dist * d)
        # keep only pairs (i, j) with j > i
        rows, cols = np.indices(dist.shape)
        dist = np.where(cols > rows, dist, np.inf)
        best = min(best, float(dist.min()))
    return best


@dataclass(frozen=True, eq=False)
class Packing:
    """A finite point set with its certified minimum pairwise distance.

    Attributes
    ----------
    points : array (N, d)
        The packing (read-only).  Codes hold entries in ``{−1, +1}``.
    min_distance : float
        Minimum over all pairs, recomputed from ``points`` on construction.
    metric : {"euclidean", "hamming"}
    construction : str
        How the points were made (for reports).
    """

    points: np.ndarray
    metric: str = "euclidean"
    construction: str = ""
    min_distance: float = field(init=False, default=float("nan"))

    def __post_init__(self) -> None:
        points = np.array(check_finite_array(self.points, "points", ndim=2), copy=True)
        check_choice(self.metric, METRICS, "metric")
        if self.metric == "hamming" and not np.all(np.abs(points) == 1.0):
            raise InputError("a code (metric='hamming') must have entries in {-1, +1}")
        if points.shape[0] < 2:
            raise InputError(
                f"points must hold at least 2 rows for a packing, got shape {points.shape}"
            )
        points.setflags(write=False)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "min_distance", min_pairwise_distance(points, self.metric))

    @property
    def size(self) -> int:
        """Number of points ``|V|``."""
        return int(self.points.shape[0])

    @property
    def d(self) -> int:
        """Ambient dimension."""
        return int(self.points.shape[1])

    def __len__(self) -> int:
        return self.size

    def on_sphere(self) -> Packing:
        """Map a ``{±1}^d`` code to ``S^{d−1}`` by ``c ↦ c/√d``.

        Hamming distance ``r`` becomes Euclidean distance ``2√(r/d)``.
        """
        if self.metric != "hamming":
            raise InputError(
                "on_sphere() needs a code (metric='hamming'); this packing is already Euclidean"
            )
        return Packing(
            self.points / math.sqrt(self.d),
            metric="euclidean",
            construction=f"{self.construction} / sqrt(d)",
        )

    def to_dict(self) -> dict:
        """Size, dimension, metric, certified separation and construction."""
        return {
            "size": self.size,
            "d": self.d,
            "metric": self.metric,
            "min_distance": float(self.min_distance),
            "construction": self.construction,
        }


def hamming_ball_volume(d: int, radius: int) -> int:
    """``V(d, t) = Σ_{i=0}^{t} C(d, i)``: words within Hamming distance ``t`` of a word of length
    ``d``."""
    d = check_count(d, "d")
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)):
        raise InputError(f"radius must be a whole number, got {radius!r}")
    return sum(math.comb(d, i) for i in range(0, min(int(radius), d) + 1))


def gilbert_varshamov_bound(d: int, min_distance: int) -> int:
    """Gilbert–Varshamov size ``⌈2^d / V(d, r − 1)⌉`` of a binary code of length d, distance r."""
    d = check_count(d, "d")
    r = check_count(min_distance, "min_distance")
    if r > d:
        raise InputError(f"min_distance must be <= d = {d}, got {r}")
    return -(-(2**d) // hamming_ball_volume(d, r - 1))


def _greedy_accept(candidates: np.ndarray, far_enough) -> np.ndarray:
    """Greedy maximal subset of ``candidates (s, d)`` whose pairs all pass ``far_enough``."""
    ok = far_enough(candidates, candidates)
    keep = np.ones(len(candidates), dtype=bool)
    for i in range(len(candidates)):
        if keep[i]:
            later = np.arange(len(candidates)) > i
            keep &= ~(later & ~ok[i])
    return candidates[keep]


def _all_words(d: int, start: int, count: int) -> np.ndarray:
    """Words ``start … start + count − 1`` of ``{±1}^d`` in lexicographic order: ``(count, d)``."""
    idx = np.arange(start, min(start + count, 2**d), dtype=np.int64)
    return ((idx[:, None] >> np.arange(d - 1, -1, -1)) & 1) * 2.0 - 1.0


def gilbert_varshamov_code(
    d: int,
    min_distance: int,
    rng: np.random.Generator,
    size: int | None = None,
    max_size: int = 20_000,
    max_draws: int = 5_000_000,
) -> Packing:
    """Random greedy binary code in ``{±1}^d`` with minimum Hamming distance ``r``.

    Parameters
    ----------
    d, min_distance : int
        Word length and required distance ``r`` (``1 ≤ r ≤ d``).
    rng : numpy.random.Generator
    size : int, optional
        Number of codewords wanted; default the Gilbert–Varshamov size
        :func:`gilbert_varshamov_bound`.  Random proposals (uniform words and
        perturbed antipodes of codewords) are tried first; for ``d ≤ 20`` a
        lexicographic sweep over all words then completes the code to a maximal one,
        so the GV size is always reached.  For larger d it is reached unless
        ``max_draws`` runs out (then ``InputError``).
    max_size : int
        Refuse targets above this (memory guard).
    max_draws : int
        Candidate budget; running out raises ``InputError``.

    Returns
    -------
    Packing
        ``metric="hamming"``, ``points (size, d)`` in ``{−1, +1}``; its
        ``min_distance`` is certified over all pairs.
    """
    d = check_count(d, "d")
    r = check_count(min_distance, "min_distance")
    if r > d:
        raise InputError(f"min_distance must be <= d = {d}, got {r}")
    target = gilbert_varshamov_bound(d, r) if size is None else check_count(size, "size", minimum=2)
    rng = check_rng(rng)
    if target > max_size:
        raise InputError(
            f"the code would need {target} words (> max_size={max_size}); pass a smaller size= or "
            "a larger min_distance"
        )

    def far_enough(a, b):
        return (d - a @ b.T) / 2.0 >= r - 0.5

    def add(words, cand):
        if len(words):
            cand = cand[np.all(far_enough(cand, words), axis=1)]
        return np.concatenate([words, _greedy_accept(cand, far_enough)]) if len(cand) else words

    words, drawn, batch = np.empty((0, d)), 0, 1024
    while len(words) < target and drawn < max_draws:
        cand = rng.choice(np.array([-1.0, 1.0]), size=(batch, d))
        if len(words):
            # half the proposals: a codeword's antipode with a few flips (distance ≥ r from it)
            half = batch // 2
            src = words[rng.integers(len(words), size=half)]
            flips = rng.random((half, d)) < rng.uniform(0.0, (d - r) / d, size=(half, 1))
            cand[:half] = np.where(flips, src, -src)
        words = add(words, cand)
        drawn += batch
    if len(words) < target and d <= EXHAUSTIVE_MAX_D:
        # lexicographic completion: a maximal code, hence at least the GV size
        for start in range(0, 2**d, batch):
            words = add(words, _all_words(d, start, batch))
            if len(words) >= target:
                break
    words = words[:target]
    if len(words) < max(target, 2):
        raise InputError(
            f"found only {len(words)} of {target} codewords within max_draws={max_draws}; raise "
            "max_draws or lower size"
        )
    return Packing(words, metric="hamming", construction=f"random greedy GV code (d={d}, r={r})")


def _regular_polygon(count: int) -> np.ndarray:
    angles = 2.0 * np.pi * np.arange(count) / count
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _icosahedron() -> np.ndarray:
    phi = (1.0 + math.sqrt(5.0)) / 2.0
    base = []
    for s1 in (-1.0, 1.0):
        for s2 in (-1.0, 1.0):
            base += [(0.0, s1, s2 * phi), (s1, s2 * phi, 0.0), (s2 * phi, 0.0, s1)]
    pts = np.array(base)
    return pts / np.linalg.norm(pts, axis=1, keepdims=True)


_TETRAHEDRON = np.array(
    [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]
) / math.sqrt(3.0)
_OCTAHEDRON = np.concatenate([np.eye(3), -np.eye(3)])


def exact_sphere_packing(d: int, separation: float) -> Packing:
    """Largest known-optimal configuration on ``S^{d−1}`` (d ≤ 3) with pairwise distance ≥
    ``separation``.

    d = 1: ``{±1}`` (distance 2).  d = 2: the regular ``N``-gon with
    ``N = ⌊2π / (2 asin(s/2))⌋`` (optimal on the circle; s = 1 gives the 6 points
    at 60° of spec 003 §5).  d = 3: icosahedron (12 points, 1.0515), octahedron
    (6, √2), tetrahedron (4, 1.633) or the antipodal pair (2, 2) — the optimal
    Tammes configurations for these counts; for s ≤ 1.0515 the icosahedron is
    returned (as in spec 003 §5), which is then not maximal.
    """
    d = check_count(d, "d")
    s = check_positive(separation, "separation")
    if d > 3:
        raise InputError(
            f"exact packings exist here only for d <= 3, got d={d}; use sphere_packing(..., "
            "method='greedy')"
        )
    if s > 2.0:
        raise InputError(f"separation must be <= 2 (the diameter of the unit sphere), got {s}")
    if d == 1:
        return Packing(
            np.array([[1.0], [-1.0]]), metric="euclidean", construction="exact: {+1, -1}"
        )
    if d == 2:
        count = int(math.floor(2.0 * math.pi / (2.0 * math.asin(s / 2.0)) + 1e-12))
        return Packing(
            _regular_polygon(max(count, 2)),
            metric="euclidean",
            construction=f"exact: regular {max(count, 2)}-gon",
        )
    for pts, name in (
        (_icosahedron(), "icosahedron"),
        (_OCTAHEDRON, "octahedron"),
        (_TETRAHEDRON, "tetrahedron"),
    ):
        if min_pairwise_distance(pts) >= s - 1e-12:
            return Packing(pts, metric="euclidean", construction=f"exact: {name}")
    return Packing(
        np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]),
        metric="euclidean",
        construction="exact: antipodal pair",
    )


def sphere_packing(
    d: int,
    separation: float = 1.0,
    rng: np.random.Generator | None = None,
    size: int | None = None,
    method: str = "auto",
    patience: int = 20_000,
    max_size: int = 20_000,
) -> Packing:
    """A packing of the unit sphere ``S^{d−1}`` with pairwise distance ≥ ``separation``.

    Parameters
    ----------
    d : int
    separation : float
        Required minimum distance ``s ∈ (0, 2]``.
    rng : numpy.random.Generator
        Needed for ``method="greedy"`` (and ``"auto"`` with d > 3).
    size : int, optional
        Stop once this many points are found (greedy).  Default: run until
        ``patience`` consecutive candidates are rejected (an almost maximal
        packing, so ``ln|V| ≍ d`` for fixed s < √2).
    method : {"auto", "exact", "greedy"}
        ``"auto"``: exact for d ≤ 3, greedy otherwise.
    patience, max_size : int
        Greedy stopping rule and memory guard.

    Returns
    -------
    Packing
        ``metric="euclidean"``, certified ``min_distance ≥ separation``.
    """
    d = check_count(d, "d")
    s = check_positive(separation, "separation")
    check_choice(method, ("auto", "exact", "greedy"), "method")
    if s > 2.0:
        raise InputError(f"separation must be <= 2 (the diameter of the unit sphere), got {s}")
    if method == "exact" or (method == "auto" and d <= 3):
        return exact_sphere_packing(d, s)
    if rng is None:
        raise InputError(
            "rng is required for greedy sphere packings; pass rng=np.random.default_rng(seed)"
        )
    rng = check_rng(rng)
    target = max_size if size is None else check_count(size, "size", minimum=2)

    def draw(gen, count):
        g = gen.standard_normal((count, d))
        return g / np.linalg.norm(g, axis=1, keepdims=True)

    def far_enough(a, b):
        return cdist(a, b) >= s

    kept = draw(rng, 1)
    misses = 0
    batch = 512
    while len(kept) < target and misses < patience:
        cand = draw(rng, batch)
        cand = cand[np.all(far_enough(cand, kept), axis=1)]
        if not len(cand):
            misses += batch
            continue
        misses = 0
        kept = np.concatenate([kept, _greedy_accept(cand, far_enough)])
    kept = kept[:target]
    if len(kept) < 2:
        raise InputError(f"could not place 2 points at distance {s} on S^{d - 1}; lower separation")
    return Packing(kept, metric="euclidean", construction=f"random greedy on S^{d - 1} (s={s})")
