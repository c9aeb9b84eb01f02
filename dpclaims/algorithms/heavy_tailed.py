"""Pure ε-DP SCO with heavy-tailed gradients (Lowy 2026, spec 003): localization over Lipschitz extensions.

Spec tags (kept from ``shared/papers/003_pure_dp_heavy_tailed_sco.md``): **[H]** the paper's prose or
proof fixes the formula; **[M]** the form is forced by the proof, constants or logs are the spec's;
**[L]** a plausible reading.  The paper's seven algorithm boxes were lost; this module implements the
spec's reconstructions:

* :func:`gamma_radius` — ``q(d, β)`` with ``P(Gamma(d, 1) > q) ≤ β`` (closed form ``2(d + ln 1/β)`` [M]);
* :func:`l2_laplace` — ``Lap₂(d, b)``: density ∝ ``exp(−‖ξ‖/b)``, radius ``Gamma(d, b)`` [H];
* :class:`Ball`, :func:`inexact_projection` — the domain and InexactProj (Lemma 2.8 / C.6) [H];
* :class:`ClippedSlopes1D` — the 1-d Lipschitz extension as derivative clipping (§2.0 identity,
  PV-1): exact minimizers of ``F̂_{C,λ}`` for absolute / hinge / linear losses in ``O(n log n)``;
* :func:`pv2_minimize` (``solver="pv2"``, d ≥ 2) — the spec's PV-2 certified structured solver for the
  Cor D.7 losses (absolute / hinge / affine) on balls, ellipsoids (:class:`Ellipsoid`, exact batched
  projection) and polytopes (:class:`Polytope`, constraints dualized): batched FISTA on the box dual, stopped at a
  duality gap that certifies ``‖w − argmin‖ ≤ τ/2``; equals the paper's 𝒲-extension wherever each
  heavy record's kink-hyperplane foot lies in 𝒲, else the extension over ℝ^d (labelled deviation);
* :func:`adapsg` — Algorithm 3, the certified adaptive (inexact) projected subgradient method
  (Prop 2.9 / C.5) [M], and :func:`joint_objective` — Φ of Lemma 2.7 / C.4 [H];
* :class:`WorstValidPoint` — the §7(a) "worst valid point" solver harness;
* :class:`OutPertLocalize` (Algorithm 2, Lemma 2.4), :class:`DoubleOutputPert` (Algorithm 4,
  Prop 3.2) and :class:`PopLocalize` (Algorithm 1, Thm 2.1 / 3.1).

Everything is pure ε-DP (δ = 0) under replace-one at item level (m = 1).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import optimize, stats

from ..data import UserDataset
from ..errors import (
    InputError,
    MechanismError,
    check_choice,
    check_epsilon,
    check_finite_array,
    check_trials,
)
from ..losses import AbsoluteLoss, HingeLoss, LinearLoss
from ..privacy import PrivacyClaim

__all__ = [
    "PAPER_ID",
    "C_J",
    "C_STAB",
    "C_LAMBDA",
    "BETA0_STRICT",
    "ADAPSG_MAX_ITERATIONS",
    "MUTANTS",
    "gamma_radius",
    "c_a",
    "clip_level",
    "l2_laplace",
    "L2LaplaceMechanism",
    "Ball",
    "Ellipsoid",
    "Polytope",
    "ELLIPSOID_NEWTON_STEPS",
    "inexact_projection",
    "ClippedSlopes1D",
    "adapsg",
    "AdaPSGResult",
    "joint_objective",
    "WorstValidPoint",
    "OutPertLocalize",
    "DoubleOutputPert",
    "PopLocalize",
    "HeavyTailedRun",
    "PV2_MAX_ITERATIONS",
    "polyhedral_form",
    "pv2_minimize",
    "PV2Result",
]

PAPER_ID = "pure-dp-heavy-tails"

C_J = 18.0
"""Repetition constant of Algorithm 1: ``J = ⌈C_J ln(I/β)⌉`` (spec §2.1 [M]; majority boost 1 − e^{−J/18})."""

C_STAB = 4.0
"""Stability constant of Algorithm 1's error scale ``E = c_stab G_2/√m + …`` (spec §2.1 [M])."""

C_LAMBDA = 6.0
"""Base regularization of Algorithm 1: ``λ_1 = c_λ E / D`` (spec §2.1 [M])."""

BETA0_STRICT = 1.0 / 36.0
"""Per-call failure level β0 of Algorithm 4 inside Algorithm 1 in strict mode (each repetition succeeds w.p. ≥ 2/3)."""

ADAPSG_MAX_ITERATIONS = 200_000
"""Iteration cap of :func:`adapsg`: hitting it raises (never an uncertified output, spec §2.9 rule 2)."""

MUTANTS = (
    "no_tau",
    "stage2_full_eps",
    "no_extension",
    "radius_exp",
    "coordwise_laplace",
    "data_dependent_C",
    "phase_reuse",
    "C_wrong_exponent",
    "no_localization",
)
"""Variants of spec §7(c) M1–M9, selectable with the ``mutant`` field of the classes below: M1–M8
are known bugs; ``no_localization`` (M9) is not a bug (ε-DP, meets Prop 3.2's rate; see
mutants.heavy_tailed)."""

_SOLVERS = ("exact-1d", "adapsg", "pv2")

PV2_MAX_ITERATIONS = 50_000
"""Iteration cap of :func:`pv2_minimize` (FISTA on the box dual); hitting it raises, never an uncertified output."""
_EXT_DOMAINS = ("K", "W")
_CLIP_RULES = ("paper", "rate-test")
_OUTPUTS = ("joint", "final")


def _positive(value: Any, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _count(value: Any, name: str, minimum: int = 1) -> int:
    return check_trials(value, name, minimum=minimum)


def _beta(value: Any, name: str = "beta") -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0.0 < value < 1.0):
        raise InputError(f"{name} must be a number in (0, 1), got {value!r}; pass e.g. {name}=0.1")
    return float(value)


def _mutant(value: Any, allowed: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    return check_choice(value, allowed, "mutant")


# --------------------------------------------------------------------------- public formulas


def gamma_radius(d: int, beta: float, method: str = "closed") -> float:
    """``q(d, β)``: ``P(Gamma(d, 1) > q) ≤ β`` (spec notation table).

    ``method="closed"``: ``2(d + ln(1/β))`` [M] (from ``P(Gamma(d,1) ≥ u) ≤ 2^d e^{−u/2}``);
    ``"exact"``: ``scipy.stats.gamma(d).isf(β)`` (allowed: the radius is data-independent).
    """
    d, beta = _count(d, "d"), _beta(beta)
    check_choice(method, ("closed", "exact"), "method")
    if method == "closed":
        return 2.0 * (d + math.log(1.0 / beta))
    return float(stats.gamma(d).isf(beta))


def c_a(k: float) -> float:
    """Algorithm 4's distance constant ``c_A = 18 + √(68/(k−1))`` (Prop 2.5 / C.3, spec §2.4 [M])."""
    k = _positive(k, "k")
    if k < 2:
        raise InputError(f"k must be >= 2 (moment order of the Lipschitz constants), got {k}")
    return 18.0 + math.sqrt(68.0 / (k - 1.0))


def clip_level(
    n: int, d: int, epsilon: float, moment_k: float, k: float, beta0: float, rule: str = "paper"
) -> float:
    """Clipping (extension) level C of Algorithm 4 (Prop 3.2, spec §2.4).

    ``rule="paper"``: ``G_k (ε n / (β0 (d + ln(1/β0))))^{1/k}`` [M: ∝ G_k(εn/d)^{1/k} is H, the β0
    factors are the spec's]; ``"rate-test"``: ``G_k (ε n/d)^{1/k}`` (spec §7b note, clean d-slopes).
    """
    n, d = _count(n, "n"), _count(d, "d")
    epsilon, g, k, beta0 = (
        check_epsilon(epsilon),
        _positive(moment_k, "moment_k"),
        _positive(k, "k"),
        _beta(beta0, "beta0"),
    )
    check_choice(rule, _CLIP_RULES, "rule")
    if rule == "paper":
        return g * (epsilon * n / (beta0 * (d + math.log(1.0 / beta0)))) ** (1.0 / k)
    return g * (epsilon * n / d) ** (1.0 / k)


# --------------------------------------------------------------------------- ℓ2-Laplace noise


def l2_laplace(
    rng: np.random.Generator,
    trials: int,
    d: int,
    scale: float,
    radius: str = "gamma",
    coordinatewise: bool = False,
) -> np.ndarray:
    """``Lap₂(d, b)`` draws ``(trials, d)``: ``ξ = R·U``, ``U`` uniform on ``S^{d−1}``, ``R ~ Gamma(d, b)`` [H].

    Its density is ∝ ``exp(−‖ξ‖₂/b)`` and ``E‖ξ‖ = d b``; a shift of ℓ2 norm Δ changes the log density
    by at most Δ/b.  **Mutants** (spec §7c): ``radius="exp"`` (M4, ``R ~ Exp(b)``: privacy loss → ∞
    near the centre for d ≥ 2) and ``coordinatewise=True`` (M5, i.i.d. Laplace(b) coordinates: true
    ε = √d·Δ/b along a diagonal).
    """
    trials, d, scale = _count(trials, "trials"), _count(d, "d"), _positive(scale, "scale")
    check_choice(radius, ("gamma", "exp"), "radius")
    if coordinatewise:
        return rng.laplace(0.0, scale, size=(trials, d))
    direction = rng.standard_normal((trials, d))
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), np.finfo(float).tiny)
    shape = float(d) if radius == "gamma" else 1.0
    return rng.gamma(shape, scale, size=(trials, 1)) * direction


@dataclass(frozen=True)
class L2LaplaceMechanism:
    """Release record 0 plus ``Lap₂(d, Δ/ε)``: the ℓ2-Laplace mechanism on its own (spec §7(a) sampler audit).

    ε-DP for records at ℓ2 distance ≤ ``sensitivity`` (δ = 0).  ``radius`` / ``coordinatewise`` select
    mutants M4 / M5 of :func:`l2_laplace`.
    """

    epsilon: float
    sensitivity: float
    radius: str = "gamma"
    coordinatewise: bool = False

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(
            self.epsilon, 0.0, "item", "replace", "Lowy 2026, Lap2 mechanism (Lemma 2.4)"
        )

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        x = data.x[0, 0]
        return x + l2_laplace(
            rng, trials, x.size, self.sensitivity / self.epsilon, self.radius, self.coordinatewise
        )


# --------------------------------------------------------------------------- domains and projections


@dataclass(frozen=True)
class Ball:
    """The domain 𝒲 = B(center, radius) (a Euclidean ball; an interval in d = 1), diameter ``2·radius``."""

    center: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        c = check_finite_array(self.center, "center")
        if c.ndim != 1 or c.size == 0:
            raise InputError(f"center must have shape (d,), got {c.shape}")
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "radius", _positive(self.radius, "radius"))

    @classmethod
    def centered(cls, d: int, radius: float) -> Ball:
        """``B(0, radius)`` in ``ℝ^d``."""
        return cls(np.zeros(_count(d, "d")), radius)

    @property
    def d(self) -> int:
        return int(self.center.size)

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    def project(self, x: np.ndarray) -> np.ndarray:
        """Exact Π_𝒲 of ``x (..., d)`` (Assumption 1.1(2): projection-friendly)."""
        diff = x - self.center
        norm = np.linalg.norm(diff, axis=-1, keepdims=True)
        return self.center + diff * (self.radius / np.maximum(norm, self.radius))

    def to_dict(self) -> dict:
        return {"center": self.center.tolist(), "radius": self.radius}


ELLIPSOID_NEWTON_STEPS = 100
"""Iteration cap of the batched Newton solve in :meth:`Ellipsoid.project` (it converges monotonically, typically < 10)."""


@dataclass(frozen=True, eq=False)
class Ellipsoid:
    """The domain 𝒲 = {w : (w − c)ᵀ A (w − c) ≤ 1}, ``A (d, d)`` symmetric positive definite (Cor D.7).

    ``diameter = 2/√λ_min(A)`` (exact).  :meth:`project` is exact and batched: with ``A = QΛQᵀ`` and
    ``z = Qᵀ(u − c)``, ``Π(u) = c + Q (z/(1 + μλ))`` where μ ≥ 0 solves the secular equation
    ``Σ λ_i z_i²/(1 + μλ_i)² = 1``; Newton on ``ψ(μ) = g(μ)^{−1/2} − 1`` (concave, increasing) from μ = 0
    increases monotonically to the root (Moré–Sorensen), vectorized over all points.
    """

    center: np.ndarray
    shape_matrix: np.ndarray
    eigenvalues: np.ndarray = field(init=False, repr=False)
    eigenvectors: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = check_finite_array(self.center, "center")
        if c.ndim != 1 or c.size == 0:
            raise InputError(f"center must have shape (d,), got {c.shape}")
        a = check_finite_array(self.shape_matrix, "shape_matrix")
        if a.shape != (c.size, c.size) or not np.allclose(a, a.T, rtol=1e-10, atol=1e-12):
            raise InputError(
                f"shape_matrix must be a symmetric ({c.size}, {c.size}) matrix, got shape {a.shape}"
            )
        a = 0.5 * (a + a.T)
        vals, vecs = np.linalg.eigh(a)
        if vals[0] <= 0:
            raise InputError(
                f"shape_matrix must be positive definite, smallest eigenvalue is {vals[0]:g}"
            )
        for name, value in (
            ("center", c),
            ("shape_matrix", a),
            ("eigenvalues", vals),
            ("eigenvectors", vecs),
        ):
            object.__setattr__(self, name, value)

    @property
    def d(self) -> int:
        return int(self.center.size)

    @property
    def diameter(self) -> float:
        return 2.0 / math.sqrt(float(self.eigenvalues[0]))

    def _quad(self, x: np.ndarray) -> np.ndarray:
        diff = x - self.center
        return np.einsum("...i,ij,...j->...", diff, self.shape_matrix, diff)

    def contains(self, x: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """``(...,)`` booleans: ``(x − c)ᵀA(x − c) ≤ 1 + tol`` for ``x (..., d)``."""
        return self._quad(np.asarray(x, dtype=float)) <= 1.0 + tol

    def project(self, x: np.ndarray) -> np.ndarray:
        """Exact Euclidean projection of ``x (..., d)`` onto the ellipsoid (batched secular-equation Newton)."""
        x = np.asarray(x, dtype=float)
        lam = self.eigenvalues
        z = (x - self.center) @ self.eigenvectors
        mu = np.zeros(z.shape[:-1])
        outside = np.sum(lam * z * z, axis=-1) > 1.0
        for _ in range(ELLIPSOID_NEWTON_STEPS):
            s = 1.0 + mu[..., None] * lam
            g = np.where(outside, np.sum(lam * z * z / s**2, axis=-1), 1.0)
            dg = -2.0 * np.sum(lam**2 * z * z / s**3, axis=-1)
            psi = np.where(outside, g**-0.5 - 1.0, 0.0)
            if np.all(np.abs(psi) <= 1e-15):
                break
            dpsi = -0.5 * g**-1.5 * dg
            mu = np.where(outside, np.maximum(mu - psi / np.where(outside, dpsi, 1.0), 0.0), 0.0)
        p = self.center + (z / (1.0 + mu[..., None] * lam)) @ self.eigenvectors.T
        # a last radial pull keeps p inside exactly (moves it by rounding error only)
        scale = np.sqrt(np.maximum(self._quad(p), 1.0))[..., None]
        return self.center + (p - self.center) / scale

    def to_dict(self) -> dict:
        return {"center": self.center.tolist(), "shape_matrix": self.shape_matrix.tolist()}


@dataclass(frozen=True, eq=False)
class Polytope:
    """The bounded domain 𝒲 = {w : G w ≤ h} with non-empty interior (Cor D.7).

    Rows are normalized to unit norm on construction (the same set).  ``center`` is the Chebyshev
    centre (largest inscribed ball, radius ``inradius``; one ``scipy.optimize.linprog``), and
    ``diameter`` is the diagonal of the bounding box (2d LPs) — an upper bound on the true diameter.
    :meth:`project` solves the projection QP with ``scipy.optimize.minimize(method="SLSQP")`` in a
    Python loop over the points *outside* the polytope (the only per-trial loop of the module; the
    structured solver :func:`pv2_minimize` never calls it, it dualizes ``G w ≤ h`` instead).
    """

    G: np.ndarray
    h: np.ndarray
    center: np.ndarray = field(init=False)
    inradius: float = field(init=False)
    box: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        g = check_finite_array(self.G, "G")
        h = check_finite_array(self.h, "h")
        if g.ndim != 2 or g.shape[1] == 0 or h.shape != (g.shape[0],):
            raise InputError(
                f"G must have shape (m, d) and h shape (m,), got {g.shape} and {h.shape}"
            )
        norms = np.linalg.norm(g, axis=1)
        if np.any(norms == 0):
            raise InputError(
                "G must not have zero rows (drop them, or the polytope is empty / all of R^d)"
            )
        g, h = g / norms[:, None], h / norms
        m, d = g.shape
        res = optimize.linprog(
            np.r_[np.zeros(d), -1.0],
            A_ub=np.c_[g, np.ones(m)],
            b_ub=h,
            bounds=[(None, None)] * d + [(0, None)],
            method="highs",
        )
        if res.status == 3:
            raise InputError(
                "the polytope {G w <= h} must be bounded (add constraints bounding every direction)"
            )
        if res.status != 0 or res.x[-1] <= 1e-12:
            raise InputError("the polytope {G w <= h} must have a non-empty interior")
        box = np.empty((2, d))
        for i in range(d):
            for j, sign in enumerate((1.0, -1.0)):
                r = optimize.linprog(
                    sign * np.eye(d)[i], A_ub=g, b_ub=h, bounds=[(None, None)] * d, method="highs"
                )
                if r.status != 0:
                    raise InputError(
                        "the polytope {G w <= h} must be bounded (add constraints bounding every "
                        "direction)"
                    )
                box[j, i] = r.x[i]
        for name, value in (
            ("G", g),
            ("h", h),
            ("center", res.x[:d]),
            ("inradius", float(res.x[-1])),
            ("box", box),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def box_domain(cls, lower, upper) -> Polytope:
        """The box ``{lower ≤ w ≤ upper}`` (``(d,)`` each) as a polytope."""
        lo, hi = (
            check_finite_array(lower, "lower", ndim=1),
            check_finite_array(upper, "upper", ndim=1),
        )
        eye = np.eye(lo.size)
        return cls(np.r_[eye, -eye], np.r_[hi, -lo])

    @property
    def d(self) -> int:
        return int(self.G.shape[1])

    @property
    def diameter(self) -> float:
        return float(np.linalg.norm(self.box[1] - self.box[0]))

    def contains(self, x: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """``(...,)`` booleans: ``G x ≤ h + tol`` row-wise, for ``x (..., d)``."""
        return np.all(np.asarray(x, dtype=float) @ self.G.T <= self.h + tol, axis=-1)

    def pull_inside(self, anchor: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Last point of the segment ``anchor → x`` inside the polytope (``anchor (..., d)`` inside); ``(..., d)``."""
        direction = x - anchor
        step = direction @ self.G.T
        slack = np.maximum(self.h - anchor @ self.G.T, 0.0)
        ratio = np.where(step > 0, slack / np.where(step > 0, step, 1.0), np.inf)
        s = np.minimum(1.0, ratio.min(axis=-1))
        return anchor + s[..., None] * direction

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection of ``x (..., d)`` (SLSQP QP per outside point, loop; exact up to ~1e-10)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.d).copy()
        cons = {"type": "ineq", "fun": lambda w: self.h - self.G @ w, "jac": lambda w: -self.G}
        for i in np.flatnonzero(~self.contains(flat, 0.0)):
            u = flat[i]
            start = self.pull_inside(self.center, u)
            res = optimize.minimize(
                lambda w: 0.5 * np.sum((w - u) ** 2),
                start,
                jac=lambda w: w - u,
                constraints=[cons],
                method="SLSQP",
                options={"ftol": 1e-15, "maxiter": 500},
            )
            flat[i] = self.pull_inside(self.center, res.x if np.all(np.isfinite(res.x)) else start)
        return flat.reshape(x.shape)

    def to_dict(self) -> dict:
        return {"G": self.G.tolist(), "h": self.h.tolist()}


def inexact_projection(
    u: np.ndarray, domain: Ball | Ellipsoid | Polytope, center: np.ndarray, r: float, zeta: float
) -> tuple[np.ndarray, int]:
    """ζ-inexact projection onto ``K = 𝒲 ∩ B(c, r)`` using only Π_𝒲 (Lemma 2.8 / C.6, InexactProj) [H].

    ``x(μ) = Π_𝒲((u + μc)/(1 + μ))``; ``φ(μ) = ‖x(μ) − c‖`` is non-increasing and Π_K(u) = x(μ*).
    Bisection on the sign of ``φ(μ) − r`` over ``[0, ‖u − c‖/r − 1]`` for
    ``N = ⌈log2(‖u − c‖·μ_hi/ζ)⌉`` steps; returns ``p = x(μ_upper) ∈ K`` with ``‖p − Π_K(u)‖ ≤ ζ``.

    Parameters
    ----------
    u : (..., d) points; center : (..., d) or (d,) centres in 𝒲 (broadcast against u); r, zeta > 0

    Returns
    -------
    p : (..., d), and the number of Π_𝒲 calls made (the largest N over the batch, plus one)
    """
    r, zeta = _positive(r, "r"), _positive(zeta, "zeta")
    center = np.broadcast_to(center, u.shape)
    first = domain.project(u)
    inside = np.linalg.norm(first - center, axis=-1) <= r
    dist = np.linalg.norm(u - center, axis=-1)
    hi = np.where(inside, 0.0, np.maximum(dist / r - 1.0, 0.0))
    lo = np.zeros_like(hi)
    steps = np.where(inside | (hi <= 0), 0, np.ceil(np.log2(np.maximum(dist * hi / zeta, 1.0))))
    calls = int(steps.max(initial=0))
    for _ in range(calls):
        mid = 0.5 * (lo + hi)
        x = domain.project((u + mid[..., None] * center) / (1.0 + mid[..., None]))
        outside = np.linalg.norm(x - center, axis=-1) > r
        lo = np.where(outside, mid, lo)
        hi = np.where(outside, hi, mid)
    p = domain.project((u + hi[..., None] * center) / (1.0 + hi[..., None]))
    # x(μ_hi) lies in K up to rounding; a last radial pull keeps p ∈ K exactly (moves it by ≤ rounding)
    off = p - center
    norm = np.linalg.norm(off, axis=-1, keepdims=True)
    p = center + off * (r / np.maximum(norm, r))
    return np.where(inside[..., None], first, p), calls + 1


# --------------------------------------------------------------------------- 1-d Lipschitz extension (PV-1)


def _item_arrays(data: UserDataset, d: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a dpclaims.UserDataset, got {type(data).__name__}")
    if data.m != 1:
        raise InputError(
            f"spec 003 is item level (one item per record); data must have m = 1, got m = {data.m}"
        )
    if d is not None and data.d != d:
        raise InputError(f"data has d = {data.d} features, but the algorithm was built for d = {d}")
    return data.x[:, 0, :], None if data.y is None else data.y[:, 0]


@dataclass(frozen=True)
class ClippedSlopes1D:
    """``ψ(w) = (1/n)Σ clamp(f′(w, z_i), −C, C)``: the derivative of ``F̂^K_C`` in d = 1 (spec §2.0 identity).

    Each record contributes a non-decreasing step: slope ``L_i`` left of its breakpoint ``b_i`` and
    ``R_i ≥ L_i`` right of it (clamped to ``[−C, C]``).  Stored sorted: ``breaks (K,)`` and
    ``levels (K+1,)`` = the value of ψ − λ(w − w̄) on each segment.  The regularized minimizer over an
    interval is the clipped root of ψ + λ(w − w̄) (1-d convexity; the extension relative to K and to 𝒲
    share the argmin over K, which resolves N1 in d = 1).  ``C = inf`` gives the raw loss (mutant M3).
    """

    breaks: np.ndarray
    levels: np.ndarray
    n: int
    clip: float

    @classmethod
    def from_data(cls, data: UserDataset, loss: Any, clip: float) -> ClippedSlopes1D:
        """Breakpoints of absolute ``|xw − y|``, hinge ``max(0, 1 − yxw)`` and linear ``−s·x·w`` losses."""
        x, y = _item_arrays(data, 1)
        x = x[:, 0]
        c = float(clip)
        if not (c > 0):
            raise InputError(f"clip must be > 0 (or inf), got {clip!r}")
        if isinstance(loss, AbsoluteLoss):
            keep = x != 0
            half = np.minimum(np.abs(x[keep]), c)
            breaks, left, right = y[keep] / x[keep], -half, half
            const = 0.0
        elif isinstance(loss, HingeLoss):
            u = y * x
            keep = u != 0
            uk = u[keep]
            breaks = 1.0 / uk
            left = np.where(uk > 0, np.maximum(-uk, -c), 0.0)
            right = np.where(uk > 0, 0.0, np.minimum(-uk, c))
            const = 0.0
        elif isinstance(loss, LinearLoss):
            breaks, left, right = np.zeros(0), np.zeros(0), np.zeros(0)
            const = float(np.clip(-loss.scale * x, -c, c).sum())
        else:
            raise InputError(
                f"solver='exact-1d' supports AbsoluteLoss, HingeLoss and LinearLoss, got "
                f"{type(loss).__name__}; use solver='adapsg' for other convex GLM losses"
            )
        n = x.size
        order = np.argsort(breaks, kind="stable")
        jumps = (right - left)[order] / n
        levels = (const + left.sum()) / n + np.concatenate([[0.0], np.cumsum(jumps)])
        return cls(breaks[order], levels, n, c)

    def slope(self, w: np.ndarray) -> np.ndarray:
        """Right derivative ``ψ_+(w)`` of the data term at ``w (...)``."""
        return self.levels[np.searchsorted(self.breaks, w, side="right")]

    def root(self, center: np.ndarray, lam: float) -> np.ndarray:
        """Unconstrained minimizer of ``F̂_C + (λ/2)(w − w̄)²`` for every centre ``w̄ (T,)`` → ``(T,)``.

        With ``t = λ w̄``, ``k = #{j : λ b_j + levels[j+1] ≤ t}``: ``w = min((t − levels[k])/λ, b_{k+1})``.
        """
        t = lam * np.asarray(center, dtype=float)
        upper = lam * self.breaks + self.levels[1:]
        k = np.searchsorted(upper, t, side="right")
        nxt = np.append(self.breaks, np.inf)[k]
        return np.minimum((t - self.levels[k]) / lam, nxt)

    def objective(self, w: np.ndarray) -> np.ndarray:
        """``F̂_C(w) − F̂_C(0)`` (the antiderivative of ψ through 0): ``w (...)`` → ``(...)``."""
        w = np.asarray(w, dtype=float)
        jumps = np.diff(self.levels)
        k = np.searchsorted(self.breaks, w, side="right")
        k0 = np.searchsorted(self.breaks, 0.0, side="right")
        cum_j = np.concatenate([[0.0], np.cumsum(jumps)])
        cum_jb = np.concatenate([[0.0], np.cumsum(jumps * self.breaks)])
        return self.levels[0] * w + w * cum_j[k] - cum_jb[k] + cum_jb[k0]


# --------------------------------------------------------------------------- Algorithm 3 (AdaPSG) and Φ


def _glm_values_grads(
    loss: Any, points: np.ndarray, x: np.ndarray, y: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``f(y_i, z_i)`` and a subgradient at per-record points ``points (T, n, d)`` → ``(T, n)``, ``(T, n, d)``."""
    margin = np.einsum("tnd,nd->tn", points, x)
    return loss.phi(margin, y), loss.dphi(margin, y)[..., None] * x


def _unit(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(norm > 0, v / np.maximum(norm, np.finfo(float).tiny), 0.0)


def joint_objective(
    state: np.ndarray,
    loss: Any,
    x: np.ndarray,
    y: np.ndarray | None,
    clip: float,
    lam: float,
    center: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Φ(w, y_1..y_n) of Lemma 2.7 / C.4 and one subgradient [H].

    ``Φ = (1/n)Σ_i [f(y_i, z_i) + C‖w − y_i‖] + (λ/2)‖w − w̄‖²``; ``state (T, n+1, d)`` stacks
    ``w`` (block 0) and ``y_1..y_n``; ``center (T, d)``.  Returns ``Φ (T,)`` and ``∂Φ (T, n+1, d)``.
    ``min_y Φ(w, ·) = F̂^{K_y}_{C,λ}(w)``, so an α-minimizer of Φ is an α-minimizer of the extension.
    """
    w, ys = state[:, :1, :], state[:, 1:, :]
    n = ys.shape[1]
    values, grads = _glm_values_grads(loss, ys, x, y)
    diff = w - ys
    unit = _unit(diff)
    phi = (values + clip * np.linalg.norm(diff, axis=-1)).mean(axis=1) + 0.5 * lam * np.sum(
        (w[:, 0] - center) ** 2, axis=1
    )
    g_w = clip * unit.mean(axis=1) + lam * (w[:, 0] - center)
    g_y = (grads - clip * unit) / n
    return phi, np.concatenate([g_w[:, None, :], g_y], axis=1)


@dataclass(frozen=True)
class AdaPSGResult:
    """Output of :func:`adapsg`: the certified point ``(T, ...)``, iterations per trial, projection calls."""

    point: np.ndarray
    iterations: np.ndarray
    projection_calls: int


def adapsg(
    subgradient,
    project,
    x1: np.ndarray,
    radius: float,
    alpha: float,
    max_iterations: int = ADAPSG_MAX_ITERATIONS,
) -> AdaPSGResult:
    """Algorithm 3, AdaPSG: certified adaptive projected subgradient method (Prop 2.9 / C.5) [M].

    Batched over the leading (trial) axis; every trial stops at its own certificate
    ``5 R √S_t/(2t) ≤ α`` (then ``h(x̄_t) − min_K h ≤ α`` deterministically) or when ``g_t = 0``.
    Steps ``η_t = R/√S_t``; projections are ζ_t-inexact with ``ζ_t = min{R, η_t²‖g_t‖²/(3R)}``.

    Parameters
    ----------
    subgradient : ``g(x (T, ...)) -> (T, ...)``
    project : ``project(u (T, ...), zeta (T,)) -> (point in K (T, ...), calls)`` (ζ-inexact, output in K)
    x1 : (T, ...) start points in K; radius : R_K ≥ diam K; alpha : target accuracy
    max_iterations : a trial still uncertified after this many iterations raises ``MechanismError``

    Returns
    -------
    AdaPSGResult, halting after at most ``⌈(5 R L_h/(2α))²⌉`` iterations (C-3).
    """
    radius, alpha = _positive(radius, "radius"), _positive(alpha, "alpha")
    max_iterations = _count(max_iterations, "max_iterations")
    x = np.array(x1, dtype=float)
    trials = x.shape[0]
    axes = tuple(range(1, x.ndim))
    s = np.zeros(trials)
    total = np.zeros_like(x)
    out = np.array(x)
    done = np.zeros(trials, dtype=bool)
    iterations = np.zeros(trials, dtype=np.int64)
    calls = 0
    for t in range(1, max_iterations + 1):
        g = subgradient(x)
        gnorm2 = np.sum(g * g, axis=axes)
        active = ~done
        zero = active & (gnorm2 == 0)
        out[zero] = x[zero]
        iterations[zero] = t
        done |= zero
        s = np.where(done, s, s + gnorm2)
        total = np.where(_bcast(done, x), total, total + x)
        cert = ~done & (5.0 * radius * np.sqrt(s) / (2.0 * t) <= alpha)
        out[cert] = total[cert] / t
        iterations[cert] = t
        done |= cert
        if done.all():
            return AdaPSGResult(out, iterations, calls)
        eta = radius / np.sqrt(np.maximum(s, np.finfo(float).tiny))
        zeta = np.minimum(radius, eta**2 * gnorm2 / (3.0 * radius))
        stepped = x - _bcast(eta, x) * g
        projected, used = project(stepped, np.maximum(zeta, np.finfo(float).tiny))
        calls += used
        x = np.where(_bcast(done, x), x, projected)
    raise MechanismError(
        f"AdaPSG hit max_iterations={max_iterations} before certifying accuracy alpha={alpha:g} for "
        f"{int((~done).sum())} trial(s); raise max_iterations (the certified bound is ⌈(5 R L_h/(2α))²⌉) — "
        "an uncertified output would break the privacy proof"
    )


def _bcast(v: np.ndarray, like: np.ndarray) -> np.ndarray:
    return v.reshape(v.shape + (1,) * (like.ndim - 1))


# --------------------------------------------------------------------------- PV-2: certified structured solver (d ≥ 2)


def polyhedral_form(loss: Any, x: np.ndarray, y: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Write each GLM loss as ``f(w, z_i) = max_{θ ∈ [lo_i, hi_i]} θ(⟨a_i, w⟩ + e_i)`` (Cor D.7 losses).

    absolute ``|⟨x,w⟩ − y|``: ``a = x, e = −y, θ ∈ [−1, 1]``; hinge ``max(0, 1 − y⟨x,w⟩)``:
    ``a = −y x, e = 1, θ ∈ [0, 1]``; linear ``−s⟨x,w⟩``: ``a = −s x, e = 0, θ = 1``.  ``L_{z_i} = ‖a_i‖``.

    Returns ``a (n, d), e (n,), lo (n,), hi (n,)``.
    """
    n = x.shape[0]
    if isinstance(loss, AbsoluteLoss):
        return x, -np.asarray(y, dtype=float), -np.ones(n), np.ones(n)
    if isinstance(loss, HingeLoss):
        loss.phi(np.zeros(n), y)  # validates labels in {−1, +1}
        return -np.asarray(y, dtype=float)[:, None] * x, np.ones(n), np.zeros(n), np.ones(n)
    if isinstance(loss, LinearLoss):
        return -loss.scale * x, np.zeros(n), np.ones(n), np.ones(n)
    raise InputError(
        f"solver='pv2' supports AbsoluteLoss, HingeLoss and LinearLoss (Cor D.7), got "
        f"{type(loss).__name__}; use solver='adapsg' for other convex GLM losses"
    )


def _pv2_primal(a, e, lo, hi, c, lam, center, p):
    """PV-2 objective ``P(p) = (1/n)Σ c_i max_{θ∈[lo_i,hi_i]} θ(⟨a_i,p⟩ + e_i) + (λ/2)‖p − w̄‖²``: ``(T,)``."""
    u = p @ a.T + e
    return (c * np.where(u > 0, hi * u, lo * u)).mean(axis=1) + 0.5 * lam * np.sum(
        (p - center) ** 2, axis=1
    )


def _pv2_polytope(
    a, e, lo, hi, c, lam, center, domain: Polytope, local, r, target_gap, max_iterations
):
    """PV-2 on a polytope 𝒲 = {G w ≤ h}: the constraints are dualized (multipliers μ ≥ 0), so the dual is
    ``D(θ, μ) = (1/n)Σ c_i θ_i e_i − μᵀh' + min_{w∈B} [⟨v_θ + G'ᵀμ, w⟩ + (λ/2)‖w − w̄‖²]`` with B = ℝ^d or
    B(local_t, r) — a closed-form inner minimizer q (no QP).  ``G' = sG, h' = sh`` with ``s = ‖ac‖/‖G‖``
    balances the two blocks for FISTA (same set).  The primal candidate ``p ∈ K`` is the last point of the
    segment from a strictly feasible anchor (the Chebyshev centre, or local_t moved toward it while
    staying in B) to q.  ``D ≤ min_K P`` by weak duality, so ``P(p) − D ≤ gap`` certifies
    ``‖p − argmin_K P‖ ≤ √(2·gap/λ)`` exactly as on the ball."""
    ac, ec = c[:, None] * a / a.shape[0], c * e / a.shape[0]
    trials, n = center.shape[0], a.shape[0]
    tiny = np.finfo(float).tiny
    s = max(np.linalg.norm(ac, 2), tiny) / np.linalg.norm(domain.G, 2)
    gs, hs = s * domain.G, s * domain.h
    if local is None:
        anchor = np.broadcast_to(domain.center, center.shape)
    else:
        r = _positive(r, "r")
        to_c = domain.center - local
        t = np.minimum(0.5, 0.5 * r / np.maximum(np.linalg.norm(to_c, axis=1), tiny))
        anchor = local + t[:, None] * to_c

    def inner(theta, mu):
        v = theta @ ac + mu @ gs
        u = center - v / lam
        if local is None:
            q = u
        else:
            off = u - local
            q = local + off * (r / np.maximum(np.linalg.norm(off, axis=1, keepdims=True), r))
        return q, theta @ ec - mu @ hs + np.sum(v * q, axis=1) + 0.5 * lam * np.sum(
            (q - center) ** 2, axis=1
        )

    step = lam / max(np.linalg.norm(np.r_[ac, gs], 2) ** 2, tiny)
    theta = np.broadcast_to(np.clip(0.0, lo, hi), (trials, n)).copy()
    mu = np.zeros((trials, gs.shape[0]))
    z_theta, z_mu, t_k = theta.copy(), mu.copy(), 1.0
    out = np.zeros_like(center)
    gap_out = np.full(trials, np.inf)
    iterations = np.zeros(trials, dtype=np.int64)
    done = np.zeros(trials, dtype=bool)
    for it in range(1, _count(max_iterations, "max_iterations") + 1):
        q, dual = inner(theta, mu)
        p = domain.pull_inside(anchor, q)
        gap = _pv2_primal(a, e, lo, hi, c, lam, center, p) - dual
        cert = ~done & (gap <= target_gap)
        out[cert], gap_out[cert], iterations[cert] = p[cert], np.maximum(gap[cert], 0.0), it
        done |= cert
        if done.all():
            return PV2Result(out, gap_out, iterations)
        qz, _ = inner(z_theta, z_mu)
        new_theta = np.clip(z_theta + step * (qz @ ac.T + ec), lo, hi)
        new_mu = np.maximum(z_mu + step * (qz @ gs.T - hs), 0.0)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t_k * t_k))
        z_theta = new_theta + ((t_k - 1.0) / t_next) * (new_theta - theta)
        z_mu = new_mu + ((t_k - 1.0) / t_next) * (new_mu - mu)
        keep = done[:, None]
        theta, mu, t_k = np.where(keep, theta, new_theta), np.where(keep, mu, new_mu), t_next
    raise MechanismError(
        f"pv2_minimize hit max_iterations={max_iterations} before certifying duality gap "
        f"{target_gap:g} for {int((~done).sum())} trial(s) on the polytope; raise max_iterations"
    )


@dataclass(frozen=True)
class PV2Result:
    """Output of :func:`pv2_minimize`: ``point (T, d)`` in K, certified ``gap (T,)`` and ``iterations (T,)``."""

    point: np.ndarray
    gap: np.ndarray
    iterations: np.ndarray


def pv2_minimize(
    loss: Any,
    x: np.ndarray,
    y: np.ndarray | None,
    clip: float,
    lam: float,
    center: np.ndarray,
    domain: Ball | Ellipsoid | Polytope,
    local: np.ndarray | None = None,
    r: float = 0.0,
    target_gap: float = 1e-8,
    max_iterations: int = PV2_MAX_ITERATIONS,
) -> PV2Result:
    """Certified minimizer of the PV-2 objective over ``K = 𝒲`` or ``K = 𝒲 ∩ B(local_t, r)`` (spec §2.9 PV-2).

    𝒲 may be a :class:`Ball`, an :class:`Ellipsoid` (both through their exact batched projection) or a
    :class:`Polytope` (constraints dualized, see :func:`_pv2_polytope`): the structured case of
    Prop D.6 / Cor D.7 on balls, ellipsoids and polytopes, with the same duality-gap certificate.

    ``P(w) = (1/n)Σ c_i f(w, z_i) + (λ/2)‖w − w̄_t‖²`` with ``c_i = min(1, C/L_{z_i})`` (each term is
    convex and C-Lipschitz, ``= f`` when ``L_z ≤ C``).  For absolute / hinge losses it coincides on 𝒲
    with the paper's extension ``f^𝒲_C`` at every w whose foot on the record's kink hyperplane lies in
    𝒲 (``f(y) ≥ C·dist(y, H)``); over a small K it is the extension over ℝ^d (the spec's labelled
    deviation).  Batched FISTA ascent on the box dual
    ``D(θ) = (1/n)Σ c_i θ_i e_i + min_{w∈K} [⟨v_θ, w⟩ + (λ/2)‖w − w̄‖²]``, ``v_θ = (1/n)Σ c_i θ_i a_i``;
    the primal candidate is the (inexact) projection ``p = Π̃_K(w̄ − v_θ/λ) ∈ K`` and the inner minimum is
    lowered by ``L_h ζ`` so D stays a valid lower bound.  Each trial stops at ``P(p) − D(θ) ≤ target_gap``,
    which certifies ``‖p − argmin_K P‖ ≤ √(2·gap/λ)`` (λ-strong convexity); the cap raises.

    Parameters
    ----------
    x : (n, d), y : (n,) or None; center : (T, d) regularization centres w̄_t; local : (T, d) or None

    Returns
    -------
    PV2Result with ``point (T, d)``, ``gap (T,)`` (certified duality gap) and ``iterations (T,)``.
    """
    clip, lam, target_gap = float(clip), _positive(lam, "lam"), _positive(target_gap, "target_gap")
    a, e, lo, hi = polyhedral_form(loss, x, y)
    n = a.shape[0]
    norm = np.linalg.norm(a, axis=1)
    c = np.divide(
        clip, norm, out=np.ones_like(norm), where=norm > clip
    )  # min(1, C/‖a‖), C may be ∞
    if isinstance(domain, Polytope):
        return _pv2_polytope(
            a, e, lo, hi, c, lam, center, domain, local, r, target_gap, max_iterations
        )
    ac, ec = c[:, None] * a / n, c * e / n
    trials = center.shape[0]
    zeta = 0.0
    if local is not None:
        reach = np.linalg.norm(center - local, axis=1).max() + r
        zeta = 1e-3 * target_gap / (np.linalg.norm(ac, axis=1).sum() + lam * reach)

    def inner(theta):
        v = theta @ ac
        u = center - v / lam
        p = domain.project(u) if local is None else inexact_projection(u, domain, local, r, zeta)[0]
        value = np.sum(v * p, axis=1) + 0.5 * lam * np.sum((p - center) ** 2, axis=1)
        slack = 0.0 if local is None else zeta * (np.linalg.norm(v, axis=1) + lam * reach)
        return p, theta @ ec + value - slack

    def primal(p):
        return _pv2_primal(a, e, lo, hi, c, lam, center, p)

    step = lam / max(np.linalg.norm(ac, 2) ** 2, np.finfo(float).tiny)
    theta = np.broadcast_to(np.clip(0.0, lo, hi), (trials, n)).copy()
    z, t = theta.copy(), 1.0
    out = np.zeros_like(center)
    gap_out = np.full(trials, np.inf)
    iterations = np.zeros(trials, dtype=np.int64)
    done = np.zeros(trials, dtype=bool)
    for it in range(1, _count(max_iterations, "max_iterations") + 1):
        p, dual = inner(theta)
        gap = primal(p) - dual
        cert = ~done & (gap <= target_gap)
        out[cert], gap_out[cert], iterations[cert] = p[cert], np.maximum(gap[cert], 0.0), it
        done |= cert
        if done.all():
            return PV2Result(out, gap_out, iterations)
        pz, _ = inner(z)
        new = np.clip(z + step * (pz @ a.T + e) * (c / n), lo, hi)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = new + ((t - 1.0) / t_next) * (new - theta)
        theta, t = np.where(done[:, None], theta, new), t_next
    raise MechanismError(
        f"pv2_minimize hit max_iterations={max_iterations} before certifying duality gap "
        f"{target_gap:g} for {int((~done).sum())} trial(s); raise max_iterations"
    )


# --------------------------------------------------------------------------- the solver harness


@dataclass(frozen=True, eq=False)
class WorstValidPoint:
    """Adversarial-but-valid solver harness of spec §7(a).

    The privacy theorem must hold for *every* certified solver output, i.e. any point within τ of
    the exact minimizer.  The harness moves the exact minimizer by ``−τ·direction`` on datasets
    that contain the record ``marker`` (a row ``(x, y)`` of D) and by ``+τ·direction`` otherwise, then
    projects back onto the stage's domain (non-expansive, so still within τ).  Without it an exact
    solver uses only half of each stage's sensitivity budget and mutant M1 looks private.
    """

    marker_x: np.ndarray
    marker_y: float | None
    direction: np.ndarray

    @classmethod
    def for_record(cls, data: UserDataset, record: int = 0, direction=None) -> WorstValidPoint:
        """Harness keyed on ``data``'s record ``record`` (default direction ``e_1``)."""
        x, y = _item_arrays(data)
        u = np.zeros(data.d)
        u[0] = 1.0
        u = u if direction is None else _unit(check_finite_array(direction, "direction"))
        return cls(x[record].copy(), None if y is None else float(y[record]), u)

    def offset(self, data: UserDataset) -> np.ndarray:
        """``−direction`` if ``data`` contains the marker record, else ``+direction``: ``(d,)``."""
        x, y = _item_arrays(data)
        hit = np.all(x == self.marker_x, axis=1)
        if self.marker_y is not None and y is not None:
            hit &= y == self.marker_y
        return -self.direction if bool(hit.any()) else self.direction


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class HeavyTailedRun:
    """Result of ``run``: ``theta (trials, d)``, ``gradient_evaluations (trials,)`` and, when asked,
    ``transcript`` = the intermediate releases a white-box audit needs (name → array, trial axis first)."""

    theta: np.ndarray
    gradient_evaluations: np.ndarray
    transcript: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "mean_gradient_evaluations": float(np.mean(self.gradient_evaluations)),
            "transcript": sorted(self.transcript),
        }


# --------------------------------------------------------------------------- the stage solver


def _check_center(center, trials: int, d: int, default: np.ndarray) -> np.ndarray:
    if center is None:
        return np.broadcast_to(default, (trials, d)).copy()
    c = check_finite_array(center, "center")
    if c.shape == (d,):
        return np.broadcast_to(c, (trials, d)).copy()
    if c.shape != (trials, d):
        raise InputError(
            f"center must have shape (d,) = ({d},) or (trials, d) = ({trials}, {d}), got {c.shape}"
        )
    return c


@dataclass(frozen=True)
class _Stage:
    """One certified solve of ``min_{K} F̂^{K_y}_{C,λ}`` with the harness applied; shared by Algorithms 2 and 4."""

    loss: Any
    domain: Ball
    lam: float
    clip: float
    tau: float
    alpha: float
    solver: str
    max_iterations: int
    extension_domain: str = "K"

    def solve(
        self,
        data: UserDataset,
        center: np.ndarray,
        local: np.ndarray | None,
        r: float,
        harness: WorstValidPoint | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Certified point ``(T, d)`` within τ of ``argmin_K``, K = 𝒲 (``local`` None) or 𝒲 ∩ B(local_t, r);
        and gradient evaluations per trial ``(T,)``."""
        trials, d = center.shape
        if self.solver == "exact-1d":
            slopes = ClippedSlopes1D.from_data(data, self.loss, self.clip)
            lo, hi = self._interval(local, r, trials)
            exact = np.clip(slopes.root(center[:, 0], self.lam), lo, hi)[:, None]
            evals = np.full(trials, float(slopes.n))
        elif self.solver == "pv2":
            exact, evals = self._pv2(data, center, local, r)
        else:
            exact, evals = self._adapsg(data, center, local, r)
        if harness is None:
            return exact, evals
        # PV-2 certifies ‖point − argmin‖ ≤ τ/2, so the harness may move it by the remaining τ/2
        moved = exact + (0.5 if self.solver == "pv2" else 1.0) * self.tau * harness.offset(data)
        return self._project(moved, local, r), evals

    def _interval(self, local, r, trials):
        lo = np.full(trials, self.domain.center[0] - self.domain.radius)
        hi = np.full(trials, self.domain.center[0] + self.domain.radius)
        if local is not None:
            lo, hi = np.maximum(lo, local[:, 0] - r), np.minimum(hi, local[:, 0] + r)
        return lo, hi

    def _project(self, u: np.ndarray, local, r, zeta: float | None = None) -> np.ndarray:
        if local is None:
            return self.domain.project(u)
        if u.shape[-1] == 1:
            lo, hi = self._interval(local, r, u.shape[0])
            return np.clip(u[:, 0], lo, hi)[:, None]
        return inexact_projection(u, self.domain, local, r, self.tau if zeta is None else zeta)[0]

    def _pv2(
        self, data: UserDataset, center: np.ndarray, local, r
    ) -> tuple[np.ndarray, np.ndarray]:
        """PV-2 (spec §2.9): certified ‖w − argmin‖ ≤ τ/2 via duality gap ≤ λτ²/8 (α_target = α/4)."""
        x, y = _item_arrays(data, center.shape[1])
        shared = local is None and bool(np.all(center == center[:1]))
        res = pv2_minimize(
            self.loss,
            x,
            y,
            self.clip,
            self.lam,
            center[:1] if shared else center,
            self.domain,
            local,
            r,
            self.alpha / 4.0,
            self.max_iterations,
        )
        trials = center.shape[0]
        # one data-only solve when every trial shares the centre (e.g. stage 1): the same deterministic point
        return np.broadcast_to(res.point, center.shape).copy(), np.broadcast_to(
            res.iterations.astype(float) * x.shape[0], (trials,)
        ).copy()

    def _adapsg(
        self, data: UserDataset, center: np.ndarray, local, r
    ) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 3 on Φ over K × K_y^n (K_y = K or 𝒲, the N1 switch); ``R = √(n+1)·diam K``."""
        if not getattr(self.loss, "glm", False):
            raise InputError(
                f"solver='adapsg' needs a GLM loss (phi/dphi), got {type(self.loss).__name__}"
            )
        x, y = _item_arrays(data, center.shape[1])
        n = x.shape[0]
        diam = self.domain.diameter if local is None else min(self.domain.diameter, 2.0 * r)
        if self.extension_domain == "W" and local is not None:
            diam = self.domain.diameter
        radius = math.sqrt(n + 1) * diam
        start = center if local is None else local
        start = self._project(self.domain.project(start), local, r)
        x1 = np.repeat(start[:, None, :], n + 1, axis=1)

        def grad(state):
            return joint_objective(state, self.loss, x, y, self.clip, self.lam, center)[1]

        def project(u, zeta):
            block_zeta = float(np.min(zeta)) / math.sqrt(n + 1)
            if local is None:
                return self.domain.project(u), 1
            loc = local[:, None, :]
            w, used = inexact_projection(u[:, :1], self.domain, loc, r, block_zeta)
            if self.extension_domain == "W":
                return np.concatenate([w, self.domain.project(u[:, 1:])], axis=1), used
            ys, used_y = inexact_projection(u[:, 1:], self.domain, loc, r, block_zeta)
            return np.concatenate([w, ys], axis=1), used + used_y

        result = adapsg(grad, project, x1, radius, self.alpha, self.max_iterations)
        return result.point[:, 0, :], result.iterations.astype(float) * n


# --------------------------------------------------------------------------- Algorithm 2


def _common_checks(
    n, d, epsilon, lam, clip, domain, loss, solver, max_iterations, extension_domain
):
    _count(n, "n")
    _count(d, "d")
    check_epsilon(epsilon)
    _positive(lam, "lam")
    _positive(clip, "clip")
    if not isinstance(domain, (Ball, Ellipsoid, Polytope)) or domain.d != d:
        raise InputError(f"domain must be a Ball, Ellipsoid or Polytope in dimension d = {d}")
    check_choice(solver, _SOLVERS, "solver")
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
    check_choice(extension_domain, _EXT_DOMAINS, "stage2_extension_domain")
    if solver == "exact-1d" and d != 1:
        raise InputError(
            f"solver='exact-1d' is the d = 1 path (PV-1); d = {d} needs solver='pv2' "
            "(absolute / hinge / linear losses) or solver='adapsg'"
        )
    _count(max_iterations, "max_iterations")
    if loss is None:
        raise InputError("loss is required, e.g. dpclaims.losses.AbsoluteLoss()")


@dataclass(frozen=True)
class OutPertLocalize:
    """Algorithm 2, output-perturbation localization (Lemma 2.4 / C.2) [H; parameters M].

    ``τ = C/(λn)``, ``α = C²/(2λn²)``, ``Δ = 4C/(λn)`` (sensitivity of a certified α-minimizer, P-S),
    ``b = Δ/ε1``, ``r = τ + b·q(d, β1)``.  Steps: ``w0`` ← certified α-minimizer of ``F̂^𝒲_{C,λ}``;
    ``ξ ~ Lap₂(d, b)``; ``w̃ = Π_𝒲(w0 + ξ)``; release ``(w̃, r)`` (``W_loc = 𝒲 ∩ B(w̃, r)``).
    ε1-DP: a Laplace mechanism followed by post-processing.  ``calibration="exact-solver"`` is the
    2C/(λn) noise that is only right for an exact solver (mutant M1, ``no_tau``).
    """

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
    mutant: str | None = None
    max_iterations: int = ADAPSG_MAX_ITERATIONS

    def __post_init__(self) -> None:
        _common_checks(
            self.n,
            self.d,
            self.epsilon,
            self.lam,
            self.clip,
            self.domain,
            self.loss,
            self.solver,
            self.max_iterations,
            "K",
        )
        _mutant(
            self.mutant,
            ("no_tau", "no_extension", "radius_exp", "coordwise_laplace", "data_dependent_C"),
        )

    @classmethod
    def from_theorem(
        cls,
        n: int,
        d: int,
        epsilon: float,
        lam: float,
        clip: float,
        beta: float,
        domain: Ball,
        loss: Any,
        center=None,
        quantile: str = "closed",
        solver: str = "exact-1d",
        harness: WorstValidPoint | None = None,
        mutant: str | None = None,
        max_iterations: int = ADAPSG_MAX_ITERATIONS,
    ) -> OutPertLocalize:
        """Parameters of Lemma 2.4 at privacy ``epsilon`` (= ε1) and containment level ``beta`` (= β1)."""
        n, d, lam, clip = (
            _count(n, "n"),
            _count(d, "d"),
            _positive(lam, "lam"),
            _positive(clip, "clip"),
        )
        epsilon = check_epsilon(epsilon)
        tau = clip / (lam * n)
        sens = (2.0 if mutant == "no_tau" else 4.0) * clip / (lam * n)
        q = gamma_radius(d, beta, quantile)
        b = sens / epsilon
        return cls(
            n,
            d,
            epsilon,
            lam,
            clip,
            tau,
            clip**2 / (2.0 * lam * n**2),
            sens,
            b,
            tau + b * q,
            _beta(beta),
            q,
            domain,
            loss,
            center,
            solver,
            harness,
            mutant,
            max_iterations,
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
            "mutant": self.mutant,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε1-DP, δ = 0, item level, replace-one (Lemma 2.4)."""
        return PrivacyClaim(
            self.epsilon, 0.0, "item", "replace", "Lowy 2026, Lemma 2.4 / C.2 (Algorithm 2)"
        )

    def _stage(self, data: UserDataset) -> _Stage:
        clip = self.clip
        if self.mutant == "no_extension":
            clip = math.inf
        elif self.mutant == "data_dependent_C":
            x, _ = _item_arrays(data)
            clip = min(self.clip, float(np.linalg.norm(x, axis=1).max()))
        return _Stage(
            self.loss,
            self.domain,
            self.lam,
            clip,
            self.tau,
            self.alpha,
            self.solver,
            self.max_iterations,
        )

    def _noise(self, rng: np.random.Generator, trials: int, scale: float) -> np.ndarray:
        return l2_laplace(
            rng,
            trials,
            self.d,
            scale,
            "exp" if self.mutant == "radius_exp" else "gamma",
            self.mutant == "coordwise_laplace",
        )

    def localize(self, data: UserDataset, rng: np.random.Generator, trials: int, center=None):
        """``(w̃ (T, d), w0 (T, d), gradient evaluations (T,), noise scale used)``."""
        trials = _count(trials, "trials")
        c = _check_center(
            self.center if center is None else center, trials, self.d, self.domain.center
        )
        w0, evals = self._stage(data).solve(data, c, None, 0.0, self.harness)
        scale = self.noise_scale
        if self.mutant == "data_dependent_C":
            scale = self.noise_scale * self._stage(data).clip / self.clip
        w_tilde = self.domain.project(w0 + self._noise(rng, trials, scale))
        return w_tilde, w0, evals, scale

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        center=None,
    ) -> HeavyTailedRun:
        """``theta`` = w̃ ``(trials, d)``; transcript ``w0`` (the certified minimizer)."""
        w_tilde, w0, evals, _ = self.localize(data, rng, trials, center)
        return HeavyTailedRun(w_tilde, evals, {"w0": w0} if transcript else {})

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


# --------------------------------------------------------------------------- Algorithm 4


@dataclass(frozen=True)
class DoubleOutputPert:
    """Algorithm 4, Double-OutputPert: the regularized-ERM solver of the main result (Prop 3.2 / D.1).

    ``C = G_k (εn/(β0(d + ln 1/β0)))^{1/k}`` [M], ``τ = C/(λn)``, ``α = C²/(2λn²)``, ``Δ = 4C/(λn)``,
    ``ε1 = ε2 = ε/2``.  (1) ``(w̃, r)`` ← Algorithm 2 at ε/2, β0; ``K = 𝒲 ∩ B(w̃, r)``;
    (2) ``w1`` ← certified α-minimizer over K of ``F̂^K_{C,λ}``; (3) ``ξ2 ~ Lap₂(d, Δ/ε2)``;
    (4) ``w_out = Π̃_K(w1 + ξ2)``.  ε-DP by basic adaptive composition; the pair ``(w̃, w_out)`` is
    released jointly by ``__call__`` (``output="joint"``), as the spec asks auditors to do.

    Utility [M]: w.p. ≥ 1 − 3β0, ``‖w_out − ŵ‖ ≤ c_A (G_k/λ)((d + ln 1/β0)/(εn))^{1−1/k} β0^{−1/k}``
    (:attr:`distance_bound`).  ``stage2_extension_domain`` is the N1 switch (y_i ∈ K or 𝒲; same
    argmin over K in d = 1).  Mutants (spec §7c): ``no_tau`` (M1), ``stage2_full_eps`` (M2),
    ``no_extension`` (M3), ``radius_exp`` (M4), ``coordwise_laplace`` (M5), ``data_dependent_C`` (M6),
    ``no_localization`` (M9, not a bug: no rate or privacy check can fail; from_theorem
    ``clip_rule="sqrt"`` is M8).
    """

    localizer: OutPertLocalize
    epsilon: float
    epsilon2: float
    moment_k: float
    k: float
    beta0: float
    stage2_noise_scale: float
    stage2_extension_domain: str = "K"
    output: str = "joint"
    mutant: str | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.stage2_extension_domain, _EXT_DOMAINS, "stage2_extension_domain")
        check_choice(self.output, _OUTPUTS, "output")
        _mutant(self.mutant, MUTANTS)

    @classmethod
    def from_theorem(
        cls,
        n: int,
        d: int,
        epsilon: float,
        moment_k: float,
        k: float,
        lam: float,
        beta0: float,
        domain: Ball,
        loss: Any,
        center=None,
        clip_rule: str = "paper",
        quantile: str = "closed",
        solver: str = "exact-1d",
        harness: WorstValidPoint | None = None,
        mutant: str | None = None,
        stage2_extension_domain: str = "K",
        output: str = "joint",
        max_iterations: int = ADAPSG_MAX_ITERATIONS,
    ) -> DoubleOutputPert:
        """Every parameter of Prop 3.2 (``clip_rule="sqrt"`` is mutant M8: ``C = G_k √(εn)`` for every k)."""
        _mutant(mutant, MUTANTS)
        epsilon = check_epsilon(epsilon)
        if mutant == "C_wrong_exponent":
            clip = _positive(moment_k, "moment_k") * math.sqrt(epsilon * _count(n, "n"))
        else:
            clip = clip_level(n, d, epsilon, moment_k, k, beta0, clip_rule)
        stage1_mutant = (
            mutant
            if mutant
            in ("no_tau", "no_extension", "radius_exp", "coordwise_laplace", "data_dependent_C")
            else None
        )
        localizer = OutPertLocalize.from_theorem(
            n,
            d,
            epsilon / 2.0,
            lam,
            clip,
            beta0,
            domain,
            loss,
            center,
            quantile,
            solver,
            harness,
            stage1_mutant,
            max_iterations,
        )
        eps2 = epsilon if mutant == "stage2_full_eps" else epsilon / 2.0
        return cls(
            localizer,
            epsilon,
            eps2,
            _positive(moment_k, "moment_k"),
            float(k),
            _beta(beta0, "beta0"),
            localizer.sensitivity / eps2,
            stage2_extension_domain,
            output,
            mutant,
        )

    @property
    def clip(self) -> float:
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
            "mutant": self.mutant,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε-DP, δ = 0, item level, replace-one (Prop 3.2 / D.1)."""
        return PrivacyClaim(
            self.epsilon, 0.0, "item", "replace", "Lowy 2026, Prop 3.2 / D.1 (Algorithm 4)"
        )

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        center=None,
    ) -> HeavyTailedRun:
        """``theta = w_out (trials, d)``; transcript: ``w_tilde``, ``w0``, ``w1`` (all ``(trials, d)``)."""
        loc = self.localizer
        trials = _count(trials, "trials")
        c = _check_center(
            loc.center if center is None else center, trials, loc.d, loc.domain.center
        )
        stage = replace(loc._stage(data), extension_domain=self.stage2_extension_domain)
        scale2 = self.stage2_noise_scale
        if self.mutant == "no_localization":
            w_tilde, w0, ev1 = loc.domain.project(c), c, np.zeros(trials)
            local, r = None, 0.0
            scale2 = loc.sensitivity / self.epsilon
        else:
            w_tilde, w0, ev1, scale1 = loc.localize(data, rng, trials, c)
            scale2 *= scale1 / loc.noise_scale
            local, r = w_tilde, loc.radius
        w1, ev2 = stage.solve(data, c, local, r, loc.harness)
        noisy = w1 + loc._noise(rng, trials, scale2)
        w_out = stage._project(noisy, local, r)
        extra = {"w_tilde": w_tilde, "w0": w0, "w1": w1} if transcript else {}
        return HeavyTailedRun(w_out, ev1 + ev2, extra)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The audited release: ``(w̃, w_out)`` → ``(trials, 2d)`` (``output="joint"``) or ``w_out``."""
        res = self.run(data, rng, trials, transcript=self.output == "joint")
        return (
            np.hstack([res.transcript["w_tilde"], res.theta])
            if self.output == "joint"
            else res.theta
        )


# --------------------------------------------------------------------------- Algorithm 1


@dataclass(frozen=True)
class PopLocalize:
    """Algorithm 1, population-level localization (ALT24 reduction; Thm 2.1, Thm 3.1 with A = Alg 4) [M].

    ``I = ⌈log2 n⌉`` phases × ``J = ⌈c_J ln(I/β)⌉`` repetitions on DISJOINT blocks of
    ``m = ⌊n/(IJ)⌋`` records; ``E = c_stab G_2/√m + c_A G_k (d/(εm))^{1−1/k}``, ``λ_i = 2^{i−1} c_λ E/D``,
    ``ρ_i = E/λ_i``; each phase keeps the repetition with most others within ``2ρ_i`` (ties: smallest
    j).  ε-DP by parallel composition (each record is in one block; centres are post-processing), so
    the whole phase transcript may be released.  ``constants="test"``: J = 1, c_stab = c_A = 1.
    Mutant M7 ``phase_reuse``: every call uses the full dataset (true ε up to I·ε).
    """

    solvers: tuple
    blocks: tuple
    repetitions: int
    lambdas: tuple
    error_scale: float
    epsilon: float
    domain: Ball
    output: str = "final"
    mutant: str | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.output, ("final", "phases"), "output")
        _mutant(self.mutant, ("phase_reuse",))
        if (
            len(self.solvers) != len(self.lambdas)
            or len(self.blocks) != len(self.solvers) * self.repetitions
        ):
            raise InputError(
                "PopLocalize needs one solver per phase and phases × repetitions blocks"
            )

    @classmethod
    def from_theorem(
        cls,
        n: int,
        d: int,
        epsilon: float,
        moment_2: float,
        moment_k: float,
        k: float,
        beta: float,
        domain: Ball,
        loss: Any,
        constants: str = "paper",
        beta0: float | None = None,
        phases: int | None = None,
        clip_rule: str = "paper",
        harness: WorstValidPoint | None = None,
        output: str = "final",
        mutant: str | None = None,
        solver: str = "exact-1d",
    ) -> PopLocalize:
        """The schedule of spec §2.1 (``phases`` overrides I, e.g. to hold it fixed across a sweep)."""
        n, d, epsilon = _count(n, "n"), _count(d, "d"), check_epsilon(epsilon)
        check_choice(constants, ("paper", "test"), "constants")
        beta = _beta(beta)
        big_i = max(1, math.ceil(math.log2(n))) if phases is None else _count(phases, "phases")
        big_j = 1 if constants == "test" else math.ceil(C_J * math.log(big_i / beta))
        m = n // (big_i * big_j)
        if m < 1:
            raise InputError(
                f"n = {n} is too small for I = {big_i} phases × J = {big_j} repetitions (m = n/(IJ) < 1)"
            )
        beta0 = BETA0_STRICT if beta0 is None else _beta(beta0, "beta0")
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
        size = n if mutant == "phase_reuse" else m
        solvers = tuple(
            DoubleOutputPert.from_theorem(
                size,
                d,
                epsilon,
                moment_k,
                k,
                lam,
                beta0,
                domain,
                loss,
                clip_rule=clip_rule,
                solver=solver,
                harness=harness,
                output="final",
            )
            for lam in lambdas
        )
        if mutant == "phase_reuse":
            blocks = tuple((0, n) for _ in range(big_i * big_j))
        else:
            blocks = tuple((b * m, (b + 1) * m) for b in range(big_i * big_j))
        return cls(solvers, blocks, big_j, lambdas, e_scale, epsilon, domain, output, mutant)

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
            "mutant": self.mutant,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """ε-DP, δ = 0, item level, replace-one (Thm 2.1 / 3.1: parallel composition)."""
        return PrivacyClaim(
            self.epsilon, 0.0, "item", "replace", "Lowy 2026, Thm 3.1 / D.2 (Algorithms 1 + 4)"
        )

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> HeavyTailedRun:
        """``theta = w_I (trials, d)``; transcript ``phases (trials, I, d)`` (the w_i)."""
        trials = _count(trials, "trials")
        if not isinstance(data, UserDataset) or data.n < self.blocks[-1][1]:
            raise InputError(
                f"data must be a UserDataset with at least {self.blocks[-1][1]} records"
            )
        w = np.broadcast_to(self.domain.center, (trials, self.domain.d)).copy()
        evals = np.zeros(trials)
        history = []
        for i, (solver, lam) in enumerate(zip(self.solvers, self.lambdas)):
            outs = []
            for j in range(self.repetitions):
                lo, hi = self.blocks[i * self.repetitions + j]
                block = UserDataset(data.x[lo:hi], None if data.y is None else data.y[lo:hi])
                res = solver.run(block, rng, trials, center=w)
                outs.append(res.theta)
                evals += res.gradient_evaluations
            x = np.stack(outs, axis=1)
            rho = self.error_scale / lam
            close = np.linalg.norm(x[:, :, None, :] - x[:, None, :, :], axis=-1) <= 2.0 * rho
            best = np.argmax(close.sum(axis=2), axis=1)
            w = x[np.arange(trials), best]
            history.append(w)
        phases = np.stack(history, axis=1)
        return HeavyTailedRun(w, evals, {"phases": phases} if transcript else {})

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``w_I (trials, d)`` or, with ``output="phases"``, every phase output ``(trials, I·d)``."""
        res = self.run(data, rng, trials, transcript=self.output == "phases")
        return (
            res.transcript["phases"].reshape(trials, -1) if self.output == "phases" else res.theta
        )
