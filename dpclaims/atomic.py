"""Atomic writes: a file or a whole report directory appears complete or not at all.

A file is written to a temporary file in the same folder and renamed over the
target.  A report directory is built in a hidden work folder beside the target
(``.NAME.dpclaims-work.PID.RANDOM/report``, the work folder holding a file that names the process
writing it) and swapped into place: in one ``renameat2(RENAME_EXCHANGE)`` where the system
has it (Linux), else by two renames.  A kill -9 at any point leaves ``--out`` either the
old report or the new one: the next write (or check) puts back an old report left in a work
folder between the two renames, and deletes the work folders of processes that are gone.

Every report directory holds a marker file, ``.dpclaims-report``, listing each folder
(``path/``) and each file (``SHA-256  path``) dpclaims wrote into it; an existing target is
replaced only with ``force=True`` and only when its marker lists every folder and file in it
and no file changed since (a file edited by hand makes the folder the user's).  ``--out`` is
never a symbolic link, and nothing, not even a parent folder, is created before every check
has passed.  The working folder, its parents, the home folder and ``/`` are never replaced.
Files and folders get the permissions the umask allows, as ``open`` and ``mkdir`` would give
them; a file replaced keeps its own.

One process at a time writes a report directory: :func:`output_lock` holds an exclusive
``flock`` on ``.NAME.dpclaims-lock`` in the nearest existing parent folder of ``--out`` (made
when taken, deleted when released), from before the run's work (``dpclaims verify``) until the
report is in place; a second run refuses at once, before doing any work.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dpclaims.errors import InputError

__all__ = [
    "MARKER",
    "write_atomic",
    "check_output_file",
    "check_output_dir",
    "staged_directory",
    "output_lock",
    "full_disk_error",
]

MARKER = ".dpclaims-report"
"""The marker file of every report directory: a header line, then each folder (``path/``) and
file (``SHA-256  path``) dpclaims wrote."""

WORK = "dpclaims-work"
"""Middle part of the name of a report's hidden work folder: ``.NAME.dpclaims-work.PID.RANDOM``."""

OWNER = ".dpclaims-owner"
"""The file in a work folder naming the process that made it: ``PID HOST``."""


LOCK = "dpclaims-lock"
"""Last part of the name of the lock file of a report directory NAME: ``.NAME.dpclaims-lock``."""

_HELD: set[Path] = set()
"""The lock files this process holds (:func:`output_lock` is re-entrant)."""


FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})
"""Errors of a write that the user fixes by freeing space or writing elsewhere."""


def full_disk_error(exc: BaseException, what: str | Path, option: str) -> InputError | None:
    """The one-line error for a write to ``what`` that failed for want of space (or on a
    read-only file system); None for any other exception."""
    if not isinstance(exc, OSError) or exc.errno not in FULL_DISK:
        return None
    return InputError(
        f"cannot write {str(what)!r}: {os.strerror(exc.errno).lower()}; free space or choose "
        f"another {option}"
    )


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
    except BaseException as exc:
        Path(temp).unlink(missing_ok=True)
        full = full_disk_error(exc, path, "path")
        if full is not None:
            raise full from None
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_FILE_LINE = re.compile(r"([0-9a-f]{64})  (.+)")


def _foreign_entry(target: Path) -> tuple[str, str] | None:
    """The first entry of ``target`` dpclaims did not write, and why; None when there is none.

    Returns ``(MARKER, "")`` when the marker is missing.  A folder not listed, a file not listed
    and a file whose SHA-256 differs from the marker's (edited by hand) are not dpclaims'.  A
    marker written before folders and digests were listed (no digest in it) vouches for the
    files it lists and the folders holding them.
    """
    marker = target / MARKER
    if marker.is_symlink() or not marker.is_file():
        return MARKER, ""
    try:
        lines = marker.read_text(encoding="utf-8").splitlines()[1:]
    except (OSError, UnicodeDecodeError):
        return MARKER, ""
    digests: dict[str, str] = {}
    files: set[str] = set()
    folders: set[str] = set()
    for line in lines:
        match = _FILE_LINE.fullmatch(line)
        if line.endswith("/"):
            folders.add(line[:-1])
        elif match:
            digests[match[2]] = match[1]
        else:
            files.add(line)
    files |= digests.keys()
    if not digests:  # an older marker: the folders of the files it lists
        folders = {folder.as_posix() for f in files for folder in Path(f).parents} - {"."}
    for root, dirs, names in os.walk(target):
        for name in sorted(dirs):
            relative = Path(root, name).relative_to(target).as_posix()
            if os.path.islink(os.path.join(root, name)) or relative not in folders:
                return relative, "which dpclaims did not write"
        for name in sorted(names):
            relative = Path(root, name).relative_to(target).as_posix()
            if relative == MARKER:
                continue
            if relative not in files:
                return relative, "which dpclaims did not write"
            if relative in digests and _sha256(Path(root, name)) != digests[relative]:
                return relative, "changed since dpclaims wrote it"
    return None


def _alive(pid: str, host: str) -> bool:
    """Whether process ``pid`` of machine ``host`` may still be running."""
    if host != socket.gethostname():
        return True  # another machine's process: nothing here can tell
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError) as exc:
        return isinstance(exc, PermissionError)  # EPERM: it runs, as another user
    return True


def _stale(work: Path) -> bool:
    """Whether ``work`` is a work folder of a dpclaims process that is gone: it holds the owner
    file naming a dead process, or it is still empty and its name holds a dead process's id
    (a kill right after it was made)."""
    if work.is_symlink() or not work.is_dir():
        return False
    owner = work / OWNER
    try:
        if owner.is_file():
            return not _alive(*owner.read_text(encoding="utf-8").split())
        pid = work.name.rsplit(".", 2)[-2]
        return not any(work.iterdir()) and pid.isdigit() and not _alive(pid, socket.gethostname())
    except (OSError, TypeError, UnicodeDecodeError):
        return False


def _recover(target: Path) -> None:
    """Finish what a killed write to ``target`` left: put back an old report left between the
    two renames of a swap, and delete the work folders of processes that are gone.

    Only folders named ``.NAME.dpclaims-work.PID.*`` that hold an owner file naming a dead
    process (or are empty, and PID is dead) are touched: dpclaims made those, and nobody else
    writes there.
    """
    try:
        leftovers = sorted(target.parent.glob(f".{glob_escape(target.name)}.{WORK}.*"))
    except OSError:
        return
    for work in leftovers:
        if not _stale(work):
            continue
        old = work / "old"
        if old.is_dir() and not target.exists() and not target.is_symlink():
            os.replace(old, target)
        with suppress(OSError):
            _remove_work(work)


def _remove_work(work: Path) -> None:
    """Delete a work folder, its owner file last, so that a kill midway leaves a folder the
    next run still recognises (:func:`_stale`)."""
    for child in work.iterdir():
        if child.name != OWNER:
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    (work / OWNER).unlink(missing_ok=True)
    work.rmdir()


def glob_escape(name: str) -> str:
    """``name`` with the characters ``glob`` reads as patterns escaped."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _nearest_folder(path: Path) -> Path:
    """The nearest existing ancestor of ``path`` (``/`` at worst)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_dir(out: str | Path, force: bool = False) -> Path:
    """Check, before any work, that a report can be written to ``out``; write nothing there.

    An old report left by a killed write is put back first (see :func:`_recover`).

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
        ``out`` is a file or a symbolic link; the working folder, one of its parents, the
        home folder or ``/``; exists and is not empty while ``force`` is False; holds a file
        or folder dpclaims did not write, or a file changed since; or its nearest existing
        parent is not a folder that can be written.
    """
    target = Path(out).expanduser().absolute()
    if target.parent.is_dir():
        _recover(target)
    if target.is_symlink():
        raise InputError(
            f"--out {str(out)!r} is a symbolic link, which dpclaims does not replace; pass "
            f"the folder it points to, --out {str(target.resolve())!r}, or another --out"
        )
    if target.exists():
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
            foreign = _foreign_entry(target)
            if foreign == (MARKER, ""):
                raise InputError(
                    f"--out {str(out)!r} is not a report folder dpclaims wrote "
                    f"(it has no {MARKER} marker), so --force leaves it alone; "
                    "choose another --out (or delete it yourself)"
                )
            if foreign is not None:
                raise InputError(
                    f"--out {str(out)!r} holds {foreign[0]!r}, {foreign[1]}, so --force "
                    "leaves the folder alone; move that out of it, or choose another --out"
                )
    parent = _nearest_folder(target.parent)
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        reason = "is not a folder" if not parent.is_dir() else "cannot be written"
        raise InputError(
            f"output directory {str(out)!r} cannot be written ({str(parent)!r} {reason}); "
            "choose a writable --out"
        )
    return target


def _write_marker(folder: Path) -> None:
    from dpclaims.version import __version__

    entries = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        entries.append(f"{relative}/" if path.is_dir() else f"{_sha256(path)}  {relative}")
    header = (
        f"report folder written by dpclaims {__version__}; 'dpclaims verify --force' may replace it"
    )
    (folder / MARKER).write_text("\n".join([header, *entries]) + "\n", encoding="utf-8")


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where
    the system or file system cannot, and nothing happened."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the folders created, innermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
    return missing


def _lock_file(out: str | Path) -> Path:
    """The lock file of report directory ``out``: ``.NAME.dpclaims-lock`` beside it, or, while
    its parent folders do not exist yet, in the nearest one that does (NAME then spells the
    missing folders too, joined by ``%``)."""
    target = Path(out).expanduser().absolute()
    folder = _nearest_folder(target.parent)
    return folder / f".{'%'.join(target.relative_to(folder).parts)}.{LOCK}"


def _take(path: Path, out: str | Path) -> int:
    """A descriptor of ``path`` holding its exclusive ``flock``; InputError when another
    process holds it."""
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise InputError(
                f"--out {str(out)!r} is being written by another dpclaims run ({holder}); "
                "wait for it to finish, or choose another --out"
            ) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        except FileNotFoundError:
            same = False
        if same:  # not a file its last holder deleted while this process opened it
            os.ftruncate(fd, 0)
            os.write(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode())
            return fd
        os.close(fd)


@contextmanager
def output_lock(out: str | Path) -> Iterator[None]:
    """Hold the lock of the report directory ``out`` for the block (see the module's text);
    nothing happens where the system has no ``fcntl`` (Windows).

    Raises
    ------
    InputError
        Another process holds it: another dpclaims run is writing ``out``.
    """
    try:
        import fcntl  # noqa: F401
    except ImportError:
        yield
        return
    path = _lock_file(out)
    if path in _HELD:
        yield
        return
    fd = _take(path, out)
    _HELD.add(path)
    try:
        yield
    finally:
        _HELD.discard(path)
        path.unlink(missing_ok=True)  # before the lock is released: a waiter then retries
        os.close(fd)


@contextmanager
def staged_directory(out: str | Path, force: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; on success it is marked and swapped into ``out`` at once.

    On an exception the work folder, and any parent folder created for ``out``, are deleted
    and ``out`` is left untouched.
    """
    target = check_output_dir(out, force)
    with output_lock(target):
        yield from _staged(target, out, force)


def _staged(target: Path, out: str | Path, force: bool) -> Iterator[Path]:
    """:func:`staged_directory`, its lock held."""
    created = _make_parents(target.parent)
    work = None
    try:
        prefix = f".{target.name}.{WORK}.{os.getpid()}."
        work = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
        (work / OWNER).write_text(f"{os.getpid()} {socket.gethostname()}\n", encoding="utf-8")
        staging = work / "report"
        staging.mkdir()
        yield staging
        _write_marker(staging)
        check_output_dir(out, force)  # the directory may have appeared while the report was built
        if not target.exists():
            os.replace(staging, target)
        elif not _exchange(staging, target):
            os.replace(target, work / "old")  # a kill here: _recover puts it back
            os.replace(staging, target)
        _remove_work(work)
    except BaseException as exc:
        if work is not None:
            if (work / "old").is_dir() and not target.exists():
                os.replace(work / "old", target)
            with suppress(OSError):
                _remove_work(work)
        for folder in created:
            with suppress(OSError):
                folder.rmdir()  # only if still empty
        full = full_disk_error(exc, out, "--out")
        if full is not None:
            raise full from None
        raise
