"""Algorithm 1 of Lowy 2026, population-level localization (Thm 2.1, Thm 3.1 with A = Algorithm
4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.domains import Ball
from dpclaims.algorithms.pure_dp_heavy_tails.double_output_pert import DoubleOutputPert
from dpclaims.algorithms.pure_dp_heavy_tails.formulas import (
    BETA0_STRICT,
    C_J,
    C_LAMBDA,
    C_STAB,
    c_a,
    lowy_claim,
)
from dpclaims.algorithms.pure_dp_heavy_tails.localize import check_problem, problem_domain
from dpclaims.algorithms.pure_dp_heavy_tails.stage import HeavyTailedRun, WorstValidPoint
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_choice, check_confidence, check_count, check_trials
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = ["PopLocalize", "OUTPUTS"]

OUTPUTS = ("final", "phases", "transcript")
"""What ``PopLocalize.__call__`` releases: ``w_I``; every phase output ``w_i``; or the white-box
transcript ``(w̃_i, w_i)`` of every phase (the Algorithm 4 call kept in phase i: its internal
localization centre and its output)."""


@dataclass(frozen=True, kw_only=True)
class PopLocalize:
    """Algorithm 1, population-level localization (ALT24 reduction; Thm 2.1, Thm 3.1 with
    A = Alg 4) [M].

    ``I = ⌈log2 n⌉`` phases × ``J = ⌈c_J ln(I/β)⌉`` repetitions on DISJOINT blocks of
    ``m = ⌊n/(IJ)⌋`` records; ``E = c_stab G_2/√m + c_A G_k (d/(εm))^{1−1/k}``,
    ``λ_i = 2^{i−1} c_λ E/D``, ``ρ_i = E/λ_i``; each phase keeps the repetition with most others
    within ``2ρ_i`` (ties: smallest j).  ε-DP by parallel composition (each record is in one
    block; centres are post-processing), so the whole phase transcript may be released.
    ``constants="test"``: J = 1, c_stab = c_A = 1.
    """

    solvers: tuple
    blocks: tuple
    repetitions: int
    lambdas: tuple
    error_scale: float
    epsilon: float
    domain: Ball
    output: str = "final"

    def __post_init__(self) -> None:
        check_choice(self.output, OUTPUTS, "output")
        if (
            len(self.solvers) != len(self.lambdas)
            or len(self.blocks) != len(self.solvers) * self.repetitions
        ):
            raise InputError(
                "PopLocalize needs one solver per phase and phases × repetitions blocks"
            )

    @classmethod
    def block_layout(cls, n: int, *, block_size: int, count: int) -> tuple[int, tuple]:
        """``(records per call, count (start, stop) blocks)``: disjoint blocks of ``block_size``."""
        return block_size, tuple((b * block_size, (b + 1) * block_size) for b in range(count))

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        moment_2: float,
        moment_k: float,
        k: float,
        beta: float,
        domain: Ball | None = None,
        constants: str = "paper",
        beta0: float | None = None,
        phases: int | None = None,
        clip_rule: str = "paper",
        harness: WorstValidPoint | None = None,
        output: str = "final",
        solver: str = "exact-1d",
    ) -> PopLocalize:
        """The schedule of spec §2.1: ``moment_2`` = G_2, ``moment_k`` = G_k, ``k``, β;
        ``domain`` defaults to ``B(0, problem.radius)``; ``phases`` overrides I (e.g. to hold it
        fixed across a sweep).

        The options are independent: the constants (paper or test), Algorithm 4's β0, clipping
        rule and solver, the §7(a) harness and what ``__call__`` releases.
        """
        problem = check_problem(problem)
        n, d, epsilon = problem.n, problem.d, problem.epsilon
        domain = problem_domain(problem, domain)
        check_choice(constants, ("paper", "test"), "constants")
        beta = check_confidence(beta, "beta")
        big_i = max(1, math.ceil(math.log2(n))) if phases is None else check_count(phases, "phases")
        big_j = 1 if constants == "test" else math.ceil(C_J * math.log(big_i / beta))
        m = n // (big_i * big_j)
        if m < 1:
            raise InputError(
                f"n = {n} is too small for I = {big_i} phases × J = {big_j} repetitions "
                "(m = n/(IJ) < 1)"
            )
        beta0 = BETA0_STRICT if beta0 is None else check_confidence(beta0, "beta0")
        if constants == "paper":
            c_stab = C_STAB
            c_alg = c_a(k) * beta0 ** (-1 / k) * (1 + math.log(1 / beta0) / d) ** (1 - 1 / k)
        else:
            c_stab = c_alg = 1.0
        e_scale = c_stab * moment_2 / math.sqrt(m) + c_alg * moment_k * (d / (epsilon * m)) ** (
            1 - 1 / k
        )
        lam1 = C_LAMBDA * e_scale / domain.diameter
        lambdas = tuple(lam1 * 2.0**i for i in range(big_i))
        size, blocks = cls.block_layout(n, block_size=m, count=big_i * big_j)
        solvers = tuple(
            DoubleOutputPert.from_theorem(
                problem.replace(n=size),
                moment_k=moment_k,
                k=k,
                lam=lam,
                beta0=beta0,
                domain=domain,
                clip_rule=clip_rule,
                solver=solver,
                harness=harness,
                output="final",
            )
            for lam in lambdas
        )
        return cls(
            solvers=solvers,
            blocks=blocks,
            repetitions=big_j,
            lambdas=lambdas,
            error_scale=e_scale,
            epsilon=epsilon,
            domain=domain,
            output=output,
        )

    @property
    def phases(self) -> int:
        return len(self.lambdas)

    @property
    def params(self) -> dict:
        return {
            "phases": self.phases,
            "repetitions": self.repetitions,
            "block_size": self.blocks[0][1] - self.blocks[0][0],
            "lambdas": list(self.lambdas),
            "error_scale": self.error_scale,
            "radii": [self.error_scale / lam for lam in self.lambdas],
            "epsilon": self.epsilon,
            "domain": self.domain.to_dict(),
            "clips": [s.clip for s in self.solvers],
            "output": self.output,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε-DP, δ = 0, item level, replace-one (Thm 2.1 / 3.1: parallel composition)."""
        return lowy_claim(self.epsilon, "Thm 3.1 / D.2 (Algorithms 1 + 4)")

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        *,
        transcript: bool = False,
    ) -> HeavyTailedRun:
        """``theta = w_I (trials, d)``; transcript ``phases (trials, I, d)`` (the w_i) and
        ``w_tilde (trials, I, d)`` (the stage-1 centre w̃ of the call kept in each phase: white
        box, Algorithm 1 does not release it)."""
        trials = check_trials(trials, "trials")
        if not isinstance(data, UserDataset) or data.n < self.blocks[-1][1]:
            raise InputError(
                f"data must be a UserDataset with at least {self.blocks[-1][1]} records"
            )
        w = np.broadcast_to(self.domain.center, (trials, self.domain.d)).copy()
        evals = np.zeros(trials)
        history, centres = [], []
        for i, (solver, lam) in enumerate(zip(self.solvers, self.lambdas, strict=True)):
            outs, tildes = [], []
            for j in range(self.repetitions):
                lo, hi = self.blocks[i * self.repetitions + j]
                block = UserDataset(data.x[lo:hi], None if data.y is None else data.y[lo:hi])
                res = solver.run(block, rng, trials, center=w, transcript=transcript)
                outs.append(res.theta)
                tildes.append(res.transcript.get("w_tilde"))
                evals += res.gradient_evaluations
            x = np.stack(outs, axis=1)
            rho = self.error_scale / lam
            close = np.linalg.norm(x[:, :, None, :] - x[:, None, :, :], axis=-1) <= 2.0 * rho
            best = np.argmax(close.sum(axis=2), axis=1)
            w = x[np.arange(trials), best]
            history.append(w)
            if transcript:
                centres.append(np.stack(tildes, axis=1)[np.arange(trials), best])
        phases = np.stack(history, axis=1)
        extra = {"phases": phases, "w_tilde": np.stack(centres, axis=1)} if transcript else {}
        return HeavyTailedRun(theta=w, gradient_evaluations=evals, transcript=extra)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``w_I (trials, d)``; with ``output="phases"`` every phase output ``(trials, I·d)``;
        with ``output="transcript"`` the white-box ``(w̃_1, w_1, …, w̃_I, w_I)`` ``(trials,
        2·I·d)``."""
        res = self.run(data, rng, trials, transcript=self.output != "final")
        if self.output == "phases":
            return res.transcript["phases"].reshape(trials, -1)
        if self.output == "transcript":
            pairs = np.stack([res.transcript["w_tilde"], res.transcript["phases"]], axis=2)
            return pairs.reshape(trials, -1)
        return res.theta
