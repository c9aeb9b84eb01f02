"""What every command shares: the parser class (usage errors as one line, exit 2), the
options of several commands, the one Execution and registry of a command, and the output
(``--json`` on the real stdout alone, the warnings collected for it)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout, suppress
from typing import Any, TextIO

__all__ = [
    "Parser",
    "add_paper_option",
    "add_registry_option",
    "add_run_options",
    "collect_warnings",
    "execution_of",
    "print_json",
    "quiet_interrupt",
    "registry_of",
    "split",
    "stdout_for_json",
    "words",
]


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line and exit code 2."""

    lazy_epilog = None
    """A function returning the epilog, called only when the help is shown (keeps start-up fast)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"dpclaims: error: {message} (see 'dpclaims --help')\n")

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


WARNINGS: list[dict[str, str]] = []
"""The warnings of the running command (category, one-line message), in order, no repeats."""


JSON_STDOUT: list[TextIO] = []
"""With ``--json``, the stream on the real stdout that the JSON object alone is written to."""


def print_json(payload: Any) -> None:
    if isinstance(payload, dict):
        payload = {**payload, "warnings": list(WARNINGS)}
    stream = JSON_STDOUT[-1] if JSON_STDOUT else sys.stdout
    print(json.dumps(payload, indent=2, default=float), file=stream, flush=True)


def registry_of(args: argparse.Namespace):
    """The registry of the packaged and installed papers plus the ``--registry`` folders."""
    from ..claims import Registry

    return Registry.discover(folders=args.registry or ())


def split(text: str | None) -> list[str]:
    """Comma-separated values, blanks dropped."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def execution_of(args: argparse.Namespace):
    """The one Execution of a command, from --backend, --workers, --scheduler, --checkpoint,
    checked before anything runs (the scheduler answers, the checkpoint folder is usable and
    apart from --out)."""
    from ..execution import Execution

    execution = Execution(
        backend=args.backend,
        workers=args.workers,
        scheduler=args.scheduler,
        checkpoint=args.checkpoint,
    )
    execution.check(out=getattr(args, "out", None), option="--{}".format)
    return execution


def words(members: Sequence[str]) -> tuple[str, ...]:
    """Enum members as plain strings: argparse writes ``repr(choice)`` in its messages."""
    return tuple(map(str, members))


def add_paper_option(p: argparse.ArgumentParser, which: str) -> None:
    """``--paper ID[,ID...]``, the one name of the paper selection of every command (the old
    spelling ``--papers`` of ``verify`` is kept as a hidden alias)."""
    p.add_argument("--paper", metavar="ID[,ID...]", help=f"comma-separated paper ids {which}")
    p.add_argument("--papers", dest="paper", help=argparse.SUPPRESS)


def add_registry_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--registry",
        action="append",
        metavar="DIR",
        help="also read the papers in this folder of claims TOMLs (repeatable); installed "
        "plugins (entry points in group dpclaims.papers) are always read",
    )


def add_run_options(
    p: argparse.ArgumentParser,
    seed_help: str = "run seed (default 0); each claim derives its own from it",
) -> None:
    """--seed and the options of the one Execution: --backend, --workers, --scheduler,
    --checkpoint."""
    p.add_argument("--seed", type=int, default=0, help=seed_help)
    p.add_argument(
        "--backend",
        default="auto",
        help="auto (default), serial, processes (or dask, when installed)",
    )
    p.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: all cores)"
    )
    p.add_argument(
        "--scheduler",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (a trusted machine: "
        "it runs the code it is sent)",
    )
    p.add_argument(
        "--checkpoint",
        help="new, empty or checkpoint folder: finished chunks are saved there and the same "
        "command resumes from them",
    )


@contextmanager
def collect_warnings() -> Iterator[None]:
    """Print each warning once as one line on stderr and keep it for the JSON output."""
    WARNINGS.clear()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        entry = {"category": category.__name__, "message": " ".join(str(message).split())}
        if entry not in WARNINGS:
            WARNINGS.append(entry)
            print(f"dpclaims: warning: {entry['message']}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


@contextmanager
def quiet_interrupt() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt here and ends forked worker processes without a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    parent = os.getpid()

    def on_interrupt(signum, frame) -> None:
        if os.getpid() != parent:
            os._exit(130)  # a worker forked from this process: the parent reports the interrupt
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def stdout_for_json(active: bool) -> Iterator[None]:
    """With ``--json`` (``active``), stdout carries the JSON object alone: whatever else is
    printed while the command runs (by user code, a C extension, a child process) goes to
    stderr, also at the file-descriptor level when stdout has a descriptor."""
    if not active:
        yield
        return
    stream = sys.stdout
    stream.flush()
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor, e.g. StringIO
        fd = None
    if fd is None:
        json_stream = stream
    else:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        json_stream = open(os.dup(fd), "w", encoding=encoding)  # noqa: SIM115
        os.dup2(sys.stderr.fileno(), fd)
    JSON_STDOUT.append(json_stream)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        JSON_STDOUT.pop()
        sys.stderr.flush()
        if fd is not None:
            os.dup2(json_stream.fileno(), fd)
            with suppress(BrokenPipeError):  # a closed pipe is reported once, by main()
                json_stream.close()
