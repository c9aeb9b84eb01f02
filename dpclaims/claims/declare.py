"""Experiments as declarations: one table per paper, read by one registration function.

A paper's table (``dpclaims/claims/tables/<paper>.py``) lists one :class:`Declared` per
checkable claim: the claim id, what builds the experiment, and its parameters, any of which
may differ by budget (a :class:`~dpclaims.claims.experiments.BySize`, also inside a ``fixed``
mapping).  :func:`register` registers the whole table; the measuring code (the swept functions,
audit targets, value computations) stays in ``dpclaims/claims/checks/<paper>.py``.

The table is read without importing it to list claims (:func:`dpclaims.claims.status`):
declarations are written as ``declare.sweep("claim.id", …)`` calls whose ``skip`` is a literal
mapping (or names a module-level string).

Example
-------
>>> from dpclaims.claims import declare                                   # doctest: +SKIP
>>> TABLE = (
...     declare.sweep("lla24.alg1.complexity", alg1_count, "n", [1e5, 1e6, 1e7, 1e8],
...                   replicates=2, note="dry run of Algorithm 1's schedule"),
...     declare.audit("lla24.alg1.privacy", build=alg1_audit,
...                   trials=BySize(quick=20_000, standard=200_000, full=1_000_000)),
... )
>>> declare.register(TABLE)                                               # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .experiments import BySize, Experiment, register_experiment
from .model import Claim
from .standard import AuditExperiment, RateExperiment, ValueExperiment

__all__ = ["Declared", "at_budget", "audit", "built", "register", "sweep", "value"]


def at_budget(value: Any, budget: str) -> Any:
    """``value`` at ``budget``: a :class:`BySize` picks its entry, a mapping is resolved entry
    by entry (so ``fixed={"pairs": BySize(...)}`` works), anything else is returned as is."""
    if isinstance(value, BySize):
        return value[budget]
    if isinstance(value, Mapping):
        return {key: at_budget(item, budget) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Declared:
    """One claim's experiment, declared: ``make(claim, **params at budget)``.

    Attributes
    ----------
    claim_id : str
    make : callable
        ``make(claim, **params) -> Experiment``.
    params : mapping
        Keyword arguments of ``make``; a :class:`BySize` value (at any depth of a mapping)
        is taken at the budget asked for.
    skip : mapping
        ``{budget: reason}`` for the budgets too small for the experiment.
    """

    claim_id: str
    make: Callable[..., Experiment]
    params: Mapping[str, Any] = field(default_factory=dict)
    skip: Mapping[str, str] = field(default_factory=dict)

    def __call__(self, claim: Claim, budget: str) -> Experiment:
        """The experiment for ``claim`` at ``budget`` (the factory :func:`register` records)."""
        return self.make(claim, **at_budget(self.params, budget))


def _rate(claim: Claim, *, measure: Callable, param: str, grid: Any, **options: Any):
    return RateExperiment.for_claim(claim, measure, param, grid, **options)


def _audit(claim: Claim, **fields: Any) -> AuditExperiment:
    return AuditExperiment(**fields)


def _value(claim: Claim, **fields: Any) -> ValueExperiment:
    return ValueExperiment(**fields)


def sweep(
    claim_id: str,
    measure: Callable,
    param: str,
    grid: Any,
    *,
    skip: Mapping[str, str] | None = None,
    **options: Any,
) -> Declared:
    """A rate claim's sweep: ``RateExperiment.for_claim(claim, measure, param, grid, **options)``
    (:meth:`~dpclaims.claims.standard.RateExperiment.for_claim`: ``variable``, ``at``,
    ``replicates``, ``fixed``, ``note``, ``baseline``, ``trivial``, ``method``)."""
    params = {"measure": measure, "param": param, "grid": grid, **options}
    return Declared(claim_id, _rate, params, dict(skip or {}))


def audit(claim_id: str, *, skip: Mapping[str, str] | None = None, **fields: Any) -> Declared:
    """A privacy audit: :class:`~dpclaims.claims.standard.AuditExperiment` of ``fields``
    (``build``, ``trials``, ``method``, ``reference_epsilon``, ``note``, …)."""
    return Declared(claim_id, _audit, fields, dict(skip or {}))


def value(claim_id: str, *, skip: Mapping[str, str] | None = None, **fields: Any) -> Declared:
    """A value check: :class:`~dpclaims.claims.standard.ValueExperiment` of ``fields``
    (``compute``, ``expected``, ``le``, ``ge``, ``rtol``, ``atol``, ``note``, …)."""
    return Declared(claim_id, _value, fields, dict(skip or {}))


def built(
    claim_id: str,
    make: Callable[..., Experiment],
    *,
    skip: Mapping[str, str] | None = None,
    **params: Any,
) -> Declared:
    """An experiment built by measuring code: ``make(claim, **params)`` (e.g. a combined
    experiment whose parts are computed from the algorithm)."""
    return Declared(claim_id, make, params, dict(skip or {}))


def register(table: Iterable[Declared]) -> None:
    """Register every declaration of a paper's table (:func:`register_experiment`).

    Raises
    ------
    InputError
        A claim is declared twice in the table (or as in :func:`register_experiment`).
    """
    table = tuple(table)
    ids = [declared.claim_id for declared in table]
    repeated = sorted({claim_id for claim_id in ids if ids.count(claim_id) > 1})
    if repeated:
        raise InputError(f"the table declares {repeated} more than once; declare each claim once")
    for declared in table:
        register_experiment(declared.claim_id, skip=declared.skip)(declared)
