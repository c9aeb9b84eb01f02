"""Tightness of the spec 002 §7(a) audits of Accelerated-DP-SRGD (blank canary in the first batch).

For T = 16, β = 2, C_Δ = 4, claimed (ε, δ) = (2, 1e-5), 10^6 trials per side:

* white-box transcript audit (node statistic): certified threshold bound and the parametric
  GDP estimate (spec §7(a)(ii)), against the exact ε of the implementation (2.0);
* black-box final-iterate audit (y_T);
* the printed Cor. 5.7 σ (mutant M3) at claimed ε = 2 (δ/2 = 5e-6): true ε ≈ 2.70.

Run: ``python benchmarks/bench_choquette_choo_et_al_2024.py [trials]``
"""

from __future__ import annotations

import sys
import time

from dpclaims.algorithms.choquette_choo_et_al_2024 import AcceleratedDPSRGD
from dpclaims.audit import AuditTest, audit
from dpclaims.targets.choquette_choo_et_al_2024 import canary_audit


def row(
    label: str, trials: int, method: str, *, calibration: str = "exact", white_box: bool = True
) -> None:
    algo = AcceleratedDPSRGD.for_canary(calibration=calibration)
    target = canary_audit(algo, white_box=white_box)
    claim = target.claim
    start = time.perf_counter()
    result = audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=claim,
        trials=trials,
        seed=0,
        test=AuditTest(method=method),
    )
    exact = algo.epsilon_exact
    print(
        f"{label:28s} {method:9s} {trials:>9d} {claim.epsilon:>7.2f} {exact:>7.3f} "
        f"{result.epsilon_lower:>8.3f} {result.epsilon_lower / exact:>6.1%} "
        f"{result.verdict:>11s} {time.perf_counter() - start:>7.1f}"
    )


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(
        f"{'audit':28s} {'method':9s} {'trials':>9s} {'claim':>7s} {'exact':>7s} {'eps_lb':>8s} "
        f"{'ratio':>6s} "
        f"{'verdict':>11s} {'wall_s':>7s}"
    )
    row("white-box, exact", trials, "threshold")
    row("white-box, exact", trials, "gdp")
    row("black-box y_T, exact", trials, "threshold", white_box=False)
    row("black-box y_T, exact", trials, "gdp", white_box=False)
    row("white-box, printed (M3)", trials, "threshold", calibration="printed")
    row("white-box, printed (M3)", trials, "gdp", calibration="printed")


if __name__ == "__main__":
    main()
