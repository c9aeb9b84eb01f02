"""Pure data: :class:`Paper` and :class:`Claim`, as a claims TOML states them.

Reading a claim imports nothing: whether an experiment checks it is asked of
:func:`dpclaims.claims.experiments.status`, and its experiment is built by
:func:`dpclaims.claims.experiments.experiment`.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError, check_choice
from ..vocabulary import BOUNDS, CAVEAT_KINDS, KINDS, LIMITS, Bound, CaveatKind, ClaimKind, Limit

__all__ = [
    "KINDS",
    "BOUNDS",
    "LIMITS",
    "CAVEAT_KINDS",
    "Caveat",
    "Paper",
    "Claim",
    "RateClaim",
    "exponent_expression_names",
    "CLAIM_ID_PATTERN",
    "MAX_CLAIM_ID",
    "claim_id_problem",
]

CLAIM_ID_PATTERN = "[A-Za-z0-9_.-]"
"""The characters of a claim id: it names the claim's figure file and appears in reports."""

MAX_CLAIM_ID = 120
"""The longest claim id (a figure's file name must stay well under the 255 bytes of a name)."""


def claim_id_problem(claim_id: str) -> str | None:
    """What makes ``claim_id`` unfit as a claim id (``None`` when it is fit): see
    :data:`CLAIM_ID_PATTERN` and :data:`MAX_CLAIM_ID`."""
    if len(claim_id) > MAX_CLAIM_ID:
        return (
            f"claim id {claim_id[:60] + '...'!r} has {len(claim_id)} characters; use at most "
            f"{MAX_CLAIM_ID} characters of {CLAIM_ID_PATTERN}"
        )
    if not re.fullmatch(f"{CLAIM_ID_PATTERN}+", claim_id):
        return (
            f"claim id {claim_id!r} may hold only letters, digits, '_', '.' and '-' "
            f"({CLAIM_ID_PATTERN}, at most {MAX_CLAIM_ID} characters); rename it"
        )
    return None


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _parse_expression(text: str) -> ast.expr | None:
    """The AST of ``text`` if it is arithmetic (+ - * /, numbers, names), else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            continue
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            continue
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            continue
        if isinstance(node, (ast.Name, ast.Load, ast.operator, ast.unaryop)):
            continue
        return None
    return tree


def exponent_expression_names(text: str) -> frozenset[str] | None:
    """Names an exponent expression such as ``"-(1-1/k)"`` depends on; None for free text."""
    tree = _parse_expression(text)
    if tree is None:
        return None
    return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))


def _evaluate(node: ast.expr, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, values))
    assert isinstance(node, ast.BinOp)  # _parse_expression admits nothing else
    return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))


def _fraction(value: float) -> str:
    """``-0.5`` -> ``"-1/2"``, ``1.125`` -> ``"9/8"``, ``2.0`` -> ``"2"``; others as ``%g``."""
    close = Fraction(value).limit_denominator(12)
    if abs(float(close) - value) > 1e-9:
        return f"{value:g}"
    if close.denominator == 1:
        return str(close.numerator)
    return f"{close.numerator}/{close.denominator}"


@dataclass(frozen=True)
class RateClaim:
    """What a rate experiment tests for one variable of a claim (see :meth:`Claim.rate`).

    Attributes
    ----------
    claim_id, variable : the claim and the variable whose exponent is tested
    exponent : the exponent the experiment tests (the claim's, unless ``tested`` says otherwise)
    bound : :class:`Bound`, the claim's direction
    margin : tolerance of the exponent test
    limit : :class:`Limit` ``"large"`` or ``"small"`` (the claim is about ``variable → 0``)
    stated : the claim as the paper states it, e.g. ``"O(n^-1/2)"``
    tested, why : what the experiment tests instead of ``stated``, and why (empty when it does not)
    at : parameter values a symbolic exponent was evaluated at, e.g. ``{"k": 4.0}``
    """

    claim_id: str
    variable: str
    exponent: float
    bound: Bound
    margin: float
    limit: Limit = Limit.LARGE
    stated: str = ""
    tested: str = ""
    why: str = ""
    at: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", check_choice(self.bound, BOUNDS, "bound"))
        object.__setattr__(self, "limit", check_choice(self.limit, LIMITS, "limit"))
        object.__setattr__(self, "at", MappingProxyType(dict(self.at)))

    def describe(self) -> str:
        """One line: the claim as stated, its direction, and what is tested instead (if any)."""
        kind = {"upper": "upper bound", "lower": "lower bound", "order": "order"}[self.bound]
        text = f"claimed {self.stated} ({kind}, margin {self.margin:g})"
        if self.tested:
            text += f"; tested: {self.tested} (exponent {_fraction(self.exponent)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "claim": self.claim_id,
            "variable": self.variable,
            "exponent": self.exponent,
            "bound": self.bound,
            "margin": self.margin,
            "limit": self.limit,
            "stated": self.stated,
            "tested": self.tested or None,
            "why": self.why or None,
            "at": dict(self.at),
        }


@dataclass(frozen=True)
class Caveat:
    """A claim's caveat: an ambiguity or erratum of the paper, or a reconstruction by its
    specification (``kind``, one of :data:`CAVEAT_KINDS`), and what it is (``text``)."""

    kind: CaveatKind
    text: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready fields."""
        return {"kind": str(self.kind), "text": self.text}


@dataclass(frozen=True, kw_only=True)
class Paper:
    """One paper of the registry: its ``[paper]`` table and where it was found.

    Attributes
    ----------
    id, title : str
        As in the TOML's ``[paper]`` table.
    experiments : str
        Dotted name of the module registering the paper's experiments, e.g.
        ``"dpclaims.claims.tables.murata_suzuki_2023"``; imported only when an experiment is needed.
    file : Path
        The claims TOML.
    source : str
        Where the TOML was found: ``"dpclaims"`` (packaged), ``"entry point NAME (PACKAGE)"``
        or ``"folder DIR"`` (named in error messages).
    folder : Path or None
        Folder put on ``sys.path`` while ``experiments`` is imported (a ``--registry``
        folder); None when the module is importable as installed.
    spec, notes : str or None
        Optional ``[paper]`` fields: the spec transcribed and remarks on the registry.
    """

    id: str
    title: str
    experiments: str
    file: Path
    source: str
    folder: Path | None = None
    spec: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as transcribed from its spec's claims registry.

    Attributes
    ----------
    id : str
        The spec's claim id, e.g. ``"diff2gd.prop41.calibration"``.
    paper : str
        Paper id (see ``dpclaims.claims.papers()``).
    kind : ClaimKind
        One of :data:`KINDS` (a string is coerced to the member).
    algorithm, statement, formula, regime, source : str
        As in the spec; ``source`` names the theorem / lemma.
    exponents : Mapping[str, float]
        Read-only ``{variable: exponent}`` in the regime where the bound dominates.
    symbolic_exponents : Mapping[str, str]
        Exponents the spec writes as something other than a number, verbatim: an
        expression in a parameter (``"-(1-1/k)"``) or an annotated value.
    uncheckable_reason : str or None
        Why the claim is not checked by experiment here, else None.
    implemented : bool
        False when an experiment could decide the claim but the algorithm or data it needs is
        not available here (``not_implemented``); True for a claim no finite experiment can
        decide (``not_checkable``) and for every checked claim.
    bound : Bound or None
        One of :data:`BOUNDS` (required when the claim has exponents): O(·), Ω(·) or Θ(·).
    margin : float or None
        Tolerance of the claim's exponent tests (required for a claim a rate experiment tests).
    limits : Mapping[str, str]
        ``{variable: "small"}`` for the variables whose regime is the variable going to 0.
    tested_exponents : Mapping[str, float]
        Exponents the experiments test in place of the stated ones (a regime, a normalised
        quantity), with ``tested`` (what is tested) and ``why``.
    tested, why : str
        Required with ``tested_exponents``; printed in the report.
    caveats : tuple of Caveat
        The paper's ambiguities and errata, and the specification's reconstructions, that bear
        on the claim (listed in the report's "Ambiguities and reconstructions").
    transcription : bool
        The claim's check compares a computed quantity with the paper's formula (a constant, a
        calibration, a step count): its agreement is ``formula``, not ``consistent``
        (``transcription = true`` in the TOML).
    extra : Mapping[str, Any]
        Other fields the spec gives (e.g. ``confidence``).
    """

    id: str
    paper: str
    kind: ClaimKind
    algorithm: str
    statement: str
    formula: str
    regime: str
    source: str
    exponents: Mapping[str, float] = field(default_factory=dict)
    symbolic_exponents: Mapping[str, str] = field(default_factory=dict)
    uncheckable_reason: str | None = None
    implemented: bool = True
    bound: Bound | None = None
    margin: float | None = None
    limits: Mapping[str, str] = field(default_factory=dict)
    tested_exponents: Mapping[str, float] = field(default_factory=dict)
    tested: str = ""
    why: str = ""
    caveats: tuple[Caveat, ...] = ()
    transcription: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = claim_id_problem(self.id)
        if problem is not None:
            raise InputError(problem)
        object.__setattr__(self, "kind", check_choice(self.kind, KINDS, "kind"))
        if self.bound is not None:
            object.__setattr__(self, "bound", check_choice(self.bound, BOUNDS, "bound"))
        object.__setattr__(self, "caveats", tuple(self.caveats))
        for name in ("exponents", "symbolic_exponents", "limits", "tested_exponents", "extra"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def __hash__(self) -> int:
        return hash(self.id)

    def exponents_at(self, **values: float) -> dict[str, float]:
        """Numeric exponents, with the symbolic ones that are expressions evaluated at ``values``.

        Example: a claim with ``symbolic_exponents = {"n": "-(1-1/k)"}`` gives
        ``exponents_at(k=2) == {"n": -0.5, ...}``.  Annotated values that are not
        expressions (e.g. ``"0 (floor)"``) are left out; read them in
        :attr:`symbolic_exponents`.

        Raises
        ------
        InputError
            A needed parameter is missing, not a finite number, or makes an expression divide
            by zero.
        """
        for name, value in values.items():
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
            ):
                raise InputError(f"{name} must be a finite number, got {value!r}")
        out = dict(self.exponents)
        for variable, text in self.symbolic_exponents.items():
            names = exponent_expression_names(text)
            if names is None:
                continue
            missing = sorted(names - values.keys())
            if missing:
                raise InputError(
                    f"claim {self.id!r}: exponent of {variable} is {text!r}; pass "
                    + ", ".join(f"{n}=..." for n in missing)
                    + " to exponents_at()"
                )
            try:
                out[variable] = _evaluate(
                    _parse_expression(text), {k: float(v) for k, v in values.items()}
                )
            except ZeroDivisionError:
                raise InputError(
                    f"claim {self.id!r}: exponent of {variable} is {text!r}, which divides by zero "
                    f"at {values}"
                ) from None
        return out

    def rate(self, variable: str, **values: float) -> RateClaim:
        """What a rate experiment sweeping ``variable`` tests: exponent, bound, margin, limit.

        The exponent is the claim's (a symbolic one evaluated at ``values``, as in
        :meth:`exponents_at`) unless ``tested_exponents`` gives another, in which case the
        result carries ``tested`` and ``why``.

        Raises
        ------
        InputError
            The claim states no exponent for ``variable``, or has no ``bound`` or ``margin``.
        """
        if self.bound is None or self.margin is None:
            raise InputError(
                f"claim {self.id!r}: a rate experiment needs `bound` and `margin` in its TOML entry"
            )
        if variable in self.exponents:
            stated_exponent, text = self.exponents[variable], _fraction(self.exponents[variable])
        elif (
            variable in self.symbolic_exponents
            and exponent_expression_names(self.symbolic_exponents[variable]) is not None
        ):
            stated_exponent = self.exponents_at(**values)[variable]
            text = self.symbolic_exponents[variable].replace(" ", "")
        elif variable in self.tested_exponents:
            stated_exponent, text = None, self.symbolic_exponents.get(variable, "none stated")
        else:
            known = sorted({**self.exponents, **self.symbolic_exponents})
            raise InputError(
                f"claim {self.id!r} states no exponent for {variable!r} (exponents: "
                f"{known}); add it to the TOML entry, or `tested_exponents` with "
                "`tested` and `why`"
            )
        limit = self.limits.get(variable, "large")
        if stated_exponent is None:  # an annotated value such as "-2 (privacy) / -1 (statistical)"
            stated = f"{self.bound.symbol}(·), exponent of {variable}: {text}"
        else:
            plain = text.lstrip("-").replace("/", "").replace(".", "").isdigit()
            power = text if plain else f"({text})"
            stated = f"{self.bound.symbol}({variable}^{power})"
        stated += f" as {variable} → 0" if limit == Limit.SMALL else ""
        if values and variable in self.symbolic_exponents:
            stated += " at " + ", ".join(f"{k}={v:g}" for k, v in values.items())
        tested, why = "", ""
        exponent = stated_exponent
        if variable in self.tested_exponents:
            exponent, tested, why = self.tested_exponents[variable], self.tested, self.why
        return RateClaim(
            claim_id=self.id,
            variable=variable,
            exponent=float(exponent),
            bound=self.bound,
            margin=self.margin,
            limit=limit,
            stated=stated,
            tested=tested,
            why=why,
            at=values,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return {
            "id": self.id,
            "paper": self.paper,
            "kind": self.kind,
            "algorithm": self.algorithm,
            "statement": self.statement,
            "formula": self.formula,
            "regime": self.regime,
            "source": self.source,
            "exponents": dict(self.exponents),
            "symbolic_exponents": dict(self.symbolic_exponents),
            "uncheckable_reason": self.uncheckable_reason,
            "implemented": self.implemented,
            "bound": self.bound,
            "margin": self.margin,
            "limits": dict(self.limits),
            "tested_exponents": dict(self.tested_exponents),
            "tested": self.tested or None,
            "why": self.why or None,
            "caveats": [caveat.to_dict() for caveat in self.caveats],
            "extra": dict(self.extra),
        }
