"""What one experiment found: :class:`Outcome` (type, verdict, summary, evidence) and the
evidence, one frozen dataclass per kind of experiment, built by the experiment that measured it
and rendering its own rows once.

- :class:`AuditEvidence`: a privacy audit (:meth:`dpclaims.audit.AuditResult.evidence`): the
  audited claim, the bound, the :class:`AuditCounts`, the :class:`AuditTestRecord`, the
  :class:`ReachRecord` and the :class:`ReferenceRecord`;
- :class:`RateEvidence`: a sweep, its power-law fit and the exponent test;
- :class:`ValueEvidence`: computed quantities compared with the paper's (``checks``);
- :class:`CombinedEvidence`: several experiments of one claim (``parts``);
- :class:`RecordEvidence`: the JSON record of any other (plugin) experiment type, as written.

Each is written to and read from JSON by one codec (:mod:`.codec`): the JSON keys are the
fields' names, in field order.  Non-finite numbers are recorded as None (JSON has no
infinity), so a value read back equals the one written.  Text, Markdown, HTML and the command
line all render evidence through :meth:`Evidence.rows`, :meth:`Evidence.key_figure` and
:meth:`Evidence.measured`; an audit's one-line headline and its text summary too
(:meth:`AuditEvidence.headline`, :meth:`AuditEvidence.summary`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..verdicts import FINDINGS, Verdict
from ..vocabulary import Bound, Limit
from .codec import decode, encode
from .display import join, number

__all__ = [
    "Evidence",
    "AuditCounts",
    "AuditTestRecord",
    "ReachRecord",
    "ReferenceRecord",
    "AuditEvidence",
    "RateEvidence",
    "ValueEvidence",
    "CombinedEvidence",
    "RecordEvidence",
    "Outcome",
    "allowed",
    "control_text",
    "format_epsilon",
]

Row = tuple[str, str]

_OMIT = {"omit": True}
"""Codec metadata: the key is left out when the value is None."""


def _extra() -> Any:
    """A record's further keys, kept as written (codec metadata ``rest``)."""
    return field(default_factory=dict, metadata={"rest": True})


def format_epsilon(value: float | None) -> str:
    """An ε for people: 3 decimals, or 2 significant digits below 0.01 (0.0004 is not 0.000),
    "∞" when infinite (None: infinite, as JSON records it)."""
    if value is None or not math.isfinite(value):
        return "∞"
    return f"{value:.3f}" if value == 0 or abs(value) >= 0.01 else f"{value:.2g}"


@dataclass(frozen=True)
class Evidence:
    """The evidence of one experiment (the ``evidence`` object of results.json): the base of
    the typed evidence classes."""

    type: ClassVar[str | None] = None

    @staticmethod
    def from_json(kind: str | None, record: Mapping[str, Any] | None) -> Evidence:
        """The evidence of an experiment of type ``kind`` read from its JSON ``record``
        (combined when the record has ``parts``; a :class:`RecordEvidence` for a type dpclaims
        does not know, and for an empty record: nothing ran)."""
        record = dict(record or {})
        if not record:
            return RecordEvidence()
        if isinstance(record.get("parts"), Mapping):
            return decode(CombinedEvidence, record)
        cls = {c.type: c for c in (AuditEvidence, RateEvidence, ValueEvidence)}.get(kind)
        return RecordEvidence(record) if cls is None else decode(cls, record)

    def to_json(self) -> dict:
        """The JSON record."""
        return encode(self)

    @property
    def note(self) -> str | None:
        """The experiment's setting in words (None or "" when none)."""
        return None

    @property
    def caveats(self) -> tuple[str, ...] | None:
        """Why a rate verdict was downgraded to inconclusive (None or empty when it was not)."""
        return None

    @property
    def direction(self) -> str | None:
        """The side a rate finding lies on (``"slower"``, ``"faster"``), else None."""
        return None

    def rows(self, seed: int | None = None) -> list[Row]:
        """(label, value) rows with every statistical choice of this evidence; ``seed`` is the
        claim's experiment seed (a different seed of the audit or sweep gets its own row)."""
        rows = self._rows(seed)
        if self.note:
            rows.append(("note", self.note))
        return rows

    def _rows(self, seed: int | None) -> list[Row]:
        return []

    def levels(self, kind: str) -> list[tuple[str, float | None]]:
        """``(type, level)`` of the statistical test of this evidence, for an experiment of
        type ``kind`` (see :meth:`Outcome.levels`)."""
        return [(str(kind), None)]

    def key_figure(self, summary: str) -> str:
        """The one number a reader looks at first (the summary when there is none)."""
        return summary

    def measured(self, summary: str) -> str:
        """What the experiment measured, in a sentence (for a finding's paragraph)."""
        return _measured_checks({}, summary)

    def why_inconclusive(self, summary: str) -> str:
        """Why an inconclusive experiment did not decide."""
        return "; ".join(self.caveats or ()) or summary


def _measured_checks(checks: Mapping[str, Any], summary: str) -> str:
    """The value checks that are off, in a sentence (the summary when none is)."""
    off = [
        f"{name} = {number(c.get('value', c.get('estimate')), '.6g')} against {_wanted(c)}"
        for name, c in checks.items()
        if isinstance(c, Mapping) and not c.get("ok")
    ]
    return "the computation gives " + ("; ".join(off) if off else summary)


@dataclass(frozen=True)
class RecordEvidence(Evidence):
    """The evidence of an experiment type dpclaims does not know (a plugin's), kept as the JSON
    record it wrote (key order kept); empty when nothing ran.  Its rows are its note."""

    record: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return dict(self.record)

    @property
    def note(self) -> str:
        return str(self.record.get("note") or "")

    @property
    def caveats(self) -> tuple[str, ...]:
        return tuple(self.record.get("caveats") or ())

    def measured(self, summary: str) -> str:
        return _measured_checks(self.record.get("checks") or {}, summary)


def _wanted(check: Mapping[str, Any]) -> str:
    """What a value check allows: ``"1.5"``, ``"at most 2"`` or ``"at least 0.9"``."""
    if "le" in check:
        return f"at most {number(check['le'], '.6g')}"
    if "ge" in check:
        return f"at least {number(check['ge'], '.6g')}"
    return number(check.get("expected"), ".6g")


@dataclass(frozen=True)
class AuditCounts:
    """The certification split's counts at the chosen test: the negative dataset's trials
    inside the event (false positives), the positive dataset's outside it (false negatives),
    their joint upper bounds, and the trials (per dataset, and of them certifying)."""

    false_positives: int
    false_negatives: int
    n_negative: int
    n_positive: int
    fpr_upper: float
    fnr_upper: float
    trials: int
    certification_trials: int


@dataclass(frozen=True, kw_only=True)
class AuditTestRecord:
    """The test an audit certified and how it was chosen (the fields of
    :class:`dpclaims.audit.Provenance`; those a file written before them lacks are None)."""

    statistic: str | None = None
    threshold: float | None = None
    direction: str | None = None
    calibration_trials: int
    calibration_fraction: float | None = None
    threshold_strategy: str | None = None
    grid_size: int | None = None
    ci: str
    ci_alpha: float | None = None
    ci_tilt: float | None = None
    seed: int
    output_dim: int | None = None
    discrete: bool | None = None
    candidates: Mapping[str, Any] = field(default_factory=dict)
    tradeoff: tuple[tuple[float | None, float | None], ...]
    wall_time: float = 0.0


@dataclass(frozen=True)
class ReachRecord:
    """The smallest violation of the claim the audit would have caught
    (:class:`dpclaims.audit.reach.Reach`): a ``factor`` of the claimed ε, that ``epsilon``
    (None when infinite: no violation within reach), read in the ``model`` family, caught with
    probability ``power`` (not recorded in results.json: None when read from it)."""

    factor: float | None = None
    epsilon: float | None = None
    model: str | None = None
    power: float | None = None


@dataclass(frozen=True)
class ReferenceRecord:
    """The exact ε of the mechanism on the pair when known (None otherwise; ``math.inf``
    allowed, which JSON records as null, read back as unknown), and ``note``: where it comes
    from, or why there is none."""

    epsilon: float | None = None
    note: str | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class AuditEvidence(Evidence):
    """A privacy audit: the certified bound (``epsilon_lower``, None when infinite) against the
    audited claim (``epsilon``, ``delta``, ``unit``, ``relation``: the claim's, or the bound
    :attr:`bound` names; the relation an array audit checked), the :class:`AuditCounts`, the
    :class:`AuditTestRecord`, the :class:`ReachRecord` and the :class:`ReferenceRecord`, built
    by :meth:`dpclaims.audit.AuditResult.evidence`.

    ``bound`` names the audited (ε, δ) when it is not the paper's claim as stated (e.g.
    ``"derived bound, not the paper's"``; None when it is the claim); ``kind``, ``fpr``,
    ``fnr`` and ``slack`` are computed from the other fields.  Its JSON record is flat: the
    counts' and test's fields at the top, the reach's and reference's with the prefix
    ``reach_`` and ``reference_``.
    """

    type: ClassVar[str] = "audit"

    verdict: Verdict | None = None
    reason: str = ""
    epsilon_lower: float | None
    epsilon: float
    delta: float
    unit: str
    relation: str
    confidence: float
    method: str
    mu: float | None = None
    ceiling: float | None = None
    infinite: bool = False
    identical_outputs: bool = False
    trials_needed: int | None = None
    reference: ReferenceRecord = field(
        default_factory=ReferenceRecord, metadata={"flat": True, "prefix": "reference_"}
    )
    counts: AuditCounts = field(metadata={"flat": True})
    warnings: tuple[str, ...] = ()
    reproducible: bool = True
    certified: bool
    kind: str = field(init=False)
    test: AuditTestRecord = field(metadata={"flat": True})
    reach: ReachRecord | None = field(
        default=None,
        metadata={"flat": True, "prefix": "reach_", "keys": ("factor", "epsilon", "model")},
    )
    fpr: float = field(init=False)
    fnr: float = field(init=False)
    slack: float | None = field(init=False)
    bound: str | None = field(default=None, metadata=_OMIT)
    note: str | None = field(default=None, metadata=_OMIT)
    extra: Mapping[str, Any] = _extra()
    """Further keys of the record (a file written by another version), kept as written."""

    def __post_init__(self) -> None:
        counts, lower = self.counts, self.epsilon_lower
        slack = 0.0 if lower is None else self.epsilon / lower if lower > 0 else None
        computed = {
            "verdict": None if self.verdict is None else Verdict(self.verdict),
            "kind": "certified" if self.certified else "estimate",
            "fpr": counts.false_positives / counts.n_negative,
            "fnr": counts.false_negatives / counts.n_positive,
            "slack": slack,
        }
        for name, value in computed.items():
            object.__setattr__(self, name, value)

    @property
    def trials(self) -> int:
        """Trials per dataset."""
        return self.counts.trials

    @property
    def seed(self) -> int:
        """The audit's own seed."""
        return self.test.seed

    @property
    def epsilon_estimate(self) -> float:
        """Point estimate ``log((1 - δ - FNR) / FPR)`` of the certified test (inf if FPR = 0)."""
        numerator = 1.0 - self.delta - self.fnr
        if numerator <= 0:
            return 0.0
        return math.log(numerator / self.fpr) if self.counts.false_positives else math.inf

    @property
    def estimate_above_claim(self) -> bool:
        """Whether the certified test's point estimate is above the claim while its bound is
        not (the verdict line then says so)."""
        return (
            self.certified
            and self.verdict != Verdict.VIOLATION
            and not self.infinite
            and self.epsilon_estimate > self.epsilon
        )

    @property
    def infinite_message(self) -> str:
        """``ε = ∞ on this pair ...`` with the evidence, or "" when :attr:`infinite` is False."""
        if not self.infinite:
            return ""
        counts = self.counts
        negative, positive = (
            ("d0", "d1") if str(self.test.direction).startswith("d1") else ("d1", "d0")
        )
        return (
            f"ε = ∞ on this pair as far as {counts.n_negative:,} trials can show: {positive} put "
            f"at least {1 - counts.fnr_upper:.1%} of its outputs where {negative} put none of "
            f"its {counts.n_negative:,} (so at most {counts.fpr_upper:.2g}), at confidence "
            f"{self.confidence:g}; more trials raise the bound by ln 10 per tenfold"
        )

    @property
    def verdict_line(self) -> str:
        """The verdict with its reason, and, when the test's estimate is above the claim, that
        warning too: a ``consistent`` never reads as a clean pass while the estimate says
        otherwise."""
        line = f"{self.verdict}" + (f": {self.reason}" if self.reason else "")
        if self.estimate_above_claim:
            line += (
                f"; but the test's estimate ε ≈ {self.epsilon_estimate:.3f} is above the claim "
                f"{self.epsilon:g}"
            )
            if self.trials_needed is not None:
                line += (
                    f" (if it holds, about {self.trials_needed:,} trials per dataset would certify "
                    "a violation)"
                )
        return line

    def _against(self) -> str:
        """The words before the audited ε: "claimed", or the bound's name and a colon."""
        return f"{self.bound}:" if self.bound else "claimed"

    def headline(self) -> str:
        """One line for a report (a claim's ``summary``): the bound against the claim, the
        ceiling, the exact ε when known, the reach, and what else the reader must know."""
        label = "certified" if self.certified else "estimated (not certified)"
        line = (
            f"{label} eps >= {format_epsilon(self.epsilon_lower)} vs {self._against()} "
            f"{self.epsilon:g} (ceiling {format_epsilon(self.ceiling)}"
        )
        if self.reference.epsilon is not None:
            line += f", exact implementation: ~{self.reference.epsilon:g}"
        if self.reach is not None and self.reach.factor is not None:
            line += f", reach {self.reach.factor:.3g}×"
        line += ")" + (f"; {self.reason}" if self.reason else "")
        if self.estimate_above_claim:
            line += (
                f"; the test's estimate ε ≈ {format_epsilon(self.epsilon_estimate)} is above "
                "the claim"
            )
        if self.infinite:
            line += f"; {self.infinite_message}"
        return line

    def _rows(self, seed: int | None) -> list[Row]:
        counts, test = self.counts, self.test
        audited = f"({self.epsilon:g}, {self.delta:g})-DP, {self.unit} level, {self.relation}"
        rows = [
            ("audited bound", f"{self.bound}: {audited}") if self.bound else ("claim", audited),
            (
                "lower bound",
                f"{number(self.epsilon_lower, '.4f')} "
                f"({'certified' if self.certified else 'parametric estimate, not certified'})",
            ),
            ("method", f"{self.method}; interval {test.ci} at confidence {self.confidence:g}"),
            (
                "trials",
                f"{counts.trials} per dataset: {test.calibration_trials} calibration, "
                f"{counts.certification_trials} certification",
            ),
            (
                "test",
                f"{test.statistic or 'n/a'}; {test.direction or 'n/a'}, threshold "
                f"{number(test.threshold)}",
            ),
            (
                "errors",
                f"FP {counts.false_positives}/{counts.n_negative} (upper "
                f"{counts.fpr_upper:.4g}), FN {counts.false_negatives}/{counts.n_positive} "
                f"(upper {counts.fnr_upper:.4g})",
            ),
        ]
        exact = self.reference.epsilon
        if exact is not None:
            rows.append(
                ("reference", f"exact ε ≈ {format(exact, 'g').replace('inf', '∞')} on this pair")
            )
        elif self.reference.note:
            rows.append(("reference", f"none: {self.reference.note}"))
        if self.ceiling is not None:
            ceiling = number(self.ceiling, ".4f")
            rows.append(("ceiling", f"{ceiling} (the most these trials can certify)"))
        if self.reason:
            rows.append(("why", self.reason))
        if self.seed != seed:
            rows.append(("audit seed", str(self.seed)))
        return rows

    def verdict_rows(self) -> list[Row]:
        """The verdict with its reason, the reach, ε = ∞ when shown, whether a rerun gives the
        same numbers, and the audit's warnings: the rows a report shows in the claim's
        summary line and a reader of one audit sees first (:meth:`summary`)."""
        rows = [("verdict", self.verdict_line)]
        reach = self.reach
        if reach is not None and self.verdict != Verdict.VIOLATION:
            rows.append(("reach", _reach_text(reach)))
        if self.infinite:
            rows.append(("", self.infinite_message))
        if not self.reproducible:
            rows.append(("rerun", NOT_REPRODUCIBLE))
        rows += [("note", warning) for warning in self.warnings]
        return rows

    def summary(self) -> str:
        """The audit in lines of ``label  value``: :meth:`verdict_rows`, then :meth:`rows` (but
        the reason, which the verdict row gives)."""
        rows = [row for row in self.rows(self.seed) if row[0] != "why"]
        return rows_text(self.verdict_rows() + rows)

    def key_figure(self, summary: str) -> str:
        sign = "≥" if self.certified else "≈"
        note = "" if self.certified else ", estimate"
        return (
            f"ε {sign} {number(self.epsilon_lower, '.3f')} ({self._against()} "
            f"{self.epsilon:g}{note})"
        )

    def measured(self, summary: str) -> str:
        label = "certifies" if self.certified else "estimates (not certified)"
        return (
            f"an audit with {self.trials} runs per dataset {label} "
            f"ε ≥ {number(self.epsilon_lower, '.3f')} at confidence {self.confidence:g}, "
            f"against the {self._against()} ({self.epsilon:g}, {self.delta:g})-DP"
        )

    def levels(self, kind: str) -> list[tuple[str, float | None]]:
        return [("audit", 1 - float(self.confidence))]


NOT_REPRODUCIBLE = (
    "not reproducible: the mechanism draws randomness from outside its rng, so the same seed "
    "gives other trials and a rerun other numbers"
)
"""The rerun row of an audit whose mechanism ignores its seed."""


def _reach_text(reach: ReachRecord) -> str:
    """The reach in words, e.g. ``"would catch a 1.4× violation of the claim (ε ≈ 1.4 on this
    pair, gaussian-dp family) with probability 0.9"`` (the probability left out for a reach read
    back from results.json, which does not record it)."""
    if reach.factor is None:
        return (
            "would catch no violation of the claim: its tests cannot certify above it at this size"
        )
    power = "" if reach.power is None else f" with probability {reach.power:g}"
    return (
        f"would catch a {reach.factor:.3g}× violation of the claim (ε ≈ "
        f"{number(reach.epsilon, '.3g')} on this pair, {reach.model} family){power}"
    )


def rows_text(rows: list[Row]) -> str:
    """``(label, value)`` rows as lines, labels in a column 13 wide (the command line's)."""
    return "\n".join(f"{label:<13} {value}" for label, value in rows)


_TESTS = {
    "order": "equivalence to {e:g} ± {m:g}",
    "upper": "one-sided: exponent ≤ {e:g} + {m:g}",
    "lower": "one-sided: exponent ≥ {e:g} − {m:g}",
}


def _exponent_bound(check: Mapping[str, Any]) -> str:
    """The side of ``expected`` the exponent keeps (an upper bound as the parameter → 0: below)."""
    bound = check.get("bound", "order")
    if check.get("limit") == Limit.SMALL and bound != Bound.ORDER:
        return {"upper": "lower", "lower": "upper"}[bound]
    return bound


def allowed(check: Mapping[str, Any]) -> str:
    """The exponents a rate check's claim allows, read with its bound (an upper bound allows any
    faster rate): ``"-1 ± 0.1"``, ``"at most 0.15"`` or ``"at least 0.9"``."""
    expected, margin = check["expected"], check["margin"]
    small = check.get("limit") == Limit.SMALL  # a rate as the variable goes to 0: the sides flip
    upper = {"upper": not small, "lower": small}.get(check.get("bound", "order"))
    if upper is None:
        return f"{expected:g} ± {margin:g}"
    return f"at most {expected + margin:g}" if upper else f"at least {expected - margin:g}"


def _interval(check: Mapping[str, Any]) -> str:
    low, high = check["interval"]
    return f"[{number(low, '.3f')}, {number(high, '.3f')}]"


@dataclass(frozen=True, kw_only=True)
class RateEvidence(Evidence):
    """A rate check: the sweep, its power-law fit and the exponent test in the claim's direction,
    with the registry's rate ``claim``, the ``caveats`` that made it inconclusive, the trivial
    ``baseline``, its ``controls`` and exponent ``reach`` (:mod:`dpclaims.rates`; each the JSON
    object its ``to_dict()`` gives), the ``weak`` reason of a ``consistent_weak`` verdict, and
    ``deterministic`` for a sweep whose replicates have zero spread.  Built by
    :class:`dpclaims.claims.RateExperiment`; the optional keys are absent when None (a file
    written before them lacks them too)."""

    type: ClassVar[str] = "rate"

    sweep: Mapping[str, Any]
    """``param``, ``values``, ``errors`` (one row of replicates per value), ``replicates``,
    ``seed`` (:meth:`dpclaims.rates.SweepResult.to_dict`)."""
    fit: Mapping[str, Any]
    """``exponent``, ``intercept``, ``interval``, ``confidence``, ``method``."""
    check: Mapping[str, Any]
    """``verdict``, ``exponent``, ``interval``, ``expected``, ``margin``, ``confidence``,
    ``bound``, ``direction``, ... (:meth:`dpclaims.rates.ExponentCheck.to_dict`)."""
    note: str | None = field(default=None, metadata=_OMIT)
    claim: Mapping[str, Any] | None = field(default=None, metadata=_OMIT)
    """The registry's rate claim (``stated``, ``bound``, ``tested``, ``why``)."""
    caveats: tuple[str, ...] | None = field(default=None, metadata=_OMIT)
    baseline: Mapping[str, Any] | None = field(default=None, metadata=_OMIT)
    deterministic: bool | None = field(default=None, metadata=_OMIT)
    controls: Mapping[str, Mapping[str, Any]] | None = field(default=None, metadata=_OMIT)
    """``{"trivial": ..., "wrong_rate": ...}``: the test applied to a trivial algorithm and to a
    wrong-rate variant (:class:`dpclaims.rates.controls.Control`)."""
    reach: Mapping[str, Any] | None = field(default=None, metadata=_OMIT)
    """The exponent reach (:class:`dpclaims.rates.ExponentReach`)."""
    weak: str | None = field(default=None, metadata=_OMIT)
    extra: Mapping[str, Any] = _extra()
    """Further keys of the record, kept as written."""

    @property
    def confidence(self) -> float:
        """The level of the exponent test."""
        return self.check["confidence"]

    @property
    def direction(self) -> str | None:
        return self.check.get("direction")

    def levels(self, kind: str) -> list[tuple[str, float | None]]:
        return [("rate", (1 - float(self.confidence)) / 2)]

    def _rows(self, seed: int | None) -> list[Row]:
        sweep, fit, check = self.sweep, self.fit, self.check
        rows = [
            (
                "sweep",
                f"{sweep['param']} ∈ {{{join(sweep['values'])}}}, {sweep['replicates']} replicates"
                + (f", batch {sweep['batch']}" if sweep.get("batch", 1) != 1 else ""),
            ),
            ("fixed", ", ".join(f"{k}={v}" for k, v in sweep.get("fixed", {}).items()) or "none"),
            (
                "fit",
                f"{fit['method']}: slope {number(fit['exponent'], '.4f')}, "
                f"{fit['confidence']:.0%} interval "
                f"[{number(fit['interval'][0], '.4f')}, {number(fit['interval'][1], '.4f')}]",
            ),
            (
                "test",
                _TESTS[_exponent_bound(check)].format(e=check["expected"], m=check["margin"])
                + f" at {check['confidence']:.0%}: {check['verdict']}"
                + ("; slope drifts over the grid" if check.get("drifting") else ""),
            ),
        ]
        rows += self._control_rows()
        claim = self.claim or {}
        if claim.get("stated"):
            bound = "" if claim["bound"] == Bound.ORDER else f" ({claim['bound']} bound)"
            rows.insert(0, ("claim", claim["stated"] + bound))
        if claim.get("tested"):
            rows.insert(1, ("tested", f"{claim['tested']} — why: {claim['why']}"))
        if check.get("message"):
            rows.append(("note", check["message"]))
        if sweep["seed"] != seed:
            rows.append(("sweep seed", str(sweep["seed"])))
        return rows

    def _control_rows(self) -> list[Row]:
        rows = []
        if self.deterministic:
            rows.append(("replicates", "zero spread at every value: a deterministic schedule"))
        for name, label in (("trivial", "trivial"), ("wrong_rate", "wrong rate")):
            control = (self.controls or {}).get(name)
            if control:
                rows.append((label, control_text(control)))
        reach = self.reach
        if reach:
            rows.append(
                (
                    "reach",
                    f"{number(reach['shift'], '.3f')}: the smallest exponent error caught with "
                    f"probability {reach['power']:g} (limit {reach['limit']:g})",
                )
            )
        if self.weak:
            rows.append(("why weak", self.weak))
        return rows

    def key_figure(self, summary: str) -> str:
        check = self.check
        claimed = check.get("claimed") or f"{check['expected']:g} ± {check['margin']:g}"
        figure = f"slope {check['exponent']:.3f} {_interval(check)} vs {claimed}"
        if self.reach:
            figure += f"; reach {number(self.reach['shift'], '.2f')}"
        trivial = (self.controls or {}).get("trivial")
        if trivial:
            figure += f"; trivial control {trivial['verdict'] or 'none'}"
        return figure

    def measured(self, summary: str) -> str:
        sweep, check = self.sweep, self.check
        return (
            f"a sweep of {sweep['param']} over {{{join(sweep['values'])}}} with "
            f"{sweep['replicates']} replicates gives a fitted slope of "
            f"{check['exponent']:.3f}, {check['confidence']:.0%} interval {_interval(check)}, "
            f"where the claim allows {allowed(check)}"
        )

    def why_inconclusive(self, summary: str) -> str:
        check, caveats = self.check, "; ".join(self.caveats or ())
        # the caveats alone made it undecided
        if caveats and check["verdict"] == Verdict.INCONSISTENT:
            return caveats
        why = check.get("reason") or (  # results written before checks carried their reason
            f"the slope's {check['confidence']:.0%} interval {_interval(check)} straddles an "
            f"edge of the claimed {check['expected']:g} ± {check['margin']:g}: this sweep cannot "
            "tell whether the exponent lies inside the band"
        )
        return f"{why}; also {caveats}" if caveats else why


def control_text(control: Mapping[str, Any]) -> str:
    """A control in words: what it is, and its verdict and slope (or why it did not run)."""
    if control.get("verdict") is None:
        return f"{control['what']}: {control.get('reason', '')}"
    low, high = control["interval"]
    return (
        f"{control['what']}: {control['verdict']} (slope {number(control['exponent'], '.3f')} "
        f"[{number(low, '.3f')}, {number(high, '.3f')}])"
    )


@dataclass(frozen=True, kw_only=True)
class ValueEvidence(Evidence):
    """Computed quantities against the paper's: ``checks`` ``{name: {value or estimate, low,
    high; expected, le or ge; ok}}``, the tolerances (absent when None: a plugin's record may
    lack them) and the note.  Built by :class:`dpclaims.claims.ValueExperiment`."""

    type: ClassVar[str] = "value"

    checks: Mapping[str, Mapping[str, Any]]
    rtol: float | None = field(default=None, metadata=_OMIT)
    atol: float | None = field(default=None, metadata=_OMIT)
    note: str | None = field(default=None, metadata=_OMIT)
    extra: Mapping[str, Any] = _extra()
    """Further keys of the record, kept as written (e.g. the §6 comparison's ``section6``)."""

    def _rows(self, seed: int | None) -> list[Row]:
        rows = []
        for name, c in self.checks.items():
            if isinstance(c, Mapping):
                measured = c.get("value", c.get("estimate"))
                interval = (
                    f" [{number(c.get('low'))}, {number(c.get('high'))}]" if "low" in c else ""
                )
                sides = (("le", "≤"), ("ge", "≥"))
                relation, limit = next(
                    ((r, c[k]) for k, r in sides if k in c), ("vs", c.get("expected"))
                )
                rows.append(
                    (
                        name,
                        f"{number(measured, '.6g')}{interval} {relation} "
                        f"{number(limit, '.6g')}: {'ok' if c.get('ok') else 'off'}",
                    )
                )
        return rows

    def measured(self, summary: str) -> str:
        return _measured_checks(self.checks, summary)


@dataclass(frozen=True)
class CombinedEvidence(Evidence):
    """Several experiments checking one claim: each part's :class:`Outcome` by name, in order,
    and the note.  Built by :class:`dpclaims.claims.CombinedExperiment`."""

    parts: Mapping[str, Outcome]
    note: str | None = field(default=None, metadata=_OMIT)

    def levels(self, kind: str) -> list[tuple[str, float | None]]:
        return [level for part in self.parts.values() for level in part.levels()]


def _read_evidence(data: Mapping[str, Any]) -> Evidence:
    """The ``evidence`` of a JSON object holding an experiment's ``type`` too."""
    return Evidence.from_json(data.get("type"), data.get("evidence"))


@dataclass(frozen=True)
class Outcome:
    """What one run of an experiment returns: its type (``"audit"``, ``"rate"``, ``"value"``,
    or a plugin's), a checked verdict, a one-line summary and the typed evidence.

    An experiment may return its JSON object ``{"type", "verdict", "summary", "evidence"}``
    instead (a plugin's, written before this class existed): the runner validates it and reads
    it with :func:`~dpclaims.results.read_outcome`, the one door for a record from outside.
    """

    type: str
    verdict: Verdict
    summary: str
    evidence: Evidence = field(metadata={"read": _read_evidence})

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """From ``{"type", "verdict", "summary", "evidence"}``."""
        return decode(cls, data)

    def to_json(self) -> dict:
        return encode(self)

    def levels(self) -> list[tuple[str, float | None]]:
        """``(type, level)`` of every test: a rate's one-sided TOST level ``(1 - confidence)/2``,
        an audit's ``1 - confidence``, a value check's None (a computation compared within a
        tolerance)."""
        return self.evidence.levels(self.type)

    def findings(self, path: str = "") -> dict[str, str]:
        """``{part path: verdict}`` of every finding (combined experiments' parts too).

        A rate finding's verdict carries its direction (``"inconsistent/slower"``), so a rerun
        that misses on the other side does not confirm it.
        """
        if isinstance(self.evidence, CombinedEvidence):
            out: dict[str, str] = {}
            for name, part in self.evidence.parts.items():
                out.update(part.findings(f"{path}/{name}"))
            return out
        if self.verdict not in FINDINGS:
            return {}
        direction = self.evidence.direction
        return {path: self.verdict + (f"/{direction}" if direction else "")}
