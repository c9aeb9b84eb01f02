import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpclaims.cli import main

PASSING = ("consistent", "consistent_weak", "inconclusive")
"""Verdicts of an audit that found no violation (exit code 0)."""

USER_MECHANISM = textwrap.dedent(
    """
    import numpy as np

    def noisy_mean(data, rng, trials):
        return data.x.mean(axis=(0, 1)) + SIGMA * rng.standard_normal((trials, data.d))
    """
)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A module ``usermech`` with a private (sigma = 1) and a leaky (sigma = 0.01) noisy mean."""
    (tmp_path / "usermech.py").write_text(USER_MECHANISM.replace("SIGMA", "1.0"))
    (tmp_path / "leakymech.py").write_text(USER_MECHANISM.replace("SIGMA", "0.01"))
    monkeypatch.syspath_prepend(str(tmp_path))
    x = np.zeros((10, 2, 1))
    np.savez(tmp_path / "d0.npz", x=x)
    x1 = x.copy()
    x1[0] = 1.0
    np.savez(tmp_path / "d1.npz", x=x1)
    x2 = x1.copy()
    x2[1] = 1.0
    np.savez(tmp_path / "far.npz", x=x2)
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    np.savez(tmp_path / "nox.npz", features=x)
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_every_claim_and_filters(capsys):
    code, out, _ = run(capsys, "list")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) > 100 and lines[-1] == f"{len(lines) - 2} claims"
    code, out, _ = run(capsys, "list", "--paper", "murata-suzuki-2023", "--kind", "complexity")
    lines = out.strip().splitlines()
    assert lines[-1] == (f"{len(lines) - 2} claims" if len(lines) != 3 else "1 claim")
    code, out, _ = run(
        capsys, "list", "--paper", "murata-suzuki-2023", "--kind", "privacy", "--json"
    )
    rows = json.loads(out)
    assert code == 0 and rows and {r["paper"] for r in rows} == {"murata-suzuki-2023"}
    assert {r["kind"] for r in rows} == {"privacy"}


def test_audit_of_correct_builtin_is_consistent_and_exit_zero(capsys):
    code, out, err = run(capsys, "audit", "gaussian", "--trials", "20000", "--backend", "serial")
    assert code == 0 and "verdict       consistent" in out and err == ""


def test_audit_of_buggy_builtin_is_violation_and_exit_one(capsys):
    code, out, _ = run(
        capsys, "audit", "laplace-half-scale", "--delta", "0", "--trials", "20000", "--json"
    )
    payload = json.loads(out)
    assert code == 1
    assert payload["verdict"] == "violation" and payload["epsilon_lower"] > 1.0
    assert payload["mechanism"] == "laplace-half-scale" and payload["confidence"] == 0.95


def test_audit_of_user_callable_from_npz(capsys, user_module):
    d0, d1 = str(user_module / "d0.npz"), str(user_module / "d1.npz")
    code, out, _ = run(
        capsys, "audit", "usermech:noisy_mean", "--d0", d0, "--d1", d1, "--trials", "20000"
    )
    assert code == 0, out
    code, out, _ = run(
        capsys, "audit", "leakymech:noisy_mean", "--d0", d0, "--d1", d1, "--trials", "20000"
    )
    assert code == 1 and "violation" in out


def test_audit_no_strict_of_an_unseeded_mechanism_says_it_is_not_reproducible(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "unseeded.py").write_text(
        "import numpy as np\n"
        "def noisy_mean(data, rng, trials):\n"
        "    return data.x.mean() + np.random.default_rng().standard_normal(trials)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    x = np.zeros((10, 2, 1))
    np.savez(tmp_path / "d0.npz", x=x)
    x[0] = 1.0
    np.savez(tmp_path / "d1.npz", x=x)
    argv = ["audit", "unseeded:noisy_mean", "--d0", str(tmp_path / "d0.npz"), "--d1"]
    argv += [str(tmp_path / "d1.npz"), "--trials", "2000", "--backend", "serial"]
    code, out, err = run(capsys, *argv, "--no-strict")
    assert "rerun         not reproducible: the mechanism draws randomness from outside" in out
    assert "returned different outputs for the same seed" in err
    code, out, err = run(capsys, *argv, "--strict")
    assert code == 2 and "--no-strict in dpclaims audit" in err


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["audit", "nope"], "unknown mechanism 'nope'"),
        (["audit", "gaussian", "--epsilon", "0"], "epsilon must be"),
        (["audit", "gaussian", "--epsilon", "-2"], "epsilon must be"),
        (["audit", "gaussian", "--delta", "1.5"], "delta must be"),
        (["audit", "gaussian", "--delta", "0"], "needs delta > 0"),
        (["audit", "gaussian", "--unit", "team"], "unit must be one of"),
        (["audit", "gaussian", "--trials", "3"], "trials must be"),
        (["audit", "gaussian", "--confidence", "1"], "confidence must be"),
        (["audit", "gaussian", "--method", "magic"], "method"),
        (["audit", "usermech:noisy_mean"], "needs --d0 and --d1"),
        (["audit", "usermech:missing", "--d0", "D0", "--d1", "D1"], "no attribute 'missing'"),
        (["audit", "nosuchmodule:f", "--d0", "D0", "--d1", "D1"], "no module 'nosuchmodule'"),
        (["audit", "usermech:noisy_mean", "--d0", "JUNK", "--d1", "D1"], "is not a .npz archive"),
        (["audit", "usermech:noisy_mean", "--d0", "NOX", "--d1", "D1"], "has no array 'x'"),
        (["audit", "usermech:noisy_mean", "--d0", "MISSING", "--d1", "D1"], "cannot read --d0"),
        (["audit", "usermech:noisy_mean", "--d0", "D0", "--d1", "FAR"], "not neighbours"),
        (["list", "--kind", "vibes"], "kind must be one of"),
        (["list", "--paper", "nobody-2099"], "nobody-2099"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(capsys, user_module, argv, fragment):
    files = {
        "D0": "d0.npz",
        "D1": "d1.npz",
        "FAR": "far.npz",
        "JUNK": "junk.npz",
        "NOX": "nox.npz",
        "MISSING": "missing.npz",
    }
    argv = [str(user_module / files[a]) if a in files else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("dpclaims: error:"), err
    assert fragment in err


def test_usage_errors_exit_two_without_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "dpclaims.cli", "audit"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_help_and_version_return_zero(capsys):
    assert main(["--version"]) == 0 and "dpclaims" in capsys.readouterr().out
    for command in ("verify", "report", "rate", "list", "audit"):
        assert main([command, "--help"]) == 0
        assert "--json" in capsys.readouterr().out


def test_audit_resolves_module_and_file_from_the_current_folder(tmp_path, monkeypatch, capsys):
    """Like pytest and uvicorn: 'module:function' is found in the working folder, 'f.py:function'
    is loaded from the file."""
    (tmp_path / "cwdmech.py").write_text(USER_MECHANISM.replace("SIGMA", "1.0"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "helper_zz.py").write_text("SIGMA = 1.0\n")
    importing = USER_MECHANISM.replace("import numpy as np", "import numpy as np\nimport helper_zz")
    (tmp_path / "sub" / "filemech.py").write_text(importing.replace("SIGMA", "helper_zz.SIGMA"))
    np.savez(tmp_path / "d0.npz", x=np.zeros((10, 2, 1)))
    np.savez(tmp_path / "d1.npz", x=np.pad(np.ones((1, 2, 1)), ((0, 9), (0, 0), (0, 0))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    for name in ("cwdmech", "filemech", "helper_zz"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    datasets = ["--d0", "d0.npz", "--d1", "d1.npz", "--trials", "2000", "--json"]
    for spec in (
        "cwdmech:noisy_mean",
        "./sub/filemech.py:noisy_mean",
        "sub/filemech.py:noisy_mean",
    ):
        code, out, err = run(capsys, "audit", spec, *datasets)
        verdict = json.loads(out)["verdict"]
        assert code == 0 and err == "" and verdict in PASSING, (spec, err)


def test_warnings_are_one_line_on_stderr_and_listed_in_json(tmp_path, monkeypatch, capsys):
    (tmp_path / "globalnoise.py").write_text(
        "import numpy as np\n\ndef noisy(data, rng, trials):\n"
        "    return data.x.sum() + np.random.standard_normal(trials)\n"
    )
    np.savez(tmp_path / "d0.npz", x=np.zeros((4, 1, 1)))
    np.savez(tmp_path / "d1.npz", x=np.pad(np.ones((1, 1, 1)), ((0, 3), (0, 0), (0, 0))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delitem(sys.modules, "globalnoise", raising=False)
    argv = [
        "audit",
        "globalnoise:noisy",
        "--d0",
        "d0.npz",
        "--d1",
        "d1.npz",
        "--trials",
        "1000",
        "--backend",
        "serial",
        "--json",
    ]
    code, out, err = run(capsys, *argv)
    warned = json.loads(out)["warnings"]
    assert [w["category"] for w in warned] == ["NotReproducibleWarning"]
    assert "draws randomness from somewhere other than its rng argument" in warned[0]["message"]
    assert err == f"dpclaims: warning: {warned[0]['message']}\n"
    _, out, err = run(
        capsys, "audit", "gaussian", "--trials", "2000", "--backend", "serial", "--json"
    )
    assert json.loads(out)["warnings"] == [] and err == ""


def test_internal_error_exits_3_with_a_pointer_to_debug(monkeypatch, capsys):
    from dpclaims import claims

    def broken(cls, *args, **kwargs):
        raise KeyError("registry_internal")

    monkeypatch.setattr(claims.Registry, "discover", classmethod(broken))
    code, out, err = run(capsys, "list")
    assert code == 3 and out == ""
    assert err == (
        "dpclaims: internal error: KeyError: 'registry_internal' (a bug in dpclaims; "
        "rerun with --debug for the traceback and report it)\n"
    )
    for argv in (["--debug", "list"], ["list", "--debug"]):
        code, _, err = run(capsys, *argv)
        assert code == 3 and err.startswith("Traceback (most recent call last):")
        assert "in broken" in err
        assert err.splitlines()[-1].startswith("dpclaims: internal error: KeyError")


def test_out_of_memory_exits_3_and_names_the_likely_cause(monkeypatch, capsys):
    from dpclaims import claims

    def exhausted(cls, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(claims.Registry, "discover", classmethod(exhausted))
    code, _, err = run(capsys, "list")
    assert code == 3 and err.count("\n") == 1
    assert err.startswith("dpclaims: error: MemoryError: the run ran out of memory or a worker")


def test_bad_input_with_debug_shows_the_traceback_and_still_exits_2(capsys):
    code, _, err = run(capsys, "--debug", "audit", "gaussian", "--epsilon", "0")
    assert code == 2 and "Traceback" in err
    assert err.splitlines()[-1].startswith("dpclaims: error: epsilon")


def _cli(*argv, cwd=None, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen(
        [sys.executable, "-m", "dpclaims.cli", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_closed_stdout_is_not_an_error():
    """`dpclaims list | head -1`: no broken-pipe message; exit 141 as for tools killed by SIGPIPE.

    The JSON listing is larger than a pipe's buffer: the command is still writing when the reader
    leaves.
    """
    process = _cli("list", "--json")
    assert process.stdout.readline() == "[\n"
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == ""


SLOW_IN_WORKERS = textwrap.dedent(
    """
    import multiprocessing, os, time

    def mechanism(data, rng, trials):
        if multiprocessing.parent_process() is not None:  # in a worker: the first call hangs
            open(f"started-{os.getpid()}", "w").close()
            try:
                os.close(os.open("hanging", os.O_CREAT | os.O_EXCL))
                time.sleep(120)
            except FileExistsError:
                pass
        return data.x.sum() + rng.standard_normal(trials)
    """
)


def test_ctrl_c_is_one_line_exit_130_and_no_worker_traceback(tmp_path):
    """Ctrl-C with one worker busy and another idle (which used to print a 22-line traceback)."""
    (tmp_path / "slowmech.py").write_text(SLOW_IN_WORKERS)
    np.savez(tmp_path / "d0.npz", x=np.zeros((4, 1, 1)))
    np.savez(tmp_path / "d1.npz", x=np.pad(np.ones((1, 1, 1)), ((0, 3), (0, 0), (0, 0))))
    process = _cli(
        "audit",
        "slowmech:mechanism",
        "--d0",
        "d0.npz",
        "--d1",
        "d1.npz",
        "--trials",
        "1000",
        "--backend",
        "processes",
        "--workers",
        "2",
        cwd=tmp_path,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("started-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(tmp_path.glob("started-*"))) == 2
    time.sleep(1.0)  # the second worker is now idle, waiting for a task
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err == "dpclaims: interrupted\n"
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # no worker survives


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130():
    """SIGINT arriving while dpclaims.cli imports its modules (before main() runs)."""
    code = (
        "import builtins, os, signal\n"
        "real = builtins.__import__\n"
        "def interrupting(name, *args, **kwargs):\n"
        "    if name == 'json':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupting\n"
        "import dpclaims.cli\n"
        "print('not reached')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 130
    assert result.stderr == "dpclaims: interrupted\n" and result.stdout == ""


def test_importing_the_cli_is_light_and_leaves_sigint_alone():
    code = (
        "import signal, sys\n"
        "before = signal.getsignal(signal.SIGINT)\n"
        "import dpclaims, dpclaims.cli\n"
        "assert signal.getsignal(signal.SIGINT) is before\n"
        "assert 'scipy' not in sys.modules and 'dpclaims.audit' not in sys.modules\n"
        "assert dpclaims.UserDataset.__name__ == 'UserDataset'\n"
        "assert dpclaims.audit is sys.modules['dpclaims.audit']\n"
        "assert callable(dpclaims.audit.audit)\n"
        "assert dpclaims.audit.audit_ceiling(10_000, delta=1e-5) > 0\n"
        "import dpclaims.audit.search\n"
        "import types\n"
        "assert isinstance(dpclaims.audit.search, types.ModuleType)\n"
        "assert callable(dpclaims.audit.search.search) and callable(dpclaims.audit.audit)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


USER_RATE = textwrap.dedent(
    """
    import numpy as np

    def mean_error(n, rng, scale=1.0):
        # |mean of n standard normals| * scale: decays as n^-1/2; a batch of 200 trials
        return scale * np.abs(rng.standard_normal((200, n)).mean(axis=1))

    def biased_error(n, rng):
        return 0.5 + np.abs(rng.standard_normal((200, n)).mean(axis=1))

    def origin_error(n, rng, scale=1.0):
        # the trivial algorithm: output 0 for a mean of scale; its error does not fall with n
        return scale * (1 + 0.1 * rng.random(200))
    """
)


def _user_folder(folder):
    """A user's folder: a rate experiment module, a mechanism in a sub-folder that imports its
    neighbour, neighbouring datasets, and broken modules."""
    folder.mkdir(exist_ok=True)
    (folder / "myrate.py").write_text(USER_RATE)
    (folder / "sub").mkdir()
    (folder / "sub" / "sigma_zz.py").write_text("SIGMA = 1.0\n")
    mechanism = USER_MECHANISM.replace("import numpy as np", "import numpy as np\nimport sigma_zz")
    (folder / "sub" / "mech.py").write_text(mechanism.replace("SIGMA", "sigma_zz.SIGMA"))
    (folder / "boom.py").write_text("x = 1\nraise RuntimeError('no GPU found\\nsecond line')\n")
    (folder / "needs.py").write_text("import no_such_package_zzz\n")
    (folder / "random.py").write_text("def f(data, rng, trials):\n    return rng.random(trials)\n")
    np.savez(folder / "d0.npz", x=np.zeros((10, 2, 1)))
    np.savez(folder / "d1.npz", x=np.pad(np.ones((1, 2, 1)), ((0, 9), (0, 0), (0, 0))))
    return folder


@pytest.fixture
def user_folder(tmp_path):
    return _user_folder(tmp_path)


def test_rate_of_a_user_function_from_the_current_folder(user_folder, console):
    grid = ["--values", "16,64,256,1024", "--replicates", "4", "--backend", "serial"]
    done = console(
        user_folder,
        *("rate", "myrate:mean_error", "--expected", "-0.5", "--bound", "upper"),
        *("--fixed", "scale=2.5", *grid, "--json", "--control", "myrate:origin_error"),
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    payload = json.loads(done.stdout)
    assert payload["verdict"] == "consistent" and payload["experiment"] == "myrate:mean_error"
    trivial = payload["evidence"]["controls"]["trivial"]
    assert trivial["what"] == "origin_error" and trivial["verdict"] == "inconsistent"
    assert payload["evidence"]["reach"]["within"]
    assert payload["evidence"]["sweep"]["fixed"] == {"scale": 2.5}
    assert payload["evidence"]["sweep"]["values"] == [16, 64, 256, 1024]
    assert payload["evidence"]["check"]["bound"] == "upper"
    assert (user_folder / "myrate.mean_error.png").read_bytes().startswith(b"\x89PNG")
    done = console(
        user_folder,
        "rate",
        "./myrate.py:biased_error",
        "--expected",
        "-0.5",
        "--bound",
        "upper",
        *grid,
    )
    assert done.returncode == 1, done.stderr
    assert "experiment    ./myrate.py:biased_error" in done.stdout
    assert "verdict       inconsistent" in done.stdout
    assert "wrong rate    the measured error × n^+0.25: inconsistent" in done.stdout
    assert "trivial       trivial output: no trivial control" in done.stdout


def test_audit_of_a_file_path_whose_module_imports_its_neighbour(user_folder, console):
    done = console(
        user_folder,
        *("audit", "sub/mech.py:noisy_mean", "--d0", "d0.npz", "--d1", "d1.npz"),
        *("--trials", "2000", "--backend", "serial", "--json"),
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert json.loads(done.stdout)["verdict"] in PASSING


UNLOADABLE = {
    "nosuch_zz:f": "no module 'nosuch_zz' in the current folder (",
    "./nosuch_zz.py:f": "file './nosuch_zz.py' of {role} './nosuch_zz.py:f' does not exist",
    "myrate:nope": "'myrate' has no attribute 'nope' ({role} 'myrate:nope')",
    "boom:f": "failed at {folder}/boom.py:2: RuntimeError: no GPU found; fix the module",
    "needs:f": "it needs module 'no_such_package_zzz', which is not installed",
    "random:f": "not random.py in the current folder; to use that, pass random.py:function",
    "myrate:np": "'np' in 'myrate' is not callable (it is of type module)",
}
"""User code that cannot be loaded, and a fragment of the one line that says why."""

LOAD_OPTIONS = {
    "audit": ["--d0", "d0.npz", "--d1", "d1.npz"],
    "rate": ["--values", "10,100,1000,10000", "--expected", "-0.5"],
}


@pytest.fixture(scope="module")
def unloadable(tmp_path_factory, console):
    """``(folder, {(command, spec): completed process})``: each command on each unloadable
    spec, run as the console script runs it."""
    folder = _user_folder(tmp_path_factory.mktemp("unloadable") / "user")
    cases = [(command, spec) for command in LOAD_OPTIONS for spec in UNLOADABLE]
    return folder, {
        (command, spec): console(folder, command, spec, *LOAD_OPTIONS[command])
        for command, spec in cases
    }


@pytest.mark.parametrize("spec", UNLOADABLE)
@pytest.mark.parametrize("command", LOAD_OPTIONS)
def test_user_code_that_cannot_be_loaded_is_one_line_and_exit_two(unloadable, command, spec):
    folder, done = unloadable[0], unloadable[1][command, spec]
    role = "mechanism" if command == "audit" else "experiment"
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("dpclaims: error: ")
    assert UNLOADABLE[spec].format(role=role, folder=folder) in done.stderr, done.stderr


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["rate", "myrate:mean_error", "--expected", "-0.5"], "needs --values (the grid"),
        (["rate", "myrate:mean_error", "--values", "10,100,1000,10000"], "and --expected"),
        (["rate", "myrate:mean_error", "--values", "10,100,1000", "--expected", "1"], "4 grid"),
        (
            ["rate", "lla24.alg1.risk", "--expected", "-1", "--fixed", "d=2"],
            "--expected, --fixed are",
        ),
        (["rate", "lla24.alg1.risk", "--param", "d"], "--param is for your own function"),
        (["rate", "myrate:f", "--budget", "full"], "--budget sizes a registry claim's experiment"),
        (
            ["rate", "myrate:mean_error", "--values", "10,100,1000,10000", "--expected", "-0.5"]
            + ["--control", "origin_error"],
            "--control 'origin_error' must be 'module:function'",
        ),
        (
            ["rate", "cgt24.complexity.unaccelerated", "--control", "myrate:origin_error"],
            "--control sets the trivial algorithm of a single rate sweep",
        ),
        (
            ["rate", "m:f", "--values", "1,10,100,1000", "--expected", "1", "--margin", "-1"],
            "--margin",
        ),
        (
            ["rate", "m:f", "--values", "1,10,100,1000", "--expected", "1", "--fixed", "2d=1"],
            "NAME=",
        ),
        (
            ["rate", "m:f", "--values", "1,10,100,1000", "--expected", "1", "--fixed", "n=1"],
            "swept",
        ),
    ],
)
def test_bad_rate_options_are_one_line_and_exit_two(
    user_folder, monkeypatch, capsys, argv, fragment
):
    monkeypatch.chdir(user_folder)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert fragment in err, err


def _commands():
    """``(name, parser)`` of the top-level parser and of every subcommand."""
    from dpclaims.cli import _build_parser

    parser = _build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [("dpclaims", parser), *sub.choices.items()]


def test_every_command_and_option_is_described_in_help():
    """No subcommand without a description, no option or argument without help text (an
    option hidden with SUPPRESS is a deprecated alias, so it must share a visible one's dest)."""
    for name, parser in _commands():
        assert name == "dpclaims" or (parser.description or "").strip(), name
        visible = {a.dest for a in parser._actions if a.help != argparse.SUPPRESS}
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                assert action.dest in visible, (name, action.option_strings)
                continue
            assert (action.help or "").strip(), (name, action.option_strings or action.dest)
            for choice in getattr(action, "_choices_actions", ()):  # the commands' one-liners
                assert (choice.help or "").strip(), (name, choice.dest)


def test_one_option_name_per_concept_across_commands():
    """The paper selection is --paper (comma-separated) in every command that selects papers;
    --papers (verify's old spelling) and rate's --method (now --fit: 'method' is the audit's
    test) still parse, hidden."""
    from dpclaims.cli import _build_parser

    parser = _build_parser()
    options = {name: {o for a in p._actions for o in a.option_strings} for name, p in _commands()}
    for name in ("verify", "list", "mutants"):
        assert "--paper" in options[name]
    old = parser.parse_args(["verify", "--papers", "a,b"])
    assert old.paper == parser.parse_args(["verify", "--paper", "a,b"]).paper == "a,b"
    assert parser.parse_args(["rate", "m:f", "--method", "mom"]).fit == "mom"
    assert parser.parse_args(["rate", "m:f", "--fit", "mom"]).fit == "mom"
    helps = {name: p.format_help() for name, p in _commands()}
    assert "--papers" not in helps["verify"] and "--method" not in helps["rate"]


def test_list_takes_several_papers(capsys):
    code, out, _ = run(capsys, "list", "--paper", "ghazi-et-al-2023,murata-suzuki-2023", "--json")
    assert code == 0
    assert {c["paper"] for c in json.loads(out)} == {"ghazi-et-al-2023", "murata-suzuki-2023"}
    code, out, err = run(capsys, "list", "--paper", "ghazi-et-al-2023,nobody-2099")
    assert code == 2 and "nobody-2099" in err


def test_verify_registry_finds_the_experiments_module_in_the_current_folder(tmp_path, console):
    """As ``audit`` and ``rate`` find ``module:function``: the TOML in a sub-folder, its
    experiments module in the folder the command runs in, the console script's sys.path."""
    done = console(tmp_path, "new-paper", "cwd-paper-2025", "claims")
    assert done.returncode == 0, done.stderr
    (tmp_path / "claims" / "cwd_paper_2025_experiments.py").rename(
        tmp_path / "cwd_paper_2025_experiments.py"
    )
    done = console(tmp_path, "list", "--registry", "claims", "--paper", "cwd-paper-2025")
    assert done.returncode == 0 and done.stdout.count("checkable") == 2, done.stdout + done.stderr
    argv = ["--registry", "claims", "--paper", "cwd-paper-2025", "--out", "report", "--json"]
    done = console(tmp_path, "verify", *argv, "--claims", "*.rate", "--backend", "serial")
    assert done.returncode == 0, done.stderr
    assert [c["verdict"] for c in json.loads(done.stdout)["claims"]] == ["consistent"]
