"""Exponent verdicts: is a fitted rate consistent with the exponent a theorem claims?

:func:`check_exponent` reads the fit's interval ``[lo, hi]`` at ``confidence`` (each end is
a one-sided test at level ``(1 - confidence) / 2``: 5 % at the default 0.90) against the
claimed exponent ``expected`` with tolerance ``margin``, in the claim's direction ``bound``:

* ``order`` (a Θ(·) rate, or an exact law): an equivalence test (TOST) —
  ``consistent`` when ``[lo, hi]`` lies inside ``[expected - margin, expected + margin]``,
  ``inconsistent`` when it lies entirely outside that band, ``inconclusive`` otherwise;
* ``upper`` (an O(·) bound on the quantity): ``inconsistent`` only when the whole interval
  lies above ``expected + margin`` (the quantity significantly decays more slowly, or
  grows faster, than claimed), ``consistent`` when the whole interval lies at or below
  it (decaying faster than claimed is no evidence against an upper bound);
* ``lower`` (an Ω(·) bound): the mirror image, against ``expected - margin``.

The direction of an exponent bound depends on the limit the claim is about: for a
quantity ``∝ x^b`` bounded above as ``x → ∞`` the exponent must be ``≤ expected``, as
``x → 0`` (``limit="small"``, e.g. an ε or an accuracy α going to 0) it must be
``≥ expected``.  ``check_exponent`` applies that flip itself.

``direction`` compares the exponent with ``expected`` itself: ``faster`` when the
whole interval lies on the side where the quantity is smaller in the limit (below
``expected`` for ``x → ∞``, above it for ``x → 0``), ``slower`` on the other side,
``indistinguishable`` otherwise.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, check_choice, check_confidence
from ..verdicts import Verdict
from ..vocabulary import BOUNDS, LIMITS, Bound, Limit
from .fit import PowerLawFit

__all__ = ["BOUNDS", "LIMITS", "VERDICTS", "ExponentVerdict", "check_exponent"]

VERDICTS = (Verdict.CONSISTENT, Verdict.INCONSISTENT, Verdict.INCONCLUSIVE)
"""The verdicts :func:`check_exponent` returns."""


@dataclass(frozen=True)
class ExponentVerdict:
    """Outcome of :func:`check_exponent`."""

    verdict: Verdict
    direction: str
    exponent: float
    interval: tuple[float, float]
    confidence: float
    expected: float
    margin: float
    drifting: bool
    message: str
    bound: str = "order"
    limit: str = "large"
    reason: str = ""

    @property
    def passed(self) -> bool:
        """True when the verdict is ``consistent``."""
        return self.verdict == Verdict.CONSISTENT

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return {
            "verdict": str(self.verdict),
            "direction": self.direction,
            "exponent": float(self.exponent),
            "interval": [float(v) for v in self.interval],
            "confidence": self.confidence,
            "expected": self.expected,
            "margin": self.margin,
            "bound": self.bound,
            "limit": self.limit,
            "drifting": bool(self.drifting),
            "message": self.message,
            "reason": self.reason,
        }


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}; pass e.g. {name}=-0.5")
    return float(value)


def _verdict(
    lo: float, hi: float, *, expected: float, margin: float, exponent_bound: str
) -> Verdict:
    """The verdict of ``[lo, hi]`` against a bound on the exponent (upper: exponent ≤ expected)."""
    top, bottom = expected + margin, expected - margin
    if exponent_bound == Bound.UPPER:
        return (
            Verdict.CONSISTENT
            if hi <= top
            else Verdict.INCONSISTENT
            if lo > top
            else Verdict.INCONCLUSIVE
        )
    if exponent_bound == Bound.LOWER:
        return (
            Verdict.CONSISTENT
            if lo >= bottom
            else Verdict.INCONSISTENT
            if hi < bottom
            else Verdict.INCONCLUSIVE
        )
    if bottom <= lo and hi <= top:
        return Verdict.CONSISTENT
    return Verdict.INCONSISTENT if hi < bottom or lo > top else Verdict.INCONCLUSIVE


_CLAIM_TEXT = {
    "order": "{e:g} ± {m:g}",
    "upper": "exponent ≤ {e:g} + {m:g} (one-sided)",
    "lower": "exponent ≥ {e:g} − {m:g} (one-sided)",
}


def _reason(
    verdict: Verdict,
    lo: float,
    hi: float,
    *,
    expected: float,
    margin: float,
    bound: str,
    exponent_bound: str,
    limit: str,
    confidence: float,
) -> str:
    """One sentence: why ``[lo, hi]`` gives ``verdict``, naming only the edges the test uses.

    A one-sided test (``exponent_bound`` ``"upper"`` or ``"lower"``) tests one edge of the band:
    the text names that edge alone, never "the band", since an exponent beyond the other edge
    is no evidence against the claim.
    """
    interval = f"the slope's {100 * confidence:g}% interval [{lo:.3f}, {hi:.3f}]"
    top, bottom = expected + margin, expected - margin
    if exponent_bound == Bound.ORDER:
        band = f"the claimed band {expected:.4g} ± {margin:.4g} = [{bottom:.4g}, {top:.4g}]"
        if verdict == Verdict.CONSISTENT:
            return f"{interval} lies inside {band}"
        if verdict == Verdict.INCONSISTENT:
            side, edge = ("below", "lower") if hi < bottom else ("above", "upper")
            value = bottom if hi < bottom else top
            return f"{interval} lies entirely {side} the {edge} edge {value:.4g} of {band}"
        edges = [(name, v) for name, v in (("lower", bottom), ("upper", top)) if lo < v < hi]
        which = f"the {edges[0][0]} edge {edges[0][1]:.4g}" if len(edges) == 1 else "both edges"
        return (
            f"{interval} straddles {which} of {band}: this sweep cannot tell whether the "
            "exponent lies inside the band"
        )
    upper = exponent_bound == Bound.UPPER
    edge, name = (top, "upper") if upper else (bottom, "lower")
    sign = "+" if upper else "−"
    # what an exponent beyond the tested edge means for the quantity, in the claim's limit
    kind = {
        ("large", True): "decaying slower than claimed",
        ("large", False): "decaying faster than claimed",
        ("small", True): "shrinking faster than claimed as the variable goes to 0",
        ("small", False): "shrinking slower than claimed as the variable goes to 0",
    }[limit, upper]
    text = (
        f"bound {bound!r}: only exponents {'above' if upper else 'below'} {expected:.4g} {sign} "
        f"{margin:.4g}, the quantity {kind}, are inconsistent"
    )
    if verdict == Verdict.CONSISTENT:
        where = "at or below" if upper else "at or above"
        return f"{interval} lies {where} the claimed {name} edge {edge:.4g} ({text})"
    if verdict == Verdict.INCONSISTENT:
        where = "above" if upper else "below"
        return f"{interval} lies entirely {where} the claimed {name} edge {edge:.4g} ({text})"
    return (
        f"{interval} straddles the claimed {name} edge {edge:.4g} ({text}): this sweep cannot "
        f"tell on which side of {edge:.4g} the exponent lies"
    )


def check_exponent(
    fit: PowerLawFit,
    expected: float,
    margin: float = 0.1,
    confidence: float = 0.90,
    *,
    bound: str = "order",
    limit: str = "large",
) -> ExponentVerdict:
    """Test ``fit.exponent`` against the claimed exponent ``expected`` in the claim's direction.

    Parameters
    ----------
    fit : a :class:`~dpclaims.rates.fit.PowerLawFit`
    expected : the claimed exponent (e.g. -0.5 for error ∝ n^{-1/2})
    margin : tolerance (> 0) around ``expected`` counted as "the claimed exponent"
    confidence : level of the interval used (0.90 = one-sided tests at 5 % at each end)
    bound : ``"upper"`` (O(·)), ``"lower"`` (Ω(·)) or ``"order"`` (Θ(·), two-sided)
    limit : ``"large"`` when the claim is about the parameter growing, ``"small"`` when about it
        shrinking to 0 (flips which side of ``expected`` an upper bound allows)

    Returns
    -------
    ExponentVerdict
    """
    if not isinstance(fit, PowerLawFit):
        raise InputError(
            "fit must be a PowerLawFit (from fit_power_law or SweepResult.fit()), got "
            f"{type(fit).__name__}"
        )
    expected = _finite(expected, "expected")
    margin = _finite(margin, "margin")
    if margin <= 0:
        raise InputError(f"margin must be > 0, got {margin!r}; pass e.g. margin=0.1")
    confidence = check_confidence(confidence)
    bound = check_choice(bound, BOUNDS, "bound")
    limit = check_choice(limit, LIMITS, "limit")
    flip = {"upper": "lower", "lower": "upper", "order": "order"}
    exponent_bound = bound if limit == Limit.LARGE else flip[bound]
    lo, hi = fit.interval_at(confidence)
    verdict = _verdict(lo, hi, expected=expected, margin=margin, exponent_bound=exponent_bound)
    below, above = ("faster", "slower") if limit == Limit.LARGE else ("slower", "faster")
    direction = below if hi < expected else above if lo > expected else "indistinguishable"
    relation = (
        "indistinguishable from the claim"
        if direction == "indistinguishable"
        else f"{direction} than claimed"
    )
    claimed = _CLAIM_TEXT[exponent_bound].format(e=expected, m=margin)
    message = (
        f"{verdict}: fitted exponent {fit.exponent:.3f}, {100 * confidence:g}% CI [{lo:.3f}, "
        f"{hi:.3f}] "
        f"vs claimed {claimed} ({relation})"
    )
    if fit.drifting:
        message += (
            f"; warning: the local slope is still changing (curvature p={fit.drift_pvalue:.2g}, "
            f"local slopes {[round(s, 3) for s in fit.local_slopes]}) — a lower-order term or a "
            "floor may bias the fit"
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
        bound=bound,
        limit=limit,
        reason=_reason(
            verdict,
            lo,
            hi,
            expected=expected,
            margin=margin,
            bound=bound,
            exponent_bound=exponent_bound,
            limit=limit,
            confidence=confidence,
        ),
    )
