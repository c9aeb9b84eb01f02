"""Fault campaign (issue #30): output files, reports and results.json.

Each test reproduces one defect of the campaign (its number in the name) and checks the
property the fix promises: one line on stderr and exit code 2 for bad input, nothing that
dpclaims did not write deleted or overwritten, no half-written output, results never lost.
"""

import contextlib
import io
import stat

import pytest

from dpclaims.cli import main


def _tree(folder):
    """Every path under ``folder`` with its bytes (None for a folder) and permission bits."""
    return sorted(
        (
            str(p.relative_to(folder)),
            p.read_bytes() if p.is_file() else None,
            stat.S_IMODE(p.lstat().st_mode),
        )
        for p in folder.rglob("*")
        if "__pycache__" not in p.parts
    )


def cli(*argv):
    """Run the command line in-process: (exit code, stdout, stderr)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main([str(a) for a in argv])
    return code, stdout.getvalue(), stderr.getvalue()


def _one_error_line(err, *fragments):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpclaims: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------------
# 1. --figure PATH overwrote any existing file; `rate` wrote its default NAME.png over one.
# ------------------------------------------------------------------------------------------

AUDIT = ["audit", "gaussian", "--trials", "2000", "--backend", "serial"]


@pytest.mark.parametrize("command", ["audit", "rate"])
def test_defect01_figure_refuses_an_existing_file_unless_force(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("years of work")
    thesis.chmod(0o600)
    before = _tree(tmp_path)
    argv = AUDIT if command == "audit" else ["rate", "lla24.alg1.risk"]
    code, out, err = cli(*argv, "--figure", thesis)
    assert code == 2 and out == ""  # refused before any experiment ran
    _one_error_line(err, "--figure", "already exists", "--force")
    assert _tree(tmp_path) == before


def test_defect01_figure_with_force_replaces_the_file_keeping_its_permissions(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    figure = tmp_path / "private.png"
    figure.write_text("old")
    figure.chmod(0o600)
    code, out, err = cli(*AUDIT, "--figure", figure, "--force")
    assert code == 0 and err == "" and f"figure        {figure}" in out
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert stat.S_IMODE(figure.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["private.png"]


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_defect01_rate_never_overwrites_with_its_default_name(tmp_path, monkeypatch, force):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lla24.alg1.risk.png").write_text("the user's own file")
    before = _tree(tmp_path)
    code, out, err = cli("rate", "lla24.alg1.risk", *force)
    assert code == 2 and out == ""
    _one_error_line(err, "'lla24.alg1.risk.png' already exists", "--figure PATH")
    assert _tree(tmp_path) == before
