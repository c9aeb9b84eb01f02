"""Experiment hook: algorithm modules register one experiment factory per checkable claim.

A factory is ``f(claim, budget) -> Experiment``; an :class:`Experiment` is any object
with ``run(seed=0, backend="auto", workers=None) -> dict`` returning the evidence and
a verdict.  Until a factory is registered for a claim, asking for its experiment
raises :class:`NotCheckable` with the reason ``"no experiment yet"``: a claim is
never reported as passing without an experiment that can fail.  A factory registered
with ``skip={"quick": reason}`` has no experiment at that budget (too small to decide):
asking for it raises :class:`Skipped`, and the claim's verdict there is ``skipped``.

Example
-------
>>> @register_experiment("lla24.alg1.privacy")            # doctest: +SKIP
... def alg1_privacy(claim, budget):
...     return Alg1PrivacyAudit(trials={"quick": 10**4, "standard": 10**5, "full": 10**6}[budget])
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from ..errors import DPClaimsError, InputError, check_choice

if TYPE_CHECKING:
    from .model import Claim

__all__ = [
    "BUDGETS",
    "Budget",
    "NO_EXPERIMENT_YET",
    "Experiment",
    "NotCheckable",
    "Skipped",
    "register_experiment",
    "skipped_budgets",
    "registered_experiments",
    "build_experiment",
    "load_checks",
]

BUDGETS = ("quick", "standard", "full")
"""Experiment sizes, smallest first: ``quick`` for CI smoke runs, ``full`` for the report."""

NO_EXPERIMENT_YET = "no experiment yet"

T = TypeVar("T")


@dataclass(frozen=True)
class Budget(Generic[T]):
    """One experiment setting at each budget, in one place: ``TRIALS[budget]``.

    ``full`` defaults to the ``standard`` value (the experiment does not grow further).

    Example
    -------
    >>> TRIALS = Budget(quick=10**4, standard=10**5, full=10**6)
    >>> TRIALS["standard"]
    100000
    """

    quick: T
    standard: T
    full: T | None = None

    def __getitem__(self, budget: str) -> T:
        budget = check_choice(budget, BUDGETS, "budget")
        value = getattr(self, budget)
        return self.standard if value is None else value


class NotCheckable(DPClaimsError):
    """A claim has no experiment: none is registered yet, or the claim is context only.

    Attributes
    ----------
    claim_id : str
    reason : str
        ``"no experiment yet"`` or the registry's reason the claim cannot be checked.
    """

    def __init__(self, claim_id: str, reason: str) -> None:
        self.claim_id = claim_id
        self.reason = reason
        super().__init__(f"claim {claim_id!r} cannot be checked by experiment: {reason}")


class Skipped(DPClaimsError):
    """A claim's experiment does not run at this budget (too small to decide); larger ones run it.

    Attributes
    ----------
    claim_id, budget : str
    reason : str
        Why the budget is too small.
    budgets : tuple of str
        The budgets at which the experiment runs.
    """

    def __init__(self, claim_id: str, budget: str, reason: str, budgets: tuple[str, ...]) -> None:
        self.claim_id = claim_id
        self.budget = budget
        self.reason = reason
        self.budgets = budgets
        super().__init__(
            f"claim {claim_id!r} is skipped at the {budget} budget: {reason}; "
            f"run it with --budget {' or '.join(budgets)}"
        )


@runtime_checkable
class Experiment(Protocol):
    """What an experiment factory returns: one runnable, seeded check of one claim."""

    def run(
        self, seed: int = 0, backend: str = "auto", workers: int | None = None
    ) -> dict[str, Any]:
        """Run the experiment; return a JSON-ready dict with the evidence and the verdict."""


ExperimentFactory = Callable[["Claim", str], Experiment]

_FACTORIES: dict[str, ExperimentFactory] = {}
_SKIPS: dict[str, dict[str, str]] = {}


def _same_function(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    """True for the same function, also after a module reload re-created it."""

    def where(f: Callable[..., Any]) -> tuple[Any, ...]:
        code = getattr(f, "__code__", None)
        return (
            getattr(f, "__module__", None),
            getattr(f, "__qualname__", None),
            getattr(code, "co_firstlineno", None),
            id(f) if code is None and not isinstance(f, type) else None,
        )

    return a is b or where(a) == where(b)


def register_experiment(
    claim_id: str, *, replace: bool = False, skip: Mapping[str, str] | None = None
) -> Callable[[ExperimentFactory], ExperimentFactory]:
    """Decorator registering ``factory(claim, budget) -> Experiment`` for ``claim_id``.

    Parameters
    ----------
    claim_id : str
        An id of the packaged registry (unknown ids raise ``UnknownClaimError``).
    replace : bool
        Allow replacing a factory another function registered for the same claim.
    skip : mapping, optional
        ``{budget: reason}`` for the budgets too small for the experiment (the factory is not
        called there; the claim is ``skipped``).  At least one budget must remain.

    Raises
    ------
    InputError
        The claim is marked context only (``checkable = false``), the factory is not
        callable, or another factory is already registered and ``replace`` is False.
    """
    from .registry import get  # the registry imports this module, so import lazily

    claim = get(claim_id)
    skip = dict(skip or {})
    for budget, reason in skip.items():
        check_choice(budget, BUDGETS, "skip budget")
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(
                f"register_experiment({claim_id!r}): skip[{budget!r}] must be the "
                f"reason, got {reason!r}"
            )
    if set(skip) >= set(BUDGETS):
        raise InputError(
            f"register_experiment({claim_id!r}) skips every budget; mark the claim "
            "`checkable = false` in its TOML entry instead"
        )
    if claim.uncheckable_reason is not None:
        raise InputError(
            f"claim {claim_id!r} is marked not checkable in the registry ({claim.uncheckable_reason}); "
            "remove `checkable = false` from its TOML entry before registering an experiment"
        )

    def decorator(factory: ExperimentFactory) -> ExperimentFactory:
        if not callable(factory):
            raise InputError(
                f"register_experiment({claim_id!r}) must decorate a callable f(claim, budget), "
                f"got {type(factory).__name__}"
            )
        previous = _FACTORIES.get(claim_id)
        if previous is not None and not replace and not _same_function(previous, factory):
            raise InputError(
                f"claim {claim_id!r} already has the experiment {previous.__module__}.{previous.__qualname__}; "
                "register one factory per claim, or pass replace=True"
            )
        _FACTORIES[claim_id] = factory
        _SKIPS[claim_id] = skip
        return factory

    return decorator


_CHECKS_LOADED = False
_LOAD_ERRORS: dict[str, str] = {}


def load_checks() -> dict[str, str]:
    """Import every module of :mod:`dpclaims.claims.checks` once, so their factories register.

    Each paper's experiments live in their own module there; dropping a module in that
    package is all it takes to make its claims checkable.  Modules are imported one by
    one, so a module that fails to import does not hide the others' experiments.

    Returns
    -------
    ``{module name: error message}`` for the modules that failed to import (empty when all loaded).
    """
    global _CHECKS_LOADED
    if not _CHECKS_LOADED:
        _CHECKS_LOADED = True
        from . import checks

        for module in pkgutil.iter_modules(checks.__path__):
            name = f"{checks.__name__}.{module.name}"
            try:
                importlib.import_module(name)
            except Exception as exc:  # reported by load_checks() callers, e.g. the verify report
                _LOAD_ERRORS[name] = f"{type(exc).__name__}: {exc}"
    return dict(_LOAD_ERRORS)


def registered_experiments() -> frozenset[str]:
    """Ids of the claims that have an experiment factory."""
    load_checks()
    return frozenset(_FACTORIES)


def skipped_budgets(claim_id: str) -> dict[str, str]:
    """``{budget: reason}`` for the budgets at which ``claim_id``'s experiment is skipped."""
    load_checks()
    return dict(_SKIPS.get(claim_id, {}))


def build_experiment(claim: Claim, budget: str) -> Experiment:
    """Return the experiment for ``claim`` at ``budget`` (see :meth:`Claim.experiment`)."""
    budget = check_choice(budget, BUDGETS, "budget")
    if claim.uncheckable_reason is not None:
        raise NotCheckable(claim.id, claim.uncheckable_reason)
    load_checks()
    factory = _FACTORIES.get(claim.id)
    if factory is None:
        raise NotCheckable(claim.id, NO_EXPERIMENT_YET)
    skips = _SKIPS.get(claim.id, {})
    if budget in skips:
        raise Skipped(claim.id, budget, skips[budget], tuple(b for b in BUDGETS if b not in skips))
    experiment = factory(claim, budget)
    if not isinstance(experiment, Experiment):
        raise DPClaimsError(
            f"the experiment factory {factory.__module__}.{factory.__qualname__} for claim {claim.id!r} returned "
            f"{type(experiment).__name__}, which has no run(seed, backend, workers) method"
        )
    return experiment
