"""``Execution``: where and how trials run, one value passed once from the CLI down to the
trials."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, check_trials
from .backends import Backend, backend_named
from .mechanisms import strict_default
from .plan import resolve_workers

__all__ = ["Execution", "DEFAULT_EXECUTION", "check_execution"]


@dataclass(frozen=True, kw_only=True)
class Execution:
    """Where and how trials run: one value passed once, from the CLI down to the trials.

    Parameters
    ----------
    backend : Backend or str
        A :class:`~dpclaims.execution.backends.Backend` (``AutoBackend()``, ``Serial()``,
        ``Processes()``, ``Dask(scheduler=...)``) or its name: ``"auto"`` (processes when
        there is more than one worker), ``"serial"``, ``"processes"`` or ``"dask"``; a name
        is resolved to its backend here, so ``backend`` is always a ``Backend``.
    workers : int or None
        Workers (None: all cores).
    scheduler : str or None
        Dask scheduler address (with ``backend="dask"``; None starts a local cluster); the
        same as ``backend=Dask(scheduler=...)``.
    checkpoint : str, Path or None
        Folder for checkpoints of long runs (None: no checkpoints).
    chunk : int or None
        Trials per unit of work sent to a worker (see
        :func:`~dpclaims.execution.plan_chunks`); results do not depend on it.
    progress : bool or None
        A progress bar on stderr (None: when stderr is a terminal).
    strict : bool or None
        A mechanism that ignores its ``rng`` is an error, not a warning (None: on when the
        environment has ``CI=true``).
    max_seconds, max_memory : float or None
        Limits (seconds, bytes) on a run's estimated time and memory (None: 24 h and half
        the physical memory; see :mod:`dpclaims.resources`).
    """

    backend: Backend | str = "auto"
    workers: int | None = None
    scheduler: str | None = None
    checkpoint: str | os.PathLike | None = None
    chunk: int | None = None
    progress: bool | None = None
    strict: bool | None = None
    max_seconds: float | None = None
    max_memory: float | None = None

    def __post_init__(self) -> None:
        backend = backend_named(self.backend, self.scheduler)
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "scheduler", backend.scheduler)
        if self.workers is not None:
            resolve_workers(self.workers)
        if self.chunk is not None:
            check_trials(self.chunk, "chunk")
        strict_default(self.strict)
        self.limits()

    @property
    def parallel(self) -> bool:
        """Whether the trials run in several processes (for time and memory estimates)."""
        return self.backend.parallel(resolve_workers(self.workers))

    def limits(self) -> Any:
        """The :class:`~dpclaims.resources.Limits` of ``max_seconds`` and ``max_memory``."""
        from ..resources import Limits

        return Limits.checked(self.max_seconds, self.max_memory)

    def narrowed(self, name: str) -> Execution:
        """This execution checkpointing into the subfolder ``name`` of its checkpoint folder
        (one checkpoint folder, one run); unchanged without a checkpoint."""
        if self.checkpoint is None:
            return self
        return dataclasses.replace(self, checkpoint=os.path.join(self.checkpoint, name))

    def check(self, *, out: Any = None, option: Callable[[str], str] = "{}=".format) -> None:
        """Check, once and before anything runs, that this execution can run: the backend can
        start (:meth:`Backend.check`: Dask installed, its scheduler answering within
        :data:`~dpclaims.execution.backends.SCHEDULER_CHECK_TIMEOUT` seconds), and the
        ``checkpoint`` folder is new, empty or a dpclaims checkpoint tree, can be written, and is
        neither inside ``out`` (a report folder) nor holding it.  ``option(field)`` is how the
        caller spells a field in messages (``"--scheduler"`` on the command line)."""
        self.backend.check(option)
        if self.checkpoint is not None:
            from ..checkpoint import check_checkpoint_tree

            check_checkpoint_tree(self.checkpoint, name=option("checkpoint"))
            if out is not None:
                _check_apart(self.checkpoint, out, option)


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


def check_execution(execution: Any) -> Execution:
    """``execution`` checked to be an :class:`Execution` (one error line naming it else)."""
    if not isinstance(execution, Execution):
        raise InputError(
            f"execution must be a dpclaims.execution.Execution, got {type(execution).__name__}; "
            "pass e.g. execution=Execution(backend='processes', workers=4)"
        )
    return execution


DEFAULT_EXECUTION = Execution()
"""Where trials run unless told: all cores, the backend chosen per session."""
