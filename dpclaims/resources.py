"""Time and memory of a long run, estimated from a short probe, and the limits a run must fit.

Before an audit, the mechanism is called on a few small seed blocks (:func:`probe`):
the calls give the output width, the working memory per trial (``tracemalloc``
peaks of two call sizes, when ``tracemalloc`` is not already in use) and, for a run
estimated to be long, the time of a call of ``n`` trials fitted as ``a + b·n`` from two
warm calls (the cold first call, which carries one-off costs, is not used).
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
    "refine_above",
]

MAX_SECONDS = 24 * 3600.0
"""Default time limit of one run (seconds); a longer estimate is refused."""

MEMORY_SHARE = 0.5
"""Default memory limit: this share of the machine's physical memory."""

LONG_RUN = 10.0
"""Runs estimated to take longer (seconds) get a logged estimate, refined by a time probe
when the log is shown (:func:`refine_above`)."""

PROBE_SECONDS = 0.2
"""A time probe quadruples its call size (up to one seed block) until one call takes this long."""

CHEAP_CALL = 0.02
"""Probe calls shorter than this (seconds) are timed twice and the shorter time kept."""

OVERHEAD = 3.0
"""Safety factor from the probe's model of one seed block (mechanism and counting in one
process, warm) to a run's time per block: fresh memory and caches, learned scores and
transfers between processes (measured 2.5-3× for ``dpclaims audit gaussian``).  With
:data:`HELD_SECONDS`, :data:`FIXED_SECONDS` and :data:`WORKER_SHARE` the estimate of
``dpclaims audit gaussian --trials N`` (N = 1e6, 5e6, 2e7; serial and processes on a
shared 2-core machine) is within 1.5× of the wall time either way."""

WORKER_SHARE = 0.5
"""Speed-up each worker beyond the first adds (workers share cores, memory bandwidth and
the main process): ``1 + WORKER_SHARE × (workers - 1)``."""

FIXED_SECONDS = 0.3
"""Seconds of a run that do not grow with its trials: starting workers, fitting the score,
choosing thresholds and bounds (measured 0.2-1.5 s)."""

HELD_SECONDS = 1.2e-7
"""Seconds per output value held in the main process (joining, checking, sorting and
partitioning the held outputs), measured ~1.5e-7 for ``dpclaims audit gaussian``; twice
that with worker processes, whose held outputs are also sent to the main process."""

HELD_COPIES = 3
"""Copies of the calibration outputs alive at once in the main process (parts, joined, scores)."""

log = logging.getLogger("dpclaims")


@dataclass(frozen=True)
class Probe:
    """What a few small calls of a mechanism tell about a long run.

    The time of one call of ``n`` trials ≈ ``seconds_per_call + seconds_per_trial × n``
    (fitted on warm calls); working memory of one call of ``n`` trials ≈
    ``bytes_fixed + bytes_per_trial × n`` (0 when not measured); ``width`` output columns;
    ``trials`` the size of the largest timed call.
    """

    seconds_per_trial: float
    bytes_per_trial: float
    bytes_fixed: float
    width: int
    trials: int
    seconds_per_call: float = 0.0


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
    separate processes), and the smallest trial count worth proposing (``minimum``).  The run
    calls its mechanism on seed blocks of ``block`` trials, the first probe call on
    ``probe_trials`` (the executor's ``SEED_BLOCK`` and ``DETERMINISM_PROBE``)."""

    trials: int
    held: Callable[[int], int]
    workers: int
    parallel: bool
    block: int
    probe_trials: int
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


def _warm(call: Callable[[int], Any], n: int) -> float:
    """CPU seconds of a warm ``call(n)``: the shorter of two when the call is cheap."""
    seconds = _timed(call, n)
    return min(seconds, _timed(call, n)) if seconds < CHEAP_CALL else seconds


def _fit(small: int, t_small: float, large: int, t_large: float) -> tuple[float, float]:
    """``(a, b)`` with ``a + b·n`` through the two timed calls, exact at the larger one; when
    noise makes the larger call the faster, all of its time per trial (``a = 0``)."""
    slope = (t_large - t_small) / (large - small) if large > small else 0.0
    if slope <= 0.0:
        return 0.0, t_large / large
    return max(t_large - slope * large, 0.0), slope


def refine_above(limits: Limits) -> float:
    """The estimate (seconds) above which :func:`probe` refines its time: :data:`LONG_RUN`
    when the estimate is logged (logger ``"dpclaims"`` at INFO, as ``dpclaims audit`` shows
    it), else the time limit, the only decision it changes (the cold estimate counts all of
    a first call's time per trial: a refined one is lower)."""
    if log.isEnabledFor(logging.INFO):
        return min(LONG_RUN, limits.max_seconds)
    return limits.max_seconds


def probe(
    call: Callable[[int], np.ndarray],
    first: float,
    width: int,
    work: Workload,
    long_run: float,
) -> Probe:
    """Probe ``call(n) -> outputs (n, k)`` (one seed block of ``n`` trials) for ``work``.

    ``first`` is the time of a call of ``work.probe_trials`` (32) trials already made (the
    determinism check) and ``width`` its output width.  Memory: ``tracemalloc`` peaks of calls
    of 32 and 64 trials (skipped when ``tracemalloc`` is already tracing, so a caller's
    own measurement is not disturbed).  Time: ``first`` (a cold call: imports, caches,
    compilation) counts as all per-trial time; when that estimate of ``work`` (with
    :data:`OVERHEAD`) exceeds ``long_run`` seconds, warm calls of 32 and 128 trials,
    then 512, ... (at most one seed block, at most ``work.trials``, until one takes
    :data:`PROBE_SECONDS`) fit the time of a call as ``a + b·n``
    from the last two sizes; ``a`` is counted once per seed block of the run.
    """
    trials = work.trials
    n = work.probe_trials
    per_trial, fixed = 0.0, 0.0
    if not tracemalloc.is_tracing() and trials > n:
        small, large = _peak(call, n), _peak(call, 2 * n)
        per_trial = max((large - small) / n, 8.0 * width)
        fixed = max(small - per_trial * n, 0.0)

    def found(a: float, b: float, n: int) -> Probe:
        return Probe(
            seconds_per_trial=b,
            bytes_per_trial=per_trial,
            bytes_fixed=fixed,
            width=width,
            trials=n,
            seconds_per_call=a,
        )

    def long(p: Probe) -> bool:
        return estimate(p, work, trials).seconds > long_run

    current = found(0.0, first / n, n)
    top = min(work.block, trials)
    if not long(current) or n >= top:
        return current
    seconds = _warm(call, n)
    while n < top and seconds < PROBE_SECONDS:
        large = min(4 * n, top)
        t_large = _warm(call, large)
        current = found(*_fit(n, seconds, large, t_large), large)
        n, seconds = large, t_large
    return current


def estimate(found: Probe, work: Workload, trials: int) -> Estimate:
    """Estimate of ``work`` run with ``trials`` per side."""
    held, workers, parallel, sides = work.held(trials), work.workers, work.parallel, work.sides
    block = (
        found.bytes_fixed
        + found.bytes_per_trial * min(trials, work.block)
        + 16.0 * found.width * work.block
    )
    main = HELD_COPIES * sides * held * 8.0 * found.width + block
    memory = main + (workers * block if parallel else 0.0)
    blocks = -(-trials // work.block)
    stream = blocks * found.seconds_per_call + trials * found.seconds_per_trial
    speedup = 1.0 + WORKER_SHARE * (workers - 1) if parallel else 1.0
    seconds = OVERHEAD * sides * stream / speedup
    per_held = HELD_SECONDS * (2.0 if parallel else 1.0)
    seconds += per_held * sides * held * found.width + FIXED_SECONDS
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
    per_block = found.seconds_per_call / work.block + found.seconds_per_trial
    rate = f"{per_block * 1e6:.3g} µs and {per_trial} per trial"
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
