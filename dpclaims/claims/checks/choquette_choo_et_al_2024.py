"""Experiments for the claims of Choquette-Choo, Ganesh, Thakurta (2024) (spec 002).

Paper ``choquette-choo-et-al-2024``.  Privacy: white-box transcript audits on the §7(a)
blank canary (first batch, the most tree nodes).  Rates: the §7(b) tests RT1–RT9 on H1
(Nesterov chain), LS and LIN; each sweep reads its exponent, direction (an O(·) claim is an
upper bound: decaying faster is consistent) and margin from the claim
(:meth:`RateExperiment.for_claim`).  One-sided value checks use the ``le`` / ``ge`` bounds of
:class:`ValueExperiment`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpclaims.algorithms.choquette_choo_et_al_2024 import AcceleratedDPSRGD, c_dp
from dpclaims.algorithms.choquette_choo_et_al_2024.tree import tree_error_bound, tree_height
from dpclaims.claims.experiments import BySize, register_experiment
from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.gdp import gdp_delta, gdp_epsilon
from dpclaims.hardinstances.linear import LinearBallInstance, LinearHypercubeInstance
from dpclaims.hardinstances.lower_bounds import dpsco_lower_bound
from dpclaims.hardinstances.quadratic import LeastSquaresInstance, NesterovChainInstance
from dpclaims.losses import LinearLoss
from dpclaims.problem import Problem
from dpclaims.rates.caveats import Baseline
from dpclaims.results import Outcome
from dpclaims.stats import exceedance_interval, mean_interval
from dpclaims.target import AuditTarget
from dpclaims.targets.choquette_choo_et_al_2024 import canary_audit

AUDIT_TRIALS = BySize(quick=300_000, standard=1_000_000, full=4_000_000)
"""Trials per dataset of the tree and V1 audits (B = 1 canary runs: ~3 s per 3e5 at T = 16)."""
V2_AUDIT_TRIALS = BySize(quick=100_000, standard=300_000, full=1_000_000)
"""Trials per dataset of each V2 audit part (n = 256, B = 16: ~5× the cost per trial)."""
REPLICATES = BySize(quick=3, standard=10)


def _problem(loss, *, n: int, epsilon: float = 1.0, d: int = 16) -> Problem:
    """The spec §5 problem class of LS and H1 (L = 2, M = 1, R = 1), δ = 1e-5, with ``loss``."""
    return Problem(
        n=n,
        d=d,
        epsilon=epsilon,
        delta=1e-5,
        lipschitz=2.0,
        smoothness=1.0,
        radius=1.0,
        loss=loss,
    )


def _noise_free(
    loss,
    *,
    steps: int,
    batch_size: int,
    beta: float,
    clip: float,
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD,
    **knobs,
):
    """Algorithm 1 (or ``variant``) without DP noise (ε = ∞), R = 1.

    ``knobs`` are the other fields (``interpolation``, ``estimator``, ``z_step_scale``).
    """
    return variant.calibrated(
        epsilon=math.inf,
        delta=None,
        loss=loss,
        steps=steps,
        batch_size=batch_size,
        beta=beta,
        clip=clip,
        radius=1.0,
        **knobs,
    )


# ----------------------------------------------------------------- experiment functions (picklable)


def rt1_excess(
    steps: int,
    rng,
    beta: float = 1.0,
    z_step_scale: float = 1.0,
    interpolation: str = "accelerated",
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD,
) -> float:
    """RT1 / E0: F(y_T) − F* with exact gradients, no noise, on H1 with k = 2T + 1.

    s = 0, M = 1, ρ = 1/2, R = 1; ``variant`` is the algorithm class (a mutant's, to test it).
    """
    inst = NesterovChainInstance.for_steps(steps)
    algo = _noise_free(
        inst.loss,
        steps=steps,
        batch_size=1,
        beta=beta,
        clip=math.inf,
        variant=variant,
        z_step_scale=z_step_scale,
        interpolation=interpolation,
    )
    return float(inst.excess_risk(algo.run(inst.sample(steps, 1, rng), rng, 1).theta)[0])


def rt2_excess(
    n: int, rng, trials: int = 1, interpolation: str = "accelerated", z_step_scale: float = 1.0
) -> np.ndarray:
    """RT2: H1 (k = 2T + 1, s = 0.5, L = 2), T = round(n^{1/4}), B = n // T, β = 2, C_Δ = 4.

    No noise (ε = ∞): all trials on one data set coincide, so replicates (fresh data) carry
    the variance.
    """
    steps = max(1, round(n**0.25))
    inst = NesterovChainInstance.for_steps(steps, noise=0.5)
    algo = _noise_free(
        inst.loss,
        steps=steps,
        batch_size=n // steps,
        beta=2.0,
        clip=4.0,
        interpolation=interpolation,
        z_step_scale=z_step_scale,
    )
    return inst.excess_risk(algo.run(inst.sample(n, 1, rng), rng, trials).theta)


def chain_origin_excess(steps: int, **instance) -> float:
    """The excess risk on :meth:`NesterovChainInstance.for_steps` of the origin, the point x₀ = 0
    the algorithms start from (exact)."""
    inst = NesterovChainInstance.for_steps(steps, **instance)
    return float(inst.excess_risk(np.zeros((1, inst.d)))[0])


def rt2_origin(
    n: int, rng, trials: int = 1, interpolation: str = "accelerated", z_step_scale: float = 1.0
) -> float:
    """The trivial control of :func:`rt2_excess`: its start point x₀ = 0 on the same H1."""
    return chain_origin_excess(max(1, round(n**0.25)), noise=0.5)


def rt3_excess(
    n: int,
    rng,
    d: int = 16,
    epsilon: float = 0.3,
    trials: int = 4,
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD,
) -> np.ndarray:
    """V1 (practical defaults) on LS (p = 16, L = 2, M = 1, R = 1), ε = 0.3, δ = 1e-5: the
    statistical-term setting in which the utility mutants' excess is compared with the
    reference's (the privacy-term sweep is :func:`v1_private_excess`).

    ``variant`` is the algorithm class (a mutant's, to test it).
    """
    inst = LeastSquaresInstance(d)
    algo = variant.from_theorem(_problem(inst.loss, n=n, epsilon=epsilon, d=d))
    return inst.excess_risk(algo.run(inst.sample(n, 1, rng), rng, trials).theta)


def _lin_problem(n: int, *, d: int, epsilon: float) -> Problem:
    """LIN (spec §5: linear loss, L = 1, M = 0, R = 1), δ = 1e-5."""
    return Problem(
        n=n, d=d, epsilon=epsilon, delta=1e-5, lipschitz=1.0, radius=1.0, loss=LinearLoss()
    )


LIN_SIGNAL = 0.3
"""‖E z‖ of LIN: the excess of the constant output 0 (R = 1)."""


def _lin_mean(d: int) -> np.ndarray:
    """LIN's item mean ``0.3 e₁`` in ``d`` dimensions."""
    mean = np.zeros(d)
    mean[0] = LIN_SIGNAL
    return mean


def rt4_excess(
    n: int, rng, d: int = 16, epsilon: float = 1.0, trials: int = 4, batch_size: int | None = None
) -> np.ndarray:
    """RT4/RT5: LIN (m = 0.3 e₁), V2 paper constants (β = 8Ln^{3/2}/(RB²), C_Δ = 4L)."""
    inst = LinearBallInstance(_lin_mean(d))
    algo = AcceleratedDPSRGD.from_theorem(
        _lin_problem(n, d=d, epsilon=epsilon),
        schedule="v2",
        constants="paper",
        batch_size=batch_size,
    )
    return inst.excess_risk(algo.run(inst.sample(n, 1, rng), rng, trials).theta)


def rt4_origin(
    n: int, rng, d: int = 16, epsilon: float = 1.0, trials: int = 4, batch_size: int | None = None
) -> float:
    """The trivial control of :func:`rt4_excess`: the excess risk of outputting the origin, where
    the algorithm starts (‖m‖ = 0.3 at every n)."""
    mean = np.zeros(d)
    mean[0] = 0.3
    return float(LinearBallInstance(mean).excess_risk(np.zeros((1, d)))[0])


def rt5_excess(
    batch_size: int, rng, n: int = 2**16, d: int = 16, epsilon: float = 1.0, trials: int = 4
) -> np.ndarray:
    """RT5: as :func:`rt4_excess` at fixed n with the batch size swept (B ≤ √n)."""
    return rt4_excess(n, rng, d=d, epsilon=epsilon, trials=trials, batch_size=batch_size)


def rt5_origin(
    batch_size: int, rng, n: int = 2**16, d: int = 16, epsilon: float = 1.0, trials: int = 4
) -> float:
    """The trivial control of :func:`rt5_excess`: the origin's excess, the same for every B."""
    return rt4_origin(n, rng, d=d)


def srg_error(batch_size: int, rng, steps: int = 8, trials: int = 1) -> np.ndarray:
    """RT6 / E-SRG: ‖∇_t − ∇F(x_t)‖ at t = T − 1 on H1 (s = 0.5), no noise; ∝ (B(t+1))^{-1/2}.

    Data-only: the trials coincide.
    """
    inst = NesterovChainInstance.for_steps(steps, noise=0.5)
    algo = _noise_free(inst.loss, steps=steps, batch_size=batch_size, beta=2.0, clip=math.inf)
    data = inst.sample(steps * batch_size, 1, rng)
    record = algo.run(data, rng, trials, transcript=True).transcript
    gap = record.estimates[:, -1] - inst.population_grad(record.points[:, -1])
    return np.linalg.norm(gap, axis=-1)


def sensitivity_at(
    t_plus_1: int, rng, n: int = 2**14, steps: int = 16, d: int = 16, trials: int = 4
) -> np.ndarray:
    """RT9 / P3: max_d ‖δ_t(d)‖ (pre-clip) at step t of V1 (practical, ε = 1) on LS, unclipped."""
    inst = LeastSquaresInstance(d)
    algo = AcceleratedDPSRGD.from_theorem(_problem(inst.loss, n=n, d=d), steps=steps, clip=False)
    run = algo.run(inst.sample(n, 1, rng), rng, trials)
    return run.max_difference_norm[:, t_plus_1 - 1]


def gradnorm_at(t_plus_1: int, rng, n: int = 2**14, steps: int = 32, trials: int = 4) -> np.ndarray:
    """Lemma 5.4: ‖∇F(x_t)‖ at step t of V1 (practical, ε = 1) on H1 (k = 2T + 1, s = 0.5).

    L = 2, x† ∈ C.
    """
    inst = NesterovChainInstance.for_steps(steps, noise=0.5)
    algo = AcceleratedDPSRGD.from_theorem(_problem(inst.loss, n=n, d=inst.d), steps=steps)
    record = algo.run(inst.sample(n, 1, rng), rng, trials, transcript=True).transcript
    return np.linalg.norm(inst.population_grad(record.points[:, t_plus_1 - 1]), axis=-1)


def gradnorm_origin(t_plus_1: int, rng, n: int = 2**14, steps: int = 32, trials: int = 4) -> float:
    """The trivial control of :func:`gradnorm_at`: ‖∇F(x₀)‖ of staying at the start x₀ = 0."""
    inst = NesterovChainInstance.for_steps(steps, noise=0.5)
    return float(np.linalg.norm(inst.population_grad(np.zeros((1, inst.d)))))


def beta_excess(beta: float, rng, steps: int = 32) -> float:
    """Thm 5.1 optimisation term β R²/T²: exact gradients on H1, no noise, β swept (β ≥ M = 1)."""
    return rt1_excess(steps, rng, beta=beta)


def indep_excess(batch_size: int, rng, steps: int = 16, trials: int = 1) -> np.ndarray:
    """Thm 5.13 stochastic term: independent batch gradients, no noise, on H1 (s = 0.5)."""
    inst = NesterovChainInstance.for_steps(steps, noise=0.5)
    algo = _noise_free(
        inst.loss,
        steps=steps,
        batch_size=batch_size,
        beta=2.0,
        clip=math.inf,
        estimator="independent",
    )
    return inst.excess_risk(algo.run(inst.sample(steps * batch_size, 1, rng), rng, trials).theta)


def indep_origin(batch_size: int, rng, steps: int = 16, trials: int = 1) -> float:
    """The trivial control of :func:`indep_excess`: its start point x₀ = 0 on the same H1."""
    return chain_origin_excess(steps, noise=0.5)


UNACCELERATED_BATCH = 4
"""B = O(1) of the §4.3 unaccelerated single-epoch schedule (any constant B gives T = n/B)."""


def unaccelerated_schedule(n: int, *, batch_size: int = UNACCELERATED_BATCH, loss=None):
    """Unaccelerated SRGD of §4.3 (τ ≡ 0, spec §2.6) on its single-epoch schedule, no noise.

    ``B = O(1)``, ``T = n/B``, step ``1/β = B/√n`` (the GD–SGD interpolation of [Bub15] §6 the
    sketch uses), L = R = M = 1, unclipped.  ``loss`` defaults to LS's.
    """
    return _noise_free(
        LeastSquaresInstance(4).loss if loss is None else loss,
        steps=n // batch_size,
        batch_size=batch_size,
        beta=math.sqrt(n) / batch_size,
        clip=math.inf,
        interpolation="none",
    )


def unaccelerated_rounds(n: int, rng) -> float:
    """Batch gradient steps (adaptive rounds) one run of :func:`unaccelerated_schedule` makes.

    Counted from the run: the steps it records a difference norm for (LS, p = 4).
    """
    inst = LeastSquaresInstance(4)
    run = unaccelerated_schedule(n, loss=inst.loss).run(inst.sample(n, 1, rng), rng, 1)
    return float(run.max_difference_norm.shape[1])


# --------------------------------------------------------------------------- privacy


CANARY_BATCH = 1
"""Batch size B of the privacy audits' canary runs.  B does not change the canary's privacy (the
leaf moves by C_Δ/(Bβ) and σ is calibrated ∝ 1/(Bβ)), so the cheapest run, B = 1, is used."""


def _tree_audit() -> AuditTarget:
    return canary_audit(AcceleratedDPSRGD.for_canary(batch_size=CANARY_BATCH))


@register_experiment("cgt24.tree.gdp")
def audit_tree_gdp(claim, budget):
    """Tree release with σ = C sqrt(h)/μ*, μ* = μ*(2, 1e-5): exactly (2, 1e-5)-DP; certified
    audit."""
    return AuditExperiment(
        build=_tree_audit,
        trials=AUDIT_TRIALS[budget],
        reference_epsilon=2.0,
        reference_note="exact: the node statistic of the first-batch canary is N(0, hσ²) vs "
        "N(h C/(Bβ), hσ²), i.e. μ*(2, 1e-5)-GDP, whose ε at δ = 1e-5 is 2 by construction",
        note=f"white-box node statistic, canary in batch 0 (h = 5 nodes), T = 16, "
        f"B = {CANARY_BATCH}, exact calibration; the pair attains the claim (exact ε = 2)",
    )


def _paper_clipped_audit() -> AuditTarget:
    return canary_audit(AcceleratedDPSRGD.for_canary(calibration="paper", batch_size=CANARY_BATCH))


def printed_sigma_epsilons(schedule: str = "v1", steps: int = 16) -> dict:
    """Exact privacy of the σ printed in Cor. 5.7 (V1) / Cor. 5.11 (V2) at T = ``steps``.

    The claim is (2, δ/2).  ``factor`` is printed σ / the σ Lemma 5.6 needs for
    μ = ε/sqrt(2 ln(2.5/δ)) (= target μ / its μ): sqrt(log₂T/(2(1+⌈log₂T⌉))) for Cor. 5.7
    (too small), 2·sqrt(log₂T/(1+⌈log₂T⌉)) for Cor. 5.11 (too large).  ε's are the tight GDP
    ε of the μ the printed σ gives, at δ/2 = 5e-6 (the claim's convention: the clipped
    algorithm is (ε, δ/2)-DP, the unclipped one is δ/2 from it in TV) and at δ;
    ``delta_at_claimed_epsilon`` is the tight δ of that μ at the claimed ε.
    """
    if schedule == "v1":
        algo = AcceleratedDPSRGD.for_canary(calibration="printed", steps=steps)
    else:
        algo = _v2_printed_audit().mechanism.algorithm
    h = 1 + math.ceil(math.log2(algo.steps))
    target = algo.privacy_claim.epsilon / math.sqrt(2 * math.log(2.5 / 1e-5))
    return {
        "factor": target / algo.mu,
        "formula_factor": (
            math.sqrt(math.log2(algo.steps) / (2 * h))
            if schedule == "v1"
            else 2 * math.sqrt(math.log2(algo.steps) / h)
        ),
        "epsilon_at_delta/2": gdp_epsilon(algo.mu, 5e-6),
        "epsilon_at_delta": gdp_epsilon(algo.mu, 1e-5),
        "delta_at_claimed_epsilon": gdp_delta(algo.privacy_claim.epsilon, algo.mu),
        "claimed_epsilon": algo.privacy_claim.epsilon,
    }


@register_experiment("cgt24.v1.privacy.clipped")
def audit_v1_clipped_lemma56_sigma(claim, budget):
    """Clipped V1 with the σ Lemma 5.6 needs for μ = ε/sqrt(2 ln(2.5/δ)): (ε, δ/2)-DP (holds).

    The pair's exact ε is 1.63 at δ/2 for a claim of 2: the GDP→DP conversion of the paper
    is conservative by 1.23×.  The σ *printed* in Cor. 5.7 is the claim
    ``cgt24.v1.privacy.printed_sigma``.
    """
    algo = _paper_clipped_audit().mechanism.algorithm
    return AuditExperiment(
        build=_paper_clipped_audit,
        trials=AUDIT_TRIALS[budget],
        reference_epsilon=round(algo.epsilon_exact, 4),
        reference_note="exact GDP ε at δ/2 = 5e-6 of μ = ε/sqrt(2 ln(2.5/δ)) = "
        f"{algo.mu:.4f} (the node statistic of the first-batch canary attains μ)",
        note="calibration='paper': σ = C_Δ sqrt(1+⌈log₂T⌉)/(Bβμ), μ = ε/sqrt(2 ln(2.5/δ)), "
        f"T = 16, B = {CANARY_BATCH}, first-batch canary (h = 5 nodes); the pair's exact ε is "
        f"{algo.epsilon_exact:.2f} at δ/2 for the claimed 2 (the paper's GDP→DP conversion "
        f"is conservative by {2.0 / algo.epsilon_exact:.2f}×); the σ printed in Cor. 5.7 is "
        "checked by cgt24.v1.privacy.printed_sigma",
    )


@dataclass(frozen=True)
class _FindingValue(ValueExperiment):
    """A :class:`ValueExperiment` whose summary opens with ``headline`` (the finding in words)."""

    headline: str = ""

    def run(self, **kwargs) -> Outcome:
        out = super().run(**kwargs)
        return replace(out, summary=f"{self.headline}; {out.summary}")


@register_experiment("cgt24.v1.privacy.printed_sigma")
def value_v1_printed_sigma(claim, budget):
    """Cor. 5.7 as printed: its σ gives ε 2.705 at δ/2 (2.603 at δ) for the claimed 2 (exact)."""
    printed = printed_sigma_epsilons("v1")
    factor = 1 / printed["factor"]

    def compute(rng):
        return {
            "epsilon_at_delta/2": printed["epsilon_at_delta/2"],
            "epsilon_at_delta": printed["epsilon_at_delta"],
            "delta_at_claimed_epsilon": printed["delta_at_claimed_epsilon"],
            "sigma_shortfall": factor,
        }

    return _FindingValue(
        compute=compute,
        le={
            "epsilon_at_delta/2": printed["claimed_epsilon"],
            "epsilon_at_delta": printed["claimed_epsilon"],
            "delta_at_claimed_epsilon": 1e-5,
        },
        expected={"sigma_shortfall": 1 / printed["formula_factor"]},
        rtol=1e-9,
        headline=(
            "FINDING (exact, white-box): Cor. 5.7's printed σ is too small by "
            f"√(2(1+⌈log₂T⌉)/log₂T) = {factor:.3f} at T = 16; its ε is "
            f"{printed['epsilon_at_delta/2']:.3f} at δ/2 = 5e-6 and "
            f"{printed['epsilon_at_delta']:.3f} at δ = 1e-5 for the claimed ε = 2, and its δ at "
            f"ε = 2 is {printed['delta_at_claimed_epsilon']:.2g} (36× δ)"
        ),
        note="σ = c_DP L sqrt(log T ln(2.5/δ))/(εBβ) with log = log₂, as printed in Cor. 5.7 "
        "(and Thm 5.8), against the σ = c_DP L sqrt(1+⌈log₂T⌉)·sqrt(2 ln(2.5/δ))/(εBβ) that "
        "Lemma 5.6 needs for μ = ε/sqrt(2 ln(2.5/δ)); the ε's and δ are the tight Gaussian-DP "
        "values of the μ the printed σ gives on the first-batch canary (h = 5 nodes), which "
        "attains it.  The Lemma 5.6 σ holds (cgt24.v1.privacy.clipped).  Registered as mutant "
        "cgt24-m3-printed-sigma, audited at T = 2 (shortfall 2×), where the tree audit "
        "certifies ε > 2",
    )


def _v2_printed_audit(*, relaxed: bool = False) -> AuditTarget:
    problem = Problem(n=256, epsilon=2.0, delta=1e-5, lipschitz=1.0, radius=1.0, loss=LinearLoss())
    algo = AcceleratedDPSRGD.from_theorem(
        problem, schedule="v2", constants="paper", calibration="printed"
    )
    target = canary_audit(algo)
    if not relaxed:
        return target
    tight = round(algo.epsilon_exact, 3)
    return replace(
        target,
        claim=replace(
            target.claim,
            epsilon=tight,
            source=f"RELAXED (not the paper's claim): the mechanism's tight ε {tight} at δ/2",
        ),
        name=f"{target.name} (relaxed claim: tight ε)",
    )


def _v2_relaxed_audit() -> AuditTarget:
    return _v2_printed_audit(relaxed=True)


@register_experiment("cgt24.v2.privacy")
def audit_v2_printed_sigma(claim, budget):
    """V2 (n = 256, B = T = 16, β = 8Ln^{3/2}/(RB²), C_Δ = 4L), the σ printed in Cor. 5.11.

    Claimed (2, δ/2).  The printed σ over-noises (tight ε 0.86), so no audit of the paper's
    claim can reach a 2× violation of it; the second part audits the same pair against its
    tight ε (a relaxed claim, labelled), which a 2× leakage error would exceed.
    """
    algo = _v2_printed_audit().mechanism.algorithm
    printed = printed_sigma_epsilons("v2")
    exact = round(algo.epsilon_exact, 4)
    reference_note = (
        f"exact GDP ε at δ/2 = 5e-6 of the printed σ's μ = {algo.mu:.4f} (the first-batch "
        "canary's node statistic attains μ)"
    )
    claim_part = AuditExperiment(
        build=_v2_printed_audit,
        trials=V2_AUDIT_TRIALS[budget],
        reference_epsilon=exact,
        reference_note=reference_note,
        note="Cor. 5.11's printed σ, (16√2c_M+8√2)L sqrt(log T ln(2.5/δ))/(εBβ), is CONSERVATIVE: "
        "it over-noises by 2·sqrt(log₂T/(1+⌈log₂T⌉)) = "
        f"{printed['factor']:.2f}x at T = 16 (μ = {1 / printed['factor']:.2f}x the target "
        f"ε/sqrt(2 ln(2.5/δ))), so its true ε is {printed['epsilon_at_delta/2']:.2f} at "
        f"δ/2 = 5e-6 ({printed['epsilon_at_delta']:.2f} at δ) for a claimed 2: the claim "
        f"is conservative by {2.0 / printed['epsilon_at_delta/2']:.2f}× (a finding about the "
        "constant, not a failing claim); no audit of this claim can reach 2 (see tight_epsilon)",
    )
    tight_part = AuditExperiment(
        build=_v2_relaxed_audit,
        trials=V2_AUDIT_TRIALS[budget],
        reference_epsilon=exact,
        reference_note=reference_note,
        note=f"RELAXED claim (not the paper's): the same pair held to its tight ε "
        f"{round(algo.epsilon_exact, 3)} at δ/2, so that the reach is relative to the tight ε "
        "(the audit would catch a 2× leakage error of the implementation)",
    )
    return CombinedExperiment(
        parts={"paper_claim": claim_part, "tight_epsilon": tight_part},
        note=f"the paper's claim (2, δ/2) holds with room: conservative by "
        f"{2.0 / printed['epsilon_at_delta/2']:.2f}× (tight ε "
        f"{printed['epsilon_at_delta/2']:.2f}); audited against 2 and against the tight ε",
    )


def _unclipped_exceedance(rng, n: int, trials: int, schedule: str) -> dict:
    inst = LeastSquaresInstance(16)
    problem = _problem(inst.loss, n=n)
    algo = AcceleratedDPSRGD.from_theorem(problem, schedule=schedule)
    unclipped = AcceleratedDPSRGD.from_theorem(problem, schedule=schedule, clip=False)
    norms = unclipped.run(inst.sample(n, 1, rng), rng, trials).max_difference_norm.max(axis=1)
    return {
        "exceed_fraction": exceedance_interval(int(np.sum(norms > algo.clip)), trials),
        "max_norm_over_clip": float(norms.max() / algo.clip),
    }


UNCLIPPED_RUNS = BySize(quick=(2**12, 16), standard=(2**16, 64))
"""(n, runs) of the clip-exceedance checks."""


@register_experiment("cgt24.v1.privacy.unclipped")
def value_v1_unclipped_never_exceeds_clip(claim, budget):
    """Proxy of §3.3(2): on compliant LS data the unclipped V1 never exceeds C_Δ (CP interval)."""
    n, trials = UNCLIPPED_RUNS[budget]
    return ValueExperiment(
        compute=lambda rng: _unclipped_exceedance(rng, n, trials, "v1"),
        expected={"exceed_fraction": 0.0},
        note=f"LS p=16, V1 practical (C_Δ = 2L, not the paper's c_DP L), n={n}, {trials} runs",
    )


@register_experiment("cgt24.v2.clip_inactive")
def value_v2_clip_inactive(claim, budget):
    """Cor. 5.10: on LS (convex, L = 2, M = 1) the V2 clip (8c_M+4)L is never active."""
    n, trials = UNCLIPPED_RUNS[budget]

    def compute(rng):
        out = _unclipped_exceedance(rng, n, trials, "v2")
        algo = AcceleratedDPSRGD.from_theorem(_problem(LinearLoss(), n=n), schedule="v2")
        big_t = algo.steps
        cond = (algo.batch_size * algo.beta) ** 2 / (
            32 * math.log2(big_t) ** 3 * math.log(2 * big_t / 1e-5) * math.log(2.5 / 1e-5)
        )
        out["dimension_bound"] = cond  # Cor. 5.10's bound on p (M = 1, ε = 1), must be >= p = 16
        return out

    return ValueExperiment(
        compute=compute,
        expected={"exceed_fraction": 0.0},
        ge={"dimension_bound": 16.0},
        note=f"LS p=16, n={n}, {trials} runs; dimension_bound = Cor. 5.10's bound on p",
    )


def _lemma59(rng, n: int, trials: int) -> dict:
    inst = LeastSquaresInstance(16)
    algo = AcceleratedDPSRGD.from_theorem(_problem(inst.loss, n=n), schedule="v2", clip=False)
    run = algo.run(inst.sample(n, 1, rng), rng, trials, transcript=True)
    b_max = np.linalg.norm(run.transcript.noise, axis=-1).max(axis=1)
    bound = 2.0 * (1.0 * b_max + 2.0 * 1.0 * 2.0 + 2.0)  # 2(M b_max + 2M diam(C) + L), diam = 2R
    worst = float(np.max(run.max_difference_norm.max(axis=1) / bound))
    return {"max_ratio_to_bound": worst, "beta_over_2MT": algo.beta / (2.0 * algo.steps)}


@register_experiment("cgt24.v2.sensitivity.deterministic")
def value_lemma59_difference_bound(claim, budget):
    """Lemma 5.9 per run: max_{t,d}‖δ_t(d)‖ ≤ 2(M b_max + 2M diam(C) + L) (unclipped V2, LS)."""
    n, trials = BySize(quick=(2**12, 8), standard=(2**16, 32))[budget]
    return ValueExperiment(
        compute=lambda rng: _lemma59(rng, n, trials),
        le={"max_ratio_to_bound": 1.0},
        note="the worst ratio of the difference to Lemma 5.9's bound must be <= 1",
    )


@register_experiment("cgt24.v1.sensitivity")
def sweep_v1_sensitivity_in_t(claim, budget):
    """RT9: max_d ‖δ_t(d)‖ of V1 on LS does not grow with t (upper bound t^0: slope ≤ margin)."""
    return RateExperiment.for_claim(
        claim,
        sensitivity_at,
        "t+1",
        [1, 2, 4, 8, 16],
        variable="t",
        replicates=REPLICATES[budget],
        fixed={"n": BySize(quick=2**15, standard=2**16)[budget]},
        note="the claim bounds the difference uniformly in t; swept over t+1 ≥ 1",
    )


# --------------------------------------------------------------------------- rates


TREE_ERROR_GRID = {
    "quick": ((2, 64), (3, 16), (16, 1), (16, 64), (100, 16), (100, 256), (1000, 4)),
    "standard": (
        (2, 1),
        (2, 64),
        (3, 16),
        (5, 256),
        (16, 1),
        (16, 64),
        (16, 1024),
        (100, 16),
        (100, 256),
        (1000, 4),
        (1000, 64),
        (1024, 16),
    ),
}
"""(T, p) points of the Lemma 5.6 check: T not a power of two (3, 5, 100, 1000) beside
2, 16, 1024; p from 1 to 1024 (cost ∝ runs·T·p)."""
TREE_ERROR_RUNS = BySize(quick=2_000, standard=10_000)
TREE_ERROR_DELTAS = (0.05, 0.01)
TREE_ERROR_LAW_CONFIDENCE = 0.999


def _tree_under_test(steps: int, variant: type[AcceleratedDPSRGD]):
    """The implementation's tree, C and μ: Algorithm 1 calibrated for (ε, δ) = (1, 1e-5) with
    B = β = C_Δ = 1, so the leaf sensitivity is C = 1 and μ = μ*(1, 1e-5) the μ it claims."""
    algo = variant.calibrated(
        epsilon=1.0,
        delta=1e-5,
        loss=LinearLoss(),
        steps=steps,
        batch_size=1,
        beta=1.0,
        clip=1.0,
        radius=1.0,
    )
    return algo._noise_tree(), algo.leaf_sensitivity, algo.claimed_mu


def tree_error_lemma(
    rng,
    *,
    grid=TREE_ERROR_GRID["quick"],
    runs: int = 2_000,
    deltas=TREE_ERROR_DELTAS,
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD,
) -> dict:
    """Lemma 5.6 as stated, on the implementation's tree at its own C and μ.

    For each (T, p): ``runs`` draws of ``b = max_t‖e_t‖``; per δ the empirical (1 − δ)-quantile
    over the bound ``4 C log₂^{3/2}(T) sqrt(p ln(2T/δ))/μ`` and the failure count
    ``#{b > bound}`` (Clopper–Pearson interval, the claim is a rate ≤ δ).  T-dependence: the
    quantile divided by ``C sqrt(p) log₂^{3/2}(T) sqrt(ln(2T/δ))/μ`` may not grow with T (its
    value at each T over the smallest T of the grid).  Tree law (what the bound rests on and
    what makes the check see a tree with too little noise): each prefix is the sum of
    popcount(t+1) node noises of std ``σ = C sqrt(h)/μ``, so
    ``Σ_t ‖e_t‖² / (p σ² Σ_t popcount(t+1))`` has mean 1 (per T, pooled over p).
    """
    out: dict = {}
    worst_ratio = dict.fromkeys(deltas, 0.0)
    worst_fail: dict = {}
    shape: dict[int, float] = {}
    law: dict[int, list] = {}
    for steps, p in grid:
        tree, leaf, mu = _tree_under_test(steps, variant)
        sigma_lemma = leaf * math.sqrt(tree_height(steps)) / mu
        state = tree.start(runs, p)
        energy = np.zeros(runs)
        b_max = np.zeros(runs)
        for _ in range(steps):
            sq = np.sum(state.next(rng) ** 2, axis=-1)
            energy += sq
            b_max = np.maximum(b_max, sq)
        b_max = np.sqrt(b_max)
        popcounts = sum(bin(t + 1).count("1") for t in range(steps))
        law.setdefault(steps, []).append(energy / (p * sigma_lemma**2 * popcounts))
        for delta in deltas:
            bound = tree_error_bound(leaf, p=p, mu=mu, steps=steps, delta=delta)
            quantile = float(np.quantile(b_max, 1.0 - delta))
            ratio = quantile / bound
            out[f"quantile_over_bound_T{steps}_p{p}_delta{delta:g}"] = ratio
            worst_ratio[delta] = max(worst_ratio[delta], ratio)
            fails = int(np.sum(b_max > bound))
            if fails >= worst_fail.get(delta, (-1,))[0]:
                worst_fail[delta] = (fails, steps, p)
            if delta == deltas[0]:
                shape.setdefault(steps, []).append(
                    quantile
                    / (
                        leaf
                        * math.sqrt(p)
                        * math.log2(steps) ** 1.5
                        * math.sqrt(math.log(2 * steps / delta))
                        / mu
                    )
                )
    for delta in deltas:
        fails, _, _ = worst_fail[delta]
        out[f"failure_rate_worst_point_delta{delta:g}"] = exceedance_interval(fails, runs)
        out[f"max_quantile_over_bound_delta{delta:g}"] = worst_ratio[delta]
    first = min(shape)
    base = float(np.mean(shape[first]))
    out["T_shape_growth_over_smallest_T"] = max(
        float(np.mean(v)) / base for t, v in shape.items() if t != first
    )
    for steps, values in sorted(law.items()):
        out[f"prefix_energy_over_tree_law_T{steps}"] = mean_interval(
            np.concatenate(values), confidence=TREE_ERROR_LAW_CONFIDENCE
        )
    return out


def tree_error_experiment(
    budget: str, variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD
) -> ValueExperiment:
    """The Lemma 5.6 check of ``cgt24.tree.error`` (``variant``: a broken tree, for tests)."""
    grid = TREE_ERROR_GRID.get(budget, TREE_ERROR_GRID["standard"])
    runs = TREE_ERROR_RUNS[budget]
    le: dict[str, float] = {"T_shape_growth_over_smallest_T": 1.0}
    for delta in TREE_ERROR_DELTAS:
        le[f"failure_rate_worst_point_delta{delta:g}"] = delta
        le[f"max_quantile_over_bound_delta{delta:g}"] = 1.0
        for steps, p in grid:
            le[f"quantile_over_bound_T{steps}_p{p}_delta{delta:g}"] = 1.0
    expected = {f"prefix_energy_over_tree_law_T{t}": 1.0 for t in sorted({t for t, _ in grid})}
    return ValueExperiment(
        compute=lambda rng: tree_error_lemma(
            rng, grid=grid, runs=runs, deltas=TREE_ERROR_DELTAS, variant=variant
        ),
        expected=expected,
        le=le,
        note=f"Lemma 5.6 on Algorithm 1's tree at its own C = C_Δ/(Bβ) = 1 and "
        f"μ = μ*(1, 1e-5) = 0.268; (T, p) ∈ {list(grid)}, {runs} runs each; per δ ∈ "
        f"{list(TREE_ERROR_DELTAS)}: the (1 − δ)-quantile of max_t‖e_t‖ over "
        "4C log₂^{3/2}(T) sqrt(p ln(2T/δ))/μ (≤ 1) and the failure rate of the worst point "
        "(≤ δ, Clopper–Pearson); T-dependence: the quantile over "
        "C sqrt(p) log₂^{3/2}(T) sqrt(ln(2T/δ))/μ does not grow past its value at the smallest "
        "T; tree law: Σ_t‖e_t‖²/(p σ² Σ_t popcount(t+1)) = 1 with σ = C sqrt(⌊log₂T⌋+1)/μ "
        f"({TREE_ERROR_LAW_CONFIDENCE:g} intervals), which a tree with too little noise "
        "(one node per prefix, a log factor missing from σ) or too much fails",
    )


@register_experiment("cgt24.tree.error")
def value_tree_error_lemma(claim, budget):
    """Lemma 5.6 as an upper bound on the (1 − δ)-quantile of max_t‖e_t‖, over T and p."""
    return tree_error_experiment(budget)


@register_experiment("cgt24.utility.deterministic_accel")
def sweep_accelerated_excess_in_T(claim, budget):
    """RT1: F(y_T) − F* ∝ T^{-2} on H1 with k = 2T + 1, exact gradients, no noise (acceleration)."""
    values = BySize(quick=[4, 8, 16, 32, 64], standard=[4, 8, 16, 32, 64, 128, 256])
    return RateExperiment.for_claim(
        claim,
        rt1_excess,
        "T",
        values[budget],
        replicates=2,
        note="deterministic (replicates identical); the spec's tolerance 0.2",
    )


@register_experiment("cgt24.utility.generic")
def sweep_optimisation_term_in_beta(claim, budget):
    """Thm 5.1 optimisation term β R²/T²: at fixed T the noise-free error grows at most like β."""
    return RateExperiment.for_claim(
        claim,
        beta_excess,
        "beta",
        [1.0, 2.0, 4.0, 8.0, 16.0],
        replicates=2,
        fixed={"steps": BySize(quick=16, standard=32)[budget]},
        note="Nesterov's chain quadratic, k = 2T+1, exact gradients; the optimisation term is an "
        "upper bound ∝ β",
    )


@register_experiment("cgt24.v1.gradnorm_decay")
def sweep_gradnorm_in_t(claim, budget):
    """Lemma 5.4: ‖∇F(x_t)‖ decays at least like (t+1)^{-1/4} (an upper bound)."""
    return RateExperiment.for_claim(
        claim,
        gradnorm_at,
        "t+1",
        [2, 4, 8, 16, 32],
        variable="t",
        replicates=REPLICATES[budget],
        fixed={"n": BySize(quick=2**13, standard=2**16)[budget]},
        trivial=gradnorm_origin,
        note="V1 practical on Nesterov's chain quadratic (x† ∈ C), ε = 1, T = 32; the lemma's "
        "slowest term is (t+1)^{-1/4}; the sweep starts at t+1 = 2 because x_0 = 0 is fixed and "
        "has a small gradient on the chain",
    )


@register_experiment("cgt24.v1.rate.statistical")
def sweep_v1_statistical_rate_in_n(claim, budget):
    """RT2: T = round(n^{1/4}) steps, B = n/T: excess O(n^{-1/2}) on H1."""
    values = BySize(
        quick=[2**10, 2**12, 2**14, 2**16], standard=[2**10, 2**12, 2**14, 2**16, 2**18]
    )
    return RateExperiment.for_claim(
        claim,
        rt2_excess,
        "n",
        values[budget],
        replicates=BySize(quick=5, standard=20)[budget],
        trivial=rt2_origin,
    )


V1_PRIVATE_P = 256
V1_PRIVATE_EPSILON = 0.07
"""RT3's (p, ε): p/ε² = 52245, so the regime n ≤ p/ε² ≤ n² of Thm 5.8's privacy term holds for
229 ≤ n ≤ 52245, where √p/(εn) ≥ 1/√n."""
V1_PRIVATE_GRID = BySize(
    quick=(4096, 8192, 16384, 40960),
    standard=(4096, 6492, 10289, 16307, 25844, 40960),
)
"""n of RT3 (one decade, inside the regime).  It starts at 2^12, where V1's excess (0.20) is
clearly below the constant output's 0.3; about 3 s per replicate at n = 40960."""


def v1_private_excess(
    n: int,
    rng,
    *,
    d: int = V1_PRIVATE_P,
    epsilon: float = V1_PRIVATE_EPSILON,
    trials: int = 4,
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD,
) -> np.ndarray:
    """RT3: V1 (practical defaults, tree noise) on LIN (m = 0.3 e₁, L = R = 1) at p = 256,
    ε = 0.07, δ = 1e-5; ``variant`` is the algorithm class (a broken one, to test the test)."""
    inst = LinearBallInstance(_lin_mean(d))
    algo = variant.from_theorem(_lin_problem(n, d=d, epsilon=epsilon))
    return inst.excess_risk(algo.run(inst.sample(n, 1, rng), rng, trials).theta)


@register_experiment("cgt24.v1.rate.privacy")
def sweep_v1_privacy_rate_in_n(claim, budget):
    """RT3 in its regime (n ≤ p/ε² ≤ n²): E-V1 on LIN decays at least like n^{-1}.

    Thm 5.8 gives no constant (an O(·) with polylog(n, 1/δ)), so only the exponent is tested.
    """
    return RateExperiment.for_claim(
        claim,
        v1_private_excess,
        "n",
        V1_PRIVATE_GRID[budget],
        replicates=REPLICATES[budget],
        baseline=Baseline("the constant output 0", LIN_SIGNAL),
        note=f"LIN (linear loss, m = {LIN_SIGNAL:g} e1, L = R = 1, M = 0), V1 practical, "
        f"p = {V1_PRIVATE_P}, eps = {V1_PRIVATE_EPSILON:g}: p/eps^2 = 52245 >= n, so the private "
        "term sqrt(p)/(eps n) dominates 1/sqrt(n); Thm 5.8 states no constant, so the exponent "
        "alone is tested. A linear loss has M = 0, so the x_dagger in C assumption (used through "
        "M-terms only: Lemmas 5.4-5.5) is not needed; the ball's curvature makes a fixed "
        "instance's excess decay faster than n^-1",
    )


@register_experiment("cgt24.v2.rate.statistical")
def sweep_v2_statistical_rate_in_n(claim, budget):
    """RT4: LIN, V2 paper constants, B = T = √n: excess O(n^{-1/2})."""
    values = BySize(
        quick=[2**12, 2**13, 2**14, 2**15, 2**16], standard=[2**10, 2**12, 2**14, 2**16, 2**18]
    )
    return RateExperiment.for_claim(
        claim, rt4_excess, "n", values[budget], replicates=REPLICATES[budget], trivial=rt4_origin
    )


V2_ENVELOPE_EPSILONS = (0.1, 0.3, 1.0, 3.0)


def _v2_envelope(rng, n: int, trials: int) -> dict:
    """Per ε of :data:`V2_ENVELOPE_EPSILONS`: the mean ratio with one-sided Student-t bounds."""
    confidence = 1.0 - 2 * 0.05 / len(V2_ENVELOPE_EPSILONS)  # one-sided 0.05/k in each tail
    intervals = [
        mean_interval(
            rt4_excess(n, rng, epsilon=eps, trials=trials) / (1.0 / math.sqrt(n) + 4.0 / (eps * n)),
            confidence=confidence,
        )
        for eps in V2_ENVELOPE_EPSILONS
    ]
    means, lowers, uppers = zip(*intervals, strict=True)
    return {"max_envelope_ratio": (max(means), max(lowers), max(uppers))}


@register_experiment("cgt24.v2.rate.privacy")
def value_v2_privacy_envelope_in_eps(claim, budget):
    """V2 privacy term: at n fixed, the excess on LIN stays within the envelope as ε shrinks.

    Envelope test (spec §7(b) rule 3: no one-sided slope along ε): at every ε the expected
    ratio excess / (L R (1/√n + √p/(εn))) must stay below the V2 constant 16c_M + 8 = 8.  The
    theorem bounds an expectation, so the check is statistical: a violation is called only
    when a one-sided lower confidence bound on some ε's mean ratio (Student t, 95% jointly,
    Bonferroni over the ε grid) exceeds 8 (an ``le`` bound on (largest mean, largest lower
    bound, largest upper bound)).
    """
    n = BySize(quick=2**12, standard=2**16)[budget]
    trials = BySize(quick=12, standard=48)[budget]
    return ValueExperiment(
        compute=lambda rng: _v2_envelope(rng, n, trials),
        le={"max_envelope_ratio": 8.0},
        note=f"LIN p=16, n={n}, ε ∈ {list(V2_ENVELOPE_EPSILONS)}, {trials} trials per ε; "
        "reported as (largest mean ratio, largest lower bound, largest upper bound): "
        "consistent iff no ε's mean ratio is significantly above 8",
    )


@register_experiment("cgt24.v2.rate.batch_flat")
def sweep_v2_excess_in_B(claim, budget):
    """RT5: LIN, V2, excess does not grow with B for B ≤ √n (upper bound B^0)."""
    n = BySize(quick=2**12, standard=2**16)[budget]
    top = int(math.isqrt(n))
    values = BySize(
        quick=[top // 16, top // 8, top // 4, top // 2, top],
        standard=[top // 10, top // 5, top // 2, top],
    )
    return RateExperiment.for_claim(
        claim,
        rt5_excess,
        "B",
        values[budget],
        replicates=BySize(quick=3, standard=6)[budget],
        fixed={"n": n},
        trivial=rt5_origin,
    )


@register_experiment("cgt24.indep.rate")
def sweep_independent_estimator_in_B(claim, budget):
    """Thm 5.13 stochastic term 8L²T/(√B β): error decays at least like B^{-1/2} (upper bound)."""
    return RateExperiment.for_claim(
        claim,
        indep_excess,
        "B",
        [16, 64, 256, 1024],
        replicates=BySize(quick=6, standard=20)[budget],
        trivial=indep_origin,
        note="Nesterov's stochastic chain quadratic, s = 0.5, T = 16, β = 2, no DP noise; the √B "
        "is a loose Jensen step (as the spec notes)",
    )


@register_experiment("cgt24.srg.error")
def sweep_srg_error_in_B(claim, budget):
    """RT6: the SRG error ‖∇_t − ∇F(x_t)‖ = O(B^{-1/2}) (H1, s = 0.5, no noise)."""
    values = BySize(quick=[16, 64, 256, 1024], standard=[16, 32, 64, 128, 256, 512, 1024])
    return RateExperiment.for_claim(
        claim,
        srg_error,
        "B",
        values[budget],
        replicates=BySize(quick=10, standard=30)[budget],
    )


# -------------------------------------------------------------------------- complexity and formulas


def _gradient_counts(rng) -> dict:
    out = {}
    for n in (2**10, 2**12):
        inst = LeastSquaresInstance(4)
        data = inst.sample(n, 1, rng)
        for schedule in ("v1", "v2"):
            algo = AcceleratedDPSRGD.from_theorem(_problem(inst.loss, n=n, d=4), schedule=schedule)
            out[f"{schedule}_n{n}_evaluations_per_2n_minus_B"] = algo.run(
                data, rng, 2
            ).gradient_evaluations / (2 * algo.steps * algo.batch_size - algo.batch_size)
    return out


@register_experiment("cgt24.complexity.gradients")
def value_gradient_count_2n_minus_B(claim, budget):
    """C-grad: counted gradient evaluations equal 2n − B (n = B·T examples, one pass)."""
    return ValueExperiment(
        compute=_gradient_counts,
        expected={
            f"{s}_n{n}_evaluations_per_2n_minus_B": 1.0
            for n in (2**10, 2**12)
            for s in ("v1", "v2")
        },
    )


def _v1_constants(rng) -> dict:
    c4 = c_dp(10**4, (10**4) ** -1.1)
    c6 = c_dp(10**6, (10**6) ** -1.1)
    algo = AcceleratedDPSRGD.from_theorem(_problem(LinearLoss(), n=2**16))
    return {
        "c_dp_n1e4": c4,
        "c_dp_n1e6": c6,
        "practical_steps_n2_16": algo.steps,
        "practical_batch_n2_16": algo.batch_size,
        "steps_times_batch_over_n": algo.steps * algo.batch_size / 2**16,
    }


@register_experiment("cgt24.complexity.v1_steps")
def value_v1_schedule_constants(claim, budget):
    """Eq. (19) c_DP against the spec's worked numbers and the practical T = n^{1/4}.

    Spec: c_DP ≈ 1.4e4 at n = 1e4 and 4.4e4 at n = 1e6.
    """
    return ValueExperiment(
        compute=_v1_constants,
        rtol=0.05,
        expected={
            "c_dp_n1e4": 1.4e4,
            "c_dp_n1e6": 4.4e4,
            "practical_steps_n2_16": 16,
            "practical_batch_n2_16": 4096,
            "steps_times_batch_over_n": 1.0,
        },
        note="δ = n^{-1.1}; the paper's V1 constants give T > n for every n <= 1e6 (vacuous)",
        transcription=True,
    )


def _v2_constants(rng) -> dict:
    problem = _problem(LinearLoss(), n=2**16)
    algo = AcceleratedDPSRGD.from_theorem(problem, schedule="v2")
    small = AcceleratedDPSRGD.from_theorem(problem.replace(n=2**10), schedule="v2")
    return {
        "steps_n2_16": algo.steps,
        "batch_n2_16": algo.batch_size,
        "beta_n2_16": algo.beta,
        "clip_n2_16": algo.clip,
        "tree_height_n2_16": tree_height(algo.steps),
        "steps_n2_10": small.steps,
    }


@register_experiment("cgt24.complexity.v2_steps")
def value_v2_schedule_constants(claim, budget):
    """Thm 5.12 schedule: T = B = √n and the spec §2.4 golden numbers.

    β = 8192, C_Δ = 16, h = 9 at n = 2^16.
    """
    return ValueExperiment(
        compute=_v2_constants,
        expected={
            "steps_n2_16": 256,
            "batch_n2_16": 256,
            "beta_n2_16": 8192.0,
            "clip_n2_16": 16.0,
            "tree_height_n2_16": 9,
            "steps_n2_10": 32,
        },
    )


UNACCELERATED_N = BySize(
    quick=[2**8, 2**10, 2**12, 2**14], standard=[2**8, 2**10, 2**12, 2**14, 2**16]
)


def _unaccelerated_counts(rng, values) -> dict:
    """Counter checks of :func:`unaccelerated_schedule`: 2n − B gradients, T = n/B rounds."""
    out = {}
    for n in values:
        inst = LeastSquaresInstance(4)
        algo = unaccelerated_schedule(n, loss=inst.loss)
        run = algo.run(inst.sample(n, 1, rng), rng, 1)
        b = algo.batch_size
        out[f"n{n}_evaluations_per_2n_minus_B"] = run.gradient_evaluations / (2 * n - b)
        out[f"n{n}_rounds_per_n_over_B"] = run.max_difference_norm.shape[1] / (n / b)
        out[f"n{n}_step_times_sqrt_n_over_B"] = math.sqrt(n) / (algo.beta * b)
    return out


@register_experiment("cgt24.complexity.unaccelerated")
def sweep_unaccelerated_rounds_in_n(claim, budget):
    """§4.3: unaccelerated single-epoch SRGD at B = O(1) takes T = Θ(n) batch gradient steps.

    A rate sweep of the rounds the implementation counts (exponent 1 in n, as the TOML's
    ``tested`` says) and a value check of its counters against the sketch's schedule.
    """
    values = UNACCELERATED_N[budget]
    rounds = RateExperiment.for_claim(
        claim,
        unaccelerated_rounds,
        "n",
        values,
        replicates=2,
        note=f"τ ≡ 0, B = {UNACCELERATED_BATCH}, T = n/B, 1/β = B/√n, LS p = 4, no DP noise; "
        "deterministic (replicates identical)",
    )
    counters = ValueExperiment(
        compute=lambda rng: _unaccelerated_counts(rng, values),
        expected={
            f"n{n}_{name}": 1.0
            for n in values
            for name in (
                "evaluations_per_2n_minus_B",
                "rounds_per_n_over_B",
                "step_times_sqrt_n_over_B",
            )
        },
        note="single epoch: 2n − B gradient evaluations, n/B adaptive rounds, step 1/β = B/√n",
    )
    return CombinedExperiment(
        parts={"rounds_in_n": rounds, "counters": counters},
        note="the sketch's variance exponents (t, B, n) rest on iterate moves of size ~1/β at "
        "every step, which no fixed instance keeps (they shrink as the iterates converge); "
        "what is tested is the complexity the sketch concludes: T = Θ(n) rounds at B = O(1)",
    )


def _first_order_ratios(rng, values) -> dict:
    from dpclaims.hardinstances.lower_bounds import nesterov_lower_bound

    ratios = []
    for steps in values:
        inst = NesterovChainInstance.for_steps(steps)
        bound = nesterov_lower_bound(steps, 1.0, float(np.linalg.norm(inst.theta_star)))
        ratios.append(rt1_excess(steps, rng) / bound)
    return {"min_ratio_to_lower_bound": min(ratios), "max_ratio_to_lower_bound": max(ratios)}


@register_experiment("cgt24.lb.first_order")
def value_first_order_lower_bound_ratio(claim, budget):
    """[Nes04] on H1 (k = 2T + 1): noise-free Algorithm A stays within [1, 3]× the span bound."""
    values = BySize(quick=[4, 8, 16, 32, 64], standard=[4, 8, 16, 32, 64, 128, 256])[budget]
    return ValueExperiment(
        compute=lambda rng: _first_order_ratios(rng, values),
        ge={"min_ratio_to_lower_bound": 1.0},
        le={"max_ratio_to_lower_bound": 3.0},
        note="every ratio to the lower bound in [1, 3] (spec: ≈ 2.1–2.5)",
    )


DPSCO_LB_NS = BySize(quick=(2**10, 2**12, 2**14), standard=(2**10, 2**12, 2**14, 2**16))
DPSCO_LB_REGIMES = {"statistical": 1.0, "private": 0.05}
"""ε of each regime at p = 16: √p/(εn) ≪ 1/√n at ε = 1; √p/(εn) ≥ 1/√n up to n = 2^14 at 0.05."""
DPSCO_LB_DIMENSION = 16
DPSCO_LB_TREND_FLOOR = 0.5


def _dpsco_lb_excess(rng, n: int, epsilon: float, *, signs: int, datasets: int, trials: int):
    """Worst (over ``signs`` sign vectors ν) mean excess of V2 on the BST14 family at ``n``.

    Linear loss ``−⟨z, θ⟩`` on the unit ball, items ``z = (L/√p)s`` with ``P(s_k = ν_k) =
    (1 + α)/2``, L = 1, p = 16, the signal at the lower bound's scale
    ``α = min{1, 1/√n + min{1, √p/(εn)}}`` (so the zero output's excess R‖E z‖ is the formula at
    constant 1); Algorithm 1 with Thm 5.12's V2 schedule (no x† ∈ C), δ = n^{-1.1}.
    """
    p = DPSCO_LB_DIMENSION
    formula = dpsco_lower_bound(n, p, epsilon)
    worst = 0.0
    for _ in range(signs):
        nu = rng.choice([-1.0, 1.0], size=p)
        inst = LinearHypercubeInstance(p, alpha=min(1.0, formula), signs=nu)
        problem = Problem(
            n=n,
            d=p,
            epsilon=epsilon,
            delta=float(n) ** -1.1,
            lipschitz=1.0,
            smoothness=None,
            radius=1.0,
            loss=inst.loss,
        )
        algo = AcceleratedDPSRGD.from_theorem(problem, schedule="v2")
        excess = [
            inst.excess_risk(algo.run(inst.sample(n, 1, rng), rng, trials).theta)
            for _ in range(datasets)
        ]
        worst = max(worst, float(np.mean(excess)))
    return worst / formula


def dpsco_lower_bound_sanity(rng, *, ns, signs: int = 4, datasets: int = 4, trials: int = 8):
    """``cgt24.lb.dpsco``: Accelerated DP-SRGD on the hard family vs the cited bound's formula."""
    out: dict = {}
    # the toolkit's formula against the one the paper cites, at one point (a transcription)
    n, p, eps = 4096, 16, 0.05
    out["formula_transcription_n4096_p16_eps0.05"] = dpsco_lower_bound(n, p, eps) / (
        1.0 / math.sqrt(n) + min(1.0, math.sqrt(p) / (eps * n))
    )
    for regime, epsilon in DPSCO_LB_REGIMES.items():
        ratios = [
            _dpsco_lb_excess(rng, n, epsilon, signs=signs, datasets=datasets, trials=trials)
            for n in ns
        ]
        for n, ratio in zip(ns, ratios, strict=True):
            out[f"excess_over_formula_{regime}_n{n}"] = ratio
        out[f"ratio_trend_{regime}"] = ratios[-1] / ratios[0]
    return out


@register_experiment("cgt24.lb.dpsco")
def value_dpsco_lower_bound_sanity(claim, budget):
    """A sanity run of the paper's algorithm on the bound's family, checked as ``lowy26.lb.sco``
    is (a run that can fail: ``consistent`` or ``inconsistent``); the Ω's constant is unspecified,
    so the ratios to the formula are reported and their trend tested."""
    ns = DPSCO_LB_NS[budget]
    datasets = BySize(quick=4, standard=8)[budget]
    ge = {f"ratio_trend_{r}": DPSCO_LB_TREND_FLOOR for r in DPSCO_LB_REGIMES}
    ge |= {f"excess_over_formula_{r}_n{n}": 0.0 for r in DPSCO_LB_REGIMES for n in ns}
    return ValueExperiment(
        compute=lambda rng: dpsco_lower_bound_sanity(rng, ns=ns, datasets=datasets),
        expected={"formula_transcription_n4096_p16_eps0.05": 1.0},
        ge=ge,
        rtol=1e-9,
        note="BST14 family (linear loss on the unit ball, signed-cube items, p = 16, L = R = 1) "
        "at the bound's signal α = 1/√n + min{1, √p/(εn)}, worst of 4 sign vectors, "
        f"{datasets}×8 runs each; Algorithm 1 with the V2 schedule (Thm 5.12), n ∈ {list(ns)}, "
        f"ε = 1 (statistical term) and 0.05 (private term). The Ω's constant is unspecified, "
        "so excess/formula is reported, not tested (≥ 0); tested: the ratio at the largest n over "
        f"the smallest is ≥ {DPSCO_LB_TREND_FLOOR} (the excess falls no faster than the formula) "
        "and the toolkit's formula is the cited one. One algorithm on one family can only fail "
        "to contradict a minimax bound",
    )
