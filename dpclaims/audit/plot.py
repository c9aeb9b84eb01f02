"""The trade-off of an audit's test on log axes (matplotlib; no backend is chosen here).

The trade-off is drawn as false-positive rate against true-positive rate (1 − FNR),
both on log axes down to 1/N.  There an (ε, δ) claim is the line
``TPR = e^ε FPR + δ`` (slope 1, shifted by ε), so a violation near the low
false-positive corner, invisible on linear axes, stands above the line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..results import AuditEvidence

__all__ = ["tradeoff_bound", "plot_tradeoff"]


def tradeoff_bound(fpr: np.ndarray, epsilon: float, delta: float) -> np.ndarray:
    """Smallest FNR an (ε, δ)-DP mechanism allows at each FPR: max(0, 1−δ−e^ε·α, e^−ε·(1−δ−α)).

    Parameters
    ----------
    fpr : array (p,) of false-positive rates α in [0, 1]

    Returns
    -------
    array (p,)
    """
    alpha = np.asarray(fpr, dtype=float)
    return np.maximum.reduce(
        [
            np.zeros_like(alpha),
            1 - delta - math.exp(epsilon) * alpha,
            math.exp(-epsilon) * (1 - delta - alpha),
        ]
    )


def plot_tradeoff(evidence: AuditEvidence, ax: Any = None) -> Any:
    """Draw an audit's evidence (:meth:`AuditResult.evidence`) on ``ax`` (default: a new
    figure).

    Returns the Axes.

    x: false-positive rate, y: true-positive rate (1 − false-negative rate), both
    logarithmic from ``1 / N`` (N certification trials per dataset) to 1; observed
    zero rates are drawn at ``1 / N``.  The audited (ε, δ) region (the claim's, or the
    bound ``evidence.bound`` names), the curve at the
    certified ε and the chosen test's conservative corner (its upper bounds) are
    drawn with the empirical points.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5.0, 4.6))
    epsilon, delta, lower = evidence.epsilon, evidence.delta, evidence.epsilon_lower
    counts = evidence.counts
    floor = 1.0 / max(int(counts.certification_trials), 1)
    alpha = np.geomspace(floor, 1.0, 400)

    def power(eps):
        return np.clip(1.0 - tradeoff_bound(alpha, eps, delta), floor, 1.0)

    bound = evidence.bound or ""  # a derived or intermediate bound, not the paper's claim
    ax.fill_between(
        alpha,
        power(epsilon),
        1.0,
        color="#c62828",
        alpha=0.08,
        label=f"excluded by the {'audited bound' if bound else 'claim'}",
    )
    against = f"{bound}:" if bound else "claimed"
    ax.plot(alpha, power(epsilon), color="#c62828", label=f"{against} ({epsilon:g}, {delta:g})-DP")
    if lower is not None and lower > 0:
        kind = "certified" if evidence.certified else "estimated"
        ax.plot(alpha, power(lower), ":", color="#1565c0", lw=2, label=f"{kind} ε ≥ {lower:.3f}")
    points = np.asarray([p for p in evidence.test.tradeoff if None not in p], dtype=float).reshape(
        -1, 2
    )
    if points.size:
        ax.plot(
            np.maximum(points[:, 0], floor),
            np.maximum(1.0 - points[:, 1], floor),
            "-",
            color="#263238",
            lw=1.2,
            marker=".",
            ms=3,
            label="empirical test (certification split; 0 drawn at 1/N)",
        )
    ax.plot(
        [max(counts.fpr_upper, floor)],
        [max(1.0 - counts.fnr_upper, floor)],
        "s",
        color="#1565c0",
        ms=6,
        label=f"chosen test, {evidence.confidence:.0%} bounds",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 1.0)
    ax.set_ylim(floor, 1.0)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate (1 − false-negative rate)")
    ax.grid(True, which="major", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    return ax
