"""The command as it starts and stops (issue #40, N13 and N14): Ctrl-C while it parses its
arguments is one line and exit 130; running out of memory, also while loading a library, is
one line naming memory, never "a bug in dpclaims".

The subprocess tests run a copy of the console script named ``dpclaims``, as pip writes it.
"""

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpclaims import cli
from dpclaims.cli import main

ROOT = Path(__file__).resolve().parents[1]

CONSOLE_SCRIPT = """\
import re
import sys
{before}
from dpclaims.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""

INTERRUPT_WHILE_PARSING = """\
import argparse, os, signal, time
real = argparse.ArgumentParser.parse_args
def interrupted(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    return real(self, *args, **kwargs)
argparse.ArgumentParser.parse_args = interrupted
"""

NO_MEMORY_FOR_NUMPY = """\
import builtins
real = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "numpy":
        raise ImportError(
            "Error importing numpy\\n\\nOriginal error was: "
            "libgfortran.so.5: failed to map segment from shared object"
        )
    return real(name, *args, **kwargs)
builtins.__import__ = importing
"""

MAP_FAILED = "libopenblas.so: failed to map segment from shared object"


def _command(tmp_path: Path, before: str, *argv: str) -> subprocess.CompletedProcess:
    script = tmp_path / "bin" / "dpclaims"
    script.parent.mkdir()
    script.write_text(CONSOLE_SCRIPT.format(before=before))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(script), *argv], env=env, capture_output=True, text=True, timeout=60
    )


def test_ctrl_c_while_the_command_parses_its_arguments_is_one_line_and_exit_130(tmp_path):
    done = _command(tmp_path, INTERRUPT_WHILE_PARSING, "list")
    assert (done.returncode, done.stderr, done.stdout) == (130, "dpclaims: interrupted\n", "")


def test_ctrl_c_while_main_parses_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_build_parser", interrupted)
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "dpclaims: interrupted\n"


def test_out_of_memory_while_the_command_loads_is_one_line(tmp_path):
    done = _command(tmp_path, NO_MEMORY_FOR_NUMPY, "list")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == (
        "dpclaims: error: out of memory while loading dpclaims (ImportError: Original error "
        "was: libgfortran.so.5: failed to map segment from shared object); free memory or "
        "raise the memory limit of the process (ulimit -v)\n"
    )


@pytest.mark.parametrize(
    "exc",
    [ImportError(MAP_FAILED), OSError(errno.ENOMEM, "Cannot allocate memory", "/usr/lib/python3")],
)
def test_out_of_memory_while_a_command_imports_is_not_a_bug(exc, monkeypatch, capsys):
    def command(args):
        raise exc

    monkeypatch.setattr(cli.listing, "run", command)
    assert main(["list"]) == 3
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "a bug" not in err
    assert err.startswith("dpclaims: error: out of memory while loading a library (")
    assert err.endswith("; free memory or raise the memory limit of the process (ulimit -v)\n")


def test_a_memory_error_names_the_options_that_size_the_run(monkeypatch, capsys):
    def command(args):
        raise MemoryError

    monkeypatch.setattr(cli.listing, "run", command)
    assert main(["list"]) == 3
    assert capsys.readouterr().err.startswith(
        "dpclaims: error: MemoryError: the run ran out of memory or a worker process was killed"
    )
