"""The results document on disk: dump it, load and validate it, and its exit code.

The document is built by :func:`dpclaims.claims.run.run_claims` (which runs the
experiments); its format is :mod:`.schema`.  Nothing here runs an experiment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .schema import FAILING_VERDICTS, ResultsError, validate_results

__all__ = ["exit_code", "dumps_results", "load_results"]


def exit_code(results: Mapping[str, Any]) -> int:
    """1 when a claim is a violation, inconsistent or an error, or an experiments module failed
    to import; else 0.

    ``inconclusive``, ``skipped`` and ``not_checkable`` give 0.
    """
    failed = any(results["counts"].get(v, 0) for v in FAILING_VERDICTS)
    return 1 if failed or results.get("load_errors") else 0


def dumps_results(results: Mapping[str, Any]) -> str:
    """``results.json`` text: indented, key order kept, strict JSON (no NaN)."""
    return json.dumps(results, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def load_results(path: str | Path) -> dict:
    """Read and validate a ``results.json``.

    Raises
    ------
    InputError
        The file cannot be read, is not JSON, or does not follow the schema (:class:`ResultsError`).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(
            f"cannot read results file {str(path)!r}: {reason}; pass the results.json a "
            "'dpclaims verify' wrote"
        ) from None
    try:
        results = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"results file {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno}); "
            "pass the results.json a 'dpclaims verify' wrote"
        ) from None
    validate_results(results)
    return results
