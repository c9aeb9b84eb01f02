"""Opacus bugs: samplers, normalisers and clipping of DP-SGD (one step or a few, numpy).

The per-example "gradient" of a record is its feature vector (the gradient of a linear model's
loss at w = 0 is proportional to it), clipped to ``C`` as DP-SGD does.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2

from ...algorithms.mechanisms import analytic_gaussian_sigma
from ...privacy import PrivacyClaim, calibrate_noise_multiplier, subsampled_gaussian_epsilon
from . import RealBug, clip_rows, gaussian_epsilon_exact, labels, records, register_bug

DELTA = 1e-5
CLIP = 1.0

# ------------------------------------------------------------- expected batch size (#571, #819)

RATE = 0.1
STEPS = 10
PUBLIC_N = 100
"""The dataset size the twin's normaliser uses: a public constant, not ``len(dataset)``."""


@functools.cache
def _sigma_steps() -> float:
    return calibrate_noise_multiplier(1.0, DELTA, RATE, STEPS)


def poisson_sampler(data, rng, trials: int, rate: float = RATE) -> np.ndarray:
    """Poisson sampling: each record independently at ``rate``; bool ``(trials, n)``."""
    return rng.random((trials, data.n * data.m)) < rate


def _noisy_steps(data, rng, trials: int, normaliser: float) -> np.ndarray:
    g = clip_rows(data.items, CLIP)
    mask = rng.random((trials, STEPS, g.shape[0])) < RATE
    total = mask.astype(float) @ g + _sigma_steps() * CLIP * rng.standard_normal(
        (trials, STEPS, g.shape[1])
    )
    return (total / normaliser).reshape(trials, -1)


def private_n_normaliser(data) -> float:
    """Opacus's expected batch size: ``sample_rate * len(dataset)``, the private size."""
    return RATE * data.n


def public_n_normaliser(data) -> float:
    """The fix: the expected batch size from a public size."""
    return RATE * PUBLIC_N


def expected_batch_from_private_n(data, rng, trials):
    """Ten DP-SGD steps, each noisy sum divided by ``q * len(dataset)``."""
    return _noisy_steps(data, rng, trials, private_n_normaliser(data))


def expected_batch_from_public_n(data, rng, trials):
    """The same steps divided by ``q * N`` for a public ``N``."""
    return _noisy_steps(data, rng, trials, public_n_normaliser(data))


def scale_epsilon(ratio: float, k: int, delta: float) -> float:
    """Exact ε at δ between ``N(0, I_k)`` and ``N(0, ratio² I_k)`` (both directions): the
    privacy loss is a function of ``‖x‖²``, chi-square with k degrees of freedom."""
    a = 1.0 - 1.0 / ratio**2
    log_r = k * math.log(ratio)

    def worst(eps: float) -> float:
        low = 2.0 * (log_r - eps) / a  # P0 / P1 > e^eps  <=>  |x|^2 < low
        high = 2.0 * (log_r + eps) / a  # P1 / P0 > e^eps  <=>  |x|^2 > high
        d0 = chi2.cdf(low, k) - math.exp(eps) * chi2.cdf(low / ratio**2, k) if low > 0 else 0.0
        d1 = chi2.sf(high / ratio**2, k) - math.exp(eps) * chi2.sf(high, k)
        return max(d0, d1) - delta

    return float(brentq(worst, 0.0, 200.0)) if worst(0.0) > 0 else 0.0


def _size_pair():
    return records(np.zeros((2, 2)), [0, 0]), records(np.zeros((1, 2)), [0])


register_bug(
    RealBug(
        name="opacus-expected-batch-size-private-n",
        library="opacus",
        source="Opacus issues #571, #819 (expected_batch_size = sample_rate * len(dataset))",
        description="DP-SGD divides each noisy sum by q * len(dataset): the released update's "
        "scale reveals the private dataset size (add-remove)",
        fix="divide by q * N for a public N (or the noisy batch size)",
        mechanism=expected_batch_from_private_n,
        twin=expected_batch_from_public_n,
        claim=PrivacyClaim(1.0, DELTA, "item", "add-remove", source="PLD, q=0.1, 10 steps"),
        pair=_size_pair,
        true_epsilon=73.80,
        recompute=lambda: scale_epsilon(2.0, 2 * STEPS, DELTA),
        ground_truth="exact on the pair (all gradients 0, 2 vs 1 records): 20 Gaussian "
        "coordinates whose std differs by 2x; as n grows the leak per pair shrinks but never "
        "vanishes",
        caught_by="normaliser check (dpclaims.audit.sampler.normaliser_check) in one call; "
        "the crafted pair at once; search from the plain dataset through its tiny-data pair "
        "(two records vs one; on the 100 records themselves the std ratio is only 100/99)",
        sampler=poisson_sampler,
        twin_sampler=poisson_sampler,
        sampling_rate=RATE,
        normaliser=private_n_normaliser,
        twin_normaliser=public_n_normaliser,
    )
)

# ------------------------------------------------------- ghost clipping ignores C (PR #664)

CONFIGURED_CLIP = 0.1


@functools.cache
def _sigma_ghost() -> float:
    return analytic_gaussian_sigma(1.0, DELTA, 2 * CONFIGURED_CLIP)


def _noisy_sum(data, rng, trials: int, clip: float, sigma: float) -> np.ndarray:
    g = clip_rows(data.items, clip).sum(axis=0)
    return g + sigma * rng.standard_normal((trials, g.shape[0]))


def ghost_clipping_unit_norm(data, rng, trials):
    """Full-batch DP-GD step: clipped to norm 1 (the default), noise for max_grad_norm = 0.1."""
    return _noisy_sum(data, rng, trials, 1.0, _sigma_ghost())


def ghost_clipping_fixed(data, rng, trials):
    """The same step clipped to max_grad_norm = 0.1."""
    return _noisy_sum(data, rng, trials, CONFIGURED_CLIP, _sigma_ghost())


def _signed_pair(value: float = 1.0, n: int = 10):
    x0, x1 = np.zeros((n, 2)), np.zeros((n, 2))
    x0[0, 0], x1[0, 0] = value, -value
    y = np.zeros(n)
    return records(x0, y), records(x1, y)


register_bug(
    RealBug(
        name="opacus-ghost-clipping-ignores-max-grad-norm",
        library="opacus",
        source="Opacus PR #664 (fast gradient clipping clipped to 1, ignoring max_grad_norm)",
        description="per-example gradients clipped to norm 1 while the noise is calibrated to "
        "max_grad_norm = 0.1: sensitivity 10x the accounted one",
        fix="clip to max_grad_norm",
        mechanism=ghost_clipping_unit_norm,
        twin=ghost_clipping_fixed,
        claim=PrivacyClaim(1.0, DELTA, "item", "replace", source="analytic Gaussian, Δ = 2C"),
        pair=_signed_pair,
        true_epsilon=14.43,
        recompute=lambda: gaussian_epsilon_exact(_sigma_ghost(), DELTA, 2.0),
        ground_truth="exact: the Gaussian mechanism with sensitivity 2 and σ calibrated to 0.2",
        caught_by="crafted pair or search from the plain dataset (any gradient of norm > 0.1)",
    )
)

# -------------------------------------------------------- closure after noise (PR #330)

LEARNING_RATE = 0.1


def closure_recomputes_gradient(data, rng, trials):
    """``optimizer.step(closure)``: the closure recomputes the (clipped, averaged) gradient
    after the noise was added, and the update uses it: no noise reaches the parameters."""
    g = clip_rows(data.items, CLIP).mean(axis=0)
    rng.standard_normal((trials, g.shape[0]))  # the noise is drawn, then overwritten
    return np.broadcast_to(-LEARNING_RATE * g, (trials, g.shape[0])).copy()


def closure_before_noise(data, rng, trials):
    """The fix: the closure runs before clipping and noising."""
    g = clip_rows(data.items, CLIP).mean(axis=0)
    sigma = analytic_gaussian_sigma(1.0, DELTA, 2 * CLIP / data.n)
    return -LEARNING_RATE * (g + sigma * rng.standard_normal((trials, g.shape[0])))


register_bug(
    RealBug(
        name="opacus-closure-recomputes-after-noise",
        library="opacus",
        source="Opacus PR #330 (optimizer.step(closure) recomputed gradients after noising)",
        description="the update uses gradients recomputed after the noise was added: the "
        "released parameters are a deterministic function of the data",
        fix="evaluate the closure before clipping and noising",
        mechanism=closure_recomputes_gradient,
        twin=closure_before_noise,
        claim=PrivacyClaim(1.0, DELTA, "item", "replace", source="analytic Gaussian"),
        pair=_signed_pair,
        true_epsilon=math.inf,
        ground_truth="∞: deterministic output that depends on every record",
        caught_by="anything: the crafted pair, search, or two runs with different seeds giving "
        "the same output",
    )
)

# ----------------------------------------------------- WeightedRandomSampler rate (#813)

WEIGHTED_RATE = 0.02


@functools.cache
def _sigma_weighted() -> float:
    return calibrate_noise_multiplier(1.0, DELTA, WEIGHTED_RATE, 1)


def class_weighted_rates(data) -> np.ndarray:
    """Inclusion rates of a class-balancing WeightedRandomSampler: weight 1/count(class),
    ``q * n`` expected draws; ``(n,)``, capped at 1."""
    y = labels(data)
    _, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    w = 1.0 / counts[inverse]
    return np.minimum(1.0, WEIGHTED_RATE * len(y) * w / w.sum())


def weighted_sampler(data, rng, trials: int) -> np.ndarray:
    """The units a step uses under the class-weighted sampler: bool ``(trials, n)``."""
    return rng.random((trials, data.n * data.m)) < class_weighted_rates(data)


def uniform_sampler(data, rng, trials: int) -> np.ndarray:
    """Poisson sampling at the accounted rate."""
    return poisson_sampler(data, rng, trials, WEIGHTED_RATE)


def _sampled_step(data, rng, trials: int, sampler) -> np.ndarray:
    g = clip_rows(data.items, CLIP)
    mask = sampler(data, rng, trials)
    return mask.astype(float) @ g + _sigma_weighted() * CLIP * rng.standard_normal(
        (trials, g.shape[1])
    )


def weighted_sampler_step(data, rng, trials):
    """One DP-SGD step whose batch comes from a class-weighted sampler, accounted at q = 0.02."""
    return _sampled_step(data, rng, trials, weighted_sampler)


def uniform_sampler_step(data, rng, trials):
    """The fix: Poisson sampling at the accounted rate."""
    return _sampled_step(data, rng, trials, uniform_sampler)


def _rare_class_pair():
    x = np.zeros((100, 2))
    x[0, 0] = 1.0
    y = np.array([2] + [0] * 60 + [1] * 39)
    d0 = records(x, y)
    return d0, records(x[1:], y[1:])


def _rare_rate() -> float:
    return float(class_weighted_rates(_rare_class_pair()[0])[0])


register_bug(
    RealBug(
        name="opacus-weighted-sampler-rate",
        library="opacus",
        source="Opacus issue #813 (WeightedRandomSampler: sampling rate 45,000x the accounted)",
        description="a class-balancing weighted sampler includes rare-class records far more "
        "often than the accounted Poisson rate q = 0.02",
        fix="Poisson sampling at q (or account at the largest inclusion rate)",
        mechanism=weighted_sampler_step,
        twin=uniform_sampler_step,
        claim=PrivacyClaim(1.0, DELTA, "item", "add-remove", source="PLD, q=0.02, 1 step"),
        pair=_rare_class_pair,
        true_epsilon=5.225,
        recompute=lambda: subsampled_gaussian_epsilon(_sigma_weighted(), _rare_rate(), 1, DELTA),
        ground_truth="exact on the pair: the subsampled Gaussian at the singleton class's "
        "realised rate 2/3 instead of 0.02",
        caught_by="inclusion check (dpclaims.audit.sampler.inclusion_check) on the plain "
        "dataset: the 5 rare-class records are included at ~6.7x q",
        sampler=weighted_sampler,
        twin_sampler=uniform_sampler,
        sampling_rate=WEIGHTED_RATE,
    )
)

# ------------------------------------------------------------- clipping after averaging


def _sigma_mean(n: int) -> float:
    return analytic_gaussian_sigma(1.0, DELTA, 2 * CLIP / n)


def clip_after_average(data, rng, trials):
    """The batch-mean gradient clipped to C, noise calibrated to the per-example sensitivity
    2C/n of a mean of clipped gradients."""
    g = clip_rows(data.items.mean(axis=0), CLIP)
    return g + _sigma_mean(data.n) * rng.standard_normal((trials, g.shape[0]))


def clip_per_example(data, rng, trials):
    """The fix: clip each example, then average."""
    g = clip_rows(data.items, CLIP).mean(axis=0)
    return g + _sigma_mean(data.n) * rng.standard_normal((trials, g.shape[0]))


register_bug(
    RealBug(
        name="opacus-clip-after-averaging",
        library="opacus",
        source="per-batch instead of per-example clipping (the bug Opacus' GradSampleModule "
        "exists to prevent; Abadi et al. 2016 §3.1)",
        description="clips the averaged gradient instead of each example's: one record can move "
        "the release by 2C, n times the accounted 2C/n",
        fix="clip per example, then average",
        mechanism=clip_after_average,
        twin=clip_per_example,
        claim=PrivacyClaim(1.0, DELTA, "item", "replace", source="analytic Gaussian, Δ = 2C/n"),
        pair=lambda: _signed_pair(200.0, 100),
        true_epsilon=472.7,
        recompute=lambda: gaussian_epsilon_exact(_sigma_mean(100), DELTA, 2 * CLIP),
        ground_truth="exact at n = 100: the Gaussian mechanism with sensitivity 2C and σ "
        "calibrated to 2C/100",
        caught_by="crafted pair (one record of norm ≥ nC) or search (the far-outlier canary)",
    )
)
