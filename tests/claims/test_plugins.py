"""Papers as plugins: installed entry points, --registry folders, the new-paper skeleton."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpclaims import claims
from dpclaims.claims import ClaimsFileError, Registry
from dpclaims.claims.plugins import GROUP, module_file, package_folder
from dpclaims.claims.run import run_claims
from dpclaims.cli import main
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.results import PaperTitle

ROOT = Path(__file__).resolve().parents[2]
SERIAL = Execution(backend="serial")

PAPER = """
[paper]
id = "{paper}"
title = "A plugin paper"
experiments = "{module}"

[[claims]]
id = "{paper}.value"
paper = "{paper}"
kind = "complexity"
algorithm = "Toy"
statement = "sigma is 2."
formula = "sigma = 2"
regime = "all"
source = "Lemma 1"
exponents = {{}}
"""

EXPERIMENTS = """
from dpclaims.claims import register_experiment
from dpclaims.claims.standard import ValueExperiment


@register_experiment("{paper}.value")
def value_sigma(claim, budget):
    return ValueExperiment(lambda rng: {{"sigma": 2.0}}, expected={{"sigma": 2.0}})
"""


def _install(site: Path, package: str, paper: str) -> Path:
    """A tiny installed distribution: ``package`` (claims TOML + experiments) and a dist-info
    whose entry point in ``dpclaims.papers`` names it."""
    folder = site / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "paper.toml").write_text(PAPER.format(paper=paper, module=f"{package}.experiments"))
    (folder / "experiments.py").write_text(EXPERIMENTS.format(paper=paper))
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{paper} = {package}\n")
    return folder


def _folder(path: Path, module: str, paper: str) -> Path:
    """A --registry folder: a claims TOML and its experiments module side by side."""
    path.mkdir(parents=True)
    (path / "claims.toml").write_text(PAPER.format(paper=paper, module=module))
    (path / f"{module}.py").write_text(EXPERIMENTS.format(paper=paper))
    return path


def test_an_installed_entry_point_is_discovered_without_importing_it(tmp_path, monkeypatch):
    folder = _install(tmp_path / "site", "plugtest_ep", "ep-paper")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert package_folder("plugtest_ep") == folder and "plugtest_ep" not in sys.modules
    registry = Registry.discover()
    paper = registry.papers["ep-paper"]
    assert paper.source == f"entry point 'ep-paper' of plugtest_ep ({folder})"
    packaged = list(Registry.discover(installed=False).papers)
    assert paper.folder is None and list(registry.papers)[: len(packaged)] == packaged
    claim = registry.get("ep-paper.value")
    assert claims.status(claim) == "checkable" and "plugtest_ep" not in sys.modules
    assert module_file("plugtest_ep.experiments") == folder / "experiments.py"
    results = run_claims([claim], execution=SERIAL)
    assert results.claims[0].verdict == "consistent"
    assert results.papers == (PaperTitle("ep-paper", "A plugin paper"),)
    assert "plugtest_ep.experiments" in sys.modules


def test_an_entry_point_naming_an_attribute_or_a_missing_package_is_refused(tmp_path, monkeypatch):
    site = tmp_path / "site"
    _install(site, "plugtest_bad", "bad-paper")
    points = site / "plugtest_bad-0.1.dist-info" / "entry_points.txt"
    monkeypatch.syspath_prepend(str(site))
    points.write_text(f"[{GROUP}]\nbad-paper = plugtest_bad:thing\n")
    with pytest.raises(InputError, match="is a package holding"):
        Registry.discover()
    points.write_text(f"[{GROUP}]\nbad-paper = plugtest_missing\n")
    with pytest.raises(InputError, match="not installed or not a package"):
        Registry.discover()


def test_an_id_defined_by_two_sources_is_an_error_naming_both(tmp_path, monkeypatch):
    _install(tmp_path / "site", "plugtest_dup", "dup-paper")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    mine = _folder(tmp_path / "mine", "plugtest_dup_folder", "dup-paper")
    with pytest.raises(ClaimsFileError) as info:
        Registry.discover(folders=[mine])
    message = str(info.value)
    assert message.startswith("paper id 'dup-paper' is defined twice: in ")
    assert "(entry point 'dup-paper' of plugtest_dup" in message
    assert f"claims.toml (folder {mine})" in message
    code = main(["list", "--registry", str(mine)])
    assert code == 2  # the CLI: one line naming both, exit 2


def test_verify_registry_runs_a_folder_paper(tmp_path, capsys):
    folder = _folder(tmp_path / "paper", "plugtest_verify", "folder-paper")
    out = tmp_path / "report"
    argv = ["verify", "--registry", str(folder), "--paper", "folder-paper", "--out", str(out)]
    code = main([*argv, "--backend", "serial", "--quiet"])
    stdout = capsys.readouterr().out
    assert code == 0 and "folder-paper.value" in stdout and "1 consistent" in stdout
    results = json.loads((out / "results.json").read_text())
    assert [e["verdict"] for e in results["claims"]] == ["consistent"]
    assert str(folder.resolve()) not in sys.path  # only while its module was imported
    assert main(["verify", "--paper", "folder-paper", "--out", str(tmp_path / "r2")]) == 2
    assert "papers must be one of" in capsys.readouterr().err


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *code.split("\0")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


LIST = """-c\0import contextlib, io, json, sys
from dpclaims.cli import main
from dpclaims.errors import InputError
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))"""


def test_list_imports_no_experiment_module(tmp_path):
    assert main(["new-paper", "plugtest-list", str(tmp_path / "p")]) == 0
    done = _run(f"{LIST}\0list\0--registry\0{tmp_path / 'p'}", tmp_path)
    record = json.loads(done.stdout)
    assert record["code"] == 0, done.stderr
    modules = record["modules"]
    heavy = [m for m in modules if m.startswith(("dpclaims.claims.checks.", "dpclaims.algorithms"))]
    assert heavy == [] and "plugtest_list_experiments" not in modules
    assert not {"dpclaims.audit", "dpclaims.rates", "dpclaims.reports", "scipy"} & set(modules)
    lines = record["out"].splitlines()
    assert lines[-1] == f"{len(Registry.discover().claims) + 2} claims"
    assert "checkable at standard, full; skipped at quick: " in record["out"]
    plugin = [line for line in lines if line.startswith("plugtest-list.")]
    assert len(plugin) == 2 and all(line.endswith("  checkable") for line in plugin)


def test_new_paper_writes_a_skeleton_that_verifies_green(tmp_path, capsys):
    folder = tmp_path / "smith"
    assert main(["new-paper", "plugtest-smith-2025", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == [
        "claims.toml",
        "plugtest_smith_2025_experiments.py",
        "test_plugtest_smith_2025.py",
    ]
    assert f"dpclaims verify --registry {folder}" in capsys.readouterr().out
    out = tmp_path / "report"
    argv = ["--registry", str(folder), "--paper", "plugtest-smith-2025", "--out", str(out)]
    code = main(["verify", *argv, "--quiet"])
    assert code == 0, capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    mine = {e["id"]: e["verdict"] for e in results["claims"] if e["paper"] == "plugtest-smith-2025"}
    assert mine == {
        "plugtest-smith-2025.mean.privacy": "consistent",
        "plugtest-smith-2025.mean.rate": "consistent",
    }
    done = _run(f"-m\0pytest\0{folder}\0-q\0-p\0no:cacheprovider", tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_new_paper_never_writes_into_a_folder_with_files(tmp_path, capsys):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert main(["new-paper", "plugtest-taken", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists and is not an empty folder" in err
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert main(["new-paper", "bad id!", str(tmp_path / "x")]) == 2
    assert "ID must start with a letter or digit" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_two_registries_naming_one_experiments_module_are_refused(tmp_path, capsys):
    """new-paper a-b and new-paper a_b both write a_b_experiments: Python would import only the
    first, so the second paper's claims would be listed checkable and then fail to run."""
    first, second = tmp_path / "dash", tmp_path / "under"
    assert main(["new-paper", "plugtest-a-b", str(first)]) == 0
    assert main(["new-paper", "plugtest_a_b", str(second)]) == 0
    capsys.readouterr()
    for command in (["list"], ["verify", "--quiet", "--out", str(tmp_path / "report")]):
        argv = [*command, "--registry", str(first), "--registry", str(second)]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and "checkable" not in captured.out
        assert "both name the experiments module 'plugtest_a_b_experiments'" in captured.err
    assert not (tmp_path / "report").exists()
    assert main(["list", "--registry", str(second)]) == 0  # each registry alone is fine
