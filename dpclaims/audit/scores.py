"""Scalar scores learned from calibration outputs, for distinguishing d0 from d1.

A score maps mechanism outputs ``(trials, k)`` to ``(trials,)``; a threshold on it
defines the test.  Candidates (each fitted on calibration outputs only):

- ``identity``: the output itself (1-D outputs); both tails are tried downstream.
- ``gaussian_lr``: log-likelihood ratio of two fitted 1-D normals (a quadratic in x),
  catching variance differences the identity misses.
- ``lda``: the Gaussian likelihood-ratio projection with a shared covariance,
  ``x @ Σ^{-1}(m1 - m0)``, Σ the pooled covariance shrunk towards a multiple of I.
- ``logistic``: L2-penalised logistic regression on standardised ``[x, x**2]``,
  fitted by a trust-region Newton method on a subsample.
- ``histogram_lr``: the exact likelihood ratio of discrete outputs, estimated by
  counting each distinct output row (with add-1/2 smoothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ..errors import InputError, called_exit

__all__ = [
    "MAX_DISCRETE_OUTCOMES",
    "Score",
    "is_discrete",
    "candidate_scores",
    "fit_score",
    "apply_statistic",
]

MAX_DISCRETE_OUTCOMES = 64
"""Outputs with at most this many distinct rows are treated as discrete (histogram likelihood
ratio)."""

LDA_SHRINKAGE = 1e-3
"""Weight of ``trace(Σ)/k · I`` in the regularised pooled covariance of ``lda``."""

LOGISTIC_SUBSAMPLE = 5000
"""Rows per dataset used to fit ``logistic`` (drawn without replacement)."""

LOGISTIC_PENALTY = 1e-4
"""L2 penalty (per row) on the logistic coefficients, excluding the intercept."""


@dataclass(frozen=True)
class Score:
    """A fitted score: ``name`` and ``func(outputs (n, k)) -> (n,)``."""

    name: str
    func: Callable[[np.ndarray], np.ndarray]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return self.func(outputs)


def is_discrete(outputs: np.ndarray) -> bool:
    """True when ``outputs (n, k)`` has at most :data:`MAX_DISCRETE_OUTCOMES` distinct rows."""
    first = unique_rows(outputs[: 4 * MAX_DISCRETE_OUTCOMES])[0]
    if len(first) > MAX_DISCRETE_OUTCOMES:
        return False
    return len(unique_rows(outputs)[0]) <= MAX_DISCRETE_OUTCOMES


def unique_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, axis=0, return_inverse=True)`` for ``x (n, k)``, by a lexicographic sort on
    the numbers (``np.unique(axis=0)`` sorts opaque byte rows, ~10× slower on 10^6 rows)."""
    if len(x) == 0:
        return x[:0], np.zeros(0, dtype=np.int64)
    order = np.lexsort(x.T[::-1])
    ordered = x[order]
    new = np.concatenate([[True], np.any(ordered[1:] != ordered[:-1], axis=1)])
    inverse = np.empty(len(x), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def candidate_scores(k: int, discrete: bool) -> tuple[str, ...]:
    """Names of the candidate scores for ``k``-dimensional outputs."""
    names = ("identity", "gaussian_lr") if k == 1 else ("lda", "logistic")
    return (*names, "histogram_lr") if discrete else names


def fit_score(name: str, x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Score:
    """Fit the candidate ``name`` on calibration outputs ``x0 (n0, k)`` and ``x1 (n1, k)``."""
    fitters = {
        "identity": lambda: _identity,
        "gaussian_lr": lambda: _fit_gaussian_lr(x0[:, 0], x1[:, 0]),
        "lda": lambda: _fit_lda(x0, x1),
        "logistic": lambda: _fit_logistic(x0, x1, rng),
        "histogram_lr": lambda: _fit_histogram(x0, x1),
    }
    if name not in fitters:
        raise InputError(f"unknown score {name!r}; choose one of {', '.join(fitters)}")
    return Score(name, fitters[name]())


def apply_statistic(statistic: Callable, outputs: np.ndarray) -> np.ndarray:
    """Call a user ``statistic(outputs (n, k)) -> (n,)`` and check its result."""
    try:
        scores = np.asarray(statistic(outputs))
    except SystemExit as exc:
        raise InputError(called_exit(exc, "the statistic", "it must return scores")) from None
    except Exception as exc:
        raise InputError(
            f"statistic raised {type(exc).__name__}: {exc}; it must map outputs (n, k) to scores "
            "(n,)"
        ) from exc
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.shape != (len(outputs),):
        raise InputError(
            f"statistic returned shape {scores.shape} for outputs of shape {outputs.shape}; "
            f"it must return one score per trial, shape ({len(outputs)},)"
        )
    if scores.dtype.kind not in "biuf":
        raise InputError(
            f"statistic returned non-numeric scores (dtype {scores.dtype}); return floats"
        )
    scores = scores.astype(np.float64, copy=False)
    if not np.all(np.isfinite(scores)):
        raise InputError("statistic returned NaN or infinite scores; it must return finite numbers")
    return scores


def _identity(x: np.ndarray) -> np.ndarray:
    return x[:, 0]


def _fit_gaussian_lr(x0: np.ndarray, x1: np.ndarray) -> Callable:
    m0, m1 = x0.mean(), x1.mean()
    scale = max(np.var(np.concatenate([x0, x1])), 1e-300)
    v0, v1 = max(x0.var(), 1e-12 * scale), max(x1.var(), 1e-12 * scale)

    def score(x: np.ndarray) -> np.ndarray:
        z = x[:, 0]
        return -0.5 * ((z - m1) ** 2 / v1 - (z - m0) ** 2 / v0) - 0.5 * np.log(v1 / v0)

    return score


def _fit_lda(x0: np.ndarray, x1: np.ndarray) -> Callable:
    k = x0.shape[1]
    m0, m1 = x0.mean(axis=0), x1.mean(axis=0)
    pooled = (
        np.cov(x0, rowvar=False) * (len(x0) - 1) + np.cov(x1, rowvar=False) * (len(x1) - 1)
    ) / (len(x0) + len(x1) - 2)
    pooled = np.atleast_2d(pooled)
    ridge = np.trace(pooled) / k if np.trace(pooled) > 0 else 1.0
    cov = (1.0 - LDA_SHRINKAGE) * pooled + LDA_SHRINKAGE * ridge * np.eye(k)
    w = np.linalg.solve(cov, m1 - m0)
    return lambda x: x @ w


def _fit_logistic(x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Callable:
    def take(x: np.ndarray) -> np.ndarray:
        return (
            x
            if len(x) <= LOGISTIC_SUBSAMPLE
            else x[rng.choice(len(x), LOGISTIC_SUBSAMPLE, replace=False)]
        )

    a, b = take(x0), take(x1)
    pooled = np.concatenate([a, b])
    center = pooled.mean(axis=0)
    spread = pooled.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)

    def features(x: np.ndarray) -> np.ndarray:
        z = (x - center) / spread
        return np.concatenate([z, z * z - 1.0], axis=1)

    design = np.concatenate([np.ones((len(pooled), 1)), features(pooled)], axis=1)
    labels = np.concatenate([np.zeros(len(a)), np.ones(len(b))])
    penalty = np.full(design.shape[1], LOGISTIC_PENALTY * len(labels))
    penalty[0] = 0.0

    def objective(beta: np.ndarray) -> tuple[float, np.ndarray]:
        eta = design @ beta
        loss = np.sum(np.logaddexp(0.0, eta) - labels * eta) + 0.5 * np.sum(penalty * beta * beta)
        grad = design.T @ (special.expit(eta) - labels) + penalty * beta
        return float(loss), grad

    def hessian(beta: np.ndarray) -> np.ndarray:
        p = special.expit(design @ beta)
        return (design * (p * (1.0 - p))[:, None]).T @ design + np.diag(penalty)

    beta = optimize.minimize(
        objective, np.zeros(design.shape[1]), jac=True, hess=hessian, method="trust-exact"
    ).x
    # features(x) @ beta[1:] expanded in x and x**2, without the (n, 2k) feature array
    k = len(center)
    linear, square = beta[1 : k + 1] / spread, beta[k + 1 :] / spread**2
    weights = linear - 2.0 * center * square
    offset = float(center**2 @ square - center @ linear - beta[k + 1 :].sum())
    return lambda x: x @ weights + (x * x) @ square + offset


def _fit_histogram(x0: np.ndarray, x1: np.ndarray) -> Callable:
    rows, inverse = unique_rows(np.concatenate([x0, x1]))
    c0 = np.bincount(inverse[: len(x0)], minlength=len(rows))
    c1 = np.bincount(inverse[len(x0) :], minlength=len(rows))
    log_ratio = np.log((c1 + 0.5) / (len(x1) + 0.5 * len(rows))) - np.log(
        (c0 + 0.5) / (len(x0) + 0.5 * len(rows))
    )

    def score(x: np.ndarray) -> np.ndarray:
        seen, where = unique_rows(x)
        match = np.all(seen[:, None, :] == rows[None, :, :], axis=2)
        known = match.any(axis=1)
        per_row = np.where(known, log_ratio[match.argmax(axis=1)], 0.0)
        return per_row[where.reshape(-1)]

    return score
