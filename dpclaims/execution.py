"""Batched, seeded, parallel execution of many independent trials.

Trials are cut into *seed blocks* of :data:`SEED_BLOCK` trials; block ``b`` always
gets the ``numpy.random.SeedSequence`` child with spawn key ``(b,)`` of the
experiment's seed.  Blocks are grouped into *chunks* (the unit of work sent to
a worker); chunking and the backend only change where blocks run, never the
random numbers, so the same seed gives bit-identical outputs for every
backend (``serial``, ``processes``, ``dask``), worker count and chunk size.

A mechanism is any callable ``mechanism(data, rng, trials) -> array (trials, k)``
or ``(trials,)``; a callable ``mechanism(data, rng) -> array (k,)`` is accepted
too and looped (slow: one Python call per trial).

Long runs stay in bounded memory with :func:`reduce_trials`: each block's outputs
are reduced on the worker to integer counts and only the counts travel back.
With ``checkpoint=DIR`` every finished chunk is written atomically to ``DIR``
(see :mod:`dpclaims.checkpoint`) and a restarted run skips it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import multiprocessing
import os
import pickle
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import cloudpickle
import numpy as np

from .errors import (
    DPClaimsError,
    InputError,
    MechanismError,
    called_exit,
    check_choice,
    check_trials,
)
from .timelimit import TimeLimitExceeded

__all__ = [
    "Execution",
    "SEED_BLOCK",
    "MAX_CHUNK_BLOCKS",
    "CHECKPOINT_CHUNK_BLOCKS",
    "DETERMINISM_PROBE",
    "BACKENDS",
    "as_batched",
    "check_outputs",
    "check_determinism",
    "first_block",
    "ignores_rng",
    "strict_default",
    "child_seed",
    "plan_chunks",
    "ChunkPlan",
    "TaskGrid",
    "call_block",
    "run_blocks",
    "reduce_blocks",
    "run_trials",
    "reduce_trials",
    "map_tasks",
    "session",
    "resolve_workers",
    "resolve_execution",
]

SEED_BLOCK = 8192
"""Trials per SeedSequence child.  Part of the numbers' identity: changing it changes results."""

MAX_CHUNK_BLOCKS = 32
"""Largest default chunk, in seed blocks (262 144 trials): bounds what one task holds and
returns."""

CHECKPOINT_CHUNK_BLOCKS = 16
"""Default chunk (in seed blocks) when checkpointing; fixed so a resumed run finds the same chunks
whatever its worker count."""

DETERMINISM_PROBE = 32
"""Trials of the repeated first-block call that checks a mechanism draws its randomness from
``rng``."""

BACKENDS = ("auto", "serial", "processes", "dask")

DASK_CONNECT_TIMEOUT = 10
"""Seconds to wait for a Dask scheduler given by address before giving up with an InputError."""

SCHEDULER_CHECK_TIMEOUT = 3
"""Seconds :meth:`Execution.check` waits for the scheduler before anything runs."""


@dataclass(frozen=True, kw_only=True)
class Execution:
    """Where and how trials run: one value passed once, from the CLI down to the trials.

    Parameters
    ----------
    backend : str
        ``"auto"`` (processes when there is more than one worker), ``"serial"``,
        ``"processes"`` or ``"dask"``.
    workers : int or None
        Worker processes (None: all cores).
    scheduler : str or None
        Dask scheduler address (with ``backend="dask"``; None starts a local cluster).
    checkpoint : str, Path or None
        Folder for checkpoints of long runs (None: no checkpoints).
    """

    backend: str = "auto"
    workers: int | None = None
    scheduler: str | None = None
    checkpoint: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        check_choice(self.backend, BACKENDS, "backend")
        if self.workers is not None:
            resolve_workers(self.workers)
        _check_scheduler(self.backend, self.scheduler)

    def narrowed(self, name: str) -> Execution:
        """This execution checkpointing into the subfolder ``name`` of its checkpoint folder
        (one checkpoint folder, one run); unchanged without a checkpoint."""
        if self.checkpoint is None:
            return self
        return dataclasses.replace(self, checkpoint=os.path.join(self.checkpoint, name))

    def check(self, *, out: Any = None, option: Callable[[str], str] = "{}=".format) -> None:
        """Check, once and before anything runs, that this execution can run: Dask is
        installed when it is used, the ``scheduler`` answers one connection within
        :data:`SCHEDULER_CHECK_TIMEOUT` seconds, and the ``checkpoint`` folder is new, empty or
        a dpclaims checkpoint tree, neither inside ``out`` (a report folder) nor holding it.
        ``option(field)`` is how the caller spells a field in messages (``"--scheduler"`` on
        the command line)."""
        if self.backend == "dask" or self.scheduler is not None:
            _require_dask()
        if self.scheduler is not None:
            _reach_scheduler(self.scheduler, option("scheduler"))
        if self.checkpoint is not None:
            from .checkpoint import check_checkpoint_tree

            check_checkpoint_tree(self.checkpoint)
            if out is not None:
                _check_apart(self.checkpoint, out, option)


def _check_scheduler(backend: str, scheduler: Any) -> None:
    """A ``scheduler`` is a Dask address and goes with backend ``"dask"`` (or ``"auto"``)."""
    if scheduler is None:
        return
    if not isinstance(scheduler, str) or not scheduler:
        raise InputError(
            "scheduler must be a Dask scheduler address such as 'tcp://10.0.0.5:8786', got "
            f"{scheduler!r}"
        )
    if backend not in ("auto", "dask"):
        raise InputError(
            "scheduler= is a Dask scheduler address and needs backend='dask', got "
            f"backend={backend!r}"
        )


_NO_DASK = (
    "backend='dask' and scheduler= need the optional dependency dask[distributed], which is "
    'not installed: pip install "dpclaims[dask]"'
)


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(_NO_DASK) from None


def _reach_scheduler(address: str, name: str) -> None:
    """One connection to the Dask scheduler at ``address``, closed at once."""
    from distributed import Client

    try:
        Client(address, timeout=SCHEDULER_CHECK_TIMEOUT).close()
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(
            f"cannot reach {name} {address}: {type(exc).__name__}: {_one_line(exc)}; start the "
            f"scheduler or drop {name}"
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _check_apart(checkpoint: Any, out: Any, option: Callable[[str], str]) -> None:
    """A checkpoint folder inside the report folder ``out`` (or holding it) is refused: the
    report replaces ``out`` whole."""
    from pathlib import Path

    cp, report = Path(checkpoint).resolve(), Path(out).resolve()
    if cp == report or report in cp.parents or cp in report.parents:
        where = "is" if cp == report else "is inside" if report in cp.parents else "holds"
        raise InputError(
            f"{option('checkpoint')} {str(checkpoint)!r} {where} {option('out')} {str(out)!r}, "
            f"the report folder the run writes; choose a {option('checkpoint')} folder outside it"
        )


_DEFAULT = Execution()
"""Where trials run unless told: all cores, the backend chosen by :func:`session`."""


def child_seed(seed: int | np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence with spawn key ``seed.spawn_key + key``: a fixed, order-free child."""
    root = seed if isinstance(seed, np.random.SeedSequence) else _root_seed(seed)
    return np.random.SeedSequence(
        entropy=root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key)
    )


def _root_seed(seed: Any) -> np.random.SeedSequence:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}; pass e.g. seed=0")
    return np.random.SeedSequence(int(seed))


def _sample(value: Any) -> np.ndarray:
    """One output of a one-sample mechanism as an array (a number or a vector (k,))."""
    if isinstance(value, dict):
        raise MechanismError(
            f"mechanism returned a dict (keys {sorted(map(str, value))[:4]}); return the outputs "
            "as one vector of numbers, e.g. np.array([out['a'], out['b']]) for mechanism(data, "
            "rng) -> (k,)"
        )
    return np.asarray(value)


@dataclass(frozen=True)
class _Looped:
    """Adapter that turns ``f(data, rng) -> (k,)`` into a batched mechanism by looping."""

    func: Callable

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        rows = [_sample(self.func(data, rng)) for _ in range(trials)]
        if any(r.shape != rows[0].shape for r in rows):
            raise MechanismError(
                "mechanism returned outputs of different shapes on different calls"
            )
        if rows[0].ndim > 1:
            raise MechanismError(
                f"mechanism(data, rng) returned shape {rows[0].shape}; a one-sample mechanism "
                "returns one output: a number or a vector (k,) (flatten it, e.g. np.ravel(out))"
            )
        return np.stack(rows)


@dataclass(frozen=True)
class _TrialsByKeyword:
    """Adapter for a batched mechanism whose ``trials`` is not its third positional parameter."""

    func: Callable

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> Any:
        return self.func(data, rng, trials=trials)


def as_batched(mechanism: Callable) -> Callable:
    """``mechanism`` as ``f(data, rng, trials)``, recognised by its signature, never by position.

    A callable with a parameter named ``trials`` is batched (``trials`` is passed by
    name unless it is the third positional parameter); one without it that can be
    called as ``f(data, rng)`` is a one-sample mechanism (its other parameters keep
    their defaults) and is looped.  Anything else is an :class:`InputError`.
    """
    if not callable(mechanism):
        raise InputError(
            "mechanism must be callable as mechanism(data, rng, trials), got "
            f"{type(mechanism).__name__}"
        )
    if isinstance(mechanism, (_Looped, _TrialsByKeyword)):
        return mechanism
    try:
        signature = inspect.signature(mechanism)
    except (TypeError, ValueError):
        return mechanism
    params = signature.parameters
    name = getattr(mechanism, "__name__", type(mechanism).__name__)
    if "trials" in params:
        positional = [
            p.name
            for p in params.values()
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        if positional[2:3] == ["trials"]:
            return mechanism
        if params["trials"].kind == inspect.Parameter.POSITIONAL_ONLY:
            raise InputError(
                f"mechanism {name!r} has signature {signature}; its trials parameter must be the "
                "third one (data, rng, trials) or accept trials=..."
            )
        return _TrialsByKeyword(mechanism)
    try:
        signature.bind(None, None)
    except TypeError:
        raise InputError(
            f"mechanism {name!r} has signature {signature}; it must accept (data, rng, trials) or "
            "(data, rng): a batched mechanism names its batch size trials, mechanism(data, rng, "
            "trials) -> (trials, k); a one-sample mechanism is mechanism(data, rng) -> (k,)"
        ) from None
    return _Looped(mechanism)


def check_outputs(outputs: Any, trials: int, name: str = "mechanism") -> np.ndarray:
    """Return mechanism outputs as float64 of shape ``(trials, k)`` or raise
    :class:`MechanismError`."""
    if isinstance(outputs, dict):
        raise MechanismError(
            f"{name} returned a dict (keys {sorted(map(str, outputs))[:4]}); return one array of "
            "shape (trials, k), e.g. np.column_stack([out['a'], out['b']]), or (trials,) for one "
            "output per trial"
        )
    try:
        arr = np.asarray(outputs)
    except Exception as exc:  # ragged lists and the like
        raise MechanismError(f"{name} returned something that is not an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise MechanismError(
            f"{name} returned non-numeric outputs (dtype {arr.dtype}); return numbers, booleans "
            "or integers"
        )
    if arr.ndim == 0:
        raise MechanismError(
            f"{name} returned one number for trials={trials}; a batched mechanism(data, rng, "
            "trials) returns one output per trial, shape (trials,) or (trials, k) (e.g. "
            "rng.standard_normal(trials)); a mechanism returning one sample takes (data, rng) "
            "only"
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != trials or arr.shape[1] == 0:
        raise MechanismError(
            f"{name} returned shape {np.shape(outputs)} for trials={trials}; it must return "
            "(trials, k) or (trials,)"
        )
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise MechanismError(
            f"{name} returned NaN or infinite outputs; a mechanism's outputs must be finite"
        )
    return arr


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


def call_block(
    mechanism: Callable, data: Any, seed: np.random.SeedSequence, *, index: int, size: int
) -> np.ndarray:
    """Outputs ``(size, k)`` of ``mechanism`` on seed block ``index`` of ``size`` trials."""
    rng = np.random.default_rng(child_seed(seed, index))
    try:
        raw = mechanism(data, rng, size)
    except DPClaimsError:
        raise
    except SystemExit as exc:
        who, fix = "the mechanism", "a mechanism must return its outputs"
        raise MechanismError(called_exit(exc, who, fix)) from None
    except Exception as exc:
        if isinstance(exc, ValueError) and "read-only" in str(exc):
            raise MechanismError(
                f"the mechanism wrote into its dataset ({type(exc).__name__}: {exc}); datasets "
                "are read-only: copy first, e.g. x = data.x.copy() (or np.array(data)), and "
                "change the copy"
            ) from exc
        raise MechanismError(f"the mechanism raised {type(exc).__name__}: {exc}") from exc
    return check_outputs(raw, size)


def run_blocks(
    mechanism: Callable,
    data: Any,
    seed: np.random.SeedSequence,
    blocks: Sequence[tuple[int, int, int, int]],
) -> np.ndarray:
    """Outputs ``(sum of hi - lo, k)`` of ``mechanism`` on one chunk of seed blocks.

    Block ``(b, size, lo, hi)``: ``mechanism(data, rng_b, size)`` with ``rng_b`` seeded
    by ``child_seed(seed, b)``, rows ``[lo, hi)`` kept.
    """
    out = [
        call_block(mechanism, data, seed, index=index, size=size)[lo:hi]
        for index, size, lo, hi in blocks
    ]
    return _joined(out)


def _joined(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Outputs ``(n_i, k)`` of several calls stacked into ``(sum n_i, k)``; an error when their
    widths ``k`` differ."""
    widths = {p.shape[1] for p in parts}
    if len(widths) > 1:
        raise MechanismError(
            f"mechanism returned different output widths across calls: {sorted(widths)}"
        )
    return np.concatenate(parts)


def reduce_blocks(
    mechanism: Callable,
    data: Any,
    seed: np.random.SeedSequence,
    blocks: Sequence[tuple[int, int, int, int]],
    reducer: Callable,
) -> np.ndarray:
    """``sum over blocks of reducer(kept rows of the block)`` as int64 (blocks as
    :func:`run_blocks`): only one block of outputs is alive at a time.

    ``reducer(outputs (n, k)) -> integer array`` of a fixed shape (counts); integer
    sums are exact, so the total does not depend on how blocks are grouped.
    """
    total = None
    for index, size, lo, hi in blocks:
        counts = np.asarray(
            reducer(call_block(mechanism, data, seed, index=index, size=size)[lo:hi])
        )
        if counts.dtype.kind not in "biu":
            raise InputError(
                f"reducer returned dtype {counts.dtype}; it must return integer counts so chunk "
                "sums are exact"
            )
        if total is not None and counts.shape != total.shape:
            raise InputError(
                f"reducer returned shape {counts.shape} after {total.shape}; keep the result "
                "shape fixed"
            )
        total = counts.astype(np.int64) if total is None else total + counts
    return total


def first_block(
    mechanism: Callable, data: Any, seed: np.random.SeedSequence, trials: int = DETERMINISM_PROBE
) -> tuple[bool, np.ndarray, float]:
    """Run the first seed block twice on ``trials`` trials: ``(same outputs?, outputs (trials, k),
    CPU seconds of one call)``."""
    start = time.process_time()
    first = call_block(mechanism, data, seed, index=0, size=trials)
    seconds = time.process_time() - start
    second = call_block(mechanism, data, seed, index=0, size=trials)
    return first.shape == second.shape and bool(np.array_equal(first, second)), first, seconds


def ignores_rng(mechanism: Callable, strict: bool) -> str:
    """The message for a mechanism whose outputs differ for the same seed; raised as a
    :class:`MechanismError` when ``strict``, else issued as a :class:`RuntimeWarning` and
    returned."""
    inner = mechanism.func if isinstance(mechanism, _Looped) else mechanism
    name = getattr(inner, "__qualname__", type(inner).__qualname__)
    message = (
        f"mechanism {name!r} returned different outputs for the same seed: it draws randomness "
        "from somewhere other than its rng argument (np.random.*, random, a global generator, "
        "the clock). Draw all randomness from the rng argument (e.g. rng.standard_normal) so "
        "results are reproducible and chunks are independent"
    )
    if strict:
        raise MechanismError(
            message + " (strict mode; pass strict=False, or --no-strict, to only warn)"
        )
    warnings.warn(message, RuntimeWarning, stacklevel=4)
    return message


def strict_default(strict: bool | None) -> bool:
    """``strict`` checked; None means on when the environment variable ``CI`` is ``true``
    (as CI services set it)."""
    if strict is None:
        return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
    if not isinstance(strict, (bool, np.bool_)):
        raise InputError(f"strict must be True, False or None (on under CI=true), got {strict!r}")
    return bool(strict)


def check_determinism(
    mechanism: Callable,
    data: Any,
    seed: int | np.random.SeedSequence = 0,
    trials: int = DETERMINISM_PROBE,
    *,
    strict: bool = False,
) -> bool:
    """Run the first seed block twice on ``trials`` trials; warn (raise :class:`MechanismError`
    when ``strict``) and return False if the outputs differ.

    A mechanism that draws randomness from anywhere but its ``rng`` argument
    (``np.random.*``, ``random``, a global generator, the clock) gives different
    numbers for the same seed: results are then not reproducible, and chunks run
    in different processes may share random streams.
    """
    batched = as_batched(mechanism)
    root = seed if isinstance(seed, np.random.SeedSequence) else _root_seed(seed)
    same, _, _ = first_block(batched, data, root, trials)
    if not same:
        ignores_rng(mechanism, strict)
    return same


# --------------------------------------------------------------------------------------------
# Backends.  A session maps a function over tasks, in order, with an optional checkpoint stage.
# --------------------------------------------------------------------------------------------


def _dumps(obj: Any) -> bytes:
    """cloudpickle bytes of ``obj``: closures and lambdas travel by value, module functions by
    name."""
    return cloudpickle.dumps(obj)


def _picklable(obj: Any) -> bool:
    """True when the standard pickle can send ``obj``: what ``backend="auto"`` needs to choose
    processes (closures and lambdas keep running serially there, so their side effects stay
    visible)."""
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _call_pickled(payload: bytes) -> Any:
    func, args = cloudpickle.loads(payload)
    return func(*args)


class _Serial:
    name = "serial"

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        for i, task in enumerate(tasks):
            yield i, func(*task)


PR_SET_PDEATHSIG = 1
"""Linux prctl option: the signal a process receives when its parent dies."""

PARENT_POLL = 0.5
"""Seconds between a worker's checks that its parent is alive (fallback to PR_SET_PDEATHSIG)."""


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when process ``parent`` dies, however it dies.

    On Linux the kernel sends SIGKILL on the parent's death (``prctl(PR_SET_PDEATHSIG)``,
    which also covers SIGKILL and the out-of-memory killer); everywhere a daemon thread
    checks every :data:`PARENT_POLL` s that the parent is still this process's parent.
    """
    import signal
    import threading
    import time

    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=watch, name="dpclaims-parent-watch", daemon=True).start()


def _payload(func: Callable, task: tuple, backend: str) -> bytes:
    try:
        return _dumps((func, task))
    except Exception as exc:
        raise InputError(
            f"backend={backend!r} could not serialise the mechanism/experiment "
            f"({type(exc).__name__}: {exc}); make it picklable (no open files, locks or "
            "generators) or pass backend='serial'"
        ) from None


class _Processes:
    name = "processes"

    def __init__(self, workers: int) -> None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.window = 2 * workers
        self.pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context(method),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Results in completion order, with at most ``2 × workers`` tasks submitted at a time."""
        todo = iter(enumerate(tasks))
        futures: dict = {}

        def submit() -> None:
            for i, task in todo:
                futures[self.pool.submit(_call_pickled, _payload(func, task, self.name))] = i
                return

        try:
            for _ in range(self.window):
                submit()
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    i = futures.pop(future)
                    yield i, future.result()
                    submit()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def kill_workers(self) -> None:
        """End the worker processes now, whatever they run (the pool is then broken)."""
        for process in list(self.pool._processes.values()):
            process.kill()


class _Dask:
    name = "dask"

    def __init__(self, workers: int, scheduler: str | None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError(_NO_DASK) from None
        self.cluster = None
        try:
            if scheduler is None:
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=False,
                    host="127.0.0.1",
                    protocol="tcp",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=40,
                )
                self.client = Client(self.cluster)
            else:
                self.client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            if self.cluster is not None:
                self.cluster.close()
            where = f"the Dask scheduler at {scheduler!r}" if scheduler else "a local Dask cluster"
            raise InputError(
                f"could not connect to {where} ({type(exc).__name__}: {exc}); check scheduler= "
                "(e.g. 'tcp://10.0.0.5:8786') or omit it to start a local cluster"
            ) from None
        threads = sum(
            w.get("nthreads", 1) for w in self.client.scheduler_info().get("workers", {}).values()
        )
        self.window = 2 * max(workers, threads)

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Results in completion order, with at most ``2 × threads`` tasks submitted at a time."""
        from distributed import as_completed

        todo = iter(enumerate(tasks))
        index: dict = {}
        running = as_completed([])

        def submit() -> None:
            for i, task in todo:
                future = self.client.submit(func, *task, pure=False)
                index[future.key] = (i, future)
                running.add(future)
                return

        try:
            for _ in range(self.window):
                submit()
            for future in running:
                i, _ = index.pop(future.key)
                yield i, future.result()
                submit()
        finally:
            self.client.cancel([f for _, f in index.values() if not f.done()])

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


class _Subset(Sequence):
    """``tasks[positions[j]]`` for ``j < len(positions)``, on demand."""

    def __init__(self, tasks: Sequence[tuple], positions: Sequence[int]) -> None:
        self.tasks, self.positions = tasks, positions

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, j: int) -> tuple:  # type: ignore[override]
        return self.tasks[int(self.positions[j])]


class Session:
    """An open backend: :meth:`map` runs ``func`` over tasks on it (see :func:`session`)."""

    def __init__(self, runner: Any) -> None:
        self._runner = runner

    @property
    def backend(self) -> str:
        """The backend actually used: "serial", "processes" or "dask"."""
        return self._runner.name

    def stream(
        self, func: Callable, tasks: Sequence[tuple], stage: Any = None
    ) -> Iterator[tuple[int, Any]]:
        """``(i, func(*tasks[i]))`` for every task, in completion order, with a bounded number of
        tasks in flight (``tasks`` may be built on demand, e.g. a :class:`TaskGrid`).  With a
        checkpoint ``stage``, saved tasks are loaded instead of run and each newly finished one
        is saved as it completes."""
        todo: Sequence[int] = range(len(tasks))
        if stage is not None:
            done = np.zeros(len(tasks), dtype=bool)
            for i, value in stage.saved(len(tasks)):
                done[i] = True
                yield i, value
            todo = np.flatnonzero(~done)
        for j, value in self._runner.submit_all(func, _Subset(tasks, todo)):
            i = int(todo[j])
            if stage is not None:
                stage.save(i, value)
            yield i, value

    def map(self, func: Callable, tasks: Sequence[tuple], stage: Any = None) -> list:
        """``[func(*task) for task in tasks]`` in order (see :meth:`stream`)."""
        results: list = [None] * len(tasks)
        for i, value in self.stream(func, tasks, stage):
            results[i] = value
        return results


def _resolve_backend(
    backend: str, scheduler: str | None, *, tasks: int, workers: int, probe: Any
) -> str:
    check_choice(backend, BACKENDS, "backend")
    _check_scheduler(backend, scheduler)
    if scheduler is not None:
        return "dask"
    if backend == "auto":
        return "processes" if tasks > 1 and workers > 1 and _picklable(probe) else "serial"
    return backend


@contextlib.contextmanager
def session(
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    tasks: int = 2,
    probe: Any = None,
) -> Iterator[Session]:
    """Open a backend for several :meth:`Session.map` calls (one pool / cluster for all of them).

    Parameters
    ----------
    backend : "auto" (processes when ``tasks > 1``, ``workers > 1`` and ``probe``
        pickles with the standard pickle, else serial; Dask when ``scheduler`` is
        given), "serial", "processes" or "dask".  Processes and Dask send tasks with
        cloudpickle, so an explicit ``"processes"`` also runs closures and lambdas
    workers : worker processes (default: all cores); for Dask, the workers of the local cluster
    scheduler : address of a running Dask scheduler (``backend="dask"``), e.g. one started
        with ``dask scheduler`` and ``dask worker ADDRESS`` on each machine.  Without it a
        ``distributed.LocalCluster`` is started for the session and closed after it:
        ``workers`` single-threaded workers in this process talking TCP on 127.0.0.1
        (quick to start and reliable on small machines; use ``backend="processes"`` or a
        scheduler address for process-level parallelism)
    tasks, probe : how many tasks will be mapped and an object standing for them,
        used only by ``backend="auto"``
    """
    workers = resolve_workers(workers)
    chosen = _resolve_backend(backend, scheduler, tasks=tasks, workers=workers, probe=probe)
    if chosen == "serial":
        runner: Any = _Serial()
    elif chosen == "processes":
        runner = _Processes(workers)
    else:
        runner = _Dask(workers, scheduler)
    try:
        yield Session(runner)
    except TimeLimitExceeded:
        if chosen == "processes":
            runner.kill_workers()  # a worker stuck in user code would block the pool's close
        raise
    finally:
        if chosen != "serial":
            runner.close()


def map_tasks(
    func: Callable,
    tasks: Sequence[tuple],
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
) -> list:
    """``[func(*task) for task in tasks]``, in order, on the chosen backend.

    ``backend="auto"`` uses worker processes when there is more than one task,
    more than one worker and everything pickles; otherwise it runs serially
    (and Dask when ``scheduler`` is given).  Results never depend on the backend.
    """
    tasks = list(tasks)
    probe = (func, tasks[:1])
    with session(backend, workers, scheduler, tasks=len(tasks), probe=probe) as s:
        return s.map(func, tasks)


@dataclass(frozen=True, kw_only=True)
class _Job:
    """One :func:`run_trials` / :func:`reduce_trials` call: ``trials`` trials of ``mechanism``
    on ``data`` from ``seed``, keeping ``held(n)`` trials of outputs in memory, checkpointed as
    ``kind`` in stage ``stage`` with the fingerprints of the ``extra`` objects."""

    kind: str
    stage: str
    mechanism: Callable
    data: Any
    trials: int
    seed: Any
    held: Callable[[int], int]
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _Started:
    """A :class:`_Job` checked and planned: the batched mechanism, the root seed, the workers,
    the chunks and the checkpoint stage (or None)."""

    batched: Callable
    root: np.random.SeedSequence
    workers: int
    chunks: ChunkPlan
    stage: Any


def _start(
    job: _Job, *, execution: Execution, chunk: int | None, strict: bool | None, limits: Any
) -> _Started:
    """The preamble of :func:`run_trials` and :func:`reduce_trials`: check the arguments, plan
    the chunks, check the mechanism draws from its rng (:func:`ignores_rng`) and that the run
    fits the time and memory ``limits`` (a :class:`~dpclaims.resources.Limits`; see
    :mod:`dpclaims.resources`) from a short probe on the first seed block, open the
    checkpoint stage."""
    from .resources import LONG_RUN, Workload, check_budget, probe

    trials = check_trials(job.trials)
    batched = as_batched(job.mechanism)
    root = job.seed if isinstance(job.seed, np.random.SeedSequence) else _root_seed(job.seed)
    workers = resolve_workers(execution.workers)
    chunks = plan_chunks(trials, chunk, workers, execution.checkpoint is not None)
    same, first, seconds = first_block(batched, job.data, root, min(trials, DETERMINISM_PROBE))
    if not same:
        ignores_rng(batched, strict_default(strict))
    parallel = execution.backend != "serial" and workers > 1
    long_run = min(LONG_RUN, limits.max_seconds)
    work = Workload(trials=trials, held=job.held, workers=workers, parallel=parallel, sides=1)
    found = probe(
        lambda n: call_block(batched, job.data, root, index=0, size=n),
        seconds,
        first.shape[1],
        work,
        long_run,
    )
    check_budget(found, work, limits)
    stage = None
    if execution.checkpoint is not None:
        from .checkpoint import fingerprint, open_checkpoint

        arguments = {
            "kind": job.kind,
            "mechanism": fingerprint(batched),
            "data": fingerprint(job.data),
            "trials": trials,
            "seed": [int(root.entropy), list(root.spawn_key)],
            "chunks": chunks.layout,
            "seed_block": SEED_BLOCK,
            **{name: fingerprint(value) for name, value in job.extra.items()},
        }
        stage = open_checkpoint(execution.checkpoint, arguments).stage(job.stage)
    return _Started(batched=batched, root=root, workers=workers, chunks=chunks, stage=stage)


def resolve_execution(execution: Execution | None = None, **loose: Any) -> Execution:
    """``execution``, or an :class:`Execution` of the ``loose`` fields given (``backend``,
    ``workers``, ``scheduler``, ``checkpoint``; None means not given); both is an error."""
    given = {name: value for name, value in loose.items() if value is not None}
    if execution is None:
        return Execution(**given)
    if not isinstance(execution, Execution):
        raise InputError(
            f"execution must be a dpclaims.execution.Execution, got {type(execution).__name__}; "
            "pass e.g. execution=Execution(backend='processes', workers=4)"
        )
    if given:
        raise InputError(
            f"pass either execution= or {', '.join(given)}=, not both; put them in the Execution"
        )
    return execution


def run_trials(
    mechanism: Callable,
    data: Any,
    trials: int,
    *,
    seed: int | np.random.SeedSequence = 0,
    execution: Execution = _DEFAULT,
    chunk: int | None = None,
    strict: bool | None = None,
    limits: Any = None,
) -> np.ndarray:
    """Run ``trials`` independent trials of ``mechanism`` on ``data``.

    Parameters
    ----------
    mechanism : callable ``(data, rng, trials) -> (trials, k)`` (or ``(data, rng) -> (k,)``, looped)
    data : whatever the mechanism takes
    trials : number of trials (≥ 1)
    seed : int or SeedSequence; block ``b`` uses its child with spawn key ``(b,)``
    execution : where the trials run (:class:`Execution`: backend, workers, Dask scheduler,
        checkpoint folder); with a checkpoint finished chunks of outputs are saved there and
        a rerun with the same arguments resumes (see :mod:`dpclaims.checkpoint`)
    chunk : trials per unit of work sent to a worker, rounded up to a multiple of
        :data:`SEED_BLOCK` (default: see :func:`plan_chunks`)
    strict : a mechanism that ignores ``rng`` is an error, not a :class:`RuntimeWarning`
        (default: on when ``CI=true``; see :func:`check_determinism`)
    limits : :class:`~dpclaims.resources.Limits` on the estimated time and memory (default:
        ``Limits.checked()``; all outputs are returned, so memory grows with ``trials``)

    Returns
    -------
    outputs : float64 array ``(trials, k)``, identical for every chunk, backend and worker count.
    """
    job = _Job(
        kind="run_trials",
        stage="outputs",
        mechanism=mechanism,
        data=data,
        trials=trials,
        seed=seed,
        held=lambda n: n,
    )
    run = _start(job, execution=execution, chunk=chunk, strict=strict, limits=_limits(limits))
    tasks = TaskGrid([(run.batched, data, run.root)], run.chunks)
    probe = (run.batched, data)
    where = (execution.backend, run.workers, execution.scheduler)
    with session(*where, tasks=len(tasks), probe=probe) as s:
        parts = s.map(run_blocks, tasks, run.stage)
    return _joined(parts)


def reduce_trials(
    mechanism: Callable,
    data: Any,
    trials: int,
    reducer: Callable,
    *,
    seed: int | np.random.SeedSequence = 0,
    execution: Execution = _DEFAULT,
    chunk: int | None = None,
    strict: bool | None = None,
    limits: Any = None,
) -> np.ndarray:
    """``sum over seed blocks of reducer(outputs)``: ``trials`` trials in memory bounded by one
    block per worker.

    Parameters
    ----------
    reducer : ``reducer(outputs (n, k) float64) -> integer array`` of a fixed shape (counts);
        it runs on the workers, so only counts travel back
    others : as :func:`run_trials` (same seed → same blocks → same counts); memory does not
        grow with ``trials``

    Returns
    -------
    counts : int64 array, identical for every chunk, backend and worker count.
    """
    if not callable(reducer):
        raise InputError(
            "reducer must be callable as reducer(outputs) -> integer counts, got "
            f"{type(reducer).__name__}"
        )
    job = _Job(
        kind="reduce_trials",
        stage="counts",
        mechanism=mechanism,
        data=data,
        trials=trials,
        seed=seed,
        held=lambda n: 0,
        extra={"reducer": reducer},
    )
    run = _start(job, execution=execution, chunk=chunk, strict=strict, limits=_limits(limits))
    tasks = TaskGrid([(run.batched, data, run.root)], run.chunks, (reducer,))
    probe = (run.batched, data, reducer)
    total = None
    where = (execution.backend, run.workers, execution.scheduler)
    with session(*where, tasks=len(tasks), probe=probe) as s:
        for _, counts in s.stream(reduce_blocks, tasks, run.stage):
            if total is not None and counts.shape != total.shape:
                raise InputError(
                    f"reducer returned shape {counts.shape} after {total.shape}; keep the result "
                    "shape fixed"
                )
            total = counts if total is None else total + counts
    return total


def _limits(limits: Any) -> Any:
    """``limits`` (a :class:`~dpclaims.resources.Limits`), or the default limits for None."""
    from .resources import Limits

    if limits is None:
        return Limits.checked()
    if not isinstance(limits, Limits):
        raise InputError(
            f"limits must be a dpclaims.resources.Limits, got {type(limits).__name__}; pass e.g. "
            "limits=Limits.checked(max_seconds=3600)"
        )
    return limits
