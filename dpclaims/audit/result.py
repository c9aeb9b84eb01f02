"""The result of an audit: a frozen dataclass that records every statistical choice."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

__all__ = ["AuditResult"]


@dataclass(frozen=True)
class AuditResult:
    """What an audit certified (or estimated), and how.

    ``epsilon_lower`` is a lower bound on ε holding with probability ``confidence``
    when ``certified`` is True (``kind == "certified"``); for ``method="gdp"`` it is a
    parametric *estimate* (``certified`` False, ``kind == "estimate"``).
    ``verdict`` is ``"violation"`` iff ``epsilon_lower > epsilon``.
    Counts refer to the certification split and the chosen direction: the
    negative dataset's trials inside the event are false positives, the positive
    dataset's trials outside it false negatives.
    """

    epsilon_lower: float
    verdict: str
    epsilon: float
    delta: float
    confidence: float
    method: str
    certified: bool
    kind: str
    statistic: str
    threshold: float
    direction: str
    false_positives: int
    false_negatives: int
    n_negative: int
    n_positive: int
    calibration_trials: int
    certification_trials: int
    fpr_upper: float
    fnr_upper: float
    ci: str
    ci_alpha: float
    threshold_strategy: str
    grid_size: int
    calibration_fraction: float
    seed: int
    trials: int
    unit: str
    relation: str
    output_dim: int
    discrete: bool
    mu: float | None
    candidates: dict = field(default_factory=dict)
    tradeoff: tuple = ()
    wall_time: float = 0.0
    warnings: tuple = ()

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

    def to_dict(self) -> dict:
        """JSON-serialisable record (plain floats, ints, strings, lists; ``slack`` is None when infinite)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["tradeoff"] = [list(point) for point in self.tradeoff]
        out["candidates"] = dict(self.candidates)
        out["warnings"] = list(self.warnings)
        out["fpr"] = self.fpr
        out["fnr"] = self.fnr
        out["slack"] = self.slack if math.isfinite(self.slack) else None
        for key in ("epsilon_lower", "threshold"):
            if not math.isfinite(out[key]):
                out[key] = None
        return out
