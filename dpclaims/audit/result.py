"""The result of an audit: the verdict, the bound and the counts on top, how the audit ran in a
nested :class:`Provenance`, and how to read it (:meth:`AuditResult.summary`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ..vocabulary import Verdict
from .methods import method_named
from .reach import Reach

__all__ = ["AuditResult", "Provenance", "format_epsilon"]


def format_epsilon(value: float) -> str:
    """An ε for people: 3 decimals, or 2 significant digits below 0.01 (0.0004 is not 0.000),
    "∞" when infinite."""
    if not math.isfinite(value):
        return "∞"
    return f"{value:.3f}" if value == 0 or abs(value) >= 0.01 else f"{value:.2g}"


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """How an audit ran: the test it certified, the split, the interval, the seed, the outputs.

    ``statistic`` names the score; the test is the event ``direction`` at ``threshold``
    (see :data:`dpclaims.audit.threshold.DIRECTIONS`), chosen by ``threshold_strategy``
    (``grid_size`` thresholds or ranks per tail; 1 for a single test) on
    ``calibration_trials`` trials per dataset (``calibration_fraction`` of them); each test's
    two rates are bounded jointly with ``ci``, failing with probability ``ci_alpha``, in the
    region shaped by ``ci_tilt`` (:func:`dpclaims.audit.bounds.joint_upper`).
    ``candidates`` maps each learned score to the value it predicted on calibration data;
    ``tradeoff`` holds the empirical (FPR, FNR) points of the chosen direction on the
    certification trials.
    """

    statistic: str
    threshold: float
    direction: str
    calibration_trials: int
    calibration_fraction: float
    threshold_strategy: str
    grid_size: int
    ci: str
    ci_alpha: float
    ci_tilt: float
    seed: int
    output_dim: int
    discrete: bool
    candidates: dict = field(default_factory=dict)
    tradeoff: tuple = ()
    wall_time: float = 0.0

    def to_dict(self) -> dict:
        """JSON-serialisable fields (the threshold is None when infinite)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["tradeoff"] = [list(point) for point in self.tradeoff]
        out["candidates"] = dict(self.candidates)
        if not math.isfinite(out["threshold"]):
            out["threshold"] = None
        return out


NOT_REPRODUCIBLE = (
    "not reproducible: the mechanism draws randomness from outside its rng, so the same seed "
    "gives other trials and a rerun other numbers"
)
"""The summary line of an audit whose mechanism ignores its seed."""


@dataclass(frozen=True, kw_only=True, repr=False)
class AuditResult:
    """What an audit certified (or estimated), and how.

    ``epsilon_lower`` is a lower bound on ε holding with probability ``confidence``
    when :attr:`certified` (every method but ``"gdp"``); for ``method="gdp"`` it is a
    parametric *estimate* (:attr:`kind` ``"estimate"``).
    ``verdict`` is ``"violation"`` iff a certified ``epsilon_lower > epsilon`` (a GDP estimate
    above the claim is ``"inconclusive"``: it assumes a Gaussian trade-off curve); otherwise
    ``"consistent"`` only when the audit had power to see the claim, else
    ``"inconclusive"`` with the ``reason`` (claim above the ``ceiling``, identical
    outputs on the pair, nothing separated).  ``ceiling`` is the largest ε these
    certification trials can certify (:func:`dpclaims.audit.bounds.epsilon_ceiling`);
    ``trials_needed`` the trials per dataset suggested to decide the claim (None when
    nothing suggests more); ``reference_epsilon`` the exact ε of the pair when known
    (``reference_note`` says where it comes from, or why there is none); ``infinite``
    that the test saw no output of the negative dataset in its event while the
    positive dataset put a large share there (ε = ∞ on this pair as far as these trials
    can show: :attr:`infinite_message`).  ``reach`` is the smallest violation of the claim the
    audit would have caught (:class:`~dpclaims.audit.reach.Reach`: a multiple of the claimed ε;
    for ``method="gdp"`` under its own Gaussian-DP model): a ``consistent`` verdict needs it
    within the audit's reach limit, else the verdict is ``consistent_weak``.  A ``consistent``
    whose test's point estimate is above the claim (:attr:`estimate_above_claim`) says so in
    its :attr:`verdict_line` and fails :func:`dpclaims.testing.assert_private`.
    Counts refer to the ``certification_trials`` (of ``trials`` per dataset) and the chosen
    direction: the negative dataset's trials inside the event are false positives, the
    positive dataset's trials outside it false negatives.  ``reproducible`` is False when the
    mechanism drew randomness from outside its ``rng`` (run with strict mode off): the same seed
    gives other trials, so a rerun gives other numbers; the bound's confidence still holds when
    those draws are independent.  ``provenance`` records how the audit ran (:class:`Provenance`).
    """

    verdict: Verdict
    reason: str = ""
    epsilon_lower: float
    epsilon: float
    delta: float
    unit: str
    relation: str
    confidence: float
    method: str
    mu: float | None
    ceiling: float = math.inf
    infinite: bool = False
    identical_outputs: bool = False
    trials_needed: int | None = None
    reach: Reach | None = None
    reference_epsilon: float | None = None
    reference_note: str = ""
    false_positives: int
    false_negatives: int
    n_negative: int
    n_positive: int
    fpr_upper: float
    fnr_upper: float
    trials: int
    certification_trials: int
    warnings: tuple = ()
    reproducible: bool = True
    provenance: Provenance

    @property
    def certified(self) -> bool:
        """Whether ``epsilon_lower`` is a certified bound (every method but ``"gdp"``)."""
        return method_named(self.method).certified

    @property
    def kind(self) -> str:
        """``"certified"`` or ``"estimate"`` (``method="gdp"``)."""
        return "certified" if self.certified else "estimate"

    @property
    def slack(self) -> float:
        """Claimed ε / ``epsilon_lower`` (``inf`` when the lower bound is 0)."""
        return self.epsilon / self.epsilon_lower if self.epsilon_lower > 0 else math.inf

    @property
    def fpr(self) -> float:
        """Empirical false-positive rate on the certification split."""
        return self.false_positives / self.n_negative

    @property
    def fnr(self) -> float:
        """Empirical false-negative rate on the certification split."""
        return self.false_negatives / self.n_positive

    @property
    def epsilon_estimate(self) -> float:
        """Point estimate ``log((1 - δ - FNR) / FPR)`` of the certified test (inf if FPR = 0)."""
        numerator = 1.0 - self.delta - self.fnr
        if numerator <= 0:
            return 0.0
        return math.log(numerator / self.fpr) if self.false_positives else math.inf

    @property
    def infinite_message(self) -> str:
        """``ε = ∞ on this pair ...`` with the evidence, or "" when :attr:`infinite` is False."""
        if not self.infinite:
            return ""
        negative, positive = (
            ("d0", "d1") if self.provenance.direction.startswith("d1") else ("d1", "d0")
        )
        return (
            f"ε = ∞ on this pair as far as {self.n_negative:,} trials can show: {positive} put "
            f"at least {1 - self.fnr_upper:.1%} of its outputs where {negative} put none of "
            "its "
            f"{self.n_negative:,} (so at most {self.fpr_upper:.2g}), at confidence "
            f"{self.confidence:g}; more trials raise the bound by ln 10 per tenfold"
        )

    @property
    def estimate_above_claim(self) -> bool:
        """Whether the certified test's point estimate is above the claim while its bound is
        not (the verdict line then says so)."""
        return (
            self.certified
            and self.verdict != "violation"
            and not self.infinite
            and self.epsilon_estimate > self.epsilon
        )

    @property
    def verdict_line(self) -> str:
        """The verdict with its reason, and, when the test's estimate is above the claim, that
        warning too: a ``consistent`` never reads as a clean pass while the estimate says
        otherwise."""
        line = self.verdict + (f": {self.reason}" if self.reason else "")
        if self.estimate_above_claim:
            line += (
                f"; but the test's estimate ε ≈ {self.epsilon_estimate:.3f} is above the claim "
                f"{self.epsilon:g}"
            )
            if self.trials_needed is not None:
                line += (
                    f" (if it holds, about {self.trials_needed:,} trials per dataset would certify "
                    "a violation)"
                )
        return line

    def headline(self, *, bound: str = "") -> str:
        """One line for a report: the bound against the claim, the ceiling, the exact ε when
        known, the reach, and what else the reader must know (a claim's ``summary``).
        ``bound`` names the audited ε when it is not the claim's own (e.g. ``"derived bound,
        not the paper's"``); it is printed in place of "claimed"."""
        label = "certified" if self.certified else "estimated (not certified)"
        against = f"{bound}:" if bound else "claimed"
        line = (
            f"{label} eps >= {format_epsilon(self.epsilon_lower)} vs {against} "
            f"{self.epsilon:g} (ceiling {format_epsilon(self.ceiling)}"
        )
        if self.reference_epsilon is not None:
            line += f", exact implementation: ~{self.reference_epsilon:g}"
        if self.reach is not None and math.isfinite(self.reach.factor):
            line += f", reach {self.reach.factor:.3g}×"
        line += ")" + (f"; {self.reason}" if self.reason else "")
        if self.estimate_above_claim:
            line += (
                f"; the test's estimate ε ≈ {format_epsilon(self.epsilon_estimate)} is above "
                "the claim"
            )
        if self.infinite:
            line += f"; {self.infinite_message}"
        return line

    def summary(self) -> str:
        """A few lines: claim, bound, ceiling, reference, verdict and why, test, counts."""
        kind = "certified" if self.certified else "estimated (not certified)"
        test = self.provenance
        lines = [
            f"claim      ({self.epsilon:g}, {self.delta:g})-DP, {self.unit} level, {self.relation}",
            f"{kind:<10} ε ≥ {format_epsilon(self.epsilon_lower)} at confidence "
            f"{self.confidence:g} "
            f"({self.certification_trials:,} of {self.trials:,} trials per dataset certify)",
            f"ceiling    {self.ceiling:.3f}: the most these trials can certify",
        ]
        reference = self.reference_epsilon
        if reference is not None:
            share = ""
            if 0 < reference < math.inf:
                share = f"; certified {self.epsilon_lower / reference:.0%} of it"
            exact = f"{reference:.3f}" if math.isfinite(reference) else "∞"
            below = " (below the claim)" if reference < self.epsilon else ""
            lines.append(
                f"reference  exact ε on this pair {exact}{below}{share}"
                + (f" ({self.reference_note})" if self.reference_note else "")
            )
        elif self.reference_note:
            lines.append(f"reference  none: {self.reference_note}")
        lines.append(f"verdict    {self.verdict_line}")
        if self.reach is not None and self.verdict != "violation":
            lines.append(f"reach      {self.reach.describe()}")
        if self.infinite:
            lines.append(f"           {self.infinite_message}")
        if not self.reproducible:
            lines.append(f"rerun      {NOT_REPRODUCIBLE}")
        lines.append(
            f"test       {self.method}, score {test.statistic}, event {test.direction} "
            f"(t = {test.threshold:.4g})"
        )
        lines.append(
            f"counts     false positives {self.false_positives:,}/{self.n_negative:,} "
            f"(FPR ≤ {self.fpr_upper:.3g}), false negatives {self.false_negatives:,}/"
            f"{self.n_positive:,} (FNR ≤ {self.fnr_upper:.3g})"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"AuditResult(verdict={self.verdict!r}, epsilon_lower={self.epsilon_lower:.4f}, "
            f"epsilon={self.epsilon:g}, delta={self.delta:g}, ceiling={self.ceiling:.3f}, "
            f"reference_epsilon={self.reference_epsilon!r}, trials={self.trials}, "
            f"confidence={self.confidence:g})"
        )

    def plot(self, ax=None):
        """Draw the test's trade-off (FPR vs FNR, log axes down to 1/N) against the claimed curve.

        ``ax``: a matplotlib Axes (default: a new figure).  Returns the Axes.
        """
        from .plot import plot_tradeoff

        return plot_tradeoff(self.to_dict(), ax=ax)

    def to_dict(self) -> dict:
        """JSON-serialisable record, flat: the top fields, :attr:`certified`, :attr:`kind`, the
        provenance fields, ``fpr``, ``fnr`` and ``slack`` (plain floats, ints, strings, lists;
        infinite values are None)."""
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("provenance", "reach")
        }
        out.update(certified=self.certified, kind=self.kind, **self.provenance.to_dict())
        out["warnings"] = list(self.warnings)
        reach = self.reach.to_dict() if self.reach is not None else {}
        for key in ("factor", "epsilon", "model"):
            out[f"reach_{key}"] = reach.get(key)
        out["fpr"] = self.fpr
        out["fnr"] = self.fnr
        out["slack"] = self.slack if math.isfinite(self.slack) else None
        for key in ("ceiling", "reference_epsilon", "epsilon_lower"):
            if out[key] is not None and not math.isfinite(out[key]):
                out[key] = None
        return out
