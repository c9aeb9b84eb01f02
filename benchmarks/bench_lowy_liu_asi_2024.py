"""Throughput and tightness of the Lowy-Liu-Asi (spec 000) reference implementations.

Run ``python benchmarks/bench_lowy_liu_asi_2024.py``: prints trials/s of the P1 / Q1 audit
configurations and the certified P1 bound at 2·10^5 trials per side against the exact 0.177.
"""

import time

import numpy as np

from dpclaims.audit import audit
from dpclaims.targets.lowy_liu_asi_2024 import HaltIndicator, alg1_audit, alg2_audit, alg3_audit


def throughput(name, builder, pair, trials):
    target = builder(pair).target
    start = time.perf_counter()
    target.mechanism(target.d0, np.random.default_rng(0), trials)
    elapsed = time.perf_counter() - start
    print(f"{name:28s} {trials:>8d} trials  {elapsed:7.2f} s  {trials / elapsed:>10.0f} trials/s")


def main():
    print("throughput (one process)")
    throughput("Algorithm 1, P1 (n=7000)", alg1_audit, "P1", 50_000)
    throughput("Algorithm 2, Q1 (K=1e4)", alg2_audit, "Q1", 20_000)
    throughput("Algorithm 3, Q2 (n=48285)", alg3_audit, "Q2", 5_000)
    setup = alg1_audit("P1")
    t = setup.target
    res = audit(HaltIndicator(t.mechanism), t.d0, t.d1, claim=t.claim, trials=200_000, seed=0)
    print(
        f"\nP1 audit, 2e5 trials/side: certified eps >= {res.epsilon_lower:.3f}  "
        f"(exact {setup.info['reference_epsilon']:.3f}; claim {t.claim.epsilon:g}; "
        f"{res.wall_time:.1f} s)"
    )


if __name__ == "__main__":
    main()
