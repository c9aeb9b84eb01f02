"""InterpretML (DP-EBM) bug: the range of the targets used as the sensitivity of their sum."""

from __future__ import annotations

import numpy as np

from ...privacy import PrivacyClaim
from . import RealBug, records, register_bug

TARGET_BOUNDS = (9.0, 10.0)
EDGES = np.array([-1.0, 0.0, 1.0])
"""Public bin edges of the second feature (4 bins)."""


def _bin_sums(data, rng, trials: int, sensitivity: float) -> np.ndarray:
    x = data.items
    t = np.clip(9.5 + 0.25 * x[:, 0], *TARGET_BOUNDS)  # the regression target of each record
    bins = np.searchsorted(EDGES, x[:, 1])
    sums = np.bincount(bins, weights=t, minlength=len(EDGES) + 1)
    return sums + rng.laplace(0.0, sensitivity, (trials, len(sums)))


def range_sensitivity(data, rng, trials):
    """Per-bin sums of the targets with Laplace scale R/ε, R = max − min of the target range."""
    return _bin_sums(data, rng, trials, TARGET_BOUNDS[1] - TARGET_BOUNDS[0])


def magnitude_sensitivity(data, rng, trials):
    """The fix: scale max(|min|, |max|)/ε, what one added record can move a sum by."""
    return _bin_sums(data, rng, trials, max(abs(b) for b in TARGET_BOUNDS))


def _added_record_pair():
    x = np.zeros((10, 2))
    d0 = records(x, np.zeros(10))
    return d0, records(x[1:], np.zeros(9))


register_bug(
    RealBug(
        name="interpret-dp-ebm-range-sensitivity",
        library="interpret",
        source="InterpretML issue #523 (DP-EBM: sensitivity R = max − min of the targets)",
        description="sums of targets in [9, 10] noised for sensitivity 1 (the range); one "
        "added record moves a sum by up to 10",
        fix="sensitivity max(|min|, |max|) for add-remove",
        mechanism=range_sensitivity,
        twin=magnitude_sensitivity,
        claim=PrivacyClaim(1.0, 0.0, "item", "add-remove", source="Laplace, Δ = R"),
        pair=_added_record_pair,
        true_epsilon=10.0,
        ground_truth="10, exact: Laplace scale 1 against a shift of 10",
        caught_by="crafted pair (a record added) or search (any canary added or removed)",
    )
)
