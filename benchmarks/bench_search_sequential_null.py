"""False-violation rate of the sequential search at the exact ε.

Laplace and randomized response (built-ins, exactly ε-tight on their worst pair, claim (1, 0),
replace-one): ``search(..., sequential=True, trials=4_000)`` from ``reps`` seeds; a valid 95%
search says ``violation`` in at most 5% of them (+ 3 standard errors).  Run:
``python benchmarks/bench_search_sequential_null.py laplace 200`` (about 30 s on one core).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dpclaims.audit.search import search
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.catalog import audit_target
from dpclaims.targets.pairs import pairs_for


def main(name: str, reps: int) -> None:
    claim = PrivacyClaim(1.0, 0.0, "user", "replace")
    target = audit_target(name, claim)
    family = pairs_for(target.d0, target.d1, unit="user", relation="replace")
    start, found = time.perf_counter(), []
    for seed in range(10_000, 10_000 + reps):
        found.append(
            search(
                target.mechanism,
                family,
                claim=claim,
                trials=4_000,
                seed=seed,
                sequential=True,
                execution=Execution(progress=False, backend="serial"),
            )
        )
    violations = sum(f.verdict == "violation" for f in found)
    bounds = np.array([f.epsilon_lower for f in found])
    limit = 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)
    print(
        f"{name}: {reps} searches, {violations} violations ({violations / reps:.1%}; limit "
        f"{limit:.1%}), largest certified ε {bounds.max():.3f}, median {np.median(bounds):.3f}, "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
