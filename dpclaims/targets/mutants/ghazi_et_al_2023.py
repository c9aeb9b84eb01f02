"""Mutants of Ghazi et al. 2023 (spec 001 §7(c)): each is a subclass of the reference class
that overrides the one method where it departs from the paper.

Black-box mutants (M1, M2, M3, M6 and the item-level baseline audited at the user level)
come with the neighbouring pair that exposes them (``build() -> AuditTarget``); white-box ones
(M4, M5, full budget per phase) build the mutated algorithm, and the check named in
``caught_by`` (a calibration / composition invariant of
:mod:`dpclaims.claims.checks.ghazi_et_al_2023`) flags them.
"""

from __future__ import annotations

import math

import numpy as np

from dpclaims.algorithms.ghazi_et_al_2023 import (
    PAPER_ID,
    BottomChannel,
    DelOutputPert,
    ItemLevelOutputPert,
    OutputPertRun,
    PhasedERM,
    PhasedSCO,
    SCOutputPert,
)
from dpclaims.algorithms.ghazi_et_al_2023.stability import exact_minimiser
from dpclaims.algorithms.mechanisms import analytic_gaussian_sigma
from dpclaims.data import UserDataset
from dpclaims.hardinstances.canaries import extreme_user_pair, outlier_count_pair
from dpclaims.privacy import PrivacyClaim, gaussian_epsilon
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget
from dpclaims.targets.mutants import Mutant, register_mutant

__all__ = [
    "NoStabilityTest",
    "FixedThreshold",
    "TDLapAtZero",
    "NoFallback",
    "SigmaNo8Kappa",
    "ReuseUsers",
    "FullBudgetPerPhase",
    "fast_path_mechanism",
    "fast_path_pair",
]


class NoStabilityTest(DelOutputPert):
    """M1: releases ``f(x) + N(0, σ²I)`` with the deletion-calibrated σ and no stability test
    (breaks Algorithm 1 lines 4-6: the test is what bounds the replace-one sensitivity)."""

    def _release(self, data, rng, trials: int, *, reg, centre, domain, target):
        values, counts = self._user_types(data)
        solver = exact_minimiser(self.loss)
        theta = solver.minimiser(values, counts[None, :], reg=reg, centre=centre, domain=domain)
        noise = self.sigma * rng.standard_normal((trials, data.d))
        theta = np.broadcast_to(theta[:, 0, :], (trials, data.d)) + noise
        return theta, np.zeros(trials, bool), None, None, 1


class FixedThreshold(DelOutputPert):
    """M2: ``R1 ≡ κ`` instead of ``R1 ~ TDLap(ε1, δ1)`` (breaks Algorithm 1 line 3)."""

    def _draw_radius(self, rng: np.random.Generator, trials: int) -> np.ndarray:
        return np.full(trials, self.kappa)


class TDLapAtZero(DelOutputPert):
    """M6: ``R1`` from a one-sided geometric on {0..2κ} (TDLap centred at 0, so
    ``P[R1 = 0] ≈ 1 − e^{−ε1} ≫ δ1``; breaks Definition 3.4's shift by κ)."""

    def _draw_radius(self, rng: np.random.Generator, trials: int) -> np.ndarray:
        support = np.arange(2 * self.kappa + 1)
        w = np.exp(-self.tdlap.epsilon * support)
        return rng.choice(support, size=trials, p=w / w.sum())


class NoFallback(SCOutputPert):
    """M3: the Appendix-C fast path answers ⊥ when the gradient certificate fails instead of
    running the exact test (breaks Appendix C's fallback)."""

    def _fallback(self, data, rng, trials: int, *, centre, domain, transcript) -> OutputPertRun:
        return OutputPertRun(
            theta=np.full((trials, data.d), np.nan),
            bottom=np.ones(trials, bool),
            gradient_evaluations=self.n * self.m,
            f_evaluations=1,
            sigma=self.sigma,
            certified=False,
        )


class SigmaNo8Kappa(SCOutputPert):
    """M4: ``σ = √(2 ln(2/δ1))·Δ/ε1`` without the 8κ factor (breaks Algorithm 1 line 2: the
    sensitivity of the telescoped chosen sub-datasets is 8κΔ)."""

    @staticmethod
    def _sensitivity_factor(kappa: int) -> float:
        return 1.0


class ReuseUsers(PhasedSCO):
    """M5: every phase reads all users at the full (ε, δ) (breaks Algorithm 4's disjoint blocks,
    so parallel composition no longer applies)."""

    @property
    def phase_blocks(self) -> list[tuple[int, int]]:
        return [(0, self.n)] * self.phases


class FullBudgetPerPhase(PhasedERM):
    """Phased-ERM giving every phase (ε, δ) instead of (ε/T, δ/T) (breaks Algorithm 3's basic
    composition)."""

    def _budget_share(self) -> int:
        return 1


AUDIT_USERS = 20
"""n of the ⊥-channel / Gaussian-channel pairs (spec §7(a): n = 20 at (ε, δ) = (1, 1e-3))."""


def _bottom_problem(epsilon: float, delta: float) -> Problem:
    return Problem(n=AUDIT_USERS, epsilon=epsilon, delta=delta)


def _quadratic_problem(n: int, m: int, *, epsilon: float, delta: float, radius: float) -> Problem:
    """The strongly convex problems of M3, M4 and the item-level contrast: G = 2, μ = 1."""
    return Problem(
        n=n,
        m=m,
        epsilon=epsilon,
        delta=delta,
        lipschitz=2.0,
        strong_convexity=1.0,
        radius=radius,
    )


def build_no_stability_test(epsilon: float = 1.0, delta: float = 1e-3) -> AuditTarget:
    """M1 on the secondary pair x^(1) vs x^(0) with the auditor's Δ = 1e-4·p/n."""
    mech = NoStabilityTest.from_theorem(_bottom_problem(epsilon, delta), Delta=1e-4 / AUDIT_USERS)
    d0, d1 = outlier_count_pair(AUDIT_USERS, 1, 1)
    return AuditTarget(mechanism=mech, d0=d0, d1=d1, claim=mech.privacy_claim)


def build_fixed_threshold(epsilon: float = 1.0, delta: float = 1e-3) -> AuditTarget:
    """M2 (R1 ≡ κ) on the ⊥ channel of x^(κ+1) vs x^(κ)."""
    mech = FixedThreshold.from_theorem(_bottom_problem(epsilon, delta), Delta=1e-6)
    d0, d1 = outlier_count_pair(max(AUDIT_USERS, mech.kappa + 2), 1, mech.kappa + 1)
    return AuditTarget(mechanism=BottomChannel(mech), d0=d0, d1=d1, claim=mech.privacy_claim)


def build_tdlap_at_zero(epsilon: float = 1.0, delta: float = 1e-3) -> AuditTarget:
    """M6 (one-sided TDLap) on the ⊥ channel of x^(1) vs x^(0)."""
    mech = TDLapAtZero.from_theorem(_bottom_problem(epsilon, delta), Delta=1e-6)
    d0, d1 = outlier_count_pair(AUDIT_USERS, 1, 1)
    return AuditTarget(mechanism=BottomChannel(mech), d0=d0, d1=d1, claim=mech.privacy_claim)


M3_USERS, M3_ITEMS = 120, 1000


def fast_path_pair(mech: SCOutputPert) -> tuple[UserDataset, UserDataset]:
    """Spec §7(c) M3 pair: n identical users (γ = 0) vs one user moved by
    ``Δ_fast(n−4κ−1)/(4κ+1)``."""
    r = 4 * mech.kappa
    shift = mech.Delta_fast * (mech.n - r - 1) / (r + 1)
    x0 = np.zeros((mech.n, mech.m, 1))
    x1 = x0.copy()
    x1[0] = shift
    return UserDataset(x0), UserDataset(x1)


def fast_path_mechanism(
    algorithm: type[SCOutputPert] = SCOutputPert, *, epsilon: float = 1.0, delta: float = 1e-5
) -> SCOutputPert:
    """Fast-path ``algorithm`` (SCOutputPert or a mutant) for the M3 pair (quadratic, μ = 1,
    G = 2, β = 0.01, interior)."""
    problem = _quadratic_problem(M3_USERS, M3_ITEMS, epsilon=epsilon, delta=delta, radius=10.0)
    return algorithm.from_theorem(problem, beta=0.01, interior=True, path="fast")


def build_fast_no_fallback(epsilon: float = 1.0, delta: float = 1e-5) -> AuditTarget:
    """M3: the certificate fails on D' and the mutant answers ⊥ instead of running the exact
    test."""
    mech = fast_path_mechanism(NoFallback, epsilon=epsilon, delta=delta)
    d0, d1 = fast_path_pair(mech)
    return AuditTarget(mechanism=mech, d0=d0, d1=d1, claim=mech.privacy_claim)


CONTRAST_USERS, CONTRAST_ITEMS = 10, 10


def build_item_level_as_user(epsilon: float = 1.0, delta: float = 1e-5) -> AuditTarget:
    """Item-level output perturbation (Chaudhuri et al.) audited with user-level neighbours
    (spec §2.9)."""
    problem = _quadratic_problem(
        CONTRAST_USERS, CONTRAST_ITEMS, epsilon=epsilon, delta=delta, radius=1.0
    )
    mech = ItemLevelOutputPert.from_theorem(problem)
    base = UserDataset(np.zeros((CONTRAST_USERS, CONTRAST_ITEMS, 1)))
    d0, d1 = extreme_user_pair(base, np.array([1.0]))
    claim = PrivacyClaim(
        epsilon=epsilon,
        delta=delta,
        unit="user",
        relation="replace",
        source="user-level reading of an item-level claim",
    )
    return AuditTarget(mechanism=mech, d0=d0, d1=d1, claim=claim)


def build_sigma_no_8kappa(n: int = 2000, m: int = 10**6) -> SigmaNo8Kappa:
    """M4: σ without the 8κ factor (white-box; black-box pairs stay within ε)."""
    problem = _quadratic_problem(n, m, epsilon=1.0, delta=1e-5, radius=1.0)
    return SigmaNo8Kappa.from_theorem(problem, beta=0.01)


def build_reuse_users(n: int = 4096, m: int = 100) -> ReuseUsers:
    """M5: Phased-SCO whose phases all read every user."""
    problem = Problem(n=n, m=m, d=1, epsilon=1.0, delta=1e-5, lipschitz=1.0, radius=1.0)
    return ReuseUsers.from_theorem(problem, n0=64, oracle=1.0)


def build_full_budget_per_phase(n: int = 1000, m: int = 100) -> FullBudgetPerPhase:
    """Phased-ERM spending (ε, δ) per phase instead of (ε/T, δ/T)."""
    problem = Problem(n=n, m=m, d=4, epsilon=1.0, delta=1e-5, lipschitz=1.0, radius=1.0)
    return FullBudgetPerPhase.from_theorem(problem, oracle=1.0)


_ITEM_TRUE = gaussian_epsilon(analytic_gaussian_sigma(1.0, 1e-5) / CONTRAST_ITEMS * 2.0, 1e-5)
"""The item-level σ is calibrated to 2G/(μnm) = 0.04; the user pair moves θ* by 2/n = 0.2
(= 5 × 0.04)."""

for _mutant in (
    Mutant(
        name="ghazi23-m1-no-stability-test",
        paper=PAPER_ID,
        kind="privacy",
        description="DelOutputPert releases f(x) + N(0, σ²I) with the deletion-calibrated σ "
        "and no stability test (the test is what makes replace-one-user sensitivity irrelevant)",
        true_epsilon=math.inf,
        build=build_no_stability_test,
        caught_by="audit: x^(1) vs x^(0), auditor-chosen Δ (spec §7(a) secondary audit)",
    ),
    Mutant(
        name="ghazi23-m2-fixed-threshold",
        paper=PAPER_ID,
        kind="privacy",
        description="R1 ≡ κ instead of R1 ~ TDLap(ε1, δ1): Pr[⊥] is 1 on x^(κ+1) and 0 on x^(κ)",
        true_epsilon=math.inf,
        build=build_fixed_threshold,
        caught_by="audit: ⊥ channel, x^(κ+1) vs x^(κ)",
    ),
    Mutant(
        name="ghazi23-m3-fast-no-fallback",
        paper=PAPER_ID,
        kind="privacy",
        description="Appendix-C fast path returns ⊥ when the gradient certificate fails "
        "instead of running the exact test",
        true_epsilon=math.inf,
        build=build_fast_no_fallback,
        caught_by="audit: identical users vs one user moved by Δ_fast(n−4κ−1)/(4κ+1)",
    ),
    Mutant(
        name="ghazi23-m4-sigma-no-8kappa",
        paper=PAPER_ID,
        kind="privacy",
        description="σ = √(2 ln(2/δ1))·Δ/ε1 without the 8κ factor (sensitivity of the "
        "telescoped chosen sub-datasets)",
        true_epsilon=None,
        build=build_sigma_no_8kappa,
        caught_by="value: ghazi23.thm31.noise calibration (E‖θ̂ − θ*‖²/d vs σ²)",
    ),
    Mutant(
        name="ghazi23-m5-phased-sco-reuse-users",
        paper=PAPER_ID,
        kind="privacy",
        description="Phased-SCO runs every phase on all users at the full (ε, δ) "
        "(no parallel composition)",
        true_epsilon=None,
        build=build_reuse_users,
        caught_by="value: ghazi23.thm51.phased_sco_dp disjoint-blocks invariant",
    ),
    Mutant(
        name="ghazi23-m6-tdlap-at-zero",
        paper=PAPER_ID,
        kind="privacy",
        description="R1 drawn from a one-sided geometric on {0..2κ} (TDLap centred at 0): "
        "P[R1 = 0] ≈ 1 − e^{−ε1} ≫ δ",
        true_epsilon=math.inf,
        build=build_tdlap_at_zero,
        caught_by="audit: ⊥ channel, x^(1) vs x^(0)",
    ),
    Mutant(
        name="ghazi23-phased-erm-full-budget",
        paper=PAPER_ID,
        kind="privacy",
        description="Phased-ERM gives every phase (ε, δ) instead of (ε/T, δ/T) "
        "(basic composition broken)",
        true_epsilon=None,
        build=build_full_budget_per_phase,
        caught_by="value: ghazi23.thm41.phased_erm_dp per-call budget invariant",
    ),
    Mutant(
        name="ghazi23-item-level-as-user",
        paper=PAPER_ID,
        kind="privacy",
        description="item-level output perturbation (sensitivity 2G/(μnm)) presented as "
        "user-level private",
        true_epsilon=_ITEM_TRUE,
        build=build_item_level_as_user,
        caught_by="audit: one user's m items at +1 vs −1",
    ),
):
    register_mutant(_mutant)
