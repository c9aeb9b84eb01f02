"""Per-example losses, vectorised over a trial axis and a batch axis, and projections.

Every loss is a small frozen dataclass with

* ``value(theta, x, y=None) -> (T, *batch)``: per-example losses, no reduction;
* ``grad(theta, x, y=None) -> (T, *batch, d)``: per-example (sub)gradients in ``theta``;
* ``lipschitz(radius, x_bound)``, ``smoothness(x_bound)`` and the property
  ``strong_convexity``: constants that hold on ``‖θ‖ ≤ radius`` and ``‖x‖ ≤ x_bound``.

``theta`` has shape ``(T, d)`` (one row per trial) and ``x`` shape ``(*batch, d)``,
shared by all trials, e.g. ``(n, m, d)`` or ``(B, d)``; labels ``y`` have shape ``batch``.

Generalised linear losses ``ℓ(θ; x, y) = φ(⟨θ, x⟩, y)`` (``glm = True``) also expose
``phi(margin, y)`` and ``dphi(margin, y)`` (the derivative in the margin), so that
per-example gradient norms are ``|dphi|·‖x‖`` and clipped gradient sums are one matmul,
without materialising ``(T, n, d)``.  Non-convex losses have ``convex = False``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from .errors import InputError, check_finite_array, check_positive

__all__ = [
    "SquaredLoss",
    "LogisticLoss",
    "LinearLoss",
    "AbsoluteLoss",
    "HingeLoss",
    "HuberLoss",
    "SmoothedAbsoluteLoss",
    "SquaredDistanceLoss",
    "WeightedSquaredDistanceLoss",
    "L1DistanceLoss",
    "CauchyLoss",
    "QuadraticFormLoss",
    "SoftplusNetwork",
    "project_l2_ball",
    "uniform_ball",
    "project_box",
    "project_ball_intersection",
]


# --------------------------------------------------------------------------- input checks


def _check_theta(theta, d: int | None = None) -> np.ndarray:
    theta = check_finite_array(theta, "theta")
    if theta.ndim != 2 or 0 in theta.shape:
        raise InputError(
            f"theta must have shape (trials, d) with trials, d >= 1, got shape {theta.shape}; "
            "for a single point pass theta[None, :]"
        )
    if d is not None and theta.shape[1] != d:
        raise InputError(
            f"theta must have {d} columns (the parameter dimension), got shape {theta.shape}"
        )
    return theta


def _check_x(x, d: int) -> np.ndarray:
    x = check_finite_array(x, "x")
    if x.ndim < 1 or x.shape[-1] != d:
        raise InputError(
            f"x must have shape (..., d) with d = {d} (matching theta), got shape {x.shape}"
        )
    return x


def _check_y(y, batch_shape: tuple, loss: str, required: bool) -> np.ndarray | None:
    if y is None:
        if required:
            raise InputError(
                f"{loss} needs labels: pass y with shape {batch_shape} (the batch shape of x)"
            )
        return None
    if not required:
        raise InputError(f"{loss} takes no labels; pass y=None")
    y = check_finite_array(y, "y")
    if y.shape != batch_shape:
        raise InputError(f"y must have the batch shape of x, {batch_shape}, got shape {y.shape}")
    return y


def _check_signs(y: np.ndarray, loss: str) -> None:
    if not np.all(np.abs(y) == 1.0):
        raise InputError(f"{loss} needs labels y in {{-1, +1}}; map 0/1 labels with y = 2*y - 1")


def _bounds(radius, x_bound) -> tuple[float, float]:
    return check_positive(radius, "radius", allow_zero=True), check_positive(
        x_bound, "x_bound", allow_zero=True
    )


def _margins(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``⟨θ_t, x_b⟩`` for every trial and example: ``(T, d), (*batch, d) -> (T, *batch)``."""
    flat = x.reshape(-1, x.shape[-1])
    return (flat @ theta.T).T.reshape((theta.shape[0],) + x.shape[:-1])


# --------------------------------------------------------------------------- GLM losses


class _GLMLoss:
    """Shared value/grad of ``ℓ(θ; x, y) = φ(⟨θ, x⟩, y)``; subclasses define phi and dphi."""

    glm = True
    convex = True
    needs_labels = True

    @property
    def strong_convexity(self) -> float:
        """0: the Hessian ``φ''·xxᵀ`` has rank one, so no GLM is strongly convex in d ≥ 2."""
        return 0.0

    def _inputs(self, theta, x, y):
        theta = _check_theta(theta)
        x = _check_x(x, theta.shape[1])
        y = _check_y(y, x.shape[:-1], type(self).__name__, self.needs_labels)
        return theta, x, y

    def value(self, theta, x, y=None) -> np.ndarray:
        """Per-example loss: theta (T, d), x (*batch, d), y (*batch) → (T, *batch)."""
        theta, x, y = self._inputs(theta, x, y)
        return self.phi(_margins(theta, x), y)

    def grad(self, theta, x, y=None) -> np.ndarray:
        """Per-example gradient ``dphi(⟨θ, x⟩, y)·x``: → ``(T, *batch, d)``."""
        theta, x, y = self._inputs(theta, x, y)
        return self.dphi(_margins(theta, x), y)[..., None] * x

    def _y(self, y):
        if self.needs_labels and y is None:
            raise InputError(f"{type(self).__name__} needs labels y")
        if not self.needs_labels and y is not None:
            raise InputError(f"{type(self).__name__} takes no labels; pass y=None")
        return None if y is None else np.asarray(y, dtype=np.float64)


@dataclass(frozen=True)
class SquaredLoss(_GLMLoss):
    """Least squares ``φ(u, y) = (u − y)²/2``.

    On ``‖θ‖ ≤ R``, ``‖x‖ ≤ X``, ``|y| ≤ Y``: Lipschitz ``(RX + Y)X``, smoothness ``X²``.
    """

    def phi(self, margin, y=None) -> np.ndarray:
        """``(u − y)²/2``, elementwise (broadcasting)."""
        return 0.5 * (np.asarray(margin) - self._y(y)) ** 2

    def dphi(self, margin, y=None) -> np.ndarray:
        """``u − y``."""
        return np.asarray(margin) - self._y(y)

    def lipschitz(self, radius, x_bound, y_bound=1.0) -> float:
        """``(R·X + Y)·X`` on ``‖θ‖ ≤ R``, ``‖x‖ ≤ X``, ``|y| ≤ Y``."""
        radius, x_bound = _bounds(radius, x_bound)
        y_bound = check_positive(y_bound, "y_bound", allow_zero=True)
        return (radius * x_bound + y_bound) * x_bound

    def smoothness(self, x_bound) -> float:
        """``X²`` (the Hessian is ``xxᵀ``)."""
        return check_positive(x_bound, "x_bound", allow_zero=True) ** 2


@dataclass(frozen=True)
class LogisticLoss(_GLMLoss):
    """Logistic loss ``φ(u, y) = ln(1 + e^{−yu})`` with labels ``y ∈ {−1, +1}``.

    Lipschitz ``X`` and smoothness ``X²/4`` for ``‖x‖ ≤ X`` (any θ).
    """

    def phi(self, margin, y=None) -> np.ndarray:
        """``ln(1 + exp(−y·u))``, computed stably."""
        y = self._y(y)
        _check_signs(y, "LogisticLoss")
        return -log_expit(y * np.asarray(margin))

    def dphi(self, margin, y=None) -> np.ndarray:
        """``−y·σ(−y·u)``."""
        y = self._y(y)
        _check_signs(y, "LogisticLoss")
        return -y * expit(-y * np.asarray(margin))

    def lipschitz(self, radius, x_bound) -> float:
        """``X`` (|φ'| < 1); ``radius`` is accepted for a uniform signature and not needed."""
        return _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """``X²/4`` (φ'' = σ(1−σ) ≤ 1/4)."""
        return check_positive(x_bound, "x_bound", allow_zero=True) ** 2 / 4.0


@dataclass(frozen=True)
class LinearLoss(_GLMLoss):
    """Linear loss ``ℓ(θ; x) = −scale·⟨θ, x⟩`` (no labels): ``φ(u) = −scale·u``.

    This is the ``f(x; d) = −⟨x, d⟩`` of spec 002 §5 and spec 000 §5.2 (H1); with
    ``scale = −1`` it is the audit loss ``⟨z, x⟩`` of spec 000 §7(a).
    Lipschitz ``|scale|·X``, smoothness 0.
    """

    scale: float = 1.0
    needs_labels = False

    def __post_init__(self) -> None:
        s = self.scale
        if (
            isinstance(s, bool)
            or not isinstance(s, (int, float, np.integer, np.floating))
            or not math.isfinite(s)
        ):
            raise InputError(f"scale must be a finite number, got {s!r}")

    def phi(self, margin, y=None) -> np.ndarray:
        """``−scale·u``."""
        self._y(y)
        return -self.scale * np.asarray(margin, dtype=np.float64)

    def dphi(self, margin, y=None) -> np.ndarray:
        """``−scale`` everywhere (shape of ``margin``)."""
        self._y(y)
        return np.full(np.shape(margin), -float(self.scale))

    def lipschitz(self, radius, x_bound) -> float:
        """``|scale|·X``."""
        return abs(self.scale) * _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """0 (the Hessian vanishes)."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return 0.0


@dataclass(frozen=True)
class AbsoluteLoss(_GLMLoss):
    """Absolute deviation ``φ(u, y) = |u − y|`` (subgradient ``sign(u − y)``, 0 at the kink).

    Lipschitz ``X``; not smooth (``smoothness`` is ``inf``).  A weighted absolute loss
    ``a·|w − b|`` (spec 003 §7(a)) is ``|⟨w, x⟩ − y|`` with ``x = a > 0``, ``y = a·b``.
    """

    def phi(self, margin, y=None) -> np.ndarray:
        """``|u − y|``."""
        return np.abs(np.asarray(margin) - self._y(y))

    def dphi(self, margin, y=None) -> np.ndarray:
        """``sign(u − y)``."""
        return np.sign(np.asarray(margin) - self._y(y))

    def lipschitz(self, radius, x_bound) -> float:
        """``X``."""
        return _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """``inf``: the loss is not differentiable at ``u = y``."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return math.inf


@dataclass(frozen=True)
class HingeLoss(_GLMLoss):
    """Hinge ``φ(u, y) = max(0, 1 − y·u)`` with ``y ∈ {−1, +1}`` (subgradient 0 at the kink).

    Lipschitz ``X``; not smooth.
    """

    def phi(self, margin, y=None) -> np.ndarray:
        """``max(0, 1 − y·u)``."""
        y = self._y(y)
        _check_signs(y, "HingeLoss")
        return np.maximum(0.0, 1.0 - y * np.asarray(margin))

    def dphi(self, margin, y=None) -> np.ndarray:
        """``−y·1[y·u < 1]``."""
        y = self._y(y)
        _check_signs(y, "HingeLoss")
        return np.where(y * np.asarray(margin) < 1.0, -y, 0.0)

    def lipschitz(self, radius, x_bound) -> float:
        """``X``."""
        return _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """``inf`` (kink at ``y·u = 1``)."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return math.inf


@dataclass(frozen=True)
class HuberLoss(_GLMLoss):
    """Huber loss of the residual ``r = u − y``: ``r²/2`` for ``|r| ≤ delta``, else
    ``delta·(|r| − delta/2)``.

    Lipschitz ``delta·X``, smoothness ``X²``.
    """

    delta: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.delta, "delta")

    def phi(self, margin, y=None) -> np.ndarray:
        """Huber value of ``u − y``."""
        r = np.abs(np.asarray(margin) - self._y(y))
        return np.where(r <= self.delta, 0.5 * r**2, self.delta * (r - 0.5 * self.delta))

    def dphi(self, margin, y=None) -> np.ndarray:
        """``clip(u − y, −delta, delta)``."""
        return np.clip(np.asarray(margin) - self._y(y), -self.delta, self.delta)

    def lipschitz(self, radius, x_bound) -> float:
        """``delta·X``."""
        return self.delta * _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """``X²``."""
        return check_positive(x_bound, "x_bound", allow_zero=True) ** 2


@dataclass(frozen=True)
class SmoothedAbsoluteLoss(_GLMLoss):
    """Moreau envelope of ``|r|``, ``r = u − y``, with parameter ``smoothing`` = λ.

    ``M_λ(r) = min_s |s| + (r − s)²/(2λ)`` = ``r²/(2λ)`` for ``|r| ≤ λ`` and ``|r| − λ/2`` beyond
    (``|r| − λ/2 ≤ M_λ(r) ≤ |r|``).  Lipschitz ``X``, smoothness ``X²/λ``.
    """

    smoothing: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.smoothing, "smoothing")

    def phi(self, margin, y=None) -> np.ndarray:
        """``M_λ(u − y)``."""
        r = np.abs(np.asarray(margin) - self._y(y))
        lam = self.smoothing
        return np.where(r <= lam, r**2 / (2.0 * lam), r - 0.5 * lam)

    def dphi(self, margin, y=None) -> np.ndarray:
        """``clip((u − y)/λ, −1, 1)``."""
        return np.clip((np.asarray(margin) - self._y(y)) / self.smoothing, -1.0, 1.0)

    def lipschitz(self, radius, x_bound) -> float:
        """``X``."""
        return _bounds(radius, x_bound)[1]

    def smoothness(self, x_bound) -> float:
        """``X²/λ``."""
        return check_positive(x_bound, "x_bound", allow_zero=True) ** 2 / self.smoothing


# --------------------------------------------------------------------------- distance losses


class _PointLoss:
    """Losses of ``θ − x`` (mean-estimation type): ``x`` has the dimension of ``θ``."""

    glm = False
    convex = True
    needs_labels = False

    def _inputs(self, theta, x, y):
        theta = _check_theta(theta)
        x = _check_x(x, theta.shape[1])
        y = _check_y(y, x.shape[:-1], type(self).__name__, self.needs_labels)
        return theta, x, y

    @staticmethod
    def _diff(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``θ_t − x_b``: ``(T, *batch, d)``."""
        return theta.reshape((theta.shape[0],) + (1,) * (x.ndim - 1) + (theta.shape[1],)) - x


@dataclass(frozen=True)
class SquaredDistanceLoss(_PointLoss):
    """``ℓ(θ; x) = (strength/2)·‖θ − x‖²`` (mean estimation; H4 of spec 000 §5.2, spec 001 §5.3).

    On ``‖θ‖ ≤ R``, ``‖x‖ ≤ X``: Lipschitz ``strength·(R + X)``, smoothness and strong
    convexity ``strength``.
    """

    strength: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.strength, "strength")

    def value(self, theta, x, y=None) -> np.ndarray:
        """``(strength/2)‖θ − x‖²``: → ``(T, *batch)``."""
        theta, x, _ = self._inputs(theta, x, y)
        return 0.5 * self.strength * np.sum(self._diff(theta, x) ** 2, axis=-1)

    def grad(self, theta, x, y=None) -> np.ndarray:
        """``strength·(θ − x)``: → ``(T, *batch, d)``."""
        theta, x, _ = self._inputs(theta, x, y)
        return self.strength * self._diff(theta, x)

    def lipschitz(self, radius, x_bound) -> float:
        """``strength·(R + X)``."""
        radius, x_bound = _bounds(radius, x_bound)
        return self.strength * (radius + x_bound)

    def smoothness(self, x_bound) -> float:
        """``strength``."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return self.strength

    @property
    def strong_convexity(self) -> float:
        """``strength``."""
        return self.strength


@dataclass(frozen=True)
class WeightedSquaredDistanceLoss(_PointLoss):
    """``ℓ(θ; x, y) = y·(strength/2)·‖θ − x‖²`` with a per-example weight ``y ∈ [−1, 1]``.

    The DIFF2 audit canary of spec 004 §5 / §7(a): ``y = +1`` gives ``ℓ+``, ``y = −1`` gives
    ``ℓ− = −(λ/2)‖θ − c‖²`` and ``y = 0`` a record whose loss and gradient vanish.  Non-convex
    when a weight is negative.  For ``|y| ≤ 1``: Lipschitz ``strength·(R + X)``, smoothness
    ``strength``.
    """

    strength: float = 1.0
    convex = False
    needs_labels = True

    def __post_init__(self) -> None:
        check_positive(self.strength, "strength")

    def value(self, theta, x, y=None) -> np.ndarray:
        """``y·(strength/2)‖θ − x‖²``: → ``(T, *batch)``."""
        theta, x, y = self._inputs(theta, x, y)
        return 0.5 * self.strength * y * np.sum(self._diff(theta, x) ** 2, axis=-1)

    def grad(self, theta, x, y=None) -> np.ndarray:
        """``y·strength·(θ − x)``: → ``(T, *batch, d)``."""
        theta, x, y = self._inputs(theta, x, y)
        return (self.strength * y)[..., None] * self._diff(theta, x)

    def lipschitz(self, radius, x_bound) -> float:
        """``strength·(R + X)`` (weights in [−1, 1])."""
        radius, x_bound = _bounds(radius, x_bound)
        return self.strength * (radius + x_bound)

    def smoothness(self, x_bound) -> float:
        """``strength`` (weights in [−1, 1])."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return self.strength

    @property
    def strong_convexity(self) -> float:
        """0 (weights may be 0 or negative)."""
        return 0.0


@dataclass(frozen=True)
class L1DistanceLoss(_PointLoss):
    """``ℓ(θ; z) = (scale/√d)·‖θ − z‖₁`` (H3 of spec 000 §5.2; ``|θ − z|`` in d = 1, spec 001 RT-8).

    Subgradient ``(scale/√d)·sign(θ − z)`` (0 at a kink), so it is ``scale``-Lipschitz in ℓ2
    for every d; not smooth.
    """

    scale: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.scale, "scale")

    def value(self, theta, x, y=None) -> np.ndarray:
        """``(scale/√d)Σ_k |θ_k − x_k|``: → ``(T, *batch)``."""
        theta, x, _ = self._inputs(theta, x, y)
        return (
            self.scale / math.sqrt(theta.shape[1]) * np.sum(np.abs(self._diff(theta, x)), axis=-1)
        )

    def grad(self, theta, x, y=None) -> np.ndarray:
        """``(scale/√d)·sign(θ − x)``: → ``(T, *batch, d)``."""
        theta, x, _ = self._inputs(theta, x, y)
        return self.scale / math.sqrt(theta.shape[1]) * np.sign(self._diff(theta, x))

    def lipschitz(self, radius, x_bound) -> float:
        """``scale`` (any domain)."""
        _bounds(radius, x_bound)
        return self.scale

    def smoothness(self, x_bound) -> float:
        """``inf``."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return math.inf

    @property
    def strong_convexity(self) -> float:
        """0."""
        return 0.0


@dataclass(frozen=True)
class CauchyLoss(_PointLoss):
    """Cauchy / Lorentzian loss ``ℓ(θ; z) = (s²/2)·ln(1 + ‖θ − z‖²/s²)`` (spec 004 §7(b)).

    ``∇ℓ = (θ − z)/(1 + ‖θ − z‖²/s²)``, ``‖∇ℓ‖ ≤ s/2`` (attained at ``‖θ − z‖ = s``).  The
    Hessian eigenvalues lie in ``[−1/8, 1]`` for every s, so the loss is 1-smooth and
    non-convex (radial curvature < 0 when ``‖θ − z‖ > s``).
    """

    scale: float = 1.0
    convex = False

    def __post_init__(self) -> None:
        check_positive(self.scale, "scale")

    def value(self, theta, x, y=None) -> np.ndarray:
        """``(s²/2) ln(1 + ‖θ − x‖²/s²)``: → ``(T, *batch)``."""
        theta, x, _ = self._inputs(theta, x, y)
        s2 = self.scale**2
        return 0.5 * s2 * np.log1p(np.sum(self._diff(theta, x) ** 2, axis=-1) / s2)

    def grad(self, theta, x, y=None) -> np.ndarray:
        """``(θ − x)/(1 + ‖θ − x‖²/s²)``: → ``(T, *batch, d)``."""
        theta, x, _ = self._inputs(theta, x, y)
        diff = self._diff(theta, x)
        return diff / (1.0 + np.sum(diff**2, axis=-1, keepdims=True) / self.scale**2)

    def lipschitz(self, radius, x_bound) -> float:
        """``g(R + X)`` with ``g(r) = r/(1 + r²/s²)`` if ``R + X < s``, else the global ``s/2``."""
        radius, x_bound = _bounds(radius, x_bound)
        r = radius + x_bound
        return r / (1.0 + r**2 / self.scale**2) if r < self.scale else self.scale / 2.0

    def smoothness(self, x_bound) -> float:
        """1 (largest Hessian eigenvalue, at ``θ = z``), for every scale."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return 1.0

    @property
    def strong_convexity(self) -> float:
        """0 (non-convex; the smallest Hessian eigenvalue is −1/8, see :attr:`weak_convexity`)."""
        return 0.0

    @property
    def weak_convexity(self) -> float:
        """``1/8``: ``ℓ + (1/16)‖θ‖²`` is convex (Hessian eigenvalues ≥ −1/8)."""
        return 0.125


@dataclass(frozen=True, eq=False)
class QuadraticFormLoss:
    """``ℓ(θ; x) = ½θᵀHθ + ⟨b, θ⟩ + ⟨x, θ⟩``: a fixed quadratic plus a data-dependent linear term.

    The stochastic Nesterov-chain instance of spec 002 §5 (H1) is ``H = (M/4)A``,
    ``b = −(Mc/4)e₁`` and items ``x = s·ξ``.  ``hessian (d, d)`` must be symmetric positive
    semi-definite.  On ``‖θ‖ ≤ R``, ``‖x‖ ≤ X``: Lipschitz ``‖H‖R + ‖b‖ + X``, smoothness
    ``‖H‖`` (largest eigenvalue), strong convexity ``λ_min(H)``.
    """

    hessian: np.ndarray
    offset: np.ndarray
    glm = False
    convex = True
    needs_labels = False

    def __post_init__(self) -> None:
        h = check_finite_array(self.hessian, "hessian", ndim=2)
        b = check_finite_array(self.offset, "offset", ndim=1)
        if h.shape != (b.size, b.size):
            raise InputError(
                f"hessian must have shape (d, d) = ({b.size}, {b.size}) to match offset, "
                f"got {h.shape}"
            )
        if not np.allclose(h, h.T, rtol=0, atol=1e-12 * (1 + np.abs(h).max())):
            raise InputError("hessian must be symmetric")
        eig = np.linalg.eigvalsh(h)
        if eig[0] < -1e-10 * max(1.0, abs(eig[-1])):
            raise InputError(
                f"hessian must be positive semi-definite (smallest eigenvalue {eig[0]:.3g})"
            )
        for name, arr in (("hessian", h), ("offset", b)):
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "_eig", (float(max(eig[0], 0.0)), float(eig[-1])))

    @property
    def d(self) -> int:
        """Dimension of θ."""
        return self.offset.size

    def value(self, theta, x, y=None) -> np.ndarray:
        """``½θᵀHθ + ⟨b, θ⟩ + ⟨x, θ⟩``: → ``(T, *batch)``."""
        theta = _check_theta(theta, self.d)
        x = _check_x(x, self.d)
        _check_y(y, x.shape[:-1], "QuadraticFormLoss", False)
        fixed = 0.5 * np.einsum("ti,ij,tj->t", theta, self.hessian, theta) + theta @ self.offset
        return fixed.reshape((-1,) + (1,) * (x.ndim - 1)) + _margins(theta, x)

    def grad(self, theta, x, y=None) -> np.ndarray:
        """``Hθ + b + x``: → ``(T, *batch, d)``."""
        theta = _check_theta(theta, self.d)
        x = _check_x(x, self.d)
        _check_y(y, x.shape[:-1], "QuadraticFormLoss", False)
        fixed = theta @ self.hessian + self.offset
        return fixed.reshape((theta.shape[0],) + (1,) * (x.ndim - 1) + (self.d,)) + x

    def lipschitz(self, radius, x_bound) -> float:
        """``‖H‖R + ‖b‖ + X``."""
        radius, x_bound = _bounds(radius, x_bound)
        return self._eig[1] * radius + float(np.linalg.norm(self.offset)) + x_bound

    def smoothness(self, x_bound) -> float:
        """``‖H‖`` (largest eigenvalue)."""
        check_positive(x_bound, "x_bound", allow_zero=True)
        return self._eig[1]

    @property
    def strong_convexity(self) -> float:
        """``λ_min(H)``."""
        return self._eig[0]


# --------------------------------------------------------------------------- softplus network


def _softplus(z: np.ndarray) -> np.ndarray:
    """``log(1 + e^z)``, stable (and faster than ``np.logaddexp(0, z)``)."""
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


@dataclass(frozen=True)
class SoftplusNetwork:
    """One-hidden-layer softplus network with squared loss (spec 004 §6.2).

    ``f_θ(x) = w₂ᵀ softplus(W₁x + b₁) + b₂`` with ``width`` hidden units (10 in the
    paper) and a scalar output; ``ℓ(θ; x, y) = (f_θ(x) − y)²/2``.  The parameter vector
    ``θ`` of length ``d = width·n_inputs + width + width + 1`` (101 for n_inputs = 8) packs
    ``[W₁ (width, n_inputs) row-major, b₁, w₂, b₂]``.  Here ``x`` has ``n_inputs`` features,
    not ``d``.  The half in ``(f − y)²/2`` follows :class:`SquaredLoss` (PyTorch's MSELoss
    has no half: its gradients are twice these).
    """

    n_inputs: int
    width: int = 10
    glm = False
    convex = False
    needs_labels = True

    def __post_init__(self) -> None:
        for name in ("n_inputs", "width"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"{name} must be a whole number >= 1, got {v!r}")

    @property
    def d(self) -> int:
        """Number of parameters ``width·(n_inputs + 2) + 1``."""
        return self.width * (self.n_inputs + 2) + 1

    def unpack(self, theta) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """theta ``(T, d)`` → W₁ ``(T, width, n_inputs)``, b₁ ``(T, width)``, w₂ ``(T, width)``,
        b₂ ``(T,)``."""
        theta = _check_theta(theta, self.d)
        k, p = self.width, self.n_inputs
        w1 = theta[:, : k * p].reshape(-1, k, p)
        b1 = theta[:, k * p : k * p + k]
        w2 = theta[:, k * p + k : k * p + 2 * k]
        return w1, b1, w2, theta[:, -1]

    def init(self, rng: np.random.Generator, trials: int, literal: bool = False) -> np.ndarray:
        """Initial parameters ``(trials, d)``: uniform on ``±1/√fan_in`` per layer.

        Spec 004 §6.2 [DEFAULT].

        ``literal=True`` uses the printed ``±√fan_in`` instead (spec 004 §6.2 [ERRATA]).
        """
        if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
            raise InputError(f"trials must be a whole number >= 1, got {trials!r}")
        k, p = self.width, self.n_inputs
        b_in, b_out = (
            (math.sqrt(p), math.sqrt(k)) if literal else (1 / math.sqrt(p), 1 / math.sqrt(k))
        )
        first = rng.uniform(-b_in, b_in, size=(trials, k * p + k))
        second = rng.uniform(-b_out, b_out, size=(trials, k + 1))
        return np.concatenate([first, second], axis=1)

    def _forward(self, theta, x):
        w1, b1, w2, b2 = self.unpack(theta)
        x = _check_x(x, self.n_inputs)
        flat = x.reshape(-1, self.n_inputs)
        pre = np.matmul(flat, w1.transpose(0, 2, 1)) + b1[:, None, :]
        hidden = _softplus(pre)
        out = np.einsum("tbk,tk->tb", hidden, w2) + b2[:, None]
        return x, flat, w2, pre, hidden, out

    def predict(self, theta, x) -> np.ndarray:
        """Network outputs ``f_θ(x)``: theta (T, d), x (*batch, n_inputs) → (T, *batch)."""
        x, _, _, _, _, out = self._forward(theta, x)
        return out.reshape((out.shape[0],) + x.shape[:-1])

    def value(self, theta, x, y=None) -> np.ndarray:
        """``(f_θ(x) − y)²/2``: → ``(T, *batch)``."""
        x, _, _, _, _, out = self._forward(theta, x)
        y = _check_y(y, x.shape[:-1], "SoftplusNetwork", True)
        return 0.5 * (out.reshape((out.shape[0],) + x.shape[:-1]) - y) ** 2

    def grad(self, theta, x, y=None) -> np.ndarray:
        """Per-example gradient in θ (packed like θ): → ``(T, *batch, d)``."""
        x, flat, w2, pre, hidden, out = self._forward(theta, x)
        y = _check_y(y, x.shape[:-1], "SoftplusNetwork", True)
        resid = out - y.reshape(-1)  # (T, B)
        t, b = resid.shape
        g_pre = resid[:, :, None] * w2[:, None, :] * expit(pre)  # (T, B, width)
        g_w1 = g_pre[:, :, :, None] * flat[None, :, None, :]  # (T, B, width, n_inputs)
        parts = [g_w1.reshape(t, b, -1), g_pre, resid[:, :, None] * hidden, resid[:, :, None]]
        return np.concatenate(parts, axis=2).reshape((t,) + x.shape[:-1] + (self.d,))

    # A per-example gradient is determined by q = 2·width + 1 numbers once x is known:
    # a = [∂ℓ/∂z (width), ∂ℓ/∂w₂ (width), ∂ℓ/∂b₂] with z = W₁x + b₁, and
    # ∇ℓ = [a_{:k} ⊗ x, a_{:k}, a_{k:}].  The map a ↦ ∇ℓ is linear for fixed x, so differences
    # and weighted sums of per-example gradients (DIFF2's clipped means) can be formed on the
    # factors, at O(width) instead of O(d) per example.

    @property
    def n_factors(self) -> int:
        """Numbers per example in :meth:`grad_factors`: ``2·width + 1``."""
        return 2 * self.width + 1

    def grad_factors(self, theta, x, y=None) -> np.ndarray:
        """Per-example gradients in factored form: theta ``(T, d)``, x ``(B, n_inputs)`` →
        ``(T, B, 2·width+1)``."""
        w1, b1, w2, b2 = self.unpack(theta)
        x = _check_x(x, self.n_inputs)
        if x.ndim != 2:
            raise InputError(f"x must have shape (B, {self.n_inputs}) here, got {x.shape}")
        y = _check_y(y, x.shape[:-1], "SoftplusNetwork", True)
        pre = np.matmul(x, w1.transpose(0, 2, 1)) + b1[:, None, :]  # (T, B, width)
        log1p_e = np.log1p(np.exp(-np.abs(pre)))
        hidden = np.maximum(pre, 0.0) + log1p_e  # softplus(pre)
        sigmoid = np.exp(np.minimum(pre, 0.0) - log1p_e)  # softplus'(pre), from the same exp
        resid = np.matmul(hidden, w2[:, :, None]) + (b2[:, None] - y)[:, :, None]  # (T, B, 1)
        k = self.width
        factors = np.empty(pre.shape[:2] + (self.n_factors,))
        np.multiply(sigmoid, resid * w2[:, None, :], out=factors[..., :k])
        np.multiply(hidden, resid, out=factors[..., k : 2 * k])
        factors[..., 2 * k] = resid[..., 0]
        return factors

    def factor_norms(self, factors: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``‖∇ℓ‖`` of factored gradients: factors ``(T, B, 2·width+1)``, x ``(B, n_inputs)`` →
        ``(T, B)``."""
        k = self.width
        first = np.einsum("tbk,tbk->tb", factors[..., :k], factors[..., :k])
        rest = np.einsum("tbk,tbk->tb", factors[..., k:], factors[..., k:])
        return np.sqrt(first * (1.0 + np.einsum("bi,bi->b", x, x)) + rest)

    def sum_factors(self, factors: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``Σ_b ∇ℓ_b`` from factored gradients (pre-multiply by weights for a weighted sum).

        Returns ``(T, d)``.
        """
        k = self.width
        g_w1 = np.matmul(
            x.T, np.ascontiguousarray(factors[..., :k])
        )  # (T, n_inputs, width), through BLAS
        return np.concatenate(
            [g_w1.transpose(0, 2, 1).reshape(len(factors), -1), factors.sum(axis=1)], axis=1
        )

    def _sizes(self, radius, x_bound, y_bound):
        radius, x_bound = _bounds(radius, x_bound)
        y_bound = check_positive(y_bound, "y_bound", allow_zero=True)
        xt = math.sqrt(1.0 + x_bound**2)  # ‖(x, 1)‖
        hidden = math.sqrt(self.width) * math.log(2.0) + radius * xt  # ≥ ‖softplus(W₁x + b₁)‖
        out = radius * hidden + radius  # ≥ |f_θ(x)|
        grad_f = math.sqrt(hidden**2 + 1.0 + radius**2 * xt**2)  # ≥ ‖∇_θ f_θ(x)‖
        hess_f = xt + radius * xt**2 / 4.0  # ≥ ‖∇²_θ f_θ(x)‖
        return out + y_bound, grad_f, hess_f

    def lipschitz(self, radius, x_bound, y_bound=1.0) -> float:
        """A bound on ``‖∇ℓ‖`` over ``‖θ‖ ≤ R``, ``‖x‖ ≤ X``, ``|y| ≤ Y``: ``(|f|max + Y)·‖∇f‖max``.

        Uses ``softplus(z) ≤ ln 2 + |z|``, so ``‖h‖ ≤ √width·ln 2 + R√(1+X²)``,
        ``|f| ≤ R‖h‖ + R`` and ``‖∇f‖² ≤ ‖h‖² + 1 + R²(1+X²)``.  Valid, not tight.
        """
        resid, grad_f, _ = self._sizes(radius, x_bound, y_bound)
        return resid * grad_f

    def smoothness(self, x_bound, radius, y_bound=1.0) -> float:
        """A bound on ``‖∇²ℓ‖ ≤ ‖∇f‖² + |f − y|·‖∇²f‖`` over the same domain as :meth:`lipschitz`.

        Per hidden unit the Hessian of f couples ``w₂ₖ`` with ``(W₁ₖ, b₁ₖ)`` through
        ``σ(·)(x, 1)`` and has ``w₂ₖσ'(·)(x,1)(x,1)ᵀ`` on the diagonal block, so
        ``‖∇²f‖ ≤ √(1+X²) + R(1+X²)/4``.  Valid, not tight.
        """
        resid, grad_f, hess_f = self._sizes(radius, x_bound, y_bound)
        return grad_f**2 + resid * hess_f

    @property
    def strong_convexity(self) -> float:
        """0 (non-convex)."""
        return 0.0


# --------------------------------------------------------------------------- projections


def _center(center, d: int, name: str) -> np.ndarray:
    if center is None:
        return np.zeros(d)
    center = check_finite_array(center, name)
    if center.shape[-1:] != (d,):
        raise InputError(
            f"{name} must have shape (d,) or (trials, d) with d = {d}, got {center.shape}"
        )
    return center


def _check_points(theta) -> np.ndarray:
    """``theta (..., d)``, at least 2-D, as float64; NaN rows allowed (they stay NaN)."""
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim < 2 or 0 in theta.shape:
        raise InputError(
            f"theta must have shape (trials, d) with trials, d >= 1, got shape {theta.shape}; "
            "for a single point pass theta[None, :]"
        )
    if np.isinf(theta).any():
        raise InputError("theta contains infinite values; a point to project must be finite")
    return theta


def _check_radius(radius) -> float | np.ndarray:
    if np.ndim(radius) == 0:
        return check_positive(radius, "radius", allow_zero=True, allow_inf=True)
    radius = np.asarray(radius, dtype=np.float64)
    if not np.all(radius >= 0):
        raise InputError("radius must be >= 0 everywhere (no NaN); pass e.g. radius=1.0")
    return radius


def project_l2_ball(theta, radius, center=None) -> np.ndarray:
    """Euclidean projection onto ``{‖θ − c‖ ≤ radius}`` (spec 000 §2 P-a), point by point.

    ``theta`` has shape ``(T, d)`` or any ``(..., d)`` (at least 2-D); ``radius`` is a number
    ``>= 0`` (``inf``: no constraint) or an array broadcasting to ``(..., 1)``, one radius per
    point; ``center`` broadcasts to ``theta`` (default 0; e.g. ``(d,)`` or ``(T, d)``).
    Points holding NaN (undefined) stay NaN.  Returns the broadcast shape of theta and center.
    """
    theta = _check_points(theta)
    radius = _check_radius(radius)
    c = _center(center, theta.shape[-1], "center")
    diff = theta - c
    norm = np.linalg.norm(diff, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):  # radius/norm → inf only where the point is kept anyway
        scale = np.where(norm > radius, radius / np.where(norm > 0, norm, 1.0), 1.0)
    return c + diff * scale


def uniform_ball(rng: np.random.Generator, *, shape: tuple, d: int, radius: float) -> np.ndarray:
    """Uniform points in ``B(0, radius) ⊂ R^d`` (spec 001 §2.1 P-e): ``r·U^{1/d}·g/‖g‖``.

    Returns shape ``(*shape, d)``; add a center to sample another ball.
    """
    g = rng.standard_normal(shape + (d,))
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    u = rng.random(shape + (1,)) ** (1.0 / d)
    return radius * u * g / np.where(norm > 0, norm, 1.0)


def project_box(theta, lower, upper) -> np.ndarray:
    """Projection onto the box ``lower ≤ θ ≤ upper`` (coordinate-wise clip; spec 000 §2 P-a).

    ``lower``, ``upper``: scalars or arrays of shape ``(d,)``; ``[−1, 1]`` gives the hypercube.
    """
    theta = _check_theta(theta)
    lo = check_finite_array(lower, "lower")
    hi = check_finite_array(upper, "upper")
    for arr, name in ((lo, "lower"), (hi, "upper")):
        if arr.shape not in ((), (theta.shape[1],)):
            raise InputError(
                f"{name} must be a scalar or have shape (d,) = ({theta.shape[1]},), got {arr.shape}"
            )
    if np.any(lo > hi):
        raise InputError("lower must be <= upper in every coordinate; the box is empty")
    return np.clip(theta, lo, hi)


def project_ball_intersection(theta, radius1, center1, radius2, center2) -> np.ndarray:
    """Exact Euclidean projection onto ``B(c₁, r₁) ∩ B(c₂, r₂)`` (spec 001 §2).

    E.g. ``K ∩ B(θ_{i−1}, R_i)``.

    ``theta (T, d)``; centres of shape ``(d,)``.  If the projection onto one ball lies in
    the other it is the answer; otherwise the projection lies on both spheres, i.e. on the
    rim of radius ``h`` around ``q = c₁ + a·u`` in the hyperplane orthogonal to
    ``u = (c₂ − c₁)/‖c₂ − c₁‖``.  Raises ``InputError`` for an empty intersection.
    """
    theta = _check_theta(theta)
    d = theta.shape[1]
    r1 = check_positive(radius1, "radius1", allow_zero=True)
    r2 = check_positive(radius2, "radius2", allow_zero=True)
    c1 = _center(center1, d, "center1")
    c2 = _center(center2, d, "center2")
    if c1.ndim != 1 or c2.ndim != 1:
        raise InputError("center1 and center2 must have shape (d,)")
    dist = float(np.linalg.norm(c2 - c1))
    if dist > r1 + r2:
        raise InputError(
            f"the balls do not intersect (‖c2 − c1‖ = {dist:.6g} > r1 + r2 = {r1 + r2:.6g})"
        )
    tol = 1e-12 * (1.0 + r1 + r2)
    p1 = project_l2_ball(theta, r1, c1)
    p2 = project_l2_ball(theta, r2, c2)
    in2 = np.linalg.norm(p1 - c2, axis=1) <= r2 + tol
    in1 = np.linalg.norm(p2 - c1, axis=1) <= r1 + tol
    out = np.where(in2[:, None], p1, p2)
    rim = ~(in2 | in1)
    if np.any(rim):
        u = (c2 - c1) / dist
        a = (dist**2 + r1**2 - r2**2) / (2.0 * dist)
        h = math.sqrt(max(r1**2 - a**2, 0.0))
        q = c1 + a * u
        w = theta[rim] - q
        perp = w - np.outer(w @ u, u)
        norm = np.linalg.norm(perp, axis=1, keepdims=True)
        # a point on the axis is equidistant from the whole rim; take any rim direction
        fallback = np.zeros(d)
        fallback[int(np.argmin(np.abs(u)))] = 1.0
        fallback -= (fallback @ u) * u
        fallback /= max(float(np.linalg.norm(fallback)), np.finfo(float).tiny)
        direction = np.where(norm > 0, perp / np.maximum(norm, np.finfo(float).tiny), fallback)
        out[rim] = q + h * direction
    return out
