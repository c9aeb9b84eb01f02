"""Run the experiments of selected claims and collect one results document.

Every selected claim gets a result, checked or not: ``not_checkable`` with the
reason when it has no experiment (yet) or is context only, ``skipped`` with the
reason when the budget is too small for its experiment, ``error`` with the
message when its experiment (or its paper's experiments module) raised, otherwise
the experiment's own verdict and evidence.  Claim ``c`` runs with its own integer seed
:func:`claim_seed` ``(seed, c.id)``, so a claim gives the same numbers whether it runs
alone or with others.  One :class:`~dpclaims.execution.Execution` says where every
experiment runs; each claim checkpoints into its own subfolder.

Findings are confirmed before they fail a run: a claim whose first run is a
``violation`` or ``inconsistent`` runs again at the same budget on the independent seed
:func:`confirmation_seed` ``(seed, c.id)``.  A finding stands only when the rerun finds
it again (same verdict, same part of a combined experiment, same direction for a
rate); otherwise the claim is ``inconclusive`` with the reason "not confirmed".  Both
runs are kept: the first in ``evidence``, the rerun in ``confirmation``.
:func:`multiplicity` counts the statistical tests of a run and the false findings
chance alone would give at their levels, before and after confirmation.

The document is a :class:`~dpclaims.results.Results` (format: :mod:`dpclaims.results.schema`);
:mod:`dpclaims.reports` renders it.

>>> from dpclaims.claims.run import run_claims, select_claims             # doctest: +SKIP
>>> results = run_claims(select_claims(patterns=["diff2gd.*"]), budget="quick")
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import importlib.metadata
import os
import platform
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..checkpoint import CheckpointWriteError
from ..errors import InputError, called_exit, check_choice
from ..execution import Execution
from ..results import (
    FINDINGS,
    ClaimResult,
    Confirmation,
    Environment,
    LoadError,
    Outcome,
    PaperTitle,
    Results,
    Settings,
    multiplicity,
    read_outcome,
    to_jsonable,
    validate_results,
)
from ..timelimit import TimeLimitExceeded, check_time_limit, time_limit
from ..verdicts import Verdict
from . import experiments as _experiments
from .experiments import BUDGETS, NotCheckable, Skipped, import_experiments
from .model import Claim
from .registry import RegistryLike, _registry, paper_of
from .standard import DEFAULT_EXECUTION

__all__ = [
    "VERSIONED_PACKAGES",
    "FINDINGS",
    "select_claims",
    "claim_seed",
    "confirmation_seed",
    "multiplicity",
    "run_claim",
    "run_claims",
    "to_jsonable",
]

VERSIONED_PACKAGES = ("dpclaims", "numpy", "scipy", "statsmodels", "dp-accounting", "matplotlib")
"""Packages whose installed versions every results document records."""

_GLOB_CHARS = set("*?[")

_CONFIRMATION_STREAM = 1
"""Extra entropy word that makes :func:`confirmation_seed` independent of :func:`claim_seed`."""


def select_claims(
    papers: Sequence[str] | None = None,
    patterns: Sequence[str] | None = None,
    *,
    registry: RegistryLike = None,
) -> list[Claim]:
    """Claims of the registry selected by paper ids and id globs, in order.

    Parameters
    ----------
    papers : paper ids (all papers when None or empty)
    patterns : claim ids or ``fnmatch`` globs such as ``"diff2gd.*"`` (all claims when None or
        empty); a claim is kept when it matches any of them
    registry : a :class:`~dpclaims.claims.Registry` or folders (default: packaged and installed)

    Raises
    ------
    InputError
        An unknown paper id, an exact id that is not in the registry (``UnknownClaimError``,
        naming the closest ids), a glob matching no claim, or an empty selection.
    """
    source = _registry(registry)
    for paper in papers or ():
        check_choice(paper, tuple(source.papers), "papers")
    everything = source.claims
    for pattern in patterns or ():
        if not (_GLOB_CHARS & set(pattern)):
            source.get(pattern)
        elif not any(fnmatch.fnmatchcase(c.id, pattern) for c in everything):
            raise InputError(
                f"--claims pattern {pattern!r} matches no claim id; list the ids with "
                "'dpclaims list'"
            )
    selected = [
        c
        for c in everything
        if (not papers or c.paper in papers)
        and (not patterns or any(fnmatch.fnmatchcase(c.id, p) for p in patterns))
    ]
    if not selected:
        raise InputError(
            f"no claim matches both --paper {','.join(papers or ())} and --claims "
            f"{','.join(patterns or ())}; widen the selection"
        )
    return selected


def claim_seed(seed: int, claim_id: str) -> int:
    """The experiment seed of ``claim_id`` in a run with seed ``seed`` (a 32-bit integer)."""
    state = np.random.SeedSequence(
        [int(seed), zlib.crc32(claim_id.encode("utf-8"))]
    ).generate_state(1, np.uint32)
    return int(state[0])


def confirmation_seed(seed: int, claim_id: str) -> int:
    """The seed of the rerun that confirms a finding of ``claim_id`` in a run with seed ``seed``.

    An independent stream of the same ``SeedSequence`` family as :func:`claim_seed` (one more
    entropy word), so the rerun shares no randomness with the first run.
    """
    words = [int(seed), zlib.crc32(claim_id.encode("utf-8")), _CONFIRMATION_STREAM]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint32)[0])


def run_claim(
    claim: Claim,
    *,
    budget: str = "quick",
    seed: int = 0,
    execution: Execution = DEFAULT_EXECUTION,
    confirm: bool = True,
    claim_timeout: float | None = None,
) -> ClaimResult:
    """Run the experiment of one claim; its result (never raises for the experiment's faults;
    a checkpoint file that cannot be written stops the run:
    :class:`~dpclaims.checkpoint.CheckpointWriteError`).

    Parameters
    ----------
    claim : a :class:`dpclaims.claims.Claim`
    budget : "quick", "standard" or "full"
    seed : the run's seed; the experiment gets :func:`claim_seed` ``(seed, claim.id)``
    execution : where the experiment runs; a checkpoint folder gets a subfolder per claim
    confirm : rerun a finding on :func:`confirmation_seed`; keep it only when confirmed
    claim_timeout : seconds the claim may take (its experiment and confirmation together), at
        most :data:`~dpclaims.timelimit.MAX_SECONDS`; past it the claim is ``error``, also when
        the experiment kept the limit from stopping it and returned late (see
        :mod:`dpclaims.timelimit`).  None: no limit

    Returns
    -------
    ClaimResult
        One claim of the :class:`~dpclaims.results.Results` (see
        :data:`dpclaims.results.schema.CLAIM_RESULT`).
    """
    start = time.perf_counter()
    try:
        with time_limit(claim_timeout, "--claim-timeout"):
            return _run_claim(claim, budget, seed, execution, confirm)
    except TimeLimitExceeded as exc:
        return _error(claim, exc, claim_seed(seed, claim.id), start)


def _run_claim(
    claim: Claim, budget: str, seed: int, execution: Execution, confirm: bool
) -> ClaimResult:
    """:func:`run_claim` without the time limit."""
    execution = execution.narrowed(claim.id)
    start = time.perf_counter()
    try:
        experiment = _experiments.experiment(claim, budget)
    except Skipped as exc:
        summary = (
            f"skipped at the {exc.budget} budget: {exc.reason}; run it with --budget "
            f"{' or '.join(exc.budgets)}"
        )
        return ClaimResult.for_claim(
            claim,
            verdict=Verdict.SKIPPED,
            summary=summary,
            reason=exc.reason,
            wall_time=time.perf_counter() - start,
        )
    except NotCheckable as exc:
        verdict = Verdict.NOT_CHECKABLE if exc.implemented else Verdict.NOT_IMPLEMENTED
        return ClaimResult.for_claim(
            claim,
            verdict=verdict,
            summary=f"{verdict.replace('_', ' ')}: {exc.reason}",
            reason=exc.reason,
            wall_time=time.perf_counter() - start,
        )
    except (Exception, SystemExit) as exc:  # a broken factory or module must not stop the report
        return _error(claim, exc, None, start)
    own_seed = claim_seed(seed, claim.id)
    try:
        outcome = _execute(experiment, own_seed, execution)
    except CheckpointWriteError:  # a full disk stops the run: every later claim would fail too
        raise
    except (Exception, SystemExit) as exc:  # the report completes; the claim records the fault
        return _error(claim, exc, own_seed, start)
    outcome = _declared_formula(claim, outcome)
    result = ClaimResult.for_claim(
        claim,
        verdict=outcome.verdict,
        type=outcome.type,
        summary=outcome.summary,
        evidence=outcome.evidence,
        seed=own_seed,
    )
    if confirm and outcome.verdict in FINDINGS:
        result = _confirm(result, experiment, confirmation_seed(seed, claim.id), execution)
    return replace(result, wall_time=time.perf_counter() - start)


def _declared_formula(claim: Claim, outcome: Outcome) -> Outcome:
    """A claim declared ``transcription = true`` in the registry agrees as ``formula``: its check
    compares a computed quantity with the paper's formula, not an algorithm's behaviour."""
    agrees = (Verdict.CONSISTENT, Verdict.CONSISTENT_WEAK)
    computed = outcome.type in ("value", "rate")  # an audit is never a transcription
    if not (claim.transcription and computed) or outcome.verdict not in agrees:
        return outcome
    summary = f"{outcome.summary}; formula: {TRANSCRIPTION}"
    return replace(outcome, verdict=Verdict.FORMULA, summary=summary)


TRANSCRIPTION = (
    "the registry declares this check a transcription (a computed quantity against the "
    "paper's formula)"
)


def _execute(experiment: Any, seed: int, execution: Execution) -> Outcome:
    """One run of ``experiment``: its :class:`~dpclaims.results.Outcome`, or the JSON object of
    one (as a plugin's experiment may return) validated and read (:func:`read_outcome`)."""
    return read_outcome(experiment.run(seed=seed, execution=execution))


def _confirm(result: ClaimResult, experiment: Any, seed: int, execution: Execution) -> ClaimResult:
    """Rerun a finding on ``seed``; keep the findings both runs share, else ``inconclusive``."""
    try:
        rerun = _execute(experiment, seed, execution.narrowed("confirmation"))
    except CheckpointWriteError:
        raise
    except (Exception, SystemExit) as exc:
        message = f"the confirmation run (seed {seed}) failed: {_message(exc)}"
        return replace(
            result,
            verdict="error",
            summary=f"error: {message}",
            error=message,
            confirmation=Confirmation(seed, False, error=message),
        )
    first, second = result.outcome.findings(), rerun.findings()
    shared = [
        verdict.split("/")[0] for path, verdict in first.items() if second.get(path) == verdict
    ]
    record = Confirmation(seed, bool(shared), rerun)
    if shared:
        verdict = Verdict.VIOLATION if Verdict.VIOLATION in shared else Verdict.INCONSISTENT
        return replace(result, verdict=verdict, confirmation=record)
    reason = (
        f"not confirmed: the first run was {result.verdict}, a rerun on the independent "
        f"seed {seed} at the same budget was {rerun.verdict}"
    )
    return replace(
        result,
        verdict="inconclusive",
        reason=reason,
        confirmation=record,
        summary=f"{reason} (first run: {result.summary}; rerun: {rerun.summary})",
    )


def _message(exc: BaseException) -> str:
    """``"Type: first line of the message"``; for ``sys.exit`` in user code, what it must do."""
    if isinstance(exc, SystemExit):
        return called_exit(exc, "the experiment", "an experiment must return its result")
    if isinstance(exc, TimeLimitExceeded):
        return str(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error(claim: Any, exc: BaseException, seed: int | None, start: float) -> ClaimResult:
    message = _message(exc)
    return ClaimResult.for_claim(
        claim,
        verdict="error",
        summary=f"error: {message}",
        error=message,
        seed=seed,
        wall_time=time.perf_counter() - start,
    )


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_claims(
    selected: Sequence[Claim],
    *,
    budget: str = "quick",
    seed: int = 0,
    execution: Execution = DEFAULT_EXECUTION,
    papers: Sequence[str] | None = None,
    patterns: Sequence[str] | None = None,
    before: Callable[[Claim], None] | None = None,
    after: Callable[[ClaimResult], None] | None = None,
    confirm: bool = True,
    claim_timeout: float | None = None,
) -> Results:
    """Run every selected claim and return the results document (validated against the schema).

    Parameters
    ----------
    selected : claims, e.g. from :func:`select_claims`
    budget, seed, execution, confirm, claim_timeout : see :func:`run_claim`; the time limit
        also bounds the import of each paper's experiments module
    papers, patterns : the selection that produced ``selected``, recorded in ``settings``
    before, after : progress hooks called with the claim before it runs and its result after

    Raises
    ------
    InputError
        A bad budget, seed, backend or workers value, an unreachable scheduler or an unusable
        checkpoint folder (checked before anything runs, see :meth:`Execution.check`).
    """
    budget = check_choice(budget, BUDGETS, "budget")
    workers = execution.workers
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}; pass e.g. --seed 0")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise InputError(
            f"workers must be a positive integer, got {workers!r}; pass e.g. --workers 2"
        )
    execution.check()
    if claim_timeout is not None:
        check_time_limit(claim_timeout, "claim_timeout")
    start = time.perf_counter()
    used_papers = [paper_of(claim) for claim in selected]
    used_papers = list({p.id: p for p in used_papers if p is not None}.values())
    load_errors = []
    for paper in used_papers:
        try:
            with time_limit(claim_timeout, "--claim-timeout"):
                failed = import_experiments([paper])
        except TimeLimitExceeded as exc:
            failed = {paper.experiments: str(exc)}
        load_errors += [LoadError(name, error) for name, error in failed.items()]
    created = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    entries = []
    for claim in selected:
        if before is not None:
            before(claim)
        result = run_claim(
            claim,
            budget=budget,
            seed=seed,
            execution=execution,
            confirm=confirm,
            claim_timeout=claim_timeout,
        )
        entries.append(result)
        if after is not None:
            after(result)
    used = {e.paper for e in entries}
    versions = _versions()
    results = Results(
        dpclaims_version=versions["dpclaims"] or _package_version(),
        created=created,
        settings=Settings(
            budget=budget,
            seed=int(seed),
            backend=str(execution.backend),
            workers=workers,
            papers=tuple(papers) if papers else None,
            claims=tuple(patterns) if patterns else None,
            options={
                name: str(value)
                for name in ("scheduler", "checkpoint")
                if (value := getattr(execution, name)) is not None
            },
            confirm=bool(confirm),
        ),
        environment=Environment(
            python=platform.python_version(),
            platform=platform.platform(),
            cpu_count=os.cpu_count(),
            versions=versions,
        ),
        papers=tuple(PaperTitle(p.id, p.title) for p in used_papers if p.id in used),
        multiplicity=multiplicity(entries),
        load_errors=tuple(load_errors),
        wall_time=time.perf_counter() - start,
        claims=tuple(entries),
    )
    validate_results(results)
    return results


def _package_version() -> str:
    from dpclaims.version import __version__

    return __version__
