"""Lowy, Liu & Asi (2024), spec 000: the printed constants and the data-free parameter formulas.

The phase schedules of Algorithms 1 and 3 live with their classes (``schedule`` class methods,
so a mutant can override one formula); this module holds the formulas they share, the
constants with their source lines, and the argument checks of the theorems (ε ≤ 10, δ > 0).
Logs are natural (spec §0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpclaims.algorithms.lowy_liu_asi_2024.core import ln
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_count, check_delta, check_epsilon
from dpclaims.privacy import PrivacyClaim

__all__ = [
    "PAPER_ID",
    "CONSTANTS",
    "PARTITIONS",
    "SAMPLINGS",
    "EPSILON_MAX",
    "DEFAULT_Q",
    "privacy_target",
    "problem_sizes",
    "as_vector",
    "check_data",
    "paper_privacy_claim",
    "phase_size",
    "alg1_group_size",
    "alg3_tau",
    "alg2_sigma",
    "alg2_batch",
    "alg2_kmin",
]

PAPER_ID = "lowy-liu-asi-2024"
CONSTANTS = ("paper", "relaxed")
PARTITIONS = ("random", "index")
SAMPLINGS = ("without", "with")
EPSILON_MAX = 10.0
"""Largest ε the theorems allow (Thm 2.1, 3.1, 4.1: ε ≤ 10)."""

DEFAULT_Q = 0.5
"""Phase-size exponent q [DEFAULT, spec §2.2/§2.3]; the paper only asks for q > 0 small."""

ALG1_PAPER_TAU = 1000.0
"""Alg. 1 line 4: τ_i = 1000·η_i·L·√T_i·ln(ndm)."""

ALG1_PAPER_SIGMA = 100.0
"""Alg. 1 line 22: σ_i = 100·τ_i·ln²(n/δ)/(εC)."""

ALG1_SCORE_LAPLACE = 20.0
"""Alg. 1 line 10: ŝ_i = s_i + Lap(20/ε)."""

ALG2_THRESHOLD_LAPLACE = 8.0
"""Alg. 2 line 4: Δ̂ = 4K/5 + Lap(8/ε) (drawn once per call)."""

ALG2_QUERY_LAPLACE = 16.0
"""Alg. 2 line 6: ŝ_t = s_t + Lap(16/ε), fresh each step."""

ALG2_PAPER_SIGMA = 1000.0
"""Alg. 2 line 14: σ_i = 1000·τ·√T_i·ln(nde^ε/δ)/(εn_i)."""

ALG3_PAPER_K = 500.0
"""Alg. 3 line 4: K_i = 500·ln(n_i²m²e^ε/δ)(1/ε + n_iε/√(T_i ln(1/δ)))."""

ALG3_KMIN = 320.0
"""[DERIVED] spec §2.3: a phase needs K_i ≥ 320·ln(20T_ie^ε/δ)/ε (Laplace-tail event);
else it is skipped."""

RELAXED_K = 120.0
"""Relaxed K_i = min(n_i, ⌈120·ln(20T_i l n m)/ε + n_iε/√T_i⌉) and phase floor (spec §2.6)."""

ACSA_STAGE = 4.0
"""Multi-stage AC-SA [DEFAULT, spec §2.1 P-d]: N_s = ⌈4√(L_f/λ)⌉ iterations per stage."""


# --------------------------------------------------------------------------------- argument checks


def privacy_target(problem: Any) -> tuple[float, float]:
    """``(ε, δ)`` of ``problem`` after the theorems' conditions ε ≤ 10 and δ > 0."""
    epsilon = check_epsilon(problem.epsilon)
    if epsilon > EPSILON_MAX:
        raise InputError(
            f"epsilon must be <= {EPSILON_MAX:g} (the theorems assume eps <= 10), got {epsilon!r}"
        )
    delta = check_delta(problem.delta)
    if delta == 0:
        raise InputError(
            "delta must be in (0, 1): the paper proves approximate (eps, delta)-DP; "
            "pass e.g. delta=1e-6"
        )
    return epsilon, delta


def problem_sizes(problem: Any, *, minimum_n: int = 2) -> tuple[int, int, int]:
    """``(n, m, d)`` of ``problem`` with ``n >= minimum_n`` (the schedules need log2 n >= 1)."""
    return (
        check_count(problem.n, "n", minimum=minimum_n),
        check_count(problem.m, "m"),
        check_count(problem.d, "d"),
    )


def as_vector(value: Any, d: int, name: str) -> tuple[float, ...]:
    """``value`` as a length-``d`` tuple (a scalar is repeated; None is the origin)."""
    if value is None:
        return (0.0,) * d
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.size == 1 and d > 1:
        arr = np.full(d, float(arr[0]))
    if arr.size != d or not np.all(np.isfinite(arr)):
        raise InputError(
            f"{name} must be a finite vector of length d = {d} (or a scalar), got {value!r}"
        )
    return tuple(float(v) for v in arr)


def check_data(data: Any, d: int, n: int) -> UserDataset:
    """``data`` must be a :class:`UserDataset` with ``d`` features and at least ``n`` users."""
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a UserDataset, got {type(data).__name__}")
    if data.d != d:
        raise InputError(
            f"data has d = {data.d} features but the algorithm was built for d = {d}; "
            f"rebuild with Problem(d={data.d})"
        )
    if data.n < n:
        raise InputError(
            f"data has {data.n} users but the algorithm was built for n = {n}; "
            f"rebuild with Problem(n={data.n})"
        )
    return data


def paper_privacy_claim(algorithm: Any, source: str) -> PrivacyClaim:
    """(ε, δ)-user-level DP, replace-one-user, for paper constants with full noise.

    Relaxed constants and ``noise_mult < 1`` are utility diagnostics without a claim.
    """
    if algorithm.constants != "paper" or algorithm.noise_mult < 1.0:
        raise InputError(
            "only constants='paper' with noise_mult >= 1 carries the paper's privacy claim; "
            "relaxed constants and noise_mult < 1 are utility diagnostics (spec §2.6)"
        )
    return PrivacyClaim(
        epsilon=algorithm.epsilon,
        delta=algorithm.delta,
        unit="user",
        relation="replace",
        source=source,
    )


# --------------------------------------------------------------------------------- shared formulas


def phase_size(n: float, q: float, i: int) -> float:
    """Users of phase i (1-based) before rounding: ``(1 − 2^{−q})·n/2^{iq}`` (Alg. 1 line 4,
    Alg. 3 line 3)."""
    return (1.0 - 2.0 ** (-q)) * n / 2.0 ** (i * q)


def alg1_group_size(*, n: float, m: float, epsilon: float, delta: float) -> int:
    """Algorithm 1 line 2: the group size ``C = ⌈100 ln(20nme^ε/δ)/ε⌉``."""
    return int(math.ceil(100.0 * ln(20.0 * n * m * math.exp(epsilon) / delta) / epsilon))


def alg3_tau(*, n: float, m: float, d: float, epsilon: float, lipschitz: float) -> float:
    """Alg. 3's τ [DEFAULT from the proof of Thm C.3, spec §2.3].

    ``τ = L·[ln(nd) + 1.25 ln(nm) + ln ln(ndm) + 2ε]/√m``.
    """
    return (
        lipschitz
        * (ln(n * d) + 1.25 * ln(n * m) + ln(ln(n * d * m)) + 2.0 * epsilon)
        / math.sqrt(m)
    )


def alg2_sigma(
    *,
    constants: str,
    sensitivity: float,
    steps: int,
    n: float,
    d: float,
    size: float,
    epsilon: float,
    delta: float,
) -> float:
    """Alg. 2 line 14's σ_i for a user-gradient ``sensitivity`` (τ) and phase ``size`` (n_i).

    Paper: ``σ_i = 1000·τ·√T_i·ln(nde^ε/δ)/(εn_i)``; relaxed (spec §2.6):
    ``4√(8 ln(2/δ))·τ√T_i/(εn_i)``.
    """
    if constants == "paper":
        return (
            ALG2_PAPER_SIGMA
            * sensitivity
            * math.sqrt(steps)
            * (ln(n * d / delta) + epsilon)
            / (epsilon * size)
        )
    return (
        4.0 * math.sqrt(8.0 * ln(2.0 / delta)) * sensitivity * math.sqrt(steps) / (epsilon * size)
    )


def alg2_batch(
    *,
    constants: str,
    n_i: float,
    steps: int,
    m: float,
    n: float,
    levels: int,
    epsilon: float,
    delta: float,
    k_const: float = ALG3_PAPER_K,
) -> int:
    """Alg. 3 line 4's K_i capped at n_i (paper; spec §7(d) item 10), or spec §2.6's relaxed K_i."""
    if constants == "paper":
        k = (
            k_const
            * (2 * ln(n_i * m) + epsilon + ln(1 / delta))
            * (1 / epsilon + n_i * epsilon / math.sqrt(steps * ln(1 / delta)))
        )
    else:
        k = RELAXED_K * ln(20.0 * steps * max(levels, 1) * n * m) / epsilon + n_i * epsilon / (
            math.sqrt(steps)
        )
    return int(min(n_i, math.ceil(k)))


def alg2_kmin(
    *, constants: str, steps: int, n: float, m: float, levels: int, epsilon: float, delta: float
) -> float:
    """Smallest phase that may run (spec §2.3 [DERIVED] / §2.6).

    Paper: ``320·ln(20T_ie^ε/δ)/ε``; relaxed: ``120·ln(20T_i l n m)/ε``.
    """
    if constants == "paper":
        return ALG3_KMIN * (ln(20.0 * steps / delta) + epsilon) / epsilon
    return RELAXED_K * ln(20.0 * steps * max(levels, 1) * n * m) / epsilon
