"""Run the experiments of selected claims and collect one results document (see :mod:`.schema`).

Every selected claim gets a result, checked or not: ``not_checkable`` with the
reason when it has no experiment (yet) or is context only, ``skipped`` with the
reason when the budget is too small for its experiment, ``error`` with the
message when its experiment raised, otherwise the experiment's own verdict and
evidence.  Claim ``c`` runs with its own integer seed :func:`claim_seed` ``(seed,
c.id)``, so a claim gives the same numbers whether it runs alone or with others.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import importlib.metadata
import inspect
import json
import math
import os
import platform
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InputError, check_choice
from ..verdicts import Verdict
from .schema import FAILING_VERDICTS, SCHEMA_VERSION, VERDICTS, ResultsError, validate_experiment_result, validate_results

__all__ = [
    "VERSIONED_PACKAGES",
    "select_claims",
    "load_check_modules",
    "claim_seed",
    "run_claim",
    "run_claims",
    "exit_code",
    "to_jsonable",
    "dumps_results",
    "load_results",
]

VERSIONED_PACKAGES = ("dpclaims", "numpy", "scipy", "statsmodels", "dp-accounting", "matplotlib")
"""Packages whose installed versions every results document records."""

_GLOB_CHARS = set("*?[")


def select_claims(papers: Sequence[str] | None = None, patterns: Sequence[str] | None = None) -> list:
    """Claims of the registry selected by paper ids and id globs, in spec order.

    Parameters
    ----------
    papers : paper ids (all papers when None or empty)
    patterns : claim ids or ``fnmatch`` globs such as ``"diff2gd.*"`` (all claims when None or empty);
        a claim is kept when it matches any of them

    Raises
    ------
    InputError
        An unknown paper id, an exact id that is not in the registry (``UnknownClaimError``,
        naming the closest ids), a glob matching no claim, or an empty selection.
    """
    from .. import claims

    known_papers = tuple(claims.papers())
    for paper in papers or ():
        check_choice(paper, known_papers, "papers")
    everything = claims.load()
    for pattern in patterns or ():
        if not (_GLOB_CHARS & set(pattern)):
            claims.get(pattern)
        elif not any(fnmatch.fnmatchcase(c.id, pattern) for c in everything):
            raise InputError(f"--claims pattern {pattern!r} matches no claim id; list the ids with 'dpclaims list'")
    selected = [
        c for c in everything
        if (not papers or c.paper in papers) and (not patterns or any(fnmatch.fnmatchcase(c.id, p) for p in patterns))
    ]
    if not selected:
        raise InputError(f"no claim matches both --papers {','.join(papers or ())} and --claims "
                         f"{','.join(patterns or ())}; widen the selection")
    return selected


def load_check_modules() -> list[dict]:
    """Load the claims' experiment modules; ``[{"module": name, "error": message}]`` for those that failed."""
    from ..claims.experiments import load_checks

    return [{"module": name, "error": error} for name, error in load_checks().items()]


def claim_seed(seed: int, claim_id: str) -> int:
    """The experiment seed of ``claim_id`` in a run with seed ``seed`` (a 32-bit integer)."""
    state = np.random.SeedSequence([int(seed), zlib.crc32(claim_id.encode("utf-8"))]).generate_state(1, np.uint32)
    return int(state[0])


def to_jsonable(value: Any) -> Any:
    """A JSON-safe copy: numpy scalars and arrays as Python numbers and lists, non-finite floats as None.

    Tuples become lists, mapping keys strings; anything else becomes its ``repr``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return repr(value)


def _entry(claim: Any, **fields: Any) -> dict:
    base = {
        "id": claim.id, "paper": claim.paper, "kind": claim.kind, "algorithm": claim.algorithm,
        "source": claim.source, "statement": claim.statement, "verdict": "error", "type": None, "summary": "",
        "reason": None, "error": None, "evidence": {}, "seed": None, "wall_time": 0.0,
    }
    base.update(fields)
    return base


def _accepts(function: Callable, names: Sequence[str]) -> list[str]:
    """The keyword names among ``names`` that ``function`` does not accept."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return []
    return [name for name in names if name not in parameters]


def run_claim(claim: Any, budget: str = "quick", seed: int = 0, backend: str = "auto", workers: int | None = None,
              options: Mapping[str, Any] | None = None) -> dict:
    """Run the experiment of one claim and return its result entry (never raises for the experiment's faults).

    Parameters
    ----------
    claim : a :class:`dpclaims.claims.Claim`
    budget : "quick", "standard" or "full"
    seed : the run's seed; the experiment gets :func:`claim_seed` ``(seed, claim.id)``
    backend, workers : passed to ``experiment.run``
    options : further keywords for ``experiment.run`` (e.g. ``scheduler``, ``checkpoint``); only given ones

    Returns
    -------
    dict
        One entry of ``results["claims"]`` (see :data:`dpclaims.reports.schema.CLAIM_RESULT`).
    """
    from ..claims import NotCheckable, Skipped

    options = dict(options or {})
    if options.get("checkpoint") is not None:  # one checkpoint folder holds one run: a subfolder per claim
        options["checkpoint"] = str(Path(options["checkpoint"]) / claim.id)
    start = time.perf_counter()
    try:
        experiment = claim.experiment(budget)
    except Skipped as exc:
        summary = (f"skipped at the {exc.budget} budget: {exc.reason}; run it with --budget "
                   f"{' or '.join(exc.budgets)}")
        return _entry(claim, verdict=Verdict.SKIPPED, summary=summary, reason=exc.reason,
                      wall_time=time.perf_counter() - start)
    except NotCheckable as exc:
        return _entry(claim, verdict="not_checkable", summary=f"not checkable: {exc.reason}", reason=exc.reason,
                      wall_time=time.perf_counter() - start)
    except Exception as exc:  # a broken factory must not stop the report
        return _error(claim, exc, None, start)
    own_seed = claim_seed(seed, claim.id)
    unsupported = _accepts(experiment.run, list(options))
    if unsupported:
        message = (f"the experiment {type(experiment).__name__}.run() does not accept "
                   f"{', '.join(unsupported)}; run without --{' --'.join(unsupported)}")
        return _entry(claim, verdict="error", summary=f"error: {message}", error=message, seed=own_seed,
                      wall_time=time.perf_counter() - start)
    try:
        raw = experiment.run(seed=own_seed, backend=backend, workers=workers, **options)
        result = to_jsonable(raw)
        validate_experiment_result(result, "experiment result")
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the report completes; the claim records what went wrong
        return _error(claim, exc, own_seed, start)
    return _entry(claim, verdict=result["verdict"], type=result["type"], summary=result["summary"],
                  evidence=result["evidence"], seed=own_seed, wall_time=time.perf_counter() - start)


def _message(exc: BaseException) -> str:
    """``"Type: first line of the message"``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error(claim: Any, exc: BaseException, seed: int | None, start: float) -> dict:
    message = _message(exc)
    return _entry(claim, verdict="error", summary=f"error: {message}", error=message, seed=seed,
                  wall_time=time.perf_counter() - start)


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_claims(
    selected: Sequence[Any],
    budget: str = "quick",
    seed: int = 0,
    backend: str = "auto",
    workers: int | None = None,
    options: Mapping[str, Any] | None = None,
    papers: Sequence[str] | None = None,
    patterns: Sequence[str] | None = None,
    before: Callable[[Any], None] | None = None,
    after: Callable[[dict], None] | None = None,
) -> dict:
    """Run every selected claim and return the results document (validated against the schema).

    Parameters
    ----------
    selected : claims, e.g. from :func:`select_claims`
    budget, seed, backend, workers, options : see :func:`run_claim`
    papers, patterns : the selection that produced ``selected``, recorded in ``settings``
    before, after : progress hooks called with the claim before it runs and its entry after

    Raises
    ------
    InputError
        A bad budget, seed, backend or workers value (checked before anything runs).
    """
    from ..claims import BUDGETS, papers as paper_titles
    from ..execution import BACKENDS

    budget = check_choice(budget, BUDGETS, "budget")
    check_choice(backend, BACKENDS, "backend")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}; pass e.g. --seed 0")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"workers must be a positive integer, got {workers!r}; pass e.g. --workers 2")
    start = time.perf_counter()
    load_errors = load_check_modules()
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    entries = []
    for claim in selected:
        if before is not None:
            before(claim)
        entry = run_claim(claim, budget, seed, backend, workers, options)
        entries.append(entry)
        if after is not None:
            after(entry)
    titles = paper_titles()
    used = {e["paper"] for e in entries}
    versions = _versions()
    results = {
        "schema_version": SCHEMA_VERSION,
        "dpclaims_version": versions["dpclaims"] or _package_version(),
        "created": created,
        "settings": {
            "budget": budget, "seed": int(seed), "backend": backend, "workers": workers,
            "papers": list(papers) if papers else None, "claims": list(patterns) if patterns else None,
            "options": {k: str(v) for k, v in (options or {}).items()},
        },
        "environment": {
            "python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "versions": versions,
        },
        "papers": [{"id": pid, "title": title} for pid, title in titles.items() if pid in used],
        "counts": {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS},
        "load_errors": load_errors,
        "wall_time": time.perf_counter() - start,
        "claims": entries,
    }
    results = to_jsonable(results)
    validate_results(results)
    return results


def _package_version() -> str:
    from .. import __version__

    return __version__


def exit_code(results: Mapping[str, Any]) -> int:
    """1 when any claim is a violation, inconsistent or an error, or a check module failed to import; else 0.

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
        raise InputError(f"cannot read results file {str(path)!r}: {reason}; pass the results.json a "
                         "'dpclaims verify' wrote") from None
    try:
        results = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"results file {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                           "pass the results.json a 'dpclaims verify' wrote") from None
    validate_results(results)
    return results
