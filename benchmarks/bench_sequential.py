"""The sequential audit's calibration: how often it certifies a violation of an exact claim.

For a Laplace mechanism (ε = 1 on the pair 0, 1) and a Gaussian one (σ = 1 on the pair 0, 1:
μ = 1, claim (1, δ(1)) with δ(1) its exact δ at ε = 1), each claim exact, ``REPS`` sequential
audits (:func:`dpclaims.audit.audit_sequential`, looks of 100, 200, 400, 800 trials, fresh
seeds) run at confidence 0.95.  A violation is then false; the sequential mode promises a rate
of at most α = 0.05.  The check: rate ≤ α + 3 se (se = sqrt(α (1 - α) / REPS)).  Replicates run
on all cores.  Run: ``python benchmarks/bench_sequential.py [REPS]`` (default 500 per mechanism;
about 0.5 s of CPU per replicate).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from dpclaims import PrivacyClaim
from dpclaims.audit.sequential import audit_sequential, trials_spent
from dpclaims.execution import Execution, map_tasks
from dpclaims.gdp import gdp_delta

ALPHA = 0.05
FIRST, LAST = 100, 800
PAIR = (np.array([0.0]), np.array([1.0]))
CLAIMS = {"laplace": (1.0, 0.0), "gaussian": (1.0, float(gdp_delta(1.0, 1.0)))}


def laplace(data, rng, trials):
    """Sum plus Laplace noise of scale 1: ε = 1 on :data:`PAIR`."""
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, trials)


def gaussian(data, rng, trials):
    """Sum plus Gaussian noise of σ = 1: 1-GDP on :data:`PAIR`."""
    return float(np.sum(data)) + rng.standard_normal(trials)


MECHANISMS = {"laplace": laplace, "gaussian": gaussian}


def replicate(kind: str, seed: int) -> tuple[bool, int]:
    """One sequential audit at the exact claim: (violation?, trials per dataset spent)."""
    epsilon, delta = CLAIMS[kind]
    result = audit_sequential(
        MECHANISMS[kind],
        *PAIR,
        PrivacyClaim(epsilon, delta),
        trials=LAST,
        first=FIRST,
        confidence=1 - ALPHA,
        seed=seed,
        execution=Execution(workers=1),
    )
    return result.verdict == "violation", trials_spent(result)


def false_violation_rate(kind: str, reps: int, *, offset: int = 0) -> dict:
    """The rate of violations over ``reps`` replicates (seeds ``offset + i``), its standard
    error at α and the mean trials spent."""
    tasks = [(kind, offset + i) for i in range(reps)]
    found = map_tasks(replicate, tasks, Execution())
    violations = sum(v for v, _ in found)
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    return {
        "kind": kind,
        "reps": reps,
        "rate": violations / reps,
        "limit": ALPHA + 3 * se,
        "mean_trials": float(np.mean([n for _, n in found])),
    }


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    print(f"{'mechanism':10s} {'reps':>5s} {'rate':>7s} {'α+3se':>7s} {'trials':>7s} {'s':>6s}")
    for kind in MECHANISMS:
        start = time.perf_counter()
        row = false_violation_rate(kind, reps)
        ok = "ok" if row["rate"] <= row["limit"] else "FAIL"
        print(
            f"{kind:10s} {reps:5d} {row['rate']:7.3f} {row['limit']:7.3f} "
            f"{row['mean_trials']:7.0f} {time.perf_counter() - start:6.0f} {ok}"
        )


if __name__ == "__main__":
    main()
