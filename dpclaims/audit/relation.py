"""Which neighbour relation a mechanism is calibrated for (:func:`with_relation_hint`).

A mechanism calibrated for ε under add/remove (one record added or removed) is at most 2ε-DP
under replace-one, and is exactly that when the replaced record moves two outputs (a histogram:
one count down, another up).  So an audit under replace-one that certifies a bound between
:data:`HINT_LOW` and :data:`HINT_HIGH` times the claim says the mechanism may be correct for the
other relation; beyond :data:`HINT_HIGH` (2×, with room for δ) it is not, and below
:data:`HINT_LOW` the bound says too little to suggest it.  The test's point estimate must fit
too (finite and at most :data:`HINT_ESTIMATE` times the claim): a leak that puts outputs where
the other dataset puts none (estimate ∞) is no calibration slip, whatever its early bound.
"""

from __future__ import annotations

import dataclasses

from ..vocabulary import Relation
from .result import AuditResult

__all__ = ["HINT_LOW", "HINT_HIGH", "HINT_ESTIMATE", "relation_hint", "with_relation_hint"]

HINT_LOW = 1.5
"""Smallest certified bound, as a multiple of the claimed ε, that suggests add/remove."""

HINT_HIGH = 2.2
"""Largest certified bound, as a multiple of the claimed ε, that suggests add/remove: an
add/remove ε mechanism is 2ε-DP under replace-one (the margin is for δ > 0)."""

HINT_ESTIMATE = 2.5
"""Largest point estimate of the certified test, as a multiple of the claimed ε, that suggests
add/remove (room for the estimate's noise above 2×; a Gaussian leaking 4.4× the claim shows an
estimate of 2.97× at 2,000 trials, and gets no hint)."""


def relation_hint(result: AuditResult) -> str | None:
    """The warning line for a replace-one violation near twice the claim (see the module
    docstring); None otherwise."""
    claimed, bound = result.epsilon, result.epsilon_lower
    fits = (
        result.relation == Relation.REPLACE
        and result.certified
        and claimed > 0
        and HINT_LOW * claimed < bound <= HINT_HIGH * claimed
        and not result.infinite
        and result.epsilon_estimate <= HINT_ESTIMATE * claimed
    )
    if not fits:
        return None
    return (
        f"certified ε ≥ {bound:.3g} is {bound / claimed:.2g}× the claim, as a mechanism "
        "calibrated for add/remove neighbours shows under replace-one: it may be calibrated "
        "for add/remove; audit it under that relation (--relation add-remove, "
        "PrivacyClaim(..., relation='add-remove')) with a pair that adds or removes one record"
    )


def with_relation_hint(result: AuditResult) -> AuditResult:
    """``result`` with :func:`relation_hint`'s line added to its warnings, when it has one."""
    hint = relation_hint(result)
    if hint is None:
        return result
    return dataclasses.replace(result, warnings=(*result.warnings, hint))
