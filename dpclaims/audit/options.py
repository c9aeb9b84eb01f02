"""The values an audit takes besides the mechanism, the pair and the claim: how it tests
(:class:`AuditTest`), how the pair is checked to be neighbours (:class:`Neighbours`) and the
pair's exact ε when known (:class:`Reference`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, check_choice
from ..vocabulary import Relation
from .bounds import CI_METHODS
from .methods import AuditMethod, method_named
from .reach import REACH_LIMIT
from .threshold import ThresholdStrategy, strategy_named

__all__ = ["AuditTest", "DEFAULT_TEST", "Neighbours", "Reference"]

_NUMBER = (int, float, np.integer, np.floating)


@dataclass(frozen=True, kw_only=True)
class AuditTest:
    """How an audit tests, validated.

    Parameters
    ----------
    method : "threshold" (certified, any outputs), "histogram" (certified, discrete
        outputs: the event is a set of outcomes ranked by estimated likelihood ratio),
        "gdp" (a Gaussian-DP *estimate*, not certified; needs δ > 0)
    threshold : a strategy of :mod:`dpclaims.audit.threshold` with its options
        (``Auto(fraction)``, ``Split(fraction)``, ``Bonferroni(grid, fraction)``,
        ``Quantiles(grid, fraction)``) or the name of one with its defaults: "auto"
        (order statistics of all trials when they fit in memory, else a calibration
        split), "quantiles", "calibration" or "bonferroni"; kept as the strategy
    statistic : optional ``statistic(outputs (n, k)) -> (n,)``; skips score learning
    ci : "clopper-pearson" or "jeffreys"
    reach_limit : a ``consistent`` verdict needs the audit to catch a mechanism leaking at
        most this multiple of the claimed ε on the pair (≥ 1; ``math.inf``: any audit with
        power; :mod:`dpclaims.audit.reach`)
    """

    method: str = "threshold"
    threshold: str | ThresholdStrategy = "auto"
    statistic: Callable | None = None
    ci: str = "clopper-pearson"
    reach_limit: float = REACH_LIMIT

    def __post_init__(self) -> None:
        method_named(self.method)
        object.__setattr__(self, "threshold", strategy_named(self.threshold))
        check_choice(self.ci, CI_METHODS, "ci")
        if self.statistic is not None and not callable(self.statistic):
            raise InputError(
                "statistic must be callable as statistic(outputs) -> scores, got "
                f"{type(self.statistic).__name__}"
            )
        limit = self.reach_limit
        if not isinstance(limit, _NUMBER) or isinstance(limit, bool) or not limit >= 1:
            raise InputError(
                f"reach_limit must be a number >= 1 (a multiple of the claimed epsilon), got "
                f"{limit!r}; pass e.g. reach_limit=2.0"
            )
        object.__setattr__(self, "reach_limit", float(limit))

    @property
    def behaviour(self) -> AuditMethod:
        """The :class:`~dpclaims.audit.methods.AuditMethod` named by ``method``."""
        return method_named(self.method)


DEFAULT_TEST = AuditTest()
"""A threshold test, the ``"auto"`` strategy, a learned score, Clopper–Pearson, reach limit 2."""


@dataclass(frozen=True, kw_only=True)
class Neighbours:
    """How two plain-array datasets are checked to be neighbours when not as the claim's
    records: ``relation="query"`` (answers of a query with ℓ1 ``sensitivity``, a number or one
    per coordinate) or ``"unchecked"`` (an explicit opt-out, noted in the result)."""

    relation: str
    sensitivity: Any = None

    def __post_init__(self) -> None:
        check_choice(self.relation, ("query", "unchecked"), "relation")
        if self.relation == Relation.UNCHECKED and self.sensitivity is not None:
            raise InputError("sensitivity= goes with relation='query', not 'unchecked'")


@dataclass(frozen=True, kw_only=True)
class Reference:
    """The exact ε of the mechanism on the audited pair, when known (``math.inf`` allowed),
    reported beside the bound; ``note``: its source, or why there is none."""

    epsilon: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        value = self.epsilon
        if value is not None:
            ok = isinstance(value, _NUMBER) and not isinstance(value, bool)
            if not ok or not value >= 0:
                raise InputError(
                    f"Reference.epsilon must be a number >= 0 (math.inf allowed) or None, "
                    f"got {value!r}; pass e.g. Reference(epsilon=0.93)"
                )
            object.__setattr__(self, "epsilon", float(value))
        object.__setattr__(self, "note", str(self.note))


NO_REFERENCE = Reference()
"""No exact ε known."""
