"""The domains 𝒲 of Lowy 2026 (balls, ellipsoids, polytopes) and the inexact projection onto
``K = 𝒲 ∩ B(c, r)`` built from Π_𝒲 alone (Lemma 2.8 / C.6)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from dpclaims.errors import InputError, check_count, check_finite_array, check_positive
from dpclaims.losses import project_l2_ball

__all__ = [
    "Ball",
    "Ellipsoid",
    "Polytope",
    "ELLIPSOID_NEWTON_STEPS",
    "inexact_projection",
    "project_ball",
]


def project_ball(x: np.ndarray, radius: float, center: np.ndarray) -> np.ndarray:
    """:func:`~dpclaims.losses.project_l2_ball` for points ``x (..., d)`` and centres ``(d,)`` or
    ``(..., d)`` (broadcast against x) → ``(..., d)``."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    center = np.broadcast_to(center, x.shape).reshape(-1, d) if np.ndim(center) > 1 else center
    # project_l2_ball divides radius by max(‖x − c‖, tiny): a point at the centre gives inf → 1
    with np.errstate(over="ignore"):
        return project_l2_ball(x.reshape(-1, d), radius, center).reshape(x.shape)


@dataclass(frozen=True, kw_only=True)
class Ball:
    """The domain 𝒲 = B(center, radius) (a Euclidean ball; an interval in d = 1), diameter
    ``2·radius``."""

    center: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        c = check_finite_array(self.center, "center")
        if c.ndim != 1 or c.size == 0:
            raise InputError(f"center must have shape (d,), got {c.shape}")
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "radius", check_positive(self.radius, "radius"))

    @classmethod
    def centered(cls, d: int, radius: float) -> Ball:
        """``B(0, radius)`` in ``ℝ^d``."""
        return cls(center=np.zeros(check_count(d, "d")), radius=radius)

    @property
    def d(self) -> int:
        return int(self.center.size)

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    def project(self, x: np.ndarray) -> np.ndarray:
        """Exact Π_𝒲 of ``x (..., d)`` (Assumption 1.1(2): projection-friendly)."""
        return project_ball(x, self.radius, self.center)

    def to_dict(self) -> dict:
        return {"center": self.center.tolist(), "radius": self.radius}


ELLIPSOID_NEWTON_STEPS = 100
"""Iteration cap of the batched Newton solve in :meth:`Ellipsoid.project` (it converges
monotonically, typically < 10)."""


@dataclass(frozen=True, eq=False, kw_only=True)
class Ellipsoid:
    """The domain 𝒲 = {w : (w − c)ᵀ A (w − c) ≤ 1}, ``A (d, d)`` symmetric positive definite (Cor
    D.7).

    ``diameter = 2/√λ_min(A)`` (exact).  :meth:`project` is exact and batched: with ``A = QΛQᵀ`` and
    ``z = Qᵀ(u − c)``, ``Π(u) = c + Q (z/(1 + μλ))`` where μ ≥ 0 solves the secular equation ``Σ λ_i
    z_i²/(1 + μλ_i)² = 1``; Newton on ``ψ(μ) = g(μ)^{−1/2} − 1`` (concave, increasing) from μ = 0
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
        """Exact Euclidean projection of ``x (..., d)`` onto the ellipsoid (batched
        secular-equation Newton)."""
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


@dataclass(frozen=True, eq=False, kw_only=True)
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
        return cls(G=np.r_[eye, -eye], h=np.r_[hi, -lo])

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
        """Last point of the segment ``anchor → x`` inside the polytope (``anchor (..., d)``
        inside); ``(..., d)``."""
        direction = x - anchor
        step = direction @ self.G.T
        slack = np.maximum(self.h - anchor @ self.G.T, 0.0)
        ratio = np.where(step > 0, slack / np.where(step > 0, step, 1.0), np.inf)
        s = np.minimum(1.0, ratio.min(axis=-1))
        return anchor + s[..., None] * direction

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection of ``x (..., d)`` (SLSQP QP per outside point, loop; exact up to
        ~1e-10)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.d).copy()
        cons = {"type": "ineq", "fun": lambda w: self.h - self.G @ w, "jac": lambda w: -self.G}
        for i in np.flatnonzero(~self.contains(flat, 0.0)):
            u = flat[i]
            start = self.pull_inside(self.center, u)
            res = optimize.minimize(
                lambda w, u=u: 0.5 * np.sum((w - u) ** 2),
                start,
                jac=lambda w, u=u: w - u,
                constraints=[cons],
                method="SLSQP",
                options={"ftol": 1e-15, "maxiter": 500},
            )
            flat[i] = self.pull_inside(self.center, res.x if np.all(np.isfinite(res.x)) else start)
        return flat.reshape(x.shape)

    def to_dict(self) -> dict:
        return {"G": self.G.tolist(), "h": self.h.tolist()}


def inexact_projection(
    u: np.ndarray,
    domain: Ball | Ellipsoid | Polytope,
    *,
    center: np.ndarray,
    r: float,
    zeta: float,
) -> tuple[np.ndarray, int]:
    """ζ-inexact projection onto ``K = 𝒲 ∩ B(c, r)`` using only Π_𝒲 (Lemma 2.8 / C.6, InexactProj)
    [H].

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
    r, zeta = check_positive(r, "r"), check_positive(zeta, "zeta")
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
    # x(μ_hi) lies in K up to rounding; a last radial pull keeps p ∈ K exactly (moves it by ≤
    # rounding)
    p = project_ball(p, r, center)
    return np.where(inside[..., None], first, p), calls + 1
