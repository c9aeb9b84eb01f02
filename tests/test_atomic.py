"""Atomic writes: a file or a report directory appears whole or not at all; nothing is silently
replaced."""

import contextlib
import hashlib
import os
import stat
from pathlib import Path

import pytest

from dpclaims.atomic import MARKER, check_output_dir, staged_directory, write_atomic
from dpclaims.errors import InputError


def test_write_atomic_replaces_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "a.txt"
    write_atomic(target, "one")
    write_atomic(target, b"two")
    assert target.read_text() == "two" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_write_atomic_into_a_missing_folder_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        write_atomic(tmp_path / "no" / "a.txt", "x")


def test_staged_directory_publishes_on_success_only(tmp_path):
    out = tmp_path / "report"
    with pytest.raises(RuntimeError):
        with staged_directory(out) as staging:
            (staging / "half.md").write_text("half")
            raise RuntimeError("crash while writing")
    assert not out.exists() and list(tmp_path.iterdir()) == []
    with staged_directory(out) as staging:
        (staging / "report.md").write_text("whole")
    assert (out / "report.md").read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == [
        "report"
    ]
    digest = hashlib.sha256(b"whole").hexdigest()
    assert (out / MARKER).read_text().splitlines()[1:] == [f"{digest}  report.md"]
    assert "dpclaims" in (out / MARKER).read_text().splitlines()[0]


def _report(out, *names):
    with staged_directory(out) as staging:
        for name in names:
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_text(name)
    return out


def test_existing_report_is_kept_without_force_and_replaced_with_it(tmp_path):
    out = _report(tmp_path / "report", "old.md", "figures/a.png")
    with pytest.raises(InputError, match="already exists; pass --force"):
        check_output_dir(out)
    with pytest.raises(RuntimeError):
        with staged_directory(out, force=True):
            raise RuntimeError("crash")
    assert (out / "old.md").read_text() == "old.md"
    with staged_directory(out, force=True) as staging:
        (staging / "new.md").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "new.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def _tree(folder):
    return sorted(
        (str(p.relative_to(folder)), p.read_bytes() if p.is_file() else None)
        for p in folder.rglob("*")
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda f: (f / "thesis.tex").write_text("years of work"),
        lambda f: (f / "data").mkdir() or (f / "data" / "x.csv").write_text("1,2"),
        lambda f: (f / MARKER).mkdir(),
    ],
)
def test_force_refuses_a_folder_dpclaims_did_not_write(tmp_path, make):
    out = tmp_path / "important"
    out.mkdir()
    make(out)
    before = _tree(out)
    with pytest.raises(InputError, match="not a report folder dpclaims wrote.*another --out"):
        with staged_directory(out, force=True) as staging:
            (staging / "report.md").write_text("new")
    assert _tree(out) == before and [p.name for p in tmp_path.iterdir()] == ["important"]


@pytest.mark.parametrize(
    "extra, named",
    [
        ("notes.txt", "notes.txt"),
        ("figures/mine.png", "figures/mine.png"),
        ("sub/deep/file", "sub"),
    ],
)
def test_force_refuses_a_report_folder_holding_a_file_dpclaims_did_not_write(
    tmp_path, extra, named
):
    out = _report(tmp_path / "report", "report.md", "figures/a.png")
    (out / extra).parent.mkdir(parents=True, exist_ok=True)
    (out / extra).write_text("mine")
    before = _tree(out)
    with pytest.raises(InputError, match=f"holds '{named}', which dpclaims did not write"):
        check_output_dir(out, force=True)
    assert _tree(out) == before


def test_force_refuses_a_symlink_inside_a_report_folder(tmp_path):
    out = _report(tmp_path / "report", "report.md")
    (tmp_path / "precious").mkdir()
    (out / "link").symlink_to(tmp_path / "precious", target_is_directory=True)
    with pytest.raises(InputError, match="holds 'link'"):
        check_output_dir(out, force=True)


@pytest.mark.parametrize("where", [".", "..", "cwd-absolute", "home", "root"])
def test_working_folder_its_parents_home_and_root_are_always_refused(tmp_path, monkeypatch, where):
    work = tmp_path / "parent" / "w"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    _report(work / "r", "report.md")
    (work / MARKER).write_text("a marker cannot make the working folder replaceable\n")
    named = {"cwd-absolute": str(work), "home": "~", "root": os.path.abspath(os.sep)}
    out = named.get(where, where)
    before = _tree(tmp_path)
    for force in (False, True):
        with pytest.raises(InputError, match=r"which dpclaims never replaces; pass a new folder"):
            with staged_directory(out, force=force) as staging:
                (staging / "report.md").write_text("new")
    assert _tree(tmp_path) == before


def test_report_folder_and_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        out = _report(tmp_path / "report", "report.md", "figures/a.png")
        figure = write_atomic(tmp_path / "figure.png", b"png")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert stat.S_IMODE((out / "report.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((out / MARKER).stat().st_mode) == 0o644
    assert stat.S_IMODE(Path(figure).stat().st_mode) == 0o644


def test_empty_existing_directory_and_missing_parents_are_fine(tmp_path):
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty") == tmp_path / "empty"
    assert check_output_dir(tmp_path / "a" / "b" / "report") == tmp_path / "a" / "b" / "report"
    assert not (tmp_path / "a").exists()  # checking creates nothing: parents come with the report
    with staged_directory(tmp_path / "a" / "b" / "report") as staging:
        (staging / "report.md").write_text("whole")
    assert (tmp_path / "a" / "b" / "report" / "report.md").is_file()


def test_unwritable_or_file_targets_are_input_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        check_output_dir(tmp_path / "file")
    with pytest.raises(InputError, match="cannot be written"):
        check_output_dir(tmp_path / "file" / "report")


# --- issue #40, N11: two runs into one --out ------------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@contextlib.contextmanager
def _held(out: Path):
    """Hold the lock of report folder ``out`` as another process would: its own flock."""
    import fcntl

    fd = os.open(out.parent / f".{out.name}.dpclaims-lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"process 4242 on elsewhere\n")
        yield
    finally:
        os.close(fd)


def test_a_second_verify_into_a_locked_out_refuses_before_any_work(
    tmp_path, make_results, monkeypatch, capsys
):
    from dpclaims.cli import main
    from dpclaims.reports import write_report

    out = tmp_path / "out"
    write_report(make_results(), out)

    def no_work(*args, **kwargs):
        raise AssertionError("the claims ran")

    monkeypatch.setattr("dpclaims.claims.run.run_claims", no_work)
    argv = ["verify", "--claims", "lla24.alg1.reference_eps", "--out", str(out), "--force"]
    with _held(out):
        before = _tree(tmp_path)
        assert main(argv) == 2
        assert _tree(tmp_path) == before
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.splitlines() == [
        f"dpclaims: error: --out {str(out)!r} is being written by another dpclaims run "
        "(process 4242 on elsewhere); wait for it to finish, or choose another --out"
    ]


def test_write_report_into_a_locked_out_refuses(tmp_path, make_results):
    from dpclaims.reports import write_report

    with _held(tmp_path / "out"), pytest.raises(InputError, match="written by another dpclaims"):
        write_report(make_results(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_lock_is_held_while_writing_and_gone_after(tmp_path):
    (tmp_path / "a").mkdir()
    from dpclaims.atomic import output_lock

    lock = tmp_path / "a" / ".b%report.dpclaims-lock"
    with output_lock(tmp_path / "a" / "b" / "report"):
        assert lock.read_text() == f"process {os.getpid()} on {os.uname().nodename}\n"
        with staged_directory(tmp_path / "a" / "b" / "report") as staging:  # re-entrant
            (staging / "report.md").write_text("whole")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "a",
        "a/b",
        "a/b/report",
        f"a/b/report/{MARKER}",
        "a/b/report/report.md",
    ]
