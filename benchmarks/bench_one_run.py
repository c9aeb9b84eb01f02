"""One-run audits on the idealised Gaussian protocol: recovered share of the true ε.

The protocol of the one-run literature's idealised experiments (Steinke, Nasr, Jagielski 2023;
Mahloujifar, Melis, Chaudhuri 2024; Xiang et al. 2025): ``m`` canaries, each included with
probability 1/2, whose scores are those of a μ-GDP mechanism, ``N(μ·b, 1)`` for inclusion bit
``b``; δ = 1e-5, confidence 0.95.  The true ε is that of μ-GDP at δ
(:func:`dpclaims.audit.gdp_epsilon`).  For each ``m`` in 10^3, 10^4, 10^5 and each μ, ``REPS``
runs give the mean certified ε / true ε of

* the assumption-free bound of Steinke et al. (``k_plus = k_minus = m // 10``, its default),
* the Gaussian-DP bound of Mahloujifar et al. (best of :data:`GUESS_FRACTIONS` guesses under a
  union bound), which assumes the mechanism's privacy profile is Gaussian.

Also the null calibration: on identical-distribution scores (no signal, m = 1000), how many of
``NULL_RUNS`` runs give each bound a positive ε.  Run: ``python benchmarks/bench_one_run.py
[REPS]`` (about 2 minutes on one core at the default).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dpclaims.audit import audit_one_run_scores, gdp_epsilon

DELTA = 1e-5
CANARIES = (1_000, 10_000, 100_000)
MUS = (0.5, 1.0, 2.0)
NULL_RUNS = 200


def gaussian_scores(m: int, mu: float, rng: np.random.Generator):
    """Scores (m,) of a μ-GDP mechanism and the inclusion bits (m,)."""
    included = rng.random(m) < 0.5
    return rng.standard_normal(m) + mu * included, included


def null_calibration(runs: int = NULL_RUNS, m: int = 1000) -> dict[str, int]:
    """Runs with a positive bound, per assumption, on scores with no signal."""
    positive = {"none": 0, "gaussian-dp": 0}
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        scores, included = rng.standard_normal(m), rng.random(m) < 0.5
        for bound in audit_one_run_scores(scores, included, epsilon=1.0, delta=DELTA).bounds:
            positive[bound.assumption] += bound.epsilon_lower > 0
    return positive


def main(reps: int = 5) -> None:
    positive = null_calibration()
    print(
        f"null calibration (m = 1000, {NULL_RUNS} runs): positive bounds "
        f"Steinke {positive['none']}, Gaussian-DP {positive['gaussian-dp']} "
        f"(at most {int(0.05 * NULL_RUNS)} allowed)"
    )
    print()
    print(
        f"{'m':>7} {'mu':>4} {'true eps':>8} {'Steinke':>8} {'share':>6} {'GDP':>8} "
        f"{'share':>6} {'s/run':>6}"
    )
    shares = {"none": [], "gaussian-dp": []}
    for m in CANARIES:
        for mu in MUS:
            true_eps = gdp_epsilon(mu, DELTA)
            found = {"none": [], "gaussian-dp": []}
            start = time.perf_counter()
            for rep in range(reps):
                rng = np.random.default_rng([m, int(mu * 100), rep])
                scores, included = gaussian_scores(m, mu, rng)
                result = audit_one_run_scores(scores, included, epsilon=true_eps, delta=DELTA)
                for bound in result.bounds:
                    found[bound.assumption].append(bound.epsilon_lower)
            seconds = (time.perf_counter() - start) / reps
            steinke, gdp = (float(np.mean(found[a])) for a in ("none", "gaussian-dp"))
            shares["none"].append(steinke / true_eps)
            shares["gaussian-dp"].append(gdp / true_eps)
            print(
                f"{m:>7} {mu:>4g} {true_eps:>8.3f} {steinke:>8.3f} {steinke / true_eps:>6.1%} "
                f"{gdp:>8.3f} {gdp / true_eps:>6.1%} {seconds:>6.2f}"
            )
    print()
    print(
        f"mean share: Steinke {np.mean(shares['none']):.1%}, "
        f"Gaussian-DP {np.mean(shares['gaussian-dp']):.1%}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
