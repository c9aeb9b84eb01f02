"""SmartNoise bugs: statistics computed before the clamp their noise assumes."""

from __future__ import annotations

import math

import numpy as np

from ...privacy import PrivacyClaim
from . import RealBug, records, register_bug

BOUND = 1.0
"""Each feature is declared in [−1, 1]."""


def _upper_triangle(x: np.ndarray) -> np.ndarray:
    cov = x.T @ x
    return cov[np.triu_indices(x.shape[1])]


def _scale(d: int) -> float:
    # replace-one moves each of the d(d+1)/2 products (each in [−1, 1]) by at most 2
    return 2.0 * BOUND**2 * d * (d + 1) / 2


def covariance_unclipped(data, rng, trials):
    """Noisy second-moment matrix (upper triangle), Laplace noise for features in [−1, 1],
    computed on the raw features."""
    x = data.items
    t = _upper_triangle(x)
    return t + rng.laplace(0.0, _scale(x.shape[1]), (trials, t.shape[0]))


def covariance_clipped(data, rng, trials):
    """The fix: clamp the features to their declared bounds first."""
    x = np.clip(data.items, -BOUND, BOUND)
    t = _upper_triangle(x)
    return t + rng.laplace(0.0, _scale(x.shape[1]), (trials, t.shape[0]))


def _outlier_pair():
    x0, x1 = np.zeros((10, 2)), np.zeros((10, 2))
    x1[0] = 10.0
    return records(x0, np.zeros(10)), records(x1, np.zeros(10))


register_bug(
    RealBug(
        name="smartnoise-covariance-unclipped",
        library="smartnoise",
        source="SmartNoise issue #622 (covariance computed on unclipped data)",
        description="the covariance is computed on unclamped features while the noise assumes "
        "features in [−1, 1]: one outlier moves it without bound",
        fix="clamp to the declared bounds before the covariance",
        mechanism=covariance_unclipped,
        twin=covariance_clipped,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace, Δ₁ = 6"),
        pair=_outlier_pair,
        true_epsilon=math.inf,
        ground_truth="∞: the sensitivity is unbounded (the crafted pair moves each entry by "
        "100, ε = 50 on it)",
        caught_by="crafted pair; search from the plain dataset (its features leave [−1, 1])",
    )
)
