"""DP-SGD audited at the statistical limit: threat model × ε × N (issue #27, must-shows 1 and 2).

DP-SGD (:class:`dpclaims.algorithms.baselines.DPSGD`, item level, Poisson rate q = 1/8, clip 1,
σ from the PLD accountant at (ε, 1e-5), add/remove) on 32 examples of :func:`canary_data`
(logistic or squared loss) with a gradient canary of norm 10 along the unused last coordinate,
audited by :func:`dpclaims.targets.dpsgd.dpsgd_target` under both threat models:

- ``all-iterates``: the transcript's projections, the exact log-likelihood ratio statistic;
- ``final``: θ_T only, its projection on the canary direction (the optimal black-box test).

Each audit certifies the test planned from the claim alone (:func:`planned_test`: the
order-statistic test the claimed mechanism's law of the statistic predicts best, the one
predicted best against half the noise, or both with a union bound over 2, whichever is
predicted to certify most while refuting the claim on the violation; ``--strategy quantiles``
for the 48-test order-statistic grid instead).  ``wall s`` includes planning (once per cell).

Columns: the certified ε (95%, median over seeds), ``limit`` the best certified ε of any
threshold test on the exact privacy-loss distribution of the composed subsampled Gaussian at
the same N (:func:`optimal_limit`: one test, the threshold in hindsight, its expected counts
bounded jointly as the audit bounds the test it certifies), ``final limit`` the same on the
final model (:func:`final_limit`), the accountant's ε, and certified / limit (all-iterates rows
against ``limit``, final rows against ``final limit``).

``--catch`` audits the noise-halved and clip-skipped mutants (and correct DP-SGD over
``--seeds`` seeds) at N ≤ 10⁴ with the all-iterates gradient-canary audit and prints the
verdict, wall and CPU seconds.

Run: ``python benchmarks/bench_dpsgd.py [--losses logistic,squared] [--steps 10,100]
[--eps 1,2,4,8] [--trials 1e3,1e4,1e5] [--threats all-iterates,final] [--catch] [--seeds 4]
[--variants half-noise,no-clip,correct] [--strategy planned|quantiles]
[--canary gradient|input|input-init]``

``--canary input`` audits a crafted input example instead (a large value on the coordinate the
data leaves at 0): what a black-box adversary who can only add a record sees; ``input-init``
also crafts the public start θ_0 so that the example's gradient stays clipped at C
(:func:`crafted_start`).  The limits stay those of the gradient canary, the worst case of
clipping, which an input canary can at most match.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.audit import AuditTest, audit
from dpclaims.losses import LogisticLoss, SquaredLoss
from dpclaims.targets.dpsgd import (
    CANARIES,
    canary_data,
    dpsgd_target,
    final_limit,
    limit_samples,
    optimal_limit,
    planned_test,
)
from dpclaims.targets.mutants.baselines import half_noise, no_clip

DELTA = 1e-5
RATE = 1 / 8
LOSSES = {"logistic": LogisticLoss, "squared": SquaredLoss}


def algorithm(loss, steps: int, epsilon: float) -> DPSGD:
    return DPSGD.from_accountant(
        epsilon, DELTA, loss, steps=steps, step_size=0.5, clip_norm=1.0, sampling_rate=RATE
    )


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the audit's worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run(target, test: AuditTest, trials: int, seed: int):
    """One audit; wall and CPU seconds include planning the test (``test`` is timed by the
    caller when it is planned once for many seeds)."""
    wall, cpu = time.perf_counter(), _cpu()
    result = audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=target.claim,
        trials=trials,
        seed=seed,
        test=test,
    )
    return result, time.perf_counter() - wall, _cpu() - cpu


def plan(target, trials: int, args) -> tuple[AuditTest, float]:
    """The audit's test: planned from the claim (default), or ``--strategy quantiles``."""
    start = time.perf_counter()
    if args.strategy == "planned":
        test = planned_test(target, trials=trials)
    else:
        test = AuditTest(statistic=target.statistic, threshold=args.strategy)
    return test, time.perf_counter() - start


def table(args) -> None:
    print(
        "| loss | T | accountant ε | N | threat model | certified | limit | final limit "
        "| certified / limit | certified / accountant | seeds | wall s | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for loss_name in args.losses:
        loss = LOSSES[loss_name]()
        data = canary_data(loss, n=32, d=4)
        for steps in args.steps:
            for epsilon in args.eps:
                alg = algorithm(loss, steps, epsilon)
                release = alg.step_release
                samples = limit_samples(release, draws=args.draws, seed=1)
                for trials in args.trials:
                    limit = optimal_limit(release, trials=trials, delta=DELTA, samples=samples)
                    final = final_limit(release, trials=trials, delta=DELTA)
                    seeds = args.seeds if trials <= args.many else args.seeds_many
                    for threat in args.threats:
                        target = dpsgd_target(alg, data, threat_model=threat, canary=args.canary)
                        cpu_plan = _cpu()
                        test, planning = plan(target, trials, args)
                        cpu_plan = _cpu() - cpu_plan
                        found = [run(target, test, trials, seed=seed) for seed in range(seeds)]
                        certified = float(np.median([r.epsilon_lower for r, _, _ in found]))
                        wall = planning + float(np.mean([w for _, w, _ in found]))
                        cpu = cpu_plan + float(np.mean([c for _, _, c in found]))
                        own = limit.epsilon if threat == "all-iterates" else final.epsilon
                        ratio = certified / own if own > 0 else float("nan")
                        print(
                            f"| {loss_name} | {steps} | {alg.privacy_claim.epsilon:.3g} "
                            f"| {trials:.0e} | {threat} | {certified:.3f} "
                            f"| {limit.epsilon:.3f} | {final.epsilon:.3f} | {ratio:.2f} "
                            f"| {certified / alg.privacy_claim.epsilon:.2f} | {seeds} "
                            f"| {wall:.1f} | {cpu:.1f} |",
                            flush=True,
                        )


def catch(args) -> None:
    print("| loss | T | ε | variant | N | seed | certified | verdict | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for loss_name in args.losses:
        loss = LOSSES[loss_name]()
        data = canary_data(loss, n=32, d=4)
        for steps in args.steps:
            for epsilon in args.eps:
                alg = algorithm(loss, steps, epsilon)
                variants = {"half-noise": half_noise(alg), "no-clip": no_clip(alg), "correct": alg}
                for name in args.variants:
                    variant = variants[name]
                    seeds = range(args.seeds) if name == "correct" else [0]
                    for trials in args.trials:
                        for seed in seeds:
                            target = dpsgd_target(variant, data)
                            cpu_plan = _cpu()
                            test, planning = plan(target, trials, args)
                            cpu_plan = _cpu() - cpu_plan
                            result, wall, cpu = run(target, test, trials, seed)
                            wall, cpu = wall + planning, cpu + cpu_plan
                            print(
                                f"| {loss_name} | {steps} | {epsilon:g} | {name} | {trials:.0e} "
                                f"| {seed} | {result.epsilon_lower:.3f} | {result.verdict} "
                                f"| {wall:.1f} | {cpu:.1f} |",
                                flush=True,
                            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    floats = lambda s: [float(v) for v in s.split(",")]  # noqa: E731
    parser.add_argument("--losses", type=lambda s: s.split(","), default=["logistic", "squared"])
    parser.add_argument("--steps", type=lambda s: [int(v) for v in s.split(",")], default=[10, 100])
    parser.add_argument("--eps", type=floats, default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument(
        "--trials", type=lambda s: [int(float(v)) for v in s.split(",")], default=None
    )
    parser.add_argument("--threats", type=lambda s: s.split(","), default=["all-iterates", "final"])
    parser.add_argument("--draws", type=int, default=400_000, help="draws for the limit")
    parser.add_argument(
        "--canary",
        default="gradient",
        choices=list(CANARIES),
        help="the table's canary: gradient (default), input, or input-init (a crafted θ_0)",
    )
    parser.add_argument(
        "--strategy",
        default="planned",
        help="planned (tests planned from the claim, default) or a strategy name (quantiles)",
    )
    parser.add_argument("--catch", action="store_true", help="the mutants at N <= 1e4")
    parser.add_argument(
        "--variants",
        type=lambda s: s.split(","),
        default=["half-noise", "no-clip", "correct"],
        help="with --catch: which of half-noise, no-clip, correct",
    )
    parser.add_argument(
        "--seeds", type=int, default=None, help="seeds per cell (median), or of correct DP-SGD"
    )
    parser.add_argument("--seeds-many", type=int, default=3, help="seeds per cell above --many")
    parser.add_argument("--many", type=float, default=1e4, help="N above which --seeds-many")
    args = parser.parse_args()
    if args.catch:
        args.seeds = args.seeds or 4
        args.trials = args.trials or [1_000, 10_000]
        catch(args)
    else:
        args.seeds = args.seeds or 9
        args.trials = args.trials or [1_000, 10_000, 100_000]
        table(args)


if __name__ == "__main__":
    main()
