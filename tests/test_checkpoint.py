"""Checkpoint and resume: same numbers as an uninterrupted run, refusal of foreign or damaged
checkpoints."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import dpclaims
from dpclaims.audit import AuditTest, audit
from dpclaims.checkpoint import MANIFEST, fingerprint, open_checkpoint
from dpclaims.errors import InputError
from dpclaims.execution import SEED_BLOCK, Execution, run_trials
from dpclaims.privacy import PrivacyClaim
from dpclaims.rates import geometric_grid, sweep

REPO = Path(dpclaims.__file__).resolve().parent.parent


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


class Scaled:
    def __init__(self, sigma):
        self.sigma = sigma

    def __call__(self, data, rng, trials):
        return data + self.sigma * rng.standard_normal(trials)


def noisy_rate(n, rng):
    return n**-0.5 * np.exp(0.2 * rng.standard_normal())


def chunk_files(directory):
    return sorted(p for p in Path(directory).iterdir() if p.suffix == ".npz")


def without_time(result):
    record = result.to_dict()
    record.pop("wall_time")
    return record


def test_run_trials_resumes_without_recomputing(tmp_path):
    trials = 4 * SEED_BLOCK + 5
    plain = run_trials(gauss, 0.0, trials, seed=1, execution=Execution(backend="serial"))
    first = run_trials(
        gauss,
        0.0,
        trials,
        seed=1,
        execution=Execution(backend="serial", checkpoint=tmp_path, chunk=SEED_BLOCK),
    )
    np.testing.assert_array_equal(first, plain)
    files = chunk_files(tmp_path)
    assert len(files) == 5 and (tmp_path / MANIFEST).exists()
    files[2].unlink()  # as if the run had been killed before this chunk finished
    stamps = {p: p.stat().st_mtime_ns for p in chunk_files(tmp_path)}
    again = run_trials(
        gauss,
        0.0,
        trials,
        seed=1,
        execution=Execution(backend="processes", workers=2, checkpoint=tmp_path, chunk=SEED_BLOCK),
    )
    np.testing.assert_array_equal(again, plain)
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    assert len(chunk_files(tmp_path)) == 5


def test_audit_and_sweep_with_checkpoint_give_the_uninterrupted_numbers(tmp_path):
    kwargs = dict(claim=PrivacyClaim(epsilon=1.0, delta=1e-5), trials=5 * SEED_BLOCK, seed=2)
    serial = Execution(backend="serial", chunk=SEED_BLOCK)
    saving = replace(serial, checkpoint=tmp_path / "audit")
    plain = without_time(audit(gauss, 0.0, 1.0, **kwargs, execution=serial))
    checkpointed = without_time(audit(gauss, 0.0, 1.0, **kwargs, execution=saving))
    for path in chunk_files(tmp_path / "audit")[::2]:
        path.unlink()
    resumed = without_time(audit(gauss, 0.0, 1.0, **kwargs, execution=saving))
    assert plain == checkpointed == resumed
    grid = geometric_grid(10, 1000, 4, integer=True)
    reference = sweep(
        noisy_rate, "n", grid, replicates=3, seed=4, execution=Execution(backend="serial")
    )
    first = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=3,
        seed=4,
        execution=Execution(backend="serial", checkpoint=tmp_path / "sweep"),
    )
    assert len(chunk_files(tmp_path / "sweep")) == 12
    chunk_files(tmp_path / "sweep")[5].unlink()
    second = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=3,
        seed=4,
        execution=Execution(backend="processes", workers=2, checkpoint=tmp_path / "sweep"),
    )
    np.testing.assert_array_equal(first.errors, reference.errors)
    np.testing.assert_array_equal(second.errors, reference.errors)


@pytest.mark.parametrize(
    "change, differs",
    [
        (dict(trials=5 * SEED_BLOCK), "trials"),
        (dict(seed=3), "seed"),
        (dict(mechanism=Scaled(2.0)), "mechanism"),
        (dict(test=AuditTest(method="gdp")), "method"),
    ],
)
def test_checkpoint_of_other_arguments_is_refused(tmp_path, change, differs):
    base = dict(
        mechanism=Scaled(1.0),
        claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
        trials=4 * SEED_BLOCK,
        seed=2,
        execution=Execution(backend="serial", chunk=SEED_BLOCK, checkpoint=tmp_path),
    )
    audit(base.pop("mechanism"), 0.0, 1.0, **base)
    args = {"mechanism": Scaled(1.0), **base, **change}
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    with pytest.raises(InputError, match=f"different arguments \\(differs in: [^)]*{differs}"):
        audit(args.pop("mechanism"), 0.0, 1.0, **args)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


def test_checkpoint_of_another_version_is_refused(tmp_path):
    run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path))
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    manifest["dpclaims_version"] = "0.0.1"
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="written by dpclaims 0.0.1.*not mixed"):
        run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: chunk_files(d)[0].write_bytes(b"not a zip"), "is corrupt"),
        (
            lambda d: chunk_files(d)[0].write_bytes(chunk_files(d)[0].read_bytes()[:-40]),
            "is corrupt",
        ),
        (lambda d: (d / MANIFEST).write_text("{"), "manifest .* is corrupt"),
        (lambda d: (d / MANIFEST).write_text("{}"), "manifest .* is corrupt"),
    ],
    ids=["garbage", "truncated", "bad-json", "missing-keys"],
)
def test_damaged_checkpoint_is_a_clear_error(tmp_path, damage, message):
    run_trials(
        gauss,
        0.0,
        3 * SEED_BLOCK,
        execution=Execution(backend="serial", checkpoint=tmp_path, chunk=SEED_BLOCK),
    )
    damage(tmp_path)
    with pytest.raises(InputError, match=message):
        run_trials(
            gauss,
            0.0,
            3 * SEED_BLOCK,
            execution=Execution(backend="serial", checkpoint=tmp_path, chunk=SEED_BLOCK),
        )


def test_checkpoint_directory_must_be_a_checkpoint(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a dpclaims checkpoint"):
        run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path))
    with pytest.raises(InputError, match="is a file"):
        run_trials(
            gauss,
            0.0,
            100,
            execution=Execution(backend="serial", checkpoint=tmp_path / "notes.txt"),
        )
    with pytest.raises(InputError, match="directory path"):
        run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=3))


def test_fingerprint_tells_computations_apart():
    assert fingerprint(Scaled(1.0)) == fingerprint(Scaled(1.0)) != fingerprint(Scaled(2.0))
    assert fingerprint(gauss) != fingerprint(noisy_rate)
    assert fingerprint(np.zeros(3)) != fingerprint(np.zeros(4))
    offset = 1.0
    closure = lambda data, rng, trials: offset + rng.standard_normal(trials)  # noqa: E731
    assert fingerprint(closure) == fingerprint(closure)
    offset = 2.0
    assert fingerprint(closure) != fingerprint(
        lambda data, rng, trials: offset + rng.standard_normal(trials)
    )


def test_stage_refuses_chunks_of_other_inputs(tmp_path):
    store = open_checkpoint(tmp_path, {"kind": "test"})
    store.stage("counts", thresholds=np.array([1.0])).save(0, np.arange(3))
    with pytest.raises(InputError, match="different inputs"):
        store.stage("counts", thresholds=np.array([2.0])).load(1)
    np.testing.assert_array_equal(
        store.stage("counts", thresholds=np.array([1.0])).load(1)[0], np.arange(3)
    )


TRIALS, CHUNK = 20 * 8192, 8192

SCRIPT = textwrap.dedent(
    f"""
    import json, sys, time
    from dpclaims import PrivacyClaim
    from dpclaims.audit import AuditTest, audit
    from dpclaims.execution import Execution

    class Slow:  # slow only where it is to be killed: the same numbers either way
        def __init__(self, delay):
            self.delay = delay

        def __call__(self, data, rng, trials):
            time.sleep(self.delay)
            return data + rng.standard_normal(trials)

    if __name__ == "__main__":
        result = audit(Slow(0.04), 0.0, 1.0, PrivacyClaim(epsilon=1.0, delta=1e-5),
                       trials={TRIALS}, seed=3, test=AuditTest(threshold="calibration"),
                       execution=Execution(chunk={CHUNK}, backend="serial", checkpoint=sys.argv[1]))
        record = result.to_dict()
        record.pop("wall_time")
        print(json.dumps(record))
    """
)


@pytest.mark.slow
def test_audit_killed_with_sigkill_resumes_to_the_uninterrupted_numbers(tmp_path, cli_server):
    script = tmp_path / "run_audit.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    checkpoint = tmp_path / "checkpoint"
    process = subprocess.Popen(
        [sys.executable, str(script), str(checkpoint)], env=env, stdout=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if checkpoint.exists() and len(list(checkpoint.glob("certification-*.npz"))) >= 5:
            break
        time.sleep(0.01)
    assert process.poll() is None, "the audit finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    survivors = {p: p.stat().st_mtime_ns for p in chunk_files(checkpoint)}
    assert 5 <= sum("certification" in p.name for p in survivors) < 32
    resumed = cli_server.run([script, checkpoint], cwd=tmp_path)  # a fresh process, forked
    assert resumed.returncode == 0, resumed.stderr
    plain = audit(  # uninterrupted, in this process: the same mechanism without its sleep
        gauss,
        0.0,
        1.0,
        PrivacyClaim(epsilon=1.0, delta=1e-5),
        trials=TRIALS,
        seed=3,
        test=AuditTest(threshold="calibration"),
        execution=Execution(chunk=CHUNK, backend="serial"),
    )
    assert json.loads(resumed.stdout) == json.loads(json.dumps(without_time(plain)))
    assert all(p.stat().st_mtime_ns == t for p, t in survivors.items())
    assert len(chunk_files(checkpoint)) == 2 * 4 + 2 * 16
