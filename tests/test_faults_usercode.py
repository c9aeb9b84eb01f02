"""Fault campaign of issue #30, user code and user input files: each defect reproduced.

User code (mechanisms, experiments modules, experiments) may call ``sys.exit``, print, loop
forever or shadow dpclaims' own imports; user files (.npz datasets, claims TOMLs) may be zip
bombs, FIFOs or ``/dev/zero``.  dpclaims answers each with one line, the right exit code and
nothing half-written, and a CI gate never passes silently.
"""

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from dpclaims.cli import main

ROOT = Path(__file__).resolve().parents[1]

MECHANISM = textwrap.dedent(
    """
    import numpy as np

    def noisy(data, rng, trials):
        return data.x.mean(axis=(0, 1)) + rng.standard_normal((trials, data.d))
    """
)

PAPER = textwrap.dedent(
    """
    [paper]
    id = "{paper}"
    title = "A fault campaign paper"
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

    [[claims]]
    id = "{paper}.other"
    paper = "{paper}"
    kind = "complexity"
    algorithm = "Toy"
    statement = "tau is 3."
    formula = "tau = 3"
    regime = "all"
    source = "Lemma 2"
    exponents = {{}}
    """
)

EXPERIMENTS = textwrap.dedent(
    """
    import sys

    from dpclaims.claims import register_experiment
    from dpclaims.claims.standard import ValueExperiment

    {at_import}

    class Exits:
        def run(self, *, seed=0, execution=None):
            sys.exit(0)


    def sigma(rng):
        {in_compute}
        return {{"sigma": 2.0}}


    @register_experiment("{paper}.value")
    def value_sigma(claim, budget):
        return {experiment}
    """
)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _launch(cwd, *argv, timeout=120):
    """``dpclaims ARGV`` in ``cwd`` as the console script runs it (``sys.path[0]`` is the
    script's folder, not the working folder), in a fresh interpreter: for what dpclaims imports
    after user code (defect 12); the ``console`` fixture runs the others without the start-up."""
    launcher = cwd.parent / f"{cwd.name}-bin" / "dpclaims_launcher.py"
    launcher.parent.mkdir(exist_ok=True)
    launcher.write_text("import sys\nfrom dpclaims.cli import main\nsys.exit(main())\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(launcher), *map(str, argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _datasets(folder: Path) -> list[str]:
    np.savez(folder / "d0.npz", x=np.zeros((10, 2, 1)))
    np.savez(folder / "d1.npz", x=np.pad(np.ones((1, 2, 1)), ((0, 9), (0, 0), (0, 0))))
    return ["--d0", "d0.npz", "--d1", "d1.npz"]


def _paper(folder: Path, paper: str, *, at_import="", in_compute="", experiment=None) -> Path:
    """A --registry folder whose experiments module (named after ``paper``) is made hostile by
    the code ``at_import`` / ``in_compute`` or the ``experiment`` its factory returns."""
    module = "faults_" + paper.replace("-", "_")
    folder.mkdir(parents=True)
    (folder / "claims.toml").write_text(PAPER.format(paper=paper, module=module))
    experiment = experiment or 'ValueExperiment(sigma, expected={"sigma": 2.0})'
    source = EXPERIMENTS.format(
        paper=paper, at_import=at_import, in_compute=in_compute, experiment=experiment
    )
    (folder / f"{module}.py").write_text(source)
    return folder


def _verify(folder: Path, out: Path, *extra) -> list:
    paper = folder.name
    return ["verify", "--registry", folder, "--paper", paper, "--out", out, "--quiet", *extra]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- defect 2: sys.exit() in user code ---------------------------------------------------


def test_defect02_sys_exit_in_a_mechanism_is_a_mechanism_error(
    tmp_path, monkeypatch, capsys, console
):
    monkeypatch.chdir(tmp_path)
    quitter = "import sys\n\ndef noisy(data, rng, trials):\n    sys.exit(0)\n"
    (tmp_path / "quitter.py").write_text(quitter)
    files = _datasets(tmp_path)
    before = sorted(os.listdir(tmp_path))
    argv = ["audit", "quitter:noisy", *files, "--trials", 1000, "--backend", "serial"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert _one_line(err) == (
        "dpclaims: error: the mechanism called sys.exit(0); a mechanism must return its outputs"
    )
    assert sorted(os.listdir(tmp_path)) == before
    done = console(tmp_path, *argv[:-1], "processes", "--workers", 2)
    assert done.returncode == 2 and done.stdout == ""
    assert "the mechanism called sys.exit(0)" in _one_line(done.stderr)


def test_defect02_sys_exit_while_importing_user_code_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "early.py").write_text("import sys\nsys.exit(0)\n")
    code, out, err = run(capsys, "audit", "early:noisy", *_datasets(tmp_path))
    assert code == 2 and out == ""
    assert _one_line(err) == (
        "dpclaims: error: importing 'early' for mechanism 'early:noisy' failed: the module "
        "called sys.exit(0); fix the module"
    )


def test_defect02_sys_exit_in_an_experiments_module_is_a_claim_error(tmp_path, capsys, console):
    folder = _paper(tmp_path / "exit-at-import", "exit-at-import", at_import="sys.exit(0)")
    code, out, err = run(capsys, *_verify(folder, tmp_path / "report"))
    assert code == 1, (out, err)
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert [e["verdict"] for e in results["claims"]] == ["error", "error"]
    assert "the experiments module called sys.exit(0)" in results["claims"][0]["error"]
    done = console(tmp_path, *_verify(folder, tmp_path / "report2"))
    assert done.returncode == 1, done.stderr
    assert "2 claims: 2 error" in done.stdout and (tmp_path / "report2" / "report.html").is_file()


def test_defect02_sys_exit_in_an_experiment_run_is_a_claim_error(tmp_path, capsys, console):
    folder = _paper(tmp_path / "exit-in-run", "exit-in-run", experiment="Exits()")
    code, out, err = run(capsys, *_verify(folder, tmp_path / "report"))
    assert code == 1, (out, err)
    value = json.loads((tmp_path / "report" / "results.json").read_text())["claims"][0]
    assert value["verdict"] == "error"
    assert value["error"] == (
        "the experiment called sys.exit(0); an experiment must return its result"
    )
    done = console(tmp_path, *_verify(folder, tmp_path / "report2"))
    assert done.returncode == 1 and " 1 error" in done.stdout, done.stderr


def test_defect02_sys_exit_in_a_rate_function_or_statistic(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exitrate.py").write_text("import sys\n\ndef f(n, rng):\n    sys.exit(3)\n")
    argv = ["rate", "exitrate:f", "--values", "10,100,1000,10000", "--expected", "-0.5"]
    code, out, err = run(capsys, *argv, "--backend", "serial")
    assert code == 2 and out == ""
    assert "the experiment called sys.exit(3)" in _one_line(err)
    assert not (tmp_path / "exitrate.f.png").exists()


def test_defect02_keyboard_interrupt_in_user_code_still_stops(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctrlc.py").write_text(
        "def noisy(data, rng, trials):\n    raise KeyboardInterrupt\n"
    )
    argv = ["audit", "ctrlc:noisy", *_datasets(tmp_path), "--trials", 1000, "--backend", "serial"]
    code, out, err = run(capsys, *argv)
    assert code == 130 and _one_line(err) == "dpclaims: interrupted"


# --- defect 9: --json stdout corrupted by user output -------------------------------------


def test_defect09_json_stdout_stays_json_when_user_code_prints(
    tmp_path, monkeypatch, capsys, console
):
    monkeypatch.chdir(tmp_path)
    chatty = MECHANISM.replace(
        "def noisy(data, rng, trials):",
        "print('loading the model')\n\ndef noisy(data, rng, trials):\n"
        "    print('running', trials)\n    os.system('echo from a child process')",
    )
    (tmp_path / "chatty.py").write_text("import os\n" + chatty)
    argv = ["audit", "chatty:noisy", *_datasets(tmp_path), "--trials", 1000, "--json"]
    code, out, err = run(capsys, *argv, "--backend", "serial")
    assert code == 0 and json.loads(out)["verdict"] in (
        "consistent",
        "consistent_weak",
        "inconclusive",
    )
    assert "loading the model" in err and "running" in err
    done = console(tmp_path, *argv, "--backend", "processes", "--workers", 2)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mechanism"] == "chatty:noisy"
    assert "from a child process" in done.stderr and "running" in done.stderr


# --- defect 12: the working folder stays on sys.path after importing the user's module ----


def test_defect12_local_modules_do_not_shadow_dpclaims_imports(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymech.py").write_text(MECHANISM)
    for name in ("tqdm", "matplotlib", "scipy"):
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the local {name}.py ran')\n")
    files = _datasets(tmp_path)
    path = list(sys.path)
    argv = ["audit", "mymech:noisy", *files, "--trials", 1000, "--backend", "serial"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and sys.path == path, err
    done = _launch(tmp_path, *argv, "--figure", "trade-off.png")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "trade-off.png").read_bytes().startswith(b"\x89PNG")


def test_importing_the_users_code_writes_no_bytecode_in_their_folder(tmp_path, monkeypatch, capsys):
    """Whether or not ``PYTHONDONTWRITEBYTECODE`` is set: Python would leave ``__pycache__``
    beside the user's module (and its own imports), a folder dpclaims did not make."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helper.py").write_text("SHIFT = 0.0\n")
    (tmp_path / "mymech.py").write_text("from helper import SHIFT\n" + MECHANISM)
    files = _datasets(tmp_path)
    before = sorted(os.listdir(tmp_path))
    argv = ["audit", "mymech.py:noisy", *files, "--trials", 1000, "--backend", "serial"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == before and sys.dont_write_bytecode is False


# --- defects 7, 8 and 16: hostile .npz datasets and claims TOMLs ---------------------------


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _forged_npy(shape: bytes) -> bytes:
    """A .npy of one float whose header declares ``shape`` (less padding: the same length)."""
    grow = len(shape) - len(b"(1, 1, 1)")
    return _npy(np.zeros((1, 1, 1))).replace(b"(1, 1, 1), }" + b" " * grow, shape + b", }", 1)


def _bomb(path: Path, header: bytes, *, zeros: int) -> None:
    """A zip (zip64) of one deflated member ``x.npy``: ``header`` and ``zeros`` zero bytes.

    A full flush resets the compressor, so every 16 MiB block of zeros deflates to the same
    bytes: one block compressed, repeated (what ``zipfile`` writes, without its 4 s).
    """
    block, compressor = bytes(2**24), zlib.compressobj(1, zlib.DEFLATED, -15)
    head = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    count, rest = divmod(zeros, len(block))
    tail = compressor.compress(bytes(rest)) + compressor.flush()
    crc = zlib.crc32(header)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(bytes(rest), crc)
    size, packed = len(header) + zeros, len(head) + count * len(repeated) + len(tail)
    name, sizes = b"x.npy", struct.pack("<HHQQ", 1, 16, size, packed)  # the zip64 extra field
    common = struct.pack("<HHHHHIII", 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF)
    local = b"PK\x03\x04" + common + struct.pack("<HH", len(name), len(sizes)) + name + sizes
    central = (
        b"PK\x01\x02"
        + struct.pack("<H", 45)
        + common
        + struct.pack("<HHHHHII", len(name), len(sizes), 0, 0, 0, 0, 0)
        + name
        + sizes
    )
    start = len(local) + packed  # where the central directory begins
    record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(central), start)
    locator = struct.pack("<IIQI", 0x07064B50, 0, start + len(central), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), start, 0)
    with open(path, "wb") as stream:
        stream.write(local + head)
        for _ in range(count):
            stream.write(repeated)
        stream.write(tail + central + record + locator + end)


def _bad_npz(case: str, path: Path) -> None:
    """Write the hostile dataset ``case`` to ``path``."""
    if case == "bomb":  # 10 MB on disk, 2.2 GB inflated
        _bomb(path, _forged_npy(b"(275000000, 1, 1)")[:128], zeros=2_200_000_000)
    elif case == "lying-header":  # a small member whose header declares 8 TB
        _zip(path, {"x.npy": _forged_npy(b"(10000000000000, 1, 1)")})
    elif case == "duplicate":  # numpy takes the last of two x.npy members
        with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as archive:
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
            archive.writestr("x.npy", _npy(np.zeros((3, 1, 1))))
            archive.writestr("x.npy", _npy(np.ones((3, 1, 1))))
    elif case == "complex":
        np.savez(path, x=np.zeros((3, 1, 1), dtype=complex))
    elif case == "datetime":
        np.savez(path, x=np.zeros((3, 1, 1), dtype="datetime64[s]"))
    elif case == "timedelta-y":
        np.savez(path, x=np.zeros((3, 1, 1)), y=np.zeros((3, 1), dtype="timedelta64[s]"))


BAD_NPZ = {
    "bomb": "--d0 file 'bad.npz' inflates to 2,200,000,128 bytes, over the limit of "
    "2,147,483,648 bytes (DPCLAIMS_MAX_NPZ_BYTES); pass a smaller dataset",
    "lying-header": "--d0 file 'bad.npz' is damaged or truncated (array 'x' declares "
    "80,000,000,000,000 bytes in a member of 136); save the dataset with numpy.savez",
    "duplicate": "--d0 file 'bad.npz' holds two members named 'x.npy'",
    "complex": "--d0 file 'bad.npz': array 'x' has dtype complex128, not real numbers",
    "datetime": "--d0 file 'bad.npz': array 'x' has dtype datetime64[s], not real numbers",
    "timedelta-y": "--d0 file 'bad.npz': array 'y' has dtype timedelta64[s], not real numbers",
}


@pytest.mark.parametrize("case", BAD_NPZ)
def test_defect07_16_hostile_npz_is_refused_before_it_is_read(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymech.py").write_text(MECHANISM)
    files = _datasets(tmp_path)
    _bad_npz(case, tmp_path / "bad.npz")
    before = sorted(os.listdir(tmp_path))
    code, out, err = run(capsys, "audit", "mymech:noisy", "--d0", "bad.npz", *files[2:])
    assert code == 2 and out == ""
    assert _one_line(err).startswith("dpclaims: error: " + BAD_NPZ[case]), err
    assert sorted(os.listdir(tmp_path)) == before


def test_defect07_npz_cap_can_be_lowered(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymech.py").write_text(MECHANISM)
    files = _datasets(tmp_path)
    monkeypatch.setenv("DPCLAIMS_MAX_NPZ_BYTES", "100")
    code, _, err = run(capsys, "audit", "mymech:noisy", *files)
    assert code == 2 and "over the limit of 100 bytes (DPCLAIMS_MAX_NPZ_BYTES)" in err
    monkeypatch.setenv("DPCLAIMS_MAX_NPZ_BYTES", "lots")
    code, _, err = run(capsys, "audit", "mymech:noisy", *files)
    assert code == 2 and "DPCLAIMS_MAX_NPZ_BYTES must be a whole number of bytes" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_defect08_a_fifo_dataset_or_claims_file_never_blocks(tmp_path, console):
    (tmp_path / "mymech.py").write_text(MECHANISM)
    files = _datasets(tmp_path)
    os.mkfifo(tmp_path / "fifo.npz")
    done = console(tmp_path, "audit", "mymech:noisy", "--d0", "fifo.npz", *files[2:], timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert _one_line(done.stderr) == (
        "dpclaims: error: --d0 file 'fifo.npz' is not a regular file (it is a FIFO); "
        "pass an .npz file saved with numpy.savez(path, x=..., y=...)"
    )
    folder = _paper(tmp_path / "fifo-paper", "fifo-paper")
    os.mkfifo(folder / "more.toml")
    done = console(tmp_path, "list", "--registry", folder, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert _one_line(done.stderr) == (
        f"dpclaims: error: {folder / 'more.toml'}: file: not a regular file (it is a FIFO); "
        "a claims file is a TOML text file"
    )


def test_defect07_a_device_or_huge_claims_file_is_refused(tmp_path, monkeypatch, capsys):
    folder = _paper(tmp_path / "huge-paper", "huge-paper")
    (folder / "zero.toml").symlink_to("/dev/zero")
    code, out, err = run(capsys, "list", "--registry", folder)
    assert code == 2 and "zero.toml: file: not a regular file (it is a character device)" in err
    (folder / "zero.toml").unlink()
    with open(folder / "big.toml", "wb") as stream:
        stream.truncate(17 * 2**20)
    code, out, err = run(capsys, "list", "--registry", folder)
    assert code == 2 and out == ""
    assert _one_line(err).endswith(
        "big.toml: file: 17,825,792 bytes, over the limit of 16,777,216 bytes for a claims file"
    )


# --- defect 8: an experiment that never ends ----------------------------------------------


def test_defect08_a_claim_over_its_time_limit_is_an_error_and_the_run_goes_on(tmp_path, console):
    loop = "while True:\n            pass"
    folder = _paper(tmp_path / "loops-in-run", "loops-in-run", in_compute=loop)
    argv = [*_verify(folder, tmp_path / "report"), "--claim-timeout", 2, "--json"]
    done = console(tmp_path, *argv, timeout=60)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert [c["verdict"] for c in summary["claims"]] == ["error", "not_checkable"]
    assert summary["claims"][0]["summary"] == (
        "error: exceeded the time limit of 2 s (--claim-timeout)"
    )
    assert summary["wall_time"] < 20


def test_defect08_an_experiments_module_that_never_finishes_importing(tmp_path, capsys):
    folder = _paper(tmp_path / "loops-at-import", "loops-at-import", at_import="while True: pass")
    argv = [*_verify(folder, tmp_path / "report"), "--claim-timeout", 1, "--backend", "serial"]
    code, out, err = run(capsys, *argv)
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert code == 1 and [e["verdict"] for e in results["claims"]] == ["error", "error"]
    assert results["load_errors"][0]["error"] == (
        "exceeded the time limit of 1 s (--claim-timeout)"
    )
    assert results["wall_time"] < 10  # the module is tried once, not once per claim


def test_defect08_worker_processes_stuck_in_a_mechanism_are_ended(tmp_path, capsys, console):
    assert main(["new-paper", "stuck-workers", str(tmp_path / "stuck-workers")]) == 0
    module = tmp_path / "stuck-workers" / "stuck_workers_experiments.py"
    source = module.read_text().replace(
        "    values = np.clip(",
        "    while os.getpid() != PARENT:  # only the workers hang (asleep: no core spun)\n"
        "        time.sleep(0.05)\n    values = np.clip(",
    )
    module.write_text("import os\nimport time\n\nPARENT = os.getpid()\n" + source)
    folder = tmp_path / "stuck-workers"
    argv = [*_verify(folder, tmp_path / "report"), "--claim-timeout", 3]
    done = console(tmp_path, *argv, "--backend", "processes", "--workers", 2, timeout=120)
    assert done.returncode == 1, done.stderr
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    verdicts = {e["id"]: (e["verdict"], e["summary"]) for e in results["claims"]}
    assert verdicts["stuck-workers.mean.privacy"] == (
        "error",
        "error: exceeded the time limit of 3 s (--claim-timeout)",
    )
    assert verdicts["stuck-workers.mean.rate"][0] in ("consistent", "inconclusive")


def test_defect08_claim_timeout_must_be_positive(tmp_path, capsys):
    folder = _paper(tmp_path / "timeout-zero", "timeout-zero")
    code, out, err = run(capsys, *_verify(folder, tmp_path / "report"), "--claim-timeout", 0)
    assert code == 2 and not (tmp_path / "report").exists()
    assert _one_line(err).startswith("dpclaims: error: --claim-timeout must be a finite number > 0")


# --- defect 10: what a registry's experiments module may be -------------------------------


@pytest.mark.parametrize("module", ["this", "http.server", "json"])
def test_defect10_a_registry_toml_cannot_import_any_installed_module(module, tmp_path, capsys):
    folder = tmp_path / "foreign-module"
    folder.mkdir()
    (folder / "claims.toml").write_text(PAPER.format(paper="foreign-module", module=module))
    code, out, err = run(capsys, *_verify(folder, tmp_path / "report"))
    assert code == 2 and out == "" and not (tmp_path / "report").exists()
    assert _one_line(err).startswith(
        f"dpclaims: error: {folder / 'claims.toml'}: [paper]: experiments module {module!r} is "
    )
    assert f"outside the registry folder {folder}; put the experiments module in" in err
    assert "Zen of Python" not in out + err


def test_defect10_a_module_that_registers_nothing_makes_its_claims_errors(tmp_path, capsys):
    folder = tmp_path / "registers-nothing"
    folder.mkdir()
    module = "faults_registers_nothing"
    (folder / "claims.toml").write_text(PAPER.format(paper="registers-nothing", module=module))
    (folder / f"{module}.py").write_text("import numpy as np\n")
    message = (
        f"experiments module {module!r} registered no experiment for this claim (nor for any "
        "other claim of its paper); decorate a factory with @register_experiment(claim id)"
    )
    code, out, _ = run(capsys, "list", "--registry", folder, "--paper", "registers-nothing")
    assert code == 0 and out.count(f"error: {message}") == 2
    code, out, err = run(capsys, *_verify(folder, tmp_path / "report"))
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert code == 1 and [e["verdict"] for e in results["claims"]] == ["error", "error"]
    assert results["claims"][0]["error"] == f"DPClaimsError: {message}"


def test_defect10_verify_registry_finds_its_module_from_any_folder(tmp_path, monkeypatch, capsys):
    folder = _paper(tmp_path / "elsewhere" / "from-anywhere", "from-anywhere")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *_verify(folder.relative_to(tmp_path), tmp_path / "report"))
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert code == 0 and [e["verdict"] for e in results["claims"]] == [
        "consistent",
        "not_checkable",
    ]
    assert results["claims"][1]["reason"] == "no experiment yet"  # the module registered one
