"""Geometric parameter grids and the check every rate sweep and fit applies to its grid.

A power law is only identifiable from a grid that spans a decent range on the
log scale, so grids must have at least :data:`MIN_POINTS` distinct positive
values spanning at least :data:`MIN_DECADES` decade(s).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError, check_finite_array, check_positive, check_trials

__all__ = ["MIN_POINTS", "MIN_DECADES", "geometric_grid", "check_grid"]

MIN_POINTS = 4
"""Fewest grid values a sweep or fit accepts."""

MIN_DECADES = 1.0
"""Smallest accepted span ``log10(max / min)`` of a grid."""


def geometric_grid(low: float, high: float, points: int, integer: bool = False) -> np.ndarray:
    """``points`` values spaced evenly on the log scale from ``low`` to ``high`` (both included).

    Parameters
    ----------
    low, high : positive numbers with ``high / low >= 10`` (one decade)
    points : number of grid values, at least 4
    integer : round to whole numbers (for n, m, T, ...); returns int64

    Returns
    -------
    grid : array (points,), strictly increasing; float64, or int64 when ``integer``.
    """
    points = check_trials(points, "points", minimum=MIN_POINTS)
    for name, value in (("low", low), ("high", high)):
        check_positive(value, name)
    if high <= low:
        raise InputError(f"high must exceed low, got low={low!r}, high={high!r}")
    grid = np.geomspace(float(low), float(high), points)
    if integer:
        grid = np.rint(grid).astype(np.int64)
        if np.any(np.diff(grid) <= 0):
            raise InputError(
                f"integer=True rounds the {points} points between {low} and {high} to repeated "
                f"whole numbers ({grid.tolist()}); use fewer points or a wider range"
            )
    check_grid(grid, "grid")
    return grid


def check_grid(values: Any, name: str = "values") -> np.ndarray:
    """Return ``values`` as float64 (G,) after checking it is a usable rate grid.

    The values must be finite, positive and distinct (in any order), at least
    :data:`MIN_POINTS` of them, spanning at least :data:`MIN_DECADES` decade(s).
    Raises :class:`~dpclaims.errors.InputError` naming ``name`` otherwise.
    """
    grid = check_finite_array(values, name, ndim=1)
    if grid.size < MIN_POINTS:
        raise InputError(
            f"{name} has {grid.size} point(s); a rate fit needs at least {MIN_POINTS} grid values, "
            "e.g. geometric_grid(100, 10_000, 7)"
        )
    if np.any(grid <= 0):
        raise InputError(
            f"{name} must be positive (the fit is on log({name})), got {grid.tolist()}"
        )
    ordered = np.sort(grid)
    repeats = ordered[1:][np.diff(ordered) == 0]
    if repeats.size:
        raise InputError(
            f"{name} contains repeated value(s) {np.unique(repeats).tolist()}; each grid value "
            "must appear once "
            "(put repeated runs in the replicates axis instead)"
        )
    decades = float(np.log10(ordered[-1] / ordered[0]))
    if decades < MIN_DECADES:
        raise InputError(
            f"{name} spans {decades:.2f} decade(s) ({ordered[0]:g} to {ordered[-1]:g}); an "
            "exponent fit needs at "
            f"least {MIN_DECADES:g} decade, e.g. values from 100 to 1000 or wider"
        )
    return grid
