"""False-violation rate of the sequential search at the exact ε.

Laplace and randomized response (built-ins, exactly ε-tight on their worst pair, claim (1, 0),
replace-one): ``search(..., sequential=True, trials=4_000)`` from ``REPS`` seeds; a valid 95%
search says ``violation`` in at most 5% of them (+ 3 standard errors).  Run:
``python benchmarks/bench_search_sequential_null.py laplace 200`` (about 30 s on one core).
"""

import sys, time
from dpclaims.audit.search import screen_trials_for, search
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.catalog import audit_target
from dpclaims.targets.pairs import pairs_for
name, reps = sys.argv[1], int(sys.argv[2])  # e.g. laplace 200
claim = PrivacyClaim(1.0, 0.0, "user", "replace")
target = audit_target(name, claim)
family = pairs_for(target.d0, target.d1, unit="user", relation="replace")
viol, eps, t = 0, [], time.time()
for seed in range(reps):
    f = search(target.mechanism, family, claim=claim, trials=4_000, seed=10_000 + seed,
               sequential=True, execution=Execution(progress=False, backend="serial"))
    viol += f.verdict == "violation"; eps.append(f.epsilon_lower)
print(name, reps, "violations", viol, "max eps", max(eps), "median", sorted(eps)[reps//2], f"{time.time()-t:.0f} s")
