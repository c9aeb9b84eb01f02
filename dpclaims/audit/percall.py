"""Per-call mechanisms: a library function that releases once per call, ``f(data, rng)``, made
a batched mechanism ``f(data, rng, trials)`` (:func:`percall`).

Each trial gets its own seed, drawn from the batch's ``rng``, and the function is called with
the random source it takes: a numpy ``Generator``, a ``RandomState`` or an integer seed (read
from the name or annotation of its second parameter, or ``seed_type=``).  A trial's numbers
depend only on its seed, so the calls of a batch are spread over the workers of an
:class:`~dpclaims.execution.Execution` (all cores by default) and the same seed gives the same
outputs whatever the worker count.  :meth:`PerCall.pilot` times a few calls, for the estimate
an audit states up front.
"""

from __future__ import annotations

import inspect
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, MechanismError, check_choice
from ..execution import DEFAULT_EXECUTION, Execution, check_execution, map_tasks, resolve_workers

__all__ = ["SEED_TYPES", "PARALLEL_MIN_CALLS", "PILOT_CALLS", "PerCall", "percall", "seed_type_of"]

SEED_TYPES = ("generator", "random_state", "int")
"""What a per-call function takes as its random source: ``np.random.Generator``,
``np.random.RandomState`` or an integer seed."""

_NAMES = {
    "generator": ("rng", "generator", "gen"),
    "random_state": ("random_state", "randomstate", "prng", "rs"),
    "int": ("seed", "random_seed"),
}
"""Parameter names read as each seed type."""

_ANNOTATIONS = {
    "generator": (np.random.Generator, "Generator", "np.random.Generator"),
    "random_state": (np.random.RandomState, "RandomState", "np.random.RandomState"),
    "int": (int, "int"),
}
"""Annotations read as each seed type."""

PARALLEL_MIN_CALLS = 256
"""Fewest calls of one batch spread over workers (fewer run here: a pool costs more)."""

PILOT_CALLS = 16
"""Calls :meth:`PerCall.pilot` times."""

SEED_SPACE = 2**32
"""Trial seeds are distinct integers below this (what ``RandomState`` and most libraries
take)."""


def seed_type_of(func: Callable) -> str | None:
    """The seed type ``func(data, source)`` takes, read from its second parameter's annotation
    or name (see :data:`SEED_TYPES`); None when neither says."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(params) < 2:
        return None
    second = params[1]
    for kind, marks in _ANNOTATIONS.items():
        if any(second.annotation is a or second.annotation == a for a in marks):
            return kind
    for kind, names in _NAMES.items():
        if second.name.lower() in names:
            return kind
    return None


def _source(seed_type: str, seed: int) -> Any:
    """The random source of one trial from its integer ``seed``."""
    if seed_type == "generator":
        return np.random.default_rng(seed)
    if seed_type == "random_state":
        return np.random.RandomState(seed)
    return seed


def _calls(func: Callable, seed_type: str, data: Any, seeds: np.ndarray) -> np.ndarray:
    """Outputs ``(len(seeds), k)``: one call of ``func`` per seed, each output flattened."""
    rows = [np.ravel(np.asarray(func(data, _source(seed_type, int(s))))) for s in seeds]
    widths = {r.shape for r in rows}
    if len(widths) > 1:
        raise MechanismError(
            f"per-call function returned outputs of different sizes on different calls: "
            f"{sorted(w[0] for w in widths)}; return one release of a fixed size"
        )
    if rows[0].dtype.kind not in "biuf":
        raise MechanismError(
            f"per-call function returned non-numeric outputs (dtype {rows[0].dtype}); return "
            "numbers (e.g. np.concatenate([counts, edges]) for a histogram)"
        )
    return np.stack(rows).astype(np.float64)


def _in_worker() -> bool:
    """Whether this process is a worker of a pool (its calls then run here, not in a pool of
    its own)."""
    return multiprocessing.parent_process() is not None


@dataclass(frozen=True)
class PerCall:
    """``func(data, source)`` releasing once per call, as a batched mechanism
    ``(data, rng, trials) -> (trials, k)`` (see :func:`percall`)."""

    func: Callable
    seed_type: str
    execution: Execution = DEFAULT_EXECUTION

    @property
    def __name__(self) -> str:
        """The function's name (what messages and descriptions say)."""
        return getattr(self.func, "__name__", type(self.func).__name__)

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        seeds = rng.choice(SEED_SPACE, size=trials, replace=False)
        workers = resolve_workers(self.execution.workers)
        if trials < PARALLEL_MIN_CALLS or workers == 1 or _in_worker():
            return _calls(self.func, self.seed_type, data, seeds)
        parts = np.array_split(seeds, min(4 * workers, trials // 64))
        tasks = [(self.func, self.seed_type, data, part) for part in parts]
        return np.concatenate(map_tasks(_calls, tasks, self.execution))

    @property
    def workers(self) -> int:
        """Workers the calls of one batch are spread over."""
        return resolve_workers(self.execution.workers)

    def pilot(self, data: Any, calls: int = PILOT_CALLS) -> float:
        """Wall seconds of one call on ``data``, timed over ``calls`` calls here (fixed seeds)."""
        seeds = np.arange(calls)
        start = time.perf_counter()
        _calls(self.func, self.seed_type, data, seeds)
        return (time.perf_counter() - start) / calls

    def seconds(self, per_call: float, calls: int) -> float:
        """Estimated wall seconds of ``calls`` calls at ``per_call`` seconds each, spread over
        the workers when a batch is that large."""
        parallel = calls >= PARALLEL_MIN_CALLS and self.execution.parallel
        return per_call * calls / (self.workers if parallel else 1)


def percall(
    func: Callable, *, seed_type: str | None = None, execution: Execution = DEFAULT_EXECUTION
) -> PerCall:
    """``func(data, source) -> one release`` as a batched mechanism for :func:`audit`.

    Parameters
    ----------
    func : called once per trial with the dataset and the trial's random source; it returns
        one release (a number or an array, flattened)
    seed_type : ``"generator"`` (``np.random.Generator``), ``"random_state"``
        (``np.random.RandomState``) or ``"int"`` (an integer seed); None reads it from the
        second parameter's annotation or name (``rng``, ``random_state``, ``seed``, ...)
    execution : where one batch's calls run (default: all cores); the outputs do not depend
        on it

    Returns
    -------
    PerCall : ``mechanism(data, rng, trials) -> (trials, k)``; trial ``i`` calls ``func`` with a
    source seeded by the ``i``-th of ``trials`` distinct integers drawn from ``rng``.
    """
    if not callable(func):
        raise InputError(
            f"percall needs a function func(data, rng) -> release, got {type(func).__name__}"
        )
    name = getattr(func, "__name__", type(func).__name__)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        if "trials" in signature.parameters:
            raise InputError(
                f"{name!r} takes trials, so it is already batched; pass it to audit as it is, "
                "without percall"
            )
        try:
            signature.bind(None, None)
        except TypeError:
            raise InputError(
                f"{name!r} has signature {signature}; percall needs func(data, rng) -> one "
                "release (wrap the library call: lambda data, rng: lib.f(data, random_state=rng))"
            ) from None
    if seed_type is None:
        seed_type = seed_type_of(func)
        if seed_type is None:
            raise InputError(
                f"cannot tell from {name!r}'s signature which random source its second "
                "parameter takes; pass seed_type='generator', 'random_state' or 'int' (or name "
                "the parameter rng, random_state or seed)"
            )
    check_choice(seed_type, SEED_TYPES, "seed_type")
    return PerCall(func, seed_type, check_execution(execution))
