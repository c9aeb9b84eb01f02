"""The claims registry: every paper's claims TOML, read, validated and indexed.

A :class:`Registry` holds the papers and claims of its sources (see
:mod:`dpclaims.claims.plugins`: the packaged papers, installed plugins, ``--registry``
folders); :meth:`Registry.discover` builds it.  ``load``, ``get``, ``papers`` query the
default registry (packaged + installed), or one given by ``registry=``::

    >>> from dpclaims import claims
    >>> reg = claims.Registry.discover(folders=["my-paper"])     # doctest: +SKIP
    >>> claims.load(paper="smith-2025", registry=reg)             # doctest: +SKIP

Reading a registry imports no experiment.  A paper or claim id defined twice is a
:class:`ClaimsFileError` naming both files and their sources.

File layout (see any ``*.toml`` in this folder)::

    [paper]
    id = "murata-suzuki-2023"          # paper id, unique across all sources
    title = "DIFF2: ..."
    experiments = "dpclaims.claims.tables.murata_suzuki_2023"  # module registering the experiments
    spec = "004_murata_suzuki_diff2.md"  # optional: the spec transcribed
    notes = "..."                        # optional: the spec's remarks on its registry

    [[claims]]
    id = "diff2gd.prop41.calibration"    # unique across all sources
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
    caveats = [{kind = "erratum", text = "..."}]  # optional: the paper's ambiguities and
                                         #   errata, the spec's reconstructions (CAVEAT_KINDS)
    transcription = true                 # optional: the check compares a computed quantity
                                         #   with the paper's formula: agreement is `formula`
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError, check_choice
from ..userfiles import regular_file_problem
from .model import (
    BOUNDS,
    CAVEAT_KINDS,
    KINDS,
    LIMITS,
    Caveat,
    CaveatKind,
    Claim,
    Paper,
    claim_id_problem,
)
from .plugins import Source, module_origin, sources

__all__ = [
    "ClaimsFileError",
    "UnknownClaimError",
    "Registry",
    "load",
    "get",
    "papers",
    "algorithm_names",
    "resolve",
    "paper_of",
]

_TEXT_FIELDS = ("id", "paper", "kind", "algorithm", "statement", "formula", "regime", "source")
_STRUCTURED_FIELDS = (
    "exponents",
    "symbolic_exponents",
    "checkable",
    "implemented",
    "reason",
    "bound",
    "margin",
    "limits",
    "tested_exponents",
    "tested",
    "why",
    "caveats",
    "transcription",
)
_PAPER_FIELDS = {  # name -> required
    "id": True,
    "title": True,
    "experiments": True,
    "spec": False,
    "notes": False,
}


class ClaimsFileError(InputError):
    """A claims TOML file is malformed; the message names the file, the claim and the field."""


class UnknownClaimError(InputError):
    """No claim has the requested id; the message lists the closest ids."""


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


def _flag(table: dict[str, Any], name: str, path: Path, where: str) -> bool:
    """An optional true/false field (false when absent)."""
    value = table.get(name, False)
    if not isinstance(value, bool):
        raise _fail(path, where, f"field {name!r} must be true or false, got {value!r}")
    return value


def _checkability(table: dict[str, Any], path: Path, where: str) -> tuple[str | None, bool]:
    """``(reason, implemented)``: the reason a claim is not checked here (None when it is), and
    False when that is ``implemented = false`` (an experiment could decide it, but the algorithm
    or data is not available here) rather than ``checkable = false`` (no finite experiment
    can)."""
    flags = {}
    for name in ("checkable", "implemented"):
        flags[name] = table.get(name, True)
        if not isinstance(flags[name], bool):
            raise _fail(path, where, f"field {name!r} must be true or false, got {flags[name]!r}")
    if not (flags["checkable"] and flags["implemented"]):
        if not flags["checkable"] and not flags["implemented"]:
            raise _fail(
                path,
                where,
                "`checkable = false` (no finite experiment can decide the claim) and "
                "`implemented = false` (one could, but it is not implemented here) exclude "
                "each other: keep the one that is true",
            )
        reason = _text(table, "reason", path, where, required=False)
        if reason is None:
            name = "checkable" if not flags["checkable"] else "implemented"
            raise _fail(path, where, f"`{name} = false` needs a field 'reason' saying why")
        return reason, flags["implemented"]
    if "reason" in table:
        raise _fail(
            path,
            where,
            "field 'reason' is only allowed with `checkable = false` or `implemented = false`",
        )
    return None, True


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


def _caveats(table: dict[str, Any], path: Path, where: str) -> tuple[Caveat, ...]:
    """The field ``caveats``: a list of ``{kind = ..., text = ...}`` tables."""
    value = table.get("caveats", [])
    example = '[{kind = "erratum", text = "..."}]'
    if not isinstance(value, list):
        raise _fail(path, where, f"field 'caveats' must be a list like {example}, got {value!r}")
    out = []
    for number, entry in enumerate(value, 1):
        if not isinstance(entry, dict) or set(entry) != {"kind", "text"}:
            raise _fail(
                path,
                where,
                f"field 'caveats' entry {number} must be a table like "
                f"{example[1:-1]}, got {entry!r}",
            )
        if entry["kind"] not in CAVEAT_KINDS:
            raise _fail(
                path,
                where,
                f"field 'caveats' entry {number}: kind must be one of "
                f"{', '.join(CAVEAT_KINDS)}, got {entry['kind']!r}",
            )
        text = _text(entry, "text", path, f"{where}, field 'caveats' entry {number}")
        out.append(Caveat(CaveatKind(entry["kind"]), text))
    return tuple(out)


def _claim(table: Any, index: int, paper_id: str, path: Path) -> Claim:
    where = f"claim #{index + 1}"
    if not isinstance(table, dict):
        raise _fail(path, where, f"must be a table ([[claims]]), got {table!r}")
    if isinstance(table.get("id"), str):
        where = f"claim {table['id']!r}"
    text = {name: _text(table, name, path, where) for name in _TEXT_FIELDS}
    problem = claim_id_problem(text["id"])
    if problem is not None:
        raise _fail(path, f"claim #{index + 1}", problem)
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
    reason, implemented = _checkability(table, path, where)
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
        implemented=implemented,
        **rate,
        caveats=_caveats(table, path, where),
        transcription=_flag(table, "transcription", path, where),
        extra=extra,
    )


MAX_CLAIMS_FILE_BYTES = 16 * 2**20
"""Largest claims TOML read (16 MiB; the packaged ones are under 100 kB)."""


def _read_text(path: Path) -> str:
    """The text of claims file ``path``: only a regular file (a FIFO would block, /dev/zero
    never end) of at most :data:`MAX_CLAIMS_FILE_BYTES`."""
    problem = regular_file_problem(path)
    if problem is not None:
        raise _fail(path, "file", f"{problem}; a claims file is a TOML text file")
    with open(path, "rb") as stream:
        data = stream.read(MAX_CLAIMS_FILE_BYTES + 1)
    if len(data) > MAX_CLAIMS_FILE_BYTES:
        size = max(len(data), path.stat().st_size)
        raise _fail(
            path,
            "file",
            f"{size:,} bytes, over the limit of {MAX_CLAIMS_FILE_BYTES:,} bytes for a claims file",
        )
    return data.decode("utf-8")


def _read_file(path: Path, source: Source) -> tuple[Paper, list[Claim]]:
    try:
        data = tomllib.loads(_read_text(path))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _fail(path, "file", f"not valid TOML: {exc}") from None
    unknown = sorted(data.keys() - {"paper", "claims"})
    if unknown:
        raise _fail(
            path,
            "file",
            f"unknown top-level keys {unknown}; expected a [paper] table and [[claims]]",
        )
    table = data.get("paper")
    if not isinstance(table, dict):
        raise _fail(path, "[paper]", "missing [paper] table with id, title and experiments")
    extra_keys = sorted(table.keys() - _PAPER_FIELDS.keys())
    if extra_keys:
        raise _fail(
            path, "[paper]", f"unknown fields {extra_keys}; allowed: {', '.join(_PAPER_FIELDS)}"
        )
    if "experiments" not in table:
        raise _fail(
            path,
            "[paper]",
            "missing required field 'experiments': the module registering the paper's "
            'experiments, e.g. experiments = "smith25_experiments"',
        )
    meta = {
        name: _text(table, name, path, "[paper]", required=required)
        for name, required in _PAPER_FIELDS.items()
    }
    if not all(part.isidentifier() for part in meta["experiments"].split(".")):
        raise _fail(
            path,
            "[paper]",
            f"field 'experiments' must be a dotted module name such as "
            f"'smith25_experiments', got {meta['experiments']!r}",
        )
    if source.on_path:
        _check_module_in_folder(path, meta["experiments"], source.folder)
    paper = Paper(
        **meta,
        file=path,
        source=source.label,
        folder=source.folder if source.on_path else None,
    )
    claims = data.get("claims")
    if not isinstance(claims, list) or not claims:
        raise _fail(path, "file", "no [[claims]] entries")
    return paper, [_claim(table, i, paper.id, path) for i, table in enumerate(claims)]


def _check_module_in_folder(path: Path, module: str, folder: Path) -> None:
    """The experiments module of a --registry folder's TOML must be a file in that folder, in
    the current folder (found as ``audit`` and ``rate`` find ``module:function``) or a packaged
    or installed paper's module: a TOML may not import any installed module (``http.server``,
    ``this``).  A module not found at all is reported when it is needed."""
    origin = module_origin(module, folder)
    if origin is None:
        return
    allowed = [folder, Path.cwd(), *(s.folder for s in sources() if not s.on_path)]
    where = Path(origin).resolve() if Path(origin).is_absolute() else None
    if where is not None and any(root.resolve() in where.parents for root in allowed):
        return
    raise _fail(
        path,
        "[paper]",
        f"experiments module {module!r} is {where or origin}, outside the registry folder "
        f"{folder}; put the experiments module in that folder beside the TOML or in the current "
        "folder (or name the module of an installed dpclaims.papers plugin)",
    )


def _read_source(source: Source) -> list[tuple[Paper, list[Claim]]]:
    """The papers of one source, in spec order (then file name)."""
    files = sorted(source.folder.glob("*.toml"))
    if not files:
        raise ClaimsFileError(f"{source.folder} ({source.label}): no claims files (*.toml) found")
    loaded = [_read_file(path, source) for path in files]
    loaded.sort(key=lambda item: (item[0].spec or "", item[0].file.name))
    return loaded


_CLAIMS: dict[str, Claim] = {}
_PAPERS: dict[str, Paper] = {}
"""Every claim and paper of the registries built in this process (the latest wins): what
:func:`resolve` and :func:`paper_of` look in."""


def _where(paper: Paper) -> str:
    return f"{paper.file} ({paper.source})"


def _check_module_unshared(paper: Paper, earlier: Iterable[Paper]) -> None:
    """Two registry folders' papers may not name one experiments module: Python imports a
    module name once, so the second folder's module would never run (``new-paper a-b`` and
    ``new-paper a_b`` both write ``a_b_experiments``)."""
    if paper.folder is None:
        return
    for other in earlier:
        if other.experiments == paper.experiments and other.folder not in (None, paper.folder):
            raise ClaimsFileError(
                f"papers {other.id!r} ({other.folder}) and {paper.id!r} ({paper.folder}) both "
                f"name the experiments module {paper.experiments!r}, which Python imports only "
                f"once; rename one module (and its 'experiments' field in {paper.file.name})"
            )


@dataclass(frozen=True)
class Registry:
    """Papers and claims of some sources; build it with :meth:`discover` or :meth:`from_folders`.

    Attributes
    ----------
    papers : Mapping[str, Paper]
        ``{paper id: Paper}`` in source order (packaged, installed, folders), each source in
        spec order.
    claims : tuple of Claim
        Every claim, in paper order then file order.
    """

    papers: Mapping[str, Paper] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "papers", MappingProxyType(dict(self.papers)))
        object.__setattr__(self, "claims", tuple(self.claims))

    @classmethod
    def from_sources(cls, found: Iterable[Source]) -> Registry:
        """Read every source; a paper or claim id defined twice is an error naming both."""
        papers: dict[str, Paper] = {}
        claims: dict[str, Claim] = {}
        for source in found:
            for paper, file_claims in _read_source(source):
                if paper.id in papers:
                    raise ClaimsFileError(
                        f"paper id {paper.id!r} is defined twice: in {_where(papers[paper.id])} "
                        f"and in {_where(paper)}; rename one of them"
                    )
                _check_module_unshared(paper, papers.values())
                papers[paper.id] = paper
                for claim in file_claims:
                    if claim.id in claims:
                        first = papers[claims[claim.id].paper]
                        raise ClaimsFileError(
                            f"claim id {claim.id!r} is defined twice: in {_where(first)} and "
                            f"in {_where(paper)}; rename one of them"
                        )
                    claims[claim.id] = claim
        registry = cls(papers=papers, claims=tuple(claims.values()))
        _PAPERS.update(registry.papers)
        _CLAIMS.update(claims)
        return registry

    @classmethod
    def discover(cls, folders: Iterable[str | Path] = (), *, installed: bool = True) -> Registry:
        """The packaged papers, the installed plugins (``installed=True``) and ``folders``.

        Raises
        ------
        InputError
            A folder does not exist, or an entry point does not name a package.
        ClaimsFileError
            A claims file is malformed, or an id is defined twice.
        """
        return cls.from_sources(sources(folders, installed=installed))

    @classmethod
    def from_folders(cls, *folders: str | Path) -> Registry:
        """Only the papers of ``folders`` (no packaged or installed ones)."""
        return cls.from_sources(sources(folders, installed=False)[1:])

    def select(self, *, paper: str | None = None, kind: str | None = None) -> list[Claim]:
        """The claims, optionally of one paper and/or one kind, in order.

        Raises
        ------
        InputError
            Unknown ``paper`` or ``kind``.
        """
        if paper is not None:
            check_choice(paper, tuple(self.papers), "paper")
        if kind is not None:
            check_choice(kind, KINDS, "kind")
        return [
            c
            for c in self.claims
            if (paper is None or c.paper == paper) and (kind is None or c.kind == kind)
        ]

    def get(self, claim_id: str) -> Claim:
        """The claim with id ``claim_id``.

        Raises
        ------
        UnknownClaimError
            No such id; the message lists the closest ids.
        """
        return _lookup(claim_id, {c.id: c for c in self.claims})

    def titles(self) -> dict[str, str]:
        """``{paper id: title}``, in order."""
        return {pid: paper.title for pid, paper in self.papers.items()}


def _lookup(claim_id: Any, claims: Mapping[str, Claim]) -> Claim:
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


@lru_cache(maxsize=1)
def _default() -> Registry:
    return Registry.discover()


RegistryLike = Registry | Sequence[str | Path] | str | Path | None


def _registry(registry: RegistryLike) -> Registry:
    """``registry`` as a Registry: None is the default one, folders are added to it."""
    if registry is None:
        return _default()
    if isinstance(registry, Registry):
        return registry
    if isinstance(registry, (str, Path)):
        registry = [registry]
    if not isinstance(registry, Sequence):
        raise InputError(
            f"registry must be a Registry or a list of folders, got {type(registry).__name__}"
        )
    return Registry.discover(registry) if registry else _default()


def load(
    paper: str | None = None, kind: str | None = None, *, registry: RegistryLike = None
) -> list[Claim]:
    """All claims, optionally those of one paper and/or one kind, in order.

    Parameters
    ----------
    paper : str, optional
        A paper id from :func:`papers`.
    kind : str, optional
        One of ``KINDS``.
    registry : Registry or list of folders, optional
        The registry to read (default: packaged and installed papers); folders are read in
        addition to those.

    Raises
    ------
    InputError
        Unknown ``paper`` or ``kind``, or a folder that does not exist.
    ClaimsFileError
        A claims file is malformed (the message names the file, claim and field), or an id
        is defined twice.
    """
    return _registry(registry).select(paper=paper, kind=kind)


def get(claim_id: str, *, registry: RegistryLike = None) -> Claim:
    """The claim with id ``claim_id`` (see :meth:`Registry.get`)."""
    return _registry(registry).get(claim_id)


def papers(*, registry: RegistryLike = None) -> dict[str, str]:
    """``{paper id: title}`` for every paper in the registry, in order."""
    return _registry(registry).titles()


def algorithm_names(*, registry: RegistryLike = None) -> frozenset[str]:
    """The distinct ``algorithm`` strings the claims use."""
    return frozenset(c.algorithm for c in _registry(registry).claims)


def resolve(claim_id: str) -> Claim:
    """The claim ``claim_id`` of any registry built in this process (the default one if none
    has it): how :func:`~dpclaims.claims.register_experiment` finds a plugin's claims."""
    if not (isinstance(claim_id, str) and claim_id in _CLAIMS):
        _default()
    try:
        return _lookup(claim_id, _CLAIMS)
    except UnknownClaimError as exc:
        raise UnknownClaimError(
            f"{exc}; a plugin's claims are known once its registry is loaded, e.g. "
            "Registry.discover(folders=[DIR]) or 'dpclaims verify --registry DIR'"
        ) from None


def paper_of(claim: Claim) -> Paper | None:
    """The paper of ``claim`` among the registries built in this process (None if unknown)."""
    if claim.paper not in _PAPERS:
        _default()
    return _PAPERS.get(claim.paper)
