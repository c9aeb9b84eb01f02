"""Argument checks and item samplers shared by the smooth / convex instances.

The count and positivity checks are :mod:`dpclaims.errors`' (re-exported here for the
instance modules that still import them from this module).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, check_count, check_finite_array, check_positive

__all__ = [
    "check_count",
    "check_positive",
    "check_vector",
    "check_rng",
    "check_theta",
    "uniform_sphere",
    "signed_cube",
    "cube_bias",
]


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
