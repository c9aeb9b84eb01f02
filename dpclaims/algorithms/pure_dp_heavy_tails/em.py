"""Exponential-mechanism algorithms of spec 003 (Lowy 2026): EM-PGM over a net and the localized EM.

* :class:`EMPGM` — Algorithm 5 (App. E.1, Thm E.1) and its ball-smoothed variant (App. E.2, Thm
E.5):
  a finite exponential mechanism on a data-independent net of 𝒲 (d ≤ 3) whose score is the norm of
  the clipped projected-gradient map, sensitivity ``2C/n`` [H; parameters M].
* :class:`LocalizedGridEM` — Algorithm 7 (App. F) in the exactly-private grid form PV-3 (spec §2.9),
  d ∈ {1, 2, 3}: Laplace localization at ε/2 (exact 1-d solver, or the certified PV-2 solver for d ≥
  2), then a finite EM at ε/4 on a grid / γ-net of ``K = 𝒲 ∩ B(w̃, r)`` with the centred extension
  score of sensitivity ``Δ_s = 4Cr/n`` (Lemma F.1) [budget split L]; with ``sampler="rejection"``
  the stage-2 output is instead an EXACT draw from the continuous log-concave Gibbs density ``∝
  exp(−Ψ)`` on K (:func:`gibbs_rejection`), i.e. the ideal EM of Algorithm 7.

Both are pure ε-DP (δ = 0), replace-one, item level.  Sampling is batched over trials
(inverse-CDF on the fixed net, Gumbel-max on the per-trial grids).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from dpclaims.algorithms.pure_dp_heavy_tails import (
    Ball,
    ClippedSlopes1D,
    HeavyTailedRun,
    OutPertLocalize,
    PolyhedralTerms,
    WorstValidPoint,
    clip_level,
    pv2_minimize,
)
from dpclaims.algorithms.pure_dp_heavy_tails.extension1d import item_arrays
from dpclaims.algorithms.pure_dp_heavy_tails.formulas import lowy_claim
from dpclaims.algorithms.pure_dp_heavy_tails.localize import check_problem, problem_domain
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    MechanismError,
    check_choice,
    check_confidence,
    check_count,
    check_epsilon,
    check_positive,
)
from dpclaims.losses import AbsoluteLoss, uniform_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = [
    "EMPGM",
    "LocalizedGridEM",
    "net",
    "net_size_bound",
    "MAX_NET_POINTS",
    "REJECTION_MAX_ROUNDS",
    "GRID_POINTS_PER_AXIS",
    "LOWER_BOUND_SLACK",
    "REJECTION_BATCH",
    "gibbs_rejection",
    "gibbs_rejection_1d",
]

REJECTION_MAX_ROUNDS = 20_000
"""Round cap of :func:`gibbs_rejection`; reaching it raises (never an approximate sample)."""

GRID_POINTS_PER_AXIS = {1: 64, 2: 24, 3: 10}
"""Default grid points per axis of the stage-2 grid / γ-net of K in :class:`LocalizedGridEM` (PV-3
leaves the resolution open; the net is exponential in d, Remark E.3)."""

LOWER_BOUND_SLACK = 0.1
"""Certified duality gap of the PV-2 lower bound ``m ≤ min_K Ψ`` in units of Ψ (costs ≤ e^{0.1} in
acceptance rate, never exactness) — :class:`LocalizedGridEM` with ``sampler="rejection"``, d ≥ 2."""

REJECTION_BATCH = 32
"""Proposals per waiting trial and round in :func:`gibbs_rejection`."""

_EVAL_BLOCK = 4_000_000
"""Largest ``rows × points × n`` block of score evaluations held in memory at once (≈ 32 MB)."""

_CACHE_BLOCK = 32_768
"""Score evaluations per pass of the PV-2 objective and of the d = 1 grid law (≈ 256 KB,
cache-resident: ~3x faster than one pass over an :data:`_EVAL_BLOCK`; each row's value is the
same at any block size)."""


def _row_blocks(grid: np.ndarray, values) -> np.ndarray:
    """``values(grid[rows], rows)`` for row blocks of ≤ :data:`_CACHE_BLOCK` entries of ``grid
    (T, P)``, assembled ``(T, P)`` (row-wise values: the same at any block size)."""
    out = np.empty_like(grid)
    step = max(1, _CACHE_BLOCK // max(1, grid.shape[1]))
    for i in range(0, grid.shape[0], step):
        rows = slice(i, i + step)
        out[rows] = values(grid[rows], rows)
    return out


def _log_normalised(logits: np.ndarray) -> np.ndarray:
    """Row-wise ``logits − logsumexp(logits)``: log-probabilities ``(T, P)``."""
    return logits - special.logsumexp(logits, axis=1, keepdims=True)


def gibbs_rejection(
    psi,
    sample_uniform,
    psi_min: np.ndarray,
    rng: np.random.Generator,
    *,
    batch: int = REJECTION_BATCH,
    max_rounds: int = REJECTION_MAX_ROUNDS,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact draws from ``π_t(w) ∝ exp(−Ψ_t(w))`` on a set ``K_t`` by rejection from the uniform
    law on K_t.

    ``sample_uniform`` draws proposals uniform on a set ``B_t ⊇ K_t`` and flags those in K_t; a
    proposal w is accepted iff it lies in K_t and ``U < exp(−(Ψ_t(w) − m_t))`` with ``m_t =
    psi_min_t ≤ min_{K_t} Ψ_t``. Every accepted point is an exact sample of π_t (standard rejection
    sampling), so Lemma F.4's sampler slack is ξ = 0 — provided ``m_t`` really is a lower bound
    (pass a certified one, e.g. a dual value). Batched: each round draws ``batch`` proposals for
    every trial still waiting.  Expected rounds ``≈ vol(B)/(batch ∫_K e^{−(Ψ−m)})``, exponential in
    d — the reason [LL25]'s polynomial-time inexact sampler exists.  Hitting ``max_rounds`` raises
    :class:`MechanismError` (no approximate sample).

    Parameters
    ----------
    psi : ``Ψ(w (T', B, ...), rows (T',)) -> (T', B)`` on the trials ``rows``
    sample_uniform : ``(rows (T',), batch, rng) -> (w (T', B, ...), inside (T', B) bool)``
    psi_min : (T,)

    Returns
    -------
    samples ``(T, ...)`` and the rounds each trial used ``(T,)``.
    """
    psi_min = np.asarray(psi_min, dtype=float)
    batch = check_count(batch, "batch")
    out = None
    rounds = np.zeros(psi_min.size, dtype=np.int64)
    waiting = np.arange(psi_min.size)
    for _ in range(check_count(max_rounds, "max_rounds")):
        if waiting.size == 0:
            return out, rounds
        w, inside = sample_uniform(waiting, batch, rng)
        if out is None:
            out = np.full((psi_min.size,) + w.shape[2:], np.nan)
        rounds[waiting] += 1
        u = rng.random(w.shape[:2])
        with np.errstate(over="ignore"):
            accept = inside & (u < np.exp(-(psi(w, waiting) - psi_min[waiting, None])))
        hit = accept.any(axis=1)
        first = np.argmax(accept, axis=1)
        out[waiting[hit]] = w[hit, first[hit]]
        waiting = waiting[~hit]
    if waiting.size:
        raise MechanismError(
            f"gibbs_rejection hit max_rounds={max_rounds} with {waiting.size} trial(s) still "
            "unsampled; raise max_rounds or batch (an approximate sample would break exact DP)"
        )
    return (np.full((psi_min.size,), np.nan) if out is None else out), rounds


def gibbs_rejection_1d(
    psi,
    *,
    lo: np.ndarray,
    hi: np.ndarray,
    psi_min: np.ndarray,
    rng: np.random.Generator,
    batch: int = REJECTION_BATCH,
    max_rounds: int = REJECTION_MAX_ROUNDS,
) -> np.ndarray:
    """:func:`gibbs_rejection` on the intervals ``[lo_t, hi_t]``: ``psi (w (T', B), rows) -> (T',
    B)``; ``lo, hi, psi_min (T,)`` → ``(T,)`` samples."""

    def sample_uniform(rows, size, gen):
        w = lo[rows, None] + (hi - lo)[rows, None] * gen.random((rows.size, size))
        return w, np.ones(w.shape, dtype=bool)

    return gibbs_rejection(psi, sample_uniform, psi_min, rng, batch=batch, max_rounds=max_rounds)[0]


MAX_NET_POINTS = 200_000
"""Largest net :class:`EMPGM` builds (the net is exponential in d, Remark E.3)."""


def net_size_bound(diameter: float, gamma: float, d: int) -> float:
    """``|N_γ| ≤ (3D/γ)^d`` (Remark E.3) [H]."""
    return (
        3.0 * check_positive(diameter, "diameter") / check_positive(gamma, "gamma")
    ) ** check_count(d, "d")


def net(domain: Ball, gamma: float) -> np.ndarray:
    """A γ-net of the ball 𝒲: Π_𝒲 of the cubic grid of spacing ``2γ/√d`` covering it (Alg 5 line 1)
    → ``(N, d)``."""
    gamma, d = check_positive(gamma, "gamma"), domain.d
    spacing = 2.0 * gamma / math.sqrt(d)
    per_axis = int(math.ceil(domain.diameter / spacing)) + 1  # actual spacing ≤ 2γ/√d, so it covers
    if per_axis**d > MAX_NET_POINTS:
        raise InputError(
            f"the γ-net has {per_axis}^{d} points (> {MAX_NET_POINTS}); raise gamma or lower d "
            "(EM-PGM is exponential in d, Remark E.3)"
        )
    axis = np.linspace(-domain.radius, domain.radius, per_axis)
    grid = (
        np.stack(np.meshgrid(*([axis] * d), indexing="ij"), axis=-1).reshape(-1, d) + domain.center
    )
    return np.unique(domain.project(grid), axis=0)


@dataclass(frozen=True, kw_only=True)
class EMPGM:
    """Algorithm 5, EM-PGM, with the App. E.2 ball smoothing for the absolute loss in d = 1.

    Score ``s(w) = ‖G^C_η(w)‖``, ``G^C_η(w) = (w − Π_𝒲(w − η(ĝ_C(w) + λ(w − w̄))))/η``, where
    ``ĝ_C`` is the mean of per-record gradients clipped to norm C.  Output ``w ∈ N_γ`` w.p. ∝
    ``exp(−ε s(w)/(2Δ_s))``, ``Δ_s = 2C/n`` (projection is non-expansive; the 1/η cancels η) [H].
    ``η = 1/(H + λ)`` is public [M]; with smoothing ``ρ`` the smoothness is ``H̄ = d G_k/(ρβ)`` (eq.
    29). ``SENSITIVITY_FACTOR`` is 2 (replace-one).
    """

    SENSITIVITY_FACTOR: ClassVar[float] = 2.0
    """``Δ_s = SENSITIVITY_FACTOR · C/n`` (replace-one changes one clipped gradient)."""

    n: int
    d: int
    epsilon: float
    lam: float
    clip: float
    eta: float
    gamma: float
    smoothing: float | None
    domain: Ball
    loss: Any
    grid: np.ndarray
    center: np.ndarray

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.d > 3:
            raise InputError(f"EM-PGM builds an explicit net; d must be <= 3, got {self.d}")
        if self.smoothing is not None and not (isinstance(self.loss, AbsoluteLoss) and self.d == 1):
            raise InputError(
                "ball smoothing (App. E.2) is implemented in closed form for AbsoluteLoss in d = 1"
            )
        if self.smoothing is None and not getattr(self.loss, "glm", False):
            raise InputError(
                "EM-PGM needs a smooth GLM loss (or smoothing=rho with AbsoluteLoss in d = 1)"
            )

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        moment_k: float,
        k: float,
        lam: float,
        beta: float,
        domain: Ball | None = None,
        smoothness: float | None = None,
        smoothing: float | None = None,
        center=None,
        max_points: int | None = None,
    ) -> EMPGM:
        """Thm E.1 / E.5 parameters: ``γ = C/((H+λ)εn)``, ``Λ = 3D(H+λ)εn/C̄``,
        ``C = G_k(εn/(β(d ln Λ + ln 1/β)))^{1/k}`` with the public upper value
        ``C̄ = G_k(εn/β)^{1/k}`` in Λ [M]; ``domain`` defaults to ``B(0, problem.radius)``.

        Give ``smoothness`` H for a smooth loss (Alg 5) or ``smoothing`` ρ (App. E.2,
        ``H̄ = d G_k/(ρβ)``; the spec suggests ρ ≈ D/n).  ``max_points`` coarsens the net (still
        data-independent; costs utility).
        """
        problem = check_problem(problem)
        n, d, epsilon = problem.n, problem.d, problem.epsilon
        lam, beta = check_positive(lam, "lam"), check_confidence(beta, "beta")
        domain = problem_domain(problem, domain)
        if (smoothness is None) == (smoothing is None):
            raise InputError(
                "pass exactly one of smoothness (H, Alg 5) or smoothing (rho, App. E.2)"
            )
        h = (
            check_positive(smoothness, "smoothness")
            if smoothing is None
            else d * moment_k / (check_positive(smoothing, "smoothing") * beta)
        )
        c_up = moment_k * (epsilon * n / beta) ** (1 / k)
        big_lambda = max(3.0 * domain.diameter * (h + lam) * epsilon * n / c_up, math.e)
        clip = moment_k * (
            epsilon * n / (beta * (d * math.log(big_lambda) + math.log(1 / beta)))
        ) ** (1 / k)
        gamma = clip / ((h + lam) * epsilon * n)
        if max_points is not None:
            per_axis = check_count(max_points, "max_points") ** (1 / d)
            gamma = max(gamma, domain.diameter * math.sqrt(d) / (2.0 * max(per_axis - 1, 1)))
        c = domain.center if center is None else np.asarray(center, dtype=float)
        return cls(
            n=n,
            d=d,
            epsilon=epsilon,
            lam=lam,
            clip=clip,
            eta=1.0 / (h + lam),
            gamma=gamma,
            smoothing=smoothing,
            domain=domain,
            loss=problem.loss,
            grid=net(domain, gamma),
            center=c,
        )

    @property
    def sensitivity(self) -> float:
        """``Δ_s = 2C/n`` (``SENSITIVITY_FACTOR·C/n``)."""
        return self.SENSITIVITY_FACTOR * self.clip / self.n

    @property
    def params(self) -> dict:
        return {
            "n": self.n,
            "d": self.d,
            "epsilon": self.epsilon,
            "lam": self.lam,
            "clip": self.clip,
            "eta": self.eta,
            "gamma": self.gamma,
            "smoothing": self.smoothing,
            "net_points": int(self.grid.shape[0]),
            "net_size_bound": net_size_bound(self.domain.diameter, self.gamma, self.d),
            "score_sensitivity": self.sensitivity,
            "domain": self.domain.to_dict(),
            "loss": type(self.loss).__name__,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return lowy_claim(self.epsilon, "Thm E.1 / E.5 (Algorithm 5)")

    def _gradients(self, data: UserDataset) -> np.ndarray:
        """Per-record gradients at every net point ``(N, n, d)`` (smoothed in closed form with
        ρ)."""
        x, y = item_arrays(data, self.d)
        if self.smoothing is not None:
            xs = x[:, 0]
            g = np.abs(xs) * np.clip((self.grid @ x.T - y) / (xs * self.smoothing), -1.0, 1.0)
            return g[..., None]
        return self.loss.grad(self.grid, x, y)

    def scores(self, data: UserDataset) -> np.ndarray:
        """``s(w) = ‖G^C_η(w)‖`` on the net ``(N,)``."""
        g = self._gradients(data)
        norms = np.linalg.norm(g, axis=-1, keepdims=True)
        factor = np.divide(
            self.clip, norms, out=np.ones_like(norms), where=norms > self.clip
        )  # C may be ∞
        g_clip = (g * factor).mean(axis=1)
        step = self.grid - self.eta * (g_clip + self.lam * (self.grid - self.center))
        return np.linalg.norm(self.grid - self.domain.project(step), axis=-1) / self.eta

    def _log_probabilities(self, scores: np.ndarray) -> np.ndarray:
        """``log P(w) = −ε s(w)/(2Δ_s) − log Σ_N exp(−ε s/(2Δ_s))`` ``(N,)`` (Alg 5 line 3)."""
        logits = -self.epsilon * scores / (2.0 * self.sensitivity)
        return logits - special.logsumexp(logits)

    def log_probabilities(self, data: UserDataset) -> np.ndarray:
        """The exact output law on the net: ``log P(w)`` for every net point ``(N,)``."""
        return self._log_probabilities(self.scores(data))

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> HeavyTailedRun:
        """Sample ``trials`` net points ``(trials, d)``; transcript ``scores (N,)``."""
        trials = check_count(trials, "trials")
        s = self.scores(data)
        cdf = np.cumsum(np.exp(self._log_probabilities(s)))
        idx = np.minimum(np.searchsorted(cdf, rng.random(trials), side="right"), len(cdf) - 1)
        evals = np.full(trials, float(self.grid.shape[0] * data.n))
        extra = {"scores": s} if transcript else {}
        return HeavyTailedRun(theta=self.grid[idx], gradient_evaluations=evals, transcript=extra)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True, kw_only=True)
class LocalizedGridEM:
    """Algorithm 7 (LocalizedApproxEM) in the exact grid form PV-3, d ∈ {1, 2, 3} [budget split L].

    (1) ``(w̃, r)`` ← Algorithm 2 at ε/2, β (C, τ, Δ as in Algorithm 4; exact 1-d solver, PV-2 for d
    ≥ 2); ``K = 𝒲 ∩ B(w̃, r)``; (2) anchor ``w_a = w̃ ∈ K``; centred score ``s(w) = F̂^K_{C,λ}(w) −
    F̂^K_{C,λ}(w_a)`` — in 1-d the clipped-slope antiderivative (exact), in d ≥ 2 the PV-2 objective
    ``(1/n)Σ c_i f(w, z_i) + (λ/2)‖w − w̄‖²``, ``c_i = min(1, C/L_{z_i})`` (each term C-Lipschitz,
    the spec's labelled deviation); either way ``Δ_s = 4Cr/n ≥ 2C·diam(K)/n`` (Lemma F.1); (3)
    ``sampler="grid"``: output a point of a data-independent grid of K (1-d: ``points`` equispaced
    points of K; d ≥ 2: the γ-net of B(w̃, r) from :func:`net`, ``points`` per axis, projected onto
    𝒲) w.p. ∝ ``exp(−ε s/(8Δ_s))`` (EM at ε/4); ``sampler="rejection"``: an exact draw from the
    continuous density ∝ ``exp(−Ψ)``, ``Ψ = ε s/(8Δ_s)``, on K (:func:`gibbs_rejection`; uniform
    proposals on B(w̃, r), rejected outside 𝒲; bound ``m ≤ min_K Ψ`` exact in 1-d, the PV-2 dual
    value for d ≥ 2). Exact sampling: total ε/2 + ε/4 ≤ ε (the spec's ξ = ε/8 sampler slack is
    unused).
    """

    localizer: OutPertLocalize
    epsilon: float
    epsilon_em: float
    points: int
    output: str = "joint"
    sampler: str = "grid"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.output, ("joint", "final"), "output")
        check_choice(self.sampler, ("grid", "rejection"), "sampler")
        d = self.localizer.d
        if d > 3:
            raise InputError(
                f"LocalizedGridEM samples a net / uniform proposals of K; d must be <= 3, got {d}"
            )
        if not isinstance(self.localizer.domain, Ball):
            raise InputError(
                "LocalizedGridEM needs a Ball domain (the γ-net and the uniform proposals live on "
                "balls)"
            )
        if d == 1 and self.localizer.solver != "exact-1d":
            raise InputError(
                "LocalizedGridEM in d = 1 is the exact grid variant (PV-3); build it with "
                "solver='exact-1d'"
            )
        if d >= 2 and self.localizer.solver != "pv2":
            raise InputError(
                f"LocalizedGridEM in d = {d} needs the certified structured solver; build the "
                "localizer with solver='pv2'"
            )
        if d >= 2:
            net(
                Ball.centered(d, self.localizer.radius), self.net_gamma
            )  # validates the net size up front

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        moment_k: float,
        k: float,
        lam: float,
        beta: float,
        domain: Ball | None = None,
        points: int | None = None,
        harness: WorstValidPoint | None = None,
        output: str = "joint",
        sampler: str = "grid",
    ) -> LocalizedGridEM:
        """C of Algorithm 4 in dimension ``d = problem.d``, stage 1 at ε/2 (solver "exact-1d" in
        d = 1, "pv2" for d ≥ 2), EM at ε/4 (the spec's split); ``domain`` defaults to
        ``B(0, problem.radius)``; ``points`` per axis (default :data:`GRID_POINTS_PER_AXIS`);
        ``sampler`` = "grid" (PV-3) or "rejection" (exact continuous Gibbs draw on K,
        :func:`gibbs_rejection`)."""
        problem = check_problem(problem)
        epsilon = problem.epsilon
        domain = problem_domain(problem, domain)
        if not isinstance(domain, Ball) or domain.d != problem.d:
            raise InputError(
                f"domain must be a Ball in dimension d = {problem.d}, got {type(domain).__name__}"
            )
        d = domain.d
        if d > 3:
            raise InputError(
                "LocalizedGridEM is the low-dimensional exponential mechanism; d must be <= 3, "
                f"got {d}"
            )
        clip = clip_level(problem.n, d, epsilon, moment_k=moment_k, k=k, beta0=beta)
        loc = OutPertLocalize.from_theorem(
            problem.replace(epsilon=epsilon / 2.0),
            lam=lam,
            clip=clip,
            beta=beta,
            domain=domain,
            harness=harness,
            solver="exact-1d" if d == 1 else "pv2",
        )
        points = GRID_POINTS_PER_AXIS[d] if points is None else points
        return cls(
            localizer=loc,
            epsilon=epsilon,
            epsilon_em=epsilon / 4.0,
            points=check_count(points, "points", minimum=2),
            output=output,
            sampler=sampler,
        )

    @property
    def score_sensitivity(self) -> float:
        """``Δ_s = 4 C r / n`` (Lemma F.1, data-independent value)."""
        return 4.0 * self.localizer.clip * self.localizer.radius / self.localizer.n

    @property
    def net_gamma(self) -> float:
        """γ of the d ≥ 2 net: grid spacing ``2r/(points − 1)``, i.e. ``γ = r√d/(points − 1)``
        (shaved by 1e-12 so that :func:`net` keeps exactly ``points`` per axis)."""
        d = self.localizer.d
        return self.localizer.radius * math.sqrt(d) / (self.points - 1) * (1.0 - 1e-12)

    @property
    def params(self) -> dict:
        return {
            **self.localizer.params,
            "epsilon": self.epsilon,
            "epsilon_em": self.epsilon_em,
            "points": self.points,
            "net_gamma": self.net_gamma,
            "score_sensitivity": self.score_sensitivity,
            "sampler": self.sampler,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return lowy_claim(self.epsilon, "Prop F.5 / Thm F.6 (Algorithm 7)")

    @property
    def epsilon_bound(self) -> float:
        """A proved bound on this mechanism's ε, below the claim: ``ε/2 + ε_em/2`` (5ε/8 with the
        spec's split ε_em = ε/4).

        Stage 1 is the Laplace mechanism at ε/2 (loss ≤ ε/2).  Given the released w̃ (so K and the
        grid are the same on both datasets), stage 2 is an EM with ``Ψ_D = c·s_D``, ``c =
        ε_em/(2Δ_s)``.  For neighbours D, D' the centred scores differ by ``u(w) = (φ(w) −
        φ(w_a))/n`` with ``φ = f_C^K(·, z') − f_C^K(·, z)`` (the λ term cancels), 2C-Lipschitz
        since each extension is C-Lipschitz (Lemma F.1).  The loss at w is ``−c·u(w) − log
        E_D[e^{−c·u}]``, and ``log E_D[e^{−c·u}] ∈ [−c·max u, −c·min u]``, so it is at most ``c
        (max_K u − min_K u) ≤ c·2C·diam(K)/n ≤ c·4Cr/n = c·Δ_s = ε_em/2``: Lemma F.1's Δ_s bounds
        the spread of u, and the EM's factor 2 (ε_em/(2Δ_s)) is needed only for a score that moves
        by ±Δ_s, which a centred score cannot.  Adaptive composition: ``ε/2 + ε_em/2``.  Holds for
        both samplers (the grid is data-independent given w̃; the rejection draw is exact)."""
        return self.epsilon / 2.0 + self.epsilon_em / 2.0

    @property
    def _wbar(self) -> np.ndarray:
        loc = self.localizer
        return (
            loc.domain.center
            if loc.center is None
            else np.broadcast_to(np.asarray(loc.center, float), (loc.d,))
        )

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> HeavyTailedRun:
        """``theta (trials, d)`` in K; transcript ``w_tilde (trials, d)`` (the stage-1 release)."""
        w_tilde, _, evals, _ = self.localizer.localize(data, rng, trials)
        w_out, stage2 = self.stage2(data, rng, w_tilde)
        extra = {"w_tilde": w_tilde} if transcript else {}
        return HeavyTailedRun(theta=w_out, gradient_evaluations=evals + stage2, transcript=extra)

    def stage2(
        self, data: UserDataset, rng: np.random.Generator, w_tilde: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Stage 2 given the stage-1 release ``w_tilde (T, d)`` (each row in 𝒲): ``(w (T, d) in
        K_t, evals)``."""
        if self.localizer.d == 1:
            return self._stage2_1d(data, rng, w_tilde)
        return self._stage2(data, rng, w_tilde)

    def _potential_1d(self, data: UserDataset, w_tilde: np.ndarray):
        """d = 1: ``(lo (T,), hi (T,), psi, slopes)``: K_t = [lo_t, hi_t] and the potential
        ``psi(w (T', B), rows) -> (T', B)`` of the exact clipped-slope score."""
        loc = self.localizer
        lo = np.maximum(loc.domain.center[0] - loc.domain.radius, w_tilde[:, 0] - loc.radius)
        hi = np.minimum(loc.domain.center[0] + loc.domain.radius, w_tilde[:, 0] + loc.radius)
        slopes = ClippedSlopes1D.from_data(data, loc.loss, loc.clip)
        wbar = float(self._wbar[0])
        anchor = w_tilde[:, :1]

        def psi(w, rows=slice(None)):
            """Ψ = ε_em·s/(2Δ_s), s the centred score F̂^K_{C,λ}(w) − F̂^K_{C,λ}(w_a) (exact in
            1-d)."""
            a = anchor[rows]
            score = (
                slopes.objective(w)
                - slopes.objective(a)
                + 0.5 * loc.lam * ((w - wbar) ** 2 - (a - wbar) ** 2)
            )
            return self.epsilon_em * score / (2.0 * self.score_sensitivity)

        return lo, hi, psi, slopes

    def _grid_1d(self, lo: np.ndarray, hi: np.ndarray, points: int) -> np.ndarray:
        """``points`` equispaced points of every K_t = [lo_t, hi_t]: ``(T, points)``."""
        return lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, points)

    def grid_log_probabilities(
        self, data: UserDataset, w_tilde: np.ndarray, *, points: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """d = 1: the exact stage-2 law of the grid sampler given the stage-1 releases ``w_tilde
        (T, 1)``: the grid ``(T, P)`` and ``log P(w | w̃)`` ``(T, P)`` (``P = points``, default
        :attr:`points`; with a large P, a quadrature of the continuous EM of
        ``sampler="rejection"``: the grid's probability ratios are its density ratios)."""
        if self.localizer.d != 1:
            raise InputError("grid_log_probabilities is the d = 1 grid law; use d = 1")
        lo, hi, psi, _ = self._potential_1d(data, w_tilde)
        grid = self._grid_1d(lo, hi, self.points if points is None else points)
        return grid, _row_blocks(grid, lambda w, rows: _log_normalised(-psi(w, rows)))

    def _stage2_1d(self, data: UserDataset, rng: np.random.Generator, w_tilde: np.ndarray):
        """d = 1: exact clipped-slope score; the rejection bound is the exact minimum (clipped
        root, PV-1)."""
        loc = self.localizer
        lo, hi, psi, slopes = self._potential_1d(data, w_tilde)
        wbar = float(self._wbar[0])
        if self.sampler == "rejection":
            w_min = np.clip(slopes.root(np.full(lo.shape, wbar), loc.lam), lo, hi)
            psi_min = psi(w_min[:, None])[:, 0] - 1e-12
            w_out = gibbs_rejection_1d(psi, lo=lo, hi=hi, psi_min=psi_min, rng=rng)[:, None]
        else:
            grid = self._grid_1d(lo, hi, self.points)
            logits = _row_blocks(grid, lambda w, rows: -psi(w, rows))
            pick = np.argmax(logits + rng.gumbel(size=grid.shape), axis=1)
            w_out = grid[np.arange(grid.shape[0]), pick][:, None]
        return w_out, float(slopes.n)

    def potential(self, data: UserDataset, w_tilde: np.ndarray):
        """d ≥ 2: ``Ψ_t(w) = ε_em·(P(w) − P(w̃_t))/(2Δ_s)``, P the PV-2 objective (class
        docstring), as a function
        ``psi(w (T', B, d), rows=slice(None)) -> (T', B)`` of the trials ``rows`` of ``w_tilde (T,
        d)``."""
        loc = self.localizer
        x, y = item_arrays(data, loc.d)
        terms = PolyhedralTerms.from_loss(loc.loss, x, y, clip=loc.clip)
        a, e, lo, hi, c = terms.a, terms.e, terms.lo, terms.hi, terms.weights
        n = a.shape[0]
        wbar = self._wbar
        scale = self.epsilon_em / (2.0 * self.score_sensitivity)

        def objective(w):
            """``(1/n)Σ c_i max(lo_i u_i, hi_i u_i) + (λ/2)‖w − w̄‖²``, ``u_i = ⟨a_i, w⟩ + e_i``, at
            ``w (T', B, d)`` → ``(T', B)``, in row blocks of ≤ _CACHE_BLOCK evaluations."""
            flat = w.reshape(-1, w.shape[-1])
            step = max(1, _CACHE_BLOCK // n)
            out = np.empty(flat.shape[0])
            upper = np.empty((min(step, flat.shape[0]), n))
            for i in range(0, flat.shape[0], step):
                u = flat[i : i + step] @ a.T
                u += e
                v = upper[: u.shape[0]]
                np.multiply(u, hi, out=v)
                u *= lo
                out[i : i + step] = np.maximum(u, v, out=u) @ c / n
            return out.reshape(w.shape[:-1]) + 0.5 * loc.lam * np.sum((w - wbar) ** 2, axis=-1)

        anchor_value = objective(w_tilde[:, None, :])[:, 0]

        def psi(w, rows=slice(None)):
            """Ψ = ε_em·(P(w) − P(w_a))/(2Δ_s) at ``w (T', B, d)`` for the trials ``rows``."""
            return scale * (objective(w) - anchor_value[rows, None])

        return psi

    def potential_lower_bound(
        self, data: UserDataset, w_tilde: np.ndarray, psi=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Certified ``m_t ≤ min_{K_t} Ψ_t`` (d ≥ 2) and PV-2 iterations ``(T,)``, ``(T,)``.

        m_t is the PV-2 dual value ``D = P(p) − gap ≤ min_K P`` (weak duality; the inexact
        projection's slack is already subtracted inside D), lowered by a 1e-9 relative round-off
        margin — a lower bound, never the primal value, so rejection sampling stays exact.  The gap
        is certified to ≤ LOWER_BOUND_SLACK in Ψ units.
        """
        loc = self.localizer
        psi = self.potential(data, w_tilde) if psi is None else psi
        x, y = item_arrays(data, loc.d)
        scale = self.epsilon_em / (2.0 * self.score_sensitivity)
        res = pv2_minimize(
            PolyhedralTerms.from_loss(loc.loss, x, y, clip=loc.clip),
            lam=loc.lam,
            center=np.broadcast_to(self._wbar, w_tilde.shape).copy(),
            domain=loc.domain,
            local=w_tilde,
            r=loc.radius,
            target_gap=LOWER_BOUND_SLACK / scale,
            max_iterations=loc.max_iterations,
        )
        at_point = psi(res.point[:, None, :])[:, 0]
        return at_point - scale * res.gap - 1e-9 * (1.0 + np.abs(at_point)), res.iterations

    def _stage2(self, data: UserDataset, rng: np.random.Generator, w_tilde: np.ndarray):
        """d ≥ 2: PV-2 score on the γ-net of K (grid) or exact rejection draws on K; ``(w (T, d),
        evals (T,))``."""
        loc = self.localizer
        n = data.n
        psi = self.potential(data, w_tilde)
        trials = w_tilde.shape[0]
        if self.sampler == "grid":
            offsets = net(Ball.centered(loc.d, loc.radius), self.net_gamma)
            out = np.empty_like(w_tilde)
            block = max(1, _EVAL_BLOCK // (n * offsets.shape[0]))
            for i in range(0, trials, block):
                grid = loc.domain.project(w_tilde[i : i + block, None, :] + offsets)
                pick = np.argmax(
                    -psi(grid, slice(i, i + block)) + rng.gumbel(size=grid.shape[:2]), axis=1
                )
                out[i : i + block] = grid[np.arange(grid.shape[0]), pick]
            return out, np.full(trials, float(n * offsets.shape[0]))
        psi_min, iterations = self.potential_lower_bound(data, w_tilde, psi)
        center, radius = loc.domain.center, loc.domain.radius

        def sample_uniform(rows, size, gen):
            """Uniform on B(w̃_t, r); flags the proposals inside 𝒲 (so accepted points are uniform
            on K_t)."""
            w = w_tilde[rows, None, :] + uniform_ball(
                gen, shape=(rows.size, size), d=loc.d, radius=loc.radius
            )
            return w, np.linalg.norm(w - center, axis=-1) <= radius

        w_out, rounds = gibbs_rejection(psi, sample_uniform, psi_min, rng, batch=REJECTION_BATCH)
        return w_out, n * (iterations + REJECTION_BATCH * rounds.astype(float))

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        res = self.run(data, rng, trials, transcript=self.output == "joint")
        return (
            np.hstack([res.transcript["w_tilde"], res.theta])
            if self.output == "joint"
            else res.theta
        )
