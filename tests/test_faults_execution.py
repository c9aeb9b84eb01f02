"""Issue #30, execution, checkpoints, schedulers and rate-sweep resources: each defect's test.

Defects 6 (execution options checked per claim), 7 (unbounded rate sweeps), 13 (forgeable
checkpoints), 16 (the time estimate) and 17 (``audit`` without ``--checkpoint`` and
``--scheduler``); the cases are listed in docs/bad_inputs.md, "Fault campaign: execution,
checkpoints and resources".
"""

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpclaims.checkpoint import KEY, MANIFEST
from dpclaims.claims import Registry
from dpclaims.claims.run import run_claims
from dpclaims.cli import main
from dpclaims.errors import InputError
from dpclaims.execution import SEED_BLOCK, Execution, run_trials
from dpclaims.privacy import PrivacyClaim

REPO = Path(__file__).resolve().parents[1]
CLAIMS = "lla24.alg1.reference_eps,lla24.alg1.risk"


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("dpclaims: error: "), err
    return err[0]


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


# --- defect 6: execution options are checked once, before anything runs --------------------


def test_defect06_unreachable_scheduler_is_one_line_up_front(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.monotonic()
    code = main(["verify", "--claims", CLAIMS, "--scheduler", address, "--out", "out"])
    seconds = time.monotonic() - start
    line = _error_line(capsys)
    assert code == 2
    assert f"cannot reach --scheduler {address}: " in line
    assert line.endswith("start the scheduler or drop --scheduler")
    assert seconds < 8, seconds  # one short connection, not ~10 s per claim
    assert list(tmp_path.iterdir()) == []


def test_defect06_scheduler_without_dask_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    for argv in (
        ["verify", "--claims", CLAIMS, "--scheduler", "tcp://127.0.0.1:1", "--out", "out"],
        ["audit", "gaussian", "--backend", "dask", "--trials", "1000"],
    ):
        assert main(argv) == 2
        assert 'pip install "dpclaims[dask]"' in _error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_defect06_scheduler_with_another_backend_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["verify", "--claims", CLAIMS, "--backend", "processes", "--out", "out"]
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "needs backend='dask'" in _error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_defect06_checkpoint_in_a_users_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "mine"
    (mine / "data").mkdir(parents=True)
    (mine / "data" / "thesis.tex").write_text("mine")
    before = _tree(tmp_path)
    argv = ["verify", "--claims", CLAIMS, "--checkpoint", "mine", "--out", "out"]
    assert main(argv) == 2
    assert "not a dpclaims checkpoint" in _error_line(capsys)
    assert _tree(tmp_path) == before
    with pytest.raises(InputError, match="not a dpclaims checkpoint"):
        run_claims(Registry.discover().select(), execution=Execution(checkpoint=mine))
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    "out, checkpoint, where",
    [("out", "out/cp", "is inside --out"), ("cp/out", "cp", "holds --out"), ("out", "out", "is")],
)
def test_defect06_checkpoint_and_out_must_be_apart(
    tmp_path, monkeypatch, capsys, out, checkpoint, where
):
    monkeypatch.chdir(tmp_path)
    argv = ["verify", "--claims", CLAIMS, "--checkpoint", checkpoint, "--out", out]
    assert main(argv) == 2
    line = _error_line(capsys)
    assert f"--checkpoint '{checkpoint}' {where} " in line and "outside it" in line
    assert list(tmp_path.iterdir()) == []


def test_defect06_a_dpclaims_checkpoint_tree_is_accepted(tmp_path):
    run_trials(gauss, 0.0, 100, execution=Execution(checkpoint=tmp_path / "a" / "claim"))
    Execution(checkpoint=tmp_path).check(out=tmp_path.parent / "elsewhere")
    Execution(checkpoint=tmp_path / "new").check()


# --- defect 13: checkpoint digests are keyed by a per-run secret ----------------------------


def _checkpointed(folder: Path) -> np.ndarray:
    return run_trials(
        gauss,
        0.0,
        2 * SEED_BLOCK,
        execution=Execution(backend="serial", checkpoint=folder, chunk=SEED_BLOCK),
    )


def test_defect13_forged_chunk_with_recomputed_digest_is_refused(tmp_path):
    import hashlib

    first = _checkpointed(tmp_path)
    chunk = sorted(tmp_path.glob("*.npz"))[0]
    with np.load(chunk) as archive:
        key, result = archive["key"], archive["result"] * 10
    digest = hashlib.sha256(  # the unkeyed digest of the old format, recomputed by a forger
        f"{result.dtype.str}:{result.shape}:".encode() + result.tobytes()
    ).hexdigest()
    np.savez(chunk, result=result, key=key, digest=np.array(digest))
    with pytest.raises(InputError, match="corrupt or forged"):
        _checkpointed(tmp_path)
    chunk.unlink()
    np.testing.assert_array_equal(_checkpointed(tmp_path), first)


def test_defect13_the_key_is_private_and_per_run(tmp_path):
    _checkpointed(tmp_path / "one")
    _checkpointed(tmp_path / "two")
    keys = [tmp_path / name / KEY for name in ("one", "two")]
    assert all(stat.S_IMODE(k.stat().st_mode) == 0o600 for k in keys)
    assert keys[0].read_bytes() != keys[1].read_bytes()
    (tmp_path / "one" / "outputs-000000.npz").replace(tmp_path / "two" / "outputs-000000.npz")
    with pytest.raises(InputError, match="corrupt or forged"):
        _checkpointed(tmp_path / "two")  # a chunk of another run with the same arguments


def test_defect13_old_format_checkpoint_is_refused(tmp_path):
    _checkpointed(tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "format": 1}))
    with pytest.raises(InputError, match="written by an older dpclaims .*delete it or choose"):
        _checkpointed(tmp_path)


# --- defect 17: dpclaims audit --checkpoint and --scheduler ---------------------------------

AUDIT = [sys.executable, "-m", "dpclaims.cli", "audit", "gaussian", "--seed", "5", "--json"]
NUMBERS = ("epsilon_lower", "false_positives", "false_negatives", "threshold", "trials")


def _numbers(stdout: str | bytes) -> dict:
    record = json.loads(stdout)
    return {name: record[name] for name in NUMBERS}


@pytest.mark.slow
def test_defect17_audit_checkpoint_resumes_after_sigkill(tmp_path, capsys):
    """Killed in a process of its own; resumed and run whole in this one (the same command)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [*AUDIT[3:], "--trials", "4000000", "--backend", "serial"]
    checkpoint = tmp_path / "cp"
    process = subprocess.Popen(
        [*AUDIT[:3], *argv, "--checkpoint", str(checkpoint)], env=env, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(checkpoint.glob("*-*.npz")):
        time.sleep(0.01)
    assert process.poll() is None, "the audit finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = {p: p.stat().st_mtime_ns for p in checkpoint.glob("*-*.npz")}
    assert kept
    assert main([*argv, "--checkpoint", str(checkpoint)]) == 0
    resumed = _numbers(capsys.readouterr().out)
    assert main(argv) == 0
    assert resumed == _numbers(capsys.readouterr().out)
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())  # reused, not recomputed


@pytest.mark.slow
def test_defect17_audit_scheduler_runs_on_a_two_worker_cluster(process_cluster, capsys):
    argv = ["audit", "gaussian", "--seed", "5", "--json", "--trials", "300000"]
    assert main([*argv, "--scheduler", process_cluster]) == 0
    on_cluster = _numbers(capsys.readouterr().out)
    assert main([*argv, "--backend", "serial"]) == 0
    assert on_cluster == _numbers(capsys.readouterr().out)


def test_defect17_run_options_are_the_same_on_every_running_command():
    from dpclaims.cli import _build_parser

    sub = next(a for a in _build_parser()._actions if a.dest == "command")
    for command in ("verify", "audit", "rate", "mutants"):
        options = {o for a in sub.choices[command]._actions for o in a.option_strings}
        assert {"--seed", "--backend", "--workers", "--scheduler", "--checkpoint"} <= options


# --- defect 7: rate sweeps are bounded; a MemoryError names the command's own options ------

MODULE = "def f(n, rng):\n    return float(n) ** -0.5 * (1.0 + 0.1 * rng.random())\n"


def test_defect07_rate_sweep_over_the_memory_bound_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymod.py").write_text(MODULE)
    before = _tree(tmp_path)
    argv = ["rate", "mymod:f", "--values", "100,1000,10000,100000", "--expected", "-0.5"]
    start = time.monotonic()
    assert main([*argv, "--replicates", "1000000000"]) == 2
    line = _error_line(capsys)
    assert time.monotonic() - start < 5
    assert "4 values x 1_000_000_000 replicates" in line and "--values/--replicates" in line
    assert _tree(tmp_path) == before


def test_defect07_theil_sen_memory_is_bounded(tmp_path):
    import tracemalloc

    from dpclaims.rates import fit_power_law

    values = np.geomspace(100, 1e5, 800)
    rng = np.random.default_rng(0)
    errors = values[:, None] ** -0.5 * np.exp(0.1 * rng.standard_normal((800, 10)))
    tracemalloc.start()
    fit = fit_power_law(values, errors)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 700 * 2**20, peak / 2**20  # 8,000 points: about 1.4 GB without a subsample
    assert abs(fit.theil_sen + 0.5) < 0.01
    few_values, few = values[::16], errors[::16]  # 500 points: every pair, as before
    every_pair = stats.theilslopes(np.log(few).ravel(), np.repeat(np.log(few_values), 10))
    assert fit_power_law(few_values, few).theil_sen == every_pair.slope


@pytest.mark.parametrize(
    "argv, knobs",
    [
        (["rate", "lla24.alg1.risk"], "lower --values or --replicates"),
        (["audit", "gaussian"], "lower --trials or --workers"),
        (["verify", "--claims", "lla24.alg1.risk", "--out", "out"], "lower --budget or --workers"),
    ],
)
def test_defect07_memory_error_names_the_commands_options(
    tmp_path, monkeypatch, capsys, argv, knobs
):
    monkeypatch.chdir(tmp_path)

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    for name in ("rate.run_rate", "audit.print_audit", "verify.report_summary"):
        monkeypatch.setattr(f"dpclaims.cli.{name}", out_of_memory)
    monkeypatch.setattr("dpclaims.claims.run.run_claims", out_of_memory)
    assert main([*argv, "--backend", "serial"] + (["--trials", "1000"] if "audit" in argv else []))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and knobs in err[0], err


# --- defect 16: the estimate names the workers it counts -------------------------------------


def test_defect16_serial_estimate_counts_one_worker():
    from dpclaims.audit import audit

    with pytest.raises(InputError, match=r"1 worker\(s\)"):
        audit(
            gauss,
            0.0,
            1.0,
            trials=10**12,
            claim=PrivacyClaim(epsilon=1.0),
            execution=Execution(max_seconds=60, backend="serial", workers=2),
        )


def test_defect16_estimate_is_calibrated(monkeypatch):
    """The probe fits a call's time as a + b·n on warm calls (the cold first call is not used)
    and counts a once per seed block: with a clock where a call of n trials takes exactly
    a + b·n, the run's stream time is OVERHEAD × (blocks × a + trials × b), within 1.5×."""
    import dpclaims.resources as resources
    from dpclaims.execution import SEED_BLOCK
    from dpclaims.resources import OVERHEAD, Limits, Workload, check_budget, probe

    a, b, clock = 2e-3, 1e-7, [0.0]
    monkeypatch.setattr(resources.time, "process_time", lambda: clock[0])

    def call(n):
        clock[0] += a + b * n
        return np.zeros((n, 1))

    trials = 20_000_000
    work = Workload(
        trials=trials,
        held=lambda n: 0,
        workers=1,
        parallel=False,
        sides=1,
        block=SEED_BLOCK,
        probe_trials=32,
    )
    found = probe(call, first=5.0, width=1, work=work, long_run=10.0)  # a slow cold call
    assert found.seconds_per_call == pytest.approx(a) and found.seconds_per_trial == pytest.approx(
        b
    )
    blocks = -(-trials // SEED_BLOCK)
    true = blocks * a + trials * b
    seconds = check_budget(found, work, Limits(max_seconds=1e6, max_memory=float("inf"))).seconds
    stream = (seconds - resources.FIXED_SECONDS) / OVERHEAD
    assert true / 1.5 <= stream <= 1.5 * true  # the cold call alone: 5 s per 32 trials


def test_the_probe_refines_for_the_shown_log_or_the_limit(caplog):
    """Warm timing calls only where they change something: the logged estimate of a run over
    LONG_RUN when the log is shown, else the refusal at the time limit."""
    import logging

    from dpclaims.resources import LONG_RUN, Limits, refine_above

    limits = Limits(max_seconds=600.0, max_memory=float("inf"))
    caplog.set_level(logging.WARNING, logger="dpclaims")
    assert refine_above(limits) == 600.0
    caplog.set_level(logging.INFO, logger="dpclaims")
    assert refine_above(limits) == LONG_RUN
    assert refine_above(Limits(max_seconds=5.0, max_memory=1.0)) == 5.0


def test_defect05_a_failed_checkpoint_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """A full disk while a chunk is written: one error naming the checkpoint folder (the CLI
    prints it as one line, exit 2) and the checkpoint folder holds no partial .tmp file."""
    import errno

    from dpclaims import checkpoint

    target = tmp_path / "outputs-000000.npz"

    def full_disk(handle):
        handle.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(checkpoint.CheckpointWriteError, match="no space left .*--checkpoint"):
        checkpoint._write_atomic(target, full_disk)
    assert list(tmp_path.iterdir()) == []
