"""The results schema and its validator: valid documents pass, each kind of damage is named."""

import copy

import pytest

from dpclaims.claims import get
from dpclaims.claims.run import run_claims
from dpclaims.claims.standard import ValueExperiment
from dpclaims.execution import Execution
from dpclaims.reports import SCHEMA, ResultsError, validate_results
from dpclaims.results.schema import validate

CLAIM = "dpgd.calibration"


@pytest.fixture(scope="module")
def document():
    """A real results document: one value check (registered for the run) and one claim without
    experiment."""
    from dpclaims.claims.experiments import _FACTORIES, registered_experiments

    registered_experiments()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(
            _FACTORIES,
            CLAIM,
            lambda claim, budget: ValueExperiment(lambda rng: {"x": 1.0}, {"x": 1.0}),
        )
        selected = [get(CLAIM), get("lowy26.complexity.impossibility")]
        return run_claims(selected, execution=Execution(backend="serial")).to_json()


def test_a_real_document_is_valid(document):
    validate_results(document)
    assert [e["verdict"] for e in document["claims"]] == ["consistent", "not_checkable"]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: d.pop("claims"), "$: missing required field 'claims'"),
        (lambda d: d.update(schema_version=1), "reads version 2"),
        (lambda d: d["settings"].update(seed=-1), "$.settings.seed: must be >= 0"),
        (
            lambda d: d["settings"].update(workers="two"),
            "$.settings.workers: expected integer or null",
        ),
        (lambda d: d["claims"][0].update(verdict="fine"), "$.claims[0].verdict: must be one of"),
        (lambda d: d["claims"][0].update(wall_time=True), "$.claims[0].wall_time: expected number"),
        (
            lambda d: d["claims"][1].update(reason=None),
            "$.claims[1].reason: a not_checkable claim needs the reason",
        ),
        (lambda d: d["claims"][1].update(verdict="error", error=""), "$.claims[1].error"),
        (
            lambda d: d["claims"][1].update(verdict="skipped", reason=""),
            "a skipped claim needs the reason",
        ),
        (
            lambda d: d["claims"][0].update(type="rate"),
            "$.claims[0].evidence: missing required field 'sweep'",
        ),
        (lambda d: d["claims"][0]["evidence"].pop("checks"), "missing required field 'checks'"),
        (lambda d: d["claims"].append(copy.deepcopy(d["claims"][0])), "duplicate claim id"),
        (lambda d: d["claims"][0].update(paper="other-2020"), "is not listed in $.papers"),
        (lambda d: d["counts"].update(consistent=5), "$.counts"),
    ],
)
def test_each_kind_of_damage_is_named(document, damage, message):
    broken = copy.deepcopy(document)
    damage(broken)
    with pytest.raises(ResultsError) as info:
        validate_results(broken)
    assert message in str(info.value)


def test_validator_keywords():
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "array", "items": {"type": ["integer", "null"], "minimum": 1}},
            "b": {"const": 3},
            "c": {"enum": ["x", "y"]},
        },
    }
    validate({"a": [1, None, 5], "b": 3, "c": "y"}, schema)
    for bad, where in [
        ({"a": [0]}, "$.a[0]"),
        ({"a": [1.5]}, "$.a[0]"),
        ({"a": [True]}, "$.a[0]"),
        ({"a": [], "b": 4}, "$.b"),
        ({"a": [], "c": "z"}, "$.c"),
        ({}, "$: missing"),
        ([], "$:"),
    ]:
        with pytest.raises(ResultsError, match=__import__("re").escape(where)):
            validate(bad, schema)


def test_schema_names_every_top_level_field():
    # multiplicity came later: optional so that results.json files written before it still load
    optional = ("multiplicity", "mutants")  # later additions: older results.json files load
    assert SCHEMA["required"] == [k for k in SCHEMA["properties"] if k not in optional]
