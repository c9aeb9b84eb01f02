"""The reach of an audit: the smallest violation *of the claim* it would have caught.

An audit that certifies ε ≥ 0.17 against a claim of 2 passes whether the mechanism is correct or
leaks twice the claim, unless its size and tests could have told the two apart.  The *reach*
makes this explicit: the smallest factor ``k`` such that a mechanism leaking ``k`` times the
*claimed* ε on this pair would be certified above the claim, by an audit of the same size,
confidence and test family, with probability at least ``power`` (0.9).  A verdict is
``consistent`` only when ``k`` is at most :data:`REACH_LIMIT` (2: a factor-2 calibration
error); its reference is the claim, never the pair's own leakage, so an audit of a leakier
variant cannot look better audited than the correct one at the same budget.

The model.  A mechanism leaking ``k`` times the claim is read in the pair's trade-off family:
the Gaussian-DP curve ``G_μ`` with ``ε(μ, δ) = k ε_claim`` (``μ = gdp_mu_of(k ε, δ)``), or the
pure family of a Laplace shift whose (ε, δ) profile ``a + 2 log(1 - δ)`` is ``k ε_claim``
(at δ = 0 only the pure family has a finite ε).  The family is the one that fits the pair's
empirical trade-off clearly better (:data:`MODEL_MARGIN`), else the more conservative (the
larger factor).  The audit's tests are read as order-statistic tests at the ranks ``r`` of
:func:`~dpclaims.audit.threshold.quantile_ranks` (false-positive rate ``(r + 1) / (n + 1)``),
each bounded jointly at the audit's own failure probability.  A test at rank ``r`` certifies
more than the claim exactly when its false-negative count is at most some ``f(r)``, a binomial
event of probability ``B(f(r); n, 1 - TPR_k(FPR_r))``; the detection probability is the
largest over ranks (a lower bound on the probability that *some* test certifies, so the reach is
conservative), and ``k`` is found by bisection.

The Gaussian-DP method (``method="gdp"``) gets its reach under its own model alone: the
violation is μ-GDP at ``ε(μ, δ) = k ε_claim``, a test "certifying" when the μ of its upper rates
exceeds the claim's (``objective="mu"``).  The estimate being uncertified, "caught" there
means an estimate above the claim, which the verdict reports as ``inconclusive``.

For Gaussian mechanisms the model is exact; for mechanisms whose likelihood ratio is bounded
(Laplace, randomized response) the Laplace family describes them (``tests/audit/test_reach.py``
measures both).  The model is stated in every result (:attr:`Reach.model`).

Before issue 41 the factor multiplied the pair's *own* fitted leakage (its μ or Laplace ε), so a
leakier pair needed a smaller factor and a buggy variant could read as ``consistent`` where the
correct one was ``consistent_weak``; the pair's μ is still reported (:attr:`Reach.mu`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special

from ..errors import check_choice
from ..gdp import gdp_mu, gdp_mu_of
from ..stats import binom_cdf
from .bounds import epsilon_from_rates, joint_upper, tilt_of
from .threshold import QUANTILE_TRUE_POSITIVES, default_grid, quantile_ranks

__all__ = [
    "REACH_LIMIT",
    "REACH_POWER",
    "Reach",
    "reach",
    "detection_probability",
    "fpr_nodes",
    "violation_param",
]

REACH_LIMIT = 2.0
"""An audit is ``consistent`` only when it would have caught a mechanism leaking this many times
the claimed ε (a factor-2 calibration error); above it the verdict is ``consistent_weak``."""

REACH_POWER = 0.9
"""The probability with which an audit must catch a violation for it to be within reach."""

MAX_FACTOR = 1e4
"""Factors beyond this are reported as infinite (no violation of the claim is within reach: the
claim is at or above what the audit's tests can certify)."""


@dataclass(frozen=True)
class Reach:
    """The smallest violation of the claim an audit would have caught.

    ``factor``: the multiple ``k`` of the claimed ε that a mechanism must leak on the pair to be
    certified above the claim with probability ``power`` (``inf`` when no multiple up to
    :data:`MAX_FACTOR` is); ``epsilon``: that mechanism's ε, ``k`` times the claim (``inf``
    when ``factor`` is); ``mu``: the Gaussian-DP μ the pair itself shows at the chosen test (for
    reading, not for the reach; None for a one-run audit, which has no pair); ``model``: the
    trade-off family the violation is read in (see the module docstring).
    """

    factor: float
    epsilon: float
    mu: float | None
    power: float = REACH_POWER
    model: str = "gaussian-dp"

    def describe(self) -> str:
        """E.g. ``"would catch a 1.4× violation of the claim (ε ≈ 1.4 on this pair,
        gaussian-dp family) with probability 0.9"``."""
        if not math.isfinite(self.factor):
            return (
                "would catch no violation of the claim: its tests cannot certify above it at "
                "this size"
            )
        return (
            f"would catch a {self.factor:.3g}× violation of the claim (ε ≈ {self.epsilon:.3g} "
            f"on this pair, {self.model} family) with probability {self.power:g}"
        )

    def to_dict(self) -> dict:
        """JSON-serialisable fields (infinite values are None)."""
        finite = math.isfinite(self.factor)
        return {
            "factor": self.factor if finite else None,
            "epsilon": self.epsilon if finite and math.isfinite(self.epsilon) else None,
            "mu": self.mu,
            "power": self.power,
            "model": self.model,
        }


def _gaussian_tpr(fpr: np.ndarray, mu: float) -> np.ndarray:
    """True-positive rate of the μ-GDP trade-off at false-positive rate ``fpr``."""
    return special.ndtr(special.ndtri(fpr) + mu)  # norm.sf(norm.isf(fpr) - mu), unwrapped


def _gaussian_param(fpr: np.ndarray, tpr: np.ndarray) -> np.ndarray:
    """The μ of the Gaussian-DP curve through (``fpr``, ``tpr``)."""
    return special.ndtri(tpr) - special.ndtri(fpr)  # norm.isf(fpr) - norm.isf(tpr)


def _laplace_threshold(fpr: np.ndarray) -> np.ndarray:
    """The threshold ``t`` with ``P(Lap(0, 1) > t) = fpr``."""
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.where(fpr <= 0.5, -np.log(2 * fpr), np.log(2 * (1 - fpr)))


def _laplace_tpr(fpr: np.ndarray, eps: float) -> np.ndarray:
    """True-positive rate of the pure ε-DP Laplace-shift trade-off (Lap(0, 1) vs Lap(ε, 1),
    the event ``{score > t}``) at false-positive rate ``fpr``."""
    gap = _laplace_threshold(fpr) - eps
    return np.where(gap >= 0, 0.5 * np.exp(-np.abs(gap)), 1 - 0.5 * np.exp(-np.abs(gap)))


def _laplace_param(fpr: np.ndarray, tpr: np.ndarray) -> np.ndarray:
    """The ε of the Laplace-shift curve through (``fpr``, ``tpr``)."""
    t = _laplace_threshold(fpr)
    return np.where(tpr <= 0.5, t + np.log(2 * tpr), t - np.log(2 * (1 - tpr)))


MODELS = {
    "gaussian-dp": (_gaussian_param, _gaussian_tpr),
    "laplace": (_laplace_param, _laplace_tpr),
}
"""Leakage models: (parameter of the curve through a point, TPR at an FPR), each scaled by the
leakage factor."""

MODEL_MARGIN = 6.0
"""A model is preferred when its deviance on the audit's trade-off is lower by more than this
(a likelihood ratio of about 20); otherwise the more conservative model's reach is reported."""

MIN_BIN = 0.02
"""The trade-off points the models are fitted to are at least this far apart in FPR (and 50
trials), so the negative dataset's noise at the bin edges stays small."""


def _bins(points: np.ndarray, n_negative: int) -> tuple[np.ndarray, np.ndarray]:
    """The trade-off ``points`` (K, 2) as nested events at least :data:`MIN_BIN` apart in FPR:
    FPRs and TPRs, sorted, with the empty and the full event at the ends."""
    order = np.argsort(points[:, 0], kind="stable")
    gap = max(MIN_BIN, 50.0 / n_negative)
    kept, last = [], 0.0
    for fpr, fnr in points[order]:
        if gap <= fpr <= 1.0 - gap and fpr - last >= gap:
            kept.append((fpr, 1.0 - fnr))
            last = fpr
    fpr, tpr = (
        (np.array([0.0, *column, 1.0]) for column in zip(*kept, strict=True))
        if kept
        else (np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    )
    return fpr, tpr


def _deviance(model: str, param: float, fpr: np.ndarray, tpr: np.ndarray, n_positive: int):
    """Multinomial deviance of the positive dataset's counts in the bins between consecutive
    events, against the ``model`` at ``param`` (the negative's rates read as exact)."""
    predicted = np.concatenate([[0.0], MODELS[model][1](fpr[1:-1], param), [1.0]])
    expected = np.maximum(np.diff(np.maximum.accumulate(predicted)), 1e-300) * n_positive
    observed = np.maximum(np.diff(np.maximum.accumulate(tpr)), 0.0) * n_positive
    kept = observed > 0
    return float(2 * np.sum(observed[kept] * np.log(observed[kept] / expected[kept])))


def _fit(model: str, points: np.ndarray, n_negative: int, n_positive: int) -> tuple:
    """The model's parameter for the pair (maximum likelihood on the trade-off ``points``
    (K, 2) of (FPR, FNR)) and the fit's deviance."""
    fpr, tpr = _bins(points, n_negative)
    if len(fpr) < 3:
        return 0.0, 0.0
    start = np.median(MODELS[model][0](fpr[1:-1], np.clip(tpr[1:-1], 1e-12, 1 - 1e-12)))
    high = 4 * max(float(start), 0.0) + 1.0
    fit = optimize.minimize_scalar(
        lambda p: _deviance(model, p, fpr, tpr, n_positive), bounds=(0.0, high), method="bounded"
    )
    return float(fit.x), float(fit.fun)


def _largest_certifying(
    ranks: np.ndarray,
    n_negative: int,
    n_positive: int,
    *,
    claim: float,
    delta: float,
    alpha,
    ci,
    objective: str = "epsilon",
) -> np.ndarray:
    """Per rank, the largest false-negative count whose joint bound certifies more than
    ``claim`` (-1 where none does); the bound falls as the count grows, so bisect.

    ``objective="mu"`` (the GDP method): the test's μ from the same upper rates must exceed the
    claim's μ (``gdp_mu_of(claim, delta)``; its ε at ``delta`` then exceeds the claim)."""
    tilts = tilt_of(
        ranks,
        n_negative,
        n_positive - np.minimum(ranks + QUANTILE_TRUE_POSITIVES, n_positive),
        n_positive,
    )
    claimed_mu = gdp_mu_of(claim, delta) if objective == "mu" else None

    def certifies(fn: np.ndarray) -> np.ndarray:
        bounds = joint_upper(ranks, n_negative, fn, n_positive, alpha, ci, tilts)
        if claimed_mu is not None:
            return np.min(gdp_mu(*bounds), axis=0) > claimed_mu
        return np.min(epsilon_from_rates(*bounds, delta), axis=0) > claim

    lo = np.full(len(ranks), -1.0)  # certifies (by convention)
    hi = np.full(len(ranks), n_positive + 1.0)  # never certifies
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        ok = certifies(np.clip(mid, 0, n_positive))
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo


FPR_NODES = 24
"""Quantile nodes over the law of a rank test's true false-positive rate."""


def violation_param(model: str, epsilon: float, delta: float) -> float:
    """The ``model``'s parameter of a mechanism whose (ε, δ) guarantee is ``epsilon`` at
    ``delta``: the GDP μ with ``ε(μ, δ) = epsilon``, or the Laplace shift ``a`` whose profile
    ``a + 2 log(1 - δ)`` is ``epsilon``."""
    if model == "gaussian-dp":
        return gdp_mu_of(epsilon, delta)
    return epsilon - 2.0 * math.log1p(-delta)


def fpr_nodes(ranks: np.ndarray, n_negative: int) -> np.ndarray:
    """The true false-positive rate at the ``r``-th order statistic of ``n`` negatives is
    Beta(r + 1, n - r): its :data:`FPR_NODES` quantiles (FPR_NODES, R) for ``ranks`` (R,)."""
    levels = (np.arange(FPR_NODES) + 0.5) / FPR_NODES
    return special.betaincinv(ranks + 1.0, n_negative - ranks, levels[:, None])


def detection_probability(
    param: float,
    *,
    model: str,
    fpr: np.ndarray,
    largest: np.ndarray,
    n_positive: int,
) -> tuple[float, int]:
    """The probability that the best rank certifies above the claim when the pair's ``model``
    parameter is ``param``, and that rank's index (``largest``: per rank, the largest
    certifying false-negative count), averaged over the rank's true false-positive rate at
    its :func:`fpr_nodes` ``fpr`` (computed once: they do not depend on ``param``)."""
    fnr = 1.0 - MODELS[model][1](fpr, param)
    power = binom_cdf(largest, n_positive, fnr).mean(axis=0)
    power = np.where(largest >= 0, power, 0.0)
    best = int(np.argmax(power))
    return float(power[best]), best


def _factor(options: dict, scale, power: float) -> float:
    """The smallest factor ``k`` whose violation (parameter ``scale(k)``) is detected with
    probability ``power`` (bisection in log k; inf when even :data:`MAX_FACTOR` is not)."""
    if detection_probability(scale(MAX_FACTOR), **options)[0] < power:
        return math.inf
    lo, hi = math.log(1e-3), math.log(MAX_FACTOR)
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        if detection_probability(scale(math.exp(mid)), **options)[0] >= power:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def reach(
    test: Any,
    *,
    claim: float,
    delta: float,
    alpha: float,
    tradeoff=(),
    ci: str = "clopper-pearson",
    power: float = REACH_POWER,
    objective: str = "epsilon",
    ranks: np.ndarray | None = None,
) -> Reach:
    """The :class:`Reach` of an audit whose chosen ``test`` has these counts (its
    ``false_positives`` of ``n_negative`` and ``false_negatives`` of ``n_positive``, e.g. a
    :class:`~dpclaims.audit.threshold.Certified`), at a per-test failure probability
    ``alpha``, against the claim (``claim``, ``delta``).

    ``tradeoff``: the empirical (FPR, FNR) points (K, 2) of the chosen direction, to which the
    families of :data:`MODELS` are fitted (the chosen test's point when none is informative):
    the one that fits clearly better is the pair's family, else the one with the larger factor.
    In each family the violation ``k`` times the claim is :func:`violation_param` at
    ``k · claim``; at ``delta = 0`` only the pure (Laplace) family has a finite ε.

    ``objective="mu"``: the reach of the Gaussian-DP method (:class:`~dpclaims.audit.methods.Gdp`)
    under its own model: the violation is μ-GDP, a test detects when the μ of its upper rates
    exceeds the claim's μ.  ``ranks``: the ranks of the audit's order-statistic tests (default
    those of :func:`~dpclaims.audit.threshold.quantile_ranks` at the default grid).
    """
    check_choice(objective, ("epsilon", "mu"), "objective")
    false_positives, n_negative = int(test.false_positives), int(test.n_negative)
    false_negatives, n_positive = int(test.false_negatives), int(test.n_positive)
    points = np.asarray(tradeoff, dtype=np.float64).reshape(-1, 2)
    if len(points) == 0:
        points = np.array([[(false_positives + 0.5) / n_negative, false_negatives / n_positive]])
    if ranks is None:
        ranks = quantile_ranks(n_negative, default_grid(n_negative))
    ranks = np.asarray(ranks, dtype=np.float64)
    largest = _largest_certifying(
        ranks,
        n_negative,
        n_positive,
        claim=claim,
        delta=delta,
        alpha=alpha,
        ci=ci,
        objective=objective,
    )
    if objective == "mu":
        models = ("gaussian-dp",)
    else:
        models = tuple(MODELS) if delta > 0 else ("laplace",)
    fits = {model: _fit(model, points, n_negative, n_positive) for model in MODELS}
    mu = fits["gaussian-dp"][0]
    factors = {}
    fpr = fpr_nodes(ranks, n_negative)
    for model in models:
        options = dict(model=model, fpr=fpr, largest=largest, n_positive=n_positive)

        def scale(k: float, model: str = model) -> float:
            return violation_param(model, k * claim, delta)

        factors[model] = _factor(options, scale, power)
    best_fit = min(models, key=lambda m: fits[m][1])
    others = [m for m in models if m != best_fit]
    if all(fits[m][1] - fits[best_fit][1] > MODEL_MARGIN for m in others):
        model = best_fit
    else:
        model = max(factors, key=lambda m: factors[m])
    factor = factors[model]
    epsilon = factor * claim if math.isfinite(factor) else math.inf
    return Reach(factor=factor, epsilon=epsilon, mu=mu, power=power, model=model)
