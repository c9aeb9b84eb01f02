"""Confidence intervals for the value checks of the claims' experiments.

Each returns ``(estimate, low, high)``, the shape
:class:`~dpclaims.claims.standard.ValueExperiment` compares with a bound.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import check_confidence, check_count

__all__ = ["exceedance_interval", "mean_interval"]


def exceedance_interval(
    count: int, trials: int, *, alpha: float = 0.05
) -> tuple[float, float, float]:
    """Fraction ``count/trials`` with its two-sided Clopper-Pearson interval at level 1 − α.

    With no exceedance the interval is the one-sided ``[0, 1 − α^{1/trials}]``.
    """
    trials = check_count(trials, "trials")
    count = check_count(count, "count", minimum=0)
    alpha = check_confidence(alpha, "alpha")
    if count:
        low, high = stats.binomtest(count, trials).proportion_ci(1 - alpha)
    else:
        low, high = 0.0, 1 - alpha ** (1 / trials)
    return count / trials, low, high


def mean_interval(values: np.ndarray, *, level: float) -> tuple[float, float, float]:
    """Mean of ``values (k,)`` ± the one-sided Student-t half-width at ``level`` (each side)."""
    values = np.asarray(values, dtype=np.float64)
    level = check_confidence(level, "level")
    k = check_count(values.size, "len(values)", minimum=2)
    half_width = stats.t.ppf(level, k - 1) * values.std(ddof=1) / math.sqrt(k)
    mean = values.mean()
    return float(mean), float(mean - half_width), float(mean + half_width)
