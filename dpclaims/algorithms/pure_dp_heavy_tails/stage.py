"""One certified stage solve of Lowy 2026 (shared by Algorithms 2 and 4), the §7(a) worst-valid-
point harness that moves its output, and the result record of every ``run``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.algorithms.pure_dp_heavy_tails.adapsg import adapsg, joint_objective, unit_vectors
from dpclaims.algorithms.pure_dp_heavy_tails.domains import Ball, inexact_projection
from dpclaims.algorithms.pure_dp_heavy_tails.extension1d import ClippedSlopes1D, item_arrays
from dpclaims.algorithms.pure_dp_heavy_tails.pv2 import PolyhedralTerms, pv2_minimize
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_finite_array

__all__ = ["WorstValidPoint", "HeavyTailedRun", "check_center", "CertifiedSolve"]


@dataclass(frozen=True, eq=False, kw_only=True)
class WorstValidPoint:
    """Adversarial-but-valid solver harness of spec §7(a).

    The privacy theorem must hold for *every* certified solver output, i.e. any point within τ of
    the exact minimizer.  The harness moves the exact minimizer by ``−τ·direction`` on datasets that
    contain the record ``marker`` (a row ``(x, y)`` of D) and by ``+τ·direction`` otherwise, then
    projects back onto the stage's domain (non-expansive, so still within τ).  Without it an exact
    solver uses only half of each stage's sensitivity budget and mutant M1 looks private.
    """

    marker_x: np.ndarray
    marker_y: float | None
    direction: np.ndarray

    @classmethod
    def for_record(cls, data: UserDataset, record: int = 0, direction=None) -> WorstValidPoint:
        """Harness keyed on ``data``'s record ``record`` (default direction ``e_1``)."""
        x, y = item_arrays(data)
        u = np.zeros(data.d)
        u[0] = 1.0
        u = u if direction is None else unit_vectors(check_finite_array(direction, "direction"))
        marker_y = None if y is None else float(y[record])
        return cls(marker_x=x[record].copy(), marker_y=marker_y, direction=u)

    def offset(self, data: UserDataset) -> np.ndarray:
        """``−direction`` if ``data`` contains the marker record, else ``+direction``: ``(d,)``."""
        x, y = item_arrays(data)
        hit = np.all(x == self.marker_x, axis=1)
        if self.marker_y is not None and y is not None:
            hit &= y == self.marker_y
        return -self.direction if bool(hit.any()) else self.direction


@dataclass(frozen=True, kw_only=True)
class HeavyTailedRun:
    """Result of ``run``: ``theta (trials, d)``, ``gradient_evaluations (trials,)`` and, when asked,
    ``transcript`` = the intermediate releases a white-box audit needs (name → array, trial axis
    first)."""

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


def check_center(center, trials: int, d: int, default: np.ndarray) -> np.ndarray:
    """Regularization centres ``(trials, d)`` from ``center`` (None → ``default``, ``(d,)`` or
    ``(trials, d)``)."""
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


@dataclass(frozen=True, kw_only=True)
class CertifiedSolve:
    """One certified solve of ``min_{K} F̂^{K_y}_{C,λ}`` with the harness applied; shared by
    Algorithms 2 and 4."""

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
        *,
        local: np.ndarray | None = None,
        r: float = 0.0,
        harness: WorstValidPoint | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Certified point ``(T, d)`` within τ of ``argmin_K``, K = 𝒲 (``local`` None) or 𝒲 ∩
        B(local_t, r); and gradient evaluations per trial ``(T,)``."""
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
        return self.project(moved, local, r), evals

    def _interval(self, local, r, trials):
        lo = np.full(trials, self.domain.center[0] - self.domain.radius)
        hi = np.full(trials, self.domain.center[0] + self.domain.radius)
        if local is not None:
            lo, hi = np.maximum(lo, local[:, 0] - r), np.minimum(hi, local[:, 0] + r)
        return lo, hi

    def project(self, u: np.ndarray, local, r, zeta: float | None = None) -> np.ndarray:
        """``u (T, d)`` onto K = 𝒲 (``local`` None) or 𝒲 ∩ B(local_t, r) (ζ-inexact, default τ)."""
        if local is None:
            return self.domain.project(u)
        if u.shape[-1] == 1:
            lo, hi = self._interval(local, r, u.shape[0])
            return np.clip(u[:, 0], lo, hi)[:, None]
        zeta = self.tau if zeta is None else zeta
        return inexact_projection(u, self.domain, center=local, r=r, zeta=zeta)[0]

    def _pv2(
        self, data: UserDataset, center: np.ndarray, local, r
    ) -> tuple[np.ndarray, np.ndarray]:
        """PV-2 (spec §2.9): certified ‖w − argmin‖ ≤ τ/2 via duality gap ≤ λτ²/8 (α_target =
        α/4)."""
        x, y = item_arrays(data, center.shape[1])
        shared = local is None and bool(np.all(center == center[:1]))
        res = pv2_minimize(
            PolyhedralTerms.from_loss(self.loss, x, y, clip=self.clip),
            lam=self.lam,
            center=center[:1] if shared else center,
            domain=self.domain,
            local=local,
            r=r,
            target_gap=self.alpha / 4.0,
            max_iterations=self.max_iterations,
        )
        trials = center.shape[0]
        # one data-only solve when every trial shares the centre (e.g. stage 1): the same
        # deterministic point
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
        x, y = item_arrays(data, center.shape[1])
        n = x.shape[0]
        diam = self.domain.diameter if local is None else min(self.domain.diameter, 2.0 * r)
        if self.extension_domain == "W" and local is not None:
            diam = self.domain.diameter
        radius = math.sqrt(n + 1) * diam
        start = center if local is None else local
        start = self.project(self.domain.project(start), local, r)
        x1 = np.repeat(start[:, None, :], n + 1, axis=1)

        def grad(state):
            return joint_objective(
                state, self.loss, x=x, y=y, clip=self.clip, lam=self.lam, center=center
            )[1]

        def project(u, zeta):
            block_zeta = float(np.min(zeta)) / math.sqrt(n + 1)
            if local is None:
                return self.domain.project(u), 1
            loc = local[:, None, :]
            w, used = inexact_projection(u[:, :1], self.domain, center=loc, r=r, zeta=block_zeta)
            if self.extension_domain == "W":
                return np.concatenate([w, self.domain.project(u[:, 1:])], axis=1), used
            ys, used_y = inexact_projection(u[:, 1:], self.domain, center=loc, r=r, zeta=block_zeta)
            return np.concatenate([w, ys], axis=1), used + used_y

        result = adapsg(
            grad, project, x1, radius=radius, alpha=self.alpha, max_iterations=self.max_iterations
        )
        return result.point[:, 0, :], result.iterations.astype(float) * n
