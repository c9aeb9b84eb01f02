"""Experiments for the claims of Ghazi et al. 2023 (spec 001 §7; paper id ``ghazi-et-al-2023``).

Privacy claims: the ⊥-channel audit of §7(a) (exact value ≈ ε/2), the ⊥ frequencies against
the TDLap CDF, the M3 fast-path pair, and white-box composition invariants.  Rate claims:
the sweeps RT-1 … RT-12 of §7(b) (``oracle`` mode where the spec says paper constants make
the excess trivial; every oracle experiment says so in its note).  Spec-suspected gaps (RT-8)
are reported as measured, never tuned.  Lower bounds (Thm D.7, D.8, Lemma D.5): a reference
user-level estimator on the hard family, whose error must stay above the bound (also where the
non-private mean falls below it) and meet its Ω exponent.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special, stats
from statsmodels.stats.proportion import proportion_confint

from dpclaims.algorithms.ghazi_et_al_2023 import (
    BottomChannel,
    DelOutputPert,
    ItemLevelOutputPert,
    NaiveUserOutputPert,
    PhasedERM,
    PhasedSCO,
    SCOutputPert,
    StronglyConvexERM,
    StronglyConvexSCO,
    min_users,
)
from dpclaims.algorithms.ghazi_et_al_2023.stability import (
    Domain,
    QuadraticMinimiser,
    TDLap,
    inner_privacy_params,
    stability_profile,
)
from dpclaims.algorithms.mechanisms import GaussianMechanism, user_mean_query
from dpclaims.claims.experiments import BySize, register_experiment
from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.data import GroupedMeans, UserDataset
from dpclaims.errors import InputError
from dpclaims.hardinstances.canaries import outlier_count_pair
from dpclaims.hardinstances.gaussian import (
    TruncatedGaussianInstance,
    UserLevelGaussianInstance,
    sample_user_level_gaussian,
)
from dpclaims.hardinstances.ghazi_et_al_2023 import (
    block_boundaries,
    cube_group_means,
    point_mass_data,
    prescribed_mean_data,
    repeated_item_users,
)
from dpclaims.hardinstances.lower_bounds import (
    ghazi_thm_d7_alpha,
    ghazi_thm_d7_explicit_lower_bound,
    ghazi_thm_d7_scales,
    ghazi_thm_d8_explicit_lower_bound,
    user_gaussian_mean_lower_bound,
    user_level_erm_lower_bound,
    user_level_sco_lower_bound,
)
from dpclaims.hardinstances.quadratic import QuadraticHypercubeInstance
from dpclaims.losses import L1DistanceLoss, LinearLoss, project_l2_ball
from dpclaims.problem import Problem
from dpclaims.rates import loglog_slope
from dpclaims.targets.ghazi_et_al_2023 import (
    BOTTOM_PROBLEM,
    BOTTOM_USERS,
    SC_ITEMS,
    SC_USERS,
    TIE_PROBLEM,
    bottom_channel_target,
    sc_bottom_mechanism,
    tie_break_epsilon,
    tie_break_target,
)


def _grid(start: int, ratio: int, *, quick: list) -> BySize:
    """A sweep's values: ``quick`` at the quick budget, ``start·ratio^k`` for k < 5 (standard) and
    k < 6 (full)."""
    return BySize(
        quick=quick,
        standard=[start * ratio**k for k in range(5)],
        full=[start * ratio**k for k in range(6)],
    )


N_FROM_200 = _grid(200, 2, quick=[200, 440, 960, 2100])
"""The n values of RT-3 and RT-6."""


def claimed_exponents(claim, **keys: str) -> dict[str, float]:
    """``{key: the claim's exponent of variable}`` for each ``key=variable``: the expected
    exponents of a value experiment, read from the claim rather than restated here."""
    return {key: float(claim.exponents[variable]) for key, variable in keys.items()}


LOWER_BOUND_VARIABLES = {"n": "n", "m": "m", "d": "d", "epsilon": "eps"}
"""Keys of the lower-bound exponent checks and the claims' variables they test."""


def _reference_bottom_epsilon(tdlap: TDLap, k: int, delta: float) -> float:
    """Exact ε of the ⊥ channel on x^(k) vs x^(k−1): P = CDF(k−1), Q = CDF(k−2) (spec §7(a))."""
    p, q = float(tdlap.cdf(k - 1)), float(tdlap.cdf(k - 2))
    cands = []
    if q > 0 and p - delta > 0:
        cands.append(math.log((p - delta) / q))
    if 1 - p > 0 and 1 - q - delta > 0:
        cands.append(math.log((1 - q - delta) / (1 - p)))
    return max(cands) if cands else 0.0


def best_bottom_k(tdlap: TDLap, delta: float, n: int) -> tuple[int, float]:
    """The k maximising the ⊥-channel ε on x^(k) vs x^(k−1) (k ≤ n), and that ε."""
    scores = [
        (_reference_bottom_epsilon(tdlap, k, delta), k)
        for k in range(1, min(n, 2 * tdlap.kappa + 2) + 1)
    ]
    eps, k = max(scores)
    return k, eps


# ---------------------------------------------------------------- TDLap, Observation 3.5, Thm 3.3


TDLAP_SETTINGS = ((1, 1e-5, "a"), (1, 1e-3, "b"), (1, 0.1, "c"), (0.5, 1e-5, "d"))
"""The (ε, δ) pairs of spec 001 §7(a)'s κ table, with their names."""


def tdlap_kappa_properties(rng) -> dict:
    """κ, the endpoint mass and the three TDLap properties at :data:`TDLAP_SETTINGS` (the
    toolkit's formulas evaluated: no randomness)."""
    out = {}
    for eps, delta, name in TDLAP_SETTINGS:
        e1, d1, kappa = inner_privacy_params(eps, delta)
        props = TDLap(e1, d1).properties()
        out[f"kappa_{name}"] = kappa
        out[f"endpoint_{name}"] = props["endpoint_mass"]
        out[f"endpoint_ok_{name}"] = float(props["endpoint_mass"] <= props["endpoint_bound"])
        out[f"ratio_ok_{name}"] = float(
            props["max_log_ratio"] <= props["ratio_bound"] * (1 + 1e-12)
        )
    return out


def bottom_frequencies(rng, *, trials: int, mech: DelOutputPert) -> dict:
    """Empirical Pr[⊥ | x^(k)] of ``mech`` (99% Bonferroni Clopper-Pearson) at k = 1 and
    κ − 2 … κ + 2."""
    ks = (1,) + tuple(range(mech.kappa - 2, mech.kappa + 3))
    alpha = 0.01 / len(ks)
    out = {}
    for k in ks:
        d0, _ = outlier_count_pair(BOTTOM_USERS, 1, k)
        hits = int(BottomChannel(mech)(d0, rng, trials)[:, 0].sum())
        lo, hi = proportion_confint(hits, trials, alpha=alpha, method="beta")
        out[f"bottom_freq_k{k}"] = (hits / trials, lo, hi)
    return out


@register_experiment("ghazi23.def34.tdlap")
def value_def34_tdlap_and_bottom_frequencies(claim, budget):
    trials = BySize(quick=5_000, standard=100_000, full=1_000_000)[budget]
    mech = DelOutputPert.from_theorem(BOTTOM_PROBLEM, Delta=1e-6)
    kappa = {
        "kappa_a": 28,
        "kappa_b": 18,
        "kappa_c": 9,
        "kappa_d": 53,
        "endpoint_a": 2.04e-7,
        "endpoint_b": 3.0e-5,
        "endpoint_c": 2.7e-3,
        "endpoint_d": 2.2e-7,
    }
    kappa.update({f"{w}_ok_{s}": 1.0 for w in ("endpoint", "ratio") for _, _, s in TDLAP_SETTINGS})
    ks = (1,) + tuple(range(mech.kappa - 2, mech.kappa + 3))
    return CombinedExperiment(
        {
            "kappa": ValueExperiment(
                tdlap_kappa_properties,
                kappa,
                rtol=0.02,
                note="κ and P[R1=0] against the spec's reference values (rtol 2%) and the three "
                "TDLap properties: the toolkit's formulas evaluated.",
                transcription=True,
            ),
            "bottom frequencies": ValueExperiment(
                functools.partial(bottom_frequencies, trials=trials, mech=mech),
                {f"bottom_freq_k{k}": float(mech.tdlap.cdf(k - 1)) for k in ks},
                note="empirical Pr[⊥ | x^(k)] (99% Bonferroni Clopper-Pearson) of Algorithm 1's "
                "run must cover CDF_TDLap(k−1) — the exact law implied by s*(x^(k)) = k (n = 20, "
                "(1, 1e-3)).",
            ),
        },
        note="κ (a formula check) and the ⊥ frequencies of a run (an experiment), as separate "
        "parts.",
    )


def _random_small_dataset(rng, n):
    levels = np.array([0.0, 0.05, 0.1, 1.0])
    return GroupedMeans.per_user(rng.choice(levels, size=(n, 1)) * rng.uniform(0.5, 1.5), 1)


def quadratic_s_star(data: GroupedMeans, kappa: int, delta_target: float) -> int:
    """s* of Algorithm 1's stability test for the unconstrained quadratic (μ = 1) on ``data``."""
    values, counts = data.types()
    solver = QuadraticMinimiser(1.0)
    prof = stability_profile(
        values,
        counts,
        lambda s: solver.minimiser(values, s, reg=0.0, centre=None, domain=Domain(math.inf)),
        kappa=kappa,
        delta_target=delta_target,
        empty_value=np.zeros((1, 1)),
    )
    return int(prof.s_star[0])


@register_experiment("ghazi23.obs35.stable_monotone")
def value_obs35_stability_monotone(claim, budget):
    pairs = BySize(quick=150, standard=1500, full=10_000)[budget]

    def compute(rng):
        violations, informative = 0, 0
        for _ in range(pairs):
            n = int(rng.integers(6, 11))
            eps = float(rng.choice([1.0, 0.5]))
            kappa = inner_privacy_params(eps, float(rng.choice([0.1, 0.3])))[2]
            x = _random_small_dataset(rng, n)
            means = x.means.copy()
            means[rng.integers(n)] = rng.choice([0.0, 0.05, 1.0, 3.0])
            x1 = GroupedMeans.per_user(means, 1)
            target = float(10 ** rng.uniform(-3, 0))
            s0, s1 = quadratic_s_star(x, kappa, target), quadratic_s_star(x1, kappa, target)
            informative += int(min(s0, s1) <= 2 * kappa)
            violations += int(s0 > s1 + 1) + int(s1 > s0 + 1)
        return {"violations": violations, "informative_fraction": (informative / pairs, 0.0, 1.0)}

    return ValueExperiment(
        compute,
        {"violations": 0.0, "informative_fraction": 0.5},
        atol=0.0,
        note="Observation 3.5 ⟺ s*(x) ≤ s*(x') + 1 for replace-one-user neighbours; random "
        "small datasets, random Δ, exhaustive type-compressed test; counts violations.",
    )


THM33_TRIALS = BySize(quick=2_000_000, standard=8_000_000, full=20_000_000)
"""Trials per dataset of the two-camp audit (about 1 s per million): the pair's exact ε is
0.540 of the claimed 1, so the reach (≈ 2.02 at 2e5 trials, ≈ 2.0 at 1e6) needs 2e6 to stay
below 2."""


@register_experiment("ghazi23.thm33.deloutputpert_dp")
def audit_alg1_bottom_channel(claim, budget):
    _, s, reference = tie_break_target()
    mech = DelOutputPert.from_theorem(TIE_PROBLEM, Delta=1.0)
    bound = max(tie_break_epsilon(mech, k) for k in range(1, 2 * mech.kappa))
    return AuditExperiment(
        lambda: tie_break_target()[0],
        THM33_TRIALS[budget],
        reference_epsilon=round(reference, 4),
        reference_note="exact ε of the pair: Pr[⊥] = CDF_TDLap(s−1) vs CDF_TDLap(s) and "
        "releases N(−(s+2)Δ, σ²) vs N((s+1)Δ, σ²), hockey-stick divergence in closed form "
        "(bottom_gaussian_pair_epsilon)",
        note=f"Algorithm 1 with a generic f (Thm 3.3 holds for every f): two camps, f = "
        f"Δ·(#B − #A) when one camp is empty, unstable when both are present, so s* = the "
        f"smaller camp and the release jumps across zero between x = ({s + 2} A, {s} B) and "
        f"x' = ({s + 1} A, {s + 1} B) (tie: the A camp deleted): Pr[⊥] moves one TDLap step "
        f"and the release moves (2s+3)Δ = (s*(x)+s*(x')+2)Δ, the most the proof of Thm 3.3 "
        f"allows; white-box log-likelihood-ratio statistic; (ε, δ) = (1, 1e-3), s = {s}.  No "
        f"pair leaks more than {bound:.3f} (the same closed form maximised over s, with the "
        "proof's own bound |S|+|S'|+2 on the shift): the ⊥ channel is capped at ε1 = ε/2 by "
        "Observation 3.5 and the Gaussian, calibrated to the proof's 8κΔ, sees at most "
        f"(4κ+2)Δ, so Theorem 3.3's claim is conservative by {1 / bound:.2f}× and this pair "
        "attains the mechanism's tight ε.",
    )


def _deloutputpert_sigma(epsilon: float, delta: float, Delta: float) -> float:
    """σ of Algorithm 1 at (ε, δ, Δ) (it does not depend on n)."""
    problem = Problem(n=BOTTOM_USERS, epsilon=epsilon, delta=delta)
    return DelOutputPert.from_theorem(problem, Delta=Delta).sigma


@register_experiment("ghazi23.thm33.accuracy")
def value_thm33_accuracy_and_sigma(claim, budget):
    trials = BySize(quick=20_000, standard=200_000, full=1_000_000)[budget]

    def compute(rng):
        users = 4 * inner_privacy_params(1.0, 1e-5)[2] + 8  # Δ_{4κ} f(x) = 0 ≤ Δ, ∅ unreachable
        mech = DelOutputPert.from_theorem(Problem(n=users, epsilon=1.0, delta=1e-5), Delta=1e-3)
        data = GroupedMeans.per_user(np.full((users, 2), 0.3), 50)
        out = mech.run(data, rng, trials)
        resid = out.theta - 0.3
        ss = float(np.sum(resid**2))
        dof = resid.size
        lo, hi = ss / stats.chi2.ppf(0.995, dof), ss / stats.chi2.ppf(0.005, dof)
        eps_grid = np.geomspace(0.05, 1.0, 8)
        ratios = [_deloutputpert_sigma(e, 1e-5, 1.0) for e in eps_grid]
        deltas = [0.5e-3, 1e-3, 2e-3, 4e-3]
        return {
            "bottom_rate": float(out.bottom.mean()),
            "variance_over_sigma2": (
                ss / dof / mech.sigma**2,
                lo / mech.sigma**2,
                hi / mech.sigma**2,
            ),
            "sigma_Delta_exponent": loglog_slope(
                deltas, [_deloutputpert_sigma(1.0, 1e-5, x) for x in deltas]
            ),
            "sigma_eps_exponent": loglog_slope(eps_grid, ratios),
        }

    return ValueExperiment(
        compute,
        {
            "bottom_rate": 0.0,
            "variance_over_sigma2": 1.0,
            **claimed_exponents(claim, sigma_Delta_exponent="Delta", sigma_eps_exponent="eps"),
        },
        rtol=1e-9,
        atol=0.1,
        note="stable data (4κ+8 identical users, so ∅ is out of reach): never ⊥, output f(x) + "
        "N(0, σ²I) (99% χ² interval on the variance ratio); σ exponents from the formula over ε ∈ "
        "[0.05, 1] at δ = 1e-5 (σ ∝ (ln 1/δ)^1.5/ε² is reconstructed by the spec's authors; "
        "tolerance 0.1).",
    )


# --------------------------------------------------------------------------- Thm 3.1, Appendix C


BOTTOM_TRIALS = BySize(quick=60_000, standard=200_000, full=1_000_000)
"""Trials per dataset of the SCOutputPert ⊥-channel audits (Thm 3.1, Appendix C): the pair's
exact ε is 0.49998 of the claimed 1, so the reach (2.05–2.08× at 2e4 trials, 1.86× at 1e5) needs
about 6e4 trials to fall below 2."""


@register_experiment("ghazi23.thm31.scoutputpert_dp")
def audit_alg2_bottom_channel(claim, budget):
    trials = BOTTOM_TRIALS[budget]
    mech = sc_bottom_mechanism()
    k, reference = best_bottom_k(mech.tdlap, mech.delta, SC_USERS)

    return AuditExperiment(
        functools.partial(bottom_channel_target, mech, k),
        trials,
        reference_epsilon=round(reference, 4),
        note=f"⊥ channel of SCOutputPert (formula Δ = {mech.Delta:.3g}, exhaustive test, n = "
        f"{SC_USERS}, m = 1e12 virtual items as per-user means) on x^({k}) vs x^({k - 1}); "
        "the pair differs in one user's mean (checked when built).",
    )


def scoutputpert_noise_error(n, rng, m=10**6, d=4, trials=64, algorithm=SCOutputPert):
    """One fast-path run of ``algorithm`` (SCOutputPert or a mutant) for the RT-4 calibration:
    ``(run, θ*(x) (d,), mechanism)`` on quadratic cube data at (1, 1e-5), G = 2, μ = 1."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, n, m, rng)
    problem = Problem(
        n=n, m=m, epsilon=1.0, delta=1e-5, lipschitz=2.0, strong_convexity=1.0, radius=1.0
    )
    mech = algorithm.from_theorem(problem, beta=0.01, path="fast")
    out = mech.run(data, rng, trials)
    return out, mech.minimiser(data)[0], mech


def spec_fast_sigma(
    n: int, m: int, epsilon=1.0, delta=1e-5, G=2.0, mu=1.0, beta=0.01, c=10.0
) -> float:
    """σ_fast written out from spec §2.3 (independent of :class:`SCOutputPert`)."""
    eps1, delta1 = epsilon / 2, delta / (math.exp(epsilon) + 2)
    kappa = 1 + math.ceil(math.log(1 / delta1) / eps1)
    gamma0 = c * G * math.sqrt(math.log(n / beta) / m)
    delta_fast = 2 * (4 * kappa + 1) * gamma0 / (mu * (n - 4 * kappa - 1))
    return math.sqrt(2 * math.log(2 / delta1)) * 8 * kappa * delta_fast / eps1


def noise_calibration(
    rng, ns=(2000, 4000, 8000, 16000), m=10**6, d=4, trials=256, algorithm=SCOutputPert
) -> dict:
    """RT-4: E‖θ̂ − θ*‖²/d against the spec's σ², certificate pass rate, and the n-exponent of
    σ/log-factor."""
    normalised, passed = [], []
    ss_total, dof_total = 0.0, 0
    for n in ns:
        out, star, mech = scoutputpert_noise_error(
            n, rng, m=m, d=d, trials=trials, algorithm=algorithm
        )
        resid = out.theta - star
        sigma = spec_fast_sigma(n, m)
        ss_total += float(np.sum(resid**2)) / sigma**2
        dof_total += resid.size
        passed.append(float(out.certified))
        log_factor = math.sqrt(math.log(n / 0.01)) * n / (n - 4 * mech.kappa - 1)
        normalised.append(math.sqrt(float(np.mean(np.sum(resid**2, axis=1))) / d) / log_factor)
    lo, hi = (
        dof_total / stats.chi2.ppf(0.995, dof_total),
        dof_total / stats.chi2.ppf(0.005, dof_total),
    )
    est = ss_total / dof_total
    fit = stats.linregress(np.log(ns), np.log(normalised))
    return {
        "variance_over_sigma2": (est, est * lo, est * hi),
        "certificate_pass_rate": float(np.mean(passed)),
        "n_exponent": (fit.slope, fit.slope - 3 * fit.stderr, fit.slope + 3 * fit.stderr),
    }


@register_experiment("ghazi23.thm31.noise")
def value_thm31_noise_calibration(claim, budget):
    trials = BySize(quick=128, standard=1024, full=8192)[budget]
    return ValueExperiment(
        lambda rng: noise_calibration(rng, trials=trials),
        {
            "variance_over_sigma2": 1.0,
            "certificate_pass_rate": 1.0,
            **claimed_exponents(claim, n_exponent="n"),
        },
        rtol=1e-9,
        atol=0.02,
        note="n sweep (fast path, quadratic, cube items, m = 1e6, d = 4, n ∈ 2e3..1.6e4): output "
        "= θ*(x) + N(0, σ²I) with σ written out in the spec; the noise divided by the exact log "
        "factor √(ln(n/β))·n/(n−4κ−1) falls as n^-1 (interval: slope ± 3 s.e.).",
    )


@register_experiment("ghazi23.appC.fast_equivalence")
def audit_appc_fast_path_fallback(claim, budget):
    trials = BOTTOM_TRIALS[budget]
    exact = sc_bottom_mechanism()
    mech = SCOutputPert.from_theorem(
        Problem(
            n=SC_USERS,
            m=SC_ITEMS,
            epsilon=exact.epsilon,
            delta=exact.delta,
            lipschitz=exact.lipschitz,
            strong_convexity=exact.strong_convexity,
            radius=exact.radius,
        ),
        beta=exact.beta,
        interior=True,
        path="fast",
    )
    k, reference = best_bottom_k(mech.tdlap, mech.delta, SC_USERS)

    return AuditExperiment(
        functools.partial(bottom_channel_target, mech, k),
        trials,
        reference_epsilon=round(reference, 4),
        reference_note="exact ε of the ⊥ channel from the TDLap CDF: s*(x^(k)) = k under the "
        "fallback's exhaustive test with Δ_fast",
        note=f"fast path (Appendix C, Δ_fast = {mech.Delta_fast:.3g}) on the outlier pair x^({k}) "
        f"vs x^({k - 1}) (n = {SC_USERS}, m = 1e12 virtual items, (ε, δ) = (1, 1e-5)): the "
        "gradient certificate fails on both (an outlier user's gradient deviates by ≈ 1), so the "
        "exact fallback must run, and its ⊥ channel leaks the pair's exact ε. (The spec's "
        "mutant-test pair, identical users vs one moved user, has exact ε ≈ 0 for the correct "
        "fast path "
        "and is kept for the mutant ghazi23-m3-fast-no-fallback, which answers ⊥ there.)",
    )


def fast_noise_error(m, rng, n=2000, d=4, trials=64):
    out, star, _ = scoutputpert_noise_error(n, rng, m=int(m), d=d, trials=trials)
    return np.linalg.norm(out.theta - star, axis=1)


@register_experiment("ghazi23.appC.fast_noise")
def sweep_appc_fast_noise_in_m(claim, budget):
    values = _grid(10**4, 10, quick=[10**4, 10**5, 10**6, 10**7])[budget]
    return RateExperiment.for_claim(
        claim,
        fast_noise_error,
        "m",
        values,
        replicates=BySize(quick=3, standard=8, full=20)[budget],
        fixed={"trials": BySize(quick=64, standard=256, full=1024)[budget]},
        note="fast-path ‖θ̂ − θ*‖ (paper constants, certificate passes) at n = 2000, d = 4.",
    )


def _test_evaluations(mech: DelOutputPert, data: GroupedMeans) -> int:
    """Sub-datasets on which the exhaustive test of ``mech`` evaluates f (quadratic loss)."""
    values, counts = data.types()
    solver, domain = QuadraticMinimiser(1.0), Domain(mech.radius)
    return stability_profile(
        values,
        counts,
        lambda s: solver.minimiser(values, s, reg=0.0, centre=None, domain=domain),
        kappa=mech.kappa,
        delta_target=mech.Delta,
        empty_value=np.zeros((1, 1)),
    ).f_evaluations


@register_experiment("ghazi23.sec6.runtime")
def value_sec6_test_evaluations(claim, budget):
    mech = DelOutputPert.from_theorem(Problem(n=200, epsilon=1.0, delta=0.5), Delta=1e-3)
    limit = 4 * mech.kappa + 1

    def compute(rng):
        out = {}
        for n in (6, 10, 14):
            data = GroupedMeans.per_user(rng.normal(size=(n, 1)), 1)
            out[f"evaluations_n{n}"] = _test_evaluations(mech, data)
        n, k = 200, 100
        data = GroupedMeans.per_user(np.r_[np.ones(k), np.zeros(n - k)][:, None], 1)
        out["evaluations_two_types"] = _test_evaluations(mech, data)
        out["limit"] = limit
        return out

    expected = {
        f"evaluations_n{n}": float(sum(math.comb(n, s) for s in range(min(n, limit) + 1)))
        for n in (6, 10, 14)
    }
    expected["evaluations_two_types"] = float(
        sum(1 for a in range(101) for b in range(101) if (200 - a - b) <= limit)
    )
    expected["limit"] = float(limit)
    return ValueExperiment(
        compute,
        expected,
        note="distinct users: the exhaustive test evaluates f on Σ_{s ≤ 4κ+1} C(n, s) sub-datasets "
        "(n ≤ 4κ+1 = 2^n here; larger n is the n^O(ln(1/δ)/ε) regime the paper calls open); "
        "two user types: only the states with ≤ 4κ+1 deletions (type compression).",
    )


# ---------------------------------------------------------------- building blocks (RT-1, 2, 3, 10)


def perm_concentration_q95(m, rng, draws=2000, G=1.0):
    """RT-1: 0.95-quantile of ‖Σ_{j≤m} v_π(j)‖, v = ±G e1 (N/2 each, N = 64m), without
    replacement."""
    m = int(m)
    plus = rng.hypergeometric(32 * m, 32 * m, m, size=draws)
    return float(np.quantile(np.abs(G * (2 * plus - m)), 0.95))


@register_experiment("ghazi23.lemma38.perm_concentration")
def sweep_lemma38_concentration_in_m(claim, budget):
    return RateExperiment.for_claim(
        claim,
        perm_concentration_q95,
        "m",
        [4, 16, 64, 256, 1024],
        replicates=BySize(quick=4, standard=10, full=30)[budget],
        fixed={"draws": BySize(quick=1000, standard=4000, full=20000)[budget]},
        note="the bound 5G√(m ln 20) is ≈ 8.7× the measured q0.95.",
    )


def deletion_sensitivity(n, rng, m=20, d=5, mu=0.1, deletions=3):
    """RT-2: ‖θ*(x) − θ*(x_{−u})‖ for logistic loss + (μ/2)‖θ‖², i.i.d. items, exact L-BFGS
    solves."""
    n = int(n)
    feats = rng.normal(size=(n, m, d))
    feats /= np.maximum(1.0, np.linalg.norm(feats, axis=-1, keepdims=True))
    truth = np.ones(d) / math.sqrt(d)
    labels = np.where(rng.random((n, m)) < special.expit(feats @ truth), 1.0, -1.0)

    def solve(keep):
        a = (feats[keep] * labels[keep][..., None]).reshape(-1, d)

        def f(theta):
            z = a @ theta
            val = np.mean(np.logaddexp(0.0, -z)) + 0.5 * mu * theta @ theta
            grad = -(a.T @ special.expit(-z)) / len(z) + mu * theta
            return val, grad

        return optimize.minimize(
            f,
            np.zeros(d),
            jac=True,
            method="L-BFGS-B",
            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000},
        ).x

    full = solve(np.arange(n))
    return np.array(
        [np.linalg.norm(full - solve(np.delete(np.arange(n), u))) for u in range(n - deletions, n)]
    )


@register_experiment("ghazi23.thm36.deletion_sensitivity")
def sweep_thm36_deletion_sensitivity_in_n(claim, budget):
    values = _grid(50, 2, quick=[30, 66, 140, 310])[budget]
    return RateExperiment.for_claim(
        claim,
        deletion_sensitivity,
        "n",
        values,
        replicates=BySize(quick=12, standard=20, full=40)[budget],
        fixed={"deletions": BySize(quick=2, standard=4, full=8)[budget]},
        note="logistic + (0.1/2)‖θ‖², d = 5, m = 20, L-BFGS (gtol 1e-12).",
    )


def greedy_radius_sensitivity(n, rng, m=50, d=5, r=36, means=None):
    """RT-3: greedy adversarial deletion of up to r users (each step maximising the shift of
    θ* = mean);
    the largest single-deletion shift seen (a lower-bound proxy for Δ_r θ*)."""
    if means is None:
        inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
        means = inst.user_means(int(n), int(m), rng)
    keep = np.ones(len(means), bool)
    total, count = means.sum(axis=0), len(means)
    worst = 0.0
    for _ in range(r + 1):
        centre = total / count
        shift = np.where(keep, np.linalg.norm(means - centre, axis=1), -1.0) / (count - 1)
        u = int(np.argmax(shift))
        worst = max(worst, float(shift[u]))
        keep[u] = False
        total, count = total - means[u], count - 1
    return worst


@register_experiment("ghazi23.cor37.radius_r")
def sweep_cor37_radius_sensitivity_in_n(claim, budget):
    values = N_FROM_200[budget]
    return RateExperiment.for_claim(
        claim,
        greedy_radius_sensitivity,
        "n",
        values,
        replicates=BySize(quick=4, standard=10, full=30)[budget],
        note="quadratic, d = 5, m = 50, r = 4κ = 36 ((ε, δ) = (1, 0.1)); greedy lower-bound proxy "
        "for Δ_r θ*.",
    )


def emp_vs_pop(n, rng, m=100, d=4):
    """RT-10: ‖x̄ − χ‖ for cube items with mean χ (θ*(x) = x̄, θ*(D) = χ for the quadratic)."""
    inst = QuadraticHypercubeInstance(d, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, int(n), m, rng, boundaries=[0, int(n)])
    return float(np.linalg.norm(data.mean() - inst.mean))


def pop_norm(n, rng, m=100, d=4):
    """The trivial control of :func:`emp_vs_pop`: ‖0 − χ‖ of outputting the origin."""
    inst = QuadraticHypercubeInstance(d, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    return float(np.linalg.norm(inst.mean))


@register_experiment("ghazi23.propB1.emp_vs_pop")
def sweep_propb1_emp_vs_pop_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        emp_vs_pop,
        "n",
        [1, 10, 100, 1000, 10000],
        replicates=BySize(quick=40, standard=200, full=1000)[budget],
        trivial=pop_norm,
        note="sweep of nm with m = 100 (nm ∈ 1e2..1e6); Prop. B.1 bound 30G√(ln 40)/(μ√(nm)) is "
        "loose.",
    )


LEMMA_C1_TOLERANCE = 1e-12
"""Gradient norm at which :func:`ridge_logistic_minimisers` stops: a certificate, since a
μ-strongly convex objective's minimiser is within ‖∇‖/μ of the point."""


def ridge_logistic_minimisers(x, y, weights, mu, *, tolerance=LEMMA_C1_TOLERANCE):
    """Certified minimisers of ``Σ_k w_k log(1 + exp(−y_k⟨x_k, θ⟩))/Σ_k w_k + (μ/2)‖θ‖²``.

    ``x (N, d)``, ``y (N,)`` in ±1, ``weights (B, N)`` (one weighted problem per row) → ``(θ
    (B, d), certified distance bound (B,))``: Newton's method (vectorised over B) until every
    gradient norm is at most ``tolerance``; the bound is the final gradient norm over μ.
    """
    w = weights / weights.sum(axis=1, keepdims=True)
    theta = np.zeros((w.shape[0], x.shape[1]))
    for _ in range(100):
        margin = y * (theta @ x.T)  # (B, N)
        p = special.expit(-margin)
        grad = -(w * p * y) @ x + mu * theta
        norm = np.linalg.norm(grad, axis=1)
        if norm.max() <= tolerance:
            return theta, norm / mu
        curvature = w * p * (1 - p)
        hess = np.einsum("bn,ni,nj->bij", curvature, x, x) + mu * np.eye(x.shape[1])
        theta = theta - np.linalg.solve(hess, grad[..., None])[..., 0]
    raise RuntimeError(f"Newton's method did not reach the gradient tolerance {tolerance:g}")


def lemma_c1_case(rng):
    """One random ridge-logistic user-level dataset and the greedy radius-r deletion path.

    Users have their own feature centres (so γ is not small); S grows one user at a time, each
    step deleting the user whose deletion moves θ*(x_{−S}) most (all candidates solved), up to
    |S| = r.  Returns the largest single-deletion shift on the path over 2(r+1)γ/(μ(n−r−1))
    (a lower-bound proxy for Δ_r θ*(x)) and the largest ‖θ*(x_{−S}) − θ*(x)‖ over
    |S|γ/(μ(n−|S|)) on the path (|S| ≤ r+1); certified solver errors are subtracted, so a
    ratio above 1 is a real violation.
    """
    n, m, d = int(rng.integers(20, 60)), int(rng.integers(1, 20)), int(rng.integers(1, 4))
    r, mu = int(rng.integers(1, n // 2)), float(rng.uniform(0.05, 0.5))
    centres = np.repeat(rng.normal(size=(n, d)), m, axis=0)
    x = centres + rng.normal(size=(n * m, d))
    y = np.where(rng.random(n * m) < special.expit(x @ rng.normal(size=d)), 1.0, -1.0)
    owner = np.repeat(np.arange(n), m)
    kept = np.ones(n, dtype=bool)
    theta, err = ridge_logistic_minimisers(x, y, np.ones((1, n * m)), mu)
    full, full_err = theta[0], err[0]
    margin = y * (x @ full)
    per_user = np.zeros((n, d))
    np.add.at(per_user, owner, (-special.expit(-margin) * y)[:, None] * x + mu * full)
    per_user /= m
    gamma = float(np.max(np.linalg.norm(per_user - per_user.mean(axis=0), axis=1)))
    current, current_err = full, full_err
    shift, distance = 0.0, 0.0
    for size in range(1, r + 2):
        candidates = np.flatnonzero(kept)
        weights = kept[owner][None, :] & (owner[None, :] != candidates[:, None])
        theta, err = ridge_logistic_minimisers(x, y, weights.astype(float), mu)
        moves = np.linalg.norm(theta - current, axis=1) - err - current_err
        best = int(np.argmax(moves))
        shift = max(shift, float(moves[best]))
        away = float(np.linalg.norm(theta[best] - full) - err[best] - full_err)
        distance = max(distance, away / (size * gamma / (mu * (n - size))))
        kept[candidates[best]] = False
        current, current_err = theta[best], err[best]
    return {
        "shift": shift / (2 * (r + 1) * gamma / (mu * (n - r - 1))),
        "distance": distance,
    }


@register_experiment("ghazi23.lemmaC1.certificate")
def value_lemmac1_certificate_bound(claim, budget):
    cases = BySize(quick=20, standard=200, full=1000)[budget]

    def compute(rng):
        results = [lemma_c1_case(rng) for _ in range(cases)]
        return {
            "worst_shift_over_bound": max(c["shift"] for c in results),
            "worst_distance_over_lemma_bound": max(c["distance"] for c in results),
        }

    return ValueExperiment(
        compute,
        le={"worst_shift_over_bound": 1.0, "worst_distance_over_lemma_bound": 1.0},
        note=f"Lemma C.1 on {cases} random ridge-logistic user-level datasets (n in [20, 60), "
        "m in [1, 20), d in 1..3, mu in [0.05, 0.5], users with their own feature centres), "
        "certified Newton solver (gradient norm <= 1e-12, errors subtracted), greedy S (each "
        "step deletes the user that moves the minimiser most, all candidates solved): the "
        "largest single-deletion shift on the path vs 2(r+1)gamma/(mu(n-r-1)) (a lower-bound "
        "proxy for Delta_r theta*), and ||theta*(x_-S) - theta*(x)|| vs |S|gamma/(mu(n-|S|)) "
        "for |S| <= r+1",
    )


# --------------------------------------------------------------------------- composition invariants


def _convex_problem(n: int, m: int, d: int, *, loss=None) -> Problem:
    """The convex problems of the composition checks and RT-6/7/8: (ε, δ) = (1, 1e-5), G = 1,
    K = B(0, 1)."""
    return Problem(
        n=int(n), m=int(m), d=int(d), epsilon=1.0, delta=1e-5, lipschitz=1.0, radius=1.0, loss=loss
    )


def phased_erm_budget(alg: PhasedERM) -> dict:
    calls = alg.calls
    return {
        "epsilon_sum": sum(c.epsilon for c in calls),
        "delta_sum": sum(c.delta for c in calls),
        "phases": len(calls),
        "per_call_share": max(c.epsilon for c in calls) * len(calls) / alg.epsilon,
    }


@register_experiment("ghazi23.thm41.phased_erm_dp")
def value_thm41_phased_erm_composition(claim, budget):
    n, m = 10**4, 10**4
    alg = PhasedERM.from_theorem(_convex_problem(n, m, 4))
    return ValueExperiment(
        lambda rng: phased_erm_budget(alg),
        {
            "epsilon_sum": 1.0,
            "delta_sum": 1e-5,
            "phases": float(math.ceil(math.log2(n * m))),
            "per_call_share": 1.0,
        },
        rtol=1e-9,
        note="white-box: T = ⌈log2(nm)⌉ SCOutputPert calls at (ε/T, δ/T) compose to (ε, δ); "
        "per-call outputs are audited by ghazi23.thm31.scoutputpert_dp.",
    )


def phased_sco_blocks_check(alg: PhasedSCO) -> dict:
    used = np.zeros(alg.n, int)
    for lo, hi in alg.phase_blocks:
        used[lo:hi] += 1
    calls = alg.calls
    return {
        "max_phases_per_user": int(used.max()),
        "per_call_epsilon": max(c.epsilon for c in calls) / alg.epsilon,
        "per_call_delta": max(c.delta for c in calls) / alg.delta,
        "blocks_big_enough": float(
            all(
                hi - lo >= 4 * c.kappa + 2
                for (lo, hi), c in zip(alg.phase_blocks, calls, strict=True)
            )
        ),
    }


@register_experiment("ghazi23.thm51.phased_sco_dp")
def value_thm51_phased_sco_disjoint_blocks(claim, budget):
    alg = PhasedSCO.from_theorem(_convex_problem(20000, 10**6, 4))
    return ValueExperiment(
        lambda rng: phased_sco_blocks_check(alg),
        {
            "max_phases_per_user": 1.0,
            "per_call_epsilon": 1.0,
            "per_call_delta": 1.0,
            "blocks_big_enough": 1.0,
        },
        rtol=1e-9,
        note="white-box: disjoint user blocks (each user in ≤ 1 phase) at the full (ε, δ) "
        "(parallel composition), each block with n_i ≥ 4κ+2 (paper mode, n = 2e4).",
    )


# ------------------------------------------------------------------------ convex rates (RT-6, 7, 8)


RT6_GRID = tuple(0.25 * 2.0 ** np.arange(9))
"""Signal strengths c of RT-6 (x̄ = c√d/(n√m)·e1)."""


def convex_erm_worst(n, rng, m=100, d=16, trials=200, phases=20, grid=RT6_GRID):
    """RT-6: Phased-ERM oracle (C = 1, T fixed), linear loss on B(0,1), prescribed
    x̄ = c√d/(n√m)·e1; worst case over c of the mean excess ‖x̄‖ − ⟨θ̂, x̄⟩."""
    n, m, d = int(n), int(m), int(d)
    alg = PhasedERM.from_theorem(
        _convex_problem(n, m, d, loss=LinearLoss(1.0)),
        diameter=1.0,
        phases=phases,
        oracle=1.0,
        lam="paper",
    )
    worst = 0.0
    for c in grid:
        xbar = np.zeros(d)
        xbar[0] = c * math.sqrt(d) / (n * math.sqrt(m))
        theta = alg.run(prescribed_mean_data(n, m, xbar), rng, trials).theta
        worst = max(worst, float(np.mean(np.linalg.norm(xbar) - theta @ xbar)))
    return worst


def convex_erm_origin(n, rng, m=100, d=16, trials=200, phases=20, grid=RT6_GRID):
    """The trivial control of :func:`convex_erm_worst`: the excess ‖x̄‖ of outputting the origin,
    worst case over the same c (exact: max(grid)·√d/(n√m))."""
    return max(grid) * math.sqrt(int(d)) / (int(n) * math.sqrt(int(m)))


@register_experiment("ghazi23.thm41.convex_erm")
def sweep_thm41_convex_erm_in_n(claim, budget):
    values = N_FROM_200[budget]
    return RateExperiment.for_claim(
        claim,
        convex_erm_worst,
        "n",
        values,
        replicates=BySize(quick=3, standard=8, full=20)[budget],
        fixed={"trials": BySize(quick=100, standard=400, full=2000)[budget]},
        trivial=convex_erm_origin,
        note="ORACLE mode (not private: paper constants give C_σ ≈ 1e9–1e13 per phase, so the "
        "excess is trivial at any feasible m); m = 100, d = 16, T = 20.",
    )


def convex_sco_worst(
    n, rng, m=100, d=1, trials=4, datasets=8, n0=64, grid=(0.25, 1.0, 4.0, 16.0, 64.0)
):
    """RT-7: Phased-SCO oracle (C = 1, N0 = 64, max-rule λ), linear loss, cube items with mean
    s·𝟙/√d;
    worst case over s ∈ grid × max(rates) of the mean population excess ‖χ‖ − ⟨θ̂, χ⟩."""
    n, m, d = int(n), int(m), int(d)
    problem = _convex_problem(n, m, d, loss=LinearLoss(1.0))
    alg = PhasedSCO.from_theorem(problem, diameter=1.0, n0=n0, oracle=1.0)
    rate = max(1 / math.sqrt(n * m), math.sqrt(d) / (n * math.sqrt(m)))
    bounds = block_boundaries(n, alg.blocks)
    worst = 0.0
    for c in grid:
        inst = QuadraticHypercubeInstance(d, alpha=min(c * rate, 1.0), scale=1.0)
        chi = inst.mean
        excess = [
            np.mean(
                np.linalg.norm(chi)
                - alg.run(cube_group_means(inst, n, m, rng, boundaries=bounds), rng, trials).theta
                @ chi
            )
            for _ in range(datasets)
        ]
        worst = max(worst, float(np.mean(excess)))
    return worst


def convex_sco_origin(
    n, rng, m=100, d=1, trials=4, datasets=8, n0=64, grid=(0.25, 1.0, 4.0, 16.0, 64.0)
):
    """The trivial control of :func:`convex_sco_worst`: the population excess ‖χ‖ of outputting
    the origin, worst case over the same signal strengths (exact)."""
    n, m, d = int(n), int(m), int(d)
    rate = max(1 / math.sqrt(n * m), math.sqrt(d) / (n * math.sqrt(m)))
    return max(
        float(np.linalg.norm(QuadraticHypercubeInstance(d, alpha=min(c * rate, 1.0)).mean))
        for c in grid
    )


@register_experiment("ghazi23.thm51.convex_sco.privacy_term")
def sweep_thm51_privacy_term_in_n(claim, budget):
    values = BySize(
        quick=[128, 280, 600, 1300],
        standard=[1024, 2048, 4096, 8192, 16384],
        full=[1024, 2048, 4096, 8192, 16384],
    )[budget]
    d = BySize(quick=2**14, standard=2**15, full=2**17)[budget]
    return RateExperiment.for_claim(
        claim,
        convex_sco_worst,
        "n",
        values,
        replicates=BySize(quick=3, standard=6, full=12)[budget],
        fixed={"d": d, "datasets": 1, "trials": BySize(quick=2, standard=8, full=16)[budget]},
        trivial=convex_sco_origin,
        note=f"d sweep in ORACLE mode (not private), d = {d} (privacy-dominated), m = 100, "
        "N0 = 64, max-rule λ, worst case over the signal strength.",
    )


def _sharp_minimum_sco(n, m, *, lam_rule: str, n0: int, growth: float) -> PhasedSCO:
    """RT-8's Phased-SCO: ℓ = G|θ − z| in d = 1, oracle (C = 1), K = B(0, 1)."""
    problem = _convex_problem(n, m, 1, loss=L1DistanceLoss(1.0))
    return PhasedSCO.from_theorem(problem, n0=n0, oracle=1.0, lam=lam_rule, growth=growth)


def sharp_minimum_excess(m, rng, n=2**14, growth=4.0, lam_rule="max", trials=400, n0=64):
    """RT-8 probe: ℓ = G|θ − z|, D = point mass at 0 (excess = G|θ̂|), Phased-SCO oracle (C = 1).

    The data have no sampling noise, so the excess ``(trials,)`` is the last phase's
    output-perturbation noise alone.  ``lam_rule="max"`` is the max rule
    λ = (G/R)·max{C_σ√d/(n√m), 1/√(nm)}, the reading under which Lemma 5.2 gives RG/√(nm);
    ``"paper"`` is the literal λ = G√d/(R n√m) of the proof of Thm 5.1 (a floor √n/√d larger).
    """
    alg = _sharp_minimum_sco(n, m, lam_rule=lam_rule, n0=n0, growth=growth)
    data = point_mass_data(int(n), int(m), block_boundaries(int(n), alg.blocks))
    return np.abs(alg.run(data, rng, trials).theta[:, 0])


def sharp_minimum_ratio(m, rng, n=4096, lam_rule="max", trials=1000, n0=64):
    """RT-8 decisive statistic ``excess·√(nm)/(RG)`` ``(trials,)``: bounded by a polylog under Thm
    5.1's whole bound, at most 2RG/√(nm) at d = 1 (G = 1, R = diameter of K = 2)."""
    excess = sharp_minimum_excess(m, rng, n=n, lam_rule=lam_rule, trials=trials, n0=n0)
    return excess * math.sqrt(int(n) * int(m)) / 2.0


def sharp_minimum_floor(
    n: int, m: int, lam_rule: str = "max", n0: int = 64, growth: float = 4.0
) -> float:
    """Predicted RT-8 excess: G·E|N(0, σ_T²)| = √(2/π)·G·σ_T, σ_T the last phase's
    output-perturbation σ.

    Oracle σ_i = C_σ·2G/(λ_i n_i √m) with λ_i = λ·growth^i; for n = N0·2^T, growth 4 and the max
    rule (λ = (G/R)/√(nm) when n ≥ C_σ²d) this is √(2/π)·2C_σ·G·R·N0/n^{3/2}, independent of m.
    Computed here from the block sizes and λ only (not from the algorithm's own σ).
    """
    alg = _sharp_minimum_sco(n, m, lam_rule=lam_rule, n0=n0, growth=growth)
    lo, hi = alg.blocks[-1]
    lam_last = alg.lam * growth**alg.phases
    sigma_last = (
        alg.oracle_constant * 2.0 * alg.lipschitz / (lam_last * (hi - lo) * math.sqrt(int(m)))
    )
    return math.sqrt(2.0 / math.pi) * alg.lipschitz * sigma_last


def _rt8_floor_check(rng, n=4096, m=10**8, trials=200_000):
    """Mean RT-8 excess (99% normal CI over ``trials``) against :func:`sharp_minimum_floor`."""
    excess = sharp_minimum_excess(m, rng, n=n, trials=trials)
    half = stats.norm.ppf(0.995) * excess.std(ddof=1) / math.sqrt(trials)
    return {
        "excess_vs_floor": (excess.mean(), excess.mean() - half, excess.mean() + half),
        "floor_independent_of_m": sharp_minimum_floor(n, 100) / sharp_minimum_floor(n, m),
    }


@register_experiment("ghazi23.thm51.convex_sco.rate_in_n")
def sweep_thm51_bound_in_n(claim, budget):
    n_values = _grid(2**12, 2, quick=[2**12, 2**13, 2**14, 2**15, 2**16])[budget]
    return RateExperiment.for_claim(
        claim,
        convex_sco_worst,
        "n",
        n_values,
        replicates=BySize(quick=3, standard=12, full=30)[budget],
        fixed={"datasets": BySize(quick=4, standard=20, full=40)[budget]},
        trivial=convex_sco_origin,
        note="n sweep on the weak-signal linear loss in ORACLE mode (not private), d = 1, m = "
        "100, N0 = 64, max-rule λ, worst case over the signal strength (the worst case of noisy "
        "means is biased upwards).",
    )


@register_experiment("ghazi23.thm51.convex_sco.statistical_term")
def sweep_thm51_bound_in_m(claim, budget):
    n = 4096
    rt8 = RateExperiment.for_claim(
        claim,
        sharp_minimum_ratio,
        "m",
        [10**2, 10**3, 10**4, 10**5, 10**6, 10**7, 10**8],
        replicates=BySize(quick=3, standard=8, full=20)[budget],
        fixed={"n": n, "trials": BySize(quick=200, standard=1000, full=4000)[budget]},
        note=f"m sweep [finding about Algorithm 4, the proof's mechanism]: sharp minimum "
        f"ℓ = G|θ − z| on D = δ_0 (no sampling noise), n = {n}, d = 1, with the proof's "
        "schedule and a λ and a noise more favourable than the printed ones: the max-rule λ "
        "(√n larger than the proof's G√d/(R n√m) at d = 1) and the oracle noise constant "
        "C_σ = 1 (not private), N₀ = 64.  Tested quantity: excess·√(nm)/(RG), which Theorem "
        "5.1's whole bound (at d = 1, RG(1/(n√m) + 1/√(nm)) ≤ 2RG/√(nm)) bounds by a polylog "
        f"(claimed m-exponent {claim.exponents['m']:g} + 0.5 = 0).  It grows like m^(1/2) "
        "(≈ 0.25 at m = 1e2, ≈ 250 at m = 1e8): the excess is Algorithm 4's LAST-PHASE "
        "privacy noise F = √(2/π)·2C_σ·G·R·√d·N₀/n^(3/2) (max-rule λ; ≈ √(2/π)·2C_σ·G·R·N₀/n, "
        "√(n/d) = 64× higher, with the proof's λ), which does not shrink with m and so breaks "
        "the whole bound, not one of its terms.  F exceeds the bound c·P·RG/√(nm) (c the "
        "hidden constant, P the hidden polylog) once m > (π/8)·(c·P/C_σ)²·n²/(d·N₀²) — ≈ 1.6e3 "
        "here only with c = P = 1 — inside the theorem's hypothesis n ≥ Õ(log(1/δ)log(m)/ε).  "
        "Theorem 5.1 asserts that SOME mechanism attains the bound; this breaks the proof's "
        "mechanism (growth (g/2)^T ≥ C_σ n√m/√d, or Feldman et al.'s 8^i, removes the floor), "
        "not the existence claim.  Growth 8 lowers the floor here but it stays flat in m.",
    )
    floor = ValueExperiment(
        _rt8_floor_check,
        {"excess_vs_floor": sharp_minimum_floor(n, 10**8), "floor_independent_of_m": 1.0},
        rtol=1e-9,
        note="measured excess at n = 4096, m = 1e8 (99% CI over 2e5 runs) covers the "
        "predicted last-phase floor √(2/π)·2C_σ·G·R·N0/n^(3/2) = 7.79e-4, and the "
        "prediction is the same at m = 1e2 and 1e8",
    )
    return CombinedExperiment(
        {"sweep of m": rt8, "noise floor": floor},
        note="Theorem 5.1's whole bound at d = 1, for Algorithm 4 with the proof's schedule and "
        "a λ (max rule) and a noise (oracle C_σ = 1) more favourable than the printed ones: on a "
        "sharp minimum excess·√(nm)/(RG) grows like m^(1/2) because the last phase's privacy "
        "noise does not shrink with m (the noise floor part explains its size); this floor "
        "breaks the whole bound, not one of its terms: a gap in the proof's mechanism, not a "
        "refutation of Theorem 5.1's existential bound.  The n sweep, which passes, is "
        "ghazi23.thm51.convex_sco.rate_in_n.",
    )


def _strongly_convex_problem(n: int, m: int, d: int) -> Problem:
    """RT-5/RT-9's problem: (ε, δ) = (1, 1e-5), G = 2, μ = 1, K = B(0, 1)."""
    return Problem(
        n=int(n),
        m=int(m),
        d=int(d),
        epsilon=1.0,
        delta=1e-5,
        lipschitz=2.0,
        strong_convexity=1.0,
        radius=1.0,
    )


def sc_sco_excess(n, rng, m=100, d=1, trials=20, datasets=20, oracle_constant=1.0, alpha=0.3):
    """RT-9: Algorithm 6 (oracle), quadratic cube items with mean χ; population excess
    (μ/2)‖θ̂ − χ‖²."""
    n = int(n)
    alg = StronglyConvexSCO.from_theorem(
        _strongly_convex_problem(n, m, d), oracle=oracle_constant, n0=64
    )
    inst = QuadraticHypercubeInstance(d, alpha=alpha, scale=1.0, strength=1.0, radius=1.0)
    bounds = block_boundaries(n, alg.stage_two(alg.localised_radius).blocks)
    return np.array(
        [
            np.mean(
                0.5
                * np.sum(
                    (
                        alg.run(
                            cube_group_means(inst, n, m, rng, boundaries=bounds), rng, trials
                        ).theta
                        - inst.mean
                    )
                    ** 2,
                    axis=1,
                )
            )
            for _ in range(datasets)
        ]
    )


def sc_sco_origin(n, rng, m=100, d=1, trials=20, datasets=20, oracle_constant=1.0, alpha=0.3):
    """The trivial control of :func:`sc_sco_excess`: the population excess (μ/2)‖0 − χ‖² of
    outputting the origin."""
    inst = QuadraticHypercubeInstance(d, alpha=alpha, scale=1.0, strength=1.0, radius=1.0)
    return 0.5 * float(np.sum(inst.mean**2))


@register_experiment("ghazi23.thm53.sc_sco.privacy_term")
def sweep_thm53_privacy_term_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        sc_sco_excess,
        "n",
        [256, 512, 1024, 2048, 4096],
        replicates=BySize(quick=3, standard=6, full=12)[budget],
        fixed={
            "m": 10**8,
            "d": BySize(quick=2**12, standard=2**14, full=2**15)[budget],
            "datasets": 1,
            "trials": BySize(quick=4, standard=10, full=20)[budget],
            "oracle_constant": 1000.0,
        },
        trivial=sc_sco_origin,
        note="privacy regime in ORACLE mode (not private) with C = 1000 and m = 1e8 so that σ0√d "
        "dominates Prop. B.1's 30G√(ln(2/β))/(μ√(nm)) in R' (with C = 1 the localisation radius "
        "is statistical and the slope is ≈ −1.4).",
    )


@register_experiment("ghazi23.thm53.sc_sco.statistical_term")
def sweep_thm53_statistical_term_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        sc_sco_excess,
        "n",
        [2**12, 2**13, 2**14, 2**15, 2**16],
        replicates=BySize(quick=6, standard=12, full=30)[budget],
        fixed={"datasets": BySize(quick=20, standard=60, full=200)[budget], "trials": 4},
        trivial=sc_sco_origin,
        note="statistical regime (d = 1, m = 100) in ORACLE mode (C = 1, not private).",
    )


def sc_erm_excess(n, rng, m=10**14, d=10, trials=20):
    """RT-5: Algorithm 5 in PAPER mode, quadratic cube items (p = 1/2), μ = 1, G = 2, (1, 1e-5);
    empirical excess (μ/2)‖θ̂ − x̄‖²."""
    n = int(n)
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, n, int(m), rng)
    alg = StronglyConvexERM.from_theorem(_strongly_convex_problem(n, m, d))
    return 0.5 * np.sum((alg.run(data, rng, trials).theta - data.mean()) ** 2, axis=1)


def sc_erm_origin(n, rng, m=10**14, d=10, trials=20):
    """The trivial control of :func:`sc_erm_excess`: the empirical excess (μ/2)‖0 − x̄‖² of
    outputting the origin, on the same data."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    return 0.5 * float(np.sum(cube_group_means(inst, int(n), int(m), rng).mean() ** 2))


@register_experiment("ghazi23.thm43.sc_erm")
def sweep_thm43_sc_erm_in_n(claim, budget):
    values = _grid(20000, 2, quick=[20000, 44000, 96000, 210000])[budget]
    return RateExperiment.for_claim(
        claim,
        sc_erm_excess,
        "n",
        values,
        replicates=BySize(quick=8, standard=4, full=10)[budget],
        fixed={"trials": BySize(quick=20, standard=40, full=100)[budget]},
        trivial=sc_erm_origin,
        note="PAPER mode (private, exact constants, fast path); m = 1e14 because with the output "
        "kept in K the excess is trivial (≈ 0.48 for every n) at the spec's m = 1e8.",
    )


@register_experiment("ghazi23.sec6.convex_erm_eps")
def value_sec6_convex_erm_eps_exponents(claim, budget):
    def noise_multiplier(eps, delta):
        problem = Problem(n=10**9, m=10**6, epsilon=eps, delta=delta, strong_convexity=1.0)
        return SCOutputPert.from_theorem(problem, beta=1e-12, path="exact").noise_multiplier

    def compute(rng):
        eps = np.geomspace(0.05, 1.0, 8)
        deltas = np.geomspace(1e-60, 1e-20, 8)
        return {
            "eps_exponent": loglog_slope(eps, [noise_multiplier(e, 1e-5) for e in eps]),
            "log_inv_delta_exponent": loglog_slope(
                np.log(1 / deltas), [noise_multiplier(1.0, x) for x in deltas]
            ),
            "log_inv_delta_exponent_practical": loglog_slope(
                np.log(1 / np.geomspace(1e-12, 1e-4, 8)),
                [noise_multiplier(1.0, x) for x in np.geomspace(1e-12, 1e-4, 8)],
            ),
        }

    return ValueExperiment(
        compute,
        claimed_exponents(claim, eps_exponent="eps", log_inv_delta_exponent="ln_inv_delta"),
        atol=0.15,
        note="the balanced-λ convex-ERM bound is ∝ C_σ; local log-log slopes of C_σ (exact-test "
        "Δ, n = 1e9) over ε ∈ [0.05, 1] and ln(1/δ) ∈ [46, 138]; the slope over δ ∈ [1e-12, 1e-4] "
        "is reported (≈ 1.7: lower-order terms).  Not run as an ε sweep of Phased-ERM's excess: "
        "ORACLE mode fixes C_σ = 1 (ε leaves the excess), and in PAPER mode C_σ ≈ 2.7e16 at "
        "ε = 0.25 (n = 1e5, m = 1e30, T = 117): the bound's scale RG√d·C_σ/(n√m) is ≈ 0.5 there "
        "(the excess's ceiling is about 1) and below 1% of the ceiling only from m ≈ 1e34, with "
        "n ≥ 4κ_ph + 2 ≈ 65,000 users carrying per-user statistics for the fast path's "
        "certificate in each of the 117 phases; its ε exponent would then be C_σ's.",
        transcription=True,
    )


@register_experiment("ghazi23.min_users")
def value_min_users(claim, budget):
    def compute(rng):
        req = [
            4 * PhasedERM.from_theorem(_convex_problem(10**4, 100, d), oracle=1.0).call(1).kappa + 2
            for d in (1, 10**4)
        ]
        return {
            "n_min_1e6": min_users(1.0, 1e-5, 10**6),
            "n_min_1e12": min_users(1.0, 1e-5, 10**12),
            "d_dependence": float(req[0] != req[1]),
        }

    return ValueExperiment(
        compute,
        {"n_min_1e6": 2506, "n_min_1e12": 5226, "d_dependence": 0.0},
        note="n ≥ 4κ_ph + 2 (worked out in the spec; the paper does not print it); the "
        "requirement is computed at d = 1 and d = 1e4 and must not differ.",
    )


def worst_case_sensitivity(m, rng, n=400, d=5, r=36):
    """RT-12: radius-r deletion sensitivity proxy (greedy) when every user holds m copies of one
    item."""
    data = repeated_item_users(n, int(m), d, rng)
    return greedy_radius_sensitivity(n, rng, means=np.asarray(data.means), r=r)


@register_experiment("ghazi23.remark.worst_case_erm")
def sweep_remark_worst_case_sensitivity_in_m(claim, budget):
    return RateExperiment.for_claim(
        claim,
        worst_case_sensitivity,
        "m",
        [1, 10, 100, 1000, 10000],
        replicates=BySize(quick=4, standard=10, full=30)[budget],
        note="negative control: with m copies of one item per user the deletion sensitivity does "
        "not shrink with m (so neither can the noise), unlike the m^-1/2 of Cor 3.7 under a "
        "random permutation.",
    )


# --------------------------------------------------------------------------- lower bounds


def _exponents(func, base: dict, names) -> dict:
    out = {}
    for name in names:
        lo, hi = dict(base), dict(base)
        hi[name] = base[name] * 16
        out[name] = math.log(func(**hi) / func(**lo)) / math.log(16)
    return out


@register_experiment("ghazi23.lb.levy_convex_sco")
def value_levy_lower_bound_exponents(claim, budget):
    base = {"n": 1000, "m": 100, "d": 400, "epsilon": 0.5}

    def compute(rng):
        return _exponents(
            lambda **k: user_level_sco_lower_bound(**k, part="private"),
            base,
            ("n", "m", "d", "epsilon"),
        )

    return ValueExperiment(
        compute,
        claimed_exponents(claim, **LOWER_BOUND_VARIABLES),
        atol=1e-9,
        note="cited bound (Levy et al. 2021), constants unspecified: only the library formula's "
        "exponents are checkable (privacy term).  Not run: the statistical term floors every "
        "estimator's population excess at n^-1/2, so a sweep in n tests the privacy term's "
        "exponent only where the reference estimator's privacy error (≈ 240σ/(εn) at d = m = 16) "
        "is both below the family's reach and well above that floor: ε ≤ 0.01 and n ≥ 10⁵ users "
        "per point.  At n ≤ 10⁴ (ε = 1) the run cannot fail: an estimator whose noise falls as "
        "n^-3 measured −1.18 [−1.44, −0.93], inconclusive.",
        transcription=True,
    )


@register_experiment("ghazi23.lb.convex_erm")
def value_convex_erm_lower_bound_exponents(claim, budget):
    base = {"n": 1000, "m": 100, "d": 400, "epsilon": 0.5}

    def compute(rng):
        return _exponents(user_level_erm_lower_bound, base, ("n", "m", "d", "epsilon"))

    return ValueExperiment(
        compute,
        claimed_exponents(claim, **LOWER_BOUND_VARIABLES),
        atol=1e-9,
        note="formula exponents only (the bound is Ω(·) with an unspecified constant).  Not run: "
        "in its regime √d/ε ≤ n ≤ d/ε² the reference estimator's error (≈ 30√d/(εn) times the "
        "family's reach) sits below the reach only for n ≥ 120√d/ε, which leaves a decade of n "
        "inside the regime only for ε ≤ √d/1200 and n ≥ 10⁵ users per point.",
        transcription=True,
    )


# Appendix D's lower bounds, run: the reference user-level estimator on the hard family.  A lower
# bound holds for every (ε, δ)-DP algorithm, which no run can show; what is checked is that the
# family behaves as the proof needs (the theorem's conditions hold, the truncation is inactive)
# and that a known-good estimator's error is above the bound and scales with its exponents.

LB_DELTA = 1e-12
"""δ of the reference estimator: below 1/n² for every n swept ("δ small"; the lemmas' δ
condition is garbled in the paper)."""


def lb_clip_radius(sigma: float, m: int, d: int, psi: float = 1.0) -> float:
    """The radius the reference estimator clips user means to: the prior box's corner ψσ√(d/m)
    plus σ(√d + 8)/√m, so a user mean is clipped with probability below e^{-32}."""
    return sigma * ((psi + 1.0) * math.sqrt(d) + 8.0) / math.sqrt(m)


def clipped_gaussian_mean(user_means, rng, *, radius, epsilon, delta=LB_DELTA, trials=1):
    """The reference user-level (ε, δ)-DP mean estimator (Levy et al. 2021's upper bound on the
    Gaussian family): each user's mean clipped to B(0, radius), averaged, plus the analytic
    Gaussian noise of the replace-one-user sensitivity 2·radius/n: ``(trials, d)``.  It reads the
    user means only, the sufficient statistic of Lemma D.3."""
    n = user_means.shape[0]
    mech = GaussianMechanism(
        user_mean_query(radius, clip="user"), 2.0 * radius / n, epsilon, delta, users=n
    )
    return mech(UserDataset(user_means[:, None, :]), rng, trials)


def _gaussian_user_means(chi, sigma: float, n: int, m: int, rng) -> np.ndarray:
    """n user means of m items N(χ, σ² I) (Lemma D.3: N(χ, σ²/m I))."""
    return UserLevelGaussianInstance(chi, sigma).sample_user_means(int(n), int(m), rng)


def fingerprinting_mse(
    epsilon, rng, *, n=1000, m=16, d=16, sigma=1.0, psi=0.9, trials=1000, estimator=None
):
    """Lemma D.5's family: χ ~ Uniform([−ψσ/√m, ψσ/√m]^d), n users of m items N(χ, σ² I);
    ``estimator``'s (default :func:`clipped_gaussian_mean`) mean ‖χ̂ − χ‖² over ``trials``."""
    estimator = estimator or clipped_gaussian_mean
    half = psi * sigma / math.sqrt(m)
    chi = rng.uniform(-half, half, size=int(d))
    means = _gaussian_user_means(chi, sigma, n, m, rng)
    radius = lb_clip_radius(sigma, int(m), int(d), psi)
    released = estimator(means, rng, radius=radius, epsilon=epsilon, trials=trials)
    return float(np.mean(np.sum((released - chi) ** 2, axis=1)))


def fingerprinting_rmse(epsilon, rng, *, estimator=None):
    """√ of :func:`fingerprinting_mse` at its defaults: the α of Lemma D.5."""
    return math.sqrt(fingerprinting_mse(epsilon, rng, estimator=estimator))


def _thm_d7_instance(n, m, d, epsilon, mu, lipschitz, rng) -> TruncatedGaussianInstance:
    """The Thm D.7 instance (χ ~ Uniform([−σ/√m, σ/√m]^d), B = G/(2μ), σ = B/(1000√d)), refused
    outside the proof's conditions: n ≥ √d/ε, α² ≤ dσ²/(12m) (Lemma D.6 with ψ = 1), and the
    truncation inactive in double precision (so the user means are exactly N(χ, σ²/m I) and χ^tr
    = χ, Lemma D.2)."""
    inst = TruncatedGaussianInstance.from_theorem(
        d=int(d),
        n=int(n),
        m=int(m),
        strong_convexity=mu,
        lipschitz=lipschitz,
        epsilon=epsilon,
        rng=rng,
    )
    alpha = ghazi_thm_d7_alpha(int(n), int(m), int(d), epsilon, inst.sigma)
    if n < math.sqrt(d) / epsilon or alpha**2 > d * inst.sigma**2 / (12 * m):
        raise InputError(f"n = {n} is outside Thm D.7's regime n >= sqrt(d)/eps at d = {d}")
    if inst.keep_probability != 1.0 or np.any(inst.chi_tr != inst.chi):
        raise InputError("the truncation of the Thm D.7 instance must be inactive")
    return inst


def _thm_d7_release(n, rng, *, m, d, epsilon, mu, lipschitz, trials, estimator):
    """The Thm D.7 instance, its user means and ``estimator``'s releases projected onto K."""
    inst = _thm_d7_instance(n, m, d, epsilon, mu, lipschitz, rng)
    means = _gaussian_user_means(inst.chi, inst.sigma, n, m, rng)
    radius = lb_clip_radius(inst.sigma, int(m), int(d))
    released = (estimator or clipped_gaussian_mean)(
        means, rng, radius=radius, epsilon=epsilon, trials=trials
    )
    return inst, means, project_l2_ball(released, inst.radius)


def sc_sco_lb_excess(
    n, rng, *, m=16, d=16, epsilon=0.5, mu=1.0, lipschitz=2.0, trials=1000, estimator=None
):
    """Thm D.7: the mean excess population risk (μ/2)‖θ̂ − χ^tr‖² (exact) of ``estimator``
    (default :func:`clipped_gaussian_mean`) on the hard instance."""
    inst, _, theta = _thm_d7_release(
        n,
        rng,
        m=m,
        d=d,
        epsilon=epsilon,
        mu=mu,
        lipschitz=lipschitz,
        trials=trials,
        estimator=estimator,
    )
    return float(np.mean(inst.population_loss(theta) - inst.population_loss(inst.theta_star)))


def sc_sco_lb_bound(n, *, m=16, d=16, epsilon=0.5, mu=1.0, lipschitz=2.0) -> float:
    """Thm D.7's private term with the proof's constants, (μ/2)α²."""
    _, sigma = ghazi_thm_d7_scales(int(d), lipschitz, mu)
    return ghazi_thm_d7_explicit_lower_bound(int(n), int(m), int(d), epsilon, sigma, mu)


def sc_erm_lb_excess(
    n, rng, *, m=16, d=2, epsilon=4.8e-6, mu=1.0, lipschitz=2.0, trials=1000, estimator=None
):
    """Thm D.8: the mean excess empirical risk (μ/2)‖θ̂ − x̄‖² (x̄ the ERM, in K) of
    ``estimator`` on the Thm D.7 instance."""
    _, means, theta = _thm_d7_release(
        n,
        rng,
        m=m,
        d=d,
        epsilon=epsilon,
        mu=mu,
        lipschitz=lipschitz,
        trials=trials,
        estimator=estimator,
    )
    return float(0.5 * mu * np.mean(np.sum((theta - means.mean(axis=0)) ** 2, axis=1)))


def sc_erm_lb_bound(n, *, m=16, d=2, epsilon=4.8e-6, mu=1.0, lipschitz=2.0) -> float:
    """Thm D.8's bound from its proof's constants (:func:`ghazi_thm_d8_explicit_lower_bound`;
    the item variance is dσ², the truncation being inactive)."""
    _, sigma = ghazi_thm_d7_scales(int(d), lipschitz, mu)
    return ghazi_thm_d8_explicit_lower_bound(
        int(n), int(m), int(d), epsilon, sigma, mu, item_variance=d * sigma**2
    )


def _point_name(value, setting: dict) -> str:
    """``over_bound_at_V`` (``_k=v`` for each key of ``setting``)."""
    return f"over_bound_at_{value:g}" + "".join(f"_{k}={v:g}" for k, v in setting.items())


def ratio_to_bound(rng, *, error, bound, points, draws) -> dict:
    """``{name: (mean, low, high)}`` per ``(value, setting)`` of ``points``: ``error(value, rng,
    **setting)`` over ``draws`` calls (each a fresh member of the family's prior) divided by
    ``bound(value, **setting)``, ± 3.5 standard errors.  The prior average is at most the worst
    member's error, so an average above the bound puts the worst case above it too."""
    out = {}
    for value, setting in points:
        errors = np.array([error(value, rng, **setting) for _ in range(draws)])
        ratios = errors / bound(value, **setting)
        mean, half = ratios.mean(), 3.5 * ratios.std(ddof=1) / math.sqrt(draws)
        out[_point_name(value, setting)] = (float(mean), float(mean - half), float(mean + half))
    return out


LB_DRAWS = BySize(quick=4, standard=20, full=60)
LB_REPLICATES = BySize(quick=4, standard=10, full=20)


def lower_bound_run(
    claim, budget, *, error, bound, points, param, grid, note, sweep=None, estimator=None
) -> CombinedExperiment:
    """A lower bound's two parts, with ``estimator`` (default the reference one) on the hard
    family: its error over the bound at ``points`` (each ≥ 1 up to 3.5 s.e.), and its ``sweep``
    (default ``error``) of ``param`` against the Ω exponent."""
    error = functools.partial(error, estimator=estimator)
    sweep = functools.partial(sweep or error, estimator=estimator)
    return CombinedExperiment(
        {
            "above the bound": ValueExperiment(
                functools.partial(
                    ratio_to_bound, error=error, bound=bound, points=points, draws=LB_DRAWS[budget]
                ),
                ge={_point_name(value, setting): 1.0 for value, setting in points},
                note=note,
            ),
            "exponent": RateExperiment.for_claim(
                claim, sweep, param, grid[budget], replicates=LB_REPLICATES[budget], note=note
            ),
        },
        note="a lower bound holds for every DP algorithm, which no run shows: the reference "
        "estimator on the hard family must stay above the bound (also where the non-private "
        "estimator falls below it) and meet its exponent.",
    )


@register_experiment("ghazi23.thmD7.sc_sco_lb")
def run_thmd7_sc_sco_lower_bound(claim, budget, *, estimator=None):
    return lower_bound_run(
        claim,
        budget,
        estimator=estimator,
        error=sc_sco_lb_excess,
        bound=sc_sco_lb_bound,
        points=((200, {}), (300_000, {"d": 2, "epsilon": 4.8e-6})),
        param="n",
        grid=BySize(
            quick=[200, 400, 800, 2000],
            standard=[125, 250, 500, 1000, 2000, 4000],
            full=[125, 250, 500, 1000, 2000, 4000],
        ),
        note="Thm D.7's instance (d = 16, m = 16, ε = 0.5, G = 2, μ = 1, B = G/(2μ), "
        "σ = B/(1000√d), χ uniform in the box); reference estimator: user means clipped to "
        "B(0, σ(2√d + 8)/√m), averaged, analytic Gaussian noise (δ = 1e-12), projected onto K; "
        "its excess against the private term (μ/2)α², α = dσ/(100εn√m), also at n = 3e5, "
        "d = 2, ε = 4.8e-6, where the non-private mean's excess is 1/30 of the bound; the "
        "privacy term dominates (n ≤ d/ε² up to the estimator's constant).",
    )


@register_experiment("ghazi23.thmD8.sc_erm_lb")
def run_thmd8_sc_erm_lower_bound(claim, budget, *, estimator=None):
    return lower_bound_run(
        claim,
        budget,
        estimator=estimator,
        error=sc_erm_lb_excess,
        bound=sc_erm_lb_bound,
        points=((300_000, {}),),
        param="n",
        grid=BySize(
            quick=[300_000, 600_000, 1_200_000, 3_000_000],
            standard=[300_000, 500_000, 800_000, 1_300_000, 2_000_000, 3_000_000],
            full=[300_000, 500_000, 800_000, 1_300_000, 2_000_000, 3_000_000],
        ),
        note="Thm D.7's instance at ε = 4.8e-6, d = 2, m = 16: the proof's constants need "
        "√d/ε ≤ n ≤ d/(2·10⁴ε²) (= 2.9e5 … 4.3e6 here; c = 1/(2·10⁴) in the theorem's c·d/ε²; "
        "a decade of n needs ε ≤ √d/(2·10⁵), so n ≥ 3e5 whatever d, and d = 2 keeps it cheap); "
        "reference estimator as for Thm D.7; its excess empirical risk (μ/2)‖θ̂ − x̄‖² against "
        "the proof's (μ/2)(α²/2 − dσ²/(nm)).",
    )


@register_experiment("ghazi23.lemmaD2.truncation")
def value_lemmad2_truncation_bias(claim, budget):
    samples = BySize(quick=20_000, standard=200_000, full=2_000_000)[budget]

    def compute(rng):
        out = {}
        for d in (2, 8, 32):
            inst = TruncatedGaussianInstance.from_theorem(
                d=d, n=1000, m=100, strong_convexity=1.0, lipschitz=2.0, epsilon=1.0, rng=rng
            )
            out[f"bias_over_sigma_d{d}"] = float(
                np.linalg.norm(inst.chi_tr - inst.chi) / inst.sigma
            )
            x = inst.sample(samples // 100, 100, rng).items.reshape(-1, d)
            z = (x[:, 0] - inst.chi_tr[0]) / inst.sigma
            half = 3.5 * z.std() / math.sqrt(len(z))
            out[f"mc_mean_d{d}"] = (float(z.mean()), float(z.mean() - half), float(z.mean() + half))
        return out

    expected = {f"bias_over_sigma_d{d}": 0.0 for d in (2, 8, 32)}
    expected.update({f"mc_mean_d{d}": 0.0 for d in (2, 8, 32)})
    return ValueExperiment(
        compute,
        expected,
        atol=1e-6,
        note="exact truncated mean (ncx2) within 1e-6σ of χ; Monte-Carlo item mean (coordinate 1, "
        "±3.5 s.e.) covers χ^tr.",
    )


@register_experiment("ghazi23.lemmaD3.user_to_item")
def value_lemmad3_user_to_item(claim, budget):
    n = BySize(quick=2000, standard=20000, full=100000)[budget]

    def compute(rng):
        sigma, m, d = 2.0, 8, 3
        x, means = sample_user_level_gaussian(np.zeros(d), sigma=sigma, n=n, m=m, rng=rng)
        items = x.reshape(-1, d)
        var, mvar = float(items.var()), float(means.var() * m)
        k1, k2 = items.size - 1, means.size - 1
        return {
            "mean_identity": float(np.max(np.abs(x.mean(axis=1) - means))),
            "item_variance": (
                var / sigma**2,
                var * k1 / stats.chi2.ppf(0.9995, k1) / sigma**2 * 0.98,
                var * k1 / stats.chi2.ppf(0.0005, k1) / sigma**2 * 1.02,
            ),
            "user_mean_variance_times_m": (
                mvar / sigma**2,
                mvar * k2 / stats.chi2.ppf(0.9995, k2) / sigma**2,
                mvar * k2 / stats.chi2.ppf(0.0005, k2) / sigma**2,
            ),
        }

    return ValueExperiment(
        compute,
        {"mean_identity": 0.0, "item_variance": 1.0, "user_mean_variance_times_m": 1.0},
        atol=1e-12,
        note="x_ij = y_i + σ(w_ij − w̄_i): user means are exactly y_i ~ N(χ, σ²/m) and items have "
        "variance σ² (items within a user are dependent given y, so the item interval is "
        "widened by 2%).",
    )


def fingerprinting_bound(epsilon, *, n=1000, m=16, d=16, sigma=1.0, psi=0.9) -> float:
    """Lemma D.5 read at fixed n: the worst E‖χ̂ − χ‖² is at least
    min(dσ²ψ²/(6m), (dσ/(24εn√m))²)."""
    return user_gaussian_mean_lower_bound(n, m, d, sigma=sigma, epsilon=epsilon, psi=psi)


@register_experiment("ghazi23.lemmaD5.user_fingerprinting")
def run_lemmad5_fingerprinting(claim, budget, *, estimator=None):
    return lower_bound_run(
        claim,
        budget,
        estimator=estimator,
        error=fingerprinting_mse,
        bound=fingerprinting_bound,
        points=((1.0, {}), (0.1, {"n": 40, "d": 1024})),
        sweep=fingerprinting_rmse,
        param="eps",
        grid=BySize(
            quick=[0.1, 0.2, 0.4, 1.0],
            standard=[0.05, 0.1, 0.2, 0.4, 1.0],
            full=[0.05, 0.1, 0.2, 0.4, 1.0],
        ),
        note="N(χ, σ²I) items, σ = 1, n = 1000 users of m = 16, d = 16, χ uniform in "
        "[−ψσ/√m, ψσ/√m]^d, ψ = 0.9; reference estimator: user means clipped to "
        "B(0, σ((1 + ψ)√d + 8)/√m), averaged, analytic Gaussian noise (δ = 1e-12); its "
        "E‖χ̂ − χ‖² against min(dσ²ψ²/(6m), (dσ/(24εn√m))²), the lemma read at fixed n (also at "
        "n = 40, d = 1024, ε = 0.1, where the non-private mean's error is 1/4 of it), and "
        "its RMSE α in ε against α ∝ 1/ε (n ≥ dσ/(24αε√m)).",
    )


# --------------------------------------------------------------------------- Table 1 / baselines


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


@register_experiment("ghazi23.table1.item_sc_erm")
def sweep_item_sc_erm_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        item_sc_erm_excess,
        "n",
        [100, 400, 1600, 6400],
        replicates=BySize(quick=3, standard=10, full=30)[budget],
        trivial=item_sc_erm_origin,
        note="item-level output perturbation (Chaudhuri et al.; m = 1) as the d/n² baseline.",
    )


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


@register_experiment("ghazi23.table1.item_sc_sco")
def sweep_item_sc_sco_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        item_sc_sco_excess,
        "n",
        [10000, 31623, 100000, 316228],
        replicates=BySize(quick=20, standard=100, full=400)[budget],
        # quick pools 16 datasets per replicate (the log of one dataset's excess is that of a
        # χ²₁: sd ≈ 2.2); standard draws one, as before
        fixed=BySize(quick={"datasets": 16}, standard={})[budget],
        trivial=item_sc_sco_origin,
        note="statistical regime (d = 1, 1/n term) of the item-level SC-SCO row, item-level "
        "output perturbation as the baseline.",
    )


def naive_user_excess(m, rng, n=200, d=4, trials=400):
    """Naive user-level output perturbation: SC-ERM excess does not improve with m."""
    inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, n, int(m), rng)
    mech = NaiveUserOutputPert.from_theorem(_output_pert_problem(n, m))
    return 0.5 * np.sum((mech.run(data, rng, trials).theta - data.mean()) ** 2, axis=1)


def naive_user_origin(m, rng, n=200, d=4, trials=400):
    """The trivial control of :func:`naive_user_excess`."""
    return origin_empirical_excess(n, m, rng, d=d)


@register_experiment("ghazi23.baseline.naive_user_outpert")
def sweep_naive_user_outpert_in_m(claim, budget):
    return RateExperiment.for_claim(
        claim,
        naive_user_excess,
        "m",
        [1, 10, 100, 1000, 10000],
        replicates=BySize(quick=3, standard=10, full=30)[budget],
        trivial=naive_user_origin,
        note="σ = (2G/(μn))·analytic-Gaussian factor: the excess has the same law for every m.",
    )


# -------------------------------------------------------------- item-level DP-GD rows (Table 1)


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


def item_dp_gd_sweeps(claim, budget, *, n_variable: str, replicates: int, note: str) -> dict:
    """The sweeps of :func:`item_convex_erm_worst` in n (d = 64; the claim's exponent of
    ``n_variable``) and in d (n = 1000), noted ``note + "d = 64"`` and ``note + "n = 1000"``."""
    trials = BySize(quick=200, standard=1000, full=4000)[budget]
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


@register_experiment("ghazi23.table1.item_convex_erm")
def sweep_item_convex_erm_in_n_and_d(claim, budget):
    return CombinedExperiment(
        item_dp_gd_sweeps(
            claim,
            budget,
            n_variable="n",
            replicates=BySize(quick=3, standard=8, full=20)[budget],
            note=ITEM_DP_GD_NOTE + " c√d/n); ",
        ),
        note="Bassily et al. 2014's item-level DP-ERM rate RG√d/n",
    )


@register_experiment("ghazi23.table1.item_convex_sco")
def sweep_item_convex_sco_in_n_and_d(claim, budget):
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
                replicates=BySize(quick=3, standard=6, full=12)[budget],
                fixed={"datasets": BySize(quick=100, standard=200, full=400)[budget]},
                trivial=item_convex_sco_origin,
                note=note + "; d = 1, i.i.d. ±1 items (the 1/√n term)",
            ),
            **item_dp_gd_sweeps(
                claim,
                budget,
                n_variable="n_privacy",
                replicates=BySize(quick=3, standard=6, full=12)[budget],
                note=note + point_mass + ", ",
            ),
        },
        note="Bassily et al. 2019's item-level DP-SCO rate RG(1/√n + √d/n)",
    )
