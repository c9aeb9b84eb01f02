"""Atomic writes: a file or a whole report directory appears complete or not at all.

A file is written to a temporary file in the same folder and renamed over the
target.  A report directory is built in a hidden staging folder beside the target
and renamed into place.  Every report directory holds a marker file, ``.dpclaims-report``,
listing the files dpclaims wrote into it; an existing target is replaced only with
``force=True`` and only when its marker lists every file in it (it is moved aside
first and deleted once the new report is in place).  The working folder, its
parents, the home folder and ``/`` are never replaced.  Files and folders get the
permissions the umask allows, as ``open`` and ``mkdir`` would give them.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError

__all__ = ["MARKER", "write_atomic", "check_output_file", "check_output_dir", "staged_directory"]

MARKER = ".dpclaims-report"
"""The marker file of every report directory: a header line, then each path dpclaims wrote."""


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Raises
    ------
    InputError
        The folder of ``path`` does not exist or cannot be written.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent if str(path.parent) else Path(".")
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(
            f"cannot write {str(path)!r}: {exc.strerror or exc}; choose a writable location"
        ) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
        try:  # a file replaced (--force) keeps its permissions: a private file stays private
            mode = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def check_output_file(
    path: str | Path, name: str, force: bool = False, default: bool = False
) -> Path:
    """Check, before any work, that :func:`write_atomic` can write ``path`` (given as ``name``).

    An existing ``path`` is replaced only with ``force``, and never when ``path`` is a
    ``default`` name the user did not choose.

    Raises
    ------
    InputError
        ``path`` is a directory, exists (without ``force``, or as a default name), or its
        folder does not exist or cannot be written.
    """
    path = Path(path).expanduser()
    folder = path.parent
    if path.is_dir():
        raise InputError(
            f"{name} {str(path)!r} is a directory; pass a file name such as figure.png"
        )
    if default and (path.exists() or path.is_symlink()):
        raise InputError(
            f"the default figure file {str(path)!r} already exists and dpclaims does not "
            f"overwrite it; pass {name} PATH to name the file (with --force to replace it)"
        )
    if not force and (path.exists() or path.is_symlink()):
        raise InputError(
            f"{name} {str(path)!r} already exists; pass --force to replace it, or choose "
            f"another {name} path"
        )
    if not folder.is_dir():
        raise InputError(
            f"{name} {str(path)!r}: folder {str(folder)!r} does not exist; create it "
            "or pass another path"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(
            f"{name} {str(path)!r}: folder {str(folder)!r} cannot be written; pass another path"
        )
    return path


def _never_replaced(target: Path) -> str | None:
    """What ``target`` is, when it is a folder no report may replace; else None."""
    real = target.resolve()
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the working folder was deleted under us
        cwd = None
    if real == Path(real.anchor):
        return "the root folder"
    if real == Path.home().resolve():
        return "your home folder"
    if real == cwd:
        return "the working folder"
    if cwd is not None and real in cwd.parents:
        return "a parent of the working folder"
    return None


def _foreign_file(target: Path) -> str | None:
    """The first path in ``target`` that its marker does not list (the marker itself if missing)."""
    marker = target / MARKER
    if marker.is_symlink() or not marker.is_file():
        return MARKER
    try:
        listed = set(marker.read_text(encoding="utf-8").splitlines()[1:])
    except (OSError, UnicodeDecodeError):
        return MARKER
    for root, dirs, files in os.walk(target):
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        for name in sorted(files + links):
            relative = Path(root, name).relative_to(target).as_posix()
            if relative != MARKER and relative not in listed:
                return relative
    return None


def check_output_dir(out: str | Path, force: bool = False) -> Path:
    """Check, before any work, that a report can be written to ``out``; create its parent folders.

    Parameters
    ----------
    out : the report directory
    force : allow replacing an existing report directory dpclaims wrote

    Returns
    -------
    The absolute path of ``out``.

    Raises
    ------
    InputError
        ``out`` is a file; the working folder, one of its parents, the home folder or
        ``/``; exists and is not empty while ``force`` is False; holds a file dpclaims
        did not write; or its parent cannot be created or written.
    """
    target = Path(out).expanduser().absolute()
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise InputError(
                f"--out {str(out)!r} exists and is not a directory; pass a directory path"
            )
        what = _never_replaced(target)
        if what is not None:
            raise InputError(
                f"--out {str(out)!r} is {what}, which dpclaims never replaces; "
                "pass a new folder, e.g. --out dpclaims-report"
            )
        if any(target.iterdir()):
            if not force:
                raise InputError(
                    f"output directory {str(out)!r} already exists; pass --force to "
                    "replace it, or choose another --out"
                )
            foreign = _foreign_file(target)
            if foreign == MARKER:
                raise InputError(
                    f"--out {str(out)!r} is not a report folder dpclaims wrote "
                    f"(it has no {MARKER} marker), so --force leaves it alone; "
                    "choose another --out (or delete it yourself)"
                )
            if foreign is not None:
                raise InputError(
                    f"--out {str(out)!r} holds {foreign!r}, which dpclaims did not "
                    "write, so --force leaves the folder alone; move that file out, "
                    "or choose another --out"
                )
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkdtemp(prefix=f".{target.name}.probe.", dir=parent)
    except OSError as exc:
        raise InputError(
            f"output directory {str(out)!r} cannot be written ({exc.strerror or exc}); "
            "choose a writable --out"
        ) from None
    os.rmdir(probe)
    return target


def _write_marker(folder: Path) -> None:
    from .. import __version__

    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())
    header = (
        f"report folder written by dpclaims {__version__}; 'dpclaims verify --force' may replace it"
    )
    (folder / MARKER).write_text("\n".join([header, *written]) + "\n", encoding="utf-8")


@contextmanager
def staged_directory(out: str | Path, force: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; on success it is marked and replaces ``out`` in one rename.

    On an exception the staging folder is deleted and ``out`` is left untouched.
    """
    target = check_output_dir(out, force)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging.", dir=target.parent))
    try:
        os.chmod(staging, 0o777 & ~_umask())
        yield staging
        _write_marker(staging)
        check_output_dir(out, force)  # the directory may have appeared while the report was built
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.replace(target, old / "report")
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
