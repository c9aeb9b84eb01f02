"""The trade-off of an audit's test on log axes (matplotlib; no backend is chosen here).

Log axes down to 1/N show what linear axes hide: a violation lives near the
low false-positive corner, where the claimed curve ``FNR = 1 - δ - e^ε FPR`` runs
close to 1 and the empirical points sit a few counts above zero.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

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
    return np.maximum.reduce([np.zeros_like(alpha), 1 - delta - math.exp(epsilon) * alpha,
                              math.exp(-epsilon) * (1 - delta - alpha)])


def plot_tradeoff(record: Mapping[str, Any], ax: Any = None) -> Any:
    """Draw an audit record (:meth:`AuditResult.to_dict`) on ``ax`` (default: a new figure); return the Axes.

    The x axis is the false-positive rate, the y axis the false-negative rate, both
    logarithmic from ``1 / N`` (N certification trials per dataset) to 1; observed
    zero rates are drawn at ``1 / N``.  The claimed (ε, δ) curve, the curve at the
    certified ε and the chosen test's upper bounds are drawn with the empirical points.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5.0, 4.6))
    epsilon, delta, lower = record["epsilon"], record["delta"], record["epsilon_lower"]
    floor = 1.0 / max(int(record["certification_trials"]), 1)
    alpha = np.geomspace(floor, 1.0, 400)
    claimed = np.maximum(tradeoff_bound(alpha, epsilon, delta), floor)
    ax.fill_between(alpha, floor, claimed, color="#c62828", alpha=0.08, label="excluded by the claim")
    ax.plot(alpha, claimed, color="#c62828", label=f"claimed ({epsilon:g}, {delta:g})-DP")
    if lower is not None and lower > 0:
        kind = "certified" if record["certified"] else "estimated"
        ax.plot(alpha, np.maximum(tradeoff_bound(alpha, lower, delta), floor), ":", color="#1565c0", lw=2,
                label=f"{kind} ε ≥ {lower:.3f}")
    points = np.asarray([p for p in record["tradeoff"] if None not in p], dtype=float).reshape(-1, 2)
    if points.size:
        points = np.maximum(points, floor)
        ax.plot(points[:, 0], points[:, 1], "-", color="#263238", lw=1.2, marker=".", ms=3,
                label="empirical test (certification split; 0 drawn at 1/N)")
    ax.plot([max(record["fpr_upper"], floor)], [max(record["fnr_upper"], floor)], "s", color="#1565c0", ms=6,
            label=f"chosen test, {record['confidence']:.0%} upper bounds")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 1.0)
    ax.set_ylim(floor, 1.0)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("false-negative rate")
    ax.grid(True, which="major", alpha=0.25)
    ax.legend(fontsize=7, loc="lower left")
    return ax
