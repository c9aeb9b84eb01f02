"""Benchmark: the §7(a) audit of Algorithm 4 (spec 003, Lowy 2026) at 10⁵–10⁶ trials per dataset.

Prints the certified ε lower bound of the joint release (w̃, w_out) at ε = 1, δ = 0 on the
heavy-outlier pair (d = 1, 𝒲 = [−10, 10], a|w − b|, λ = 1, k = 2, β0 = 0.1), with and without the
worst-valid-point solver harness, and for mutant M1 (no_tau), beside the spec's prototype values
(0.88 / 0.44 / 1.7).

Usage: ``python benchmarks/bench_pure_dp_heavy_tails.py [trials ...]`` (default 100000 300000
1000000).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dpclaims.audit import AuditTest, audit
from dpclaims.targets.mutants.pure_dp_heavy_tails import NoTauAlg4
from dpclaims.targets.pure_dp_heavy_tails import audit_alg4

CASES = (
    ("correct + harness", {}, 0.88),
    ("correct, exact solver", {"harness": False}, 0.44),
    ("M1 no_tau + harness", {"algorithm": NoTauAlg4}, 1.7),
)
STATISTICS = {"default": None, "joint": lambda out: np.max(out, axis=1)}
"""``joint`` is the spec's event {w̃ ≤ t1 and w_out ≤ t2} with t1 = t2 (= {max(w̃, w_out) ≤ t})."""


def main(trial_counts: list[int]) -> None:
    print(
        f"{'case':24s} {'statistic':>9s} {'trials':>9s} {'eps_LB':>8s} {'spec ref':>8s} "
        f"{'verdict':>12s} {'seconds':>8s}"
    )
    for trials in trial_counts:
        for name, kwargs, reference in CASES:
            for stat_name, statistic in STATISTICS.items():
                t = audit_alg4(**kwargs)
                start = time.perf_counter()
                result = audit(
                    t.mechanism,
                    t.d0,
                    t.d1,
                    claim=t.claim,
                    trials=trials,
                    seed=0,
                    test=AuditTest(statistic=statistic),
                )
                print(
                    f"{name:24s} {stat_name:>9s} {trials:9d} {result.epsilon_lower:8.3f} "
                    f"{reference:8.2f} {result.verdict:>12s} {time.perf_counter() - start:8.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main([int(v) for v in sys.argv[1:]] or [100_000, 300_000, 1_000_000])
