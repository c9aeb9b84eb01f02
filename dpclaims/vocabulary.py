"""The package's vocabulary: every closed set of words, each defined here once.

Each word set is a ``StrEnum`` (a :class:`~dpclaims.verdicts.Word`): a member equals its
string (``Unit.USER == "user"``), formats as it (``f"{Unit.USER}"`` is ``user``), reprs as it
(``'user'``) and serialises as it in JSON, so TOML files, ``results.json``, messages and code
comparing strings read the same. The tuples beside the enums
(:data:`UNITS`, :data:`BUDGETS`, ...) list the values a parameter accepts, for
:func:`dpclaims.errors.check_choice` and its messages; they are built from the enums, never
spelt out again.

* :class:`Unit` — what one person contributes: a ``user`` (several items) or an ``item``;
* :class:`Relation` — the neighbouring relation of two datasets (``replace``, ``add-remove``),
  and for raw arrays also ``query`` and ``unchecked``;
* :class:`Bound` — the direction of a claimed rate: O(·), Ω(·) or Θ(·); :class:`Limit` — the
  limit a variable goes to;
* :class:`ClaimKind` — what a claim is about; :class:`CaveatKind` — what a claim's caveat
  records (an ambiguity or erratum of the paper, a reconstruction by its specification);
* :class:`Budget` — how large a claim's experiment is (``quick`` < ``standard`` < ``full``);
* :class:`Fit` — how a rate sweep fits its power law (an audit's methods are objects with
  their behaviour, named in :data:`dpclaims.audit.methods.METHODS`);
* :class:`ThreatModel`, :class:`Canary`, :class:`Plan` — a DP-SGD audit's adversary, its
  canary, and the test it plans from the claim (:mod:`dpclaims.targets.dpsgd`);
* :class:`~dpclaims.verdicts.Verdict` — a claim's verdict (defined in
  :mod:`dpclaims.verdicts` with its severity order, re-exported here).

This module imports nothing from dpclaims but :mod:`dpclaims.verdicts` (which imports
nothing), so every layer can import it.
"""

from __future__ import annotations

from .verdicts import FINDINGS, Verdict, Word

__all__ = [
    "Unit",
    "UNITS",
    "Relation",
    "RELATIONS",
    "ARRAY_RELATIONS",
    "Bound",
    "BOUNDS",
    "Limit",
    "LIMITS",
    "ClaimKind",
    "KINDS",
    "CaveatKind",
    "CAVEAT_KINDS",
    "Budget",
    "BUDGETS",
    "Fit",
    "FITS",
    "ThreatModel",
    "THREAT_MODELS",
    "Canary",
    "CANARIES",
    "Plan",
    "PLANS",
    "Verdict",
    "FINDINGS",
    "Word",
]


class Unit(Word):
    """The privacy unit: one ``user`` (all their items) or one ``item``."""

    USER = "user"
    ITEM = "item"


UNITS: tuple[Unit, ...] = tuple(Unit)


class Relation(Word):
    """Neighbouring relation: replace one unit, or add / remove one.

    Two plain arrays may also be the answers of a query whose sensitivity is stated
    (``query``) or not be checked at all (``unchecked``, an explicit opt-out): those two
    apply to raw arrays only (:data:`ARRAY_RELATIONS`).
    """

    REPLACE = "replace"
    ADD_REMOVE = "add-remove"
    QUERY = "query"
    UNCHECKED = "unchecked"


RELATIONS: tuple[Relation, ...] = (Relation.REPLACE, Relation.ADD_REMOVE)
"""The relations between two datasets."""

ARRAY_RELATIONS: tuple[Relation, ...] = tuple(Relation)
"""How two plain-array datasets are checked: rows (axis 0) are records, one replaced
(``"replace"``) or one added/removed (``"add-remove"``); or the arrays are answers of a
query whose sensitivity is stated (``"query"``); or not at all (``"unchecked"``)."""


class Bound(Word):
    """What a claim's rate states: an O(·) upper bound, an Ω(·) lower bound, or a Θ(·) order."""

    UPPER = "upper"
    LOWER = "lower"
    ORDER = "order"

    @property
    def symbol(self) -> str:
        """The Landau symbol the claim is written with: ``O``, ``Ω`` or ``Θ``."""
        return {"upper": "O", "lower": "Ω", "order": "Θ"}[self.value]


BOUNDS: tuple[Bound, ...] = tuple(Bound)


class Limit(Word):
    """The limit a claim's rate is about, per variable: growing (the default) or going to 0."""

    LARGE = "large"
    SMALL = "small"


LIMITS: tuple[Limit, ...] = tuple(Limit)


class ClaimKind(Word):
    """A DP guarantee, an excess-risk (or distance) bound, a non-convex utility
    (gradient-norm) bound, a cost count (gradients, rounds, time), or a lower bound."""

    PRIVACY = "privacy"
    EXCESS_RISK = "excess_risk"
    UTILITY = "utility"
    COMPLEXITY = "complexity"
    LOWER_BOUND = "lower_bound"


KINDS: tuple[ClaimKind, ...] = tuple(ClaimKind)


class CaveatKind(Word):
    """What a claim's caveat records: an ambiguity of the paper (two readings of its text), an
    erratum of the paper (a typo, garbling or gap), or a reconstruction by the paper's
    specification (a value or step the paper leaves blank, filled in by the spec's authors)."""

    AMBIGUITY = "ambiguity"
    ERRATUM = "erratum"
    RECONSTRUCTION = "reconstruction"

    @property
    def label(self) -> str:
        """The caveat's kind in a report's words."""
        return {
            "ambiguity": "ambiguity of the paper",
            "erratum": "erratum of the paper",
            "reconstruction": "reconstruction by the specification",
        }[self.value]


CAVEAT_KINDS: tuple[CaveatKind, ...] = tuple(CaveatKind)


class Budget(Word):
    """The size of a claim's experiment, smallest first (a skipped size runs at a larger one)."""

    QUICK = "quick"
    STANDARD = "standard"
    FULL = "full"


BUDGETS: tuple[Budget, ...] = tuple(Budget)


class Fit(Word):
    """How a rate sweep fits its power law (:func:`dpclaims.rates.fit_power_law`): least
    squares on every replicate's log error, or median of means."""

    LOGS = "logs"
    MOM = "mom"


FITS: tuple[Fit, ...] = tuple(Fit)


class ThreatModel(Word):
    """What the adversary sees of an iterative mechanism: the last model only (``final``), or
    every noisy update, as the accountant assumes (``all-iterates``)."""

    FINAL = "final"
    ALL_ITERATES = "all-iterates"


THREAT_MODELS: tuple[ThreatModel, ...] = tuple(ThreatModel)


class Canary(Word):
    """A DP-SGD audit's canary: a fixed gradient (the worst case of clipping), a crafted input
    example, or that example with a crafted start θ_0 that keeps its gradient clipped at C all
    along (:func:`dpclaims.targets.dpsgd.crafted_start`)."""

    GRADIENT = "gradient"
    INPUT = "input"
    INPUT_INIT = "input-init"


CANARIES: tuple[Canary, ...] = tuple(Canary)


class Plan(Word):
    """The tests :func:`dpclaims.targets.dpsgd.planned_threshold` plans from the claim: the most
    powerful under the claim, against a violation, both (a union), or the choice among them
    (``auto``)."""

    AUTO = "auto"
    CLAIM = "claim"
    BOTH = "both"
    VIOLATION = "violation"


PLANS: tuple[Plan, ...] = tuple(Plan)
