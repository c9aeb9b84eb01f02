"""The black-box benchmark's fast mechanisms draw from the textbook distributions."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_audit_blackbox.py"
_SPEC = importlib.util.spec_from_file_location("bench_audit_blackbox", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault(_SPEC.name, bench)  # dataclasses look their module up there
_SPEC.loader.exec_module(bench)

N = 40_000
QUERIES = [np.ones(10), np.r_[np.ones(9), 3.0], np.r_[np.zeros(5), 2 * np.ones(5)]]


def _laplace(rng, scale, shape):
    return rng.laplace(0.0, scale, shape)


def _reference(name, q, rng, trials):
    """The plain definitions (numpy's Laplace, every query's noise drawn, no shortcut)."""
    answers = np.broadcast_to(q, (trials, len(q)))
    if name.startswith("noisy-max"):
        noisy = answers + _laplace(rng, 2.0, (trials, len(q)))
        return noisy.max(axis=1) if "value" in name else noisy.argmax(axis=1).astype(float)
    noise = {"SVT1 (c = 1)": 4.0, "SVT5": 0.0, "SVT6": 2.0}[name]
    rho = _laplace(rng, 2.0, (trials, 1))
    above = answers + (_laplace(rng, noise, (trials, len(q))) if noise else 0.0) >= 1.0 + rho
    if name != "SVT1 (c = 1)":
        return above
    return np.where(above.any(axis=1), above.argmax(axis=1), len(q)).astype(float)


def test_laplace_is_laplace_and_reproducible():
    draws = bench.laplace(np.random.default_rng(0), 2.5, (N, 3))
    assert draws.shape == (N, 3)
    assert stats.kstest(draws.ravel(), stats.laplace(scale=2.5).cdf).pvalue > 0.01
    assert np.mean(draws > 0) == pytest.approx(0.5, abs=0.01)
    assert np.array_equal(draws, bench.laplace(np.random.default_rng(0), 2.5, (N, 3)))


@pytest.mark.parametrize(
    "name", ["noisy-max index", "noisy-max value", "SVT1 (c = 1)", "SVT5", "SVT6"]
)
def test_mechanisms_match_their_plain_definitions(name):
    mechanism, k = bench.CASES[name][:2]
    for i, q in enumerate(QUERIES):
        q = q[:k]
        fast = mechanism(q, np.random.default_rng(i), N)
        assert fast.shape[0] == N and np.array_equal(
            fast, mechanism(q, np.random.default_rng(i), N)
        )
        plain = np.asarray(_reference(name, q, np.random.default_rng(100 + i), N)).reshape(N, -1)
        assert fast.shape == plain.shape
        if name == "noisy-max value":
            assert stats.ks_2samp(fast[:, 0], plain[:, 0]).pvalue > 0.01
            continue
        rows, codes = np.unique(np.concatenate([fast, plain]), axis=0, return_inverse=True)
        codes = codes.ravel()
        table = np.stack([np.bincount(c, minlength=len(rows)) for c in (codes[:N], codes[N:])])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table).pvalue > 0.01, q
