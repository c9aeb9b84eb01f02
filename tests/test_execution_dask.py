"""The Dask backend gives the numbers of the serial and process backends, on a real LocalCluster on
loopback."""

import numpy as np
import pytest

from dpclaims.audit import audit
from dpclaims.errors import InputError
from dpclaims.execution import SEED_BLOCK, Execution, run_trials
from dpclaims.privacy import PrivacyClaim
from dpclaims.rates import geometric_grid, sweep

distributed = pytest.importorskip("distributed")


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


def vector(data, rng, trials):
    return data + rng.standard_normal((trials, 3))


def noisy_rate(n, rng, c=2.0):
    return c * n**-0.5 * np.exp(0.2 * rng.standard_normal())


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address="127.0.0.1:0",
        silence_logs=40,
    ) as cluster:
        yield cluster.scheduler_address


def without_time(result):
    record = result.to_dict()
    record.pop("wall_time")
    return record


@pytest.mark.parametrize("statistic_mechanism", [gauss, vector], ids=["1d", "3d-learned-score"])
def test_audit_is_bit_identical_on_serial_processes_and_dask(scheduler, statistic_mechanism):
    kwargs = dict(claim=PrivacyClaim(epsilon=1.0, delta=1e-5), trials=6 * SEED_BLOCK + 321, seed=5)
    serial = without_time(
        audit(
            statistic_mechanism,
            0.0,
            1.0,
            **kwargs,
            execution=Execution(backend="serial", chunk=SEED_BLOCK),
        )
    )
    processes = without_time(
        audit(
            statistic_mechanism,
            0.0,
            1.0,
            **kwargs,
            execution=Execution(backend="processes", workers=2, chunk=3 * SEED_BLOCK),
        )
    )
    dask = without_time(
        audit(
            statistic_mechanism,
            0.0,
            1.0,
            **kwargs,
            execution=Execution(backend="dask", scheduler=scheduler, chunk=2 * SEED_BLOCK),
        )
    )
    assert serial == processes == dask


def test_sweep_is_bit_identical_on_serial_processes_and_dask(scheduler):
    grid = geometric_grid(10, 1000, 5, integer=True)
    serial = sweep(
        noisy_rate, "n", grid, replicates=6, seed=3, execution=Execution(backend="serial")
    )
    processes = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=6,
        seed=3,
        execution=Execution(backend="processes", workers=2),
    )
    dask = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=6,
        seed=3,
        execution=Execution(backend="dask", scheduler=scheduler),
    )
    np.testing.assert_array_equal(serial.errors, processes.errors)
    np.testing.assert_array_equal(serial.errors, dask.errors)


def test_dask_without_scheduler_starts_and_closes_a_local_cluster():
    out = run_trials(
        gauss,
        0.0,
        3 * SEED_BLOCK,
        seed=2,
        execution=Execution(backend="dask", workers=2, chunk=SEED_BLOCK),
    )
    np.testing.assert_array_equal(
        out, run_trials(gauss, 0.0, 3 * SEED_BLOCK, seed=2, execution=Execution(backend="serial"))
    )


@pytest.mark.slow
def test_unreachable_scheduler_is_a_clear_error(monkeypatch):
    from dpclaims.execution import backends

    monkeypatch.setattr(backends, "DASK_CONNECT_TIMEOUT", 1)  # the port refuses: no need to wait
    with pytest.raises(InputError, match="could not connect to the Dask scheduler"):
        run_trials(
            gauss, 0.0, 10, execution=Execution(backend="dask", scheduler="tcp://127.0.0.1:1")
        )
