"""Algorithm 2 of Lowy, Liu & Asi (2024): one phase of user-level DP accelerated SGD (spec 000).

Minibatch AC-SA ([GL12]) with per-step outlier-gradient removal gated by AboveThreshold
(Alg. 2); the threshold noise is drawn **once** per call (spec §7(d) item 7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.algorithms.lowy_liu_asi_2024.core import (
    MEAN_SUFFICIENT,
    acsa_coefficients,
    concentration,
    distinct_users,
    keep_probability,
    paired_grad,
    problem_loss,
    project_domain,
    run_summary,
    stack_runs,
    trial_chunk,
    user_gradients,
)
from dpclaims.algorithms.lowy_liu_asi_2024.schedule import (
    ACSA_STAGE,
    ALG2_QUERY_LAPLACE,
    ALG2_THRESHOLD_LAPLACE,
    CONSTANTS,
    SAMPLINGS,
    alg2_batch,
    alg2_sigma,
    as_vector,
    check_data,
    paper_privacy_claim,
    privacy_target,
    problem_sizes,
)
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_choice, check_count, check_positive, check_trials
from dpclaims.losses import LinearLoss, uniform_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = ["Algorithm2", "Algorithm2Run"]


@dataclass(frozen=True, kw_only=True)
class Algorithm2Run:
    """Outputs of :meth:`Algorithm2.run` / one phase of Algorithm 3.

    theta : (T, d) x_ag after T_i steps, or 0 after a halt
    halted : (T,) bool;  halt_step : (T,) 1-based step of the halt, 0 if none
    gradient_evaluations : (T,) K_i·m per step run (the halting step included)
    removed : (T,) a user of a passing step was filtered out (off the good event)
    noisy_gradients : (T, T_i, d) ĝ_t (transcript only; 0 after a halt)
    kept : (T, T_i) |S_t| (transcript only); xi : (T,) threshold noise (transcript only)
    """

    theta: np.ndarray
    halted: np.ndarray
    halt_step: np.ndarray
    gradient_evaluations: np.ndarray
    removed: np.ndarray
    noisy_gradients: np.ndarray | None = None
    kept: np.ndarray | None = None
    xi: np.ndarray | None = None

    def to_dict(self) -> dict:
        return run_summary(self)


@dataclass(frozen=True, eq=False, kw_only=True)
class Algorithm2:
    """Algorithm 2: one phase of user-level DP accelerated minibatch SGD (AC-SA, [GL12]).

    Objective ``F̂_i(x) = (1/n_i)Σ_Z F̂(x, Z) + (λ_i/2)‖x − x_{i−1}‖²`` (Alg. 3 line 6) on the
    domain ``B(center, radius)``; the regulariser's gradient is added to the noisy minibatch
    gradient (line 15).  ``smoothing = r > 0`` evaluates each item's gradient at ``x + u``,
    ``u ~ Unif(B(0, r))`` fresh per item and call (the oracle of Thm 4.1, spec §2.4).
    """

    n_total: int  # n in the log terms
    n_phase: int  # n_i
    m: int
    d: int
    epsilon: float
    delta: float
    steps: int  # T_i
    batch: int  # K_i (≤ n_i)
    tau: float
    sigma: float  # line 14
    lam: float  # λ_i
    smoothness: float  # β (of the loss; L_f = β + λ_i)
    radius: float = math.inf
    center: tuple = ()
    loss: Any = field(default_factory=LinearLoss)
    smoothing: float = 0.0
    constants: str = "paper"
    noise_mult: float = 1.0
    sampling: str = "without"

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        steps: int,
        tau: float,
        lam: float = 1.0,
        n_total: int | None = None,
        levels: int | None = None,
        batch: int | None = None,
        constants: str = "paper",
        center=None,
        smoothing: float = 0.0,
        noise_mult: float = 1.0,
        sampling: str = "without",
    ) -> Algorithm2:
        """One Algorithm-2 call with Alg. 3 line 4's K_i (capped at n_i) and line 14's σ_i.

        ``problem.n`` is the phase size n_i; its smoothness (None: 0) is β, its radius the
        domain's.  ``n_total`` (n of the log terms) defaults to n_i; ``batch`` overrides K_i.
        Privacy holds for any τ, λ, β (spec §3.7), so audits may pick them freely.
        """
        n_phase, m, d = problem_sizes(problem, minimum_n=1)
        steps = check_count(steps, "steps")
        epsilon, delta = privacy_target(problem)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(sampling, SAMPLINGS, "sampling")
        n_total = n_phase if n_total is None else check_count(n_total, "n_total")
        levels = (
            int(math.floor(math.log2(max(n_total, 2))))
            if levels is None
            else check_count(levels, "levels")
        )
        tau = check_positive(tau, "tau")
        if batch is None:
            batch = alg2_batch(
                constants=constants,
                n_i=n_phase,
                steps=steps,
                m=m,
                n=n_total,
                levels=levels,
                epsilon=epsilon,
                delta=delta,
            )
        batch = check_count(batch, "batch")
        if batch > n_phase:
            raise InputError(f"batch must be <= n_phase = {n_phase}, got {batch}")
        loss = problem_loss(problem)
        sigma = alg2_sigma(
            constants=constants,
            sensitivity=cls.noise_sensitivity(tau=tau, lipschitz=problem.lipschitz, m=m),
            steps=steps,
            n=n_total,
            d=d,
            size=cls.noise_size(n_phase),
            epsilon=epsilon,
            delta=delta,
        )
        return cls(
            n_total=n_total,
            n_phase=n_phase,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            steps=steps,
            batch=batch,
            tau=tau,
            sigma=sigma,
            lam=check_positive(lam, "lam"),
            smoothness=problem.smoothness or 0.0,
            radius=problem.radius,
            center=as_vector(center, d, "center"),
            loss=loss,
            smoothing=check_positive(smoothing, "smoothing", allow_zero=True),
            constants=constants,
            noise_mult=check_positive(noise_mult, "noise_mult", allow_zero=True),
            sampling=sampling,
        )

    @staticmethod
    def noise_sensitivity(*, tau: float, lipschitz: float, m: int) -> float:
        """Line 14: σ_i is calibrated to the filtered mean gradient's user-level sensitivity τ."""
        return tau

    @staticmethod
    def noise_size(n_i: int) -> float:
        """Line 14: σ_i ∝ 1/n_i (the phase's number of users)."""
        return n_i

    @property
    def params(self) -> dict:
        return {
            "algorithm": "Algorithm 2",
            "n_total": self.n_total,
            "n_phase": self.n_phase,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "steps": self.steps,
            "batch": self.batch,
            "tau": self.tau,
            "sigma": self.sigma,
            "lam": self.lam,
            "smoothness": self.smoothness,
            "radius": self.radius,
            "center": list(self.center),
            "loss": repr(self.loss),
            "smoothing": self.smoothing,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "sampling": self.sampling,
            "variant": type(self).__name__,
            "stage_length": self.stage_length,
            "threshold": 0.8 * self.batch,
            "threshold_laplace": ALG2_THRESHOLD_LAPLACE / self.epsilon,
            "query_laplace": ALG2_QUERY_LAPLACE / self.epsilon,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def stage_length(self) -> int:
        """AC-SA stage length N_s = ⌈4√((β + λ_i)/λ_i)⌉ [DEFAULT, spec P-d]."""
        return int(math.ceil(ACSA_STAGE * math.sqrt((self.smoothness + self.lam) / self.lam)))

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """The phase (transcript of ĝ_t and halting pattern) is (ε, δ)-user-level DP (Thm C.1)."""
        return paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem C.1")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        start=None,
    ) -> Algorithm2Run:
        """Run on the first ``n_phase`` users of ``data``; ``start`` = x_{i−1} (default centre)."""
        data = check_data(data, self.d, self.n_phase)
        trials = check_trials(trials)
        table_x, table_y, uid = distinct_users(
            data.x[: self.n_phase], None if data.y is None else data.y[: self.n_phase]
        )
        counts = np.bincount(uid, minlength=table_x.shape[0])
        x0 = np.asarray(self.center if start is None else as_vector(start, self.d, "start"))
        chunk = trial_chunk(
            trials,
            8 * table_x.shape[0] * (self.m if self.smoothing else 1) * self.d
            + (self.steps * self.d if transcript else 0),
        )
        parts = []
        for s in range(0, trials, chunk):
            t = min(chunk, trials - s)
            parts.append(
                self.phase_run(
                    table_x=table_x,
                    table_y=table_y,
                    phase_counts=np.broadcast_to(counts, (t, counts.size)),
                    x_prev=np.broadcast_to(x0, (t, self.d)).copy(),
                    rng=rng,
                    transcript=transcript,
                )
            )
        return stack_runs(Algorithm2Run, parts)

    # ---------------------------------------------------------------- steps, in the paper's order

    def _score(self, q: np.ndarray, batch: np.ndarray):
        """Line 6: concentration score of the user gradients (radius 2τ, divided by K) and h."""
        return concentration(q, batch, 2.0 * self.tau, 2.0 * self.tau)

    def _step_threshold(self, threshold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Line 7's threshold 4K/5 + ξ: ξ is drawn once per call (spec §7(d) item 7)."""
        return threshold

    def _filter(self, batch: np.ndarray, h: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Lines 8–12: keep each user gradient with the soft filter's probability."""
        return rng.binomial(batch, keep_probability(h, self.batch))

    def _halt_output(self, q: np.ndarray, batch: np.ndarray) -> np.ndarray:
        """Line 7: a halted call outputs 0: ``(T, d)``."""
        return np.zeros((q.shape[0], self.d))

    def phase_run(
        self, *, table_x, table_y, phase_counts, x_prev, rng, transcript, domain_center=None
    ) -> Algorithm2Run:
        """Lines 1–21 for ``T`` trials on the distinct users ``table_x (U, m, d)``.

        ``phase_counts (T, U)``: multiplicity of each distinct user in D_i; ``x_prev (T, d)``.
        ``domain_center (T, d)`` replaces the domain's centre per trial (the spec §2.5 wrapper).
        """
        trials, d, K, eps = x_prev.shape[0], self.d, self.batch, self.epsilon
        center = np.asarray(self.center) if domain_center is None else domain_center
        # users of D_i in some trial
        active = np.flatnonzero(np.any(np.asarray(phase_counts) > 0, axis=0))
        table_x, phase_counts = table_x[active], np.asarray(phase_counts)[:, active]
        table_y = None if table_y is None else table_y[active]
        if self.smoothing == 0 and table_y is None and isinstance(self.loss, MEAN_SUFFICIENT):
            # exact: q(x, Z) depends on Z only via its mean
            table_x = table_x.mean(axis=1, keepdims=True)
        # line 4, drawn ONCE (spec §7(d) 7)
        xi = rng.laplace(0.0, ALG2_THRESHOLD_LAPLACE / eps, trials)
        threshold = 0.8 * K + xi
        x, x_ag = x_prev.copy(), x_prev.copy()
        halted = np.zeros(trials, dtype=bool)
        halt_step = np.zeros(trials, dtype=np.int64)
        leaked = np.zeros((trials, d))
        grads = np.zeros(trials, dtype=np.int64)
        removed = np.zeros(trials, dtype=bool)
        rec_g = np.zeros((trials, self.steps, d)) if transcript else None
        rec_k = np.zeros((trials, self.steps)) if transcript else None
        lf, lam, local = self.smoothness + self.lam, self.lam, 0
        for t in range(1, self.steps + 1):
            local += 1
            if local > self.stage_length:  # multi-stage restart from x_ag (Remark C.5, spec P-d)
                x, local = x_ag.copy(), 1
            a, w_ag, w_x, g_t = acsa_coefficients(local, lf, lam)
            x_md = w_ag * x_ag + w_x * x
            batch = self._minibatch(phase_counts, rng)  # line 3
            q = self._user_gradients(table_x, table_y, x_md=x_md, batch=batch, rng=rng)  # line 5
            score, h = self._score(q, batch)  # line 6
            threshold = self._step_threshold(threshold, rng)
            noisy = score + rng.laplace(0.0, ALG2_QUERY_LAPLACE / eps, trials)
            halt_now = ~halted & (noisy < threshold)  # line 7/18
            kept = self._filter(batch, h, rng)  # 8–12
            size = kept.sum(axis=1)
            # line 13
            g = np.einsum("tu,tud->td", kept.astype(np.float64), q) / np.maximum(size, 1)[:, None]
            g[size == 0] = 0.0  # S_t = ∅: g_t = 0 [DEFAULT]
            noisy_g = g + self.noise_mult * self.sigma * rng.standard_normal((trials, d))  # line 14
            live = ~halted
            grads[live] += K * self.m
            removed |= live & ~halt_now & (size < K)
            leaked[halt_now] = self._halt_output(q, batch)[halt_now]
            if transcript:
                rec_g[live & ~halt_now, t - 1] = noisy_g[live & ~halt_now]
                rec_k[:, t - 1] = size
            halt_step[halt_now] = t
            halted |= halt_now
            G = noisy_g + lam * (x_md - x_prev)  # line 15: gradient of the regulariser folded in
            x = project_domain(
                (a * lam * x_md + ((1 - a) * lam + g_t) * x - a * G) / (lam + g_t),
                center,
                self.radius,
            )
            x_ag = a * x + (1 - a) * x_ag
        theta = np.where(halted[:, None], leaked, x_ag)
        return Algorithm2Run(
            theta=theta,
            halted=halted,
            halt_step=halt_step,
            gradient_evaluations=grads,
            removed=removed,
            noisy_gradients=rec_g,
            kept=rec_k,
            xi=xi if transcript else None,
        )

    def _minibatch(self, phase_counts: np.ndarray, rng) -> np.ndarray:
        """Line 3: K_i users of D_i as multiplicities ``(T, U)``.

        Without replacement by default (spec §7(d) 8).
        """
        K, n_i = self.batch, int(phase_counts[0].sum())
        if self.sampling == "without" and K == n_i:
            return np.asarray(phase_counts)
        same = bool(np.all(phase_counts == phase_counts[:1]))
        if self.sampling == "with":
            if same:
                return rng.multinomial(K, phase_counts[0] / n_i, size=phase_counts.shape[0])
            return np.stack([rng.multinomial(K, row / n_i) for row in phase_counts])
        if same:
            return rng.multivariate_hypergeometric(phase_counts[0], K, size=phase_counts.shape[0])
        return np.stack([rng.multivariate_hypergeometric(row, K) for row in phase_counts])

    def _user_gradients(self, table_x, table_y, *, x_md, batch, rng) -> np.ndarray:
        """Line 5: q_t(Z) = (1/m)Σ_z ∇f(x, z) for every distinct user in use: ``(T, U, d)``."""
        used = np.flatnonzero(batch.any(axis=0))
        q = np.zeros(batch.shape + (self.d,))
        tx, ty = table_x[used], None if table_y is None else table_y[used]
        if self.smoothing > 0:  # Thm 4.1 oracle: ∇f(x + u, z), u ~ Unif(B(0, r)) fresh per item
            u = uniform_ball(
                rng, shape=(x_md.shape[0], used.size, self.m), d=self.d, radius=self.smoothing
            )
            pts = x_md[:, None, None, :] + u
            q[:, used] = paired_grad(
                self.loss, pts, tx[None], None if ty is None else ty[None]
            ).mean(axis=2)
        else:
            q[:, used] = user_gradients(self.loss, x_md, tx, ty)
        return q
