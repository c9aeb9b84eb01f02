"""Time and memory of a long run, estimated from a short probe, and the limits a run must fit.

Before an audit, the mechanism is called on a few small seed blocks (:func:`probe`):
the calls give the output width, the working memory per trial (``tracemalloc``
peaks of two call sizes, when ``tracemalloc`` is not already in use) and, for a run
estimated to be long, the time per trial on calls of at least :data:`PROBE_SECONDS`.
:func:`check_budget` refuses a run whose estimate exceeds ``max_seconds`` or
``max_memory`` with one line giving the largest trial count that fits.

The defaults are :data:`MAX_SECONDS` (24 hours) and :data:`MEMORY_SHARE` of the
machine's physical memory; pass ``max_seconds=`` / ``max_memory=`` (bytes) to
``audit`` (``--max-seconds`` / ``--max-memory-gb`` on the command line) to change them.
"""

from __future__ import annotations

import logging
import math
import os
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "LONG_RUN",
    "MAX_SECONDS",
    "MEMORY_SHARE",
    "PROBE_SECONDS",
    "Estimate",
    "Limits",
    "Probe",
    "Workload",
    "check_budget",
    "describe_bytes",
    "physical_memory",
    "probe",
]

MAX_SECONDS = 24 * 3600.0
"""Default time limit of one run (seconds); a longer estimate is refused."""

MEMORY_SHARE = 0.5
"""Default memory limit: this share of the machine's physical memory."""

LONG_RUN = 10.0
"""Runs estimated to take longer (seconds) get a refined time probe and a logged estimate."""

PROBE_SECONDS = 0.2
"""A time probe doubles its call size (up to one seed block) until one call takes this long."""

OVERHEAD = 2.0
"""Factor from the probe's time per trial (mechanism and counting in one process) to a run's:
learned scores, transfers between processes and workers sharing the machine (measured 1.5-2×)."""

HELD_COPIES = 3
"""Copies of the calibration outputs alive at once in the main process (parts, joined, scores)."""

log = logging.getLogger("dpclaims")


@dataclass(frozen=True)
class Probe:
    """What a few small calls of a mechanism tell about a long run.

    ``seconds_per_trial`` from the largest timed call; working memory of one call of
    ``n`` trials ≈ ``bytes_fixed + bytes_per_trial × n`` (0 when not measured);
    ``width`` output columns; ``trials`` the size of the largest timed call.
    """

    seconds_per_trial: float
    bytes_per_trial: float
    bytes_fixed: float
    width: int
    trials: int


@dataclass(frozen=True)
class Estimate:
    """Estimated wall time (s) and peak memory (bytes, all processes) of ``trials`` per side."""

    trials: int
    seconds: float
    memory: float

    def describe(self) -> str:
        return f"about {_duration(self.seconds)} and {describe_bytes(self.memory)} of memory"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def describe_bytes(size: float) -> str:
    """``size`` bytes for people: ``"1.5 GB"``."""
    for unit, scale in (("TB", 2.0**40), ("GB", 2.0**30), ("MB", 2.0**20)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size / 2**10:.3g} kB"


def physical_memory() -> float:
    """Bytes of physical memory of this machine (``inf`` when the platform does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return math.inf


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Limits of one run: its estimated wall time ``max_seconds`` and peak memory
    ``max_memory`` (bytes); build it with :meth:`checked`, which fills in the defaults."""

    max_seconds: float
    max_memory: float

    @classmethod
    def checked(cls, max_seconds: Any = None, max_memory: Any = None) -> Limits:
        """The limits checked (numbers > 0, ``math.inf`` for none), None replaced by
        :data:`MAX_SECONDS` and :data:`MEMORY_SHARE` of the physical memory."""
        out = []
        for name, value, default, example in (
            ("max_seconds", max_seconds, MAX_SECONDS, "max_seconds=7 * 86400"),
            ("max_memory", max_memory, MEMORY_SHARE * physical_memory(), "max_memory=64 * 2**30"),
        ):
            if value is None:
                out.append(default)
                continue
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                value, bool
            )
            if not ok or not value > 0 or math.isnan(value):
                raise InputError(
                    f"{name} must be a number > 0 (math.inf for no limit), got {value!r}; "
                    f"pass e.g. {example}"
                )
            out.append(float(value))
        return cls(max_seconds=out[0], max_memory=out[1])


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A run to budget: ``trials`` per side on ``sides`` datasets, ``held(n)`` trials per side
    of outputs kept in the main process for a run of ``n``, ``workers`` workers (``parallel``:
    separate processes), and the smallest trial count worth proposing (``minimum``)."""

    trials: int
    held: Callable[[int], int]
    workers: int
    parallel: bool
    sides: int = 2
    minimum: int = 1


def _timed(call: Callable[[int], Any], n: int) -> float:
    """CPU seconds of ``call(n)``: on a busy machine, wall time counts other programs' turns."""
    start = time.process_time()
    call(n)
    return time.process_time() - start


def _peak(call: Callable[[int], Any], n: int) -> float:
    tracemalloc.start()
    try:
        call(n)
        return float(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def probe(
    call: Callable[[int], np.ndarray],
    first: float,
    width: int,
    trials: int,
    refine: Callable[[float], bool],
) -> Probe:
    """Probe ``call(n) -> outputs (n, k)`` (one seed block of ``n`` trials).

    ``first`` is the time of a call of 32 trials already made (the determinism check)
    and ``width`` its output width.  Memory: ``tracemalloc`` peaks of calls of 32
    and 64 trials (skipped when ``tracemalloc`` is already tracing, so a caller's
    own measurement is not disturbed).  Time: when ``refine(seconds per trial)`` says
    the run would be long, calls of 128, 512, ... trials (at most one seed block,
    at most ``trials``) until one takes :data:`PROBE_SECONDS`.
    """
    from .execution import DETERMINISM_PROBE, SEED_BLOCK

    n, seconds = DETERMINISM_PROBE, first
    per_trial, fixed = 0.0, 0.0
    if not tracemalloc.is_tracing() and trials > DETERMINISM_PROBE:
        small, large = _peak(call, DETERMINISM_PROBE), _peak(call, 2 * DETERMINISM_PROBE)
        per_trial = max((large - small) / DETERMINISM_PROBE, 8.0 * width)
        fixed = max(small - per_trial * DETERMINISM_PROBE, 0.0)
    while refine(seconds / n) and seconds < PROBE_SECONDS and n < min(SEED_BLOCK, trials):
        n = min(4 * n, SEED_BLOCK, trials)
        seconds = _timed(call, n)
    return Probe(
        seconds_per_trial=seconds / n,
        bytes_per_trial=per_trial,
        bytes_fixed=fixed,
        width=width,
        trials=n,
    )


def estimate(found: Probe, work: Workload, trials: int) -> Estimate:
    """Estimate of ``work`` run with ``trials`` per side."""
    from .execution import SEED_BLOCK

    held, workers, parallel, sides = work.held(trials), work.workers, work.parallel, work.sides
    block = (
        found.bytes_fixed
        + found.bytes_per_trial * min(trials, SEED_BLOCK)
        + 16.0 * found.width * SEED_BLOCK
    )
    main = HELD_COPIES * sides * held * 8.0 * found.width + block
    memory = main + (workers * block if parallel else 0.0)
    seconds = OVERHEAD * sides * trials * found.seconds_per_trial / (workers if parallel else 1)
    return Estimate(trials=trials, seconds=seconds, memory=memory)


def _round_down(value: int) -> int:
    """``value`` rounded down to two significant digits."""
    if value < 100:
        return value
    scale = 10 ** (len(str(value)) - 2)
    return value // scale * scale


def check_budget(found: Probe, work: Workload, limits: Limits) -> Estimate:
    """The estimate of ``work``; :class:`InputError` with the largest count that fits when it
    exceeds the ``limits``."""
    trials, workers = work.trials, work.workers
    max_seconds, max_memory = limits.max_seconds, limits.max_memory
    guess = estimate(found, work, trials)
    if guess.seconds <= max_seconds and guess.memory <= max_memory:
        if guess.seconds > LONG_RUN:
            log.info("dpclaims: %s trials per side will take %s", f"{trials:,}", guess.describe())
        return guess

    def fits(n: int) -> bool:
        e = estimate(found, work, n)
        return e.seconds <= max_seconds and e.memory <= max_memory

    minimum = work.minimum
    lo, hi = minimum - 1, trials  # fits(lo) is assumed (or lo < minimum), fits(hi) is False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    what = []
    if guess.seconds > max_seconds:
        what.append(f"max_seconds={max_seconds:g}")
    if guess.memory > max_memory:
        what.append(f"max_memory={max_memory:.4g} bytes ({describe_bytes(max_memory)})")
    per_trial = describe_bytes(found.bytes_per_trial)
    rate = f"{found.seconds_per_trial * 1e6:.3g} µs and {per_trial} per trial"
    if lo < minimum:
        advice = "no trial count fits: pass fewer workers or raise the limit"
    else:
        largest = _round_down(lo)
        advice = f"the largest count that fits is trials={largest:_}; pass that or raise the limit"
    raise InputError(
        f"trials={trials:_} would need {guess.describe()} (probe: {rate}, "
        f"{workers if work.parallel else 1} worker(s)), "
        f"over the limit {' and '.join(what)}; {advice} "
        "(max_seconds=/max_memory=, or --max-seconds/--max-memory-gb)"
    )
