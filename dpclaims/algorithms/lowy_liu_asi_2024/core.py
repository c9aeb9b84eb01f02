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
* :func:`project_domain` — Π onto the domain ball (P-a), the identity for an infinite radius.
* :func:`partition_order`, :func:`user_counts`, :func:`trial_chunk`, :func:`stack_runs` — the
  batching of trials: user orders, multiplicities, memory-bounded chunks, concatenation.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.spatial import cKDTree

from dpclaims.errors import InputError, check_positive
from dpclaims.losses import (
    CauchyLoss,
    L1DistanceLoss,
    LinearLoss,
    SquaredDistanceLoss,
    WeightedSquaredDistanceLoss,
    project_l2_ball,
)

__all__ = [
    "domain_diameter",
    "problem_loss",
    "run_summary",
    "CHUNK_BYTES",
    "MEAN_SUFFICIENT",
    "POINT_LOSSES",
    "paired_grad",
    "user_gradients",
    "distinct_users",
    "concentration",
    "keep_probability",
    "acsa_coefficients",
    "check_loss",
    "ln",
    "project_domain",
    "partition_order",
    "user_counts",
    "trial_chunk",
    "stack_runs",
]

CHUNK_BYTES = 256 * 2**20
"""Bytes of working arrays per sub-batch of trials (DESIGN: keep well under ~300 MB)."""

POINT_LOSSES = (SquaredDistanceLoss, L1DistanceLoss, CauchyLoss, WeightedSquaredDistanceLoss)
"""Losses of ``θ − z`` only: ``∇f(θ, z) = g(θ − z)``, so any pairing of points and items is one
call."""

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
        "loss must be a dpclaims.losses GLM loss or one of "
        f"{[c.__name__ for c in POINT_LOSSES]}, got "
        f"{type(loss).__name__}; these algorithms pair every trial's point with its own items"
    )


def problem_loss(problem):
    """The problem's loss (default linear), checked by :func:`check_loss`."""
    loss = LinearLoss() if problem.loss is None else problem.loss
    check_loss(loss)
    return loss


def domain_diameter(radius: float, diameter: float | None) -> float:
    """R of the paper's formulas: ``diameter`` if given (positive), else ``2·radius`` (finite)."""
    diameter = 2.0 * radius if diameter is None else check_positive(diameter, "diameter")
    if math.isinf(diameter):
        raise InputError("diameter must be finite when radius is infinite; pass diameter=R")
    return diameter


def run_summary(run, **extra) -> dict:
    """A run's summary: trials, d, halt rate, ``extra`` rates and the mean gradient count."""
    return {
        "trials": int(run.theta.shape[0]),
        "d": int(run.theta.shape[1]),
        "halt_rate": float(np.mean(run.halted)),
        **extra,
        "gradient_evaluations": float(np.mean(run.gradient_evaluations)),
    }


def paired_grad(loss, theta: np.ndarray, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Row-wise gradients ``∇f(θ_b, x_b)``: ``theta (..., d)``, ``x (..., d)`` broadcastable →
    ``(..., d)``.

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
    """User mean gradients ``(1/m)Σ_z ∇f(θ_t, z)``: ``theta (T, d)``, ``x (U, m, d)`` →
    ``(T, U, d)``.

    Linear and squared-distance losses use the item mean (exact: their gradient is affine in z).
    """
    if isinstance(loss, MEAN_SUFFICIENT) and y is None:
        x = x.mean(axis=1, keepdims=True)
    t, (u, m, d) = theta.shape[0], x.shape
    chunk = max(1, CHUNK_BYTES // (8 * 3 * max(1, u * m * d)))
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
    Users are compared as raw bytes (one void scalar per user, −0.0 read as 0.0: about 5x faster
    than ``np.unique(axis=0)``); the table is in the bytes' order, and what is computed per table
    row is gathered back through ``index``, so nothing downstream depends on that order.
    """
    n = x.shape[0]
    rows = np.ascontiguousarray(
        (
            x.reshape(n, -1)
            if y is None
            else np.concatenate([x.reshape(n, -1), y.reshape(n, -1)], axis=1)
        )
        + 0.0  # a copy, with −0.0 → 0.0: equal users have equal bytes
    )
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(n)
    _, first, index = np.unique(keys, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    return x[first], (None if y is None else y[first]), index


def keep_probability(h: np.ndarray, k) -> np.ndarray:
    """Soft filter (Alg. 1 line 15, Alg. 2 line 11) of ``h`` (any shape).

    0 if ``h < k/2``, 1 if ``h ≥ 2k/3``, else ``(h − k/2)/(k/6)``.
    """
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
        chunk = max(1, (CHUNK_BYTES // 8) // (4 * u * u))
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


def ln(x: float) -> float:
    """Natural log (spec §0: the paper's "log" is read as ln)."""
    if not x > 0 or not math.isfinite(x):
        raise InputError(
            f"a logarithm's argument must be finite and > 0, got {x!r}; "
            "check n, m, d, epsilon, delta"
        )
    return math.log(x)


def project_domain(theta: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Π onto ``B(center, radius)`` (spec P-a): ``theta (..., d)``, ``center (d,)`` or ``(T, d)``.

    An infinite radius returns ``theta`` itself (no arithmetic, so no rounding).
    """
    if math.isinf(radius):
        return theta
    flat = theta.reshape(-1, theta.shape[-1])
    with np.errstate(over="ignore"):  # θ at the centre: radius/tiny overflows to a factor of 1
        return project_l2_ball(flat, radius, center).reshape(theta.shape)


def trial_chunk(trials: int, per_trial_floats: float) -> int:
    """Trials per sub-batch so that ``per_trial_floats`` doubles each stay in the memory budget."""
    return max(1, min(trials, int(CHUNK_BYTES // (8 * max(per_trial_floats, 1.0)))))


def partition_order(rng: np.random.Generator, trials: int, n: int, partition: str) -> np.ndarray:
    """A data-independent user order per trial (Alg. 1 line 5 / Alg. 3 line 5): ``(T, n)``."""
    if partition == "index":
        return np.broadcast_to(np.arange(n), (trials, n))
    return np.argsort(rng.random((trials, n)), axis=1)


def _lookup(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``table[rows]``, kept a broadcast view when every row of ``rows`` is the same."""
    if rows.shape[0] > 1 and rows.strides[0] == 0:
        return np.broadcast_to(table[rows[0]], rows.shape + table.shape[1:])
    return table[rows]


def user_counts(uid: np.ndarray, users: np.ndarray, size: int) -> np.ndarray:
    """Multiplicity of each distinct user among ``users (T, k)``: ``uid (n,)`` → ``(T, size)``."""
    index_rows = _lookup(uid, users)
    t = index_rows.shape[0]
    if t > 1 and index_rows.strides[0] == 0:  # the same row for every trial (index partition)
        return np.broadcast_to(np.bincount(index_rows[0], minlength=size), (t, size))
    flat = (np.arange(t)[:, None] * size + index_rows).reshape(-1)
    return np.bincount(flat, minlength=t * size).reshape(t, size)


def stack_runs(cls, parts: list):
    """Concatenate per-chunk run results (dataclasses of ``cls``) along the trial axis."""
    if len(parts) == 1:
        return parts[0]
    stacked = {}
    for f in dataclasses.fields(cls):
        values = [getattr(p, f.name) for p in parts]
        if values[0] is None:
            stacked[f.name] = None
        elif isinstance(values[0], list):
            stacked[f.name] = [
                stack_runs(type(v[0]), list(v))
                if dataclasses.is_dataclass(v[0])
                else np.concatenate(v)
                for v in zip(*values, strict=True)
            ]
        elif np.ndim(values[0]) == 0:
            stacked[f.name] = values[0]
        else:
            stacked[f.name] = np.concatenate(values)
    return cls(**stacked)
