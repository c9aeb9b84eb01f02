"""OpenDP bug: a δ that omits the probability mass at the threshold."""

from __future__ import annotations

import functools
import math

import numpy as np

from ...privacy import PrivacyClaim
from . import RealBug, labels, records, register_bug

EPSILON = 1.0
DELTA = 7e-4
KEYS = (0.0, 1.0, 2.0)


def _tail(k: int, scale: float = 1.0 / EPSILON) -> float:
    """``P(Z ≥ k)`` for the discrete Laplace ``Z`` of ``scale``, k ≥ 1."""
    r = math.exp(-1.0 / scale)
    return r**k / (1.0 + r)


@functools.cache
def threshold(include_mass_at_threshold: bool) -> int:
    """Smallest τ whose δ is at most :data:`DELTA`: a key with count 1 passes when
    ``1 + Z ≥ τ``, so δ = P(Z ≥ τ − 1); the bug computes P(Z > τ − 1) = P(Z ≥ τ)."""
    tau = 2
    while _tail(tau - 1 if include_mass_at_threshold else tau) > DELTA:
        tau += 1
    return tau


def discrete_laplace(rng, shape, scale: float = 1.0 / EPSILON) -> np.ndarray:
    """Two-sided geometric noise: the difference of two geometric variables."""
    p = 1.0 - math.exp(-1.0 / scale)
    return rng.geometric(p, shape) - rng.geometric(p, shape)


def _stable_histogram(data, rng, trials: int, tau: int) -> np.ndarray:
    y = labels(data)
    counts = np.array([np.sum(y == k) for k in KEYS])
    noisy = counts + discrete_laplace(rng, (trials, len(KEYS)))
    released = (noisy >= tau) & (counts > 0)  # a key absent from the data is never seen
    return released.astype(float)  # the released keys; their noisy counts are ε-DP apart


def threshold_mass_omitted(data, rng, trials):
    """Which label keys a stable histogram releases (keys in the data above τ), τ chosen with
    the δ that omits the mass at the threshold; ``(trials, 3)`` flags."""
    return _stable_histogram(data, rng, trials, threshold(False))


def threshold_mass_included(data, rng, trials):
    """The fix: τ from δ = P(Z ≥ τ − 1)."""
    return _stable_histogram(data, rng, trials, threshold(True))


def _singleton_key_pair():
    y = np.array([2.0] + [0.0] * 20 + [1.0] * 20)
    x = np.zeros((len(y), 2))
    return records(x, y), records(x[1:], y[1:])


register_bug(
    RealBug(
        name="opendp-threshold-mass-omitted",
        library="opendp",
        source="OpenDP issue #2922 (δ of a thresholded release omits the mass at the threshold)",
        description="the threshold's δ is P(Z > τ−1) instead of P(Z ≥ τ−1): a key with one "
        "record is released with probability e^ε times the claimed δ",
        fix="δ = P(Z ≥ τ − 1) (the threshold one higher)",
        mechanism=threshold_mass_omitted,
        twin=threshold_mass_included,
        claim=PrivacyClaim(EPSILON, DELTA, "item", "add-remove", source="stable histogram"),
        pair=_singleton_key_pair,
        method="histogram",
        trials=100_000,  # the excess δ is 1.1e-3: ~110 telling events at 1e5 trials
        true_epsilon=math.inf,
        ground_truth="∞ at the claimed δ: the singleton key is released with probability "
        "P(Z ≥ τ−1) = e·δ on one side and never on the other",
        caught_by="crafted pair (a key with one record, added or removed); search from the "
        "plain dataset at the CLI's 200,000 trials (its rarest class made a singleton and "
        "removed; at 20,000 trials no pair certifies the excess δ of 1.1e-3)",
    )
)
