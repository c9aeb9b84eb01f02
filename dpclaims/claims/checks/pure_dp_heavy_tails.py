"""The measuring code of ``pure-dp-heavy-tails`` (Lowy 2026, spec 003); its experiments are
declared in :mod:`dpclaims.claims.tables.pure_dp_heavy_tails`.

Privacy claims: audits at the §7(a) pairs (δ = 0) with the worst-valid-point harness.  Rate claims:
the §7(b) tests RT1 (Prop 3.2 distance, Pareto family), RT2 (Thm 3.1 private term, full pipeline,
0.9-quantile over the constant output's excess, on a family that keeps members whose signal does
not shrink) and RT4 (non-private term, two-point family); RT3 checks the lower bound at β.
Formula and complexity claims: :class:`ValueExperiment` s with white-box invariants.  Indicator
quantities (``…_holds``) are 1.0 when an inequality the paper proves holds on the measured data.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails import (
    Ball,
    ClippedSlopes1D,
    DoubleOutputPert,
    OutPertLocalize,
    PopLocalize,
    WorstValidPoint,
    adapsg,
    clip_level,
    inexact_projection,
)
from dpclaims.algorithms.pure_dp_heavy_tails.em import net, net_size_bound
from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.data import UserDataset
from dpclaims.hardinstances.canaries import heavy_outlier_pair
from dpclaims.hardinstances.lower_bounds import heavy_tailed_mean_lower_bound, two_point_lower_bound
from dpclaims.hardinstances.packings import sphere_packing
from dpclaims.hardinstances.pure_dp_heavy_tails import (
    HeavyPackingInstance,
    ParetoRadiusInstance,
    TwoPointInstance,
)
from dpclaims.losses import AbsoluteLoss, LinearLoss, project_ball_intersection
from dpclaims.problem import Problem
from dpclaims.rates.caveats import Baseline
from dpclaims.targets.pure_dp_heavy_tails import (
    ALG7_TIGHT,
    AUDIT_N,
    EM_PGM_KINK,
    EM_PGM_LAM,
    alg7_bound_target,
    alg7_exact_epsilon,
    alg7_rejection_bound_target,
    alg7_rejection_target,
    alg7_target,
    audit_problem,
    em_pgm_exact_epsilon,
    em_pgm_setup,
    em_pgm_target,
)

RT2_FIXED_P = (0.1, 0.3, 1.0)
"""Heavy-atom probabilities of RT2's members whose signal does not shrink with n (S = pεn)."""
RT2_RATIO_LIMIT = 0.5
"""RT2's "clearly below the trivial output": the family's worst 0.9-quantile of Algorithm 1 at the
largest n is at most half the constant output's worst excess."""


def _problem(n: int, *, epsilon: float = 1.0, d: int = 1, radius: float = 10.0, loss=None):
    """A pure-DP item-level problem on ``B(0, radius)`` (absolute loss unless given)."""
    loss = AbsoluteLoss() if loss is None else loss
    return Problem(n=n, d=d, epsilon=epsilon, radius=radius, loss=loss)


def _linear_problem(n: int, epsilon: float) -> Problem:
    """The linear loss ``f = −⟨z, w⟩`` on 𝒲 = [−1, 1] (the RT2–RT4 instances)."""
    return _problem(n, epsilon=epsilon, radius=1.0, loss=LinearLoss())


def _alg1_linear(
    n: int,
    *,
    epsilon: float,
    moment_2: float,
    k: float,
    beta: float,
    algorithm: type[PopLocalize] = PopLocalize,
) -> PopLocalize:
    """Algorithm 1 (or ``algorithm``, a variant of it) with the test constants (J = 1) on
    :func:`_linear_problem`, ``G_k = 1``."""
    return algorithm.from_theorem(
        _linear_problem(n, epsilon),
        moment_2=moment_2,
        moment_k=1.0,
        k=k,
        beta=beta,
        constants="test",
    )


def _excess_quantile(inst, alg, data: UserDataset, rng, *, trials: int, beta: float) -> float:
    """The (1 − β)-quantile over ``trials`` runs of ``alg`` on ``data`` of ``inst``'s excess
    risk."""
    return float(np.quantile(inst.excess_risk(alg.run(data, rng, trials).theta), 1 - beta))


def _pareto(d: int, alpha: float, *, radius: float = 10.0) -> ParetoRadiusInstance:
    """The spec §7(b) Pareto(α) absolute-loss family (x_m = 1, half width 1/2)."""
    return ParetoRadiusInstance(d, alpha, scale=1.0, radius=radius, half_width=0.5)


# --------------------------------------------------------------------------- builders
# (named by declare.built in dpclaims/claims/tables/pure_dp_heavy_tails.py)


def em_pgm_audit(claim, *, trials: int) -> AuditExperiment:
    """EM-PGM on the step pair, whose exact ε (computed on the net) is 0.93 of the claim; the
    spec's outlier pair shows only ε/2 (a location shift of the score), see
    :func:`~dpclaims.targets.pure_dp_heavy_tails.em_pgm_target`."""
    em, d0, d1 = em_pgm_setup()
    exact = em_pgm_exact_epsilon(em, d0, d1)
    spec = em_pgm_setup(heavy_outlier_pair(AUDIT_N), lam=1.0)
    return AuditExperiment(
        em_pgm_target,
        trials,
        reference_epsilon=round(exact, 4),
        reference_note="exact on this pair: max over the net of |log P_D(w) - log P_D'(w)| "
        "(finite output); the score falls by 2C/n left of the kink and rises by 2C/n right of it",
        note=f"EM-PGM with App. E.2 ball smoothing (rho = D/n), lambda = {EM_PGM_LAM:g}, on the "
        f"step pair (kink at {EM_PGM_KINK}), event {{w > t}} right of the kink (outputs below it "
        f"merged, fixed before certifying); the spec's outlier pair has exact eps "
        f"{em_pgm_exact_epsilon(*spec):.3f} (a location shift of the score: eps/2)",
    )


def alg7_audits(claim, *, trials: int, tight_trials: int) -> CombinedExperiment:
    """Algorithm 7 (d = 1) with exact samplers in place of [LL25]'s inexact one, under the spec's
    split: against the paper's ε and against the bound ε/2 + ε_em/2 = 5ε/8 proved for this
    variant (``LocalizedGridEM.epsilon_bound``, labelled as derived); the derived parts would
    catch a 2× leakage error of the implementation."""
    target = alg7_target()
    bound = target.mechanism.epsilon_bound
    tight = alg7_target(**ALG7_TIGHT)
    attained = alg7_exact_epsilon(tight.mechanism, tight.d0, tight.d1)
    exact = {
        "grid": alg7_exact_epsilon(target.mechanism, target.d0, target.d1),
        "rejection": alg7_exact_epsilon(
            target.mechanism, target.d0, target.d1, points=2001, resolution=1001
        ),
    }
    why = {
        "grid": "exact on this pair (max over 4001 values of w_tilde and the 64 grid points of "
        "the joint log-ratio: Laplace (|w_tilde - w0'| - |w_tilde - w0|)/b plus the grid EM's "
        f"log-ratio given w_tilde); the mechanism's proved bound is {bound:g}",
        "rejection": "exact on this pair up to quadrature (the continuous EM's log-ratio on a "
        f"2001-point grid of K, 1001 values of w_tilde); the mechanism's proved bound is {bound:g}",
    }
    notes = {
        "grid": "exact grid form of Algorithm 7: eps/2 Laplace + eps/4 finite EM on a 64-point "
        "grid of K",
        "rejection": "Algorithm 7 with the ideal continuous log-concave EM at eps/4, drawn exactly "
        "by rejection from the uniform law on K (sampler slack xi = 0 instead of [LL25]'s eps/8)",
    }
    derived = (
        f"; held to the bound {bound:g} proved for the toolkit's variant (Laplace eps/2 + the "
        "EM's eps_em/2: the EM's factor 2 is not needed for a score whose change is "
        "2C-Lipschitz, whose spread over K is at most Delta_s)"
    )
    label = "derived bound for the exact-sampler variant, not the paper's"
    tight_note = (
        f"exact: the pair with outlier kinks at +-{ALG7_TIGHT['outlier']:g} (outside the "
        f"domain), lambda = {ALG7_TIGHT['lam']:g}, attains the proved bound {bound:g}, computed "
        "from the two output laws as for the grid part"
    )
    parts = {
        "grid": AuditExperiment(
            alg7_target,
            trials,
            reference_epsilon=round(exact["grid"], 4),
            reference_note=why["grid"],
            note=notes["grid"],
        ),
        "grid-proved-bound": AuditExperiment(
            alg7_bound_target,
            tight_trials,
            reference_epsilon=round(attained, 4),
            reference_note=tight_note,
            bound=label,
            note=notes["grid"] + " on the pair that attains the bound, released through its exact "
            "log-likelihood ratio (fixed before any trial: the Neyman-Pearson statistic)" + derived,
        ),
        "rejection": AuditExperiment(
            alg7_rejection_target,
            trials,
            reference_epsilon=round(exact["rejection"], 4),
            reference_note=why["rejection"],
            note=notes["rejection"],
        ),
        "rejection-proved-bound": AuditExperiment(
            alg7_rejection_bound_target,
            trials,
            reference_epsilon=round(exact["rejection"], 4),
            reference_note=why["rejection"],
            bound=label,
            note=notes["rejection"] + derived,
        ),
    }
    return CombinedExperiment(
        parts,
        note=f"Algorithm 7 in d = 1 with exact samplers in place of [LL25]'s inexact one, under "
        "the specification's split (Laplace eps/2, EM eps_EM = eps/4, sampler slack xi = eps/8: "
        f"a reconstruction, the paper's formulas are blank). This variant is {bound:g}-DP, and "
        f"a pair attains it (exact eps {attained:.4f}, outlier kinks at "
        f"+-{ALG7_TIGHT['outlier']:g}, lambda = {ALG7_TIGHT['lam']:g}). Of the gap to the "
        "paper's eps = 1, eps/4 (= 2 xi) is the allowance for [LL25]'s inexact sampler, which "
        "the exact samplers do not use, and eps/8 is the EM's factor 2, not needed for a "
        "C-Lipschitz score; under the spec's split the paper's algorithm with an inexact sampler "
        f"is bounded by 7eps/8. The spec's outlier pair (exact eps {exact['grid']:.3f}) is "
        f"audited against 1; the attaining pair (grid, exact log-ratio statistic) and the spec "
        f"pair (rejection) against the derived {bound:g}",
    )


def rt2_experiment(
    claim, *, k: float, grid: tuple[int, ...], trials: int, replicates: int
) -> CombinedExperiment:
    """RT2 at moment order ``k``: the exponent of Algorithm 1's ratio to the constant output on
    the family of :func:`rt2_ratio` over the n ``grid``, and that ratio at the largest n against
    :data:`RT2_RATIO_LIMIT`."""
    rate = RateExperiment.for_claim(
        claim,
        rt2_ratio,
        "n",
        grid,
        at={"k": k},
        replicates=replicates,
        fixed={"k": k, "trials": trials},
        trivial=Baseline("the constant output 0", partial(rt2_constant_output_ratio, k=k)),
        note=f"k = {k:g}, eps = 0.5: the family's worst 0.9-quantile excess of Alg 1 (J = 1) over "
        "the constant output 0's worst excess, log factor ceil(log2 n)^(1-1/k) divided out; "
        f"members p = S/(eps n), S in {{1, 10, 100}} (shrinking signal) and p in {RT2_FIXED_P} "
        "(S = p eps n, a signal that does not shrink)",
    )
    n_max = grid[-1]
    below = ValueExperiment(
        lambda rng: {
            "ratio_to_constant_output": rt2_ratio(n_max, rng, k=k, trials=trials)
            * math.ceil(math.log2(n_max)) ** (1 - 1 / k)
        },
        le={"ratio_to_constant_output": RT2_RATIO_LIMIT},
        note=f"at n = {n_max}: the family's worst 0.9-quantile excess of Alg 1 over the constant "
        "output 0's worst excess (no log factor divided out); an algorithm whose noise does not "
        "shrink with n stays above 1",
    )
    return CombinedExperiment(
        {"rate": rate, "below-constant-output": below},
        note="the family keeps members whose signal does not shrink, so the constant output's "
        "worst excess is the same at every n and an algorithm no better than it fails both parts",
    )


def net_size_check(claim, *, sweep: bool) -> ValueExperiment | RateExperiment:
    """The net's size bound and cover property checked (``sweep`` False), or its size swept in
    1/γ."""
    if not sweep:
        return ValueExperiment(
            net_size_and_cover,
            {"net_size_within_bound_holds": 1.0, "net_covers_at_gamma_holds": 1.0},
            note="|N_gamma| <= (3D/gamma)^d for d = 1, 2, 3 and the gamma-cover property in d = 2",
        )
    return RateExperiment.for_claim(
        claim,
        net_points,
        "1/gamma",
        tuple(np.geomspace(10, 300, 6)),
        at={"d": 2},
        replicates=2,
        fixed={"d": 2},
        note="net size vs 1/gamma in d = 2 (exponential in d)",
    )


# --------------------------------------------------------------------------- privacy


def minimizer_sensitivity(rng):
    """White box: the exact and the certified (harness) minimizer shifts on the spec's outlier
    pair, over 2C/(λn) and 4C/(λn), and 200 random heavy-tailed neighbour pairs against 2C/(λn)."""
    d0, d1 = heavy_outlier_pair(AUDIT_N)
    lam, clip = 1.0, clip_level(AUDIT_N, 1, 1.0, moment_k=1.0, k=2, beta0=0.1)
    loc = OutPertLocalize.from_theorem(audit_problem(epsilon=0.5), lam=lam, clip=clip, beta=0.1)
    harness = WorstValidPoint.for_record(d0, 0)
    stage = loc.stage(d0)
    c = np.zeros((1, 1))
    exact = [stage.solve(d, c)[0][0, 0] for d in (d0, d1)]
    worst = [stage.solve(d, c, harness=harness)[0][0, 0] for d in (d0, d1)]
    # random neighbours: the exact shift never exceeds 2C/(λn)
    ratios = []
    for _ in range(200):
        n = 50
        a = np.exp(rng.standard_normal(n) * 2.0)
        b = rng.uniform(-3, 3, n)
        x, y = a[:, None], a * b
        x1, y1 = x.copy(), y.copy()
        x1[0, 0] = np.exp(rng.standard_normal() * 3.0)
        y1[0] = x1[0, 0] * rng.uniform(-3, 3)
        s = [
            ClippedSlopes1D.from_data(UserDataset(xx, yy), AbsoluteLoss(), 2.0).root(
                np.zeros(1), 0.7
            )[0]
            for xx, yy in ((x, y), (x1, y1))
        ]
        ratios.append(abs(s[0] - s[1]) / (2 * 2.0 / (0.7 * n)))
    return {
        "exact_shift_over_2C_lambda_n": abs(exact[1] - exact[0]) / (2 * clip / (lam * AUDIT_N)),
        "harness_shift_over_4C_lambda_n": abs(worst[1] - worst[0]) / loc.sensitivity,
        "random_pairs_within_2C_lambda_n_holds": float(max(ratios) <= 1 + 1e-9),
    }


# --------------------------------------------------------------------------- formulas


def extension_bias(rng):
    """Lemma 2.2's 1-d clipping identity, the extension's bias bound and the Markov layer-cake
    bound on a Pareto(2.5) absolute-loss sample."""
    k, alpha = 2.0, 2.5
    inst = _pareto(1, alpha)
    data = inst.sample(150, 1, rng)
    a, b = np.abs(data.x[:, 0, 0]), data.y[:, 0] / data.x[:, 0, 0]
    clip, lo, hi = 3.0, -0.4, 0.6
    w = np.linspace(lo, hi, 101)[:, None]
    m_k = np.clip(b, lo, hi)
    ext = a * np.abs(m_k - b) + np.minimum(a, clip) * (np.abs(w - b) - np.abs(m_k - b))
    grid = np.linspace(lo, hi, 1001)[:, None, None]
    brute = (a * np.abs(grid - b) + clip * np.abs(w[None] - grid)).min(
        axis=0
    )  # Lemma 2.2 definition
    bias = (a * np.abs(w - b) - ext).mean(axis=1)
    bound = (hi - lo) * np.maximum(a - clip, 0).mean()
    g_k = inst.moment_parameter(k)
    mean_excess = clip ** (1 - alpha) / (alpha - 1)  # exact E(a − C)_+ for Pareto(α, 1)
    return {
        "identity_matches_definition_holds": float(np.max(np.abs(ext - brute)) <= 1e-3 * a.max()),
        "bias_between_0_and_bound_holds": float(bias.min() >= -1e-9 and bias.max() <= bound + 1e-9),
        "markov_layer_cake_bound_holds": float(mean_excess <= g_k**k / ((k - 1) * clip ** (k - 1))),
    }


def localization_containment(rng, trials=20_000):
    """Lemma 2.3: the localization radius against its formula, and P(ŵ_C ∈ W_loc) ≥ 1 − β."""
    inst = _pareto(1, 2.5)
    data = inst.sample(200, 1, rng)
    clip = clip_level(200, 1, 1.0, moment_k=inst.moment_parameter(2), k=2, beta0=0.1)
    loc = OutPertLocalize.from_theorem(_problem(200, epsilon=0.5), lam=1.0, clip=clip, beta=0.1)
    w_c = np.clip(
        ClippedSlopes1D.from_data(data, AbsoluteLoss(), clip).root(np.zeros(1), 1.0), -10, 10
    )[0]
    w_tilde = loc.run(data, rng, trials).theta[:, 0]
    cover = float(np.mean(np.abs(w_tilde - w_c) <= loc.radius))
    r_formula = clip / 200 + 16 * clip * (1 + math.log(10)) / (200 * 1.0)
    return {
        "radius_matches_formula": loc.radius / r_formula,
        "coverage_at_least_1_minus_beta_holds": float(cover >= 0.9),
    }


def trivial_upper_bound(rng):
    """The trivial bound: fixed points of the domain have excess ≤ G_1 D on both lower-bound
    families."""
    ok = []
    for inst in (
        TwoPointInstance(2, moment=1.0, diameter=2.0, bias=0.3),
        HeavyPackingInstance(
            sphere_packing(2, 1.0, rng), index=0, p=0.01, k=2, moment=1.0, diameter=2.0
        ),
    ):
        w = inst.radius * rng.standard_normal((200, inst.d))
        w = Ball.centered(inst.d, inst.radius).project(w)
        g1 = inst.moment(1.0)
        ok.append(float(np.max(inst.excess_risk(w)) <= g1 * inst.diameter + 1e-12))
    return {"fixed_points_within_G1_D_holds": min(ok)}


# --------------------------------------------------------------------------- rate experiments
# (module level: picklable)


def rt1_distance(
    value,
    rng,
    *,
    param="n",
    k=2.0,
    n=10_000,
    epsilon=1.0,
    trials=400,
    algorithm=DoubleOutputPert,
    clip_rule="paper",
):
    """RT1: median ‖w_out − ŵ‖ of Algorithm 4 on the Pareto(k + ½) absolute-loss instance (d = 1, 𝒲
    = [−10, 10])."""
    args = {"n": n, "epsilon": epsilon, param: value}
    n, epsilon = int(args["n"]), float(args["epsilon"])
    inst = _pareto(1, k + 0.5)
    data = inst.sample(n, 1, rng)
    alg = algorithm.from_theorem(
        _problem(n, epsilon=epsilon),
        moment_k=inst.moment_parameter(k),
        k=k,
        lam=1.0,
        beta0=0.1,
        output="final",
        clip_rule=clip_rule,
    )
    w_hat = np.clip(
        ClippedSlopes1D.from_data(data, AbsoluteLoss(), math.inf).root(np.zeros(1), 1.0), -10, 10
    )
    return float(np.median(np.abs(alg.run(data, rng, trials).theta[:, 0] - w_hat[0])))


def rt1_d_distance(
    d,
    rng,
    *,
    k=2.0,
    n=5000,
    epsilon=1.0,
    trials=200,
    domain_radius=100.0,
    algorithm=DoubleOutputPert,
):
    """RT1-d: **mean** ‖w_out − ŵ‖ of Algorithm 4 with the PV-2 solver on the linear-loss analogue
    (spec §7b note).

    ``x = a·u`` (``a ~ Pareto(k + ½)``, ``u`` uniform on ``S^{d−1}``), ``f = −⟨x, w⟩``, 𝒲 = B(0,
    100) ≫ r, λ = 1, w̄ = 0, β0 = 0.1, ``C = G_k(εn/d)^{1/k}`` (``clip_rule="rate-test"``).  ŵ =
    ``x̄/λ`` is the exact unclipped regularized ERM.  The PV-2 term ``min(1, C/‖x‖)·f`` is the
    extension over ℝ^d (the spec's labelled deviation: clipped-mean output perturbation), so this
    checks the noise-term d-scaling.
    """
    d = int(d)
    inst = _pareto(d, k + 0.5, radius=domain_radius)
    data = inst.sample(int(n), 1, rng)
    alg = algorithm.from_theorem(
        _problem(int(n), epsilon=epsilon, d=d, radius=domain_radius, loss=LinearLoss()),
        moment_k=inst.moment_parameter(k),
        k=k,
        lam=1.0,
        beta0=0.1,
        output="final",
        clip_rule="rate-test",
        solver="pv2",
    )
    w_hat = Ball.centered(d, domain_radius).project(data.x[:, 0, :].mean(axis=0))
    return float(np.mean(np.linalg.norm(alg.run(data, rng, trials).theta - w_hat, axis=1)))


def rt2_ratio(
    n,
    rng,
    *,
    k=2.0,
    epsilon=0.5,
    levels=(1.0, 10.0, 100.0),
    fixed_p=RT2_FIXED_P,
    trials=200,
    beta=0.1,
    algorithm=PopLocalize,
):
    """RT2: the family's worst (1 − β)-quantile excess of Algorithm 1 (test constants, J = 1)
    over the constant output 0's worst excess, divided by ``⌈log2 n⌉^{1−1/k}``.

    The family (𝒲 = [−1, 1], f = −z·w, ``z = A·Bern(p)``, ``A = p^{−1/k}``) holds the members
    ``p = S/(εn)``, whose signal E z shrinks at the claimed rate (every output's excess is at most
    2 E z there), and the members of fixed ``p`` (``S = pεn ∝ n``), whose signal does not shrink:
    the constant output's worst excess ``max E z`` is the same at every n, so an algorithm whose
    noise does not shrink with n keeps a constant ratio.  ``algorithm`` builds Algorithm 1
    (:class:`PopLocalize`, or a variant of it).
    """
    n = int(n)
    packing = sphere_packing(1, 1.0)
    worst, trivial = 0.0, 0.0
    for p in [min(1.0, s / (epsilon * n)) for s in levels] + list(fixed_p):
        inst = HeavyPackingInstance(packing, index=0, p=p, k=k, moment=1.0, diameter=2.0)
        data = inst.sample(n, 1, rng)
        alg = _alg1_linear(
            n,
            epsilon=epsilon,
            moment_2=inst.moment(2.0) ** 0.5,
            k=k,
            beta=beta,
            algorithm=algorithm,
        )
        worst = max(worst, _excess_quantile(inst, alg, data, rng, trials=trials, beta=beta))
        trivial = max(trivial, float(inst.excess_risk(np.zeros((1, 1)))[0]))
    return worst / trivial / math.ceil(math.log2(n)) ** (1 - 1 / k)


def rt2_constant_output_ratio(n: float, *, k: float) -> float:
    """The constant output's value of :func:`rt2_ratio`: 1 (its excess over itself), over the
    same log factor ceil(log2 n)^(1-1/k)."""
    return 1.0 / math.ceil(math.log2(n)) ** (1 - 1 / k)


def rt4_quantile(
    n, rng, *, levels=(0.3, 1.0, 3.0), epsilon=1000.0, trials=20, datasets=20, beta=0.1
):
    """RT4: max over S of the 0.9-quantile excess of Algorithm 1 (J = 1) on the two-point family
    at bias δ = S/√m, ``m = ⌊n/⌈log2 n⌉⌋`` its phase block size, large ε; divided by
    ``√⌈log2 n⌉``.

    Algorithm 1 runs ``⌈log2 n⌉`` phases on disjoint blocks of m records, so its statistical
    error is ``√(log n / n)``: the family's hard bias scales with the block (δ√m = S held
    fixed) and the log factor the O~ hides is divided out, leaving ``n^{-1/2}``.  The quantile
    is over the data and the algorithm (``datasets`` fresh datasets × ``trials`` runs each),
    as the theorem's "with probability ≥ 1 − β" is.
    """
    n = int(n)
    phases = math.ceil(math.log2(n))
    block = n // phases
    alg = _alg1_linear(n, epsilon=epsilon, moment_2=1.0, k=2.0, beta=beta)
    worst = 0.0
    for s in levels:
        inst = TwoPointInstance(1, moment=1.0, diameter=2.0, bias=min(0.5, s / math.sqrt(block)))
        excess = np.concatenate(
            [
                inst.excess_risk(alg.run(inst.sample(n, 1, rng), rng, trials).theta)
                for _ in range(datasets)
            ]
        )
        worst = max(worst, float(np.quantile(excess, 1 - beta)))
    return worst / math.sqrt(phases)


def rt4_origin_quantile(
    n, rng, *, levels=(0.3, 1.0, 3.0), epsilon=1000.0, trials=20, datasets=20, beta=0.1
):
    """The trivial control of :func:`rt4_quantile`: the constant output 0's excess (its every
    quantile), worst over the same biases, over the same ``√⌈log2 n⌉`` (exact)."""
    n = int(n)
    phases = math.ceil(math.log2(n))
    block = n // phases
    worst = max(
        float(
            TwoPointInstance(
                1, moment=1.0, diameter=2.0, bias=min(0.5, s / math.sqrt(block))
            ).excess_risk(np.zeros((1, 1)))[0]
        )
        for s in levels
    )
    return worst / math.sqrt(phases)


# --------------------------------------------------------------------------- lower bounds


def private_lower_bound(rng, *, ns=(1000, 4000, 16000), trials=400, beta=0.1, epsilon=1.0, k=2.0):
    """RT3: Algorithm 1's worst (1 − β)-quantile excess on the heavy packing against the private
    lower bound and against 10× the upper bound."""
    packing = sphere_packing(1, 1.0)
    below, ratios_up = [], []
    for n in ns:
        worst = 0.0
        for v in range(packing.size):
            inst = HeavyPackingInstance.from_theorem(
                _linear_problem(n, epsilon),
                k=k,
                moment=1.0,
                diameter=2.0,
                beta=beta,
                packing=packing,
                index=v,
            )
            alg = _alg1_linear(n, epsilon=epsilon, moment_2=inst.moment(2.0) ** 0.5, k=k, beta=beta)
            data = inst.sample(n, 1, rng)
            worst = max(worst, _excess_quantile(inst, alg, data, rng, trials=trials, beta=beta))
        below.append(worst / inst.lower_bound())
        upper = (
            1.0
            * 2.0
            * (1 * math.log(1 / beta) / (epsilon * n)) ** (1 - 1 / k)
            * math.ceil(math.log2(n))
        )
        ratios_up.append(worst / upper)
    return {
        "quantile_above_lower_bound_holds": float(min(below) >= 1.0),
        "quantile_within_10x_upper_bound_holds": float(max(ratios_up) <= 10.0),
    }


def nonprivate_lower_bound(rng, *, ns=(1000, 10_000), trials=400, beta=0.1):
    """The non-private lower bound's formula, and Algorithm 1's worst (1 − β)-quantile excess on
    the two-point family above it."""
    above = []
    for n in ns:
        worst = 0.0
        for v in (1, -1):
            inst = TwoPointInstance.from_theorem(
                _linear_problem(n, 1000.0),
                moment=1.0,
                diameter=2.0,
                beta=beta,
                sign=v,
            )
            alg = _alg1_linear(n, epsilon=1000.0, moment_2=1.0, k=2.0, beta=beta)
            data = inst.sample(n, 1, rng)
            worst = max(worst, _excess_quantile(inst, alg, data, rng, trials=trials, beta=beta))
        above.append(worst / inst.lower_bound())
    value = two_point_lower_bound(1000, 1.0, 2.0, 0.1)
    return {
        "formula_at_n1000_beta01": value / ((1.0 * 2.0 / 4) * math.sqrt(math.log(1 / 0.4) / 3000)),
        "quantile_above_lower_bound_holds": float(min(above) >= 1.0),
    }


def mean_estimation_lower_bound(rng):
    """Lemma G.1's reduction checked pointwise, and the private term's formula."""
    # Lemma G.1: F_P(w) − F* ≥ (D/(4ρ))‖μ̂ − μ‖² with μ̂ = (2ρ/D) w, pointwise on B(0, D/2)
    d, diameter, rho = 3, 2.0, 0.7
    mu = rho * np.eye(d)[0]
    w = Ball.centered(d, diameter / 2).project(rng.standard_normal((5000, d)))
    excess = diameter / 2 * rho - w @ mu
    mu_hat = 2 * rho / diameter * w
    lemma = bool(
        np.all(excess >= diameter / (4 * rho) * np.sum((mu_hat - mu) ** 2, axis=1) - 1e-12)
    )
    private = heavy_tailed_mean_lower_bound(
        n=1000, d=5, epsilon=1.0, k=3.0, moment=1.0, beta=0.1, part="private"
    )
    return {
        "lemma_G1_reduction_holds": float(lemma),
        "private_term_formula": private / ((5 + math.log(10)) / 1000) ** (2 - 2 / 3),
    }


# --------------------------------------------------------------------------- complexity


def adapsg_iterations(alpha, rng, *, d=3, radius=1.0):
    """Iterations AdaPSG needs to certify α on ``h(x) = ‖x − a‖₂`` over the unit ball, ‖a‖ = 2 (so
    ‖∂h‖ ≡ 1 on K)."""
    target = rng.standard_normal((1, d))
    target *= 2.0 / np.linalg.norm(target)
    ball = Ball.centered(d, radius)
    res = adapsg(
        lambda x: (
            (x - target) / np.maximum(np.linalg.norm(x - target, axis=1, keepdims=True), 1e-300)
        ),
        lambda u, z: (ball.project(u), 1),
        np.zeros((1, d)),
        radius=2 * radius,
        alpha=alpha,
    )
    return float(res.iterations[0])


def projection_accuracy(rng):
    """Inexact projection onto 𝒲 ∩ B(c, r) on 500 random points: accuracy, feasibility and calls
    against the formula."""
    dom = Ball.centered(3, 2.0)
    c = dom.project(rng.standard_normal((500, 3)))
    u = 6.0 * rng.standard_normal((500, 3))
    r, zeta = 0.5, 1e-6
    p, calls = inexact_projection(u, dom, center=c, r=r, zeta=zeta)
    exact = np.stack(
        [
            project_ball_intersection(
                u[i : i + 1], radius1=2.0, center1=np.zeros(3), radius2=r, center2=c[i]
            )[0]
            for i in range(500)
        ]
    )
    dist = np.linalg.norm(u - c, axis=1)
    first = np.linalg.norm(dom.project(u) - c, axis=1) > r
    bound = (
        np.where(first, np.ceil(np.log2(np.maximum(dist * (dist / r - 1) / zeta, 1))), 0).max() + 1
    )
    inside = bool(
        np.all(np.linalg.norm(p, axis=1) <= 2.0 + 1e-9)
        and np.all(np.linalg.norm(p - c, axis=1) <= r + 1e-9)
    )
    return {
        "within_zeta_of_exact_holds": float(np.max(np.linalg.norm(p - exact, axis=1)) <= zeta),
        "output_in_K_holds": float(inside),
        "calls_over_formula": calls / bound,
    }


def structured_evaluations(n, rng, *, weight=1e12):
    """Subgradient evaluations of Algorithm 4's exact polyhedral solver with an L = 10¹² record (d
    = 1)."""
    n = int(n)
    inst = _pareto(1, 2.5)
    data = inst.sample(n, 1, rng)
    x, y = np.array(data.x), np.array(data.y)
    x[0], y[0] = weight, weight * 0.1
    alg = DoubleOutputPert.from_theorem(
        _problem(n),
        moment_k=inst.moment_parameter(2),
        k=2,
        lam=1.0,
        beta0=0.1,
        output="final",
    )
    return float(alg.run(UserDataset(x, y), rng, 4).gradient_evaluations[0])


def _adapsg_stage_iterations(alg: DoubleOutputPert, lipschitz: float) -> int:
    """Prop 2.9's cap ``⌈(5 R L_h/(2α))²⌉`` summed over Algorithm 4's two AdaPSG stages.

    ``R = √(n+1)·diam`` with diam = D (stage 1, over 𝒲) and ``min(D, 2r)`` (stage 2, over
    K = 𝒲 ∩ B(w̃, r)), exactly the radii the solver is given; ``L_h`` bounds ‖∂Φ‖ on K × K^n.
    """
    loc = alg.localizer
    d_w = loc.domain.diameter
    total = 0
    for diam in (d_w, min(d_w, 2.0 * loc.radius)):
        radius = math.sqrt(loc.n + 1) * diam
        total += math.ceil((5.0 * radius * lipschitz / (2.0 * loc.alpha)) ** 2)
    return total


def _phi_lipschitz(alg: DoubleOutputPert, record_lipschitz: np.ndarray) -> float:
    """``L_h`` of Φ (Lemma 2.7): ‖∂_wΦ‖ ≤ C + λD and ‖∂_{y_i}Φ‖ ≤ (L_{z_i} + C)/n."""
    loc = alg.localizer
    w_part = loc.clip + loc.lam * loc.domain.diameter
    y_part = np.sum(((record_lipschitz + loc.clip) / loc.n) ** 2)
    return math.sqrt(w_part**2 + float(y_part))


def adapsg_route_runtime(rng, *, ns=(5, 6, 8), trials=4, radius=0.25, beta=0.1):
    """Algorithm 4 with the paper's certified route (AdaPSG on Φ, ``solver="adapsg"``) at the
    theorem's α = C²/(2λn²), on Pareto(2.5) absolute-loss samples in d = 1, 𝒲 = B(0, radius).

    Returns the largest ratio, over n, of the measured gradient evaluations to ``n`` times
    Prop 2.9's iteration cap at the realized Lipschitz constants, and to ``n`` times the same cap
    with every L_{z_i} replaced by the event's bound ``G_k (n/β)^{1/k}`` (Thm 3.1: a polynomial
    in n that holds w.p. ≥ 1 − β), over the samples inside that event.  An AdaPSG run that does
    not certify within its iteration cap raises instead of returning.
    """
    realized, on_event = [], []
    for n in ns:
        inst = ParetoRadiusInstance(1, 2.5, scale=1.0, radius=radius, half_width=0.5 * radius)
        data = inst.sample(n, 1, rng)
        g_k = inst.moment_parameter(2)
        alg = DoubleOutputPert.from_theorem(
            _problem(n, radius=radius),
            moment_k=g_k,
            k=2,
            lam=1.0,
            beta0=beta,
            solver="adapsg",
            output="final",
        )
        evaluations = alg.run(data, rng, trials).gradient_evaluations.max()
        lipschitz = np.abs(data.x[:, 0, 0])
        cap = _adapsg_stage_iterations(alg, _phi_lipschitz(alg, lipschitz))
        realized.append(evaluations / (n * cap))
        event = g_k * (n / beta) ** 0.5
        if lipschitz.max() <= event:
            poly = _adapsg_stage_iterations(alg, _phi_lipschitz(alg, np.full(n, event)))
            on_event.append(evaluations / (n * poly))
    return {
        "evaluations_over_prop29_cap": max(realized),
        "evaluations_over_event_polynomial": max(on_event, default=math.nan),
    }


def net_points(inv_gamma, rng, *, d=2):
    """Points of :func:`net` of 𝒲 = B(0, 1) in d dimensions at γ = 1/inv_gamma."""
    return float(net(Ball.centered(d, 1.0), 1.0 / inv_gamma).shape[0])


def net_size_and_cover(rng):
    """The net's size within (3D/γ)^d for d = 1, 2, 3 and its γ-cover property in d = 2."""
    ok = [
        net(Ball.centered(d, 1.0), g).shape[0] <= net_size_bound(2.0, g, d)
        for d in (1, 2, 3)
        for g in (0.3, 0.1, 0.05)
    ]
    pts = net(Ball.centered(2, 1.0), 0.1)
    probe = Ball.centered(2, 1.0).project(rng.standard_normal((2000, 2)))
    cover = np.min(np.linalg.norm(probe[:, None] - pts[None], axis=-1), axis=1).max() <= 0.1 + 1e-12
    return {
        "net_size_within_bound_holds": float(all(ok)),
        "net_covers_at_gamma_holds": float(cover),
    }
