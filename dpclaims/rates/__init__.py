"""Rates: parameter sweeps, power-law fits and exponent verdicts.

``sweep`` runs a seeded experiment over a geometric grid, ``fit_power_law``
fits the exponent with robust and bootstrap intervals (and flags a slope that
is still drifting), ``fit_terms`` fits a non-negative sum of power laws, and
``check_exponent`` turns a fit into a consistent / inconsistent / inconclusive
verdict against a claimed exponent, in the claim's direction (upper / lower bound or order).
"""

from .fit import FITS, PowerLawFit, TermsFit, fit_power_law, fit_terms, loglog_slope
from .grid import MIN_DECADES, MIN_POINTS, check_grid, geometric_grid
from .sweep import SweepResult, sweep
from .verdict import BOUNDS, LIMITS, VERDICTS, ExponentVerdict, check_exponent

__all__ = [
    "BOUNDS",
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
