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
- ``column_lr``: the sum over columns of each column's 1-D log density ratio, the likelihood
  ratio when the columns are independent given the dataset (a DP-SGD transcript's steps given
  the canary).  Each ratio is estimated directly, by a ridge-penalised logistic regression of
  the dataset on a natural cubic spline of the column (knots at pooled quantiles
  :data:`SPLINE_LEVELS`): smooth where a ratio of two density estimates is noisy, and linear
  beyond the outer knots (as a Gaussian's log ratio is), so the tails are extrapolated, never
  fitted to a handful of extreme points.
- ``pooled_column_lr``: the same with one ratio shared by every column, fitted on all columns'
  values at once: the likelihood ratio when the columns are also identically distributed (the
  steps of a transcript), estimated from k times the data.
- ``pooled_column_softplus``: one shared ratio of the smooth-hinge form
  ``b·log(1 + exp(a·x + c))``, fitted by maximum likelihood on all columns' values: up to a
  constant, exactly a Poisson-subsampled Gaussian step's log ratio ``log(1 − q + q·exp(·))``
  (a rare shift of a noisy release), whose bend can lie beyond the spline's outer knot (at
  q = 0.05 about 4 standard deviations out) where ``pooled_column_lr`` only extrapolates
  linearly; linear itself as ``c → ∞``.  Three parameters and an intercept.
- ``boosting``: scikit-learn's ``HistGradientBoostingClassifier`` (its log-odds), for
  dependent columns and nonlinear effects; a candidate only when scikit-learn is installed.
- ``histogram_lr``: the exact likelihood ratio of discrete outputs, estimated by
  counting each distinct output row (with add-1/2 smoothing).
"""

from __future__ import annotations

import functools
import importlib.util
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

SPLINE_LEVELS = (0.01, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 0.99)
"""Quantile levels of the pooled column values at which ``column_lr`` and
``pooled_column_lr`` place their spline knots (linear beyond the outer two)."""

SPLINE_PENALTY = 1e-3
"""L2 penalty (per row) on the spline coefficients of ``column_lr``, excluding the intercept."""

COLUMN_SUBSAMPLE = 10_000
"""Rows per dataset used to fit ``column_lr`` (drawn without replacement); ``pooled_column_lr``
fits on at most this many times 20 column values per dataset."""

SOFTPLUS_PENALTY = 1e-6
"""L2 penalty (per value) on the three parameters of ``pooled_column_softplus``, which keeps
them finite when the values separate the datasets.  It also pulls a bend that the data place
far in the tail inwards (a smaller weight, an earlier, gentler bend); chosen on the black-box
benchmark's 54 cells × 3 seeds, where it certifies as much as 1e-7 (pooled 0.970 of the exact
likelihood ratio) and more than a penalty on the slope alone (0.957)."""

SOFTPLUS_PROBE_STEPS = 5
"""Gauss–Newton steps from each start of ``pooled_column_softplus`` before the best is kept."""

NEWTON_STEPS = 50
"""Most Newton steps of the spline fits (each halved until the penalised loss falls)."""

BLOCK_VALUES = 1 << 20
"""Output values scored at once by ``column_lr`` (bounds its basis array)."""

BOOSTING_SUBSAMPLE = 5_000
"""Rows per dataset used to fit ``boosting`` (drawn without replacement)."""

BOOSTING_OPTIONS = {"max_iter": 100, "learning_rate": 0.1, "early_stopping": True}
"""Options of scikit-learn's ``HistGradientBoostingClassifier`` for ``boosting`` (early
stopping on a tenth of its fitting rows)."""


@dataclass(frozen=True)
class Score:
    """A fitted score: ``name``, ``func(outputs (n, k)) -> (n,)`` and ``oriented``: True when it
    estimates the log ratio log p1/p0 (larger on d1), as every learned candidate but the
    identity does."""

    name: str
    func: Callable[[np.ndarray], np.ndarray]
    oriented: bool = False

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


def candidate_scores(k: int, discrete: bool, *, nonlinear: bool = True) -> tuple[str, ...]:
    """Names of the candidate scores for ``k``-dimensional outputs.  Continuous outputs of
    several columns add the column and boosting scores unless ``nonlinear=False`` (the cheap
    set), the whole set ordered by number of parameters (:func:`_parameters`; equals keep the
    order LDA, softplus, spline, logistic, per-column); discrete ones have ``histogram_lr``,
    their likelihood ratio estimated outright."""
    if k > 1 and nonlinear and not discrete:
        names = ("lda", "pooled_column_softplus", "pooled_column_lr", "logistic", "column_lr")
        return (*sorted(names, key=lambda name: _parameters(name, k)), *_boosting())
    names = ("identity", "gaussian_lr") if k == 1 else ("lda", "logistic")
    return (*names, "histogram_lr") if discrete else names


def _parameters(name: str, k: int) -> int:
    """The number of fitted parameters of the candidate ``name`` on ``k`` columns, intercepts
    left out: ``lda`` k, ``pooled_column_softplus`` 3, ``pooled_column_lr`` one per spline
    basis column (7), ``logistic`` 2k, ``column_lr`` 7k (``boosting``, trees, comes last)."""
    spline = len(SPLINE_LEVELS) - 1
    counts = {
        "lda": k,
        "pooled_column_softplus": 3,
        "pooled_column_lr": spline,
        "logistic": 2 * k,
        "column_lr": spline * k,
    }
    return counts[name]


def _boosting() -> tuple[str, ...]:
    """``("boosting",)`` when scikit-learn is installed, else ``()``."""
    return ("boosting",) if importlib.util.find_spec("sklearn") is not None else ()


def fit_score(name: str, x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Score:
    """Fit the candidate ``name`` on calibration outputs ``x0 (n0, k)`` and ``x1 (n1, k)``."""
    fitters = {
        "identity": lambda: _identity,
        "gaussian_lr": lambda: _fit_gaussian_lr(x0[:, 0], x1[:, 0]),
        "lda": lambda: _fit_lda(x0, x1),
        "logistic": lambda: _fit_logistic(x0, x1, rng),
        "column_lr": lambda: _fit_column_lr(x0, x1, rng),
        "pooled_column_lr": lambda: _fit_pooled_column_lr(x0, x1, rng),
        "pooled_column_softplus": lambda: _fit_pooled_column_softplus(x0, x1, rng),
        "boosting": lambda: _fit_boosting(x0, x1, rng),
        "histogram_lr": lambda: _fit_histogram(x0, x1),
    }
    if name not in fitters:
        raise InputError(f"unknown score {name!r}; choose one of {', '.join(fitters)}")
    return Score(name, fitters[name](), oriented=name != "identity")


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


def _subsample(x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """At most ``size`` rows of ``x``, drawn without replacement."""
    return x if len(x) <= size else x[rng.choice(len(x), size, replace=False)]


@dataclass(frozen=True)
class _Spline:
    """A natural cubic spline basis of one variable standardised as ``(x - center) / spread``,
    with knots ``knots`` (K,) on that scale: ``(n,) -> (n, K - 1)`` (Hastie et al., *Elements
    of Statistical Learning* eq. 5.4-5.5; linear, ``x`` alone, when fewer than 3 knots)."""

    center: float
    spread: float
    knots: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> _Spline:
        """The basis whose scale and knots are those of the pooled ``values``."""
        center, spread = float(np.mean(values)), float(np.std(values))
        spread = spread if spread > 0 else 1.0
        knots = np.unique(np.quantile((values - center) / spread, SPLINE_LEVELS))
        return cls(center, spread, knots)

    @property
    def width(self) -> int:
        """Columns of the basis."""
        return len(self.knots) - 1 if len(self.knots) >= 3 else 1

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = (x - self.center) / self.spread
        knots = self.knots
        if self.width == 1:
            return z[:, None]

        def d(k: np.ndarray) -> np.ndarray:
            cube = (
                np.maximum(z[:, None] - k, 0.0) ** 3 - np.maximum(z[:, None] - knots[-1], 0.0) ** 3
            )
            return cube / (knots[-1] - k)

        return np.concatenate([z[:, None], d(knots[:-2]) - d(knots[-2:-1])], axis=1)


def _fit_logistic_batch(design: np.ndarray, labels: np.ndarray, penalty: float) -> np.ndarray:
    """Ridge-penalised logistic regressions of ``labels`` (n,) on each ``design[m]`` (n, p) with
    an intercept, by damped Newton steps: the coefficients (m, p), intercepts left out."""
    m, n, p = design.shape
    design = np.concatenate([np.ones((m, n, 1)), design], axis=2)
    ridge = np.full(p + 1, penalty * n)
    ridge[0] = 0.0

    def loss(beta: np.ndarray) -> np.ndarray:
        eta = np.einsum("mnp,mp->mn", design, beta)
        return np.sum(np.logaddexp(0.0, eta) - labels * eta, axis=1) + 0.5 * (beta**2) @ ridge

    beta = np.zeros((m, p + 1))
    current = loss(beta)
    for _ in range(NEWTON_STEPS):
        prob = special.expit(np.einsum("mnp,mp->mn", design, beta))
        grad = np.einsum("mnp,mn->mp", design, prob - labels) + ridge * beta
        hess = np.einsum("mnp,mnq->mpq", design * (prob * (1.0 - prob))[:, :, None], design)
        step = np.linalg.solve(hess + np.diag(ridge + 1e-12), grad[:, :, None])[:, :, 0]
        size = np.ones(m)
        for _ in range(30):
            trial = loss(beta - size[:, None] * step)
            worse = ~(trial <= current)
            if not np.any(worse):
                break
            size = np.where(worse, size / 2, size)
        beta, previous = beta - size[:, None] * step, current
        current = np.minimum(trial, current)
        if np.all(previous - current <= 1e-9 * (1.0 + np.abs(current))):
            break
    return beta[:, 1:]


def _labels(n0: int, n1: int) -> np.ndarray:
    return np.concatenate([np.zeros(n0), np.ones(n1)])


def _fit_column_lr(x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Callable:
    a, b = _subsample(x0, COLUMN_SUBSAMPLE, rng), _subsample(x1, COLUMN_SUBSAMPLE, rng)
    pooled = np.concatenate([a, b])
    bases = [_Spline.of(column) for column in pooled.T]
    width = max(basis.width for basis in bases)
    design = np.zeros((len(bases), len(pooled), width))
    for j, basis in enumerate(bases):
        design[j, :, : basis.width] = basis(pooled[:, j])
    beta = _fit_logistic_batch(design, _labels(len(a), len(b)), SPLINE_PENALTY)

    def block(x: np.ndarray) -> np.ndarray:
        return sum(basis(x[:, j]) @ beta[j, : basis.width] for j, basis in enumerate(bases))

    return lambda x: _in_blocks(block, x, width)


def _pooled_values(
    x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """All columns' values of at most ``20 * COLUMN_SUBSAMPLE / k`` rows of each dataset, pooled
    ``(m,)``, and their datasets' labels ``(m,)`` (0 for d0, 1 for d1)."""
    rows = max(1, 20 * COLUMN_SUBSAMPLE // x0.shape[1])
    a, b = _subsample(x0, rows, rng).ravel(), _subsample(x1, rows, rng).ravel()
    return np.concatenate([a, b]), _labels(len(a), len(b))


def _fit_pooled_column_lr(x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Callable:
    pooled, labels = _pooled_values(x0, x1, rng)
    basis = _Spline.of(pooled)
    beta = _fit_logistic_batch(basis(pooled)[None], labels, SPLINE_PENALTY)[0]

    def block(x: np.ndarray) -> np.ndarray:
        return (basis(x.ravel()) @ beta).reshape(x.shape).sum(axis=1)

    return lambda x: _in_blocks(block, x, len(beta))


def _fit_pooled_column_softplus(
    x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator
) -> Callable:
    """``b·softplus(a·z + c)`` summed over columns, ``z`` the standardised value, fitted (with
    the intercept) by damped Gauss–Newton steps on the logistic loss of all columns' values
    (:func:`_fit_softplus_ratio`): :data:`SOFTPLUS_PROBE_STEPS` steps from each of three starts
    (a bend at either outer 1 % of the values, and nearly linear), then the best of them to
    convergence."""
    pooled, labels = _pooled_values(x0, x1, rng)
    center, spread = float(np.mean(pooled)), float(np.std(pooled))
    spread = spread if spread > 0 else 1.0
    z = (pooled - center) / spread
    low, high = np.quantile(z, [0.01, 0.99])
    starts = ((2.0, -2.0 * high), (-2.0, 2.0 * low), (1.0, 4.0))  # (a, c)
    probes = [
        _fit_softplus_ratio(z, labels, np.array([0.0, 0.1, a, c]), SOFTPLUS_PROBE_STEPS)
        for a, c in starts
    ]
    best = min(probes, key=lambda fit: fit[1])[0]
    _, weight, slope, shift = _fit_softplus_ratio(z, labels, best, NEWTON_STEPS)[0]

    def score(x: np.ndarray) -> np.ndarray:
        return weight * np.logaddexp(0.0, slope * (x - center) / spread + shift).sum(axis=1)

    return score


def _fit_softplus_ratio(
    z: np.ndarray, labels: np.ndarray, start: np.ndarray, steps: int
) -> tuple[np.ndarray, float]:
    """The parameters ``(b0, b, a, c)`` reducing the ridge-penalised (:data:`SOFTPLUS_PENALTY`
    on ``b, a, c``) logistic loss of ``labels (n,)`` on ``b0 + b·softplus(a·z + c)``, by at most
    ``steps`` damped Gauss–Newton (Fisher scoring) steps from ``start``; and that loss per
    value.  (scipy's L-BFGS-B on the same loss took about 10× the time on the benchmark's
    transcripts: over 100 evaluations a start against 10–20 steps here.)"""
    ridge = np.array([0.0, SOFTPLUS_PENALTY, SOFTPLUS_PENALTY, SOFTPLUS_PENALTY])

    def loss(p: np.ndarray) -> float:
        eta = p[0] + p[1] * np.logaddexp(0.0, p[2] * z + p[3])
        return float(np.mean(np.logaddexp(0.0, eta) - labels * eta) + 0.5 * ridge @ (p * p))

    params, current = start, loss(start)
    for _ in range(steps):
        inner = params[2] * z + params[3]
        hinge, slope = np.logaddexp(0.0, inner), special.expit(inner)
        prob = special.expit(params[0] + params[1] * hinge)
        jacobian = np.stack(
            [np.ones_like(z), hinge, params[1] * slope * z, params[1] * slope], axis=1
        )
        grad = jacobian.T @ (prob - labels) / len(z) + ridge * params
        fisher = (jacobian * (prob * (1.0 - prob))[:, None]).T @ jacobian / len(z)
        step = np.linalg.solve(fisher + np.diag(ridge + 1e-12), grad)
        size, trial = 1.0, loss(params - step)
        while not trial <= current and size > 1e-6:
            size /= 2
            trial = loss(params - size * step)
        if not trial <= current:
            break
        params, previous, current = params - size * step, current, trial
        if previous - current <= 1e-9 * (1.0 + current):
            break
    return params, current


def _in_blocks(block: Callable, x: np.ndarray, width: int) -> np.ndarray:
    """``block`` applied to row blocks of ``x (n, k)`` holding at most :data:`BLOCK_VALUES`
    basis values ``(rows, k, width)`` each, concatenated ``(n,)``."""
    rows = max(1, BLOCK_VALUES // (x.shape[1] * width))
    out = np.zeros(len(x))
    for start in range(0, len(x), rows):
        out[start : start + rows] = block(x[start : start + rows])
    return out


def _fit_boosting(x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> Callable:
    """Boosted trees on one OpenMP thread: on busy shared cores its threads spin-wait (a
    2,000-row fit took 24 s on 2 loaded cores with the default threads, 0.2 s with one)."""
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:
        raise InputError(
            "the boosting score needs scikit-learn; pip install scikit-learn, or choose "
            "another score"
        ) from None
    a, b = _subsample(x0, BOOSTING_SUBSAMPLE, rng), _subsample(x1, BOOSTING_SUBSAMPLE, rng)
    model = HistGradientBoostingClassifier(
        **BOOSTING_OPTIONS, random_state=int(rng.integers(2**31 - 1))
    )
    with _openmp().limit(limits=1, user_api="openmp"):
        model.fit(np.concatenate([a, b]), _labels(len(a), len(b)))

    def score(x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        with _openmp().limit(limits=1, user_api="openmp"):
            return model.decision_function(x)

    return score


@functools.lru_cache(maxsize=1)
def _openmp():
    """One ``threadpoolctl.ThreadpoolController`` (after scikit-learn is loaded): finding the
    thread pools scans the loaded libraries, ~10 ms a time."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


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
