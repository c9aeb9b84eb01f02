"""Selecting and running claims (claims/run.py): every fault of an experiment ends in its entry."""

import math

import numpy as np
import pytest

from dpclaims import claims
from dpclaims.claims import Registry, UnknownClaimError, get
from dpclaims.claims.experiments import _FACTORIES
from dpclaims.claims.run import (
    claim_seed,
    confirmation_seed,
    multiplicity,
    run_claim,
    run_claims,
    select_claims,
    to_jsonable,
)
from dpclaims.errors import InputError
from dpclaims.execution import Execution, Serial
from dpclaims.reports import exit_code
from dpclaims.results import VERDICTS, LoadError

SERIAL = Execution(backend="serial")

CLAIM = "dpgd.calibration"


class Returns:
    def __init__(self, value):
        self.value = value

    def run(self, *, seed=0, execution=None):
        self.execution = execution
        return self.value(seed) if callable(self.value) else self.value


@pytest.fixture
def register(monkeypatch):
    claims.registered_experiments()

    def put(factory):
        monkeypatch.setitem(_FACTORIES, CLAIM, factory)

    return put


def test_select_by_paper_and_glob_keeps_spec_order():
    ids = [
        c.id
        for c in select_claims(papers=["murata-suzuki-2023"], patterns=["diff2bvr.*", "dpgd.*"])
    ]
    assert ids and all(i.startswith(("diff2bvr.", "dpgd.")) for i in ids)
    everything = [c.id for c in select_claims(registry=Registry.discover(installed=False))]
    assert len(everything) == 152 and ids == [i for i in everything if i in ids]


def test_selection_errors_name_the_problem():
    with pytest.raises(UnknownClaimError, match="did you mean 'dpgd.calibration'"):
        select_claims(patterns=["dpgd.calibratoin"])
    with pytest.raises(InputError, match="matches no claim id"):
        select_claims(patterns=["nothing.*"])
    with pytest.raises(InputError, match="papers must be one of"):
        select_claims(papers=["someone-1999"])


def test_claim_seed_is_per_claim_and_reproducible():
    assert claim_seed(0, "a") == claim_seed(0, "a") != claim_seed(0, "b")
    assert claim_seed(1, "a") != claim_seed(0, "a") and 0 <= claim_seed(7, "x") < 2**32


def test_the_experiment_gets_its_claim_seed(register):
    register(
        lambda claim, budget: Returns(
            lambda seed: {
                "type": "value",
                "verdict": "consistent",
                "summary": str(seed),
                "evidence": {"checks": {}},
            }
        )
    )
    entry = run_claim(get(CLAIM), seed=5, execution=SERIAL)
    assert entry.summary == str(claim_seed(5, CLAIM)) == str(entry.seed)


@pytest.mark.parametrize(
    "factory, fragment",
    [
        (lambda claim, budget: 1 / 0, "ZeroDivisionError: division by zero"),
        (lambda claim, budget: Returns(None), "experiment result: expected object"),
        (
            lambda claim, budget: Returns(
                {"type": "value", "verdict": "fine", "summary": "", "evidence": {}}
            ),
            "experiment result.verdict: must be one of",
        ),
        (
            lambda claim, budget: Returns(
                {"type": "audit", "verdict": "consistent", "summary": "", "evidence": {}}
            ),
            "experiment result.evidence: missing required field 'epsilon_lower'",
        ),
    ],
)
def test_faults_become_error_entries(register, factory, fragment):
    register(factory)
    entry = run_claim(get(CLAIM), execution=SERIAL)
    assert entry.verdict == "error" and fragment in entry.error


def test_no_experiment_and_context_only_claims_are_not_checkable(monkeypatch):
    claims.registered_experiments()
    monkeypatch.delitem(_FACTORIES, CLAIM, raising=False)
    results = run_claims([get(CLAIM), get("lowerbound.none_for_nonconvex")], execution=SERIAL)
    reasons = [e.reason for e in results.claims]
    assert reasons[0] == "no experiment yet" and "open problem" in reasons[1]
    assert results.counts["not_checkable"] == 2 and exit_code(results) == 0


def test_a_budget_skip_is_skipped_not_not_checkable():
    selected = [get("experiments.regression"), get("cited.dp_srm")]
    quick = run_claims(selected, budget="quick", execution=SERIAL)
    skipped, unchecked = quick.claims
    assert skipped.verdict == "skipped" and "R = 2000 rounds" in skipped.reason
    assert "--budget standard or full" in skipped.summary and skipped.seed is None
    assert unchecked.verdict == "not_implemented"  # a cited algorithm not implemented here
    assert quick.counts["skipped"] == 1 and quick.counts["not_implemented"] == 1
    assert exit_code(quick) == 0


def test_numpy_evidence_is_made_plain(register):
    register(
        lambda claim, budget: Returns(
            {
                "type": "value",
                "verdict": np.str_("consistent"),
                "summary": "ok",
                "evidence": {
                    "checks": {},
                    "a": np.arange(3),
                    "b": np.float32(0.5),
                    "c": (np.inf, np.bool_(True)),
                },
            }
        )
    )
    entry = run_claim(get(CLAIM))
    assert entry.evidence.to_json() == {"checks": {}, "a": [0, 1, 2], "b": 0.5, "c": [None, True]}


def test_to_jsonable():
    assert to_jsonable({1: (np.int64(2), math.nan), "s": {"x"}}) == {"1": [2, None], "s": "{'x'}"}


def test_bad_run_settings_fail_before_anything_runs():
    with pytest.raises(InputError, match="budget must be one of"):
        run_claims([get(CLAIM)], budget="huge")
    with pytest.raises(InputError, match="workers must be a whole number >= 1"):
        run_claims([get(CLAIM)], execution=Execution(workers=0))
    with pytest.raises(InputError, match="backend must be one of"):
        run_claims([get(CLAIM)], execution=Execution(backend="gpu"))


def test_exit_code_counts_violations_inconsistencies_and_errors():
    base = {v: 0 for v in VERDICTS}
    assert exit_code({"counts": {**base, "consistent": 3, "inconclusive": 1, "skipped": 2}}) == 0
    for verdict in ("violation", "inconsistent", "error"):
        assert exit_code({"counts": {**base, verdict: 1}}) == 1


PAPER = """
[paper]
id = "{paper}"
title = "A toy paper"
experiments = "{module}"

[[claims]]
id = "{paper}.claim"
paper = "{paper}"
kind = "privacy"
algorithm = "Toy"
statement = "Toy is DP."
formula = "-"
regime = "all"
source = "Theorem 1"
exponents = {{}}
"""


def _paper(folder, paper, module, code):
    """A folder holding one toy paper and its experiments module ``code``."""
    folder.mkdir()
    (folder / "paper.toml").write_text(PAPER.format(paper=paper, module=module))
    (folder / f"{module}.py").write_text(code)
    return folder


def test_a_broken_experiments_module_is_reported_and_does_not_hide_the_others(tmp_path):
    broken = _paper(
        tmp_path / "a", "broken-paper", "run_test_broken", "raise RuntimeError('half-written')\n"
    )
    fine = _paper(
        tmp_path / "b",
        "fine-paper",
        "run_test_fine",
        "from dpclaims.claims import register_experiment\n"
        "from dpclaims.claims.standard import ValueExperiment\n\n\n"
        "@register_experiment('fine-paper.claim')\n"
        "def value_one(claim, budget):\n"
        "    return ValueExperiment(lambda rng: {'x': 1.0}, expected={'x': 1.0})\n",
    )
    registry = Registry.discover(folders=[broken, fine], installed=False)
    selected = registry.select(paper="broken-paper") + registry.select(paper="fine-paper")
    results = run_claims(selected, execution=SERIAL)
    assert results.load_errors == (LoadError("run_test_broken", "RuntimeError: half-written"),)
    first, second = results.claims
    assert first.verdict == "error" and "'run_test_broken' of paper 'broken-paper'" in (first.error)
    assert second.verdict == "consistent" and exit_code(results) == 1
    assert [p.id for p in results.papers] == ["broken-paper", "fine-paper"]
    assert claims.status(selected[0]).startswith("error: experiments module 'run_test_broken'")


def test_one_execution_reaches_each_experiment_with_a_checkpoint_folder_per_claim(
    register, tmp_path
):
    experiment = Returns(_value("consistent"))
    register(lambda claim, budget: experiment)
    execution = Execution(backend="serial", workers=1, checkpoint=str(tmp_path))
    run_claims([get(CLAIM)], execution=execution)
    got = experiment.execution
    assert (got.backend, got.workers) == (Serial(), 1)
    assert got.checkpoint == str(tmp_path / CLAIM)


def _value(verdict, name="q"):
    checks = {name: {"ok": False}}
    return {"type": "value", "verdict": verdict, "summary": verdict, "evidence": {"checks": checks}}


def _seeded(first):
    """An experiment whose verdict is ``first(seed)``."""
    return lambda claim, budget: Returns(lambda seed: _value(first(seed)))


def test_a_finding_a_rerun_does_not_repeat_is_inconclusive_with_both_runs(register):
    first = claim_seed(3, CLAIM)
    register(_seeded(lambda seed: "inconsistent" if seed == first else "consistent"))
    entry = run_claim(get(CLAIM), seed=3, execution=SERIAL)
    assert entry.verdict == "inconclusive" and entry.reason.startswith("not confirmed")
    confirmation = entry.confirmation
    assert confirmation.seed == confirmation_seed(3, CLAIM) != entry.seed
    assert confirmation.confirmed is False and confirmation.outcome.verdict == "consistent"
    assert entry.evidence.checks and confirmation.outcome.evidence.checks


def test_a_repeated_finding_stands_and_confirmation_can_be_switched_off(register):
    register(_seeded(lambda seed: "violation"))
    entry = run_claim(get(CLAIM), seed=0, execution=SERIAL)
    assert entry.verdict == "violation" and entry.confirmation.confirmed is True
    unconfirmed = run_claim(get(CLAIM), seed=0, execution=SERIAL, confirm=False)
    assert unconfirmed.verdict == "violation" and unconfirmed.confirmation is None


def _rate(verdict, direction="slower"):
    sweep = {
        "param": "n",
        "values": [1, 10],
        "errors": [[1, 1], [1, 1]],
        "replicates": 2,
        "seed": 0,
    }
    fit = {
        "exponent": 0.0,
        "intercept": 0.0,
        "interval": [-1, 1],
        "confidence": 0.95,
        "method": "logs",
    }
    check = {
        "verdict": verdict,
        "direction": direction,
        "exponent": 0.0,
        "interval": [-1, 1],
        "expected": -1,
        "margin": 0.1,
        "confidence": 0.9,
    }
    return {
        "type": "rate",
        "verdict": verdict,
        "summary": verdict,
        "evidence": {"sweep": sweep, "fit": fit, "check": check},
    }


def test_only_the_same_part_and_direction_confirm_a_finding(register):
    def combined(seed):
        first = seed == claim_seed(0, CLAIM)
        parts = {
            "a": _rate("inconsistent" if first else "consistent"),
            "b": _rate("consistent" if first else "inconsistent"),
        }
        return {
            "type": "rate",
            "verdict": "inconsistent",
            "summary": "",
            "evidence": {"parts": parts},
        }

    register(lambda claim, budget: Returns(combined))
    assert run_claim(get(CLAIM), seed=0, execution=SERIAL).verdict == "inconclusive"
    first = claim_seed(0, CLAIM)
    register(
        lambda claim, budget: Returns(
            lambda seed: _rate("inconsistent", "slower" if seed == first else "faster")
        )
    )
    assert run_claim(get(CLAIM), seed=0, execution=SERIAL).verdict == "inconclusive"
    register(lambda claim, budget: Returns(lambda seed: _rate("inconsistent")))
    assert run_claim(get(CLAIM), seed=0, execution=SERIAL).verdict == "inconsistent"


def test_multiplicity_counts_tests_and_expected_false_findings(
    make_claim, audit_record, rate_record
):
    check = rate_record()  # its test at confidence 0.9: one-sided level 0.05
    rate = make_claim("r", type="rate", evidence=check)
    audit = make_claim(
        "a",
        "violation",
        type="audit",
        evidence=audit_record(),  # at confidence 0.95
        confirmation={"seed": 1, "confirmed": True},
    )
    parts = {"r": {**_value("consistent"), "type": "rate", "evidence": check}}
    parts["v"] = _value("consistent")
    combined = make_claim(
        "c",
        "inconclusive",
        type="rate",
        confirmation={"seed": 2, "confirmed": False},
        evidence={"parts": parts},
    )
    skipped = make_claim("s", "not_checkable", type=None, evidence={})
    out = multiplicity([rate, audit, combined, skipped])
    assert (out.rate_tests, out.audit_tests, out.value_checks) == (2, 1, 1)
    assert out.expected_false_first == pytest.approx(0.15)
    assert out.expected_false_confirmed == pytest.approx(0.0075)
    assert (out.findings_confirmed, out.findings_not_confirmed) == (1, 1)
    assert out.levels == (0.05,)


def test_a_claim_declared_a_transcription_agrees_as_formula(monkeypatch, audit_record):
    """diff2gd.prop41.calibration is declared ``transcription = true``: its computed quantities
    matching the paper's formula give ``formula``; a mismatch stays ``inconsistent``; an audit
    is never a transcription."""
    from dpclaims.claims.run import _declared_formula
    from dpclaims.results import Outcome

    claims.registered_experiments()
    declared = get("diff2gd.prop41.calibration")
    assert declared.transcription and not get(CLAIM).transcription
    for verdict, expected in (
        ("consistent", "formula"),
        ("consistent_weak", "formula"),
        ("inconsistent", "inconsistent"),
    ):
        experiment = Returns(_value(verdict))
        monkeypatch.setitem(_FACTORIES, declared.id, lambda claim, budget, e=experiment: e)
        result = run_claim(declared, execution=SERIAL, confirm=False)
        assert result.verdict == expected
        assert ("declares this check a transcription" in result.summary) == (expected == "formula")
    audit = Outcome.from_json(
        {"type": "audit", "verdict": "consistent", "summary": "", "evidence": audit_record()}
    )
    assert _declared_formula(declared, audit).verdict == "consistent"
