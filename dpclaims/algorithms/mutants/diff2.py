"""Known-buggy variants of DIFF2 (Murata & Suzuki 2023; spec 004 §7(c)).

Each is :class:`~dpclaims.algorithms.diff2.DIFF2GD` with its ``mutant`` flag set (one documented
change).  Privacy mutants build the §7(a) canary audit (``canary_audit_target``); their
``true_epsilon`` is the exact GDP ε of the σ's they really use, at the audit's defaults
(ε = 3, δ = 1e-5, R = 200, T = 5; M4 on silos n = (5, 50)), or None where the leak is not Gaussian.
"""

from __future__ import annotations

from functools import partial

from ...audit.gdp import gdp_epsilon
from ...hardinstances.nonconvex import CauchyCircleInstance
from ..diff2 import DIFF2GD, canary_audit_target
from . import Mutant, register_mutant

PAPER = "murata-suzuki-2023"


def _true_epsilon(mutant: str) -> float:
    mech, _, _, claim = canary_audit_target(mutant)
    return gdp_epsilon(mech.algorithm.mu, claim.delta)


def build_utility_mutant(
    n: int = 10, m: int = 400, d: int = 10, epsilon: float = 1.0, delta: float = 1e-5
) -> DIFF2GD:
    """U1 on the §7(b) Cauchy instance with the theory schedule (N = n·m)."""
    inst = CauchyCircleInstance(d=d)
    return DIFF2GD.from_theorem(
        n,
        m,
        d,
        epsilon,
        delta,
        0.5,
        1.0,
        loss=inst.loss,
        initial_gap=inst.initial_gap,
        x0=inst.x0,
        mutant="unscaled-radius-both",
    )


register_mutant(
    Mutant(
        name="diff2-m1-unscaled-diff-radius",
        paper=PAPER,
        kind="privacy",
        description="M1: difference rounds clip to C2 instead of C2·‖x_{r−1} − x_{r−2}‖ while the noise keeps "
        "σ2·C2·‖x_{r−1} − x_{r−2}‖ (Alg. 1 line 7); invisible to utility tests on smooth data",
        true_epsilon=None,
        build=partial(canary_audit_target, "unscaled-diff-radius"),
        caught_by="audit (transcript LR statistic, spec §7(a))",
    )
)
register_mutant(
    Mutant(
        name="diff2-m2-restarts-not-composed",
        paper=PAPER,
        kind="privacy",
        description="M2: σ1² calibrated for one restart instead of ⌈R/T⌉ (Prop. 4.1)",
        true_epsilon=_true_epsilon("restarts-not-composed"),
        build=partial(canary_audit_target, "restarts-not-composed"),
        caught_by="audit (transcript LR statistic; parametric μ̂) and the Prop. 4.1 calibration check",
    )
)
register_mutant(
    Mutant(
        name="diff2-m3-add-remove-sensitivity",
        paper=PAPER,
        kind="privacy",
        description="M3: noise sized for sensitivity C/(n_p P) (add/remove thinking) instead of 2C/(n_p P): σ's halved",
        true_epsilon=_true_epsilon("add-remove-sensitivity"),
        build=partial(canary_audit_target, "add-remove-sensitivity"),
        caught_by="audit (transcript LR statistic; parametric μ̂)",
    )
)
register_mutant(
    Mutant(
        name="diff2-m5-noiseless-accumulation",
        paper=PAPER,
        kind="privacy",
        description="M5: line 13 accumulates the noiseless v_{r−1} instead of the released ṽ_{r−1}, so ṽ_r reveals "
        "the whole clipped sum since the last restart under one round's noise",
        true_epsilon=None,
        build=partial(canary_audit_target, "noiseless-accumulation"),
        caught_by="audit (accumulated-mean LR statistic)",
    )
)
M4_SILO_SIZES = (5, 50)
"""Spec §7(c) M4: unequal silos n = (5, 50), the canary in the smallest."""


def _true_epsilon_m4() -> float:
    mech, _, _, claim = canary_audit_target("mean-silo-size", silo_sizes=M4_SILO_SIZES)
    return gdp_epsilon(mech.algorithm.mu, claim.delta)


register_mutant(
    Mutant(
        name="diff2-m4-mean-silo-size",
        paper=PAPER,
        kind="privacy",
        description="M4: on unequal silos (n = (5, 50), padded to m = 50 with silo_sizes=) the σ's are calibrated "
        "with the mean n_p (27.5) instead of n_min (5) (Prop. 4.1): noise n_mean/n_min = 5.5× too small "
        "for a record of the smallest silo",
        true_epsilon=_true_epsilon_m4(),
        build=partial(canary_audit_target, "mean-silo-size", silo_sizes=M4_SILO_SIZES),
        caught_by="audit (transcript LR statistic, canary in the smallest silo)",
    )
)
register_mutant(
    Mutant(
        name="diff2-u1-unscaled-radius-both",
        paper=PAPER,
        kind="utility",
        description="U1: C_{2,r} = C2 in both clip and noise (private but no longer shrinking): the difference "
        "noise swamps the estimator, the utility misses Prop. D.2's bound",
        true_epsilon=None,
        build=build_utility_mutant,
        caught_by="level check against Prop. D.2's bound (diff2gd.propD2.explicit_bound experiment)",
    )
)
