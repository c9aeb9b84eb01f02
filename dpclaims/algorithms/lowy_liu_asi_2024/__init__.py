"""Lowy, Liu & Asi (2024), "Faster Algorithms for User-Level Private SCO" — spec 000.

The paper's algorithms, one module each, re-exported here:

* :class:`Algorithm1` (:mod:`.alg1`) — linear-time user-level DP phased SGD with
  outlier-iterate removal and Gaussian output perturbation (Alg. 1, Thm 2.1 / B.1).
* :class:`Algorithm2` (:mod:`.alg2`) — one phase of user-level DP accelerated
  minibatch SGD (AC-SA) with outlier-gradient removal gated by AboveThreshold (Alg. 2).
* :class:`Algorithm3`, :class:`SmoothedAlgorithm3`, :class:`StronglyConvexAlgorithm3`
  (:mod:`.alg3`) — accelerated phased ERM (Alg. 3, Thm 3.1/3.2), on the smoothed
  loss (Thm 4.1 / D.3), and the spec §2.5 wrapper for Remark 3.6 (**not from the paper**).
* The spec §7(a) audit configurations and exact references
(:mod:`dpclaims.targets.lowy_liu_asi_2024`);
  constants and shared formulas (:mod:`.schedule`); batched primitives
  (:mod:`.core`).
* :func:`user_level_dpsgd`, :func:`item_level_dpsgd` — the baselines, configured
  :class:`~dpclaims.algorithms.baselines.DPSGD`.

Every ``from_theorem`` takes a :class:`~dpclaims.problem.Problem` first.  Constants:
``constants="paper"`` uses every printed constant (privacy audits, formula tests);
``constants="relaxed"`` uses the spec §2.6 laptop-scale constants for rate tests — **not covered
by the paper's privacy theorem** (its :attr:`privacy_claim` raises).  ``noise_mult = 0`` is a
non-private diagnostic of the optimizer (spec §2.6), also without a privacy claim.  Known-buggy
variants are subclasses in :mod:`dpclaims.targets.mutants.lowy_liu_asi_2024`.
"""

from __future__ import annotations

import math

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.lowy_liu_asi_2024.alg1 import Algorithm1, Algorithm1Run
from dpclaims.algorithms.lowy_liu_asi_2024.alg2 import Algorithm2, Algorithm2Run
from dpclaims.algorithms.lowy_liu_asi_2024.alg3 import (
    Algorithm3,
    Algorithm3Run,
    SmoothedAlgorithm3,
    StronglyConvexAlgorithm3,
    alg3_gradient_count,
)
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import (
    CONSTANTS,
    DEFAULT_Q,
    EPSILON_MAX,
    PAPER_ID,
    PARTITIONS,
    SAMPLINGS,
    alg3_tau,
)
from dpclaims.problem import Problem
from dpclaims.vocabulary import Unit

__all__ = [
    "PAPER_ID",
    "CONSTANTS",
    "PARTITIONS",
    "SAMPLINGS",
    "EPSILON_MAX",
    "DEFAULT_Q",
    "Algorithm1",
    "Algorithm1Run",
    "Algorithm2",
    "Algorithm2Run",
    "Algorithm3",
    "Algorithm3Run",
    "SmoothedAlgorithm3",
    "StronglyConvexAlgorithm3",
    "alg3_tau",
    "alg3_gradient_count",
    "user_level_dpsgd",
    "item_level_dpsgd",
]


def _dpsgd(
    problem: Problem,
    *,
    unit: Unit,
    steps: int,
    step_size: float,
    clip_norm: float,
    sampling_rate: float,
) -> DPSGD:
    return DPSGD.from_accountant(
        epsilon=problem.epsilon,
        delta=problem.delta,
        loss=problem.loss,
        steps=steps,
        step_size=step_size,
        clip_norm=clip_norm,
        sampling_rate=sampling_rate,
        relation="replace",
        unit=unit,
        radius=None if math.isinf(problem.radius) else problem.radius,
    )


def user_level_dpsgd(
    problem: Problem, *, steps: int, step_size: float, clip_norm: float, sampling_rate: float = 1.0
) -> DPSGD:
    """User-level DP-SGD with per-user clipping (the baseline of spec 000), replace-one-user,
    σ calibrated by dp-accounting's PLD accountant for ``problem``'s (ε, δ); its loss and
    radius (infinite: unconstrained) are DP-SGD's."""
    return _dpsgd(
        problem,
        unit=Unit.USER,
        steps=steps,
        step_size=step_size,
        clip_norm=clip_norm,
        sampling_rate=sampling_rate,
    )


def item_level_dpsgd(
    problem: Problem, *, steps: int, step_size: float, clip_norm: float, sampling_rate: float = 1.0
) -> DPSGD:
    """Item-level DP-SGD (per-example clipping): the m = 1 notion the paper does **not** claim."""
    return _dpsgd(
        problem,
        unit=Unit.ITEM,
        steps=steps,
        step_size=step_size,
        clip_norm=clip_norm,
        sampling_rate=sampling_rate,
    )
