import numpy as np
import pytest

from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import SEED_BLOCK, as_batched, child_seed, map_tasks, run_trials


def gaussian(data, rng, trials):
    return data + rng.standard_normal((trials, 3))


def scalar_coin(data, rng):
    return rng.random() < 0.5


def square(a, b):
    return a * a + b


def test_shape_and_dtype():
    out = run_trials(gaussian, 1.0, 100, seed=3, backend="serial")
    assert out.shape == (100, 3) and out.dtype == np.float64


@pytest.mark.parametrize("chunk", [1, SEED_BLOCK, 3 * SEED_BLOCK, 10**7])
@pytest.mark.parametrize("backend, workers", [("serial", 1), ("processes", 2), ("auto", 2)])
def test_results_do_not_depend_on_chunk_backend_or_workers(chunk, backend, workers):
    trials = 2 * SEED_BLOCK + 123
    reference = run_trials(gaussian, 0.0, trials, seed=11, backend="serial", chunk=SEED_BLOCK)
    out = run_trials(gaussian, 0.0, trials, seed=11, chunk=chunk, backend=backend, workers=workers)
    np.testing.assert_array_equal(out, reference)


def test_different_seeds_and_blocks_give_different_streams():
    a = run_trials(gaussian, 0.0, 2 * SEED_BLOCK, seed=1, backend="serial")
    b = run_trials(gaussian, 0.0, 2 * SEED_BLOCK, seed=2, backend="serial")
    assert not np.array_equal(a, b)
    assert not np.array_equal(a[:SEED_BLOCK], a[SEED_BLOCK:])


def test_child_seed_is_deterministic_and_keyed():
    s = child_seed(5, 1, 2)
    assert s.spawn_key == (1, 2)
    assert np.random.default_rng(s).random() == np.random.default_rng(child_seed(5, 1, 2)).random()
    assert child_seed(s, 3).spawn_key == (1, 2, 3)


def test_two_argument_mechanism_is_looped():
    out = run_trials(scalar_coin, None, 500, seed=0, backend="serial")
    assert out.shape == (500, 1)
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert isinstance(as_batched(scalar_coin), type(as_batched(as_batched(scalar_coin))))


@pytest.mark.parametrize(
    "mechanism, fragment",
    [
        (lambda data, rng, trials: np.full(trials, np.nan), "NaN or infinite"),
        (lambda data, rng, trials: np.zeros((trials + 1, 2)), "returned shape"),
        (lambda data, rng, trials: np.zeros((trials, 2, 2)), "returned shape"),
        (lambda data, rng, trials: np.array(["a"] * trials), "non-numeric"),
        (lambda data, rng, trials: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_bad_mechanism_outputs_are_mechanism_errors(mechanism, fragment):
    with pytest.raises(MechanismError, match=fragment):
        run_trials(mechanism, None, 10, backend="serial")


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"trials": 0}, "trials must be"),
        ({"trials": 2.5}, "trials must be"),
        ({"seed": -1}, "seed must be"),
        ({"backend": "gpu"}, "backend must be one of"),
        ({"workers": 0}, "workers must be"),
        ({"chunk": 0}, "chunk must be"),
    ],
)
def test_bad_arguments(kwargs, fragment):
    args = {"trials": 10, **kwargs}
    with pytest.raises(InputError, match=fragment):
        run_trials(gaussian, 0.0, **args)


def test_mechanism_with_wrong_signature_is_refused():
    with pytest.raises(InputError, match="must accept"):
        run_trials(lambda: 0, None, 10)
    with pytest.raises(InputError, match="callable"):
        run_trials(42, None, 10)


def test_unpicklable_mechanism_on_processes_is_a_clear_error_and_auto_falls_back():
    offset = 2.0
    closure = lambda data, rng, trials: offset + rng.standard_normal(trials)  # noqa: E731
    with pytest.raises(InputError, match="picklable"):
        run_trials(closure, None, 3 * SEED_BLOCK, backend="processes", workers=2, chunk=SEED_BLOCK)
    auto = run_trials(closure, None, 3 * SEED_BLOCK, backend="auto", workers=2, chunk=SEED_BLOCK)
    serial = run_trials(closure, None, 3 * SEED_BLOCK, backend="serial")
    np.testing.assert_array_equal(auto, serial)


def test_map_tasks_keeps_order_on_every_backend():
    tasks = [(i, 1) for i in range(7)]
    expected = [i * i + 1 for i in range(7)]
    assert map_tasks(square, tasks, backend="serial") == expected
    assert map_tasks(square, tasks, backend="processes", workers=2) == expected
