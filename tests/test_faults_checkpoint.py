"""Issue #40 (a hostile user's campaign), checkpoint findings: each finding's test.

N2 (chunks moved, copied or swapped between indices passed the HMAC), N6 (key files that are
links to /dev/zero, FIFOs or readable by others) and N7 (failed writes naming the wrong
option, and checkpoint and --save-pair folders checked only after the work); the cases are
listed in docs/bad_inputs.md, "Fault campaign: execution, checkpoints and resources".  The
tests run as root, who may write into any folder, so a read-only folder is simulated by
``os.access`` answering no, as it does on a read-only file system, and a full disk by a write
that fails with ENOSPC.
"""

import errno
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpclaims import checkpoint
from dpclaims.checkpoint import KEY, MANIFEST, CheckpointWriteError, open_checkpoint
from dpclaims.cli import main
from dpclaims.errors import InputError
from dpclaims.execution import SEED_BLOCK, Execution, run_trials

REPO = Path(__file__).resolve().parents[1]
HALF_NOISE = ["audit", "gaussian-half-noise", "--trials", "300000", "--seed", "3", "--workers", "1"]
CLAIMS = "lla24.alg1.reference_eps,lla24.alg1.risk"


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


def _checkpointed(folder: Path) -> np.ndarray:
    """Three chunks of one seed block each: outputs-000000.npz to outputs-000002.npz."""
    return run_trials(
        gauss,
        0.0,
        3 * SEED_BLOCK,
        seed=1,
        execution=Execution(backend="serial", checkpoint=folder, chunk=SEED_BLOCK),
    )


def _chunk(folder: Path, index: int, stage: str = "outputs") -> Path:
    return folder / f"{stage}-{index:06d}.npz"


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("dpclaims: error: "), err
    return err[0]


def _read_only(monkeypatch, folder: Path) -> None:
    """``os.access`` answers no to writing in ``folder``, as on a read-only file system."""
    real, target = os.access, os.path.abspath(folder)

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.path.abspath(path) == target:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def _disk_full_on_chunks(monkeypatch) -> None:
    """Every chunk write fails half-way with ENOSPC (the key and the manifest are written)."""

    def savez(handle, **arrays):
        handle.write(b"PK\x03\x04 half a chunk")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoint.np, "savez", savez)


# --- N2: a chunk's index is part of its HMAC ------------------------------------------------


def test_n2_one_datasets_chunks_copied_over_the_others_are_refused(tmp_path, capsys, monkeypatch):
    """The campaign's reproduction, scaled down: d1's calibration chunks copied over d0's made
    a violation ``inconclusive`` (epsilon 0.0, exit 0, no warning)."""
    monkeypatch.chdir(tmp_path)
    assert main([*HALF_NOISE, "--checkpoint", "ck"]) == 1  # a violation
    capsys.readouterr()
    chunks = sorted(Path("ck").glob("calibration-*.npz"))
    assert len(chunks) == 6  # three chunks of d0, then three of d1
    for d0, d1 in zip(chunks[:3], chunks[3:], strict=True):
        shutil.copyfile(d1, d0)
    assert main([*HALF_NOISE, "--checkpoint", "ck"]) == 2
    line = _error_line(capsys)
    assert re.search(r"'ck/calibration-00000[012]\.npz' .* moved or copied", line), line
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("change", ["moved", "copied", "reordered"])
def test_n2_a_moved_copied_or_reordered_chunk_is_refused(tmp_path, change):
    first = _checkpointed(tmp_path)
    zero, one, two = (_chunk(tmp_path, i) for i in range(3))
    if change == "moved":
        one.replace(zero)
    elif change == "copied":
        shutil.copyfile(two, one)
    else:
        zero.replace(tmp_path / "swap")
        one.replace(zero)
        (tmp_path / "swap").replace(one)
    with pytest.raises(InputError, match=r"moved or copied from another chunk .* chunk \d of"):
        _checkpointed(tmp_path)
    for index in range(3):  # the fix the message gives: delete them, they are recomputed
        _chunk(tmp_path, index).unlink(missing_ok=True)
    np.testing.assert_array_equal(_checkpointed(tmp_path), first)


# --- N6: key, manifest and chunks are read only as small regular files ----------------------

OPEN_SCRIPT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from dpclaims.checkpoint import open_checkpoint
from dpclaims.errors import InputError
try:
    open_checkpoint(sys.argv[1], {"kind": "test"}).stage("outputs").load(1)
except InputError as exc:
    print(exc)
"""


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
@pytest.mark.parametrize("name", [KEY, MANIFEST, "outputs-000000.npz"])
def test_n6_a_link_to_dev_zero_or_a_fifo_is_refused_at_once(tmp_path, name, kind):
    """A key linked to /dev/zero was read until the kernel killed the process; a FIFO hung.
    Here in a process limited to 2 GiB of memory and 30 s."""
    open_checkpoint(tmp_path, {"kind": "test"}).stage("outputs").save(0, np.arange(3))
    target = tmp_path / name
    target.unlink()
    if kind == "dev-zero":
        target.symlink_to("/dev/zero")
    else:
        os.mkfifo(target)
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", OPEN_SCRIPT, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    why = "a symbolic link" if kind == "dev-zero" else "not a regular file (it is a FIFO)"
    assert name in done.stdout and why in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize("size", [31, 33, 4096])
def test_n6_a_key_of_other_than_32_bytes_is_refused(tmp_path, size):
    open_checkpoint(tmp_path, {"kind": "test"})
    (tmp_path / KEY).write_bytes(os.urandom(size))
    expected = f"holds {size} bytes" if size < 32 else "holds over 32 bytes"
    with pytest.raises(InputError, match=f"no readable .hmac-key .*{expected}"):
        open_checkpoint(tmp_path, {"kind": "test"})


def test_n6_a_key_others_can_read_is_warned_about(tmp_path):
    open_checkpoint(tmp_path, {"kind": "test"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        open_checkpoint(tmp_path, {"kind": "test"})  # mode 0600: no warning
    (tmp_path / KEY).chmod(0o644)
    with pytest.warns(RuntimeWarning, match=r"can be read by other users \(mode 0644\).*chmod"):
        open_checkpoint(tmp_path, {"kind": "test"})


# --- N7: failed writes name --checkpoint; folders are checked before any work ---------------


def test_n7_a_full_disk_while_a_chunk_is_written_names_checkpoint(tmp_path, capsys, monkeypatch):
    """`audit --checkpoint FULL/ck` said "choose another --out" (audit has no --out)."""
    monkeypatch.chdir(tmp_path)
    _disk_full_on_chunks(monkeypatch)
    assert main([*HALF_NOISE, "--checkpoint", "ck"]) == 2
    line = _error_line(capsys)
    assert "no space left on device" in line and "--checkpoint" in line and "--out" not in line
    assert sorted(p.name for p in Path("ck").iterdir()) == [KEY, MANIFEST]  # no half chunk


def test_n7_a_full_disk_under_verify_stops_the_run_with_exit_2(tmp_path, capsys, monkeypatch):
    """Each claim was `error` (exit 1); the docs promise exit 2, one line."""
    monkeypatch.chdir(tmp_path)
    _disk_full_on_chunks(monkeypatch)
    code = main(["verify", "--claims", CLAIMS, "--checkpoint", "ck", "--out", "rep", "--quiet"])
    assert code == 2
    line = _error_line(capsys)
    assert "no space left on device" in line and "--checkpoint" in line
    assert not Path("rep").exists()
    assert not [p for p in Path("ck").rglob("*") if p.name.endswith((".tmp", ".npz"))]


def test_n7_an_unwritable_key_file_is_named_not_its_temporary_file(tmp_path, monkeypatch):
    real = os.open

    def refused(path, flags, *args, **kwargs):
        if str(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(CheckpointWriteError) as caught:
        open_checkpoint(tmp_path / "ck", {"kind": "test"})
    message = str(caught.value)
    assert f"cannot write {str(tmp_path / 'ck' / KEY)!r}: Permission denied" in message
    assert ".tmp" not in message and "--checkpoint" in message


@pytest.mark.parametrize("folder", ["read-only", "a file"])
def test_n7_an_unwritable_checkpoint_is_refused_before_any_claim(
    tmp_path, capsys, monkeypatch, folder
):
    """`verify --checkpoint RO/ck2` ran every claim before failing."""
    import dpclaims.claims.run as run

    monkeypatch.chdir(tmp_path)
    Path("ro").mkdir() if folder == "read-only" else Path("ro").write_text("mine")
    if folder == "read-only":
        _read_only(monkeypatch, Path("ro"))
    ran = []
    monkeypatch.setattr(run, "run_claim", lambda claim, **kw: ran.append(claim))
    code = main(["verify", "--claims", CLAIMS, "--checkpoint", "ro/ck2", "--out", "rep"])
    assert code == 2 and ran == []
    problem = "cannot be written" if folder == "read-only" else "is not a folder"
    line = _error_line(capsys)
    assert f"--checkpoint 'ro/ck2' cannot be written ('ro' {problem})" in line


def test_n7_an_unwritable_checkpoint_is_refused_before_the_audit(tmp_path, capsys, monkeypatch):
    import dpclaims.audit.core as core

    monkeypatch.chdir(tmp_path)
    Path("ro").mkdir()
    _read_only(monkeypatch, Path("ro"))
    monkeypatch.setattr(core, "first_block", lambda *a: pytest.fail("the audit ran"))
    assert main([*HALF_NOISE, "--checkpoint", "ro/ck"]) == 2
    assert "--checkpoint 'ro/ck' cannot be written ('ro' cannot be written)" in _error_line(capsys)
    assert list(Path("ro").iterdir()) == []


def test_n7_an_unwritable_save_pair_is_refused_before_the_search(tmp_path, capsys, monkeypatch):
    """`audit --search --save-pair RO/sp` failed only after the search."""
    import dpclaims.audit.search as search

    monkeypatch.chdir(tmp_path)
    Path("ro").mkdir()
    _read_only(monkeypatch, Path("ro"))
    monkeypatch.setattr(search, "search", lambda *a, **kw: pytest.fail("the search ran"))
    argv = ["audit", "gaussian", "--search", "--trials", "20000", "--save-pair", "ro/sp"]
    assert main(argv) == 2
    assert "--save-pair 'ro/sp' cannot be written ('ro' cannot be written)" in _error_line(capsys)
    assert list(Path("ro").iterdir()) == []


def test_n7_a_failed_write_names_the_option_of_its_path(tmp_path, capsys, monkeypatch):
    """A full disk while the --save-pair folder is made said "choose another --out"."""
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self.name == "sp":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    assert main(["audit", "gaussian", "--trials", "20000", "--save-pair", "sp"]) == 2
    line = _error_line(capsys)
    assert "cannot write 'sp': no space left on device" in line
    assert line.endswith("choose another --save-pair")
