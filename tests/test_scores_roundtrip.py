"""`--scores` round trip: scores saved the way a torch script saves them, audited from the CLI.

torch is not a dependency: the first tests write the same layout with numpy (float32 scores,
bool flags: what ``np.savez(path, scores=t.numpy(), included=b.numpy())`` stores); the last
runs examples/scores_from_torch.py itself when torch is importable.
"""

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from dpclaims.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "scores_from_torch.py"


def cli_json(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["audit", *argv, "--json"])
    return code, json.loads(out.getvalue())


def one_run_like_torch(path, sigma, m=1000, dim=20_000, seed=0):
    """The example's one-run layout, in numpy: one noisy step on m gradient canaries."""
    rng = np.random.default_rng(seed)
    canaries = rng.standard_normal((m, dim))
    canaries /= np.linalg.norm(canaries, axis=1, keepdims=True)
    included = rng.random(m) < 0.5
    model = canaries[included].sum(axis=0) + sigma * rng.standard_normal(dim)
    np.savez(path, scores=(canaries @ model).astype(np.float32), included=included)


def test_one_run_round_trip(tmp_path):
    path = tmp_path / "scores.npz"
    one_run_like_torch(path, sigma=0.5)  # one Gaussian step: μ = 2, ε ≈ 10 at δ = 1e-5
    code, record = cli_json("--scores", str(path), "--epsilon", "2", "--delta", "1e-5")
    assert (code, record["layout"], record["verdict"]) == (1, "one-run", "violation")
    steinke, gdp, rank = record["bounds"]
    assert (steinke["assumption"], gdp["assumption"], rank["assumption"]) == (
        "none",
        "gaussian-dp",
        "independent-gaussian-dp",
    )
    assert 2 < steinke["epsilon_lower"] <= gdp["epsilon_lower"] < rank["epsilon_lower"] < 10.0


def test_multi_run_round_trip(tmp_path):
    path = tmp_path / "scores.npz"
    rng = np.random.default_rng(1)  # a canary's score in 5000 runs without and 5000 with it
    s0 = rng.standard_normal(5000).astype(np.float32)
    s1 = (1.0 + rng.standard_normal(5000)).astype(np.float32)  # μ = 1: ε ≈ 4.4
    np.savez(path, s0=s0, s1=s1)
    code, record = cli_json("--scores", str(path), "--epsilon", "5", "--delta", "1e-5")
    assert record["layout"] == "multi-run" and code == 0
    assert 1.5 < record["epsilon_lower"] < 4.4
    assert record["verdict"] in ("consistent", "consistent_weak", "inconclusive")
    assert record["reach_factor"] is not None and record["ceiling"] > 0


def test_torch_example_round_trip(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    path = tmp_path / "scores.npz"
    argv = [str(EXAMPLE), str(path), "--sigma", "0.5", "--dim", "20000"]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    code, record = cli_json("--scores", str(path), "--epsilon", "2", "--delta", "1e-5")
    assert (code, record["verdict"]) == (1, "violation")
