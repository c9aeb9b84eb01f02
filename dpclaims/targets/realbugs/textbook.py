"""Textbook pitfalls that keep shipping: lattice noise, SVT variants, data-dependent keys, a
public size, composition and sensitivity slips, local randomisers."""

from __future__ import annotations

import math

import numpy as np

from ...privacy import PrivacyClaim
from . import RealBug, labels, records, register_bug

# ---------------------------------------------------------- lattice noise (Mironov 2012)

LATTICE = 2.0**-8


def _clipped_sum(data) -> float:
    return float(np.clip(data.items[:, 0], 0.0, 1.0).sum())


def lattice_laplace(data, rng, trials):
    """Laplace noise (scale 1/ε) drawn on the lattice 2⁻⁸ℤ and added to the exact real sum:
    the output's offset from the lattice is the sum's."""
    noise = np.round(rng.laplace(0.0, 1.0, trials) / LATTICE) * LATTICE
    return (_clipped_sum(data) + noise)[:, None]


def snapped_laplace(data, rng, trials):
    """The fix (Mironov's snapping, in spirit): round the *output* to the lattice."""
    out = _clipped_sum(data) + rng.laplace(0.0, 1.0, trials)
    return (np.round(out / LATTICE) * LATTICE)[:, None]


def lattice_offset(outputs: np.ndarray) -> np.ndarray:
    """Distance of each output to the lattice 2⁻⁸ℤ, in lattice units ``(n,)``."""
    u = outputs[:, 0] / LATTICE
    return np.abs(u - np.round(u))


def _offset_pair():
    x0, x1 = np.zeros((10, 2)), np.zeros((10, 2))
    x1[0, 0] = 0.5 * LATTICE
    return records(x0, np.zeros(10)), records(x1, np.zeros(10))


register_bug(
    RealBug(
        name="textbook-lattice-laplace",
        library="textbook",
        source="Mironov 2012, 'On significance of the least significant bits for differential "
        "privacy' (noise whose support reveals the input)",
        description="noise from a lattice added to an unrounded value: the output's position "
        "relative to the lattice is the input's",
        fix="round the noisy output to the lattice (snapping)",
        mechanism=lattice_laplace,
        twin=snapped_laplace,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace, Δ = 1"),
        pair=_offset_pair,
        true_epsilon=math.inf,
        ground_truth="∞: the supports of the two outputs are disjoint",
        caught_by="the support statistic lattice_offset (a threshold test on raw outputs "
        "cannot see it)",
        statistic=lattice_offset,
    )
)

# ------------------------------------------------------- SVT without query noise (Lyu et al.)

SVT_THRESHOLD = 30.5


def _svt_queries(data) -> np.ndarray:
    x = data.items
    return np.array([np.sum(x[:, 0] > 0.5), np.sum(x[:, 1] > 0.5)], dtype=float)


def _svt(data, rng, trials: int, query_scale: float) -> np.ndarray:
    q = _svt_queries(data)
    rho = rng.laplace(0.0, 2.0, trials)
    nu = rng.laplace(0.0, query_scale, (trials, len(q))) if query_scale else 0.0
    above = q + nu >= (SVT_THRESHOLD + rho)[:, None]
    first = np.where(above.any(axis=1), above.argmax(axis=1), len(q))
    out = (np.arange(len(q))[None, :] == first[:, None]).astype(float)
    out[np.arange(len(q))[None, :] > first[:, None]] = -1.0  # halted: not answered
    return out


def svt_no_query_noise(data, rng, trials):
    """Sparse vector (c = 1) with a noisy threshold but noiseless queries (Lyu et al. Alg. 5)."""
    return _svt(data, rng, trials, 0.0)


def svt_query_noise(data, rng, trials):
    """The fix (Lyu et al. Alg. 1): query noise Lap(4c/ε)."""
    return _svt(data, rng, trials, 4.0)


def _svt_pair():
    x = np.zeros((91, 2))
    x[1:31] = 1.0
    x0, x1 = x.copy(), x.copy()
    x0[0] = (0.0, 1.0)
    x1[0] = (1.0, 0.0)
    return records(x0, np.zeros(91)), records(x1, np.zeros(91))


register_bug(
    RealBug(
        name="textbook-svt-no-query-noise",
        library="textbook",
        source="Lyu, Su & Li 2017, 'Understanding the sparse vector technique' (Alg. 5)",
        description="SVT compares noiseless queries with the noisy threshold",
        fix="Lap(4c/ε) noise on each query (Alg. 1)",
        mechanism=svt_no_query_noise,
        twin=svt_query_noise,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Lyu et al. Alg. 5's claim"),
        pair=_svt_pair,
        true_epsilon=math.inf,
        ground_truth="∞ (Lyu et al. 2017, Table 1): answers (30, 31) vs (31, 30) make (⊥, ⊤) "
        "possible on one side only",
        caught_by="crafted pair, histogram test; search from the plain dataset through its "
        "tied-features pair (both answers at the data's count, the unit moved from one "
        "feature to the other)",
        method="histogram",
    )
)

# ------------------------------------------- histogram with data-dependent keys (partitions)

UNIVERSE = np.arange(-8, 8)


def _bin_counts(data) -> np.ndarray:
    keys = np.clip(np.floor(data.items[:, 0]), UNIVERSE[0], UNIVERSE[-1])
    return np.array([np.sum(keys == k) for k in UNIVERSE], dtype=float), keys


def keys_from_data(data, rng, trials):
    """Noisy counts (Lap(2/ε)) released for the keys present in the data only: the output
    marks which keys were released."""
    counts, keys = _bin_counts(data)
    present = np.isin(UNIVERSE, keys)
    noisy = counts + rng.laplace(0.0, 2.0, (trials, len(UNIVERSE)))
    return np.column_stack([np.broadcast_to(present, noisy.shape), np.where(present, noisy, 0)])


def keys_public(data, rng, trials):
    """The fix: every key of a public universe is released."""
    counts, _ = _bin_counts(data)
    noisy = counts + rng.laplace(0.0, 2.0, (trials, len(UNIVERSE)))
    return np.column_stack([np.ones_like(noisy), noisy])


def _new_key_pair():
    x0, x1 = np.zeros((10, 2)), np.zeros((10, 2))
    x1[0, 0] = 5.5
    return records(x0, np.zeros(10)), records(x1, np.zeros(10))


register_bug(
    RealBug(
        name="textbook-histogram-data-dependent-keys",
        library="textbook",
        source="partition selection (Korolova et al. 2009; Gopi et al. 2020; Wilson et al. "
        "2020, Google's DP SQL): releasing the keys present in the data",
        description="a noisy histogram over the keys that occur in the data: a key's presence "
        "is released exactly",
        fix="a public key universe (or thresholded partition selection)",
        mechanism=keys_from_data,
        twin=keys_public,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace counts, Δ₁ = 2"),
        pair=_new_key_pair,
        true_epsilon=math.inf,
        ground_truth="∞: a new key appears with certainty",
        caught_by="crafted pair or search (any canary in a bin of its own)",
    )
)

# ------------------------------------------------------------ exact size under add-remove


def exact_size(data, rng, trials):
    """A mean released as (noisy sum, exact n): n treated as public under add-remove."""
    s = np.clip(data.items[:, 0], -1.0, 1.0).sum()
    return np.column_stack([s + rng.laplace(0.0, 1.0, trials), np.full(trials, float(data.n))])


def noisy_size(data, rng, trials):
    """The fix: both sum and count noised, ε split (Lap(2/ε) each)."""
    s = np.clip(data.items[:, 0], -1.0, 1.0).sum()
    return np.column_stack(
        [s + rng.laplace(0.0, 2.0, trials), data.n + rng.laplace(0.0, 2.0, trials)]
    )


def _removed_pair():
    x = np.zeros((10, 2))
    x[0, 0] = 1.0
    return records(x, np.zeros(10)), records(x[1:], np.zeros(9))


register_bug(
    RealBug(
        name="textbook-exact-size-add-remove",
        library="textbook",
        source="dataset size treated as public under add-remove (SmartNoise issue #547: the "
        "exact n 'is only safe when n is considered public')",
        description="a mean released with the exact record count under add-remove neighbours",
        fix="noise the count too (or claim replace-one neighbours)",
        mechanism=exact_size,
        twin=noisy_size,
        claim=PrivacyClaim(1.0, 0.0, "item", "add-remove", source="Laplace sum, Δ = 1"),
        pair=_removed_pair,
        true_epsilon=math.inf,
        ground_truth="∞: n differs with certainty",
        caught_by="crafted pair or search (every add-remove canary)",
    )
)

# ------------------------------------------------------- composition not split


def full_budget_each(data, rng, trials):
    """Noisy sum and noisy count, each with the full ε (Lap(1/ε)) under add-remove."""
    s = np.clip(data.items[:, 0], -1.0, 1.0).sum()
    return np.column_stack(
        [s + rng.laplace(0.0, 1.0, trials), data.n + rng.laplace(0.0, 1.0, trials)]
    )


register_bug(
    RealBug(
        name="textbook-composition-not-split",
        library="textbook",
        source="basic composition (Dwork & Roth 2014, Thm 3.16): a mean as noisy sum / noisy "
        "count with the full ε spent on each",
        description="two releases each at ε: the pair of them is 2ε-DP",
        fix="ε/2 each (Lap(2/ε))",
        mechanism=full_budget_each,
        twin=noisy_size,
        claim=PrivacyClaim(1.0, 0.0, "item", "add-remove", source="Laplace, ε per release"),
        pair=_removed_pair,
        true_epsilon=2.0,
        ground_truth="2, exact: l1 sensitivity 2 of (sum, count) against Laplace scale 1",
        caught_by="crafted pair (a record at +1 removed); search (add-remove canaries)",
    )
)

# ------------------------------------------------ histogram with replace sensitivity 1


def histogram_scale_one(data, rng, trials):
    """Counts over a public key universe with Lap(1/ε): sensitivity 1 assumed, but a replaced
    record moves two counts."""
    counts, _ = _bin_counts(data)
    return counts + rng.laplace(0.0, 1.0, (trials, len(UNIVERSE)))


def histogram_scale_two(data, rng, trials):
    """The fix: Lap(2/ε)."""
    counts, _ = _bin_counts(data)
    return counts + rng.laplace(0.0, 2.0, (trials, len(UNIVERSE)))


register_bug(
    RealBug(
        name="textbook-histogram-replace-sensitivity",
        library="textbook",
        source="histogram sensitivity 1 (add-remove) used for replace-one neighbours (Dwork & "
        "Roth 2014 §3.3 states it for add-remove)",
        description="a replaced record moves two counts by 1 each, l1 sensitivity 2, noised for 1",
        fix="Lap(2/ε) under replace",
        mechanism=histogram_scale_one,
        twin=histogram_scale_two,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="Laplace counts, Δ₁ = 1"),
        pair=_new_key_pair,
        true_epsilon=2.0,
        ground_truth="2, exact",
        caught_by="crafted pair (a record moved to another bin); search (canaries in other bins)",
    )
)

# ------------------------------------------------- unary encoding with ε per bit


def _unary(data, rng, trials: int, epsilon_per_bit: float) -> np.ndarray:
    y = labels(data).astype(int)
    bits = np.zeros((len(y), 3))
    bits[np.arange(len(y)), y] = 1.0
    keep = 1.0 / (1.0 + math.exp(-epsilon_per_bit))
    flip = rng.random((trials, bits.size)) >= keep
    return np.where(flip, 1.0 - bits.reshape(-1), bits.reshape(-1))


def unary_full_epsilon(data, rng, trials):
    """Local randomised response on each bit of the one-hot label with ε per bit."""
    return _unary(data, rng, trials, 1.0)


def unary_half_epsilon(data, rng, trials):
    """The fix (symmetric unary encoding): ε/2 per bit, two bits change."""
    return _unary(data, rng, trials, 0.5)


def _label_pair():
    x = np.zeros((1, 2))  # one user's report: the local randomiser runs per record
    return records(x, [0.0]), records(x, [1.0])


register_bug(
    RealBug(
        name="textbook-unary-encoding-per-bit",
        library="textbook",
        source="unary encoding with ε per bit (Wang et al. 2017, 'Locally differentially "
        "private protocols for frequency estimation', §4.3: two bits differ)",
        description="randomised response on each bit of a one-hot label at ε: a changed label "
        "flips two bits, 2ε",
        fix="ε/2 per bit",
        mechanism=unary_full_epsilon,
        twin=unary_half_epsilon,
        claim=PrivacyClaim(1.0, 0.0, "item", "replace", source="randomised response"),
        pair=_label_pair,
        true_epsilon=2.0,
        ground_truth="2, exact",
        caught_by="crafted pair (a label changed), histogram test; search needs label changes",
        method="histogram",
    )
)
