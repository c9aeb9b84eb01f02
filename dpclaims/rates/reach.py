"""The exponent reach of a rate test: the smallest exponent error it would have caught.

A rate test that finds a slope "consistent" with a claimed ``n^{-1/2}`` says little when its
replicates are so noisy that an algorithm decaying as ``n^{-1/4}`` would pass too.  The
*reach* makes this explicit: the smallest error ``δ`` in the exponent (a true exponent
``expected + δ`` on the side the claim forbids) that the same test (sweep, replicates, fit and
decision rule) finds ``inconsistent`` with probability at least ``power`` (0.9).

The model is a parametric bootstrap of the sweep's own residuals, on the log scale the fit
uses: the log errors are split into the fitted line, each grid value's lack of fit (kept as it
is) and each replicate's deviation from its grid value's mean (inflated by ``sqrt(R / (R-1))``,
scaled up to a 90 % upper confidence bound of its scale, with degrees of freedom cut by the
pooled kurtosis, and resampled with replacement within its grid value).  Each synthetic
sweep is fitted and tested exactly as :func:`~dpclaims.rates.fit.fit_power_law` and
:func:`~dpclaims.rates.verdict.check_exponent` do (the interval is the hull of the HC3 t
interval and the whole-replicate percentile bootstrap), vectorised over the draws.  Adding
``δ log(value)`` to every log error shifts the fitted slope and both intervals by ``δ``
exactly, so one set of draws gives the detection probability at every ``δ``: the reach is a
quantile of the draws' interval edges, with no search.

The reach is about the exponent the fit sees on this grid; a lower-order term that bends
the curve enters through the lack of fit.  ``tests/rates/test_rates_reach.py`` validates it on
synthetic curves of known exponent (lognormal and heavy-tailed replicate noise, a lower-order
term): detection at the predicted reach is about ``power``, and far below it at half of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from ..errors import check_choice, check_confidence, check_trials
from ..execution import child_seed
from ..vocabulary import BOUNDS, FITS, LIMITS, Bound, Fit, Limit
from .fit import _check_errors, _mom
from .grid import check_grid

__all__ = ["REACH_LIMIT", "REACH_POWER", "ExponentReach", "exponent_reach", "forbidden_sides"]

REACH_LIMIT = 0.25
"""A rate test is ``consistent`` only when its reach is at most this exponent error; above it
the verdict is ``consistent_weak`` (the same 0.25 as the wrong-rate control's shift)."""

REACH_POWER = 0.9
"""The probability with which a rate test must catch an exponent error for it to be in reach."""

DRAWS = 400
"""Synthetic sweeps the reach is computed from: it moves by about 0.005 between seeds (standard
deviation over 30 seeds of a reach of 0.26, 6 values × 10 replicates, log noise 0.3)."""

SCALE_CONFIDENCE = 0.9
"""The replicate noise of one sweep is an estimate: the reach takes its scale at this upper
confidence bound, so that it holds on average over sweeps, heavy-tailed ones too."""

BOOTSTRAP = 200
"""Whole-replicate resamples of each synthetic sweep's percentile bootstrap."""

MODEL = (
    "parametric bootstrap of the sweep's log-scale residuals (lack of fit kept, replicate "
    "deviations resampled within each grid value), refitted and tested as the claim was"
)


@dataclass(frozen=True)
class ExponentReach:
    """The smallest exponent error a rate test catches with probability ``power``.

    ``shift``: the reach, the largest over the tested ``sides``; ``sides``: ``{"above": δ,
    "below": δ}`` for the exponents above / below the claim the test can call inconsistent
    (one side for an upper or lower bound, both for an order); ``limit``: the largest reach a
    ``consistent`` verdict allows.
    """

    shift: float
    sides: dict[str, float]
    power: float = REACH_POWER
    limit: float = REACH_LIMIT
    draws: int = DRAWS
    model: str = MODEL

    @property
    def within(self) -> bool:
        """True when the reach is at most :attr:`limit`."""
        return self.shift <= self.limit

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {
            "shift": self.shift,
            "sides": dict(self.sides),
            "power": self.power,
            "limit": self.limit,
            "within": self.within,
            "draws": self.draws,
            "model": self.model,
        }


def forbidden_sides(bound: str, limit: str) -> tuple[str, ...]:
    """The sides of the claimed exponent a test in direction ``bound`` as the variable goes to
    ``limit`` can call inconsistent: ``("above",)``, ``("below",)`` or both."""
    bound = check_choice(bound, BOUNDS, "bound")
    limit = check_choice(limit, LIMITS, "limit")
    if bound == Bound.ORDER:
        return ("above", "below")
    upper = (bound == Bound.UPPER) == (limit == Limit.LARGE)
    return ("above",) if upper else ("below",)


def _scale_bound(deviations: np.ndarray) -> float:
    """The factor raising the deviations' scale to its :data:`SCALE_CONFIDENCE` upper bound:
    ``sqrt(df / χ²_df(1 - level))`` with the degrees of freedom ``G (R-1)`` cut by the pooled
    kurtosis (never below a normal's), so heavy tails widen it."""
    values, reps = deviations.shape
    second = float(np.mean(deviations**2))
    if second == 0:
        return 1.0
    kurtosis = max(float(np.mean(deviations**4)) / second**2, 3.0)
    df = values * (reps - 1) * 2.0 / (kurtosis - 1.0)
    return math.sqrt(df / float(stats.chi2.ppf(1 - SCALE_CONFIDENCE, df)))


def _synthetic(y: np.ndarray, x: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, G, R) log errors of exponent 0: each value's lack of fit plus its replicate
    deviations resampled (inflated by sqrt(R / (R-1)) and by :func:`_scale_bound`)."""
    reps = y.shape[1]
    means = y.mean(axis=1)
    slope, intercept = np.polyfit(x, means, 1)
    lack = means - (intercept + slope * x)
    deviations = y - means[:, None]
    deviations = deviations * (math.sqrt(reps / (reps - 1)) * _scale_bound(deviations))
    pick = rng.integers(0, reps, size=(draws, y.shape[0], reps))
    rows = np.arange(y.shape[0])[None, :, None]
    return lack[None, :, None] + deviations[rows, pick]


def _hc3(x: np.ndarray, ys: np.ndarray, copies: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Slope, HC3 standard error and residual df of OLS of ``ys`` (D, G, copies) on ``x`` (G,),
    each x repeated ``copies`` times, for every draw."""
    points = x.size * copies
    xc = x - x.mean()
    sxx = copies * float(xc @ xc)
    slope = np.einsum("i,dij->d", xc, ys) / sxx
    centre = ys.mean(axis=(1, 2))
    resid = ys - centre[:, None, None] - slope[:, None, None] * xc[None, :, None]
    leverage = 1.0 / points + xc**2 / sxx
    weight = (xc / sxx) ** 2 / (1 - leverage) ** 2
    var = np.einsum("i,dij->d", weight, resid**2)
    return slope, np.sqrt(var), points - 2


def _offsets(
    x: np.ndarray,
    ys: np.ndarray,
    *,
    method: str,
    groups: int | None,
    confidence: float,
    bootstrap: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper edges (D,) of each synthetic sweep's interval at ``confidence``: the
    hull of the HC3 t interval and the whole-replicate percentile bootstrap, as the fit."""
    draws, _, reps = ys.shape
    xc = x - x.mean()
    weights = xc / float(xc @ xc)
    resample = rng.integers(0, reps, size=(bootstrap, reps))
    if method == Fit.LOGS:
        slope, se, df = _hc3(x, ys, reps)
        counts = np.zeros((bootstrap, reps))
        np.add.at(counts, (np.arange(bootstrap)[:, None], resample), 1.0 / reps)
        boot = np.einsum("i,dij->dj", weights, ys) @ counts.T
    else:
        locations = np.log(_mom(np.exp(ys).transpose(1, 2, 0), groups)).T  # (D, G)
        slope, se, df = _hc3(x, locations[:, :, None], 1)
        boot = np.empty((draws, bootstrap))
        for start in range(0, draws, 50):  # bounded memory: (50, G, B, R) at a time
            block = np.exp(ys[start : start + 50])[:, :, resample]  # (d, G, B, R)
            moms = np.log(_mom(block.transpose(1, 3, 0, 2), groups))  # (G, d, B)
            boot[start : start + 50] = np.einsum("i,idb->db", weights, moms)
    q = float(special.stdtrit(df, 0.5 + confidence / 2))  # stats.t.ppf's value, no wrapper
    alpha = 1 - confidence
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=1)
    return np.minimum(slope - q * se, low), np.maximum(slope + q * se, high)


def exponent_reach(
    values: Sequence[float],
    errors: Any,
    *,
    margin: float,
    bound: str = "order",
    limit: str = "large",
    method: str = "logs",
    groups: int | None = None,
    confidence: float = 0.90,
    power: float = REACH_POWER,
    reach_limit: float = REACH_LIMIT,
    draws: int = DRAWS,
    seed: int = 0,
) -> ExponentReach:
    """The reach of the rate test of ``errors`` (G, R) over ``values`` (G,).

    Parameters
    ----------
    values, errors : the sweep's grid and replicate errors (as for ``fit_power_law``)
    margin, bound, limit, confidence : the test's (as for ``check_exponent``)
    method, groups : the fit's (``"logs"`` or ``"mom"``)
    power : the detection probability the reach is defined at
    reach_limit : the largest reach a ``consistent`` verdict allows (reported with the reach)
    draws : synthetic sweeps (each with :data:`BOOTSTRAP` percentile-bootstrap resamples)
    seed : seed of the draws

    Returns
    -------
    ExponentReach
    """
    grid = check_grid(values, "values")
    errs = _check_errors(errors, grid.size)
    method = check_choice(method, FITS, "method")
    confidence = check_confidence(confidence)
    power = check_confidence(power, "power")
    draws = check_trials(draws, "draws", minimum=100)
    order = np.argsort(grid)
    x, y = np.log(grid[order]), np.log(errs[order])
    reps = y.shape[1]
    if method == Fit.MOM and groups is None:
        groups = min(reps, max(3, round(math.sqrt(reps))))
    rng = np.random.default_rng(child_seed(seed, 2))
    ys = _synthetic(y, x, draws, rng)
    low, high = _offsets(
        x, ys, method=method, groups=groups, confidence=confidence, bootstrap=BOOTSTRAP, rng=rng
    )
    # inconsistent above when δ + low > margin, below when -δ + high < -margin
    reach = {
        "above": float(margin - np.quantile(low, 1 - power)),
        "below": float(margin + np.quantile(high, power)),
    }
    sides = {side: max(reach[side], 0.0) for side in forbidden_sides(bound, limit)}
    return ExponentReach(
        shift=max(sides.values()), sides=sides, power=power, limit=reach_limit, draws=draws
    )
