"""Load and validate the claims registry: one TOML file per paper in this folder.

File layout (see any ``*.toml`` here)::

    [paper]
    id = "murata-suzuki-2023"          # paper id, unique across files
    title = "DIFF2: ..."
    spec = "004_murata_suzuki_diff2.md"  # optional: the spec transcribed
    notes = "..."                        # optional: the spec's remarks on its registry

    [[claims]]
    id = "diff2gd.prop41.calibration"    # unique across all files
    paper = "murata-suzuki-2023"         # must be the file's paper id
    kind = "privacy"                     # one of KINDS
    algorithm = "..."                    # algorithm, statement, formula, regime, source: text
    exponents = {N = -2.0, eps = -1.0}   # numbers only
    symbolic_exponents = {n = "-(1-1/k)"}  # optional: non-numeric spec values, verbatim
    bound = "upper"                      # with exponents: "upper" (O), "lower" (Omega), "order"
    margin = 0.1                         # tolerance of the exponent tests (rate experiments)
    limits = {eps = "small"}             # optional: variables whose regime is the variable -> 0
    tested_exponents = {n = 0.0}         # optional: what the experiment tests instead, with
    tested = "..."                       #   what is tested (printed in the report)
    why = "..."                          #   and why
    checkable = false                    # optional, with `reason`: context-only claims
    reason = "..."
    confidence = "high"                  # any other scalar field is kept in Claim.extra

Every file is validated when it is loaded; a problem raises :class:`ClaimsFileError`
naming the file, the claim and the field.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import InputError, check_choice
from .model import BOUNDS, KINDS, LIMITS, Claim

__all__ = [
    "ClaimsFileError",
    "UnknownClaimError",
    "load",
    "get",
    "papers",
    "algorithm_names",
    "PACKAGE_DIR",
]

PACKAGE_DIR = Path(__file__).resolve().parent
"""Folder of the packaged claims files."""

_TEXT_FIELDS = ("id", "paper", "kind", "algorithm", "statement", "formula", "regime", "source")
_STRUCTURED_FIELDS = (
    "exponents",
    "symbolic_exponents",
    "checkable",
    "reason",
    "bound",
    "margin",
    "limits",
    "tested_exponents",
    "tested",
    "why",
)
_PAPER_FIELDS = {"id": True, "title": True, "spec": False, "notes": False}  # name -> required


class ClaimsFileError(InputError):
    """A claims TOML file is malformed; the message names the file, the claim and the field."""


class UnknownClaimError(InputError):
    """No claim has the requested id; the message lists the closest ids."""


@dataclass(frozen=True)
class _Registry:
    titles: dict[str, str]  # paper id -> title, in spec order
    claims: tuple[Claim, ...]


def _fail(path: Path, where: str, problem: str) -> ClaimsFileError:
    return ClaimsFileError(f"{path}: {where}: {problem}")


def _text(
    table: dict[str, Any], name: str, path: Path, where: str, required: bool = True
) -> str | None:
    if name not in table:
        if required:
            raise _fail(path, where, f"missing required field {name!r}")
        return None
    value = table[name]
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, where, f"field {name!r} must be a non-empty string, got {value!r}")
    return value


def _mapping(table: dict[str, Any], name: str, path: Path, where: str) -> dict[str, Any]:
    value = table.get(name, {})
    if not isinstance(value, dict):
        raise _fail(path, where, f"field {name!r} must be a table like {{n = -0.5}}, got {value!r}")
    return value


def _exponents(
    table: dict[str, Any], path: Path, where: str
) -> tuple[dict[str, float], dict[str, str]]:
    if "exponents" not in table:
        raise _fail(
            path,
            where,
            "missing required field 'exponents' (write `exponents = {}` if there are none)",
        )
    numeric = _mapping(table, "exponents", path, where)
    for var, value in numeric.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise _fail(
                path,
                where,
                f"field 'exponents' entry {var!r} must be a finite number, got {value!r}; "
                "write fractions as decimals (-1/2 -> -0.5) and move non-numeric values "
                "to symbolic_exponents",
            )
    symbolic = _mapping(table, "symbolic_exponents", path, where)
    for var, value in symbolic.items():
        if not isinstance(value, str) or not value.strip():
            raise _fail(
                path,
                where,
                f"field 'symbolic_exponents' entry {var!r} must be a non-empty string, "
                f"got {value!r}",
            )
    both = sorted(numeric.keys() & symbolic.keys())
    if both:
        raise _fail(
            path, where, f"variables {both} appear in both 'exponents' and 'symbolic_exponents'"
        )
    return {k: float(v) for k, v in numeric.items()}, dict(symbolic)


def _checkability(table: dict[str, Any], path: Path, where: str) -> str | None:
    checkable = table.get("checkable", True)
    if not isinstance(checkable, bool):
        raise _fail(path, where, f"field 'checkable' must be true or false, got {checkable!r}")
    if checkable:
        if "reason" in table:
            raise _fail(path, where, "field 'reason' is only allowed with `checkable = false`")
        return None
    reason = _text(table, "reason", path, where, required=False)
    if reason is None:
        raise _fail(path, where, "`checkable = false` needs a field 'reason' saying why")
    return reason


def _rate_fields(
    table: dict[str, Any], variables: set[str], path: Path, where: str
) -> dict[str, Any]:
    """The fields ``bound``, ``margin``, ``limits``, ``tested_exponents``/``tested``/``why``."""
    out: dict[str, Any] = {}
    if "bound" in table:
        if table["bound"] not in BOUNDS:
            raise _fail(
                path,
                where,
                f"field 'bound' must be one of {', '.join(BOUNDS)}, got {table['bound']!r}",
            )
        out["bound"] = table["bound"]
    elif variables:
        raise _fail(
            path,
            where,
            "missing field 'bound' (the claim has exponents): write "
            '"upper" for an O(.) rate, "lower" for Omega(.), '
            '"order" for Theta(.) or an exact law',
        )
    if "margin" in table:
        margin = table["margin"]
        number = isinstance(margin, (int, float)) and not isinstance(margin, bool)
        if not number or not 0 < margin < math.inf:
            raise _fail(
                path, where, f"field 'margin' must be a positive number such as 0.1, got {margin!r}"
            )
        out["margin"] = float(margin)
    tested = {k: v for k, v in _mapping(table, "tested_exponents", path, where).items()}
    for var, value in tested.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise _fail(
                path,
                where,
                f"field 'tested_exponents' entry {var!r} must be a finite number, got {value!r}",
            )
    out["tested_exponents"] = {k: float(v) for k, v in tested.items()}
    for name in ("tested", "why"):
        if tested:
            out[name] = _text(table, name, path, where)
        elif name in table:
            raise _fail(path, where, f"field {name!r} is only allowed with 'tested_exponents'")
    limits = _mapping(table, "limits", path, where)
    for var, value in limits.items():
        if value not in LIMITS:
            raise _fail(
                path,
                where,
                f"field 'limits' entry {var!r} must be one of {', '.join(LIMITS)}, got {value!r}",
            )
        if var not in variables | tested.keys():
            raise _fail(path, where, f"field 'limits' names {var!r}, which has no exponent")
    out["limits"] = dict(limits)
    return out


def _claim(table: Any, index: int, paper_id: str, path: Path) -> Claim:
    where = f"claim #{index + 1}"
    if not isinstance(table, dict):
        raise _fail(path, where, f"must be a table ([[claims]]), got {table!r}")
    if isinstance(table.get("id"), str):
        where = f"claim {table['id']!r}"
    text = {name: _text(table, name, path, where) for name in _TEXT_FIELDS}
    if any(ch.isspace() for ch in text["id"]):
        raise _fail(path, where, "field 'id' must not contain whitespace")
    if text["paper"] != paper_id:
        raise _fail(
            path,
            where,
            f"field 'paper' is {text['paper']!r} but this file's [paper] id is {paper_id!r}",
        )
    if text["kind"] not in KINDS:
        raise _fail(
            path, where, f"field 'kind' must be one of {', '.join(KINDS)}, got {text['kind']!r}"
        )
    exponents, symbolic = _exponents(table, path, where)
    reason = _checkability(table, path, where)
    rate = _rate_fields(table, set(exponents) | set(symbolic), path, where)
    extra = {
        k: v for k, v in table.items() if k not in _TEXT_FIELDS and k not in _STRUCTURED_FIELDS
    }
    for name, value in extra.items():
        if not isinstance(value, (str, int, float, bool)):
            raise _fail(
                path,
                where,
                f"extra field {name!r} must be a string, number or boolean, got {value!r}",
            )
    return Claim(
        **text,
        exponents=exponents,
        symbolic_exponents=symbolic,
        uncheckable_reason=reason,
        **rate,
        extra=extra,
    )


def _read_file(path: Path) -> tuple[dict[str, str | None], list[Claim]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _fail(path, "file", f"not valid TOML: {exc}") from None
    unknown = sorted(data.keys() - {"paper", "claims"})
    if unknown:
        raise _fail(
            path,
            "file",
            f"unknown top-level keys {unknown}; expected a [paper] table and [[claims]]",
        )
    paper = data.get("paper")
    if not isinstance(paper, dict):
        raise _fail(path, "[paper]", "missing [paper] table with id and title")
    extra_keys = sorted(paper.keys() - _PAPER_FIELDS.keys())
    if extra_keys:
        raise _fail(
            path, "[paper]", f"unknown fields {extra_keys}; allowed: {', '.join(_PAPER_FIELDS)}"
        )
    meta = {
        name: _text(paper, name, path, "[paper]", required)
        for name, required in _PAPER_FIELDS.items()
    }
    claims = data.get("claims")
    if not isinstance(claims, list) or not claims:
        raise _fail(path, "file", "no [[claims]] entries")
    return meta, [_claim(table, i, meta["id"], path) for i, table in enumerate(claims)]


def _read_directory(directory: Path) -> _Registry:
    if not directory.is_dir():
        raise InputError(
            f"directory must be an existing folder of claims *.toml files, got {str(directory)!r}"
        )
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise ClaimsFileError(f"{directory}: no claims files (*.toml) found")
    loaded = [(path, *_read_file(path)) for path in files]
    loaded.sort(key=lambda item: (item[1]["spec"] or "", item[0].name))
    titles: dict[str, str] = {}
    paper_files: dict[str, Path] = {}
    claim_files: dict[str, Path] = {}
    claims: list[Claim] = []
    for path, meta, file_claims in loaded:
        if meta["id"] in paper_files:
            raise _fail(
                path,
                "[paper]",
                f"paper id {meta['id']!r} is also declared in {paper_files[meta['id']]}",
            )
        paper_files[meta["id"]] = path
        titles[meta["id"]] = meta["title"]
        for claim in file_claims:
            if claim.id in claim_files:
                raise _fail(
                    path, f"claim {claim.id!r}", f"duplicate id (also in {claim_files[claim.id]})"
                )
            claim_files[claim.id] = path
            claims.append(claim)
    return _Registry(titles=titles, claims=tuple(claims))


@lru_cache(maxsize=1)
def _packaged() -> _Registry:
    return _read_directory(PACKAGE_DIR)


def _registry(directory: str | Path | None) -> _Registry:
    if directory is None:
        return _packaged()
    if not isinstance(directory, (str, Path)):
        raise InputError(
            f"directory must be a path (str or pathlib.Path), got {type(directory).__name__}"
        )
    return _read_directory(Path(directory))


def load(
    paper: str | None = None, kind: str | None = None, directory: str | Path | None = None
) -> list[Claim]:
    """All claims, optionally those of one paper and/or one kind, in spec order.

    Parameters
    ----------
    paper : str, optional
        A paper id from :func:`papers`.
    kind : str, optional
        One of ``KINDS``.
    directory : str or Path, optional
        Folder of claims ``*.toml`` files to read instead of the packaged registry.

    Raises
    ------
    InputError
        Unknown ``paper`` or ``kind``.
    ClaimsFileError
        A claims file is malformed (the message names the file, claim and field).
    """
    registry = _registry(directory)
    if paper is not None:
        check_choice(paper, tuple(registry.titles), "paper")
    if kind is not None:
        check_choice(kind, KINDS, "kind")
    return [
        c
        for c in registry.claims
        if (paper is None or c.paper == paper) and (kind is None or c.kind == kind)
    ]


def get(claim_id: str, directory: str | Path | None = None) -> Claim:
    """The claim with id ``claim_id``.

    Raises
    ------
    UnknownClaimError
        No such id; the message lists the closest ids.
    """
    claims = {c.id: c for c in _registry(directory).claims}
    if isinstance(claim_id, str) and claim_id in claims:
        return claims[claim_id]
    if not isinstance(claim_id, str):
        raise UnknownClaimError(
            f"claim_id must be a string such as 'lla24.alg1.privacy', got {claim_id!r}"
        )
    close = difflib.get_close_matches(claim_id, list(claims), n=5, cutoff=0.6)
    if not close:
        close = [i for i in claims if i.startswith(claim_id)][:5]
    hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else "no id is close to it"
    raise UnknownClaimError(
        f"unknown claim id {claim_id!r}; {hint} (list every id with "
        "'dpclaims list', or dpclaims.claims.load() in Python)"
    )


def papers(directory: str | Path | None = None) -> dict[str, str]:
    """``{paper id: title}`` for every paper in the registry, in spec order."""
    return dict(_registry(directory).titles)


def algorithm_names(directory: str | Path | None = None) -> frozenset[str]:
    """The distinct ``algorithm`` strings the claims use."""
    return frozenset(c.algorithm for c in _registry(directory).claims)
