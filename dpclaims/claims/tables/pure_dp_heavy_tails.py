"""The experiments of Lowy (2026), declared (paper id ``pure-dp-heavy-tails``, spec 003).

Measuring code: :mod:`dpclaims.claims.checks.pure_dp_heavy_tails`.

Privacy claims: audits at the §7(a) pairs (δ = 0) with the worst-valid-point harness.  Rate
claims: the §7(b) tests RT1 (Prop 3.2 distance, Pareto family), RT2 (Thm 3.1 private term, full
pipeline), RT4 (non-private term, two-point family); RT3 checks the lower bound at β.  Formula
and complexity claims: value checks with white-box invariants.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from dpclaims.claims import declare
from dpclaims.claims.checks.pure_dp_heavy_tails import (
    adapsg_iterations,
    adapsg_route_runtime,
    alg7_audits,
    em_pgm_audit,
    extension_bias,
    localization_containment,
    mean_estimation_lower_bound,
    minimizer_sensitivity,
    net_size_check,
    nonprivate_lower_bound,
    private_lower_bound,
    projection_accuracy,
    rt1_d_distance,
    rt1_distance,
    rt2_experiment,
    rt4_origin_quantile,
    rt4_quantile,
    structured_evaluations,
    trivial_upper_bound,
)
from dpclaims.claims.experiments import BySize
from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.targets.pure_dp_heavy_tails import (
    alg2_target,
    alg4_joint_target,
    audit_sampler,
    main_last_call_target,
    main_transcript_target,
    structured_d2_target,
    structured_target,
)

# --------------------------------------------------------------------------- builders


def _audits(claim, *, parts: dict, note: str) -> CombinedExperiment:
    """The audits ``parts`` (``{name: AuditExperiment fields}``) combined; a part of 0 trials
    (at a budget too small for it) is left out."""
    return CombinedExperiment(
        {name: AuditExperiment(**fields) for name, fields in parts.items() if fields["trials"]},
        note=note,
    )


def _sweeps(claim, *, parts: dict, note: str) -> CombinedExperiment:
    """The sweeps ``parts`` (``{name: RateExperiment.for_claim arguments}``) of ``claim``
    combined."""
    return CombinedExperiment(
        {name: RateExperiment.for_claim(claim, **fields) for name, fields in parts.items()},
        note=note,
    )


def _computed_value(claim, *, compute, options: dict, **fields) -> ValueExperiment:
    """The :class:`ValueExperiment` of ``compute(rng, **options)`` (``options`` taken at the
    budget)."""
    return ValueExperiment(partial(compute, **options), **fields)


def _geometric(low: float, high, points) -> BySize:
    """Integer geometric grids from ``low`` to ``high`` with ``points`` points (either may be a
    :class:`BySize`)."""

    def at(budget: str) -> tuple[int, ...]:
        last, size = declare.at_budget(high, budget), declare.at_budget(points, budget)
        return tuple(int(v) for v in np.rint(np.geomspace(low, last, size)))

    return BySize(quick=at("quick"), standard=at("standard"), full=at("full"))


def _filled(template: str, **fields) -> BySize:
    """``template`` formatted at each budget with ``fields`` (each may be a :class:`BySize`)
    taken at that budget."""

    def at(budget: str) -> str:
        return template.format(**declare.at_budget(fields, budget))

    return BySize(quick=at("quick"), standard=at("standard"), full=at("full"))


# --------------------------------------------------------------------------- budgets

AUDIT_TRIALS = BySize(quick=20_000, standard=200_000, full=400_000)
TIGHT_TRIALS = BySize(quick=150_000, standard=400_000, full=800_000)
"""Trials of the pair that attains Algorithm 7's bound: its leakage above eps/2 sits in outputs
of small probability, so certifying 0.8x its exact eps 0.625 takes ~1.5e5 trials (0.81-0.83x at
seeds 0-3, about 5 s)."""
GRID_POINTS = BySize(quick=4, standard=5)
"""Points of every geometric n grid."""
N_MAX = BySize(quick=10_000, standard=100_000)
"""Largest n of the RT1/RT2/RT4 sweeps (they start at n = 1000)."""
N_GRID = _geometric(1000, N_MAX, GRID_POINTS)
"""The n grid of the RT1 and RT4 sweeps."""
SWEEP_TRIALS = BySize(quick=200, standard=1000)
"""Trials per sweep point of RT1-eps, RT2 and RT4."""
SWEEP_REPLICATES = BySize(quick=3, standard=6, full=10)
"""Replicates per sweep point of RT2 and RT4."""
RT2_GRID = _geometric(1e4, BySize(quick=1e6, standard=1e7), BySize(quick=4, standard=7))
"""RT2's geometric n grid.  It starts at 10^4: below it Algorithm 1's bound with the test
constants exceeds the constant output's G_1 D at k = 2 (its worst quantile is 1.7x the constant
output's at n = 10^3, 1.35x at 10^4), where the claimed rate is min{G_1 D, rate} (Remark G.7),
not the rate.  A run costs about 0.1 s at n = 10^6, 1.3 s at 10^7."""
RT4_REPLICATES = BySize(quick=8, standard=6, full=10)
"""Replicates per sweep point of RT4."""
RT4_DATASETS = BySize(quick=20, standard=20)
"""Fresh datasets per replicate of RT4 (its quantile is over data and algorithm)."""
RT4_TRIALS = BySize(quick=20, standard=50)
"""Runs of Algorithm 1 per dataset of RT4."""
RT1_K = BySize(quick=2.0, standard=4.0)
"""Moment order k of RT1's eps and d sweeps (its n sweep is at k = 4)."""
LB_NS = BySize(quick=(1000, 10_000), standard=(1000, 4000, 16_000, 64_000))
"""Sample sizes of the lower-bound checks (RT3)."""
LB_TRIALS = BySize(quick=300, standard=1000)
"""Trials per instance of the lower-bound checks."""
RUNTIME_NS = BySize(quick=(5, 6, 8), standard=(5, 6, 8, 12))
"""Sample sizes of the AdaPSG-route runtime check (its iterations grow like n^4 at k = 2)."""

# --------------------------------------------------------------------------- privacy

PRIVACY = (
    declare.audit(
        "lowy26.privacy.alg2",
        build=alg2_target,
        trials=AUDIT_TRIALS,
        reference_epsilon=1.0,
        reference_note="exact on this pair: the harness's solver output moves by exactly Delta = "
        "4C/(lambda n) (exact minimiser 2C/(lambda n) plus the certified solver's 2 tau; "
        "lowy26.privacy.sensitivity) and the release is Laplace of scale Delta/eps1, so the "
        "pair loses eps1 = 1 in its tails",
        note="Algorithm 2 alone at eps1 = 1 on the spec's outlier pair, worst-valid-point harness "
        "(shift = Delta)",
    ),
    declare.audit(
        "lowy26.privacy.double_output_pert",
        build=alg4_joint_target,
        trials=AUDIT_TRIALS,
        reference_epsilon=1.0,
        reference_note="exact on this pair: both stages' solver outputs move by exactly their "
        "Delta (harness, as in lowy26.privacy.main's last call), each Laplace stage at eps/2, so "
        "the joint release loses eps/2 + eps/2 = 1 where both noises exceed the shift, in the "
        "far tail of the event {max(w_tilde, w_out) <= t}",
        note="joint (w_tilde, w_out) of Algorithm 4, the spec's outlier pair, harness, event "
        "{max(w_tilde, w_out) <= t}; the spec's prototype certified 0.88 at 4e5 trials, a lower "
        "bound, not the exact eps (benchmark: 0.963 at 1e5, 0.981 at 1e6)",
    ),
    # Thm 3.1 (parallel composition): the call holding the outlier carries all the loss
    declare.built(
        "lowy26.privacy.main",
        _audits,
        parts={
            "transcript": {
                "build": main_transcript_target,
                "trials": AUDIT_TRIALS,
                "reference_epsilon": 1.0,
                "reference_note": "exact on this pair: the last call's two Laplace stages each "
                "see a shift of exactly Delta = 4C/(lambda_I m) (harness; "
                "lowy26.privacy.sensitivity), so the joint loss is eps/2 + eps/2 where both "
                "noises exceed it (Laplace log-ratio Delta/b)",
                "note": "white box: Algorithm 1 (test constants, J = 1, I = ceil(log2 n) = 8, "
                "blocks of 25) releasing every call's (w_tilde_i, w_i); outlier and harness in "
                "the last block; fixed event {max(w_tilde_I, w_I) - w_(I-1) <= t}.  Algorithm 1 "
                "itself releases only the w_i: there w_tilde_I is hidden and the bulk leakage is "
                "eps/2 (learned score: 0.25, reach 3.1x)",
            },
            "last-call": {
                "build": main_last_call_target,
                "trials": AUDIT_TRIALS,
                "reference_epsilon": 1.0,
                "reference_note": "exact: both Laplace stages see a shift of exactly Delta "
                "(harness), eps/2 each",
                "note": "white box: the last phase's Algorithm 4 call alone (lambda_I, 25 "
                "records) at the data-independent centre 0, joint (w_tilde, w_out), event "
                "{max <= t}",
            },
        },
        note="Thm 3.1 (parallel composition): the call holding the outlier carries all the loss",
    ),
    # structured losses (Cor D.7): the exact 1-d solver, the d-dim Lap2 sampler, and (not at
    # quick: about 16 s) the box-dual route in d = 2
    declare.built(
        "lowy26.privacy.structured",
        _audits,
        parts={
            "d1-hinge-exact": {
                "build": structured_target,
                "trials": AUDIT_TRIALS,
                "reference_epsilon": 1.0,
                "reference_note": "exact on this pair: both stages' minimizers move by exactly "
                "Delta = 4C/(lambda n) (hinge_shift_over_sensitivity), so each Laplace stage "
                "loses eps/2",
                "note": "hinge loss (Cor D.7), exact polyhedral 1-d solver (breakpoints), lambda "
                "= 10, outlier (40, +-1), harness towards the pair's gap; joint event "
                "{max(w_tilde, w_out) <= t}",
            },
            "d2-lap2-sampler": {
                "build": audit_sampler,
                "trials": AUDIT_TRIALS,
                "reference_epsilon": 1.0,
                "reference_note": "exact: l2 Laplace, shift Delta = 1 along the diagonal, scale "
                "b = 1/eps: log-ratio |‖x‖ - ‖x - s‖|/b <= Delta/b = eps, approached in the "
                "orthant's far tail",
                "note": "the d >= 2 Lap2 sampler of every structured route (d = 2), fixed "
                "quadrant statistic min(x1, x2) (chosen before certifying)",
            },
            "d2-absolute-pv2": {
                "build": structured_d2_target,
                "trials": BySize(quick=0, standard=40_000, full=200_000),
                "reference_note": "not derived: it depends on the minimiser shift of the "
                "box-dual solver (PV-2 in the spec) in d = 2; only the claim bounds it",
                "note": "d = 2 absolute loss with the certified box-dual solver (solver='pv2', "
                "harness tau/2); event {max(w_tilde_1, w_out_1) <= t}; about 0.45 at 2e4 "
                "trials, 16 s",
            },
        },
        note="structured losses: exact 1-d solver, the d-dim Lap2 sampler, and (standard) the "
        "box-dual route in d = 2",
    ),
    # EM-PGM on the step pair, whose exact eps (computed on the net at build time) is 0.93 of
    # the claim; the spec's outlier pair shows only eps/2
    declare.built("lowy26.privacy.em_pgm", em_pgm_audit, trials=AUDIT_TRIALS),
    # Algorithm 7 (d = 1) with exact samplers, against the paper's eps and against the 5eps/8
    # proved for this variant; reference epsilons computed at build time from the output laws
    declare.built(
        "lowy26.privacy.localized_approx_em",
        alg7_audits,
        trials=AUDIT_TRIALS,
        tight_trials=TIGHT_TRIALS,
    ),
    declare.value(
        "lowy26.privacy.sensitivity",
        compute=minimizer_sensitivity,
        expected={
            "exact_shift_over_2C_lambda_n": 1.0,
            "harness_shift_over_4C_lambda_n": 1.0,
            "random_pairs_within_2C_lambda_n_holds": 1.0,
        },
        rtol=1e-9,
        note="white box: exact minimizers shift by exactly 2C/(λn) on the spec's outlier pair, "
        "certified (harness) ones by 4C/(λn); 200 random heavy-tailed neighbour pairs stay within "
        "2C/(λn)",
    ),
)

# --------------------------------------------------------------------------- formulas

FORMULAS = (
    declare.value(
        "lowy26.bias.extension",
        compute=extension_bias,
        expected={
            "identity_matches_definition_holds": 1.0,
            "bias_between_0_and_bound_holds": 1.0,
            "markov_layer_cake_bound_holds": 1.0,
        },
        note="Pareto(2.5) absolute-loss sample, K = [-0.4, 0.6], C = 3: 1-d clipping identity vs "
        "the "
        "min-over-K definition, 0 <= bias <= D_K mean(L - C)_+, E(L - C)_+ <= G_k^k/((k-1)C^(k-1))",
    ),
    declare.value(
        "lowy26.localization.containment",
        compute=localization_containment,
        expected={"radius_matches_formula": 1.0, "coverage_at_least_1_minus_beta_holds": 1.0},
        rtol=1e-9,
        note="r = C/(λn) + 16C(d + ln 1/β)/(λεn) with ε1 = ε/2; empirical P(ŵ_C ∈ W_loc) ≥ 1 − β",
    ),
    declare.value(
        "lowy26.sco.upper.trivial",
        compute=trivial_upper_bound,
        expected={"fixed_points_within_G1_D_holds": 1.0},
        note="200 fixed points of the domain on the two lower-bound families: excess <= G_1 D",
    ),
)

# --------------------------------------------------------------------------- rates

RATES = (
    # RT1, Prop 3.2 distance bound: n, eps and d exponents of the private term
    declare.built(
        "lowy26.erm.double_output_pert_distance",
        _sweeps,
        parts={
            "n": {
                "experiment": rt1_distance,
                "param": "n",
                "values": N_GRID,
                "at": {"k": 4.0},
                "replicates": BySize(quick=4, standard=8, full=12),
                "fixed": {"param": "n", "k": 4.0, "trials": BySize(quick=200, standard=400)},
                "note": "n sweep at k = 4: median distance to the exact unclipped regularized ERM "
                "(Pareto(4.5))",
            },
            "eps": {
                "experiment": rt1_distance,
                "param": "epsilon",
                "values": (0.25, 0.5, 1.0, 2.0, 4.0),
                "variable": "eps",
                "at": {"k": RT1_K},
                "replicates": BySize(quick=3, standard=4, full=8),
                "fixed": {
                    "param": "epsilon",
                    "k": RT1_K,
                    "n": BySize(quick=3000, standard=10_000),
                    "trials": SWEEP_TRIALS,
                },
                "note": _filled("eps sweep at k = {k:g}: same instance, eps in 1/4..4", k=RT1_K),
            },
            "d": {
                "experiment": rt1_d_distance,
                "param": "d",
                "values": BySize(quick=(1, 2, 4, 8, 16), standard=(1, 2, 4, 8, 16, 32)),
                "at": {"k": RT1_K},
                "replicates": 3,
                "fixed": {
                    "k": RT1_K,
                    "n": BySize(quick=1500, standard=5000),
                    "trials": BySize(quick=60, standard=200),
                },
                "note": _filled(
                    "d sweep at k = {k:g}: linear-loss analogue of the box solver (clipped-mean "
                    "output perturbation, NOT the paper's extension), C = G_k(eps n/d)^(1/k), "
                    "mean distance",
                    k=RT1_K,
                ),
            },
        },
        note="Prop 3.2 distance bound: n, eps and d exponents of the private term",
    ),
    # RT2 at k = 2 and k = 4: Algorithm 1's ratio to the constant output (its control)
    declare.built(
        "lowy26.reduction.pop_localization",
        rt2_experiment,
        k=2.0,
        grid=RT2_GRID,
        trials=SWEEP_TRIALS,
        replicates=SWEEP_REPLICATES,
    ),
    declare.built(
        "lowy26.sco.upper.private_term",
        rt2_experiment,
        k=4.0,
        grid=RT2_GRID,
        trials=SWEEP_TRIALS,
        replicates=SWEEP_REPLICATES,
    ),
    # RT4: the non-private term on the two-point family, the constant output 0 as control
    declare.sweep(
        "lowy26.sco.upper.nonprivate_term",
        rt4_quantile,
        "n",
        N_GRID,
        replicates=RT4_REPLICATES,
        fixed={"trials": RT4_TRIALS, "datasets": RT4_DATASETS},
        trivial=rt4_origin_quantile,
        note="two-point family at delta = S/sqrt(m), m = floor(n/ceil(log2 n)) the phase block, "
        "S in {0.3, 1, 3}, eps = 1000, Alg 1 J = 1; max over S of the 0.9-quantile over data "
        "and algorithm, log factor divided out (quantile / sqrt(ceil(log2 n)))",
    ),
)

# --------------------------------------------------------------------------- lower bounds

LOWER_BOUNDS = (
    declare.built(
        "lowy26.lb.sco",
        _computed_value,
        compute=private_lower_bound,
        options={"ns": LB_NS, "trials": LB_TRIALS},
        expected={
            "quantile_above_lower_bound_holds": 1.0,
            "quantile_within_10x_upper_bound_holds": 1.0,
        },
        note="heavy_packing d = 1, beta = 0.1; max over v of the 0.9-quantile excess of Alg 1 vs "
        "(s_V^2/16) G D p^(1-1/k) and vs G D (d ln(1/beta)/(eps n))^(1-1/k) ceil(log2 n)",
    ),
    declare.built(
        "lowy26.lb.sco.nonprivate",
        _computed_value,
        compute=nonprivate_lower_bound,
        options={"ns": LB_NS, "trials": LB_TRIALS},
        expected={"formula_at_n1000_beta01": 1.0, "quantile_above_lower_bound_holds": 1.0},
        rtol=1e-9,
        note="(G D/4) sqrt(ln(1/(4 beta))/(3n)); Alg 1's 0.9-quantile (max over v) must exceed it",
    ),
    declare.value(
        "lowy26.lb.mean_estimation",
        compute=mean_estimation_lower_bound,
        expected={"lemma_G1_reduction_holds": 1.0, "private_term_formula": 1.0},
        rtol=1e-9,
        note="Lemma G.1 SCO -> mean-estimation reduction checked pointwise; private term formula "
        "(c = 1) at n = 1000, d = 5, k = 3, beta = 0.1",
    ),
)

# --------------------------------------------------------------------------- complexity

RUNTIME_NOTE = (
    "in part: Algorithm 4 via certified AdaPSG on Phi (Lemma 2.7) at alpha = C^2/(2 lambda n^2), "
    "n in {ns}, d = 1, W = B(0, 0.25), Pareto(2.5) absolute loss: gradient evaluations vs n x "
    "Prop 2.9's cap ceil((5 R L_h/(2 alpha))^2) per stage at the realized L, and at L_z <= G_k "
    "(n/beta)^(1/k) (the w.p. >= 1 - beta event, a polynomial in n); larger n are out of reach "
    "(about n^4 iterations)"
)

COMPLEXITY = (
    declare.sweep(
        "lowy26.complexity.adapsg",
        adapsg_iterations,
        "alpha",
        BySize(quick=tuple(np.geomspace(1.0, 0.1, 4)), standard=tuple(np.geomspace(1.0, 0.03, 6))),
        replicates=BySize(quick=3, standard=5),
        note="certified stop on h = ||x - a|| over the unit ball (d = 3, a outside K so "
        "||g|| = L_h = 1 at every iterate): iterations vs alpha; the bound "
        "ceil((5 R L/(2 alpha))^2) has exponent -2 as alpha -> 0",
    ),
    declare.value(
        "lowy26.complexity.inexact_projection",
        compute=projection_accuracy,
        expected={
            "within_zeta_of_exact_holds": 1.0,
            "output_in_K_holds": 1.0,
            "calls_over_formula": 1.0,
        },
        rtol=1e-9,
        note="500 random (u, c) in d = 3, W = B(0, 2), r = 0.5, zeta = 1e-6, against "
        "dpclaims.losses.project_ball_intersection",
    ),
    declare.built(
        "lowy26.complexity.main_runtime",
        _computed_value,
        compute=adapsg_route_runtime,
        options={"ns": RUNTIME_NS},
        le={"evaluations_over_prop29_cap": 1.0, "evaluations_over_event_polynomial": 1.0},
        note=_filled(RUNTIME_NOTE, ns=RUNTIME_NS),
    ),
    declare.sweep(
        "lowy26.complexity.structured",
        structured_evaluations,
        "n",
        _geometric(100, 10_000, GRID_POINTS),
        replicates=3,
        note="absolute loss (Cor D.7) in d = 1 with an L = 1e12 record: the deterministic exact "
        "breakpoint solver costs n subgradients per stage whatever L (exponent 1 in n); d >= 2 "
        "uses the certified box-dual solver (solver='pv2'), whose iteration count is not swept",
    ),
    # the net's size bound and cover at quick, its size swept in 1/gamma at standard and full
    declare.built(
        "lowy26.complexity.em_pgm",
        net_size_check,
        sweep=BySize(quick=False, standard=True),
    ),
)

declare.register(PRIVACY + FORMULAS + RATES + LOWER_BOUNDS + COMPLEXITY)
