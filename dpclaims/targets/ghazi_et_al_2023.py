"""Audit setups of user-level private convex optimization (Ghazi et al. 2023, paper
``ghazi-et-al-2023``; spec 001 §7(a)), with the exact ε of their pairs.

* :func:`tie_break_target` — Algorithm 1 (DelOutputPert) with the two-camp f on
  :func:`~dpclaims.hardinstances.ghazi_et_al_2023.tie_break_pair`, released through the
  white-box :class:`LikelihoodRatioChannel`; :func:`tie_break_epsilon` its exact ε.
* :func:`sc_bottom_mechanism`, :func:`outlier_means_pair` — SCOutputPert's ⊥ channel (Thm 3.1,
  Appendix C) on the outlier pair x^(k) vs x^(k−1).
* :func:`bottom_gaussian_pair_epsilon` — the exact ε of a ⊥-or-Gaussian release, in closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special

from dpclaims.algorithms.ghazi_et_al_2023 import (
    BottomChannel,
    DelOutputPert,
    SCOutputPert,
)
from dpclaims.data import GroupedMeans, neighbour_distance
from dpclaims.errors import InputError
from dpclaims.hardinstances.ghazi_et_al_2023 import (
    TwoCampCount,
    tie_break_pair,
)
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget

__all__ = [
    "BOTTOM_USERS",
    "BOTTOM_PROBLEM",
    "TIE_PROBLEM",
    "SC_USERS",
    "SC_ITEMS",
    "bottom_gaussian_pair_epsilon",
    "tie_break_epsilon",
    "best_tie_break_s",
    "LikelihoodRatioChannel",
    "tie_break_target",
    "sc_bottom_mechanism",
    "outlier_means_pair",
    "bottom_channel_target",
]


def _hockey_stick(eps: float, p: float, q: float, mu: float) -> float:
    """``sup_E P(E) − e^ε Q(E)`` for P = ⊥ w.p. p else N(μ, 1), Q = ⊥ w.p. q else N(0, 1)."""
    out = max(p - math.exp(eps) * q, 0.0)
    if mu == 0:
        return out + max((1 - p) - math.exp(eps) * (1 - q), 0.0)
    t = (eps + math.log((1 - q) / (1 - p))) / mu + mu / 2  # (1−p)φ(x−μ) > e^ε(1−q)φ(x) ⟺ x > t
    # Φ̄(x) as scipy.stats.norm.sf computes it (ndtr(−x)), without its wrapper's cost per call
    return out + (1 - p) * special.ndtr(mu - t) - math.exp(eps) * (1 - q) * special.ndtr(-t)


def bottom_gaussian_pair_epsilon(p: float, q: float, mu: float, delta: float) -> float:
    """Exact ε at ``delta`` of the pair (⊥ w.p. p, else N(a, σ²)) vs (⊥ w.p. q, else N(b, σ²)),
    ``mu = |a − b|/σ``: the smallest ε whose hockey-stick divergence, in both directions, is
    at most δ (the ⊥ atom and the two Gaussians in closed form; 0 when δ is reached at ε=0)."""

    def excess(eps):
        return max(_hockey_stick(eps, p, q, mu), _hockey_stick(eps, q, p, mu)) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 8.0
    while excess(hi) > 0:
        if hi >= 512:
            return math.inf  # beyond any ε worth resolving (e^ε overflows past ~700)
        hi *= 2
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-12))


BOTTOM_USERS = 20


BOTTOM_PROBLEM = Problem(n=BOTTOM_USERS, epsilon=1.0, delta=1e-3)
"""The ⊥-channel audits of spec §7(a): n = 20 users at (ε, δ) = (1, 1e-3)."""


def tie_break_epsilon(mech: DelOutputPert, s: int) -> float:
    """Exact ε of Algorithm 1 (f = :class:`TwoCampCount` with unit Δ) on
    :func:`tie_break_pair` ``(s)``: Pr[⊥] = CDF(s−1) vs CDF(s), releases (2s+3)Δ apart."""
    p, q = float(mech.tdlap.cdf(s - 1)), float(mech.tdlap.cdf(s))
    return bottom_gaussian_pair_epsilon(p, q, (2 * s + 3) * mech.Delta / mech.sigma, mech.delta)


def best_tie_break_s(mech: DelOutputPert) -> tuple[int, float]:
    """The s maximising :func:`tie_break_epsilon` (s < 2κ), and that ε."""
    eps, s = max((tie_break_epsilon(mech, s), s) for s in range(1, 2 * mech.kappa))
    return s, eps


@dataclass(frozen=True)
class LikelihoodRatioChannel:
    """Post-processing of a ``[⊥ flag, θ (d = 1)]`` release into its exact log-likelihood
    ratio between two outcome laws (⊥ w.p. p0, else N(a0, σ²)) and (⊥ w.p. p1, else
    N(a1, σ²)): a white-box statistic, the Neyman–Pearson optimal score of the pair."""

    mechanism: Any
    p0: float
    p1: float
    a0: float
    a1: float
    sigma: float

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        out = self.mechanism(data, rng, trials)
        bottom, theta = out[:, 0] > 0.5, out[:, 1]
        gauss = ((theta - self.a0) ** 2 - (theta - self.a1) ** 2) / (2 * self.sigma**2)
        llr = np.where(
            bottom,
            math.log(self.p1 / self.p0),
            math.log((1 - self.p1) / (1 - self.p0)) + gauss,
        )
        return llr[:, None]


TIE_PROBLEM = BOTTOM_PROBLEM
"""Algorithm 1 with the two-camp f at (ε, δ) = (1, 1e-3) (κ = 18), Δ = 1."""


def tie_break_target() -> tuple[AuditTarget, int, float]:
    """The two-camp audit target of ``ghazi23.thm33.deloutputpert_dp``, its s and exact ε."""
    mech = DelOutputPert.from_theorem(TIE_PROBLEM, Delta=1.0, f=TwoCampCount(unit=1.0))
    s, eps = best_tie_break_s(mech)
    d0, d1 = tie_break_pair(s)
    channel = LikelihoodRatioChannel(
        mech,
        p0=float(mech.tdlap.cdf(s - 1)),
        p1=float(mech.tdlap.cdf(s)),
        a0=-(s + 2.0),
        a1=s + 1.0,
        sigma=mech.sigma,
    )
    return AuditTarget(mechanism=channel, d0=d0, d1=d1, claim=mech.privacy_claim), s, eps


SC_USERS = 120


SC_ITEMS = 10**12


def sc_bottom_mechanism() -> SCOutputPert:
    """Exact-path SCOutputPert at (1, 1e-5) whose formula Δ is below the outlier shift
    (m = 1e12 virtual items)."""
    problem = Problem(
        n=SC_USERS,
        m=SC_ITEMS,
        epsilon=1.0,
        delta=1e-5,
        lipschitz=2.0,
        strong_convexity=1.0,
        radius=1.0,
    )
    return SCOutputPert.from_theorem(problem, beta=0.01, interior=True, path="exact")


def outlier_means_pair(n: int, m: int, k: int) -> tuple[GroupedMeans, GroupedMeans]:
    """x^(k) vs x^(k−1) as per-user means (one row differs: a replace-one-user pair)."""
    x = np.zeros((n, 1))
    x[:k] = 1.0
    x1 = x.copy()
    x1[k - 1] = 0.0
    d0, d1 = GroupedMeans.per_user(x, m), GroupedMeans.per_user(x1, m)
    if neighbour_distance(d0, d1) != 1:
        raise InputError("the pair must differ in exactly one user")
    return d0, d1


def bottom_channel_target(mech: SCOutputPert, k: int) -> AuditTarget:
    """``mech``'s ⊥ channel on :func:`outlier_means_pair` ``(SC_USERS, SC_ITEMS, k)``."""
    d0, d1 = outlier_means_pair(SC_USERS, SC_ITEMS, k)
    return AuditTarget(mechanism=BottomChannel(mech), d0=d0, d1=d1, claim=mech.privacy_claim)
