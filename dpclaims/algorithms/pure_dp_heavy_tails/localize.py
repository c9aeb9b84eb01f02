"""Algorithm 2 of Lowy 2026, output-perturbation localization (Lemma 2.4 / C.2), and the checks
of the problem and options shared by Algorithms 1, 2 and 4."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.adapsg import ADAPSG_MAX_ITERATIONS
from dpclaims.algorithms.pure_dp_heavy_tails.domains import Ball, Ellipsoid, Polytope
from dpclaims.algorithms.pure_dp_heavy_tails.formulas import gamma_radius, lowy_claim
from dpclaims.algorithms.pure_dp_heavy_tails.noise import l2_laplace
from dpclaims.algorithms.pure_dp_heavy_tails.stage import (
    CertifiedSolve,
    HeavyTailedRun,
    WorstValidPoint,
    check_center,
)
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    check_choice,
    check_confidence,
    check_count,
    check_epsilon,
    check_positive,
    check_trials,
)
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = ["SOLVERS", "EXTENSION_DOMAINS", "check_problem", "problem_domain", "OutPertLocalize"]

SOLVERS = ("exact-1d", "adapsg", "pv2")
"""Certified stage solvers: the exact 1-d breakpoint solver (PV-1), AdaPSG (Algorithm 3), PV-2."""

EXTENSION_DOMAINS = ("K", "W")
"""Where the extension's auxiliary points y_i live in stage 2 (the N1 switch)."""


def check_problem(problem: Problem) -> Problem:
    """``problem`` after checking it is an item-level (m = 1), pure-DP (δ = 0) :class:`Problem`."""
    if not isinstance(problem, Problem):
        raise InputError(
            f"problem must be a dpclaims.Problem, got {type(problem).__name__}; pass e.g. "
            "Problem(n=1000, d=1, epsilon=1.0, loss=AbsoluteLoss(), radius=10.0)"
        )
    if problem.m != 1 or problem.delta != 0.0:
        raise InputError(
            "spec 003 is pure ε-DP at item level: problem must have m = 1 and delta = 0, got "
            f"m = {problem.m}, delta = {problem.delta}"
        )
    if problem.loss is None:
        raise InputError("problem.loss is required, e.g. dpclaims.losses.AbsoluteLoss()")
    return problem


def problem_domain(problem: Problem, domain: Any = None) -> Any:
    """``domain`` if given, else the ball ``B(0, problem.radius)`` in ``ℝ^{problem.d}``."""
    if domain is not None:
        return domain
    if math.isinf(problem.radius):
        raise InputError(
            "the algorithm needs a bounded domain: pass domain=Ball.centered(d, R) (or an "
            "Ellipsoid / Polytope) or a finite problem.radius"
        )
    return Ball.centered(problem.d, problem.radius)


def _check_domain_and_solver(domain: Any, *, d: int, solver: str) -> None:
    if not isinstance(domain, (Ball, Ellipsoid, Polytope)) or domain.d != d:
        raise InputError(f"domain must be a Ball, Ellipsoid or Polytope in dimension d = {d}")
    check_choice(solver, SOLVERS, "solver")
    if (
        not isinstance(domain, Ball)
        and solver != "pv2"
        and not (isinstance(domain, Ellipsoid) and solver == "adapsg")
    ):
        raise InputError(
            f"a {type(domain).__name__} domain needs solver='pv2' (the certified structured solver"
            + (" or 'adapsg'" if isinstance(domain, Ellipsoid) else "")
            + f"), got solver={solver!r}"
        )
    if solver == "exact-1d" and d != 1:
        raise InputError(
            f"solver='exact-1d' is the d = 1 path (PV-1); d = {d} needs solver='pv2' "
            "(absolute / hinge / linear losses) or solver='adapsg'"
        )


@dataclass(frozen=True, kw_only=True)
class OutPertLocalize:
    """Algorithm 2, output-perturbation localization (Lemma 2.4 / C.2) [H; parameters M].

    ``τ = C/(λn)``, ``α = C²/(2λn²)``, ``Δ = 4C/(λn)`` (sensitivity of a certified α-minimizer,
    P-S), ``b = Δ/ε1``, ``r = τ + b·q(d, β1)``.  Steps: ``w0`` ← certified α-minimizer of
    ``F̂^𝒲_{C,λ}``; ``ξ ~ Lap₂(d, b)``; ``w̃ = Π_𝒲(w0 + ξ)``; release ``(w̃, r)``
    (``W_loc = 𝒲 ∩ B(w̃, r)``).  ε1-DP: a Laplace mechanism followed by post-processing.
    """

    SENSITIVITY_FACTOR: ClassVar[float] = 4.0
    """``Δ = SENSITIVITY_FACTOR · C/(λn)``: 2C/(λn) for the exact minimizer plus 2τ for the
    certified solver's slack (Lemma 2.4)."""

    n: int
    d: int
    epsilon: float
    lam: float
    clip: float
    tau: float
    alpha: float
    sensitivity: float
    noise_scale: float
    radius: float
    beta: float
    q: float
    domain: Ball
    loss: Any
    center: np.ndarray | None = None
    solver: str = "exact-1d"
    harness: WorstValidPoint | None = None
    max_iterations: int = ADAPSG_MAX_ITERATIONS

    def __post_init__(self) -> None:
        check_count(self.n, "n")
        check_count(self.d, "d")
        check_epsilon(self.epsilon)
        check_positive(self.lam, "lam")
        check_positive(self.clip, "clip")
        _check_domain_and_solver(self.domain, d=self.d, solver=self.solver)
        check_count(self.max_iterations, "max_iterations")
        if self.loss is None:
            raise InputError("loss is required, e.g. dpclaims.losses.AbsoluteLoss()")

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        lam: float,
        clip: float,
        beta: float,
        domain: Ball | Ellipsoid | Polytope | None = None,
        center=None,
        quantile: str = "closed",
        solver: str = "exact-1d",
        harness: WorstValidPoint | None = None,
        max_iterations: int = ADAPSG_MAX_ITERATIONS,
    ) -> OutPertLocalize:
        """Parameters of Lemma 2.4 at privacy ``problem.epsilon`` (= ε1) and containment level
        ``beta`` (= β1); ``domain`` defaults to ``B(0, problem.radius)``."""
        problem = check_problem(problem)
        n, d, epsilon = problem.n, problem.d, problem.epsilon
        lam, clip = check_positive(lam, "lam"), check_positive(clip, "clip")
        tau = clip / (lam * n)
        sens = cls.SENSITIVITY_FACTOR * clip / (lam * n)
        q = gamma_radius(d, beta, quantile)
        b = sens / epsilon
        return cls(
            n=n,
            d=d,
            epsilon=epsilon,
            lam=lam,
            clip=clip,
            tau=tau,
            alpha=clip**2 / (2.0 * lam * n**2),
            sensitivity=sens,
            noise_scale=b,
            radius=tau + b * q,
            beta=check_confidence(beta, "beta"),
            q=q,
            domain=problem_domain(problem, domain),
            loss=problem.loss,
            center=center,
            solver=solver,
            harness=harness,
            max_iterations=max_iterations,
        )

    @property
    def params(self) -> dict:
        """Every parameter, with the domain and loss named."""
        return {
            "n": self.n,
            "d": self.d,
            "epsilon": self.epsilon,
            "lam": self.lam,
            "clip": self.clip,
            "tau": self.tau,
            "alpha": self.alpha,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
            "radius": self.radius,
            "beta": self.beta,
            "q": self.q,
            "domain": self.domain.to_dict(),
            "loss": type(self.loss).__name__,
            "solver": self.solver,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε1-DP, δ = 0, item level, replace-one (Lemma 2.4)."""
        return lowy_claim(self.epsilon, "Lemma 2.4 / C.2 (Algorithm 2)")

    def stage_clip(self, data: UserDataset) -> float:
        """The extension level C the certified solve uses on ``data`` (the public C)."""
        return self.clip

    def stage(self, data: UserDataset) -> CertifiedSolve:
        """The certified solve of ``F̂^𝒲_{C,λ}`` on ``data`` (shared with Algorithm 4's stage 2)."""
        return CertifiedSolve(
            loss=self.loss,
            domain=self.domain,
            lam=self.lam,
            clip=self.stage_clip(data),
            tau=self.tau,
            alpha=self.alpha,
            solver=self.solver,
            max_iterations=self.max_iterations,
        )

    def stage_noise_scale(self, data: UserDataset) -> float:
        """The Laplace scale b used on ``data`` (the public ``Δ/ε1``)."""
        return self.noise_scale

    def noise(self, rng: np.random.Generator, trials: int, scale: float) -> np.ndarray:
        """``Lap₂(d, scale)`` draws ``(trials, d)``."""
        return l2_laplace(rng, trials, self.d, scale)

    def localize(self, data: UserDataset, rng: np.random.Generator, trials: int, center=None):
        """``(w̃ (T, d), w0 (T, d), gradient evaluations (T,), noise scale used)``."""
        trials = check_trials(trials, "trials")
        default = self.center if center is None else center
        c = check_center(default, trials, self.d, self.domain.center)
        w0, evals = self.stage(data).solve(data, c, harness=self.harness)
        scale = self.stage_noise_scale(data)
        w_tilde = self.domain.project(w0 + self.noise(rng, trials, scale))
        return w_tilde, w0, evals, scale

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        *,
        transcript: bool = False,
        center=None,
    ) -> HeavyTailedRun:
        """``theta`` = w̃ ``(trials, d)``; transcript ``w0`` (the certified minimizer)."""
        w_tilde, w0, evals, _ = self.localize(data, rng, trials, center)
        extra = {"w0": w0} if transcript else {}
        return HeavyTailedRun(theta=w_tilde, gradient_evaluations=evals, transcript=extra)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta
