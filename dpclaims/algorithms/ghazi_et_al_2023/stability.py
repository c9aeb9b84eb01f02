"""Subroutines of Ghazi et al. (ICML 2023), spec ``001_ghazi_et_al_user_level_convex.md``.

Spec §2.0–§2.3 and §2.8.

In the order the paper uses them:

* :func:`kappa_fn`, :func:`inner_privacy_params`, :class:`TDLap` — Definition 3.4 and
  Algorithm 1 line 3 (the shifted truncated discrete Laplace radius ``R1``);
* :func:`exact_minimiser` (:class:`QuadraticMinimiser`, :class:`LinearMinimiser`,
  :class:`L1Minimiser`) and :class:`Domain` — the exact, deterministic constrained minimisers
  ``θ*_{ℓ,K}`` of spec §2.8 (closed forms) for the losses of :mod:`dpclaims.losses`;
* :func:`stability_profile` — the exhaustive stability test of Algorithm 1, lines 4–6, on
  type-compressed sub-datasets (spec §2.1 "Type compression" and "Equivalent, efficient form").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.data import GroupedMeans
from dpclaims.errors import InputError, MechanismError, check_delta, check_epsilon
from dpclaims.losses import L1DistanceLoss, LinearLoss, SquaredDistanceLoss, project_l2_ball

__all__ = [
    "MAX_STATES",
    "kappa_fn",
    "inner_privacy_params",
    "TDLap",
    "Domain",
    "ExactMinimiser",
    "exact_minimiser",
    "QuadraticMinimiser",
    "LinearMinimiser",
    "L1Minimiser",
    "StabilityProfile",
    "stability_profile",
]

MAX_STATES = 2**20
"""Largest number of type-compressed sub-datasets the exhaustive test enumerates (memory bound)."""

BISECTION_STEPS = 200
"""Fixed bisection steps of :class:`L1Minimiser` (deterministic; reaches float resolution)."""

_CACHE_BLOCK = 8192
"""Centres × sub-datasets × point masses that :class:`L1Minimiser` bisects at once (its arrays
stay in cache: ~1.6x faster on 200,000 centres; every centre's steps are the same at any block)."""


# --------------------------------------------------------------------------- Definition 3.4


def kappa_fn(epsilon: float, delta: float) -> int:
    """``κ = 1 + ⌈ln(1/δ)/ε⌉`` (Definition 3.4; the integer rounding is [RECON], spec §8.2)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise InputError("delta must be > 0 for TDLap; pass e.g. delta=1e-5")
    return 1 + math.ceil(math.log(1.0 / delta) / epsilon)


def inner_privacy_params(epsilon: float, delta: float) -> tuple[float, float, int]:
    """``(ε1, δ1, κ) = (ε/2, δ/(e^ε + 2), κ(ε1, δ1))``: Algorithm 1 line 3 [RECON].

    Spec §2.0, §8.1.

    The proof of Thm 3.3 ends with ``(e^{ε1} + 2)δ1 ≤ δ`` and ``e^{2ε1} = e^ε``.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise InputError(
            "delta must be > 0 (DelOutputPert is approximate DP only); pass e.g. delta=1e-5"
        )
    eps1 = epsilon / 2.0
    delta1 = delta / (math.exp(epsilon) + 2.0)
    return eps1, delta1, kappa_fn(eps1, delta1)


@dataclass(frozen=True)
class TDLap:
    """Shifted truncated discrete Laplace ``TDLap(ε1, δ1)`` on ``{0, …, 2κ}`` (Definition 3.4).

    ``P[r] = exp(−ε1|r − κ|)/Z``.  The proof of Thm 3.3 needs ``P[0] = P[2κ] ≤ δ1`` and
    neighbouring-value ratios ``≤ e^{ε1}`` (checked by :meth:`properties`).
    """

    epsilon: float
    delta: float
    kappa: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kappa", kappa_fn(self.epsilon, self.delta))

    @property
    def pmf(self) -> np.ndarray:
        """``P[r]`` for ``r = 0..2κ``, shape (2κ+1,)."""
        r = np.arange(2 * self.kappa + 1)
        w = np.exp(-self.epsilon * np.abs(r - self.kappa))
        return w / w.sum()

    def cdf(self, r) -> np.ndarray:
        """``Pr[R1 ≤ r]`` (vectorised; 0 below the support, 1 above)."""
        cum = np.concatenate([[0.0], np.cumsum(self.pmf)])
        idx = np.clip(np.asarray(r, dtype=np.int64) + 1, 0, 2 * self.kappa + 1)
        return np.minimum(cum[idx], 1.0)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` i.i.d. draws (int64)."""
        return rng.choice(2 * self.kappa + 1, size=size, p=self.pmf)

    def properties(self) -> dict:
        """The three facts the proof uses: endpoint mass and the two adjacent ratios."""
        p = self.pmf
        return {
            "endpoint_mass": float(p[0]),
            "endpoint_bound": self.delta,
            "max_log_ratio": float(np.max(np.abs(np.diff(np.log(p))))),
            "ratio_bound": self.epsilon,
        }


# ------------------------------------------------------------------------- exact minimisers (§2.8)


@dataclass(frozen=True)
class Domain:
    """``K = B(0, radius)``, optionally ∩ per-trial balls ``B(centre_b, local_radius_b)``.

    ``centre (B, d)`` must lie in K (then the intersection is non-empty).  :meth:`project` is
    the exact Euclidean projection (closed form for two balls).
    """

    radius: float
    centre: np.ndarray | None = None
    local_radius: np.ndarray | None = None

    def project(self, y: np.ndarray) -> np.ndarray:
        """Project ``y (B, ..., d)`` (B = 1 or the number of local balls) onto the domain."""
        p1 = project_l2_ball(y, self.radius)
        if self.centre is None:
            return p1
        extra = (1,) * (y.ndim - 2)
        c = self.centre.reshape((self.centre.shape[0],) + extra + (self.centre.shape[1],))
        r = np.asarray(self.local_radius, dtype=np.float64).reshape((-1,) + extra + (1,))
        p2 = project_l2_ball(y, r, c)
        ok1 = np.linalg.norm(p1 - c, axis=-1, keepdims=True) <= r * (1 + 1e-12)
        ok2 = np.linalg.norm(p2, axis=-1, keepdims=True) <= self.radius * (1 + 1e-12)
        dist = np.linalg.norm(c, axis=-1, keepdims=True)
        safe = np.where(dist > 0, dist, 1.0)
        u = c / safe
        t = (dist**2 + self.radius**2 - r**2) / (2 * safe)
        rho = np.sqrt(np.maximum(self.radius**2 - t**2, 0.0))
        w = y - np.sum(y * u, axis=-1, keepdims=True) * u
        wn = np.linalg.norm(w, axis=-1, keepdims=True)
        w = np.where(wn > 0, w / np.where(wn > 0, wn, 1.0), _orthogonal(u))
        circle = t * u + rho * w
        return np.where(ok1, p1, np.where(ok2, p2, circle))


def _orthogonal(u: np.ndarray) -> np.ndarray:
    """A unit vector orthogonal to each ``u`` (d ≥ 2; in d = 1 the circle is a point, w unused)."""
    e = np.zeros_like(u)
    e[..., 0] = 1.0
    alt = np.zeros_like(u)
    alt[..., -1] = 1.0
    e = np.where(np.abs(u[..., :1]) < 0.9, e, alt)
    w = e - np.sum(e * u, axis=-1, keepdims=True) * u
    n = np.linalg.norm(w, axis=-1, keepdims=True)
    return w / np.where(n > 0, n, 1.0)


class _MeanMinimiser:
    """Exact minimiser of a loss whose regularised empirical risk depends on the item mean only."""

    strong_convexity = 0.0

    def minimiser(
        self, values: np.ndarray, weights: np.ndarray, *, reg: float, centre, domain: Domain
    ) -> np.ndarray:
        """``argmin_{θ∈domain} (1/W)Σ_k w_k ℓ(θ; z_k) + (reg/2)‖θ − c‖²``.

        ``values (t, d)``, ``weights (N, t)`` (item counts per state, rows with total 0 give NaN),
        ``centre (B, d)`` or None → ``(B, N, d)``.
        """
        weights = np.asarray(weights, dtype=np.float64)
        total = weights.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (weights @ values) / total
        c = np.zeros((1, values.shape[1])) if centre is None else centre
        return domain.project(self._unconstrained(mean[None, :, :], reg, c[:, None, :]))

    def user_deviation(self, data: GroupedMeans) -> float:
        """``γ(x) = max_u ‖g_u − ḡ‖`` at any θ (Appendix C; the regulariser cancels)."""
        return self.gradient_scale * data.max_deviation()


@dataclass(frozen=True)
class QuadraticMinimiser(_MeanMinimiser):
    """Of ``ℓ(θ; z) = (μ/2)‖θ − z‖²`` (:class:`~dpclaims.losses.SquaredDistanceLoss`):
    ``Π((μ z̄ + λ c)/(μ + λ))`` (spec §2.8)."""

    strength: float = 1.0

    @property
    def strong_convexity(self) -> float:
        return self.strength

    @property
    def gradient_scale(self) -> float:
        return self.strength

    def _unconstrained(self, mean, reg, c):
        return (self.strength * mean + reg * c) / (self.strength + reg)


@dataclass(frozen=True)
class LinearMinimiser(_MeanMinimiser):
    """Of ``ℓ(θ; z) = −s⟨θ, z⟩`` (:class:`~dpclaims.losses.LinearLoss`): ``Π(c + s z̄/λ)``
    (spec §2.8), λ > 0."""

    scale: float = 1.0

    @property
    def gradient_scale(self) -> float:
        return self.scale

    def _unconstrained(self, mean, reg, c):
        if reg <= 0:
            raise InputError("the linear loss needs a regulariser reg > 0 for a unique minimiser")
        return c + self.scale * mean / reg


@dataclass(frozen=True)
class L1Minimiser:
    """Of ``ℓ(θ; z) = G|θ − z|`` in d = 1 (:class:`~dpclaims.losses.L1DistanceLoss`, spec §7(b)
    RT-8), items given as point-mass groups.

    The regularised minimiser solves ``G(W_<(θ) − W_>(θ))/W + λ(θ − c) ∋ 0`` (a weighted
    soft-threshold / median); found by a fixed number of bisection steps (deterministic).
    The Appendix-C certificate needs a subgradient selection, so only the exhaustive
    test (or oracle mode) applies.
    """

    scale: float = 1.0
    strong_convexity = 0.0

    def minimiser(self, values, weights, *, reg, centre, domain: Domain) -> np.ndarray:
        """As :meth:`_MeanMinimiser.minimiser`, with ``values`` the point masses (t, 1)."""
        if values.shape[1] != 1:
            raise InputError("the l1 loss's exact minimiser is implemented for d = 1")
        if reg <= 0:
            raise InputError("the l1 loss needs a regulariser reg > 0 for a unique minimiser")
        z = values[:, 0]
        w = weights.astype(np.float64)
        total = w.sum(axis=1)
        c = np.zeros((1, 1)) if centre is None else centre
        c = c[:, None, 0]  # (B, 1)
        step = self.scale / reg
        lo = np.broadcast_to(np.minimum(c - step, z.min()), (c.shape[0], w.shape[0])).copy()
        hi = np.broadcast_to(np.maximum(c + step, z.max()), (c.shape[0], w.shape[0])).copy()
        rows = max(1, _CACHE_BLOCK // max(1, w.size))
        theta = np.concatenate(
            [
                self._bisect(z, w, total, c[i : i + rows], lo[i : i + rows], hi[i : i + rows], reg)
                for i in range(0, c.shape[0], rows)
            ]
        )
        theta = np.where(total[None, :] > 0, theta, np.nan)
        return domain.project(theta[..., None])

    def _bisect(self, z, w, total, c, lo, hi, reg) -> np.ndarray:
        """:data:`BISECTION_STEPS` bisection steps on the centres ``c (B, 1)``'s brackets ``lo,
        hi (B, N)``; the midpoints ``(B, N)``."""
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            below = np.einsum(
                "nt,bnt->bn", w, (z[None, None, :] < mid[..., None]).astype(np.float64)
            )
            above = np.einsum(
                "nt,bnt->bn", w, (z[None, None, :] > mid[..., None]).astype(np.float64)
            )
            with np.errstate(invalid="ignore", divide="ignore"):
                h = self.scale * (below - above) / total + reg * (mid - c)
            lo, hi = np.where(h < 0, mid, lo), np.where(h < 0, hi, mid)
        return 0.5 * (lo + hi)

    def user_deviation(self, data: GroupedMeans) -> float:
        raise InputError(
            "the l1 loss has no gradient certificate (subgradient selection); use path='exact' "
            "or oracle mode"
        )


ExactMinimiser = QuadraticMinimiser | LinearMinimiser | L1Minimiser


def exact_minimiser(loss: Any) -> ExactMinimiser:
    """The closed-form regularised ERM solver ``θ*_{ℓ,K}`` of spec §2.8 for a
    :mod:`dpclaims.losses` loss: squared distance, linear, or ℓ1 distance in d = 1."""
    if isinstance(loss, SquaredDistanceLoss):
        return QuadraticMinimiser(loss.strength)
    if isinstance(loss, LinearLoss):
        return LinearMinimiser(loss.scale)
    if isinstance(loss, L1DistanceLoss):
        return L1Minimiser(loss.scale)
    raise InputError(
        "Ghazi et al.'s algorithms need a loss with an exact minimiser: pass "
        "dpclaims.losses.SquaredDistanceLoss, LinearLoss or L1DistanceLoss (d = 1), got "
        f"{type(loss).__name__}"
    )


# --------------------------------------------------------------------------- Algorithm 1, lines 4-6


@dataclass(frozen=True)
class StabilityProfile:
    """What the exhaustive test decides (spec §2.1 "Equivalent, efficient form").

    ``s_star (B,)``: smallest ``|S|`` with ``x_{−S}`` stable (``2κ + 1`` = none within 2κ);
    ``choice (B, d)``: ``f(x_{−S*})`` (NaN where none); ``f_evaluations``: sub-datasets evaluated.
    """

    s_star: np.ndarray
    choice: np.ndarray
    f_evaluations: int
    states: int


def stability_profile(
    values: np.ndarray,
    counts: np.ndarray,
    evaluate: Callable[[np.ndarray], np.ndarray],
    *,
    kappa: int,
    delta_target: float,
    empty_value: np.ndarray,
) -> StabilityProfile:
    """Exhaustive stability test of Algorithm 1 on type-compressed sub-datasets.

    Parameters
    ----------
    values : (t, d) distinct user types; counts : (t,) users of each type (``c``)
    evaluate : ``evaluate(states (N, t) int) -> (B, N, d)``, f on the sub-dataset with
        ``a_k`` users of type k (called only for states with at most ``4κ+1`` deletions)
    kappa : κ; delta_target : Δ; empty_value : (B, d), the data-independent ``f(∅)``

    Notes
    -----
    ``D(a) = max_k ‖f(a) − f(a − e_k)‖`` (0 for ∅).  The test at ``x_{−S}`` (``|S| = s``)
    is ``Δ_{4κ−s} f(x_{−S}) ≤ Δ``; its sub-datasets are exactly the states ``b ≤ a`` with at
    most ``4κ`` deletions in total, so it equals ``W(a) = max_{b ≤ a, level(b) ≤ 4κ} D(b)``
    — a cumulative maximum along every type axis.  Ties among stable sets of the minimal
    size are broken by the first state in C order (a fixed rule).
    """
    counts = np.asarray(counts, dtype=np.int64)
    box = tuple(int(c) + 1 for c in counts)
    size = math.prod(box)
    batch = empty_value.shape[0]
    if size > MAX_STATES or size * batch * values.shape[1] > 4e7:
        raise MechanismError(
            f"the exhaustive stability test would enumerate {size} type-compressed sub-datasets "
            f"(× {batch} functions); it is feasible only for few distinct users (spec §2.1, "
            "n^O(ln(1/δ)/ε) time) — use data with repeated users or fewer users"
        )
    states = np.indices(box, dtype=np.int32).reshape(len(box), -1).T
    level = (counts[None, :] - states).sum(axis=1)
    needed = level <= 4 * kappa + 1
    values_f = np.full((batch, size, values.shape[1]), np.nan)
    values_f[:, needed] = evaluate(states[needed])
    empty = states.sum(axis=1) == 0
    values_f[:, empty] = empty_value[:, None, :]
    grid = values_f.reshape((batch,) + box + (values.shape[1],))
    dmax = np.zeros((batch,) + box)
    for k in range(len(box)):
        upper = [slice(None)] * (len(box) + 2)
        lower = [slice(None)] * (len(box) + 2)
        upper[k + 1], lower[k + 1] = slice(1, None), slice(None, -1)
        diff = np.linalg.norm(grid[tuple(upper)] - grid[tuple(lower)], axis=-1)
        target = tuple(upper[:-1])
        dmax[target] = np.fmax(dmax[target], diff)
    level_grid = level.reshape(box)
    dmax[:, level_grid > 4 * kappa] = -np.inf
    for k in range(len(box)):
        dmax = np.maximum.accumulate(dmax, axis=k + 1)
    stable = (dmax.reshape(batch, size) <= delta_target) & (level <= 2 * kappa)[None, :]
    key = np.where(
        stable,
        level[None, :].astype(np.int64) * size + np.arange(size)[None, :],
        np.iinfo(np.int64).max,
    )
    best = np.argmin(key, axis=1)
    found = stable[np.arange(batch), best]
    s_star = np.where(found, level[best], 2 * kappa + 1)
    choice = np.where(found[:, None], values_f[np.arange(batch), best], np.nan)
    return StabilityProfile(
        s_star=s_star.astype(np.int64), choice=choice, f_evaluations=int(needed.sum()), states=size
    )
