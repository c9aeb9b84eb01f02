"""Audit throughput: the Gaussian mechanism and DP-SGD end to end, and batched vs looped trials.

Run ``python benchmarks/bench_audit_speed.py [--workers 2]``.  Targets: Gaussian audit with
10^6 trials per side < 5 s; DP-SGD audit (n = 1000, d = 20, T = 100, q = 0.1) with 10^4
trials per side < 60 s; batched ≥ 20× faster than one trial per call.  The looped
variants are timed on fewer trials and extrapolated linearly (stated in the table).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.mechanisms import GaussianMechanism, user_sum_query
from dpclaims.audit import audit
from dpclaims.data import UserDataset, remove_user, replace_user
from dpclaims.execution import Execution, run_trials
from dpclaims.losses import LogisticLoss


class OneAtATime:
    """The same mechanism called once per trial, ``f(data, rng) -> (k,)`` (run_trials loops it)."""

    def __init__(self, mechanism):
        self.mechanism = mechanism

    def __call__(self, data, rng):
        return self.mechanism(data, rng, 1)[0]


def timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def gaussian_case():
    x = np.zeros((10, 1, 1))
    x[0] = 1.0
    d0 = UserDataset(x)
    return (
        GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5),
        d0,
        replace_user(d0, 0, -np.ones((1, 1))),
    )


def dpsgd_case():
    rng = np.random.default_rng(0)
    n, d = 1000, 20
    x = rng.standard_normal((n, 1, d)) / np.sqrt(d)
    x[0, 0] = 5.0 * np.eye(d)[0]  # a canary item
    y = np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)
    d0 = UserDataset(x, y)
    algo = DPSGD.from_accountant(
        2.0,
        1e-5,
        LogisticLoss(),
        steps=100,
        step_size=0.5,
        clip_norm=1.0,
        sampling_rate=0.1,
        batch_size=100.0,
    )
    return algo, d0, remove_user(d0, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rows = []

    mech, g0, g1 = gaussian_case()
    secs, res = timed(
        lambda: audit(
            mech,
            g0,
            g1,
            trials=1_000_000,
            claim=mech.privacy_claim,
            execution=Execution(workers=args.workers),
        )
    )
    rows.append(
        (
            "Gaussian audit, 1e6 trials/side",
            f"{secs:.2f} s",
            "< 5 s",
            f"eps_lower={res.epsilon_lower:.3f} ({res.verdict})",
        )
    )

    algo, s0, s1 = dpsgd_case()
    secs, res = timed(
        lambda: audit(
            algo,
            s0,
            s1,
            trials=10_000,
            claim=algo.privacy_claim,
            execution=Execution(workers=args.workers),
        )
    )
    rows.append(
        (
            "DP-SGD audit, 1e4 trials/side",
            f"{secs:.2f} s",
            "< 60 s",
            f"n=1000 d=20 T=100 q=0.1 sigma={algo.noise_multiplier:.3f} "
            f"eps={algo.privacy_claim.epsilon:.2f}; "
            f"eps_lower={res.epsilon_lower:.3f} ({res.verdict})",
        )
    )

    batched, _ = timed(
        lambda: run_trials(mech, g0, 1_000_000, seed=1, execution=Execution(backend="serial"))
    )
    loop_trials = 20_000
    looped, _ = timed(
        lambda: run_trials(
            OneAtATime(mech), g0, loop_trials, seed=1, execution=Execution(backend="serial")
        )
    )
    looped *= 1_000_000 / loop_trials
    rows.append(
        (
            "Gaussian, batched vs looped (1e6, serial)",
            f"{batched:.3f} s vs {looped:.1f} s",
            ">= 20x",
            f"speed-up {looped / batched:.0f}x (loop timed on {loop_trials} trials, extrapolated)",
        )
    )

    batched, _ = timed(
        lambda: run_trials(algo, s0, 2_000, seed=1, execution=Execution(backend="serial"))
    )
    loop_trials = 20
    looped, _ = timed(
        lambda: run_trials(
            OneAtATime(algo), s0, loop_trials, seed=1, execution=Execution(backend="serial")
        )
    )
    looped *= 2_000 / loop_trials
    rows.append(
        (
            "DP-SGD, batched vs looped (2e3, serial)",
            f"{batched:.2f} s vs {looped:.1f} s",
            ">= 20x",
            f"speed-up {looped / batched:.0f}x (loop timed on {loop_trials} trials, extrapolated)",
        )
    )

    widths = [
        max(len(str(r[i])) for r in rows + [("case", "time", "target", "notes")]) for i in range(4)
    ]
    header = ("case", "time", "target", "notes")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
