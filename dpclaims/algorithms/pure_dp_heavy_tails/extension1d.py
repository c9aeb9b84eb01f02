"""The 1-d Lipschitz extension of Lowy 2026 as derivative clipping (spec §2.0 identity, PV-1):
exact minimizers of ``F̂_{C,λ}`` for absolute / hinge / linear losses in ``O(n log n)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.losses import AbsoluteLoss, HingeLoss, LinearLoss

__all__ = ["item_arrays", "ClippedSlopes1D"]


def item_arrays(data: UserDataset, d: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``x (n, d)`` and ``y (n,)`` (or None) of an item-level dataset (m = 1), checked."""
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a dpclaims.UserDataset, got {type(data).__name__}")
    if data.m != 1:
        raise InputError(
            f"spec 003 is item level (one item per record); data must have m = 1, got m = {data.m}"
        )
    if d is not None and data.d != d:
        raise InputError(f"data has d = {data.d} features, but the algorithm was built for d = {d}")
    return data.x[:, 0, :], None if data.y is None else data.y[:, 0]


@dataclass(frozen=True, kw_only=True)
class ClippedSlopes1D:
    """``ψ(w) = (1/n)Σ clamp(f′(w, z_i), −C, C)``: the derivative of ``F̂^K_C`` in d = 1 (spec §2.0
    identity).

    Each record contributes a non-decreasing step: slope ``L_i`` left of its breakpoint ``b_i`` and
    ``R_i ≥ L_i`` right of it (clamped to ``[−C, C]``).  Stored sorted: ``breaks (K,)`` and ``levels
    (K+1,)`` = the value of ψ − λ(w − w̄) on each segment.  The regularized minimizer over an
    interval is the clipped root of ψ + λ(w − w̄) (1-d convexity; the extension relative to K and to
    𝒲 share the argmin over K, which resolves N1 in d = 1).  ``C = inf`` gives the raw loss (mutant
    M3).
    """

    breaks: np.ndarray
    levels: np.ndarray
    n: int
    clip: float

    @classmethod
    def from_data(cls, data: UserDataset, loss: Any, clip: float) -> ClippedSlopes1D:
        """Breakpoints of absolute ``|xw − y|``, hinge ``max(0, 1 − yxw)`` and linear ``−s·x·w``
        losses."""
        x, y = item_arrays(data, 1)
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
        return cls(breaks=breaks[order], levels=levels, n=n, clip=c)

    def slope(self, w: np.ndarray) -> np.ndarray:
        """Right derivative ``ψ_+(w)`` of the data term at ``w (...)``."""
        return self.levels[np.searchsorted(self.breaks, w, side="right")]

    def root(self, center: np.ndarray, lam: float) -> np.ndarray:
        """Unconstrained minimizer of ``F̂_C + (λ/2)(w − w̄)²`` for every centre ``w̄ (T,)`` →
        ``(T,)``.

        With ``t = λ w̄``, ``k = #{j : λ b_j + levels[j+1] ≤ t}``: ``w = min((t − levels[k])/λ,
        b_{k+1})``.
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
