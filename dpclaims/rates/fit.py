"""Power-law and multi-term fits of error against a swept parameter.

:func:`fit_power_law` fits ``log(error) = a + b log(value)``.  With
``method="logs"`` (default) it is ordinary least squares on the log of *every
replicate's* error (G × R points); with ``method="mom"`` (median of means, for
heavy-tailed errors) the R replicates at each grid value are split into groups,
averaged within groups, and the fit is on the log of the median group mean
(G points).  Each fit reports

* the HC3 heteroskedasticity-robust interval (statsmodels ``OLS(...).fit(
  cov_type="HC3", use_t=True)``, t with the residual degrees of freedom);
* a percentile bootstrap interval from resampling *whole replicates* (columns
  of the (G, R) error array, the same replicate indices at every grid value;
  never single points), recomputing the same estimator on each resample;
* **the interval** (``interval``): the hull (union) of the two, so it covers
  whenever either does — the HC3 interval alone can be short with few points,
  and the percentile bootstrap is short by a factor ``sqrt((R-1)/R)`` with
  few replicates;
* the Theil–Sen slope (``scipy.stats.theilslopes``) as a robustness figure, on at most
  :data:`THEIL_SEN_POINTS` points (a seeded subsample beyond: its memory is quadratic);
* local slopes between consecutive grid values and a *drift* test: a quadratic
  term in centred log(value) is added and its HC3 t-test flags a sweep whose
  slope is still changing (a lower-order term or a floor in the way).

:func:`fit_terms` fits ``error ≈ Σ_k c_k value^{r_k}`` with non-negative
``c_k`` (``scipy.optimize.nnls``) in relative error, and reports where terms cross.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from ..errors import InputError, check_choice, check_confidence, check_finite_array, check_trials
from ..execution import child_seed
from ..vocabulary import FITS, Fit
from .grid import check_grid

__all__ = ["FITS", "PowerLawFit", "TermsFit", "fit_power_law", "fit_terms", "loglog_slope"]

THEIL_SEN_POINTS = 5000
"""Most points the Theil–Sen slope uses (about 560 MB for its pair matrices); a fit on more
uses a seeded subsample of this many (every budget's sweep stays below it)."""


def _num(x: Any) -> float | None:
    """A JSON-safe float (None for NaN / infinity)."""
    x = float(x)
    return x if np.isfinite(x) else None


def _check_errors(
    errors: Any, n_values: int, name: str = "errors", minimum_replicates: int = 2
) -> np.ndarray:
    """Return ``errors`` as float64 (G, R) after checking shape, finiteness and positivity."""
    arr = check_finite_array(errors, name)
    if arr.ndim == 1 and minimum_replicates > 1:
        raise InputError(
            f"{name} has shape {arr.shape}: a single replicate per grid value; pass a (G, R) array "
            "with R >= "
            f"{minimum_replicates} replicates (e.g. sweep(..., replicates=10).errors) so the fit "
            "has an error bar"
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n_values:
        raise InputError(
            f"{name} must have shape (G, R) = ({n_values}, replicates) to match values, got "
            f"{arr.shape}"
        )
    if arr.shape[1] < minimum_replicates:
        raise InputError(
            f"{name} has {arr.shape[1]} replicate(s) per grid value; pass at least "
            f"{minimum_replicates} "
            "(sweep(..., replicates=10))"
        )
    bad = arr <= 0
    if np.any(bad):
        i, r = np.argwhere(bad)[0]
        raise InputError(
            f"{name} contains {int(bad.sum())} zero or negative value(s) (first: {arr[i, r]:g} at "
            f"row {i}, replicate {r}); "
            "a power-law fit is on log(error) — add the floor you subtracted back, or drop grid "
            "values where the error vanishes"
        )
    return arr


def _theil_sen(xs: np.ndarray, ys: np.ndarray, confidence: float, seed: int):
    """``scipy.stats.theilslopes`` on every point, or on :data:`THEIL_SEN_POINTS` of them drawn
    with ``child_seed(seed, 1)`` when there are more (bounded memory, same estimator)."""
    if xs.size > THEIL_SEN_POINTS:
        rng = np.random.default_rng(child_seed(seed, 1))
        keep = np.sort(rng.choice(xs.size, size=THEIL_SEN_POINTS, replace=False))
        xs, ys = xs[keep], ys[keep]
    return stats.theilslopes(ys, xs, alpha=confidence)


def _hc3(y: np.ndarray, design: np.ndarray):
    """statsmodels OLS with HC3 standard errors and t intervals (statsmodels is imported here,
    on the first fit: about a second that a command stopped by bad input never spends)."""
    import statsmodels.api as sm

    return sm.OLS(y, design).fit(cov_type="HC3", use_t=True)


def _slopes(x: np.ndarray, locations: np.ndarray) -> np.ndarray:
    """OLS slopes of ``locations`` (G, B) on ``x`` (G,): (B,)."""
    xc = x - x.mean()
    return (xc / (xc @ xc)) @ locations


def _mom(errors: np.ndarray, groups: int) -> np.ndarray:
    """Median over ``groups`` contiguous replicate groups of the group-mean error: (G, R, ...) ->
    (G, ...)."""
    bounds = np.array_split(np.arange(errors.shape[1]), groups)
    starts = np.array([b[0] for b in bounds])
    sizes = np.array([b.size for b in bounds], dtype=np.float64)
    means = np.add.reduceat(errors, starts, axis=1) / sizes.reshape(
        (1, -1) + (1,) * (errors.ndim - 2)
    )
    return np.median(means, axis=1)


def _hc3_interval(slope: float, stderr: float, df: float, confidence: float) -> tuple[float, float]:
    """``slope ± t_{df}(1/2 + confidence/2) · stderr`` (what statsmodels' conf_int gives with
    use_t)."""
    q = float(special.stdtrit(df, 0.5 + confidence / 2))  # stats.t.ppf's value, no wrapper
    return (float(slope - q * stderr), float(slope + q * stderr))


def _bootstrap_interval(slopes: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the bootstrap draws ``slopes`` (B,)."""
    alpha = 1 - confidence
    lo, hi = np.quantile(slopes, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def _hull(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return (min(a[0], b[0]), max(a[1], b[1]))


@dataclass(frozen=True)
class PowerLawFit:
    """A fitted power law ``error ≈ exp(intercept) · value^exponent`` with its uncertainty.

    ``interval`` is the fit's interval at ``confidence``: the hull of ``interval_hc3`` and
    ``interval_bootstrap``.  :meth:`interval_at` gives it at another level (used by
    :func:`~dpclaims.rates.verdict.check_exponent` for its 90 % equivalence interval).
    """

    exponent: float
    intercept: float
    stderr: float
    confidence: float
    interval: tuple[float, float]
    interval_hc3: tuple[float, float]
    interval_bootstrap: tuple[float, float]
    bootstrap_stderr: float
    theil_sen: float
    theil_sen_interval: tuple[float, float]
    local_slopes: tuple[float, ...]
    curvature: float
    curvature_stderr: float
    slope_change: float
    drift_pvalue: float
    drift_alpha: float
    drifting: bool
    method: str
    fitted_on: str
    groups: int | None
    values: tuple[float, ...]
    replicates: int
    bootstrap: int
    seed: int
    df_resid: float = field(repr=False)
    bootstrap_slopes: np.ndarray = field(repr=False, compare=False)

    def interval_at(self, confidence: float) -> tuple[float, float]:
        """The fit's interval (hull of HC3 and percentile bootstrap) at ``confidence``."""
        confidence = check_confidence(confidence)
        return _hull(
            _hc3_interval(self.exponent, self.stderr, self.df_resid, confidence),
            _bootstrap_interval(self.bootstrap_slopes, confidence),
        )

    def summary(self) -> str:
        """One line: exponent, interval, drift flag."""
        lo, hi = self.interval
        text = (
            f"exponent {self.exponent:.3f}, {100 * self.confidence:g}% CI [{lo:.3f}, {hi:.3f}] "
            f"({self.method}, Theil-Sen {self.theil_sen:.3f})"
        )
        if self.drifting:
            slopes = [round(s, 2) for s in self.local_slopes]
            text += (
                f"; slope still drifting (curvature p={self.drift_pvalue:.2g}, "
                f"local slopes {slopes})"
            )
        return text

    def to_dict(self) -> dict:
        """JSON-serialisable fields (the bootstrap draws are summarised, not listed)."""
        return {
            "exponent": _num(self.exponent),
            "intercept": _num(self.intercept),
            "stderr": _num(self.stderr),
            "confidence": self.confidence,
            "interval": [_num(v) for v in self.interval],
            "interval_hc3": [_num(v) for v in self.interval_hc3],
            "interval_bootstrap": [_num(v) for v in self.interval_bootstrap],
            "bootstrap_stderr": _num(self.bootstrap_stderr),
            "theil_sen": _num(self.theil_sen),
            "theil_sen_interval": [_num(v) for v in self.theil_sen_interval],
            "local_slopes": [_num(v) for v in self.local_slopes],
            "curvature": _num(self.curvature),
            "curvature_stderr": _num(self.curvature_stderr),
            "slope_change": _num(self.slope_change),
            "drift_pvalue": _num(self.drift_pvalue),
            "drift_alpha": self.drift_alpha,
            "drifting": bool(self.drifting),
            "method": self.method,
            "fitted_on": self.fitted_on,
            "groups": self.groups,
            "values": [float(v) for v in self.values],
            "replicates": self.replicates,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "df_resid": _num(self.df_resid),
        }


def fit_power_law(
    values: Sequence[float],
    errors: Any,
    confidence: float = 0.95,
    method: str = "logs",
    groups: int | None = None,
    bootstrap: int = 400,
    drift_alpha: float = 0.01,
    seed: int = 0,
) -> PowerLawFit:
    """Fit ``log(error) = a + b log(value)`` and report b with robust and bootstrap intervals.

    Parameters
    ----------
    values : array (G,), the grid (>= 4 distinct positive values over >= 1 decade, any order)
    errors : array (G, R), R >= 2 positive replicate errors per grid value
    confidence : level of the reported intervals
    method : ``"logs"`` (OLS on all G·R log errors) or ``"mom"`` (median of means, heavy tails)
    groups : number of replicate groups for ``"mom"`` (default ``max(3, round(sqrt(R)))``, at most
    R)
    bootstrap : whole-replicate resamples (>= 100)
    drift_alpha : level of the curvature test that sets ``drifting``
    seed : seed of the bootstrap resampling

    Returns
    -------
    PowerLawFit
    """
    grid = check_grid(values, "values")
    errs = _check_errors(errors, grid.size)
    confidence = check_confidence(confidence)
    method = check_choice(method, FITS, "method")
    bootstrap = check_trials(bootstrap, "bootstrap", minimum=100)
    drift_alpha = check_confidence(drift_alpha, "drift_alpha")
    rng = np.random.default_rng(child_seed(seed))
    order = np.argsort(grid)
    grid, errs = grid[order], errs[order]
    n_values, reps = errs.shape
    x = np.log(grid)
    resample = rng.integers(0, reps, size=(bootstrap, reps))

    if method == Fit.LOGS:
        if groups is not None:
            raise InputError(
                "groups only applies to method='mom'; drop groups or pass method='mom'"
            )
        logs = np.log(errs)
        locations = logs.mean(axis=1)
        xs, ys = np.repeat(x, reps), logs.ravel()
        boot_locations = logs[:, resample].mean(axis=2)
        fitted_on = f"log error of every replicate ({n_values} values x {reps} replicates)"
    else:
        groups = (
            min(reps, max(3, round(np.sqrt(reps))))
            if groups is None
            else check_trials(groups, "groups")
        )
        if groups > reps:
            raise InputError(
                f"groups={groups} exceeds the {reps} replicates; pass groups <= {reps}"
            )
        locations = np.log(_mom(errs, groups))
        xs, ys = x, locations
        boot_locations = np.log(_mom(errs[:, resample.T], groups))
        fitted_on = (
            f"log of the median over {groups} replicate groups of the group-mean error "
            f"({n_values} values)"
        )

    linear = _hc3(ys, np.column_stack([np.ones_like(xs), xs]))
    xc = xs - x.mean()
    quadratic = _hc3(ys, np.column_stack([np.ones_like(xc), xc, xc**2]))
    slope, se = float(linear.params[1]), float(linear.bse[1])
    curvature, curvature_se = float(quadratic.params[2]), float(quadratic.bse[2])
    drift_p = float(quadratic.pvalues[2])
    theil = _theil_sen(xs, ys, confidence, seed)
    boot_slopes = _slopes(x, boot_locations)

    df_resid = float(linear.df_resid)
    interval_hc3 = _hc3_interval(slope, se, df_resid, confidence)
    interval_bootstrap = _bootstrap_interval(boot_slopes, confidence)
    return PowerLawFit(
        exponent=slope,
        intercept=float(linear.params[0]),
        stderr=se,
        confidence=confidence,
        interval=_hull(interval_hc3, interval_bootstrap),
        interval_hc3=interval_hc3,
        interval_bootstrap=interval_bootstrap,
        bootstrap_stderr=float(np.std(boot_slopes, ddof=1)),
        theil_sen=float(theil.slope),
        theil_sen_interval=(float(theil.low_slope), float(theil.high_slope)),
        local_slopes=tuple(float(s) for s in np.diff(locations) / np.diff(x)),
        curvature=curvature,
        curvature_stderr=curvature_se,
        slope_change=2 * curvature * float(x[-1] - x[0]),
        drift_pvalue=drift_p,
        drift_alpha=drift_alpha,
        drifting=bool(drift_p < drift_alpha),
        method=method,
        fitted_on=fitted_on,
        groups=groups if method == Fit.MOM else None,
        values=tuple(float(v) for v in grid),
        replicates=reps,
        bootstrap=bootstrap,
        seed=int(seed),
        df_resid=df_resid,
        bootstrap_slopes=boot_slopes,
    )


@dataclass(frozen=True)
class TermsFit:
    """Non-negative multi-term fit ``error ≈ Σ_k coefficients[k] · value^exponents[k]``.

    Attributes
    ----------
    exponents, coefficients : the terms, in the order given
    intervals : percentile bootstrap interval of each coefficient (whole replicates resampled;
        ``(coefficient, coefficient)`` when there is one replicate)
    crossovers : for each pair of terms with positive coefficients, the value where they are
        equal, ``c_k v^{r_k} = c_l v^{r_l}``, and whether it lies inside the grid
    relative_rms : root-mean-square relative residual of the mean error
    """

    exponents: tuple[float, ...]
    coefficients: tuple[float, ...]
    intervals: tuple[tuple[float, float], ...]
    crossovers: tuple[dict, ...]
    relative_rms: float
    confidence: float
    values: tuple[float, ...]
    replicates: int

    def predict(self, values: Sequence[float]) -> np.ndarray:
        """The fitted error at ``values`` (any shape)."""
        v = check_finite_array(values, "values")
        return sum(c * v**r for c, r in zip(self.coefficients, self.exponents, strict=True))

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return {
            "exponents": list(self.exponents),
            "coefficients": [_num(c) for c in self.coefficients],
            "intervals": [[_num(lo), _num(hi)] for lo, hi in self.intervals],
            "crossovers": [dict(c) for c in self.crossovers],
            "relative_rms": _num(self.relative_rms),
            "confidence": self.confidence,
            "values": list(self.values),
            "replicates": self.replicates,
        }


def _nnls_relative(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Non-negative c minimising ``Σ_i (design[i] @ c / target[i] - 1)^2``."""
    weighted = design / target[:, None]
    scale = np.linalg.norm(weighted, axis=0)
    solution, _ = optimize.nnls(weighted / scale, np.ones(target.size))
    return solution / scale


def fit_terms(
    values: Sequence[float],
    errors: Any,
    exponents: Sequence[float] = (-0.5, -1.0),
    confidence: float = 0.95,
    bootstrap: int = 200,
    seed: int = 0,
) -> TermsFit:
    """Fit ``error ≈ Σ_k c_k value^{r_k}``, ``c_k >= 0``, in relative error.

    The mean error over replicates at each grid value, ``ē_i``, is fitted by
    ``scipy.optimize.nnls`` minimising ``Σ_i (Σ_k c_k v_i^{r_k} / ē_i - 1)^2``.

    Parameters
    ----------
    values : array (G,), the grid
    errors : array (G, R) of positive errors (or (G,) for one replicate; no intervals then)
    exponents : the candidate rates r_k (distinct, fewer than G)
    confidence, bootstrap, seed : percentile bootstrap over whole replicates for the coefficients

    Returns
    -------
    TermsFit
    """
    grid = check_grid(values, "values")
    errs = _check_errors(errors, grid.size, minimum_replicates=1)
    rates = check_finite_array(exponents, "exponents", ndim=1)
    if rates.size == 0 or rates.size >= grid.size:
        raise InputError(
            f"exponents must list between 1 and {grid.size - 1} rates (fewer than grid values), "
            f"got {rates.tolist()}"
        )
    if np.unique(rates).size != rates.size:
        raise InputError(f"exponents must be distinct, got {rates.tolist()}")
    confidence = check_confidence(confidence)
    bootstrap = check_trials(bootstrap, "bootstrap", minimum=100)
    design = grid[:, None] ** rates[None, :]
    mean_error = errs.mean(axis=1)
    coefficients = _nnls_relative(design, mean_error)
    reps = errs.shape[1]
    if reps > 1:
        rng = np.random.default_rng(child_seed(seed))
        boot_means = errs[:, rng.integers(0, reps, size=(bootstrap, reps))].mean(axis=2)
        draws = np.array([_nnls_relative(design, boot_means[:, b]) for b in range(bootstrap)])
        alpha = 1 - confidence
        lows, highs = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
        intervals = tuple((float(lo), float(hi)) for lo, hi in zip(lows, highs, strict=True))
    else:
        intervals = tuple((float(c), float(c)) for c in coefficients)
    crossovers = []
    for k, j in itertools.combinations(range(rates.size), 2):
        if coefficients[k] > 0 and coefficients[j] > 0:
            point = float((coefficients[j] / coefficients[k]) ** (1.0 / (rates[k] - rates[j])))
            crossovers.append(
                {
                    "exponents": [float(rates[k]), float(rates[j])],
                    "value": point,
                    "in_grid": bool(grid.min() <= point <= grid.max()),
                }
            )
    residual = design @ coefficients / mean_error - 1
    return TermsFit(
        exponents=tuple(float(r) for r in rates),
        coefficients=tuple(float(c) for c in coefficients),
        intervals=intervals,
        crossovers=tuple(crossovers),
        relative_rms=float(np.sqrt(np.mean(residual**2))),
        confidence=confidence,
        values=tuple(float(v) for v in grid),
        replicates=reps,
    )


def loglog_slope(values: Sequence[float], results: Sequence[float]) -> float:
    """Least-squares slope of ``log(results)`` against ``log(values)``, without uncertainty.

    For a deterministic quantity (a formula's output over a grid) whose exponent is read off
    directly; for noisy replicates use :func:`fit_power_law`.  ``values``, ``results``: (G,).
    """
    x = np.log(np.asarray(values, float))
    return float(np.polyfit(x, np.log(np.asarray(results, float)), 1)[0])
