"""Atomic writes: a file or a report directory appears whole or not at all; nothing is silently replaced."""

import pytest

from dpclaims.errors import InputError
from dpclaims.reports.atomic import check_output_dir, staged_directory, write_atomic


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
    assert (out / "report.md").read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == ["report"]


def test_existing_report_is_kept_without_force_and_replaced_with_it(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "old.md").write_text("old")
    with pytest.raises(InputError, match="already exists; pass --force"):
        check_output_dir(out)
    with pytest.raises(RuntimeError):
        with staged_directory(out, force=True):
            raise RuntimeError("crash")
    assert (out / "old.md").read_text() == "old"
    with staged_directory(out, force=True) as staging:
        (staging / "new.md").write_text("new")
    assert [p.name for p in out.iterdir()] == ["new.md"] and [p.name for p in tmp_path.iterdir()] == ["report"]


def test_empty_existing_directory_and_missing_parents_are_fine(tmp_path):
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty") == tmp_path / "empty"
    assert check_output_dir(tmp_path / "a" / "b" / "report").parent.is_dir()


def test_unwritable_or_file_targets_are_input_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        check_output_dir(tmp_path / "file")
    with pytest.raises(InputError, match="cannot be written"):
        check_output_dir(tmp_path / "file" / "report")
