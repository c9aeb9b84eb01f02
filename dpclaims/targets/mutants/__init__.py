"""Known-buggy variants of the reference algorithms, with their true privacy: a benchmark corpus.

Each mutant is the reference algorithm with one documented change (a flag or a small
subclass), never a copy.  Anyone can use the corpus to test an auditor: a sound and
powerful auditor says ``violation`` for every privacy mutant whose ``true_epsilon``
exceeds its claim.  One module per paper in this package registers that paper's
mutants on import; :func:`list_mutants` imports them all.  A paper plugin registers its own
with :func:`register_mutant` when its experiments module is imported, naming the registry
audit meant to catch each (``audit``); :func:`dpclaims.claims.mutation.kill_matrix` imports
the plugins' experiments modules before listing.

>>> from dpclaims.targets.mutants import list_mutants
>>> [m.name for m in list_mutants(paper="generic")][:2]
['gaussian-half-noise', 'gaussian-item-noise']
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpclaims.errors import InputError, check_choice

__all__ = ["Mutant", "register_mutant", "list_mutants", "get_mutant", "CORPORA"]

MUTANT_KINDS = ("privacy", "utility")
"""What a mutant breaks: its privacy claim (the claim is false) or its rate (utility)."""
CORPORA = ("papers", "real")
"""``papers``: the papers' and textbook mutants; ``real``: reproductions of bugs that shipped in
public libraries (:mod:`dpclaims.targets.realbugs`)."""


@dataclass(frozen=True)
class Mutant:
    """One known-buggy variant.

    Attributes
    ----------
    name : unique name, e.g. ``"lla24-m1-threshold-noise-per-step"``
    paper : paper id (DESIGN.md table) or ``"generic"``
    kind : ``"privacy"`` (the claim is false) or ``"utility"`` (the rate is wrong)
    description : the one change, and where the correct algorithm differs
    true_epsilon : its real ε at the claim's δ: a float, ``inf``, or None when unknown
    build : ``build(**options) -> AuditTarget`` for privacy mutants (what to audit, see
        :class:`dpclaims.target.AuditTarget`), or the mutated algorithm object for
        utility mutants
    caught_by : which check catches it (audit, rate test, white-box invariant)
    audit : the registry audit meant to catch it (a claim id, ``catalog:TARGET`` or
        ``realbug:NAME``); the packaged mutants' are in :data:`dpclaims.claims.mutation.AUDIT_OF`,
        a plugin's mutants and the real bugs name theirs here
    corpus : ``papers`` or ``real`` (:data:`CORPORA`)
    audit_options : audit keywords its audit needs (``test=AuditTest(...)``), else None
    """

    name: str
    paper: str
    kind: str
    description: str
    true_epsilon: float | None
    build: Callable[..., Any]
    caught_by: str = "audit"
    audit: str | None = None
    corpus: str = "papers"
    audit_options: dict | None = None

    def __post_init__(self) -> None:
        check_choice(self.kind, MUTANT_KINDS, "kind")
        check_choice(self.corpus, CORPORA, "corpus")
        if self.true_epsilon is not None and not (
            self.true_epsilon > 0 or math.isinf(self.true_epsilon)
        ):
            raise InputError(f"true_epsilon of mutant {self.name!r} must be > 0, inf or None")

    def to_dict(self) -> dict:
        eps = self.true_epsilon
        return {
            "name": self.name,
            "paper": self.paper,
            "kind": self.kind,
            "description": self.description,
            "true_epsilon": None if eps is None else (str(eps) if math.isinf(eps) else eps),
            "caught_by": self.caught_by,
            "corpus": self.corpus,
        }


_MUTANTS: dict[str, Mutant] = {}
_LOADED = False


def register_mutant(mutant: Mutant) -> Mutant:
    """Add ``mutant`` to the corpus (names are unique)."""
    if mutant.name in _MUTANTS and _MUTANTS[mutant.name] != mutant:
        raise InputError(f"a mutant named {mutant.name!r} is already registered")
    _MUTANTS[mutant.name] = mutant
    return mutant


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")


def list_mutants(
    paper: str | None = None, kind: str | None = None, corpus: str | None = None
) -> list[Mutant]:
    """Every registered mutant, optionally of one ``paper``, ``kind`` and/or ``corpus``
    (``papers``, ``real``), in registration order."""
    _load()
    if kind is not None:
        check_choice(kind, MUTANT_KINDS, "kind")
    if corpus is not None:
        check_choice(corpus, CORPORA, "corpus")
    return [
        m
        for m in _MUTANTS.values()
        if (paper is None or m.paper == paper)
        and (kind is None or m.kind == kind)
        and (corpus is None or m.corpus == corpus)
    ]


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``."""
    _load()
    if name not in _MUTANTS:
        raise InputError(f"unknown mutant {name!r}; known: {', '.join(_MUTANTS)}")
    return _MUTANTS[name]
