"""Reading what a user names on the command line: datasets in .npz files and mechanisms in code
(and checking, before any work, that a folder named for output can be written).

Every failure raises :class:`~dpclaims.errors.InputError` with one line that names the file or
spec and the fix, so the CLI exits with code 2 and no traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import re
import stat
import sys
import traceback
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, called_exit

__all__ = [
    "MAX_NPZ_BYTES",
    "load_npz_dataset",
    "load_npz_scores",
    "SCORE_ARRAYS",
    "SCORE_BYTES",
    "load_callable",
    "first_line",
    "regular_file_problem",
    "check_writable_folder",
    "imported_from",
    "user_modules",
]

_NPZ_FIX = "save the dataset with numpy.savez(path, x=..., y=...)"

MAX_NPZ_BYTES = 2 * 2**30
"""Most bytes the members of a dataset .npz may inflate to (2 GiB), checked before any is read,
so a zip bomb is refused; the environment variable ``DPCLAIMS_MAX_NPZ_BYTES`` overrides it."""

_REAL_KINDS = "biuf"
"""numpy dtype kinds of a dataset's arrays: bool, signed and unsigned integer, float."""

_FILE_KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a FIFO",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def regular_file_problem(path: str | Path | int) -> str | None:
    """Why ``path`` (or the open file descriptor ``path``) is not a regular file ("not a regular
    file (it is a FIFO)"), or None.

    Checked before a user's file is opened: opening a FIFO blocks until a writer comes, and a
    device such as /dev/zero never ends.  ``OSError`` when ``path`` cannot be looked at.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _FILE_KINDS.items() if test(mode)), "not a file")
    return f"not a regular file (it is {kind})"


def check_writable_folder(path: str | os.PathLike, name: str) -> None:
    """Refuse (InputError naming ``name``, e.g. ``"--save-pair"``) a folder ``path`` in which
    no file can be written, made when missing.

    Checked before any work, so a run does not fail at its end: the nearest of ``path`` and its
    parents that exists must be a folder this process may write in (``os.access``, which also
    answers no on a read-only file system).
    """
    folder = Path(path).expanduser()
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if folder.is_dir() and os.access(folder, os.W_OK | os.X_OK):
        return
    problem = "cannot be written" if folder.is_dir() else "is not a folder"
    raise InputError(
        f"{name} {str(path)!r} cannot be written ({str(folder)!r} {problem}); choose a writable "
        "folder"
    )


def _max_npz_bytes() -> int:
    text = os.environ.get("DPCLAIMS_MAX_NPZ_BYTES")
    if text is None:
        return MAX_NPZ_BYTES
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise InputError(
            f"DPCLAIMS_MAX_NPZ_BYTES must be a whole number of bytes, got {text!r}; "
            f"unset it for the default {MAX_NPZ_BYTES:,}"
        ) from None


def _check_npz_members(
    path: str, name: str, arrays: tuple[str, ...] = ("x", "y"), fix: str = _NPZ_FIX
) -> dict[str, tuple[int, ...]]:
    """Refuse, before any array is read: members inflating past the cap, duplicate member
    names (numpy would take the last), and arrays ``x``/``y`` that are not real numbers or whose
    header declares more bytes than their member holds.  Returns the shapes of ``arrays``."""
    limit = _max_npz_bytes()
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        names = [member.filename for member in members]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(
                f"{name} file {path!r} holds two members named {twice[0]!r}, and only one would "
                f"be read; {fix}"
            )
        total = sum(member.file_size for member in members)
        if total > limit:
            raise InputError(
                f"{name} file {path!r} inflates to {total:,} bytes, over the limit of "
                f"{limit:,} bytes (DPCLAIMS_MAX_NPZ_BYTES); pass a smaller dataset, or raise "
                "DPCLAIMS_MAX_NPZ_BYTES if the machine has the memory"
            )
        shapes = {}
        for member in members:
            array = member.filename.removesuffix(".npy")
            if array in arrays:
                with archive.open(member) as stream:
                    shape, dtype = _npy_header(stream)
                _check_array(path, name, array, shape, dtype, member.file_size, fix)
                shapes[array] = shape
        return shapes


def _npy_header(stream: Any) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype from the header of a .npy stream, reading nothing else."""
    version = np.lib.format.read_magic(stream)
    read = {(1, 0): np.lib.format.read_array_header_1_0}.get(
        version, np.lib.format.read_array_header_2_0
    )
    shape, _, dtype = read(stream)
    return shape, dtype


def _check_array(
    path: str, name: str, array: str, shape, dtype: np.dtype, size: int, fix: str = _NPZ_FIX
) -> None:
    if dtype.hasobject:
        raise InputError(
            f"{name} file {path!r} holds Python objects (pickled data), which "
            f"dpclaims does not load; store numeric arrays: {fix}"
        )
    if dtype.kind not in _REAL_KINDS:
        raise InputError(
            f"{name} file {path!r}: array {array!r} has dtype {dtype}, not real numbers; store "
            "bool, integer or float arrays (e.g. the real part of complex data, or datetimes "
            "as numbers: a.astype(np.int64))"
        )
    declared = math.prod(shape) * dtype.itemsize
    if declared > size:
        raise InputError(
            f"{name} file {path!r} is damaged or truncated (array {array!r} declares "
            f"{declared:,} bytes in a member of {size:,}); {fix}"
        )


def _npz_arrays(
    path: str,
    name: str,
    arrays: tuple[str, ...],
    fix: str,
    what: str,
    check: Callable[[dict[str, tuple[int, ...]]], None] | None = None,
) -> dict[str, np.ndarray]:
    """The arrays of ``arrays`` that the .npz file ``path`` holds (read after every check, and
    after ``check`` of their shapes), or InputError naming the file and ``fix``; ``"files"``
    maps to the names it holds."""
    try:
        problem = regular_file_problem(path)
        if problem is not None:
            raise InputError(
                f"{name} file {path!r} is {problem}; pass an .npz file saved with "
                + fix.removeprefix("save the dataset with ").removeprefix("save ")
            )
        with open(path, "rb") as stream:
            magic = stream.read(6)
    except OSError as exc:
        raise InputError(
            f"cannot read {name} file {path!r}: {exc.strerror or exc}; pass an existing .npz file"
        ) from None
    if magic.startswith(b"\x93NUMPY"):
        raise InputError(
            f"{name} file {path!r} is a .npy file (one array); {what} is a .npz archive: {fix}"
        )
    if not magic.startswith(b"PK"):
        raise InputError(f"{name} file {path!r} is not a .npz archive (no zip header); {fix}")
    try:
        shapes = _check_npz_members(path, name, arrays, fix)
        if check is not None:
            check(shapes)
        with np.load(path, allow_pickle=False) as archive:
            found = {a: archive[a] for a in arrays if a in archive.files}
            found["files"] = list(archive.files)
            return found
    except (InputError, MemoryError):
        raise
    except ValueError as exc:
        raise InputError(
            f"{name} file {path!r} is not a readable .npz archive ({exc}); {fix}"
        ) from None
    except Exception as exc:  # truncated or damaged archives raise zipfile, zlib, EOF or OS errors
        raise InputError(
            f"{name} file {path!r} is damaged or truncated ({type(exc).__name__}: "
            f"{first_line(exc)}); {fix}"
        ) from None


def load_npz_dataset(path: str, name: str) -> Any:
    """The UserDataset in the .npz file ``path`` given as ``name`` (--d0 or --d1).

    Raises InputError, naming the file and the fix, when it cannot be read, is not a regular
    file, would inflate past :data:`MAX_NPZ_BYTES`, or holds anything but real-number arrays.
    """
    from .data import UserDataset

    found = _npz_arrays(path, name, ("x", "y"), _NPZ_FIX, "a dataset")
    if "x" not in found:
        held = ", ".join(repr(f) for f in found["files"]) or "no arrays"
        raise InputError(f"{name} file {path!r} has no array 'x' (it holds {held}); {_NPZ_FIX}")
    try:
        return UserDataset(found["x"], found.get("y"))
    except InputError as exc:
        raise InputError(f"{name} file {path!r}: {exc}") from None


SCORE_ARRAYS = {"multi-run": ("s0", "s1"), "one-run": ("scores", "included")}
"""The two layouts of a scores file: one score per training run without the canary (``s0``)
and with it (``s1``), or one run's per-canary ``scores`` and ``included`` flags."""

_SCORES_FIX = (
    "save numpy.savez(path, s0=..., s1=...) (one score per run without / with the canary) or "
    "numpy.savez(path, scores=..., included=...) (one run, one score and flag per canary)"
)


def load_npz_scores(
    path: str, name: str = "--scores", *, max_memory: float = math.inf
) -> tuple[str, np.ndarray, np.ndarray]:
    """``(layout, first, second)`` from a scores .npz file: ``("multi-run", s0 (n0,), s1
    (n1,))`` or ``("one-run", scores (m,), included (m,) bool)``; see :data:`SCORE_ARRAYS`.

    Raises InputError (one line: the file, the problem, the fix) for the files
    :func:`load_npz_dataset` refuses and for missing arrays, both layouts at once, arrays that
    are not 1-D or not of matching length, NaN or infinite scores, and flags other than 0/1;
    and, before any array is read, for a file whose audit would need more than ``max_memory``
    bytes (:data:`SCORE_BYTES` per score).
    """
    wanted = SCORE_ARRAYS["multi-run"] + SCORE_ARRAYS["one-run"]

    def check_memory(shapes: dict[str, tuple[int, ...]]) -> None:
        _check_scores_memory(path, name, shapes, max_memory)

    found = _npz_arrays(path, name, wanted, _SCORES_FIX, "a scores file", check_memory)
    held = ", ".join(repr(f) for f in found.pop("files")) or "no arrays"
    layouts = [k for k, names in SCORE_ARRAYS.items() if any(a in found for a in names)]
    if len(layouts) != 1:
        problem = "holds both layouts" if layouts else "holds neither layout"
        raise InputError(f"{name} file {path!r} {problem} (it holds {held}); {_SCORES_FIX}")
    layout = layouts[0]
    first, second = SCORE_ARRAYS[layout]
    for array in (first, second):
        if array not in found:
            raise InputError(
                f"{name} file {path!r} has no array {array!r} (it holds {held}); {_SCORES_FIX}"
            )
        value = found[array]
        if value.ndim != 1 or value.size == 0:
            raise InputError(
                f"{name} file {path!r}: array {array!r} must be 1-D and non-empty, got shape "
                f"{value.shape}; flatten it (e.g. scores.reshape(-1)) and {_SCORES_FIX}"
            )
    a, b = found[first], found[second]
    scores = (a, b) if layout == "multi-run" else (a,)
    for array, value in zip((first, second), scores, strict=False):
        bad = int(np.count_nonzero(~np.isfinite(value.astype(np.float64))))
        if bad:
            raise InputError(
                f"{name} file {path!r}: array {array!r} holds {bad} NaN or infinite value(s); "
                "drop those runs or canaries (a failed run has no score)"
            )
    if layout == "one-run":
        if b.shape != a.shape:
            raise InputError(
                f"{name} file {path!r}: 'included' has shape {b.shape} but 'scores' {a.shape}; "
                "one flag per canary"
            )
        if not np.all(np.isin(b, (0, 1))):
            raise InputError(
                f"{name} file {path!r}: 'included' must hold only True/False (or 0/1) flags; "
                "store the inclusion of each canary as booleans"
            )
        return layout, a.astype(np.float64), b.astype(bool)
    return layout, a.astype(np.float64), b.astype(np.float64)


SCORE_BYTES = {"multi-run": 32, "one-run": 64}
"""Peak bytes per score of reading and auditing a scores file of each layout, from its array
shapes (measured on 10^5 to 10^7 scores: 24 per score of ``s0``, ``s1``, float32 or float64,
and 42 per canary of ``scores``, ``included``; rounded up)."""


def _check_scores_memory(
    path: str, name: str, shapes: dict[str, tuple[int, ...]], max_memory: float
) -> None:
    """Refuse a scores file whose audit would need more than ``max_memory`` bytes."""
    from .resources import describe_bytes

    layout = "one-run" if "scores" in shapes else "multi-run"
    arrays = ("scores",) if layout == "one-run" else ("s0", "s1")
    scores = sum(math.prod(shapes[a]) for a in arrays if a in shapes)
    need = SCORE_BYTES[layout] * scores
    if need > max_memory:
        raise InputError(
            f"{name} file {path!r} holds {scores:,} scores, whose audit needs about "
            f"{describe_bytes(need)} of memory, over the limit of {describe_bytes(max_memory)}; "
            "audit a random subsample of the runs (or canaries), or raise --max-memory-gb on a "
            "machine with the memory"
        )


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_USER_MODULES: set[str] = set()
"""Top-level modules dpclaims imported from a user's folder (a mechanism's file, a --registry
folder): workers elsewhere cannot import them by name, so tasks sent there carry them by value
(see :mod:`dpclaims.execution.backends`)."""


@contextmanager
def imported_from(folders: Iterable[str]) -> Iterator[None]:
    """Record the top-level modules the block imports from ``folders`` (a ``.py`` file or a
    package directly in one of them) as the user's (:func:`user_modules`).  Python writes no
    bytecode while it runs: no ``__pycache__`` appears in the user's folders, which dpclaims
    leaves as it found them."""
    homes = {Path(folder).resolve() for folder in folders}
    before = set(sys.modules)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        yield
    finally:
        sys.dont_write_bytecode = writes
    for name in set(sys.modules) - before:
        origin = getattr(sys.modules[name], "__file__", None)
        if "." in name or not origin:
            continue
        path = Path(origin).resolve()
        if (path.parent.parent if path.name == "__init__.py" else path.parent) in homes:
            _USER_MODULES.add(name)


def user_modules() -> frozenset[str]:
    """The names of the user's modules imported so far (see :func:`imported_from`)."""
    return frozenset(name for name in _USER_MODULES if name in sys.modules)


def _user_module(location: str, spec: str, role: str) -> Any:
    """Import ``location``: a module name (found from the current folder) or a .py file's path.

    As pytest and uvicorn do, the current folder goes first on ``sys.path`` for a module name;
    a file is imported from its path with its own folder first on ``sys.path`` (so it may import
    the modules beside it).  Only while the module is imported: then ``sys.path`` is restored
    exactly, so dpclaims' own later imports (matplotlib, tqdm) never run a local file of that
    name; worker processes find the module in ``sys.modules`` (they are forked), and tasks for
    a Dask cluster carry its code (:func:`imported_from`).
    """
    cwd = os.getcwd()
    named = f"{role} {spec!r}"
    if location.endswith(".py") or "/" in location or os.sep in location:
        path = Path(location)
        if not path.is_file():
            raise InputError(
                f"file {location!r} of {named} does not exist (looked from {cwd}); "
                "pass path/to/file.py:function"
            )
        name = re.sub(r"\W", "_", path.stem)
        if name in sys.modules or not name.isidentifier():
            name = f"dpclaims_user_{name}"
        folder = str(path.resolve().parent)
        module_spec = importlib.util.spec_from_file_location(name, path)

        def load():
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module  # worker processes unpickle the callable by module name
            try:
                module_spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
            return module
    else:
        folder = cwd

        def load():
            return importlib.import_module(location)

    try:
        with _first_on_path(folder), imported_from([folder]):
            return load()
    except InputError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and (location == exc.name or location.startswith(exc.name + ".")):
            raise InputError(
                f"no module {exc.name!r} in the current folder ({cwd}) or on sys.path "
                f"({named}); run from the folder that holds it, or pass "
                "path/to/file.py:function"
            ) from None
        raise InputError(
            f"importing {location!r} for {named} failed: it needs module "
            f"{exc.name!r}, which is not installed; install it"
        ) from None
    except SystemExit as exc:
        exited = called_exit(exc, "the module", "fix the module")
        raise InputError(f"importing {location!r} for {named} failed: {exited}") from None
    except Exception as exc:  # anything the user's module raises while it is imported
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" at {where.filename}:{where.lineno}" if where else ""
        at = "" if isinstance(exc, SyntaxError) else at  # its message names the file and line
        raise InputError(
            f"importing {location!r} for {named} failed{at}: "
            f"{type(exc).__name__}: {first_line(exc)}; fix the module"
        ) from None


@contextmanager
def _first_on_path(folder: str) -> Iterator[None]:
    """``folder`` first on ``sys.path`` inside the block; afterwards ``sys.path`` as it was."""
    saved = list(sys.path)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path[:] = saved


def _shadowed(module: Any, location: str) -> str:
    """Why ``module`` may not be the user's: the current folder holds a file of its name, but
    the name resolved elsewhere (e.g. ``random.py`` here, while Python's ``random`` was
    imported first); ``""`` when it is not so."""
    relative = Path(*location.split("."))
    cwd = Path.cwd()
    candidates = (cwd / relative.with_suffix(".py"), cwd / relative / "__init__.py")
    mine = [path for path in candidates if path.is_file()]
    found = getattr(module, "__file__", None)
    if not mine or (found is not None and Path(found).resolve() == mine[0].resolve()):
        return ""
    return (
        f" (module {location!r} is {found or 'built into Python'}, not {mine[0].name} in the "
        f"current folder; to use that, pass {mine[0].relative_to(cwd)}:function)"
    )


def load_callable(spec: str, *, role: str = "mechanism") -> Callable:
    """The callable named by ``module:function`` or ``path/to/file.py:function``.

    ``role`` (``"mechanism"``, ``"experiment"``) names it in error messages.
    """
    location, _, attr = spec.rpartition(":")
    if not location or not attr:
        raise InputError(f"{role} {spec!r} must be 'module:function' or 'path/to/file.py:function'")
    module = target = _user_module(location, spec, role)
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise InputError(
                f"{location!r} has no attribute {attr!r} ({role} {spec!r}); check the "
                f"function's name{_shadowed(module, location)}"
            ) from None
    if not callable(target):
        raise InputError(
            f"{attr!r} in {location!r} is not callable (it is of type "
            f"{type(target).__name__}); name the {role}'s function ({role} {spec!r})"
        )
    return target
