"""Experiments for the claims of Lowy, Liu & Asi (2024), spec 000 (paper id ``lowy-liu-asi-2024``).

Privacy claims: audits at the spec §7(a) pairs (ε = 2) and white-box value checks.  Rate
claims: the sweeps of spec §7(b) (RT-1 … RT-10) on the hard instances H1/H3/H4, in relaxed
constants (spec §2.6; the paper's constants leave the error at chance level at any feasible n,
spec §4.8) or as data-free schedule dry runs for gradient counts.  ``quick`` sweeps are tiny
and may honestly come out ``inconclusive``; RT-9 (smoothed Algorithm 3) has no sweep that fits
the quick budget and is ``skipped`` there (standard and full run it).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, stats

from ...algorithms.lowy_liu_asi import (
    ACSA_STAGE,
    ALG2_QUERY_LAPLACE,
    ALG2_THRESHOLD_LAPLACE,
    Algorithm1,
    Algorithm3,
    HaltIndicator,
    HaltingStep,
    SmoothedAlgorithm3,
    StronglyConvexAlgorithm3,
    acsa_coefficients,
    alg1_audit,
    alg2_audit,
    alg3_audit,
    alg3_gradient_count,
)
from ...algorithms.lowy_liu_asi_core import concentration, uniform_ball
from ...hardinstances.linear import AbsoluteCubeInstance, LinearHypercubeInstance
from ...hardinstances.quadratic import QuadraticHypercubeInstance
from ...losses import SquaredDistanceLoss
from ...privacy import PrivacyClaim, laplace_epsilon
from ...rates.caveats import Baseline
from ..experiments import register_experiment
from ..standard import AuditExperiment, RateExperiment, ValueExperiment

_B = {"quick": 0, "standard": 1, "full": 2}


def _pick(budget: str, quick, standard, full):
    return (quick, standard, full)[_B[budget]]


# --------------------------------------------------------------------------- privacy: audits


def _alg1_setup(pair, wrap=None):
    def build():
        algo, d0, d1, claim, _ = alg1_audit(pair)
        return (algo if wrap is None else wrap(algo)), d0, d1, claim

    return build


@register_experiment("lla24.alg1.privacy")
def alg1_privacy(claim, budget):
    """P1 end-to-end through Algorithm 1, statistic 1[output = 0]; exact ε ≈ 0.177 at ε = 2."""
    ref = alg1_audit("P1")[4]["reference_epsilon"]
    return AuditExperiment(
        _alg1_setup("P1", HaltIndicator),
        trials=_pick(budget, 20_000, 200_000, 1_000_000),
        reference_epsilon=ref,
        note="spec 000 §7(a) P1, n=7000, m=16, d=1, eps=2, delta=1e-5",
    )


@register_experiment("lla24.privacy.tau_free")
def tau_free(claim, budget):
    """P2 with an adversarially tiny τ_1 = 10⁻⁶·D_c (privacy must hold for any τ): ε̂ ≈ 0."""
    return AuditExperiment(
        _alg1_setup("P2"),
        trials=_pick(budget, 10_000, 100_000, 1_000_000),
        reference_epsilon=0.0,
        note="spec 000 §7(a) P2 with tau_1 = 1e-6 D_c; the far outlier must be filtered out",
    )


def _alg3_setup(pair, wrap=None):
    def build():
        algo, d0, d1, claim, _ = alg3_audit(pair)
        return (algo if wrap is None else wrap(algo)), d0, d1, claim

    return build


@register_experiment("lla24.alg3.privacy")
def alg3_privacy(claim, budget):
    """Q2 (far outlier, τ = 10⁻⁶) in phase 1 of Algorithm 3 end-to-end: ε̂ ≈ 0."""
    return AuditExperiment(
        _alg3_setup("Q2"),
        trials=_pick(budget, 4_000, 50_000, 400_000),
        reference_epsilon=0.0,
        note="spec 000 §7(a) end-to-end Q2; paper constants, n_1 = 10^4 = K_1, beta = 0",
    )


def _alg2_setup(pair, halting=False, smoothing=0.0):
    def build():
        algo, d0, d1, claim, _ = alg2_audit(pair, smoothing=smoothing)
        if halting:
            return (
                HaltingStep(algo),
                d0,
                d1,
                PrivacyClaim(claim.epsilon / 2.0, 0.0, "user", "replace"),
            )
        return algo, d0, d1, claim

    return build


@register_experiment("lla24.alg2.abovethreshold")
def alg2_abovethreshold(claim, budget):
    """White-box halting step H of Algorithm 2 on Q1 against the pure ε/2 = 1 claim (histogram audit)."""
    return AuditExperiment(
        _alg2_setup("Q1", halting=True),
        trials=_pick(budget, 5_000, 100_000, 400_000),
        method="histogram",
        reference_epsilon=round(_q1_exact()["pure"], 3),
        note="halting pattern alone, claim (eps/2, 0); reference = exact pure eps of the H law",
    )


@register_experiment("lla24.alg3ns.privacy")
def alg3ns_privacy(claim, budget):
    """Q2 through Algorithm 2 with the smoothed oracle of Thm 4.1 (u ~ Unif(B(0, r)) per item): ε̂ ≈ 0.

    The full smoothed Algorithm 3 at paper constants needs T_i ~ 10⁵ steps (β_r = εn√m);
    privacy holds for any β (spec §3.4, §3.7), so the audit runs the smoothed phase at T = 20.
    """
    return AuditExperiment(
        _alg2_setup("Q2", smoothing=1e-3),
        trials=_pick(budget, 4_000, 50_000, 400_000),
        reference_epsilon=0.0,
        note="Algorithm 2 phase with the smoothed oracle (r = 1e-3), Q2",
    )


# --------------------------------------------------------------------------- privacy: white-box values


def _ratio_interval(h0: int, h1: int, n0: int, n1: int) -> tuple[float, float, float]:
    """ln(p1/p0) with a 99% Katz log interval."""
    p0, p1 = h0 / n0, h1 / n1
    se = math.sqrt((1 - p0) / (n0 * p0) + (1 - p1) / (n1 * p1))
    z = stats.norm.ppf(0.995)
    est = math.log(p1 / p0)
    return est, est - z * se, est + z * se


class _Alg1Reference:
    """P1 halting probabilities through Algorithm 1 vs the exact 2(k−1)ε/(20C)."""

    def __init__(self, trials: int, mutant: str | None = None) -> None:
        self.trials, self.mutant = trials, mutant

    def __call__(self, rng):
        algo, d0, d1, _, info = alg1_audit("P1", self.mutant)
        h0 = int(algo.run(d0, rng, self.trials).halted.sum())
        h1 = int(algo.run(d1, rng, self.trials).halted.sum())
        return {
            "log_halt_ratio": _ratio_interval(h0, h1, self.trials, self.trials),
            "formula": 2.0 * (info["k"] - 1) * algo.epsilon / (20.0 * algo.C),
        }


def reference_eps_experiment(budget: str, mutant: str | None = None) -> ValueExperiment:
    """The P1 calibration check of ``lla24.alg1.reference_eps``, optionally on an Algorithm 1 mutant.

    The 99% interval of ln(P(halt | D')/P(halt | D)) must cover the exact ε ≈ 0.177 of the
    reference implementation; M3(c) (score noise Lap(2/ε)) puts it near 1.7 (``inconsistent``).
    """
    algo, _, _, _, info = alg1_audit("P1")
    ref = info["reference_epsilon"]
    return ValueExperiment(
        _Alg1Reference(_pick(budget, 50_000, 200_000, 1_000_000), mutant),
        expected={"log_halt_ratio": ref, "formula": 0.177},
        atol=0.002,
        note=f"P1, C={algo.C}, k={info['k']}; exact eps = (s(D)-s(D'))eps/20; spec worked value 0.177"
        + (f"; mutant {mutant}" if mutant else ""),
    )


@register_experiment("lla24.alg1.reference_eps")
def alg1_reference_eps(claim, budget):
    return reference_eps_experiment(budget)


def _alg1_noise(rng):
    algo, d0, _, _, _ = alg1_audit("P2")
    out = algo.run(d0, rng, 20_000).unprojected[:, 0]  # all users at 0: x̃_1 = x_0 = 0 exactly
    n, var = out.size, float(np.var(out, ddof=1))
    lo, hi = (
        var * (n - 1) / stats.chi2.ppf(0.995, n - 1),
        var * (n - 1) / stats.chi2.ppf(0.005, n - 1),
    )
    ident = [
        s * algo.epsilon * algo.C / (t * math.log(algo.n / algo.delta) ** 2)
        for s, t in zip(algo.sigmas, algo.taus)
    ]
    return {
        "identity_min": min(ident),
        "identity_max": max(ident),
        "sigma_empirical_over_sigma": (
            math.sqrt(var) / algo.sigmas[0],
            math.sqrt(lo) / algo.sigmas[0],
            math.sqrt(hi) / algo.sigmas[0],
        ),
    }


@register_experiment("lla24.alg1.noise_calibration")
def alg1_noise_calibration(claim, budget):
    return ValueExperiment(
        _alg1_noise,
        expected={"identity_min": 100.0, "identity_max": 100.0, "sigma_empirical_over_sigma": 1.0},
        rtol=1e-9,
        note="sigma_i eps C / (tau_i ln^2(n/delta)) per phase, and the output noise std on P2's D",
    )


def _score_sensitivity(rng):
    """Max |s(D) − s(D')| over random replace-one-point neighbours vs 2(C−1)/C, and ε_test."""
    C, worst = 60, 0.0
    for _ in range(40):
        pts = rng.normal(size=(1, C, 2)) * rng.uniform(0.1, 2.0)
        alt = pts.copy()
        alt[0, rng.integers(C)] = rng.normal(size=2) * rng.uniform(0.0, 3.0)
        s0, _ = concentration(pts, np.ones((1, C), dtype=np.int64), 1.0, 2.0)
        s1, _ = concentration(alt, np.ones((1, C), dtype=np.int64), 1.0, 2.0)
        worst = max(worst, abs(float(s0[0] - s1[0])) / (2.0 * (C - 1) / C))
    algo, d0, d1, _, info = alg1_audit("P1")
    k, C1 = info["k"], algo.C
    attained = (2.0 * (k - 1) / C1) / (2.0 * (C1 - 1) / C1)
    eps = 2.0
    return {
        "max_sensitivity_over_bound_le_1": float(worst <= 1.0 + 1e-12),
        "p1_sensitivity_over_bound": attained,
        "eps_test_over_eps": laplace_epsilon(20.0 / eps, sensitivity=2.0) / eps,
    }


@register_experiment("lla24.alg1.score_test")
def alg1_score_test(claim, budget):
    algo, _, _, _, info = alg1_audit("P1")
    k, C = info["k"], algo.C
    return ValueExperiment(
        _score_sensitivity,
        expected={
            "max_sensitivity_over_bound_le_1": 1.0,
            "p1_sensitivity_over_bound": (k - 1) / (C - 1),
            "eps_test_over_eps": 0.1,
        },
        rtol=1e-9,
        note="random neighbouring point sets; P1 attains 2(k-1)/C; Lap(20/eps) on sensitivity 2",
    )


def _alg2_noise(rng):
    algo, d0, _, _, _ = alg2_audit("Q2")
    g = (
        algo.run(d0, rng, 2_000, transcript=True).noisy_gradients[:, :, 0].reshape(-1)
    )  # g_t = 0 exactly
    n, var = g.size, float(np.var(g, ddof=1))
    lo, hi = (
        var * (n - 1) / stats.chi2.ppf(0.995, n - 1),
        var * (n - 1) / stats.chi2.ppf(0.005, n - 1),
    )
    ident = (
        algo.sigma
        * algo.epsilon
        * algo.n_phase
        / (
            algo.tau
            * math.sqrt(algo.steps)
            * (math.log(algo.n_total * algo.d / algo.delta) + algo.epsilon)
        )
    )
    return {
        "identity": ident,
        "sigma_empirical_over_sigma": (
            math.sqrt(var) / algo.sigma,
            math.sqrt(lo) / algo.sigma,
            math.sqrt(hi) / algo.sigma,
        ),
    }


@register_experiment("lla24.alg2.noise_calibration")
def alg2_noise_calibration(claim, budget):
    return ValueExperiment(
        _alg2_noise,
        expected={"identity": 1000.0, "sigma_empirical_over_sigma": 1.0},
        rtol=1e-9,
        note="sigma_i eps n_i/(tau sqrt(T_i) ln(n d e^eps/delta)) and the std of the released g_t",
    )


def halting_law(score: float, K: int, steps: int, epsilon: float) -> np.ndarray:
    """Exact law of Algorithm 2's halting step H for a constant score (spec §7(a) Q1): ``(T+1,)``.

    Index 0 is "never halted" (H = ∞), index t the halt at step t.  With ξ ~ Lap(8/ε) drawn once,
    ``ρ(ξ) = P(s + Lap(16/ε) ≥ 4K/5 + ξ)``; ``P(H = t) = E_ξ[ρ^{t−1}(1 − ρ)]``, ``P(H = ∞) = E_ξ[ρ^T]``.
    """
    b_thr, b_q = ALG2_THRESHOLD_LAPLACE / epsilon, ALG2_QUERY_LAPLACE / epsilon

    def rho(xi):
        return stats.laplace.sf(0.8 * K + xi - score, scale=b_q)

    def moment(f):
        val = 0.0
        for lo, hi in ((-np.inf, 0.0), (0.0, np.inf)):
            val += integrate.quad(
                lambda xi: f(rho(xi)) * stats.laplace.pdf(xi, scale=b_thr), lo, hi, limit=200
            )[0]
        return val

    law = np.empty(steps + 1)
    law[0] = moment(lambda r: r**steps)
    for t in range(1, steps + 1):
        law[t] = moment(lambda r, t=t: r ** (t - 1) * (1 - r))
    return law


def profile_epsilon(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """Smallest ε' with ``Σ max(p − e^ε' q, 0) ≤ δ`` in both directions (discrete laws)."""

    def excess(eps, a, b):
        return float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)))

    best = 0.0
    for a, b in ((p, q), (q, p)):
        lo, hi = 0.0, 20.0
        if excess(lo, a, b) <= delta:
            continue
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if excess(mid, a, b) <= delta else (mid, hi)
        best = max(best, hi)
    return best


def _q1_exact(steps: int = 20, epsilon: float = 2.0) -> dict:
    _, _, _, _, info = alg2_audit("Q1")
    p = halting_law(info["score_d0"], info["K"], steps, epsilon)
    q = halting_law(info["score_d1"], info["K"], steps, epsilon)
    return {
        "p": p,
        "q": q,
        "eps_1e5": profile_epsilon(p, q, 1e-5),
        "pure": float(np.max(np.abs(np.log(p / q)))),
    }


class _Q1Law:
    """Simulated halting step of Algorithm 2 on Q1 vs its exact law (catches the per-step threshold redraw)."""

    def __init__(self, trials: int, mutant: str | None = None) -> None:
        self.trials, self.mutant = trials, mutant

    def __call__(self, rng):
        exact = _q1_exact()
        algo, d0, d1, _, _ = alg2_audit("Q1", self.mutant)
        pvals = []
        for data, law in ((d0, exact["p"]), (d1, exact["q"])):
            h = algo.run(data, rng, self.trials).halt_step
            obs = np.bincount(h, minlength=law.size)
            expected = law / law.sum() * self.trials
            bins = expected >= 5  # pool sparse cells
            o = np.r_[obs[bins], obs[~bins].sum()]
            e = np.r_[expected[bins], expected[~bins].sum()]
            keep = e > 0
            pvals.append(stats.chisquare(o[keep], e[keep] * o[keep].sum() / e[keep].sum()).pvalue)
        return {
            "halting_law_fits": float(min(pvals) > 1e-4),
            "eps_exact_delta_1e-5": exact["eps_1e5"],
        }


@register_experiment("lla24.alg2.reference_eps")
def alg2_reference_eps(claim, budget):
    return ValueExperiment(
        _Q1Law(_pick(budget, 5_000, 200_000, 400_000)),
        expected={"halting_law_fits": 1.0, "eps_exact_delta_1e-5": 0.44},
        rtol=0.15,
        note="Q1: K=10^4, T=20, eps=2; exact law by quadrature; spec [PROTOTYPE] 0.44 at delta=1e-5 "
        "(our k gives s(D)-4K/5 as close to -1 as K allows)",
    )


# --------------------------------------------------------------------------- rates: experiment functions


def alg3_risk(
    value,
    rng,
    param="n",
    n=32000,
    m=16,
    d=4,
    epsilon=4.0,
    delta=1e-7,
    alpha0=0.4,
    alpha_exp=-1.0,
    v0=4000.0,
    noise_mult=1.0,
    normalised=False,
    smoothed=False,
    mutant=None,
):
    """Excess risk of Algorithm 3 (relaxed, one trial) on H1 (or H3 if ``smoothed``), α = α₀(v/v₀)^a."""
    kw = {"n": n, "m": m, "d": d, "epsilon": epsilon}
    kw[param] = int(value) if param in ("n", "m", "d") else float(value)
    alpha = min(1.0, alpha0 * (value / v0) ** alpha_exp)
    if smoothed:
        inst = AbsoluteCubeInstance(kw["d"], alpha=alpha)
        algo = SmoothedAlgorithm3.from_theorem(
            kw["n"],
            kw["m"],
            kw["d"],
            kw["epsilon"],
            delta,
            1.0,
            0.0,
            2.0,
            loss=inst.loss,
            constants="relaxed",
            noise_mult=noise_mult,
        )
    else:
        inst = LinearHypercubeInstance(kw["d"], alpha=alpha)
        algo = Algorithm3.from_theorem(
            kw["n"],
            kw["m"],
            kw["d"],
            kw["epsilon"],
            delta,
            1.0,
            0.0,
            1.0,
            diameter=1.0,
            constants="relaxed",
            noise_mult=noise_mult,
            mutant=mutant,
        )
    data = inst.sample(kw["n"], kw["m"], rng)
    theta = algo.run(data, rng, 1).theta
    risk = inst.excess_risk(theta)
    if normalised:
        risk = risk / (inst.radius * float(np.linalg.norm(inst.mean)) if not smoothed else alpha)
    return float(np.mean(risk))


RT3N_LEVEL = 0.6
"""Level for Algorithm 3's mean normalised risk r at RT-3n's n = 8000 point: the spec §7(b)
[PROTOTYPE] band r ∈ [0.35, 0.50] plus 0.1 slack (chance level, a random direction, is r = 1)."""


class Alg3Level:
    """Level check on RT-3n's instance: mean normalised risk r of ``reps`` runs at one n vs ``level``.

    Returns the mean r with its 95% t interval and ``below_level`` (1 when the upper end is below
    ``level``).  The exponent of RT-3n cannot see a noise bug that puts r at chance level at every n
    of the sweep (then r is flat again); the level can.
    """

    def __init__(
        self, reps: int = 30, n: int = 8000, mutant: str | None = None, level: float = RT3N_LEVEL
    ) -> None:
        self.reps, self.n, self.mutant, self.level = reps, n, mutant, level

    def __call__(self, rng):
        r = np.array(
            [
                alg3_risk(
                    self.n, rng, alpha0=0.4, alpha_exp=-1.0, normalised=True, mutant=self.mutant
                )
                for _ in range(self.reps)
            ]
        )
        half = stats.t.ppf(0.975, r.size - 1) * r.std(ddof=1) / math.sqrt(r.size)
        mean = float(r.mean())
        return {
            "normalised_risk": (mean, mean - half, mean + half),
            "below_level": float(mean + half < self.level),
        }


def alg1_risk(
    value,
    rng,
    param="n",
    n=16000,
    m=16,
    d=4,
    epsilon=10.0,
    delta=1e-6,
    alpha0=0.5,
    alpha_exp=-0.5,
    v0=4000.0,
    noise_mult=1.0,
    eta_const=300.0,
    normalised=False,
):
    """Excess risk of Algorithm 1 (relaxed, c_η = 300, one trial) on H1, α = α₀(v/v₀)^a (RT-5)."""
    kw = {"n": n, "m": m, "d": d, "epsilon": epsilon}
    kw[param] = int(value) if param in ("n", "m", "d") else float(value)
    alpha = min(1.0, alpha0 * (value / v0) ** alpha_exp)
    inst = LinearHypercubeInstance(kw["d"], alpha=alpha)
    algo = Algorithm1.from_theorem(
        kw["n"],
        kw["m"],
        kw["d"],
        kw["epsilon"],
        delta,
        1.0,
        None,
        1.0,
        diameter=1.0,
        constants="relaxed",
        eta_const=eta_const,
        noise_mult=noise_mult,
    )
    theta = algo.run(inst.sample(kw["n"], kw["m"], rng), rng, 1).theta
    risk = inst.normalised_risk(theta) if normalised else inst.excess_risk(theta)
    return float(np.mean(risk))


def sgd_pair_distance(value, rng, d=10, eta=0.01, lipschitz=1.0, pairs=400):
    """RT-1: RMS distance of two independent one-pass SGD average iterates on the α = 0 H1 instance.

    The linear loss has gradient −z, so y_t = y_{t−1} + ηz_t; the domain is large enough that
    the projection never binds (spec §5.3; E‖x̄ − ȳ‖² = η²L²(T+1)(2T+1)/(3T)).
    """
    T = int(value)
    z = lipschitz / math.sqrt(d) * rng.choice([-1.0, 1.0], size=(2, pairs, T, d))
    avg = eta * np.cumsum(z, axis=2).mean(axis=2)
    return float(np.sqrt(np.mean(np.sum((avg[0] - avg[1]) ** 2, axis=-1))))


def minibatch_variance(value, rng, n=4000, m=16, d=8, alpha=0.3, batches=2000):
    """RT-2: E‖g − ḡ‖² of a without-replacement minibatch of K user means, over the (1 − (K−1)/(n−1)) factor."""
    K = int(value)
    means = LinearHypercubeInstance(d, alpha=alpha).user_means(n, m, rng)
    full = means.mean(axis=0)
    idx = np.argsort(rng.random((batches, n)), axis=1)[:, :K]
    g = means[idx].mean(axis=1)
    return float(np.mean(np.sum((g - full) ** 2, axis=-1)) / (1 - (K - 1) / (n - 1)))


def alg3_count(
    value,
    rng,
    param="n",
    n=1e11,
    m=1e3,
    d=10.0,
    epsilon=1.0,
    delta=1e-12,
    beta=1e4,
    k_const=1.0,
    smoothed=False,
):
    """RT-6: dry-run gradient count Σ T_i K_i m of Algorithm 3 (β = εn√m for the smoothed variant)."""
    kw = {"n": n, "m": m, "d": d, "epsilon": epsilon, "beta": beta}
    kw[param] = float(value)
    if smoothed:
        kw["beta"] = kw["epsilon"] * kw["n"] * math.sqrt(kw["m"])
    return alg3_gradient_count(
        kw["n"], kw["m"], kw["d"], kw["epsilon"], delta, kw["beta"], k_const=k_const
    )


def sc_count(value, rng, m=1e3, d=10.0, epsilon=1.0, delta=1e-12, beta=1e4, k_const=1.0):
    """Dry-run gradient count of the §2.5 strongly convex wrapper: k blocks of n/k users."""
    n = float(value)
    blocks = math.ceil(math.log2(math.log2(n))) + 1
    return blocks * alg3_gradient_count(n / blocks, m, d, epsilon, delta, beta, k_const=k_const)


def alg1_count(value, rng, m=16, d=4, epsilon=2.0, delta=1e-6):
    """Gradient count Σ_i n_i m of Algorithm 1's schedule (also checked ≤ nm)."""
    n = int(value)
    algo = Algorithm1.from_theorem(n, m, d, epsilon, delta)
    count = algo.gradient_count
    if count > n * m:
        raise AssertionError(f"Algorithm 1 uses {count} > nm = {n * m} gradients")
    return float(count)


def acsa_iterations(value, rng, d=20, tol=1e-6):
    """RT-7: multi-stage AC-SA iterations to a 1e-6 relative gap on a quadratic with spectrum [1, κ]."""
    kappa, lam = float(value), 1.0
    eig = np.geomspace(lam, kappa, d)
    x0 = np.ones(d)
    gap0 = 0.5 * np.sum(eig * x0**2)
    x = x_ag = x0[None].copy()
    stage = int(math.ceil(ACSA_STAGE * math.sqrt(kappa / lam)))
    local, it = 0, 0
    while 0.5 * np.sum(eig * x_ag[0] ** 2) > tol * gap0:
        local, it = local + 1, it + 1
        if local > stage:
            x, local = x_ag.copy(), 1
        a, w_ag, w_x, g = acsa_coefficients(local, kappa, lam)
        md = w_ag * x_ag + w_x * x
        x = (a * lam * md + ((1 - a) * lam + g) * x - a * (eig * md)) / (lam + g)
        x_ag = a * x + (1 - a) * x_ag
    return float(it)


def smoothing_curvature(value, rng, d=4, samples=200_000):
    """RT-8: smoothness of f_r for f(x) = ‖x‖₁/√d (L = 1): |∂₁f_r(h e₁) − ∂₁f_r(−h e₁)|/(2h), h = r/20.

    ∂₁f_r(x) = E sign(x₁ + u₁)/√d, estimated with common random numbers u ~ Unif(B(0, r)).
    """
    r = float(value)
    h = r / 20.0
    u1 = uniform_ball(rng, (samples,), d, r)[:, 0]
    diff = np.mean(np.sign(h + u1) - np.sign(-h + u1)) / math.sqrt(d)
    return float(abs(diff) / (2 * h))


def oracle_risk(value, rng, m=16, d=4, alpha0=0.2, v0=1000.0):
    """Non-private ERM (ρ·ḡ/‖ḡ‖) on H1 with α = α₀(n/v₀)^{-1/2}: the statistical lower-bound rate."""
    n = int(value)
    inst = LinearHypercubeInstance(d, alpha=alpha0 * (n / v0) ** -0.5)
    g = inst.user_means(n, m, rng).mean(axis=0)
    theta = inst.radius * g / max(float(np.linalg.norm(g)), 1e-300)
    return float(inst.excess_risk(theta[None])[0])


def sc_risk(
    value, rng, param="n", n=8000, m=16, d=2, epsilon=8.0, delta=1e-7, noise_mult=0.0, alpha=0.3
):
    """Spec §2.5 strongly convex wrapper (relaxed) on H4, excess (μ/2)‖θ − Ez‖² (RT-10); sweeps n or m."""
    n, m = (int(value), m) if param == "n" else (n, int(value))
    inst = QuadraticHypercubeInstance(d, alpha=alpha, radius=1.0)
    algo = StronglyConvexAlgorithm3.from_theorem(
        n,
        m,
        d,
        epsilon,
        delta,
        2.0,
        1.0,
        1.0,
        strong_convexity=1.0,
        loss=SquaredDistanceLoss(1.0),
        constants="relaxed",
        noise_mult=noise_mult,
    )
    return float(inst.excess_risk(algo.run(inst.sample(n, m, rng), rng, 1).theta)[0])


# --------------------------------------------------------------------------- rates: registrations

_GRID_N = {
    "quick": [4000, 8000, 16000, 40000],
    "standard": [4000, 8000, 16000, 32000, 64000],
    "full": [4000, 8000, 16000, 32000, 64000],
}


def _rate(claim, budget, fn, param, values, reps, fixed, note, baseline=None):
    return RateExperiment.for_claim(
        claim,
        fn,
        param,
        values[budget] if isinstance(values, dict) else values,
        replicates=_pick(budget, *reps),
        fixed=fixed,
        note=note,
        baseline=baseline,
    )


def _h1_origin(alpha0, alpha_exp, v0=4000.0, normalised=False) -> Baseline:
    """Outputting the initial point θ₀ = 0 on H1 with α = α₀(n/v₀)^a: excess ‖E z‖ = α
    (L = radius = 1), normalised risk 1."""
    if normalised:
        return Baseline("outputting the initial point (the origin)", 1.0)
    return Baseline(
        "outputting the initial point (the origin)",
        functools.partial(_h1_alpha, alpha0=alpha0, alpha_exp=alpha_exp, v0=v0),
    )


def _h1_alpha(value, alpha0, alpha_exp, v0):
    """The H1 signal α at grid value ``value`` (as :func:`alg3_risk` and :func:`alg1_risk`)."""
    return min(1.0, alpha0 * (value / v0) ** alpha_exp)


@register_experiment("lla24.alg3.risk.priv")
def alg3_risk_priv(claim, budget):
    return _rate(
        claim,
        budget,
        alg3_risk,
        "n",
        _GRID_N,
        (2, 20, 30),
        {"param": "n", "alpha0": 0.4, "alpha_exp": -1.0},
        "RT-3n: Alg 3 relaxed, H1 m=16 d=4 eps=4 delta=1e-7, alpha = 0.4 (4000/n)",
        baseline=_h1_origin(0.4, -1.0),
    )


@register_experiment("lla24.alg3.risk.stat")
def alg3_risk_stat(claim, budget):
    return _rate(
        claim,
        budget,
        alg3_risk,
        "n",
        _GRID_N,
        (2, 20, 30),
        {"param": "n", "alpha0": 0.05, "alpha_exp": -0.5, "noise_mult": 0.0},
        "RT-4n: Alg 3 relaxed with noise_mult = 0 (non-private diagnostic), alpha = 0.05 (4000/n)^1/2",
        baseline=_h1_origin(0.05, -0.5),
    )


@register_experiment("lla24.alg1.risk")
def alg1_risk_claim(claim, budget):
    grid = {
        "quick": [4000, 8000, 16000, 40000],
        "standard": _GRID_N["standard"],
        "full": _GRID_N["full"],
    }
    return _rate(
        claim,
        budget,
        alg1_risk,
        "n",
        grid,
        (3, 10, 20),
        {"param": "n"},
        "RT-5n: Alg 1 relaxed c_eta=300, H1 m=16 d=4 eps=10 delta=1e-6, alpha=0.5(4000/n)^1/2",
        baseline=_h1_origin(0.5, -0.5),
    )


@register_experiment("lla24.alg1.suboptimality")
def alg1_suboptimality(claim, budget):
    grid = {
        "quick": [4000, 8000, 16000, 40000],
        "standard": [4000, 8000, 16000, 32000, 64000],
        "full": [4000, 8000, 16000, 32000, 64000],
    }
    return _rate(
        claim,
        budget,
        alg1_risk,
        "n",
        grid,
        (3, 10, 20),
        {"param": "n", "alpha_exp": -1.0, "normalised": True},
        "RT-5b: Alg 1 relaxed on Alg 3's critical family alpha = 0.5 (4000/n); its normalised risk r must "
        "rise with n. Band [0, 1] around the asymptotic sqrt(n eps) gap exponent 1/2: consistent means r "
        "rises significantly (r <= 1 saturates, so the spec's prototype saw +0.20). Alg 3 on the same "
        "family stays flat (lla24.lb.lsa21.priv).",
    )


@register_experiment("lla24.lb.lsa21.priv")
def lb_priv(claim, budget):
    return _rate(
        claim,
        budget,
        alg3_risk,
        "n",
        _GRID_N,
        (2, 20, 30),
        {"param": "n", "alpha0": 0.4, "alpha_exp": -1.0, "normalised": True},
        "normalised risk r of Alg 3 on the critical family alpha ~ 1/n stays flat (exponent 0): the "
        "private lower-bound rate is attained and not beaten",
        baseline=_h1_origin(0.4, -1.0, normalised=True),
    )


@register_experiment("lla24.lb.lsa21.stat")
def lb_stat(claim, budget):
    return _rate(
        claim,
        budget,
        oracle_risk,
        "n",
        [1000, 4000, 16000, 64000],
        (30, 200, 400),
        {},
        "non-private ERM on H1 at alpha ~ (nm)^-1/2: even without privacy the excess falls only as n^-1/2",
    )


@register_experiment("lla24.lemma23.stability")
def lemma23(claim, budget):
    grid = _pick(budget, [64, 256, 1024, 4096], *[[64, 256, 1024, 4096, 16384]] * 2)
    return _rate(
        claim,
        budget,
        sgd_pair_distance,
        "T",
        grid,
        (3, 10, 20),
        {"pairs": _pick(budget, 100, 400, 800)},
        "RT-1: alpha = 0 H1, d = 10, eta = 0.01",
    )


@register_experiment("lla24.lemma35.variance")
def lemma35(claim, budget):
    return _rate(
        claim,
        budget,
        minibatch_variance,
        "K",
        [10, 20, 40, 80, 160],
        (3, 10, 20),
        {"batches": _pick(budget, 300, 2000, 4000)},
        "RT-2: H1 alpha=0.3, n=4000, d=8, without replacement, divided by 1-(K-1)/(n-1)",
    )


@register_experiment("lla24.lemmaD1.smoothing")
def lemma_d1(claim, budget):
    return _rate(
        claim,
        budget,
        smoothing_curvature,
        "r",
        [1e-3, 1e-2, 1e-1, 1.0],
        (3, 10, 20),
        {"samples": _pick(budget, 50_000, 400_000, 1_000_000)},
        "RT-8: f = |x|_1/sqrt(d), d = 4; smoothness of f_r ~ L sqrt(d)/r",
    )


_SC_GRID = {
    "quick": [8000, 16000, 32000, 80000],
    "standard": [8000, 16000, 32000, 64000, 128000],
    "full": [8000, 16000, 32000, 64000, 128000, 256000],
}


_SC_QUICK_M = [1, 2, 4, 10]
"""Quick RT-10 sweeps m at n = 8000 (the smallest n at which the wrapper's blocks run a phase;
0.1-0.5 s per run): the n sweep costs 3-9 s per run at n = 8·10^4 alone.  Both regimes' bounds
fall as 1/m."""


_SC_STAT_QUICK = (
    "the quick m sweep of the non-private wrapper is pre-asymptotic: over seeds "
    "its slope ranges "
    "-0.96 to -1.70 with intervals that straddle or miss the band; the standard n "
    "sweep checks it"
)


def _sc_origin() -> Baseline:
    """Outputting the initial point θ₀ = 0 on RT-10's H4 (d = 2, α = 0.3): excess
    (μ/2)‖E z‖² = α²/2."""
    inst = QuadraticHypercubeInstance(2, alpha=0.3, radius=1.0)
    origin = float(inst.excess_risk(np.zeros((1, 2)))[0])
    return Baseline("outputting the initial point (the origin)", origin)


def _sc(claim, budget, noise_mult, note):
    if budget == "quick":
        return RateExperiment.for_claim(
            claim,
            sc_risk,
            "m",
            _SC_QUICK_M,
            replicates=4,
            fixed={"param": "m", "n": 8000, "noise_mult": noise_mult},
            note=note + "; quick: m sweep at n = 8000 (claimed m exponent -1). With "
            "privacy noise the wrapper's excess is flat in m here (slopes "
            "0.0-0.4 over seeds), a finding about the spec's wrapper, not "
            "the paper",
            baseline=_sc_origin(),
        )
    return _rate(
        claim,
        budget,
        sc_risk,
        "n",
        _SC_GRID,
        (3, 10, 20),
        {"noise_mult": noise_mult},
        note,
        baseline=_sc_origin(),
    )


@register_experiment("lla24.alg3sc.risk.stat", skip={"quick": _SC_STAT_QUICK})
def sc_risk_stat(claim, budget):
    return _sc(
        claim,
        budget,
        0.0,
        "RT-10 (stat): spec 2.5 wrapper (not from the paper), H4, noise_mult = 0",
    )


@register_experiment("lla24.alg3sc.risk.priv")
def sc_risk_priv(claim, budget):
    return _sc(
        claim,
        budget,
        1.0,
        "RT-10 (priv): spec 2.5 wrapper (not from the paper), H4, relaxed constants",
    )


_RT9 = {
    "standard": ({"m": 1, "epsilon": 10.0}, [2000, 4000, 8000, 20000], 2),
    "full": ({"m": 16, "epsilon": 4.0}, [4000, 8000, 16000, 40000], 10),
}
"""RT-9 sweeps (smoothed Algorithm 3, relaxed, H3, d = 2): ``full`` is the spec's (n from 4e3 over one
decade; each run takes 30 s at n = 4000 and grows ~n²); ``standard`` is the smallest configuration in
which a phase runs at n = 2000 (m = 1, ε = 10: 1.7 / 5.6 / 15 s per run at n = 2e3 / 4e3 / 8e3 on a
loaded machine).  It is pre-asymptotic: at n = 2000 the normalised risk is ~0.85, near the start
point's level 1, so the measured slopes (priv −0.90 [−1.69, −0.11], stat −1.31 [−1.59, −1.03], seed 0)
mix the descent from the trivial level with the rate."""

_RT9_QUICK = (
    "RT-9 needs >= 8 runs of smoothed Algorithm 3 (4 grid points over a decade, 2 replicates) and the "
    "cheapest run in which a phase executes takes ~2 s (n = 2000, m = 1, eps = 10: beta_r = eps n sqrt(m) "
    "gives T_1 ~ 1500 AC-SA steps); no quick sweep fits the ~2 s budget, see the standard/full budgets"
)


def _rt9(claim, budget, alpha_exp, noise_mult, note):
    fixed, grid, reps = _RT9[budget]
    return RateExperiment.for_claim(
        claim,
        alg3_risk,
        "n",
        grid,
        replicates=reps,
        fixed={
            "param": "n",
            "smoothed": True,
            "d": 2,
            "alpha0": 0.4,
            "alpha_exp": alpha_exp,
            "v0": grid[0],
            "noise_mult": noise_mult,
            **fixed,
        },
        note=f"RT-9 ({note}): smoothed Alg 3 relaxed on H3, d=2, m={fixed['m']}, "
        f"eps={fixed['epsilon']:g}, alpha = 0.4 ({grid[0]}/n)^{-alpha_exp:g}",
    )


@register_experiment("lla24.alg3ns.risk.priv", skip={"quick": _RT9_QUICK})
def alg3ns_risk_priv(claim, budget):
    return _rt9(claim, budget, -1.0, 1.0, "private regime")


@register_experiment("lla24.alg3ns.risk.stat", skip={"quick": _RT9_QUICK})
def alg3ns_risk_stat(claim, budget):
    return _rt9(
        claim, budget, -0.5, 0.0, "statistical term, noise_mult = 0 (non-private diagnostic)"
    )


@register_experiment("lla24.lemmaB3.sgd")
def lemma_b3(claim, budget):
    return ValueExperiment(
        _lemma_b3,
        expected={"bound_holds": 1.0},
        note="mean excess of average-iterate SGD on H1 "
        "(alpha=0.3, d=4) <= |y - x_0|^2/(eta T) + eta L^2 at y = x* over an (eta, T) grid",
    )


def _lemma_b3(rng):
    inst = LinearHypercubeInstance(4, alpha=0.3)
    ok = True
    for eta in (1e-3, 1e-2, 1e-1):
        for T in (16, 64, 256):
            z = inst.sample(200, T, rng).x  # 200 independent runs, one pass over T items
            y = np.zeros((200, 4))
            total = np.zeros_like(y)
            for t in range(T):
                y = y + eta * z[:, t]
                norm = np.linalg.norm(y, axis=1, keepdims=True)
                y = y * np.minimum(1.0, inst.radius / np.maximum(norm, 1e-300))
                total += y
            excess = float(np.mean(inst.excess_risk(total / T)))
            bound = float(np.sum(inst.theta_star**2)) / (eta * T) + eta * 1.0
            ok &= excess <= bound
    return {"bound_holds": float(ok)}


# --------------------------------------------------------------------------- complexity (dry runs)

_DRY = {
    "n": np.geomspace(1e10, 1e13, 5),
    "m": np.geomspace(1e2, 1e5, 5),
    "beta": np.geomspace(1e4, 1e10, 5),
    "epsilon": np.geomspace(0.25, 4.0, 5),
}


@register_experiment("lla24.alg3.complexity.stat")
def alg3_complexity_stat(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "n",
        list(_DRY["n"]),
        replicates=2,
        fixed={"param": "n"},
        note="RT-6 dry run: beta=1e4, m=1e3, d=10, eps=1, delta=1e-12, K constant 500 -> 1",
    )


@register_experiment("lla24.alg3.complexity.headline")
def alg3_complexity_headline(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "m",
        list(_DRY["m"]),
        replicates=2,
        fixed={"param": "m", "n": 1e11},
        note="RT-6 dry run, m sweep at n = 1e11 (n^7 >= m)",
    )


@register_experiment("lla24.alg3.complexity.priv")
def alg3_complexity_priv(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "n",
        list(np.geomspace(1e6, 1e9, 5)),
        replicates=2,
        fixed={"param": "n", "d": 1e12},
        note="RT-6 private branch: d = 1e12 so n <= d/eps^2",
    )


@register_experiment("lla24.alg3.complexity.C1")
def alg3_complexity_c1(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "m",
        list(np.geomspace(1e40, 1e44, 5)),
        replicates=2,
        fixed={"param": "m", "n": 1e4, "d": 10.0},
        note="dry run with m >> n^7 (n = 1e4): the T_i/eps floor of K_i dominates",
    )


@register_experiment("lla24.alg3sc.complexity")
def alg3sc_complexity(claim, budget):
    return RateExperiment.for_claim(
        claim,
        sc_count,
        "n",
        list(_DRY["n"]),
        replicates=2,
        note="dry run of the spec 2.5 wrapper (k blocks of n/k users), RT-6 parameters",
    )


@register_experiment("lla24.alg3ns.complexity")
def alg3ns_complexity(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "n",
        list(np.geomspace(1e8, 1e11, 5)),
        replicates=2,
        fixed={"param": "n", "smoothed": True},
        note="RT-6ns dry run, beta = eps n sqrt(m)",
    )


@register_experiment("lla24.alg3ns.complexity.omitted")
def alg3ns_complexity_omitted(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_count,
        "m",
        list(np.geomspace(1e30, 1e34, 5)),
        replicates=2,
        fixed={"param": "m", "n": 1e6, "smoothed": True},
        note="smoothed dry run with m >> eps^7 n^(5/2): the term the paper omits",
    )


@register_experiment("lla24.alg1.complexity")
def alg1_complexity(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg1_count,
        "n",
        [10**5, 10**6, 10**7, 10**8],
        replicates=2,
        note="sum_i n_i m of Algorithm 1's schedule (asserted <= nm)",
    )


@register_experiment("lla24.lemmaC4.acsa")
def lemma_c4(claim, budget):
    return RateExperiment.for_claim(
        claim,
        acsa_iterations,
        "kappa",
        [10.0, 100.0, 1000.0, 10000.0],
        variable="beta_over_lambda",
        replicates=2,
        fixed={"d": 2, "tol": 1e-10},
        note="RT-7: noise-free multi-stage AC-SA on a quadratic with eigenvalues {1, kappa}, to "
        "a 1e-10 "
        "relative gap (at the spec's 1e-6 the fit is pre-asymptotic: slope 0.38)",
    )
