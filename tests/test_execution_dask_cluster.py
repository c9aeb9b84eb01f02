"""A real multi-process Dask cluster: a scheduler and two worker processes on 127.0.0.1.

The same audit run there and serially gives bit-identical results.  The processes get
random free ports, must start within :data:`STARTUP` seconds and are always torn down.
"""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from dpclaims.algorithms.mechanisms import GaussianMechanism, user_sum_query
from dpclaims.audit import audit
from dpclaims.data import UserDataset, replace_user
from dpclaims.execution import SEED_BLOCK, Execution

distributed = pytest.importorskip("distributed")

STARTUP = 60.0
"""Seconds the scheduler and workers get to start (generous: the test machine may be busy)."""


def _stop(workers: list, scheduler: subprocess.Popen) -> None:
    """End the workers, then the scheduler: a worker whose scheduler is gone first waits for it
    (about 10 s) before it exits."""
    for group in (workers, [scheduler]):
        for process in group:
            if process.poll() is None:
                process.terminate()
        for process in group:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


@pytest.fixture()
def cluster(tmp_path):
    """Address of a scheduler with two single-threaded workers, each its own process."""
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    quiet = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheduler_file = tmp_path / "scheduler.json"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dask",
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            **quiet,
        )
    ]
    try:
        deadline = time.monotonic() + STARTUP
        while (
            not scheduler_file.exists()
            and time.monotonic() < deadline
            and processes[0].poll() is None
        ):
            time.sleep(0.1)
        assert scheduler_file.exists(), "the dask scheduler did not start"
        time.sleep(0.2)  # the file is written whole, but give a reader no chance of a partial one
        address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "dask",
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--no-nanny",
                        "--host",
                        "127.0.0.1",
                        "--no-dashboard",
                    ],
                    **quiet,
                )
            )
        with distributed.Client(address, timeout=STARTUP) as client:
            client.wait_for_workers(2, timeout=STARTUP)
            pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids and pids <= {p.pid for p in processes[1:]}
        yield address
    finally:
        _stop(processes[1:], processes[0])


def gaussian_pair():
    x = np.zeros((10, 1, 1))
    x[0] = 1.0
    d0 = UserDataset(x)
    return (
        GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5),
        d0,
        replace_user(d0, 0, -np.ones((1, 1))),
    )


@pytest.mark.slow
def test_an_audit_on_separate_dask_worker_processes_is_bit_identical_to_serial(cluster):
    mechanism, d0, d1 = gaussian_pair()
    kwargs = dict(claim=mechanism.privacy_claim, trials=6 * SEED_BLOCK + 321, seed=5)
    serial = Execution(backend="serial", chunk=SEED_BLOCK)
    on_dask = Execution(backend="dask", scheduler=cluster, chunk=SEED_BLOCK)
    serial = audit(mechanism, d0, d1, **kwargs, execution=serial).to_dict()
    dask = audit(mechanism, d0, d1, **kwargs, execution=on_dask).to_dict()
    serial.pop("wall_time"), dask.pop("wall_time")
    assert serial == dask
