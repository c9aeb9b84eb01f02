"""Accounting bugs: the mechanism is right, the ε it is calibrated to is not."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from ...algorithms.mechanisms import analytic_gaussian_sigma
from ...errors import InputError
from ...privacy import PrivacyClaim, calibrate_noise_multiplier
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
        source="a textbook RDP→DP conversion error at an order near 1 (TF Privacy issue #166 "
        "asked about ε ≈ 0 there; its release 0.6.1 is sound: benchmarks/results/"
        "bench_releases.md)",
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
        source="off-by-one sensitivity: add/remove Δ used for a replace claim (OpenDP issue "
        "#314 was worse: 0.3.0's sized bounded sum lost the whole sensitivity at bounds (0, 1), "
        "audited as released in benchmarks/results/bench_releases.md)",
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

# ------------------------------- shuffled batches accounted as Poisson (Chua et al. 2024)

SHUFFLE_STEPS = 50
"""T: batches in the one epoch."""

SHUFFLE_BATCH = 2
"""b: records per batch; the epoch has ``T · b = 100`` slots (the datasets hold at most 100)."""

SHUFFLE_LOWER_BOUND = 3.91
"""ε at δ = 1e-5 of the shuffled transcript's maximum on the crafted pair
(:func:`shuffle_max_epsilon`; the tests recompute it): a lower bound on the buggy mechanism's
ε, 3.9 times the claimed 1."""


@functools.cache
def shuffle_sigma() -> float:
    """σ that Poisson accounting (PLD, q = 1/T, T steps, add-remove) calibrates to ε = 1."""
    return calibrate_noise_multiplier(1.0, DELTA, 1.0 / SHUFFLE_STEPS, SHUFFLE_STEPS)


def _gradients(data) -> np.ndarray:
    """Each record's gradient ``(n,)``: its first feature clipped to [−1, 1] (a linear
    model's per-example gradient, clipped to C = 1)."""
    return np.clip(data.items[:, 0], -1.0, 1.0)


def shuffled_batches(data, rng, trials):
    """One epoch of DP-SGD with shuffled batches: the records are shuffled into the
    ``T · b`` slots of T batches of b (an empty slot when the data holds fewer records),
    and each batch's clipped gradient sum is released with N(0, σ²) noise; the transcript
    ``(trials, T)`` (a white-box adversary sees every step)."""
    g = _gradients(data)
    if len(g) > SHUFFLE_STEPS * SHUFFLE_BATCH:
        raise InputError(
            f"the epoch has {SHUFFLE_STEPS * SHUFFLE_BATCH} slots; pass at most that many "
            f"records, got {len(g)}"
        )
    slots = np.tile(np.arange(SHUFFLE_STEPS * SHUFFLE_BATCH), (trials, 1))
    rng.permuted(slots, axis=1, out=slots)
    batch = slots[:, : len(g)] // SHUFFLE_BATCH  # (trials, n): the batch of each record
    rows = np.arange(trials)[:, None] * SHUFFLE_STEPS
    sums = np.bincount(
        (rows + batch).ravel(),
        weights=np.broadcast_to(g, batch.shape).ravel(),
        minlength=trials * SHUFFLE_STEPS,
    ).reshape(trials, SHUFFLE_STEPS)
    return sums + shuffle_sigma() * rng.standard_normal((trials, SHUFFLE_STEPS))


def poisson_batches(data, rng, trials):
    """The fix: each record joins each of the T batches independently with probability
    q = 1/T (Poisson sampling, what the accountant assumes); the same transcript.  The
    inclusions of a trial are the ones of a Bernoulli(q) sequence over the ``T · n``
    (step, record) cells, drawn by their geometric gaps (about n draws a trial, not T · n)."""
    g, rate = _gradients(data), 1.0 / SHUFFLE_STEPS
    n, cells = len(g), SHUFFLE_STEPS * len(g)
    chunk = int(cells * rate + 8.0 * math.sqrt(cells * rate) + 16)
    sums = np.zeros(trials * SHUFFLE_STEPS)
    rows, last = np.arange(trials), np.full(trials, -1)
    while rows.size:  # a row whose chunk of ones ends before the last cell draws another
        cell = last[:, None] + np.cumsum(rng.geometric(rate, (rows.size, chunk)), axis=1)
        inside = cell < cells
        step = np.broadcast_to(rows[:, None], cell.shape)[inside] * SHUFFLE_STEPS
        sums += np.bincount(
            step + cell[inside] // n, weights=g[cell[inside] % n], minlength=sums.size
        )
        more = cell[:, -1] < cells
        rows, last = rows[more], cell[more, -1]
    return sums.reshape(trials, SHUFFLE_STEPS) + shuffle_sigma() * rng.standard_normal(
        (trials, SHUFFLE_STEPS)
    )


def shuffled_first_batch(data, rng, trials):
    """The records of the first shuffled batch, bool ``(trials, n)``: always b of them."""
    slots = np.tile(np.arange(SHUFFLE_STEPS * SHUFFLE_BATCH), (trials, 1))
    rng.permuted(slots, axis=1, out=slots)
    return slots[:, : data.n * data.m] < SHUFFLE_BATCH


def poisson_first_batch(data, rng, trials):
    """The records of a Poisson batch (q = 1/T), bool ``(trials, n)``."""
    return rng.random((trials, data.n * data.m)) < 1.0 / SHUFFLE_STEPS


def batch_maximum(outputs: np.ndarray) -> np.ndarray:
    """The largest noisy batch sum of each transcript ``(n,)``: the statistic of Chua et al.'s
    lower bound (their "cube" sets ``{max_t y_t > C}``)."""
    return outputs.max(axis=1)


def shuffle_max_epsilon(
    sigma: float | None = None, steps: int = SHUFFLE_STEPS, delta: float = DELTA
) -> float:
    """Exact ε at δ of the maximum of the shuffled transcript on the crafted pair, a lower
    bound on the mechanism's ε (Chua et al. 2024, §4: ABLQ with shuffling).

    On the crafted pair (the canary's gradient +1 and every other record's −1, the canary
    added or removed), every batch sums to −b except one, at a uniform step: on d0 the
    canary's batch sums to −b + 2, on d1 the batch with the empty slot to −b + 1.  Shifted by
    b, the transcripts are the Gaussian mixtures ``MoG(μ) = (1/T) Σ_t N(μ e_t, σ² I_T)`` with
    μ = 2 and μ = 1, and their maximum has the CDF ``Φ((c − μ)/σ) Φ(c/σ)^(T−1)``.  The events
    ``{max > c}`` and ``{max ≤ c}`` over a grid of c give δ(ε) from below; ε is its root.
    """
    sigma = shuffle_sigma() if sigma is None else sigma
    c = np.linspace(-6.0 * sigma, 2.0 + 12.0 * sigma, 200_001)

    def inside(mean: float) -> np.ndarray:  # P(max ≤ c), by logs
        return np.exp(norm.logcdf((c - mean) / sigma) + (steps - 1) * norm.logcdf(c / sigma))

    p, q = inside(2.0), inside(1.0)

    def gap(eps: float) -> float:
        return max(np.max((1 - p) - math.exp(eps) * (1 - q)), np.max(q - math.exp(eps) * p))

    return float(brentq(lambda e: gap(e) - delta, 0.0, 50.0)) if gap(0.0) > delta else 0.0


def _all_opposite_pair():
    n = SHUFFLE_STEPS * SHUFFLE_BATCH
    x = np.zeros((n, 2))
    x[:, 0] = -1.0
    x[0, 0] = 1.0
    return records(x, np.zeros(n)), records(x[1:], np.zeros(n - 1))


register_bug(
    RealBug(
        name="accounting-shuffled-batches-as-poisson",
        library="accounting",
        source="Chua et al. 2024, 'How Private are DP-SGD Implementations?' (ICML; arXiv "
        "2403.17673): shuffled batches accounted as Poisson; audited up to 4x by Annamalai "
        "et al. 2024 (arXiv 2411.10614)",
        description="DP-SGD shuffles the records into fixed batches (each record in exactly one "
        "step) but reports ε from the Poisson-subsampled Gaussian accountant (q = 1/T)",
        fix="Poisson sampling (what the accountant assumes), or a shuffle accountant",
        mechanism=shuffled_batches,
        twin=poisson_batches,
        claim=PrivacyClaim(
            1.0, DELTA, "item", "add-remove", source="PLD, Poisson q = 1/50, 50 steps"
        ),
        pair=_all_opposite_pair,
        statistic=batch_maximum,
        trials=200_000,
        sampler=shuffled_first_batch,
        twin_sampler=poisson_first_batch,
        sampling_rate=1.0 / SHUFFLE_STEPS,
        true_epsilon=None,
        ground_truth=f"> 1: ε ≥ {SHUFFLE_LOWER_BOUND} at δ = 1e-5, exact for the transcript's "
        "maximum on the crafted pair (Chua et al.'s cube sets, closed-form CDFs; "
        "shuffle_max_epsilon); the whole transcript may leak more",
        caught_by="crafted pair (a +1 canary among records at −1, added or removed) with the "
        "batch-maximum statistic; the independence check of the sampler (batches of a fixed "
        "size)",
    )
)
