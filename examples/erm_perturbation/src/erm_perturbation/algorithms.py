"""Output and objective perturbation for regularised logistic regression.

Chaudhuri, Monteleoni and Sarwate, "Differentially Private Empirical Risk Minimization",
JMLR 12 (2011) 1069-1109.  The paper's setting: records ``(x_i, y_i)`` with ``‖x_i‖ ≤ 1`` and
``y_i ∈ {-1, +1}``; the regularised empirical risk

    J(f, D) = (1/n) Σ_i ℓ(y_i fᵀx_i) + Λ N(f),   N(f) = ‖f‖²/2,

with the logistic loss ``ℓ(z) = log(1 + e^{-z})`` (|ℓ'| ≤ 1, |ℓ''| ≤ c = 1/4).  Neighbouring
datasets differ in one record (replace-one).  Both algorithms add noise with density
``ν(b) ∝ exp(-β‖b‖)`` (the paper's eq. (4)): ``‖b‖ ~ Gamma(d, 1/β)`` in a uniform direction.

Theorem numbers are cited from memory of the JMLR version (the paper's text was not at hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.errors import InputError
from dpclaims.problem import Problem

__all__ = [
    "LOGISTIC_SMOOTHNESS",
    "ObjectivePerturbation",
    "OutputPerturbation",
    "gamma_norm_noise",
    "minimise",
    "regularised_risk",
]

LOGISTIC_SMOOTHNESS = 0.25
"""c with |ℓ''(z)| ≤ c for the logistic loss (the paper's Corollary for logistic regression)."""


def gamma_norm_noise(rng: np.random.Generator, *, shape: tuple, d: int, beta: float) -> np.ndarray:
    """Draws of density ``∝ exp(-β‖b‖)`` on R^d (eq. (4)): Gamma(d, 1/β) norm, uniform direction.

    Returns shape ``(*shape, d)``.
    """
    norm = rng.gamma(d, 1.0 / beta, size=shape + (1,))
    direction = rng.standard_normal(shape + (d,))
    return norm * direction / np.linalg.norm(direction, axis=-1, keepdims=True)


def regularised_risk(f: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """``J(f, D)`` for parameters ``f`` (K, d), features ``x`` (n, d), labels ``y`` (n,) -> (K,)."""
    return _risk((f @ x.T) * y, f, lam)


def _risk(margins: np.ndarray, f: np.ndarray, lam: float) -> np.ndarray:
    return np.logaddexp(0.0, -margins).mean(axis=1) + 0.5 * lam * np.sum(f * f, axis=1)


def minimise(
    x: np.ndarray, y: np.ndarray, lam: float, linear: np.ndarray, *, tol: float = 1e-10
) -> np.ndarray:
    """``argmin_f J(f, D) + linear·f`` for each row of ``linear`` (K, d) by damped Newton -> (K, d).

    ``J`` is ``lam``-strongly convex, so each problem has one minimiser; a step is halved
    until the objective does not increase.
    """
    n, d = x.shape
    outer = (x[:, :, None] * x[:, None, :]).reshape(n, d * d)  # (n, d²): x xᵀ per record
    f = np.zeros_like(linear)
    margins = np.zeros((len(f), n))
    value = _risk(margins, f, lam)
    for _ in range(100):
        s = 0.5 - 0.5 * np.tanh(margins / 2)  # σ(-z) = -ℓ'(z); ℓ''(z) = s(1 - s)
        grad = -(s * y) @ x / n + lam * f + linear
        if np.max(np.linalg.norm(grad, axis=1)) < tol:
            return f
        hessian = (s * (1 - s)) @ outer / n
        step = np.linalg.solve(hessian.reshape(-1, d, d) + lam * np.eye(d), grad[..., None])
        scale = np.ones((len(f), 1))
        for _ in range(30):
            candidate = f - scale * step[..., 0]
            new_margins = (candidate @ x.T) * y
            new = _risk(new_margins, candidate, lam) + np.sum(linear * candidate, axis=1)
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
    """

    n: int
    epsilon: float
    lam: float

    @classmethod
    def from_theorem(cls, problem: Problem) -> OutputPerturbation:
        """Algorithm 1 for ``problem`` (n, ε, Λ = ``strong_convexity``, L = ``lipschitz`` = 1)."""
        _check_setting(problem)
        return cls(n=problem.n, epsilon=problem.epsilon, lam=problem.strong_convexity)

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
        x, y = _records(data)
        f = minimise(x, y, self.lam, np.zeros((1, x.shape[1])))
        return f + gamma_norm_noise(rng, shape=(trials,), d=x.shape[1], beta=self.beta)


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
    c : bound on ``|ℓ''|`` (1/4 for the logistic loss)
    """

    n: int
    epsilon: float
    lam: float
    c: float = LOGISTIC_SMOOTHNESS

    @classmethod
    def from_theorem(cls, problem: Problem) -> ObjectivePerturbation:
        """Algorithm 2 for ``problem`` (c = ``smoothness``, default the logistic loss's 1/4)."""
        _check_setting(problem)
        c = LOGISTIC_SMOOTHNESS if problem.smoothness is None else problem.smoothness
        return cls(n=problem.n, epsilon=problem.epsilon, lam=problem.strong_convexity, c=c)

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
        return minimise(x, y, self.lam + self.extra_ridge, b / self.n)


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
