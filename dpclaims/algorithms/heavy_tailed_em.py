"""Exponential-mechanism algorithms of spec 003 (Lowy 2026): EM-PGM over a net and the localized EM.

* :class:`EMPGM` — Algorithm 5 (App. E.1, Thm E.1) and its ball-smoothed variant (App. E.2, Thm E.5):
  a finite exponential mechanism on a data-independent net of 𝒲 (d ≤ 3) whose score is the norm of
  the clipped projected-gradient map, sensitivity ``2C/n`` [H; parameters M].
* :class:`LocalizedGridEM` — Algorithm 7 (App. F) in the exactly-private grid form PV-3 (spec §2.9):
  Laplace localization at ε/2, then a finite EM at ε/4 on a grid of ``K = 𝒲 ∩ B(w̃, r)`` with the
  centred extension score of sensitivity ``Δ_s = 4Cr/n`` (Lemma F.1) [budget split L]; with
  ``sampler="rejection"`` the stage-2 output is instead an EXACT draw from the continuous log-concave
  Gibbs density ``∝ exp(−Ψ)`` on K (:func:`gibbs_rejection_1d`), i.e. the ideal EM of Algorithm 7.

Both are pure ε-DP (δ = 0), replace-one, item level.  Sampling is batched over trials
(inverse-CDF on the fixed net, Gumbel-max on the per-trial grids).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import UserDataset
from ..errors import InputError, MechanismError, check_choice, check_epsilon
from ..losses import AbsoluteLoss
from ..privacy import PrivacyClaim
from .heavy_tailed import (
    Ball, ClippedSlopes1D, HeavyTailedRun, OutPertLocalize, WorstValidPoint, _beta, _count, _item_arrays, _positive,
    clip_level,
)

__all__ = ["EMPGM", "LocalizedGridEM", "net", "net_size_bound", "MAX_NET_POINTS", "REJECTION_MAX_ROUNDS",
           "gibbs_rejection_1d"]

REJECTION_MAX_ROUNDS = 20_000
"""Round cap of :func:`gibbs_rejection_1d`; reaching it raises (never an approximate sample)."""


def gibbs_rejection_1d(psi, lo: np.ndarray, hi: np.ndarray, psi_min: np.ndarray, rng: np.random.Generator,
                       batch: int = 32, max_rounds: int = REJECTION_MAX_ROUNDS) -> np.ndarray:
    """Exact draws from ``π_t(w) ∝ exp(−Ψ_t(w))`` on ``[lo_t, hi_t]`` by rejection from the uniform law.

    Accept a uniform proposal w with probability ``exp(−(Ψ_t(w) − m_t))``, where ``m_t = psi_min_t ≤
    min Ψ_t``; every accepted point is an exact sample of π_t (standard rejection sampling), so
    Lemma F.4's sampler slack is ξ = 0.  Batched: each round draws ``batch`` proposals for every trial
    still waiting.  Expected rounds ``≈ (hi − lo)/(batch ∫e^{−(Ψ−m)})``, i.e. exponential in d for the
    d-dimensional analogue — the reason [LL25]'s polynomial-time inexact sampler exists.

    Parameters
    ----------
    psi : ``Ψ(w (T', B), rows (T',)) -> (T', B)`` on the trials ``rows``; lo, hi, psi_min : (T,)

    Returns
    -------
    (T,) samples.
    """
    out = np.full(lo.shape, np.nan)
    waiting = np.arange(lo.size)
    for _ in range(_count(max_rounds, "max_rounds")):
        if waiting.size == 0:
            return out
        w = lo[waiting, None] + (hi - lo)[waiting, None] * rng.random((waiting.size, batch))
        accept = rng.random(w.shape) < np.exp(-(psi(w, waiting) - psi_min[waiting, None]))
        hit = accept.any(axis=1)
        first = np.argmax(accept, axis=1)
        out[waiting[hit]] = w[hit, first[hit]]
        waiting = waiting[~hit]
    if waiting.size:
        raise MechanismError(f"gibbs_rejection_1d hit max_rounds={max_rounds} with {waiting.size} trial(s) still "
                             "unsampled; raise max_rounds or batch (an approximate sample would break exact DP)")
    return out

MAX_NET_POINTS = 200_000
"""Largest net :class:`EMPGM` builds (the net is exponential in d, Remark E.3)."""


def net_size_bound(diameter: float, gamma: float, d: int) -> float:
    """``|N_γ| ≤ (3D/γ)^d`` (Remark E.3) [H]."""
    return (3.0 * _positive(diameter, "diameter") / _positive(gamma, "gamma")) ** _count(d, "d")


def net(domain: Ball, gamma: float) -> np.ndarray:
    """A γ-net of the ball 𝒲: Π_𝒲 of the cubic grid of spacing ``2γ/√d`` covering it (Alg 5 line 1) → ``(N, d)``."""
    gamma, d = _positive(gamma, "gamma"), domain.d
    spacing = 2.0 * gamma / math.sqrt(d)
    per_axis = int(math.floor(domain.diameter / spacing)) + 1
    if per_axis**d > MAX_NET_POINTS:
        raise InputError(f"the γ-net has {per_axis}^{d} points (> {MAX_NET_POINTS}); raise gamma or lower d "
                         "(EM-PGM is exponential in d, Remark E.3)")
    axis = np.linspace(-domain.radius, domain.radius, per_axis)
    grid = np.stack(np.meshgrid(*([axis] * d), indexing="ij"), axis=-1).reshape(-1, d) + domain.center
    return np.unique(domain.project(grid), axis=0)


@dataclass(frozen=True)
class EMPGM:
    """Algorithm 5, EM-PGM, with the App. E.2 ball smoothing for the absolute loss in d = 1.

    Score ``s(w) = ‖G^C_η(w)‖``, ``G^C_η(w) = (w − Π_𝒲(w − η(ĝ_C(w) + λ(w − w̄))))/η``, where ``ĝ_C`` is
    the mean of per-record gradients clipped to norm C.  Output ``w ∈ N_γ`` w.p. ∝
    ``exp(−ε s(w)/(2Δ_s))``, ``Δ_s = 2C/n`` (projection is non-expansive; the 1/η cancels η) [H].
    ``η = 1/(H + λ)`` is public [M]; with smoothing ``ρ`` the smoothness is ``H̄ = d G_k/(ρβ)`` (eq. 29).
    ``sensitivity_factor`` is 2 (replace-one); 1 is the off-by-2 mutant (spec §3 bug 7).
    """

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
    sensitivity_factor: float = 2.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.d > 3:
            raise InputError(f"EM-PGM builds an explicit net; d must be <= 3, got {self.d}")
        if self.smoothing is not None and not (isinstance(self.loss, AbsoluteLoss) and self.d == 1):
            raise InputError("ball smoothing (App. E.2) is implemented in closed form for AbsoluteLoss in d = 1")
        if self.smoothing is None and not getattr(self.loss, "glm", False):
            raise InputError("EM-PGM needs a smooth GLM loss (or smoothing=rho with AbsoluteLoss in d = 1)")

    @classmethod
    def from_theorem(cls, n: int, d: int, epsilon: float, moment_k: float, k: float, lam: float, beta: float,
                     domain: Ball, loss: Any, smoothness: float | None = None, smoothing: float | None = None,
                     center=None, max_points: int | None = None, sensitivity_factor: float = 2.0) -> "EMPGM":
        """Thm E.1 / E.5 parameters: ``γ = C/((H+λ)εn)``, ``Λ = 3D(H+λ)εn/C̄``,
        ``C = G_k(εn/(β(d ln Λ + ln 1/β)))^{1/k}`` with the public upper value ``C̄ = G_k(εn/β)^{1/k}`` in Λ [M].

        Give ``smoothness`` H for a smooth loss (Alg 5) or ``smoothing`` ρ (App. E.2, ``H̄ = d G_k/(ρβ)``;
        the spec suggests ρ ≈ D/n).  ``max_points`` coarsens the net (still data-independent; costs utility).
        """
        n, d, epsilon, lam, beta = _count(n, "n"), _count(d, "d"), check_epsilon(epsilon), _positive(lam, "lam"), _beta(beta)
        if (smoothness is None) == (smoothing is None):
            raise InputError("pass exactly one of smoothness (H, Alg 5) or smoothing (rho, App. E.2)")
        h = _positive(smoothness, "smoothness") if smoothing is None else d * moment_k / (_positive(smoothing, "smoothing") * beta)
        c_up = moment_k * (epsilon * n / beta) ** (1 / k)
        big_lambda = max(3.0 * domain.diameter * (h + lam) * epsilon * n / c_up, math.e)
        clip = moment_k * (epsilon * n / (beta * (d * math.log(big_lambda) + math.log(1 / beta)))) ** (1 / k)
        gamma = clip / ((h + lam) * epsilon * n)
        if max_points is not None:
            gamma = max(gamma, domain.diameter * math.sqrt(d) / (2.0 * max(_count(max_points, "max_points") ** (1 / d) - 1, 1)))
        c = domain.center if center is None else np.asarray(center, dtype=float)
        return cls(n, d, epsilon, lam, clip, 1.0 / (h + lam), gamma, smoothing, domain, loss, net(domain, gamma), c,
                   sensitivity_factor)

    @property
    def sensitivity(self) -> float:
        """``Δ_s = 2C/n`` (``sensitivity_factor·C/n``)."""
        return self.sensitivity_factor * self.clip / self.n

    @property
    def params(self) -> dict:
        return {"n": self.n, "d": self.d, "epsilon": self.epsilon, "lam": self.lam, "clip": self.clip, "eta": self.eta,
                "gamma": self.gamma, "smoothing": self.smoothing, "net_points": int(self.grid.shape[0]),
                "net_size_bound": net_size_bound(self.domain.diameter, self.gamma, self.d),
                "score_sensitivity": self.sensitivity, "domain": self.domain.to_dict(), "loss": type(self.loss).__name__}

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, "item", "replace", "Lowy 2026, Thm E.1 / E.5 (Algorithm 5)")

    def _gradients(self, data: UserDataset) -> np.ndarray:
        """Per-record gradients at every net point ``(N, n, d)`` (smoothed in closed form with ρ)."""
        x, y = _item_arrays(data, self.d)
        if self.smoothing is not None:
            xs = x[:, 0]
            g = np.abs(xs) * np.clip((self.grid @ x.T - y) / (xs * self.smoothing), -1.0, 1.0)
            return g[..., None]
        return self.loss.grad(self.grid, x, y)

    def scores(self, data: UserDataset) -> np.ndarray:
        """``s(w) = ‖G^C_η(w)‖`` on the net ``(N,)``."""
        g = self._gradients(data)
        norms = np.linalg.norm(g, axis=-1, keepdims=True)
        g_clip = (g * np.minimum(1.0, self.clip / np.maximum(norms, np.finfo(float).tiny))).mean(axis=1)
        step = self.grid - self.eta * (g_clip + self.lam * (self.grid - self.center))
        return np.linalg.norm(self.grid - self.domain.project(step), axis=-1) / self.eta

    def run(self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False) -> HeavyTailedRun:
        """Sample ``trials`` net points ``(trials, d)``; transcript ``scores (N,)``."""
        trials = _count(trials, "trials")
        s = self.scores(data)
        logits = -self.epsilon * s / (2.0 * self.sensitivity)
        p = np.exp(logits - logits.max())
        cdf = np.cumsum(p / p.sum())
        idx = np.minimum(np.searchsorted(cdf, rng.random(trials), side="right"), len(cdf) - 1)
        evals = np.full(trials, float(self.grid.shape[0] * data.n))
        return HeavyTailedRun(self.grid[idx], evals, {"scores": s} if transcript else {})

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True)
class LocalizedGridEM:
    """Algorithm 7 (LocalizedApproxEM) in the exact grid form PV-3, d = 1 [budget split L].

    (1) ``(w̃, r)`` ← Algorithm 2 at ε/2, β (C, τ, Δ as in Algorithm 4); ``K = 𝒲 ∩ [w̃ − r, w̃ + r]``;
    (2) anchor ``w_a = w̃``; centred score ``s(w) = F̂^K_{C,λ}(w) − F̂^K_{C,λ}(w_a)`` (exact in 1-d: the
    per-record constants cancel), ``Δ_s = 4Cr/n ≥ 2C·diam(K)/n`` (Lemma F.1);
    (3) output a point of a ``points``-grid of K w.p. ∝ ``exp(−ε s/(8Δ_s))`` (EM at ε/4).
    Exact sampling: total ε/2 + ε/4 ≤ ε (the spec's ξ = ε/8 sampler slack is unused).
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
        if self.localizer.d != 1 or self.localizer.solver != "exact-1d":
            raise InputError("LocalizedGridEM is the d = 1 grid variant (PV-3); build it with solver='exact-1d'")

    @classmethod
    def from_theorem(cls, n: int, epsilon: float, moment_k: float, k: float, lam: float, beta: float, domain: Ball,
                     loss: Any, points: int = 64, harness: WorstValidPoint | None = None,
                     output: str = "joint", sampler: str = "grid") -> "LocalizedGridEM":
        """C of Algorithm 4, stage 1 at ε/2, EM at ε/4 (the spec's split); ``sampler`` = "grid" (PV-3) or
        "rejection" (exact continuous Gibbs draw on K, :func:`gibbs_rejection_1d`)."""
        epsilon = check_epsilon(epsilon)
        clip = clip_level(n, 1, epsilon, moment_k, k, beta)
        loc = OutPertLocalize.from_theorem(n, 1, epsilon / 2.0, lam, clip, beta, domain, loss, harness=harness)
        return cls(loc, epsilon, epsilon / 4.0, _count(points, "points", 2), output, sampler)

    @property
    def score_sensitivity(self) -> float:
        """``Δ_s = 4 C r / n`` (Lemma F.1, data-independent value)."""
        return 4.0 * self.localizer.clip * self.localizer.radius / self.localizer.n

    @property
    def params(self) -> dict:
        return {**self.localizer.params, "epsilon": self.epsilon, "epsilon_em": self.epsilon_em, "points": self.points,
                "score_sensitivity": self.score_sensitivity, "sampler": self.sampler}

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, "item", "replace", "Lowy 2026, Prop F.5 / Thm F.6 (Algorithm 7)")

    def run(self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False) -> HeavyTailedRun:
        loc = self.localizer
        w_tilde, _, evals, _ = loc.localize(data, rng, trials)
        lo = np.maximum(loc.domain.center[0] - loc.domain.radius, w_tilde[:, 0] - loc.radius)
        hi = np.minimum(loc.domain.center[0] + loc.domain.radius, w_tilde[:, 0] + loc.radius)
        slopes = ClippedSlopes1D.from_data(data, loc.loss, loc.clip)
        wbar = loc.domain.center[0] if loc.center is None else float(np.ravel(loc.center)[0])
        anchor = w_tilde[:, :1]

        def psi(w, rows=slice(None)):
            """Ψ = ε_em·s/(2Δ_s), s the centred score F̂^K_{C,λ}(w) − F̂^K_{C,λ}(w_a) (exact in 1-d)."""
            a = anchor[rows]
            score = slopes.objective(w) - slopes.objective(a) + 0.5 * loc.lam * ((w - wbar) ** 2 - (a - wbar) ** 2)
            return self.epsilon_em * score / (2.0 * self.score_sensitivity)

        if self.sampler == "rejection":
            # the exact minimizer of the convex Ψ over K is the clipped root (PV-1), so m_t = min Ψ_t exactly
            w_min = np.clip(slopes.root(np.full(lo.shape, wbar), loc.lam), lo, hi)
            w_out = gibbs_rejection_1d(psi, lo, hi, psi(w_min[:, None])[:, 0] - 1e-12, rng)[:, None]
        else:
            grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, self.points)
            pick = np.argmax(-psi(grid) + rng.gumbel(size=grid.shape), axis=1)
            w_out = grid[np.arange(grid.shape[0]), pick][:, None]
        return HeavyTailedRun(w_out, evals + slopes.n, {"w_tilde": w_tilde} if transcript else {})

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        res = self.run(data, rng, trials, transcript=self.output == "joint")
        return np.hstack([res.transcript["w_tilde"], res.theta]) if self.output == "joint" else res.theta
