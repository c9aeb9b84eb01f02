"""Rates: parameter sweeps, power-law fits and exponent verdicts.

``sweep`` runs a seeded experiment over a geometric grid, ``fit_power_law``
fits the exponent with robust and bootstrap intervals (and flags a slope that
is still drifting), ``fit_terms`` fits a non-negative sum of power laws, and
``check_exponent`` turns a fit into a consistent / inconsistent / inconclusive
verdict against a claimed exponent, in the claim's direction (upper / lower bound or order).
``exponent_reach`` says the smallest exponent error the test would have caught, and
:mod:`~dpclaims.rates.controls` applies the test to a trivial and a wrong-rate control.
"""

from .controls import WRONG_RATE_SHIFT, Control, deterministic, strength
from .fit import FITS, PowerLawFit, TermsFit, fit_power_law, fit_terms, loglog_slope
from .grid import MIN_DECADES, MIN_POINTS, check_grid, geometric_grid
from .reach import REACH_LIMIT, REACH_POWER, ExponentReach, exponent_reach
from .sweep import SweepResult, sweep
from .verdict import BOUNDS, LIMITS, VERDICTS, ExponentVerdict, check_exponent

__all__ = [
    "BOUNDS",
    "Control",
    "ExponentReach",
    "REACH_LIMIT",
    "REACH_POWER",
    "WRONG_RATE_SHIFT",
    "deterministic",
    "exponent_reach",
    "strength",
    "FITS",
    "LIMITS",
    "MIN_DECADES",
    "MIN_POINTS",
    "VERDICTS",
    "ExponentVerdict",
    "PowerLawFit",
    "SweepResult",
    "TermsFit",
    "check_exponent",
    "check_grid",
    "fit_power_law",
    "fit_terms",
    "geometric_grid",
    "loglog_slope",
    "sweep",
]
