"""Accounting bugs: the mechanism is right, the ε it is calibrated to is not."""

from __future__ import annotations

import math

import numpy as np

from ...algorithms.mechanisms import analytic_gaussian_sigma
from ...privacy import PrivacyClaim
from . import RealBug, clip_rows, gaussian_epsilon_exact, records, register_bug

DELTA = 1e-5
SMALLEST_ORDER = 1.01
SENSITIVITY = 2.0  # replace-one on a sum of gradients clipped to norm 1


def rdp_sigma_dropping_conversion(epsilon: float) -> float:
    """σ from an RDP→DP conversion that loses its ``log(1/δ)/(α−1)`` term at the smallest
    order α = 1.01: ``ε = α Δ² / (2σ²)`` solved for σ."""
    return SENSITIVITY * math.sqrt(SMALLEST_ORDER / (2.0 * epsilon))


def _gaussian_sum(data, rng, trials: int, sigma: float) -> np.ndarray:
    g = clip_rows(data.items, 1.0).sum(axis=0)
    return g + sigma * rng.standard_normal((trials, g.shape[0]))


def rdp_order_near_one(data, rng, trials):
    """Noisy clipped sum with σ from the broken conversion (ε reported ≈ 1)."""
    return _gaussian_sum(data, rng, trials, rdp_sigma_dropping_conversion(1.0))


def analytic_calibration(data, rng, trials):
    """The fix: σ from the exact (analytic Gaussian) calibration."""
    return _gaussian_sum(data, rng, trials, analytic_gaussian_sigma(1.0, DELTA, SENSITIVITY))


def _signed_pair():
    x0, x1 = np.zeros((10, 2)), np.zeros((10, 2))
    x0[0, 0], x1[0, 0] = 1.0, -1.0
    return records(x0, np.zeros(10)), records(x1, np.zeros(10))


register_bug(
    RealBug(
        name="accounting-rdp-order-near-one",
        library="accounting",
        source="TF Privacy issue #166 (ε ≈ 0 reported at an RDP order near 1)",
        description="the RDP→DP conversion at an order near 1 loses its log(1/δ)/(α−1) term, "
        "so the accountant reports ε = 1 for σ ≈ 1.42 (Δ = 2)",
        fix="the analytic Gaussian calibration (or orders bounded away from 1)",
        mechanism=rdp_order_near_one,
        twin=analytic_calibration,
        claim=PrivacyClaim(1.0, DELTA, "item", "replace", source="RDP, broken conversion"),
        pair=_signed_pair,
        true_epsilon=6.534,
        recompute=lambda: gaussian_epsilon_exact(
            rdp_sigma_dropping_conversion(1.0), DELTA, SENSITIVITY
        ),
        ground_truth="exact: the Gaussian mechanism, Δ = 2, σ = 2·sqrt(1.01/2)",
        caught_by="crafted pair or search; also recomputing ε with a second accountant "
        "(dpclaims.privacy.gaussian_epsilon)",
    )
)


def add_remove_scale(data, rng, trials):
    """Laplace sum of a feature clipped to [-1, 1] with scale 1/ε: the add-remove
    sensitivity 1, under a replace claim (sensitivity 2)."""
    s = np.clip(data.items[:, 0], -1.0, 1.0).sum()
    return (s + rng.laplace(0.0, 1.0, trials))[:, None]


def replace_scale(data, rng, trials):
    """The fix: scale 2/ε, the replace sensitivity."""
    s = np.clip(data.items[:, 0], -1.0, 1.0).sum()
    return (s + rng.laplace(0.0, 2.0, trials))[:, None]


register_bug(
    RealBug(
        name="accounting-add-remove-sensitivity-for-replace",
        library="accounting",
        source="off-by-one sensitivity: add/remove Δ used for a replace claim (e.g. OpenDP "
        "issue #314, sized bounded sum sensitivity underestimated)",
        description="noise scaled to the add-remove sensitivity 1 while the claim is for "
        "replace-one neighbours (sensitivity 2)",
        fix="scale to the sensitivity of the claimed relation",
        mechanism=add_remove_scale,
        twin=replace_scale,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace, Δ = 1"),
        pair=_signed_pair,
        true_epsilon=2.0,
        ground_truth="2, exact: the Laplace mechanism with Δ/b = 2",
        caught_by="crafted pair (records at ±1); search from the plain dataset "
        "(opposite-sign canaries)",
    )
)
