"""Collecting: an audit's trials run wherever an :class:`~dpclaims.execution.Execution` says.

Each dataset has one stream of ``trials`` trials (seeds ``child_seed(seed, 0)`` for d0,
``child_seed(seed, 1)`` for d1, cut into seed blocks as in :mod:`dpclaims.execution`).  Its
first ``calibration`` trials are returned as outputs (:meth:`Collector.calibration`); the
others are reduced on the workers to the integer counts ``#{score > t}`` at fixed thresholds
(:meth:`Collector.counts`), so only counts travel back and memory stays bounded whatever
``trials`` is.  The counts are the same for every backend, worker count and chunk size.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MechanismError
from ..execution import (
    SEED_BLOCK,
    ChunkPlan,
    Execution,
    TaskGrid,
    child_seed,
    plan_chunks,
    reduce_blocks,
    run_blocks,
    session,
)
from .scores import Score
from .threshold import Counts, counts_above

__all__ = ["Streams", "Layout", "HeldOutputs", "ScoreCounts", "Collector"]


@dataclass(frozen=True, kw_only=True)
class Streams:
    """Both datasets' trial streams: a batched ``mechanism(data, rng, trials)``, ``d0``, ``d1``
    and the audit's ``seed`` (d0 draws from ``child_seed(seed, 0)``, d1 from
    ``child_seed(seed, 1)``)."""

    mechanism: Callable
    d0: Any
    d1: Any
    seed: int

    def heads(self) -> list[tuple]:
        """``[(mechanism, d0, seed0), (mechanism, d1, seed1)]``: the tasks' leading arguments."""
        seeds = child_seed(self.seed, 0), child_seed(self.seed, 1)
        return [(self.mechanism, self.d0, seeds[0]), (self.mechanism, self.d1, seeds[1])]


@dataclass(frozen=True, kw_only=True)
class Layout:
    """How each stream of ``trials`` trials is cut: the first ``calibration`` are held.

    Calibration runs whole seed blocks; the rows of its last block past ``calibration``
    certify (reduced in the main process, not recomputed) and the remaining blocks are cut
    into chunks (``chunk`` trials, or see :func:`~dpclaims.execution.plan_chunks`).
    """

    trials: int
    calibration: int
    workers: int = 1
    chunk: int | None = None
    checkpointed: bool = False

    @property
    def held(self) -> int:
        """Trials per dataset whose outputs the main process holds (the calibration's blocks)."""
        return min(self.trials, -(-self.calibration // SEED_BLOCK) * SEED_BLOCK)

    def chunks(self) -> tuple[ChunkPlan, ChunkPlan]:
        """The calibration chunks and the certification chunks of one stream."""
        options = {"workers": self.workers, "checkpointed": self.checkpointed}
        cal = plan_chunks(self.trials, self.chunk, stop=self.held, **options)
        cert = plan_chunks(self.trials, self.chunk, start=self.held, **options)
        return cal, cert


@dataclass(frozen=True, kw_only=True)
class HeldOutputs:
    """The held outputs: ``cal0``, ``cal1`` (calibration, k) and the rows of the last calibration
    block past it, ``rest0``, ``rest1`` (which certify)."""

    cal0: np.ndarray
    cal1: np.ndarray
    rest0: np.ndarray
    rest1: np.ndarray


@dataclass(frozen=True)
class ScoreCounts:
    """Reducer run on the workers: a block of outputs (n, width) → ``#{score > t}`` (T,)."""

    score: Score
    thresholds: np.ndarray
    width: int

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.shape[1] != self.width:
            raise MechanismError(
                f"the mechanism returned {outputs.shape[1]} columns in a certification block "
                f"but {self.width} during calibration; outputs must keep the same width"
            )
        if len(outputs) == 0:
            return np.zeros(len(self.thresholds), dtype=np.int64)
        return counts_above(self.score(outputs), self.thresholds)


def _progress_bar(progress: bool | None, total: int):
    """A tqdm bar over all trials on stderr (default: only when stderr is a terminal)."""
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else bool(progress)
    return tqdm(
        total=total,
        file=sys.stderr,
        unit="trial",
        unit_scale=True,
        desc="audit",
        delay=1.0,
        disable=not show,
        leave=False,
    )


class _Progress:
    """A checkpoint stage (or none) for ``runner.stream`` that also advances the bar per task."""

    def __init__(self, bar, tasks, stage):
        self.bar, self.tasks, self.stage = bar, tasks, stage

    def _size(self, index: int) -> int:
        return sum(hi - lo for _, _, lo, hi in self.tasks[index][3])

    def saved(self, count: int):
        for index, value in self.stage.saved(count) if self.stage is not None else ():
            self.bar.update(self._size(index))
            yield index, value

    def save(self, index: int, value) -> None:
        if self.stage is not None:
            self.stage.save(index, value)
        self.bar.update(self._size(index))


@dataclass
class Collector:
    """Runs an audit's trials: use as a context manager (it opens the backend and the progress
    bar), then :meth:`calibration` once and :meth:`counts` once.

    ``store`` is an open checkpoint (see :mod:`dpclaims.checkpoint`) or None; ``probe`` an
    object standing for the tasks, to choose the backend (see
    :func:`~dpclaims.execution.session`).
    """

    streams: Streams
    layout: Layout
    execution: Execution = field(default_factory=Execution)
    progress: bool | None = None
    store: Any = None
    probe: Any = None

    def __enter__(self) -> Collector:
        self._cal_chunks, self._cert_chunks = self.layout.chunks()
        self._bar = _progress_bar(self.progress, 2 * self.layout.trials)
        self._bar.__enter__()
        tasks = len(self._cert_chunks)
        self._session = session(self.execution, tasks=tasks, probe=self.probe)
        self._runner = self._session.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._session.__exit__(*exc)
        finally:
            self._bar.__exit__(*exc)

    def _stage(self, name: str, tasks: TaskGrid, **extra: Any) -> _Progress:
        stage = self.store and self.store.stage(name, **extra)
        return _Progress(self._bar, tasks, stage)

    def calibration(self) -> HeldOutputs:
        """The outputs of the calibration blocks of both datasets."""
        tasks = TaskGrid(self.streams.heads(), self._cal_chunks)
        parts = self._runner.map(run_blocks, tasks, self._stage("calibration", tasks))
        split = len(self._cal_chunks)
        run0, run1 = np.concatenate(parts[:split]), np.concatenate(parts[split:])
        n = self.layout.calibration
        return HeldOutputs(cal0=run0[:n], cal1=run1[:n], rest0=run0[n:], rest1=run1[n:])

    def counts(self, reducer: ScoreCounts, rest: tuple[np.ndarray, np.ndarray]) -> Counts:
        """:class:`Counts` at ``reducer.thresholds`` of every certifying trial: the ``rest``
        rows of the calibration blocks, then the certification chunks, reduced on the
        workers."""
        above0, above1 = reducer(rest[0]), reducer(rest[1])
        tasks = TaskGrid(self.streams.heads(), self._cert_chunks, (reducer,))
        extra = {"thresholds": reducer.thresholds, "score": reducer.score.name}
        progress = self._stage("certification", tasks, **extra)
        split = len(self._cert_chunks)
        for i, counts in self._runner.stream(reduce_blocks, tasks, progress):
            if i < split:
                above0 += counts
            else:
                above1 += counts
        n = self.layout.trials - self.layout.calibration
        return Counts(above0=above0, n0=n, above1=above1, n1=n)
