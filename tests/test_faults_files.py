"""Fault campaign (issue #30): output files, reports and results.json.

Each test reproduces one defect of the campaign (its number in the name) and checks the
property the fix promises: one line on stderr and exit code 2 for bad input, nothing that
dpclaims did not write deleted or overwritten, no half-written output, results never lost.
"""

import contextlib
import errno
import io
import json
import os
import re
import shutil
import signal
import socket
import stat
import sys
import threading

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


# ------------------------------------------------------------------------------------------
# A small registry (the `new-paper` skeleton) and one verify run shared by the tests below.
# ------------------------------------------------------------------------------------------


def _registry(folder, paper, replace=()):
    """The new-paper skeleton of ``paper`` in ``folder``, with ``(old, new)`` text replacements
    applied to its claims TOML and experiments module."""
    from dpclaims.claims.skeleton import write_skeleton

    written = write_skeleton(paper, str(folder))
    for path in written[:2]:
        text = path.read_text()
        for old, new in replace:
            text = text.replace(old, new)
        path.write_text(text)
    return folder


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    """(registry folder, report folder) of one `dpclaims verify` run of a skeleton paper."""
    root = tmp_path_factory.mktemp("verified")
    registry = _registry(root / "registry", "faults-files-a")
    out = root / "report"
    code, _, err = cli(
        "verify", "--registry", registry, "--paper", "faults-files-a", "--out", out,
        "--backend", "serial", "--quiet",
    )  # fmt: skip
    assert code == 0 and err == "", err
    return registry, out


def _document(verified):
    return json.loads((verified[1] / "results.json").read_text())


# ------------------------------------------------------------------------------------------
# 4. `dpclaims report` on a tampered results.json exited 3 ("a bug in dpclaims").
# ------------------------------------------------------------------------------------------


def _set(path):
    """A tampering that sets the field at ``path`` (keys and indices) to a value."""

    def tamper(document, value):
        *parents, last = path
        for key in parents:
            document = document[key]
        document[last] = value

    return tamper


AUDIT_EVIDENCE = ("claims", 0, "evidence")
RATE_SWEEP = ("claims", 1, "evidence", "sweep")
TAMPERED = {
    # case: (the text of results.json from the document, the JSON path the error names)
    "nan": (lambda d: json.dumps({**d, "wall_time": float("nan")}), "$.wall_time: the non-finite"),
    "deep-but-parsable": (
        lambda d: _nested(d, 500),
        "$.claims[0].evidence.note[0]",
    ),
    "infinity": (
        lambda d: json.dumps(d).replace('"epsilon": 1.0', '"epsilon": Infinity', 1),
        "$.claims[0].evidence.epsilon: the non-finite number Infinity",
    ),
    "overflowing-float": (
        lambda d: json.dumps(d).replace('"epsilon": 1.0', '"epsilon": 1e999', 1),
        "$.claims[0].evidence.epsilon: 1e999, which overflows to inf",
    ),
    "deep-nesting": (
        lambda d: _nested(d, 100_000),
        "nested deeper than",
    ),
    "5000-digit-integer": (
        lambda d: json.dumps(d).replace('"seed": 0', '"seed": ' + "9" * 5000, 1),
        "$.settings.seed: a number of 5000 characters",
    ),
    "delta-above-one": (
        lambda d: _tampered(d, _set(AUDIT_EVIDENCE + ("delta",)), 5),
        "$.claims[0].evidence.delta",
    ),
    "epsilon-negative": (
        lambda d: _tampered(d, _set(AUDIT_EVIDENCE + ("epsilon",)), -1.0),
        "$.claims[0].evidence.epsilon",
    ),
    "confidence-above-one": (
        lambda d: _tampered(d, _set(AUDIT_EVIDENCE + ("confidence",)), 2.0),
        "$.claims[0].evidence.confidence",
    ),
    "ragged-replicates": (
        lambda d: _tampered(d, _set(RATE_SWEEP + ("errors", 2)), [0.1, 0.2]),
        "$.claims[1].evidence.sweep.errors[2]",
    ),
    "sweep-value-zero": (
        lambda d: _tampered(d, _set(RATE_SWEEP + ("values", 0)), 0),
        "$.claims[1].evidence.sweep.values[0]",
    ),
    "mutants-string": (lambda d: json.dumps({**d, "mutants": "junk"}), "$.mutants"),
    "mutants-bad-row": (
        lambda d: json.dumps({**d, "mutants": {**MUTANTS, "matrix": [{"mutant": 1}]}}),
        "$.mutants.matrix[0]",
    ),
    "mutants-bad-audits": (
        lambda d: json.dumps({**d, "mutants": {**MUTANTS, "audits": {"a": {"kills": 3}}}}),
        "$.mutants.audits.a",
    ),
}
MUTANTS = {
    "budget": "quick",
    "mutation_score": None,
    "privacy_mutants": 0,
    "audited": 0,
    "killed": 0,
    "matrix": [],
    "audits": {},
}


def _nested(document, depth):
    """The document with the audit's note replaced by ``depth`` nested arrays."""
    text = _tampered(document, _set(AUDIT_EVIDENCE + ("note",)), "DEEP")
    return text.replace('"DEEP"', "[" * depth + "]" * depth)


def _tampered(document, tamper, value):
    tamper(document, value)
    return json.dumps(document)


@pytest.mark.parametrize("case", list(TAMPERED))
def test_defect04_tampered_results_json_is_one_line_naming_file_and_field(
    verified, tmp_path, monkeypatch, case
):
    make, fragment = TAMPERED[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.json").write_text(make(_document(verified)))
    before = _tree(tmp_path)
    code, out, err = cli("report", "results.json", "--out", "report", "--workers", 1)
    assert code == 2 and out == ""
    _one_error_line(err, "results file 'results.json'", fragment)
    assert _tree(tmp_path) == before


def test_defect04_valid_mutants_and_an_untampered_file_still_render(verified, tmp_path):
    document = _document(verified)
    (tmp_path / "results.json").write_text(json.dumps({**document, "mutants": MUTANTS}))
    code, out, err = cli("report", tmp_path / "results.json", "--out", tmp_path / "r")
    assert code == 0 and err == "" and (tmp_path / "r" / "report.md").is_file()


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "folder"])
def test_defect04_results_that_is_not_a_regular_file_is_refused_without_blocking(
    tmp_path, monkeypatch, special
):
    monkeypatch.chdir(tmp_path)
    path = {"fifo": "pipe", "/dev/zero": "/dev/zero", "folder": "folder"}[special]
    if special == "fifo":
        os.mkfifo(path)
    elif special == "folder":
        os.mkdir(path)
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=cli("report", path)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # unblock the reader of the FIFO, then fail
        with open(path, "wb") if special == "fifo" else contextlib.nullcontext():
            pass
        pytest.fail(f"dpclaims report {path} blocked")
    code, out, err = done["result"]
    assert code == 2 and out == ""
    _one_error_line(err, f"results file {path!r}", "not a regular file")
    assert not (tmp_path / "dpclaims-report").exists()


def test_defect04_oversized_results_file_is_refused(tmp_path, monkeypatch):
    from dpclaims.results import files

    monkeypatch.setattr(files, "MAX_RESULTS_BYTES", 1000)
    (tmp_path / "results.json").write_text(" " * 1001 + "{}")
    code, out, err = cli("report", tmp_path / "results.json", "--out", tmp_path / "r")
    assert code == 2 and not (tmp_path / "r").exists()
    _one_error_line(err, "larger than 1000 bytes")


# ------------------------------------------------------------------------------------------
# 11. report.md was not HTML-escaped: a hostile registry put raw tags in it.
# ------------------------------------------------------------------------------------------

HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> a | b `code` &amp;"


def test_defect11_report_md_escapes_every_text_from_the_registry(tmp_path):
    fields = ("title", "algorithm", "statement", "formula", "regime", "source")
    replace = [
        (f'{name} = "', f'{name} = "{HOSTILE.replace(chr(34), "")} ') for name in fields
    ]  # fmt: skip
    registry = _registry(tmp_path / "hostile", "faults-files-b", replace)
    out = tmp_path / "report"
    code, _, err = cli(
        "verify", "--registry", registry, "--paper", "faults-files-b", "--out", out,
        "--backend", "serial", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    markdown = (out / "report.md").read_text()
    assert HOSTILE.split()[0] in (out / "results.json").read_text()  # kept verbatim in the data
    assert re.findall(r"<\s*/?\s*[A-Za-z!]", markdown) == []  # no raw tag survives
    assert "&lt;script&gt;" in markdown and "&lt;img src=x onerror=alert(2)&gt;" in markdown
    for row in [line for line in markdown.splitlines() if line.startswith("|")]:
        header = row.count("|") - row.count("\\|")
        assert header in (3, 4, 6), row  # a `|` in a cell never adds a column


# ------------------------------------------------------------------------------------------
# 3. A claim id the registry accepted broke the report after every experiment ran.
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_id, fragment",
    [
        ("x" * 300, "at most 120 characters"),
        ("smith.$x^{2$.privacy", "letters, digits"),
        ("smith.<b>.privacy", "letters, digits"),
    ],
)
@pytest.mark.parametrize("command", ["verify", "list"])
def test_defect03_registry_refuses_a_claim_id_that_cannot_name_a_figure(
    tmp_path, monkeypatch, bad_id, fragment, command
):
    paper = f"faults-files-c{len(bad_id)}"
    registry = _registry(tmp_path / "r", paper, [(f'"{paper}.mean.privacy"', f'"{bad_id}"')])
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    extra = ["--out", "report", "--backend", "serial", "--quiet"] if command == "verify" else []
    code, out, err = cli(command, "--registry", registry, *extra)
    assert code == 2 and out == ""
    line = _one_error_line(err, "claims.toml", fragment, "[A-Za-z0-9_.-]")
    assert bad_id[:40] in line and len(line) < 400
    assert _tree(tmp_path) == before


def test_defect03_report_of_any_id_and_mathtext_draws_safe_unique_figure_names(verified, tmp_path):
    document = _document(verified)
    ids = ["x" * 300 + "$\\alpha_{$", "y/../$x^2$"]
    for entry, new in zip(document["claims"], ids, strict=True):
        entry["id"] = new
    document["claims"][1]["evidence"]["sweep"]["param"] = "$\\frac{1}{$"
    document["claims"][1]["evidence"]["check"]["claimed"] = "O($n^{-1/2$)"
    (tmp_path / "results.json").write_text(json.dumps(document))
    code, out, err = cli("report", tmp_path / "results.json", "--out", tmp_path / "r")
    assert code == 0 and err == "", err
    names = sorted(p.name for p in (tmp_path / "r" / "figures").iterdir())
    assert len(names) == 3 and all(len(n) <= 100 and re.fullmatch(r"[\w.-]+", n) for n in names)
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert all(f"figures/{name}" in markdown for name in names)


def test_defect03_a_figure_that_fails_is_left_out_and_results_are_kept(tmp_path, monkeypatch):
    from dpclaims.reports import writer

    def broken(entry):
        raise ValueError(f"cannot draw {entry.id}\nsecond line")

    monkeypatch.setattr(writer, "claim_figure", broken)
    registry = _registry(tmp_path / "r", "faults-files-d")
    out = tmp_path / "report"
    code, stdout, err = cli(
        "verify", "--registry", registry, "--paper", "faults-files-d", "--out", out,
        "--backend", "serial", "--quiet",
    )  # fmt: skip
    assert code == 0 and "2 claims: 2 consistent" in stdout
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(
        line.startswith("dpclaims: warning: figure of") for line in lines
    )
    assert "faults-files-d.mean.privacy" in lines[0] and "ValueError: cannot draw" in lines[0]
    document = json.loads((out / "results.json").read_text())
    assert [e["verdict"] for e in document["claims"]] == ["consistent", "consistent"]
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["summary.png"]
    assert (out / "report.md").is_file() and (out / "report.html").is_file()


# ------------------------------------------------------------------------------------------
# 14. kill -9 during the report swap left --out missing, or a staging folder nobody removed.
# ------------------------------------------------------------------------------------------

KILLED_WRITE = """
import os, shutil, signal, sys, tempfile
from pathlib import Path

# only the module under test (not the report package, which imports matplotlib): this script
# starts once per step
from dpclaims import atomic

out, text, kill_at, exchange = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
steps = [0]


def step(function):
    def counted(*args, **kwargs):
        steps[0] += 1
        if steps[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return function(*args, **kwargs)
    return counted


if not exchange:
    atomic._exchange = lambda a, b: False
for module, name in [(os, "replace"), (os, "mkdir"), (os, "rmdir"), (os, "unlink"),
                     (os, "rename"), (atomic, "_exchange"), (atomic, "_write_marker")]:
    setattr(module, name, step(getattr(module, name)))
Path.write_text = step(Path.write_text)
with atomic.staged_directory(out, force=True) as staging:
    (staging / "figures").mkdir()
    (staging / "figures" / "a.png").write_text(text)
    (staging / "report.md").write_text(text)
print(steps[0])
"""


def _report_text(out):
    """The text of the complete report at ``out`` (its marker lists exactly what it holds)."""
    from dpclaims.atomic import _foreign_entry

    assert _foreign_entry(out) is None and (out / "figures" / "a.png").is_file()
    return (out / "report.md").read_text()


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_defect14_a_kill_at_every_step_of_the_report_write_never_loses_the_report(
    tmp_path, exchange, fork_server
):
    from dpclaims.atomic import check_output_dir, staged_directory

    script = tmp_path / "write.py"
    script.write_text(KILLED_WRITE)
    folder = tmp_path / "work"
    folder.mkdir()
    out = folder / "report"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = fork_server(env, ["dpclaims.atomic"])  # a fresh process per step, no start-up

    def write(text, kill_at):
        argv = [script, out, text, kill_at, int(exchange)]
        return server.run(argv, cwd=tmp_path, timeout=120)

    assert write("old", 0).returncode == 0 and _report_text(out) == "old"
    kill_at = 1
    while True:
        done = write("new", kill_at)
        if done.returncode == 0:
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        if not exchange and not out.exists():  # killed between the two renames: the next
            check_output_dir(out, force=True)  # check (of any run) puts the old report back
        assert _report_text(out) in ("old", "new"), kill_at  # never missing nor half-written
        with staged_directory(out, force=True) as staging:  # the next run recovers and sweeps
            (staging / "figures").mkdir()
            (staging / "figures" / "a.png").write_text("old")
            (staging / "report.md").write_text("old")
        assert _report_text(out) == "old"
        assert sorted(p.name for p in folder.iterdir()) == ["report"], kill_at
        kill_at += 1
    assert kill_at > 8 and _report_text(out) == "new"  # every step was killed once
    assert sorted(p.name for p in folder.iterdir()) == ["report"]


def test_defect14_a_work_folder_of_a_live_process_or_not_dpclaims_is_left_alone(tmp_path):
    from dpclaims.atomic import OWNER, check_output_dir

    alive = tmp_path / ".report.dpclaims-work.live"
    alive.mkdir()
    (alive / OWNER).write_text(f"{os.getpid()} {socket.gethostname()}\n")
    foreign = tmp_path / ".report.dpclaims-work.mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("no owner file: not dpclaims'")
    before = _tree(tmp_path)
    check_output_dir(tmp_path / "report")
    assert _tree(tmp_path) == before


# ------------------------------------------------------------------------------------------
# 15. --force and symlinks touched user entries; bad input left empty parent folders.
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, named",
    [
        (lambda out: (out / "mine").mkdir(), "'mine', which dpclaims did not write"),
        (lambda out: (out / "figures" / "empty").mkdir(), "'figures/empty', which dpclaims"),
        (
            lambda out: (out / "report.md").write_text("my notes on the findings"),
            "'report.md', changed since dpclaims wrote it",
        ),
    ],
    ids=["empty-folder", "empty-subfolder", "edited-report"],
)
def test_defect15_force_leaves_a_report_with_user_entries_alone(verified, tmp_path, change, named):
    out = tmp_path / "report"
    shutil.copytree(verified[1], out)
    change(out)
    before = _tree(tmp_path)
    code, stdout, err = cli("report", out / "results.json", "--out", out, "--force")
    assert code == 2 and stdout == ""
    _one_error_line(err, named, "--force leaves the folder alone")
    assert _tree(tmp_path) == before


def test_defect15_a_symlinked_out_is_refused_naming_the_folder_it_points_to(verified, tmp_path):
    real = tmp_path / "real"
    shutil.copytree(verified[1], real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    before = _tree(tmp_path)
    code, _, err = cli("report", real / "results.json", "--out", link, "--force")
    assert code == 2
    _one_error_line(err, "is a symbolic link", f"--out {str(real)!r}")
    assert _tree(tmp_path) == before and link.is_symlink()
    code, _, err = cli("report", real / "results.json", "--out", real, "--force")
    assert code == 0 and link.is_symlink() and link.resolve() == real


def test_defect15_bad_input_found_late_creates_no_parent_folder(verified, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    registry = verified[0]
    code, _, err = cli(
        "verify", "--registry", registry, "--paper", "faults-files-a", "--out", "a/b/report",
        "--workers", "0",
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# 5. A full disk was an internal error (exit 3) for verify, report and --figure.
# ------------------------------------------------------------------------------------------


def _disk_fills_after(monkeypatch, writes, code=errno.ENOSPC):
    """Path.write_text / write_bytes fail with ``code`` after ``writes`` writes."""
    from pathlib import Path

    count = [0]

    def failing(write):
        def attempt(self, *args, **kwargs):
            count[0] += 1
            if count[0] > writes:
                raise OSError(code, os.strerror(code))
            return write(self, *args, **kwargs)

        return attempt

    monkeypatch.setattr(Path, "write_text", failing(Path.write_text))
    monkeypatch.setattr(Path, "write_bytes", failing(Path.write_bytes))


@pytest.mark.parametrize("writes", [0, 1, 3])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_defect05_a_full_disk_while_writing_the_report_is_one_line_and_leaves_nothing(
    verified, tmp_path, monkeypatch, writes, code
):
    monkeypatch.chdir(tmp_path)
    shutil.copy(verified[1] / "results.json", tmp_path / "results.json")
    before = _tree(tmp_path)
    with monkeypatch.context() as patched:
        _disk_fills_after(patched, writes, code)
        result = cli("report", "results.json", "--out", "new/report")
    code_, out, err = result
    assert code_ == 2 and out == ""
    _one_error_line(err, "cannot write 'new/report'", os.strerror(code).lower(), "--out")
    assert _tree(tmp_path) == before  # no work folder, no parent folder, nothing half-written


def test_defect05_a_full_disk_while_writing_the_figure_is_one_line_and_leaves_nothing(
    tmp_path, monkeypatch
):
    from dpclaims import atomic

    monkeypatch.chdir(tmp_path)

    def full(fd, mode):
        os.close(fd)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fdopen", full)
    code, out, err = cli(*AUDIT, "--figure", "figure.png")
    assert code == 2
    _one_error_line(err, "figure.png", "no space left on device")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# 16 (part). ±1e308 gave several stderr lines (numpy overflow warnings, then an error).
# ------------------------------------------------------------------------------------------


def test_defect16_an_epsilon_of_1e308_is_one_line():
    code, out, err = cli(*AUDIT, "--epsilon", "1e308")
    assert code == 2 and out == ""
    _one_error_line(err, "--epsilon 1e+308 is too large", "<= 700")


def test_defect16_a_report_of_huge_values_warns_at_most_once_per_figure(verified, tmp_path):
    document = _document(verified)
    document["claims"][0]["evidence"].update(epsilon=1e308, epsilon_lower=1e308)
    sweep = document["claims"][1]["evidence"]["sweep"]
    sweep["errors"] = [[1e308] * len(row) for row in sweep["errors"]]
    (tmp_path / "results.json").write_text(json.dumps(document))
    code, _, err = cli("report", tmp_path / "results.json", "--out", tmp_path / "r")
    assert code == 0 and "overflow encountered" not in err
    assert all(line.startswith("dpclaims: warning: figure of") for line in err.splitlines())
    assert len(err.splitlines()) <= 1 and (tmp_path / "r" / "report.md").is_file()
