import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.audit.threshold import counts_above
from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import (
    MAX_CHUNK_BLOCKS,
    SEED_BLOCK,
    Execution,
    as_batched,
    check_determinism,
    child_seed,
    map_tasks,
    plan_chunks,
    reduce_trials,
    run_blocks,
    run_trials,
)


def gaussian(data, rng, trials):
    return data + rng.standard_normal((trials, 3))


def scalar_coin(data, rng):
    return rng.random() < 0.5


def square(a, b):
    return a * a + b


def test_shape_and_dtype():
    out = run_trials(gaussian, 1.0, 100, seed=3, execution=Execution(backend="serial"))
    assert out.shape == (100, 3) and out.dtype == np.float64


@pytest.mark.parametrize("chunk", [1, SEED_BLOCK, 3 * SEED_BLOCK, 10**7])
@pytest.mark.parametrize("backend, workers", [("serial", 1), ("processes", 2), ("auto", 2)])
def test_results_do_not_depend_on_chunk_backend_or_workers(chunk, backend, workers):
    trials = 2 * SEED_BLOCK + 123
    reference = run_trials(
        gaussian, 0.0, trials, seed=11, execution=Execution(backend="serial", chunk=SEED_BLOCK)
    )
    out = run_trials(
        gaussian,
        0.0,
        trials,
        seed=11,
        execution=Execution(backend=backend, workers=workers, chunk=chunk),
    )
    np.testing.assert_array_equal(out, reference)


def test_different_seeds_and_blocks_give_different_streams():
    a = run_trials(gaussian, 0.0, 2 * SEED_BLOCK, seed=1, execution=Execution(backend="serial"))
    b = run_trials(gaussian, 0.0, 2 * SEED_BLOCK, seed=2, execution=Execution(backend="serial"))
    assert not np.array_equal(a, b)
    assert not np.array_equal(a[:SEED_BLOCK], a[SEED_BLOCK:])


def test_child_seed_is_deterministic_and_keyed():
    s = child_seed(5, 1, 2)
    assert s.spawn_key == (1, 2)
    assert np.random.default_rng(s).random() == np.random.default_rng(child_seed(5, 1, 2)).random()
    assert child_seed(s, 3).spawn_key == (1, 2, 3)


def test_two_argument_mechanism_is_looped():
    out = run_trials(scalar_coin, None, 500, seed=0, execution=Execution(backend="serial"))
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
        run_trials(mechanism, None, 10, execution=Execution(backend="serial"))


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"trials": 0}, "trials must be"),
        ({"trials": 2.5}, "trials must be"),
        ({"seed": -1}, "seed must be"),
        ({"execution": lambda: Execution(backend="gpu")}, "backend must be one of"),
        ({"execution": lambda: Execution(workers=0)}, "workers must be"),
        ({"execution": lambda: Execution(chunk=0)}, "chunk must be"),
        ({"execution": lambda: Execution(strict="yes")}, "strict must be"),
        ({"execution": "serial"}, "execution must be a dpclaims.execution.Execution"),
    ],
)
def test_bad_arguments(kwargs, fragment):
    args = {"trials": 10, **kwargs}
    with pytest.raises(InputError, match=fragment):
        if callable(args.get("execution")):
            args["execution"] = args["execution"]()
        run_trials(gaussian, 0.0, **args)


def test_mechanism_with_wrong_signature_is_refused():
    with pytest.raises(InputError, match="names its batch size trials"):
        run_trials(lambda: 0, None, 10)
    with pytest.raises(InputError, match="callable"):
        run_trials(42, None, 10)


class Locked:
    """A mechanism holding a lock: no pickler can send it to another process."""

    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, data, rng, trials):
        return rng.standard_normal(trials)


def test_closures_run_on_processes_and_unpicklable_mechanisms_are_a_clear_error():
    offset = 2.0
    closure = lambda data, rng, trials: offset + rng.standard_normal(trials)  # noqa: E731
    serial = run_trials(closure, None, 3 * SEED_BLOCK, execution=Execution(backend="serial"))
    parallel = run_trials(
        closure,
        None,
        3 * SEED_BLOCK,
        execution=Execution(backend="processes", workers=2, chunk=SEED_BLOCK),
    )
    np.testing.assert_array_equal(parallel, serial)
    with pytest.raises(InputError, match="could not serialise.*backend='serial'"):
        run_trials(
            Locked(),
            None,
            3 * SEED_BLOCK,
            execution=Execution(backend="processes", workers=2, chunk=SEED_BLOCK),
        )
    auto = run_trials(
        Locked(),
        None,
        3 * SEED_BLOCK,
        execution=Execution(backend="auto", workers=2, chunk=SEED_BLOCK),
    )
    np.testing.assert_array_equal(
        auto, run_trials(Locked(), None, 3 * SEED_BLOCK, execution=Execution(backend="serial"))
    )


def test_auto_keeps_closures_serial_so_their_side_effects_stay_visible():
    calls = []

    def counting(data, rng, trials):
        calls.append(trials)
        return rng.standard_normal(trials)

    run_trials(
        counting,
        None,
        3 * SEED_BLOCK,
        execution=Execution(backend="auto", workers=2, chunk=SEED_BLOCK),
    )
    assert (
        calls[-3:] == [SEED_BLOCK] * 3
    )  # the blocks ran in this process, after the probe's small calls
    assert sum(calls[:-3]) < SEED_BLOCK


def above_zero(outputs):
    return np.array([np.sum(outputs[:, 0] > 0), len(outputs)])


@pytest.mark.parametrize(
    "chunk, backend", [(SEED_BLOCK, "serial"), (2 * SEED_BLOCK, "processes"), (None, "processes")]
)
def test_reduce_trials_equals_reducing_the_outputs(chunk, backend):
    trials = 5 * SEED_BLOCK + 7
    outputs = run_trials(gaussian, 0.0, trials, seed=4, execution=Execution(backend="serial"))
    counts = reduce_trials(
        gaussian,
        0.0,
        trials,
        above_zero,
        seed=4,
        execution=Execution(backend=backend, workers=2, chunk=chunk),
    )
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, [np.sum(outputs[:, 0] > 0), trials])


def test_reduce_trials_refuses_float_reducers():
    with pytest.raises(InputError, match="integer counts"):
        reduce_trials(
            gaussian, 0.0, 100, lambda x: x.mean(axis=0), execution=Execution(backend="serial")
        )
    with pytest.raises(InputError, match="reducer must be callable"):
        reduce_trials(gaussian, 0.0, 100, "sum", execution=Execution(backend="serial"))


def test_chunk_plan_covers_a_range_of_the_stream_with_whole_blocks():
    trials = 3 * SEED_BLOCK + 100
    chunks = plan_chunks(trials, SEED_BLOCK, 2, start=SEED_BLOCK + 5, stop=3 * SEED_BLOCK + 50)
    flat = [b for c in chunks for b in c]
    assert flat == [(1, SEED_BLOCK, 5, SEED_BLOCK), (2, SEED_BLOCK, 0, SEED_BLOCK), (3, 100, 0, 50)]
    whole = run_trials(gaussian, 0.0, trials, seed=9, execution=Execution(backend="serial"))
    part = np.concatenate([run_blocks(gaussian, 0.0, child_seed(9), c) for c in chunks])
    np.testing.assert_array_equal(part, whole[SEED_BLOCK + 5 : 3 * SEED_BLOCK + 50])
    big = plan_chunks(10**8, None, 2)
    assert max(len(c) for c in big) == MAX_CHUNK_BLOCKS


def global_state(data, rng, trials):
    return np.random.standard_normal(trials)


def test_mechanism_ignoring_its_rng_is_detected_with_a_warning():
    with pytest.warns(RuntimeWarning, match="use|rng argument"):
        run_trials(global_state, None, 100, execution=Execution(backend="serial", strict=False))
    with pytest.warns(RuntimeWarning, match="global_state"):
        assert check_determinism(global_state, None, seed=0) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_determinism(gaussian, 0.0, seed=0) is True


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"backend": "processes", "scheduler": "tcp://127.0.0.1:1"}, "needs backend='dask'"),
        ({"backend": "dask", "scheduler": ""}, "scheduler must be"),
    ],
)
def test_scheduler_needs_the_dask_backend(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        run_trials(gaussian, 0.0, 10, execution=Execution(**kwargs))


def test_map_tasks_keeps_order_on_every_backend():
    tasks = [(i, 1) for i in range(7)]
    expected = [i * i + 1 for i in range(7)]
    assert map_tasks(square, tasks, Execution(backend="serial")) == expected
    assert map_tasks(square, tasks, Execution(backend="processes", workers=2)) == expected


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(-5, 5), min_size=0, max_size=40),
    thresholds=st.lists(
        st.one_of(st.integers(-6, 6).map(float), st.just(-np.inf)), min_size=1, max_size=12
    ),
)
def test_counts_above_matches_brute_force_with_ties_and_unsorted_thresholds(scores, thresholds):
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(thresholds)
    np.testing.assert_array_equal(counts_above(s, t), [np.sum(s > v) for v in t])


@settings(max_examples=60)
@given(
    trials=st.integers(1, 20 * SEED_BLOCK),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    chunk=st.one_of(st.none(), st.integers(1, 5 * SEED_BLOCK)),
    workers=st.integers(1, 8),
)
def test_a_chunk_plan_covers_each_trial_of_its_range_once_in_order(trials, cut, chunk, workers):
    start, stop = sorted(int(c * trials) for c in cut)
    plan = plan_chunks(trials, chunk, workers, start=start, stop=stop)
    kept = [(b * SEED_BLOCK + lo, b * SEED_BLOCK + hi) for c in plan for b, size, lo, hi in c]
    assert [t for lo, hi in kept for t in range(lo, hi)] == list(range(start, stop))
    assert all(
        size == min(SEED_BLOCK, trials - b * SEED_BLOCK) for c in plan for b, size, _, _ in c
    )
    assert len(plan) == len(list(plan))


def test_a_backend_must_say_how_it_opens_and_auto_opened_unchosen_runs_serially():
    from dpclaims.execution.backends import AutoBackend, Backend, Runner, _ProcessRunner

    class Nowhere(Backend):  # no open(): not a backend
        pass

    with pytest.raises(TypeError, match="abstract"):
        Nowhere()
    runner = AutoBackend().open(4)
    assert type(runner) is Runner and not isinstance(runner, _ProcessRunner)
