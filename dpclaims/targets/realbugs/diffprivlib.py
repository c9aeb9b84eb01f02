"""diffprivlib bugs: labels, sensitivities and bounds taken from the private data."""

from __future__ import annotations

import math

import numpy as np

from ...privacy import PrivacyClaim
from . import RealBug, labels, records, register_bug

CLASSES = (0.0, 1.0, 2.0)


def _class_counts(y: np.ndarray, rng, trials: int, classes) -> np.ndarray:
    counts = np.array([np.sum(y == c) for c in CLASSES], dtype=float)
    noisy = counts + rng.laplace(0.0, 2.0, (trials, len(CLASSES)))
    present = np.isin(np.array(CLASSES), classes)
    return np.column_stack([np.full(trials, float(len(classes))), np.where(present, noisy, 0.0)])


def classes_from_labels(data, rng, trials):
    """A classifier's class counts (Laplace 2/ε) for ``classes_ = np.unique(y)``; the output
    has ``len(classes_)`` and one count per class seen (0 for an unseen one)."""
    y = labels(data)
    return _class_counts(y, rng, trials, np.unique(y))


def classes_given(data, rng, trials):
    """The fix: the label set is a public parameter (``classes=[0, 1, 2]``)."""
    return _class_counts(labels(data), rng, trials, np.array(CLASSES))


def _singleton_class_pair():
    x = np.zeros((20, 2))
    y0 = np.array([2.0] + [0.0] * 10 + [1.0] * 9)
    y1 = y0.copy()
    y1[0] = 0.0
    return records(x, y0), records(x, y1)


register_bug(
    RealBug(
        name="diffprivlib-classes-from-private-labels",
        library="diffprivlib",
        source="diffprivlib issue #106 (label set inferred from the private labels)",
        description="the model's classes_ are np.unique(y): whether a class appears in the "
        "private data is released exactly",
        fix="take the classes as a parameter (public label set)",
        mechanism=classes_from_labels,
        twin=classes_given,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace counts, Δ₁ = 2"),
        pair=_singleton_class_pair,
        true_epsilon=math.inf,
        ground_truth="∞: the number of classes differs with certainty when a singleton class "
        "is relabelled",
        caught_by="crafted pair (a singleton class relabelled); search needs label changes "
        "(not on main: the canaries keep labels)",
    )
)

UPPER = 4.0


def _diagonal_terms(data, rng, trials: int, sensitivity: float, epsilon: float = 1.0):
    x = np.clip(data.items, 0.0, UPPER)
    d = x.shape[1]
    scale = sensitivity * d / epsilon  # ε split evenly over the d diagonal coefficients
    return (x**2).sum(axis=0) + rng.laplace(0.0, scale, (trials, d))


def lower_bound_only_sensitivity(data, rng, trials):
    """LinearRegression's X_i² coefficients with ``max(|L|, |L|)²`` as sensitivity: 0 for
    bounds (0, 4), so no noise."""
    return _diagonal_terms(data, rng, trials, max(abs(0.0), abs(0.0)) ** 2)


def lower_upper_sensitivity(data, rng, trials):
    """The fix (PR #110): ``max(|L|, |U|)²``."""
    return _diagonal_terms(data, rng, trials, max(abs(0.0), abs(UPPER)) ** 2)


def _zero_one_pair():
    x0, x1 = np.zeros((10, 2)), np.zeros((10, 2))
    x1[0, 0] = 1.0
    return records(x0, np.zeros(10)), records(x1, np.zeros(10))


register_bug(
    RealBug(
        name="diffprivlib-sensitivity-lower-bound-only",
        library="diffprivlib",
        source="diffprivlib issue #105, PR #110 (diagonal sensitivity used only the lower "
        "bound: 0 when the lower bound is 0)",
        description="the X_i² terms of LinearRegression get sensitivity max(|L|,|L|)² = 0 for "
        "bounds (0, U): released without noise",
        fix="max(|L|, |U|)²",
        mechanism=lower_bound_only_sensitivity,
        twin=lower_upper_sensitivity,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace, Δ = max(|L|,|U|)²"),
        pair=_zero_one_pair,
        true_epsilon=math.inf,
        ground_truth="∞: deterministic output",
        caught_by="anything: crafted pair, search, or two seeds giving the same output",
    )
)

FIXED_BOUNDS = (-3.0, 3.0)


def _laplace_mean(data, rng, trials: int, bounds) -> np.ndarray:
    lo, hi = bounds
    v = np.clip(data.items[:, 0], lo, hi)
    return (v.mean() + rng.laplace(0.0, (hi - lo) / len(v), trials))[:, None]


def mean_bounds_from_data(data, rng, trials):
    """``diffprivlib.tools.mean(x, bounds=None)``: bounds from the data's min and max (a
    PrivacyLeakWarning), Laplace scale (max − min)/(n ε)."""
    v = data.items[:, 0]
    return _laplace_mean(data, rng, trials, (float(v.min()), float(v.max())))


def mean_bounds_given(data, rng, trials):
    """The fix: public bounds (−3, 3)."""
    return _laplace_mean(data, rng, trials, FIXED_BOUNDS)


def _constant_pair():
    return _zero_one_pair()


register_bug(
    RealBug(
        name="diffprivlib-mean-bounds-from-data",
        library="diffprivlib",
        source="diffprivlib tools.mean(bounds=None) (bounds read from the data; "
        "PrivacyLeakWarning)",
        description="the mean's clipping range and noise scale come from the private min/max: "
        "a constant dataset is released without noise",
        fix="public bounds",
        mechanism=mean_bounds_from_data,
        twin=mean_bounds_given,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace, Δ = (U−L)/n"),
        pair=_constant_pair,
        true_epsilon=math.inf,
        ground_truth="∞: all-equal records give a noiseless output",
        caught_by="crafted pair (constant data); search from the plain dataset (an outlier "
        "canary widens the noise tenfold)",
    )
)

BINS = 5


def histogram_range_from_data(data, rng, trials):
    """``diffprivlib.tools.histogram(x, bins=5, range=None)``: the bin edges span the data's
    min and max; Laplace 2/ε counts."""
    v = data.items[:, 0]
    counts, _ = np.histogram(v, bins=BINS, range=(float(v.min()), float(v.max())))
    return counts + rng.laplace(0.0, 2.0, (trials, BINS))


def histogram_range_given(data, rng, trials):
    """The fix: a public range (−3, 3), values clipped into it."""
    v = np.clip(data.items[:, 0], *FIXED_BOUNDS)
    counts, _ = np.histogram(v, bins=BINS, range=FIXED_BOUNDS)
    return counts + rng.laplace(0.0, 2.0, (trials, BINS))


def _stretch_pair():
    x0 = np.zeros((20, 2))
    x0[:, 0] = np.linspace(0.0, 1.0, 20)
    x1 = x0.copy()
    x1[0, 0] = 10.0
    return records(x0, np.zeros(20)), records(x1, np.zeros(20))


register_bug(
    RealBug(
        name="diffprivlib-histogram-range-from-data",
        library="diffprivlib",
        source="diffprivlib tools.histogram(range=None) (edges from the data; PrivacyLeakWarning)",
        description="one record stretches the data-dependent bin edges and moves every count",
        fix="a public range",
        mechanism=histogram_range_from_data,
        twin=histogram_range_given,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace counts, Δ₁ = 2"),
        pair=_stretch_pair,
        true_epsilon=math.inf,
        ground_truth="∞: the counts move by up to 2(n−1) (ε up to (n−1)·ε, unbounded in n); "
        "the crafted pair moves them by 30 in l1 (ε = 15 on it)",
        caught_by="crafted pair or search (the far-outlier canary)",
    )
)
