"""What to audit: one shape for the catalogue, the mutants and the claims' experiments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim

__all__ = ["AuditTarget"]


@dataclass(frozen=True, kw_only=True)
class AuditTarget:
    """A mechanism, the neighbouring datasets it is audited on, and the claim it is held to.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng[, trials]) -> outputs`` (see :func:`dpclaims.audit`).
    d0, d1 : datasets
        Neighbours under ``claim``'s unit and relation.
    claim : PrivacyClaim
        The (ε, δ) guarantee the mechanism is claimed to meet on them.
    name : str
        Short identifier (catalogue or mutant name), optional.
    description : str
        One line on what is audited (shown by ``dpclaims audit``), optional.
    statistic : callable or None
        The test statistic ``statistic(outputs (n, k)) -> (n,)`` fixed by the setup before any
        trial is seen (e.g. a white-box likelihood ratio, :mod:`dpclaims.targets`), passed to
        ``audit(..., test=AuditTest(statistic=...))``; None lets the audit learn one.
    """

    mechanism: Callable
    d0: Any
    d1: Any
    claim: PrivacyClaim
    name: str = ""
    description: str = ""
    statistic: Callable | None = None

    def __post_init__(self) -> None:
        if not callable(self.mechanism):
            raise InputError(
                f"mechanism must be callable, got {type(self.mechanism).__name__}; pass the "
                "function that runs the algorithm on a dataset"
            )
        if not isinstance(self.claim, PrivacyClaim):
            raise InputError(
                f"claim must be a PrivacyClaim, got {type(self.claim).__name__}; pass e.g. "
                "PrivacyClaim(epsilon=1.0, delta=1e-5)"
            )
        if self.statistic is not None and not callable(self.statistic):
            raise InputError(
                f"statistic must be callable or None, got {type(self.statistic).__name__}"
            )
