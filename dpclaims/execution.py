"""Batched, seeded, parallel execution of many independent trials.

Trials are cut into *seed blocks* of :data:`SEED_BLOCK` trials; block ``b`` always
gets the ``numpy.random.SeedSequence`` child with spawn key ``(b,)`` of the
experiment's seed.  Blocks are grouped into *chunks* (the unit of work sent to
a worker); chunking and the backend only change where blocks run, never the
random numbers, so the same seed gives bit-identical outputs for every
backend, worker count and chunk size.

A mechanism is any callable ``mechanism(data, rng, trials) -> array (trials, k)``
or ``(trials,)``; a callable ``mechanism(data, rng) -> array (k,)`` is accepted
too and looped (slow: one Python call per trial).
"""

from __future__ import annotations

import inspect
import math
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .errors import InputError, MechanismError, check_choice, check_trials

__all__ = [
    "SEED_BLOCK",
    "BACKENDS",
    "as_batched",
    "check_outputs",
    "child_seed",
    "run_trials",
    "map_tasks",
]

SEED_BLOCK = 8192
"""Trials per SeedSequence child.  Part of the numbers' identity: changing it changes results."""

BACKENDS = ("auto", "serial", "processes")


def child_seed(seed: int | np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence with spawn key ``seed.spawn_key + key``: a fixed, order-free child."""
    root = seed if isinstance(seed, np.random.SeedSequence) else _root_seed(seed)
    return np.random.SeedSequence(entropy=root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key))


def _root_seed(seed: Any) -> np.random.SeedSequence:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}; pass e.g. seed=0")
    return np.random.SeedSequence(int(seed))


@dataclass(frozen=True)
class _Looped:
    """Adapter that turns ``f(data, rng) -> (k,)`` into a batched mechanism by looping."""

    func: Callable

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        rows = [np.asarray(self.func(data, rng)) for _ in range(trials)]
        if any(r.shape != rows[0].shape for r in rows):
            raise MechanismError("mechanism returned outputs of different shapes on different calls")
        return np.stack(rows)


def as_batched(mechanism: Callable) -> Callable:
    """Return ``mechanism`` as ``f(data, rng, trials)``; wrap a two-argument one in a loop."""
    if not callable(mechanism):
        raise InputError(f"mechanism must be callable as mechanism(data, rng, trials), got {type(mechanism).__name__}")
    if isinstance(mechanism, _Looped):
        return mechanism
    try:
        signature = inspect.signature(mechanism)
    except (TypeError, ValueError):
        return mechanism
    if "trials" in signature.parameters:
        return mechanism
    for args, batched in (((None, None, 1), True), ((None, None), False)):
        try:
            signature.bind(*args)
        except TypeError:
            continue
        return mechanism if batched else _Looped(mechanism)
    raise InputError(
        f"mechanism {getattr(mechanism, '__name__', mechanism)!r} has signature {signature}; "
        "it must accept (data, rng, trials) or (data, rng)"
    )


def check_outputs(outputs: Any, trials: int, name: str = "mechanism") -> np.ndarray:
    """Return mechanism outputs as float64 of shape ``(trials, k)`` or raise :class:`MechanismError`."""
    try:
        arr = np.asarray(outputs)
    except Exception as exc:  # ragged lists and the like
        raise MechanismError(f"{name} returned something that is not an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise MechanismError(
            f"{name} returned non-numeric outputs (dtype {arr.dtype}); return numbers, booleans or integers"
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != trials or arr.shape[1] == 0:
        raise MechanismError(
            f"{name} returned shape {np.shape(outputs)} for trials={trials}; it must return (trials, k) or (trials,)"
        )
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise MechanismError(f"{name} returned NaN or infinite outputs; a mechanism's outputs must be finite")
    return arr


def _blocks(trials: int) -> list[tuple[int, int]]:
    """``(block index, trials in block)`` for ``trials`` trials."""
    full, rest = divmod(trials, SEED_BLOCK)
    return [(b, SEED_BLOCK) for b in range(full)] + ([(full, rest)] if rest else [])


def _run_blocks(mechanism: Callable, data: Any, seed: np.random.SeedSequence, blocks: Sequence[tuple[int, int]]) -> np.ndarray:
    out = []
    for index, size in blocks:
        rng = np.random.default_rng(child_seed(seed, index))
        try:
            raw = mechanism(data, rng, size)
        except MechanismError:
            raise
        except Exception as exc:
            raise MechanismError(f"the mechanism raised {type(exc).__name__}: {exc}") from exc
        out.append(check_outputs(raw, size))
    widths = {o.shape[1] for o in out}
    if len(widths) > 1:
        raise MechanismError(f"mechanism returned different output widths across calls: {sorted(widths)}")
    return np.concatenate(out)


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _resolve_workers(workers: int | None) -> int:
    if workers is None:
        return os.cpu_count() or 1
    return check_trials(workers, "workers")


def _pool(workers: int) -> ProcessPoolExecutor:
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method))


def map_tasks(func: Callable, tasks: Sequence[tuple], backend: str = "auto", workers: int | None = None) -> list:
    """``[func(*task) for task in tasks]``, in order, on the chosen backend.

    ``backend="auto"`` uses worker processes when there is more than one task,
    more than one worker and everything pickles; otherwise it runs serially.
    Results never depend on the backend.
    """
    check_choice(backend, BACKENDS, "backend")
    workers = _resolve_workers(workers)
    if backend == "auto":
        parallel = len(tasks) > 1 and workers > 1 and _picklable((func, tasks[:1]))
        backend = "processes" if parallel else "serial"
    if backend == "serial" or len(tasks) <= 1:
        return [func(*task) for task in tasks]
    if not _picklable((func, tasks[:1])):
        raise InputError(
            "backend='processes' needs a picklable mechanism/experiment (a module-level function or class instance, "
            "not a lambda or closure); define it at module level or pass backend='serial'"
        )
    with _pool(min(workers, len(tasks))) as pool:
        return list(pool.map(func, *zip(*tasks)))


def run_trials(
    mechanism: Callable,
    data: Any,
    trials: int,
    seed: int | np.random.SeedSequence = 0,
    chunk: int | None = None,
    backend: str = "auto",
    workers: int | None = None,
) -> np.ndarray:
    """Run ``trials`` independent trials of ``mechanism`` on ``data``.

    Parameters
    ----------
    mechanism : callable ``(data, rng, trials) -> (trials, k)`` (or ``(data, rng) -> (k,)``, looped)
    data : whatever the mechanism takes
    trials : number of trials (≥ 1)
    seed : int or SeedSequence; block ``b`` uses its child with spawn key ``(b,)``
    chunk : trials per unit of work sent to a worker, rounded up to a multiple of
        :data:`SEED_BLOCK`; default spreads the blocks over ``4 × workers`` chunks
    backend : "auto", "serial" or "processes"
    workers : worker processes (default: all cores)

    Returns
    -------
    outputs : float64 array ``(trials, k)``, identical for every chunk, backend and worker count.
    """
    trials = check_trials(trials)
    batched = as_batched(mechanism)
    root = seed if isinstance(seed, np.random.SeedSequence) else _root_seed(seed)
    blocks = _blocks(trials)
    n_workers = _resolve_workers(workers)
    if chunk is None:
        per_chunk = max(1, math.ceil(len(blocks) / (4 * n_workers)))
    else:
        per_chunk = math.ceil(check_trials(chunk, "chunk") / SEED_BLOCK)
    tasks = [(batched, data, root, blocks[i : i + per_chunk]) for i in range(0, len(blocks), per_chunk)]
    parts = map_tasks(_run_blocks, tasks, backend=backend, workers=n_workers)
    widths = {p.shape[1] for p in parts}
    if len(widths) > 1:
        raise MechanismError(f"mechanism returned different output widths across calls: {sorted(widths)}")
    return np.concatenate(parts)
