"""Table 1's prior-work rows and baselines: item-level output perturbation (SC-ERM, SC-SCO),
naive user-level output perturbation, and item-level DP-GD (convex ERM and SCO)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from dpclaims.algorithms.ghazi_et_al_2023 import ItemLevelOutputPert, NaiveUserOutputPert
from dpclaims.claims.standard import CombinedExperiment, RateExperiment
from dpclaims.hardinstances.ghazi_et_al_2023 import cube_group_means
from dpclaims.hardinstances.quadratic import QuadraticHypercubeInstance
from dpclaims.losses import LinearLoss
from dpclaims.problem import Problem


def _output_pert_problem(n: int, m: int) -> Problem:
    """The baselines' problem: (ε, δ) = (1, 1e-5), G = 2, μ = 1, unconstrained."""
    return Problem(n=int(n), m=int(m), epsilon=1.0, delta=1e-5, lipschitz=2.0, strong_convexity=1.0)


def item_sc_erm_excess(n, rng, d=4, trials=400):
    """Item-level output perturbation (m = 1) on the quadratic: empirical excess (μ/2)‖θ̂ − x̄‖²."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, int(n), 1, rng)
    mech = ItemLevelOutputPert.from_theorem(_output_pert_problem(n, 1))
    return 0.5 * np.sum((mech.run(data, rng, trials).theta - data.mean()) ** 2, axis=1)


def origin_empirical_excess(n, m, rng, d=4):
    """The trivial control of the quadratic ERM baselines: the empirical excess (μ/2)‖0 − x̄‖² of
    outputting the origin, on the data the experiment draws first from ``rng``."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    return 0.5 * float(np.sum(cube_group_means(inst, int(n), int(m), rng).mean() ** 2))


def item_sc_erm_origin(n, rng, d=4, trials=400):
    """The trivial control of :func:`item_sc_erm_excess` (m = 1)."""
    return origin_empirical_excess(n, 1, rng, d=d)


def item_sc_sco_excess(n, rng, trials=100, datasets=1):
    """Item-level output perturbation, d = 1 population excess (statistical regime), pooled over
    ``datasets`` fresh datasets of ``trials`` runs each (1 draws exactly as a single one does)."""
    inst = QuadraticHypercubeInstance(1, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    mech = ItemLevelOutputPert.from_theorem(_output_pert_problem(n, 1))
    return np.concatenate(
        [
            0.5
            * np.sum(
                (mech.run(cube_group_means(inst, int(n), 1, rng), rng, trials).theta - inst.mean)
                ** 2,
                axis=1,
            )
            for _ in range(datasets)
        ]
    )


def item_sc_sco_origin(n, rng, trials=100, datasets=1):
    """The trivial control of :func:`item_sc_sco_excess`: the population excess (μ/2)‖0 − χ‖² of
    outputting the origin (exact)."""
    inst = QuadraticHypercubeInstance(1, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    return 0.5 * float(np.sum(inst.mean**2))


def naive_user_excess(m, rng, n=200, d=4, trials=400):
    """Naive user-level output perturbation: SC-ERM excess does not improve with m."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, n, int(m), rng)
    mech = NaiveUserOutputPert.from_theorem(_output_pert_problem(n, m))
    return 0.5 * np.sum((mech.run(data, rng, trials).theta - data.mean()) ** 2, axis=1)


def naive_user_origin(m, rng, n=200, d=4, trials=400):
    """The trivial control of :func:`naive_user_excess`."""
    return origin_empirical_excess(n, m, rng, d=d)


@cache
def _item_dp_gd():
    """Item-level DP-GD (:class:`DPSGD`, q = 1, T = 1, replace-one, σ from the PLD accountant at (1,
    1e-5)) on the linear loss −⟨θ, x⟩ over the unit ball (G = 1, diameter R = 2).  The step η = 1e6
    sends every output to the sphere: θ̂ = (x̄ + σ·z/n)/‖x̄ + σ·z/n‖ (the classic noisy-gradient
    step for linear losses)."""
    from dpclaims.algorithms.baselines import DPSGD

    return DPSGD.from_accountant(
        epsilon=1.0,
        delta=1e-5,
        loss=LinearLoss(1.0),
        steps=1,
        step_size=1e6,
        clip_norm=1.0,
        relation="replace",
        radius=1.0,
    )


def item_convex_erm_worst(n, rng, d=64, trials=400, grid=(0.25, 1.0, 4.0, 16.0)):
    """Worst case over c ∈ grid of the mean empirical excess ‖x̄‖ − ⟨θ̂, x̄⟩ of item-level DP-GD on
    the dataset of n identical items x̄ = c√d/n·e1 (m = 1)."""
    from dpclaims.data import UserDataset

    n, d = int(n), int(d)
    alg = _item_dp_gd()
    worst = 0.0
    for c in grid:
        xbar = np.zeros(d)
        xbar[0] = min(c * math.sqrt(d) / n, 1.0)
        theta = alg.run(UserDataset(np.broadcast_to(xbar, (n, 1, d)).copy()), rng, trials).theta
        worst = max(worst, float(np.mean(np.linalg.norm(xbar) - theta @ xbar)))
    return worst


def item_convex_erm_origin(n, rng, d=64, trials=400, grid=(0.25, 1.0, 4.0, 16.0)):
    """The trivial control of :func:`item_convex_erm_worst`: the excess ‖x̄‖ of outputting the
    origin, worst case over the same c (exact)."""
    return min(max(grid) * math.sqrt(int(d)) / int(n), 1.0)


def item_convex_erm_origin_d(d, rng, n=1000, trials=400):
    """:func:`item_convex_erm_origin` swept in d."""
    return item_convex_erm_origin(n, rng, d=d, trials=trials)


def item_convex_erm_worst_d(d, rng, n=1000, trials=400):
    """:func:`item_convex_erm_worst` swept in d (the sweep passes the swept value first)."""
    return item_convex_erm_worst(n, rng, d=d, trials=trials)


def item_convex_sco_worst(n, rng, trials=4, datasets=200, grid=(0.5, 1.0, 2.0)):
    """d = 1 statistical regime: worst case over c ∈ grid of the mean population excess a − θ̂·a of
    item-level DP-GD on n i.i.d. items ±1 with mean a = c/√n (``datasets`` fresh samples each)."""
    from dpclaims.data import UserDataset

    n = int(n)
    alg = _item_dp_gd()
    worst = 0.0
    for c in grid:
        a = min(c / math.sqrt(n), 1.0)
        excess = [
            np.mean(
                a
                - a
                * alg.run(
                    UserDataset(2.0 * (rng.random((n, 1, 1)) < (1 + a) / 2) - 1.0), rng, trials
                ).theta[:, 0]
            )
            for _ in range(datasets)
        ]
        worst = max(worst, float(np.mean(excess)))
    return worst


def item_convex_sco_origin(n, rng, trials=4, datasets=200, grid=(0.5, 1.0, 2.0)):
    """The trivial control of :func:`item_convex_sco_worst`: the population excess a of outputting
    the origin, worst case over the same c (exact)."""
    return min(max(grid) / math.sqrt(int(n)), 1.0)


ITEM_DP_GD_NOTE = (
    "prior work's row run with the item-level DP-GD baseline (one noisy full-gradient step, "
    "PLD-calibrated to (1, 1e-5), linear loss on the unit ball, worst case over the signal strength"
)


def item_dp_gd_sweeps(claim, *, n_variable: str, replicates: int, trials: int, note: str) -> dict:
    """The sweeps of :func:`item_convex_erm_worst` in n (d = 64; the claim's exponent of
    ``n_variable``) and in d (n = 1000), ``trials`` runs per dataset, noted ``note + "d = 64"``
    and ``note + "n = 1000"``."""
    return {
        n_variable: RateExperiment.for_claim(
            claim,
            item_convex_erm_worst,
            "n",
            [250, 500, 1000, 2500],
            variable=n_variable,
            replicates=replicates,
            fixed={"trials": trials},
            trivial=item_convex_erm_origin,
            note=note + "d = 64",
        ),
        "d": RateExperiment.for_claim(
            claim,
            item_convex_erm_worst_d,
            "d",
            [16, 64, 256, 1024],
            replicates=replicates,
            fixed={"n": 1000, "trials": trials},
            trivial=item_convex_erm_origin_d,
            note=note + "n = 1000",
        ),
    }


def item_convex_erm_experiment(claim, *, replicates: int, trials: int) -> CombinedExperiment:
    """Bassily et al. 2014's item-level convex ERM row: item-level DP-GD swept in n and d."""
    return CombinedExperiment(
        item_dp_gd_sweeps(
            claim,
            n_variable="n",
            replicates=replicates,
            trials=trials,
            note=ITEM_DP_GD_NOTE + " c√d/n); ",
        ),
        note="Bassily et al. 2014's item-level DP-ERM rate RG√d/n",
    )


def item_convex_sco_experiment(
    claim, *, replicates: int, trials: int, datasets: int
) -> CombinedExperiment:
    """Bassily et al. 2019's item-level convex SCO row: item-level DP-GD in n on i.i.d. items
    (``datasets`` per point, the statistical term) and swept in n and d on a point mass."""
    note = ITEM_DP_GD_NOTE + ")"
    point_mass = (
        "; privacy term on a point-mass population (every item equals χ = c√d/n·e1: no sampling "
        "error, "
        "the SCO excess is the ERM excess, which a bound for every distribution must cover)"
    )
    return CombinedExperiment(
        {
            "n_statistical": RateExperiment.for_claim(
                claim,
                item_convex_sco_worst,
                "n",
                [1000, 3000, 10000, 30000],
                variable="n_statistical",
                replicates=replicates,
                fixed={"datasets": datasets},
                trivial=item_convex_sco_origin,
                note=note + "; d = 1, i.i.d. ±1 items (the 1/√n term)",
            ),
            **item_dp_gd_sweeps(
                claim,
                n_variable="n_privacy",
                replicates=replicates,
                trials=trials,
                note=note + point_mass + ", ",
            ),
        },
        note="Bassily et al. 2019's item-level DP-SCO rate RG(1/√n + √d/n)",
    )
