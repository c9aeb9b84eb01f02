"""Running: a :class:`Session` maps a function over tasks on an open backend, and
:func:`run_trials` / :func:`reduce_trials` run many seeded trials of a mechanism through it
(planned into chunks, checked against the time and memory limits, checkpointed)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, check_trials
from ..resources import Workload, check_budget, probe, refine_above
from ..timelimit import TimeLimitExceeded
from .config import DEFAULT_EXECUTION, Execution, check_execution
from .mechanisms import (
    DETERMINISM_PROBE,
    as_batched,
    call_block,
    first_block,
    ignores_rng,
    joined,
    reduce_blocks,
    run_blocks,
    strict_default,
)
from .plan import ChunkPlan, TaskGrid, plan_chunks, resolve_workers
from .seeds import SEED_BLOCK, root_seed

__all__ = ["Session", "session", "map_tasks", "run_trials", "reduce_trials"]


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


@contextlib.contextmanager
def session(
    execution: Execution = DEFAULT_EXECUTION, *, tasks: int = 2, probe: Any = None
) -> Iterator[Session]:
    """Open ``execution``'s backend for several :meth:`Session.map` calls (one pool or cluster
    for all of them).

    ``tasks`` and ``probe`` (how many tasks will be mapped and an object standing for them)
    let the backend choose (:meth:`~dpclaims.execution.backends.Backend.choose`: ``AutoBackend()``
    runs worker processes when ``tasks > 1``, there is more than one worker and ``probe``
    pickles with the standard pickle, else serially).
    """
    workers = resolve_workers(check_execution(execution).workers)
    runner = execution.backend.choose(tasks=tasks, workers=workers, probe=probe).open(workers)
    try:
        yield Session(runner)
    except TimeLimitExceeded:
        runner.abort()  # a worker stuck in user code would block the pool's close
        raise
    finally:
        runner.close()


def map_tasks(
    func: Callable, tasks: Sequence[tuple], execution: Execution = DEFAULT_EXECUTION
) -> list:
    """``[func(*task) for task in tasks]``, in order, where ``execution`` says (see
    :func:`session`).  Results never depend on the backend."""
    tasks = list(tasks)
    probe = (func, tasks[:1])
    with session(execution, tasks=len(tasks), probe=probe) as s:
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


def _start(job: _Job, execution: Execution) -> _Started:
    """The preamble of :func:`run_trials` and :func:`reduce_trials`: check the arguments, plan
    the chunks, check the mechanism draws from its rng (:func:`ignores_rng`) and that the run
    fits ``execution``'s time and memory limits (see :mod:`dpclaims.resources`) from a short
    probe on the first seed block, open the checkpoint stage."""
    execution = check_execution(execution)
    trials = check_trials(job.trials)
    batched = as_batched(job.mechanism)
    root = job.seed if isinstance(job.seed, np.random.SeedSequence) else root_seed(job.seed)
    workers = resolve_workers(execution.workers)
    chunks = plan_chunks(trials, execution.chunk, workers, execution.checkpoint is not None)
    same, first, seconds = first_block(batched, job.data, root, min(trials, DETERMINISM_PROBE))
    if not same:
        ignores_rng(batched, strict_default(execution.strict))
    limits = execution.limits()
    long_run = refine_above(limits)
    work = Workload(
        trials=trials,
        held=job.held,
        workers=workers,
        parallel=execution.parallel,
        sides=1,
        block=SEED_BLOCK,
        probe_trials=DETERMINISM_PROBE,
    )
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
        from ..checkpoint import fingerprint, open_checkpoint

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


def run_trials(
    mechanism: Callable,
    data: Any,
    trials: int,
    *,
    seed: int | np.random.SeedSequence = 0,
    execution: Execution = DEFAULT_EXECUTION,
) -> np.ndarray:
    """Run ``trials`` independent trials of ``mechanism`` on ``data``.

    Parameters
    ----------
    mechanism : callable ``(data, rng, trials) -> (trials, k)`` (or ``(data, rng) -> (k,)``, looped)
    data : whatever the mechanism takes
    trials : number of trials (≥ 1)
    seed : int or SeedSequence; block ``b`` uses its child with spawn key ``(b,)``
    execution : where and how the trials run (:class:`Execution`: backend, workers, checkpoint
        folder, chunk, strict, time and memory limits); with a checkpoint finished chunks of
        outputs are saved there and a rerun with the same arguments resumes (see
        :mod:`dpclaims.checkpoint`); all outputs are returned, so memory grows with ``trials``

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
    run = _start(job, execution)
    tasks = TaskGrid([(run.batched, data, run.root)], run.chunks)
    probe = (run.batched, data)
    with session(execution, tasks=len(tasks), probe=probe) as s:
        parts = s.map(run_blocks, tasks, run.stage)
    return joined(parts)


def reduce_trials(
    mechanism: Callable,
    data: Any,
    trials: int,
    reducer: Callable,
    *,
    seed: int | np.random.SeedSequence = 0,
    execution: Execution = DEFAULT_EXECUTION,
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
    run = _start(job, execution)
    tasks = TaskGrid([(run.batched, data, run.root)], run.chunks, (reducer,))
    probe = (run.batched, data, reducer)
    total = None
    with session(execution, tasks=len(tasks), probe=probe) as s:
        for _, counts in s.stream(reduce_blocks, tasks, run.stage):
            if total is not None and counts.shape != total.shape:
                raise InputError(
                    f"reducer returned shape {counts.shape} after {total.shape}; keep the result "
                    "shape fixed"
                )
            total = counts if total is None else total + counts
    return total
