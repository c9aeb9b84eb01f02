"""The reach of an audit, validated: predicted 90%-detection factor vs simulated detection.

For Gaussian (μ-GDP shift) and Laplace (ε shift) score pairs with known leakage, one audit
(:func:`dpclaims.audit.certify_scores`, Quantiles) predicts its reach ``k``, a multiple of the
claim (:func:`dpclaims.audit.reach.reach`); then ``REPS`` fresh audits of the pair's family
leaking ``k`` times the claim (and ``k / 1.25`` times; ``violation_param``) measure how often
they certify above the claim.
The reach promises detection ≥ 0.9 at ``k``; detection at ``k / 1.25`` shows how conservative
it is.  Run: ``python benchmarks/bench_reach.py [REPS]`` (a few minutes at 10^5).
"""

from __future__ import annotations

import sys

import numpy as np

from dpclaims.audit import Quantiles, certify_scores
from dpclaims.audit.reach import reach, violation_param

CASES = (
    ("gaussian", 0.5, 2.0, 1e-5),
    ("gaussian", 1.0, 2.0, 1e-5),
    ("laplace", 0.3, 1.0, 0.0),
    ("laplace", 0.6, 1.0, 0.0),
)


def draw(kind: str, n: int, shift: float, rng: np.random.Generator):
    """Scores of the two datasets: (n,), (n,)."""
    noise = rng.standard_normal if kind == "gaussian" else (lambda k: rng.laplace(0, 1, k))
    return noise(n), shift + noise(n)


def predict(kind, shift, claim, delta, n, seed):
    """One audit's certified bound and reach."""
    found = certify_scores(*draw(kind, n, shift, np.random.default_rng(seed)), strategy=Quantiles())
    test = found.test
    return found.epsilon_lower, reach(
        test,
        claim=claim,
        delta=delta,
        alpha=found.alpha,
        tradeoff=found.tradeoff,
    )


def detection(kind, shift, claim, n, reps, rng) -> float:
    """Share of ``reps`` fresh audits that certify above ``claim``."""
    return float(
        np.mean(
            [
                certify_scores(*draw(kind, n, shift, rng), strategy=Quantiles()).epsilon_lower
                > claim
                for _ in range(reps)
            ]
        )
    )


def main(reps: int = 100) -> None:
    print("| pair | claim | N | certified | predicted k | model | detection at k | at k/1.25 |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(12345)
    for n in (1_000, 10_000, 100_000):
        for kind, shift, claim, delta in CASES:
            for seed in range(2):
                bound, found = predict(kind, shift, claim, delta, n, seed)
                model = "gaussian-dp" if kind == "gaussian" else "laplace"
                at, below = (
                    detection(kind, violation_param(model, k * claim, delta), claim, n, reps, rng)
                    for k in (found.factor, found.factor / 1.25)
                )
                print(
                    f"| {kind} {shift} | {claim} | {n:,} | {bound:.3f} | {found.factor:.3g} "
                    f"| {found.model} | {at:.2f} | {below:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
