"""The closed-form parameters of Lowy 2026 (spec 003): schedule constants, q(d, β), c_A and C.

Spec tags: **[H]** the paper fixes the formula; **[M]** the form is forced by the proof, the
constants or logs are the spec's; **[L]** a plausible reading.
"""

from __future__ import annotations

import math

from scipy import stats

from dpclaims.errors import (
    InputError,
    check_choice,
    check_confidence,
    check_count,
    check_epsilon,
    check_positive,
)
from dpclaims.privacy import PrivacyClaim

__all__ = [
    "PAPER_ID",
    "C_J",
    "C_STAB",
    "C_LAMBDA",
    "BETA0_STRICT",
    "CLIP_RULES",
    "gamma_radius",
    "c_a",
    "clip_level",
    "lowy_claim",
]

PAPER_ID = "pure-dp-heavy-tails"

C_J = 18.0
"""Repetition constant of Algorithm 1: ``J = ⌈C_J ln(I/β)⌉`` (spec §2.1 [M]; majority boost
1 − e^{−J/18})."""

C_STAB = 4.0
"""Stability constant of Algorithm 1's error scale ``E = c_stab G_2/√m + …`` (spec §2.1 [M])."""

C_LAMBDA = 6.0
"""Base regularization of Algorithm 1: ``λ_1 = c_λ E / D`` (spec §2.1 [M])."""

BETA0_STRICT = 1.0 / 36.0
"""Per-call failure level β0 of Algorithm 4 inside Algorithm 1 in strict mode (each repetition
succeeds w.p. ≥ 2/3)."""

CLIP_RULES = ("paper", "rate-test")
"""Clipping rules of :func:`clip_level`."""


def gamma_radius(d: int, beta: float, method: str = "closed") -> float:
    """``q(d, β)``: ``P(Gamma(d, 1) > q) ≤ β`` (spec notation table).

    ``method="closed"``: ``2(d + ln(1/β))`` [M] (from ``P(Gamma(d,1) ≥ u) ≤ 2^d e^{−u/2}``);
    ``"exact"``: ``scipy.stats.gamma(d).isf(β)`` (allowed: the radius is data-independent).
    """
    d, beta = check_count(d, "d"), check_confidence(beta, "beta")
    check_choice(method, ("closed", "exact"), "method")
    if method == "closed":
        return 2.0 * (d + math.log(1.0 / beta))
    return float(stats.gamma(d).isf(beta))


def c_a(k: float) -> float:
    """Algorithm 4's distance constant ``c_A = 18 + √(68/(k−1))`` (Prop 2.5 / C.3, spec §2.4
    [M])."""
    k = check_positive(k, "k")
    if k < 2:
        raise InputError(f"k must be >= 2 (moment order of the Lipschitz constants), got {k}")
    return 18.0 + math.sqrt(68.0 / (k - 1.0))


def clip_level(
    n: int,
    d: int,
    epsilon: float,
    *,
    moment_k: float,
    k: float,
    beta0: float,
    rule: str = "paper",
) -> float:
    """Clipping (extension) level C of Algorithm 4 (Prop 3.2, spec §2.4).

    ``rule="paper"``: ``G_k (ε n / (β0 (d + ln(1/β0))))^{1/k}`` [M: ∝ G_k(εn/d)^{1/k} is H, the β0
    factors are the spec's]; ``"rate-test"``: ``G_k (ε n/d)^{1/k}`` (spec §7b note, clean d-slopes).
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    epsilon, g = check_epsilon(epsilon), check_positive(moment_k, "moment_k")
    k, beta0 = check_positive(k, "k"), check_confidence(beta0, "beta0")
    check_choice(rule, CLIP_RULES, "rule")
    if rule == "paper":
        return g * (epsilon * n / (beta0 * (d + math.log(1.0 / beta0)))) ** (1.0 / k)
    return g * (epsilon * n / d) ** (1.0 / k)


def lowy_claim(epsilon: float, where: str) -> PrivacyClaim:
    """The pure ε-DP guarantee of every Lowy 2026 algorithm: δ = 0, item level, replace-one;
    ``where`` names the result (``source="Lowy 2026, <where>"``)."""
    return PrivacyClaim(
        epsilon=epsilon, delta=0.0, unit="item", relation="replace", source=f"Lowy 2026, {where}"
    )
