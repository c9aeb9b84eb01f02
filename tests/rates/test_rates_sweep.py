import json

import numpy as np
import pytest

from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import Execution, child_seed
from dpclaims.rates import geometric_grid, sweep


def noisy_rate(n, rng, c=2.0, b=-0.5, sigma=0.2):
    """Module level so the process backend can pickle it."""
    return c * n**b * np.exp(sigma * rng.standard_normal())


def batch_rate(n, rng, trials=16):
    return n**-1.0 * np.exp(0.1 * rng.standard_normal(trials))


def test_same_seed_identical_on_serial_and_processes_backends():
    grid = geometric_grid(10, 1000, 5, integer=True)
    serial = sweep(
        noisy_rate, "n", grid, replicates=6, seed=7, execution=Execution(backend="serial")
    )
    parallel = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=6,
        seed=7,
        execution=Execution(backend="processes", workers=2),
    )
    np.testing.assert_array_equal(serial.errors, parallel.errors)
    assert serial.errors.shape == (5, 6)
    other = sweep(
        noisy_rate, "n", grid, replicates=6, seed=8, execution=Execution(backend="serial")
    )
    assert not np.array_equal(serial.errors, other.errors)


def test_replicate_r_of_value_i_uses_child_seed_i_r():
    grid = [10, 100, 1000, 10_000]
    result = sweep(
        noisy_rate,
        "n",
        grid,
        replicates=3,
        seed=11,
        fixed={"c": 5.0},
        execution=Execution(backend="serial"),
    )
    rng = np.random.default_rng(child_seed(11, 2, 1))
    assert result.errors[2, 1] == noisy_rate(1000, rng, c=5.0)


def test_integer_grid_values_reach_the_experiment_as_int():
    seen = []

    def record(n, rng):
        seen.append(type(n))
        return 1.0 / n

    sweep(
        record,
        "n",
        geometric_grid(10, 1000, 4, integer=True),
        replicates=2,
        execution=Execution(backend="serial"),
    )
    assert set(seen) == {int}


def test_vector_errors_are_averaged_per_replicate():
    grid = geometric_grid(10, 1000, 4)
    result = sweep(
        batch_rate,
        "n",
        grid,
        replicates=3,
        seed=2,
        fixed={"trials": 16},
        execution=Execution(backend="serial"),
    )
    assert result.batch == 16
    expected = batch_rate(grid[1], np.random.default_rng(child_seed(2, 1, 0)), trials=16).mean()
    assert result.errors[1, 0] == pytest.approx(expected)


def test_to_dict_is_json_and_fit_recovers_exponent():
    result = sweep(
        noisy_rate,
        "n",
        geometric_grid(100, 10_000, 7, integer=True),
        replicates=10,
        seed=3,
        fixed={"b": -1.0},
        execution=Execution(backend="serial"),
    )
    record = json.loads(json.dumps(result.to_dict()))
    assert record["param"] == "n" and record["replicates"] == 10 and record["fixed"] == {"b": -1.0}
    assert np.array(record["errors"]).shape == (7, 10)
    assert record["wall_time"] >= 0
    fit = result.fit()
    assert fit.interval[0] < -1.0 < fit.interval[1]


@pytest.mark.parametrize(
    "experiment, match",
    [
        (lambda n, rng: -1.0, "negative error"),
        (lambda n, rng: float("nan"), "NaN or infinite"),
        (lambda n, rng: "big", "not a number"),
        (lambda n, rng: 1 / 0, r"ZeroDivisionError: division by zero at n=10\.0 \(replicate 0\)"),
    ],
)
def test_bad_experiment_outputs_raise_mechanism_error(experiment, match):
    with pytest.raises(MechanismError, match=match):
        sweep(
            experiment,
            "n",
            [10.0, 100.0, 1000.0, 10_000.0],
            replicates=2,
            execution=Execution(backend="serial"),
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"replicates": 1}, "replicates must be a whole number >= 2"),
        ({"values": [10, 20, 30, 40]}, "values spans"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"fixed": {"n": 3}}, "fixed contains the swept parameter"),
        ({"execution": "gpu"}, "execution must be a dpclaims.execution.Execution"),
        ({"param": ""}, "param must be a non-empty string"),
    ],
)
def test_bad_sweep_arguments_raise_input_error(kwargs, match):
    arguments = {
        "param": "n",
        "values": [10, 100, 1000, 10_000],
        "replicates": 2,
        "execution": Execution(backend="serial"),
        **kwargs,
    }
    with pytest.raises(InputError, match=match):
        sweep(noisy_rate, **arguments)
