"""Spec 000 §7(a) audit configurations of Lowy, Liu & Asi (2024), and their exact references.

Each builder returns an :class:`AuditSetup`: the :class:`~dpclaims.target.AuditTarget`
(the algorithm, the neighbouring pair, the paper's claim) and the numbers that describe it
(cluster sizes, the predicted exact ε).  ``algorithm=`` takes the reference class or a mutant
subclass of :mod:`dpclaims.targets.mutants.lowy_liu_asi_2024`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import integrate, special

from dpclaims.algorithms.lowy_liu_asi_2024.alg1 import Algorithm1
from dpclaims.algorithms.lowy_liu_asi_2024.alg2 import Algorithm2
from dpclaims.algorithms.lowy_liu_asi_2024.alg3 import Algorithm3
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import (
    ALG2_QUERY_LAPLACE,
    ALG2_THRESHOLD_LAPLACE,
    DEFAULT_Q,
)
from dpclaims.data import UserDataset
from dpclaims.errors import check_choice
from dpclaims.losses import LinearLoss
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget

__all__ = [
    "AUDIT_EPSILON",
    "AuditSetup",
    "q1_cluster_size",
    "alg1_audit",
    "alg2_audit",
    "alg3_audit",
    "audit_builder",
    "halting_law",
    "profile_epsilon",
    "q1_exact",
    "HaltIndicator",
    "HaltingStep",
    "HaltingTime",
    "alg1_halt_claim",
    "constant_score_claim",
    "gaussian_dp_epsilon",
    "halting_time_claim",
]

AUDIT_EPSILON = 2.0
"""Audits run at ε = 2 (spec §7(a): 10^4 trials suffice to flag a violation there)."""


@dataclass(frozen=True, kw_only=True)
class AuditSetup:
    """An audit configuration: ``target`` (algorithm, d0, d1, claim) and its ``info`` numbers."""

    target: AuditTarget
    info: dict

    @property
    def algorithm(self) -> Any:
        """The configured algorithm (the target's mechanism)."""
        return self.target.mechanism


def _audit_loss() -> LinearLoss:
    """The audit loss ``f(x, z) = ⟨z, x⟩`` (gradient z) of spec §7(a)."""
    return LinearLoss(scale=-1.0)


def q1_cluster_size(size: int, offset: float = -1.0) -> int:
    """k with ``s(D) − 4K/5 = (k² + (K−k)²)/K − 0.8K`` closest to ``offset`` (Q1, spec §7(a))."""
    k = np.arange(size // 2 + 1, size + 1)
    return int(k[np.argmin(np.abs((k**2 + (size - k) ** 2) / size - 0.8 * size - offset))])


def _q1_scores(K: int, k: int) -> dict:
    """Concentration scores of Q1's D and D' (cluster of k users, one moved)."""
    return {
        "score_d0": (k**2 + (K - k) ** 2) / K,
        "score_d1": ((k - 1) ** 2 + (K - k) ** 2 + 1) / K,
    }


def alg1_audit(
    pair: str = "P1",
    *,
    algorithm: type[Algorithm1] = Algorithm1,
    n: int = 7000,
    m: int = 16,
    epsilon: float = AUDIT_EPSILON,
    delta: float = 1e-5,
    tau_multiplier: float | None = None,
    radius: float | None = None,
    side: str = "above",
) -> AuditSetup:
    """Algorithm 1 end-to-end on a spec §7(a) pair.

    n = 7000, m = 16, d = 1, η = 1, index partition (user 0 in phase 1, group 1), domain
    radius 10³ηLm; τ-multiplier: τ_1 = D_c/4 (P1, P3), 10⁻⁶·D_c (P2), 10⁻³·D_c (P4: a small
    σ makes a filter that runs off the gate visible; privacy holds for any τ, spec §3.7), with
    D_c = η_1(m+1)/2 the cluster offset.  P3 places the outlier at 1.99τ_1.  ``info`` holds C,
    k, D_c, τ_1 and the predicted exact ε.  ``tau_multiplier`` overrides τ_1/D_c and ``radius``
    the domain radius (privacy holds for any τ and domain, spec §3.5: a large τ with an outlier
    at 1.99τ_1 exposes noise that does not scale with τ).  ``side`` (P1): "above" puts s(D') at
    or just above the threshold 4C/5 (both scores pass: the halt event is the Laplace lower tail),
    "below" puts s(D) at or just below it (the pass event is the upper tail, so repeated tests of
    the same users, mutant M4, multiply its ratio).
    """
    from dpclaims.hardinstances.canaries import (
        balanced_clusters_pair,
        far_outlier_pair,
        halting_threshold_pair,
        halting_threshold_size,
    )
    from dpclaims.hardinstances.lowy_liu_asi_2024 import padded_pair

    check_choice(pair, ("P1", "P2", "P3", "P4"), "pair")
    problem = Problem(
        n=n,
        m=m,
        d=1,
        epsilon=epsilon,
        delta=delta,
        radius=1000.0 * m if radius is None else radius,
        loss=_audit_loss(),
    )
    probe = Algorithm1.from_theorem(problem, eta=1.0, partition="index")
    eta1, steps = probe.step_sizes[0], probe.steps[0]
    # D_c: a constant-gradient user's average iterate moves η_1(T+1)/2
    offset = eta1 * (steps + 1) / 2.0
    if tau_multiplier is None:
        tau_multiplier = {"P1": 0.25, "P2": 1e-6, "P3": 0.25, "P4": 1e-3}[pair]
    tau1 = offset * tau_multiplier
    algo = algorithm.from_theorem(
        problem, eta=1.0, partition="index", tau_const=tau1 / (eta1 * math.sqrt(steps))
    )
    C = algo.C
    info = {"C": C, "D_c": offset, "tau_1": algo.taus[0], "reference_epsilon": 0.0}
    check_choice(side, ("above", "below"), "side")
    if pair == "P1":
        k = halting_threshold_size(C)
        if side == "below":  # largest k with s(D) = (k² + (C−k)²)/C ≤ 4C/5
            k -= 1
            while (k**2 + (C - k) ** 2) / C > 0.8 * C:
                k -= 1
        base = halting_threshold_pair(size=C, k=k, m=m, d=1, cluster_b=-1.0)
        info.update(k=k, reference_epsilon=2.0 * (k - 1) * epsilon / (20.0 * C))
    elif pair == "P2":
        base = far_outlier_pair(n=C, m=m, d=1, displacement=-1.0)
    elif pair == "P3":
        base = far_outlier_pair(n=C, m=m, d=1, displacement=-1.99 * algo.taus[0] / offset)
    else:
        base = balanced_clusters_pair(size=C, m=m, d=1, majority=-1.0)
    padded = padded_pair(base, n)
    target = AuditTarget(mechanism=algo, d0=padded.d0, d1=padded.d1, claim=algo.privacy_claim)
    return AuditSetup(target=target, info=info)


def alg2_audit(
    pair: str = "Q1",
    *,
    algorithm: type[Algorithm2] = Algorithm2,
    n_phase: int = 10_000,
    steps: int = 20,
    epsilon: float = AUDIT_EPSILON,
    delta: float = 1e-6,
    n_total: int = 48_000,
    smoothing: float = 0.0,
    tau: float | None = None,
) -> AuditSetup:
    """Algorithm 2 (one phase, full batch K_i = n_i) on a spec §7(a) pair.

    m = 16, d = 1, τ = 0.1 (Q1, Q4) or 10⁻⁶ (Q2); Q3 puts the outlier gradient at 1.99τ.
    Q1 picks the cluster size k with s(D) − 4K/5 ≈ −1.  ``smoothing`` > 0 uses the smoothed
    oracle of Thm 4.1 (the audit loss is linear, so its gradients are unchanged).  ``tau``
    overrides τ (Q1's scores, hence its exact ε, are the same for any τ < 1/2).
    """
    from dpclaims.hardinstances.canaries import (
        balanced_clusters_pair,
        far_outlier_pair,
        halting_threshold_pair,
    )

    check_choice(pair, ("Q1", "Q2", "Q3", "Q4"), "pair")
    if tau is None:
        tau = 1e-6 if pair == "Q2" else 0.1
    problem = Problem(n=n_phase, m=16, d=1, epsilon=epsilon, delta=delta, loss=_audit_loss())
    algo = algorithm.from_theorem(
        problem, steps=steps, tau=tau, n_total=n_total, smoothing=smoothing
    )
    K = algo.batch
    info = {"K": K, "tau": tau}
    if pair == "Q1":
        k = q1_cluster_size(K)
        base = halting_threshold_pair(size=K, k=k, m=16, d=1, cluster_b=1.0)
        info.update(k=k, **_q1_scores(K, k))
    elif pair == "Q2":
        base = far_outlier_pair(n=K, m=16, d=1, displacement=1.0)
    elif pair == "Q3":
        base = far_outlier_pair(n=K, m=16, d=1, displacement=1.99 * tau)
    else:
        base = balanced_clusters_pair(size=K, m=16, d=1, majority=1.0)
    target = AuditTarget(mechanism=algo, d0=base.d0, d1=base.d1, claim=algo.privacy_claim)
    return AuditSetup(target=target, info=info)


def alg3_audit(
    pair: str = "Q1",
    *,
    algorithm: type[Algorithm3] = Algorithm3,
    epsilon: float = AUDIT_EPSILON,
    delta: float = 1e-6,
    tau: float | None = None,
) -> AuditSetup:
    """Algorithm 3 end-to-end (paper constants, index partition, β = 0), Q pair in phase 1.

    n is chosen so that n_1 = 10⁴; the other phases' users are filler at 0 (concentrated).
    ``tau`` overrides the pair's τ (Q1: 0.1, Q2: 10⁻⁶); Q1's scores are the same for any
    τ < 1/2 (its users are identical or at distance 1), so its exact ε does not depend on τ.
    """
    from dpclaims.hardinstances.canaries import far_outlier_pair, halting_threshold_pair
    from dpclaims.hardinstances.lowy_liu_asi_2024 import padded_pair

    check_choice(pair, ("Q1", "Q2"), "pair")
    n = int(math.ceil(10_000 / ((1 - 2**-DEFAULT_Q) / 2**DEFAULT_Q))) + 1
    if tau is None:
        tau = 1e-6 if pair == "Q2" else 0.1
    problem = Problem(
        n=n, m=16, d=1, epsilon=epsilon, delta=delta, radius=1000.0, loss=_audit_loss()
    )
    algo = algorithm.from_theorem(problem, tau=tau, lam=1.0, partition="index")
    K = algo.phase_sizes[0]
    info = {"n": n, "K": K, "T_1": algo.steps[0], "tau": tau}
    if pair == "Q1":
        k = q1_cluster_size(K)
        base = halting_threshold_pair(size=K, k=k, m=16, d=1, cluster_b=1.0)
        info.update(k=k, **_q1_scores(K, k))
    else:
        base = far_outlier_pair(n=K, m=16, d=1, displacement=1.0)
    padded = padded_pair(base, n)
    target = AuditTarget(mechanism=algo, d0=padded.d0, d1=padded.d1, claim=algo.privacy_claim)
    return AuditSetup(target=target, info=info)


# -------------------------------------------------------------------------------- exact references


def halting_law(score: float, K: int, steps: int, epsilon: float) -> np.ndarray:
    """Exact law of Algorithm 2's halting step H for a constant score (spec §7(a) Q1): ``(T+1,)``.

    Index 0 is "never halted" (H = ∞), index t the halt at step t.  With ξ ~ Lap(8/ε) drawn
    once, ``ρ(ξ) = P(s + Lap(16/ε) ≥ 4K/5 + ξ)``; ``P(H = t) = E_ξ[ρ^{t−1}(1 − ρ)]``,
    ``P(H = ∞) = E_ξ[ρ^T]``.  Computed once per argument tuple (quadrature, ~1 s).
    """
    return _halting_law(float(score), int(K), int(steps), float(epsilon)).copy()


@functools.lru_cache(maxsize=32)
def _halting_law(score: float, K: int, steps: int, epsilon: float) -> np.ndarray:
    b_thr, b_q = ALG2_THRESHOLD_LAPLACE / epsilon, ALG2_QUERY_LAPLACE / epsilon

    # scipy.stats.laplace's sf and pdf, the same float operations without the wrapper's cost
    # per scalar (the integrands are called ~25,000 times a law)
    def rho(xi):
        x = np.float64(0.8 * K + xi - score) / b_q
        return 1.0 - 0.5 * np.exp(x) if x < 0 else 0.5 * np.exp(-x)

    def density(xi):
        return 0.5 * np.exp(-abs(np.float64(xi) / b_thr)) / b_thr

    def moment(f):
        val = 0.0
        for lo, hi in ((-np.inf, 0.0), (0.0, np.inf)):
            val += integrate.quad(lambda xi: f(rho(xi)) * density(xi), lo, hi, limit=200)[0]
        return val

    law = np.empty(steps + 1)
    law[0] = moment(lambda r: r**steps)
    for t in range(1, steps + 1):
        law[t] = moment(lambda r, t=t: r ** (t - 1) * (1 - r))
    return law


def profile_epsilon(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """Smallest ε' with ``Σ max(p − e^ε' q, 0) ≤ δ`` in both directions (discrete laws)."""

    def excess(eps, a, b):
        return float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)))

    best = 0.0
    for a, b in ((p, q), (q, p)):
        lo, hi = 0.0, 20.0
        if excess(lo, a, b) <= delta:
            continue
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if excess(mid, a, b) <= delta else (mid, hi)
        best = max(best, hi)
    return best


def q1_exact(steps: int = 20, epsilon: float = AUDIT_EPSILON) -> dict:
    """Exact halting laws ``p`` (D) and ``q`` (D') of Algorithm 2 on Q1, their ε at δ = 1e-5
    and their pure ε."""
    info = alg2_audit("Q1").info
    p = halting_law(info["score_d0"], info["K"], steps, epsilon)
    q = halting_law(info["score_d1"], info["K"], steps, epsilon)
    return {
        "p": p,
        "q": q,
        "eps_1e5": profile_epsilon(p, q, 1e-5),
        "pure": float(np.max(np.abs(np.log(p / q)))),
    }


def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """ε of a μ-GDP mechanism at δ (Dong, Roth & Su 2022, Cor. 2.13):
    ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``, solved for ε by bisection."""
    if mu <= 0:
        return 0.0

    def excess(eps):
        return special.ndtr(-eps / mu + mu / 2) - math.exp(eps) * special.ndtr(-eps / mu - mu / 2)

    lo, hi = 0.0, max(1.0, 20.0 * mu)
    if excess(lo) <= delta:
        return 0.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if excess(mid) <= delta else (mid, hi)
    return hi


def alg1_halt_claim(algorithm: Algorithm1) -> PrivacyClaim:
    """A bound derived for Algorithm 1's halt bit ``1[output = 0]`` (Thm B.1 step 2), not the
    paper's.

    The score test ``s_i + Lap(20/ε)`` on sensitivity ``2(C−1)/C`` is ``ε(C−1)/(10C)``-DP (the
    paper books ε/4; spec §3.2 item 2).  Later phases see a user only through ``x_{i−1}``, whose
    Gaussian release is ``μ ≤ ε/(50 ln²(n/δ))``-GDP (spec §3.6); its ε at δ is added.  It bounds
    the halt bit only, not the whole output the theorem's ε covers.
    """
    eps, C = algorithm.epsilon, algorithm.C
    mu = eps / (50.0 * math.log(algorithm.n / algorithm.delta) ** 2)
    tight = eps * (C - 1) / (10.0 * C) + gaussian_dp_epsilon(mu, algorithm.delta)
    return PrivacyClaim(
        epsilon=tight,
        delta=algorithm.delta,
        source="derived from the proof of Theorem B.1 step 2 (Lowy-Liu-Asi 2024), not the "
        "paper's: the halt bit's Laplace test at its sensitivity, plus the Gaussian part",
    )


def constant_score_claim(batch: int, epsilon: float, delta: float = 0.0) -> PrivacyClaim:
    """A bound derived for Algorithm 2's halting time on pairs whose scores are constant over the
    steps, not the paper's.

    With one threshold noise ξ ~ Lap(8/ε) per call and a score s the same at every step, the law
    of the halting step H depends on s only through ``s − ξ``; moving s by Δs is moving ξ by Δs,
    so ``P(H = t | D) ≤ e^{Δs ε/8} P(H = t | D')`` for every t: H is ``Δs·ε/8``-DP with
    ``Δs ≤ 2(K−1)/K``, i.e. ``ε(K−1)/(4K)`` (≈ ε/4).  It bounds this family only: score
    sequences that move in both directions can cost the full ε/2 of AboveThreshold.
    Linear-loss pairs with a full batch (Q1) have constant scores; Q1's exact ε is ``Δs·ε/8`` =
    0.444 at ε = 2.
    """
    return PrivacyClaim(
        epsilon=epsilon * (batch - 1) / (4.0 * batch),
        delta=delta,
        source="derived for Algorithm 2's halting time on constant scores (threshold shift), "
        "not the paper's",
    )


# ----------------------------------------------------------------------------- released statistics


@dataclass(frozen=True)
class HaltIndicator:
    """Post-processing ``1[output = 0]`` of an algorithm's release (P1/Q1 statistic): ``(T, 1)``."""

    algorithm: Any

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return np.all(self.algorithm(data, rng, trials) == 0.0, axis=1, keepdims=True).astype(
            np.float64
        )


@dataclass(frozen=True)
class HaltingStep:
    """White-box release of Algorithm 2's halting step H (0 = never halted): ``(T, 1)``.

    The proof of Thm C.1 shows the halting pattern alone is ε/2-DP (AboveThreshold).
    """

    algorithm: Algorithm2

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.algorithm.run(data, rng, trials).halt_step[:, None].astype(np.float64)


@dataclass(frozen=True)
class HaltingTime:
    """White-box halting time of Algorithm 2 or 3, "never halted" coded last: ``(T, 1)``.

    Algorithm 2: the halting step H ∈ {1, …, T_i}, or T_i + 1 if the call never halted.
    Algorithm 3: the global step ``T_1 + … + T_{i−1} + H`` of a halt in phase i, or
    ``Σ T_i + 1``.  Coding "never" last makes the rare late halts and the no-halt event one tail
    of a threshold test (spec §3.5 allows these transcripts; the halting pattern is part of them).
    """

    algorithm: Any

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        algo = self.algorithm
        if isinstance(algo, Algorithm2):
            run = algo.run(data, rng, trials)
            h = np.where(run.halted, run.halt_step, algo.steps + 1)
            return h[:, None].astype(np.float64)
        starts = np.concatenate([[0], np.cumsum(algo.steps)])
        run = algo.run(data, rng, trials)
        h = np.where(
            run.halted, starts[np.maximum(run.halt_phase - 1, 0)] + run.halt_step, starts[-1] + 1
        )
        return h[:, None].astype(np.float64)


# ---------------------------------------------------------------------------- audit-target builders


def audit_builder(audit, pair: str, *, wrap=None, halting: bool = False, claim_of=None, **options):
    """A zero-argument builder of ``audit(pair, **options).target`` (an audit experiment's or a
    mutant's ``build``).

    ``wrap`` post-processes the mechanism (e.g. :class:`HaltIndicator`); ``halting`` releases
    Algorithm 2's halting step alone (:class:`HaltingStep`) against its pure ε/2 claim (proof of
    Thm C.1).  ``claim_of(algorithm) -> PrivacyClaim`` replaces the claim (e.g. a derived
    bound such as :func:`alg1_halt_claim`, which the audit must label).  With ``algorithm=``
    among the options the builder is named after it and the pair.
    """

    def build() -> AuditTarget:
        target = audit(pair, **options).target
        algo = target.mechanism
        if halting:
            claim = PrivacyClaim(epsilon=target.claim.epsilon / 2.0, delta=0.0)
            target = replace(target, mechanism=HaltingStep(algo), claim=claim)
        elif wrap is not None:
            target = replace(target, mechanism=wrap(algo))
        if claim_of is not None:
            target = replace(target, claim=claim_of(algo))
        return target

    if "algorithm" in options:
        build.__name__ = f"build_{options['algorithm'].__name__}_{pair}"
    return build


def halting_time_claim(algorithm: Any) -> PrivacyClaim:
    """:func:`constant_score_claim` for Algorithm 2 (its batch) or Algorithm 3 (phase 1's batch;
    Q1 sits in phase 1 and the later phases' filler users never move), at δ = 0."""
    if isinstance(algorithm, Algorithm2):
        return constant_score_claim(algorithm.batch, algorithm.epsilon)
    return constant_score_claim(algorithm.phase(0).batch, algorithm.epsilon)
