"""The interface every hard instance implements.

An instance is a data distribution plus a loss and a domain whose population
minimiser and excess risk are known exactly (or with a stated error bound), so
that rate experiments measure the algorithm and not a numerical optimiser.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..data import UserDataset

__all__ = ["Instance"]


class Instance(ABC):
    """A distribution over items, a loss, a domain (ℓ2 ball of ``radius``) and its exact optimum.

    Subclasses set ``loss`` (a :mod:`dpclaims.losses` loss), ``radius`` and ``d``,
    and implement :meth:`sample`, :meth:`population_loss` and :attr:`theta_star`.
    """

    d: int
    radius: float

    @abstractmethod
    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """Draw ``n`` users with ``m`` i.i.d. items each → ``UserDataset`` ``x (n, m, d)``."""

    @abstractmethod
    def population_loss(self, theta: np.ndarray) -> np.ndarray:
        """Exact population loss ``E_z ℓ(θ; z)``: ``theta (..., d)`` → ``(...)``."""

    @property
    @abstractmethod
    def theta_star(self) -> np.ndarray:
        """A population minimiser over the domain, shape ``(d,)``."""

    def excess_risk(self, theta: np.ndarray) -> np.ndarray:
        """``L(θ) − L(θ*)`` for ``theta (trials, d)`` → ``(trials,)``, clipped at 0 against
        round-off."""
        theta = np.asarray(theta, dtype=np.float64)
        gap = self.population_loss(theta) - self.population_loss(self.theta_star)
        return np.maximum(gap, 0.0)

    def to_dict(self) -> dict:
        """Name and parameters for reports."""
        params = {k: v for k, v in vars(self).items() if isinstance(v, (int, float, str, bool))}
        return {"instance": type(self).__name__, **params}
