"""The schema of ``results.json`` and a small validator for it (a subset of JSON Schema).

The schema is a plain dict using the keywords ``type`` (a name or a list of names
among object, array, string, number, integer, boolean, null), ``enum``, ``const``,
``required``, ``properties``, ``values`` (the schema of every value of an object), ``items``,
``length`` (of an array), ``minimum``, ``maximum``, ``above`` and ``below`` (exclusive bounds).
:func:`validate_results` applies it, then the rules a schema cannot state: a ``skipped`` or
``not_checkable`` result has a reason, an ``error`` result a message, a checked audit or rate
result the evidence its figure is drawn from, a sweep one row of replicates per value, all of
one length, the counts add up and ids are unique.  The keys an audit's, a rate check's or a
value check's evidence must hold are its class's fields without a default
(:func:`.codec.required` of :class:`~dpclaims.results.AuditEvidence`, ...): the schema adds
the ranges of their values.

Version history: 1 — first release; 2 — the ``skipped`` verdict (budget too small), split
from ``not_checkable``.  Later additions are
optional, so that older files still load: ``multiplicity`` (the run's tests and expected false
findings), each claim's ``confirmation`` (the rerun of a finding) and ``caveats`` (the
paper's ambiguities and errata, the specification's reconstructions).
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..verdicts import CHECKED, FAILING, NOT_RUN, Verdict
from ..vocabulary import CAVEAT_KINDS
from .codec import required
from .evidence import AuditEvidence, RateEvidence, ValueEvidence
from .jsonable import to_jsonable

__all__ = [
    "SCHEMA_VERSION",
    "VERDICTS",
    "CHECKED_VERDICTS",
    "FAILING_VERDICTS",
    "SCHEMA",
    "MUTANTS",
    "EVIDENCE_SCHEMAS",
    "ResultsError",
    "validate",
    "validate_results",
    "validate_experiment_result",
]

SCHEMA_VERSION = 2

VERDICTS = (
    Verdict.CONSISTENT,
    Verdict.CONSISTENT_WEAK,
    Verdict.FORMULA,
    Verdict.VIOLATION,
    Verdict.INCONSISTENT,
    Verdict.INCONCLUSIVE,
    Verdict.SKIPPED,
    Verdict.NOT_CHECKABLE,
    Verdict.NOT_IMPLEMENTED,
    Verdict.ERROR,
)
"""Every verdict a claim can get, in the order reports list them."""

CHECKED_VERDICTS = CHECKED
"""Verdicts an experiment returns; the others are set by the runner."""

FAILING_VERDICTS = FAILING
"""Verdicts that make ``dpclaims verify`` exit with code 1 (as does a check module that fails to
import)."""

_NUMBER = {"type": "number"}
_OPT_NUMBER = {"type": ["number", "null"]}
_INTEGER = {"type": "integer", "minimum": 0}
_STRING = {"type": "string"}
_PAIR = {"type": "array", "items": _OPT_NUMBER, "length": 2}
_EPSILON = {"type": "number", "above": 0}
_DELTA = {"type": "number", "minimum": 0, "below": 1}
_PROBABILITY = {"type": "number", "minimum": 0, "maximum": 1}
_LEVEL = {"type": "number", "above": 0, "below": 1}

AUDIT_EVIDENCE = {
    "type": "object",
    "required": required(AuditEvidence),
    "properties": {
        "epsilon_lower": _OPT_NUMBER,
        "epsilon": _EPSILON,
        "delta": _DELTA,
        "confidence": _LEVEL,
        "method": _STRING,
        "certified": {"type": "boolean"},
        "ci": _STRING,
        "trials": _INTEGER,
        "seed": _INTEGER,
        "tradeoff": {"type": "array", "items": _PAIR},
        "false_positives": _INTEGER,
        "false_negatives": _INTEGER,
        "n_negative": _INTEGER,
        "n_positive": _INTEGER,
        "fpr_upper": _PROBABILITY,
        "fnr_upper": _PROBABILITY,
        "calibration_trials": _INTEGER,
        "certification_trials": _INTEGER,
        "unit": _STRING,
        "relation": _STRING,
    },
}
"""Evidence of an audit (:class:`~dpclaims.results.AuditEvidence`, whose fields without a default
are the required keys; further keys allowed): the ranges of its values."""

_CONTROL = {
    "type": "object",
    "required": ["name", "what", "verdict", "exponent", "interval", "reason"],
    "properties": {
        "name": _STRING,
        "what": _STRING,
        "verdict": {"type": ["string", "null"]},
        "exponent": _OPT_NUMBER,
        "interval": {"type": ["array", "null"]},
        "reason": _STRING,
    },
}

RATE_EVIDENCE = {
    "type": "object",
    "required": required(RateEvidence),
    "properties": {
        "sweep": {
            "type": "object",
            "required": ["param", "values", "errors", "replicates", "seed"],
            "properties": {
                "param": _STRING,
                "values": {"type": "array", "items": {"type": "number", "above": 0}},
                "errors": {"type": "array", "items": {"type": "array", "items": _NUMBER}},
                "replicates": _INTEGER,
                "seed": _INTEGER,
            },
        },
        "fit": {
            "type": "object",
            "required": ["exponent", "intercept", "interval", "confidence", "method"],
            "properties": {
                "exponent": _OPT_NUMBER,
                "intercept": _OPT_NUMBER,
                "interval": _PAIR,
                "confidence": _LEVEL,
                "method": _STRING,
            },
        },
        "check": {
            "type": "object",
            "required": ["verdict", "exponent", "interval", "expected", "margin", "confidence"],
            "properties": {
                "verdict": _STRING,
                "exponent": _NUMBER,
                "interval": _PAIR,
                "expected": _NUMBER,
                "margin": {"type": "number", "minimum": 0},
                "confidence": _LEVEL,
            },
        },
        "controls": {
            "type": "object",
            "properties": {"trivial": _CONTROL, "wrong_rate": _CONTROL},
        },
        "reach": {
            "type": "object",
            "required": ["shift", "power", "limit", "within"],
            "properties": {
                "shift": {"type": "number", "minimum": 0},
                "power": _LEVEL,
                "limit": {"type": "number", "minimum": 0},
                "within": {"type": "boolean"},
            },
        },
        "weak": _STRING,
        "deterministic": {"type": "boolean"},
    },
}
"""Evidence of a rate check: sweep, power-law fit and exponent verdict (their ``to_dict()``);
since issue 36 also its ``controls`` (the test applied to a trivial algorithm and to a
wrong-rate variant; ``verdict`` null when a control did not run, with its ``reason``), its
exponent ``reach``, the ``weak`` reason of a ``consistent_weak`` verdict, and ``deterministic``
for a sweep whose replicates have zero spread (optional: older documents lack them)."""

VALUE_EVIDENCE = {
    "type": "object",
    "required": required(ValueEvidence),
    "properties": {"checks": {"type": "object"}},
}
"""Evidence of a value check: ``{"checks": {name: {..., "ok": bool}}}``.

An experiment combining several checks of one claim instead gives the evidence
``{"parts": {name: experiment result}}``; each part is validated as a result of its own type."""

EVIDENCE_SCHEMAS = {"audit": AUDIT_EVIDENCE, "rate": RATE_EVIDENCE, "value": VALUE_EVIDENCE}

CLAIM_RESULT = {
    "type": "object",
    "required": [
        "id",
        "paper",
        "kind",
        "algorithm",
        "source",
        "statement",
        "verdict",
        "type",
        "summary",
        "reason",
        "error",
        "evidence",
        "seed",
        "wall_time",
    ],
    "properties": {
        "id": _STRING,
        "paper": _STRING,
        "kind": _STRING,
        "algorithm": _STRING,
        "source": _STRING,
        "statement": _STRING,
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "type": {"type": ["string", "null"]},
        "summary": _STRING,
        "reason": {"type": ["string", "null"]},
        "error": {"type": ["string", "null"]},
        "evidence": {"type": "object"},
        "seed": {"type": ["integer", "null"], "minimum": 0},
        "wall_time": {"type": "number", "minimum": 0},
        "confirmation": {
            "type": ["object", "null"],
            "required": ["seed", "confirmed"],
            "properties": {
                "seed": {"type": "integer", "minimum": 0},
                "confirmed": {"type": "boolean"},
                "verdict": {"type": "string", "enum": list(CHECKED_VERDICTS)},
                "summary": _STRING,
                "evidence": {"type": "object"},
            },
        },
        "caveats": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "text"],
                "properties": {
                    "kind": {"type": "string", "enum": list(CAVEAT_KINDS)},
                    "text": _STRING,
                },
            },
        },
    },
}
"""One claim's result.  ``seed`` is the experiment's own seed (None when nothing ran).
``confirmation`` (absent in files written before it existed) is the rerun of a finding: its
seed, verdict, summary and evidence, and whether it confirmed the finding; None when the first
run found nothing.  ``caveats`` (absent in files written before they existed) are the claim's
caveats, each ``{"kind", "text"}`` (:class:`~dpclaims.vocabulary.CaveatKind`)."""

_KILLS = {"type": "array", "items": _STRING}
MUTANTS = {
    "type": "object",
    "required": ["budget", "mutation_score", "privacy_mutants", "audited", "killed", "matrix"],
    "properties": {
        "budget": _STRING,
        "mutation_score": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "privacy_mutants": _INTEGER,
        "audited": _INTEGER,
        "killed": _INTEGER,
        "matrix": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "mutant",
                    "audit",
                    "true_epsilon",
                    "claimed_epsilon",
                    "epsilon_lower",
                    "verdict",
                    "killed",
                    "seconds",
                ],
                "properties": {
                    "mutant": _STRING,
                    "audit": _STRING,
                    "true_epsilon": {"type": ["number", "string", "null"]},
                    "claimed_epsilon": _OPT_NUMBER,
                    "epsilon_lower": {"type": ["number", "string", "null"]},
                    "verdict": _STRING,
                    "killed": {"type": "boolean"},
                    "seconds": {"type": "number", "minimum": 0},
                },
            },
        },
        "audits": {
            "type": "object",
            "values": {
                "type": "object",
                "required": ["kills", "survivors"],
                "properties": {"kills": _KILLS, "survivors": _KILLS, "white_box": _KILLS},
            },
        },
    },
}
"""The kill matrix of ``dpclaims verify --mutants`` (:func:`dpclaims.claims.mutation.kill_matrix`),
optional in ``results.json``."""

SCHEMA = {
    "type": "object",
    "required": [
        "schema_version",
        "dpclaims_version",
        "created",
        "settings",
        "environment",
        "papers",
        "counts",
        "load_errors",
        "wall_time",
        "claims",
    ],
    "properties": {
        "schema_version": {"type": "integer", "const": SCHEMA_VERSION},
        "dpclaims_version": _STRING,
        "created": _STRING,
        "settings": {
            "type": "object",
            "required": ["budget", "seed", "backend", "workers", "papers", "claims", "options"],
            "properties": {
                "budget": _STRING,
                "seed": _INTEGER,
                "backend": _STRING,
                "workers": {"type": ["integer", "null"], "minimum": 1},
                "papers": {"type": ["array", "null"], "items": _STRING},
                "claims": {"type": ["array", "null"], "items": _STRING},
                "options": {"type": "object"},
            },
        },
        "environment": {
            "type": "object",
            "required": ["python", "platform", "cpu_count", "versions"],
            "properties": {
                "python": _STRING,
                "platform": _STRING,
                "cpu_count": {"type": ["integer", "null"]},
                "versions": {"type": "object"},
            },
        },
        "papers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "title"],
                "properties": {"id": _STRING, "title": _STRING},
            },
        },
        "counts": {
            "type": "object",
            "required": list(VERDICTS),
            "properties": {v: _INTEGER for v in VERDICTS},
        },
        "multiplicity": {
            "type": "object",
            "required": [
                "rate_tests",
                "audit_tests",
                "value_checks",
                "expected_false_first",
                "expected_false_confirmed",
                "findings_confirmed",
                "findings_not_confirmed",
            ],
            "properties": {
                "rate_tests": _INTEGER,
                "audit_tests": _INTEGER,
                "value_checks": _INTEGER,
                "expected_false_first": _NUMBER,
                "expected_false_confirmed": _NUMBER,
                "findings_confirmed": _INTEGER,
                "findings_not_confirmed": _INTEGER,
            },
        },
        "load_errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["module", "error"],
                "properties": {"module": _STRING, "error": _STRING},
            },
        },
        "wall_time": {"type": "number", "minimum": 0},
        "claims": {"type": "array", "items": CLAIM_RESULT},
        "mutants": {**MUTANTS, "type": ["object", "null"]},
    },
}
"""Schema of ``results.json`` (version :data:`SCHEMA_VERSION`)."""


class ResultsError(InputError):
    """A results document does not follow the schema; the message names the JSON path and the
    problem."""


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(instance: Any, schema: dict, path: str = "$") -> None:
    """Check ``instance`` against ``schema``; raise :class:`ResultsError` at the first problem."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[name](instance) for name in names):
            raise ResultsError(
                f"results {path}: expected {' or '.join(names)}, got {type(instance).__name__} "
                f"{_short(instance)}"
            )
    if "const" in schema and instance != schema["const"]:
        raise ResultsError(f"results {path}: must be {schema['const']!r}, got {_short(instance)}")
    if "enum" in schema and instance not in schema["enum"]:
        raise ResultsError(
            f"results {path}: must be one of {', '.join(map(str, schema['enum']))}, got "
            f"{_short(instance)}"
        )
    if _TYPES["number"](instance):
        for keyword, holds, relation in _BOUNDS:
            if keyword in schema and not holds(instance, schema[keyword]):
                raise ResultsError(
                    f"results {path}: must be {relation} {schema[keyword]}, got {_short(instance)}"
                )
    if isinstance(instance, dict):
        for key in schema.get("required", ()):
            if key not in instance:
                raise ResultsError(f"results {path}: missing required field {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in instance:
                validate(instance[key], sub, f"{path}.{key}")
        if "values" in schema:
            for key, value in instance.items():
                validate(value, schema["values"], f"{path}.{key}")
    if isinstance(instance, list):
        if "length" in schema and len(instance) != schema["length"]:
            raise ResultsError(
                f"results {path}: must have {schema['length']} items, got {len(instance)}"
            )
        for i, item in enumerate(instance if "items" in schema else ()):
            validate(item, schema["items"], f"{path}[{i}]")


_BOUNDS = (
    ("minimum", lambda value, bound: value >= bound, ">="),
    ("maximum", lambda value, bound: value <= bound, "<="),
    ("above", lambda value, bound: value > bound, ">"),
    ("below", lambda value, bound: value < bound, "<"),
)
"""Range keywords: (keyword, the test a number must pass, the relation in the message)."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_experiment_result(result: Any, where: str = "$") -> None:
    """Check what an experiment's ``run()`` returned: type, a checked verdict, summary and evidence.

    Raises
    ------
    ResultsError
        The dict lacks a field, has a verdict other than :data:`CHECKED_VERDICTS`, or
        an audit/rate/value evidence without the fields its report needs.
    """
    validate(
        result,
        {
            "type": "object",
            "required": ["type", "verdict", "summary", "evidence"],
            "properties": {
                "type": _STRING,
                "verdict": {"type": "string", "enum": list(CHECKED_VERDICTS)},
                "summary": _STRING,
                "evidence": {"type": "object"},
            },
        },
        where,
    )
    parts = result["evidence"].get("parts")
    if isinstance(parts, dict):  # a combined experiment: every part is itself an experiment result
        for name, part in parts.items():
            validate_experiment_result(part, f"{where}.evidence.parts.{name}")
        return
    schema = EVIDENCE_SCHEMAS.get(result["type"])
    if schema is not None:
        validate(result["evidence"], schema, f"{where}.evidence")
    if result["type"] == "rate":
        _check_replicates(result["evidence"]["sweep"], f"{where}.evidence.sweep")


def _check_replicates(sweep: dict, where: str) -> None:
    """A sweep's ``errors`` hold one row per value, every row as long as the first."""
    values, rows = sweep["values"], sweep["errors"]
    if len(rows) != len(values):
        raise ResultsError(
            f"results {where}.errors: {len(rows)} rows of replicates for {len(values)} values; "
            "a sweep has one row per value"
        )
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]) or not row:
            raise ResultsError(
                f"results {where}.errors[{i}]: {len(row)} replicates where row 0 has "
                f"{len(rows[0])}; every value has the same number of replicates (at least one)"
            )


def validate_results(results: Any) -> None:
    """Check a whole results document (a :class:`~dpclaims.results.Results` or its JSON object)
    against :data:`SCHEMA` and the cross-field rules.

    Raises
    ------
    ResultsError
        The first problem found, naming its JSON path.
    """
    if callable(getattr(results, "to_json", None)):  # a Results: check what it writes
        results = to_jsonable(results.to_json())
    if isinstance(results, dict) and results.get("schema_version") not in (None, SCHEMA_VERSION):
        raise ResultsError(
            f"results $.schema_version: this dpclaims reads version {SCHEMA_VERSION}, the file has "
            f"{results['schema_version']!r}; re-run dpclaims verify with this version"
        )
    validate(results, SCHEMA)
    seen: set[str] = set()
    papers = {p["id"] for p in results["papers"]}
    for i, entry in enumerate(results["claims"]):
        where = f"$.claims[{i}]"
        if entry["id"] in seen:
            raise ResultsError(f"results {where}.id: duplicate claim id {entry['id']!r}")
        seen.add(entry["id"])
        if entry["paper"] not in papers:
            raise ResultsError(
                f"results {where}.paper: {entry['paper']!r} is not listed in $.papers"
            )
        verdict = entry["verdict"]
        if verdict in NOT_RUN and not entry["reason"]:
            raise ResultsError(f"results {where}.reason: a {verdict} claim needs the reason")
        if verdict == Verdict.ERROR and not entry["error"]:
            raise ResultsError(f"results {where}.error: an error result needs the message")
        if verdict in CHECKED_VERDICTS:
            validate_experiment_result(entry, where)
    counts = {v: 0 for v in VERDICTS}
    for entry in results["claims"]:
        counts[entry["verdict"]] += 1
    if {v: results["counts"][v] for v in VERDICTS} != counts:
        raise ResultsError(
            f"results $.counts: {results['counts']} do not match the claims' verdicts {counts}"
        )
