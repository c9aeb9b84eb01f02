"""Gaussian differential privacy (GDP): μ from a trade-off point and μ → (ε, δ).

Dong, Roth, Su (2019/2022), "Gaussian Differential Privacy": a mechanism is μ-GDP
when its trade-off curve lies above ``G_μ(α) = Φ(Φ^{-1}(1 - α) - μ)``.  A test
with rates (FPR, FNR) on the curve ``G_μ`` has ``μ = Φ^{-1}(1 - FPR) - Φ^{-1}(FNR)``.
Corollary 2.13 gives the exact (ε, δ) duality

    δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2),

which :func:`gdp_epsilon` inverts with ``scipy.optimize.brentq``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats

from dpclaims.errors import InputError, check_delta, check_positive

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu", "gdp_mu_of"]


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of a μ-GDP mechanism (Dong, Roth, Su, Corollary 2.13); 0 for μ = 0.

    Computed in log space (``scipy.special.log_ndtr``) so large ε does not overflow.
    """
    mu = check_positive(mu, "mu", allow_zero=True)
    if not math.isfinite(epsilon) or epsilon < 0:
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if mu == 0.0:
        return 0.0
    first = special.log_ndtr(-epsilon / mu + mu / 2.0)
    second = epsilon + special.log_ndtr(-epsilon / mu - mu / 2.0)
    if second >= first:
        return 0.0
    return float(math.exp(first) * -math.expm1(second - first))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with ``gdp_delta(ε, μ) <= δ``: the (ε, δ) guarantee implied by μ-GDP.

    ``δ(ε)`` is strictly decreasing in ε, so the root is found by ``brentq`` on a
    bracket that is doubled until it contains it.  Returns 0 when ``δ ≥ δ(0)``.
    """
    mu = check_positive(mu, "mu", allow_zero=True)
    delta = check_delta(delta)
    if mu == 0.0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    if delta == 0.0:
        return math.inf
    upper = max(1.0, mu * mu)
    while gdp_delta(upper, mu) > delta:
        upper *= 2.0
    return float(
        optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, upper, xtol=1e-12, rtol=1e-12)
    )


def gdp_mu(fpr, fnr) -> np.ndarray:
    """``max(0, Φ^{-1}(1 - FPR) - Φ^{-1}(FNR))``: the μ of the GDP curve through (FPR, FNR).

    Parameters
    ----------
    fpr, fnr : arrays (...,) in [0, 1]; pass *upper* confidence bounds to get a
        conservative μ (0 whenever ``FPR + FNR >= 1``).
    """
    fpr = np.asarray(fpr, dtype=np.float64)
    fnr = np.asarray(fnr, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mu = stats.norm.isf(fpr) - stats.norm.ppf(fnr)
    return np.where(np.isnan(mu), 0.0, np.maximum(mu, 0.0))


def gdp_mu_of(epsilon: float, delta: float) -> float:
    """The μ whose (ε, δ) curve passes through (``epsilon``, ``delta``): ``gdp_delta(ε, μ) = δ``
    (``brentq``; ``δ(ε)`` grows with μ).  The μ-GDP mechanism that is exactly (ε, δ)-DP."""
    if not math.isfinite(epsilon) or epsilon < 0:
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    delta = check_delta(delta)
    if delta == 0.0:
        return 0.0
    upper = 1.0
    while gdp_delta(epsilon, upper) < delta:
        upper *= 2.0
    return float(optimize.brentq(lambda m: gdp_delta(epsilon, m) - delta, 0.0, upper, xtol=1e-12))
