"""Algorithm 1 of Lowy, Liu & Asi (2024): linear-time user-level DP phased SGD (spec 000 §2.2).

Outlier-iterate removal and Gaussian output perturbation (Alg. 1, Thm 2.1 / B.1).  Rounding:
C and T_i up; n_i, N_i down, then n_i = N_i·C (Alg. 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.algorithms.lowy_liu_asi_2024.core import (
    concentration,
    distinct_users,
    domain_diameter,
    keep_probability,
    ln,
    paired_grad,
    partition_order,
    problem_loss,
    project_domain,
    run_summary,
    stack_runs,
    trial_chunk,
    user_counts,
)
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import (
    ALG1_PAPER_SIGMA,
    ALG1_PAPER_TAU,
    ALG1_SCORE_LAPLACE,
    CONSTANTS,
    DEFAULT_Q,
    PARTITIONS,
    alg1_group_size,
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

__all__ = ["Algorithm1", "Algorithm1Run"]


@dataclass(frozen=True, kw_only=True)
class Algorithm1Run:
    """Outputs of :meth:`Algorithm1.run`.

    theta : (T, d) released output, Π_X(x_l) (post-processing), or 0 after a halt
    unprojected : (T, d) x_l itself (0 after a halt)
    halted : (T,) bool
    gradient_evaluations : (T,) Σ over the phases run of C·T_i = n_i·m
    phase_iterates : (T, P, d) x_i (transcript only; 0 from the halting phase on)
    halt_phase : (T,) 1-based phase of the halt, 0 if none (transcript only)
    scores, noisy_scores, kept : (T, P) s_i, ŝ_i, |S_i| (transcript only; pre-noise, never release)
    users : list of (T, n_i) users of each phase (transcript only; for the disjointness check)
    """

    theta: np.ndarray
    unprojected: np.ndarray
    halted: np.ndarray
    gradient_evaluations: np.ndarray
    phase_iterates: np.ndarray | None = None
    halt_phase: np.ndarray | None = None
    scores: np.ndarray | None = None
    noisy_scores: np.ndarray | None = None
    kept: np.ndarray | None = None
    users: list | None = None

    def to_dict(self) -> dict:
        """Summary: trials, halts, empty filtered sets and mean gradient count."""
        return run_summary(self)


@dataclass(frozen=True, eq=False, kw_only=True)
class Algorithm1:
    """Algorithm 1: user-level DP phased SGD, outlier-iterate removal, output perturbation.

    Build with :meth:`from_theorem`; every field is a number of the paper's line 2/4/22 or a
    spec default.  Domain X = ``B(center, radius)``; start point ``x_0 = start`` (default the
    centre, spec [DEFAULT]).
    """

    n: int
    m: int
    d: int
    epsilon: float
    delta: float
    lipschitz: float
    diameter: float  # R in the paper's formulas
    radius: float  # domain X = B(center, radius)
    center: tuple
    start: tuple
    eta: float  # Thm B.1: η = R/(L√(dmnε)) (× c_η relaxed)
    p: float  # Thm B.1: p = J + 3/2
    q: float
    J: float  # m ≤ n^J, default ln m/ln n
    C: int  # line 2: ⌈100 ln(20nme^ε/δ)/ε⌉
    levels: int  # line 2: l = ⌊log2 n⌋
    tau_const: float
    phase_sizes: tuple  # n_i (users used, N_i·C)
    group_sizes: tuple  # N_i
    steps: tuple  # T_i = N_i m
    step_sizes: tuple  # η_i = η/2^{pi}
    taus: tuple  # τ_i
    sigmas: tuple  # σ_i
    loss: Any = field(default_factory=LinearLoss)
    smoothness: float | None = None
    constants: str = "paper"
    noise_mult: float = 1.0
    partition: str = "random"

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
        J: float | None = None,
        eta: float | None = None,
        eta_const: float | None = None,
        tau_const: float | None = None,
        noise_mult: float = 1.0,
        partition: str = "random",
    ) -> Algorithm1:
        """Parameters of Theorem B.1 (formal Thm 2.1) and Algorithm 1 lines 2, 4, 22.

        ``problem`` gives n ≥ 2, m, d, ε ≤ 10, δ > 0, L, β (reported only), the domain
        radius and the loss (default linear).  ``diameter`` (R) defaults to ``2·radius``.
        ``eta`` overrides η (privacy holds for any η, spec §3.7); else
        ``η = c_η·R/(L√(dmnε))`` with ``c_η = 1`` (paper) or ``√(Cnε/n_1)`` (relaxed, spec §2.6)
        unless ``eta_const`` is given.  ``J`` defaults to ``max(ln m/ln n, 0)``; ``p = J + 3/2``.
        """
        n, m, d = problem_sizes(problem)
        epsilon, delta = privacy_target(problem)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(partition, PARTITIONS, "partition")
        lipschitz, radius = problem.lipschitz, problem.radius
        diameter = domain_diameter(radius, diameter)
        q = check_positive(q, "q")
        J = (
            max(math.log(m) / math.log(n), 0.0)
            if J is None
            else check_positive(J, "J", allow_zero=True)
        )
        p = J + 1.5
        loss = problem_loss(problem)
        if eta is None:
            base = diameter / (lipschitz * math.sqrt(d * m * n * epsilon))
            if eta_const is None and constants == "relaxed":
                C = alg1_group_size(n=n, m=m, epsilon=epsilon, delta=delta)
                n1 = phase_size(n, q, 1)
                eta_const = math.sqrt(C * n * epsilon / n1)
            eta = base * (1.0 if eta_const is None else check_positive(eta_const, "eta_const"))
        eta = check_positive(eta, "eta")
        if tau_const is not None:
            tau_const = check_positive(tau_const, "tau_const")
        s = cls.schedule(problem, eta=eta, p=p, q=q, constants=constants, tau_const=tau_const)
        return cls(
            n=n,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            lipschitz=lipschitz,
            diameter=diameter,
            radius=radius,
            center=as_vector(center, d, "center"),
            start=as_vector(center if start is None else start, d, "start"),
            eta=eta,
            p=p,
            q=q,
            J=J,
            C=s["C"],
            levels=s["levels"],
            tau_const=s["tau_const"],
            phase_sizes=tuple(s["n_i"]),
            group_sizes=tuple(s["N_i"]),
            steps=tuple(s["T_i"]),
            step_sizes=tuple(s["eta_i"]),
            taus=tuple(s["tau_i"]),
            sigmas=tuple(s["sigma_i"]),
            loss=loss,
            smoothness=problem.smoothness,
            constants=constants,
            noise_mult=check_positive(noise_mult, "noise_mult", allow_zero=True),
            partition=partition,
        )

    @classmethod
    def schedule(
        cls,
        problem: Problem,
        *,
        eta: float,
        p: float,
        q: float,
        constants: str,
        tau_const: float | None = None,
    ) -> dict:
        """Phase schedule of Algorithm 1 (line 2, 4 and 22), data-free.

        Returns a dict with ``C``, ``levels`` and per-phase lists ``n_i`` (= N_i·C users used),
        ``N_i``, ``T_i``, ``eta_i``, ``tau_i``, ``sigma_i``; phases stop at the first ``N_i < 1``
        (spec §2.2 [DEFAULT]).  ``tau_const`` multiplies ``η_i L √T_i`` (default ``1000·ln(ndm)``
        in paper mode, ``1 + √(2 ln(2C²lnm))`` relaxed, spec §2.6).
        """
        n, m, d = problem.n, problem.m, problem.d
        epsilon, delta, lipschitz = problem.epsilon, problem.delta, problem.lipschitz
        levels = int(math.floor(math.log2(n)))
        C = alg1_group_size(n=n, m=m, epsilon=epsilon, delta=delta)
        if tau_const is None:
            tau_const = (
                ALG1_PAPER_TAU * ln(n * d * m)
                if constants == "paper"
                else 1.0 + math.sqrt(2.0 * ln(2.0 * C * C * max(levels, 1) * n * m))
            )
        keys = ("n_i", "N_i", "T_i", "eta_i", "tau_i", "sigma_i")
        out = {"C": C, "levels": levels, "tau_const": float(tau_const), **{k: [] for k in keys}}
        for i in range(1, levels + 1):
            n_i = int(math.floor(phase_size(n, q, i)))
            groups = n_i // C
            if groups < 1:
                break
            steps = groups * m
            eta_i = eta / 2.0 ** (p * i)
            tau_i = tau_const * eta_i * lipschitz * math.sqrt(steps)
            sens = cls.noise_sensitivity(eta_i=eta_i, tau_i=tau_i, lipschitz=lipschitz)
            if constants == "paper":
                sigma = ALG1_PAPER_SIGMA * sens * ln(n / delta) ** 2 / (epsilon * C)
            else:
                sigma = 4.0 * math.sqrt(2.0 * ln(2.0 / delta)) * sens / (epsilon * C)
            values = (groups * C, groups, steps, eta_i, tau_i, sigma)
            for key, value in zip(keys, values, strict=True):
                out[key].append(value)
        return out

    @staticmethod
    def noise_sensitivity(*, eta_i: float, tau_i: float, lipschitz: float) -> float:
        """Line 22: the output noise σ_i is calibrated to the filtered average's sensitivity τ_i."""
        return tau_i

    @property
    def params(self) -> dict:
        """Every parameter, per-phase lists included (JSON-ready)."""
        return {
            "algorithm": "Algorithm 1",
            "n": self.n,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "lipschitz": self.lipschitz,
            "diameter": self.diameter,
            "radius": self.radius,
            "center": list(self.center),
            "start": list(self.start),
            "eta": self.eta,
            "p": self.p,
            "q": self.q,
            "J": self.J,
            "C": self.C,
            "levels": self.levels,
            "tau_const": self.tau_const,
            "n_i": list(self.phase_sizes),
            "N_i": list(self.group_sizes),
            "T_i": list(self.steps),
            "eta_i": list(self.step_sizes),
            "tau_i": list(self.taus),
            "sigma_i": list(self.sigmas),
            "loss": repr(self.loss),
            "smoothness": self.smoothness,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "partition": self.partition,
            "variant": type(self).__name__,
            "eta_le_1_over_beta": None
            if not self.smoothness
            else self.eta <= 1.0 / self.smoothness,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ)-user-level DP, replace-one-user (Thm 2.1 / B.1); paper constants with noise."""
        return paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem B.1")

    @property
    def gradient_count(self) -> int:
        """Σ_i C·T_i = Σ_i n_i·m ≤ n·m (spec §2.7), if no phase halts."""
        return int(sum(self.phase_sizes) * self.m)

    @property
    def score_noise_scale(self) -> float:
        """Line 10: ŝ_i = s_i + Lap(20/ε)."""
        return ALG1_SCORE_LAPLACE / self.epsilon

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The audited output ``(trials, d)`` (the released x_l, or 0)."""
        return self.run(data, rng, trials).theta

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> Algorithm1Run:
        """Run ``trials`` independent copies on ``data`` (its first ``n`` users)."""
        data = check_data(data, self.d, self.n)
        trials = check_trials(trials)
        x, y = data.x[: self.n], None if data.y is None else data.y[: self.n]
        constant = bool(np.all(x == x[:, :1])) and (y is None or bool(np.all(y == y[:, :1])))
        width = self.n + max(
            [ni * self.m * (0 if constant else 3) + 6 * self.C * self.d for ni in self.phase_sizes],
            default=1,
        )
        chunk = trial_chunk(trials, width)
        parts = [
            self._run_chunk(
                x=x,
                y=y,
                constant=constant,
                rng=rng,
                trials=min(chunk, trials - s),
                transcript=transcript,
            )
            for s in range(0, trials, chunk)
        ]
        return stack_runs(Algorithm1Run, parts)

    # ---------------------------------------------------------------- steps, in the paper's order

    def _phase_users(self, order: np.ndarray, offset: int, n_i: int) -> np.ndarray:
        """Line 5: the next n_i users of the order, disjoint from earlier phases: ``(T, n_i)``."""
        return order[:, offset : offset + n_i]

    def _score(self, points: np.ndarray, counts: np.ndarray, tau: float):
        """Line 10: concentration score s_i (radius τ_i, divided by C) and the filter's h (2τ_i)."""
        return concentration(points, counts, tau, 2.0 * tau)

    def _halts(self, noisy: np.ndarray, halted: np.ndarray) -> np.ndarray:
        """Line 11/19: a live trial halts when ŝ_i < 4C/5."""
        return ~halted & (noisy < 0.8 * self.C)

    def _filter(self, counts: np.ndarray, h: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Lines 13–17: keep each group iterate with the soft filter's probability."""
        return rng.binomial(counts, keep_probability(h, self.C))

    def _halt_output(self, points: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Line 11: a halted run outputs 0: ``(T, d)``."""
        return np.zeros((points.shape[0], self.d))

    def _run_chunk(self, *, x, y, constant, rng, trials, transcript) -> Algorithm1Run:
        """All phases for ``trials`` trials on users ``x (n, m, d)`` (labels ``y``, if any)."""
        d, P = self.d, len(self.phase_sizes)
        center = np.asarray(self.center)
        order = partition_order(rng, trials, self.n, self.partition)
        x_prev = np.broadcast_to(np.asarray(self.start), (trials, d)).copy()
        halted = np.zeros(trials, dtype=bool)
        out = np.zeros((trials, d))
        grads = np.zeros(trials, dtype=np.int64)
        rec = {k: np.zeros((trials, P)) for k in ("scores", "noisy_scores", "kept")}
        iterates = np.zeros((trials, P, d))
        halt_phase = np.zeros(trials, dtype=np.int64)
        users_log = []
        offset = 0
        for i in range(P):
            n_i = self.phase_sizes[i]
            users = self._phase_users(order, offset, n_i)
            offset += n_i
            points, counts = self._group_iterates(
                x=x, y=y, constant=constant, users=users, phase=i, x_prev=x_prev, rng=rng
            )
            score, h = self._score(points, counts, self.taus[i])
            noisy = score + rng.laplace(0.0, self.score_noise_scale, trials)
            halt_now = self._halts(noisy, halted)
            kept = self._filter(counts, h, rng)
            size = kept.sum(axis=1)
            mean = (
                np.einsum("tu,tud->td", kept.astype(np.float64), points)
                / np.maximum(size, 1)[:, None]
            )
            mean = np.where((size > 0)[:, None], mean, x_prev)  # S_i = ∅: x̃_i = x_{i−1} [DEFAULT]
            noise = self.noise_mult * self.sigmas[i] * rng.standard_normal((trials, d))  # line 22
            live = ~halted
            grads[live] += n_i * self.m
            out[halt_now] = self._halt_output(points, counts)[halt_now]
            if transcript:
                rec["scores"][:, i] = score
                rec["noisy_scores"][:, i] = noisy
                rec["kept"][:, i] = size
                iterates[live & ~halt_now, i] = (mean + noise)[live & ~halt_now]
                halt_phase[halt_now] = i + 1
                users_log.append(users)
            halted |= halt_now
            x_prev = np.where(halted[:, None], x_prev, mean + noise)
        final = np.where(halted[:, None], out, x_prev)
        theta = np.where(halted[:, None], out, project_domain(x_prev, center, self.radius))
        extra = {}
        if transcript:
            extra = dict(phase_iterates=iterates, halt_phase=halt_phase, users=users_log, **rec)
        return Algorithm1Run(
            theta=theta, unprojected=final, halted=halted, gradient_evaluations=grads, **extra
        )

    def _group_iterates(self, *, x, y, constant, users, phase, x_prev, rng):
        """Line 6–8: C disjoint groups of N_i users, x̃_{i,j} = ProjSGD(group, η_i, T_i, x_{i−1}).

        ``phase`` is the 0-based index i; ``users (T, n_i)``, ``x_prev (T, d)``.  Returns
        ``(points (T, U, d), counts (T, U))``.  When every user's items are identical
        and N_i = 1, a group's SGD path does not depend on the item order, so each distinct
        user is run once per trial (exact; spec P-c (ii)).
        """
        trials, C = users.shape[0], self.C
        N_i, T_i, eta_i = self.group_sizes[phase], self.steps[phase], self.step_sizes[phase]
        center = np.asarray(self.center)
        if constant and N_i == 1:
            table_x, table_y, uid = distinct_users(x[:, :1], None if y is None else y[:, :1])
            z, zy = table_x[:, 0, :][None], None if table_y is None else table_y[:, 0][None]
            it = np.repeat(x_prev[:, None, :], z.shape[1], axis=1)
            total = np.zeros_like(it)
            for _ in range(T_i):
                step = it - eta_i * paired_grad(self.loss, it, z, zy)
                it = project_domain(step, center, self.radius)
                total += it
            return total / T_i, user_counts(uid, users, z.shape[1])
        groups = users.reshape(trials, C, N_i)
        order = np.argsort(rng.random((trials, C, N_i * self.m)), axis=2)  # one pass, random order
        it = np.repeat(x_prev[:, None, :], C, axis=1)
        total = np.zeros_like(it)
        for s in range(T_i):
            pos = order[:, :, s]
            who = np.take_along_axis(groups, (pos // self.m)[:, :, None], axis=2)[:, :, 0]
            item = pos % self.m
            g = paired_grad(self.loss, it, x[who, item], None if y is None else y[who, item])
            it = project_domain(it - eta_i * g, center, self.radius)
            total += it
        return total / T_i, np.ones((trials, C), dtype=np.int64)
