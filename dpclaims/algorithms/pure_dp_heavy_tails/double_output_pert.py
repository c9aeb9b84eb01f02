"""Algorithm 4 of Lowy 2026, Double-OutputPert: the regularized-ERM solver of the main result
(Prop 3.2 / D.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.adapsg import ADAPSG_MAX_ITERATIONS
from dpclaims.algorithms.pure_dp_heavy_tails.domains import Ball, Ellipsoid, Polytope
from dpclaims.algorithms.pure_dp_heavy_tails.formulas import c_a, clip_level, lowy_claim
from dpclaims.algorithms.pure_dp_heavy_tails.localize import (
    EXTENSION_DOMAINS,
    OutPertLocalize,
    check_problem,
)
from dpclaims.algorithms.pure_dp_heavy_tails.stage import (
    HeavyTailedRun,
    WorstValidPoint,
    check_center,
)
from dpclaims.data import UserDataset
from dpclaims.errors import (
    check_choice,
    check_confidence,
    check_epsilon,
    check_positive,
    check_trials,
)
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = ["DoubleOutputPert", "StageOne"]

OUTPUTS = ("joint", "final")


@dataclass(frozen=True, kw_only=True)
class StageOne:
    """What stage 1 of Algorithm 4 hands to stage 2 (all arrays have the trial axis first).

    ``w_tilde (T, d)`` and ``w0 (T, d)`` (the release and the certified minimizer),
    ``evaluations (T,)``, the localization ``local (T, d)`` (None: no localization) of radius
    ``radius``, and the stage-2 Laplace scale ``noise_scale``.
    """

    w_tilde: np.ndarray
    w0: np.ndarray
    evaluations: np.ndarray
    local: np.ndarray | None
    radius: float
    noise_scale: float


@dataclass(frozen=True, kw_only=True)
class DoubleOutputPert:
    """Algorithm 4, Double-OutputPert (Prop 3.2 / D.1).

    ``C = G_k (εn/(β0(d + ln 1/β0)))^{1/k}`` [M], ``τ = C/(λn)``, ``α = C²/(2λn²)``,
    ``Δ = 4C/(λn)``, ``ε1 = ε2 = ε/2``.  (1) ``(w̃, r)`` ← Algorithm 2 at ε/2, β0;
    ``K = 𝒲 ∩ B(w̃, r)``; (2) ``w1`` ← certified α-minimizer over K of ``F̂^K_{C,λ}``;
    (3) ``ξ2 ~ Lap₂(d, Δ/ε2)``; (4) ``w_out = Π̃_K(w1 + ξ2)``.  ε-DP by basic adaptive
    composition; the pair ``(w̃, w_out)`` is released jointly by ``__call__``
    (``output="joint"``), as the spec asks auditors to do.

    Utility [M]: w.p. ≥ 1 − 3β0,
    ``‖w_out − ŵ‖ ≤ c_A (G_k/λ)((d + ln 1/β0)/(εn))^{1−1/k} β0^{−1/k}`` (:attr:`distance_bound`).
    ``stage2_extension_domain`` is the N1 switch (y_i ∈ K or 𝒲; same argmin over K in d = 1).
    Known-buggy variants (spec §7c) are subclasses in
    :mod:`dpclaims.targets.mutants.pure_dp_heavy_tails`.
    """

    LOCALIZER: ClassVar[type[OutPertLocalize]] = OutPertLocalize
    """Algorithm 2, the stage-1 localizer."""

    localizer: OutPertLocalize
    epsilon: float
    epsilon2: float
    moment_k: float
    k: float
    beta0: float
    stage2_noise_scale: float
    stage2_extension_domain: str = "K"
    output: str = "joint"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.stage2_extension_domain, EXTENSION_DOMAINS, "stage2_extension_domain")
        check_choice(self.output, OUTPUTS, "output")

    @classmethod
    def theorem_clip(
        cls, problem: Problem, *, moment_k: float, k: float, beta0: float, rule: str
    ) -> float:
        """The extension level C of Prop 3.2 (:func:`clip_level`)."""
        return clip_level(
            problem.n, problem.d, problem.epsilon, moment_k=moment_k, k=k, beta0=beta0, rule=rule
        )

    @classmethod
    def stage2_epsilon(cls, epsilon: float) -> float:
        """ε2 = ε/2 (the basic-composition split of Prop 3.2)."""
        return epsilon / 2.0

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        moment_k: float,
        k: float,
        lam: float,
        beta0: float,
        domain: Ball | Ellipsoid | Polytope | None = None,
        center=None,
        clip_rule: str = "paper",
        quantile: str = "closed",
        solver: str = "exact-1d",
        harness: WorstValidPoint | None = None,
        stage2_extension_domain: str = "K",
        output: str = "joint",
        max_iterations: int = ADAPSG_MAX_ITERATIONS,
    ) -> DoubleOutputPert:
        """Every parameter of Prop 3.2: ``moment_k`` = G_k, ``k`` the moment order, λ, β0;
        ``domain`` defaults to ``B(0, problem.radius)``.

        The options are independent: where the regularization centres sit (``center``), which
        clipping rule and Gamma quantile, which certified solver (and its cap), the §7(a)
        harness, the N1 switch and what ``__call__`` releases.
        """
        problem = check_problem(problem)
        epsilon = problem.epsilon
        clip = cls.theorem_clip(problem, moment_k=moment_k, k=k, beta0=beta0, rule=clip_rule)
        localizer = cls.LOCALIZER.from_theorem(
            problem.replace(epsilon=epsilon / 2.0),
            lam=lam,
            clip=clip,
            beta=beta0,
            domain=domain,
            center=center,
            quantile=quantile,
            solver=solver,
            harness=harness,
            max_iterations=max_iterations,
        )
        eps2 = cls.stage2_epsilon(epsilon)
        return cls(
            localizer=localizer,
            epsilon=epsilon,
            epsilon2=eps2,
            moment_k=check_positive(moment_k, "moment_k"),
            k=float(k),
            beta0=check_confidence(beta0, "beta0"),
            stage2_noise_scale=localizer.sensitivity / eps2,
            stage2_extension_domain=stage2_extension_domain,
            output=output,
        )

    @property
    def clip(self) -> float:
        """The extension level C in use."""
        return self.localizer.clip

    @property
    def distance_bound(self) -> float:
        """``c_A (G_k/λ)((d + ln 1/β0)/(εn))^{1−1/k} β0^{−1/k}`` (Prop 2.5 / 3.2) [M]."""
        p = self.localizer
        return (
            c_a(self.k)
            * self.moment_k
            / p.lam
            * ((p.d + math.log(1 / self.beta0)) / (self.epsilon * p.n)) ** (1 - 1 / self.k)
            * self.beta0 ** (-1 / self.k)
        )

    @property
    def params(self) -> dict:
        return {
            **self.localizer.params,
            "epsilon": self.epsilon,
            "epsilon1": self.localizer.epsilon,
            "epsilon2": self.epsilon2,
            "moment_k": self.moment_k,
            "k": self.k,
            "beta0": self.beta0,
            "stage1_noise_scale": self.localizer.noise_scale,
            "stage2_noise_scale": self.stage2_noise_scale,
            "c_A": c_a(self.k) if self.k >= 2 else None,
            "distance_bound": self.distance_bound,
            "stage2_extension_domain": self.stage2_extension_domain,
            "output": self.output,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε-DP, δ = 0, item level, replace-one (Prop 3.2 / D.1)."""
        return lowy_claim(self.epsilon, "Prop 3.2 / D.1 (Algorithm 4)")

    def stage_one(
        self, data: UserDataset, rng: np.random.Generator, trials: int, center: np.ndarray
    ) -> StageOne:
        """Step (1) of Algorithm 4: Algorithm 2 at ε/2 from the centres ``center (T, d)``.

        The stage-2 Laplace scale ``Δ/ε2`` is scaled by the ratio of the stage-1 scale actually
        used to the public one (a ratio of 1 here)."""
        loc = self.localizer
        w_tilde, w0, evals, scale1 = loc.localize(data, rng, trials, center)
        scale2 = self.stage2_noise_scale
        scale2 *= scale1 / loc.noise_scale
        return StageOne(
            w_tilde=w_tilde,
            w0=w0,
            evaluations=evals,
            local=w_tilde,
            radius=loc.radius,
            noise_scale=scale2,
        )

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        *,
        transcript: bool = False,
        center=None,
    ) -> HeavyTailedRun:
        """``theta = w_out (trials, d)``; transcript: ``w_tilde``, ``w0``, ``w1`` (all
        ``(trials, d)``)."""
        loc = self.localizer
        trials = check_trials(trials, "trials")
        default = loc.center if center is None else center
        c = check_center(default, trials, loc.d, loc.domain.center)
        stage = replace(loc.stage(data), extension_domain=self.stage2_extension_domain)
        first = self.stage_one(data, rng, trials, c)
        local, r = first.local, first.radius
        w1, ev2 = stage.solve(data, c, local=local, r=r, harness=loc.harness)
        noisy = w1 + loc.noise(rng, trials, first.noise_scale)
        w_out = stage.project(noisy, local, r)
        extra = {"w_tilde": first.w_tilde, "w0": first.w0, "w1": w1} if transcript else {}
        return HeavyTailedRun(
            theta=w_out, gradient_evaluations=first.evaluations + ev2, transcript=extra
        )

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The audited release: ``(w̃, w_out)`` → ``(trials, 2d)`` (``output="joint"``) or
        ``w_out``."""
        res = self.run(data, rng, trials, transcript=self.output == "joint")
        if self.output == "joint":
            return np.hstack([res.transcript["w_tilde"], res.theta])
        return res.theta
