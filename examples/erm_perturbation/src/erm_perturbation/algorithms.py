"""Output and objective perturbation for regularised logistic regression (and Huber SVMs).

Chaudhuri, Monteleoni and Sarwate, "Differentially Private Empirical Risk Minimization",
JMLR 12 (2011) 1069-1109.  The paper's setting: records ``(x_i, y_i)`` with ``‖x_i‖ ≤ 1`` and
``y_i ∈ {-1, +1}``; the regularised empirical risk

    J(f, D) = (1/n) Σ_i ℓ(y_i fᵀx_i) + Λ N(f),   N(f) = ‖f‖²/2,

with the logistic loss ``ℓ(z) = log(1 + e^{-z})`` (|ℓ'| ≤ 1, |ℓ''| ≤ c = 1/4) or the paper's
Huber loss for support vector machines (:func:`huber_terms`: linear below ``1 - h``,
|ℓ''| ≤ 1/(2h); on its linear part |ℓ'| = 1, where two records' gradients can differ by the
worst case 2).  Neighbouring datasets differ in one record (replace-one).  Both algorithms add
noise with density ``ν(b) ∝ exp(-β‖b‖)`` (the paper's eq. (4)): ``‖b‖ ~ Gamma(d, 1/β)`` in a
uniform direction.

Theorem numbers are cited from memory of the JMLR version (the paper's text was not at hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.errors import InputError
from dpclaims.problem import Problem

__all__ = [
    "HUBER_H",
    "LOGISTIC_SMOOTHNESS",
    "LOSSES",
    "ObjectivePerturbation",
    "OutputPerturbation",
    "gamma_norm_noise",
    "huber_terms",
    "loss_smoothness",
    "minimise",
    "regularised_risk",
]

LOGISTIC_SMOOTHNESS = 0.25
"""c with |ℓ''(z)| ≤ c for the logistic loss (the paper's Corollary for logistic regression)."""

HUBER_H = 0.5
"""Default half-width ``h`` of the Huber loss's quadratic part (its smoothness is 1/(2h) = 1)."""

LOSSES = ("logistic", "huber")
"""The losses the algorithms take: ``"logistic"`` (default) or the Huber SVM loss."""


def huber_terms(margins: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ℓ(z)``, ``-ℓ'(z)`` and ``ℓ''(z)`` of the Huber loss at the margins ``z``.

    ``ℓ(z) = 0`` for ``z > 1 + h``, ``(1 + h - z)²/(4h)`` for ``|1 - z| ≤ h``, ``1 - z`` for
    ``z < 1 - h`` (the paper's Huber loss for SVMs): 1-Lipschitz, ``|ℓ''| ≤ 1/(2h)``.
    """
    gap = 1.0 + h - margins
    value = np.where(margins < 1.0 - h, 1.0 - margins, np.maximum(gap, 0.0) ** 2 / (4.0 * h))
    slope = np.clip(gap / (2.0 * h), 0.0, 1.0)
    curvature = np.where(np.abs(1.0 - margins) <= h, 1.0 / (2.0 * h), 0.0)
    return value, slope, curvature


def loss_smoothness(loss: str, h: float = HUBER_H) -> float:
    """``c`` with ``|ℓ''| ≤ c``: 1/4 (logistic) or ``1/(2h)`` (Huber)."""
    _check_loss(loss)
    return LOGISTIC_SMOOTHNESS if loss == "logistic" else 1.0 / (2.0 * h)


def _check_loss(loss: str) -> None:
    if loss not in LOSSES:
        raise InputError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")


def gamma_norm_noise(rng: np.random.Generator, *, shape: tuple, d: int, beta: float) -> np.ndarray:
    """Draws of density ``∝ exp(-β‖b‖)`` on R^d (eq. (4)): Gamma(d, 1/β) norm, uniform direction.

    Returns shape ``(*shape, d)``.
    """
    norm = rng.gamma(d, 1.0 / beta, size=shape + (1,))
    direction = rng.standard_normal(shape + (d,))
    return norm * direction / np.linalg.norm(direction, axis=-1, keepdims=True)


def regularised_risk(
    f: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    loss: str = "logistic",
    h: float = HUBER_H,
) -> np.ndarray:
    """``J(f, D)`` for parameters ``f`` (K, d), features ``x`` (n, d), labels ``y`` (n,) -> (K,)."""
    _check_loss(loss)
    return _risk((f @ x.T) * y, f, lam, loss, h)


def _loss(margins: np.ndarray, loss: str, h: float) -> np.ndarray:
    if loss == "logistic":
        return np.logaddexp(0.0, -margins)
    return huber_terms(margins, h)[0]


def _risk(margins: np.ndarray, f: np.ndarray, lam: float, loss: str, h: float) -> np.ndarray:
    return _loss(margins, loss, h).mean(axis=1) + 0.5 * lam * np.sum(f * f, axis=1)


def minimise(
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    linear: np.ndarray,
    *,
    tol: float = 1e-10,
    loss: str = "logistic",
    h: float = HUBER_H,
) -> np.ndarray:
    """``argmin_f J(f, D) + linear·f`` for each row of ``linear`` (K, d) by damped Newton -> (K, d).

    ``J`` is ``lam``-strongly convex, so each problem has one minimiser; a step is halved
    until the objective does not increase.  ``loss``: ``"logistic"`` or ``"huber"`` (half-width
    ``h``; Newton on a piecewise quadratic stops once the pieces are right).
    """
    _check_loss(loss)
    n, d = x.shape
    outer = (x[:, :, None] * x[:, None, :]).reshape(n, d * d)  # (n, d²): x xᵀ per record
    f = np.zeros_like(linear)
    margins = np.zeros((len(f), n))
    value = _risk(margins, f, lam, loss, h)
    for _ in range(100):
        if loss == "logistic":
            s = 0.5 - 0.5 * np.tanh(margins / 2)  # σ(-z) = -ℓ'(z); ℓ''(z) = s(1 - s)
            curvature = s * (1 - s)
        else:
            _, s, curvature = huber_terms(margins, h)
        grad = -(s * y) @ x / n + lam * f + linear
        if np.max(np.linalg.norm(grad, axis=1)) < tol:
            return f
        hessian = curvature @ outer / n
        step = np.linalg.solve(hessian.reshape(-1, d, d) + lam * np.eye(d), grad[..., None])
        scale = np.ones((len(f), 1))
        for _ in range(30):
            candidate = f - scale * step[..., 0]
            new_margins = (candidate @ x.T) * y
            new = _risk(new_margins, candidate, lam, loss, h) + np.sum(linear * candidate, axis=1)
            worse = new > value + 1e-12 * (1.0 + np.abs(value))  # rounding is no increase
            if not worse.any():
                break
            scale[worse] *= 0.5
        f, margins, value = candidate, new_margins, new
    raise RuntimeError(f"Newton did not converge to |grad| < {tol:g} in 100 steps")


@dataclass(frozen=True, kw_only=True)
class OutputPerturbation:
    """Algorithm 1 (ERM with output perturbation): ``f_priv = argmin J(f, D) + b``.

    ``b`` has density ``∝ exp(-β‖b‖)`` with ``β = nΛε/2`` (Algorithm 1): the ℓ2 sensitivity
    of ``argmin J`` is ``2/(nΛ)`` for a 1-Lipschitz loss, ``‖x‖ ≤ 1`` and a 1-strongly convex
    ``N`` (proof of Theorem 6), so the output is ε-DP (Theorem 6; logistic regression:
    the Corollary that follows it).

    Parameters
    ----------
    n, epsilon, lam : records, privacy ε and the regularisation Λ
    loss, h : ``"logistic"`` (default) or ``"huber"`` with half-width ``h``
    """

    n: int
    epsilon: float
    lam: float
    loss: str = "logistic"
    h: float = HUBER_H

    def __post_init__(self) -> None:
        _check_loss(self.loss)

    @classmethod
    def from_theorem(
        cls, problem: Problem, *, loss: str = "logistic", h: float = HUBER_H
    ) -> OutputPerturbation:
        """Algorithm 1 for ``problem`` (n, ε, Λ = ``strong_convexity``, L = ``lipschitz`` = 1)."""
        _check_setting(problem)
        return cls(
            n=problem.n, epsilon=problem.epsilon, lam=problem.strong_convexity, loss=loss, h=h
        )

    def minimiser(self, data) -> np.ndarray:
        """``argmin J(·, data)`` with this loss -> (d,)."""
        x, y = _records(data)
        return minimise(x, y, self.lam, np.zeros((1, x.shape[1])), loss=self.loss, h=self.h)[0]

    @property
    def sensitivity(self) -> float:
        """ℓ2 sensitivity of the regularised minimiser, ``2/(nΛ)`` (proof of Theorem 6)."""
        return 2.0 / (self.n * self.lam)

    @property
    def beta(self) -> float:
        """Noise rate ``β = nΛε/2 = ε / sensitivity`` (Algorithm 1)."""
        return self.epsilon / self.sensitivity

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``trials`` private outputs on ``data`` (a UserDataset, m = 1) -> (trials, d)."""
        f = self.minimiser(data)[None, :]
        return f + gamma_norm_noise(rng, shape=(trials,), d=f.shape[1], beta=self.beta)


@dataclass(frozen=True, kw_only=True)
class ObjectivePerturbation:
    """Algorithm 2 (ERM with objective perturbation), for a loss with ``|ℓ''| ≤ c``.

    ``ε' = ε - log(1 + 2c/(nΛ) + c²/(n²Λ²))``; if ``ε' > 0`` then ``Δ = 0``, else
    ``Δ = c/(n(e^{ε/4} - 1)) - Λ`` and ``ε' = ε/2``.  Draw ``b`` with density
    ``∝ exp(-(ε'/2)‖b‖)`` and output ``argmin J(f, D) + bᵀf/n + Δ‖f‖²/2`` (Algorithm 2);
    ε-DP by Theorem 9 (logistic regression, c = 1/4: the Corollary that follows it).

    Parameters
    ----------
    n, epsilon, lam : records, privacy ε and the regularisation Λ
    c : bound on ``|ℓ''|`` (1/4 for the logistic loss, 1/(2h) for the Huber loss)
    loss, h : ``"logistic"`` (default) or ``"huber"`` with half-width ``h``
    """

    n: int
    epsilon: float
    lam: float
    c: float = LOGISTIC_SMOOTHNESS
    loss: str = "logistic"
    h: float = HUBER_H

    def __post_init__(self) -> None:
        _check_loss(self.loss)

    @classmethod
    def from_theorem(
        cls, problem: Problem, *, loss: str = "logistic", h: float = HUBER_H
    ) -> ObjectivePerturbation:
        """Algorithm 2 for ``problem`` (c = ``smoothness``, default the loss's: 1/4 for the
        logistic loss, 1/(2h) for the Huber loss)."""
        _check_setting(problem)
        c = loss_smoothness(loss, h) if problem.smoothness is None else problem.smoothness
        return cls(
            n=problem.n,
            epsilon=problem.epsilon,
            lam=problem.strong_convexity,
            c=c,
            loss=loss,
            h=h,
        )

    @property
    def slack(self) -> float:
        """``log(1 + 2c/(nΛ) + c²/(n²Λ²))``, the part of ε the Jacobian uses (Algorithm 2)."""
        ratio = self.c / (self.n * self.lam)
        return math.log1p(2 * ratio + ratio**2)

    @property
    def epsilon_noise(self) -> float:
        """``ε'``, the part of ε left for the noise (Algorithm 2, steps 1-2)."""
        rest = self.epsilon - self.slack
        return rest if rest > 0 else self.epsilon / 2

    @property
    def extra_ridge(self) -> float:
        """``Δ``: 0, or ``c/(n(e^{ε/4} - 1)) - Λ`` when ``ε' ≤ 0`` (Algorithm 2, step 2)."""
        if self.epsilon - self.slack > 0:
            return 0.0
        return self.c / (self.n * math.expm1(self.epsilon / 4)) - self.lam

    @property
    def beta(self) -> float:
        """Noise rate ``β = ε'/2`` (Algorithm 2, step 3)."""
        return self.epsilon_noise / 2

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``trials`` private outputs on ``data`` (a UserDataset, m = 1) -> (trials, d)."""
        x, y = _records(data)
        b = gamma_norm_noise(rng, shape=(trials,), d=x.shape[1], beta=self.beta)
        return minimise(x, y, self.lam + self.extra_ridge, b / self.n, loss=self.loss, h=self.h)


def _check_setting(problem: Problem) -> None:
    if problem.strong_convexity <= 0 or problem.lipschitz != 1.0 or problem.delta != 0.0:
        raise InputError(
            "the algorithms are stated for pure ε-DP (delta = 0), a 1-Lipschitz loss "
            "(lipschitz = 1) and regularisation Λ = strong_convexity > 0; got "
            f"{problem.strong_convexity=}, {problem.lipschitz=}, {problem.delta=}"
        )


def _records(data) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, d) and ±1 labels (n,) of an item-level UserDataset (m = 1)."""
    return data.x[:, 0, :], data.y[:, 0]
