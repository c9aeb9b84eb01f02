"""The non-convex Cauchy-loss rate instance of spec 004 §7(b) (DIFF2)."""

from __future__ import annotations

import math

import numpy as np

from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_count, check_positive
from dpclaims.hardinstances._items import check_rng, check_theta
from dpclaims.hardinstances.base import Instance
from dpclaims.losses import CauchyLoss

__all__ = ["CauchyCircleInstance"]


class CauchyCircleInstance(Instance):
    """Cauchy loss around 8 points on a circle (spec 004 §7(b)); unconstrained (``radius = inf``).

    ``ℓ(θ; z) = (s²/2)ln(1 + ‖θ − z‖²/s²)`` (``G = s/2``, ``L = 1``, non-convex), items uniform over
    the base points ``b_j = (s/2)(cos(2πj/8), sin(2πj/8), 0, …, 0)`` (circle radius 0.5 for s = 1).
    ``f = (1/8)Σ_j ℓ(·; b_j)`` is the same function for every N. ``θ* = 0`` with ``f* = (s²/2)ln
    1.25`` (0.111572 for s = 1); by symmetry ∇f(0) = 0, the Hessian there is ``I/1.25²`` in the
    circle's plane, and outside the disk of radius s/2 every term grows along rays, so the minimum
    lies in that disk (checked on a grid in the tests). The spec's start ``x₀ = 3e₁`` has ``Δ0 =
    f(x₀) − f* = 1.0410`` and ``‖∇f(x₀)‖² = 0.0891`` (s = 1).
    """

    points = 8
    radius = math.inf

    def __init__(self, d: int = 10, scale: float = 1.0) -> None:
        self.d = check_count(d, "d", minimum=2)
        self.scale = check_positive(scale, "scale")
        self.loss = CauchyLoss(scale=self.scale)
        angles = 2 * math.pi * np.arange(self.points) / self.points
        base = np.zeros((self.points, self.d))
        base[:, 0], base[:, 1] = np.cos(angles), np.sin(angles)
        base *= 0.5 * self.scale
        base.setflags(write=False)
        self._base = base

    @property
    def base_points(self) -> np.ndarray:
        """The 8 base points ``(8, d)``."""
        return self._base

    @property
    def x0(self) -> np.ndarray:
        """The spec's starting point ``3 s e₁`` (d,)."""
        x0 = np.zeros(self.d)
        x0[0] = 3.0 * self.scale
        return x0

    @property
    def initial_gap(self) -> float:
        """``Δ0 = f(x₀) − f*``."""
        return float(self.population_loss(self.x0) - self.population_loss(self.theta_star))

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``n`` users (silos) × ``m`` items drawn i.i.d. uniformly from the base points."""
        n, m = check_count(n, "n"), check_count(m, "m")
        return UserDataset(self._base[check_rng(rng).integers(self.points, size=(n, m))])

    def replicated(self, n: int, m: int) -> UserDataset:
        """The spec's deterministic data: every silo holds ``m/8`` copies of each base point.

        ``m`` must be a multiple of 8; then every silo's empirical loss equals ``f`` exactly.
        """
        n, m = check_count(n, "n"), check_count(m, "m")
        if m % self.points:
            raise InputError(
                f"m must be a multiple of {self.points} (copies of each base point), got {m}"
            )
        x = np.broadcast_to(np.tile(self._base, (m // self.points, 1)), (n, m, self.d))
        return UserDataset(x)

    def population_loss(self, theta) -> np.ndarray:
        """``(1/8)Σ_j ℓ(θ; b_j)`` exactly: ``(..., d)`` → ``(...)``."""
        theta = check_theta(theta, self.d)
        sq = np.sum((theta[..., None, :] - self._base) ** 2, axis=-1)
        return 0.5 * self.scale**2 * np.mean(np.log1p(sq / self.scale**2), axis=-1)

    def population_grad(self, theta) -> np.ndarray:
        """``∇f(θ) = (1/8)Σ_j (θ − b_j)/(1 + ‖θ − b_j‖²/s²)``: ``(..., d)`` → ``(..., d)``."""
        theta = check_theta(theta, self.d)
        diff = theta[..., None, :] - self._base
        weight = 1.0 / (1.0 + np.sum(diff**2, axis=-1, keepdims=True) / self.scale**2)
        return np.mean(diff * weight, axis=-2)

    def gradient_norm_sq(self, theta) -> np.ndarray:
        """``‖∇f(θ)‖²``, the utility measure of spec 004 §7(b): ``(..., d)`` → ``(...)``."""
        return np.sum(self.population_grad(theta) ** 2, axis=-1)

    @property
    def theta_star(self) -> np.ndarray:
        """0."""
        return np.zeros(self.d)
