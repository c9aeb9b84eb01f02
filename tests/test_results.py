"""The typed results document: JSON round trip, evidence classes, and the layer it sits in."""

import ast
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from dpclaims.results import (
    AuditEvidence,
    ClaimResult,
    CombinedEvidence,
    Evidence,
    Outcome,
    RateEvidence,
    RecordEvidence,
    Results,
    ResultsError,
    ValueEvidence,
    dumps_results,
    read_outcome,
    validate_results,
)

PACKAGE = Path(__file__).resolve().parents[1] / "dpclaims"


def test_json_round_trip_keeps_every_key_in_order(results):
    text = dumps_results(results)
    again = Results.from_json(json.loads(text))
    assert dumps_results(again) == text
    validate_results(results)
    assert results.counts["consistent"] == 2 and results.exit_code() == 0


def test_each_experiment_type_gets_its_evidence_class(results, rate_record):
    audit, rate, unchecked = results.claims
    assert isinstance(audit.evidence, AuditEvidence) and audit.evidence.epsilon_lower == 0.8
    assert isinstance(rate.evidence, RateEvidence) and rate.evidence.sweep["param"] == "n"
    assert type(unchecked.evidence) is RecordEvidence and unchecked.parts() == [unchecked]
    value = {"type": "value", "verdict": "consistent", "summary": "1/1", "evidence": {"checks": {}}}
    combined = Evidence.from_json(
        "rate",
        {"parts": {"r": {**value, "type": "rate", "evidence": rate_record()}, "v": value}},
    )
    assert isinstance(combined, CombinedEvidence)
    assert [type(p.evidence) for p in combined.parts.values()] == [RateEvidence, ValueEvidence]


def test_parts_of_a_combined_claim_render_their_own_rows(make_claim, audit_record, rate_record):
    def part(kind, verdict, evidence):
        return {"type": kind, "verdict": verdict, "summary": kind, "evidence": evidence}

    parts = {
        "audit": part("audit", "consistent", audit_record()),
        "sweep": part("rate", "inconsistent", rate_record()),
    }
    entry = make_claim("x.both", "inconsistent", evidence={"parts": parts})
    audit, sweep = entry.parts()
    assert (audit.id, sweep.id) == ("x.both [audit]", "x.both [sweep]")
    assert dict(audit.rows(footer=False))["trials"].startswith("1000 per dataset")
    assert entry.found() == [sweep] and entry.measured().startswith("sweep: slope -1.000")
    assert entry.key_figure() == "s"  # several parts: the summary


def test_an_outcome_is_typed_and_a_returned_mapping_is_read_through_one_door():
    evidence = ValueEvidence(checks={"c": {"value": 1.0, "expected": 1.0, "ok": True}}, note="n")
    outcome = Outcome("value", "consistent", "1/1 quantities match", evidence)
    for typed in (outcome, ClaimResult(**_NAMES, type="value", verdict="consistent")):
        assert not isinstance(typed, Mapping) and not hasattr(typed, "__getitem__")
    assert outcome.to_json()["evidence"] == {"checks": evidence.checks, "note": "n"}
    assert read_outcome(outcome) is outcome
    assert read_outcome(outcome.to_json()) == outcome  # a plugin's dict: validated and read
    with pytest.raises(ResultsError, match=r"part 'p'\.verdict"):
        read_outcome({**outcome.to_json(), "verdict": "skipped"}, "part 'p'")
    entry = ClaimResult.from_json({**_NAMES, **outcome.to_json(), "reason": None, "error": None,
                                   "seed": 0, "wall_time": 0.0})  # fmt: skip
    assert entry.outcome == outcome and isinstance(entry.outcome.evidence, ValueEvidence)


_NAMES = dict.fromkeys(("id", "paper", "kind", "algorithm", "source", "statement"), "a")


def test_typed_evidence_round_trips_through_json_unchanged(audit_record, rate_record):
    for kind, record in (("audit", audit_record()), ("rate", rate_record()), ("x", {"k": 1})):
        evidence = Evidence.from_json(kind, record)
        again = Evidence.from_json(kind, json.loads(json.dumps(evidence.to_json())))
        assert again == evidence and again.to_json() == evidence.to_json()
    audit = Evidence.from_json("audit", audit_record())
    assert audit.counts.false_positives == 30 and audit.test.ci == "clopper-pearson"
    assert audit.to_json()["fpr"] == 30 / 800 and audit.reach is None
    assert audit.to_json()["reach_factor"] is None and "bound" not in audit.to_json()
    assert Evidence.from_json("audit", {}) == RecordEvidence()  # an audit that never ran


def _imports(folder):
    for path in (PACKAGE / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                yield path, "." * node.level + (node.module or "")
            elif isinstance(node, ast.Import):
                yield from ((path, alias.name) for alias in node.names)


def test_results_sit_below_claims_and_reports_and_reports_below_claims():
    for folder, above in (("results", ("claims", "reports")), ("reports", ("claims",))):
        for path, module in _imports(folder):
            name = module.lstrip(".").removeprefix("dpclaims.")
            up = module.startswith("..") or module.startswith("dpclaims.")
            assert not (up and name.split(".")[0] in above), (path, module)


BEFORE = Path(__file__).resolve().parent / "data" / "results_v_before.json"
"""The quick run at seed 0 written by dpclaims before the typed evidence (#39, main a9d8708)."""


def test_a_results_file_from_before_the_typed_evidence_loads_and_renders():
    from dpclaims.reports.markdown import render_markdown
    from dpclaims.results import read_results

    results = read_results(BEFORE)
    assert dumps_results(results) == BEFORE.read_text(encoding="utf-8")  # byte for byte
    kinds = {type(p.evidence) for e in results.claims if e.checked for p in e.parts()}
    assert kinds == {AuditEvidence, RateEvidence, ValueEvidence}
    assert any(isinstance(e.evidence, CombinedEvidence) for e in results.claims)
    report = render_markdown(results, {})
    for entry in results.claims:
        assert f"`{entry.id}`" in report or entry.id in report
    audit = next(e for e in results.claims if isinstance(e.evidence, AuditEvidence))
    assert f"| lower bound | {audit.evidence.epsilon_lower:.4f} (certified) |" in report


def test_an_evidence_requires_the_keys_of_its_fields_without_a_default():
    from dpclaims.results.codec import required
    from dpclaims.results.schema import AUDIT_EVIDENCE

    assert required(RateEvidence) == ["sweep", "fit", "check"]
    assert required(ValueEvidence) == ["checks"]
    assert AUDIT_EVIDENCE["required"] == required(AuditEvidence)
    assert set(required(AuditEvidence)) == {
        *("epsilon_lower", "epsilon", "delta", "unit", "relation", "confidence", "method"),
        *("false_positives", "false_negatives", "n_negative", "n_positive", "fpr_upper"),
        *("fnr_upper", "trials", "certification_trials", "certified", "calibration_trials"),
        *("ci", "seed", "tradeoff"),
    }  # the keys results.json has required of an audit since its first version
