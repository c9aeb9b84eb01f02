"""Confidence bounds on error rates and the ε lower bound they certify.

A test that says "d1" on an event ``E`` has false-positive rate
``FPR = P_{d0}(E)`` and false-negative rate ``FNR = P_{d1}(E^c)``.  If the
mechanism is (ε, δ)-DP then ``P_{d1}(E) <= e^ε P_{d0}(E) + δ``, i.e.

    ε >= log((1 - δ - FNR) / FPR)

(the hypothesis-testing view of DP: Kairouz, Oh, Viswanath 2015, Theorem 2.1).  Replacing
the two rates by upper confidence bounds that hold jointly with probability
``confidence`` turns the right-hand side into a certified lower bound on ε.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import InputError, check_choice, check_confidence, check_count, check_delta

__all__ = [
    "CI_METHODS",
    "rate_upper",
    "epsilon_from_rates",
    "epsilon_from_counts",
    "per_bound_alpha",
    "epsilon_ceiling",
    "trials_for_epsilon",
    "trials_to_certify",
]

CI_METHODS = ("clopper-pearson", "jeffreys")


def rate_upper(count, n, alpha, ci: str = "clopper-pearson") -> np.ndarray:
    """One-sided upper confidence bound at level ``1 - alpha`` on a binomial rate.

    Parameters
    ----------
    count : array (...,) of successes, ``0 <= count <= n`` (non-integer counts are
        accepted: they are used for *predicted* bounds at a hypothetical sample size)
    n : array (...,) or int, number of trials (> 0)
    alpha : float in (0, 1), the probability that the bound fails
    ci : "clopper-pearson" (exact, conservative: the ``1 - alpha`` quantile of
        Beta(count + 1, n - count)) or "jeffreys" (Beta(count + 1/2, n - count + 1/2))

    Returns
    -------
    upper : float64 array, broadcast shape of ``count`` and ``n``; never below ``count / n``,
        1 where ``count == n``.
    """
    check_choice(ci, CI_METHODS, "ci")
    count = np.asarray(count, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    count, n = np.broadcast_arrays(count, n)
    shift = 1.0 if ci == "clopper-pearson" else 0.5
    full = count >= n
    upper = np.ones(count.shape)
    if np.any(~full):
        k, size = count[~full], n[~full]
        upper[~full] = stats.beta.ppf(1.0 - alpha, k + shift, size - k + (1.0 - shift))
    # Jeffreys at a large alpha can fall below the point estimate; raising it keeps coverage.
    return np.maximum(upper, count / n)


def epsilon_from_rates(fpr_upper, fnr_upper, delta: float) -> np.ndarray:
    """``max(0, log((1 - δ - FNR_upper) / FPR_upper))``, elementwise; 0 where the numerator is ≤ 0.

    Parameters
    ----------
    fpr_upper, fnr_upper : arrays (...,) in [0, 1] (upper bounds on the two error rates)
    delta : float in [0, 1)
    """
    fpr_upper = np.asarray(fpr_upper, dtype=np.float64)
    fnr_upper = np.asarray(fnr_upper, dtype=np.float64)
    numerator = 1.0 - delta - fnr_upper
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(numerator / fpr_upper)
    eps = np.where((numerator > 0) & (fpr_upper > 0), eps, np.where(numerator > 0, np.inf, 0.0))
    return np.maximum(eps, 0.0)


def per_bound_alpha(confidence: float, bounds_per_dataset: int = 1) -> float:
    """Failure probability of each rate bound so that all of them hold jointly at ``confidence``.

    The false-positive counts come from one dataset's trials and the false-negative
    counts from the other's, drawn with independent seeds, so the two families of
    bounds are independent: each family is given coverage ``sqrt(confidence)``
    (product = ``confidence``).  Inside a family of ``bounds_per_dataset`` bounds a
    Bonferroni (union) bound splits the failure probability ``1 - sqrt(confidence)``.
    """
    confidence = check_confidence(confidence)
    if bounds_per_dataset < 1:
        raise InputError(f"bounds_per_dataset must be >= 1, got {bounds_per_dataset!r}")
    return (1.0 - math.sqrt(confidence)) / bounds_per_dataset


def epsilon_from_counts(
    false_positives,
    n_negative,
    false_negatives,
    n_positive,
    delta: float = 0.0,
    confidence: float = 0.95,
    ci: str = "clopper-pearson",
) -> np.ndarray:
    """Certified ε lower bound from the error counts of one fixed test.

    The test (event and direction) must have been fixed independently of these
    counts.  Each rate bound fails with probability :func:`per_bound_alpha`
    ``(confidence)``, so the returned bound holds with probability ``confidence``.

    Parameters
    ----------
    false_positives : array (...,) of negatives (trials of the "negative" dataset) inside the event
    n_negative : int or array (...,), trials of the negative dataset
    false_negatives : array (...,) of positives outside the event
    n_positive : int or array (...,), trials of the positive dataset
    delta : float in [0, 1)
    confidence : float in (0, 1)
    ci : "clopper-pearson" or "jeffreys"

    Returns
    -------
    epsilon_lower : float64 array (...,), ≥ 0.
    """
    delta = check_delta(delta)
    alpha = per_bound_alpha(confidence)
    fpr_u = rate_upper(false_positives, n_negative, alpha, ci)
    fnr_u = rate_upper(false_negatives, n_positive, alpha, ci)
    return epsilon_from_rates(fpr_u, fnr_u, delta)


def epsilon_ceiling(
    n_certify: int, *, confidence: float = 0.95, delta: float = 0.0, bounds_per_dataset: int = 1
) -> float:
    """The largest ε an audit with ``n_certify`` certification trials per dataset can certify.

    The best possible outcome is a test with no error at all (0 false positives of
    ``n_certify``, 0 false negatives of ``n_certify``).  The one-sided Clopper–Pearson
    bound of a zero count is ``u = 1 - α^(1/n)``, with ``α`` =
    :func:`per_bound_alpha` ``(confidence, bounds_per_dataset)``, so the ceiling is

        ε_max = log((α^(1/n) - δ) / (1 - α^(1/n)))  ≈  log(n / ln(1/α))

    (clipped at 0, like every bound here).  No audit certifies more, whatever the mechanism:
    a claim above it cannot be refuted with these trials (see :func:`trials_for_epsilon`).
    ``bounds_per_dataset`` is the number of certified tests (2 × grid size for the
    Bonferroni grid, 1 for a test chosen on calibration data).
    """
    n = check_count(n_certify, "n_certify")
    delta = check_delta(delta)
    alpha = per_bound_alpha(confidence, bounds_per_dataset)
    keep = alpha ** (1.0 / n)  # 1 - (upper bound of a zero count)
    if keep <= delta:
        return 0.0
    return max(0.0, math.log((keep - delta) / -math.expm1(math.log(alpha) / n)))


def trials_for_epsilon(
    epsilon: float, *, confidence: float = 0.95, delta: float = 0.0, bounds_per_dataset: int = 1
) -> int:
    """The fewest certification trials per dataset whose ceiling exceeds ``epsilon``.

    Inverts :func:`epsilon_ceiling`: with ``u = (1 - δ) / (1 + e^ε)``, the ceiling exceeds ε once
    ``1 - α^(1/n) < u``, i.e. ``n > ln α / ln(1 - u)``.  A necessary count, enough
    only for a mechanism the audit separates perfectly (ε = ∞ on the pair); a finite
    violation needs more (:func:`trials_to_certify`).
    """
    if not (isinstance(epsilon, (int, float)) and epsilon >= 0 and math.isfinite(epsilon)):
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    delta = check_delta(delta)
    alpha = per_bound_alpha(confidence, bounds_per_dataset)
    u = (1.0 - delta) / (1.0 + math.exp(epsilon))
    return int(math.floor(math.log(alpha) / math.log1p(-u))) + 1


def trials_to_certify(
    epsilon: float,
    fpr: float,
    fnr: float,
    *,
    confidence: float = 0.95,
    delta: float = 0.0,
    power: float = 0.9,
    ci: str = "clopper-pearson",
    bounds_per_dataset: int = 1,
) -> int | None:
    """Certification trials per dataset at which a fixed test with true error rates ``fpr``,
    ``fnr`` certifies more than ``epsilon`` with probability about ``power``.

    The counts are taken at their pessimistic ``sqrt(power)`` quantiles (normal
    approximation; the two datasets are independent) and put through the same bounds
    as the audit.  None when the test cannot certify ``epsilon`` at any size
    (``log((1 - δ - fnr) / fpr) <= epsilon``) or would need more than 10^15 trials.
    """
    delta = check_delta(delta)
    alpha = per_bound_alpha(confidence, bounds_per_dataset)
    if not (0.0 <= fpr <= 1.0 and 0.0 <= fnr <= 1.0):
        raise InputError(f"fpr and fnr must be rates in [0, 1], got {fpr!r} and {fnr!r}")
    if 1.0 - delta - fnr <= math.exp(epsilon) * fpr:
        return None
    z = float(stats.norm.ppf(math.sqrt(power)))
    grid = np.unique(np.round(np.geomspace(10, 1e15, 2000)))

    def certifies(i: int) -> bool:
        n = grid[i]

        def pessimistic(rate):
            return min(n, n * rate + z * math.sqrt(n * rate * (1.0 - rate)) + (rate > 0))

        bound = epsilon_from_rates(
            rate_upper(pessimistic(fpr), n, alpha, ci),
            rate_upper(pessimistic(fnr), n, alpha, ci),
            delta,
        )
        return float(bound) > epsilon

    # the certified bound grows with n at fixed rates: bisect for the first size that certifies
    if not certifies(len(grid) - 1):
        return None
    lo, hi = -1, len(grid) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if certifies(mid) else (mid, hi)
    return int(grid[hi])
