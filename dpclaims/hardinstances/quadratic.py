"""Strongly convex and quadratic instances with closed-form population loss and optimum.

* :class:`GaussianMeanInstance`, :class:`SphereMeanInstance`, :class:`QuadraticHypercubeInstance`
  — mean estimation ``(μ/2)‖θ − x‖²`` on a ball (spec 000 §5.2 H4, spec 001 §7(b) RT-5/9/10);
  ``F(θ) = (μ/2)(‖θ − E x‖² + tr Cov x)``, ``θ* = Π_ball(E x)``.
* :class:`LeastSquaresInstance` — spec 002 §5 "LS": ``F(θ) − F* = ‖θ − θ†‖²/(2d)``.
* :class:`NesterovChainInstance` — spec 002 §5 H1: the tridiagonal chain quadratic with its
  span lower bound.
"""

from __future__ import annotations

import math

import numpy as np

from ..data import UserDataset
from ..errors import InputError, check_count, check_positive
from ..losses import QuadraticFormLoss, SquaredDistanceLoss, SquaredLoss, project_l2_ball
from ._items import (
    check_rng,
    check_theta,
    check_vector,
    cube_bias,
    signed_cube,
    uniform_sphere,
)
from .base import Instance

__all__ = [
    "GaussianMeanInstance",
    "SphereMeanInstance",
    "QuadraticHypercubeInstance",
    "LeastSquaresInstance",
    "NesterovChainInstance",
]


class _MeanEstimationInstance(Instance):
    """``ℓ(θ; x) = (strength/2)‖θ − x‖²`` on the centred ball of ``radius``; items with mean
    ``mean``.

    Subclasses set ``_mean (d,)``, ``trace_cov`` (= tr Cov x) and implement ``_draw``.
    """

    _mean: np.ndarray
    trace_cov: float

    def __init__(self, d: int, radius: float, strength: float) -> None:
        self.d = d
        self.radius = check_positive(radius, "radius")
        self.strength = check_positive(strength, "strength")
        self.loss = SquaredDistanceLoss(strength=self.strength)

    @property
    def mean(self) -> np.ndarray:
        """Item mean ``E x`` (d,)."""
        return self._mean

    def population_loss(self, theta) -> np.ndarray:
        """``(μ/2)(‖θ − E x‖² + tr Cov x)``: ``(..., d)`` → ``(...)``."""
        theta = check_theta(theta, self.d)
        return 0.5 * self.strength * (np.sum((theta - self._mean) ** 2, axis=-1) + self.trace_cov)

    def population_grad(self, theta) -> np.ndarray:
        """``μ(θ − E x)``: ``(..., d)`` → ``(..., d)``."""
        return self.strength * (check_theta(theta, self.d) - self._mean)

    @property
    def theta_star(self) -> np.ndarray:
        """``Π_ball(E x)`` (isotropic quadratic ⇒ projection of the unconstrained minimiser)."""
        return project_l2_ball(self._mean[None, :], self.radius)[0]

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``n`` users × ``m`` i.i.d. items → ``UserDataset`` with ``x (n, m, d)``, no labels."""
        n, m = check_count(n, "n"), check_count(m, "m")
        return UserDataset(self._draw((n, m), check_rng(rng)))

    def to_dict(self) -> dict:
        """Parameters, with the mean as a list."""
        return {**super().to_dict(), "mean": self._mean.tolist()}


class GaussianMeanInstance(_MeanEstimationInstance):
    """Gaussian mean estimation: ``x ~ N(mean, sigma² I_d)``, loss ``(strength/2)‖θ − x‖²`` on
    ``B(0, radius)``.

    ``F(θ) = (strength/2)(‖θ − mean‖² + d·sigma²)``.  Items are unbounded, so the
    Lipschitz constant holds only with high probability (``‖x‖ ≤ ‖mean‖ + sigma(√d + t)``).
    """

    def __init__(
        self, mean, sigma: float = 1.0, radius: float = 1.0, strength: float = 1.0
    ) -> None:
        mean = check_vector(mean, "mean")
        super().__init__(mean.size, radius, strength)
        self._mean = mean
        self.sigma = check_positive(sigma, "sigma", allow_zero=True)
        self.trace_cov = mean.size * self.sigma**2

    def _draw(self, shape, rng):
        return self._mean + self.sigma * rng.standard_normal(shape + (self.d,))


class SphereMeanInstance(_MeanEstimationInstance):
    """Bounded mean estimation: ``x = mean + spread·u``, ``u`` uniform on ``S^{d−1}``.

    ``‖x‖ ≤ ‖mean‖ + spread`` surely; ``tr Cov x = spread²``, so
    ``F(θ) = (strength/2)(‖θ − mean‖² + spread²)``.
    """

    def __init__(
        self, mean, spread: float = 1.0, radius: float = 1.0, strength: float = 1.0
    ) -> None:
        mean = check_vector(mean, "mean")
        super().__init__(mean.size, radius, strength)
        self._mean = mean
        self.spread = check_positive(spread, "spread", allow_zero=True)
        self.trace_cov = self.spread**2

    @property
    def x_bound(self) -> float:
        """``‖mean‖ + spread`` ≥ ‖x‖."""
        return float(np.linalg.norm(self._mean)) + self.spread

    def _draw(self, shape, rng):
        return self._mean + self.spread * uniform_sphere(rng, shape, self.d)


class QuadraticHypercubeInstance(_MeanEstimationInstance):
    """Strongly convex quadratic on hypercube items (spec 000 §5.2 H4; spec 001 §7(b) RT-5/9/10).

    Items ``z = (scale/√d)·s`` with independent ``s_k ∈ {±1}``, ``P(s_k = ν_k) = (1 + α_k)/2``
    (``alpha`` scalar or (d,), ``signs`` ν default all +1); loss ``(strength/2)‖θ − z‖²`` on
    ``B(0, radius)``.  ``E z = (scale/√d)α ν``, ``tr Cov z = (scale²/d)Σ_k(1 − α_k²)``;
    ``F(θ) − F* = (strength/2)‖θ − E z‖²`` when ``radius ≥ ‖E z‖``.  Constants on the ball:
    ``L = strength(radius + scale)``, ``β = μ = strength``.  With α = 0 these are the cube
    items ``p = 1/2`` of spec 001 RT-5.
    """

    def __init__(
        self,
        d: int,
        alpha=0.0,
        scale: float = 1.0,
        strength: float = 1.0,
        radius: float = 1.0,
        signs=None,
    ) -> None:
        d = check_count(d, "d")
        super().__init__(d, radius, strength)
        self.scale = check_positive(scale, "scale")
        self._bias = cube_bias(d, alpha, signs)
        self._mean = self.scale / math.sqrt(d) * self._bias
        self._mean.setflags(write=False)
        self.trace_cov = self.scale**2 / d * float(np.sum(1.0 - self._bias**2))

    def _draw(self, shape, rng):
        return self.scale / math.sqrt(self.d) * signed_cube(rng, shape, (1.0 + self._bias) / 2.0)

    def user_means(self, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
        """Exact law of the ``n`` users' item means ``(n, d)`` without drawing items (spec 000
        §5.2).

        Coordinate k is ``(scale/√d)(2·Binomial(m, p_k) − m)/m``; a sufficient statistic for
        this loss.  Valid for any ``m`` numpy's binomial accepts (≤ 9·10^18).
        """
        n, m = check_count(n, "n"), check_count(m, "m")
        counts = check_rng(rng).binomial(m, (1.0 + self._bias) / 2.0, size=(n, self.d))
        return self.scale / math.sqrt(self.d) * (2.0 * counts - m) / m


class LeastSquaresInstance(Instance):
    """Least squares "LS" of spec 002 §5: ``ℓ(θ; a, b) = ½(⟨a, θ⟩ − b)²``.

    ``a`` uniform on ``S^{d−1}``, ``b = ⟨a, θ†⟩ + u`` with ``u ~ U[−noise, noise]``; data
    ``x = a``, ``y = b``.  ``E aaᵀ = I/d`` so ``F(θ) = ½(‖θ − θ†‖²/d + noise²/3)`` and
    ``F(θ) − F* = ‖θ − θ†‖²/(2d)``.  Spec defaults: ``‖θ†‖ = 0.5`` (``θ† = 0.5 e₁``),
    ``noise = 0.5``, ``radius = 1`` ⇒ ``L = 2``, ``β = 1``.
    """

    def __init__(self, d: int, theta_dagger=None, noise: float = 0.5, radius: float = 1.0) -> None:
        self.d = check_count(d, "d")
        self.radius = check_positive(radius, "radius")
        if theta_dagger is None:
            theta_dagger = np.r_[0.5, np.zeros(self.d - 1)]
        self._theta_dagger = check_vector(theta_dagger, "theta_dagger", self.d)
        if np.linalg.norm(self._theta_dagger) > self.radius:
            raise InputError(
                "theta_dagger must lie in the ball of radius `radius` (the spec's x† ∈ C)"
            )
        self.noise = check_positive(noise, "noise", allow_zero=True)
        self.loss = SquaredLoss()

    @property
    def label_bound(self) -> float:
        """``‖θ†‖ + noise`` ≥ |b|."""
        return float(np.linalg.norm(self._theta_dagger)) + self.noise

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``x = a (n, m, d)``, ``y = b (n, m)``."""
        n, m = check_count(n, "n"), check_count(m, "m")
        rng = check_rng(rng)
        a = uniform_sphere(rng, (n, m), self.d)
        b = a @ self._theta_dagger + rng.uniform(-self.noise, self.noise, size=(n, m))
        return UserDataset(a, b)

    def population_loss(self, theta) -> np.ndarray:
        """``½(‖θ − θ†‖²/d + noise²/3)``."""
        theta = check_theta(theta, self.d)
        return 0.5 * (
            np.sum((theta - self._theta_dagger) ** 2, axis=-1) / self.d + self.noise**2 / 3.0
        )

    def population_grad(self, theta) -> np.ndarray:
        """``(θ − θ†)/d``."""
        return (check_theta(theta, self.d) - self._theta_dagger) / self.d

    @property
    def theta_star(self) -> np.ndarray:
        """``θ†`` (inside the ball)."""
        return self._theta_dagger

    def to_dict(self) -> dict:
        """Parameters, with θ† as a list."""
        return {**super().to_dict(), "theta_dagger": self._theta_dagger.tolist()}


class NesterovChainInstance(Instance):
    """Nesterov's chain quadratic, stochastic version (spec 002 §5 H1).

    ``F(θ) = (M/8)θᵀAθ − (Mc/4)θ₁`` with ``A = tridiag(−1, 2, −1)`` on the first ``k``
    coordinates (the other ``d − k`` have zero curvature), and items ``x = s·ξ``, ``ξ``
    uniform on the unit sphere of the first ``k`` coordinates, so
    ``f(θ; x) = F(θ) + ⟨x, θ⟩`` (:class:`~dpclaims.losses.QuadraticFormLoss`) and E f = F.
    ``θ*_i = c(1 − i/(k+1))`` for i ≤ k, with ``c = ρR/‖(1 − i/(k+1))_i‖`` so ``‖θ*‖ = ρR``;
    ``F* = −(Mc/8)θ*₁``.  Smoothness ``≤ M``; ``L ≤ M(R + ρR) + s`` on ``B(0, R)``.
    Use ``k = 2T + 1`` for a T-step experiment (:meth:`for_steps`).
    """

    def __init__(
        self,
        k: int,
        d: int | None = None,
        smoothness: float = 1.0,
        noise: float = 0.0,
        radius: float = 1.0,
        rho: float = 0.5,
    ) -> None:
        self.k = check_count(k, "k")
        self.d = self.k if d is None else check_count(d, "d", minimum=self.k)
        self.smoothness = check_positive(smoothness, "smoothness")
        self.noise = check_positive(noise, "noise", allow_zero=True)
        self.radius = check_positive(radius, "radius")
        self.rho = check_positive(rho, "rho")
        if self.rho > 1:
            raise InputError(f"rho must be in (0, 1] so that θ* lies in the ball, got {rho!r}")
        i = np.arange(1, self.k + 1)
        profile = 1.0 - i / (self.k + 1)
        self.c = self.rho * self.radius / float(np.linalg.norm(profile))
        star = np.zeros(self.d)
        star[: self.k] = self.c * profile
        star.setflags(write=False)
        self._theta_star = star
        hessian = np.zeros((self.d, self.d))
        tri = 2 * np.eye(self.k) - np.eye(self.k, k=1) - np.eye(self.k, k=-1)
        hessian[: self.k, : self.k] = self.smoothness / 4.0 * tri
        offset = np.zeros(self.d)
        offset[0] = -self.smoothness * self.c / 4.0
        self.loss = QuadraticFormLoss(hessian, offset)

    @classmethod
    def for_steps(cls, steps: int, **kwargs) -> NesterovChainInstance:
        """The instance with ``k = 2·steps + 1`` (spec 002 §5: "use k = 2T+1 for each T")."""
        return cls(2 * check_count(steps, "steps") + 1, **kwargs)

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """Items ``x = s·ξ`` ``(n, m, d)`` (zero outside the first k coordinates)."""
        n, m = check_count(n, "n"), check_count(m, "m")
        x = np.zeros((n, m, self.d))
        x[..., : self.k] = self.noise * uniform_sphere(check_rng(rng), (n, m), self.k)
        return UserDataset(x)

    def population_loss(self, theta) -> np.ndarray:
        """``½θᵀHθ + ⟨b, θ⟩`` (``E ξ = 0``)."""
        theta = check_theta(theta, self.d)
        return (
            0.5 * np.einsum("...i,ij,...j->...", theta, self.loss.hessian, theta)
            + theta @ self.loss.offset
        )

    def population_grad(self, theta) -> np.ndarray:
        """``Hθ + b``."""
        return check_theta(theta, self.d) @ self.loss.hessian + self.loss.offset

    @property
    def theta_star(self) -> np.ndarray:
        """``c(1 − i/(k+1))`` on the chain, 0 elsewhere (interior: ``‖θ*‖ = ρR``)."""
        return self._theta_star

    @property
    def optimal_value(self) -> float:
        """``F* = −(Mc/8)θ*₁``."""
        return -self.smoothness * self.c / 8.0 * float(self._theta_star[0])

    def span_lower_bound(self, steps: int) -> float:
        """``3M‖θ*‖²/(32(t+1)²)``: no span method from 0 gets closer after ``t`` queries (spec 002
        §5 H1).

        Nesterov's bound is for the chain of length exactly ``k = 2t + 1`` (built by
        :meth:`for_steps`); other ``t`` raise ``InputError``.
        """
        t = check_count(steps, "steps")
        if self.k != 2 * t + 1:
            raise InputError(
                f"the span lower bound holds for k = 2*steps + 1 = {2 * t + 1}, but k = {self.k}; "
                "build the instance with NesterovChainInstance.for_steps(steps)"
            )
        return (
            3.0
            * self.smoothness
            * float(self._theta_star @ self._theta_star)
            / (32.0 * (t + 1) ** 2)
        )
