"""Linear (and one absolute-deviation) instances on a ball, optimum on the boundary.

* :class:`LinearBallInstance` — spec 002 §5 "LIN": ``f(θ; z) = −⟨θ, z⟩``,
  ``z = m + (1 − ‖m‖)ξ``; ``F(θ) = −⟨θ, m⟩``, ``θ* = R m/‖m‖``.
* :class:`LinearHypercubeInstance` — spec 000 §5.2 H1 (the main rate-test instance of
  spec 000 §7(b); cube items of spec 001 §7(b) RT-6/7): ``z = (L/√d)s``, biased signs.
* :class:`AbsoluteCubeInstance` — spec 000 §5.2 H3, ``(L/√d)‖θ − z‖₁`` (non-smooth, Thm 4.1).
"""

from __future__ import annotations

import math

import numpy as np

from ..data import UserDataset
from ..errors import InputError, check_count, check_positive
from ..losses import L1DistanceLoss, LinearLoss
from ._items import (
    check_rng,
    check_theta,
    check_vector,
    cube_bias,
    signed_cube,
    uniform_sphere,
)
from .base import Instance

__all__ = ["LinearBallInstance", "LinearHypercubeInstance", "AbsoluteCubeInstance"]


class _LinearInstance(Instance):
    """``ℓ(θ; z) = −scale·⟨θ, z⟩`` on ``B(0, radius)`` with item mean ``_mean``."""

    _mean: np.ndarray

    def population_loss(self, theta) -> np.ndarray:
        """``−scale·⟨θ, E z⟩``: ``(..., d)`` → ``(...)``."""
        return -self.loss.scale * (check_theta(theta, self.d) @ self._mean)

    def population_grad(self, theta) -> np.ndarray:
        """``−scale·E z`` (constant), broadcast to ``theta``'s shape."""
        theta = check_theta(theta, self.d)
        return np.broadcast_to(-self.loss.scale * self._mean, theta.shape).copy()

    @property
    def mean(self) -> np.ndarray:
        """Item mean ``E z`` (d,)."""
        return self._mean

    @property
    def theta_star(self) -> np.ndarray:
        """``radius·E z/‖E z‖`` (boundary); 0 when ``E z = 0`` (then every point is optimal)."""
        norm = float(np.linalg.norm(self._mean))
        star = self.radius * self._mean / norm if norm > 0 else np.zeros(self.d)
        star.setflags(write=False)
        return star

    @property
    def optimal_value(self) -> float:
        """``F* = −scale·radius·‖E z‖``."""
        return -self.loss.scale * self.radius * float(np.linalg.norm(self._mean))

    def to_dict(self) -> dict:
        """Parameters, with the item mean as a list."""
        return {**super().to_dict(), "mean": self._mean.tolist()}


class LinearBallInstance(_LinearInstance):
    """Linear loss on a ball, "LIN" of spec 002 §5: ``f(θ; z) = −⟨θ, z⟩`` on ``B(0, radius)``.

    Items ``z = m + (1 − ‖m‖)ξ`` with ``ξ`` uniform on ``S^{d−1}`` (so ``‖z‖ ≤ 1``, ``E z = m``).
    ``F(θ) = −⟨θ, m⟩``, ``θ* = R m/‖m‖``, excess ``R‖m‖ − ⟨θ, m⟩``; ``L = 1``, ``β = 0``.
    Spec default ``m = 0.3 e₁``, ``R = 1``.
    """

    def __init__(self, mean, radius: float = 1.0) -> None:
        self._mean = check_vector(mean, "mean")
        if np.linalg.norm(self._mean) > 1:
            raise InputError(
                "mean must have norm <= 1 (items z = m + (1 − ‖m‖)ξ lie in the unit ball)"
            )
        self.d = self._mean.size
        self.radius = check_positive(radius, "radius")
        self.loss = LinearLoss()

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """Items ``z (n, m, d)``, no labels."""
        n, m = check_count(n, "n"), check_count(m, "m")
        xi = uniform_sphere(check_rng(rng), (n, m), self.d)
        return UserDataset(self._mean + (1.0 - float(np.linalg.norm(self._mean))) * xi)


class LinearHypercubeInstance(_LinearInstance):
    """Linear hypercube on a ball, H1 of spec 000 §5.2: ``f(θ; z) = −⟨z, θ⟩`` on ``B(0, radius)``.

    ``z = (L/√d)·s``, independent ``s_k ∈ {±1}`` with ``P(s_k = ν_k) = (1 + α_k)/2``
    (``alpha`` the signal, scalar or (d,); ``signs`` ν default all +1).  ``E z = (L/√d)αν``,
    ``θ* = radius·ν/√d`` for scalar α > 0 (generally ``radius·E z/‖E z‖``), ``F* = −radius·‖E z‖``.
    L-Lipschitz, β = 0.  α = 0 is the zero-mean instance of spec 000 §5.3.
    Spec 001's cube items with mean χ are ``alpha = χ√d/L``.
    """

    def __init__(
        self, d: int, alpha=0.0, lipschitz: float = 1.0, radius: float = 1.0, signs=None
    ) -> None:
        self.d = check_count(d, "d")
        self.lipschitz = check_positive(lipschitz, "lipschitz")
        self.radius = check_positive(radius, "radius")
        self._bias = cube_bias(self.d, alpha, signs)
        self._mean = self.lipschitz / math.sqrt(self.d) * self._bias
        self._mean.setflags(write=False)
        self.loss = LinearLoss()

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """Items ``z (n, m, d)``."""
        n, m = check_count(n, "n"), check_count(m, "m")
        s = signed_cube(check_rng(rng), (n, m), (1.0 + self._bias) / 2.0)
        return UserDataset(self.lipschitz / math.sqrt(self.d) * s)

    def user_means(self, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
        """Exact law of the users' item means ``(n, d)``: ``(L/√d)(2·Binomial(m, p_k) − m)/m`` (spec
        000 §5.2)."""
        n, m = check_count(n, "n"), check_count(m, "m")
        counts = check_rng(rng).binomial(m, (1.0 + self._bias) / 2.0, size=(n, self.d))
        return self.lipschitz / math.sqrt(self.d) * (2.0 * counts - m) / m

    def normalised_risk(self, theta) -> np.ndarray:
        """``r = excess/(radius·‖E z‖)`` ∈ [0, 2]: 1 for the zero output and for chance (spec 000
        §5.2)."""
        scale = self.radius * float(np.linalg.norm(self._mean))
        if scale == 0:
            raise InputError("normalised_risk needs a non-zero signal alpha")
        return self.excess_risk(theta) / scale


class AbsoluteCubeInstance(Instance):
    """Non-smooth absolute-deviation cube, H3 of spec 000 §5.2 (for Thm 4.1).

    ``f(θ, z) = (L/√d)Σ_k |θ_k − z_k|`` (:class:`~dpclaims.losses.L1DistanceLoss`),
    ``z_k ∈ {−a, +a}``, ``a = 1/√d``, ``P(z_k = ν_k a) = (1 + α)/2``; domain ``B(0, radius)``
    (default 2, containing ``θ* = aν`` of norm 1).  With ``p_k = P(z_k = +a)``:
    ``F(θ) = (L/√d)Σ_k [p_k|θ_k − a| + (1 − p_k)|θ_k + a|]`` — per coordinate, with
    ``y = ν_kθ_k``, the excess is ``α(a − y)`` on ``|y| ≤ a``, ``y − a`` above and
    ``−y − a + 2aα`` below (times L/√d).
    """

    def __init__(
        self, d: int, alpha: float = 0.0, lipschitz: float = 1.0, radius: float = 2.0, signs=None
    ) -> None:
        self.d = check_count(d, "d")
        self.alpha = check_positive(alpha, "alpha", allow_zero=True)
        if self.alpha > 1:
            raise InputError(f"alpha must lie in [0, 1], got {alpha!r}")
        self.lipschitz = check_positive(lipschitz, "lipschitz")
        self.radius = check_positive(radius, "radius")
        if self.radius < 1:
            raise InputError("radius must be >= 1 so the ball contains the minimiser aν (norm 1)")
        self._bias = cube_bias(self.d, self.alpha, signs)
        self.a = 1.0 / math.sqrt(self.d)
        self.loss = L1DistanceLoss(scale=self.lipschitz)

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """Items ``z (n, m, d)`` in ``{±a}^d``."""
        n, m = check_count(n, "n"), check_count(m, "m")
        return UserDataset(self.a * signed_cube(check_rng(rng), (n, m), (1.0 + self._bias) / 2.0))

    def population_loss(self, theta) -> np.ndarray:
        """Closed form ``(L/√d)Σ_k [p_k|θ_k − a| + (1 − p_k)|θ_k + a|]``."""
        theta = check_theta(theta, self.d)
        p = (1.0 + self._bias) / 2.0
        per = p * np.abs(theta - self.a) + (1.0 - p) * np.abs(theta + self.a)
        return self.lipschitz / math.sqrt(self.d) * np.sum(per, axis=-1)

    def population_grad(self, theta) -> np.ndarray:
        """A subgradient ``(L/√d)[p_k sign(θ_k − a) + (1 − p_k) sign(θ_k + a)]`` (0 at kinks)."""
        theta = check_theta(theta, self.d)
        p = (1.0 + self._bias) / 2.0
        return (
            self.lipschitz
            / math.sqrt(self.d)
            * (p * np.sign(theta - self.a) + (1 - p) * np.sign(theta + self.a))
        )

    @property
    def theta_star(self) -> np.ndarray:
        """``aν``, the coordinate-wise median (``a·1`` when α = 0: then all of ``[−a, a]^d`` is
        optimal)."""
        star = self.a * np.sign(self._bias + (self._bias == 0))
        star.setflags(write=False)
        return star
