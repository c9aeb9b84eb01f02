"""Tightness and speed of ``dpclaims.audit.audit`` on the analytic Gaussian mechanism.

For sensitivity 1 and σ from the analytic Gaussian calibration (Balle & Wang 2018,
Theorem 8) at (ε, δ = 1e-5), the mechanism is exactly (ε, δ)-DP.  The *limit* is
the best ε any threshold test on the exact likelihood-ratio statistic could
certify with the same trials per side and the same Clopper–Pearson bounds, with the
threshold chosen in hindsight on the true distributions (expected counts).  The
audit must reach ≥ 85% of it at 10^6 trials, in well under 5 s end to end.

Run: ``python benchmarks/bench_audit_tightness.py``
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import optimize, stats

from dpclaims.audit import audit
from dpclaims.audit.bounds import epsilon_from_rates, per_bound_alpha, rate_upper

DELTA = 1e-5
CONFIDENCE = 0.95


def analytic_sigma(epsilon: float, delta: float) -> float:
    """Smallest σ with δ(ε, σ) = Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) ≤ δ (Balle & Wang 2018, Theorem 8)."""

    def gap(sigma: float) -> float:
        return stats.norm.cdf(0.5 / sigma - epsilon * sigma) - math.exp(epsilon) * stats.norm.cdf(-0.5 / sigma - epsilon * sigma) - delta

    return optimize.brentq(gap, 1e-3, 100.0)


class Gauss:
    """``data + σ N(0, 1)``, one output per trial; picklable for the process backend."""

    def __init__(self, sigma: float) -> None:
        self.sigma = sigma

    def __call__(self, data: float, rng: np.random.Generator, trials: int) -> np.ndarray:
        return data + self.sigma * rng.standard_normal(trials)


def limit(sigma: float, trials: int) -> float:
    """Best Clopper–Pearson-certified ε of a threshold test in hindsight (expected counts)."""
    t = np.linspace(-10 * sigma, 10 * sigma + 1, 40_001)
    fp = np.round(stats.norm.sf(t / sigma) * trials)
    fn = np.round(stats.norm.cdf((t - 1) / sigma) * trials)
    alpha = per_bound_alpha(CONFIDENCE)
    return float(np.max(epsilon_from_rates(rate_upper(fp, trials, alpha), rate_upper(fn, trials, alpha), DELTA)))


def main() -> None:
    print(f"{'eps':>5} {'trials':>9} {'sigma':>7} {'eps_lower':>10} {'limit':>7} {'ratio':>6} {'statistic':>10} {'wall_s':>7}")
    for trials in (10**5, 10**6):
        for epsilon in (1.0, 2.0, 4.0):
            sigma = analytic_sigma(epsilon, DELTA)
            start = time.perf_counter()
            r = audit(Gauss(sigma), 0.0, 1.0, epsilon=epsilon, delta=DELTA, trials=trials, confidence=CONFIDENCE, seed=0)
            wall = time.perf_counter() - start
            best = limit(sigma, trials)
            print(
                f"{epsilon:5.1f} {trials:9d} {sigma:7.4f} {r.epsilon_lower:10.4f} {best:7.4f} "
                f"{r.epsilon_lower / best:6.3f} {r.statistic:>10} {wall:7.2f}"
            )


if __name__ == "__main__":
    main()
