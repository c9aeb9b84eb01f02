"""A wall-clock limit on a block of code that also stops Python loops in user code.

:func:`time_limit` arms a one-shot ``SIGALRM`` timer (``signal.setitimer``); when it fires, the
signal handler raises :class:`TimeLimitExceeded` in the main thread, wherever it is: in a user's
``while True`` loop, or waiting for worker processes (which the process pool then ends).  Signals
are delivered to the main thread only, and only on POSIX: elsewhere the block runs without a
limit, with a ``RuntimeWarning``.  A C extension that never returns to Python is not
interrupted until it does.
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TimeLimitExceeded", "time_limit"]


class TimeLimitExceeded(BaseException):
    """The time limit of a :func:`time_limit` block ran out; the message says which limit.

    A ``BaseException`` (like ``KeyboardInterrupt``), so user code's ``except Exception`` does
    not swallow it.
    """


@contextmanager
def time_limit(seconds: float | None, option: str) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` if the block runs past ``seconds``: "exceeded the time
    limit of 2 s (``option``)", where ``option`` names the setting (e.g. "--claim-timeout").

    ``None`` sets no limit.  Blocks do not nest: the inner one would replace the outer's timer.
    """
    if seconds is None:
        yield
        return
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

    def expire(signum: int, frame: object) -> None:
        raise TimeLimitExceeded(message)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
