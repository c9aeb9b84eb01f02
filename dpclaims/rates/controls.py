"""Controls of a rate test, and how strong a ``consistent`` rate verdict may be.

A rate test has shown something only if it fails where it should.  Each rate verdict is
therefore reported with two *controls*, the same sweep, fit and decision applied to

* a **trivial** algorithm — the constant output or initial point the paper's algorithm starts
  from (its error per grid value and replicate, from the experiment's ``trivial`` hook or its
  saturation :class:`~dpclaims.rates.caveats.Baseline`); it must come out ``inconsistent``
  (not applicable to a lower bound Ω(·), which a constant output meets too);
* a **wrong-rate** variant — the measured errors multiplied by the swept variable to the
  power :data:`WRONG_RATE_SHIFT` on the side the claim forbids (the slower side for an order
  claim); it should come out ``inconsistent`` (reported; the exponent reach is what gates);

and with its exponent reach (:mod:`dpclaims.rates.reach`).  :func:`strength` turns a
``consistent`` verdict into ``consistent_weak`` with the reason when the trivial control is
missing or passes, or the reach exceeds its limit; and a sweep whose replicates have zero
spread (:func:`deterministic`: a schedule or a formula, not a noisy algorithm) is ``formula``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..results.evidence import control_text
from ..verdicts import Verdict
from ..vocabulary import Bound, Limit
from .fit import fit_power_law
from .reach import ExponentReach, forbidden_sides
from .verdict import check_exponent

__all__ = [
    "WRONG_RATE_SHIFT",
    "Control",
    "deterministic",
    "run_control",
    "unavailable",
    "wrong_rate_errors",
    "strength",
]

WRONG_RATE_SHIFT = 0.25
"""The exponent error of the wrong-rate control: the errors times ``value ** ±0.25``."""

DETERMINISTIC = (
    "every grid value's replicates are equal (zero spread): the sweep measures a deterministic "
    "schedule or formula, not a noisy algorithm"
)

NOT_APPLICABLE = "not applicable: a constant output meets a lower bound (Ω) too"

NO_TRIVIAL = (
    "no trivial control: the experiment names no trivial output (a constant or the initial "
    "point), so this test is not shown to fail for one"
)


@dataclass(frozen=True)
class Control:
    """The same sweep, fit and decision applied to a control algorithm.

    ``name``: ``"trivial"`` or ``"wrong_rate"``; ``what``: the control in words; ``verdict``:
    the test's verdict on it (``None`` when the control is not available, or not applicable,
    with the reason in ``reason``); ``exponent``, ``interval``: its fitted slope and interval.
    """

    name: str
    what: str
    verdict: str | None
    exponent: float | None = None
    interval: tuple[float, float] | None = None
    reason: str = ""

    @property
    def caught(self) -> bool:
        """True when the test calls the control ``inconsistent`` (as it should)."""
        return self.verdict == Verdict.INCONSISTENT

    def describe(self) -> str:
        """E.g. ``"outputting the origin: inconsistent (slope 0.000 [-0.010, 0.010])"``."""
        return control_text(self.to_dict())

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {
            "name": self.name,
            "what": self.what,
            "verdict": None if self.verdict is None else str(self.verdict),
            "exponent": self.exponent,
            "interval": None if self.interval is None else list(self.interval),
            "reason": self.reason,
        }


def deterministic(errors: Any) -> bool:
    """True when every grid value's replicates are equal (zero spread, to 1e-12 relative)."""
    errs = np.asarray(errors, dtype=np.float64)
    spread = errs.max(axis=1) - errs.min(axis=1)
    return bool(np.all(spread <= 1e-12 * np.abs(errs).max(axis=1)))


def unavailable(name: str, what: str, reason: str) -> Control:
    """A control that did not run, with the reason."""
    return Control(name=name, what=what, verdict=None, reason=reason)


def run_control(
    name: str,
    what: str,
    values: Sequence[float],
    errors: Any,
    *,
    expected: float,
    margin: float,
    bound: str,
    limit: str,
    method: str,
    seed: int,
) -> Control:
    """The test of ``errors`` (G, R) over ``values``: fit and decision as the claim's."""
    with warnings.catch_warnings():  # a constant control has zero residuals: NaN-free, but noisy
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = fit_power_law(values, errors, method=method, seed=seed)
    check = check_exponent(fit, expected, margin=margin, bound=bound, limit=limit)
    return Control(
        name=name,
        what=what,
        verdict=str(check.verdict),
        exponent=float(fit.exponent),
        interval=tuple(float(v) for v in check.interval),
    )


def wrong_rate_errors(
    values: Sequence[float], errors: Any, *, bound: str, limit: str
) -> tuple[np.ndarray, str]:
    """The errors times ``value ** ±WRONG_RATE_SHIFT`` on the side the claim forbids (the
    slower side for an order claim), and that factor in words."""
    sides = forbidden_sides(bound, limit)
    if len(sides) == 2:  # order: the slower side, as a buggy algorithm would be
        sides = ("above",) if limit == Limit.LARGE else ("below",)
    power = WRONG_RATE_SHIFT if sides == ("above",) else -WRONG_RATE_SHIFT
    grid = np.asarray(values, dtype=np.float64)
    return np.asarray(errors, dtype=np.float64) * grid[:, None] ** power, f"^{power:+g}"


def strength(
    verdict: str, *, bound: str, trivial: Control, reach: ExponentReach
) -> tuple[str, str]:
    """``(verdict, reason)``: a ``consistent`` rate verdict stays so only when its trivial
    control is caught (or not applicable: a lower bound) and its reach is within its limit;
    else ``consistent_weak`` with the reasons.  Other verdicts pass through."""
    if verdict != Verdict.CONSISTENT:
        return verdict, ""
    reasons = []
    if bound != Bound.LOWER and not trivial.caught:
        reasons.append(
            trivial.reason
            if trivial.verdict is None
            else f"a constant output passes this test ({trivial.describe()})"
        )
    if not reach.within:
        reasons.append(
            f"its exponent reach {reach.shift:.3g} exceeds {reach.limit:g}: an exponent error "
            f"below {reach.shift:.3g} passes with probability over {1 - reach.power:.0%}"
        )
    return (Verdict.CONSISTENT_WEAK, "; ".join(reasons)) if reasons else (verdict, "")
