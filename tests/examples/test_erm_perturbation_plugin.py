"""The example plugin end to end: found through its `dpclaims.papers` entry point, its quick
verify runs every claim green.

Where the example is installed (CI runs ``pip install -e examples/erm_perturbation``) the test
uses that installation; elsewhere it installs nothing: a distribution's metadata (a ``.dist-info``
folder with the example's entry point) on ``PYTHONPATH`` is what ``pip install`` leaves behind,
and is what dpclaims reads.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "erm_perturbation"
PAPER = "chaudhuri-monteleoni-sarwate-2011"
CLAIMS = [
    "cms11.alg1.privacy",
    "cms11.alg1.sensitivity",
    "cms11.alg1.excess_risk",
    "cms11.alg2.privacy",
    "cms11.alg2.excess_risk",
]


@pytest.fixture(scope="module")
def installed(example_server):
    """Runs ``python -m dpclaims.cli`` where the example is an installed distribution (a fresh
    process forked from one that imported dpclaims)."""
    return example_server


def _dpclaims(server, cwd, argv):
    return server.run(["dpclaims", *argv], cwd=cwd, module="dpclaims.cli", timeout=600)


def test_list_shows_the_example_paper(installed, tmp_path):
    done = _dpclaims(installed, tmp_path, ["list", "--paper", PAPER, "--json"])
    assert done.returncode == 0, done.stderr
    assert [claim["id"] for claim in json.loads(done.stdout)] == CLAIMS


def test_quick_verify_of_the_example_is_green(installed, tmp_path):
    argv = ["verify", "--paper", PAPER, "--budget", "quick", "--out", "report", "--json"]
    done = _dpclaims(installed, tmp_path, argv)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    verdicts = {claim["id"]: claim["verdict"] for claim in summary["claims"]}
    assert verdicts == dict.fromkeys(CLAIMS, "consistent"), summary["claims"]  # none weak
    assert summary["load_errors"] == []
    assert (tmp_path / "report" / "report.html").is_file()


def test_rate_runs_a_plugin_claim_and_its_function(installed, tmp_path):
    grid = ["--values", "200,400,800,1600,3200", "--replicates", "3", "--json"]
    done = _dpclaims(installed, tmp_path, ["rate", "cms11.alg1.excess_risk", *grid])
    assert done.returncode == 0, done.stderr
    claim = json.loads(done.stdout)
    assert claim["paper"] == PAPER and claim["verdict"] == "consistent"
    fixed = [
        "--fixed",
        "d=5",
        "--fixed",
        "epsilon=1.0",
        "--fixed",
        "lam=0.1",
        "--fixed",
        "draws=100",
    ]
    control = ["--control", "erm_perturbation.experiments:origin_excess_risk"]
    own = ["--expected", "-2", "--bound", "upper", *fixed, *grid, *control]
    done = _dpclaims(
        installed, tmp_path, ["rate", "erm_perturbation.experiments:alg2_excess_risk", *own]
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "consistent"
    assert (tmp_path / "erm_perturbation.experiments.alg2_excess_risk.png").is_file()


def test_mutants_finds_and_kills_the_plugin_mutants(installed, tmp_path):
    """The plugin registers its β×2 mutants when its experiments module is imported; the
    kill matrix imports it, runs each through the audit the mutant names, and kills both."""
    argv = ["mutants", "--paper", PAPER, "--budget", "quick", "--backend", "serial", "--json"]
    done = _dpclaims(installed, tmp_path, argv)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {row["mutant"]: (row["audit"], row["verdict"]) for row in report["matrix"]}
    assert rows == {
        "cms11-m1-alg1-beta-x2": ("cms11.alg1.privacy", "violation"),
        "cms11-m2-alg2-beta-x2": ("cms11.alg2.privacy", "violation"),
    }
    assert report["mutation_score"] == 1.0
