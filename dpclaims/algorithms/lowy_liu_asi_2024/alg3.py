"""Algorithm 3 of Lowy, Liu & Asi (2024) and its variants (spec 000 §2.3–§2.5).

* :class:`Algorithm3` — accelerated phased ERM with iterative localization, calling
  Algorithm 2 once per phase (Alg. 3, Thm 3.1/3.2, C.1/C.3).
* :class:`SmoothedAlgorithm3` — Algorithm 3 on the uniform-ball smoothed loss (Thm 4.1 / D.3).
* :class:`StronglyConvexAlgorithm3` — **not from the paper**: the localization wrapper spec
  §2.5 proposes for Remark 3.6.
* :func:`alg3_gradient_count` — the data-free dry run of the schedule (spec §2.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from dpclaims.algorithms.lowy_liu_asi_2024.alg2 import Algorithm2
from dpclaims.algorithms.lowy_liu_asi_2024.core import (
    distinct_users,
    domain_diameter,
    ln,
    partition_order,
    problem_loss,
    project_domain,
    run_summary,
    stack_runs,
    trial_chunk,
    user_counts,
)
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import (
    ALG3_PAPER_K,
    CONSTANTS,
    DEFAULT_Q,
    PARTITIONS,
    SAMPLINGS,
    alg2_batch,
    alg2_kmin,
    alg2_sigma,
    alg3_tau,
    as_vector,
    check_data,
    paper_privacy_claim,
    phase_size,
    privacy_target,
    problem_sizes,
)
from dpclaims.data import UserDataset
from dpclaims.errors import check_choice, check_positive, check_trials
from dpclaims.losses import LinearLoss
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = [
    "Algorithm3",
    "Algorithm3Run",
    "SmoothedAlgorithm3",
    "StronglyConvexAlgorithm3",
    "alg3_gradient_count",
]


@dataclass(frozen=True, kw_only=True)
class Algorithm3Run:
    """Outputs of :meth:`Algorithm3.run`.

    theta : (T, d) x_l, or 0 after a halt;  halted : (T,);  halt_phase : (T,) 1-based, 0 if none
    gradient_evaluations : (T,) Σ over phases run of T_i·K_i·m, stopping at a halt
    kept_all : (T,) True when no user was ever filtered out (the good event of spec §4.8)
    phases : list of per-phase :class:`Algorithm2Run` (transcript only)
    users : list of (T, n_i) users of each phase (transcript only)
    halt_step : (T,) 1-based step of the halt within its phase, 0 if none (None where a variant
    does not record it)
    """

    theta: np.ndarray
    halted: np.ndarray
    halt_phase: np.ndarray
    gradient_evaluations: np.ndarray
    kept_all: np.ndarray
    phases: list | None = None
    users: list | None = None
    halt_step: np.ndarray | None = None

    def to_dict(self) -> dict:
        return run_summary(self, removal_rate=float(np.mean(~self.kept_all)))


@dataclass(frozen=True, eq=False, kw_only=True)
class Algorithm3:
    """Algorithm 3: user-level DP accelerated phased ERM with outlier-gradient removal.

    Phase i runs :attr:`phase_algorithm` (Algorithm 2) on fresh users D_i with regularisation
    λ_i centred at x_{i−1}; a halt anywhere halts everything and outputs 0.
    """

    phase_algorithm: ClassVar[type[Algorithm2]] = Algorithm2

    n: int
    m: int
    d: int
    epsilon: float
    delta: float
    lipschitz: float
    smoothness: float
    diameter: float
    radius: float
    center: tuple
    start: tuple
    q: float
    p: float  # Thm C.3: p = 3q + 2.5 + log_n √m
    lam: float  # Thm C.3 (or relaxed noise-aware λ)
    tau: float  # proof of Thm C.3
    levels: int
    phase_sizes: tuple  # n_i
    lams: tuple  # λ_i = λ 2^{pi}
    steps: tuple  # T_i
    batches: tuple  # K_i
    sigmas: tuple  # σ_i
    loss: Any = field(default_factory=LinearLoss)
    smoothing: float = 0.0
    constants: str = "paper"
    noise_mult: float = 1.0
    partition: str = "random"
    sampling: str = "without"

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        constants: str = "paper",
        diameter: float | None = None,
        center=None,
        start=None,
        q: float = DEFAULT_Q,
        lam: float | None = None,
        tau: float | None = None,
        noise_mult: float = 1.0,
        partition: str = "random",
        sampling: str = "without",
        smoothing: float = 0.0,
    ) -> Algorithm3:
        """Parameters of Theorem C.3 (formal Thm 3.2) and Algorithm 3 line 2–4.

        ``problem`` gives n ≥ 2, m, d, ε ≤ 10, δ > 0, L, β (None: 0, a linear loss), the
        domain radius and the loss (default linear); ``diameter`` (R) defaults to ``2·radius``.
        ``tau``/``lam`` override the defaults (privacy holds for any, spec §3.7).
        """
        n, m, d = problem_sizes(problem)
        epsilon, delta = privacy_target(problem)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(partition, PARTITIONS, "partition")
        check_choice(sampling, SAMPLINGS, "sampling")
        radius = problem.radius
        diameter = domain_diameter(radius, diameter)
        loss = problem_loss(problem)
        noise_mult = check_positive(noise_mult, "noise_mult", allow_zero=True)
        s = cls.schedule(
            problem,
            diameter=diameter,
            constants=constants,
            q=check_positive(q, "q"),
            lam=None if lam is None else check_positive(lam, "lam"),
            tau=None if tau is None else check_positive(tau, "tau"),
            noise_mult=noise_mult,
        )
        return cls(
            n=n,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            lipschitz=problem.lipschitz,
            smoothness=problem.smoothness or 0.0,
            diameter=diameter,
            radius=radius,
            center=as_vector(center, d, "center"),
            start=as_vector(center if start is None else start, d, "start"),
            q=q,
            p=s["p"],
            lam=s["lam"],
            tau=s["tau"],
            levels=s["levels"],
            phase_sizes=tuple(s["n_i"]),
            lams=tuple(s["lam_i"]),
            steps=tuple(s["T_i"]),
            batches=tuple(s["K_i"]),
            sigmas=tuple(s["sigma_i"]),
            loss=loss,
            smoothing=check_positive(smoothing, "smoothing", allow_zero=True),
            constants=constants,
            noise_mult=noise_mult,
            partition=partition,
            sampling=sampling,
        )

    @classmethod
    def schedule(
        cls,
        problem: Any,
        *,
        diameter: float,
        constants: str = "paper",
        q: float = DEFAULT_Q,
        lam: float | None = None,
        tau: float | None = None,
        k_const: float = ALG3_PAPER_K,
        noise_mult: float = 1.0,
        dry_run: bool = False,
    ) -> dict:
        """Phase schedule (lines 2–4) with Thm C.3's λ and p, data-free (spec §2.7 dry run).

        ``problem`` is a :class:`Problem`, or for ``dry_run=True`` any object with its
        attributes ``n, m, d, epsilon, delta, lipschitz, smoothness`` as real numbers (sizes
        such as n = 1e17 beyond integers).  ``dry_run`` skips the rounding of n_i and the phase
        floor.  Returns λ, p, τ, ``levels`` and per-phase lists ``n_i``, ``lam_i``, ``T_i``,
        ``K_i``, ``sigma_i``.
        """
        n, m, d = problem.n, problem.m, problem.d
        epsilon, delta, lipschitz = problem.epsilon, problem.delta, problem.lipschitz
        smoothness = problem.smoothness or 0.0
        levels = int(math.floor(math.log2(n)))
        if tau is None:
            tau = alg3_tau(n=n, m=m, d=d, epsilon=epsilon, lipschitz=lipschitz)
        p = 3 * q + 2.5 + math.log(math.sqrt(m)) / math.log(n)  # Thm C.3, equality [DEFAULT]
        n1 = phase_size(n, q, 1)
        if lam is None:
            if constants == "paper":  # Thm C.3
                lam = (lipschitz / diameter) * (
                    1 / math.sqrt(n * m) + math.sqrt(d) / (epsilon * n * math.sqrt(m))
                )
            else:  # noise-aware relaxed λ of spec §2.6; c_σ is the σ multiplier (× noise_mult)
                c_sigma = noise_mult * 4.0 * math.sqrt(8.0 * ln(2.0 / delta))
                lam1 = (
                    math.sqrt(lipschitz**2 / (n * m) + d * (c_sigma * tau / (epsilon * n1)) ** 2)
                    / diameter
                )
                lam = lam1 / 2**p
        keys = ("n_i", "lam_i", "T_i", "K_i", "sigma_i")
        out = {"lam": lam, "p": p, "q": q, "tau": tau, "levels": levels, **{k: [] for k in keys}}
        sizes = {"m": m, "n": n, "levels": levels, "epsilon": epsilon, "delta": delta}
        for i in range(1, levels + 1):
            n_i = phase_size(n, q, i)
            n_i = n_i if dry_run else int(math.floor(n_i))
            lam_i = lam * 2 ** (p * i)
            # proof of D.3 [DEFAULT]
            steps = int(math.ceil((1 + math.sqrt(smoothness / lam_i)) * ln(n * d * m)))
            if not dry_run and (
                n_i < 1 or n_i < alg2_kmin(constants=constants, steps=steps, **sizes)
            ):
                break
            if dry_run and constants == "paper":
                k = (
                    k_const
                    * (2 * ln(n_i * m) + epsilon + ln(1 / delta))
                    * (1 / epsilon + n_i * epsilon / math.sqrt(steps * ln(1 / delta)))
                )
                batch = min(n_i, math.ceil(k))
            elif dry_run:
                batch = alg2_batch(constants=constants, n_i=max(int(n_i), 1), steps=steps, **sizes)
            else:
                batch = alg2_batch(
                    constants=constants, n_i=n_i, steps=steps, k_const=k_const, **sizes
                )
            phase = cls.phase_algorithm
            sigma = alg2_sigma(
                constants=constants,
                sensitivity=phase.noise_sensitivity(tau=tau, lipschitz=lipschitz, m=m),
                steps=steps,
                n=n,
                d=d,
                size=phase.noise_size(n_i),
                epsilon=epsilon,
                delta=delta,
            )
            for key, value in zip(keys, (n_i, lam_i, steps, batch, sigma), strict=True):
                out[key].append(value)
        return out

    @property
    def params(self) -> dict:
        return {
            "algorithm": type(self).__name__,
            "n": self.n,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "lipschitz": self.lipschitz,
            "smoothness": self.smoothness,
            "diameter": self.diameter,
            "radius": self.radius,
            "center": list(self.center),
            "start": list(self.start),
            "q": self.q,
            "p": self.p,
            "lam": self.lam,
            "tau": self.tau,
            "levels": self.levels,
            "n_i": list(self.phase_sizes),
            "lam_i": list(self.lams),
            "T_i": list(self.steps),
            "K_i": list(self.batches),
            "sigma_i": list(self.sigmas),
            "loss": repr(self.loss),
            "smoothing": self.smoothing,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "partition": self.partition,
            "sampling": self.sampling,
            "gradient_count": self.gradient_count,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ)-user-level DP, replace-one-user (Thm 3.1 / C.1; Thm 4.1 for the smoothed loss)."""
        return paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem C.1")

    @property
    def gradient_count(self) -> int:
        """Σ_i T_i·K_i·m over the phases of the schedule (no halts), spec §2.7."""
        return int(sum(t * k * self.m for t, k in zip(self.steps, self.batches, strict=True)))

    def phase(self, i: int) -> Algorithm2:
        """The :class:`Algorithm2` call of phase ``i`` (0-based)."""
        return self.phase_algorithm(
            n_total=self.n,
            n_phase=self.phase_sizes[i],
            m=self.m,
            d=self.d,
            epsilon=self.epsilon,
            delta=self.delta,
            steps=self.steps[i],
            batch=self.batches[i],
            tau=self.tau,
            sigma=self.sigmas[i],
            lam=self.lams[i],
            smoothness=self.smoothness,
            radius=self.radius,
            center=self.center,
            loss=self.loss,
            smoothing=self.smoothing,
            constants=self.constants,
            noise_mult=self.noise_mult,
            sampling=self.sampling,
        )

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> Algorithm3Run:
        """Run ``trials`` copies on the first ``n`` users of ``data``."""
        data = check_data(data, self.d, self.n)
        trials = check_trials(trials)
        table_x, table_y, uid = distinct_users(
            data.x[: self.n], None if data.y is None else data.y[: self.n]
        )
        U = table_x.shape[0]
        per = self.n + 8 * U * (self.m if self.smoothing else 1) * self.d
        if transcript:
            per += sum(self.steps) * self.d
        chunk = trial_chunk(trials, per)
        parts = [
            self._run_chunk(
                (table_x, table_y, uid), rng, trials=min(chunk, trials - s), transcript=transcript
            )
            for s in range(0, trials, chunk)
        ]
        return stack_runs(Algorithm3Run, parts)

    def _run_chunk(self, users_table, rng, *, trials, transcript) -> Algorithm3Run:
        """All phases for ``trials`` trials; ``users_table`` = :func:`distinct_users`' output."""
        table_x, table_y, uid = users_table
        order = partition_order(rng, trials, self.n, self.partition)
        x = np.broadcast_to(np.asarray(self.start), (trials, self.d)).copy()
        halted = np.zeros(trials, dtype=bool)
        halt_phase = np.zeros(trials, dtype=np.int64)
        halt_step = np.zeros(trials, dtype=np.int64)
        out = np.zeros((trials, self.d))
        grads = np.zeros(trials, dtype=np.int64)
        kept_all = np.ones(trials, dtype=bool)
        phases, users_log, offset = [], [], 0
        for i, n_i in enumerate(self.phase_sizes):
            users = order[:, offset : offset + n_i]  # line 5: fresh users
            offset += n_i
            res = self.phase(i).phase_run(
                table_x=table_x,
                table_y=table_y,
                phase_counts=user_counts(uid, users, table_x.shape[0]),
                x_prev=x,
                rng=rng,
                transcript=transcript,
            )
            live = ~halted
            grads[live] += res.gradient_evaluations[live]
            kept_all &= ~(live & res.removed)
            halt_now = live & res.halted
            out[halt_now] = res.theta[halt_now]  # 0, or a mutant's leak
            halt_phase[halt_now] = i + 1
            halt_step[halt_now] = res.halt_step[halt_now]
            halted |= halt_now
            x = np.where(halted[:, None], x, res.theta)
            if transcript:
                phases.append(res)
                users_log.append(users)
        theta = np.where(halted[:, None], out, x)
        return Algorithm3Run(
            theta=theta,
            halted=halted,
            halt_phase=halt_phase,
            gradient_evaluations=grads,
            kept_all=kept_all,
            phases=phases if transcript else None,
            users=users_log if transcript else None,
            halt_step=halt_step,
        )


def alg3_gradient_count(
    *,
    n: float,
    m: float,
    d: float,
    epsilon: float,
    delta: float,
    smoothness: float,
    k_const: float = ALG3_PAPER_K,
) -> float:
    """Dry-run gradient count Σ_i T_i·K_i·m of Algorithm 3 (spec §2.7, RT-6), no data needed.

    Paper constants with L = R = 1; ``n, m, d`` are real numbers (sizes far beyond memory).
    """
    sizes = SimpleNamespace(
        n=n, m=m, d=d, epsilon=epsilon, delta=delta, lipschitz=1.0, smoothness=smoothness
    )
    s = Algorithm3.schedule(sizes, diameter=1.0, k_const=k_const, dry_run=True)
    return float(sum(t * k * m for t, k in zip(s["T_i"], s["K_i"], strict=True)))


class SmoothedAlgorithm3(Algorithm3):
    """Algorithm 3 on the uniform-ball smoothed loss ``f_r`` (Thm 4.1 / D.3, spec §2.4)."""

    @classmethod
    def from_theorem(cls, problem: Problem, **options: Any) -> SmoothedAlgorithm3:
        """``r = √d·R/(εn√m)``, ``β_r = L√d/r`` (Lemma D.1), then Algorithm 3 with β = β_r.

        ``problem.smoothness`` is ignored (f need not be smooth); λ is Thm C.3's [DEFAULT,
        spec §2.4], not D.3's ``1/√(mn)`` which is suboptimal in the private regime.
        ``options`` are :meth:`Algorithm3.from_theorem`'s keywords.
        """
        n, m, d = problem_sizes(problem)
        diameter = options.pop("diameter", None)
        diameter = (
            2.0 * check_positive(problem.radius, "radius")
            if diameter is None
            else check_positive(diameter, "diameter")
        )
        r = math.sqrt(d) * diameter / (problem.epsilon * n * math.sqrt(m))
        beta_r = problem.lipschitz * math.sqrt(d) / r
        base = Algorithm3.from_theorem(
            problem.replace(smoothness=beta_r), diameter=diameter, smoothing=r, **options
        )
        return cls(**{f.name: getattr(base, f.name) for f in fields(Algorithm3)})


# ------------------------------------------------------------------------------ not from the paper

SC_BOUND_CONSTANT = 1.0
"""c_B in B(n') = c_B(1/√(n'm) + √(d ln(1/δ))/(εn'√m)) of the spec §2.5 wrapper [DEFAULT, not
from the paper]."""


@dataclass(frozen=True, eq=False, kw_only=True)
class StronglyConvexAlgorithm3:
    """**Not from the paper** (Remark 3.6 cites [FKT20, §5.1] without details): spec §2.5.

    ``k = ⌈log2 log2 n⌉ + 1`` disjoint blocks of users; block j runs Algorithm 3 on
    ``B(c, R_j/2)`` centred at the previous output, ``R_{j+1} = √(8 L R_j B(n/k)/μ)``.
    Privacy: parallel composition over disjoint blocks.  The final output is projected onto X.
    """

    base: Algorithm3
    blocks: int
    strong_convexity: float
    radii: tuple  # R_j (diameters of the localisation balls)

    @classmethod
    def from_theorem(cls, problem: Problem, **options: Any) -> StronglyConvexAlgorithm3:
        """Blocks, radii and the per-block Algorithm 3 for μ = ``problem.strong_convexity`` > 0.

        ``options`` are :meth:`Algorithm3.from_theorem`'s keywords.
        """
        n, _, d = problem_sizes(problem, minimum_n=4)
        mu = check_positive(problem.strong_convexity, "strong_convexity")
        blocks = int(math.ceil(math.log2(math.log2(n)))) + 1
        size = n // blocks
        base = Algorithm3.from_theorem(problem.replace(n=size), **options)
        bound = SC_BOUND_CONSTANT * (
            1 / math.sqrt(size * base.m)
            + math.sqrt(d * ln(1 / base.delta)) / (base.epsilon * size * math.sqrt(base.m))
        )
        radii = [base.diameter]
        for _ in range(blocks - 1):
            radii.append(min(radii[-1], math.sqrt(8 * problem.lipschitz * radii[-1] * bound / mu)))
        return cls(base=base, blocks=blocks, strong_convexity=mu, radii=tuple(radii))

    @property
    def params(self) -> dict:
        return {
            "algorithm": "StronglyConvexAlgorithm3 (spec §2.5, not from the paper)",
            "blocks": self.blocks,
            "strong_convexity": self.strong_convexity,
            "radii": list(self.radii),
            "base": self.base.params,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return self.base.privacy_claim

    @property
    def gradient_count(self) -> int:
        return self.blocks * self.base.gradient_count

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(self, data: UserDataset, rng: np.random.Generator, trials: int) -> Algorithm3Run:
        """Run the blocks in turn (users ``j·n/k … (j+1)·n/k − 1`` for block j)."""
        trials = check_trials(trials)
        size, d = self.base.n, self.base.d
        check_data(data, d, size * self.blocks)
        c = np.broadcast_to(np.asarray(self.base.start), (trials, d)).copy()
        halted = np.zeros(trials, dtype=bool)
        grads = np.zeros(trials, dtype=np.int64)
        for j in range(self.blocks):
            block = UserDataset(
                data.x[j * size : (j + 1) * size],
                None if data.y is None else data.y[j * size : (j + 1) * size],
            )
            res = _run_localised(self.base, block, rng, centres=c, radius=self.radii[j] / 2.0)
            grads[~halted] += res.gradient_evaluations[~halted]
            halted |= res.halted
            c = np.where(halted[:, None], 0.0, res.theta)
        final = project_domain(c, np.asarray(self.base.center), self.base.radius)
        return Algorithm3Run(
            theta=np.where(halted[:, None], 0.0, final),
            halted=halted,
            halt_phase=halted.astype(np.int64),
            gradient_evaluations=grads,
            kept_all=np.ones(trials, dtype=bool),
        )


def _run_localised(
    base: Algorithm3, data: UserDataset, rng, *, centres: np.ndarray, radius: float
) -> Algorithm3Run:
    """Algorithm 3 started at per-trial ``centres (T, d)`` on ``B(centre, radius)`` (spec §2.5)."""
    table_x, table_y, uid = distinct_users(data.x, data.y)
    trials = centres.shape[0]
    order = partition_order(rng, trials, base.n, base.partition)
    x = centres.copy()
    halted = np.zeros(trials, dtype=bool)
    grads = np.zeros(trials, dtype=np.int64)
    offset = 0
    for i, n_i in enumerate(base.phase_sizes):
        alg2 = replace(base.phase(i), radius=radius)
        users = order[:, offset : offset + n_i]
        offset += n_i
        res = alg2.phase_run(
            table_x=table_x,
            table_y=table_y,
            phase_counts=user_counts(uid, users, table_x.shape[0]),
            x_prev=x,
            rng=rng,
            transcript=False,
            domain_center=centres,
        )
        grads[~halted] += res.gradient_evaluations[~halted]
        halted |= res.halted
        x = np.where(halted[:, None], x, res.theta)
    return Algorithm3Run(
        theta=np.where(halted[:, None], 0.0, x),
        halted=halted,
        halt_phase=halted.astype(np.int64),
        gradient_evaluations=grads,
        kept_all=np.ones(trials, dtype=bool),
    )
