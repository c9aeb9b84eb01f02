"""The ``dpclaims`` command: ``verify``, ``list``, ``audit``, ``rate``, ``report``, ``new-paper``.

``verify`` and ``list`` read the packaged papers, installed plugins (entry-point group
``dpclaims.papers``) and every ``--registry DIR`` folder; ``new-paper ID [DIR]`` writes a
working paper plugin to start from.  ``list`` imports no experiment.

Exit codes: 0 when every checked claim is consistent (or inconclusive), 1 when any
is a violation or inconsistent (or its experiment failed with an error), 2 for bad
usage or bad input (one line on stderr, never a traceback), 3 for an unexpected
internal error (one line; ``--debug`` shows the traceback), 130 after Ctrl-C and
141 when stdout is closed early (``dpclaims list | head``).  Every command takes
``--json`` for machine-readable output on stdout; a JSON object carries the
``warnings`` raised during the command, which are also printed to stderr.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C while the command's modules load: one line and exit 130, no traceback."""
    sys.stderr.write("dpclaims: interrupted\n")
    os._exit(130)


# The console script imports this module before main() can catch KeyboardInterrupt; from
# here on Ctrl-C ends the process quietly.  The dpclaims command keeps this handler outside
# main()'s own (through parsing the arguments and the interpreter's exit); a program that
# imports the module gets its previous handler back below.
_previous_sigint = signal.signal(signal.SIGINT, _interrupted_while_starting)
_COMMAND = getattr(sys, "argv", [""])[0] == "-m" or os.path.basename(
    getattr(sys, "argv", [""])[0]
) in ("dpclaims", "dpclaims.exe")
"""Whether this process is the ``dpclaims`` command (also ``python -m dpclaims.cli``, whose
package loads while ``sys.argv[0]`` is ``-m``), not a program importing the module."""


_MEMORY_WORDS = ("failed to map segment", "cannot allocate memory")
"""What the loader says when a library does not fit in the process's memory."""


def _out_of_memory(exc: BaseException) -> str | None:
    """``"Type: the line that says so"`` when ``exc`` says the process ran out of memory, also
    while loading a library (``ImportError: ….so: failed to map segment from shared object``);
    else None."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [""]
    said = [line for line in lines if any(word in line.lower() for word in _MEMORY_WORDS)]
    if isinstance(exc, MemoryError) or (isinstance(exc, (ImportError, OSError)) and said):
        return f"{type(exc).__name__}: {(said or lines)[0]}".rstrip(": ")
    return None


_NO_MEMORY_TO_START = (
    "out of memory while loading {what} ({problem}); free memory or raise the memory limit "
    "of the process (ulimit -v)"
)


try:
    import argparse
    import traceback
    from collections.abc import Sequence

    from ..errors import DPClaimsError, called_exit
    from ..userfiles import first_line as _first_line
    from . import audit, listing, mutants, new_paper, rate, report, verify
    from .common import Parser, collect_warnings, quiet_interrupt, stdout_for_json
except (ImportError, MemoryError) as exc:
    problem = _out_of_memory(exc)
    if not (_COMMAND and problem):
        raise
    sys.stderr.write(
        f"dpclaims: error: {_NO_MEMORY_TO_START.format(what='dpclaims', problem=problem)}\n"
    )
    sys.exit(3)

if not _COMMAND:
    signal.signal(signal.SIGINT, _previous_sigint)

__all__ = ["main"]


_COMMANDS = (verify, report, rate, listing, audit, new_paper, mutants)
"""The commands, each a module with ``add_parser(sub)`` and ``run(args)``, in the order of the
help."""


def _build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dpclaims",
        description="Check, by experiment, the claims of papers on DP optimization.",
    )
    parser.add_argument("--version", action="version", version=f"dpclaims {_version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=Parser,
        metavar="COMMAND",
        help="one of the commands below; 'dpclaims COMMAND --help' gives its options",
    )
    for command in _COMMANDS:
        command.add_parser(sub)
    for command in sub.choices.values():
        command.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show the traceback of an error",
        )
    return parser


def _version() -> str:
    from ..version import __version__

    return __version__


def _fail(message: str, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    print(f"dpclaims: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    try:
        args = _build_parser().parse_args(argv)
    except (
        SystemExit
    ) as exc:  # usage errors (code 2, already printed as one line), --help and --version
        return exc.code if isinstance(exc.code, int) else 2
    except KeyboardInterrupt:  # in a program calling main(); the command exits 130 at once
        print("dpclaims: interrupted", file=sys.stderr)
        return 130
    debug = args.debug
    try:
        with (
            collect_warnings(),
            quiet_interrupt(),
            stdout_for_json(getattr(args, "json", False)),
        ):
            code = args.handler(args)
            sys.stdout.flush()  # a closed pipe shows here, not as noise at interpreter exit
            return code
    except BrokenPipeError:  # stdout closed early, e.g. by `dpclaims list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes stdout at exit
        return 141
    except DPClaimsError as exc:
        _fail(f"error: {_first_line(exc)}", debug)
        return 2
    except OSError as exc:
        if _out_of_memory(exc):  # before importing anything more
            _fail(_internal(exc, args.command), debug)
            return 3
        from ..atomic import full_disk_error

        full = full_disk_error(exc, exc.filename or "the output", _output_option(args, exc))
        if full is not None:
            _fail(f"error: {full}", debug)
            return 2
        if exc.filename is None:
            _fail(_internal(exc, args.command), debug)
            return 3
        _fail(
            f"error: cannot use {exc.filename!r}: {exc.strerror or _first_line(exc)}; "
            "check the path and its permissions",
            debug,
        )
        return 2
    except SystemExit as exc:  # user code ended the program; a CI gate must not pass silently
        _fail(f"error: {called_exit(exc, 'user code', 'it must return instead')}", debug)
        return 2
    except KeyboardInterrupt:
        checkpoint = getattr(args, "checkpoint", None)
        resume = "; rerun the same command to resume from --checkpoint" if checkpoint else ""
        print(f"dpclaims: interrupted{resume}", file=sys.stderr)
        return 130
    except Exception as exc:
        _fail(_internal(exc, args.command), debug)
        return 3


_OUTPUT_OPTIONS = ("checkpoint", "save_pair", "figure", "out")
"""The options that name what a command writes."""


def _output_option(args: argparse.Namespace, exc: OSError) -> str:
    """The option naming the path a failed write was writing (that path or a folder above it),
    for the message; else ``--out`` where the command has one."""
    written = os.path.abspath(os.fsdecode(exc.filename)) if exc.filename else ""
    for name in _OUTPUT_OPTIONS:
        given = getattr(args, name, None)
        if given and (written + os.sep).startswith(os.path.abspath(given) + os.sep):
            return "--" + name.replace("_", "-")
    return "--out" if getattr(args, "out", None) else "output path"


_SIZE_OPTIONS = {
    "audit": "--trials or --workers",
    "rate": "--values or --replicates",
    "verify": "--budget or --workers",
    "mutants": "--budget or --workers",
    "report": "--workers",
}
"""The options that size each command's run, named when it runs out of memory."""


def _internal(exc: BaseException, command: str) -> str:
    """The one line of an unexpected exception: out of memory, a killed worker, else a bug.
    Imports nothing, as memory may have run out."""
    pool = sys.modules.get("concurrent.futures.process")  # not imported: no worker ran
    if isinstance(exc, MemoryError) or (pool and isinstance(exc, pool.BrokenProcessPool)):
        lower = _SIZE_OPTIONS.get(command, "the run's size")
        return (
            f"error: {type(exc).__name__}: the run ran out of memory or a worker process was "
            f"killed; lower {lower} (rerun with --debug for the traceback)"
        )
    problem = _out_of_memory(exc)
    if problem:
        return "error: " + _NO_MEMORY_TO_START.format(what="a library", problem=problem)
    return (
        f"internal error: {type(exc).__name__}: {_first_line(exc)} (a bug in dpclaims; "
        "rerun with --debug for the traceback and report it)"
    )
