"""Mutants M1–M8 of spec 003 §7(c) (pure ε-DP SCO with heavy tails, Lowy 2026).

The spec's M9 (no localization, ``mutant="no_localization"`` of the reference class) is not a bug:
it is ε-DP and meets Prop 3.2's rate (its minimizer shift is bounded D-free, like the paper's
Bias/λ, and it spends all of ε on one release), so it is not in this corpus of known bugs;
``tests/algorithms/test_heavy_tailed.py`` keeps it as a documented non-bug check.

Each is the reference class of :mod:`dpclaims.algorithms.heavy_tailed` with its ``mutant`` flag set
(one documented change).  Privacy mutants build ``(mechanism, d0, d1, claim)`` at ε = 1, δ = 0 on the
spec's worst-case pairs, with the "worst valid point" solver harness where the bug needs it; utility
mutants build the mutated algorithm object.  True ε values are the spec's (M1: 2ε — the harness makes
both stages lose twice their budget; M2: 1.5ε; M5: √2·ε in d = 2).
"""

from __future__ import annotations

import math

from ...hardinstances.canaries import heavy_outlier_pair
from ...hardinstances.heavy_tailed_sco import block_outlier_pair, light_replacement_pair, shift_pair
from ...losses import AbsoluteLoss
from ..heavy_tailed import (
    PAPER_ID,
    Ball,
    DoubleOutputPert,
    L2LaplaceMechanism,
    PopLocalize,
    WorstValidPoint,
)
from . import Mutant, register_mutant

AUDIT_N = 200
"""Records of the §7(a) pair (99 × (1, −1), 100 × (1, +1) and the special point)."""


def audit_alg4(mutant: str | None = None, epsilon: float = 1.0, harness: bool = True, pair=None):
    """Algorithm 4 of §7(a) (d = 1, 𝒲 = [−10, 10], a|w − b|, λ = 1, k = 2, G_k = 1, β0 = 0.1) and its pair."""
    d0, d1 = heavy_outlier_pair(AUDIT_N) if pair is None else pair
    alg = DoubleOutputPert.from_theorem(
        AUDIT_N,
        1,
        epsilon,
        1.0,
        2,
        1.0,
        0.1,
        Ball.centered(1, 10.0),
        AbsoluteLoss(),
        harness=WorstValidPoint.for_record(d0, 0) if harness else None,
        mutant=mutant,
    )
    return alg, d0, d1, alg.privacy_claim


def audit_alg1(mutant: str | None = None, epsilon: float = 1.0, phases: int = 4):
    """Algorithm 1 (test constants, J = 1) releasing every phase output, outlier in the last phase's block."""
    probe = PopLocalize.from_theorem(
        AUDIT_N,
        1,
        epsilon,
        1.0,
        1.0,
        2,
        0.1,
        Ball.centered(1, 10.0),
        AbsoluteLoss(),
        constants="test",
        phases=phases,
    )
    position = probe.blocks[-1][0]
    d0, d1 = block_outlier_pair(AUDIT_N, position)
    alg = PopLocalize.from_theorem(
        AUDIT_N,
        1,
        epsilon,
        1.0,
        1.0,
        2,
        0.1,
        Ball.centered(1, 10.0),
        AbsoluteLoss(),
        constants="test",
        phases=phases,
        harness=WorstValidPoint.for_record(d0, position),
        output="phases",
        mutant=mutant,
    )
    return alg, d0, d1, alg.privacy_claim


def audit_sampler(
    radius: str = "gamma", coordinatewise: bool = False, d: int = 2, epsilon: float = 1.0
):
    """The Lap₂ sampler alone: diagonal shift Δ = 1 in d = 2, scale 1/ε."""
    mech = L2LaplaceMechanism(epsilon, 1.0, radius, coordinatewise)
    d0, d1 = shift_pair(d, 1.0)
    return mech, d0, d1, mech.privacy_claim


def _m1(**kw):
    return audit_alg4("no_tau", **kw)


def _m2(**kw):
    return audit_alg4("stage2_full_eps", **kw)


def _m3(**kw):
    return audit_alg4("no_extension", **kw)


def _m4(**kw):
    return audit_sampler(radius="exp", **kw)


def _m5(**kw):
    return audit_sampler(coordinatewise=True, **kw)


def _m6(**kw):
    return audit_alg4("data_dependent_C", pair=light_replacement_pair(AUDIT_N), **kw)


def _m7(**kw):
    return audit_alg1("phase_reuse", **kw)


def _m8(n: int = 1000, k: float = 4.0, epsilon: float = 1.0):
    return DoubleOutputPert.from_theorem(
        n,
        1,
        epsilon,
        1.0,
        k,
        1.0,
        0.1,
        Ball.centered(1, 10.0),
        AbsoluteLoss(),
        output="final",
        mutant="C_wrong_exponent",
    )


for _name, _kind, _desc, _eps, _build, _caught in (
    (
        "heavy-tailed-m1-no-tau",
        "privacy",
        "Algorithm 4 noise calibrated to Δ = 2C/(λn): forgets the 2τ slack of the "
        "certified solver (exact only for an exact solver)",
        2.0,
        _m1,
        "joint (w̃, w_out) audit WITH the worst-valid-point harness",
    ),
    (
        "heavy-tailed-m2-stage2-full-eps",
        "privacy",
        "stage-2 Laplace noise of Algorithm 4 uses ε instead of ε/2",
        1.5,
        _m2,
        "joint (w̃, w_out) audit with the harness",
    ),
    (
        "heavy-tailed-m3-no-extension",
        "privacy",
        "minimizes the raw F̂_λ (no Lipschitz extension / clipping) while "
        "the noise is still calibrated to C",
        math.inf,
        _m3,
        "audit on the 10⁶-outlier pair",
    ),
    (
        "heavy-tailed-m4-radius-exp",
        "privacy",
        "Lap₂ radius drawn from Exp(b) instead of Gamma(d, b) (d = 2)",
        math.inf,
        _m4,
        "sampler audit with the small-ball statistic -‖x‖",
    ),
    (
        "heavy-tailed-m5-coordwise-laplace",
        "privacy",
        "per-coordinate Laplace with the ℓ2 sensitivity as scale (d = 2)",
        math.sqrt(2.0),
        _m5,
        "sampler audit, quadrant statistic on a diagonal shift",
    ),
    (
        "heavy-tailed-m6-data-dependent-C",
        "privacy",
        "clipping level C = min(C_theorem, max_i L_{z_i}) computed from "
        "the data (noise scale and r follow it)",
        math.inf,
        _m6,
        "audit on the heavy-vs-light record pair",
    ),
    (
        "heavy-tailed-m7-phase-reuse",
        "privacy",
        "Algorithm 1 phases all use the full dataset (no disjoint blocks)",
        4.0,
        _m7,
        "end-to-end audit of the 4 phase outputs",
    ),
    (
        "heavy-tailed-m8-C-wrong-exponent",
        "utility",
        "C = G_k √(εn) regardless of k",
        None,
        _m8,
        "RT1-n rate test at k = 4 (slope −0.5 instead of −0.75)",
    ),
):
    register_mutant(
        Mutant(
            name=_name,
            paper=PAPER_ID,
            kind=_kind,
            description=_desc,
            true_epsilon=_eps,
            build=_build,
            caught_by=_caught,
        )
    )
