"""Experiments for the claims of Lowy, Liu & Asi (2024), spec 000 (paper id ``lowy-liu-asi-2024``).

Privacy claims: audits at the spec §7(a) pairs (ε = 2) and white-box value checks.  Rate
claims: the sweeps of spec §7(b) (RT-1 … RT-10) on the hard instances H1/H3/H4, in relaxed
constants (spec §2.6; the paper's constants leave the error at chance level at any feasible n,
spec §4.8) or as data-free schedule dry runs for gradient counts.  ``quick`` sweeps are tiny
and may honestly come out ``inconclusive``; RT-9 (smoothed Algorithm 3) has no sweep that fits
the quick budget and is ``skipped`` there (standard and full run it).  Exponents, bounds and
margins come from the claims (:meth:`RateExperiment.for_claim`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpclaims.algorithms.lowy_liu_asi_2024 import (
    Algorithm1,
    Algorithm2,
    Algorithm3,
    SmoothedAlgorithm3,
    StronglyConvexAlgorithm3,
    alg3_gradient_count,
)
from dpclaims.algorithms.lowy_liu_asi_2024.core import acsa_coefficients, concentration
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import ACSA_STAGE
from dpclaims.claims.experiments import BySize, register_experiment
from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.hardinstances.linear import AbsoluteCubeInstance, LinearHypercubeInstance
from dpclaims.hardinstances.quadratic import QuadraticHypercubeInstance
from dpclaims.losses import SquaredDistanceLoss, project_l2_ball, uniform_ball
from dpclaims.privacy import PrivacyClaim, laplace_epsilon
from dpclaims.problem import Problem
from dpclaims.rates.caveats import Baseline
from dpclaims.stats import (
    log_ratio_interval,
    mean_interval,
    pooled_chisquare_pvalue,
    std_ratio_interval,
)
from dpclaims.targets.lowy_liu_asi_2024 import (
    HaltIndicator,
    HaltingTime,
    alg1_audit,
    alg1_halt_claim,
    alg2_audit,
    alg3_audit,
    audit_builder,
    gaussian_dp_epsilon,
    halting_time_claim,
    q1_exact,
)
from dpclaims.vocabulary import Budget

# --------------------------------------------------------------------------------- privacy: audits


# Every Algorithm-1/2/3 privacy claim is audited in parts, each on the same pair and statistic
# (white-box halt bit or halting time) and each named by what it holds the mechanism to: the
# paper's theorem, (ε, δ) = (2, δ); the paper's intermediate guarantee for the released
# statistic (eq. (2) of the proof of Theorem B.1, eq. (9) of the proof of Theorem C.1); and a
# bound derived here, not the paper's, that the pair comes within 2× of (so the audit would catch
# a 2× calibration error).  A derived bound is labelled as such in every report: it is never
# printed as "claimed".

_DERIVED = "derived bound, not the paper's"


def _alg1_gaussian_part(algorithm: Algorithm1) -> float:
    """ε at δ of x_1's Gaussian release (μ = ε/(50 ln²(n/δ))-GDP): the later phases see the moved
    user only through x_1."""
    mu = algorithm.epsilon / (50.0 * math.log(algorithm.n / algorithm.delta) ** 2)
    return gaussian_dp_epsilon(mu, algorithm.delta)


def alg1_eq2_claim(algorithm: Algorithm1) -> PrivacyClaim:
    """The halt bit under the paper's own accounting: the score test is ε/4-DP (eq. (2) of the
    proof of Theorem B.1), plus x_1's Gaussian part."""
    return PrivacyClaim(
        epsilon=algorithm.epsilon / 4.0 + _alg1_gaussian_part(algorithm),
        delta=algorithm.delta,
        source="Lowy-Liu-Asi 2024, proof of Theorem B.1, eq. (2), plus x_1's Gaussian part",
    )


def halting_pattern_claim(algorithm) -> PrivacyClaim:
    """The halting pattern of a phase is ε/2-DP (eq. (9) of the proof of Theorem C.1:
    AboveThreshold, Lemma A.9); the halting time is a function of it."""
    return PrivacyClaim(
        epsilon=algorithm.epsilon / 2.0,
        delta=0.0,
        source="Lowy-Liu-Asi 2024, proof of Theorem C.1, eq. (9)",
    )


_ALG1_DERIVED = (
    "derived here: the score test s_1 + Lap(20/eps) on sensitivity 2(C-1)/C is "
    "eps(C-1)/(10C)-DP (the paper books eps/4 for it), plus x_1's Gaussian part"
)
_HALTING_DERIVED = (
    "derived here for scores constant over the steps (every linear-loss full-batch pair, this "
    "one among them): a score shift ds is a shift of the threshold noise Lap(8/eps), so the "
    "halting time is ds*eps/8 <= eps(K-1)/(4K)-DP.  It bounds this family only: scores that "
    "move both ways (possible under Theorem C.1's convex losses and subsampled batches) can "
    "cost the halting pattern the full eps/2 of eq. (9)"
)


@dataclass(frozen=True)
class _Bound:
    """One part of a privacy audit: what the pair is held to (``claim_of(algorithm)``; None for
    the paper's theorem), its label in reports (``bound``: "" for the theorem) and its note."""

    name: str
    claim_of: Callable[[Any], PrivacyClaim] | None
    bound: str
    note: str


def _privacy_audit(
    audit, pair: str, *, wrap, bounds, trials, reference, reference_note, setting, **options
) -> CombinedExperiment:
    """The pair ``audit(pair, **options)`` audited against each of ``bounds`` in turn."""
    parts = {
        b.name: AuditExperiment(
            audit_builder(audit, pair, wrap=wrap, claim_of=b.claim_of, **options),
            trials=trials,
            reference_epsilon=reference,
            reference_note=reference_note,
            bound=b.bound,
            note=f"{setting}; {b.note}",
        )
        for b in bounds
    }
    return CombinedExperiment(
        parts,
        note=f"{setting}; audited against "
        + ", ".join(f"{b.name} ({b.bound or 'the paper'})" for b in bounds),
    )


def _theorem(theorem: str) -> _Bound:
    return _Bound(
        "theorem",
        None,
        "",
        f"held to the paper's claim, {theorem}; the pair leaks a small share of it (its exact "
        "eps above), so this part alone can catch only a violation many times that leakage (its "
        "reach)",
    )


_EQ9 = _Bound(
    "eq. (9) halting pattern",
    halting_pattern_claim,
    "the paper's eq. (9)",
    "held to the paper's intermediate guarantee: the halting pattern is eps/2-DP (proof of "
    "Theorem C.1, eq. (9); AboveThreshold, Lemma A.9), and the halting time is a function of it",
)
_HALTING = _Bound("derived", halting_time_claim, _DERIVED, _HALTING_DERIVED)


@register_experiment("lla24.alg1.privacy")
def audit_alg1_p1_halting(claim, budget):
    """P1 end-to-end through Algorithm 1, statistic 1[output = 0]: against Theorem B.1's (2, δ),
    the halt bit's ε/4 of eq. (2) and the derived ε(C−1)/(10C) (plus the Gaussian part).

    Exact ε of the pair: (s(D) − s(D'))·ε/20 = 2(k−1)ε/(20C) ≈ 0.177 at ε = 2 (both scores at or
    above the threshold 4C/5, so the Laplace lower tails have exactly this ratio).
    """
    setup = alg1_audit("P1")
    bounds = [
        _theorem("Theorem B.1"),
        _Bound(
            "eq. (2) halt bit",
            alg1_eq2_claim,
            "the paper's eq. (2) plus x_1's Gaussian part",
            "held to the paper's accounting of the halt bit: the score test is eps/4-DP (proof "
            "of Theorem B.1, eq. (2)), plus x_1's Gaussian part "
            f"{_alg1_gaussian_part(setup.algorithm):.2g} (the later phases see the moved user "
            "only through x_1)",
        ),
        _Bound("derived", alg1_halt_claim, _DERIVED, _ALG1_DERIVED),
    ]
    return _privacy_audit(
        alg1_audit,
        "P1",
        wrap=HaltIndicator,
        bounds=bounds,
        trials=BySize(quick=20_000, standard=200_000, full=1_000_000)[budget],
        reference=setup.info["reference_epsilon"],
        reference_note="exact eps of P1's halt bit: (s(D) - s(D'))*eps/20 = 2(k-1)eps/(20C)",
        setting="the spec's privacy audit on the pair whose two clusters straddle the halting "
        "threshold (P1 in the spec), n=7000, m=16, d=1, eps=2, delta=1e-5, white-box halt bit",
    )


def _halting_reference(steps: int) -> float:
    """Exact pure ε of Q1's halting time at ``steps`` steps (quadrature; = Δs·ε/8 = 0.4435)."""
    return round(q1_exact(steps=steps)["pure"], 4)


_HALTING_BOUNDS = (_EQ9, _HALTING)


@register_experiment("lla24.privacy.tau_free")
def audit_alg2_q1_tiny_tau(claim, budget):
    """Q1 through Algorithm 2 with an adversarially tiny τ = 10⁻⁶ (privacy holds for any τ).

    Q1's users are identical or at distance 1 ≫ 2τ, so its scores, hence its halting law and
    exact ε (0.4435, as at τ = 0.1), do not depend on τ; σ ∝ τ makes the Gaussian part vanish.
    """
    setup = alg2_audit("Q1", tau=1e-6)
    return _privacy_audit(
        alg2_audit,
        "Q1",
        wrap=HaltingTime,
        bounds=[_theorem("Theorem C.1 at tau = 1e-6"), *_HALTING_BOUNDS],
        trials=BySize(quick=30_000, standard=200_000, full=1_000_000)[budget],
        reference=_halting_reference(setup.algorithm.steps),
        reference_note="exact pure eps of Q1's halting-time law by quadrature (halting_law)",
        setting="the spec's privacy audit on the two-cluster pair at the halting threshold (Q1 "
        "in the spec) with tau = 1e-6 (Algorithm 2, K = 10^4, T = 20), white-box halting time",
        tau=1e-6,
    )


@register_experiment("lla24.alg3.privacy")
def audit_alg3_q1_halting_time(claim, budget):
    """Q1 in phase 1 of Algorithm 3 end-to-end (paper constants), white-box halting time.

    The later phases' users are filler at 0 whose linear-loss gradients do not depend on the
    iterate, so the halting time's law is phase 1's: exact pure ε 0.4435 at T_1 = 14.
    """
    setup = alg3_audit("Q1")
    return _privacy_audit(
        alg3_audit,
        "Q1",
        wrap=HaltingTime,
        bounds=[_theorem("Theorems 3.1 and C.1"), *_HALTING_BOUNDS],
        trials=BySize(quick=30_000, standard=200_000, full=1_000_000)[budget],
        reference=_halting_reference(setup.info["T_1"]),
        reference_note="exact pure eps of Q1's phase-1 halting-time law by quadrature",
        setting="the spec's privacy audit on the two-cluster pair at the halting threshold (Q1 "
        "in the spec) in phase 1 of Algorithm 3, paper constants, n_1 = K_1 = 10^4, T_1 = 14, "
        "white-box global halting time",
    )


@register_experiment("lla24.alg2.abovethreshold")
def audit_alg2_q1_halting_step(claim, budget):
    """White-box halting time of Algorithm 2 on Q1 against the paper's ε/2 (eq. (9)) and the
    bound ε(K−1)/(4K) derived for constant scores, which Q1 (exact 0.4435) comes within 1.13× of.
    """
    setup = alg2_audit("Q1")
    eq9 = _Bound("eq. (9)", halting_pattern_claim, "", _EQ9.note)
    return _privacy_audit(
        alg2_audit,
        "Q1",
        wrap=HaltingTime,
        bounds=[eq9, _HALTING],
        trials=BySize(quick=30_000, standard=200_000, full=1_000_000)[budget],
        reference=_halting_reference(setup.algorithm.steps),
        reference_note="exact pure eps of Q1's halting-time law by quadrature (= ds*eps/8)",
        setting="the spec's privacy audit on the two-cluster pair at the halting threshold (Q1 "
        "in the spec; Algorithm 2, K = 10^4, T = 20), halting time with 'never' coded T+1",
    )


@register_experiment("lla24.alg3ns.privacy")
def audit_smoothed_oracle_q1(claim, budget):
    """Q1 through Algorithm 2 with the smoothed oracle of Thm 4.1 (u ~ Unif(B(0, r))).

    The full smoothed Algorithm 3 at paper constants needs T_i ~ 10⁵ steps (β_r = εn√m); privacy
    holds for any β and T (spec §3.4, §3.7), so the audit runs one smoothed phase at T = 6.  The
    audit loss is linear, so smoothing leaves the gradients, hence Q1's halting law, unchanged:
    exact pure ε 0.4361 at T = 6.
    """
    return _privacy_audit(
        alg2_audit,
        "Q1",
        wrap=HaltingTime,
        bounds=[_theorem("Theorem 4.1"), *_HALTING_BOUNDS],
        trials=BySize(quick=30_000, standard=200_000, full=1_000_000)[budget],
        reference=_halting_reference(6),
        reference_note="exact pure eps of Q1's halting-time law at T = 6 by quadrature",
        setting="Algorithm 2 phase with the smoothed oracle (r = 1e-3), the two-cluster pair at "
        "the halting threshold (Q1), T = 6, white-box halting time",
        smoothing=1e-3,
        steps=6,
    )


# ----------------------------------------------------------------------- privacy: white-box values


class Alg1HaltRatio:
    """P1 halting probabilities through Algorithm 1 (or a mutant class) vs the exact
    2(k−1)ε/(20C)."""

    def __init__(self, trials: int, *, algorithm: type[Algorithm1] = Algorithm1) -> None:
        self.trials, self.algorithm = trials, algorithm

    def __call__(self, rng):
        setup = alg1_audit("P1", algorithm=self.algorithm)
        algo, target, info = setup.algorithm, setup.target, setup.info
        h0 = int(algo.run(target.d0, rng, self.trials).halted.sum())
        h1 = int(algo.run(target.d1, rng, self.trials).halted.sum())
        return {
            "log_halt_ratio": log_ratio_interval(h0, h1, self.trials, self.trials),
            "formula": 2.0 * (info["k"] - 1) * algo.epsilon / (20.0 * algo.C),
        }


def reference_eps_experiment(
    budget: str, *, algorithm: type[Algorithm1] = Algorithm1
) -> ValueExperiment:
    """The P1 calibration check of ``lla24.alg1.reference_eps``, optionally on a mutant class.

    The 99% interval of ln(P(halt | D')/P(halt | D)) must cover the exact ε ≈ 0.177 of the
    reference implementation; M3(c) (score noise Lap(2/ε)) puts it near 1.7 (``inconsistent``).
    """
    setup = alg1_audit("P1")
    info = setup.info
    mutant = "" if algorithm is Algorithm1 else f"; mutant {algorithm.__name__}"
    trials = BySize(quick=50_000, standard=200_000, full=1_000_000)[budget]
    return ValueExperiment(
        Alg1HaltRatio(trials, algorithm=algorithm),
        expected={"log_halt_ratio": info["reference_epsilon"], "formula": 0.177},
        atol=0.002,
        note="the pair whose two clusters straddle the halting threshold (P1), "
        f"C={setup.algorithm.C}, k={info['k']}; exact eps = (s(D)-s(D'))eps/20; the spec's worked "
        f"value 0.177{mutant}",
    )


@register_experiment("lla24.alg1.reference_eps")
def value_alg1_p1_exact_epsilon(claim, budget):
    return reference_eps_experiment(budget)


def _alg1_noise(rng):
    setup = alg1_audit("P2")
    algo = setup.algorithm
    # all users at 0: x̃_1 = x_0 = 0 exactly
    out = algo.run(setup.target.d0, rng, 20_000).unprojected[:, 0]
    ident = [
        s * algo.epsilon * algo.C / (t * math.log(algo.n / algo.delta) ** 2)
        for s, t in zip(algo.sigmas, algo.taus, strict=True)
    ]
    return {
        "identity_min": min(ident),
        "identity_max": max(ident),
        "sigma_empirical_over_sigma": std_ratio_interval(out, algo.sigmas[0]),
    }


@register_experiment("lla24.alg1.noise_calibration")
def value_alg1_sigma_identity(claim, budget):
    return ValueExperiment(
        _alg1_noise,
        expected={"identity_min": 100.0, "identity_max": 100.0, "sigma_empirical_over_sigma": 1.0},
        rtol=1e-9,
        note="sigma_i eps C / (tau_i ln^2(n/delta)) per phase, and the output noise std on the "
        "far-outlier pair's D (P2)",
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
    setup = alg1_audit("P1")
    k, C1 = setup.info["k"], setup.algorithm.C
    attained = (2.0 * (k - 1) / C1) / (2.0 * (C1 - 1) / C1)
    eps = 2.0
    return {
        "max_sensitivity_over_bound_le_1": float(worst <= 1.0 + 1e-12),
        "p1_sensitivity_over_bound": attained,
        "eps_test_over_eps": laplace_epsilon(20.0 / eps, sensitivity=2.0) / eps,
    }


@register_experiment("lla24.alg1.score_test")
def value_alg1_score_sensitivity(claim, budget):
    setup = alg1_audit("P1")
    k, C = setup.info["k"], setup.algorithm.C
    return ValueExperiment(
        _score_sensitivity,
        expected={
            "max_sensitivity_over_bound_le_1": 1.0,
            "p1_sensitivity_over_bound": (k - 1) / (C - 1),
            "eps_test_over_eps": 0.1,
        },
        rtol=1e-9,
        note="random neighbouring point sets; the two-cluster threshold pair (P1) attains "
        "2(k-1)/C; Lap(20/eps) on sensitivity 2",
    )


def _alg2_noise(rng):
    setup = alg2_audit("Q2")
    algo = setup.algorithm
    run = algo.run(setup.target.d0, rng, 2_000, transcript=True)
    g = run.noisy_gradients[:, :, 0].reshape(-1)  # g_t = 0 exactly
    log_term = math.log(algo.n_total * algo.d / algo.delta) + algo.epsilon
    ident = algo.sigma * algo.epsilon * algo.n_phase / (algo.tau * math.sqrt(algo.steps) * log_term)
    return {"identity": ident, "sigma_empirical_over_sigma": std_ratio_interval(g, algo.sigma)}


@register_experiment("lla24.alg2.noise_calibration")
def value_alg2_sigma_identity(claim, budget):
    return ValueExperiment(
        _alg2_noise,
        expected={"identity": 1000.0, "sigma_empirical_over_sigma": 1.0},
        rtol=1e-9,
        note="sigma_i eps n_i/(tau sqrt(T_i) ln(n d e^eps/delta)) and the std of the released g_t",
    )


class Alg2HaltingLaw:
    """Simulated halting step of Algorithm 2 (or a mutant class) on Q1 vs its exact law.

    Catches the per-step threshold redraw (M3(d)).
    """

    def __init__(self, trials: int, *, algorithm: type[Algorithm2] = Algorithm2) -> None:
        self.trials, self.algorithm = trials, algorithm

    def __call__(self, rng):
        exact = q1_exact()
        setup = alg2_audit("Q1", algorithm=self.algorithm)
        pvals = []
        for data, law in ((setup.target.d0, exact["p"]), (setup.target.d1, exact["q"])):
            h = setup.algorithm.run(data, rng, self.trials).halt_step
            pvals.append(pooled_chisquare_pvalue(np.bincount(h, minlength=law.size), law))
        return {
            "halting_law_fits": float(min(pvals) > 1e-4),
            "eps_exact_delta_1e-5": exact["eps_1e5"],
        }


@register_experiment("lla24.alg2.reference_eps")
def value_alg2_q1_halting_law(claim, budget):
    return ValueExperiment(
        Alg2HaltingLaw(BySize(quick=5_000, standard=200_000, full=400_000)[budget]),
        expected={"halting_law_fits": 1.0, "eps_exact_delta_1e-5": 0.44},
        rtol=0.15,
        note="two-cluster pair at the halting threshold (Q1): K=10^4, T=20, eps=2; exact law by "
        "quadrature; the spec's prototype gave 0.44 at delta=1e-5 (our k gives s(D)-4K/5 as close "
        "to -1 as K allows)",
    )


# --------------------------------------------------------------------- rates: experiment functions


@dataclass(frozen=True, kw_only=True)
class H1Setting:
    """Sizes, privacy and signal of one risk sweep on H1 (or H3): the problem at grid value ``v``
    of ``param`` and the signal α = α₀(v/v₀)^a (capped at 1)."""

    n: int
    m: int = 16
    d: int = 4
    epsilon: float
    delta: float
    alpha0: float
    alpha_exp: float
    v0: float = 4000.0
    noise_mult: float = 1.0

    def at(self, value, param: str) -> tuple[dict, float]:
        """``({n, m, d, epsilon} at the grid value, α)``."""
        kw = {"n": self.n, "m": self.m, "d": self.d, "epsilon": self.epsilon}
        kw[param] = int(value) if param in ("n", "m", "d") else float(value)
        return kw, min(1.0, self.alpha0 * (value / self.v0) ** self.alpha_exp)


ALG3_SETTING = H1Setting(n=32000, epsilon=4.0, delta=1e-7, alpha0=0.4, alpha_exp=-1.0)
"""RT-3's defaults for :func:`alg3_risk`."""

ALG1_SETTING = H1Setting(n=16000, epsilon=10.0, delta=1e-6, alpha0=0.5, alpha_exp=-0.5)
"""RT-5's defaults for :func:`alg1_risk`."""


def alg3_risk(
    value, rng, *, param="n", normalised=False, smoothed=False, algorithm=Algorithm3, **setting
):
    """Excess risk of Algorithm 3 (relaxed, one trial) on H1 (or H3 if ``smoothed``).

    ``setting``: fields of :class:`H1Setting` replacing :data:`ALG3_SETTING`'s; ``algorithm`` is
    Algorithm 3 or a mutant class.
    """
    s = replace(ALG3_SETTING, **setting)
    kw, alpha = s.at(value, param)
    if smoothed:
        inst = AbsoluteCubeInstance(kw["d"], alpha=alpha)
        problem = Problem(**kw, delta=s.delta, radius=2.0, loss=inst.loss)
        algo = SmoothedAlgorithm3.from_theorem(
            problem, constants="relaxed", noise_mult=s.noise_mult
        )
    else:
        inst = LinearHypercubeInstance(kw["d"], alpha=alpha)
        algo = algorithm.from_theorem(
            Problem(**kw, delta=s.delta, radius=1.0),
            diameter=1.0,
            constants="relaxed",
            noise_mult=s.noise_mult,
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
    """Level check on RT-3n's instance: mean normalised risk r of ``reps`` runs at one n vs
    ``level``.

    Returns the mean r with its 95% t interval and ``below_level`` (1 when the upper end is below
    ``level``).  The exponent of RT-3n cannot see a noise bug that puts r at chance level at every n
    of the sweep (then r is flat again); the level can.
    """

    def __init__(
        self,
        *,
        reps: int = 30,
        n: int = 8000,
        algorithm: type[Algorithm3] = Algorithm3,
        level: float = RT3N_LEVEL,
    ) -> None:
        self.reps, self.n, self.algorithm, self.level = reps, n, algorithm, level

    def __call__(self, rng):
        options = {"alpha0": 0.4, "alpha_exp": -1.0, "normalised": True}
        r = np.array(
            [alg3_risk(self.n, rng, algorithm=self.algorithm, **options) for _ in range(self.reps)]
        )
        interval = mean_interval(r, confidence=0.95)
        return {"normalised_risk": interval, "below_level": float(interval[2] < self.level)}


def alg1_risk(value, rng, *, param="n", eta_const=300.0, normalised=False, **setting):
    """Excess risk of Algorithm 1 (relaxed, c_η = 300, one trial) on H1 (RT-5); ``setting``:
    fields of :class:`H1Setting` replacing :data:`ALG1_SETTING`'s."""
    s = replace(ALG1_SETTING, **setting)
    kw, alpha = s.at(value, param)
    inst = LinearHypercubeInstance(kw["d"], alpha=alpha)
    algo = Algorithm1.from_theorem(
        Problem(**kw, delta=s.delta, radius=1.0),
        diameter=1.0,
        constants="relaxed",
        eta_const=eta_const,
        noise_mult=s.noise_mult,
    )
    theta = algo.run(inst.sample(kw["n"], kw["m"], rng), rng, 1).theta
    risk = inst.normalised_risk(theta) if normalised else inst.excess_risk(theta)
    return float(np.mean(risk))


def sgd_pair_distance(value, rng, *, d=10, eta=0.01, lipschitz=1.0, pairs=400):
    """RT-1: RMS distance of two independent one-pass SGD average iterates on the α = 0 H1 instance.

    The linear loss has gradient −z, so y_t = y_{t−1} + ηz_t; the domain is large enough that
    the projection never binds (spec §5.3; E‖x̄ − ȳ‖² = η²L²(T+1)(2T+1)/(3T)).
    """
    T = int(value)
    z = lipschitz / math.sqrt(d) * rng.choice([-1.0, 1.0], size=(2, pairs, T, d))
    avg = eta * np.cumsum(z, axis=2).mean(axis=2)
    return float(np.sqrt(np.mean(np.sum((avg[0] - avg[1]) ** 2, axis=-1))))


def minibatch_variance(value, rng, *, n=4000, m=16, d=8, alpha=0.3, batches=2000):
    """RT-2: E‖g − ḡ‖² of a without-replacement minibatch of K user means, over the
    (1 − (K−1)/(n−1)) factor."""
    K = int(value)
    means = LinearHypercubeInstance(d, alpha=alpha).user_means(n, m, rng)
    full = means.mean(axis=0)
    idx = np.argsort(rng.random((batches, n)), axis=1)[:, :K]
    g = means[idx].mean(axis=1)
    return float(np.mean(np.sum((g - full) ** 2, axis=-1)) / (1 - (K - 1) / (n - 1)))


def alg3_count(
    value,
    rng,
    *,
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
    """RT-6: dry-run gradient count Σ T_i K_i m of Algorithm 3 (β = εn√m when ``smoothed``)."""
    kw = {"n": n, "m": m, "d": d, "epsilon": epsilon, "beta": beta}
    kw[param] = float(value)
    if smoothed:
        kw["beta"] = kw["epsilon"] * kw["n"] * math.sqrt(kw["m"])
    beta = kw.pop("beta")
    return alg3_gradient_count(**kw, delta=delta, smoothness=beta, k_const=k_const)


def sc_count(value, rng, *, m=1e3, d=10.0, epsilon=1.0, delta=1e-12, beta=1e4, k_const=1.0):
    """Dry-run gradient count of the §2.5 strongly convex wrapper: k blocks of n/k users."""
    n = float(value)
    blocks = math.ceil(math.log2(math.log2(n))) + 1
    count = alg3_gradient_count(
        n=n / blocks, m=m, d=d, epsilon=epsilon, delta=delta, smoothness=beta, k_const=k_const
    )
    return blocks * count


def alg1_count(value, rng, *, m=16, d=4, epsilon=2.0, delta=1e-6):
    """Gradient count Σ_i n_i m of Algorithm 1's schedule (also checked ≤ nm)."""
    n = int(value)
    algo = Algorithm1.from_theorem(Problem(n=n, m=m, d=d, epsilon=epsilon, delta=delta, radius=1.0))
    count = algo.gradient_count
    if count > n * m:
        raise AssertionError(f"Algorithm 1 uses {count} > nm = {n * m} gradients")
    return float(count)


def acsa_iterations(value, rng, *, d=20, tol=1e-6):
    """RT-7: multi-stage AC-SA iterations to a ``tol`` relative gap, quadratic (spectrum [1, κ])."""
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


def smoothing_curvature(value, rng, *, d=4, samples=200_000):
    """RT-8: smoothness of f_r for f(x) = ‖x‖₁/√d (L = 1).

    Estimated as |∂₁f_r(h e₁) − ∂₁f_r(−h e₁)|/(2h), h = r/20.

    ∂₁f_r(x) = E sign(x₁ + u₁)/√d, estimated with common random numbers u ~ Unif(B(0, r)).
    """
    r = float(value)
    h = r / 20.0
    u1 = uniform_ball(rng, shape=(samples,), d=d, radius=r)[:, 0]
    diff = np.mean(np.sign(h + u1) - np.sign(-h + u1)) / math.sqrt(d)
    return float(abs(diff) / (2 * h))


def oracle_risk(value, rng, *, m=16, d=4, alpha0=0.2, v0=1000.0):
    """Non-private ERM (ρ·ḡ/‖ḡ‖) on H1, α = α₀(n/v₀)^{-1/2}: the statistical lower-bound rate."""
    n = int(value)
    inst = LinearHypercubeInstance(d, alpha=alpha0 * (n / v0) ** -0.5)
    g = inst.user_means(n, m, rng).mean(axis=0)
    theta = inst.radius * g / max(float(np.linalg.norm(g)), 1e-300)
    return float(inst.excess_risk(theta[None])[0])


def sc_risk(
    value, rng, *, param="n", n=8000, m=16, d=2, epsilon=8.0, delta=1e-7, noise_mult=0.0, alpha=0.3
):
    """Spec §2.5 strongly convex wrapper (relaxed) on H4, excess (μ/2)‖θ − Ez‖² (RT-10).

    Sweeps n or m (``param``).
    """
    n, m = (int(value), m) if param == "n" else (n, int(value))
    inst = QuadraticHypercubeInstance(d, alpha=alpha, radius=1.0)
    problem = Problem(
        n=n,
        m=m,
        d=d,
        epsilon=epsilon,
        delta=delta,
        lipschitz=2.0,
        smoothness=1.0,
        radius=1.0,
        strong_convexity=1.0,
        loss=SquaredDistanceLoss(1.0),
    )
    algo = StronglyConvexAlgorithm3.from_theorem(
        problem, constants="relaxed", noise_mult=noise_mult
    )
    return float(inst.excess_risk(algo.run(inst.sample(n, m, rng), rng, 1).theta)[0])


# ---------------------------------------------------------------------------- rates: registrations

_GRID_N = BySize(quick=[4000, 8000, 16000, 40000], standard=[4000, 8000, 16000, 32000, 64000])
_REPS_ALG3 = BySize(quick=2, standard=20, full=30)
_REPS_SMALL = BySize(quick=3, standard=10, full=20)
_GRID_N_STAT = BySize(quick=_GRID_N["standard"], standard=_GRID_N["standard"])
_REPS_STAT = BySize(quick=20, standard=20, full=30)
"""The statistical term's sweep: its slope is about -0.36 to -0.58 on quick's range, against an
upper edge of -0.35, so quick runs standard's range (to n = 64,000) and replicates (with 10, the
90% interval's half-width is about 0.25 and seeds 2 and 3 straddled the edge)."""


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
def sweep_alg3_risk_in_n_private(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_risk,
        "n",
        _GRID_N[budget],
        replicates=_REPS_ALG3[budget],
        fixed={"param": "n", "alpha0": 0.4, "alpha_exp": -1.0},
        note="n sweep: Alg 3 relaxed, the linear loss on a hypercube (H1), m=16 d=4 eps=4 "
        "delta=1e-7, alpha = 0.4 (4000/n)",
        baseline=_h1_origin(0.4, -1.0),
    )


@register_experiment("lla24.alg3.risk.stat")
def sweep_alg3_risk_in_n_statistical(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_risk,
        "n",
        _GRID_N_STAT[budget],
        replicates=_REPS_STAT[budget],
        fixed={"param": "n", "alpha0": 0.05, "alpha_exp": -0.5, "noise_mult": 0.0},
        note="n sweep: Alg 3 relaxed with noise_mult = 0 (non-private diagnostic), alpha = 0.05 "
        "(4000/n)^1/2",
        baseline=_h1_origin(0.05, -0.5),
    )


@register_experiment("lla24.alg1.risk")
def sweep_alg1_risk_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg1_risk,
        "n",
        _GRID_N[budget],
        replicates=_REPS_SMALL[budget],
        fixed={"param": "n"},
        note="n sweep: Alg 1 relaxed c_eta=300, the linear loss on a hypercube (H1), m=16 d=4 "
        "eps=10 delta=1e-6, alpha=0.5(4000/n)^1/2",
        baseline=_h1_origin(0.5, -0.5),
    )


GAP_FAMILY = {"epsilon": 10.0, "delta": 1e-6, "alpha0": 0.5, "alpha_exp": -1.0}
"""The family both algorithms of :func:`alg1_over_alg3` run on: H1 (m = 16, d = 4) at
α = 0.5 (4000/n), ε = 10 (the largest the theorems allow, where Algorithm 1 is not yet at
chance: at ε = 4 its r is 0.87-1.0 on n = 4000..40000, so no gap could grow)."""
GAP_RUNS = BySize(quick=(1, 4), standard=(1, 6))
"""Runs of (Algorithm 1, Algorithm 3) averaged per replicate of :func:`alg1_over_alg3`: one
run's normalised risk varies by about 3% for Algorithm 1 and about 80% for Algorithm 3."""


def alg1_over_alg3(n, rng, *, runs=(1, 4)):
    """Algorithm 1's mean normalised risk over Algorithm 3's on :data:`GAP_FAMILY` at ``n``
    (``runs`` = runs of each, fresh data per run): its exponent in n is the difference of the
    two algorithms' exponents."""
    first, third = runs
    alg1 = np.mean([alg1_risk(n, rng, normalised=True, **GAP_FAMILY) for _ in range(first)])
    alg3 = np.mean([alg3_risk(n, rng, normalised=True, **GAP_FAMILY) for _ in range(third)])
    return float(alg1 / alg3)


@register_experiment("lla24.alg1.suboptimality")
def sweep_alg1_over_alg3_on_critical_family(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg1_over_alg3,
        "n",
        _GRID_N[budget],
        replicates=_REPS_SMALL[budget],
        fixed={"runs": GAP_RUNS[budget]},
        note="Alg 1 (relaxed, c_eta = 300) over Alg 3 (relaxed), both on H1 m = 16, d = 4, "
        "eps = 10, delta = 1e-6, alpha = 0.5 (4000/n) (|mu| ~ 1/n, the optimal rate's scale): "
        "the exponent of the ratio of their mean normalised risks is the difference of their "
        "exponents. The paper's gap sqrt(n eps) has exponent 1/2; band [0, 1]: consistent when "
        "the ratio rises significantly (the gap is shown), inconclusive when its interval "
        "straddles 0. r <= 2 (1 at chance) caps Alg 1's rise, so the full 1/2 cannot show "
        "on a fixed range",
    )


@register_experiment("lla24.lb.lsa21.priv")
def sweep_alg3_normalised_risk_on_critical_family(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg3_risk,
        "n",
        _GRID_N[budget],
        replicates=_REPS_ALG3[budget],
        fixed={"param": "n", "alpha0": 0.4, "alpha_exp": -1.0, "normalised": True},
        note="normalised risk r = risk/(R |mu|) of Alg 3 on the critical family alpha = 0.4 "
        "(4000/n) (|mu| ~ alpha ~ 1/n, the claimed rate's scale); tested: r does not fall "
        "(exponent >= 0), i.e. Alg 3 does not beat the Omega(1/n) rate. Measured at standard "
        "(seed 0): r RISES as n^0.245 [0.106, 0.383] over n = 4000..64000, so Alg 3 does not "
        "attain the rate on this range either: its raw risk falls as n^-0.873 [-1.057, -0.700] "
        "(lla24.alg3.risk.priv, the same algorithm and family, inconclusive against O(1/n); "
        "r's slope is the raw slope + 1)",
        baseline=_h1_origin(0.4, -1.0, normalised=True),
    )


@register_experiment("lla24.lb.lsa21.stat")
def sweep_nonprivate_erm_risk_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        oracle_risk,
        "n",
        [1000, 4000, 16000, 64000],
        replicates=BySize(quick=30, standard=200, full=400)[budget],
        fixed={},
        note="non-private ERM on the linear loss on a hypercube (H1) at alpha ~ (nm)^-1/2: even "
        "without privacy the excess falls only as n^-1/2",
    )


@register_experiment("lla24.lemma23.stability")
def sweep_sgd_stability_in_T(claim, budget):
    grid = BySize(quick=[64, 256, 1024, 4096], standard=[64, 256, 1024, 4096, 16384])
    return RateExperiment.for_claim(
        claim,
        sgd_pair_distance,
        "T",
        grid[budget],
        replicates=_REPS_SMALL[budget],
        fixed={"pairs": BySize(quick=100, standard=400, full=800)[budget]},
        note="the linear loss on a hypercube (H1) with alpha = 0, d = 10, eta = 0.01",
    )


@register_experiment("lla24.lemma35.variance")
def sweep_minibatch_variance_in_K(claim, budget):
    return RateExperiment.for_claim(
        claim,
        minibatch_variance,
        "K",
        [10, 20, 40, 80, 160],
        replicates=_REPS_SMALL[budget],
        fixed={"batches": BySize(quick=300, standard=2000, full=4000)[budget]},
        note="the linear loss on a hypercube (H1), alpha=0.3, n=4000, d=8, without replacement, "
        "divided by 1-(K-1)/(n-1)",
    )


@register_experiment("lla24.lemmaD1.smoothing")
def sweep_smoothed_curvature_in_r(claim, budget):
    return RateExperiment.for_claim(
        claim,
        smoothing_curvature,
        "r",
        [1e-3, 1e-2, 1e-1, 1.0],
        replicates=_REPS_SMALL[budget],
        fixed={"samples": BySize(quick=50_000, standard=400_000, full=1_000_000)[budget]},
        note="f = |x|_1/sqrt(d), d = 4; smoothness of f_r ~ L sqrt(d)/r",
    )


_SC_GRID = BySize(
    quick=[8000, 16000, 32000, 80000],
    standard=[8000, 16000, 32000, 64000, 128000],
    full=[8000, 16000, 32000, 64000, 128000, 256000],
)


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


def _sc_sweep(claim, budget, *, noise_mult, note):
    if budget == Budget.QUICK:
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
    return RateExperiment.for_claim(
        claim,
        sc_risk,
        "n",
        _SC_GRID[budget],
        replicates=_REPS_SMALL[budget],
        fixed={"noise_mult": noise_mult},
        note=note,
        baseline=_sc_origin(),
    )


@register_experiment("lla24.alg3sc.risk.stat", skip={"quick": _SC_STAT_QUICK})
def sweep_sc_wrapper_risk_statistical(claim, budget):
    return _sc_sweep(
        claim,
        budget,
        noise_mult=0.0,
        note="the spec's strongly convex wrapper (not from the paper) on a strongly convex "
        "quadratic (H4), noise_mult = 0",
    )


@register_experiment("lla24.alg3sc.risk.priv")
def sweep_sc_wrapper_risk_private(claim, budget):
    return _sc_sweep(
        claim,
        budget,
        noise_mult=1.0,
        note="the spec's strongly convex wrapper (not from the paper) on a strongly convex "
        "quadratic (H4), relaxed constants",
    )


_RT9 = {
    "standard": ({"m": 1, "epsilon": 10.0}, [2000, 4000, 8000, 20000], 2),
    "full": ({"m": 16, "epsilon": 4.0}, [4000, 8000, 16000, 40000], 10),
}
"""RT-9 sweeps (smoothed Algorithm 3, relaxed, H3, d = 2): ``full`` is the spec's (n from 4e3
over one decade; each run takes 30 s at n = 4000 and grows ~n²); ``standard`` is the smallest
configuration in which a phase runs at n = 2000 (m = 1, ε = 10: 1.7 / 5.6 / 15 s per run at
n = 2e3 / 4e3 / 8e3 on a loaded machine).  It is pre-asymptotic: at n = 2000 the normalised
risk is ~0.85, near the start point's level 1, so the measured slopes (priv −0.90
[−1.69, −0.11], stat −1.31 [−1.59, −1.03], seed 0) mix the descent from the trivial level with
the rate."""

_RT9_QUICK = (
    "the n sweep needs >= 8 runs of smoothed Algorithm 3 (4 grid points over a decade, 2 "
    "replicates) and the cheapest run in which a phase executes takes ~2 s (n = 2000, m = 1, eps "
    "= 10: beta_r = eps n sqrt(m) gives T_1 ~ 1500 AC-SA steps); no quick sweep fits the ~2 s "
    "budget, see the standard/full budgets"
)


def _rt9(claim, budget, *, alpha_exp, noise_mult, note):
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
        note=f"n sweep ({note}): smoothed Alg 3 relaxed on the absolute-deviation loss (H3), d=2, "
        f"m={fixed['m']}, eps={fixed['epsilon']:g}, alpha = 0.4 ({grid[0]}/n)^{-alpha_exp:g}",
    )


@register_experiment("lla24.alg3ns.risk.priv", skip={"quick": _RT9_QUICK})
def sweep_smoothed_alg3_risk_private(claim, budget):
    return _rt9(claim, budget, alpha_exp=-1.0, noise_mult=1.0, note="private regime")


@register_experiment("lla24.alg3ns.risk.stat", skip={"quick": _RT9_QUICK})
def sweep_smoothed_alg3_risk_statistical(claim, budget):
    return _rt9(
        claim,
        budget,
        alpha_exp=-0.5,
        noise_mult=0.0,
        note="statistical term, noise_mult = 0 (non-private diagnostic)",
    )


@register_experiment("lla24.lemmaB3.sgd")
def value_lemma_b3_sgd_bound(claim, budget):
    return ValueExperiment(
        _lemma_b3,
        expected={"bound_holds": 1.0},
        note="mean excess of average-iterate SGD on the linear loss on a hypercube (H1) "
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
                y = project_l2_ball(y + eta * z[:, t], inst.radius)
                total += y
            excess = float(np.mean(inst.excess_risk(total / T)))
            bound = float(np.sum(inst.theta_star**2)) / (eta * T) + eta * 1.0
            ok &= excess <= bound
    return {"bound_holds": float(ok)}
