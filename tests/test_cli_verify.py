"""End to end: ``dpclaims verify``, ``report``, ``rate`` on real claim ids, fake experiments."""

import base64
import fnmatch
import json
import re
from dataclasses import dataclass

import numpy as np
import pytest

from dpclaims import claims
from dpclaims.claims.experiments import _FACTORIES, register_experiment
from dpclaims.claims.standard import AuditExperiment, RateExperiment, ValueExperiment
from dpclaims.cli import main
from dpclaims.privacy import PrivacyClaim
from dpclaims.reports import SCHEMA_VERSION, validate_results
from dpclaims.target import AuditTarget
from dpclaims.targets.catalog import audit_target

SELECTION = "diff2gd.*,cited.dp_srm"
AUDIT_OK = "diff2gd.prop41.calibration"
AUDIT_BAD = "diff2gd.gdp_reference"
RATE = "diff2gd.thm43.utility"
VALUE = "diff2gd.propD2.explicit_bound"
BROKEN = "diff2gd.thm43.rounds"
OPTIONS = "diff2gd.table1.gradient_complexity"
COMBINED = "diff2gd.remark44.improvement_regime"


def power_law(value, rng, scale=1.0):
    """Error ~ scale / value with 10% log-normal noise: a rate experiment with exponent -1."""
    return scale / value * np.exp(0.1 * rng.standard_normal())


def flat(value, rng, scale=1.0):
    """The trivial algorithm of ``power_law``: an error that does not fall with the value."""
    return scale * np.exp(0.1 * rng.standard_normal())


def _audit(name, epsilon, delta, trials):
    def build():
        claim = PrivacyClaim(epsilon, delta)
        target = audit_target(name, claim)
        return AuditTarget(mechanism=target.mechanism, d0=target.d0, d1=target.d1, claim=claim)

    return AuditExperiment(build=build, trials=trials, note=f"built-in target {name}")


class Broken:
    def run(self, *, seed=0, execution=None):
        raise RuntimeError("the fake experiment broke\nsecond line")


@dataclass(frozen=True)
class Recorder:
    """Reports the Execution it got."""

    def run(self, *, seed=0, execution=None):
        where = {"checkpoint": execution.checkpoint, "scheduler": execution.scheduler}
        return {
            "type": "value",
            "verdict": "consistent",
            "summary": f"checkpoint={execution.checkpoint}",
            "evidence": {"checks": {}, **where},
        }


@dataclass(frozen=True)
class Combined:
    """Two checks of one claim, reported as parts."""

    parts: dict

    def run(self, *, seed=0, execution=None):
        results = {
            name: part.run(seed=seed, execution=execution) for name, part in self.parts.items()
        }
        return {
            "type": "rate",
            "verdict": "consistent",
            "summary": "both parts hold",
            "evidence": {"parts": results},
        }


FAKES = {
    AUDIT_OK: lambda claim, budget: _audit("gaussian", 1.0, 1e-5, 4000),
    AUDIT_BAD: lambda claim, budget: _audit("laplace-half-scale", 1.0, 0.0, 20000),
    RATE: lambda claim, budget: RateExperiment(
        power_law,
        "n",
        [10, 20, 40, 80, 160, 320],
        expected=-1.0,
        replicates=4,
        margin=0.15,
        trivial=flat,
    ),
    VALUE: lambda claim, budget: ValueExperiment(
        lambda rng: {"sigma": 2.0, "rounds": (10.0, 9.0, 11.0)}, {"sigma": 2.0, "rounds": 10.0}
    ),
    BROKEN: lambda claim, budget: Broken(),
    OPTIONS: lambda claim, budget: Recorder(),
    COMBINED: lambda claim, budget: Combined(
        {
            "slope": RateExperiment(
                power_law, "m", [10, 100, 1000, 10000], expected=-1.0, replicates=3, margin=0.2
            ),
            "formula": ValueExperiment(lambda rng: {"c": 1.0}, {"c": 1.0}),
        }
    ),
}


@pytest.fixture(scope="module")
def fakes():
    """Only the fakes above are registered among the selected claims; restored after."""
    claims.registered_experiments()  # the packaged ones first, so the fakes replace them
    with pytest.MonkeyPatch.context() as mp:
        for claim in claims.load():
            if any(fnmatch.fnmatchcase(claim.id, p) for p in SELECTION.split(",")):
                mp.setitem(_FACTORIES, claim.id, None)
                del _FACTORIES[claim.id]
        for claim_id, factory in FAKES.items():
            register_experiment(claim_id, replace=True)(factory)
        yield


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def report(fakes, tmp_path_factory):
    """One reduced verify run shared by the tests below."""
    out = tmp_path_factory.mktemp("verify") / "report"
    code = main(
        ["verify", "--claims", SELECTION, "--out", str(out), "--backend", "serial", "--seed", "3"]
    )
    return code, out


def test_verify_writes_three_outputs_and_exits_one_on_a_violation(report):
    code, out = report
    assert code == 1
    names = sorted(p.name for p in out.iterdir())
    assert names == [".dpclaims-report", "figures", "report.html", "report.md", "results.json"]
    written = (out / ".dpclaims-report").read_text().splitlines()[1:]
    files = [p for p in out.rglob("*") if p.is_file() and p.name[0] != "."]
    assert [line.split("  ")[-1] for line in written if not line.endswith("/")] == sorted(
        str(p.relative_to(out)) for p in files
    )
    assert [line for line in written if line.endswith("/")] == ["figures/"]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_results_json_follows_the_schema_and_records_every_verdict(report):
    _, out = report
    results = json.loads((out / "results.json").read_text())
    validate_results(results)
    assert results["schema_version"] == SCHEMA_VERSION
    assert set(results["environment"]["versions"]) >= {
        "dpclaims",
        "numpy",
        "scipy",
        "dp-accounting",
    }
    assert results["settings"]["seed"] == 3 and results["settings"]["backend"] == "serial"
    by_id = {e["id"]: e for e in results["claims"]}
    selected = [c.id for c in claims.load() if fnmatch.fnmatchcase(c.id, "diff2gd.*")] + [
        "cited.dp_srm"
    ]
    assert set(by_id) == set(selected)
    # 4000 trials: the audit could catch only a violation beyond 2× its pair's leakage
    assert by_id[AUDIT_OK]["verdict"] == "consistent_weak" and by_id[AUDIT_OK]["type"] == "audit"
    assert by_id[AUDIT_BAD]["verdict"] == "violation"
    assert by_id[AUDIT_BAD]["evidence"]["epsilon_lower"] > 1.0
    assert (
        by_id[RATE]["verdict"] == "consistent"
        and by_id[RATE]["evidence"]["sweep"]["replicates"] == 4
    )
    assert by_id[VALUE]["verdict"] == "consistent"
    assert by_id[BROKEN]["verdict"] == "error"
    assert by_id[BROKEN]["error"] == "RuntimeError: the fake experiment broke"
    cited = by_id["cited.dp_srm"]
    assert cited["verdict"] == "not_implemented" and "not verified here" in cited["reason"]
    assert by_id["diff2gd.prop41.rdp_to_dp"]["reason"] == "no experiment yet"
    assert all(e["seed"] is not None and e["wall_time"] > 0 for e in results["claims"] if e["type"])
    assert results["counts"]["consistent"] == 4 and results["counts"]["consistent_weak"] == 1
    assert results["counts"]["not_checkable"] == 1 and results["counts"]["not_implemented"] == 1
    assert set(by_id[COMBINED]["evidence"]["parts"]) == {"slope", "formula"}


def test_html_is_self_contained_and_names_every_claim(report):
    _, out = report
    html = (out / "report.html").read_text()
    results = json.loads((out / "results.json").read_text())
    for entry in results["claims"]:
        assert entry["id"] in html
    assert "<script" not in html.lower()
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, flags=re.IGNORECASE)
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert (
        len(images) == 5
    )  # two audits, one rate, the rate part of the combined check, the summary
    assert f"{COMBINED} [slope]" in html and f"{COMBINED} [formula]" in html
    assert all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    assert re.findall(r"<img[^>]*>", html) and all(
        "data:image/png" in tag for tag in re.findall(r"<img[^>]*>", html)
    )


def test_markdown_links_figures_that_exist(report):
    _, out = report
    md = (out / "report.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(links) == 5 and all((out / link).is_file() for link in links)
    assert "| `diff2gd.gdp_reference` | murata-suzuki-2023 | privacy | **VIOLATION** |" in md


def test_report_rerenders_the_same_report_from_json_alone(report, tmp_path, capsys):
    code, out = report
    again = tmp_path / "again"
    code2, stdout, err = run(capsys, "report", out / "results.json", "--out", again)
    assert code2 == code == 1 and err == ""
    for name in ("report.md", "report.html", "results.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    assert sorted(p.name for p in (again / "figures").iterdir()) == sorted(
        p.name for p in (out / "figures").iterdir()
    )
    for figure in (out / "figures").iterdir():
        assert (again / "figures" / figure.name).read_bytes() == figure.read_bytes()
    assert "report:" in stdout


def test_verify_json_summary_and_exit_zero_when_all_checked_claims_hold(fakes, tmp_path, capsys):
    code, out, err = run(
        capsys,
        "verify",
        "--claims",
        f"{VALUE},diff2gd.prop41.rdp_to_dp",
        "--out",
        tmp_path / "r",
        "--json",
        "--backend",
        "serial",
    )
    payload = json.loads(out)
    assert code == 0 and payload["exit_code"] == 0 and err == ""  # no progress bar off a terminal
    assert payload["counts"]["consistent"] == 1 and payload["counts"]["not_checkable"] == 1
    assert [c["id"] for c in payload["claims"]] == ["diff2gd.prop41.rdp_to_dp", VALUE]
    assert payload["files"]["report.html"].endswith("report.html")


def test_progress_bar_on_a_terminal_unless_quiet(fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    code, _, err = run(capsys, "verify", "--claims", VALUE, "--out", tmp_path / "a")
    assert code == 0 and "verify" in err and "1/1" in err
    code, _, err = run(capsys, "verify", "--claims", VALUE, "--out", tmp_path / "b", "--quiet")
    assert code == 0 and err == ""


def test_one_execution_reaches_the_experiments(fakes, tmp_path, capsys, monkeypatch):
    # tcp://x:8786 stands for a reachable scheduler: reaching it is checked in
    # tests/test_faults_execution.py; here only the Execution that reaches the experiments is
    monkeypatch.setattr("dpclaims.execution.backends._reach_scheduler", lambda address, name: None)
    code, _, _ = run(
        capsys,
        "verify",
        "--claims",
        OPTIONS,
        "--out",
        tmp_path / "a",
        "--checkpoint",
        tmp_path / "ck",
    )
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    assert code == 0 and results["claims"][0]["evidence"]["checkpoint"] == str(
        tmp_path / "ck" / OPTIONS
    )
    assert results["settings"]["options"] == {"checkpoint": str(tmp_path / "ck")}
    code, _, _ = run(
        capsys,
        "verify",
        "--claims",
        OPTIONS,
        "--out",
        tmp_path / "b",
        "--scheduler",
        "tcp://x:8786",
    )
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    evidence = results["claims"][0]["evidence"]
    assert code == 0 and evidence["scheduler"] == "tcp://x:8786" and evidence["checkpoint"] is None
    assert results["settings"]["options"] == {"scheduler": "tcp://x:8786"}


def test_existing_output_directory_needs_force(fakes, tmp_path, capsys):
    target = tmp_path / "r"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    code, _, err = run(capsys, "verify", "--claims", VALUE, "--out", target)
    assert code == 2 and err.count("\n") == 1 and "already exists; pass --force" in err
    assert (target / "keep.txt").read_text() == "mine"
    code, _, err = run(capsys, "verify", "--claims", VALUE, "--out", target, "--force")
    assert code == 2 and err.count("\n") == 1 and "not a report folder dpclaims wrote" in err
    assert [p.name for p in target.iterdir()] == ["keep.txt"]


def test_force_replaces_a_report_dpclaims_wrote(fakes, tmp_path, capsys):
    target = tmp_path / "r"
    code, first, _ = run(capsys, "verify", "--claims", VALUE, "--out", target)
    stale = target / "figures" / "stale.png"
    stale.write_bytes(b"drawn by an older run")
    marker = target / ".dpclaims-report"
    marker.write_text(marker.read_text() + "figures/stale.png\n")
    code, again, _ = run(capsys, "verify", "--claims", VALUE, "--out", target, "--force")
    assert code == 0 and not stale.exists() and (target / "report.html").is_file()
    assert "1 claim: 1 consistent" in again and "report:" in again
    code, _, err = run(capsys, "report", target / "results.json", "--out", target, "--force")
    assert code == 0 and (target / "report.html").is_file()


def test_rate_command_runs_one_sweep_with_its_figure(fakes, tmp_path, capsys):
    figure = tmp_path / "rate.png"
    code, out, _ = run(
        capsys,
        "rate",
        RATE,
        "--values",
        "10,30,100,300,1000",
        "--replicates",
        "3",
        "--figure",
        figure,
        "--backend",
        "serial",
        "--json",
    )
    payload = json.loads(out)
    assert code == 0 and payload["verdict"] == "consistent"
    assert payload["evidence"]["sweep"]["values"] == [10, 30, 100, 300, 1000]
    assert payload["evidence"]["sweep"]["replicates"] == 3
    assert figure.read_bytes().startswith(b"\x89PNG") and payload["figure"] == str(figure)
    code, out, _ = run(capsys, "rate", RATE, "--figure", figure, "--force", "--backend", "serial")
    assert (
        code == 0
        and "verdict       consistent" in out
        and "exponent" not in out.split("verdict")[1]
    )


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["verify", "--claims", "nope.claim"], "unknown claim id 'nope.claim'"),
        (["verify", "--claims", "zzz*"], "matches no claim id"),
        (["verify", "--paper", "nobody-2099"], "papers must be one of"),
        (["verify", "--paper", "ghazi-et-al-2023", "--claims", "diff2gd.*"], "no claim matches"),
        (["verify", "--claims", VALUE, "--backend", "gpu"], "backend must be one of"),
        (["verify", "--claims", VALUE, "--workers", "0"], "workers must be a whole number >= 1"),
        (["verify", "--claims", VALUE, "--seed", "-1"], "seed must be a non-negative integer"),
        (["verify", "--budget", "huge"], "invalid choice"),
        (["verify", "--claims", VALUE, "--out", "FILE/report"], "cannot be written"),
        (["verify", "--claims", VALUE, "--out", "FILE"], "is not a directory"),
        (["report", "MISSING"], "cannot read results file"),
        (["report", "FILE"], "is not valid JSON"),
        (["report", "BADSCHEMA"], "bad.json': $.claims: expected array"),
        (["report", "OLD"], f"reads version {SCHEMA_VERSION}"),
        (["rate", "nope.claim"], "unknown claim id"),
        (
            ["rate", "diff2gd.prop41.rdp_to_dp"],
            "cannot be checked by experiment: no experiment yet",
        ),
        (["rate", AUDIT_OK], "not a rate sweep"),
        (["rate", RATE, "--values", "1,x"], "--values must be comma-separated numbers"),
        (["rate", RATE, "--values", "1,2", "--backend", "serial"], "values"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(fakes, make_results, tmp_path, capsys, argv, fragment):
    minimal = make_results().to_json()
    (tmp_path / "file").write_text("not json")
    (tmp_path / "bad.json").write_text(json.dumps({**minimal, "claims": {}}))
    (tmp_path / "old.json").write_text(json.dumps({**minimal, "schema_version": 99}))
    files = {
        "FILE": tmp_path / "file",
        "MISSING": tmp_path / "missing.json",
        "BADSCHEMA": tmp_path / "bad.json",
        "OLD": tmp_path / "old.json",
    }
    argv = [
        re.sub(r"^(FILE|MISSING|BADSCHEMA|OLD)", lambda m: str(files[m.group(1)]), a) for a in argv
    ]
    if argv[0] == "verify" and "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("dpclaims: error:"), err
    assert fragment in err
    assert not (tmp_path / "out").exists()
