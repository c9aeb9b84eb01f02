"""Accelerated-DP-SRGD (Choquette-Choo, Ganesh, Thakurta 2024, Algorithm 1), batched over trials.

Spec: ``shared/papers/002_choquette_choo_ganesh_thakurta_dp_srgd.md`` (§2.1 the implementable
form used here).  One pass over n = B·T examples in arrival order, batch t = examples
``tB .. (t+1)B − 1``.  Per example d of batch t the stochastic-recursive-gradient difference
``δ_t(d) = (t+1)∇f(x_t; d) − t∇f(x_{t−1}; d)`` (both at the same example, η_t = t + 1) is
clipped to ``C_Δ``; ``Δ_t`` is their batch mean, ``G_t = Σ_{i≤t} Δ_i`` and the only release is
the noisy prefix ``P_t = G_t/β + e_t`` with Fenwick-tree noise ``e_t``
(:mod:`.tree`).  Then (Algorithm 1, lines 7–9, with b_t = −e_t)::

    z_{t+1} = Π_C(z_t − a·P_t),   y_{t+1} = Π_C(x_t − P_t/(t+1)),
    x_{t+1} = (1 − τ_{t+1}) y_{t+1} + τ_{t+1} z_{t+1},   τ_{t+1} = 2/(t+3),

and the output is ``y_T``.  ``a`` (``z_step_scale``) is 1 as printed; 1/4 is the value the
potential argument of Lemmas 5.2/5.3 needs (spec §2.1 [PAPER ERROR?]).

Variants: ``estimator="independent"`` (§2.5, Thm 5.13: fresh clipped batch gradients with
i.i.d. per-step noise), ``interpolation="none"`` (§2.6: unaccelerated SRGD, τ ≡ 0), and the
single-epoch DP-SGD baseline :func:`single_epoch_dpsgd` (§2.7 B-sgd1, the shared
:class:`~dpclaims.algorithms.baselines.DPSGD`).  The mutants of spec §7(c) are subclasses in
:mod:`dpclaims.targets.mutants.choquette_choo_et_al_2024` that override one hook (``_noise_tree``,
``_srg_leaf``, ``_aggregate``, ``_clipped``, ``_second_tree``, ``_y_step``, ``_tau``, ``mu``).

Privacy (spec §3.3): zero-out item-level neighbours (the canary replaced by a null item) —
in the toolkit ``unit="item"``, ``relation="replace"`` with a null replacement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.choquette_choo_et_al_2024.tree import (
    PAPER_CONVERSION_MAX_EPSILON,
    TreeNoise,
    mu_exact,
    mu_paper,
    paper_height,
    prefix_noise_covariance,
    tree_height,
)
from dpclaims.algorithms.transcript import GaussianRelease
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from dpclaims.gdp import gdp_epsilon
from dpclaims.losses import LinearLoss, project_l2_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = [
    "SCHEDULES",
    "CONSTANTS",
    "CALIBRATIONS",
    "ESTIMATORS",
    "INTERPOLATIONS",
    "KAPPA_T",
    "KAPPA_C",
    "Z_STEP_PRINTED",
    "Z_STEP_PROOF",
    "CHUNK_BYTES",
    "c_dp",
    "v1_paper_constants",
    "AcceleratedDPSRGD",
    "SRGDRun",
    "SRGDTranscript",
    "TranscriptStatistic",
    "canary_audit",
    "single_epoch_dpsgd",
]

SCHEDULES = ("v1", "v2", "custom")
"""``v1``: ≈ n^{1/4} steps, needs x† ∈ C (eq. (19), Thm 5.8).

``v2``: √n steps of batch √n (Thm 5.12)."""

CONSTANTS = ("practical", "paper")
"""``paper``: the theorem's constants (V1's are vacuous at any feasible n).

``practical``: the spec §2.3 defaults."""

CALIBRATIONS = ("exact", "paper", "printed")
"""Per-node σ from: ``exact`` μ*(ε, δ) of the GDP curve (default); ``paper`` Lemma 5.6 with
μ = ε/sqrt(2 ln(2.5/δ)); ``printed`` σ exactly as printed in Cor. 5.7 (V1) / Cor. 5.11 (V2)."""

ESTIMATORS = ("srg", "independent")
INTERPOLATIONS = ("accelerated", "none")
"""τ_{t+1} = 2/(t+3) (Algorithm 1); ``none``: τ ≡ 0 (§2.6, unaccelerated SRGD of §4.3)."""

KAPPA_T = 1.0
"""PRACTICAL (spec §2.3): V1 steps T = round(κ_T n^{1/4})."""

KAPPA_C = 2.0
"""PRACTICAL (spec §2.3): V1 clip C_Δ = κ_c L (pre-clip ‖δ_t(d)‖ stayed ≤ ~L in the spec's runs)."""

Z_STEP_PRINTED = 1.0
"""z-step scale a of Algorithm 1 as printed."""

Z_STEP_PROOF = 0.25
"""z-step scale a = 1/4 for which the potential of Lemmas 5.2/5.3 is monotone (spec §2.1)."""

CHUNK_BYTES = 256 * 2**20
"""Bytes of per-trial working arrays per sub-batch of trials."""


def c_dp(n: int, delta: float) -> float:
    """``c_DP = 4√2 log₂^{3/2}(n) sqrt(ln(2n/δ)) ln(2.5/δ)`` (eq. (19))."""
    n = check_count(n, "n", minimum=2)
    delta = check_delta(delta)
    return (
        4.0
        * math.sqrt(2.0)
        * math.log2(n) ** 1.5
        * math.sqrt(math.log(2 * n / delta))
        * math.log(2.5 / delta)
    )


def v1_paper_constants(problem: Problem) -> dict:
    """The V1 parameters of eq. (19) / Thm 5.8 with the paper's constants (p = d).

    ``c_DP``, ``beta = c_DP²(L/R)max{1, √p/(ε√n)}``, ``steps = c_DP n^{1/4}``,
    ``batch = n/steps``, ``clip = c_DP L``, ``b_max = c_DP² L √p/(ε B β)``.
    Spec §2.3: B < 1 for every n ≤ 10^6.
    """
    n, d, epsilon = problem.n, problem.d, problem.epsilon
    c = c_dp(n, problem.delta)
    lip, rad = problem.lipschitz, check_positive(problem.radius, "radius")
    beta = c**2 * lip / rad * max(1.0, math.sqrt(d) / (epsilon * math.sqrt(n)))
    steps = c * n**0.25
    batch = n / steps
    return {
        "c_dp": c,
        "beta": beta,
        "steps": steps,
        "batch": batch,
        "clip": c * lip,
        "b_max": c**2 * lip * math.sqrt(d) / (epsilon * batch * beta),
    }


@dataclass(frozen=True)
class SRGDTranscript:
    """Intermediate releases and iterates of a run (all ``(trials, T, p)``).

    prefixes : P_t = G_t/β + e_t, the released noisy prefix sums (z-update copy)
    prefixes_y : the y-update copy when it differs (mutant ``fresh-yz-noise``), else None
    noise : e_t ;  points : x_t (where step t's gradients are taken) ;  y, z : y_{t+1}, z_{t+1}
    estimates : ∇_t = G_t/η_t (SRG) or the clean batch gradient (independent estimator)
    """

    prefixes: np.ndarray
    prefixes_y: np.ndarray | None
    noise: np.ndarray | None
    points: np.ndarray | None
    y: np.ndarray | None
    z: np.ndarray | None
    estimates: np.ndarray | None


TRANSCRIPT_FIELDS = ("prefixes", "prefixes_y", "noise", "points", "y", "z", "estimates")
"""The fields of :class:`SRGDTranscript`, in the order :meth:`AcceleratedDPSRGD.run` records."""

RELEASES = ("prefixes", "prefixes_y")
"""``transcript=RELEASES`` records only the released prefix sums (what a white-box audit reads);
the other fields are None.  About 5× cheaper than the full transcript at T = 63."""


@dataclass(frozen=True)
class SRGDRun:
    """Outputs of :meth:`AcceleratedDPSRGD.run`.

    theta : (trials, p) output y_T
    gradient_evaluations : per-example gradient evaluations of one run (2n − B for SRG, n
    independent)
    max_difference_norm : (trials, T) pre-clip max_d ‖δ_t(d)‖ at each step (per-example gradient
        norm for the independent estimator)
    clipped : (trials,) number of clipped per-example differences
    transcript : :class:`SRGDTranscript` when requested
    """

    theta: np.ndarray
    gradient_evaluations: int
    max_difference_norm: np.ndarray
    clipped: np.ndarray
    transcript: SRGDTranscript | None = None

    def to_dict(self) -> dict:
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "gradient_evaluations": int(self.gradient_evaluations),
            "max_difference_norm": float(self.max_difference_norm.max()),
            "clipped_fraction": float(np.mean(self.clipped > 0)),
        }


@dataclass(frozen=True, kw_only=True)
class AcceleratedDPSRGD:
    """Accelerated-DP-SRGD (Algorithm 1) with Fenwick-tree noise; build with :meth:`from_theorem`.

    Fields
    ------
    loss : a :mod:`dpclaims.losses` loss (per-example ``grad``)
    steps : T, batch steps (V1: ``c_DP n^{1/4}`` eq. (19); V2: ``n/B`` Thm 5.12)
    batch_size : B (V1: ``n/T``; V2: ``⌊√n⌋``)
    beta : β (V1: eq. (19); V2: ``(16c_M + 8)L n^{3/2}/(R B²)``)
    clip : C_Δ, clip of per-example differences (V1: ``c_DP L`` / practical ``κ_c L``; V2:
        ``(8c_M + 4)L``, Cor. 5.10); ``inf`` = unclipped (private only for compliant losses)
    sigma : per-node noise std on the β-scaled prefix sums (Lemma 5.6 / Cor. 5.7); for the
        independent estimator the per-step std on the batch-mean gradient
    radius : R, C = B(0, R)
    epsilon, delta : the targeted (ε, δ) (None when ``sigma = 0``: non-private reference)
    calibration, schedule, constants : how σ and the schedule were chosen (for reports)
    z_step_scale : a in ``z ← Π(z − a P_t)`` (1 printed, 1/4 proof-consistent)
    estimator : ``"srg"`` (Algorithm 1) or ``"independent"`` (§2.5)
    interpolation : ``"accelerated"`` (Algorithm 1) or ``"none"`` (§2.6)
    lipschitz, smoothness : L and M the parameters were derived for (reported only)
    """

    loss: Any
    steps: int
    batch_size: int
    beta: float
    clip: float
    sigma: float
    radius: float
    epsilon: float | None = None
    delta: float | None = None
    calibration: str = "exact"
    schedule: str = "custom"
    constants: str = "practical"
    z_step_scale: float = Z_STEP_PRINTED
    estimator: str = "srg"
    interpolation: str = "accelerated"
    lipschitz: float | None = None
    smoothness: float | None = None
    _tree: TreeNoise = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not hasattr(self.loss, "grad"):
            raise InputError(
                "loss must be a dpclaims.losses loss with a per-example grad(theta, x, y)"
            )
        set_ = object.__setattr__
        set_(self, "steps", check_count(self.steps, "steps"))
        set_(self, "batch_size", check_count(self.batch_size, "batch_size"))
        set_(self, "beta", check_positive(self.beta, "beta"))
        set_(self, "clip", check_positive(self.clip, "clip", allow_inf=True))
        set_(self, "sigma", check_positive(self.sigma, "sigma", allow_zero=True))
        set_(self, "radius", check_positive(self.radius, "radius", allow_inf=True))
        set_(self, "z_step_scale", check_positive(self.z_step_scale, "z_step_scale"))
        check_choice(self.calibration, CALIBRATIONS, "calibration")
        check_choice(self.schedule, SCHEDULES, "schedule")
        check_choice(self.constants, CONSTANTS, "constants")
        check_choice(self.estimator, ESTIMATORS, "estimator")
        check_choice(self.interpolation, INTERPOLATIONS, "interpolation")
        if self.sigma > 0:
            if self.epsilon is None or self.delta is None:
                raise InputError(
                    "a noisy run needs the targeted epsilon and delta; pass epsilon=..., delta=..."
                )
            set_(self, "epsilon", check_epsilon(self.epsilon))
            set_(self, "delta", check_delta(self.delta))
        set_(self, "_tree", self._noise_tree())

    # ------------------------------------------------------------------ construction

    @classmethod
    def calibrated(cls, *, epsilon: float, delta: float | None, **fields: Any) -> AcceleratedDPSRGD:
        """The algorithm with σ calibrated for (ε, δ) from its other ``fields`` (all but σ).

        SRG (Lemma 5.6): leaf sensitivity ``s = C_Δ/(Bβ)``; ``exact``:
        ``σ = s·sqrt(⌊log₂T⌋+1)/μ*(ε, δ)``; ``paper``: ``σ = s·sqrt(1+⌈log₂T⌉)/μ`` with
        ``μ = ε/sqrt(2 ln(2.5/δ))``; ``printed``: Cor. 5.7 ``σ = C_Δ sqrt(log₂T · ln(2.5/δ))/(εBβ)``
        (V2, Cor. 5.11: times 2√2).  Independent estimator (§2.5): per-step ``σ = C/(Bμ)`` on
        the batch mean.  ``epsilon = inf`` gives σ = 0 (a non-private reference run).
        """
        base = cls(sigma=0.0, **fields)
        if check_positive(epsilon, "epsilon", allow_inf=True) == math.inf:
            return base
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        return replace(base, sigma=base._sigma_for(epsilon, delta), epsilon=epsilon, delta=delta)

    def _sigma_for(self, epsilon: float, delta: float) -> float:
        clip, steps, batch_size, beta = self.clip, self.steps, self.batch_size, self.beta
        calibration = self.calibration
        if math.isinf(clip):
            raise InputError(
                "clip=inf has no finite sensitivity to calibrate σ for; "
                "pass the clip C_Δ the theorem uses"
            )
        if self.estimator == "independent":
            if calibration == "printed":
                raise InputError(
                    "the paper prints no σ for the independent-gradient variant; "
                    "use calibration='exact' or 'paper'"
                )
            mu = mu_exact(epsilon, delta) if calibration == "exact" else mu_paper(epsilon, delta)
            return clip / (batch_size * mu)
        if calibration == "printed":
            if steps < 2:
                raise InputError(
                    "the printed Cor. 5.7 σ is 0 at T = 1 (log T = 0); "
                    "use T >= 2 or calibration='exact'"
                )
            factor = 2.0 * math.sqrt(2.0) if self.schedule == "v2" else 1.0
            return (
                factor
                * clip
                * math.sqrt(math.log2(steps) * math.log(2.5 / delta))
                / (epsilon * batch_size * beta)
            )
        leaf = clip / (batch_size * beta)
        if calibration == "exact":
            return leaf * math.sqrt(tree_height(steps)) / mu_exact(epsilon, delta)
        return leaf * math.sqrt(paper_height(steps)) / mu_paper(epsilon, delta)

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        schedule: str = "v1",
        constants: str = "practical",
        calibration: str = "exact",
        batch_size: int | None = None,
        steps: int | None = None,
        clip: bool = True,
        estimator: str = "srg",
        interpolation: str = "accelerated",
    ) -> AcceleratedDPSRGD:
        """Parameters of Thm 5.8 (``schedule="v1"``, eq. (19)) or Thm 5.12 (``"v2"``), p = d.

        ``problem`` gives n, d, ε, δ, L, M (``smoothness``; None only for a linear loss,
        M = 0), R and the loss.  V1, ``constants="paper"``: eq. (19) with c_DP (raises when
        B < 1, which holds for every n ≤ 10^6 — spec §2.3); ``"practical"`` (spec §2.3,
        PRACTICAL): ``T = round(κ_T n^{1/4})``, ``B = ⌊n/T⌋``,
        ``β = max(1, c_M)(L/R)max{1, √p/(ε√n)}``, ``C_Δ = κ_c L``.  V2 (all constants
        explicit in Thm 5.12, both settings): ``B = ⌊√n⌋`` (or ``batch_size``),
        ``T = n // B``, ``c_M = MR/L``, ``β = (16c_M+8)L n^{3/2}/(R B²)``, ``C_Δ = (8c_M+4)L``.
        ``clip=False`` runs unclipped (the σ stays calibrated for C_Δ: Thm 5.8/5.12
        unclipped).  ``estimator``, ``interpolation``: the variants of §2.5 and §2.6.
        Item level only (``m = 1``).
        """
        if not isinstance(problem, Problem):
            raise InputError(
                f"problem must be a dpclaims.problem.Problem, got {type(problem).__name__}; "
                "pass Problem(n=..., d=..., epsilon=..., delta=..., lipschitz=..., "
                "smoothness=..., radius=..., loss=...)"
            )
        n, d, epsilon = check_count(problem.n, "n", minimum=2), problem.d, problem.epsilon
        if problem.m != 1:
            raise InputError(
                "Accelerated-DP-SRGD is an item-level algorithm: pass m=1 (one item per user), "
                f"got m={problem.m!r}"
            )
        check_choice(schedule, ("v1", "v2"), "schedule")
        check_choice(constants, CONSTANTS, "constants")
        lip, rad = problem.lipschitz, check_positive(problem.radius, "radius")
        smooth = _smoothness(problem)
        c_m = smooth * rad / lip
        if schedule == "v1":
            if constants == "paper":
                paper = v1_paper_constants(problem)
                if paper["batch"] < 1:
                    raise InputError(
                        f"the paper's V1 constants are vacuous at n={n}: "
                        f"c_DP={paper['c_dp']:.3g} gives T={paper['steps']:.3g} > n and "
                        f"B={paper['batch']:.3g} < 1 (spec 002 §2.3); use constants='practical'"
                    )
                t_steps = int(math.ceil(paper["steps"])) if steps is None else steps
                beta, c_clip = paper["beta"], paper["clip"]
            else:
                t_steps = max(1, int(round(KAPPA_T * n**0.25))) if steps is None else steps
                beta = max(1.0, c_m) * lip / rad * max(1.0, math.sqrt(d) / (epsilon * math.sqrt(n)))
                c_clip = KAPPA_C * lip
            t_steps = check_count(t_steps, "steps")
            b = n // t_steps if batch_size is None else batch_size
        else:
            b = int(math.isqrt(n)) if batch_size is None else batch_size
            b = check_count(b, "batch_size")
            t_steps = n // b if steps is None else steps
            beta = (16.0 * c_m + 8.0) * lip * n**1.5 / (rad * b**2)
            c_clip = (8.0 * c_m + 4.0) * lip
        if b < 1 or b * t_steps > n:
            raise InputError(f"batch_size*steps = {b}*{t_steps} must be between 1 and n = {n}")
        algo = cls.calibrated(
            epsilon=epsilon,
            delta=problem.delta,
            loss=problem.loss,
            steps=t_steps,
            batch_size=b,
            beta=beta,
            clip=c_clip,
            radius=rad,
            calibration=calibration,
            schedule=schedule,
            constants=constants,
            estimator=estimator,
            interpolation=interpolation,
            lipschitz=lip,
            smoothness=smooth,
        )
        return algo if clip else replace(algo, clip=math.inf)

    @classmethod
    def for_canary(
        cls,
        *,
        epsilon: float = 2.0,
        delta: float = 1e-5,
        steps: int = 16,
        batch_size: int = 10,
        beta: float = 2.0,
        clip: float = 4.0,
        calibration: str = "exact",
    ) -> AcceleratedDPSRGD:
        """The spec §7(a) audit setting on a linear loss: T = 16, β = 2, C_Δ = 4, R = 1, ε = 2.

        ``δ = 1e-5``; B is immaterial (null items have zero gradient).
        """
        return cls.calibrated(
            epsilon=epsilon,
            delta=delta,
            loss=LinearLoss(),
            steps=steps,
            batch_size=batch_size,
            beta=beta,
            clip=clip,
            radius=1.0,
            calibration=calibration,
        )

    # ------------------------------------------------------------------ reporting

    @property
    def leaf_sensitivity(self) -> float:
        """``C_Δ/(Bβ)``: how far one example can move its leaf Δ_t/β (zero-out)."""
        return self.clip / (self.batch_size * self.beta)

    @property
    def mu(self) -> float:
        """GDP parameter of this release at the clip: ``C_Δ sqrt(h)/(Bβσ)``, h = ⌊log₂T⌋+1.

        Independent estimator: ``C/(Bσ)``.  ``inf`` without noise or without clipping.
        The privacy mutants override it with the true μ of their (worst-case) release.
        """
        if self.sigma == 0 or math.isinf(self.clip):
            return math.inf
        if self.estimator == "independent":
            return self.clip / (self.batch_size * self.sigma)
        return self.leaf_sensitivity / self.sigma * math.sqrt(tree_height(self.steps))

    @property
    def claimed_mu(self) -> float:
        """The μ the calibration targets: μ*(ε, δ) (exact), else ε/sqrt(2 ln(2.5/δ))."""
        self._require_noise()
        return (
            mu_exact(self.epsilon, self.delta)
            if self.calibration == "exact"
            else mu_paper(self.epsilon, self.delta)
        )

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """Zero-out, item-level (ε, δ') as proven: δ' = δ for ``exact``, δ/2 otherwise.

        δ/2 is the paper's conversion (Cor. 5.7).  Unit ``item``, relation ``replace`` (the
        neighbour is the same stream with one example replaced by a null example);
        add/remove is not claimed (spec §1).
        """
        self._require_noise()
        if self.calibration == "exact":
            return PrivacyClaim(
                epsilon=self.epsilon,
                delta=self.delta,
                unit="item",
                relation="replace",
                source="Lemma 5.6 with exact GDP calibration (zero-out)",
            )
        if self.epsilon > PAPER_CONVERSION_MAX_EPSILON:
            raise InputError(
                f"the paper's conversion μ = ε/sqrt(2 ln(2.5/δ)) ⇒ (ε, δ/2) is false above ε ≈ "
                f"{PAPER_CONVERSION_MAX_EPSILON} (spec §2.2); use calibration='exact'"
            )
        corollary = "5.11" if self.schedule == "v2" else "5.7"
        return PrivacyClaim(
            epsilon=self.epsilon,
            delta=self.delta / 2.0,
            unit="item",
            relation="replace",
            source=f"Cor. {corollary} ({self.calibration} σ, zero-out)",
        )

    @property
    def epsilon_exact(self) -> float:
        """ε at the claim's δ of the μ this implementation really has (a tight audit's limit)."""
        return gdp_epsilon(self.mu, self.privacy_claim.delta)

    def _require_noise(self) -> None:
        if self.sigma == 0:
            raise InputError("this run adds no noise (epsilon=inf): it makes no privacy claim")

    @property
    def params(self) -> dict:
        """Every parameter, plus the derived h, μ and leaf sensitivity."""
        out = {
            "loss": repr(self.loss),
            "steps": self.steps,
            "batch_size": self.batch_size,
            "beta": self.beta,
            "clip": self.clip,
            "sigma": self.sigma,
            "radius": self.radius,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "calibration": self.calibration,
            "schedule": self.schedule,
            "constants": self.constants,
            "z_step_scale": self.z_step_scale,
            "estimator": self.estimator,
            "interpolation": self.interpolation,
            "variant": type(self).__name__,
            "lipschitz": self.lipschitz,
            "smoothness": self.smoothness,
            "tree_height": tree_height(self.steps),
            "leaf_sensitivity": self.leaf_sensitivity,
            "mu": self.mu,
            "examples_used": self.steps * self.batch_size,
        }
        return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in out.items()}

    def to_dict(self) -> dict:
        return self.params

    @property
    def step_release(self) -> GaussianRelease:
        """The claimed law of the released prefixes along the worst-placed canary:
        :meth:`canary_release` at ``batch=0`` (in the most tree nodes, the μ of :attr:`mu`)."""
        return self.canary_release()

    def canary_release(self, *, batch: int = 0, norm: float | None = None) -> GaussianRelease:
        """The claimed law of the released prefixes ``P_0..P_{T−1}`` along a fixed-gradient
        canary in batch ``batch`` (e.g. ``f_c(θ) = −⟨g, θ⟩``, ‖g‖ = ``norm``, default C_Δ),
        zeroed out (the claim's relation), every other example's gradient orthogonal to it.

        SRG estimator: the canary's difference ``(t*+1)g − t*g = g`` is clipped to
        ``c = min(‖g‖, C_Δ)`` and enters the leaf Δ_{t*} only, so every ``P_t = G_t/β + e_t``,
        t ≥ t*, moves by ``c/(Bβ)``; the tree noise has covariance ``σ²WWᵀ`` across steps
        (:func:`~.tree.prefix_noise_covariance`, Lemma 5.6's binary tree), so μ =
        ``c·sqrt(|up(t*+1)|)/(Bβσ)`` (differencing to the nodes decorrelates the releases:
        the canary is in the |up(t*+1)| nodes above its leaf).  Independent estimator (§2.5):
        ``P_t = η_t(∇̃_t + N(0, σ²))/β`` with fresh noise per step, the canary moves
        P_{t*} alone by ``η_{t*}c/(Bβ)``: μ = c/(Bσ).  Uses the claimed σ and tree (a mutant's
        changed noise is not described).
        """
        self._require_noise()
        if not isinstance(batch, (int, np.integer)) or not 0 <= batch < self.steps:
            raise InputError(f"batch must be in [0, steps) = [0, {self.steps}), got {batch!r}")
        if norm is None:
            if math.isinf(self.clip):
                raise InputError("an unclipped run has no full-radius canary; pass norm=...")
            norm = self.clip
        shift = min(check_positive(norm, "norm"), self.clip) / (self.batch_size * self.beta)
        steps = np.arange(self.steps)
        if self.estimator == "independent":
            mean = np.where(steps == batch, (batch + 1.0) * shift, 0.0)
            covariance = np.diag(((steps + 1.0) * self.sigma / self.beta) ** 2)
        else:
            mean = np.where(steps >= batch, shift, 0.0)
            covariance = prefix_noise_covariance(self.steps, self.sigma)
        return GaussianRelease(
            steps=self.steps,
            carriers=steps,
            mean_without=np.zeros(self.steps),
            mean_with=mean,
            covariance=covariance,
        )

    # ------------------------------------------------------------------ running

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The mechanism view (black box): ``(trials, p)`` final iterates y_T."""
        return self.run(data, rng, trials).theta

    def releases(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The released noisy prefixes ``P_0..P_{T−1}``, ``(trials, T, p)``: ``run(data, rng,
        trials, transcript=RELEASES).transcript.prefixes`` (the interface of
        :mod:`dpclaims.algorithms.transcript`; the same draws as ``run(data, rng, trials)``).
        A mutant that releases a second copy for the y-update (``prefixes_y``) releases more
        than this; an audit of this part alone is still valid (post-processing)."""
        return self.run(data, rng, trials, transcript=("prefixes",)).transcript.prefixes

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool | tuple[str, ...] = False,
    ) -> SRGDRun:
        """Run ``trials`` independent copies on the stream ``data`` (items in order; m = 1).

        Uses the first ``B·T`` examples (the rest, if any, are unused — spec §2.1).
        ``transcript``: True records every field of :class:`SRGDTranscript`; a tuple of field
        names (e.g. :data:`RELEASES`) records only those (the others are None).
        """
        if transcript is True:
            record_fields: tuple[str, ...] = TRANSCRIPT_FIELDS
        elif transcript is False:
            record_fields = ()
        else:
            record_fields = tuple(transcript)
            unknown = sorted(set(record_fields) - set(TRANSCRIPT_FIELDS))
            if unknown or not record_fields:
                raise InputError(
                    f"transcript must be True, False or field names of {TRANSCRIPT_FIELDS}, "
                    f"got {transcript!r}"
                )
        xs, ys = self._stream(data)
        trials = check_count(trials, "trials", example="100_000")
        if not isinstance(rng, np.random.Generator):
            raise InputError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        p = xs.shape[-1]
        per_trial = 8 * (4 * self.batch_size * p + (4 * self.steps + 8) * p + self.steps * 2)
        per_trial += 8 * len(record_fields) * self.steps * p
        chunk = max(1, min(trials, CHUNK_BYTES // per_trial))
        parts = [
            self._run_chunk(xs, ys, rng, trials=min(chunk, trials - s), record=record_fields)
            for s in range(0, trials, chunk)
        ]
        record = None
        if record_fields:
            fields_ = [
                np.concatenate([part[4][k] for part in parts])
                if parts[0][4][k] is not None
                else None
                for k in range(len(TRANSCRIPT_FIELDS))
            ]
            record = SRGDTranscript(**dict(zip(TRANSCRIPT_FIELDS, fields_, strict=True)))
        return SRGDRun(
            theta=np.concatenate([pt[0] for pt in parts]),
            gradient_evaluations=parts[0][1],
            max_difference_norm=np.concatenate([pt[2] for pt in parts]),
            clipped=np.concatenate([pt[3] for pt in parts]),
            transcript=record,
        )

    def _stream(self, data: UserDataset):
        """Batches ``x (T, B, p)``, ``y (T, B)`` or None from the first B·T items."""
        if not isinstance(data, UserDataset):
            raise InputError(f"data must be a UserDataset, got {type(data).__name__}")
        if data.m != 1:
            raise InputError(
                f"the stream must hold one item per user (m = 1, item level), got m = {data.m}"
            )
        used = self.steps * self.batch_size
        if data.n < used:
            raise InputError(
                f"the stream has {data.n} examples but steps*batch_size = {used}; pass more data"
            )
        xs = data.x[:used, 0, :].reshape(self.steps, self.batch_size, data.d)
        ys = None if data.y is None else data.y[:used, 0].reshape(self.steps, self.batch_size)
        return xs, ys

    def _grad(self, theta, xs, ys, t):
        return self.loss.grad(theta, xs[t], None if ys is None else ys[t])  # (trials, B, p)

    def _clipped(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Clip per-example vectors (trials, B, p) at C_Δ.

        Returns the clipped vectors, the max norm (trials,) and the clip count (trials,).
        """
        norms = np.linalg.norm(vectors, axis=-1)
        if math.isinf(self.clip):
            return vectors, norms.max(axis=1), np.zeros(norms.shape[0], dtype=np.int64)
        factor = self.clip / np.maximum(norms, self.clip)
        return vectors * factor[..., None], norms.max(axis=1), (norms > self.clip).sum(axis=1)

    def _project(self, theta: np.ndarray) -> np.ndarray:
        return theta if math.isinf(self.radius) else project_l2_ball(theta, self.radius)

    def _tau(self, t: int) -> float:
        """τ_{t+1} = η_{t+1}/η_{0:t+1} = 2/(t+3) (Algorithm 1 line 9); 0 without interpolation."""
        return 2.0 / (t + 3) if self.interpolation == "accelerated" else 0.0

    def _noise_tree(self) -> TreeNoise:
        """The prefix-noise mechanism (Lemma 5.6's binary tree)."""
        return TreeNoise(steps=self.steps, sigma=self.sigma)

    def _second_tree(self, trials: int, p: int):
        """A second noise tree for the y-update; Algorithm 1 reuses e_t (None)."""
        return None

    def _aggregate(self, diff: np.ndarray) -> np.ndarray:
        """The leaf Δ_t from clipped differences ``(trials, B, p)``: their batch mean."""
        return diff.mean(axis=1)

    def _srg_leaf(self, xs, ys, t: int, *, x_cur, x_prev):
        """Leaf Δ_t of step t (Algorithm 1 line 5) → leaf, max pre-clip norm, clip count, grads.

        ``δ_t(d) = η_t∇f(x_t; d) − η_{t−1}∇f(x_{t−1}; d)`` at the same example, η_t = t + 1.
        """
        current = self._grad(x_cur, xs, ys, t)
        if t == 0:
            diff, evaluations = current, self.batch_size  # η_{−1} = 0: δ_0(d) = ∇f(x_0; d)
        else:
            diff = (t + 1.0) * current - t * self._grad(x_prev, xs, ys, t)
            evaluations = 2 * self.batch_size
        diff, max_norm, count = self._clipped(diff)
        return self._aggregate(diff), max_norm, count, evaluations

    def _y_step(self, x_cur, prefix_y, noise, eta: float) -> np.ndarray:
        """``y_{t+1} = Π_C(x_t − P_t/η_t)`` (Algorithm 1 line 8)."""
        return self._project(x_cur - prefix_y / eta)

    def _run_chunk(self, xs, ys, rng, *, trials: int, record: tuple[str, ...]):
        steps, p = self.steps, xs.shape[-1]
        x_cur = np.zeros((trials, p))
        x_prev = np.zeros((trials, p))
        z = np.zeros((trials, p))
        total = np.zeros((trials, p))  # G_t = Σ_{i≤t} Δ_i
        y = x_cur
        tree = self._tree.start(trials, p)
        tree_y = self._second_tree(trials, p)
        max_norm = np.zeros((trials, steps))
        clipped = np.zeros(trials, dtype=np.int64)
        evaluations = 0
        rec = (
            [np.zeros((trials, steps, p)) if k in record else None for k in TRANSCRIPT_FIELDS]
            if record
            else None
        )
        if rec is not None and tree_y is None:
            rec[1] = None
        for t in range(steps):
            eta = t + 1.0
            if self.estimator == "srg":
                leaf, max_norm[:, t], count, used = self._srg_leaf(
                    xs, ys, t, x_cur=x_cur, x_prev=x_prev
                )
                evaluations += used
                total = total + leaf
                noise = tree.next(rng)
                prefix = total / self.beta + noise
                estimate = total / eta
            else:
                grads, max_norm[:, t], count = self._clipped(self._grad(x_cur, xs, ys, t))
                evaluations += self.batch_size
                estimate = grads.mean(axis=1)
                noise = self.sigma * rng.standard_normal((trials, p))
                prefix = eta * (estimate + noise) / self.beta  # P_t = η_t ∇̃_t/β
            clipped += count
            prefix_y = prefix if tree_y is None else total / self.beta + tree_y.next(rng)
            z = self._project(z - self.z_step_scale * prefix)
            y = self._y_step(x_cur, prefix_y, noise, eta)
            if rec is not None:
                for k, value in enumerate((prefix, prefix_y, noise, x_cur, y, z, estimate)):
                    if rec[k] is not None:
                        rec[k][:, t] = value
            tau = self._tau(t)
            x_prev, x_cur = x_cur, (1.0 - tau) * y + tau * z
        return y, evaluations, max_norm, clipped, rec


def single_epoch_dpsgd(problem: Problem, *, batch_size: int) -> DPSGD:
    """Baseline B-sgd1 (spec §2.7, PRACTICAL): one expected pass of DP-SGD on :class:`DPSGD`.

    ``T = n/B`` steps at sampling rate ``q = B/n`` (Poisson, the accountant's model; each
    example is used once in expectation), clip L, σ from the PLD accountant for (ε, δ), step on
    the mean gradient ``γ = R/(G√T)`` with ``G² = L² + p(σL/B)²``, iterate average, projection
    onto B(0, R).  ``problem`` gives n, d, ε, δ, L, R and the loss.
    """
    n, d, lipschitz, radius = problem.n, problem.d, problem.lipschitz, problem.radius
    batch_size = check_count(batch_size, "batch_size")
    if batch_size > n:
        raise InputError(f"batch_size must be <= n = {n}, got {batch_size}")
    steps = n // batch_size
    base = DPSGD.from_accountant(
        epsilon=problem.epsilon,
        delta=problem.delta,
        loss=problem.loss,
        steps=steps,
        step_size=1.0,
        clip_norm=lipschitz,
        sampling_rate=batch_size / n,
        relation="add-remove",
        radius=radius,
        batch_size=float(batch_size),
        average=True,
    )
    noise_std = base.noise_multiplier * lipschitz / batch_size
    step = radius / (math.sqrt(lipschitz**2 + d * noise_std**2) * math.sqrt(steps))
    return replace(base, step_size=step)


def _smoothness(problem: Problem) -> float:
    """M of ``problem``; None (no curvature bound given) is M = 0 only for a linear loss."""
    if problem.smoothness is not None:
        return problem.smoothness
    if isinstance(problem.loss, LinearLoss):
        return 0.0
    raise InputError(
        "Accelerated-DP-SRGD needs an M-smooth loss: pass Problem(smoothness=M) "
        "(None is read as M = 0 only for a LinearLoss)"
    )
