"""Workers die with their parent: no orphan survives a SIGKILL or OOM kill of the main process."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dpclaims.execution.backends import _die_with_parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and fork")

AUDIT = textwrap.dedent(
    """
    import os, sys, time
    from dpclaims import PrivacyClaim
    from dpclaims.audit import audit
    from dpclaims.execution import Execution

    MAIN, PIDS = os.getpid(), sys.argv[1]

    def mechanism(data, rng, trials):
        if os.getpid() != MAIN:  # a worker: say who it is, then work for a long time
            open(os.path.join(PIDS, str(os.getpid())), "w").close()
            time.sleep(120)
        return data + rng.standard_normal(trials)

    audit(mechanism, 0.0, 1.0, PrivacyClaim(epsilon=1.0, delta=1e-5), trials=40_000,
          execution=Execution(backend="processes", workers=2, strict=False))
    """
)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_workers_die_when_the_main_process_is_killed(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(AUDIT)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    main = subprocess.Popen(
        [sys.executable, str(script), str(pids)], env=env, stderr=subprocess.PIPE
    )
    workers: list[int] = []
    try:
        assert wait_until(lambda: len(list(pids.iterdir())) >= 2 or main.poll() is not None, 60), (
            "workers did not start"
        )
        assert main.poll() is None, main.stderr.read().decode()[-2000:]
        workers = [int(p.name) for p in pids.iterdir()]
        assert all(alive(pid) for pid in workers)
        main.send_signal(signal.SIGKILL)  # what the out-of-memory killer sends
        main.wait(10)
        assert wait_until(lambda: not any(alive(pid) for pid in workers), 10), (
            "a worker outlived its parent"
        )
    finally:
        main.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_is_already_gone_exits():
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_die_with_parent, args=(os.getpid() + 10**6,))  # not its parent
    child.start()
    child.join(10)
    assert child.exitcode == 1
