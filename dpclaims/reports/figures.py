"""Report figures (matplotlib, Agg), drawn from claims' results alone and returned as PNG bytes.

- :func:`rate_figure`: the log-log sweep with every replicate, the fitted power law
  with its confidence band, and the theorem's slope drawn through the data.
- :func:`audit_figure`: the empirical trade-off of the audit's test (FPR against
  1 − FNR on log axes down to 1/N), the region the claimed (ε, δ) excludes and the
  curve at the certified ε.
- :func:`summary_figure`: claimed ε against the certified lower bound, over all audits.
- :func:`section6_figure`: DIFF2's §6 training curves (GD, DP-GD, DIFF2-GD) per dataset and metric.
"""

from __future__ import annotations

import functools
import io
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from ..audit.plot import plot_tradeoff, tradeoff_bound  # noqa: E402
from ..results import AuditEvidence, ClaimResult, RateEvidence, ValueEvidence  # noqa: E402
from ..verdicts import UNCHECKED  # noqa: E402
from .text import SUMMARY_FIGURE  # noqa: E402

__all__ = [
    "SUMMARY_FIGURE",
    "rate_figure",
    "audit_figure",
    "summary_figure",
    "claim_figure",
    "tradeoff_bound",
    "section6_figure",
]


_DPI = 100
_COLORS = {
    "consistent": "#2e7d32",
    "consistent_weak": "#7a9a3a",
    "violation": "#c62828",
    "inconsistent": "#c62828",
    "inconclusive": "#b26a00",
}


_MEASURED = {
    "excess_risk": "excess risk (or distance)",
    "utility": "utility (gradient norm)",
    "complexity": "cost (gradients, rounds or time)",
    "lower_bound": "error",
}
"""What a rate claim's sweep measures, by the claim's kind: the y axis of its figure."""


def _mathtext(draw: Callable[..., bytes]) -> Callable[..., bytes]:
    """Draw with mathtext on, whatever the user's matplotlibrc says: the log axes' tick labels
    are formulas (``$\\mathdefault{10^{2}}$``); user text is kept literal by :func:`_literal`."""

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> bytes:
        with plt.rc_context({"text.parse_math": True}):
            return draw(*args, **kwargs)

    return drawn


def _literal(text: Any) -> str:
    """``text`` drawn as written: ids, parameters and claims come from users, and each ``$`` in
    them is escaped, so matplotlib never reads a formula there (nor fails to parse one)."""
    return str(text).replace("$", r"\$")


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def _title(ax: Any, name: str, verdict: str) -> None:
    """Claim (or part) id and verdict above the axes, wrapped onto two lines when long."""
    text = textwrap.fill(f"{name} — {verdict}", width=60)
    ax.set_title(_literal(text), fontsize=9.5, color=_COLORS.get(verdict, "black"), loc="left")
    if "\n" in text:
        ax.figure.subplots_adjust(top=ax.figure.subplotpars.top - 0.045)


@_mathtext
def rate_figure(entry: ClaimResult) -> bytes:
    """Log-log sweep of a rate claim's result (type ``"rate"``), as PNG bytes."""
    evidence = entry.evidence
    sweep, fit, check = evidence.sweep, evidence.fit, evidence.check
    values = np.asarray(sweep["values"], dtype=float)
    errors = np.asarray(sweep["errors"], dtype=float).reshape(values.size, -1)
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    fig.subplots_adjust(
        left=0.18, right=0.97, bottom=0.12, top=0.92
    )  # fixed margins: 2x faster than a layout engine
    xs = np.repeat(values, errors.shape[1])
    ys = errors.reshape(-1)
    keep = ys > 0
    ax.scatter(
        xs[keep],
        ys[keep],
        s=12,
        alpha=0.35,
        color="#546e7a",
        label=f"replicates (R = {errors.shape[1]})",
    )
    positive = np.where(errors > 0, errors, np.nan)
    with np.errstate(invalid="ignore"):
        centre_y = np.exp(np.nanmean(np.log(positive), axis=1))
    ax.plot(values, centre_y, "o", color="#263238", ms=5, label="geometric mean")
    grid = np.geomspace(values.min(), values.max(), 50)
    log_centre = float(np.mean(np.log(values)))
    exponent, intercept = fit.get("exponent"), fit.get("intercept")
    if exponent is not None and intercept is not None:
        anchor = math.exp(intercept + exponent * log_centre)
        ax.plot(
            grid,
            np.exp(intercept) * grid**exponent,
            color="#1565c0",
            label=f"fit: slope {exponent:.3f}",
        )
        low, high = check["interval"]
        if low is not None and high is not None:
            ratio = grid / math.exp(log_centre)
            band = np.stack([anchor * ratio**low, anchor * ratio**high])
            ax.fill_between(
                grid,
                band.min(axis=0),
                band.max(axis=0),
                color="#1565c0",
                alpha=0.15,
                label=f"{check['confidence']:.0%} CI [{low:.3f}, {high:.3f}]",
            )
        ax.plot(
            grid,
            anchor * (grid / math.exp(log_centre)) ** check["expected"],
            "--",
            color="#c62828",
            label=_literal(
                f"claimed {check.get('claimed') or format(check['expected'], 'g')} "
                f"({check.get('bound', 'order')}, margin {check['margin']:g})"
            ),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(
        values, [f"{v:g}" for v in values], fontsize=8
    )  # the grid itself, never crowded minor labels
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(_literal(sweep["param"]))
    ax.set_ylabel(_MEASURED.get(entry.kind, "error returned by the experiment"))
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="best")
    _title(ax, entry.id, entry.verdict)
    return _png(fig)


@_mathtext
def audit_figure(entry: Any) -> bytes:
    """Trade-off plot of a privacy audit as PNG bytes (log axes down to 1/N: :func:`plot_tradeoff`).

    ``entry``: an :class:`~dpclaims.audit.AuditResult`, or a claim's result of type ``"audit"``
    (a :class:`~dpclaims.results.ClaimResult`).
    """
    if isinstance(entry, ClaimResult):
        name, evidence = entry.id, entry.evidence
    else:
        name, evidence = "audit", entry.evidence()
    fig, ax = plt.subplots(figsize=(5.0, 4.6))
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.11, top=0.93)
    plot_tradeoff(evidence, ax=ax)
    _title(ax, name, entry.verdict)
    return _png(fig)


_SECTION6_LABELS = {
    "train": "train loss",
    "grad": "squared train gradient norm",
    "test": "test loss",
}
_SECTION6_STYLE = {
    "gd": ("GD (ref)", "#777777"),
    "dp-gd": ("DP-GD", "#1565c0"),
    "diff2-gd": ("DIFF2-GD", "#c62828"),
}


@_mathtext
def section6_figure(summaries: Mapping[str, Mapping[str, Any]]) -> bytes:
    """DIFF2 paper Fig. 1/2 layout: a row per dataset, a column per metric; mean ± std over seeds
    against the communication round, log scale, the paired t-test's p-value and the seeds in each
    title.

    ``summaries``: ``{dataset: Section6.summarize(...)}``.
    """
    rows = len(summaries)
    fig, axes = plt.subplots(rows, 3, figsize=(12.0, 3.0 * rows + 0.4), squeeze=False)
    for row, (name, summary) in enumerate(summaries.items()):
        x = np.asarray(summary["rounds_axis"])
        for col, metric in enumerate(("train", "grad", "test")):
            ax = axes[row, col]
            for method, curve in summary["curves"][metric].items():
                label, color = _SECTION6_STYLE[method]
                mean, std = np.asarray(curve["mean"]), np.asarray(curve["std"])
                ax.plot(
                    x, mean, color=color, lw=1.4, label=label, ls="--" if method == "gd" else "-"
                )
                ax.fill_between(
                    x,
                    np.maximum(mean - std, mean * 1e-3),
                    mean + std,
                    color=color,
                    alpha=0.15,
                    lw=0,
                )
            test = summary["tests"][metric]
            ax.set_yscale("log")
            ax.set_title(
                _literal(
                    f"{name}: {_SECTION6_LABELS[metric]}\np = {test['pvalue']:.3g}, "
                    f"{summary['setup']['seeds']} seeds"
                    f"{' (DIFF2-GD wins)' if test['wins'] else ''}"
                ),
                fontsize=9,
                loc="left",
            )
            ax.grid(True, which="both", alpha=0.2)
            if row == rows - 1:
                ax.set_xlabel("communication round")
    axes[0, 0].legend(fontsize=8)
    setup = next(iter(summaries.values()))["setup"]
    fig.suptitle(
        f"DIFF2 §6: ε = {setup['epsilon']:g}, δ = {setup['delta']:g}, R = {setup['rounds']}, "
        "mean ± std over seeds, App. A tuning",
        fontsize=10,
        x=0.01,
        ha="left",
    )
    fig.tight_layout()
    return _png(fig)


def claim_figure(entry: ClaimResult) -> bytes | None:
    """The figure of a checked audit, rate or §6-comparison result; None for any other."""
    if entry.verdict in UNCHECKED:
        return None
    if isinstance(entry.evidence, RateEvidence):
        return rate_figure(entry)
    if isinstance(entry.evidence, AuditEvidence):
        return audit_figure(entry)
    if isinstance(entry.evidence, ValueEvidence) and "section6" in entry.evidence.extra:
        return section6_figure(entry.evidence.extra["section6"])
    return None


@_mathtext
def summary_figure(entries: Sequence[ClaimResult]) -> bytes | None:
    """Audited ε (the claim's, or a named bound) vs certified lower bound for every checked audit
    entry; None when there is none.

    Pass the parts of combined experiments as entries of their own (see :func:`.text.parts`).
    """
    audits = [
        e for e in entries if isinstance(e.evidence, AuditEvidence) and e.verdict not in UNCHECKED
    ]
    if not audits:
        return None
    height = 1.5 + 0.3 * len(audits)
    fig, ax = plt.subplots(figsize=(7.0, height))
    label_inches = 0.3 + 0.062 * max(len(e.id) for e in audits)  # 8-pt labels on the y axis
    fig.subplots_adjust(
        left=min(0.6, label_inches / 7.0), right=0.97, bottom=0.95 / height, top=1 - 0.4 / height
    )
    rows = np.arange(len(audits))[::-1]
    evidence = [e.evidence for e in audits]
    claimed = np.array([e.epsilon for e in evidence], dtype=float)
    lowers = np.array([np.nan if e.epsilon_lower is None else e.epsilon_lower for e in evidence])
    colors = [_COLORS.get(e.verdict, "black") for e in audits]
    ax.hlines(rows, 0, np.nan_to_num(lowers), color=colors, lw=3, alpha=0.45)
    ax.scatter(
        lowers,
        rows,
        color=colors,
        zorder=3,
        label="certified lower bound (green: consistent, red: violation)",
    )
    derived = np.array([bool(e.bound) for e in evidence])
    markers = (("claimed ε", ~derived, "|", 220), ("a bound, not the claim", derived, "x", 60))
    for label, mask, marker, size in markers:
        if mask.any():
            ax.scatter(
                claimed[mask], rows[mask], marker=marker, s=size, linewidths=2, color="black",
                zorder=4, label=label,
            )  # fmt: skip
    ax.set_yticks(rows, [_literal(e.id) for e in audits], fontsize=8)
    ax.set_ylim(-0.6, len(audits) - 0.4)
    ax.set_xlim(0, 1.08 * float(np.nanmax(np.concatenate([claimed, lowers]))))
    ax.set_xlabel("ε")
    ax.grid(True, axis="x", alpha=0.25)
    fig.legend(fontsize=8, loc="lower center", ncol=2, frameon=False)
    fig.suptitle(
        "Privacy audits: audited ε vs certified lower bound",
        fontsize=10,
        x=0.02,
        y=1 - 0.08 / height,
        ha="left",
        va="top",
    )
    return _png(fig)
