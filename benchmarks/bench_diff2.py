"""DIFF2 (spec 004) benchmark: standard-budget audit and rate sweeps (incl. the d sweeps of §7(b)),
and the §6 comparison on offline stand-ins.  ``python benchmarks/bench_diff2.py [audit|rates|section6 ...]``."""

import sys
import time

from dpclaims import claims
from dpclaims.claims.checks.diff2 import SECTION6_BUDGETS, section6_comparison, utility
from dpclaims.claims.standard import RateExperiment


def audit():
    for cid in ("diff2gd.prop41.rdp_to_dp", "dpgd.calibration"):
        t0 = time.time()
        r = claims.get(cid).experiment("standard").run(seed=0)
        print(f"{cid:40s} {r['verdict']:13s} {r['summary']}  ({time.time() - t0:.0f}s)")


def rates():
    for cid in ("diff2gd.thm43.utility", "dpgd.utility", "diff2gd.remark44.improvement_regime"):
        t0 = time.time()
        r = claims.get(cid).experiment("standard").run(seed=0)
        print(f"{cid:40s} {r['verdict']:13s} {r['summary']}  ({time.time() - t0:.0f}s)")
    for algorithm, expected in (("diff2-gd", 2 / 3), ("dp-gd", 0.5)):
        t0 = time.time()
        exp = RateExperiment(utility, "d", [4, 8, 16, 32, 64, 128, 256], expected, replicates=4,
                             fixed={"param": "d", "algorithm": algorithm, "N": 32000})
        r = exp.run(seed=0)
        print(f"d sweep {algorithm:32s} {r['verdict']:13s} {r['summary']}  ({time.time() - t0:.0f}s)")


def section6(names=("california_like", "gas_like", "blog_like")):
    """The paper's settings (full budget): R = 2000, the whole App. A grid, 5 seeds, full-size stand-ins."""
    for name in names:
        t0 = time.time()
        res = section6_comparison(name, epsilon=5.0, **SECTION6_BUDGETS["full"],
                                  progress=lambda msg: print(f"  [{time.time() - t0:.0f}s] {msg}", flush=True),
                                  verbose=True)
        print(name, {k: v for k, v in res.items() if k != "results"}, f"({time.time() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    for part in sys.argv[1:] or ["audit", "rates", "section6"]:
        {"audit": audit, "rates": rates, "section6": section6}[part]()
