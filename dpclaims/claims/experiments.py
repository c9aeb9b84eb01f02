"""Experiments: the :class:`Experiment` protocol, the registration hook, and the functions
that answer "how is this claim checked" (:func:`status`, :func:`experiment`).

Each paper's ``[paper] experiments = "module"`` names the module registering its
experiments: one factory ``f(claim, budget) -> Experiment`` per checkable claim, decorated
with :func:`register_experiment`.  The module is imported the first time one of its
experiments is needed (:func:`experiment`), never to list claims: :func:`status` reads the
decorators from the module's source when it is not imported yet.

An :class:`Experiment` is any object with ``run(*, seed=0, execution=Execution())`` returning
an :class:`~dpclaims.results.Outcome` (verdict, summary, typed evidence) or its JSON object
``{"type", "verdict", "summary", "evidence"}`` (:class:`~dpclaims.execution.Execution`:
backend, workers, scheduler, checkpoint).  Until a factory is registered for a claim, asking for its
experiment raises :class:`NotCheckable` with the reason ``"no experiment yet"``: a claim is
never reported as passing without an experiment that can fail.  A factory registered with
``skip={"quick": reason}`` has no experiment at that budget (too small to decide): asking
for it raises :class:`Skipped`, and the claim's verdict there is ``skipped``.

Example
-------
>>> TRIALS = BySize(quick=10**4, standard=10**5, full=10**6)       # doctest: +SKIP
>>> @register_experiment("lla24.alg1.privacy")                     # doctest: +SKIP
... def audit_alg1_privacy(claim, budget):
...     return AuditExperiment(build=alg1_target, trials=TRIALS[budget])
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from ..errors import DPClaimsError, InputError, called_exit, check_choice
from ..timelimit import TimeLimitExceeded
from ..userfiles import imported_from
from ..vocabulary import BUDGETS
from .model import Claim, Paper
from .plugins import module_file
from .registry import paper_of, resolve

if TYPE_CHECKING:
    from ..execution import Execution
    from ..results import Outcome

__all__ = [
    "BUDGETS",
    "BySize",
    "NO_EXPERIMENT_YET",
    "Experiment",
    "NotCheckable",
    "Skipped",
    "register_experiment",
    "skipped_budgets",
    "registered_experiments",
    "import_experiments",
    "status",
    "experiment",
]


NO_EXPERIMENT_YET = "no experiment yet"

T = TypeVar("T")


@dataclass(frozen=True)
class BySize(Generic[T]):
    """One experiment setting at each budget, in one place: ``TRIALS[budget]``.

    ``full`` defaults to the ``standard`` value (the experiment does not grow further).

    Example
    -------
    >>> TRIALS = BySize(quick=10**4, standard=10**5, full=10**6)
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


def __getattr__(name: str) -> Any:
    """``Budget``, the old name of :class:`BySize`, with a ``DeprecationWarning``."""
    if name == "Budget":
        warnings.warn(
            "dpclaims.claims.Budget is renamed BySize (dpclaims.vocabulary.Budget is the word set "
            "quick/standard/full); import BySize",
            DeprecationWarning,
            stacklevel=2,
        )
        return BySize
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class NotCheckable(DPClaimsError):
    """A claim has no experiment: none is registered yet, or the claim is context only.

    Attributes
    ----------
    claim_id : str
    reason : str
        ``"no experiment yet"`` or the registry's reason the claim cannot be checked.
    implemented : bool
        False when the claim is marked ``implemented = false`` (an experiment could decide it,
        but the algorithm or data is not available here).
    """

    def __init__(self, claim_id: str, reason: str, implemented: bool = True) -> None:
        self.claim_id = claim_id
        self.reason = reason
        self.implemented = implemented
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

    def run(self, *, seed: int = 0, execution: Execution = ...) -> Outcome | Mapping[str, Any]:
        """Run on ``seed`` where ``execution`` says (default ``Execution()``); return an
        :class:`~dpclaims.results.Outcome`, or its JSON object ``{"type", "verdict",
        "summary", "evidence"}``."""


ExperimentFactory = Callable[[Claim, str], Experiment]

DECLARING_NAMES = frozenset({"sweep", "audit", "value", "built"})
"""The functions of :mod:`dpclaims.claims.declare` whose calls :func:`status` reads from a
table's source (``declare.<name>("claim.id", …, skip={…})``)."""

_FACTORIES: dict[str, ExperimentFactory] = {}
_SKIPS: dict[str, dict[str, str]] = {}
_IMPORTED: dict[str, str | None] = {}
"""Experiments modules imported (or tried): ``{module: None, or the import error}``."""


def _same_function(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    """True for the same function, also after a module reload re-created it (a declaration:
    the same claim's, :class:`dpclaims.claims.declare.Declared`)."""

    def where(f: Callable[..., Any]) -> tuple[Any, ...]:
        code = getattr(f, "__code__", None)
        return (
            getattr(f, "__module__", None),
            getattr(f, "__qualname__", None),
            getattr(code, "co_firstlineno", None),
            id(f) if code is None and not isinstance(f, type) else None,
        )

    claims = getattr(a, "claim_id", None), getattr(b, "claim_id", None)
    if None not in claims:  # two declarations: a table imported again
        return claims[0] == claims[1]
    return a is b or where(a) == where(b)


def _describe(factory: ExperimentFactory) -> str:
    """``module.function``, or where a declaration's builder comes from."""
    make = getattr(factory, "make", None)
    if make is not None:  # a declaration
        return f"declared in a table, built by {_describe(make)}"
    return f"{factory.__module__}.{getattr(factory, '__qualname__', type(factory).__name__)}"


def register_experiment(
    claim_id: str, *, replace: bool = False, skip: Mapping[str, str] | None = None
) -> Callable[[ExperimentFactory], ExperimentFactory]:
    """Decorator registering ``factory(claim, budget) -> Experiment`` for ``claim_id``.

    Parameters
    ----------
    claim_id : str
        A claim id of a loaded registry (:func:`dpclaims.claims.registry.resolve`; unknown
        ids raise ``UnknownClaimError``).
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
    claim = resolve(claim_id)
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
            f"claim {claim_id!r} is marked not checkable in the registry "
            f"({claim.uncheckable_reason}); "
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
                f"claim {claim_id!r} already has the experiment "
                f"{_describe(previous)}; "
                "register one factory per claim, or pass replace=True"
            )
        _FACTORIES[claim_id] = factory
        _SKIPS[claim_id] = skip
        return factory

    return decorator


def _import(paper: Paper) -> str | None:
    """Import ``paper.experiments`` once (a folder paper's folder and the current folder on
    ``sys.path`` meanwhile); error or None."""
    name = paper.experiments
    if name in _IMPORTED:
        return _IMPORTED[name]
    error = None
    loaded = sys.modules.get(name)
    where = Path(getattr(loaded, "__file__", None) or ".").resolve()
    if loaded is not None and paper.folder is not None and paper.folder not in where.parents:
        error = (
            f"a module {name!r} from {where} is already imported, so the experiments of paper "
            f"{paper.id!r} in {paper.folder} cannot be; give the module a unique name"
        )
    else:
        # a folder's paper: its folder first, then the current folder (as audit and rate find
        # module:function), only while the module is imported
        folders = [str(paper.folder), os.getcwd()] if paper.folder is not None else []
        added = [folder for folder in dict.fromkeys(folders) if folder not in sys.path]
        sys.path[0:0] = added
        try:
            with imported_from(folders):  # a Dask cluster's workers get its code with each task
                importlib.import_module(name)
        except SystemExit as exc:
            error = called_exit(exc, "the experiments module", "fix the module")
        except TimeLimitExceeded as exc:  # recorded, so that no claim imports it again
            error = str(exc)
        except Exception as exc:  # reported per claim and in the results' load_errors
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            error = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        finally:
            for folder in added:
                sys.path.remove(folder)
    _IMPORTED[name] = error
    return error


def import_experiments(papers: Iterable[Paper]) -> dict[str, str]:
    """Import the experiments module of each paper (once); ``{module: error}`` for failures.

    Modules are imported one by one, so one that fails does not hide the others' experiments.
    """
    errors = {}
    for paper in papers:
        error = _import(paper)
        if error is not None:
            errors[paper.experiments] = error
    return errors


def registered_experiments(papers: Iterable[Paper] | None = None) -> frozenset[str]:
    """Ids of the claims that have an experiment factory, after importing the experiments of
    ``papers`` (default: every paper of the default registry)."""
    if papers is None:
        from .registry import Registry

        papers = Registry.discover().papers.values()
    import_experiments(papers)
    return frozenset(_FACTORIES)


def _module_of(claim: Claim) -> Paper:
    paper = paper_of(claim)
    if paper is None:
        raise NotCheckable(claim.id, f"its paper {claim.paper!r} is in no loaded registry")
    return paper


def skipped_budgets(claim_id: str) -> dict[str, str]:
    """``{budget: reason}`` for the budgets at which the claim's experiment is skipped."""
    claim = resolve(claim_id)
    if claim.id not in _FACTORIES:
        _import(_module_of(claim))
    return dict(_SKIPS.get(claim.id, {}))


def _reason(node: ast.expr, names: Mapping[str, str], module: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    return f"see {module}"


def _registers(func: ast.expr) -> bool:
    """True for a call of ``register_experiment`` or of a declaration, ``declare.sweep`` etc."""
    if isinstance(func, ast.Name):
        return func.id == "register_experiment"
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "register_experiment":
        return True
    owner = func.value
    return isinstance(owner, ast.Name) and owner.id == "declare" and func.attr in DECLARING_NAMES


@lru_cache(maxsize=64)
def _declared(path: Path, mtime_ns: int, module: str) -> dict[str, dict[str, str]]:
    """``{claim id: {budget: skip reason}}`` of the ``register_experiment("id", skip=...)`` and
    ``declare.sweep("id", ..., skip=...)`` calls in a module's source, read without importing
    it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    found: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        first = node.args[0]
        if not _registers(node.func) or not isinstance(first, ast.Constant):
            continue
        skips: dict[str, str] = {}
        for keyword in node.keywords:
            if keyword.arg == "skip" and isinstance(keyword.value, ast.Dict):
                for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                    if isinstance(key, ast.Constant):
                        skips[str(key.value)] = _reason(value, names, module)
        found[str(first.value)] = skips
    return found


def _registration(claim: Claim) -> dict[str, str] | str | None:
    """The skips of ``claim``'s experiment, None when it has none, or why that is unknown."""
    if claim.id in _FACTORIES:
        return _SKIPS.get(claim.id, {})
    paper = paper_of(claim)
    if paper is not None and _IMPORTED.get(paper.experiments) is not None:
        return f"experiments module {paper.experiments!r} failed to import"
    if paper is None or paper.experiments in _IMPORTED:
        return None
    path = module_file(paper.experiments, paper.folder)
    if path is None:
        return f"experiments module {paper.experiments!r} not found"
    try:
        declared = _declared(path, path.stat().st_mtime_ns, paper.experiments)
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        return f"experiments module {paper.experiments!r} unreadable ({type(exc).__name__})"
    return declared.get(claim.id) if declared else _registers_nothing(paper.experiments)


def _registers_nothing(module: str) -> str:
    return (
        f"experiments module {module!r} registered no experiment for this claim (nor for any "
        "other claim of its paper); decorate a factory with @register_experiment(claim id)"
    )


def status(claim: Claim, budget: str | None = None) -> str:
    """How ``claim`` is checked, without importing any experiment.

    ``"checkable"``, ``"checkable at standard, full; skipped at quick: <reason>"``,
    ``"no experiment yet"``, ``"not checkable: <reason>"``, or ``"error: <why>"`` when the
    paper's experiments module cannot be found.  With ``budget``: ``"checkable"`` or
    ``"skipped at <budget>: <reason>"`` at that budget.
    """
    if budget is not None:
        budget = check_choice(budget, BUDGETS, "budget")
    if claim.uncheckable_reason is not None:
        label = "not checkable" if claim.implemented else "not implemented"
        return f"{label}: {claim.uncheckable_reason}"
    skips = _registration(claim)
    if isinstance(skips, str):
        return f"error: {skips}"
    if skips is None:
        return NO_EXPERIMENT_YET
    if budget is not None:
        return f"skipped at {budget}: {skips[budget]}" if budget in skips else "checkable"
    if not skips:
        return "checkable"
    runs = [b for b in BUDGETS if b not in skips]
    skipped = "; ".join(f"skipped at {b}: {reason}" for b, reason in skips.items())
    return f"checkable at {', '.join(runs)}; {skipped}"


def experiment(claim: Claim, budget: str = "standard") -> Experiment:
    """The registered experiment checking ``claim`` at ``budget`` (imports its paper's module).

    Raises
    ------
    InputError
        ``budget`` is not one of the three budgets.
    NotCheckable
        No experiment is registered yet, or the claim is context only.
    Skipped
        The experiment does not run at ``budget`` (too small); a larger budget runs it.
    DPClaimsError
        The paper's experiments module failed to import, or the factory returned no experiment.
    """
    budget = check_choice(budget, BUDGETS, "budget")
    if claim.uncheckable_reason is not None:
        raise NotCheckable(claim.id, claim.uncheckable_reason, claim.implemented)
    if claim.id not in _FACTORIES:
        paper = _module_of(claim)
        error = _import(paper)
        if error is not None:
            raise DPClaimsError(
                f"the experiments module {paper.experiments!r} of paper {paper.id!r} failed to "
                f"import: {error}"
            )
    factory = _FACTORIES.get(claim.id)
    if factory is None:
        paper = _module_of(claim)
        if not any(resolve(claim_id).paper == paper.id for claim_id in _FACTORIES):
            raise DPClaimsError(_registers_nothing(paper.experiments))
        raise NotCheckable(claim.id, NO_EXPERIMENT_YET)
    skips = _SKIPS.get(claim.id, {})
    if budget in skips:
        raise Skipped(claim.id, budget, skips[budget], tuple(b for b in BUDGETS if b not in skips))
    built = factory(claim, budget)
    if not isinstance(built, Experiment):
        raise DPClaimsError(
            f"the experiment factory {_describe(factory)} for claim "
            f"{claim.id!r} returned {type(built).__name__}, which has no "
            "run(*, seed, execution) method"
        )
    return built
