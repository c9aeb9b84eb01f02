"""One-run bound from the full ranking of the canary scores, for independent Gaussian-DP canaries.

The one-run bounds of :mod:`.one_run` allow any dependence between canaries and turn the scores
into guesses (the top ones "in", the bottom ones "out", abstaining on the rest), which costs
them most of the ranking.  When the canaries do not interact, a stronger bound uses the whole
ranking, in the spirit of the order-statistic one-run audits of Xiang, Wang, Xiao, Tian and Wang
(2025, "Tight Privacy Audit in One Run", arXiv:2509.08704).  Its assumption
(``assumption="independent-gaussian-dp"``):

    given the inclusion bits, the canary scores are independent; the scores of included
    canaries are i.i.d. ``P``, those of excluded canaries i.i.d. ``Q``, and the pair is
    μ-GDP: its trade-off function is at least ``G_μ(α) = Φ(Φ⁻¹(1 - α) - μ)`` (Dong, Roth, Su
    2022, Definition 2.6).

It holds for the idealised protocol of the one-run literature (scores ``N(μ b, 1)`` for
inclusion bit ``b``; gradient canaries on orthogonal directions).  Where canaries interact (a
black-box final model, canaries sharing directions or batches) it is not implied by μ-GDP of
the mechanism: swapping an included and an excluded canary is only 2μ-GDP (group privacy), so
a pair can be ranked right with probability up to ``Φ(μ)`` instead of ``Φ(μ/√2)``, and the
bound may then exceed the true ε; only :mod:`.one_run`'s bounds hold there.

The statistic is the Mann-Whitney count ``U`` of (in, out) pairs ranked in above out, i.e. the
empirical AUC ``U / (n_in n_out)``.  **Worst case under the assumption.** After mapping scores
through ``Q``'s distribution function, out-scores are uniform and the in-scores' survival
function is the score's ROC curve, which is at most the optimal ROC ``1 - T(Q, P)`` and hence
at most ``1 - G_μ``, the ROC of the pair ``(N(0, 1), N(μ, 1))``.  Pointwise larger survival is
stochastic dominance, and ``U`` increases with every in-score, so ``U`` under any μ-GDP pair is
stochastically below ``U`` under the Gaussian pair (ties broken at random keep this).  The
p-value of μ is therefore ``P_μ[U >= u]`` for Gaussian scores, taken from the normal law with
the exact mean and variance of ``U`` (Hoeffding's U-statistic variance, Lehmann 1951):

    E U / (n_in n_out) = A = Φ(μ / √2),
    Var U = n_in n_out [A(1 - A) + (n_in + n_out - 2)(B - A²)],  B = Φ₂(μ/√2, μ/√2; ρ = 1/2),

``B`` the probability that one in-score exceeds two out-scores (equally, two in-scores one
out-score), with ``Φ₂(h, h; ρ) = Φ(h) - 2 T(h, √((1 - ρ)/(1 + ρ)))`` (Owen's ``T``), and a
continuity correction of half a pair.  The normal law is an approximation (central limit
theorem for U-statistics); it is checked by simulation in the tests (coverage on Gaussian
scores, null calibration) for at least :data:`MIN_PER_SIDE` canaries on each side, and the
bound is 0 below that.  The μ bound is the largest μ the test rejects at level
``1 - confidence`` (bisection), turned into ε at δ with :func:`~dpclaims.gdp.gdp_epsilon`.
No number of guesses is chosen, so nothing is paid for a selection.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..errors import InputError, check_confidence, check_count

__all__ = [
    "MIN_PER_SIDE",
    "mann_whitney_pairs",
    "rank_moments",
    "rank_gdp_p_value",
    "rank_gdp_mu",
]

MIN_PER_SIDE = 50
"""Fewest included and excluded canaries for which the rank bound is computed (the normal law
of ``U`` is checked by simulation from there on); below it the bound is 0."""

_BISECTION_STEPS = 50
_MAX_MU = 64.0
_OWEN_SLOPE = 1.0 / math.sqrt(3.0)  # √((1 - ρ)/(1 + ρ)) at ρ = 1/2


def mann_whitney_pairs(order: np.ndarray, included: np.ndarray) -> int:
    """``U``: the (in, out) pairs whose in-score ranks above the out-score.

    ``order (m,)`` the canaries from lowest to highest score (ties already broken at random),
    ``included (m,)`` bool.  ``U = Σ_in rank - n_in (n_in + 1) / 2`` with ranks 1..m.
    """
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(1, len(order) + 1)
    n_in = int(np.count_nonzero(included))
    return int(ranks[included].sum()) - n_in * (n_in + 1) // 2


def rank_moments(mu: float, n_in: int, n_out: int) -> tuple[float, float]:
    """Mean and standard deviation of ``U`` for scores ``N(μ, 1)`` (in) against ``N(0, 1)``
    (out): ``n_in n_out A`` and ``√Var U`` of the module docstring (Lehmann 1951)."""
    h = mu / math.sqrt(2.0)
    auc, below = float(special.ndtr(h)), float(special.ndtr(-h))
    # B - A² = Φ(h)Φ(-h) - 2 T(h, 1/√3), written without the cancellation of Φ(h) - Φ(h)²
    excess = max(auc * below - 2.0 * float(special.owens_t(h, _OWEN_SLOPE)), 0.0)
    pairs = n_in * n_out
    variance = pairs * (auc * below + (n_in + n_out - 2) * excess)
    return pairs * auc, math.sqrt(variance)


def rank_gdp_p_value(pairs_above: int, n_in: int, n_out: int, mu: float) -> float:
    """``P_μ[U >= pairs_above]`` under the normal law of ``U`` with half a pair of continuity
    correction: the p-value of μ-GDP for independent canaries (module docstring)."""
    mean, sd = rank_moments(mu, n_in, n_out)
    gap = pairs_above - 0.5 - mean
    if sd == 0.0:
        return 0.0 if gap > 0 else 1.0
    return float(special.ndtr(-gap / sd))


def rank_gdp_mu(pairs_above: int, n_in: int, n_out: int, confidence: float = 0.95) -> float:
    """Largest μ (to bisection precision, rounded down) rejected at level ``1 - confidence`` by
    ``pairs_above`` of the ``n_in n_out`` pairs ranked in above out; 0 if none, or if either
    side has fewer than :data:`MIN_PER_SIDE` canaries."""
    n_in, n_out = check_count(n_in, "n_in", minimum=0), check_count(n_out, "n_out", minimum=0)
    if not 0 <= pairs_above <= n_in * n_out:
        raise InputError(
            f"pairs_above must be between 0 and n_in * n_out = {n_in * n_out}, got {pairs_above}"
        )
    significance = 1.0 - check_confidence(confidence)
    if min(n_in, n_out) < MIN_PER_SIDE:
        return 0.0

    def rejects(mu: float) -> bool:
        return rank_gdp_p_value(pairs_above, n_in, n_out, mu) < significance

    if not rejects(0.0):
        return 0.0
    low, high = 0.0, 1.0
    while rejects(high):
        low, high = high, 2.0 * high
        if high > _MAX_MU:
            return low
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if rejects(mid):
            low = mid
        else:
            high = mid
    return low
