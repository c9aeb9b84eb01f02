"""Mutants M1–M5 of spec 000 §7(c) (Lowy, Liu & Asi 2024), plus the §7(b) noise-calibration mutant.

Each is the reference :class:`~dpclaims.algorithms.lowy_liu_asi.Algorithm1` /
:class:`~dpclaims.algorithms.lowy_liu_asi.Algorithm2` / ``Algorithm3`` with one flag
(``mutant=...``), built on the spec §7(a) pair that exposes it.  Privacy mutants' ``build()``
returns ``(mechanism, d0, d1, claim)``; white-box-only ones (M2, M4) return the same audit
setup, which a black-box audit cannot flag at the paper's over-provisioned constants (their
``caught_by`` names the invariant test).  Utility mutants return the mutated algorithm.
"""

from __future__ import annotations

import math

from ...privacy import PrivacyClaim
from ..lowy_liu_asi import PAPER_ID, Algorithm3, HaltIndicator, HaltingStep, alg1_audit, alg2_audit
from . import Mutant, register_mutant


def _alg1(pair: str, mutant: str, wrap=None):
    def build():
        algo, d0, d1, claim, _ = alg1_audit(pair, mutant)
        return (algo if wrap is None else wrap(algo)), d0, d1, claim

    build.__name__ = f"build_alg1_{mutant.replace('-', '_')}_{pair}"
    return build


def _alg2(pair: str, mutant: str, wrap=None):
    def build():
        algo, d0, d1, claim, _ = alg2_audit(pair, mutant)
        if wrap is HaltingStep:  # the halting pattern alone: ε/2-DP, pure (proof of Thm C.1)
            return (
                HaltingStep(algo),
                d0,
                d1,
                PrivacyClaim(claim.epsilon / 2.0, 0.0, "user", "replace"),
            )
        return algo, d0, d1, claim

    build.__name__ = f"build_alg2_{mutant.replace('-', '_')}_{pair}"
    return build


def _sigma_sqrt_n():
    """RT-3n's algorithm with σ ∝ 1/√n_i (relaxed constants; a utility mutant)."""
    return Algorithm3.from_theorem(
        4000,
        16,
        4,
        4.0,
        1e-7,
        1.0,
        0.0,
        1.0,
        diameter=1.0,
        constants="relaxed",
        mutant="sigma-sqrt-n",
    )


_MUTANTS = [
    Mutant(
        "lla24-m1-alg1-no-filter",
        PAPER_ID,
        "privacy",
        "M1: Algorithm 1 averages every group iterate (outlier filter bypassed) while σ stays ∝ τ_i; "
        "the sensitivity is unbounded",
        math.inf,
        _alg1("P2", "no-filter"),
        "audit P2 (far outlier, tiny τ)",
    ),
    Mutant(
        "lla24-m1-alg2-no-filter",
        PAPER_ID,
        "privacy",
        "M1: Algorithm 2 averages every user gradient (filter bypassed) while σ stays ∝ τ",
        math.inf,
        _alg2("Q2", "no-filter"),
        "audit Q2 (far outlier, tiny τ)",
    ),
    Mutant(
        "lla24-m2-alg1-item-sigma",
        PAPER_ID,
        "privacy",
        "M2: Algorithm 1's σ_i uses the item-level sensitivity 2η_iL instead of τ_i (filter unchanged)",
        None,
        _alg1("P3", "item-sigma"),
        "white-box invariant sigma_i*eps*C/tau_i == 100 ln^2(n/delta)",
    ),
    Mutant(
        "lla24-m2-alg2-item-sigma",
        PAPER_ID,
        "privacy",
        "M2: Algorithm 2's σ_i uses the item-level sensitivity 2L/m instead of τ (filter unchanged)",
        None,
        _alg2("Q3", "item-sigma"),
        "white-box invariant sigma_i*eps*n_i/(tau*sqrt(T_i)) == 1000 ln(nde^eps/delta)",
    ),
    Mutant(
        "lla24-m3a-alg1-unnormalised-score",
        PAPER_ID,
        "privacy",
        "M3(a): Algorithm 1's concentration score is not divided by C, so the test always passes",
        math.inf,
        _alg1("P4", "unnormalised-score"),
        "audit P4 (balanced clusters)",
    ),
    Mutant(
        "lla24-m3a-alg2-unnormalised-score",
        PAPER_ID,
        "privacy",
        "M3(a): Algorithm 2's concentration score is not divided by K",
        math.inf,
        _alg2("Q4", "unnormalised-score"),
        "audit Q4 (balanced clusters)",
    ),
    Mutant(
        "lla24-m3b-alg1-no-test",
        PAPER_ID,
        "privacy",
        "M3(b): Algorithm 1's Laplace concentration test is skipped (never halts)",
        math.inf,
        _alg1("P4", "no-test"),
        "audit P4 (balanced clusters)",
    ),
    Mutant(
        "lla24-m3c-alg1-laplace-2",
        PAPER_ID,
        "privacy",
        "M3(c): Algorithm 1's score noise is Lap(2/ε) instead of Lap(20/ε): the halt bit leaks 10× more "
        "(ε/10 → ε; 1.77 instead of 0.177 on P1 at ε = 2)",
        None,
        _alg1("P1", "laplace-2", HaltIndicator),
        "calibration check on P1 (claim lla24.alg1.reference_eps -> inconsistent: 99% interval of the log halt "
        "ratio [1.72, 1.84] vs the exact 0.177); the P1 audit's certified lower bound (1.72 at 2e4 trials) "
        "exceeds the exact reference 0.177, itself a certified detection, though below the claimed eps = 2",
    ),
    Mutant(
        "lla24-m3d-alg2-threshold-per-step",
        PAPER_ID,
        "privacy",
        "M3(d): Algorithm 2 redraws the AboveThreshold threshold noise every step (the printed pseudo-code); "
        "the T_i tests then compose",
        None,
        _alg2("Q1", "threshold-per-step", HaltingStep),
        "goodness of fit of the halting step against the exact law (claim lla24.alg2.reference_eps)",
    ),
    Mutant(
        "lla24-m4-alg1-reuse-users",
        PAPER_ID,
        "privacy",
        "M4: every phase of Algorithm 1 draws its users from the start of the order (phases overlap)",
        None,
        _alg1("P2", "reuse-users"),
        "white-box partition-disjointness test",
    ),
    Mutant(
        "lla24-m5-alg1-leaky-halt",
        PAPER_ID,
        "privacy",
        "M5: Algorithm 1 releases the pre-noise average of the group iterates on a halt instead of 0",
        math.inf,
        _alg1("P4", "leaky-halt"),
        "audit P4 (honest always halts)",
    ),
    Mutant(
        "lla24-m5-alg2-leaky-halt",
        PAPER_ID,
        "privacy",
        "M5: Algorithm 2 releases the pre-noise minibatch gradient on a halt instead of 0",
        math.inf,
        _alg2("Q4", "leaky-halt"),
        "audit Q4 (honest always halts)",
    ),
    Mutant(
        "lla24-alg3-sigma-sqrt-n",
        PAPER_ID,
        "utility",
        "Algorithm 3 with σ_i ∝ 1/√n_i instead of 1/n_i (spec §7(b) noise-calibration mutant): more noise, "
        "private but the risk sits at chance level",
        None,
        _sigma_sqrt_n,
        "level check on RT-3n's instance (Alg3Level in dpclaims.claims.checks.lowy_liu_asi): mean normalised "
        "risk 0.99 [0.82, 1.16] at n = 8000 (30 runs), above the level 0.6 that the reference, 0.45 [0.34, 0.56], "
        "stays below; the RT-3n exponent alone does not catch it (r is at chance level, hence flat, at "
        "every n of the sweep: -1.21 [-1.38, -1.04] vs the reference -1.13 [-1.32, -0.94], 8 reps)",
    ),
]

for _mutant in _MUTANTS:
    register_mutant(_mutant)
