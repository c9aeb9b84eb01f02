"""Safe by default: bounded plans and budgets, calling conventions, read-only data, strict mode
and array neighbours."""

import math
from dataclasses import replace

import numpy as np
import pytest

from dpclaims.audit import Neighbours, audit
from dpclaims.data import UserDataset, replace_user
from dpclaims.errors import InputError, MechanismError, NotNeighboursError
from dpclaims.execution import (
    DETERMINISM_PROBE,
    SEED_BLOCK,
    Execution,
    TaskGrid,
    as_batched,
    plan_chunks,
    run_trials,
    session,
)
from dpclaims.privacy import PrivacyClaim
from dpclaims.resources import (
    FIXED_SECONDS,
    HELD_SECONDS,
    OVERHEAD,
    Limits,
    Probe,
    Workload,
    check_budget,
)

SERIAL = Execution(backend="serial", strict=False)
ADD_REMOVE = PrivacyClaim(epsilon=1.0, delta=1e-5, relation="add-remove")
FAST = dict(claim=PrivacyClaim(epsilon=1.0, delta=1e-5), trials=2000, execution=SERIAL)


def gauss(data, rng, trials):
    return np.sum(data) + rng.standard_normal(trials)


# -- bounded resources -------------------------------------------------------------------------


def test_a_plan_of_a_trillion_trials_is_computed_on_demand():
    plan = plan_chunks(10**12, None, 2, start=SEED_BLOCK)
    assert len(plan) == math.ceil((math.ceil(10**12 / SEED_BLOCK) - 1) / 32)
    assert plan[0][0] == (1, SEED_BLOCK, 0, SEED_BLOCK)
    assert plan[len(plan) - 1][-1] == (
        10**12 // SEED_BLOCK,
        10**12 % SEED_BLOCK,
        0,
        10**12 % SEED_BLOCK,
    )
    tasks = TaskGrid([("a",), ("b",)], plan, ("z",))
    assert len(tasks) == 2 * len(plan) and tasks[len(plan)] == ("b", plan[0], "z")
    with pytest.raises(IndexError):
        tasks[len(tasks)]


def test_chunks_are_submitted_a_few_at_a_time(monkeypatch):
    seen = []

    class Recorder(list):
        def __getitem__(self, i):
            seen.append(i)
            return super().__getitem__(i)

    with session(Execution(backend="processes", workers=2)) as s:
        stream = s.stream(pow, Recorder([(i, 2) for i in range(100)]))
        first = next(stream)
        assert (
            len(seen) <= 4 + 1 and first[1] == first[0] ** 2
        )  # a window of 2 × workers, not all 100
        assert sorted(v for _, v in [first, *stream]) == [i * i for i in range(100)]


def probe(seconds_per_trial=1e-6, bytes_per_trial=100.0, width=1):
    return Probe(
        seconds_per_trial=seconds_per_trial,
        bytes_per_trial=bytes_per_trial,
        bytes_fixed=0.0,
        width=width,
        trials=SEED_BLOCK,
    )


def budget(found, trials, *, max_seconds=math.inf, max_memory=math.inf):
    work = Workload(
        trials=trials,
        held=lambda n: min(n, SEED_BLOCK),
        workers=2,
        parallel=True,
        minimum=100,
        block=SEED_BLOCK,
        probe_trials=DETERMINISM_PROBE,
    )
    return check_budget(found, work, Limits(max_seconds=max_seconds, max_memory=max_memory))


def test_a_run_over_the_time_limit_is_refused_with_the_largest_count_that_fits():
    # OVERHEAD × 2 sides × 1e6 × 1 µs / (1 + 0.5 × 1 extra worker) + held outputs + fixed
    held = HELD_SECONDS * 2 * 2 * SEED_BLOCK
    assert budget(probe(), 10**6, max_seconds=3600).seconds == pytest.approx(
        OVERHEAD * 2 * 1.0 / 1.5 + held + FIXED_SECONDS
    )
    with pytest.raises(
        InputError,
        match=r"max_seconds=3600; the largest count that fits is trials=890_000_000;",
    ):
        budget(probe(), 10**12, max_seconds=3600)
    with pytest.raises(
        InputError,
        match=r"max_memory=1.074e\+09 bytes \(1 GB\); the largest count that fits is trials=350;",
    ):
        budget(probe(bytes_per_trial=1e6), 10**4, max_memory=2**30)
    with pytest.raises(
        InputError, match="no trial count fits: pass fewer workers or raise the limit"
    ):
        budget(probe(bytes_per_trial=1e8), 10**4, max_memory=2**30)


def test_audit_refuses_a_huge_run_before_running_it():
    with pytest.raises(
        InputError,
        match=r"trials=1_000_000_000_000 would need about .* largest count that fits is trials=\d",
    ):
        audit(
            gauss,
            0.0,
            1.0,
            **{**FAST, "trials": 10**12, "execution": replace(SERIAL, max_seconds=60)},
        )
    with pytest.raises(InputError, match="max_memory must be a number > 0"):
        audit(gauss, 0.0, 1.0, **{**FAST, "execution": replace(SERIAL, max_memory=-1)})
    assert Limits.checked(None, 5.0).max_memory == 5.0


# -- calling conventions -----------------------------------------------------------------------


def dpsgd_logreg(data, rng, steps=5, lr=0.1):
    """A one-sample mechanism with defaulted parameters: trials must never land in ``steps``."""
    assert steps == 5
    return np.array([np.sum(data) + rng.standard_normal(), float(steps)])


def keyword_trials(data, rng, scale=1.0, *, trials):
    return np.sum(data) + scale * rng.standard_normal(trials)


def test_mechanisms_are_recognised_by_their_trials_parameter_not_by_position():
    out = run_trials(dpsgd_logreg, 0.0, 50, execution=Execution(backend="serial"))
    assert out.shape == (50, 2) and np.all(out[:, 1] == 5.0)
    assert run_trials(keyword_trials, 0.0, 50, execution=Execution(backend="serial")).shape == (
        50,
        1,
    )
    assert as_batched(gauss) is gauss
    with pytest.raises(InputError, match="names its batch size trials"):
        as_batched(lambda data, rng, n: rng.standard_normal(n))


@pytest.mark.parametrize(
    "mechanism, fragment",
    [
        (
            lambda data, rng, trials: {"a": rng.random(trials)},
            r"returned a dict \(keys \['a'\]\); return one array.*column_stack",
        ),
        (
            lambda data, rng: {"a": 1.0, "b": 2.0},
            r"returned a dict .*np.array\(\[out\['a'\], out\['b'\]\]\)",
        ),
        (lambda data, rng, trials: 3.0, r"returned one number for trials=.*shape \(trials,\)"),
    ],
    ids=["batched-dict", "one-sample-dict", "batched-scalar"],
)
def test_dict_and_scalar_outputs_say_what_to_return(mechanism, fragment):
    with pytest.raises(MechanismError, match=fragment):
        run_trials(mechanism, 0.0, 10, execution=Execution(backend="serial"))


def test_one_sample_scalars_are_accepted():
    assert run_trials(
        lambda data, rng: rng.random(), 0.0, 10, execution=Execution(backend="serial")
    ).shape == (10, 1)


def test_writing_into_a_dataset_says_datasets_are_read_only():
    def scribble(data, rng, trials):
        data.x[0] = 1.0
        return rng.random(trials)

    def scribble_array(data, rng, trials):
        data += 1.0
        return rng.random(trials)

    d0 = UserDataset(np.zeros((3, 1, 1)))
    with pytest.raises(MechanismError, match="datasets are read-only: copy first"):
        audit(scribble, d0, replace_user(d0, 0, np.ones((1, 1))), **FAST)
    x = np.zeros(3)
    with pytest.raises(MechanismError, match="datasets are read-only: copy first"):
        audit(scribble_array, x, x, **FAST)
    assert x.flags.writeable  # the caller's array is untouched


# -- strict mode and warnings ------------------------------------------------------------------


def global_noise(data, rng, trials):
    return data + np.random.standard_normal(trials)


def test_strict_mode_refuses_a_mechanism_that_ignores_rng(monkeypatch):
    with pytest.raises(MechanismError, match="strict mode"):
        audit(global_noise, 0.0, 1.0, **{**FAST, "execution": replace(SERIAL, strict=True)})
    monkeypatch.setenv("CI", "true")
    with pytest.raises(MechanismError, match="strict mode"):
        audit(global_noise, 0.0, 1.0, **{**FAST, "execution": replace(SERIAL, strict=None)})
    monkeypatch.delenv("CI")
    with pytest.warns(RuntimeWarning, match="rng argument"):
        result = audit(
            global_noise, 0.0, 1.0, **{**FAST, "execution": replace(SERIAL, strict=None)}
        )
    assert any("rng argument" in w for w in result.to_dict()["warnings"])
    assert audit(gauss, 0.0, 1.0, **FAST).to_dict()["warnings"] == []


# -- neighbour checks for plain arrays ---------------------------------------------------------


def test_a_non_neighbouring_pair_of_arrays_is_refused_not_certified():
    x0 = np.zeros((10, 2))
    x1 = x0.copy()
    x1[:4] = 7.0
    with pytest.raises(NotNeighboursError, match="differ in 4 rows"):
        audit(gauss, x0, x1, **FAST)
    result = audit(gauss, x0, x1, **FAST, neighbours=Neighbours(relation="unchecked"))
    assert result.relation == "unchecked" and "not checked" in result.warnings[0]
    one = x0.copy()
    one[3] = 1.0
    assert audit(gauss, x0, one, **FAST).relation == "replace"
    assert audit(gauss, x0, x0[1:], **{**FAST, "claim": ADD_REMOVE}).relation == "add-remove"


def test_query_answers_are_checked_against_the_stated_per_coordinate_sensitivity():
    q0, q1 = np.zeros(3), np.array([0.5, 0.25, 0.0])
    assert (
        audit(
            gauss, q0, q1, **FAST, neighbours=Neighbours(relation="query", sensitivity=0.5)
        ).relation
        == "query"
    )
    per_coordinate = np.array([0.5, 0.25, 0.1])
    assert audit(
        gauss, q0, q1, **FAST, neighbours=Neighbours(relation="query", sensitivity=per_coordinate)
    )
    with pytest.raises(
        NotNeighboursError,
        match=r"differ by 0.5 at index \(0,\), more than the per-coordinate sensitivity=0.4",
    ):
        audit(gauss, q0, q1, **FAST, neighbours=Neighbours(relation="query", sensitivity=0.4))
    with pytest.raises(InputError, match="needs the per-coordinate sensitivity"):
        audit(gauss, q0, q1, **FAST, neighbours=Neighbours(relation="query"))
    with pytest.raises(InputError, match="needs the per-coordinate sensitivity"):
        audit(
            gauss, q0, q1, **FAST, neighbours=Neighbours(relation="query", sensitivity=np.ones(2))
        )


def test_user_datasets_of_different_shapes_say_which_dimension_differs():
    d0 = UserDataset(np.zeros((4, 2, 3)), np.zeros((4, 2)))
    cases = [
        (
            UserDataset(np.zeros((5, 2, 3)), np.zeros((5, 2))),
            "number of users differs: n = 4 in d0, 5 in d1",
        ),
        (
            UserDataset(np.zeros((4, 3, 3)), np.zeros((4, 3))),
            "items per user differ: m = 2 in d0, 3 in d1",
        ),
        (
            UserDataset(np.zeros((4, 2, 1)), np.zeros((4, 2))),
            "feature size differs: d = 3 in d0, 1 in d1",
        ),
        (UserDataset(np.zeros((4, 2, 3))), r"labels \(y\) are present only in d0"),
    ]
    for d1, fragment in cases:
        with pytest.raises(NotNeighboursError, match=fragment):
            audit(gauss, d0, d1, **FAST)


def test_run_trials_refuses_more_outputs_than_fit_in_memory():
    with pytest.raises(
        InputError,
        match=r"over the limit max_memory=.*the largest count that fits is trials=4[0-9]_",
    ):
        run_trials(
            gauss,
            0.0,
            10**9,
            execution=Execution(backend="serial", max_memory=2**30),
        )
    with pytest.raises(MechanismError, match="strict mode"):
        run_trials(global_noise, 0.0, 100, execution=Execution(backend="serial", strict=True))
