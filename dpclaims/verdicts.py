"""The verdicts a claim can get, and their severity order (defined here once).

:class:`Verdict` is a ``StrEnum`` (a :class:`Word`): each member equals its string
(``Verdict.CONSISTENT == "consistent"``), so JSON documents and older code comparing strings
read the same.

Severity, mildest first (a combined check reports its worst part)::

    consistent < consistent_weak < formula < skipped < not_checkable < not_implemented
    < inconclusive < inconsistent < violation < error

* ``consistent``    — the experiment could have failed and did not;
* ``consistent_weak`` — a privacy audit that did not fail but would only have caught a
  mechanism leaking more than twice the *claimed* ε (its reach, :mod:`dpclaims.audit.reach`),
  or a rate test that did not fail but is not shown to fail for a trivial output, or misses an
  exponent error of 0.25 (its controls and reach, :mod:`dpclaims.rates.controls`); it passes
  ``verify`` as ``consistent`` does and is counted apart, and fails
  :func:`dpclaims.testing.assert_private`;
* ``formula``       — a computed quantity matches the paper's formula, or a rate sweep of a
  deterministic schedule (replicates with zero spread) fits it: it checks a transcription (of
  a constant, a bound, a step count), not an algorithm's behaviour;
* ``skipped``       — the budget is too small for the experiment (it runs at a larger budget);
* ``not_checkable`` — no finite experiment can decide the claim (or none exists yet);
* ``not_implemented`` — an experiment could decide it, but the algorithm or the data it needs
  is not available here;
* ``inconclusive``  — the experiment ran but its evidence does not decide;
* ``inconsistent``  — a rate or value significantly outside what the claim allows;
* ``violation``     — a certified privacy loss above the claimed one;
* ``error``         — the experiment could not run.

This module imports nothing from dpclaims, so every layer can import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

__all__ = [
    "Word",
    "Verdict",
    "SEVERITY",
    "CHECKED",
    "NOT_RUN",
    "UNCHECKED",
    "FAILING",
    "FINDINGS",
    "worst",
]


class Word(StrEnum):
    """A word of a closed set: it equals, formats, serialises *and* reprs as its string
    (``repr(Verdict.ERROR)`` is ``'error'``), so messages and reprs read as before it was typed."""

    def __repr__(self) -> str:
        return repr(self.value)


class Verdict(Word):
    """One claim's verdict (see the module docstring for the meaning of each)."""

    CONSISTENT = "consistent"
    CONSISTENT_WEAK = "consistent_weak"
    FORMULA = "formula"
    SKIPPED = "skipped"
    NOT_CHECKABLE = "not_checkable"
    NOT_IMPLEMENTED = "not_implemented"
    INCONCLUSIVE = "inconclusive"
    INCONSISTENT = "inconsistent"
    VIOLATION = "violation"
    ERROR = "error"

    @property
    def severity(self) -> int:
        """Position in :data:`SEVERITY` (0 = consistent, the mildest)."""
        return SEVERITY.index(self)


SEVERITY: tuple[Verdict, ...] = tuple(Verdict)
"""Every verdict, mildest first (the members' definition order)."""

CHECKED: tuple[Verdict, ...] = (
    Verdict.CONSISTENT,
    Verdict.CONSISTENT_WEAK,
    Verdict.FORMULA,
    Verdict.INCONCLUSIVE,
    Verdict.INCONSISTENT,
    Verdict.VIOLATION,
)
"""Verdicts an experiment returns after running; the runner sets the others."""

NOT_RUN: tuple[Verdict, ...] = (Verdict.SKIPPED, Verdict.NOT_CHECKABLE, Verdict.NOT_IMPLEMENTED)
"""Verdicts of a claim whose experiment did not run, each with its ``reason``."""

UNCHECKED: tuple[Verdict, ...] = (*NOT_RUN, Verdict.ERROR)
"""Verdicts of a claim whose experiment did not run to the end."""

FAILING: tuple[Verdict, ...] = (Verdict.INCONSISTENT, Verdict.VIOLATION, Verdict.ERROR)
"""Verdicts that make ``dpclaims verify`` exit with code 1."""

FINDINGS: tuple[Verdict, ...] = (Verdict.VIOLATION, Verdict.INCONSISTENT)
"""Verdicts that are findings against a claim: they stand only when a rerun confirms them."""


def worst(verdicts: Iterable[str]) -> Verdict:
    """The most severe of ``verdicts`` (strings or :class:`Verdict`); ValueError when empty."""
    return max((Verdict(v) for v in verdicts), key=SEVERITY.index)
