"""Audit methods: what the test certifies and how its score is learned.  A method is one class
carrying its behaviour; adding one is one subclass with a new ``name``.

:class:`Threshold` (certified, any outputs), :class:`Histogram` (certified, discrete outputs:
the event is a set of outcomes ranked by estimated likelihood ratio) and :class:`Gdp` (a
Gaussian-DP *estimate*, not certified; needs δ > 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import InputError, check_choice
from ..gdp import gdp_epsilon
from ..privacy import PrivacyClaim
from .scores import candidate_scores

__all__ = ["AuditMethod", "Threshold", "Histogram", "Gdp", "METHODS", "method_named"]

_REGISTRY: dict[str, type[AuditMethod]] = {}


@dataclass(frozen=True)
class AuditMethod:
    """How an audit turns outputs into a bound.  Subclasses set ``name``."""

    name: ClassVar[str] = ""
    objective: ClassVar[str] = "epsilon"
    """What ranks the tests: ``"epsilon"`` at the claim's δ, or ``"mu"`` (Gaussian DP)."""
    certified: ClassVar[bool] = True
    """Whether the bound is a certified lower bound (else an estimate; its reach is computed
    under the estimate's own model, :func:`~dpclaims.audit.reach.reach` with ``objective``)."""
    histogram: ClassVar[bool] = False
    """Whether the score is the histogram likelihood ratio (discrete outputs, no ties rule)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            _REGISTRY[cls.name] = cls

    def check(self, claim: PrivacyClaim, statistic: Callable | None) -> None:
        """An :class:`InputError` when this method cannot audit ``claim`` with ``statistic``."""

    def check_outputs(self, discrete: bool) -> None:
        """An :class:`InputError` when this method cannot certify such outputs."""

    def candidates(self, width: int, discrete: bool, *, nonlinear: bool = True) -> tuple[str, ...]:
        """Names of the scores to learn on outputs ``(n, width)`` (``nonlinear``: see
        :func:`~dpclaims.audit.scores.candidate_scores`)."""
        return candidate_scores(width, discrete, nonlinear=nonlinear)

    def fixed_score(self, width: int) -> bool:
        """Whether outputs ``(n, width)`` are scored as they are (the identity), unlearned."""
        return width == 1

    def bound(self, test: Any, delta: float) -> tuple[float, float | None]:
        """``(ε lower bound, μ or None)`` of the certified ``test`` at ``delta``."""
        return test.epsilon_lower, None


@dataclass(frozen=True)
class Threshold(AuditMethod):
    """A threshold test on a learned (or given) scalar score, certified."""

    name: ClassVar[str] = "threshold"


@dataclass(frozen=True)
class Histogram(AuditMethod):
    """A set of outcomes ranked by the estimated likelihood ratio, certified; discrete outputs."""

    name: ClassVar[str] = "histogram"
    histogram: ClassVar[bool] = True

    def check(self, claim: PrivacyClaim, statistic: Callable | None) -> None:
        if statistic is not None:
            raise InputError(
                "method='histogram' learns its own statistic; pass statistic=None or use "
                "method='threshold'"
            )

    def check_outputs(self, discrete: bool) -> None:
        if not discrete:
            raise InputError(
                "method='histogram' needs discrete outputs (at most 64 distinct output rows in "
                "the calibration split); use method='threshold' for continuous outputs"
            )

    def candidates(self, width: int, discrete: bool, *, nonlinear: bool = True) -> tuple[str, ...]:
        return ("histogram_lr",)

    def fixed_score(self, width: int) -> bool:
        return False


@dataclass(frozen=True)
class Gdp(AuditMethod):
    """A Gaussian-DP μ estimate converted to ε at the claim's δ: not certified."""

    name: ClassVar[str] = "gdp"
    objective: ClassVar[str] = "mu"
    certified: ClassVar[bool] = False

    def check(self, claim: PrivacyClaim, statistic: Callable | None) -> None:
        if claim.delta == 0.0:
            raise InputError(
                "method='gdp' needs delta > 0 (a Gaussian-DP curve implies no finite pure ε); "
                "use method='threshold'"
            )

    def bound(self, test: Any, delta: float) -> tuple[float, float | None]:
        return float(gdp_epsilon(test.mu, delta)), test.mu


METHODS = tuple(_REGISTRY)
"""The methods' names."""


def method_named(name: str) -> AuditMethod:
    """The method called ``name`` (one of :data:`METHODS`)."""
    check_choice(name, tuple(_REGISTRY), "method")
    return _REGISTRY[name]()
