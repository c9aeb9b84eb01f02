"""Seeds: trials are cut into seed blocks of :data:`SEED_BLOCK` trials; block ``b`` of a stream
gets the ``SeedSequence`` child with spawn key ``(b,)`` of the stream's seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["SEED_BLOCK", "child_seed", "root_seed"]

SEED_BLOCK = 8192
"""Trials per SeedSequence child.  Part of the numbers' identity: changing it changes results."""


def child_seed(seed: int | np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence with spawn key ``seed.spawn_key + key``: a fixed, order-free child."""
    root = seed if isinstance(seed, np.random.SeedSequence) else root_seed(seed)
    return np.random.SeedSequence(
        entropy=root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key)
    )


def root_seed(seed: Any) -> np.random.SeedSequence:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}; pass e.g. seed=0")
    return np.random.SeedSequence(int(seed))
