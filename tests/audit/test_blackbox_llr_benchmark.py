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


def _outcome(default_caught, llr_caught):
    none = (0.0,) * len(default_caught)
    return bench.Outcome(
        cell=CELLS[0],
        default=none,
        llr=none,
        llr_oriented=none,
        llr_certifying=none,
        default_caught=tuple(default_caught),
        llr_caught=tuple(llr_caught),
        oriented_violations=0,
        statistic="lda",
        seconds=0.0,
    )


def test_the_paired_verdicts_are_tested_by_mcnemars_exact_test():
    balanced = _outcome([True, False, True, True], [True, True, True, False])
    assert bench.discordant([balanced]) == (1, 1, 1.0)
    assert bench.discordant([_outcome([True, False], [True, False])]) == (0, 0, 1.0)
    llr_only, default_only, p = bench.discordant([_outcome([False] * 8, [True] * 8)])
    assert (llr_only, default_only) == (8, 0) and p == pytest.approx(2 * 0.5**8)
    assert balanced.default_violations == 3 and balanced.llr_violations == 3
