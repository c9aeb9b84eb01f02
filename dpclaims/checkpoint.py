"""Checkpoints: finished chunks of a long run, saved atomically, so a killed run resumes.

A checkpoint directory holds one run:

- ``manifest.json``: format, dpclaims version, the run's arguments (the mechanism's
  and data's fingerprints, trials, seed, chunk layout, method, ...) and their hash;
- ``.hmac-key``: 32 random bytes made when the directory becomes a checkpoint, readable
  only by its owner (mode 0600; a key others can read is warned about);
- ``<stage>-<chunk>.npz``: one finished chunk's result (an array), the key of its
  stage and an HMAC-SHA256 under ``.hmac-key`` of the stage key (the run's arguments, the
  stage and its extra inputs), the chunk's index (which, in the layout the arguments
  record, fixes its dataset and trials) and the result.

The HMAC stops a chunk forged by someone who cannot read ``.hmac-key`` (a recomputed
plain checksum no longer passes), chunks mixed up between runs, and chunks moved, copied or
swapped between indices (e.g. one dataset's chunks copied over the other's); whoever can
read the key can forge chunks, so a checkpoint directory is trusted input, like the code it
runs.  The key, the manifest and the chunks are read only as regular files (not through a
symbolic link, never a FIFO or a device), and the key and the manifest only up to a size.

Every file is written to a temporary name in the directory, flushed to disk and
renamed with ``os.replace``, so a reader sees a whole file or none; a failed write (a full
disk, a read-only folder) leaves no temporary file and raises
:class:`CheckpointWriteError`, which stops the whole run.  Opening a
checkpoint with other arguments or from another dpclaims version, or reading a
damaged file, raises :class:`~dpclaims.errors.InputError`: results are never mixed.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import marshal
import os
import pickle
import re
import stat
import types
import warnings
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .errors import InputError
from .userfiles import check_writable_folder, regular_file_problem

__all__ = [
    "FORMAT",
    "KEY",
    "MANIFEST",
    "Checkpoint",
    "CheckpointWriteError",
    "Stage",
    "check_checkpoint_tree",
    "fingerprint",
    "open_checkpoint",
]

FORMAT = 3
"""Version of the on-disk layout (2: chunk digests are HMACs under :data:`KEY`; 3: the HMAC
also covers the chunk's index)."""

MANIFEST = "manifest.json"

KEY = ".hmac-key"
"""The checkpoint's secret: random bytes, mode 0600, made with the directory's manifest."""

_KEY_BYTES = 32

_MAX_MANIFEST_BYTES = 16 * 2**20
"""Most bytes of a manifest read (a run's arguments take a few kB)."""

_WRITABLE = "checkpoint folder (checkpoint=, or --checkpoint)"
"""How a failed write names the folder to change."""

_STALE = re.compile(r"^\..*\.tmp$")
"""A temporary file of an interrupted write (removed when the checkpoint is opened)."""

_CHUNK_FILE = re.compile(r"^(?P<stage>[a-z0-9_]+)-(?P<index>\d{6,})\.npz$")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(obj: Any, _depth: int = 0) -> str:
    """A SHA-256 hex digest identifying ``obj`` across processes and runs.

    Arrays and datasets by dtype, shape and bytes; functions by module, qualified
    name, compiled code, defaults and closure contents; other objects by class
    name and attributes (or their pickle).  Equal digests mean "same computation"
    for checkpointing purposes; anything unrecognised falls back to the class name.
    """
    from .data import UserDataset

    if _depth > 8:
        return _sha(type(obj).__qualname__.encode())
    rec = lambda value: fingerprint(value, _depth + 1)  # noqa: E731
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)):
        return _sha(f"{type(obj).__name__}:{obj!r}".encode())
    if isinstance(obj, np.ndarray):
        return _sha(
            f"array:{obj.dtype.str}:{obj.shape}:".encode() + np.ascontiguousarray(obj).tobytes()
        )
    if isinstance(obj, UserDataset):
        return _sha(f"UserDataset:{rec(obj.x)}:{rec(obj.y)}".encode())
    if isinstance(obj, (list, tuple)):
        return _sha(f"{type(obj).__name__}:".encode() + ",".join(rec(v) for v in obj).encode())
    if isinstance(obj, dict):
        items = sorted((repr(k), rec(v)) for k, v in obj.items())
        return _sha(f"dict:{items}".encode())
    if isinstance(obj, np.random.SeedSequence):
        return _sha(f"SeedSequence:{obj.entropy}:{obj.spawn_key}".encode())
    if isinstance(obj, types.FunctionType):
        cells = [c.cell_contents for c in obj.__closure__ or () if _has_contents(c)]
        code = marshal.dumps(obj.__code__)
        name = f"{obj.__module__}.{obj.__qualname__}"
        return _sha(f"function:{name}:{rec(obj.__defaults__)}:{rec(cells)}:".encode() + code)
    if isinstance(obj, types.MethodType):
        return _sha(f"method:{rec(obj.__self__)}:{rec(obj.__func__)}".encode())
    name = f"{type(obj).__module__}.{type(obj).__qualname__}"
    state = getattr(obj, "__dict__", None)
    if state is not None:
        return _sha(f"object:{name}:{rec(dict(state))}".encode())
    try:
        return _sha(f"pickle:{name}:".encode() + pickle.dumps(obj))
    except Exception:
        return _sha(f"type:{name}".encode())


def _has_contents(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:
        return False
    return True


def _version() -> str:
    from dpclaims.version import __version__

    return __version__


def _jsonable(arguments: dict) -> dict:
    try:
        return json.loads(json.dumps(arguments, sort_keys=True))
    except (TypeError, ValueError) as exc:
        raise InputError(f"checkpoint arguments must be JSON-serialisable: {exc}") from None


class CheckpointWriteError(InputError):
    """A checkpoint file could not be written (a full disk, a read-only folder): the whole run
    stops, rather than one claim of it recording the error."""


def _write_atomic(path: Path, write, mode: int = 0o666) -> None:
    """Write ``path`` through a new temporary file and a rename; a failed write (a full disk,
    an interrupt) leaves no temporary file behind, and an ``OSError`` becomes a
    :class:`CheckpointWriteError` naming ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        tmp.unlink(missing_ok=True)  # a leftover of this name is replaced, never written through
        with open(os.open(tmp, flags, mode), "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from None
        raise


def _write_error(path: Path, exc: OSError) -> CheckpointWriteError:
    """The one-line error of a failed write of ``path`` (or of the folder ``path``)."""
    from .atomic import full_disk_error

    full = full_disk_error(exc, path, _WRITABLE)
    reason = f"cannot write {str(path)!r}: {exc.strerror or exc}; choose a writable {_WRITABLE}"
    return CheckpointWriteError(str(full) if full is not None else reason)


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file: not through a symbolic link and
    without blocking on a FIFO, so a link to /dev/zero or a FIFO is refused, not read forever
    or waited on.  ``OSError`` (its ``strerror`` says why) otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            exc.strerror = "a symbolic link, which dpclaims does not follow"
        raise
    handle = open(fd, "rb")  # noqa: SIM115 (returned to the caller, who closes it)
    problem = regular_file_problem(fd)
    if problem is not None:
        handle.close()
        raise OSError(errno.EINVAL, problem, str(path))
    return handle


def _read_regular(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path`` (see :func:`_open_regular`)."""
    with _open_regular(path) as handle:
        return handle.read(limit)


class Checkpoint:
    """An open checkpoint directory for one run (see :func:`open_checkpoint`)."""

    def __init__(self, directory: Path, arguments: dict, key: str, secret: bytes) -> None:
        self.directory = directory
        self.arguments = arguments
        self.key = key
        self.secret = secret

    def stage(self, name: str, **extra: Any) -> Stage:
        """The chunk store of one stage of the run; ``extra`` (e.g. thresholds chosen
        earlier in the run) is part of the stage's key, so chunks computed for other
        values are refused."""
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise InputError(
                f"checkpoint stage name must be lower-case letters, digits or '_', got {name!r}"
            )
        key = _sha(f"{self.key}:{name}:{fingerprint(extra)}".encode())
        return Stage(self.directory, name, key, self.secret)


class Stage:
    """Finished chunks of one stage: :meth:`load` the saved ones, :meth:`save` a new one."""

    def __init__(self, directory: Path, name: str, key: str, secret: bytes) -> None:
        self.directory = directory
        self.name = name
        self.key = key
        self.secret = secret

    def _path(self, index: int) -> Path:
        return self.directory / f"{self.name}-{index:06d}.npz"

    def load(self, chunks: int) -> dict[int, np.ndarray]:
        """``{chunk index: result}`` of every saved chunk of this stage
        (``0 <= index < chunks``)."""
        return dict(self.saved(chunks))

    def saved(self, chunks: int) -> Iterator[tuple[int, np.ndarray]]:
        """``(chunk index, result)`` of every saved chunk of this stage, read one at a time."""
        with os.scandir(self.directory) as entries:
            names = [e.name for e in entries if e.name.startswith(f"{self.name}-")]
        for name in names:
            match = _CHUNK_FILE.match(name)
            if not match or match["stage"] != self.name:
                continue
            path = self.directory / name
            index = int(match["index"])
            if index >= chunks:
                raise InputError(
                    f"checkpoint file {str(path)!r} is chunk {index} but this run has {chunks} "
                    "chunks; the checkpoint belongs to another run: pass a new directory"
                )
            yield index, self._read(path, index)

    def _read(self, path: Path, index: int) -> np.ndarray:
        fix = f"delete {str(path)!r} (its chunk is recomputed) or pass a new checkpoint directory"
        try:
            with _open_regular(path) as handle, np.load(handle, allow_pickle=False) as archive:
                key = str(archive["key"])
                digest = str(archive["digest"])
                result = np.array(archive["result"])
        except Exception as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else ""
            raise InputError(
                f"checkpoint file {str(path)!r} is corrupt (not a readable chunk archive: "
                f"{why or type(exc).__name__}); {fix}"
            ) from None
        if not hmac.compare_digest(digest, _digest(self.secret, key, index, result)):
            raise InputError(
                f"checkpoint file {str(path)!r} is corrupt or forged, or was moved or copied "
                f"from another chunk (its HMAC does not match the checkpoint's key for chunk "
                f"{index} of stage {self.name!r}); {fix}"
            )
        if key != self.key:
            raise InputError(
                f"checkpoint file {str(path)!r} was computed with different inputs for stage "
                f"{self.name!r} (e.g. a mechanism whose outputs changed); {fix}"
            )
        return result

    def save(self, index: int, result: Any) -> None:
        """Write chunk ``index`` atomically (temporary file + ``os.replace``)."""
        result = np.asarray(result)
        digest = _digest(self.secret, self.key, index, result)
        _write_atomic(
            self._path(index),
            lambda handle: np.savez(
                handle, result=result, key=np.array(self.key), digest=np.array(digest)
            ),
        )


def _digest(secret: bytes, key: str, index: int, result: np.ndarray) -> str:
    """HMAC-SHA256 under ``secret`` of a chunk's stage ``key`` (the run, the stage and its
    extra inputs), its ``index`` (with the run's chunk layout: its dataset and trials) and its
    ``result``."""
    message = f"{key}:chunk {int(index)}:{result.dtype.str}:{result.shape}:".encode()
    return hmac.new(
        secret, message + np.ascontiguousarray(result).tobytes(), hashlib.sha256
    ).hexdigest()


def open_checkpoint(directory: Any, arguments: dict) -> Checkpoint:
    """Open (or create) the checkpoint ``directory`` for a run with ``arguments``.

    Parameters
    ----------
    directory : str or os.PathLike; created when missing; must be empty or a
        checkpoint of the same run
    arguments : JSON-serialisable description of everything the results depend on

    Raises
    ------
    InputError : the directory holds a checkpoint of other arguments or another
        dpclaims version, a damaged manifest, or unrelated files.
    """
    if not isinstance(directory, (str, os.PathLike)) or not str(directory):
        raise InputError(
            f"checkpoint must be a directory path (str or pathlib.Path), got {directory!r}"
        )
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise InputError(
            f"checkpoint {str(path)!r} is a file, not a directory; pass a directory path for "
            "checkpoint"
        )
    arguments = _jsonable(arguments)
    key = _sha(json.dumps(arguments, sort_keys=True).encode())
    manifest = {
        "format": FORMAT,
        "dpclaims_version": _version(),
        "hash": key,
        "arguments": arguments,
    }
    target = path / MANIFEST
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(path, exc) from None
    if target.exists():
        _check_manifest(target, manifest)
        secret = _read_secret(path)
        for stale in path.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
    else:
        others = [p.name for p in path.iterdir() if not p.name.startswith(".")]
        if others:
            raise InputError(_not_a_checkpoint(path, others[0]))
        secret = os.urandom(_KEY_BYTES)
        _write_atomic(path / KEY, lambda handle: handle.write(secret), mode=0o600)
        payload = json.dumps(manifest, indent=1, sort_keys=True).encode()
        _write_atomic(target, lambda handle: handle.write(payload))
    return Checkpoint(path, arguments, key, secret)


def _not_a_checkpoint(path: Path, found: str) -> str:
    return (
        f"checkpoint directory {str(path)!r} is not empty and has no {MANIFEST} (found "
        f"{found!r}); it is not a dpclaims checkpoint: pass an empty or new directory"
    )


def _read_secret(path: Path) -> bytes:
    """The checkpoint's key: a regular file of exactly :data:`_KEY_BYTES` bytes (at most one
    byte more is read); a key that others can read is warned about (they could forge chunks)."""
    key = path / KEY
    try:
        secret = _read_regular(key, _KEY_BYTES + 1)
        mode = stat.S_IMODE(os.stat(key, follow_symlinks=False).st_mode)
    except OSError as exc:
        secret, mode, why = b"", 0, exc.strerror or type(exc).__name__
    else:
        short = len(secret) < _KEY_BYTES
        why = f"it holds {len(secret)} bytes" if short else f"it holds over {_KEY_BYTES} bytes"
    if len(secret) != _KEY_BYTES:
        raise InputError(
            f"checkpoint {str(path)!r} has no readable {KEY} (its {_KEY_BYTES}-byte secret: "
            f"{why}); its chunks cannot be checked: pass a new checkpoint directory (or delete "
            f"{str(path)!r})"
        )
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        warnings.warn(
            f"checkpoint key {str(key)!r} can be read by other users (mode {mode:04o}), who "
            f"could forge its chunks; make it private: chmod 600 {str(key)!r}",
            RuntimeWarning,
            stacklevel=2,
        )
    return secret


def check_checkpoint_tree(directory: Any, *, name: str = "checkpoint") -> None:
    """Refuse a ``directory`` (given as ``name``, e.g. ``"--checkpoint"``) that is neither
    missing, empty nor a dpclaims checkpoint tree (folders whose leaves are checkpoints: a
    manifest, or only such folders), or whose folders cannot be made or written, before a run
    writes into it (:class:`InputError`, as :func:`open_checkpoint` refuses it)."""
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise InputError(
            f"checkpoint {str(path)!r} is a file, not a directory; pass a directory path for "
            "checkpoint"
        )
    check_writable_folder(path, name)
    if not path.exists() or (path / MANIFEST).exists():
        return
    for entry in path.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            check_checkpoint_tree(entry, name=name)
        elif entry.name != KEY and not _STALE.match(entry.name):
            raise InputError(_not_a_checkpoint(path, entry.name))


def _check_manifest(target: Path, manifest: dict) -> None:
    fix = f"pass a new checkpoint directory (or delete {str(target.parent)!r})"
    try:
        stored = json.loads(_read_regular(target, _MAX_MANIFEST_BYTES))
        stored_format, version = stored["format"], stored["dpclaims_version"]
        stored_hash, stored_arguments = stored["hash"], stored["arguments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"checkpoint manifest {str(target)!r} is corrupt ({type(exc).__name__}: {exc}); {fix}"
        ) from None
    if isinstance(stored_format, int) and stored_format < FORMAT:
        raise InputError(
            f"checkpoint {str(target.parent)!r} was written by an older dpclaims (format "
            f"{stored_format}, this one writes format {FORMAT}: chunk digests keyed and bound to "
            "their chunk); delete it or choose a new checkpoint directory"
        )
    if stored_format != FORMAT or version != manifest["dpclaims_version"]:
        raise InputError(
            f"checkpoint {str(target.parent)!r} was written by dpclaims {version} (format "
            f"{stored_format}), this is dpclaims {manifest['dpclaims_version']} (format "
            f"{FORMAT}); results of different versions are not mixed: {fix}"
        )
    if stored_hash != manifest["hash"] or stored_arguments != manifest["arguments"]:
        changed = (
            sorted(
                k
                for k in set(stored_arguments) | set(manifest["arguments"])
                if stored_arguments.get(k) != manifest["arguments"].get(k)
            )
            if isinstance(stored_arguments, dict)
            else ["arguments"]
        )
        raise InputError(
            f"checkpoint {str(target.parent)!r} belongs to a run with different arguments "
            f"(differs in: {', '.join(changed) or 'hash'}); rerun with the original arguments to "
            f"resume, or {fix}"
        )
