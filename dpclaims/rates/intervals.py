"""Confidence intervals and a goodness-of-fit test for the value checks of claims.

Each interval is returned as ``(estimate, lower, upper)``, the shape a
:class:`~dpclaims.claims.standard.ValueExperiment` compares against an expected value.
Two-sided levels: ``confidence = 0.99`` puts 0.5% in each tail.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import check_confidence

__all__ = ["log_ratio_interval", "std_ratio_interval", "mean_interval", "pooled_chisquare_pvalue"]


def _tails(confidence: float) -> tuple[float, float]:
    """Lower and upper tail quantile levels of a two-sided interval (exact for decimal levels)."""
    confidence = check_confidence(confidence)
    return round(1.0 - confidence, 12) / 2.0, (1.0 + confidence) / 2.0


def log_ratio_interval(
    hits0: int, hits1: int, n0: int, n1: int, *, confidence: float = 0.99
) -> tuple[float, float, float]:
    """``ln(p1/p0)`` of two binomial proportions ``hits/n`` with Katz's log interval."""
    p0, p1 = hits0 / n0, hits1 / n1
    se = math.sqrt((1 - p0) / (n0 * p0) + (1 - p1) / (n1 * p1))
    z = stats.norm.ppf(_tails(confidence)[1])
    est = math.log(p1 / p0)
    return est, est - z * se, est + z * se


def std_ratio_interval(
    samples: np.ndarray, sigma: float, *, confidence: float = 0.99
) -> tuple[float, float, float]:
    """Sample standard deviation of Gaussian ``samples`` over ``sigma``, with its χ² interval."""
    n, var = samples.size, float(np.var(samples, ddof=1))
    lower, upper = _tails(confidence)
    lo = var * (n - 1) / stats.chi2.ppf(upper, n - 1)
    hi = var * (n - 1) / stats.chi2.ppf(lower, n - 1)
    return math.sqrt(var) / sigma, math.sqrt(lo) / sigma, math.sqrt(hi) / sigma


def mean_interval(values: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``values (k,)`` with its Student-t interval."""
    half = (
        stats.t.ppf(_tails(confidence)[1], values.size - 1)
        * values.std(ddof=1)
        / math.sqrt(values.size)
    )
    mean = float(values.mean())
    return mean, mean - half, mean + half


def pooled_chisquare_pvalue(
    counts: np.ndarray, law: np.ndarray, *, min_expected: float = 5.0
) -> float:
    """χ² goodness-of-fit p-value of ``counts (k,)`` against the law ``law (k,)``.

    Cells expected below ``min_expected`` are pooled into one; empty cells are dropped.
    """
    expected = law / law.sum() * counts.sum()
    bins = expected >= min_expected
    o = np.r_[counts[bins], counts[~bins].sum()]
    e = np.r_[expected[bins], expected[~bins].sum()]
    keep = e > 0
    return float(stats.chisquare(o[keep], e[keep] * o[keep].sum() / e[keep].sum()).pvalue)
