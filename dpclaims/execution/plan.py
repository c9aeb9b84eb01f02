"""Planning: the seed blocks of a stream of trials grouped into chunks (the unit of work sent
to a worker), computed on demand; chunking only changes where blocks run, never the numbers."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from ..errors import InputError, check_trials
from .seeds import SEED_BLOCK

__all__ = [
    "MAX_CHUNK_BLOCKS",
    "CHECKPOINT_CHUNK_BLOCKS",
    "ChunkPlan",
    "TaskGrid",
    "plan_chunks",
    "resolve_workers",
]

MAX_CHUNK_BLOCKS = 32
"""Largest default chunk, in seed blocks (262 144 trials): bounds what one task holds and
returns."""

CHECKPOINT_CHUNK_BLOCKS = 16
"""Default chunk (in seed blocks) when checkpointing; fixed so a resumed run finds the same chunks
whatever its worker count."""


def _block(trials: int, b: int, start: int, stop: int) -> tuple[int, int, int, int]:
    """Seed block ``b`` of a stream of ``trials`` trials, restricted to ``[start, stop)``:
    ``(b, block size, lo, hi)``.  The mechanism is called on the whole block (its size fixed
    by ``trials``, so its random numbers never depend on the range) and rows ``[lo, hi)``
    are kept."""
    first = b * SEED_BLOCK
    size = min(SEED_BLOCK, trials - first)
    return (b, size, max(start, first) - first, min(stop, first + size) - first)


class ChunkPlan(Sequence):
    """The chunks of trials ``[start, stop)`` of a stream of ``trials`` trials, computed on demand.

    ``plan[i]`` is a list of at most ``per_chunk`` seed blocks ``(block, size, lo, hi)``
    (see :func:`run_blocks`).  Nothing is stored per chunk or block, so the plan of
    10^12 trials is as small as the plan of 10^3.
    """

    def __init__(self, trials: int, start: int, stop: int, per_chunk: int) -> None:
        self.trials, self.start, self.stop, self.per_chunk = trials, start, stop, per_chunk
        self.first = start // SEED_BLOCK
        self.blocks = max(0, -(-stop // SEED_BLOCK) - self.first) if stop > start else 0

    def __len__(self) -> int:
        return -(-self.blocks // self.per_chunk)

    def __getitem__(self, i: int) -> list[tuple[int, int, int, int]]:  # type: ignore[override]
        if isinstance(i, slice):
            raise TypeError("a ChunkPlan is indexed by one chunk number")
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"chunk {i} of a plan with {n} chunks")
        lo = self.first + (i % n) * self.per_chunk
        hi = min(self.first + self.blocks, lo + self.per_chunk)
        return [_block(self.trials, b, self.start, self.stop) for b in range(lo, hi)]

    @property
    def layout(self) -> list[int]:
        """``[chunks, blocks per chunk, first block, blocks]``: what a checkpoint records."""
        return [len(self), self.per_chunk, self.first, self.blocks]


class TaskGrid(Sequence):
    """Tasks ``(*head, chunk, *tail)`` for each head (outer) and chunk (inner), built on demand."""

    def __init__(self, heads: Sequence[tuple], chunks: Sequence, tail: tuple = ()) -> None:
        self.heads, self.chunks, self.tail = list(heads), chunks, tuple(tail)

    def __len__(self) -> int:
        return len(self.heads) * len(self.chunks)

    def __getitem__(self, i: int) -> tuple:  # type: ignore[override]
        if not 0 <= i < len(self):
            raise IndexError(f"task {i} of {len(self)}")
        head, c = divmod(i, len(self.chunks))
        return (*self.heads[head], self.chunks[c], *self.tail)


def resolve_workers(workers: int | None) -> int:
    """``workers`` checked (a whole number ≥ 1), or the number of cores when None."""
    if workers is None:
        return os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise InputError(
            f"workers must be a whole number >= 1, got {workers!r}; pass e.g. workers=4, or omit "
            "it to use all cores"
        )
    return int(workers)


def plan_chunks(
    trials: int,
    chunk: int | None,
    workers: int,
    checkpointed: bool = False,
    start: int = 0,
    stop: int | None = None,
) -> ChunkPlan:
    """Group the seed blocks of trials ``[start, stop)`` (default: all) of a stream of ``trials``
    trials into chunks: lists of ``(block, size, lo, hi)`` (see :func:`run_blocks`), computed
    on demand.

    ``chunk`` (trials, rounded up to whole seed blocks) fixes the chunk size; by
    default the blocks are spread over ``4 × workers`` chunks of at most
    :data:`MAX_CHUNK_BLOCKS` blocks, or cut into chunks of
    :data:`CHECKPOINT_CHUNK_BLOCKS` blocks when ``checkpointed`` (a layout that does
    not depend on the worker count, so a resumed run finds its chunks).
    """
    stop = trials if stop is None else stop
    blocks = ChunkPlan(trials, start, stop, 1).blocks
    if chunk is not None:
        per_chunk = math.ceil(check_trials(chunk, "chunk") / SEED_BLOCK)
    elif checkpointed:
        per_chunk = CHECKPOINT_CHUNK_BLOCKS
    else:
        per_chunk = min(MAX_CHUNK_BLOCKS, max(1, math.ceil(blocks / (4 * workers))))
    return ChunkPlan(trials, start, stop, per_chunk)
