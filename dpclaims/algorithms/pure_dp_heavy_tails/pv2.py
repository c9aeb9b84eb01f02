"""PV-2, the certified structured solver of spec 003 §2.9 for the Cor D.7 losses (absolute, hinge,
affine) on balls, ellipsoids and polytopes: batched FISTA on the box dual, stopped at a duality gap
that certifies the distance to the minimizer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.domains import (
    Ball,
    Ellipsoid,
    Polytope,
    inexact_projection,
    project_ball,
)
from dpclaims.errors import InputError, MechanismError, check_count, check_positive
from dpclaims.losses import AbsoluteLoss, HingeLoss, LinearLoss

__all__ = [
    "PV2_MAX_ITERATIONS",
    "PV2Result",
    "PolyhedralTerms",
    "polyhedral_form",
    "pv2_minimize",
]

PV2_MAX_ITERATIONS = 50_000
"""Iteration cap of :func:`pv2_minimize` (FISTA on the box dual); hitting it raises, never an
uncertified output."""


def polyhedral_form(loss: Any, x: np.ndarray, y: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Write each GLM loss as ``f(w, z_i) = max_{θ ∈ [lo_i, hi_i]} θ(⟨a_i, w⟩ + e_i)`` (Cor D.7
    losses).

    absolute ``|⟨x,w⟩ − y|``: ``a = x, e = −y, θ ∈ [−1, 1]``; hinge ``max(0, 1 − y⟨x,w⟩)``:
    ``a = −y x, e = 1, θ ∈ [0, 1]``; linear ``−s⟨x,w⟩``: ``a = −s x, e = 0, θ = 1``.  ``L_{z_i} =
    ‖a_i‖``.

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


@dataclass(frozen=True, kw_only=True)
class PolyhedralTerms:
    """The PV-2 data term ``(1/n)Σ c_i max_{θ∈[lo_i,hi_i]} θ(⟨a_i, w⟩ + e_i)``.

    ``a (n, d)``, ``e, lo, hi (n,)`` from :func:`polyhedral_form`; ``weights (n,)`` are
    ``c_i = min(1, C/‖a_i‖)`` (each term convex and C-Lipschitz, ``= f`` when ``L_z ≤ C``).
    """

    a: np.ndarray
    e: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    weights: np.ndarray

    @classmethod
    def from_loss(
        cls, loss: Any, x: np.ndarray, y: np.ndarray | None, *, clip: float
    ) -> PolyhedralTerms:
        """The terms of ``loss`` on records ``x (n, d)``, ``y (n,)`` at clipping level ``clip``
        (``inf`` allowed)."""
        a, e, lo, hi = polyhedral_form(loss, x, y)
        clip = float(clip)
        norm = np.linalg.norm(a, axis=1)
        c = np.divide(clip, norm, out=np.ones_like(norm), where=norm > clip)  # C may be ∞
        return cls(a=a, e=e, lo=lo, hi=hi, weights=c)

    def primal(self, p: np.ndarray, *, lam: float, center: np.ndarray) -> np.ndarray:
        """PV-2 objective ``P(p) = data term + (λ/2)‖p − w̄‖²`` at ``p (T, d)``: ``(T,)``."""
        u = p @ self.a.T + self.e
        data = (self.weights * np.where(u > 0, self.hi * u, self.lo * u)).mean(axis=1)
        return data + 0.5 * lam * np.sum((p - center) ** 2, axis=1)


def _pv2_polytope(
    terms: PolyhedralTerms, *, lam, center, domain: Polytope, local, r, target_gap, max_iterations
):
    """PV-2 on a polytope 𝒲 = {G w ≤ h}: the constraints are dualized (multipliers μ ≥ 0), so the
    dual is ``D(θ, μ) = (1/n)Σ c_i θ_i e_i − μᵀh' + min_{w∈B} [⟨v_θ + G'ᵀμ, w⟩ + (λ/2)‖w − w̄‖²]``
    with B = ℝ^d or B(local_t, r) — a closed-form inner minimizer q (no QP).  ``G' = sG, h' = sh``
    with ``s = ‖ac‖/‖G‖`` balances the two blocks for FISTA (same set).  The primal candidate ``p ∈
    K`` is the last point of the segment from a strictly feasible anchor (the Chebyshev centre, or
    local_t moved toward it while staying in B) to q.  ``D ≤ min_K P`` by weak duality, so ``P(p) −
    D ≤ gap`` certifies ``‖p − argmin_K P‖ ≤ √(2·gap/λ)`` exactly as on the ball."""
    a, e, lo, hi, c = terms.a, terms.e, terms.lo, terms.hi, terms.weights
    ac, ec = c[:, None] * a / a.shape[0], c * e / a.shape[0]
    trials, n = center.shape[0], a.shape[0]
    tiny = np.finfo(float).tiny
    s = max(np.linalg.norm(ac, 2), tiny) / np.linalg.norm(domain.G, 2)
    gs, hs = s * domain.G, s * domain.h
    if local is None:
        anchor = np.broadcast_to(domain.center, center.shape)
    else:
        r = check_positive(r, "r")
        to_c = domain.center - local
        t = np.minimum(0.5, 0.5 * r / np.maximum(np.linalg.norm(to_c, axis=1), tiny))
        anchor = local + t[:, None] * to_c

    def inner(theta, mu):
        v = theta @ ac + mu @ gs
        u = center - v / lam
        if local is None:
            q = u
        else:
            q = project_ball(u, r, local)
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
    for it in range(1, check_count(max_iterations, "max_iterations") + 1):
        q, dual = inner(theta, mu)
        p = domain.pull_inside(anchor, q)
        gap = terms.primal(p, lam=lam, center=center) - dual
        cert = ~done & (gap <= target_gap)
        out[cert], gap_out[cert], iterations[cert] = p[cert], np.maximum(gap[cert], 0.0), it
        done |= cert
        if done.all():
            return PV2Result(point=out, gap=gap_out, iterations=iterations)
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


@dataclass(frozen=True, kw_only=True)
class PV2Result:
    """Output of :func:`pv2_minimize`: ``point (T, d)`` in K, certified ``gap (T,)`` and
    ``iterations (T,)``."""

    point: np.ndarray
    gap: np.ndarray
    iterations: np.ndarray


def pv2_minimize(
    terms: PolyhedralTerms,
    *,
    lam: float,
    center: np.ndarray,
    domain: Ball | Ellipsoid | Polytope,
    local: np.ndarray | None = None,
    r: float = 0.0,
    target_gap: float = 1e-8,
    max_iterations: int = PV2_MAX_ITERATIONS,
) -> PV2Result:
    """Certified minimizer of the PV-2 objective over ``K = 𝒲`` or ``K = 𝒲 ∩ B(local_t, r)`` (spec
    §2.9 PV-2).

    𝒲 may be a :class:`Ball`, an :class:`Ellipsoid` (both through their exact batched projection) or
    a :class:`Polytope` (constraints dualized, see :func:`_pv2_polytope`): the structured case of
    Prop D.6 / Cor D.7 on balls, ellipsoids and polytopes, with the same duality-gap certificate.

    ``P(w) = (1/n)Σ c_i f(w, z_i) + (λ/2)‖w − w̄_t‖²`` with ``c_i = min(1, C/L_{z_i})`` (each term
    is convex and C-Lipschitz, ``= f`` when ``L_z ≤ C``).  For absolute / hinge losses it coincides
    on 𝒲 with the paper's extension ``f^𝒲_C`` at every w whose foot on the record's kink hyperplane
    lies in 𝒲 (``f(y) ≥ C·dist(y, H)``); over a small K it is the extension over ℝ^d (the spec's
    labelled deviation).  Batched FISTA ascent on the box dual ``D(θ) = (1/n)Σ c_i θ_i e_i +
    min_{w∈K} [⟨v_θ, w⟩ + (λ/2)‖w − w̄‖²]``, ``v_θ = (1/n)Σ c_i θ_i a_i``; the primal candidate is
    the (inexact) projection ``p = Π̃_K(w̄ − v_θ/λ) ∈ K`` and the inner minimum is lowered by ``L_h
    ζ`` so D stays a valid lower bound.  Each trial stops at ``P(p) − D(θ) ≤ target_gap``, which
    certifies ``‖p − argmin_K P‖ ≤ √(2·gap/λ)`` (λ-strong convexity); the cap raises.

    Parameters
    ----------
    terms : the data term (:class:`PolyhedralTerms`, weights ``c_i`` included)
    center : (T, d) regularization centres w̄_t; local : (T, d) or None

    Returns
    -------
    PV2Result with ``point (T, d)``, ``gap (T,)`` (certified duality gap) and ``iterations (T,)``.
    """
    lam, target_gap = check_positive(lam, "lam"), check_positive(target_gap, "target_gap")
    if isinstance(domain, Polytope):
        return _pv2_polytope(
            terms,
            lam=lam,
            center=center,
            domain=domain,
            local=local,
            r=r,
            target_gap=target_gap,
            max_iterations=max_iterations,
        )
    a, e, lo, hi, c = terms.a, terms.e, terms.lo, terms.hi, terms.weights
    n = a.shape[0]
    ac, ec = c[:, None] * a / n, c * e / n
    trials = center.shape[0]
    zeta = 0.0
    if local is not None:
        reach = np.linalg.norm(center - local, axis=1).max() + r
        zeta = 1e-3 * target_gap / (np.linalg.norm(ac, axis=1).sum() + lam * reach)

    def inner(theta):
        v = theta @ ac
        u = center - v / lam
        if local is None:
            p = domain.project(u)
        else:
            p = inexact_projection(u, domain, center=local, r=r, zeta=zeta)[0]
        value = np.sum(v * p, axis=1) + 0.5 * lam * np.sum((p - center) ** 2, axis=1)
        slack = 0.0 if local is None else zeta * (np.linalg.norm(v, axis=1) + lam * reach)
        return p, theta @ ec + value - slack

    def primal(p):
        return terms.primal(p, lam=lam, center=center)

    step = lam / max(np.linalg.norm(ac, 2) ** 2, np.finfo(float).tiny)
    theta = np.broadcast_to(np.clip(0.0, lo, hi), (trials, n)).copy()
    z, t = theta.copy(), 1.0
    out = np.zeros_like(center)
    gap_out = np.full(trials, np.inf)
    iterations = np.zeros(trials, dtype=np.int64)
    done = np.zeros(trials, dtype=bool)
    for it in range(1, check_count(max_iterations, "max_iterations") + 1):
        p, dual = inner(theta)
        gap = primal(p) - dual
        cert = ~done & (gap <= target_gap)
        out[cert], gap_out[cert], iterations[cert] = p[cert], np.maximum(gap[cert], 0.0), it
        done |= cert
        if done.all():
            return PV2Result(point=out, gap=gap_out, iterations=iterations)
        pz, _ = inner(z)
        new = np.clip(z + step * (pz @ a.T + e) * (c / n), lo, hi)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = new + ((t - 1.0) / t_next) * (new - theta)
        theta, t = np.where(done[:, None], theta, new), t_next
    raise MechanismError(
        f"pv2_minimize hit max_iterations={max_iterations} before certifying duality gap "
        f"{target_gap:g} for {int((~done).sum())} trial(s); raise max_iterations"
    )
