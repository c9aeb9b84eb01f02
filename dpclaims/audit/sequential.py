"""Sequential audits: stop as soon as the answer is known (:func:`audit_sequential`).

The audit looks at the pair on a geometric schedule of trial counts (:func:`schedule`:
``first``, ``2 first``, ``4 first``, ... up to ``trials``).  Each look is a whole
:func:`~dpclaims.audit.audit` on *fresh* trials (its own seed), so each look learns its test on
its own calibration trials and certifies it on its own certification trials, as a fixed audit
does: no look's choice of statistic or threshold sees the trials that certify it.  Each of the
``J`` looks certifies at failure probability ``α / J`` (``α = 1 - confidence``); by the union
bound every look's bound holds at once with probability at least ``confidence``, so the bound
of the look where the audit stops holds at ``confidence`` whenever it stops (anytime valid over
the schedule).  The audit stops at the first look whose verdict is ``violation``, or
``consistent`` (the reach within its limit) with the test's point estimate not above the claim,
or that shows the pair cannot be told apart (identical data or outputs); else it runs to the
last look and reports it.  Which look stops never changes what a look certifies, so the stopping
rule costs no confidence.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InputError, check_confidence, check_trials
from ..execution import DEFAULT_EXECUTION, Execution, check_execution
from ..privacy import PrivacyClaim
from ..vocabulary import Verdict
from .core import MIN_TRIALS, audit
from .options import DEFAULT_TEST, NO_REFERENCE, AuditTest, Neighbours, Reference
from .percall import PerCall
from .result import AuditResult

__all__ = [
    "FIRST_LOOK",
    "SEQUENTIAL_TRIALS",
    "audit_sequential",
    "schedule",
    "log_stderr",
    "trials_spent",
]

FIRST_LOOK = 500
"""Trials per dataset of the first look."""

SEQUENTIAL_TRIALS = 32_000
"""Default trials per dataset of the last look."""

PROBE_CALLS = 32 + 32 + 256
"""Calls on d0 each look spends beside its trials (the seed check, the shape probe, the identity
probe of :func:`~dpclaims.audit.audit`), for the estimate."""


def schedule(first: int, trials: int) -> list[int]:
    """Trials per dataset of each look: ``first`` doubled until ``trials``, which is the
    last."""
    looks = [first]
    while looks[-1] * 2 < trials:
        looks.append(looks[-1] * 2)
    if looks[-1] < trials:
        looks.append(trials)
    return looks


def _look_seed(seed: int, look: int) -> int:
    """The seed of look ``look``: an independent stream for each look."""
    return int(np.random.SeedSequence((int(seed), look)).generate_state(1)[0])


def _estimate(mechanism: PerCall, data: Any, looks: list[int]) -> str:
    """The up-front estimate of a per-call mechanism: a pilot's seconds per call and the time
    of the whole schedule (both datasets)."""
    per_call = mechanism.pilot(data)
    calls = sum(looks)
    seconds = sum(2 * mechanism.seconds(per_call, n) + per_call * PROBE_CALLS for n in looks)
    return (
        f"estimate: {per_call * 1e3:.3g} ms per call (pilot), at most {calls:,} trials per "
        f"dataset over {len(looks)} looks, about {seconds:.0f} s if no look decides "
        f"({mechanism.workers} worker{'s' if mechanism.workers > 1 else ''})"
    )


def _stops(result: AuditResult) -> bool:
    """Whether the look decides: a violation; a ``consistent`` whose test's point estimate is
    not above the claim (one above it says more trials may certify a violation); a pair that
    cannot be told apart."""
    if result.verdict == Verdict.CONSISTENT:
        return not result.estimate_above_claim
    return result.verdict == Verdict.VIOLATION or result.identical_outputs


def audit_sequential(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    claim: PrivacyClaim | None = None,
    *,
    trials: int = SEQUENTIAL_TRIALS,
    first: int = FIRST_LOOK,
    confidence: float = 0.95,
    seed: int = 0,
    test: AuditTest = DEFAULT_TEST,
    neighbours: Neighbours | None = None,
    execution: Execution = DEFAULT_EXECUTION,
    reference: Reference = NO_REFERENCE,
) -> AuditResult:
    """:func:`~dpclaims.audit.audit` on a schedule of looks, stopping at the first that
    decides (see the module docstring).

    ``trials``: trials per dataset of the last look; ``first``: of the first (at least
    :data:`~dpclaims.audit.MIN_TRIALS`).  With ``execution.progress`` on, stderr receives the
    estimate (for a :class:`~dpclaims.audit.percall.PerCall` mechanism, timed on a pilot) and
    one line per look, in place of the looks' own progress bars.  The other options are
    :func:`~dpclaims.audit.audit`'s, applied to every look.  The result is the stopping look's,
    its ``confidence`` the joint one, with a note naming the look and the trials spent.
    """
    confidence = check_confidence(confidence)
    execution = check_execution(execution)
    first = check_trials(first, "first", minimum=MIN_TRIALS)
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    if first > trials:
        raise InputError(
            f"first={first:,} is more than trials={trials:,}; the first look must not be larger "
            "than the last: pass a smaller first or a larger trials"
        )
    looks = schedule(first, trials)
    look_confidence = 1.0 - (1.0 - confidence) / len(looks)
    log = log_stderr if execution.progress else None
    notes = []
    if isinstance(mechanism, PerCall):
        notes.append(_estimate(mechanism, d0, looks))
        if log is not None:
            log(notes[-1])
    spent = 0
    for j, n in enumerate(looks):
        result = audit(
            mechanism,
            d0,
            d1,
            claim,
            trials=n,
            confidence=look_confidence,
            seed=_look_seed(seed, j),
            test=test,
            neighbours=neighbours,
            execution=dataclasses.replace(execution.narrowed(f"look-{j}"), progress=False),
            reference=reference,
        )
        spent += n
        if log is not None:
            log(f"look {j + 1}/{len(looks)}: {n:,} trials, {result.verdict}")
        if _stops(result):
            break
    stop = "decided at look" if _stops(result) else "no look decided, the last was look"
    notes.append(
        f"sequential: {stop} {j + 1} of {len(looks)} ({n:,} fresh trials per dataset; "
        f"{spent:,} in all); each look certified at confidence {look_confidence:.4g}, so every "
        f"look's bound holds jointly at {confidence:g}"
    )
    return dataclasses.replace(result, confidence=confidence, warnings=(*result.warnings, *notes))


_SPENT = re.compile(r"^sequential: .* per dataset; ([\d,]+) in all\)")


def trials_spent(result: AuditResult) -> int:
    """Trials per dataset an audit ran: over all looks for a sequential one (read from its
    note), else its ``trials``."""
    for note in result.warnings:
        if (found := _SPENT.match(note)) is not None:
            return int(found[1].replace(",", ""))
    return result.trials


def log_stderr(line: str) -> None:
    """Print one line of a sequential audit's log on stderr."""
    print(line, file=sys.stderr, flush=True)
