"""The small statistics the claims' experiments share: paired t-tests, Holm's correction,
confidence intervals (a Gaussian shift, binomial log ratios, a Gaussian scale, a mean, an
exceedance fraction) and a pooled chi-square goodness-of-fit test; and the binomial CDF
without its distribution wrapper's cost (the audit's reach calls it thousands of times).

Each interval is returned as ``(estimate, lower, upper)``, the shape a
:class:`~dpclaims.claims.standard.ValueExperiment` compares against an expected value;
two-sided levels: ``confidence = 0.99`` puts 0.5% in each tail.

Scores in, numbers out: the functions take arrays and return p-values or intervals; deciding a
verdict from them is the job of the experiment that asks the question.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .errors import InputError, check_confidence, check_count

try:  # the boost function scipy.stats.binom.cdf evaluates (where SciPy keeps it)
    from scipy.special._ufuncs import _binom_cdf
except ImportError:  # pragma: no cover - older SciPy: the public wrapper
    _binom_cdf = None

__all__ = [
    "paired_pvalue",
    "holm",
    "gaussian_shift",
    "log_ratio_interval",
    "std_ratio_interval",
    "mean_interval",
    "exceedance_interval",
    "pooled_chisquare_pvalue",
    "binom_cdf",
]


def binom_cdf(k, n, p) -> np.ndarray:
    """``scipy.stats.binom.cdf(k, n, p)``, value for value, for integer ``n ≥ 0`` and ``p`` in
    [0, 1] (broadcast together): 0 below the support, 1 from ``n`` on, SciPy's boost function
    between; without the distribution wrapper's argument checks, which cost ~0.1 ms a call
    (most of :func:`dpclaims.audit.reach.reach`'s time in a small audit)."""
    if _binom_cdf is None:  # pragma: no cover
        return stats.binom.cdf(k, n, p)
    k, n, p = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, n, p)))
    inside = np.clip(_binom_cdf(np.floor(k), n, p), 0.0, 1.0)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, inside))


def paired_pvalue(a, b) -> float:
    """One-sided paired t-test of H1 "``a`` is lower than ``b`` on average": ``a (k,)``,
    ``b (k,)`` paired samples (k ≥ 2) → p-value (``scipy.stats.ttest_rel``, df = k − 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise InputError(
            f"a and b must be paired 1-D samples of the same length >= 2, got shapes "
            f"{a.shape} and {b.shape}"
        )
    return float(stats.ttest_rel(a, b, alternative="less").pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values, ``(m,)`` → ``(m,)``.

    statsmodels' ``multipletests(method="holm")`` values (tested), without the
    ``gc.collect()`` it runs on every call (50 ms; calibration tests call this thousands of
    times).  NaN p-values sort last and stay NaN.
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(
        np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))), 1.0
    )
    return adjusted


def gaussian_shift(s0, s1, *, confidence: float = 0.99) -> tuple[float, float, float]:
    """The standardised mean shift ``μ̂ = (mean(s0) − mean(s1))/s_pooled`` of two equal-size
    samples ``s0 (n,)``, ``s1 (n,)`` and its two-sided normal-approximation interval.

    For Gaussian samples with equal variance, ``Var μ̂ ≈ 2/n + μ²/(4n)``.  Returns
    ``(μ̂, low, high)``.
    """
    s0, s1 = np.asarray(s0, dtype=float), np.asarray(s1, dtype=float)
    if s0.shape != s1.shape or s0.ndim != 1 or s0.size < 2:
        raise InputError(
            f"s0 and s1 must be 1-D samples of the same length >= 2, got shapes "
            f"{s0.shape} and {s1.shape}"
        )
    confidence = check_confidence(confidence)
    trials = s0.size
    pooled = math.sqrt((s0.var(ddof=1) + s1.var(ddof=1)) / 2)
    mu_hat = (s0.mean() - s1.mean()) / pooled
    half = stats.norm.ppf((1 + confidence) / 2) * math.sqrt(2 / trials + mu_hat**2 / (4 * trials))
    return mu_hat, mu_hat - half, mu_hat + half


def _tails(confidence: float) -> tuple[float, float]:
    """Lower and upper tail quantile levels of a two-sided interval (exact for decimal levels)."""
    confidence = check_confidence(confidence)
    return round(1.0 - confidence, 12) / 2.0, (1.0 + confidence) / 2.0


def log_ratio_interval(
    hits0: int, hits1: int, n0: int, n1: int, *, confidence: float = 0.99
) -> tuple[float, float, float]:
    """``ln(p1/p0)`` of two binomial proportions ``hits/n`` with Katz's log interval.

    Needs at least one hit on each side (the log ratio of an empty count is not finite).
    """
    n0, n1 = check_count(n0, "n0"), check_count(n1, "n1")
    hits0 = check_count(hits0, "hits0", minimum=1, example=max(1, n0 // 10))
    hits1 = check_count(hits1, "hits1", minimum=1, example=max(1, n1 // 10))
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
    """Mean of ``values (k,)``, k >= 2, with its Student-t interval."""
    values = np.asarray(values, dtype=np.float64)
    check_count(values.size, "len(values)", minimum=2)
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
