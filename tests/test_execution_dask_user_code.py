"""User code on a Dask cluster whose workers cannot import it (issue #40, N3).

A mechanism loaded from ``path/to/file.py:function`` and a ``--registry`` folder's experiments
module live in folders the worker processes do not have on ``sys.path``: the tasks carry their
code by value, and the numbers are the serial run's, bit for bit.  What the workers still lack
(a module the user's code found by other means) is one line naming the module, exit 2.
"""

import importlib.util
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dpclaims.cli import main

distributed = pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parents[1]

TIMEOUT = 120
"""Seconds a command on the cluster may take: workers that cannot read a task hang, not fail."""

HELPER = "SCALE = 1.0\n"

MECHANISM = """\
import numpy as np
import n3_shipped_helper as helper


def noisy_sum(data, rng, trials):
    return data.x.sum() + rng.normal(0.0, helper.SCALE, size=(trials, 1))
"""

ELSEWHERE = """\
import sys

sys.path.insert(0, {folder!r})
import n3_elsewhere as elsewhere

sys.path.pop(0)


def noisy_sum(data, rng, trials):
    return data.x.sum() + rng.normal(0.0, elsewhere.SCALE, size=(trials, 1))
"""


@pytest.fixture(scope="module")
def scheduler(process_cluster):
    """The address of a local cluster of two single-threaded worker processes."""
    return process_cluster


def _importable_on_workers(address: str, name: str) -> bool:
    with distributed.Client(address) as client:
        found = client.run(lambda: importlib.util.find_spec(name) is not None)
    assert len(found) == 2
    return any(found.values())


def _pair(folder: Path) -> list[str]:
    x = np.zeros((10, 1, 1))
    np.savez(folder / "d0.npz", x=x)
    x[0] = 1.0
    np.savez(folder / "d1.npz", x=x)
    return ["--d0", str(folder / "d0.npz"), "--d1", str(folder / "d1.npz")]


@pytest.fixture
def on_cluster(cli_server):
    """``on_cluster(*argv)``: ``python -m dpclaims.cli ARGV`` in a process of its own (forked
    from one that imported dpclaims), which must end within :data:`TIMEOUT`."""

    def run(*argv) -> subprocess.CompletedProcess:
        argv = ["dpclaims", *argv]
        return cli_server.run(argv, cwd=Path.cwd(), module="dpclaims.cli", timeout=TIMEOUT)

    return run


def _numbers(stdout: str) -> dict:
    record = json.loads(stdout)
    record.pop("wall_time", None)
    return record


def test_a_mechanism_from_a_file_runs_on_workers_that_cannot_import_it(
    scheduler, on_cluster, tmp_path, capsys
):
    (tmp_path / "n3_shipped_mechs.py").write_text(MECHANISM)
    (tmp_path / "n3_shipped_helper.py").write_text(HELPER)
    spec = f"{tmp_path / 'n3_shipped_mechs.py'}:noisy_sum"
    argv = ["audit", spec, *_pair(tmp_path), "--trials", "20000", "--seed", "3", "--json"]
    done = on_cluster(*argv, "--scheduler", scheduler)
    assert not _importable_on_workers(scheduler, "n3_shipped_mechs")
    assert not _importable_on_workers(scheduler, "n3_shipped_helper")
    assert done.returncode == 1 and _numbers(done.stdout)["verdict"] == "violation", done.stderr
    assert main([*argv, "--backend", "serial"]) == 1
    assert _numbers(capsys.readouterr().out) == _numbers(done.stdout)


def test_a_registry_folder_experiment_runs_on_workers_that_cannot_import_it(
    scheduler, on_cluster, tmp_path, capsys
):
    from dpclaims.claims.skeleton import write_skeleton

    write_skeleton("n3-shipped-paper", str(tmp_path / "registry"))
    claim = "n3-shipped-paper.mean.privacy"
    argv = ["verify", "--registry", str(tmp_path / "registry"), "--claims", claim, "--quiet"]
    done = on_cluster(*argv, "--out", tmp_path / "cluster", "--scheduler", scheduler)
    assert done.returncode == 0, done.stdout + done.stderr
    assert main([*argv, "--out", str(tmp_path / "serial"), "--backend", "serial"]) == 0
    capsys.readouterr()
    assert not _importable_on_workers(scheduler, "n3_shipped_paper_experiments")
    results = [
        json.loads((tmp_path / out / "results.json").read_text()) for out in ("cluster", "serial")
    ]
    evidence = [r["claims"][0]["evidence"] for r in results]
    assert results[0]["claims"][0]["verdict"] == "consistent"
    assert evidence[0]["epsilon_lower"] == evidence[1]["epsilon_lower"]


def test_a_module_the_workers_lack_is_one_line_naming_it(scheduler, on_cluster, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "n3_elsewhere.py").write_text(HELPER)
    mechanisms = tmp_path / "n3_elsewhere_mechs.py"
    mechanisms.write_text(ELSEWHERE.format(folder=str(tmp_path / "lib")))
    argv = ["audit", f"{mechanisms}:noisy_sum", *_pair(tmp_path), "--trials", "2000"]
    done = on_cluster(*argv, "--scheduler", scheduler)
    out, err = done.stdout, done.stderr
    assert done.returncode == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("dpclaims: error: a worker could not load its task (")
    assert "No module named 'n3_elsewhere'" in err and "install" in err


def test_spawned_worker_processes_get_the_code_of_a_mechanism_file(tmp_path, monkeypatch):
    """Where worker processes are spawned, not forked (Windows), they import nothing of the
    user's either."""
    import multiprocessing

    from dpclaims.execution import Execution, run_trials
    from dpclaims.userfiles import load_callable

    (tmp_path / "n3_spawned_mechs.py").write_text(MECHANISM.replace("n3_shipped", "n3_spawned"))
    (tmp_path / "n3_spawned_helper.py").write_text(HELPER)
    mechanism = load_callable(f"{tmp_path / 'n3_spawned_mechs.py'}:noisy_sum")
    data = type("Data", (), {"x": np.ones(3)})()
    serial = run_trials(mechanism, data, 3000, seed=1, execution=Execution(backend="serial"))
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    spawned = Execution(backend="processes", workers=2, chunk=1000)
    assert np.array_equal(run_trials(mechanism, data, 3000, seed=1, execution=spawned), serial)
