"""The results document: :class:`Results` (how the run was made, one :class:`ClaimResult` per
claim, the kill matrix when mutants ran), with ``to_json()`` / ``from_json()`` at the edge
(:mod:`.codec`: the JSON keys are the fields' names, in field order).

The runner (:func:`dpclaims.claims.run.run_claims`) builds it; the renderers
(:mod:`dpclaims.reports`) read it; ``results.json`` is its JSON (:mod:`.schema`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..verdicts import FINDINGS, NOT_RUN, UNCHECKED, Verdict
from .codec import decode, encode
from .display import brief
from .evidence import CombinedEvidence, Evidence, Outcome, RecordEvidence, _read_evidence
from .jsonable import to_jsonable
from .mutants import MutationSummary
from .schema import (
    CHECKED_VERDICTS,
    FAILING_VERDICTS,
    SCHEMA_VERSION,
    VERDICTS,
    validate_experiment_result,
)

__all__ = [
    "FINDINGS",
    "Confirmation",
    "ClaimResult",
    "Environment",
    "LoadError",
    "Multiplicity",
    "PaperTitle",
    "Results",
    "Settings",
    "multiplicity",
    "read_outcome",
]


@dataclass(frozen=True)
class Confirmation:
    """The rerun of a finding on an independent seed: its outcome (None when it failed, with
    the ``error``) and whether it found the finding again."""

    seed: int
    confirmed: bool
    outcome: Outcome | None = None
    error: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], kind: str | None) -> Confirmation:
        """From the ``confirmation`` object of a result whose experiment type is ``kind``."""
        outcome = None
        if "verdict" in data and "evidence" in data:
            outcome = Outcome.from_json({"type": kind, **data})
        return cls(data["seed"], data["confirmed"], outcome, data.get("error"))

    def to_json(self) -> dict:
        out: dict[str, Any] = {"seed": self.seed, "confirmed": self.confirmed}
        if self.error is not None:
            out["error"] = self.error
        if self.outcome is not None:
            rerun = self.outcome.to_json()
            out.update(verdict=rerun["verdict"], summary=rerun["summary"])
            out["evidence"] = rerun["evidence"]
        return out

    def line(self) -> str:
        """The rerun in one line."""
        if self.error:
            return self.error
        outcome = "confirms the finding" if self.confirmed else "does not confirm it: not decided"
        rerun = self.outcome
        verdict, summary = (rerun.verdict, rerun.summary) if rerun else ("n/a", "")
        return f"rerun on the independent seed {self.seed}: {verdict} ({summary}); {outcome}"


def read_outcome(value: Any, where: str = "experiment result") -> Outcome:
    """What an experiment's ``run()`` returned, as an :class:`Outcome`: the value itself, or a
    returned mapping (a plugin's) read with :meth:`Outcome.from_json` — the one door for a
    record from outside.  Either is checked first (:func:`validate_experiment_result`, whose
    :class:`~dpclaims.results.ResultsError` names ``where``): an outcome results.json cannot
    hold fails its claim, not the run."""
    typed = isinstance(value, Outcome)
    record = to_jsonable(value.to_json() if typed else value)
    validate_experiment_result(record, where)
    return value if typed else Outcome.from_json(record)


def _read_confirmation(data: Mapping[str, Any]) -> Confirmation | None:
    """The ``confirmation`` of a claim's JSON object (None when absent or null)."""
    confirmation = data.get("confirmation")
    return Confirmation.from_json(confirmation, data["type"]) if confirmation else None


@dataclass(frozen=True, kw_only=True)
class ClaimResult:
    """One claim's result: the claim (id, paper, kind, algorithm, source, statement), its verdict
    with a one-line summary, why it was not run (``reason``) or failed (``error``), the
    experiment's type and evidence, its seed and wall time, and the rerun of a finding.

    ``evidence`` is empty (:class:`~dpclaims.results.RecordEvidence` with no record) when
    nothing ran.  ``caveats`` are the claim's ``{"kind", "text"}`` caveats (the paper's
    ambiguities and errata, the specification's reconstructions; empty in files written before
    they existed).
    """

    id: str
    paper: str
    kind: str
    algorithm: str
    source: str
    statement: str
    verdict: Verdict = Verdict.ERROR
    type: str | None = None
    summary: str = ""
    reason: str | None = None
    error: str | None = None
    evidence: Evidence = field(default_factory=RecordEvidence, metadata={"read": _read_evidence})
    seed: int | None = None
    wall_time: float = 0.0
    confirmation: Confirmation | None = field(default=None, metadata={"read": _read_confirmation})
    caveats: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    @classmethod
    def for_claim(cls, claim: Any, **fields: Any) -> ClaimResult:
        """The result of ``claim`` (a :class:`~dpclaims.claims.Claim`) with ``fields`` set."""
        return cls(
            id=claim.id,
            paper=claim.paper,
            kind=claim.kind,
            algorithm=claim.algorithm,
            source=claim.source,
            statement=claim.statement,
            caveats=tuple(caveat.to_dict() for caveat in claim.caveats),
            **fields,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClaimResult:
        return decode(cls, data)

    def to_json(self) -> dict:
        return encode(self)

    @property
    def outcome(self) -> Outcome:
        """Type, verdict, summary and evidence as an experiment's outcome."""
        return Outcome(self.type or "", self.verdict, self.summary, self.evidence)

    @property
    def checked(self) -> bool:
        """Whether the experiment ran to the end (the verdict is one an experiment gives)."""
        return self.verdict not in UNCHECKED

    @property
    def note(self) -> str:
        """The experiment's setting in words (a combined experiment's own note; "" when none)."""
        return self.evidence.note or ""

    def parts(self) -> list[ClaimResult]:
        """``[self]``, or for a combined experiment one result per part, with the id
        ``"<claim id> [<name>]"`` and the part's type, verdict, summary and evidence."""
        if not self.checked or not isinstance(self.evidence, CombinedEvidence):
            return [self]
        out: list[ClaimResult] = []
        for name, part in self.evidence.parts.items():
            piece = replace(
                self,
                id=f"{self.id} [{name}]",
                type=part.type,
                verdict=part.verdict,
                summary=part.summary,
                evidence=part.evidence,
            )
            out += piece.parts()
        return out

    @property
    def part_name(self) -> str:
        """The part name of a combined experiment's piece (``"sweep of m"`` of
        ``"id [sweep of m]"``)."""
        return self.id.split(" [")[-1].rstrip("]")

    def rows(self, footer: bool = True) -> list[tuple[str, str]]:
        """(label, value) rows with every statistical choice of a checked (single-part) result's
        evidence; ``footer`` adds the experiment seed and wall time."""
        rows = self.evidence.rows(self.seed)
        return rows + self.footer_rows() if footer else rows

    def footer_rows(self) -> list[tuple[str, str]]:
        """The experiment seed and wall time."""
        return [("experiment seed", str(self.seed)), ("wall time", f"{self.wall_time:.2f} s")]

    def key_figure(self) -> str:
        """The one number a reader looks at first, e.g. ``"ε ≥ 0.912 (claimed 1)"``."""
        if self.verdict in NOT_RUN:
            return brief(self.reason or "")
        if self.verdict == Verdict.ERROR:
            return brief(self.error or "")
        pieces = self.parts()
        if len(pieces) > 1:
            return brief(self.summary)
        return pieces[0].evidence.key_figure(self.summary)

    # ---------------------------------------------------------------- findings

    @property
    def finding(self) -> bool:
        """Whether the verdict is a finding against the claim."""
        return self.verdict in FINDINGS

    def found(self) -> list[ClaimResult]:
        """The contradicted pieces of a finding (the result itself when it has one part)."""
        return [p for p in self.parts() if p.verdict in FINDINGS] or [self]

    def shows_in_findings(self, piece: ClaimResult) -> bool:
        """True when ``piece`` is the contradicted part of a finding (its figure is under
        Findings)."""
        return self.finding and piece.verdict == self.verdict

    def measured(self) -> str:
        """The key figure of a finding's contradicted part(s), e.g.
        ``"sweep of m: slope 0.005 [...]"``."""
        if len(self.parts()) == 1:
            return self.key_figure()
        return "; ".join(f"{p.part_name}: {p.key_figure()}" for p in self.found())

    def evidence_paragraph(self) -> str:
        """One paragraph of evidence for a finding: what the first run measured, the rerun, the
        setting."""
        named = len(self.parts()) > 1
        pieces = self.found()
        text = "; ".join(
            (f"{p.part_name}: " if named else "") + p.evidence.measured(p.summary) for p in pieces
        )
        text = text[0].upper() + text[1:] + "."
        confirmation = self.confirmation
        if confirmation and confirmation.confirmed and confirmation.outcome is not None:
            rerun = confirmation.outcome
            again = replace(
                self, verdict=rerun.verdict, summary=rerun.summary, evidence=rerun.evidence
            )
            by_id = {p.id: p for p in again.parts()}
            figures = "; ".join(by_id[p.id].key_figure() for p in pieces if p.id in by_id)
            text += (
                f" A rerun on the independent seed {confirmation.seed} at the same budget "
                f"finds it again ({figures})."
            )
        elif confirmation is None:
            text += " This run did not confirm findings by a rerun."
        note = self.note.strip().rstrip(".")
        if note:
            text += f" Setting: {note}."
        return " ".join(text.split())

    def why_undecided(self) -> str:
        """One sentence: why an inconclusive or failed claim was not decided."""
        if self.verdict == Verdict.ERROR:
            return f"the experiment failed: {self.error}"
        if self.reason:
            return self.reason
        pieces = self.parts()
        if len(pieces) == 1:
            return self.evidence.why_inconclusive(self.summary)
        return "; ".join(
            f"{p.part_name}: {p.evidence.why_inconclusive(p.summary)}"
            for p in pieces
            if p.verdict == Verdict.INCONCLUSIVE
        )

    def confirmation_line(self) -> str | None:
        """The rerun of a finding in one line (None when the first run found nothing)."""
        return None if self.confirmation is None else self.confirmation.line()

    def levels(self) -> list[tuple[str, float | None]]:
        """``(type, level)`` of every statistical test of the result (see
        :meth:`Outcome.levels`)."""
        return self.outcome.levels()


@dataclass(frozen=True, kw_only=True)
class Multiplicity:
    """The tests a run made and the false findings chance alone would give
    (:func:`multiplicity`): ``rate_tests``, ``audit_tests``, ``value_checks`` (no error level),
    ``levels`` (the distinct α; None in a file written before they were recorded),
    ``expected_false_first`` (Σ α), ``expected_false_confirmed`` (Σ α²), and the findings a
    rerun confirmed or not."""

    rate_tests: int
    audit_tests: int
    value_checks: int
    levels: tuple[float, ...] | None = field(default=None, metadata={"omit": True})
    expected_false_first: float
    expected_false_confirmed: float
    findings_confirmed: int
    findings_not_confirmed: int


@dataclass(frozen=True)
class Settings:
    """How a run was made: budget, seed, backend and workers, the selection (papers and claim
    patterns; None for all), the execution ``options`` (scheduler, checkpoint) and whether
    findings were confirmed (None in a file written before it was recorded)."""

    budget: str
    seed: int
    backend: str
    workers: int | None
    papers: tuple[str, ...] | None
    claims: tuple[str, ...] | None
    options: Mapping[str, str]
    confirm: bool | None = field(default=None, metadata={"omit": True})


@dataclass(frozen=True)
class Environment:
    """Where a run was made: Python version, platform, cores, the versions of
    :data:`~dpclaims.claims.run.VERSIONED_PACKAGES`."""

    python: str
    platform: str
    cpu_count: int | None
    versions: Mapping[str, str | None]


@dataclass(frozen=True)
class PaperTitle:
    """A paper of the run: its id and title."""

    id: str
    title: str


@dataclass(frozen=True)
class LoadError:
    """An experiments module that failed to import, and the error."""

    module: str
    error: str


def multiplicity(entries: Sequence[ClaimResult | Mapping[str, Any]]) -> Multiplicity:
    """How many tests a run made and how many false findings chance alone would give.

    A test at level α reports a false finding with probability at most α when the claim holds;
    a finding stands only when an independent rerun finds it again, so at most α² after
    confirmation.  The expectations are the sums over all tests (worst case: every claim true
    and at the edge of its band).

    Returns
    -------
    Multiplicity
    """
    results = [e if isinstance(e, ClaimResult) else ClaimResult.from_json(e) for e in entries]
    levels = [level for e in results if e.verdict in CHECKED_VERDICTS for level in e.levels()]
    alphas = [a for _, a in levels if a is not None]
    confirmations = [e.confirmation for e in results if e.confirmation is not None]
    return Multiplicity(
        rate_tests=sum(kind == "rate" for kind, _ in levels),
        audit_tests=sum(kind == "audit" for kind, _ in levels),
        value_checks=sum(a is None for _, a in levels),
        levels=tuple(sorted({round(a, 12) for a in alphas})),
        expected_false_first=float(sum(alphas)),
        expected_false_confirmed=float(sum(a * a for a in alphas)),
        findings_confirmed=sum(bool(c.confirmed) for c in confirmations),
        findings_not_confirmed=sum(not c.confirmed for c in confirmations),
    )


@dataclass(frozen=True, kw_only=True)
class Results:
    """A whole run: how it was made (version, time, settings, environment), the papers, one
    :class:`ClaimResult` per claim, the counts and tests made, and the kill matrix when mutants
    ran.  ``to_json()`` is ``results.json``."""

    schema_version: int = SCHEMA_VERSION
    dpclaims_version: str
    created: str
    settings: Settings
    environment: Environment
    papers: tuple[PaperTitle, ...]
    counts: Mapping[str, int] | None = None
    multiplicity: Multiplicity | None = field(default=None, metadata={"omit": True})
    load_errors: tuple[LoadError, ...] = ()
    wall_time: float = 0.0
    claims: tuple[ClaimResult, ...]
    mutants: MutationSummary | None = field(default=None, metadata={"omit": True})

    def __post_init__(self) -> None:
        if self.counts is None:
            counts = {str(v): sum(e.verdict == v for e in self.claims) for v in VERDICTS}
            object.__setattr__(self, "counts", counts)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Results:
        """From the JSON object of ``results.json`` (validate it first:
        :func:`~dpclaims.results.validate_results`)."""
        return decode(cls, data)

    @classmethod
    def coerce(cls, value: Results | Mapping[str, Any]) -> Results:
        """``value`` as :class:`Results` (a JSON object is read with :meth:`from_json`)."""
        return value if isinstance(value, cls) else cls.from_json(value)

    def to_json(self) -> dict:
        return encode(self)

    def with_mutants(self, mutants: MutationSummary | Mapping[str, Any] | None) -> Results:
        """The same results with the kill matrix of ``dpclaims verify --mutants``."""
        if mutants is not None and not isinstance(mutants, MutationSummary):
            mutants = MutationSummary.from_json(mutants)
        return replace(self, mutants=mutants)

    @property
    def confirm(self) -> bool:
        """Whether the run confirmed findings by a rerun."""
        return bool(self.settings.confirm)

    def exit_code(self) -> int:
        """1 when a claim is a violation, inconsistent or an error, or an experiments module
        failed to import; else 0 (``inconclusive``, ``skipped`` and ``not_checkable`` give 0)."""
        failed = any(self.counts.get(v, 0) for v in FAILING_VERDICTS)
        return 1 if failed or self.load_errors else 0

    def findings(self) -> list[ClaimResult]:
        """Results whose verdict is a finding (confirmed by a rerun when the run confirms
        findings)."""
        return [e for e in self.claims if e.finding]

    def undecided(self) -> list[ClaimResult]:
        """Results checked but not decided: inconclusive (unconfirmed findings too) or failed."""
        return [e for e in self.claims if e.verdict in (Verdict.INCONCLUSIVE, Verdict.ERROR)]

    def unchecked(self) -> list[ClaimResult]:
        """Results not checked by experiment in this run (``skipped`` at this budget, or
        ``not_checkable`` or ``not_implemented`` at any), skipped first."""
        entries = [e for e in self.claims if e.verdict in NOT_RUN]
        return sorted(entries, key=lambda e: e.verdict != Verdict.SKIPPED)

    def tests_made(self) -> Multiplicity:
        """:attr:`multiplicity`, or computed from the claims for files written before it was
        recorded."""
        return self.multiplicity if self.multiplicity is not None else multiplicity(self.claims)
