"""Experiments for the claims of DIFF2 (Murata & Suzuki, ICML 2023; spec 004).

Privacy: the §7(a) transcript audit (opposite-sign quadratic canary, log-likelihood-ratio
statistic) and value checks of the calibration formulas against the spec's worked numbers.
Rates: the §7(b) Cauchy-circle instance with the theory schedules (spec §2.6.5/§2.6.6),
utility = the uniform average of ‖∇f‖² over the analysed iterates (the theorems' output rule,
Rao-Blackwellised), complexity from the algorithms' gradient counters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ...algorithms.baselines import DPSGD
from ...algorithms.diff2 import (
    DIFF2BVRLSGD,
    DIFF2GD,
    DPGD,
    EXPERIMENT_U,
    _GradientCache,
    _prepare,
    canary_audit_target,
)
from ...algorithms.diff2_privacy import (
    accountant_tight_epsilon,
    alpha_star,
    bvr_minibatch,
    bvr_sigma3_closed_form,
    bvr_sigma3_exact,
    diff2_gd_sigmas,
    diff2_rdp_epsilon,
    dpgd_sigma,
    lemma_b8_bound,
    subsampled_rdp_wor,
    tight_epsilon,
    transcript_mu,
)
from ...algorithms.diff2_tuning import SIGNIFICANCE, STANDIN_GRID, Section6
from ...data import UserDataset, replace_item
from ...execution import Execution
from ...hardinstances.nonconvex import CauchyCircleInstance
from ..experiments import register_experiment
from ..standard import (
    DEFAULT_EXECUTION,
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)

__all__ = [
    "RATE_SETTINGS",
    "utility",
    "utility_ratio",
    "schedule_rounds",
    "gradient_count",
    "SECTION6_BUDGETS",
    "Section6Experiment",
    "section6_verdict",
    "holm",
]

RATE_SETTINGS = dict(delta=1e-5, silos=10, lipschitz=0.5, smoothness=1.0)
"""Spec §7(b): δ = 1e-5, P = 10, C1 = G = 0.5, C2 = L = 1 (u = 2 for DIFF2-GD); ε = 1 except for BVR (below)."""

RATE_EPSILON = 1.0
"""Spec §7(b): ε = 1 (α* = 25) for DIFF2-GD and DP-GD."""

BVR_SETTINGS = dict(RATE_SETTINGS, epsilon=8.0)
"""BVR runs at ε = 8: Prop. E.2's b-condition (b ≤ n_min/(2eα*)) needs n_min ≥ 160 there, ≥ 1000s at ε = 1."""

_TRIALS = 16
_GRIDS_N = {
    "quick": [640, 1280, 2560, 6400],
    "standard": [4000, 8000, 16000, 32000, 64000],
    "full": [4000, 8000, 16000, 32000, 64000, 128000],
}
_REPS = {"quick": 3, "standard": 4, "full": 10}


# --------------------------------------------------------------------------- rate experiment functions


def _build(
    algorithm: str,
    big_n: int,
    d: int,
    epsilon: float | None = None,
    delta: float = 1e-5,
    silos: int = 10,
    lipschitz: float = 0.5,
    smoothness: float = 1.0,
    with_data: bool = True,
    **extra,
):
    inst = CauchyCircleInstance(d=int(d))
    m = int(round(big_n / silos))
    m -= m % 8
    cls = {"diff2-gd": DIFF2GD, "dp-gd": DPGD, "diff2-bvr": DIFF2BVRLSGD}[algorithm]
    if epsilon is None:
        epsilon = BVR_SETTINGS["epsilon"] if algorithm == "diff2-bvr" else RATE_EPSILON
    alg = cls.from_theorem(
        silos,
        m,
        int(d),
        epsilon,
        delta,
        lipschitz,
        smoothness,
        loss=inst.loss,
        initial_gap=inst.initial_gap,
        x0=inst.x0,
        **extra,
    )
    return inst, alg, inst.replicated(silos, m) if with_data else None


def utility(value, rng, param="N", algorithm="diff2-gd", N=4000, d=10, trials=_TRIALS, **settings):
    """``(1/R)Σ_r ‖∇f(x_{r−1})‖²`` per trial ``(trials,)`` on the Cauchy instance (spec §7(b)); ``value`` is N or d."""
    big_n, dim = (value, d) if param == "N" else (N, value)
    inst, alg, data = _build(algorithm, big_n, dim, **{**RATE_SETTINGS, **settings})
    run = alg.run(data, rng, trials, transcript=True)
    return inst.gradient_norm_sq(run.analysed_points()).mean(axis=1)


def utility_ratio(value, rng, d=10, trials=_TRIALS, **settings):
    """Remark 4.4: mean utility of DIFF2-GD over that of DP-GD at N = ``value``."""
    a = utility(value, rng, algorithm="diff2-gd", d=d, trials=trials, **settings)
    b = utility(value, rng, algorithm="dp-gd", d=d, trials=trials, **settings)
    return float(a.mean() / b.mean())


def schedule_rounds(value, rng, algorithm="diff2-gd", d=10, **settings):
    """R chosen by ``from_theorem`` at N = ``value`` (Thm 4.3 / Thm 5.3 round counts)."""
    return float(
        _build(algorithm, value, d, with_data=False, **{**RATE_SETTINGS, **settings})[1].rounds
    )


def gradient_count(value, rng, algorithm="diff2-gd", d=10, **settings):
    """Per-sample gradient evaluations counted by one run at N = ``value`` (Table 1)."""
    _, alg, data = _build(algorithm, value, d, **{**RATE_SETTINGS, **settings})
    return float(alg.run(data, rng, 1).gradient_evaluations)


def _rate(claim, function, param, values, budget, fixed=None, note=""):
    return RateExperiment.for_claim(
        claim, function, param, values, replicates=_REPS[budget], fixed=dict(fixed or {}), note=note
    )


# --------------------------------------------------------------------------- privacy


_AUDIT = {
    "quick": dict(trials=10_000, rounds=40, period=8),
    "standard": dict(trials=100_000, rounds=200, period=5),
    "full": dict(trials=1_000_000, rounds=200, period=5),
}


def _audit(budget, algorithm="diff2-gd", note=""):
    cfg = _AUDIT[budget]
    mech, *_ = canary_audit_target(rounds=cfg["rounds"], period=cfg["period"], algorithm=algorithm)

    def build():
        return canary_audit_target(rounds=cfg["rounds"], period=cfg["period"], algorithm=algorithm)

    return AuditExperiment(
        build,
        trials=cfg["trials"],
        reference_epsilon=round(mech.algorithm.tight_epsilon, 4),
        note=note
        or f"spec §7(a): ±(λ/2)‖θ−c‖² canary, transcript LR statistic, R={cfg['rounds']}, "
        f"T={cfg['period']}, ε=3, u=1.25; exact GDP ε is the reference",
    )


def prop41_slack(budget: str = "standard") -> dict:
    """The audited DIFF2-GD's claimed ε, its tight μ-GDP ε at the same δ, and how loose the claim
    is."""
    cfg = _AUDIT[budget]
    alg = canary_audit_target(rounds=cfg["rounds"], period=cfg["period"])[0].algorithm
    tight = alg.tight_epsilon
    return {
        "claimed": alg.epsilon,
        "tight": tight,
        "loose_by": alg.epsilon - tight,
        "ratio": alg.epsilon / tight,
    }


@register_experiment("diff2gd.prop41.rdp_to_dp")
def _prop41_audit(claim, budget):
    cfg, slack = _AUDIT[budget], prop41_slack(budget)
    return _audit(
        budget,
        note=f"spec §7(a): ±(λ/2)‖θ−c‖² canary, transcript LR statistic, R={cfg['rounds']}, "
        f"T={cfg['period']}, u=1.25.  Prop. 4.1's (ε, δ) = ({slack['claimed']:g}, 1e-5) "
        f"HOLDS; the transcript is μ-GDP and its tight ε at δ = 1e-5 is {slack['tight']:.3f}, "
        f"so the claim is loose by {slack['loose_by']:.2f} (×{slack['ratio']:.2f}), the slack "
        "of the generic RDP→DP conversion — conservative, not a failing claim",
    )


@register_experiment("dpgd.calibration")
def _dpgd_audit(claim, budget):
    return _audit(budget, "dp-gd")


def _sensitivity_ratios(rng):
    """Lemma C.1 white-box: ‖v_r(D) − v_r(D')‖ / (2C/(n_p P)) on the canary (=1) and on random data (≤1)."""
    mech, d0, d1, _ = canary_audit_target(rounds=2, period=2)
    alg = mech.algorithm
    x_prev2 = rng.standard_normal((64, 2))
    x_prev = x_prev2 + 0.01 * rng.standard_normal((64, 2))
    out = {}
    for name, prev, radius in (
        ("restart", None, np.full(64, alg.clip1)),
        ("difference", x_prev2, alg.clip2 * np.linalg.norm(x_prev - x_prev2, axis=1)),
    ):
        v0 = _GradientCache(alg, _prepare(d0), 64).mean(x_prev, prev, radius)
        v1 = _GradientCache(alg, _prepare(d1), 64).mean(x_prev, prev, radius)
        out[f"{name}_ratio"] = float(
            np.max(np.linalg.norm(v0 - v1, axis=1) / (2 * radius / (alg.n_min * alg.silos)))
        )
    inst = CauchyCircleInstance(d=2)
    worst = 0.0
    for _ in range(20):
        base = UserDataset(rng.standard_normal((3, 4, 2)) * 3)
        other = replace_item(base, 1, 2, rng.standard_normal(2) * 3)
        g = DIFF2GD(
            loss=inst.loss,
            d=2,
            silos=3,
            n_min=4,
            epsilon=1.0,
            delta=1e-5,
            rounds=2,
            period=2,
            sigma1=1.0,
            sigma2=1.0,
            clip1=0.1,
            clip2=0.05,
            eta=0.1,
        )
        rad = g.clip2 * np.linalg.norm(x_prev - x_prev2, axis=1)
        v0 = _GradientCache(g, _prepare(base), 64).mean(x_prev, x_prev2, rad)
        v1 = _GradientCache(g, _prepare(other), 64).mean(x_prev, x_prev2, rad)
        worst = max(worst, float(np.max(np.linalg.norm(v0 - v1, axis=1) / (2 * rad / 12))))
    out["random_within_bound"] = float(worst <= 1 + 1e-9)
    return out


@register_experiment("diff2.lemmaC1.sensitivity")
def _lemma_c1(claim, budget):
    return ValueExperiment(
        _sensitivity_ratios,
        {"restart_ratio": 1.0, "difference_ratio": 1.0, "random_within_bound": 1.0},
        rtol=1e-6,
        note="canary attains 2C/(n_p P) exactly; random replace-one pairs stay within it",
    )


_SIGMA_TABLE = {  # spec §6.3: (n_min, ε) -> DP-GD σ, {T: (σ1, σ2)}; R = 2000, P = 10, u = 1.25
    (1651, 3): (
        0.00938,
        {
            6: (0.00429, 0.0191),
            20: (0.00235, 0.0205),
            60: (0.00137, 0.0208),
            200: (0.00074, 0.0209),
        },
    ),
    (2938, 5): (
        0.00333,
        {
            6: (0.00152, 0.0068),
            20: (0.00083, 0.0073),
            60: (0.00049, 0.0074),
            200: (0.00026, 0.0074),
        },
    ),
    (4801, 3): (
        0.00323,
        {
            6: (0.00147, 0.0066),
            20: (0.00081, 0.0070),
            60: (0.00047, 0.0072),
            200: (0.00026, 0.0072),
        },
    ),
}


def _calibration(rng):
    out = {}
    for (n_min, eps), (dp, by_t) in _SIGMA_TABLE.items():
        out[f"dpgd_sigma_n{n_min}_eps{eps}"] = dpgd_sigma(n_min, 10, 2000, eps, 1e-5)
        for t, (s1, s2) in by_t.items():
            a, b = diff2_gd_sigmas(n_min, 10, 2000, t, eps, 1e-5, EXPERIMENT_U)
            out[f"sigma1_n{n_min}_eps{eps}_T{t}"], out[f"sigma2_n{n_min}_eps{eps}_T{t}"] = a, b
            out[f"rdp_eps_at_alpha_n{n_min}_eps{eps}_T{t}"] = (
                diff2_rdp_epsilon(n_min, 10, 2000, t, a, b, 1e-5, alpha=alpha_star(eps, 1e-5)) / eps
            )
    return out


def _calibration_expected():
    exp = {}
    for (n_min, eps), (dp, by_t) in _SIGMA_TABLE.items():
        exp[f"dpgd_sigma_n{n_min}_eps{eps}"] = dp
        for t, (s1, s2) in by_t.items():
            exp[f"sigma1_n{n_min}_eps{eps}_T{t}"], exp[f"sigma2_n{n_min}_eps{eps}_T{t}"] = s1, s2
    return exp


@register_experiment("diff2gd.prop41.calibration")
def _prop41_calibration(claim, budget):
    return ValueExperiment(
        _calibration,
        _calibration_expected(),
        rtol=0.03,
        atol=6e-6,
        note="spec §6.3 σ table (rounded to 2-3 digits in the spec)",
    )


def _gdp_reference(rng, trials=10_000):
    out = {}
    for eps in (1, 3, 5):
        s1, s2 = diff2_gd_sigmas(5, 2, 200, 5, eps, 1e-5, EXPERIMENT_U)
        mu = transcript_mu(5, 2, 200, 5, s1, s2)
        out[f"tight_eps_{eps}"] = tight_epsilon(mu, 1e-5)
        out[f"accountant_eps_{eps}"] = accountant_tight_epsilon(mu, 1e-5)
    mech, d0, d1, _ = canary_audit_target(rounds=40, period=8)
    s0 = mech(d0, np.random.default_rng(rng.integers(2**32)), trials)[:, 0]
    s1_ = mech(d1, np.random.default_rng(rng.integers(2**32)), trials)[:, 0]
    pooled = math.sqrt((s0.var(ddof=1) + s1_.var(ddof=1)) / 2)
    mu_hat = (s0.mean() - s1_.mean()) / pooled
    half = stats.norm.ppf(0.995) * math.sqrt(2 / trials + mu_hat**2 / (4 * trials))
    out["mu_hat_eps3"] = (mu_hat, mu_hat - half, mu_hat + half)
    return out


@register_experiment("diff2gd.gdp_reference")
def _gdp(claim, budget):
    trials = {"quick": 5_000, "standard": 50_000, "full": 200_000}[budget]
    expected = {
        "tight_eps_1": 0.726,
        "tight_eps_3": 2.341,
        "tight_eps_5": 3.940,
        "accountant_eps_1": 0.726,
        "accountant_eps_3": 2.341,
        "accountant_eps_5": 3.940,
        "mu_hat_eps3": math.sqrt(3 / 9),
    }
    return ValueExperiment(
        lambda rng: _gdp_reference(rng, trials),
        expected,
        rtol=2e-3,
        atol=0.0,
        note="exact GDP ε and dp-accounting PLD agree; the canary's measured μ̂ (99% CI) covers "
        "sqrt(ε/α*)",
    )


def _noise_sizes(rng, rounds=200, period=20):
    """Remark 4.2: empirical restart-noise variance of DIFF2-GD over DP-GD's, on all-zero-gradient data."""
    from ...losses import WeightedSquaredDistanceLoss

    data = UserDataset(np.zeros((10, 16, 4)), np.zeros((10, 16)))
    loss = WeightedSquaredDistanceLoss(1.0)
    kw = dict(loss=loss, initial_gap=1.0, rounds=rounds, clip1=1.0)
    a = DIFF2GD.from_theorem(
        10, 16, 4, 3.0, 1e-5, 1.0, 1.0, u=EXPERIMENT_U, period=period, eta=0.1, **kw
    )
    b = DPGD.from_theorem(10, 16, 4, 3.0, 1e-5, 1.0, 1.0, **kw)
    ra, rb = a.run(data, rng, 200, transcript=True), b.run(data, rng, 200, transcript=True)
    restart_var = ra.estimates[:, ::period].var()
    return {
        "variance_ratio": float(restart_var / rb.estimates.var()),
        "u_over_T": EXPERIMENT_U / period,
    }


@register_experiment("diff2.remark42.noise_size")
def _remark42(claim, budget):
    return ValueExperiment(
        _noise_sizes,
        {"variance_ratio": EXPERIMENT_U / 20, "u_over_T": EXPERIMENT_U / 20},
        rtol=0.06,
        note="R=200, T=20, u=1.25: σ1²/σ² = u⌈R/T⌉/R = u/T; measured on pure-noise transcripts",
    )


def _bvr_sensitivity(rng):
    """Lemma E.1: one local step's v changes by exactly 2C3‖Δx‖/b when the canary is in the minibatch."""
    from ...algorithms.diff2 import _clipped_mean
    from ...losses import WeightedSquaredDistanceLoss

    loss = WeightedSquaredDistanceLoss(1e6)
    b, trials = 4, 32
    x_prev2 = rng.standard_normal((trials, 2))
    x_prev = x_prev2 + 0.01 * rng.standard_normal((trials, 2))
    radius = 1.0 * np.linalg.norm(x_prev - x_prev2, axis=1)
    centre = np.full((b, 2), 5.0)
    out = {}
    for sign in (1.0, -1.0):
        y = np.zeros(b)
        y[0] = sign
        g = loss.grad(x_prev, centre, y) - loss.grad(x_prev2, centre, y)
        out[sign] = _clipped_mean(g, radius, np.full(b, 1 / b))
    return {
        "local_ratio": float(
            np.max(np.linalg.norm(out[1.0] - out[-1.0], axis=1) / (2 * radius / b))
        )
    }


@register_experiment("diff2bvr.lemmaE1.sensitivity")
def _lemma_e1(claim, budget):
    return ValueExperiment(
        _bvr_sensitivity,
        {"local_ratio": 1.0},
        rtol=1e-6,
        note="canary in the minibatch: sensitivity 2·C3·‖x_{k−1}−x_{k−2}‖/b attained",
    )


_BVR_CASES = ((1651, 13, 3.0, 0.354, 0.565), (4801, 16, 5.0, 0.098, 0.375))


def _bvr_calibration(rng):
    out = {}
    for n_min, b, eps, _, _ in _BVR_CASES:
        out[f"sigma3_exact_n{n_min}"] = bvr_sigma3_exact(n_min, 10, 2000, 10, b, eps, 1e-5)
        out[f"sigma3_closed_n{n_min}"] = bvr_sigma3_closed_form(n_min, 10, 2000, 10, b, eps, 1e-5)
    out["b_n1651_eps3"] = float(bvr_minibatch(1651, 10, 2000, 10, 3.0, 1e-5))
    return out


@register_experiment("diff2bvr.propE2.calibration")
def _prop_e2_calibration(claim, budget):
    expected = {}
    for n_min, _, _, exact, closed in _BVR_CASES:
        expected[f"sigma3_exact_n{n_min}"], expected[f"sigma3_closed_n{n_min}"] = exact, closed
    expected["b_n1651_eps3"] = 13.0
    return ValueExperiment(
        _bvr_calibration,
        expected,
        rtol=0.01,
        note="spec §2.6.3 [PROTOTYPE] values (K=10, R=2000, P=10, δ=1e-5)",
    )


def _bvr_dp(rng):
    inst = CauchyCircleInstance(d=10)
    out = {}
    for n_min, b, eps, _, _ in _BVR_CASES:
        alg = DIFF2BVRLSGD.from_theorem(
            10,
            n_min,
            10,
            eps,
            1e-5,
            0.5,
            1.0,
            loss=inst.loss,
            initial_gap=1.0,
            batch=b,
            rounds=2000,
            period=20,
        )
        out[f"paper_eps_within_target_n{n_min}"] = float(alg.paper_epsilon <= eps * (1 + 1e-9))
        out[f"accountant_within_paper_n{n_min}"] = float(
            alg.accountant_epsilon <= alg.paper_epsilon
        )
    return out


@register_experiment("diff2bvr.propE2.rdp_to_dp")
def _prop_e2(claim, budget):
    expected = {
        f"{k}_n{c[0]}": 1.0
        for c in _BVR_CASES
        for k in ("paper_eps_within_target", "accountant_within_paper")
    }
    return ValueExperiment(
        _bvr_dp,
        expected,
        note="Prop. E.2's ε at α* (exact Lemma B.7) ≤ target, and dp-accounting's "
        "RDP (REPLACE_ONE, sampling w/o replacement) ≤ Prop. E.2's ε",
    )


def _lemma_b8(rng):
    out = {}
    for n, b, sigma, alpha in ((10_000, 10, 1.0, 9), (20_000, 8, 2.0, 25), (5_000, 5, 2.0, 6)):
        eps2, gamma = 2 * 2 / (b**2 * sigma**2), b / n
        ok = (
            2 * alpha / (b**2 * sigma**2) <= min(1 / 3, math.log(1 / (2 * gamma * alpha)))
            and gamma <= eps2 / alpha
        )
        out[f"conditions_hold_n{n}"] = float(ok)
        out[f"b7_within_b8_n{n}"] = float(
            subsampled_rdp_wor(alpha, sigma, b, n) <= lemma_b8_bound(alpha, eps2, gamma)
        )
    return out


@register_experiment("rdp.lemmaB8.simple_subsampling")
def _b8(claim, budget):
    expected = {
        f"{k}_n{n}": 1.0
        for n in (10_000, 20_000, 5_000)
        for k in ("conditions_hold", "b7_within_b8")
    }
    return ValueExperiment(
        _lemma_b8,
        expected,
        note="exact Lemma B.7 ≤ Lemma B.8's simple bound where its conditions hold",
    )


# --------------------------------------------------------------------------- utility: explicit bounds


def _explicit_bound(
    rng, algorithm="diff2-gd", points=((4000, 10), (32000, 10)), mutant=None, rounds=None
):
    out = {}
    for big_n, d in points:
        extra = {"mutant": mutant} if mutant else {}
        if rounds is not None:
            extra["rounds"] = rounds
        inst, alg, data = _build(algorithm, big_n, d, **RATE_SETTINGS, **extra)
        u = inst.gradient_norm_sq(
            alg.run(data, rng, _TRIALS, transcript=True).analysed_points()
        ).mean()
        out[f"within_bound_N{big_n}_d{d}"] = float(u <= alg.utility_bound(inst.initial_gap))
    return out


@register_experiment("diff2gd.propD2.explicit_bound")
def _prop_d2(claim, budget):
    points = {
        "quick": ((800, 10), (4000, 10)),
        "standard": ((4000, 10), (32000, 10), (4000, 128)),
        "full": ((4000, 10), (32000, 10), (128000, 10), (4000, 128), (32000, 128)),
    }[budget]
    return ValueExperiment(
        lambda rng: _explicit_bound(rng, "diff2-gd", points),
        {f"within_bound_N{n}_d{d}": 1.0 for n, d in points},
        note="mean over 16 trials of (1/R)Σ‖∇f(x_{r−1})‖² ≤ 2Δ0/(ηR) + 2σ1²C1²d (Cauchy instance)",
    )


@register_experiment("diff2bvr.propF3.explicit_bound")
def _prop_f3(claim, budget):
    points = {
        "quick": ((1600, 10),),
        "standard": ((1600, 10), (6400, 10)),
        "full": ((1600, 10), (6400, 10), (16000, 10)),
    }[budget]
    rounds = {"quick": 150, "standard": 1000, "full": None}[budget]
    return ValueExperiment(
        lambda rng: _explicit_bound(rng, "diff2-bvr", points, rounds=rounds),
        {f"within_bound_N{n}_d{d}": 1.0 for n, d in points},
        note="BVR (ε=8): mean of ‖∇f‖² over all local points ≤ 2Δ0/(ηKR) + 2eσ1²C1²d (Cauchy instance); the "
        "bound holds for any R, so quick/standard shorten R (η from the caps at that R)",
    )


# --------------------------------------------------------------------------- utility and complexity rates


_GRIDS_D = {
    "quick": [8, 16, 32, 64, 128],
    "standard": [4, 8, 16, 32, 64, 128],
    "full": [4, 8, 16, 32, 64, 128, 256],
}
_D_SWEEP_N = {"quick": 2400, "standard": 16000, "full": 32000}
"""Spec §7(b) d sweeps at fixed N (quick uses a small N so that one sweep stays under ~2 s)."""


def _d_rate(claim, algorithm, budget):
    n = _D_SWEEP_N[budget]
    return _rate(
        claim,
        utility,
        "d",
        _GRIDS_D[budget],
        budget,
        {"param": "d", "algorithm": algorithm, "N": n},
        note=f"spec §7(b) Cauchy instance, d sweep at N = {n} with the theory schedule at each d",
    )


@register_experiment("diff2gd.thm43.utility")
def _thm43(claim, budget):
    return CombinedExperiment(
        {
            "N": _rate(
                claim,
                utility,
                "N",
                _GRIDS_N[budget],
                budget,
                {"algorithm": "diff2-gd"},
                note="spec §7(b) Cauchy instance, theory schedule; pre-asymptotic local slope ≈ −1.24 at N ~ 10³",
            ),
            "d": _d_rate(claim, "diff2-gd", budget),
        },
        note="Thm 4.3 exponents: N^(−4/3) and d^(2/3)",
    )


@register_experiment("dpgd.utility")
def _dpgd_utility(claim, budget):
    return CombinedExperiment(
        {
            "N": _rate(
                claim,
                utility,
                "N",
                _GRIDS_N[budget],
                budget,
                {"algorithm": "dp-gd"},
                note="spec §7(b) Cauchy instance, DP-GD schedule of §2.6.6",
            ),
            "d": _d_rate(claim, "dp-gd", budget),
        },
        note="DP-GD exponents: N^(−1) and d^(1/2)",
    )


@register_experiment("diff2gd.remark44.improvement_regime")
def _remark44(claim, budget):
    return _rate(
        claim,
        utility_ratio,
        "N",
        _GRIDS_N[budget],
        budget,
        note="ratio of mean utilities DIFF2-GD / DP-GD against N (d = 10)",
    )


@register_experiment("diff2gd.thm43.rounds")
def _thm43_rounds(claim, budget):
    return _rate(
        claim,
        schedule_rounds,
        "N",
        _GRIDS_N["full"],
        "quick",
        {"algorithm": "diff2-gd"},
        note="R chosen by the theory schedule (deterministic; replicates identical)",
    )


_BVR_CAPPED_GRID = [1_024_000, 2_048_000, 4_096_000, 8_192_000, 16_384_000]
"""N where the BVR schedule's η sits at the cap 1/(2L) (ε = 8): there c1 of Thm 5.3 is its L/K term."""

_BVR_DEFAULT_GRID = [16_000, 64_000, 256_000, 1_024_000, 4_096_000, 16_384_000]
"""N of the default BVR schedule (K = 10, b from the b-condition, so b grows with n_min)."""

_TABLE1_GRID = [10**6, 10**7, 10**8, 10**9, 10**10]
"""N for Table 1's K = b = √N schedule (σ3 = √(6α*)/b; counted, not run)."""


def _bvr_eta_capped(rng):
    etas = [
        _build("diff2-bvr", n, 10, with_data=False, **RATE_SETTINGS)[1].eta
        for n in _BVR_CAPPED_GRID
    ]
    return {
        "eta_at_1/(2L)_on_whole_grid": float(
            np.allclose(etas, 1 / (2 * RATE_SETTINGS["smoothness"]))
        )
    }


def bvr_c1(alg) -> float:
    """Thm 5.3's c1 with the schedule's constants: ``1/(Kη0)`` = max{2L/K, 2√(2e(ζ² + L²/(Kb) +
    C3²σ3²d/K))} (the Θ(L/K + ζ + L/√(Kb)) + Θ̃(σ3) terms; L = RATE_SETTINGS' smoothness)."""
    lsm, k = RATE_SETTINGS["smoothness"], alg.local_steps
    inner = alg.zeta**2 + lsm**2 / (k * alg.batch) + alg.clip3**2 * alg.sigma3**2 * alg.d / k
    return max(2 * lsm / k, 2 * math.sqrt(2 * math.e * inner))


def bvr_rounds_over_c1(value, rng, d=10, **settings):
    """R / c1 of the default BVR schedule at N = ``value``: ∝ 1/ε_opt ∝ N^{4/3} if R follows Thm
    5.3."""
    alg = _build("diff2-bvr", value, d, with_data=False, **{**RATE_SETTINGS, **settings})[1]
    return alg.rounds / bvr_c1(alg)


def _table1_schedule(big_n, d=10):
    k = round(math.sqrt(big_n))
    return _build(
        "diff2-bvr",
        big_n,
        d,
        with_data=False,
        local_steps=k,
        batch=k,
        sigma3_rule="table1",
        **RATE_SETTINGS,
    )[1]


def table1_rounds(value, rng, d=10):
    """R of Table 1's K = b = √N schedule (Thm 5.3's schedule, σ3 = √(6α*)/b) at N = ``value``."""
    return float(_table1_schedule(value, d).rounds)


def table1_gradient_complexity(value, rng, d=10):
    """GC = N(2R − ⌈R/T⌉) + 2b(K − 1)R of Table 1's K = b = √N schedule at N = ``value``
    (counted)."""
    return float(_table1_schedule(value, d).scheduled_gradient_evaluations)


_TABLE1_NOTE = (
    "Table 1's schedule K = b = √N at ε = 8, P = 10, d = 10: R and η from Thm 5.3's schedule with "
    "σ3 = √(6α*)/b (the branch of Prop. E.2 behind Table 1's Θ̃ term); deterministic, counted not "
    "run "
    "(the b-condition for K = b = √N needs N far beyond any run)"
)


@register_experiment("diff2bvr.thm53.rounds")
def _thm53_rounds(claim, budget):
    return CombinedExperiment(
        {
            "rounds": _rate(
                claim,
                schedule_rounds,
                "N",
                _BVR_CAPPED_GRID,
                "quick",
                {"algorithm": "diff2-bvr"},
                note="R of the BVR schedule at ε=8 (deterministic) for N = 1.0e6..1.6e7, where η "
                "= 1/(2L) "
                "and c1 = Θ(L/K) is constant",
            ),
            "regime": ValueExperiment(
                _bvr_eta_capped,
                {"eta_at_1/(2L)_on_whole_grid": 1.0},
                note="the sweep stays in the step-size-capped regime",
            ),
            "rounds_over_c1": _rate(
                claim,
                bvr_rounds_over_c1,
                "N",
                _BVR_DEFAULT_GRID,
                "quick",
                note="R/c1 of the default schedule (K = 10, b growing with n_min) for N = "
                "1.6e4..1.6e7: "
                "R itself grows more slowly (local slopes ≈ 0.7–1.3) because c1's L/√(Kb) and "
                "σ3 terms shrink as b grows, exactly as Thm 5.3's R = 1 + c1/ε_opt + "
                "c2/ε_opt² predicts; R/c1 ∝ 1/ε_opt ∝ N^(4/3)",
            ),
            "table1_schedule": RateExperiment.for_claim(
                claim,
                table1_rounds,
                "N",
                _TABLE1_GRID,
                variable="N_table1",
                replicates=_REPS["quick"],
                note=f"{_TABLE1_NOTE}; Table 1's CC = GC/N ∝ N^(5/6)",
            ),
        },
        note="Thm 5.3's rounds: N^(4/3) at fixed c1 (η capped), R/c1 ∝ N^(4/3) on the default "
        "schedule whose b grows "
        "with N, and N^(5/6) on Table 1's K = b = √N schedule; not a finding about the paper",
    )


@register_experiment("diff2gd.table1.gradient_complexity")
def _gc_diff2(claim, budget):
    grid = _GRIDS_N["quick" if budget == "quick" else "standard"]
    return _rate(
        claim,
        gradient_count,
        "N",
        grid,
        "quick",
        {"algorithm": "diff2-gd"},
        note="counted per-sample gradients of one run (2n_p per difference round)",
    )


@register_experiment("dpgd.table1.complexity")
def _gc_dpgd(claim, budget):
    grid = _GRIDS_N["quick" if budget == "quick" else "standard"]
    return _rate(
        claim,
        gradient_count,
        "N",
        grid,
        "quick",
        {"algorithm": "dp-gd"},
        note="counted per-sample gradients of one run",
    )


def _per_client(rng):
    _, alg, data = _build("diff2-bvr", 1600, 10, rounds=100, **RATE_SETTINGS)
    run = alg.run(data, rng, 1)
    n_p, k, b, rounds = alg.n_min, alg.local_steps, alg.batch, alg.rounds
    active = np.bincount(np.arange(1, rounds + 1) % alg.silos, minlength=alg.silos)
    formula = n_p * (2 * rounds - alg.restarts) + 2 * b * (k - 1) * active
    ratio = run.client_gradient_evaluations / ((n_p + k * b) * rounds)
    return {
        "counter_matches_formula": float(np.all(run.client_gradient_evaluations == formula)),
        "within_2x_of_(n_p+Kb)R": float(np.all(ratio <= 2.0)),
    }


@register_experiment("diff2bvr.remark55.per_client_cost")
def _remark55(claim, budget):
    return ValueExperiment(
        _per_client,
        {"counter_matches_formula": 1.0, "within_2x_of_(n_p+Kb)R": 1.0},
        note="per-client counter of a BVR run = n_p(2R − ⌈R/T⌉) + 2b(K−1)·#active rounds ≤ 2(n_p+Kb)R",
    )


# --------------------------------------------------------------------------- §6 experiment (stand-in data)


SECTION6_BUDGETS = {
    "standard": dict(samples=2000, seeds=3, clips=(1.0, 10.0), period_fractions=(0.003, 0.01)),
    "full": dict(STANDIN_GRID),
}
"""§6 budgets on california_like (ε = 5, R = 2000, the whole η ladder with App. A's early stopping).
full = spec §6.6's stand-in protocol (C ∈ {1, 10, 100}, T ∈ {20, 60, 200}, 5 seeds, full-size data;
``benchmarks/bench_diff2.py section6`` runs it on all three stand-ins, and App. A's whole grid with
``grid="paper"``); standard keeps R = 2000 (so the σ's are those of R = 2000) on 2000 samples,
C ∈ {1, 10}, T ∈ {6, 20}, 3 seeds.  The quick budget does not run §6 (outside the paper's regime)."""


HEADROOM = 0.8
"""The §6 claim is testable when non-private GD's mean train loss is below HEADROOM × DP-GD's (the
paper's regime: privacy costs accuracy); otherwise an 'inconsistent' comparison is reported as
inconclusive."""


@dataclass(frozen=True)
class Section6Experiment:
    """The paper's claim that DIFF2-GD beats DP-GD (§6), judged by :func:`section6_verdict` on the
    per-seed minima over rounds of each metric."""

    settings: dict

    def run(self, *, seed: int = 0, execution: Execution = DEFAULT_EXECUTION) -> dict:
        setup = Section6("california_like", seed=seed, **self.settings)
        summary = setup.run(
            backend=execution.backend,
            workers=execution.workers,
            checkpoint=execution.checkpoint,
            scheduler=execution.scheduler,
        )
        verdict, checks = section6_verdict(summary["tests"])
        train = summary["tests"]["train"]
        headroom = train["gd_mean"] < HEADROOM * train["dpgd_mean"]
        summary_text = "; ".join(
            f"{m.split('_')[0]}: DIFF2-GD {c['diff2_mean']:.4g} vs DP-GD {c['dpgd_mean']:.4g} "
            f"(p = {c['pvalue']:.2g})"
            for m, c in checks.items()
        )
        if not headroom:
            verdict = "inconclusive" if verdict == "inconsistent" else verdict
            summary_text += (
                f"; not testable on this stand-in: non-private GD's train loss "
                f"{train['gd_mean']:.4g} is "
                f"not below {HEADROOM:g}x DP-GD's (no privacy headroom for DIFF2-GD to recover)"
            )
        evidence = {
            "checks": checks,
            "privacy_headroom": bool(headroom),
            "note": "california_like stand-in (spec §6.6), ε = 5, δ = 1e-5, R = 2000, App. A tuning per seed; "
            "the privacy cost of tuning is not accounted for (as in the paper).  The claim is "
            "testable "
            f"only where non-private GD is clearly below DP-GD (train loss < {HEADROOM:g}x), the "
            "paper's regime; california_like has no such headroom",
            "section6": {"california_like": summary},
        }
        return {"type": "value", "verdict": verdict, "summary": summary_text, "evidence": evidence}


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values, ``(m,)`` → ``(m,)``: statsmodels' ``multipletests(method="holm")``
    values (tested), without the ``gc.collect()`` it runs on every call (50 ms; the verdict's calibration
    test calls this thousands of times).  NaN p-values sort last and stay NaN."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(
        np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))), 1.0
    )
    return adjusted


def section6_verdict(tests: dict, alpha: float = SIGNIFICANCE) -> tuple[str, dict]:
    """Verdict on "DIFF2-GD beats DP-GD on every metric" from :meth:`Section6.summarize`'s ``tests``.

    consistent: DIFF2-GD lower with one-sided paired p < α on every metric (an intersection-union test,
    level α without correction); inconsistent: DP-GD lower on some metric, reverse p-values Holm-adjusted
    over the metrics < α (family-wise false alarm ≤ α); otherwise inconclusive.  Returns the verdict and
    one check per metric.
    """
    reverse = holm([t["reverse_pvalue"] for t in tests.values()])
    checks = {}
    for (metric, t), r in zip(tests.items(), reverse):
        won = bool(t["diff2_mean"] < t["dpgd_mean"] and t["pvalue"] < alpha)  # NaN p: not won
        checks[f"{metric}_diff2_wins"] = {
            "value": float(won),
            "expected": 1.0,
            "ok": won,
            **{k: t[k] for k in ("pvalue", "reverse_pvalue", "diff2_mean", "dpgd_mean")},
            "reverse_pvalue_holm": float(r),
        }
    if all(c["ok"] for c in checks.values()):
        return "consistent", checks
    return ("inconsistent" if (reverse < alpha).any() else "inconclusive"), checks


@register_experiment(
    "experiments.regression",
    skip={
        "quick": "the paper's §6 regime needs R = 2000 rounds and its T/η grid; the smallest faithful "
        "run is the standard budget (a few minutes)"
    },
)
def _experiments_regression(claim, budget):
    return Section6Experiment(SECTION6_BUDGETS[budget])


# --------------------------------------------------------------------------- formerly not-checkable claims


_BVR_UTILITY = {
    "standard": dict(values=[1600, 3200, 6400, 16000], replicates=2, trials=4),
    "full": dict(values=[1600, 3200, 6400, 16000, 32000], replicates=4, trials=8),
}
"""Thm 5.3 utility sweep (ε = 8, K = 10, default schedule; N ≥ 1600 for n_min ≥ 160): one run at
N = 16000 takes ~1-2 min on 2 busy cores."""


_BVR_UTILITY_QUICK = (
    "the BVR theory schedule needs 3e3-1e4 rounds of K = 10 local steps per run; the 4-point "
    "sweep runs at the standard budget (~5 min), not at quick"
)


@register_experiment("diff2bvr.thm53.utility", skip={"quick": _BVR_UTILITY_QUICK})
def _thm53_utility(claim, budget):
    cfg = _BVR_UTILITY[budget]
    return RateExperiment.for_claim(
        claim,
        utility,
        "N",
        cfg["values"],
        replicates=cfg["replicates"],
        fixed={"algorithm": "diff2-bvr", "trials": cfg["trials"]},
        note="spec §7(b) Cauchy instance, d = 10, DIFF2-BVR-L-SGD at ε = 8 (where Prop. E.2's "
        "b-condition is feasible, n_min ≥ 160) with its theory schedule; utility = uniform "
        "average of ‖∇f‖² over the analysed local points",
    )


@register_experiment("diff2bvr.table1.gradient_complexity")
def _gc_bvr_table1(claim, budget):
    return _rate(
        claim,
        table1_gradient_complexity,
        "N",
        _TABLE1_GRID,
        "quick",
        note=f"{_TABLE1_NOTE}; GC = N(2R − ⌈R/T⌉) + 2b(K − 1)R (the counters of a run, "
        "DIFF2.scheduled_gradient_evaluations)",
    )


_DP_SGD = {
    "quick": dict(values=[200, 400, 800, 2000], replicates=2),
    "standard": dict(values=[400, 800, 1600, 4000], replicates=4),
    "full": dict(values=[400, 800, 1600, 4000, 8000], replicates=8),
}


def dp_sgd_utility(value, rng, d=10, sampling_rate=0.5, trials=16):
    """‖∇f(θ_τ)‖² ``(trials,)`` of item-level DP-SGD (:class:`DPSGD`, Poisson rate q, σ from the PLD
    accountant at (ε = 1, δ = 1e-5), replace-one) on the Cauchy instance with N = ``value``; τ
    uniform over the T = ⌈R/q⌉ steps, R and η = 1/(2L) and the clip C1 = G of DP-GD's theory
    schedule."""
    inst, ref, data = _build("dp-gd", int(value), d, **RATE_SETTINGS)
    alg = DPSGD.from_accountant(
        RATE_EPSILON,
        RATE_SETTINGS["delta"],
        inst.loss,
        math.ceil(ref.rounds / sampling_rate),
        ref.eta,
        ref.clip1,
        sampling_rate=sampling_rate,
        relation="replace",
        random_iterate=True,
    )
    return inst.gradient_norm_sq(alg.run(data, rng, trials).theta[:, None, :])[:, 0]


@register_experiment("cited.dp_sgd")
def _cited_dp_sgd(claim, budget):
    cfg = _DP_SGD[budget]
    return RateExperiment.for_claim(
        claim,
        dp_sgd_utility,
        "N",
        cfg["values"],
        replicates=cfg["replicates"],
        note="the cited DP-SGD row run with the item-level DP-SGD baseline (Poisson q = 1/2, PLD "
        "calibration, random-iterate output) on the spec §7(b) Cauchy instance, d = 10, ε = 1; "
        "steps ⌈R/q⌉ with DP-GD's R ∝ Nε/√d",
    )
