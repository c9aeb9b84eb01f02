"""The ℓ2-Laplace distribution ``Lap₂(d, b)`` of Lowy 2026 and the mechanism that adds it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.formulas import lowy_claim
from dpclaims.data import UserDataset
from dpclaims.errors import check_count, check_positive, check_trials
from dpclaims.privacy import PrivacyClaim

__all__ = ["unit_directions", "l2_laplace", "L2LaplaceMechanism"]


def unit_directions(rng: np.random.Generator, trials: int, d: int) -> np.ndarray:
    """``trials`` directions uniform on ``S^{d−1}`` (normalized Gaussians) → ``(trials, d)``."""
    direction = rng.standard_normal((trials, d))
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), np.finfo(float).tiny)
    return direction


def l2_laplace(rng: np.random.Generator, trials: int, d: int, scale: float) -> np.ndarray:
    """``Lap₂(d, b)`` draws ``(trials, d)``: ``ξ = R·U``, ``U`` uniform on ``S^{d−1}``,
    ``R ~ Gamma(d, b)`` [H].

    Its density is ∝ ``exp(−‖ξ‖₂/b)`` and ``E‖ξ‖ = d b``; a shift of ℓ2 norm Δ changes the log
    density by at most Δ/b.
    """
    trials, d = check_trials(trials, "trials"), check_count(d, "d")
    scale = check_positive(scale, "scale")
    direction = unit_directions(rng, trials, d)
    return rng.gamma(float(d), scale, size=(trials, 1)) * direction


@dataclass(frozen=True, kw_only=True)
class L2LaplaceMechanism:
    """Release record 0 plus ``Lap₂(d, Δ/ε)``: the ℓ2-Laplace mechanism on its own (spec §7(a)
    sampler audit).

    ε-DP for records at ℓ2 distance ≤ ``sensitivity`` (δ = 0).
    """

    epsilon: float
    sensitivity: float

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return lowy_claim(self.epsilon, "Lap2 mechanism (Lemma 2.4)")

    def noise(self, rng: np.random.Generator, trials: int, d: int) -> np.ndarray:
        """``Lap₂(d, Δ/ε)`` draws ``(trials, d)``."""
        return l2_laplace(rng, trials, d, self.sensitivity / self.epsilon)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        x = data.x[0, 0]
        return x + self.noise(rng, trials, x.size)
