"""Exponent verdicts: is a fitted rate consistent with the exponent a theorem claims?

:func:`check_exponent` is an equivalence test (two one-sided tests, TOST, at
level ``(1 - confidence) / 2`` each; the default ``confidence=0.90`` is TOST at
5 %): with ``[lo, hi]`` the fit's interval at ``confidence``,

* ``consistent``   — ``[lo, hi]`` lies inside ``[expected - margin, expected + margin]``;
* ``inconsistent`` — ``[lo, hi]`` lies entirely outside that band (above or below it);
* ``inconclusive`` — otherwise (the interval straddles an edge of the band).

``direction`` compares the exponent with ``expected`` itself: ``faster`` when the
whole interval lies below ``expected`` (the error falls faster — or a cost grows
more slowly — than claimed; for error exponents more negative is faster),
``slower`` when it lies above, ``indistinguishable`` otherwise.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, check_confidence
from .fit import PowerLawFit

__all__ = ["VERDICTS", "ExponentVerdict", "check_exponent"]

VERDICTS = ("consistent", "inconsistent", "inconclusive")


@dataclass(frozen=True)
class ExponentVerdict:
    """Outcome of :func:`check_exponent`."""

    verdict: str
    direction: str
    exponent: float
    interval: tuple[float, float]
    confidence: float
    expected: float
    margin: float
    drifting: bool
    message: str

    @property
    def passed(self) -> bool:
        """True when the verdict is ``consistent``."""
        return self.verdict == "consistent"

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return {
            "verdict": self.verdict,
            "direction": self.direction,
            "exponent": float(self.exponent),
            "interval": [float(v) for v in self.interval],
            "confidence": self.confidence,
            "expected": self.expected,
            "margin": self.margin,
            "drifting": bool(self.drifting),
            "message": self.message,
        }


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}; pass e.g. {name}=-0.5")
    return float(value)


def check_exponent(fit: PowerLawFit, expected: float, margin: float = 0.1, confidence: float = 0.90) -> ExponentVerdict:
    """Equivalence test of ``fit.exponent`` against ``expected ± margin``.

    Parameters
    ----------
    fit : a :class:`~dpclaims.rates.fit.PowerLawFit`
    expected : the claimed exponent (e.g. -0.5 for error ∝ n^{-1/2})
    margin : half-width (> 0) of the band of exponents counted as "the claimed one"
    confidence : level of the interval used (0.90 = TOST at 5 %)

    Returns
    -------
    ExponentVerdict
    """
    if not isinstance(fit, PowerLawFit):
        raise InputError(f"fit must be a PowerLawFit (from fit_power_law or SweepResult.fit()), got {type(fit).__name__}")
    expected = _finite(expected, "expected")
    margin = _finite(margin, "margin")
    if margin <= 0:
        raise InputError(f"margin must be > 0, got {margin!r}; pass e.g. margin=0.1")
    confidence = check_confidence(confidence)
    lo, hi = fit.interval_at(confidence)
    band = (expected - margin, expected + margin)
    if band[0] <= lo and hi <= band[1]:
        verdict = "consistent"
    elif hi < band[0] or lo > band[1]:
        verdict = "inconsistent"
    else:
        verdict = "inconclusive"
    direction = "faster" if hi < expected else "slower" if lo > expected else "indistinguishable"
    relation = "indistinguishable from the claim" if direction == "indistinguishable" else f"{direction} than claimed"
    message = (
        f"{verdict}: fitted exponent {fit.exponent:.3f}, {100 * confidence:g}% CI [{lo:.3f}, {hi:.3f}] "
        f"vs claimed {expected:g} ± {margin:g} ({relation})"
    )
    if fit.drifting:
        message += (
            f"; warning: the local slope is still changing (curvature p={fit.drift_pvalue:.2g}, "
            f"local slopes {[round(s, 3) for s in fit.local_slopes]}) — a lower-order term or a floor may bias the fit"
        )
    return ExponentVerdict(
        verdict=verdict,
        direction=direction,
        exponent=fit.exponent,
        interval=(lo, hi),
        confidence=confidence,
        expected=expected,
        margin=margin,
        drifting=fit.drifting,
        message=message,
    )
