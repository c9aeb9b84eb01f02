import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpclaims.cli import main

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
    code, out, _ = run(capsys, "list", "--paper", "murata-suzuki-2023", "--kind", "privacy", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and {r["paper"] for r in rows} == {"murata-suzuki-2023"}
    assert {r["kind"] for r in rows} == {"privacy"}


def test_audit_of_correct_builtin_is_consistent_and_exit_zero(capsys):
    code, out, err = run(capsys, "audit", "gaussian", "--trials", "20000", "--backend", "serial")
    assert code == 0 and "verdict       consistent" in out and err == ""


def test_audit_of_buggy_builtin_is_violation_and_exit_one(capsys):
    code, out, _ = run(capsys, "audit", "laplace-half-scale", "--delta", "0", "--trials", "20000", "--json")
    payload = json.loads(out)
    assert code == 1
    assert payload["verdict"] == "violation" and payload["epsilon_lower"] > 1.0
    assert payload["mechanism"] == "laplace-half-scale" and payload["confidence"] == 0.95


def test_audit_of_user_callable_from_npz(capsys, user_module):
    d0, d1 = str(user_module / "d0.npz"), str(user_module / "d1.npz")
    code, out, _ = run(capsys, "audit", "usermech:noisy_mean", "--d0", d0, "--d1", d1, "--trials", "20000")
    assert code == 0, out
    code, out, _ = run(capsys, "audit", "leakymech:noisy_mean", "--d0", d0, "--d1", d1, "--trials", "20000")
    assert code == 1 and "violation" in out


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
        (["audit", "nosuchmodule:f", "--d0", "D0", "--d1", "D1"], "no module 'nosuchmodule' in the current folder"),
        (["audit", "usermech:noisy_mean", "--d0", "JUNK", "--d1", "D1"], "is not a .npz archive (no zip header)"),
        (["audit", "usermech:noisy_mean", "--d0", "NOX", "--d1", "D1"], "has no array 'x'"),
        (["audit", "usermech:noisy_mean", "--d0", "MISSING", "--d1", "D1"], "cannot read --d0 file"),
        (["audit", "usermech:noisy_mean", "--d0", "D0", "--d1", "FAR"], "not neighbours"),
        (["list", "--kind", "vibes"], "kind must be one of"),
        (["list", "--paper", "nobody-2099"], "nobody-2099"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(capsys, user_module, argv, fragment):
    files = {"D0": "d0.npz", "D1": "d1.npz", "FAR": "far.npz", "JUNK": "junk.npz", "NOX": "nox.npz", "MISSING": "missing.npz"}
    argv = [str(user_module / files[a]) if a in files else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("dpclaims: error:"), err
    assert fragment in err


def test_usage_errors_exit_two_without_traceback():
    result = subprocess.run([sys.executable, "-m", "dpclaims.cli", "audit"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_help_and_version_return_zero(capsys):
    assert main(["--version"]) == 0 and "dpclaims" in capsys.readouterr().out
    for command in ("verify", "report", "rate", "list", "audit"):
        assert main([command, "--help"]) == 0
        assert "--json" in capsys.readouterr().out
