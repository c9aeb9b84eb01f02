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

Under the subsampled family (``q < 1``) the loss is lopsided: a high score is strong evidence
of "in", a low one only weak evidence of "out" (``L >= log(1 - q)``).  So the guesses are
Xiang et al.'s (:func:`family_guesses`): the ``r`` canaries with the largest ``|L|`` of the
*claimed* member, each guessed by the sign of ``L``.  They are a fixed function of the scores,
chosen before the inclusions are seen, and the test's ``P[T <= u]`` assumes the best guesses of
the member tested, which no other guesses beat (Xiang et al.'s argument): the level holds.
The scores must be on the family's scale: an excluded canary scores ``N(0, 1)``, an included
one ``N(μ, 1)`` when sampled.

It is valid only if the mechanism lies in the family, with independent canaries: a result
computed under it carries that assumption and words its verdict as conditional on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from ..errors import InputError, check_choice, check_confidence
from ..gdp import gdp_epsilon, gdp_mu_of
from .reach import REACH_POWER, Reach

__all__ = [
    "FAMILIES",
    "FAMILY_MU_MAX",
    "SubsampledGaussian",
    "check_sampling_rate",
    "family_at_door",
    "privacy_loss",
    "family_guesses",
    "family_profile",
    "profile_p_value",
    "family_p_value",
    "family_mu",
    "largest_rejected_mu",
    "family_epsilon",
    "subsampled_gaussian_delta",
    "subsampled_gaussian_epsilon",
    "subsampled_gaussian_mu",
]

FAMILIES = ("gaussian", "subsampled-gaussian")
"""The families a one-run audit may assume: ``"gaussian"`` (``family="gaussian"``), μ-GDP, and
``"subsampled-gaussian"`` (``family=SubsampledGaussian(sampling_rate=q)``), the
Poisson-subsampled Gaussian of rate q."""

FAMILY_MU_MAX = 32.0
"""Top of the μ range searched: guesses that reject even this member do not fit the family
(for the subsampled Gaussian, more accurate than its rate allows at any μ)."""
_MU_RANGE = (0.0, FAMILY_MU_MAX)
_BISECTION_STEPS = 40
_MAX_EPSILON = 700.0
"""Largest ε the subsampled Gaussian's curve is solved to (``e^ε`` overflows past 709)."""


def check_sampling_rate(family: str | None, sampling_rate: Any) -> float | None:
    """The family's sampling rate q: given, in (0, 1], exactly when ``family`` is
    ``"subsampled-gaussian"`` (None for the other families)."""
    if family != "subsampled-gaussian":
        if sampling_rate is not None:
            raise InputError(
                f"sampling_rate={sampling_rate!r} is the rate of family='subsampled-gaussian': "
                f"pass that family or drop sampling_rate"
            )
        return None
    if sampling_rate is None:
        raise InputError(
            "family='subsampled-gaussian' needs sampling_rate=, a number in (0, 1]: the "
            "probability that an included canary is sampled (e.g. sampling_rate=0.01)"
        )
    ok = isinstance(sampling_rate, (int, float, np.integer, np.floating))
    if isinstance(sampling_rate, bool) or not ok or not 0.0 < sampling_rate <= 1.0:
        raise InputError(
            f"sampling_rate must be a number in (0, 1], got {sampling_rate!r}; pass e.g. "
            f"sampling_rate=0.01"
        )
    return float(sampling_rate)


@dataclass(frozen=True, kw_only=True)
class SubsampledGaussian:
    """The Poisson-subsampled Gaussian family of rate ``sampling_rate`` (q in (0, 1]: the
    probability that an included canary is sampled), for ``one_run_audit(...,
    family=SubsampledGaussian(sampling_rate=q))``."""

    sampling_rate: float

    def __post_init__(self) -> None:
        rate = check_sampling_rate("subsampled-gaussian", self.sampling_rate)
        object.__setattr__(self, "sampling_rate", rate)


def family_at_door(family: Any) -> tuple[str | None, float | None]:
    """``(name, q)`` of a one-run audit's ``family=``: None, ``"gaussian"`` or a
    :class:`SubsampledGaussian` (q None but for the last)."""
    if isinstance(family, SubsampledGaussian):
        return "subsampled-gaussian", family.sampling_rate
    if family == "subsampled-gaussian":
        raise InputError(
            "family='subsampled-gaussian' needs its sampling rate: pass "
            "family=SubsampledGaussian(sampling_rate=q), q the probability that an included "
            "canary is sampled"
        )
    return (None if family is None else check_choice(family, FAMILIES, "family")), None


def privacy_loss(x: np.ndarray, mu: float, q: float) -> np.ndarray:
    """``log dQ/dP`` of ``Q = (1 - q) N(0, 1) + q N(μ, 1)`` against ``P = N(0, 1)``."""
    tilt = mu * x - mu * mu / 2.0
    return tilt if q == 1.0 else np.logaddexp(math.log1p(-q), math.log(q) + tilt)


def family_guesses(
    scores: np.ndarray, r: int, mu: float, q: float, *, ties: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Xiang et al.'s guesses of the member ``(μ, q)`` along the last axis of ``scores`` (on
    the family's scale): the positions of the ``r`` largest ``|L|`` (ties broken by larger
    ``ties``) and whether each is guessed "in" (``L > 0``)."""
    loss = privacy_loss(np.asarray(scores, dtype=np.float64), mu, q)
    keys = (-np.abs(loss),) if ties is None else (-np.broadcast_to(ties, loss.shape), -np.abs(loss))
    chosen = np.lexsort(keys, axis=-1)[..., :r]
    return chosen, np.take_along_axis(loss, chosen, axis=-1) > 0


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

    return largest_rejected_mu(rejects, first=1e-9)


def largest_rejected_mu(rejects: Callable[[float], bool], *, first: float = 0.0) -> float:
    """Largest μ in ``[0, FAMILY_MU_MAX]`` (bisection, rounded down) that ``rejects``, for a
    test whose rejections fall as μ grows: 0 if μ = ``first`` is not rejected, the top of the
    range if it is."""
    low, high = _MU_RANGE
    if not rejects(first):
        return 0.0
    if rejects(high):
        return high
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if rejects(mid) else (low, mid)
    return low


def smallest_caught_mu(caught: Callable[[float], bool], *, first: float) -> float:
    """Smallest μ in ``[first, FAMILY_MU_MAX]`` (bisection, rounded up) that ``caught``, for a
    power that grows with μ: ``inf`` when even the top of the range is not caught."""
    low, high = first, FAMILY_MU_MAX
    if not caught(high):
        return math.inf
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if caught(mid) else (mid, high)
    return high


def subsampled_gaussian_delta(epsilon: float, mu: float, q: float) -> float:
    """The larger hockey-stick divergence at ``epsilon`` of ``(Q, P)`` and ``(P, Q)``, exact."""
    t = (math.log((math.exp(epsilon) - 1.0 + q) / q) + mu * mu / 2.0) / mu
    # Φ and Φ̄ as scipy.stats.norm computes them (ndtr), without its wrapper's cost per call
    forward = (1 - q - math.exp(epsilon)) * special.ndtr(-t) + q * special.ndtr(mu - t)
    backward = 0.0
    low = math.exp(-epsilon) - 1.0 + q  # P over Q: L(x) < -ε iff x < s, possible when low > 0
    if low > 0:
        s = (math.log(low / q) + mu * mu / 2.0) / mu
        backward = special.ndtr(s) - math.exp(epsilon) * (
            (1 - q) * special.ndtr(s) + q * special.ndtr(s - mu)
        )
    return max(forward, backward, 0.0)


def subsampled_gaussian_epsilon(mu: float, q: float, delta: float) -> float:
    """ε at ``delta`` of the family member ``(μ, q)`` (0 when μ is 0 or δ already holds; at
    most 700, where ``e^ε`` nears overflow: a lower bound there)."""
    if mu <= 0 or subsampled_gaussian_delta(0.0, mu, q) <= delta:
        return 0.0
    high = 1.0
    while subsampled_gaussian_delta(high, mu, q) > delta:
        if high == _MAX_EPSILON:
            return high
        high = min(2.0 * high, _MAX_EPSILON)
    return optimize.brentq(
        lambda e: subsampled_gaussian_delta(e, mu, q) - delta, 0.0, high, xtol=1e-10
    )


def subsampled_gaussian_mu(epsilon: float, q: float, delta: float) -> float:
    """The μ of the member ``(μ, q)`` that is exactly (``epsilon``, ``delta``)-DP (δ(ε) grows
    with μ; the top of the bisection range when even it meets the claim)."""
    low, high = 1e-9, _MU_RANGE[1]
    if subsampled_gaussian_delta(epsilon, high, q) <= delta:
        return high
    if subsampled_gaussian_delta(epsilon, low, q) >= delta:
        return low
    return optimize.brentq(
        lambda mu: subsampled_gaussian_delta(epsilon, mu, q) - delta, low, high, xtol=1e-12
    )


def family_epsilon(
    m: int,
    r: int,
    v: int,
    delta: float,
    confidence: float = 0.95,
    *,
    family: str = "gaussian",
    sampling_rate: float | None = None,
) -> tuple[float, float]:
    """``(μ, ε at delta)`` of :func:`family_mu` for ``family`` (of :data:`FAMILIES`; the
    subsampled Gaussian's ``sampling_rate`` as for :func:`check_sampling_rate`)."""
    check_choice(family, FAMILIES, "family")
    q = check_sampling_rate(family, sampling_rate) or 1.0
    mu = family_mu(m, r, v, confidence, q=q)
    return mu, member_epsilon(mu, q, delta)


def member_epsilon(mu: float, q: float, delta: float) -> float:
    """ε at ``delta`` of the member ``(μ, q)`` (``q = 1``: μ-GDP)."""
    return gdp_epsilon(mu, delta) if q == 1.0 else subsampled_gaussian_epsilon(mu, q, delta)


@lru_cache(maxsize=256)
def family_reach(
    m: int, r: int, *, q: float, epsilon: float, delta: float, confidence: float
) -> Reach:
    """The reach of the guesses' family test (:mod:`.reach`'s meaning): the smallest multiple of
    the claimed ``epsilon`` whose member makes ``r`` guesses on ``m`` canaries certify above the
    claim with probability :data:`~.reach.REACH_POWER`.  The bound exceeds the claim when the
    mistakes are at most ``u*``, the most whose p-value at the claimed member is below
    ``1 - confidence``; a member's power is its own ``P[T <= u*]`` (:func:`family_p_value`); the
    smallest member with enough power is bisected (rounded up).  It depends on the counts and
    the claim only, never on the scores: cached."""
    model = "gaussian-dp" if q == 1.0 else f"subsampled-gaussian (q = {q:g})"
    mu_claim = gdp_mu_of(epsilon, delta) if q == 1.0 else subsampled_gaussian_mu(epsilon, q, delta)
    never = Reach(factor=math.inf, epsilon=math.inf, mu=None, model=model)
    significance = 1.0 - confidence
    if family_p_value(0, r, m, mu_claim, q=q) >= significance:
        return never
    low, high = 0, r  # the p-value at the claim: below significance at low, not at high (1)
    while high - low > 1:
        mid = (low + high) // 2
        if family_p_value(mid, r, m, mu_claim, q=q) < significance:
            low = mid
        else:
            high = mid

    def caught(mu: float) -> bool:
        return family_p_value(low, r, m, mu, q=q) >= REACH_POWER

    member = smallest_caught_mu(caught, first=mu_claim)
    if math.isinf(member):
        return never
    found = member_epsilon(member, q, delta)
    return Reach(factor=found / epsilon, epsilon=found, mu=None, model=model)
