"""Known-buggy variants of DIFF2 (Murata & Suzuki 2023; spec 004 §7(c)).

Each is a subclass of :class:`~dpclaims.algorithms.murata_suzuki_2023.DIFF2GD` that overrides the
one line it
gets wrong.  Privacy mutants build the §7(a) canary audit
(:func:`~dpclaims.targets.murata_suzuki_2023.canary_audit_target`) at :data:`MUTANT_AUDIT` (ε = 3,
δ = 1e-5, R = 10, T = 5, the quick registry audit's R and T, so that its 5e5 trials per
dataset cost seconds; M2 at :data:`M2_AUDIT`, M4 on silos n = (5, 50)); their ``true_epsilon``
is the exact GDP ε of the σ's they really use there, or None where the leak is not Gaussian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from dpclaims.algorithms.murata_suzuki_2023 import DIFF2GD
from dpclaims.algorithms.murata_suzuki_2023.privacy import prop41_scale
from dpclaims.errors import InputError
from dpclaims.gdp import gdp_epsilon
from dpclaims.hardinstances.murata_suzuki_2023.nonconvex import CauchyCircleInstance
from dpclaims.problem import Problem
from dpclaims.targets.murata_suzuki_2023 import canary_audit_target
from dpclaims.targets.mutants import Mutant, register_mutant

__all__ = [
    "UnscaledDiffRadius",
    "UnscaledRadiusBoth",
    "RestartsNotComposed",
    "AddRemoveSensitivity",
    "NoiselessAccumulation",
    "MeanSiloSize",
    "M4_SILO_SIZES",
    "MUTANT_AUDIT",
    "M2_AUDIT",
    "build_utility_mutant",
]

PAPER = "murata-suzuki-2023"


@dataclass(frozen=True)
class UnscaledDiffRadius(DIFF2GD):
    """M1: difference rounds clip to C2 instead of ``C_{2,r} = C2·‖x_{r−1} − x_{r−2}‖`` (Alg. 1
    line 7) while the noise keeps ``σ2·C_{2,r}``."""

    def _difference_radii(self, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full(radius.shape, self.clip2), radius


@dataclass(frozen=True)
class UnscaledRadiusBoth(DIFF2GD):
    """U1: ``C_{2,r} = C2`` in both the clip and the noise of a difference round (Alg. 1 lines
    7-8): private, but the difference noise no longer shrinks with the step."""

    def _difference_radii(self, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        unscaled = np.full(radius.shape, self.clip2)
        return unscaled, unscaled


@dataclass(frozen=True)
class NoiselessAccumulation(DIFF2GD):
    """M5: Alg. 1 line 13 accumulates the noiseless ``v_{r−1}`` instead of the released
    ``ṽ_{r−1}``, so ``ṽ_r`` reveals the whole clipped sum since the last restart under one
    round's noise."""

    def _accumulated(self, *, v_clean: np.ndarray, v_released: np.ndarray) -> np.ndarray:
        return v_clean


@dataclass(frozen=True)
class RestartsNotComposed(DIFF2GD):
    """M2: σ1² calibrated for one restart, ``4uα*/(n_min²P²ε)``, instead of Prop. 4.1's
    ``4uα*⌈R/T⌉/(n_min²P²ε)``."""

    @classmethod
    def _noise_multipliers(cls, **schedule) -> tuple[float, float]:
        _, sigma2 = super()._noise_multipliers(**schedule)
        scale = prop41_scale(
            n_min=schedule["n_min"],
            silos=schedule["silos"],
            epsilon=schedule["epsilon"],
            delta=schedule["delta"],
        )
        return math.sqrt(scale * schedule["u"]), sigma2


@dataclass(frozen=True)
class AddRemoveSensitivity(DIFF2GD):
    """M3: noise sized for sensitivity ``C/(n_p P)`` (add/remove thinking) instead of Prop. 4.1's
    replace-one ``2C/(n_p P)``: both σ's halved."""

    @classmethod
    def _noise_multipliers(cls, **schedule) -> tuple[float, float]:
        sigma1, sigma2 = super()._noise_multipliers(**schedule)
        return sigma1 / 2, sigma2 / 2


@dataclass(frozen=True)
class MeanSiloSize(DIFF2GD):
    """M4: on unequal silos the σ's are calibrated with the mean silo size instead of Prop.
    4.1's n_min (σ ∝ 1/n), so a record of the smallest silo gets too little noise."""

    @classmethod
    def _noise_multipliers(cls, **schedule) -> tuple[float, float]:
        sizes = schedule["silo_sizes"]
        if sizes is None:
            raise InputError("MeanSiloSize (M4) needs unequal silos: pass silo_sizes=")
        shrink = schedule["n_min"] / float(np.mean(sizes))
        return tuple(shrink * s for s in super()._noise_multipliers(**schedule))


MUTANT_AUDIT = {"rounds": 10, "period": 5}
"""R and T of the mutants' canary audits: the quick registry audit's (``AUDIT_ROUNDS``
and ``AUDIT_PERIOD`` of :mod:`dpclaims.claims.tables.murata_suzuki_2023`); S's law does not
depend on them for a correct implementation, and a trial costs ≈ 0.5 µs per round."""

M2_AUDIT = {"rounds": 20, "period": 2}
"""R and T of M2's audit: its leak grows with the number of restarts ⌈R/T⌉ (σ1 too small by
sqrt(⌈R/T⌉)); at R = 20, T = 2 that is 10 restarts, true ε 7.93 (5.32 at R = 10, T = 2; 18.7 at
the spec's R = 200, T = 5).  The registry statistic weighs the rounds with the *claimed* σ's, which
under-weighs M2's restarts: at 5e5 trials it certifies 3.35 at R = 20, T = 2 (seeds 0, 1), only
3.1 at R = 10, T = 2."""


def _true_epsilon(algorithm: type[DIFF2GD], **options) -> float:
    target = canary_audit_target(algorithm, **{**MUTANT_AUDIT, **options})
    return gdp_epsilon(target.mechanism.algorithm.mu, target.claim.delta)


def build_utility_mutant(
    *, n: int = 10, m: int = 400, d: int = 10, epsilon: float = 1.0, delta: float = 1e-5
) -> DIFF2GD:
    """U1 on the §7(b) Cauchy instance with the theory schedule (N = n·m, G = 0.5, L = 1)."""
    inst = CauchyCircleInstance(d=d)
    problem = Problem(
        n=n, m=m, d=d, epsilon=epsilon, delta=delta, lipschitz=0.5, smoothness=1.0, loss=inst.loss
    )
    return UnscaledRadiusBoth.from_theorem(problem, initial_gap=inst.initial_gap, x0=inst.x0)


register_mutant(
    Mutant(
        name="diff2-m1-unscaled-diff-radius",
        paper=PAPER,
        kind="privacy",
        description="M1: difference rounds clip to C2 instead of C2·‖x_{r−1} − x_{r−2}‖ while the "
        "noise keeps σ2·C2·‖x_{r−1} − x_{r−2}‖ (Alg. 1 line 7); invisible to utility tests on "
        "smooth data",
        true_epsilon=None,
        build=partial(canary_audit_target, UnscaledDiffRadius, **MUTANT_AUDIT),
        caught_by="audit (transcript LR statistic, spec §7(a))",
    )
)
register_mutant(
    Mutant(
        name="diff2-m2-restarts-not-composed",
        paper=PAPER,
        kind="privacy",
        description="M2: σ1² calibrated for one restart instead of ⌈R/T⌉ (Prop. 4.1); audited at "
        "R = 20, T = 2 (10 restarts)",
        true_epsilon=_true_epsilon(RestartsNotComposed, **M2_AUDIT),
        build=partial(canary_audit_target, RestartsNotComposed, **M2_AUDIT),
        caught_by="audit (transcript LR statistic; parametric μ̂) and the Prop. 4.1 calibration "
        "check",
    )
)
register_mutant(
    Mutant(
        name="diff2-m3-add-remove-sensitivity",
        paper=PAPER,
        kind="privacy",
        description="M3: noise sized for sensitivity C/(n_p P) (add/remove thinking) instead of "
        "2C/(n_p P): σ's halved",
        true_epsilon=_true_epsilon(AddRemoveSensitivity),
        build=partial(canary_audit_target, AddRemoveSensitivity, **MUTANT_AUDIT),
        caught_by="audit (transcript LR statistic; parametric μ̂)",
    )
)
register_mutant(
    Mutant(
        name="diff2-m5-noiseless-accumulation",
        paper=PAPER,
        kind="privacy",
        description="M5: line 13 accumulates the noiseless v_{r−1} instead of the released "
        "ṽ_{r−1}, so ṽ_r reveals the whole clipped sum since the last restart under one round's "
        "noise",
        true_epsilon=None,
        build=partial(canary_audit_target, NoiselessAccumulation, accumulated=True, **MUTANT_AUDIT),
        caught_by="audit (accumulated-mean LR statistic)",
    )
)
M4_SILO_SIZES = (5, 50)
"""Spec §7(c) M4: unequal silos n = (5, 50), the canary in the smallest."""

register_mutant(
    Mutant(
        name="diff2-m4-mean-silo-size",
        paper=PAPER,
        kind="privacy",
        description="M4: on unequal silos (n = (5, 50), padded to m = 50 with silo_sizes=) the "
        "σ's are calibrated with the mean n_p (27.5) instead of n_min (5) (Prop. 4.1): noise "
        "n_mean/n_min = 5.5× too small for a record of the smallest silo",
        true_epsilon=_true_epsilon(MeanSiloSize, silo_sizes=M4_SILO_SIZES),
        build=partial(canary_audit_target, MeanSiloSize, silo_sizes=M4_SILO_SIZES, **MUTANT_AUDIT),
        caught_by="audit (transcript LR statistic, canary in the smallest silo)",
    )
)
register_mutant(
    Mutant(
        name="diff2-u1-unscaled-radius-both",
        paper=PAPER,
        kind="utility",
        description="U1: C_{2,r} = C2 in both clip and noise (private but no longer shrinking): "
        "the difference noise swamps the estimator, the utility misses Prop. D.2's bound",
        true_epsilon=None,
        build=build_utility_mutant,
        caught_by="level check against Prop. D.2's bound (diff2gd.propD2.explicit_bound "
        "experiment)",
    )
)
