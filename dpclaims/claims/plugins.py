"""Where papers come from: folders of claims TOMLs, found without importing any experiment.

Three kinds of source, read by the same code (:func:`sources`):

- the packaged papers: the folder of the package :data:`PACKAGED`;
- installed plugins: every entry point of the group :data:`GROUP`, whose value names a
  package (in a plugin's ``pyproject.toml``: ``[project.entry-points."dpclaims.papers"]``
  ``smith25 = "smith25_paper"``); its folder is found with :func:`importlib.util.find_spec`,
  so the package is not imported;
- folders given with ``dpclaims verify --registry DIR`` (``Registry.discover(folders=[DIR])``);
  DIR is put on ``sys.path`` while the paper's experiments module is imported, which must be
  a file in DIR or the module of a packaged or installed paper (never any installed module).

Each source is a folder whose ``*.toml`` files are claims files (see
:mod:`dpclaims.claims.registry`).
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

__all__ = [
    "GROUP",
    "PACKAGED",
    "Source",
    "sources",
    "package_folder",
    "module_file",
    "module_origin",
]

GROUP = "dpclaims.papers"
"""Entry-point group of installed paper plugins; each value is a package holding claims TOMLs."""

PACKAGED = "dpclaims.claims"
"""The package holding the packaged papers' claims TOMLs."""


@dataclass(frozen=True)
class Source:
    """A folder of claims ``*.toml`` files.

    ``label`` names it in messages; ``on_path`` says whether the folder goes on ``sys.path``
    while its papers' experiments modules are imported (``--registry`` folders).
    """

    folder: Path
    label: str
    on_path: bool = False


def _spec(name: str, folder: Path | None = None) -> importlib.machinery.ModuleSpec | None:
    """The spec of module ``name`` (dotted), found without importing it or its parents.

    ``folder``: look for the top-level package there first, then in the current folder, as if
    both were on ``sys.path`` (as a ``--registry`` folder's experiments module is imported).
    """
    if name in sys.modules:
        return getattr(sys.modules[name], "__spec__", None)
    head, *rest = name.split(".")
    spec = None
    if folder:
        spec = importlib.machinery.PathFinder.find_spec(head, [str(folder), os.getcwd()])
    if spec is None:
        spec = importlib.util.find_spec(head)
    for index in range(len(rest)):
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            return None
        full = ".".join([head, *rest[: index + 1]])
        spec = importlib.machinery.PathFinder.find_spec(full, list(locations))
    return spec


def package_folder(package: str) -> Path | None:
    """The folder of the package ``package`` (dotted), without importing it; None if not found."""
    try:
        spec = _spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def module_origin(name: str, folder: Path | None = None) -> str | None:
    """Where module ``name`` (looked up first in ``folder``) would be imported from, without
    importing it: a file's path, ``"built-in"``, ``"frozen"``, ...; None when it is not found."""
    try:
        spec = _spec(name, folder)
    except (ImportError, ValueError):
        return None
    return None if spec is None else spec.origin or "a namespace package"


def module_file(name: str, folder: Path | None = None) -> Path | None:
    """The source file of module ``name`` (looked up first in ``folder``), without importing it."""
    origin = module_origin(name, folder)
    return Path(origin) if origin is not None and origin.endswith(".py") else None


def _installed() -> list[Source]:
    """One source per entry point of :data:`GROUP`, sorted by name (the packaged one skipped)."""
    found = []
    for point in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda p: p.name):
        dist = getattr(point.dist, "name", None) or "?"
        label = f"entry point {point.name!r} of {dist}"
        if point.attr is not None:
            raise InputError(
                f"{label}: the value of a {GROUP} entry point is a package holding claims "
                f"TOMLs, e.g. {point.module!r}; got {point.value!r}"
            )
        if point.module == PACKAGED:
            continue
        folder = package_folder(point.module)
        if folder is None:
            raise InputError(
                f"{label} names the package {point.module!r}, which is not installed or not a "
                "package; reinstall the plugin"
            )
        found.append(Source(folder=folder, label=f"{label} ({folder})"))
    return found


def sources(folders: Iterable[str | Path] = (), *, installed: bool = True) -> list[Source]:
    """The packaged source, the installed plugins (``installed=True``), then ``folders``.

    Raises
    ------
    InputError
        A folder is not an existing directory, or an entry point does not name a package.
    """
    packaged = package_folder(PACKAGED)
    assert packaged is not None  # this module lives in it
    out = [Source(folder=packaged, label="dpclaims")]
    if installed:
        out += _installed()
    for folder in folders:
        if not isinstance(folder, (str, Path)):
            raise InputError(
                f"registry folders must be paths (str or pathlib.Path), got {type(folder).__name__}"
            )
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise InputError(
                f"--registry must be an existing folder of claims *.toml files, got {str(folder)!r}"
            )
        out.append(Source(folder=path.resolve(), label=f"folder {path}", on_path=True))
    return out
