"""A wall-clock limit on a block of code that also stops Python loops in user code.

:func:`time_limit` arms a one-shot ``SIGALRM`` timer (``signal.setitimer``); when it fires, the
signal handler raises :class:`TimeLimitExceeded` in the main thread, wherever it is: in a user's
``while True`` loop, or waiting for worker processes (which the process pool then ends).

The block may fight the timer: cancel it (``setitimer(ITIMER_REAL, 0)``), ignore or replace the
handler (``signal.signal(SIGALRM, SIG_IGN)``), or catch ``BaseException``.  A watchdog thread
enforces the limit from outside: :data:`GRACE` s after the deadline, and every :data:`RETRY` s
after that, it sends ``SIGALRM`` to the main thread again while dpclaims' handler is installed
(a cancelled timer); when the handler was replaced it raises :class:`TimeLimitExceeded` in the
main thread once (``PyThreadState_SetAsyncExc``).  A block that swallows that exception, or
that sits in one C call (a blocking call with ``SIGALRM`` ignored, a long numpy operation),
runs on until it returns, and the block then ends with :class:`TimeLimitExceeded` all the same:
whatever it returns late is never used.

Signals are delivered to the main thread only, and only on POSIX: elsewhere the block runs
without a limit, with a ``RuntimeWarning``.
"""

from __future__ import annotations

import ctypes
import math
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import InputError, check_positive

__all__ = ["MAX_SECONDS", "TimeLimitExceeded", "check_time_limit", "time_limit"]

MAX_SECONDS = 365 * 24 * 3600
"""The longest time limit, one year (``setitimer`` itself overflows near 9.2e9 s)."""

GRACE = 0.1
"""Seconds after the deadline the timer's own signal has before the watchdog acts."""

RETRY = 0.5
"""Seconds between the watchdog's signals while the block runs past its limit."""


class TimeLimitExceeded(BaseException):
    """The time limit of a :func:`time_limit` block ran out; the message says which limit.

    A ``BaseException`` (like ``KeyboardInterrupt``), so user code's ``except Exception`` does
    not swallow it.
    """


def check_time_limit(seconds: Any, option: str) -> float:
    """``seconds`` as a float, after checking it is a number in (0, :data:`MAX_SECONDS`]."""
    try:
        value = check_positive(seconds, option)
    except InputError:
        value = math.nan
    if not value <= MAX_SECONDS:
        raise InputError(
            f"{option} must be a finite number > 0 and at most {MAX_SECONDS:_} s (one year), "
            f"got {seconds!r}; pass e.g. {option}=3600"
        )
    return value


class _Limit:
    """One armed limit: the ``SIGALRM`` handler and the watchdog thread that backs it up."""

    def __init__(self, seconds: float, message: str) -> None:
        self.deadline = time.monotonic() + seconds
        self.message = message
        self.finished = False
        """Set when the block ends: from then on neither the handler nor the watchdog raise."""
        self.running = threading.Lock()
        self.running.acquire()  # released when the block ends, which stops the watchdog
        self.main = threading.get_ident()
        # PyThreadState_SetAsyncExc raises a class, not an instance: this one carries the message
        self.expired = type(
            "TimeLimitExceeded", (TimeLimitExceeded,), {"__str__": lambda exc: message}
        )
        self.watchdog = threading.Thread(target=self._watch, name="dpclaims-time-limit")
        self.watchdog.daemon = True

    def expire(self, signum: int, frame: object) -> None:
        """The ``SIGALRM`` handler."""
        if not self.finished:
            raise TimeLimitExceeded(self.message)

    def _watch(self) -> None:
        wait = self.deadline + GRACE - time.monotonic()
        raised = False
        while not self.running.acquire(timeout=max(wait, 0.0)):
            if signal.getsignal(signal.SIGALRM) == self.expire:
                signal.pthread_kill(self.main, signal.SIGALRM)  # the block cancelled the timer
            elif not raised:  # the block replaced the handler: raise in it directly, once
                raised = True
                set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
                set_async_exc(ctypes.c_ulong(self.main), ctypes.py_object(self.expired))
            wait = RETRY


@contextmanager
def time_limit(seconds: float | None, option: str) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` if the block runs past ``seconds``: "exceeded the time
    limit of 2 s (``option``)", where ``option`` names the setting (e.g. "--claim-timeout").

    ``None`` sets no limit; other values must pass :func:`check_time_limit`.  A block that
    returns after its limit, having kept the exception from stopping it, also ends with
    :class:`TimeLimitExceeded`.  Blocks do not nest: the inner one would replace the outer's
    timer.
    """
    if seconds is None:
        yield
        return
    seconds = check_time_limit(seconds, option)
    message = f"exceeded the time limit of {seconds:g} s ({option})"
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        warnings.warn(
            f"a time limit needs SIGALRM in the main thread; running without one ({message})",
            RuntimeWarning,
            stacklevel=3,
        )
        yield
        return
    limit = _Limit(seconds, message)
    previous = signal.getsignal(signal.SIGALRM)
    limit.watchdog.start()
    try:
        signal.signal(signal.SIGALRM, limit.expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    except TimeLimitExceeded:
        raise TimeLimitExceeded(message) from None
    finally:
        limit.finished = True  # a plain store: no signal or raise can land before it
        try:
            limit.running.release()
            limit.watchdog.join()
        except TimeLimitExceeded:  # the watchdog's one raise, landing as it stopped
            limit.watchdog.join()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if time.monotonic() >= limit.deadline:  # the block kept the limit from stopping it
        raise TimeLimitExceeded(message)
