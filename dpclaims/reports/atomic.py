"""Atomic writes: a file or a whole report directory appears complete or not at all.

A file is written to a temporary file in the same folder and renamed over the
target.  A report directory is built in a hidden staging folder beside the target
and renamed into place; an existing target is replaced only with ``force=True``
(it is moved aside first and deleted once the new report is in place).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import InputError

__all__ = ["write_atomic", "check_output_dir", "staged_directory"]


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
        raise InputError(f"cannot write {str(path)!r}: {exc.strerror or exc}; choose a writable location") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def check_output_dir(out: str | Path, force: bool = False) -> Path:
    """Check, before any work, that a report can be written to ``out``; create its parent folders.

    Parameters
    ----------
    out : the report directory
    force : allow replacing an existing, non-empty directory

    Returns
    -------
    The absolute path of ``out``.

    Raises
    ------
    InputError
        ``out`` is a file, exists and is not empty while ``force`` is False, or its
        parent cannot be created or written.
    """
    target = Path(out).expanduser().absolute()
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise InputError(f"--out {str(out)!r} exists and is not a directory; pass a directory path")
        if any(target.iterdir()) and not force:
            raise InputError(f"output directory {str(out)!r} already exists; pass --force to replace it, "
                             "or choose another --out")
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkdtemp(prefix=f".{target.name}.probe.", dir=parent)
    except OSError as exc:
        raise InputError(f"output directory {str(out)!r} cannot be written ({exc.strerror or exc}); "
                         "choose a writable --out") from None
    os.rmdir(probe)
    return target


@contextmanager
def staged_directory(out: str | Path, force: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; on success it replaces ``out`` in one rename.

    On an exception the staging folder is deleted and ``out`` is left untouched.
    """
    target = check_output_dir(out, force)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging.", dir=target.parent))
    try:
        yield staging
        check_output_dir(target, force)  # the directory may have appeared while the report was built
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
