"""The results document on disk: dump it, load and validate it, and its exit code.

The document (:class:`~dpclaims.results.Results`) is built by
:func:`dpclaims.claims.run.run_claims` (which runs the experiments); its format is
:mod:`.schema`.  Nothing here runs an experiment.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .document import Results
from .schema import FAILING_VERDICTS, ResultsError, validate_results

__all__ = ["exit_code", "dumps_results", "load_results", "read_results", "MAX_RESULTS_BYTES"]


def exit_code(results: Results | Mapping[str, Any]) -> int:
    """1 when a claim is a violation, inconsistent or an error, or an experiments module failed
    to import; else 0 (:meth:`Results.exit_code`).

    ``inconclusive``, ``skipped`` and ``not_checkable`` give 0.
    """
    if isinstance(results, Results):
        return results.exit_code()
    failed = any(results["counts"].get(v, 0) for v in FAILING_VERDICTS)
    return 1 if failed or results.get("load_errors") else 0


def dumps_results(results: Results | Mapping[str, Any]) -> str:
    """``results.json`` text: indented, key order kept, strict JSON (no NaN)."""
    document = results.to_json() if isinstance(results, Results) else results
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


MAX_RESULTS_BYTES = 256 * 2**20
"""The largest ``results.json`` :func:`load_results` reads (a full run writes a few MB)."""

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a ``results.json`` may have (a run writes < 10)."""

MAX_DIGITS = 100
"""The most digits of a number in ``results.json`` (a seed has at most 39)."""

_FIX = "pass the results.json a 'dpclaims verify' wrote"


def _read_regular_file(path: str | Path, cap: int) -> bytes:
    """The bytes of the regular file ``path``, refusing anything else (a FIFO, a device, a
    folder) without blocking on it, and any file larger than ``cap`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(
            f"cannot read results file {str(path)!r}: {exc.strerror}; {_FIX}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"results file {str(path)!r} is not a regular file; {_FIX}")
    with os.fdopen(fd, "rb") as stream:
        try:
            data = stream.read(cap + 1)
        except OSError as exc:
            raise InputError(
                f"cannot read results file {str(path)!r}: {exc.strerror}; {_FIX}"
            ) from None
    if len(data) > cap:
        raise InputError(f"results file {str(path)!r} is larger than {cap} bytes; {_FIX}")
    return data


class _Refused:
    """Stands in, while a file is parsed, for a number :func:`load_results` refuses (found
    afterwards with its JSON path by :func:`_refused_field`)."""

    def __init__(self, why: str) -> None:
        self.why = why


def _number(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """A JSON number parser refusing more than :data:`MAX_DIGITS` digits and non-finite values."""

    def checked(text: str) -> Any:
        if len(text) > MAX_DIGITS:
            return _Refused(f"a number of {len(text)} characters (at most {MAX_DIGITS})")
        value = parse(text)
        return value if math.isfinite(value) else _Refused(f"{text}, which overflows to {value}")

    return checked


def _not_finite(text: str) -> _Refused:
    return _Refused(f"the non-finite number {text} (strict JSON has none)")


def _refused_field(document: Any) -> str | None:
    """Where and why ``document`` nests deeper than :data:`MAX_DEPTH` or holds a refused
    number, e.g. ``"$.wall_time: NaN ..."``; None when neither."""
    stack = [(document, "$", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, _Refused):
            return f"{path}: {node.why}"
        if isinstance(node, (dict, list)):
            if depth == MAX_DEPTH:
                return f"{path}: arrays and objects nested deeper than {MAX_DEPTH} levels"
            named = node.items() if isinstance(node, dict) else enumerate(node)
            where = "{}.{}" if isinstance(node, dict) else "{}[{}]"
            children = [(child, where.format(path, key), depth + 1) for key, child in named]
            stack += reversed(children)
    return None


def load_results(path: str | Path) -> dict:
    """Read and validate a ``results.json``.

    The file must be a regular file of at most :data:`MAX_RESULTS_BYTES` bytes, in strict
    JSON (no NaN or Infinity), with numbers of at most :data:`MAX_DIGITS` digits, nesting at
    most :data:`MAX_DEPTH` deep, and follow the schema (:mod:`.schema`), ranges included.

    Raises
    ------
    InputError
        The file cannot be read, is not such JSON, or does not follow the schema
        (:class:`ResultsError`, naming the file and the JSON path of the field).
    """
    data = _read_regular_file(path, MAX_RESULTS_BYTES)
    try:
        results = json.loads(
            data.decode("utf-8"),
            parse_constant=_not_finite,
            parse_int=_number(int),
            parse_float=_number(float),
        )
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"results file {str(path)!r} is not UTF-8 text ({exc.reason}); {_FIX}"
        ) from None
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"results file {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno}); {_FIX}"
        ) from None
    except RecursionError:
        raise ResultsError(
            f"results file {str(path)!r}: arrays and objects nested deeper than {MAX_DEPTH} "
            f"levels; {_FIX}"
        ) from None
    problem = _refused_field(results)
    try:
        if problem is None:
            validate_results(results)
    except ResultsError as exc:
        problem = str(exc).removeprefix("results ")
    if problem is not None:
        raise ResultsError(f"results file {str(path)!r}: {problem}; {_FIX}")
    return results


def read_results(path: str | Path) -> Results:
    """:func:`load_results`, as :class:`~dpclaims.results.Results`."""
    return Results.from_json(load_results(path))
