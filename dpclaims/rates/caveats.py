"""When a sweep cannot show a rate: saturated at a trivial baseline, or pre-asymptotic.

A fitted slope says something about a claimed rate only where the rate is what
shapes the error.  Two things break that, and either makes a sweep unable to show
that a claim is wrong (an ``inconsistent`` verdict becomes ``inconclusive`` with the
reason; a ``consistent`` one stands, since agreeing with the claim needs no excuse):

* **saturation** — at some grid value the algorithm does no better than a trivial
  output the experiment names (:class:`Baseline`, e.g. returning the initial point):
  the mean error's one-sided upper confidence bound reaches the baseline's error, so
  that point measures the noise floor of a useless output, not the rate;
* **drift** — the local slope changes significantly along the grid
  (:attr:`~dpclaims.rates.fit.PowerLawFit.drifting`, the HC3 test of a quadratic term in
  log value at the fit's ``drift_alpha``) and the last local slope, at the largest scale,
  has reached or crossed the claimed band: a lower-order term or a floor is still in the
  way, so the fitted slope is not yet the asymptotic one.  A drift that stays on the far
  side of the band (a real gap seen with little noise) does not excuse the finding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError, check_confidence, check_finite_array
from ..vocabulary import Verdict
from .fit import PowerLawFit

__all__ = ["Baseline", "saturated_values", "sweep_caveats", "apply_caveats"]


@dataclass(frozen=True)
class Baseline:
    """A trivial output and its error, the level below which an algorithm must get to say anything.

    ``error`` is one number for every grid value or a function ``error(value) -> float``
    (e.g. the excess risk of the origin when it depends on n).
    """

    name: str
    error: float | Callable[[float], float]

    def at(self, values: Sequence[float]) -> np.ndarray:
        """The baseline's error at each grid value: (G,)."""
        grid = check_finite_array(values, "values", ndim=1)
        if callable(self.error):
            out = np.array([float(self.error(float(v))) for v in grid])
        else:
            out = np.full(grid.shape, float(self.error))
        if not np.all(np.isfinite(out)) or np.any(out <= 0):
            raise InputError(
                f"baseline {self.name!r} must have a finite positive error at every grid value, "
                f"got "
                f"{out.tolist()}; pass the trivial output's error, e.g. Baseline('origin', 0.045)"
            )
        return out

    def to_dict(self, values: Sequence[float]) -> dict:
        """JSON-ready: the name and the error at each grid value."""
        return {"name": self.name, "errors": self.at(values).tolist()}


def saturated_values(
    values: Sequence[float], errors: Any, baseline: Baseline, confidence: float = 0.95
) -> list[float]:
    """Grid values where the algorithm does no better than ``baseline``.

    A value counts when the one-sided ``confidence`` upper bound of the mean error over
    its replicates (Student t) reaches the baseline's error: the sweep cannot show that the
    algorithm beats the trivial output there.

    Parameters
    ----------
    values : (G,) grid
    errors : (G, R) replicate errors, R >= 2
    baseline : the trivial output
    confidence : level of the one-sided bound
    """
    grid = check_finite_array(values, "values", ndim=1)
    errs = check_finite_array(errors, "errors", ndim=2)
    if errs.shape[0] != grid.size or errs.shape[1] < 2:
        raise InputError(f"errors must have shape (G, R) = ({grid.size}, R >= 2), got {errs.shape}")
    confidence = check_confidence(confidence)
    reps = errs.shape[1]
    upper = errs.mean(axis=1) + stats.t.ppf(confidence, reps - 1) * errs.std(
        axis=1, ddof=1
    ) / math.sqrt(reps)
    return [float(v) for v, u, b in zip(grid, upper, baseline.at(grid), strict=True) if u >= b]


def _drifts_to_band(fit: PowerLawFit, band: tuple[float, float] | None) -> bool:
    """True when the slope drifts and the last local slope (the largest scale) has reached the
    claimed band or crossed it: the fitted slope may then be a pre-asymptotic mixture.  A drift
    that stays on the fitted exponent's side of the band cannot excuse the gap."""
    if not fit.drifting:
        return False
    if band is None:
        return True
    last = fit.local_slopes[-1]
    return last <= band[1] if fit.exponent > band[1] else last >= band[0]


def sweep_caveats(
    fit: PowerLawFit,
    values: Sequence[float],
    errors: Any,
    baseline: Baseline | None = None,
    band: tuple[float, float] | None = None,
) -> list[str]:
    """Reasons why the sweep behind ``fit`` cannot show a claimed rate wrong (empty when none).

    Parameters
    ----------
    fit : the power-law fit of the sweep
    values : (G,) the sweep's grid
    errors : (G, R) its replicate errors
    baseline : the trivial output the experiment names, if any
    band : ``(expected - margin, expected + margin)``, the claimed exponents; a drift counts
        only when the last local slope has reached or crossed it (any drift when None)
    """
    reasons = []
    if baseline is not None:
        flat = saturated_values(values, errors, baseline)
        if flat:
            levels = baseline.at(flat)
            where = ", ".join(f"{v:g}" for v in flat)
            level = (
                f"{levels[0]:.3g}"
                if np.all(levels == levels[0])
                else ", ".join(f"{b:.3g}" for b in levels)
            )
            reasons.append(
                f"saturated: at {where} the error is not significantly below that of "
                f"{baseline.name} ({level})"
            )
    if _drifts_to_band(fit, band):
        slopes = ", ".join(f"{s:.2f}" for s in fit.local_slopes)
        reasons.append(
            f"pre-asymptotic: the local slopes drift along the grid ({slopes}; curvature test "
            f"p = {fit.drift_pvalue:.2g} < {fit.drift_alpha:g})"
            + (" towards the claimed band" if band is not None else "")
        )
    return reasons


def apply_caveats(verdict: str, reasons: Sequence[str]) -> str:
    """``inconclusive`` for an ``inconsistent`` verdict with caveats; else ``verdict``."""
    return "inconclusive" if verdict == Verdict.INCONSISTENT and reasons else verdict
