"""Per-call mechanisms (dpclaims.percall): seeding per trial, every random-source kind, the same
outputs whatever the worker count."""

import json

import numpy as np
import pytest

from dpclaims import InputError, PrivacyClaim, percall
from dpclaims.audit import audit
from dpclaims.audit.percall import PARALLEL_MIN_CALLS, seed_type_of
from dpclaims.execution import Execution


def noisy_sum(data, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0)


def with_random_state(data, random_state):
    assert isinstance(random_state, np.random.RandomState)
    return float(np.sum(data)) + random_state.laplace(0.0, 1.0)


def with_seed(data, seed):
    assert isinstance(seed, int) and 0 <= seed < 2**32
    return float(np.sum(data)) + np.random.default_rng(seed).laplace(0.0, 1.0)


def annotated(data, source: np.random.Generator):
    assert isinstance(source, np.random.Generator)
    return float(np.sum(data)) + source.laplace(0.0, 1.0)


def unnamed(data, s):
    return float(np.sum(data)) + np.random.RandomState(s).laplace(0.0, 1.0)


def two_outputs(data, rng):
    return np.array([np.sum(data), 0.0]) + rng.standard_normal(2)


@pytest.mark.parametrize(
    ("func", "kind"),
    [
        (noisy_sum, "generator"),
        (with_random_state, "random_state"),
        (with_seed, "int"),
        (annotated, "generator"),
        (unnamed, None),
    ],
)
def test_seed_type_read_from_the_signature(func, kind):
    assert seed_type_of(func) == kind


@pytest.mark.parametrize("func", [noisy_sum, with_random_state, with_seed, annotated])
def test_each_random_source_gets_its_own_seed_per_trial(func):
    mechanism = percall(func, execution=Execution(workers=1))
    out = mechanism(np.zeros(3), np.random.default_rng(5), 50)
    assert out.shape == (50, 1)
    assert len(np.unique(out)) == 50  # every trial its own draw
    again = mechanism(np.zeros(3), np.random.default_rng(5), 50)
    np.testing.assert_array_equal(out, again)


def test_seed_type_given_for_a_name_it_cannot_read():
    with pytest.raises(InputError, match="seed_type="):
        percall(unnamed)
    out = percall(unnamed, seed_type="int")(np.zeros(2), np.random.default_rng(0), 20)
    assert len(np.unique(out)) == 20


def test_same_seed_same_outputs_for_one_and_two_workers():
    trials = PARALLEL_MIN_CALLS + 44  # spread over workers
    outs = [
        percall(two_outputs, execution=Execution(workers=w, backend=b))(
            np.ones(4), np.random.default_rng(11), trials
        )
        for w, b in ((1, "serial"), (2, "processes"))
    ]
    assert outs[0].shape == (trials, 2)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize(
    ("func", "match"),
    [
        (lambda data, rng, trials: 0.0, "already batched"),
        (lambda data: 0.0, "percall needs func"),
        (3, "percall needs a function"),
    ],
)
def test_bad_functions_get_one_line(func, match):
    with pytest.raises(InputError, match=match):
        percall(func, seed_type="generator")


def test_bad_seed_type():
    with pytest.raises(InputError, match="seed_type"):
        percall(noisy_sum, seed_type="philox")


def test_audit_of_a_per_call_leak():
    def leaky(data, rng):  # releases its largest record, a little noise added
        return float(np.max(data)) + rng.normal(0.0, 0.01)

    result = audit(
        percall(leaky, execution=Execution(workers=1)),
        np.zeros(5),
        np.append(np.zeros(4), 1.0),
        PrivacyClaim(1.0, 0.0),
        trials=400,
        execution=Execution(workers=1),
    )
    assert result.verdict == "violation" and result.infinite


LEAKY_MODULE = """
import json

import numpy as np

def release_max(data, seed):
    return float(data.x.max()) + np.random.default_rng(seed).normal(0.0, 0.01)
"""


def test_cli_runs_a_per_call_function_sequentially(tmp_path, monkeypatch, capsys):
    from dpclaims.cli import main

    (tmp_path / "percall_leak_zz.py").write_text(LEAKY_MODULE)
    np.savez(tmp_path / "d0.npz", x=np.zeros((5, 1, 1)))
    np.savez(tmp_path / "d1.npz", x=np.pad(np.ones((1, 1, 1)), ((0, 4), (0, 0), (0, 0))))
    monkeypatch.chdir(tmp_path)
    argv = ["audit", "percall_leak_zz:release_max", "--d0", "d0.npz", "--d1", "d1.npz"]
    argv += ["--epsilon", "1", "--delta", "0", "--trials", "4000", "--workers", "1"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1 and "verdict       violation" in out
    assert "decided at look 1 of 4 (500 fresh trials per dataset" in out
    assert err.startswith("estimate: ") and "look 1/4: 500 trials, violation" in err
    code = main([*argv, "--fixed-trials", "--json"])
    assert code == 1 and json.loads(capsys.readouterr().out)["trials"] == 4000


def test_cli_searches_for_a_per_call_function_sequentially(tmp_path, monkeypatch, capsys):
    from dpclaims.cli import main

    (tmp_path / "percall_leak_zy.py").write_text(LEAKY_MODULE)
    np.savez(tmp_path / "d0.npz", x=np.linspace(0.25, 0.75, 5)[:, None, None])
    monkeypatch.chdir(tmp_path)
    argv = ["audit", "percall_leak_zy:release_max", "--d0", "d0.npz", "--d1", "d0.npz"]
    argv += ["--epsilon", "1", "--delta", "0", "--workers", "1", "--search", "--json"]
    code = main([*argv, "--trials", "20000"])  # fixed: screens of 2,000
    record = json.loads(capsys.readouterr().out)
    assert code == 1 and record["verdict"] == "violation"
    found = record["search"]
    assert found["screen_trials"] == 500 and record["trials"] == 500  # the first look decided
    assert found["samples"] == found["screening_samples"] + 2 * 500
    code = main([*argv, "--trials", "1000", "--fixed-trials"])
    record = json.loads(capsys.readouterr().out)
    assert code == 1 and record["search"]["screen_trials"] == 100 and record["trials"] == 1000
