"""Algorithm 3 of Lowy 2026 (AdaPSG, the certified adaptive projected subgradient method) and the
joint objective Φ of Lemma 2.7 / C.4 it minimizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.errors import MechanismError, check_count, check_positive

__all__ = ["ADAPSG_MAX_ITERATIONS", "AdaPSGResult", "adapsg", "joint_objective", "unit_vectors"]

ADAPSG_MAX_ITERATIONS = 200_000
"""Iteration cap of :func:`adapsg`: hitting it raises (never an uncertified output, spec §2.9
rule 2)."""


def _glm_values_grads(
    loss: Any, points: np.ndarray, x: np.ndarray, y: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``f(y_i, z_i)`` and a subgradient at per-record points ``points (T, n, d)`` → ``(T, n)``,
    ``(T, n, d)``."""
    margin = np.einsum("tnd,nd->tn", points, x)
    return loss.phi(margin, y), loss.dphi(margin, y)[..., None] * x


def unit_vectors(v: np.ndarray) -> np.ndarray:
    """``v / ‖v‖`` along the last axis (0 where ``v = 0``): ``(..., d)`` → ``(..., d)``."""
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(norm > 0, v / np.maximum(norm, np.finfo(float).tiny), 0.0)


def joint_objective(
    state: np.ndarray,
    loss: Any,
    *,
    x: np.ndarray,
    y: np.ndarray | None,
    clip: float,
    lam: float,
    center: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Φ(w, y_1..y_n) of Lemma 2.7 / C.4 and one subgradient [H].

    ``Φ = (1/n)Σ_i [f(y_i, z_i) + C‖w − y_i‖] + (λ/2)‖w − w̄‖²``; ``state (T, n+1, d)`` stacks ``w``
    (block 0) and ``y_1..y_n``; ``center (T, d)``.  Returns ``Φ (T,)`` and ``∂Φ (T, n+1, d)``.
    ``min_y Φ(w, ·) = F̂^{K_y}_{C,λ}(w)``, so an α-minimizer of Φ is an α-minimizer of the
    extension.
    """
    w, ys = state[:, :1, :], state[:, 1:, :]
    n = ys.shape[1]
    values, grads = _glm_values_grads(loss, ys, x, y)
    diff = w - ys
    unit = unit_vectors(diff)
    phi = (values + clip * np.linalg.norm(diff, axis=-1)).mean(axis=1) + 0.5 * lam * np.sum(
        (w[:, 0] - center) ** 2, axis=1
    )
    g_w = clip * unit.mean(axis=1) + lam * (w[:, 0] - center)
    g_y = (grads - clip * unit) / n
    return phi, np.concatenate([g_w[:, None, :], g_y], axis=1)


@dataclass(frozen=True, kw_only=True)
class AdaPSGResult:
    """Output of :func:`adapsg`: the certified point ``(T, ...)``, iterations per trial, projection
    calls."""

    point: np.ndarray
    iterations: np.ndarray
    projection_calls: int


def adapsg(
    subgradient,
    project,
    x1: np.ndarray,
    *,
    radius: float,
    alpha: float,
    max_iterations: int = ADAPSG_MAX_ITERATIONS,
) -> AdaPSGResult:
    """Algorithm 3, AdaPSG: certified adaptive projected subgradient method (Prop 2.9 / C.5) [M].

    Batched over the leading (trial) axis; every trial stops at its own certificate
    ``5 R √S_t/(2t) ≤ α`` (then ``h(x̄_t) − min_K h ≤ α`` deterministically) or when ``g_t = 0``.
    Steps ``η_t = R/√S_t``; projections are ζ_t-inexact with ``ζ_t = min{R, η_t²‖g_t‖²/(3R)}``.

    Parameters
    ----------
    subgradient : ``g(x (T, ...)) -> (T, ...)``
    project : ``project(u (T, ...), zeta (T,)) -> (point in K (T, ...), calls)`` (ζ-inexact, output
    in K)
    x1 : (T, ...) start points in K; radius : R_K ≥ diam K; alpha : target accuracy
    max_iterations : a trial still uncertified after this many iterations raises ``MechanismError``

    Returns
    -------
    AdaPSGResult, halting after at most ``⌈(5 R L_h/(2α))²⌉`` iterations (C-3).
    """
    radius, alpha = check_positive(radius, "radius"), check_positive(alpha, "alpha")
    max_iterations = check_count(max_iterations, "max_iterations")
    x = np.array(x1, dtype=float)
    trials = x.shape[0]
    axes = tuple(range(1, x.ndim))
    s = np.zeros(trials)
    total = np.zeros_like(x)
    out = np.array(x)
    done = np.zeros(trials, dtype=bool)
    iterations = np.zeros(trials, dtype=np.int64)
    calls = 0
    for t in range(1, max_iterations + 1):
        g = subgradient(x)
        gnorm2 = np.sum(g * g, axis=axes)
        active = ~done
        zero = active & (gnorm2 == 0)
        out[zero] = x[zero]
        iterations[zero] = t
        done |= zero
        s = np.where(done, s, s + gnorm2)
        total = np.where(_bcast(done, x), total, total + x)
        cert = ~done & (5.0 * radius * np.sqrt(s) / (2.0 * t) <= alpha)
        out[cert] = total[cert] / t
        iterations[cert] = t
        done |= cert
        if done.all():
            return AdaPSGResult(point=out, iterations=iterations, projection_calls=calls)
        eta = radius / np.sqrt(np.maximum(s, np.finfo(float).tiny))
        zeta = np.minimum(radius, eta**2 * gnorm2 / (3.0 * radius))
        stepped = x - _bcast(eta, x) * g
        projected, used = project(stepped, np.maximum(zeta, np.finfo(float).tiny))
        calls += used
        x = np.where(_bcast(done, x), x, projected)
    raise MechanismError(
        f"AdaPSG hit max_iterations={max_iterations} before certifying accuracy alpha={alpha:g} "
        f"for {int((~done).sum())} trial(s); raise max_iterations (the certified bound is "
        "⌈(5 R L_h/(2α))²⌉) — an uncertified output would break the privacy proof"
    )


def _bcast(v: np.ndarray, like: np.ndarray) -> np.ndarray:
    return v.reshape(v.shape + (1,) * (like.ndim - 1))
