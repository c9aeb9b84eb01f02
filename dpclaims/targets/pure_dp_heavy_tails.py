"""Audit setups of pure ε-DP SCO with heavy tails (Lowy 2026, paper ``pure-dp-heavy-tails``;
spec 003 §7(a)): the honest targets the registry audits and the mutants reuse.

* :func:`audit_alg4`, :func:`audit_alg1` — Algorithms 4 and 1 on the heavy-outlier pair.
* :func:`audit_sampler` — the Lap₂ sampler alone, through :class:`QuadrantStatistic`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails import (
    DoubleOutputPert,
    L2LaplaceMechanism,
    PopLocalize,
    WorstValidPoint,
)
from dpclaims.errors import check_choice
from dpclaims.hardinstances.canaries import heavy_outlier_pair
from dpclaims.hardinstances.pure_dp_heavy_tails.pairs import (
    block_outlier_pair,
    shift_pair,
)
from dpclaims.losses import AbsoluteLoss
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget

AUDIT_N = 200
"""Records of the §7(a) pair (99 × (1, −1), 100 × (1, +1) and the special point)."""

__all__ = [
    "AUDIT_N",
    "audit_problem",
    "audit_alg4",
    "audit_alg1",
    "QuadrantStatistic",
    "audit_sampler",
]


def audit_problem(*, n: int = AUDIT_N, d: int = 1, epsilon: float = 1.0) -> Problem:
    """The §7(a) problem: absolute loss a|w − b| on 𝒲 = B(0, 10), pure ε-DP, item level."""
    return Problem(n=n, d=d, epsilon=epsilon, radius=10.0, loss=AbsoluteLoss())


def audit_alg4(
    *,
    algorithm: type[DoubleOutputPert] = DoubleOutputPert,
    epsilon: float = 1.0,
    harness: bool = True,
    pair=None,
) -> AuditTarget:
    """Algorithm 4 of §7(a) (d = 1, 𝒲 = [−10, 10], a|w − b|, λ = 1, k = 2, G_k = 1, β0 = 0.1) and
    its pair."""
    d0, d1 = heavy_outlier_pair(AUDIT_N) if pair is None else pair
    alg = algorithm.from_theorem(
        audit_problem(epsilon=epsilon),
        moment_k=1.0,
        k=2,
        lam=1.0,
        beta0=0.1,
        harness=WorstValidPoint.for_record(d0, 0) if harness else None,
    )
    return AuditTarget(mechanism=alg, d0=d0, d1=d1, claim=alg.privacy_claim)


def audit_alg1(
    *, algorithm: type[PopLocalize] = PopLocalize, epsilon: float = 1.0, phases: int = 4
) -> AuditTarget:
    """Algorithm 1 (test constants, J = 1) releasing every phase output, outlier in the last
    phase's block."""
    problem = audit_problem(epsilon=epsilon)
    options = {"moment_2": 1.0, "moment_k": 1.0, "k": 2, "beta": 0.1, "constants": "test"}
    probe = PopLocalize.from_theorem(problem, phases=phases, **options)
    position = probe.blocks[-1][0]
    d0, d1 = block_outlier_pair(AUDIT_N, position)
    alg = algorithm.from_theorem(
        problem,
        phases=phases,
        harness=WorstValidPoint.for_record(d0, position),
        output="phases",
        **options,
    )
    return AuditTarget(mechanism=alg, d0=d0, d1=d1, claim=alg.privacy_claim)


@dataclass(frozen=True)
class QuadrantStatistic:
    """Post-processing of a ``(trials, d)`` release to ``min_j x_j`` ``(trials, 1)``.

    Fixed before any trial is drawn (not learned): threshold events ``{min_j x_j > t}`` are the
    orthants ``{x > t·1}``, whose far tail along the diagonal shift ``Δ·1/√d`` carries the whole
    ℓ2 Laplace loss ``Δ/b`` (ratio → e^{ε}) and, for per-coordinate Laplace, the ℓ1 loss
    ``√d·Δ/b`` (M5); it also sees M4's shrunken radius.  Post-processing, so the audit stays valid.
    """

    mechanism: Any

    def __call__(self, data, rng, trials):
        out = np.asarray(self.mechanism(data, rng, trials))
        return np.min(out, axis=1, keepdims=True)


def audit_sampler(
    *,
    mechanism: type[L2LaplaceMechanism] = L2LaplaceMechanism,
    d: int = 2,
    epsilon: float = 1.0,
    statistic: str = "quadrant",
) -> AuditTarget:
    """The Lap₂ sampler alone: diagonal shift Δ = 1 in d = 2, scale 1/ε; released through the
    fixed :class:`QuadrantStatistic` (``statistic="quadrant"``) or raw (``"raw"``: the audit
    learns a score).  The exact ε of the reference sampler on this pair is ``Δ/b = ε``."""
    check_choice(statistic, ("quadrant", "raw"), "statistic")
    mech = mechanism(epsilon=epsilon, sensitivity=1.0)
    d0, d1 = shift_pair(d, 1.0)
    release = QuadrantStatistic(mech) if statistic == "quadrant" else mech
    return AuditTarget(mechanism=release, d0=d0, d1=d1, claim=mech.privacy_claim)
