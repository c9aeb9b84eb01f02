"""Ghazi et al. 2023 (spec 001): tightness of the ⊥-channel audits, mutants, and the RT-8 finding.

Run ``python benchmarks/bench_ghazi_et_al_2023.py [--trials N] [--figure PATH]``.  Prints

1. the certified ε lower bound of the ⊥-channel audits against their exact value (≈ ε/2);
2. empirical Pr[⊥ | x^(k)] against CDF_TDLap(k − 1);
3. the audit of every black-box mutant;
4. RT-8: Phased-SCO (oracle, literal λ) excess on a sharp minimum for n × m, growth 4 and 8,
   and writes the figure (log-log excess vs m per n) to ``--figure``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpclaims.algorithms.ghazi_et_al_2023 import BottomChannel, DelOutputPert
from dpclaims.audit import audit
from dpclaims.claims.checks.ghazi_et_al_2023.privacy import best_bottom_k
from dpclaims.claims.checks.ghazi_et_al_2023.rates import sharp_minimum_excess
from dpclaims.hardinstances.canaries import outlier_count_pair
from dpclaims.problem import Problem
from dpclaims.targets.ghazi_et_al_2023 import outlier_means_pair, sc_bottom_mechanism
from dpclaims.targets.mutants import list_mutants


def bottom_audits(trials: int) -> None:
    print("1. ⊥-channel audits (certified 95% lower bound vs exact ε of the pair)")
    print(
        f"{'mechanism':<34}{'(ε, δ)':>14}{'k':>4}{'exact':>8}{'certified':>11}"
        f"{'verdict':>12}{'sec':>7}"
    )
    cases = []
    for eps, delta in ((1.0, 1e-3), (1.0, 1e-5), (1.0, 0.1), (0.5, 1e-5)):
        problem = Problem(n=20, epsilon=eps, delta=delta)
        mech = DelOutputPert.from_theorem(problem, Delta=1e-7)
        n = 2 * mech.kappa + 2
        k, ref = best_bottom_k(mech.tdlap, delta, n)
        d0, d1 = outlier_count_pair(n, 1, k)
        cases.append((f"DelOutputPert (n={n})", mech, d0, d1, k, ref))
    sc = sc_bottom_mechanism()
    k, ref = best_bottom_k(sc.tdlap, sc.delta, sc.n)
    cases.append(
        (f"SCOutputPert exact (n={sc.n}, m=1e12)", sc, *outlier_means_pair(sc.n, sc.m, k), k, ref)
    )
    for name, mech, d0, d1, k, ref in cases:
        start = time.perf_counter()
        res = audit(BottomChannel(mech), d0, d1, claim=mech.privacy_claim, trials=trials, seed=0)
        print(
            f"{name:<34}{f'({mech.epsilon:g}, {mech.delta:g})':>14}{k:>4}{ref:>8.3f}"
            f"{res.epsilon_lower:>11.3f}"
            f"{res.verdict:>12}{time.perf_counter() - start:>7.2f}"
        )


def bottom_frequencies(trials: int) -> None:
    print(
        "\n2. Pr[⊥ | x^(k)] at (1, 1e-3), n = 20 (n = k + 2 when k > 20): empirical vs "
        "TDLap CDF(k − 1)"
    )
    mech = DelOutputPert.from_theorem(Problem(n=20, epsilon=1.0, delta=1e-3), Delta=1e-6)
    rng = np.random.default_rng(0)
    for k in range(mech.kappa - 3, mech.kappa + 4):
        d0, _ = outlier_count_pair(20, 1, k) if k <= 20 else outlier_count_pair(k + 2, 1, k)
        freq = BottomChannel(mech)(d0, rng, trials)[:, 0].mean()
        se = np.sqrt(freq * (1 - freq) / trials)
        print(
            f"  k={k:>3}  empirical {freq:.4f} ± {1.96 * se:.4f}   "
            f"CDF {float(mech.tdlap.cdf(k - 1)):.4f}"
        )


def mutants(trials: int) -> None:
    print("\n3. black-box mutants (audit at their pair)")
    for m in list_mutants(paper="ghazi-et-al-2023"):
        if m.true_epsilon is None:
            print(f"  {m.name:<36} white-box; caught by {m.caught_by}")
            continue
        t = m.build()
        res = audit(t.mechanism, t.d0, t.d1, claim=t.claim, trials=trials, seed=0)
        print(
            f"  {m.name:<36} ε ≥ {res.epsilon_lower:6.2f} (true {m.true_epsilon:g})  {res.verdict}"
        )


def rt8(figure: str | None) -> None:
    print(
        "\n4. RT-8 sharp minimum: mean |θ̂| of Phased-SCO (oracle C = 1, literal λ) — "
        "claim: ∝ m^-1/2 at fixed n"
    )
    ms = [10**2, 10**3, 10**4, 10**5, 10**6]
    ns = [2**12, 2**14, 2**16]
    rng = np.random.default_rng(0)
    table = {}
    for growth in (4.0, 8.0):
        for n in ns:
            row = [
                float(sharp_minimum_excess(m, rng, n=n, growth=growth, trials=2000).mean())
                for m in ms
            ]
            table[(growth, n)] = row
            slope = np.polyfit(np.log(ms), np.log(row), 1)[0]
            print(
                f"  growth {growth:g} n=2^{int(np.log2(n)):<3}"
                + "".join(f"{v:10.3g}" for v in row)
                + f"   m-slope {slope:+.3f} (claimed -0.5)"
            )
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for (growth, n), row in table.items():
            ax.loglog(
                ms,
                row,
                "o-" if growth == 4 else "s--",
                label=f"growth {growth:g}, n = 2^{int(np.log2(n))}",
            )
        ref = np.array(ms, float)
        ax.loglog(ms, table[(4.0, ns[0])][0] * (ref / ms[0]) ** -0.5, "k:", label="claimed m^-1/2")
        ax.set_xlabel("m (items per user)")
        ax.set_ylabel("excess G|θ̂| (sharp minimum)")
        ax.set_title("RT-8: Phased-SCO final-phase term does not shrink with m")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(figure, dpi=120)
        print(f"  figure written to {figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--figure", default="ghazi_rt8.png")
    args = parser.parse_args()
    bottom_audits(args.trials)
    bottom_frequencies(args.trials)
    mutants(min(args.trials, 50_000))
    rt8(args.figure)


if __name__ == "__main__":
    main()
