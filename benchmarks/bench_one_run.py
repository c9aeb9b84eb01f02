"""One-run audits on the idealised Gaussian protocol: recovered share of the true ε.

The protocol of the one-run literature's idealised experiments (Steinke, Nasr, Jagielski 2023;
Mahloujifar, Melis, Chaudhuri 2024; Xiang et al. 2025): ``m`` canaries, each included with
probability 1/2, whose scores are those of a μ-GDP mechanism, ``N(μ·b, 1)`` for inclusion bit
``b``; δ = 1e-5, confidence 0.95.  The true ε is that of μ-GDP at δ
(:func:`dpclaims.audit.gdp_epsilon`).  For each ``m`` in 10^3, 10^4, 10^5 and each μ in
:data:`MUS` (then each ε in :data:`EPSILONS`), ``REPS`` runs give the mean certified ε / true ε
of the three bounds of :func:`dpclaims.audit.audit_one_run_scores`:

* Steinke et al. (no assumption; ``k_plus = k_minus = m // 10``, its default),
* Mahloujifar et al. (assumes a Gaussian-DP mechanism; best of ``GUESS_FRACTIONS`` under a
  union bound), beside its *ceiling*: the bound at the expected counts of correct guesses with
  the best number of guesses and no union bound (:func:`gdp_guess_ceiling`), which no run of
  that bound can be expected to beat,
* the full-ranking bound (assumes independent canaries, each a μ-GDP channel: true here),
  beside the *limit* of any bound at that ``m``: the median 95% lower bound of the most
  powerful test of the Gaussian shift itself (the one-sided z-test on the difference of the
  means, standard error ``√(1/n_in + 1/n_out) ≈ 2/√m``; :func:`shift_limit`), which knows
  the scores are ``N(μ b, 1)`` and no bound valid for that family can be expected to beat.

Also the null calibration: on identical-distribution scores (no signal, m = 1000), how many of
``NULL_RUNS`` runs give each bound a positive ε.  Run: ``python benchmarks/bench_one_run.py
[REPS]`` (about 20 seconds on one core at the default).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy import optimize, stats

from dpclaims.audit import (
    ASSUMPTIONS,
    audit_one_run_scores,
    gdp_epsilon,
    gdp_mu_of,
    one_run_gdp_mu,
)

DELTA = 1e-5
CANARIES = (1_000, 10_000, 100_000)
MUS = (0.5, 1.0, 2.0)
EPSILONS = (1.0, 2.0, 4.0, 8.0)
NULL_RUNS = 200
SHORT = {"none": "Steinke", "gaussian-dp": "GDP", "independent-gaussian-dp": "rank"}


def gaussian_scores(m: int, mu: float, rng: np.random.Generator):
    """Scores (m,) of a μ-GDP mechanism and the inclusion bits (m,)."""
    included = rng.random(m) < 0.5
    return rng.standard_normal(m) + mu * included, included


def gdp_guess_ceiling(m: int, mu: float, confidence: float = 0.95) -> float:
    """Largest μ bound of Mahloujifar et al.'s recursion at the *expected* number of correct
    guesses on ``N(μ b, 1)`` scores, over ``k/2`` highest-in and ``k/2`` lowest-out guesses for
    60 counts ``k`` from 2 to ``m``, without paying for the choice of ``k``."""

    def expected_above(t: float) -> float:
        return m * 0.5 * (stats.norm.sf(t) + stats.norm.sf(t - mu))

    best = 0.0
    for k in np.unique(np.geomspace(2, m, 60).astype(int) // 2 * 2):
        above = optimize.brentq(lambda t, half=k / 2: expected_above(t) - half, -40.0, 40.0)
        precision = 0.5 * m * stats.norm.sf(above - mu) / expected_above(above)
        best = max(best, one_run_gdp_mu(m, int(k), int(round(precision * k)), confidence))
    return best


def shift_limit(m: int, mu: float, confidence: float = 0.95) -> float:
    """μ minus the z-test's margin ``z_conf · 2/√m``: the median lower bound of the most powerful
    (Neyman-Pearson) test of ``N(μ b, 1)`` scores with half the canaries in (at least 0)."""
    return max(mu - stats.norm.ppf(confidence) * 2.0 / np.sqrt(m), 0.0)


def null_calibration(runs: int = NULL_RUNS, m: int = 1000) -> dict[str, int]:
    """Runs with a positive bound, per assumption, on scores with no signal."""
    positive = dict.fromkeys(ASSUMPTIONS, 0)
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        scores, included = rng.standard_normal(m), rng.random(m) < 0.5
        for bound in audit_one_run_scores(scores, included, epsilon=1.0, delta=DELTA).bounds:
            positive[bound.assumption] += bound.epsilon_lower > 0
    return positive


def recovered(m: int, mu: float, reps: int) -> tuple[dict[str, float], float]:
    """Mean certified ε / true ε per assumption over ``reps`` runs, and seconds per run."""
    true_eps = gdp_epsilon(mu, DELTA)
    found = {a: [] for a in ASSUMPTIONS}
    start = time.perf_counter()
    for rep in range(reps):
        rng = np.random.default_rng([m, int(round(mu * 1000)), rep])
        scores, included = gaussian_scores(m, mu, rng)
        for bound in audit_one_run_scores(scores, included, epsilon=true_eps, delta=DELTA).bounds:
            found[bound.assumption].append(bound.epsilon_lower / true_eps)
    return {a: float(np.mean(v)) for a, v in found.items()}, (time.perf_counter() - start) / reps


def table(rows: list[tuple[int, float]], reps: int) -> dict[str, list[float]]:
    """Print one line per (m, μ); return every share per assumption."""
    print(
        f"{'m':>7} {'mu':>6} {'true eps':>8} {'Steinke':>8} {'GDP':>7} {'GDP ceil':>8} "
        f"{'rank':>7} {'limit':>7} {'s/run':>6}"
    )
    shares = {a: [] for a in ASSUMPTIONS}
    limits = []
    for m, mu in rows:
        true_eps = gdp_epsilon(mu, DELTA)
        share, seconds = recovered(m, mu, reps)
        ceiling = gdp_epsilon(gdp_guess_ceiling(m, mu), DELTA) / true_eps
        limits.append(gdp_epsilon(shift_limit(m, mu), DELTA) / true_eps)
        for a in ASSUMPTIONS:
            shares[a].append(share[a])
        print(
            f"{m:>7} {mu:>6.3f} {true_eps:>8.3f} {share['none']:>8.1%} "
            f"{share['gaussian-dp']:>7.1%} {ceiling:>8.1%} "
            f"{share['independent-gaussian-dp']:>7.1%} {limits[-1]:>7.1%} {seconds:>6.2f}"
        )
    largest = [i for i, (m, _) in enumerate(rows) if m == max(CANARIES)]
    print(
        "mean share: "
        + ", ".join(f"{SHORT[a]} {np.mean(shares[a]):.1%}" for a in ASSUMPTIONS)
        + f", limit {np.mean(limits):.1%}; at m = {max(CANARIES):,}: "
        + ", ".join(f"{SHORT[a]} {np.mean(np.take(shares[a], largest)):.1%}" for a in ASSUMPTIONS)
    )
    return shares


def main(reps: int = 5) -> None:
    positive = null_calibration()
    print(
        f"null calibration (m = 1000, {NULL_RUNS} runs): positive bounds "
        + ", ".join(f"{SHORT[a]} {positive[a]}" for a in ASSUMPTIONS)
        + f" (an exact 5% test gives {int(0.05 * NULL_RUNS)} on average)"
    )
    print(f"\nrecovered share of the true eps, grid m x mu ({reps} runs each)")
    table([(m, mu) for m in CANARIES for mu in MUS], reps)
    print(
        f"\nrecovered share of the true eps, grid m x eps at delta = {DELTA:g} ({reps} runs each)"
    )
    table([(m, gdp_mu_of(eps, DELTA)) for m in CANARIES for eps in EPSILONS], reps)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
