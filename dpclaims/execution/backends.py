"""Backends: where a session's tasks run.  A backend is one class carrying its behaviour
(:meth:`Backend.choose`, :meth:`Backend.open`, :meth:`Backend.check`); adding one is one
subclass with a new ``name``, which also makes ``backend="<name>"`` work.

:class:`Serial` runs tasks in this process, :class:`Processes` in a pool of worker processes,
:class:`Dask` on a Dask cluster (a local one, or the scheduler at an address), and
:class:`AutoBackend` picks serial or processes per session.  Results never depend on the backend.
"""

from __future__ import annotations

import abc
import contextlib
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, ClassVar

import cloudpickle

from ..errors import InputError, check_choice
from ..userfiles import user_modules

__all__ = [
    "BACKENDS",
    "Backend",
    "Runner",
    "AutoBackend",
    "Serial",
    "Processes",
    "Dask",
    "backend_named",
]

DASK_CONNECT_TIMEOUT = 10
"""Seconds to wait for a Dask scheduler given by address before giving up with an InputError."""

SCHEDULER_CHECK_TIMEOUT = 3
"""Seconds :meth:`Execution.check` waits for the scheduler before anything runs."""

_REGISTRY: dict[str, type[Backend]] = {}
"""Backend classes by ``name``, in the order they are defined (the string forms)."""


class Runner:
    """An open backend: :meth:`submit_all` yields ``(i, func(*tasks[i]))`` in completion order;
    :meth:`close` frees it; :meth:`abort` ends running work at once (a time limit)."""

    name = "serial"

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        for i, task in enumerate(tasks):
            yield i, func(*task)

    def close(self) -> None:
        """Free the backend's workers (nothing to free in this process)."""

    def abort(self) -> None:
        """End work in flight (nothing runs elsewhere in this process)."""


@dataclass(frozen=True)
class Backend(abc.ABC):
    """Where tasks run.  Subclasses set ``name`` (their string form) and :meth:`open`."""

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            _REGISTRY[cls.name] = cls

    scheduler: ClassVar[str | None] = None
    """The Dask scheduler address (None for every backend but :class:`Dask`)."""

    def __str__(self) -> str:
        return self.name

    @classmethod
    def of(cls, scheduler: str | None) -> Backend:
        """This backend from ``Execution``'s string form (a ``scheduler`` needs Dask)."""
        if scheduler is not None:
            raise InputError(
                "scheduler= is a Dask scheduler address and needs backend='dask', got "
                f"backend={cls.name!r}"
            )
        return cls()

    def parallel(self, workers: int) -> bool:
        """Whether ``workers`` workers run in processes of their own (for time estimates)."""
        return workers > 1

    def choose(self, *, tasks: int, workers: int, probe: Any) -> Backend:
        """The backend that runs ``tasks`` tasks like ``probe`` on ``workers`` workers."""
        return self

    @abc.abstractmethod
    def open(self, workers: int) -> Runner:
        """A runner with ``workers`` workers; close it after use."""

    def check(self, option: Callable[[str], str]) -> None:
        """Check, before anything runs, that this backend can run (see
        :meth:`Execution.check`); nothing to check by default."""
        return None


BACKENDS: tuple[str, ...] = ()
"""The string forms of the backends (filled below, in definition order)."""


@dataclass(frozen=True)
class AutoBackend(Backend):
    """Worker processes when there is more than one task, more than one worker and the tasks
    pickle with the standard pickle (closures and lambdas keep running serially, so their side
    effects stay visible); else serial."""

    name: ClassVar[str] = "auto"

    @classmethod
    def of(cls, scheduler: str | None) -> Backend:
        return cls() if scheduler is None else Dask(scheduler=scheduler)

    def choose(self, *, tasks: int, workers: int, probe: Any) -> Backend:
        parallel = tasks > 1 and workers > 1 and _picklable(probe)
        return Processes() if parallel else Serial()

    def open(self, workers: int) -> Runner:
        """Opened before :meth:`choose` (no tasks known to judge by): serial, the safe choice."""
        return Serial().open(workers)


@dataclass(frozen=True)
class Serial(Backend):
    """Every task in this process, in order."""

    name: ClassVar[str] = "serial"

    def parallel(self, workers: int) -> bool:
        return False

    def open(self, workers: int) -> Runner:
        return Runner()


@dataclass(frozen=True)
class Processes(Backend):
    """A pool of ``workers`` worker processes; tasks travel with cloudpickle, so closures and
    lambdas run too."""

    name: ClassVar[str] = "processes"

    def open(self, workers: int) -> Runner:
        return _ProcessRunner(workers)


@dataclass(frozen=True)
class Dask(Backend):
    """A Dask cluster: the scheduler at the address ``scheduler`` (e.g. one started with
    ``dask scheduler`` and ``dask worker ADDRESS`` on each machine), or without one a
    ``distributed.LocalCluster`` started for the session and closed after it: ``workers``
    single-threaded workers in this process talking TCP on 127.0.0.1 (quick to start and
    reliable on small machines)."""

    scheduler: str | None = None  # type: ignore[misc]
    name: ClassVar[str] = "dask"

    def __post_init__(self) -> None:
        _check_address(self.scheduler)

    @classmethod
    def of(cls, scheduler: str | None) -> Backend:
        return cls(scheduler=scheduler)

    def open(self, workers: int) -> Runner:
        return _DaskRunner(workers, self.scheduler)

    def check(self, option: Callable[[str], str]) -> None:
        _require_dask()
        if self.scheduler is not None:
            _reach_scheduler(self.scheduler, option("scheduler"))


BACKENDS = tuple(_REGISTRY)


def backend_named(backend: str | Backend, scheduler: str | None = None) -> Backend:
    """``backend`` as a :class:`Backend`: an instance as given, or the class of a name in
    :data:`BACKENDS` with the Dask ``scheduler`` address (which needs ``"dask"`` or
    ``"auto"``)."""
    _check_address(scheduler)
    if isinstance(backend, Backend):
        if scheduler is None or scheduler == backend.scheduler:
            return backend
        if backend.scheduler is not None:
            raise InputError(
                f"scheduler={scheduler!r} and backend={backend!r} name two schedulers; give it once"
            )
        return type(backend).of(scheduler)
    check_choice(backend, tuple(_REGISTRY), "backend")
    return _REGISTRY[backend].of(scheduler)


def _check_address(scheduler: Any) -> None:
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise InputError(
            "scheduler must be a Dask scheduler address such as 'tcp://10.0.0.5:8786', got "
            f"{scheduler!r}"
        )


_NO_DASK = (
    "backend='dask' and scheduler= need the optional dependency dask[distributed], which is "
    'not installed: pip install "dpclaims[dask]"'
)


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(_NO_DASK) from None


def _reach_scheduler(address: str, name: str) -> None:
    """One connection to the Dask scheduler at ``address``, closed at once."""
    from distributed import Client

    try:
        Client(address, timeout=SCHEDULER_CHECK_TIMEOUT).close()
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(
            f"cannot reach {name} {address}: {type(exc).__name__}: {_one_line(exc)}; start the "
            f"scheduler or drop {name}"
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _dumps(obj: Any, *, by_value: bool = False) -> bytes:
    """cloudpickle bytes of ``obj``: closures and lambdas travel by value, module functions by
    name; with ``by_value`` also the functions of the user's modules
    (:func:`~dpclaims.userfiles.imported_from`), for workers that did not import them."""
    if not by_value:
        return cloudpickle.dumps(obj)
    registered = set(cloudpickle.list_registry_pickle_by_value())
    shipped = [sys.modules[name] for name in sorted(user_modules() - registered)]
    for module in shipped:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(obj)
    finally:
        for module in shipped:
            cloudpickle.unregister_pickle_by_value(module)


def _picklable(obj: Any) -> bool:
    """True when the standard pickle can send ``obj``: what ``backend="auto"`` needs to choose
    processes (closures and lambdas keep running serially there, so their side effects stay
    visible)."""
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _call_pickled(payload: bytes) -> Any:
    try:
        func, args = cloudpickle.loads(payload)
    except Exception as exc:  # the worker lacks a module the task needs
        raise InputError(
            f"a worker could not load its task ({type(exc).__name__}: {_one_line(exc)}); "
            "install what the code imports on every worker, or run without a scheduler"
        ) from None
    return func(*args)


PR_SET_PDEATHSIG = 1
"""Linux prctl option: the signal a process receives when its parent dies."""

PARENT_POLL = 0.5
"""Seconds between a worker's checks that its parent is alive (fallback to PR_SET_PDEATHSIG)."""


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when process ``parent`` dies, however it dies.

    On Linux the kernel sends SIGKILL on the parent's death (``prctl(PR_SET_PDEATHSIG)``,
    which also covers SIGKILL and the out-of-memory killer); everywhere a daemon thread
    checks every :data:`PARENT_POLL` s that the parent is still this process's parent.
    """
    import signal
    import threading
    import time

    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=watch, name="dpclaims-parent-watch", daemon=True).start()


def _payload(func: Callable, task: tuple, backend: str, *, by_value: bool = False) -> bytes:
    try:
        return _dumps((func, task), by_value=by_value)
    except Exception as exc:
        raise InputError(
            f"backend={backend!r} could not serialise the mechanism/experiment "
            f"({type(exc).__name__}: {exc}); make it picklable (no open files, locks or "
            "generators) or pass backend='serial'"
        ) from None


class _ProcessRunner(Runner):
    name = "processes"

    def __init__(self, workers: int) -> None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.by_value = method == "spawn"  # fresh interpreters have not imported the user's code
        self.window = 2 * workers
        self.pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context(method),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Results in completion order, with at most ``2 × workers`` tasks submitted at a time."""
        todo = iter(enumerate(tasks))
        futures: dict = {}

        def submit() -> None:
            for i, task in todo:
                payload = _payload(func, task, self.name, by_value=self.by_value)
                futures[self.pool.submit(_call_pickled, payload)] = i
                return

        try:
            for _ in range(self.window):
                submit()
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    i = futures.pop(future)
                    yield i, future.result()
                    submit()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """End the worker processes now, whatever they run (the pool is then broken)."""
        for process in list(self.pool._processes.values()):
            process.kill()


class _DaskRunner(Runner):
    name = "dask"

    def __init__(self, workers: int, scheduler: str | None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError(_NO_DASK) from None
        self.cluster = None
        try:
            if scheduler is None:
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=False,
                    host="127.0.0.1",
                    protocol="tcp",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=40,
                )
                self.client = Client(self.cluster)
            else:
                self.client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            if self.cluster is not None:
                self.cluster.close()
            where = f"the Dask scheduler at {scheduler!r}" if scheduler else "a local Dask cluster"
            raise InputError(
                f"could not connect to {where} ({type(exc).__name__}: {exc}); check scheduler= "
                "(e.g. 'tcp://10.0.0.5:8786') or omit it to start a local cluster"
            ) from None
        threads = sum(
            w.get("nthreads", 1) for w in self.client.scheduler_info().get("workers", {}).values()
        )
        self.window = 2 * max(workers, threads)

    def submit_all(self, func: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Results in completion order, with at most ``2 × threads`` tasks submitted at a time."""
        from distributed import as_completed

        todo = iter(enumerate(tasks))
        index: dict = {}
        running = as_completed([])

        def submit() -> None:
            for i, task in todo:
                payload = _payload(func, task, self.name, by_value=True)
                future = self.client.submit(_call_pickled, payload, pure=False)
                index[future.key] = (i, future)
                running.add(future)
                return

        try:
            for _ in range(self.window):
                submit()
            for future in running:
                i, _ = index.pop(future.key)
                yield i, future.result()
                submit()
        finally:
            self.client.cancel([f for _, f in index.values() if not f.done()])

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
