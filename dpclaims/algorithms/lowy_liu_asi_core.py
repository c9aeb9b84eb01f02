"""Shared primitives of Lowy, Liu & Asi (2024), spec 000 §2.1 (P-a … P-e), batched over trials.

* :func:`paired_grad` — per-row (sub)gradients ``∇f(θ_b, z_b)`` when every trial has its own
  point *and* its own item (one-pass SGD with per-trial orders, perturbed oracles).
* :func:`user_gradients` — user mean gradients ``q(x, Z) = (1/m)Σ_z ∇f(x, z)`` at per-trial points.
* :func:`distinct_users` — users as (distinct table, index) so identical users are computed once
  (spec §2.1 P-c speed-up (ii)).
* :func:`concentration` — the score ``s`` and neighbour counts ``h`` of P-c on points given as a
  table with multiplicities; exact, with the O(kd) shortcut P-c (i).
* :func:`keep_probability` — the soft outlier filter's ramp (Alg. 1 line 15, Alg. 2 line 11).
* :func:`acsa_coefficients` — one AC-SA iteration's weights (P-d, Ghadimi–Lan 2012).
* :func:`uniform_ball` — uniform samples in an ℓ2 ball (P-e).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from ..errors import InputError
from ..losses import (
    CauchyLoss,
    L1DistanceLoss,
    LinearLoss,
    SquaredDistanceLoss,
    WeightedSquaredDistanceLoss,
)

__all__ = [
    "MEMORY_BUDGET",
    "MEAN_SUFFICIENT",
    "POINT_LOSSES",
    "paired_grad",
    "user_gradients",
    "distinct_users",
    "concentration",
    "keep_probability",
    "acsa_coefficients",
    "uniform_ball",
    "check_loss",
]

MEMORY_BUDGET = 256 * 2**20
"""Bytes of working arrays per sub-batch of trials (DESIGN: keep well under ~300 MB)."""

POINT_LOSSES = (SquaredDistanceLoss, L1DistanceLoss, CauchyLoss, WeightedSquaredDistanceLoss)
"""Losses of ``θ − z`` only: ``∇f(θ, z) = g(θ − z)``, so any pairing of points and items is one call."""

MEAN_SUFFICIENT = (LinearLoss, SquaredDistanceLoss)
"""Losses whose user mean gradient depends on the items only through their mean (exact shortcut)."""

_DENSE_LIMIT = 2048
"""Distinct points per trial up to which pairwise distances are formed densely (else a k-d tree)."""


def check_loss(loss) -> None:
    """``loss`` must be a GLM loss (``phi``/``dphi``) or one of :data:`POINT_LOSSES`."""
    if getattr(loss, "glm", False) and hasattr(loss, "dphi"):
        return
    if isinstance(loss, POINT_LOSSES):
        return
    raise InputError(
        f"loss must be a dpclaims.losses GLM loss or one of {[c.__name__ for c in POINT_LOSSES]}, got "
        f"{type(loss).__name__}; these algorithms pair every trial's point with its own items"
    )


def paired_grad(loss, theta: np.ndarray, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Row-wise gradients ``∇f(θ_b, x_b)``: ``theta (..., d)``, ``x (..., d)`` broadcastable → ``(..., d)``.

    GLM losses: ``φ'(⟨θ, x⟩, y)·x``; point losses: ``g(θ − x)`` evaluated as ``grad(0, x − θ)``.
    """
    if getattr(loss, "glm", False):
        margin = np.sum(theta * x, axis=-1)
        grad = loss.dphi(margin, y)[..., None] * x
        return np.broadcast_to(grad, np.broadcast_shapes(theta.shape, x.shape))
    diff = x - theta
    return loss.grad(np.zeros((1, diff.shape[-1])), diff, y)[0]


def user_gradients(
    loss, theta: np.ndarray, x: np.ndarray, y: np.ndarray | None = None
) -> np.ndarray:
    """User mean gradients ``(1/m)Σ_z ∇f(θ_t, z)``: ``theta (T, d)``, ``x (U, m, d)`` → ``(T, U, d)``.

    Linear and squared-distance losses use the item mean (exact: their gradient is affine in z).
    """
    if isinstance(loss, MEAN_SUFFICIENT) and y is None:
        x = x.mean(axis=1, keepdims=True)
    t, (u, m, d) = theta.shape[0], x.shape
    chunk = max(1, MEMORY_BUDGET // (8 * 3 * max(1, u * m * d)))
    out = np.empty((t, u, d))
    for start in range(0, t, chunk):
        stop = min(t, start + chunk)
        if getattr(loss, "glm", False):
            margin = np.einsum("td,umd->tum", theta[start:stop], x)
            out[start:stop] = np.einsum("tum,umd->tud", loss.dphi(margin, y), x) / m
        else:
            out[start:stop] = loss.grad(theta[start:stop], x, y).mean(axis=2)
    return out


def distinct_users(
    x: np.ndarray, y: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Distinct users: ``x (n, m, d)`` → ``(table_x (U, m, d), table_y (U, m) | None, index (n,))``.

    ``table_x[index] == x``: identical users (same items in the same order) are stored once.
    """
    n = x.shape[0]
    rows = (
        x.reshape(n, -1)
        if y is None
        else np.concatenate([x.reshape(n, -1), y.reshape(n, -1)], axis=1)
    )
    _, first, index = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    return x[first], (None if y is None else y[first]), index


def keep_probability(h: np.ndarray, k) -> np.ndarray:
    """Soft filter (Alg. 1 line 15, Alg. 2 line 11): 0 if ``h < k/2``, 1 if ``h ≥ 2k/3``, else ``(h − k/2)/(k/6)``."""
    k = np.asarray(k, dtype=np.float64)
    return np.clip((h - k / 2.0) / (k / 6.0), 0.0, 1.0)


def concentration(
    points: np.ndarray,
    counts: np.ndarray,
    score_radius: float,
    filter_radius: float,
    normalise: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Concentration score and neighbour counts of spec 000 §2.1 P-c, on a multiset of points.

    Parameters
    ----------
    points : (T, U, d) distinct candidate points per trial
    counts : (T, U) multiplicity of each point (0 = absent); ``k = counts.sum(1)``
    score_radius, filter_radius : ρ for the score (τ_i in Alg. 1, 2τ in Alg. 2) and for h (2τ_i, 2τ)
    normalise : divide the ordered-pair count by k (the paper's score); False is mutant M3(a)

    Returns
    -------
    score : (T,) ``(1/k)·#{ordered pairs (j, j') : ‖y_j − y_j'‖ ≤ ρ_s}`` (self-pairs included)
    h : (T, U) ``#{j' : ‖y_a − y_j'‖ ≤ ρ_h}`` for a copy of point a
    """
    t, u, d = points.shape
    c = counts.astype(np.float64)
    k = c.sum(axis=1)
    score = k.copy()
    h = np.broadcast_to(k[:, None], (t, u)).copy()
    centre = np.einsum("tu,tud->td", c, points) / np.maximum(k, 1.0)[:, None]
    far = np.linalg.norm(points - centre[:, None, :], axis=-1) > score_radius / 2.0
    fast = ~np.any(far & (counts > 0), axis=1) & (score_radius <= filter_radius)
    slow = np.flatnonzero(~fast)
    if slow.size and u <= _DENSE_LIMIT:
        chunk = max(1, (MEMORY_BUDGET // 8) // (4 * u * u))
        for start in range(0, slow.size, chunk):
            rows = slow[start : start + chunk]
            p = points[rows]
            dist = np.sqrt(
                np.maximum(
                    np.einsum("tud,tud->tu", p, p)[:, :, None]
                    + np.einsum("tvd,tvd->tv", p, p)[:, None, :]
                    - 2.0 * np.einsum("tud,tvd->tuv", p, p),
                    0.0,
                )
            )
            score[rows] = (
                np.einsum("tu,tuv,tv->t", c[rows], dist <= score_radius, c[rows]) / k[rows]
            )
            h[rows] = np.einsum("tuv,tv->tu", dist <= filter_radius, c[rows])
    elif slow.size:
        for row in slow:  # k-d tree for very many distinct points: only off the good event
            score[row], h[row] = _tree_counts(points[row], counts[row], score_radius, filter_radius)
    if not normalise:
        score = score * k
    return score, h


def _tree_counts(points: np.ndarray, counts: np.ndarray, score_radius: float, filter_radius: float):
    """Score and h of one trial with a k-d tree: ``points (U, d)``, ``counts (U,)``."""
    active = counts > 0
    tree = cKDTree(np.repeat(points[active], counts[active], axis=0))
    h_score = tree.query_ball_point(points, score_radius, return_length=True)
    h = tree.query_ball_point(points, filter_radius, return_length=True).astype(np.float64)
    k = float(counts.sum())
    return float(np.sum(counts * h_score)) / k, h


def acsa_coefficients(t: int, lipschitz_f: float, lam: float) -> tuple[float, float, float, float]:
    """Weights of AC-SA iteration ``t`` (spec §2.1 P-d; Ghadimi & Lan 2012, Euclidean prox).

    Returns ``(a_t, w_ag, w_x, g_t)`` with ``x_md = w_ag·x_ag + w_x·x``,
    ``a_t = 2/(t+1)``, ``g_t = 4 L_f/(t(t+1))``, ``den = g_t + (1 − a_t²)λ``.
    """
    a = 2.0 / (t + 1.0)
    g = 4.0 * lipschitz_f / (t * (t + 1.0))
    den = g + (1.0 - a * a) * lam
    return a, (1.0 - a) * (lam + g) / den, a * ((1.0 - a) * lam + g) / den, g


def uniform_ball(rng: np.random.Generator, shape: tuple, d: int, radius: float) -> np.ndarray:
    """Uniform points in ``B(0, radius) ⊂ R^d`` (spec §2.1 P-e): ``r·U^{1/d}·g/‖g‖`` → ``(*shape, d)``."""
    g = rng.standard_normal(shape + (d,))
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    u = rng.random(shape + (1,)) ** (1.0 / d)
    return radius * u * g / np.where(norm > 0, norm, 1.0)


def ln(x: float) -> float:
    """Natural log (spec §0: the paper's "log" is read as ln)."""
    if not x > 0 or not math.isfinite(x):
        raise InputError(
            f"a logarithm's argument must be finite and > 0, got {x!r}; check n, m, d, epsilon, delta"
        )
    return math.log(x)
