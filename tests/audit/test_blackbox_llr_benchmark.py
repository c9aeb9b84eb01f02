"""The reduced black-box benchmark (benchmarks/bench_blackbox_llr.py): on representative DP-SGD
transcript cells the default audit certifies at least 0.85 of what the exact likelihood-ratio
statistic certifies on the same trials, and says ``violation`` wherever it does."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_blackbox_llr.py"
_SPEC = importlib.util.spec_from_file_location("bench_blackbox_llr", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault(_SPEC.name, bench)
_SPEC.loader.exec_module(bench)

CELLS = [
    bench.Cell(20, 0.1, 2.0, 2.0),
    bench.Cell(50, 0.05, 4.0, 2.0),
    bench.Cell(10, 0.5, 4.0, 1.0),
]
"""(T, q, claimed ε, noise divisor): the issue's cell at half the noise, a long sparse
transcript at half the noise, a short dense one at the claimed noise."""


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS, ids=str)
def test_default_audit_is_near_the_likelihood_ratio(cell):
    outcome = bench.run_cell(cell, trials=10_000, seeds=1)
    assert outcome.ratio >= bench.GOAL
    assert outcome.default_violations >= outcome.llr_violations
