"""What one experiment found: :class:`Outcome` (type, verdict, summary, evidence) and the
evidence records, one class per kind of experiment, each rendering its own rows once.

- :class:`AuditEvidence`: a privacy audit (:meth:`dpclaims.audit.AuditResult.to_dict` and the
  experiment's note);
- :class:`RateEvidence`: a sweep, its power-law fit and the exponent test;
- :class:`ValueEvidence`: computed quantities compared with the paper's (``checks``);
- :class:`CombinedEvidence`: several experiments of one claim (``parts``);
- :class:`Evidence`: the base, and the record of any other (plugin) experiment type.

An evidence object keeps its JSON record as written (``record``, key order kept, so a
document read and written again is the same file) and reads its facts from it through typed
properties.  Text, Markdown, HTML and the command line all render evidence through
:meth:`Evidence.rows`, :meth:`Evidence.key_figure` and :meth:`Evidence.measured`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..verdicts import FINDINGS
from .display import join, number

__all__ = [
    "Evidence",
    "AuditEvidence",
    "RateEvidence",
    "ValueEvidence",
    "CombinedEvidence",
    "Outcome",
    "allowed",
    "control_text",
]

Row = tuple[str, str]


@dataclass(frozen=True)
class Evidence:
    """The evidence record of one experiment (the ``evidence`` object of results.json).

    ``record`` is the JSON object as written; the properties read its facts.  This base class
    stands for an experiment type dpclaims does not know (a plugin's): its rows are its note.
    """

    record: Mapping[str, Any] = field(default_factory=dict)
    type: ClassVar[str | None] = None

    @staticmethod
    def from_json(kind: str | None, record: Mapping[str, Any] | None) -> Evidence:
        """The evidence class for an experiment of type ``kind`` (combined when the record has
        ``parts``), holding ``record``."""
        record = dict(record or {})
        if isinstance(record.get("parts"), Mapping):
            return CombinedEvidence(record)
        cls = {c.type: c for c in (AuditEvidence, RateEvidence, ValueEvidence)}.get(kind, Evidence)
        return cls(record)

    def to_json(self) -> dict:
        """The JSON record (a copy at the top level)."""
        return dict(self.record)

    @property
    def note(self) -> str:
        """The experiment's setting in words ("" when none)."""
        return str(self.record.get("note") or "")

    @property
    def caveats(self) -> list[str]:
        """Why a rate verdict was downgraded to inconclusive (empty when it was not)."""
        return list(self.record.get("caveats") or ())

    @property
    def direction(self) -> str | None:
        """The side a rate finding lies on (``"slower"``, ``"faster"``), else None."""
        check = self.record.get("check")
        return check.get("direction") if isinstance(check, Mapping) else None

    def rows(self, seed: int | None = None) -> list[Row]:
        """(label, value) rows with every statistical choice of this evidence; ``seed`` is the
        claim's experiment seed (a different seed of the audit or sweep gets its own row)."""
        rows = self._rows(seed)
        if self.note:
            rows.append(("note", self.note))
        return rows

    def _rows(self, seed: int | None) -> list[Row]:
        return []

    def key_figure(self, summary: str) -> str:
        """The one number a reader looks at first (the summary when there is none)."""
        return summary

    def measured(self, summary: str) -> str:
        """What the experiment measured, in a sentence (for a finding's paragraph)."""
        off = [
            f"{name} = {number(c.get('value', c.get('estimate')), '.6g')} against {_wanted(c)}"
            for name, c in self.record.get("checks", {}).items()
            if isinstance(c, Mapping) and not c.get("ok")
        ]
        return "the computation gives " + ("; ".join(off) if off else summary)

    def why_inconclusive(self, summary: str) -> str:
        """Why an inconclusive experiment did not decide."""
        return "; ".join(self.caveats) or summary


def _wanted(check: Mapping[str, Any]) -> str:
    """What a value check allows: ``"1.5"``, ``"at most 2"`` or ``"at least 0.9"``."""
    if "le" in check:
        return f"at most {number(check['le'], '.6g')}"
    if "ge" in check:
        return f"at least {number(check['ge'], '.6g')}"
    return number(check.get("expected"), ".6g")


@dataclass(frozen=True)
class AuditEvidence(Evidence):
    """A privacy audit: the certified bound against the claim, the test, the counts."""

    type: ClassVar[str] = "audit"

    @property
    def epsilon_lower(self) -> float | None:
        """The certified lower bound on ε (None when infinite)."""
        return self.record["epsilon_lower"]

    @property
    def epsilon(self) -> float:
        """The audited ε: the claim's, or the bound :attr:`bound` names."""
        return self.record["epsilon"]

    @property
    def delta(self) -> float:
        """The audited δ: the claim's, or the bound :attr:`bound` names."""
        return self.record["delta"]

    @property
    def bound(self) -> str:
        """What the audited (ε, δ) is when it is not the paper's claim as stated (e.g.
        ``"derived bound, not the paper's"``); "" when it is the claim."""
        return str(self.record.get("bound") or "")

    def _against(self) -> str:
        """The words before the audited ε: "claimed", or the bound's name and a colon."""
        return f"{self.bound}:" if self.bound else "claimed"

    @property
    def certified(self) -> bool:
        """Whether the bound is certified (False for a parametric estimate)."""
        return bool(self.record["certified"])

    @property
    def confidence(self) -> float:
        return self.record["confidence"]

    @property
    def trials(self) -> int:
        """Trials per dataset."""
        return self.record["trials"]

    @property
    def seed(self) -> int:
        """The audit's own seed."""
        return self.record["seed"]

    def _rows(self, seed: int | None) -> list[Row]:
        ev = self.record
        audited = f"({ev['epsilon']:g}, {ev['delta']:g})-DP, {ev['unit']} level, {ev['relation']}"
        rows = [
            ("audited bound", f"{self.bound}: {audited}") if self.bound else ("claim", audited),
            (
                "lower bound",
                f"{number(ev['epsilon_lower'], '.4f')} "
                f"({'certified' if ev['certified'] else 'parametric estimate, not certified'})",
            ),
            ("method", f"{ev['method']}; interval {ev['ci']} at confidence {ev['confidence']:g}"),
            (
                "trials",
                f"{ev['trials']} per dataset: {ev['calibration_trials']} calibration, "
                f"{ev['certification_trials']} certification",
            ),
            (
                "test",
                f"{ev.get('statistic', 'n/a')}; {ev.get('direction', 'n/a')}, threshold "
                f"{number(ev.get('threshold'))}",
            ),
            (
                "errors",
                f"FP {ev['false_positives']}/{ev['n_negative']} (upper {ev['fpr_upper']:.4g}), "
                f"FN {ev['false_negatives']}/{ev['n_positive']} (upper {ev['fnr_upper']:.4g})",
            ),
        ]
        if ev.get("reference_epsilon") is not None:
            rows.append(("exact implementation", f"ε ≈ {ev['reference_epsilon']:g}"))
        elif ev.get("reference_note"):
            rows.append(("exact implementation", f"none: {ev['reference_note']}"))
        if ev.get("ceiling") is not None:
            ceiling = number(ev["ceiling"], ".4f")
            rows.append(("ceiling", f"{ceiling} (the most these trials can certify)"))
        if ev.get("reason"):
            rows.append(("why", ev["reason"]))
        if ev["seed"] != seed:
            rows.append(("audit seed", str(ev["seed"])))
        return rows

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


_TESTS = {
    "order": "equivalence to {e:g} ± {m:g}",
    "upper": "one-sided: exponent ≤ {e:g} + {m:g}",
    "lower": "one-sided: exponent ≥ {e:g} − {m:g}",
}


def _exponent_bound(check: Mapping[str, Any]) -> str:
    """The side of ``expected`` the exponent keeps (an upper bound as the parameter → 0: below)."""
    bound = check.get("bound", "order")
    if check.get("limit") == "small" and bound != "order":
        return {"upper": "lower", "lower": "upper"}[bound]
    return bound


def allowed(check: Mapping[str, Any]) -> str:
    """The exponents a rate check's claim allows, read with its bound (an upper bound allows any
    faster rate): ``"-1 ± 0.1"``, ``"at most 0.15"`` or ``"at least 0.9"``."""
    expected, margin = check["expected"], check["margin"]
    small = check.get("limit") == "small"  # a rate as the variable goes to 0: the sides flip
    upper = {"upper": not small, "lower": small}.get(check.get("bound", "order"))
    if upper is None:
        return f"{expected:g} ± {margin:g}"
    return f"at most {expected + margin:g}" if upper else f"at least {expected - margin:g}"


def _interval(check: Mapping[str, Any]) -> str:
    low, high = check["interval"]
    return f"[{number(low, '.3f')}, {number(high, '.3f')}]"


@dataclass(frozen=True)
class RateEvidence(Evidence):
    """A rate check: the sweep, its power-law fit and the exponent test in the claim's direction."""

    type: ClassVar[str] = "rate"

    @property
    def sweep(self) -> Mapping[str, Any]:
        """``param``, ``values``, ``errors`` (one row of replicates per value), ``replicates``,
        ``seed`` (:meth:`dpclaims.rates.SweepResult.to_dict`)."""
        return self.record["sweep"]

    @property
    def fit(self) -> Mapping[str, Any]:
        """``exponent``, ``intercept``, ``interval``, ``confidence``, ``method``."""
        return self.record["fit"]

    @property
    def check(self) -> Mapping[str, Any]:
        """``verdict``, ``exponent``, ``interval``, ``expected``, ``margin``, ``confidence``,
        ``bound``, ``direction``, ... (:meth:`dpclaims.rates.ExponentCheck.to_dict`)."""
        return self.record["check"]

    @property
    def claim(self) -> Mapping[str, Any]:
        """The registry's rate claim (``stated``, ``bound``, ``tested``, ``why``), or {}."""
        return self.record.get("claim") or {}

    @property
    def confidence(self) -> float:
        """The level of the exponent test."""
        return self.check["confidence"]

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
        claim = self.claim
        if claim.get("stated"):
            bound = "" if claim["bound"] == "order" else f" ({claim['bound']} bound)"
            rows.insert(0, ("claim", claim["stated"] + bound))
        if claim.get("tested"):
            rows.insert(1, ("tested", f"{claim['tested']} — why: {claim['why']}"))
        if check.get("message"):
            rows.append(("note", check["message"]))
        if sweep["seed"] != seed:
            rows.append(("sweep seed", str(sweep["seed"])))
        return rows

    @property
    def controls(self) -> Mapping[str, Mapping[str, Any]]:
        """``{"trivial": ..., "wrong_rate": ...}``: the test applied to a trivial algorithm and to
        a wrong-rate variant (:class:`dpclaims.rates.controls.Control`), or {} (a deterministic
        sweep, or results written before controls)."""
        return self.record.get("controls") or {}

    @property
    def reach(self) -> Mapping[str, Any]:
        """The exponent reach (:class:`dpclaims.rates.ExponentReach`), or {}."""
        return self.record.get("reach") or {}

    def _control_rows(self) -> list[Row]:
        rows = []
        if self.record.get("deterministic"):
            rows.append(("replicates", "zero spread at every value: a deterministic schedule"))
        for name, label in (("trivial", "trivial"), ("wrong_rate", "wrong rate")):
            control = self.controls.get(name)
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
        if self.record.get("weak"):
            rows.append(("why weak", self.record["weak"]))
        return rows

    def key_figure(self, summary: str) -> str:
        check = self.check
        claimed = check.get("claimed") or f"{check['expected']:g} ± {check['margin']:g}"
        figure = f"slope {check['exponent']:.3f} {_interval(check)} vs {claimed}"
        if self.reach:
            figure += f"; reach {number(self.reach['shift'], '.2f')}"
        trivial = self.controls.get("trivial")
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
        check, caveats = self.check, "; ".join(self.caveats)
        if caveats and check["verdict"] == "inconsistent":  # the caveats alone made it undecided
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


@dataclass(frozen=True)
class ValueEvidence(Evidence):
    """Computed quantities against the paper's: ``checks`` ``{name: {value or estimate, low,
    high; expected, le or ge; ok}}`` and the tolerances."""

    type: ClassVar[str] = "value"

    @property
    def checks(self) -> Mapping[str, Mapping[str, Any]]:
        return self.record.get("checks", {})

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


@dataclass(frozen=True)
class CombinedEvidence(Evidence):
    """Several experiments checking one claim: ``{"parts": {name: outcome}, "note": ...}``."""

    type: ClassVar[str | None] = None

    @property
    def parts(self) -> dict[str, Outcome]:
        """Each part's outcome, by name, in order."""
        return {name: Outcome.from_json(part) for name, part in self.record["parts"].items()}


@dataclass(frozen=True)
class Outcome(Mapping):
    """What one run of an experiment returns: its type (``"audit"``, ``"rate"``, ``"value"``,
    or a plugin's), a checked verdict, a one-line summary and the evidence.

    It reads as the JSON object ``{"type", "verdict", "summary", "evidence"}`` too
    (``outcome["verdict"]``), the shape experiments returned before it existed.
    """

    type: str
    verdict: str
    summary: str
    evidence: Evidence

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """From ``{"type", "verdict", "summary", "evidence"}``."""
        return cls(
            type=data["type"],
            verdict=data["verdict"],
            summary=data["summary"],
            evidence=Evidence.from_json(data["type"], data["evidence"]),
        )

    def to_json(self) -> dict:
        return {
            "type": self.type,
            "verdict": str(self.verdict),
            "summary": self.summary,
            "evidence": self.evidence.to_json(),
        }

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("type", "verdict", "summary", "evidence"))

    def __len__(self) -> int:
        return 4

    def levels(self) -> list[tuple[str, float | None]]:
        """``(type, level)`` of every test: a rate's one-sided TOST level ``(1 - confidence)/2``,
        an audit's ``1 - confidence``, a value check's None (a computation compared within a
        tolerance)."""
        evidence = self.evidence
        if isinstance(evidence, CombinedEvidence):
            return [level for part in evidence.parts.values() for level in part.levels()]
        if self.type == "rate":
            return [("rate", (1 - float(evidence.record["check"]["confidence"])) / 2)]
        if self.type == "audit":
            return [("audit", 1 - float(evidence.record["confidence"]))]
        return [(str(self.type), None)]

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
