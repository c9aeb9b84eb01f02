"""The kill matrix: every privacy mutant names a registry audit; rows, score and report section."""

import pytest

from dpclaims import claims
from dpclaims.audit import AuditTest
from dpclaims.claims.mutation import (
    AUDIT_OF,
    audit_of,
    audit_settings,
    kill_matrix,
    kill_matrix_lines,
)
from dpclaims.cli import main
from dpclaims.errors import InputError
from dpclaims.reports.markdown import _mutants_section
from dpclaims.targets.mutants import list_mutants


def test_every_privacy_mutant_names_an_existing_registry_audit():
    packaged = {m.name for m in list_mutants(kind="privacy") if m.audit is None}
    assert packaged == set(AUDIT_OF)  # a plugin's mutants (once imported) name their own
    ids = {c.id for c in claims.load()}
    audits = {audit_of(m) for m in list_mutants(kind="privacy")}
    assert all(a in ids for a in audits if not a.startswith(("catalog:", "realbug:")))


def test_audit_settings_follow_the_registry_budget():
    quick, standard = (
        audit_settings("lla24.alg2.abovethreshold", "quick"),
        audit_settings("lla24.alg2.abovethreshold", "standard"),
    )
    assert quick["test"].method == "threshold" and standard["trials"] > quick["trials"]
    assert audit_settings("catalog:laplace", "quick") == {
        "trials": 20_000,
        "test": AuditTest(method="threshold"),
        "confidence": 0.95,
    }


def test_kill_matrix_kills_audits_and_lists_white_box_mutants():
    report = kill_matrix(names=["laplace-half-scale", "ghazi23-m4-sigma-no-8kappa"], budget="quick")
    rows = {r["mutant"]: r for r in report["matrix"]}
    assert (
        rows["laplace-half-scale"]["killed"] and rows["laplace-half-scale"]["epsilon_lower"] > 1.0
    )
    assert rows["ghazi23-m4-sigma-no-8kappa"]["verdict"] == "not audited"
    assert (
        report["mutation_score"] == 1.0
        and report["audited"] == 1
        and report["privacy_mutants"] == 2
    )
    assert report["audits"]["catalog:laplace"]["kills"] == ["laplace-half-scale"]
    text = "\n".join(kill_matrix_lines(report))
    assert "catalog:laplace kills laplace-half-scale" in text and "white-box only" in text


def test_report_says_when_an_audit_kills_none(make_results):
    row = {
        "mutant": "m",
        "paper": "p",
        "audit": "a.b",
        "true_epsilon": 1.5,
        "claimed_epsilon": 1.0,
        "epsilon_lower": 0.4,
        "verdict": "consistent",
        "killed": False,
        "seconds": 1.0,
        "trials": 100,
        "caught_by": "audit",
    }
    report = {
        "budget": "quick",
        "mutation_score": 0.0,
        "privacy_mutants": 1,
        "audited": 1,
        "killed": 0,
        "matrix": [row],
        "audits": {"a.b": {"kills": [], "survivors": ["m"], "white_box": []}},
    }
    text = "\n".join(_mutants_section(make_results().with_mutants(report)))
    assert (
        "## Mutation testing" in text
        and "a.b kills none of its algorithm's 1 audited privacy mutant(s): m" in text
    )


def test_unknown_paper_or_mutant_is_one_clear_error(capsys):
    with pytest.raises(InputError, match="no privacy mutant of paper"):
        kill_matrix(papers="nope")
    with pytest.raises(InputError, match="unknown privacy mutant"):
        kill_matrix(names=["nope"])
    assert main(["mutants", "--paper", "nope"]) == 2
    assert "no privacy mutant" in capsys.readouterr().err


def test_cli_audit_search_reports_the_pair(capsys):
    code = main(
        [
            "audit",
            "laplace-half-scale",
            "--search",
            "--delta",
            "0",
            "--trials",
            "4000",
            "--backend",
            "serial",
        ]
    )
    out = capsys.readouterr().out
    assert "pair " in out and "screened" in out and code in (0, 1)
