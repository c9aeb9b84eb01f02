"""The subsampled-Gaussian family's one-run test on every canary's score, not on guesses.

Xiang et al.'s family test (:mod:`.one_run_family`) reads one bit per guess, whether it was
right, and throws away how confident it was: at 10³ canaries its median bound is 45.5 % of the
ε of the subsampled Gaussian with μ = 2, q = 0.2 (mean over their four guess counts; 60.6 % at
the best), this test's 80.1 % (``benchmarks/results/one_run_xiang.md``).  Under the same
assumption (the Poisson-subsampled Gaussian of known rate q, independent canaries, scores on
the family's scale: ``N(0, 1)`` for an excluded canary, ``N(μ, 1)`` for a sampled included one)
this test reads every score
through the privacy loss of the *claimed* member ``(μ_c, q)`` (:func:`.privacy_loss`, fixed
before the inclusions are seen) and compares the groups:

    D = mean of L(y) over the included canaries - mean of L(y) over the excluded ones.

Under member ``(μ, q)`` the included scores are i.i.d. ``(1 - q) N(0, 1) + q N(μ, 1)`` and the
excluded ones ``N(0, 1)``, all independent given the inclusions, so ``D`` is a difference of two
independent means whose law is known; ``L`` is increasing in the score and the mixture grows
stochastically with μ, so ``D`` does too, and the p-value of μ is ``P_μ[D >= d]``.  Its law is
skewed (a few sampled canaries carry most of the loss), and the normal approximation is
anti-conservative (5.7-5.9 % false rejections at 5 %, 1.5 % at 1 %, 4,000 simulated runs at
10³ canaries); the p-value is the Lugannani-Rice saddlepoint approximation (Daniels 1987;
Butler 2007, §1.2) of the tail of ``D`` from its exact cumulant generating function,
``K_D(θ) = n_in K_P(θ / n_in) + n_out K_Q(-θ / n_out)``, each ``K`` by Gauss-Hermite
quadrature (:data:`NODES` nodes), which holds its level on the same runs (4.7-5.6 %; 0.8-1.2 %
at 1 %; tested).  The μ bound is the largest μ rejected at ``1 - confidence`` (bisection over
``[0, FAMILY_MU_MAX]``), and its ε at δ is the member's (:func:`.subsampled_gaussian_epsilon`).

A wrong family can make that bound overstate ε (a Gaussian mechanism with μ = 2, read as the
subsampled Gaussian with q = 0.2, would certify ε ≥ 32 against its true 10), so the test first
checks that the scores fit *some* member (:func:`family_fit`: the excluded scores ``N(0, 1)``,
at least ``(1 - q)/2`` of the included ones at or below 0); below :data:`FIT_LEVEL` the family
is refuted and the verdict is ``inconclusive``, as when guesses reject every member.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special, stats

from ..errors import InputError, check_confidence
from ..privacy import PrivacyClaim
from .one_run_family import (
    FAMILY_MU_MAX,
    largest_rejected_mu,
    privacy_loss,
    smallest_caught_mu,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_mu,
)
from .reach import REACH_POWER, Reach

__all__ = [
    "NODES",
    "SCORE_MIN_PER_SIDE",
    "loss_difference",
    "score_p_value",
    "score_mu",
    "score_reach",
    "score_test",
    "ScoreTest",
    "FIT_LEVEL",
    "family_fit",
    "misfit_text",
    "refutes",
]

NODES = 160
"""Gauss-Hermite nodes of the quadrature of each cumulant generating function."""

SCORE_MIN_PER_SIDE = 50
"""Fewest included and excluded canaries for which the score test is computed (its level is
tested from 150 a side); below it the bound is 0 and the claim's p-value 1 (not tested)."""

FIT_LEVEL = 1e-3
"""Level below which :func:`family_fit` says the scores do not fit the family: the test then
certifies nothing (``inconclusive``), at a cost in power of at most this share of the runs of a
mechanism in the family."""

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_STANDARD_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(NODES)
_LOG_WEIGHTS = np.log(_WEIGHTS / _WEIGHTS.sum())


def loss_difference(scores: np.ndarray, included: np.ndarray, mu_claim: float, q: float) -> float:
    """``D``: the mean privacy loss of member ``(mu_claim, q)`` over the included canaries minus
    that over the excluded ones; ``scores (m,)``, ``included (m,)`` bool, both groups non-empty."""
    if included.all() or not included.any():
        raise InputError("the score test needs both included and excluded canaries")
    loss = privacy_loss(np.asarray(scores, dtype=np.float64), mu_claim, q)
    return float(loss[included].mean() - loss[~included].mean())


def family_fit(scores: np.ndarray, included: np.ndarray, q: float) -> float:
    """P-value that ``scores (m,)`` come from some member of the family (Bonferroni over two
    checks, each valid for every μ): the excluded scores' law ``N(0, 1)`` (Kolmogorov-Smirnov)
    and the share of included scores at or below 0, at least ``(1 - q)/2`` under every member
    (the binomial lower tail of their count)."""
    inside, outside = scores[included], scores[~included]
    fitted = stats.ks_1samp(outside, special.ndtr).pvalue
    low = stats.binom.cdf(np.count_nonzero(inside <= 0.0), len(inside), (1.0 - q) / 2.0)
    return float(min(1.0, 2.0 * min(fitted, low)))


def refutes(mu_lower: float, fit_p_value: float | None) -> bool:
    """Whether a family bound's evidence refutes the family itself: its μ at the top of the
    range searched, or its scores' fit (:func:`family_fit`) below :data:`FIT_LEVEL`."""
    return mu_lower >= FAMILY_MU_MAX or (fit_p_value is not None and fit_p_value < FIT_LEVEL)


def misfit_text(fit_p_value: float | None) -> str:
    """The line's words for a refuted family: by :func:`family_fit` or, when it did not refute
    it, by evidence (guesses or scores) that rejects every member searched."""
    if fit_p_value is not None and fit_p_value < FIT_LEVEL:
        why = (
            f"the scores do not fit any member (p = {fit_p_value:.2g} that the excluded scores "
            "are N(0, 1) and at least (1 - q)/2 of the included ones at or below 0)"
        )
    else:
        why = f"every member up to μ = {FAMILY_MU_MAX:g} is rejected, so the family does not fit"
    return f"; {why} (check the family, its rate and the scores' scale)"


def _law(mu_claim: float, q: float, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature of the claimed loss ``L`` under an included canary of member ``(μ, q)``
    (``μ = 0``: an excluded one): the values of ``L`` and their log weights."""
    if q == 1.0:  # the Gaussian family: every included canary is shifted
        return privacy_loss(_STANDARD_NODES + mu, mu_claim, q), _LOG_WEIGHTS
    if mu == 0.0:
        return privacy_loss(_STANDARD_NODES, mu_claim, q), _LOG_WEIGHTS
    values = privacy_loss(np.concatenate([_STANDARD_NODES, _STANDARD_NODES + mu]), mu_claim, q)
    weights = np.concatenate([_LOG_WEIGHTS + math.log1p(-q), _LOG_WEIGHTS + math.log(q)])
    return values, weights


def _cumulants(law: tuple[np.ndarray, np.ndarray], tilt: float) -> tuple[float, float, float]:
    """``K(t), K'(t), K''(t)`` of the cumulant generating function of ``L`` under ``law``."""
    values, log_weights = law
    exponent = log_weights + tilt * values
    top = exponent.max()
    mass = np.exp(exponent - top)
    total = mass.sum()
    mean = float(mass @ values) / total
    second = float(mass @ (values * values)) / total
    return top + math.log(total), mean, max(second - mean * mean, 0.0)


def score_p_value(
    difference: float, n_in: int, n_out: int, mu: float, *, mu_claim: float, q: float
) -> float:
    """``P_μ[D >= difference]`` for ``n_in`` included and ``n_out`` excluded canaries of member
    ``(μ, q)``, ``D`` read through member ``(mu_claim, q)``'s loss: the Lugannani-Rice
    saddlepoint approximation (module docstring)."""
    inside, outside = _law(mu_claim, q, mu), _law(mu_claim, q, 0.0)

    def cumulants(theta: float) -> tuple[float, float, float]:
        k_in, d_in, v_in = _cumulants(inside, theta / n_in)
        k_out, d_out, v_out = _cumulants(outside, -theta / n_out)
        return n_in * k_in + n_out * k_out, d_in - d_out, v_in / n_in + v_out / n_out

    _, mean, variance = cumulants(0.0)
    z = (difference - mean) / math.sqrt(variance)
    if abs(z) < 1e-6:  # the saddlepoint's removable singularity at the mean
        return float(special.ndtr(-z))
    low, high = (-1.0, 0.0) if z < 0 else (0.0, 1.0)
    while (cumulants(low)[1] - difference) * (cumulants(high)[1] - difference) > 0:
        low, high = (2.0 * low, low) if z < 0 else (high, 2.0 * high)
        if max(abs(low), abs(high)) > 1e12:  # beyond the quadrature's reach: a certain tail
            return 0.0 if z > 0 else 1.0
    theta = optimize.brentq(lambda t: cumulants(t)[1] - difference, low, high, xtol=1e-12)
    log_mgf, _, curvature = cumulants(theta)
    w = math.copysign(math.sqrt(max(2.0 * (theta * difference - log_mgf), 0.0)), theta)
    u = theta * math.sqrt(curvature)
    tail = float(special.ndtr(-w)) + math.exp(-0.5 * w * w) / _SQRT_2PI * (1.0 / u - 1.0 / w)
    return min(max(tail, 0.0), 1.0)


def score_mu(
    difference: float,
    n_in: int,
    n_out: int,
    *,
    mu_claim: float,
    q: float,
    confidence: float = 0.95,
) -> float:
    """Largest μ of the family (bisection, rounded down) rejected at ``1 - confidence`` by
    ``D = difference``; 0 if none or if a side has fewer than :data:`SCORE_MIN_PER_SIDE`
    canaries, :data:`~.one_run_family.FAMILY_MU_MAX` if every μ searched is."""
    if not math.isfinite(difference):
        raise InputError(f"difference must be a finite number, got {difference!r}")
    significance = 1.0 - check_confidence(confidence)
    if min(n_in, n_out) < SCORE_MIN_PER_SIDE:
        return 0.0

    def rejects(mu: float) -> bool:
        return score_p_value(difference, n_in, n_out, mu, mu_claim=mu_claim, q=q) < significance

    return largest_rejected_mu(rejects)


def score_reach(
    n_in: int, n_out: int, claim: PrivacyClaim, *, q: float, confidence: float = 0.95
) -> Reach:
    """The reach of the score test (:mod:`.reach`'s meaning): the smallest multiple of the
    claimed ε whose member of the family the test certifies above the claim with probability
    :data:`~.reach.REACH_POWER`, for these group sizes.  The bound exceeds the claim when ``D``
    passes ``d*``, where the claimed member's tail is ``1 - confidence``; a member's power is
    its own tail at ``d*`` (the saddlepoint, as for the p-value); the smallest member with
    enough power is bisected (rounded up)."""
    mu_claim = subsampled_gaussian_mu(claim.epsilon, q, claim.delta)
    options = dict(mu_claim=mu_claim, q=q)
    significance = 1.0 - check_confidence(confidence)
    model = f"subsampled-gaussian (q = {q:g})"
    never = Reach(factor=math.inf, epsilon=math.inf, mu=None, model=model)
    if min(n_in, n_out) < SCORE_MIN_PER_SIDE:
        return never
    law = _law(mu_claim, q, mu_claim), _law(mu_claim, q, 0.0)
    spread = math.sqrt(_cumulants(law[0], 0.0)[2] / n_in + _cumulants(law[1], 0.0)[2] / n_out)
    low = _cumulants(law[0], 0.0)[1] - _cumulants(law[1], 0.0)[1]
    high = low + spread
    while score_p_value(high, n_in, n_out, mu_claim, **options) >= significance:
        low, high = high, high + spread
    critical = optimize.brentq(
        lambda d: score_p_value(d, n_in, n_out, mu_claim, **options) - significance, low, high
    )

    def caught(mu: float) -> bool:
        return score_p_value(critical, n_in, n_out, mu, **options) >= REACH_POWER

    member = smallest_caught_mu(caught, first=mu_claim)
    if math.isinf(member):
        return never
    epsilon = subsampled_gaussian_epsilon(member, q, claim.delta)
    return Reach(factor=epsilon / claim.epsilon, epsilon=epsilon, mu=None, model=model)


class ScoreTest(NamedTuple):
    """What the score test found: ``difference`` D, the ``mu`` bound and its ``epsilon`` at the
    claim's δ, the claim's ``p_value``, the family's ``fit_p_value`` (None below the minimum a
    side) and the test's ``reach``."""

    difference: float
    mu: float
    epsilon: float
    p_value: float
    fit_p_value: float | None
    reach: Reach


def score_test(
    scores: np.ndarray, included: np.ndarray, claim: PrivacyClaim, *, q: float, confidence: float
) -> ScoreTest:
    """The score test on ``scores (m,)`` and ``included (m,)`` bool, read through the claimed
    member (``D`` 0 when a group is empty; below the minimum a side it tests nothing)."""
    mu_claim = subsampled_gaussian_mu(claim.epsilon, q, claim.delta)
    n_in = int(np.count_nonzero(included))
    n_out = len(included) - n_in
    reach = score_reach(n_in, n_out, claim, q=q, confidence=confidence)
    if min(n_in, n_out) < SCORE_MIN_PER_SIDE:
        found = loss_difference(scores, included, mu_claim, q) if min(n_in, n_out) else 0.0
        return ScoreTest(found, 0.0, 0.0, 1.0, None, reach)
    difference = loss_difference(scores, included, mu_claim, q)
    mu = score_mu(difference, n_in, n_out, mu_claim=mu_claim, q=q, confidence=confidence)
    p_value = score_p_value(difference, n_in, n_out, mu_claim, mu_claim=mu_claim, q=q)
    epsilon = subsampled_gaussian_epsilon(mu, q, claim.delta)
    return ScoreTest(difference, mu, epsilon, p_value, family_fit(scores, included, q), reach)
