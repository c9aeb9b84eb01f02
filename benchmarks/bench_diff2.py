"""DIFF2 (spec 004) benchmark: standard-budget audit and rate sweeps (incl. the d sweeps of §7(b)),
and the §6 comparison on offline stand-ins.  ``python benchmarks/bench_diff2.py [audit|rates|section6 ...]``."""

import sys
import time

from dpclaims import claims
from dpclaims.claims.checks.diff2 import section6_comparison, utility
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
        exp = RateExperiment(utility, "d", [4, 8, 16, 32, 64, 128], expected, replicates=4,
                             fixed={"param": "d", "algorithm": algorithm, "N": 32000})
        r = exp.run(seed=0)
        print(f"d sweep {algorithm:32s} {r['verdict']:13s} {r['summary']}  ({time.time() - t0:.0f}s)")


def section6():
    for name, samples in (("california_like", None), ("gas_like", None)):
        t0 = time.time()
        res = section6_comparison(name, epsilon=5.0, rounds=2000, seeds=5, samples=samples,
                                  clip_grid=(1.0, 10.0, 100.0), period_fractions=(0.01, 0.03, 0.1))
        print(name, {k: v for k, v in res.items() if k != "results"}, f"({time.time() - t0:.0f}s)")
        for method, rows in res["results"].items():
            print("   ", method, [{k: round(v, 5) for k, v in row.items()} for row in rows])


if __name__ == "__main__":
    for part in sys.argv[1:] or ["audit", "rates", "section6"]:
        {"audit": audit, "rates": rates, "section6": section6}[part]()
