"""Mutants of Ghazi et al. 2023 (spec 001 §7(c)): each is the reference class with one ``mutant=`` flag.

Black-box mutants (M1, M2, M3, M6 and the item-level baseline audited at the user level)
come with the neighbouring pair that exposes them (``build() -> (mechanism, d0, d1, claim)``);
white-box ones (M4, M5, full budget per phase) build the mutated algorithm, and the check
named in ``caught_by`` (a calibration / composition invariant of
:mod:`dpclaims.claims.checks.ghazi_et_al`) flags them.
"""

from __future__ import annotations

import math

import numpy as np

from ...data import UserDataset
from ...hardinstances.canaries import extreme_user_pair, outlier_count_pair
from ...privacy import PrivacyClaim, gaussian_epsilon
from ..ghazi_et_al import (
    PAPER_ID,
    BottomChannel,
    DelOutputPert,
    ItemLevelOutputPert,
    PhasedERM,
    PhasedSCO,
    SCOutputPert,
)
from ..mechanisms import analytic_gaussian_sigma
from . import Mutant, register_mutant

AUDIT_USERS = 20
"""n of the ⊥-channel / Gaussian-channel pairs (spec §7(a): n = 20 at (ε, δ) = (1, 1e-3))."""


def build_no_stability_test(epsilon: float = 1.0, delta: float = 1e-3):
    """M1 on the secondary pair x^(1) vs x^(0) with the auditor's Δ = 1e-4·p/n."""
    mech = DelOutputPert.from_theorem(
        epsilon, delta, 1e-4 / AUDIT_USERS, mutant="no-stability-test"
    )
    d0, d1 = outlier_count_pair(AUDIT_USERS, 1, 1)
    return mech, d0, d1, mech.privacy_claim


def build_fixed_threshold(epsilon: float = 1.0, delta: float = 1e-3):
    """M2 (R1 ≡ κ) on the ⊥ channel of x^(κ+1) vs x^(κ)."""
    mech = DelOutputPert.from_theorem(epsilon, delta, 1e-6, mutant="fixed-threshold")
    d0, d1 = outlier_count_pair(max(AUDIT_USERS, mech.kappa + 2), 1, mech.kappa + 1)
    return BottomChannel(mech), d0, d1, mech.privacy_claim


def build_tdlap_at_zero(epsilon: float = 1.0, delta: float = 1e-3):
    """M6 (one-sided TDLap) on the ⊥ channel of x^(1) vs x^(0)."""
    mech = DelOutputPert.from_theorem(epsilon, delta, 1e-6, mutant="tdlap-at-zero")
    d0, d1 = outlier_count_pair(AUDIT_USERS, 1, 1)
    return BottomChannel(mech), d0, d1, mech.privacy_claim


M3_USERS, M3_ITEMS = 120, 1000


def fast_path_pair(mech: SCOutputPert) -> tuple[UserDataset, UserDataset]:
    """Spec §7(c) M3 pair: n identical users (γ = 0) vs one user moved by ``Δ_fast(n−4κ−1)/(4κ+1)``."""
    r = 4 * mech.kappa
    shift = mech.Delta_fast * (mech.n - r - 1) / (r + 1)
    x0 = np.zeros((mech.n, mech.m, 1))
    x1 = x0.copy()
    x1[0] = shift
    return UserDataset(x0), UserDataset(x1)


def fast_path_mechanism(
    mutant: str | None = None, epsilon: float = 1.0, delta: float = 1e-5
) -> SCOutputPert:
    """Fast-path SCOutputPert for the M3 pair (quadratic, μ = 1, G = 2, β = 0.01, interior)."""
    return SCOutputPert.from_theorem(
        M3_USERS,
        M3_ITEMS,
        epsilon,
        delta,
        lipschitz=2.0,
        strong_convexity=1.0,
        beta=0.01,
        radius=10.0,
        interior=True,
        path="fast",
        mutant=mutant,
    )


def build_fast_no_fallback(epsilon: float = 1.0, delta: float = 1e-5):
    """M3: the certificate fails on D' and the mutant answers ⊥ instead of running the exact test."""
    mech = fast_path_mechanism("no-fallback", epsilon, delta)
    d0, d1 = fast_path_pair(mech)
    return mech, d0, d1, mech.privacy_claim


CONTRAST_USERS, CONTRAST_ITEMS = 10, 10


def build_item_level_as_user(epsilon: float = 1.0, delta: float = 1e-5):
    """Item-level output perturbation (Chaudhuri et al.) audited with user-level neighbours (spec §2.9)."""
    mech = ItemLevelOutputPert.from_theorem(
        CONTRAST_USERS,
        CONTRAST_ITEMS,
        epsilon,
        delta,
        lipschitz=2.0,
        strong_convexity=1.0,
        radius=1.0,
    )
    base = UserDataset(np.zeros((CONTRAST_USERS, CONTRAST_ITEMS, 1)))
    d0, d1 = extreme_user_pair(base, np.array([1.0]))
    return (
        mech,
        d0,
        d1,
        PrivacyClaim(
            epsilon, delta, "user", "replace", source="user-level reading of an item-level claim"
        ),
    )


def build_sigma_no_8kappa(n: int = 2000, m: int = 10**6):
    """M4: σ without the 8κ factor (white-box; black-box pairs stay within ε)."""
    return SCOutputPert.from_theorem(
        n,
        m,
        1.0,
        1e-5,
        lipschitz=2.0,
        strong_convexity=1.0,
        beta=0.01,
        radius=1.0,
        mutant="sigma-no-8kappa",
    )


def build_reuse_users(n: int = 4096, m: int = 100):
    """M5: Phased-SCO whose phases all read every user."""
    return PhasedSCO.from_theorem(
        n, m, 1, 1.0, 1e-5, 1.0, 1.0, n0=64, mode="oracle", mutant="reuse-users"
    )


def build_full_budget_per_phase(n: int = 1000, m: int = 100):
    """Phased-ERM spending (ε, δ) per phase instead of (ε/T, δ/T)."""
    return PhasedERM.from_theorem(
        n, m, 4, 1.0, 1e-5, 1.0, 1.0, mode="oracle", mutant="full-budget-per-phase"
    )


_ITEM_TRUE = gaussian_epsilon(analytic_gaussian_sigma(1.0, 1e-5) / CONTRAST_ITEMS * 2.0, 1e-5)
"""The item-level σ is calibrated to 2G/(μnm) = 0.04; the user pair moves θ* by 2/n = 0.2 (= 5 × 0.04)."""

for _mutant in (
    Mutant(
        "ghazi23-m1-no-stability-test",
        PAPER_ID,
        "privacy",
        "DelOutputPert releases f(x) + N(0, σ²I) with the deletion-calibrated σ and no stability test "
        "(the test is what makes replace-one-user sensitivity irrelevant)",
        math.inf,
        build_no_stability_test,
        "audit: x^(1) vs x^(0), auditor-chosen Δ (spec §7(a) secondary audit)",
    ),
    Mutant(
        "ghazi23-m2-fixed-threshold",
        PAPER_ID,
        "privacy",
        "R1 ≡ κ instead of R1 ~ TDLap(ε1, δ1): Pr[⊥] is 1 on x^(κ+1) and 0 on x^(κ)",
        math.inf,
        build_fixed_threshold,
        "audit: ⊥ channel, x^(κ+1) vs x^(κ)",
    ),
    Mutant(
        "ghazi23-m3-fast-no-fallback",
        PAPER_ID,
        "privacy",
        "Appendix-C fast path returns ⊥ when the gradient certificate fails instead of running the exact test",
        math.inf,
        build_fast_no_fallback,
        "audit: identical users vs one user moved by Δ_fast(n−4κ−1)/(4κ+1)",
    ),
    Mutant(
        "ghazi23-m4-sigma-no-8kappa",
        PAPER_ID,
        "privacy",
        "σ = √(2 ln(2/δ1))·Δ/ε1 without the 8κ factor (sensitivity of the telescoped chosen sub-datasets)",
        None,
        build_sigma_no_8kappa,
        "value: ghazi23.thm31.noise calibration (E‖θ̂ − θ*‖²/d vs σ²)",
    ),
    Mutant(
        "ghazi23-m5-phased-sco-reuse-users",
        PAPER_ID,
        "privacy",
        "Phased-SCO runs every phase on all users at the full (ε, δ) (no parallel composition)",
        None,
        build_reuse_users,
        "value: ghazi23.thm51.phased_sco_dp disjoint-blocks invariant",
    ),
    Mutant(
        "ghazi23-m6-tdlap-at-zero",
        PAPER_ID,
        "privacy",
        "R1 drawn from a one-sided geometric on {0..2κ} (TDLap centred at 0): P[R1 = 0] ≈ 1 − e^{−ε1} ≫ δ",
        math.inf,
        build_tdlap_at_zero,
        "audit: ⊥ channel, x^(1) vs x^(0)",
    ),
    Mutant(
        "ghazi23-phased-erm-full-budget",
        PAPER_ID,
        "privacy",
        "Phased-ERM gives every phase (ε, δ) instead of (ε/T, δ/T) (basic composition broken)",
        None,
        build_full_budget_per_phase,
        "value: ghazi23.thm41.phased_erm_dp per-call budget invariant",
    ),
    Mutant(
        "ghazi23-item-level-as-user",
        PAPER_ID,
        "privacy",
        "item-level output perturbation (sensitivity 2G/(μnm)) presented as user-level private",
        _ITEM_TRUE,
        build_item_level_as_user,
        "audit: one user's m items at +1 vs −1",
    ),
):
    register_mutant(_mutant)
