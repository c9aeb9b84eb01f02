"""The result of an audit: the verdict, the bound and the counts on top, how the audit ran in a
nested :class:`Provenance`, and its evidence (:meth:`AuditResult.evidence`), which renders it
(:meth:`AuditResult.summary`, :meth:`AuditResult.headline`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ..results.evidence import (
    NOT_REPRODUCIBLE,
    AuditCounts,
    AuditEvidence,
    AuditTestRecord,
    ReachRecord,
    ReferenceRecord,
    format_epsilon,
)
from ..vocabulary import Verdict
from .methods import method_named
from .reach import Reach

__all__ = ["AuditResult", "Provenance", "format_epsilon", "NOT_REPRODUCIBLE"]


def _finite(value: float | None) -> float | None:
    """``value``, or None when it is infinite (as JSON records it)."""
    return value if value is None or math.isfinite(value) else None


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
        return self.evidence().epsilon_estimate

    @property
    def infinite_message(self) -> str:
        """``ε = ∞ on this pair ...`` with the evidence, or "" when :attr:`infinite` is False."""
        return self.evidence().infinite_message

    @property
    def estimate_above_claim(self) -> bool:
        """Whether the certified test's point estimate is above the claim while its bound is
        not (the verdict line then says so)."""
        return self.evidence().estimate_above_claim

    @property
    def verdict_line(self) -> str:
        """The verdict with its reason, and, when the test's estimate is above the claim, that
        warning too: a ``consistent`` never reads as a clean pass while the estimate says
        otherwise."""
        return self.evidence().verdict_line

    def headline(self, *, bound: str = "") -> str:
        """One line for a report (:meth:`AuditEvidence.headline`): the bound against the claim,
        the ceiling, the exact ε when known, the reach, and what else the reader must know.
        ``bound`` names the audited ε when it is not the claim's own (e.g. ``"derived bound,
        not the paper's"``); it is printed in place of "claimed"."""
        return self.evidence(bound=bound).headline()

    def summary(self) -> str:
        """The verdict and every row of the evidence (:meth:`AuditEvidence.summary`: the rows
        a report and the command line show)."""
        return self.evidence().summary()

    def evidence(self, note: str = "", *, bound: str = "") -> AuditEvidence:
        """This audit as the evidence of an experiment (the ``evidence`` of its result in
        results.json), with the experiment's ``note`` and the ``bound`` the audited (ε, δ) is
        when not the claim's own (see :meth:`headline`).  Infinite values are None (as JSON
        records them), but for the exact ε, where None means unknown."""
        test = self.provenance
        reach = self.reach
        return AuditEvidence(
            verdict=self.verdict,
            reason=self.reason,
            epsilon_lower=_finite(self.epsilon_lower),
            epsilon=self.epsilon,
            delta=self.delta,
            unit=self.unit,
            relation=self.relation,
            confidence=self.confidence,
            method=self.method,
            mu=self.mu,
            ceiling=_finite(self.ceiling),
            infinite=self.infinite,
            identical_outputs=self.identical_outputs,
            trials_needed=self.trials_needed,
            reference=ReferenceRecord(self.reference_epsilon, self.reference_note),
            counts=AuditCounts(**{f.name: getattr(self, f.name) for f in fields(AuditCounts)}),
            warnings=tuple(self.warnings),
            reproducible=self.reproducible,
            certified=self.certified,
            test=AuditTestRecord(
                **{
                    **{f.name: getattr(test, f.name) for f in fields(test)},
                    "threshold": _finite(test.threshold),
                    "tradeoff": tuple(tuple(point) for point in test.tradeoff),
                }
            ),
            reach=None
            if reach is None
            else ReachRecord(
                _finite(reach.factor),
                _finite(reach.epsilon) if math.isfinite(reach.factor) else None,
                reach.model,
                reach.power,
            ),
            bound=bound or None,
            note=note,
        )

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

        return plot_tradeoff(self.evidence(), ax=ax)

    def to_dict(self) -> dict:
        """JSON-serialisable record, flat: :meth:`evidence`'s JSON without the note."""
        out = self.evidence().to_json()
        del out["note"]
        return out
