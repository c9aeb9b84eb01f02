"""A one-run bound that assumes the mechanism's privacy curve lies in a known family.

Xiang, Wang, Xiao, Tian, Wang (2025, "Tight Privacy Audit in One Run", arXiv:2509.08704) test
the parameter of a known family of mechanisms: here the Poisson-subsampled Gaussian, whose
included canary scores ``N(μ, 1)`` with probability ``q`` and ``N(0, 1)`` otherwise (an excluded
canary ``N(0, 1)``); ``q = 1`` is the Gaussian family, μ-GDP.  With ``r`` guesses on ``n``
independent canaries (each included with probability 1/2), ``u`` mistakes have

    P[T <= u] = E_W[BinCDF(u; r, γ̄(W))],  W ~ Beta(n - r, r + 1)

(``r = n``: ``Binomial(n, E γ)``), ``γ̄(w)`` the mean error ``1 / (1 + e^{|L|})`` of the most
confident guesses above mixture quantile ``w`` (``L`` the privacy loss), computed as in their
code (``onerun/tail.py``, ``profile.py``): a grid of 100 000 cells over ±14 of the scores, a
20 001-node quadrature of ``W`` over ±18 standard deviations.  The bound is the largest μ
rejected at ``1 - confidence`` (bisection, the conservative end) and its ε at δ.

It is valid only if the mechanism lies in the family, with independent canaries: a result
computed under it carries that assumption and words its verdict as conditional on it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from ..errors import InputError, check_choice, check_confidence
from ..gdp import gdp_epsilon

__all__ = [
    "FAMILIES",
    "privacy_loss",
    "family_profile",
    "profile_p_value",
    "family_p_value",
    "family_mu",
    "family_epsilon",
    "subsampled_gaussian_delta",
    "subsampled_gaussian_epsilon",
]

FAMILIES = ("gaussian",)
"""Families a one-run audit may assume (``family=``): ``"gaussian"``, μ-GDP."""

_MU_RANGE = (0.0, 32.0)
_BISECTION_STEPS = 40


def privacy_loss(x: np.ndarray, mu: float, q: float) -> np.ndarray:
    """``log dQ/dP`` of ``Q = (1 - q) N(0, 1) + q N(μ, 1)`` against ``P = N(0, 1)``."""
    tilt = mu * x - mu * mu / 2.0
    return tilt if q == 1.0 else np.logaddexp(math.log1p(-q), math.log(q) + tilt)


@lru_cache(maxsize=8)
def family_profile(mu: float, q: float, cells: int = 100_000, span: float = 14.0):
    """Knots ``w`` (mixture quantiles by decreasing error), ``G(w)`` the error mass above ``w``,
    and ``E γ``: Xiang et al.'s ``ScoreProfile`` of the family member ``(μ, q)``."""
    edges = np.linspace(-span - mu, mu + span, cells + 1)
    x = 0.5 * (edges[:-1] + edges[1:])
    loss = privacy_loss(x, mu, q)
    density = stats.norm.pdf(x)
    mass = 0.5 * (density + density * np.exp(np.clip(loss, -700.0, 700.0)))
    mass /= mass.sum()
    gamma = np.exp(-np.abs(loss) - np.logaddexp(0.0, -np.abs(loss)))
    order = np.argsort(-gamma, kind="stable")
    gamma, mass = gamma[order], mass[order]
    error = gamma * mass
    above = error[::-1].cumsum()[::-1] - error
    knots = np.concatenate([[0.0], np.cumsum(mass)])
    return knots, np.concatenate([[error.sum()], above]), float(error.sum())


def family_p_value(u: int, r: int, n: int, mu: float, *, q: float = 1.0) -> float:
    """``P[T <= u]``: ``u`` or fewer mistakes of ``r`` guesses on ``n`` canaries under the family
    member ``(μ, q)``."""
    return profile_p_value(family_profile(float(mu), float(q)), u, r, n)


def profile_p_value(profile, u: int, r: int, n: int) -> float:
    """``P[T <= u]`` under the member whose :func:`family_profile` is ``profile`` (Xiang et
    al.'s ``exact_tail``)."""
    knots, errors, mean_error = profile
    if u >= r:
        return 1.0
    if r == n:
        return float(stats.binom.cdf(u, r, mean_error))
    a, b = float(n - r), float(r + 1)
    mean, sd = a / (a + b), math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    w = np.linspace(max(1e-15, mean - 18.0 * sd), min(1 - 1e-15, mean + 18.0 * sd), 20_001)
    log_density = (a - 1) * np.log(w) + (b - 1) * np.log1p(-w) - special.betaln(a, b)
    rate = np.interp(w, knots, errors) / np.maximum(1.0 - w, np.finfo(float).tiny)
    log_cdf = np.zeros_like(w)
    positive = rate > 0
    log_cdf[positive] = stats.binom.logcdf(u, r, rate[positive])
    terms = log_density + log_cdf
    top = terms.max()
    if top == -np.inf:
        return 0.0
    return min(1.0, float(np.exp(top) * np.trapezoid(np.exp(terms - top), w)))


def _check_family_counts(m: int, r: int, v: int, q: float) -> None:
    if not 0 <= v <= r <= m or r < 1:
        raise InputError(f"need correct v <= guesses r <= canaries m, r >= 1, got {v}, {r}, {m}")
    if not 0.0 < q <= 1.0:
        raise InputError(f"q (the family's sampling rate) must be in (0, 1], got {q!r}")


def family_mu(m: int, r: int, v: int, confidence: float = 0.95, *, q: float = 1.0) -> float:
    """Largest μ (bisection, rounded down) of the family ``q`` rejected at ``1 - confidence`` by
    ``v`` correct of ``r`` guesses on ``m`` canaries; 0 if none.  Valid only for a mechanism of
    the family (``q = 1``: μ-GDP) with independent canaries."""
    _check_family_counts(m, r, v, q)
    significance = 1.0 - check_confidence(confidence)

    def rejects(mu: float) -> bool:
        return family_p_value(r - v, r, m, mu, q=q) < significance

    low, high = _MU_RANGE
    if not rejects(1e-9):
        return 0.0
    if rejects(high):
        return high
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if rejects(mid) else (low, mid)
    return low


def subsampled_gaussian_delta(epsilon: float, mu: float, q: float) -> float:
    """The larger hockey-stick divergence at ``epsilon`` of ``(Q, P)`` and ``(P, Q)``, exact."""
    t = (math.log((math.exp(epsilon) - 1.0 + q) / q) + mu * mu / 2.0) / mu
    forward = (1 - q - math.exp(epsilon)) * stats.norm.sf(t) + q * stats.norm.sf(t - mu)
    backward = 0.0
    low = math.exp(-epsilon) - 1.0 + q  # P over Q: L(x) < -ε iff x < s, possible when low > 0
    if low > 0:
        s = (math.log(low / q) + mu * mu / 2.0) / mu
        backward = stats.norm.cdf(s) - math.exp(epsilon) * (
            (1 - q) * stats.norm.cdf(s) + q * stats.norm.cdf(s - mu)
        )
    return max(forward, backward, 0.0)


def subsampled_gaussian_epsilon(mu: float, q: float, delta: float) -> float:
    """ε at ``delta`` of the family member ``(μ, q)`` (0 when μ is 0 or δ already holds)."""
    if mu <= 0 or subsampled_gaussian_delta(0.0, mu, q) <= delta:
        return 0.0
    return optimize.brentq(
        lambda e: subsampled_gaussian_delta(e, mu, q) - delta, 0.0, 200.0, xtol=1e-10
    )


def family_epsilon(
    m: int,
    r: int,
    v: int,
    delta: float,
    confidence: float = 0.95,
    *,
    family: str = "gaussian",
) -> tuple[float, float]:
    """``(μ, ε at delta)`` of :func:`family_mu` for ``family`` (of :data:`FAMILIES`)."""
    check_choice(family, FAMILIES, "family")
    mu = family_mu(m, r, v, confidence)
    return mu, gdp_epsilon(mu, delta)
