"""Argument checks and item samplers shared by the smooth / convex instances."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, check_finite_array


def check_count(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is a whole number ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def check_positive(value, name: str, allow_zero: bool = False) -> float:
    """Return ``value`` as a float after checking it is finite and > 0 (≥ 0 with ``allow_zero``)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise InputError(
            f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, got {value!r}"
        )
    return float(value)


def check_vector(value, name: str, d: int | None = None) -> np.ndarray:
    """A finite 1-D float array (of length ``d`` when given), read-only."""
    out = check_finite_array(value, name, ndim=1)
    if out.size == 0 or (d is not None and out.size != d):
        raise InputError(
            f"{name} must have shape ({d if d is not None else 'd'},), got {out.shape}"
        )
    out = out.copy()
    out.setflags(write=False)
    return out


def check_rng(rng) -> np.random.Generator:
    """``rng`` must be a ``numpy.random.Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise InputError(
            "rng must be a numpy.random.Generator (np.random.default_rng(seed)), got "
            f"{type(rng).__name__}"
        )
    return rng


def check_theta(theta, d: int) -> np.ndarray:
    """``theta (..., d)`` as a finite float array."""
    theta = check_finite_array(theta, "theta")
    if theta.ndim < 1 or theta.shape[-1] != d:
        raise InputError(f"theta must have shape (..., {d}), got {theta.shape}")
    return theta


def uniform_sphere(rng: np.random.Generator, shape: tuple, d: int) -> np.ndarray:
    """Uniform points on the unit sphere ``S^{d−1}``: ``(*shape, d)``."""
    g = rng.standard_normal(shape + (d,))
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    return g / np.where(norm > 0, norm, 1.0)


def project_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Projection of ``v (..., d)`` onto the centred ball of ``radius`` (``inf``: identity)."""
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return v * (radius / np.maximum(norm, radius))  # = v·min(1, radius/‖v‖)


def signed_cube(rng: np.random.Generator, shape: tuple, prob_plus: np.ndarray) -> np.ndarray:
    """Signs ``±1`` of shape ``(*shape, d)`` with ``P(+1) = prob_plus (d,)``, independent
    coordinates."""
    return np.where(rng.random(shape + prob_plus.shape) < prob_plus, 1.0, -1.0)


def cube_bias(d: int, alpha, signs) -> np.ndarray:
    """Per-coordinate bias ``E s_k = α_k ν_k ∈ [−1, 1]`` from a signal ``alpha`` (scalar or (d,))
    and signs ν."""
    alpha = (
        np.broadcast_to(check_finite_array(alpha, "alpha"), (d,))
        if np.ndim(alpha) == 0
        else check_vector(alpha, "alpha", d)
    )
    if np.any(np.abs(alpha) > 1):
        raise InputError("alpha must lie in [-1, 1] (P(s_k = ν_k) = (1 + α_k)/2)")
    nu = np.ones(d) if signs is None else check_vector(signs, "signs", d)
    if np.any(np.abs(nu) != 1):
        raise InputError("signs must be a vector of ±1 of shape (d,)")
    bias = alpha * nu
    bias.setflags(write=False)
    return bias
