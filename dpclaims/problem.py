"""The problem class the five papers share, as one value.

Every reference algorithm's ``from_theorem(problem, *, ...)`` takes a :class:`Problem`
first and only its own knobs (schedules, constants, variants) as keywords: the
quantities a theorem is stated in (n, m, d, ε, δ, the loss's constants, the domain)
travel together, so they cannot be passed in the wrong order.

Example
-------
>>> from dpclaims.problem import Problem
>>> p = Problem(n=1000, m=10, d=5, epsilon=1.0, delta=1e-6, lipschitz=1.0, radius=1.0)
>>> p.replace(n=2000).n
2000
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from .errors import check_count, check_delta, check_epsilon, check_positive

__all__ = ["Problem"]


@dataclass(frozen=True, kw_only=True)
class Problem:
    """A private optimisation problem: data shape, privacy target and loss class.

    Parameters
    ----------
    n : int
        Number of users (or samples, at item level; ``m = 1``).
    epsilon : float
        Privacy target ε > 0.
    m : int
        Items per user (1 at item level).
    d : int
        Dimension of the parameter.
    delta : float
        Privacy target δ in [0, 1) (0 for pure DP).
    lipschitz : float
        Lipschitz constant L of the loss (of its gradient's bound, for smooth losses).
    smoothness : float or None
        Smoothness β ≥ 0 (gradient Lipschitz constant; 0 for a linear loss); None when the
        class is non-smooth.
    strong_convexity : float
        Strong-convexity modulus μ ≥ 0 (0: convex or non-convex, as the paper says).
    radius : float
        Radius R of the constraint set (a ball); ``math.inf`` when unconstrained.
    loss : object or None
        The loss the algorithm optimises (a :mod:`dpclaims.losses` object), when fixed.
    """

    n: int
    epsilon: float
    m: int = 1
    d: int = 1
    delta: float = 0.0
    lipschitz: float = 1.0
    smoothness: float | None = None
    strong_convexity: float = 0.0
    radius: float = math.inf
    loss: Any = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "n", check_count(self.n, "n"))
        set_(self, "m", check_count(self.m, "m"))
        set_(self, "d", check_count(self.d, "d"))
        set_(self, "epsilon", check_epsilon(self.epsilon))
        set_(self, "delta", check_delta(self.delta))
        set_(self, "lipschitz", check_positive(self.lipschitz, "lipschitz"))
        if self.smoothness is not None:
            set_(self, "smoothness", check_positive(self.smoothness, "smoothness", allow_zero=True))
        set_(
            self,
            "strong_convexity",
            check_positive(self.strong_convexity, "strong_convexity", allow_zero=True),
        )
        set_(self, "radius", check_positive(self.radius, "radius", allow_inf=True))

    @property
    def samples(self) -> int:
        """Total number of items, n·m."""
        return self.n * self.m

    def replace(self, **changes: Any) -> Problem:
        """A copy with ``changes`` applied (and validated), e.g. ``p.replace(n=2 * p.n)``."""
        return dataclasses.replace(self, **changes)
