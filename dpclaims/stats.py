"""Small statistical tests the claim checks share: paired t-tests, Holm's correction, a
standardised Gaussian shift with its confidence interval.

Scores in, numbers out: the functions take arrays and return p-values or intervals; deciding a
verdict from them is the job of the experiment that asks the question.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .errors import InputError, check_confidence

__all__ = ["paired_pvalue", "holm", "gaussian_shift"]


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
