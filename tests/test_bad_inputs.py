"""The bad-input catalogue (docs/bad_inputs.md): each case gets an error naming the argument and the
fix.

API cases raise a dpclaims exception (or warn) with a message matching the catalogue; CLI cases
exit with code 2 and one line on stderr, and leave no half-written output behind.
"""

import contextlib
import io
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpclaims import PrivacyClaim, UserDataset, replace_user
from dpclaims import claims as registry
from dpclaims.atomic import staged_directory
from dpclaims.audit import AuditTest, Neighbours, Split, audit, one_run_audit
from dpclaims.claims.checks.murata_suzuki_2023.section6 import Section6
from dpclaims.cli import main
from dpclaims.data import RELATIONS, UNITS
from dpclaims.errors import InputError, MechanismError, NotNeighboursError
from dpclaims.execution import Execution, run_trials
from dpclaims.rates import fit_power_law, sweep
from dpclaims.testing import assert_private


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


def mean_mech(data, rng, trials):
    return float(data.x.mean()) + rng.standard_normal(trials)


def global_noise(data, rng, trials):
    return data + np.random.standard_normal(trials)


def rate(n, rng):
    return 1.0 / n


def _datasets():
    d0 = UserDataset(np.zeros((4, 2, 1)))
    return d0, replace_user(d0, 1, np.ones((2, 1)))


def _far():
    d0, d1 = _datasets()
    return d0, replace_user(d1, 2, np.ones((2, 1)))


def _audit(mechanism=gauss, d0=0.0, d1=1.0, *, trials=1000, confidence=0.95, seed=0, **fields):
    """An audit as a lambda, its values (claim, test, execution) built inside it from
    ``fields``: a bad field is refused by the value that holds it."""
    claim = {k: fields.pop(k) for k in ("epsilon", "delta", "unit", "relation") if k in fields}
    test = {k: fields.pop(k) for k in ("method", "threshold", "statistic", "ci") if k in fields}

    def run():
        return audit(
            mechanism,
            d0,
            d1,
            PrivacyClaim(**{"epsilon": 1.0, **claim}),
            trials=trials,
            confidence=confidence,
            seed=seed,
            test=AuditTest(**test),
            execution=Execution(**{"backend": "serial", **fields}),
        )

    return run


def _corrupt_checkpoint(tmp_path):
    run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path))
    next(tmp_path.glob("*.npz")).write_bytes(b"garbage")
    return lambda: run_trials(
        gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path)
    )


def _section6_corrupt_cell(tmp_path):
    setup = Section6(
        samples=500, rounds=20, seeds=2, clips=(1.0,), period_fractions=(0.5,), etas=(0.5,)
    )
    setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "s6"))
    (tmp_path / "s6" / "0-gd-0.json").write_text("{trunc")
    return lambda: setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "s6"))


def _section6_foreign(tmp_path):
    small = dict(samples=500, rounds=20, clips=(1.0,), period_fractions=(0.5,), etas=(0.5,))
    Section6(seeds=2, **small).run(
        execution=Execution(backend="serial", checkpoint=tmp_path / "s6")
    )
    return lambda: Section6(seeds=3, **small).run(
        execution=Execution(backend="serial", checkpoint=tmp_path / "s6")
    )


def _section6_unfinished(tmp_path):
    setup = Section6(
        samples=500, rounds=20, seeds=2, clips=(1.0,), period_fractions=(0.5,), etas=(0.5,)
    )
    setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "s6"))
    (tmp_path / "s6" / "1-gd-0.json").unlink()
    return lambda: setup.summarize_finished(tmp_path / "s6")


def _foreign_checkpoint(tmp_path):
    run_trials(gauss, 0.0, 100, execution=Execution(backend="serial", checkpoint=tmp_path))
    return lambda: run_trials(
        gauss, 0.0, 200, execution=Execution(backend="serial", checkpoint=tmp_path)
    )


# (case id, factory: tmp_path -> zero-argument call, expected exception, message fragment)
API_CASES = [
    (
        "epsilon-zero",
        lambda t: lambda: PrivacyClaim(0.0),
        InputError,
        r"epsilon must be a finite number > 0.*epsilon=1\.0",
    ),
    (
        "epsilon-inf",
        lambda t: lambda: PrivacyClaim(math.inf),
        InputError,
        "epsilon must be a finite number",
    ),
    (
        "epsilon-nan-audit",
        lambda t: _audit(epsilon=math.nan),
        InputError,
        "epsilon must be a finite number",
    ),
    (
        "delta-one",
        lambda t: lambda: PrivacyClaim(1.0, delta=1.0),
        InputError,
        r"delta must be a number in \[0, 1\).*delta=1e-5",
    ),
    (
        "delta-negative",
        lambda t: _audit(delta=-1e-5),
        InputError,
        r"delta must be a number in \[0, 1\)",
    ),
    (
        "unit-unknown",
        lambda t: lambda: PrivacyClaim(1.0, unit="group"),
        InputError,
        "unit must be one of 'user', 'item'",
    ),
    (
        "trials-too-few",
        lambda t: _audit(trials=50),
        InputError,
        "trials must be a whole number >= 100",
    ),
    (
        "trials-float",
        lambda t: lambda: run_trials(gauss, 0.0, 2.5),
        InputError,
        "trials must be a whole number >= 1",
    ),
    (
        "confidence-one",
        lambda t: _audit(confidence=1.0),
        InputError,
        r"confidence must be a number in \(0, 1\).*0\.95",
    ),
    ("seed-negative", lambda t: _audit(seed=-1), InputError, "seed must be a non-negative integer"),
    (
        "calibration-fraction",
        lambda t: _audit(threshold=Split(fraction=0.999)),
        InputError,
        "fraction of 0.999 leaves",
    ),
    (
        "backend-unknown",
        lambda t: _audit(backend="gpu"),
        InputError,
        "backend must be one of 'auto', 'serial', 'processes', 'dask'",
    ),
    (
        "workers-zero",
        lambda t: _audit(workers=0),
        InputError,
        "workers must be a whole number >= 1.*omit it",
    ),
    (
        "scheduler-without-dask",
        lambda t: _audit(backend="processes", scheduler="tcp://127.0.0.1:8786"),
        InputError,
        "needs backend='dask'",
    ),
    (
        "data-nan",
        lambda t: lambda: UserDataset(np.array([[[np.nan]]])),
        InputError,
        "x contains 1 NaN or infinite value",
    ),
    (
        "labels-inf",
        lambda t: lambda: UserDataset(np.zeros((2, 1, 1)), np.array([[0.0], [np.inf]])),
        InputError,
        "y contains 1 NaN or infinite",
    ),
    (
        "data-empty",
        lambda t: lambda: UserDataset(np.zeros((0, 1, 1))),
        InputError,
        "x must have at least one user, item and feature",
    ),
    (
        "data-ragged",
        lambda t: lambda: UserDataset([[1.0, 2.0], [3.0]]),
        InputError,
        "x must be a numeric array",
    ),
    (
        "data-wrong-rank",
        lambda t: lambda: UserDataset(np.zeros(3)),
        InputError,
        r"x must have shape \(n, m, d\)",
    ),
    (
        "labels-wrong-shape",
        lambda t: lambda: UserDataset(np.zeros((3, 2, 1)), np.zeros(3)),
        InputError,
        r"y must have shape \(n, m\) = \(3, 2\)",
    ),
    (
        "not-neighbours",
        lambda t: _audit(mean_mech, *_far()),
        NotNeighboursError,
        "not neighbours under unit='user'.*2 users differ",
    ),
    (
        "not-neighbours-item",
        lambda t: _audit(mean_mech, *_far(), unit="item"),
        NotNeighboursError,
        "an item-level claim needs",
    ),
    (
        "wrong-relation",
        lambda t: _audit(mean_mech, *_datasets(), relation="add-remove"),
        NotNeighboursError,
        "relation='add-remove'",
    ),
    (
        "mechanism-wrong-shape",
        lambda t: _audit(lambda d, rng, trials: np.zeros(trials + 1)),
        MechanismError,
        r"returned shape \(\d+,\) for trials=\d+; it must return \(trials, k\)",
    ),
    (
        "mechanism-nan",
        lambda t: _audit(lambda d, rng, trials: np.full(trials, np.nan)),
        MechanismError,
        "NaN or infinite outputs",
    ),
    (
        "mechanism-non-numeric",
        lambda t: _audit(lambda d, rng, trials: np.array(["a"] * trials)),
        MechanismError,
        "non-numeric outputs",
    ),
    (
        "mechanism-raises",
        lambda t: _audit(lambda d, rng, trials: 1 / 0),
        MechanismError,
        "raised ZeroDivisionError",
    ),
    (
        "mechanism-signature",
        lambda t: _audit(lambda: 0),
        InputError,
        r"must accept \(data, rng, trials\) or \(data, rng\)",
    ),
    ("mechanism-not-callable", lambda t: _audit(42), InputError, "mechanism must be callable"),
    (
        "statistic-wrong-shape",
        lambda t: _audit(statistic=lambda x: x[:10, 0]),
        InputError,
        r"statistic returned shape \(10,\)",
    ),
    (
        "unknown-claim-id",
        lambda t: lambda: registry.get("no.such.claim"),
        InputError,
        "unknown claim id 'no.such.claim'.*'dpclaims list'",
    ),
    (
        "replicates-one",
        lambda t: lambda: sweep(rate, "n", [10, 100, 1000, 10_000], replicates=1),
        InputError,
        r"replicates must be a whole number >= 2, got 1; pass e.g. replicates=10$",
    ),
    (
        "grid-too-short",
        lambda t: (
            lambda: sweep(
                rate, "n", [10, 100, 1000], replicates=2, execution=Execution(backend="serial")
            )
        ),
        InputError,
        "a rate fit needs at least 4 grid values",
    ),
    (
        "grid-narrow",
        lambda t: lambda: fit_power_law([100, 120, 140, 160], np.ones((4, 3))),
        InputError,
        "an exponent fit needs at least 1 decade",
    ),
    (
        "grid-non-positive",
        lambda t: lambda: fit_power_law([0, 10, 100, 1000], np.ones((4, 3))),
        InputError,
        "must be positive",
    ),
    (
        "errors-wrong-shape",
        lambda t: lambda: fit_power_law([10, 100, 1000, 10_000], np.ones((3, 3))),
        InputError,
        r"errors must have shape \(G, R\)",
    ),
    ("checkpoint-corrupt", _corrupt_checkpoint, InputError, "checkpoint file .* is corrupt"),
    (
        "checkpoint-foreign",
        _foreign_checkpoint,
        InputError,
        r"belongs to a run with different arguments \(differs in: .*trials",
    ),
    (
        "one-run-one-canary",
        lambda t: lambda: one_run_audit(np.array([0.5]), np.array([True]), epsilon=1.0),
        InputError,
        r"1 canary is too few for the guesses k_plus=1, k_minus=1 \(k_plus and k_minus by "
        r"default max\(1, m // 10\)\)",
    ),
    (
        "claim-and-loose-words",
        lambda t: (
            lambda: one_run_audit(np.zeros(20), np.zeros(20, bool), PrivacyClaim(1.0), epsilon=2.0)
        ),
        InputError,
        r"pass epsilon inside claim=PrivacyClaim\(\.\.\.\) or instead of it, not both",
    ),
    (
        "claim-not-a-claim",
        lambda t: lambda: one_run_audit(np.zeros(20), np.zeros(20, bool), 1.0),
        InputError,
        "claim must be a PrivacyClaim, got float 1.0",
    ),
    (
        "no-claim",
        lambda t: lambda: one_run_audit(np.zeros(20), np.zeros(20, bool)),
        InputError,
        "no claim to audit",
    ),
    (
        "word-not-in-vocabulary",
        lambda t: lambda: PrivacyClaim(1.0, unit="group"),
        InputError,
        "unit must be one of 'user', 'item', got 'group'",
    ),
    (
        "section6-seeds-one",
        lambda t: lambda: Section6(seeds=1),
        InputError,
        "seeds must be >= 2: the paper's paired t-test needs at least two seeds",
    ),
    (
        "section6-real-samples",
        lambda t: lambda: Section6("diabetes", samples=100),
        InputError,
        "samples shrinks the stand-ins only; leave it None for the real set 'diabetes'",
    ),
    (
        "section6-cell-corrupt",
        _section6_corrupt_cell,
        InputError,
        "checkpoint cell .* is corrupt .* delete it",
    ),
    ("section6-foreign", _section6_foreign, InputError, "was written for different settings"),
    (
        "section6-unfinished",
        _section6_unfinished,
        InputError,
        r"has 1 finished seed\(s\); the paired t-test needs 2",
    ),
    (
        "percall-seed-type-unknown",
        lambda t: lambda: _percall()(lambda data, s: 0.0),
        InputError,
        "pass seed_type='generator', 'random_state' or 'int'",
    ),
    (
        "percall-batched",
        lambda t: lambda: _percall()(lambda data, rng, trials: 0.0),
        InputError,
        "already batched; pass it to audit as it is",
    ),
    (
        "percall-signature",
        lambda t: lambda: _percall()(lambda data: 0.0),
        InputError,
        r"percall needs func\(data, rng\)",
    ),
    (
        "sequential-first-above-trials",
        lambda t: (
            lambda: _audit_sequential()(
                lambda d, rng, trials: rng.random(trials), 0.0, 1.0, trials=1000, first=2000
            )
        ),
        InputError,
        "first=2,000 is more than trials=1,000",
    ),
    (
        "search-sequential-not-a-flag",
        lambda t: (
            lambda: _search()(
                lambda q, rng, trials: rng.random((trials, 1)),
                [_search_pair()("one", np.zeros(1), np.ones(1))],
                PrivacyClaim(1.0),
                sequential="yes",
            )
        ),
        InputError,
        r"^sequential must be True or False, got 'yes'$",
    ),
]


def _percall():
    from dpclaims import percall

    return percall


def _audit_sequential():
    from dpclaims import audit_sequential

    return audit_sequential


def _search():
    from dpclaims.audit.search import search

    return search


def _search_pair():
    from dpclaims.audit.search import Pair

    return Pair


@pytest.mark.parametrize(
    "factory, error, fragment", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES]
)
def test_api_bad_input_gets_a_specific_error(tmp_path, factory, error, fragment):
    call = factory(tmp_path)
    with pytest.raises(error, match=fragment):
        call()


def test_mechanism_ignoring_its_rng_gets_a_warning_naming_the_fix():
    with pytest.warns(
        RuntimeWarning, match="global_noise.*different outputs for the same seed.*rng argument"
    ):
        audit(
            global_noise,
            0.0,
            1.0,
            trials=1000,
            claim=PrivacyClaim(epsilon=1.0),
            execution=Execution(backend="serial", strict=False),
        )


def _npz(path, x):
    np.savez(path, x=x)
    return str(path)


USER_CODE = {
    "mechs.py": "def mean(data, rng, trials):\n"
    "    return data.x.mean() + rng.standard_normal(trials)\n"
    "VALUE = 3\n",
    "broken.py": "import numpy as np\nSCALE = 1 / 0\n",
    "syntax.py": "def f(:\n",
    "needs.py": "import no_such_package_zzz\n",
}


def _cli_files(tmp_path, results):
    """A CLI case's working folder: user code, good and bad datasets, a results document,
    folders not reports."""
    x0 = np.zeros((4, 1, 1))
    x1, far, nan = x0.copy(), x0.copy(), x0.copy()
    x1[1] = far[1] = far[2] = 1.0
    nan[0] = np.nan
    for name, text in USER_CODE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "schema.json").write_text('{"claims": []}')
    (tmp_path / "results.json").write_text(json.dumps(results.to_json()))
    d0 = _npz(tmp_path / "d0.npz", x0)
    whole = Path(d0).read_bytes()
    (tmp_path / "truncated.npz").write_bytes(whole[: len(whole) // 2])
    np.save(tmp_path / "plain.npy", x0)
    (tmp_path / "npy-named.npz").write_bytes((tmp_path / "plain.npy").read_bytes())
    (tmp_path / "text.npz").write_text("id,value\n1,2\n")
    np.savez(tmp_path / "objects.npz", x=np.array([{"a": 1}], dtype=object))
    np.savez(tmp_path / "nox.npz", features=x0)
    zeros, flags = np.zeros(30), np.zeros(30, bool)
    np.savez(tmp_path / "scores-none.npz", losses=zeros)
    np.savez(tmp_path / "scores-no-s1.npz", s0=zeros)
    np.savez(tmp_path / "scores-both.npz", s0=zeros, s1=zeros, scores=zeros, included=flags)
    np.savez(tmp_path / "scores-2d.npz", s0=np.zeros((30, 2)), s1=zeros)
    np.savez(tmp_path / "scores-nan.npz", s0=np.r_[zeros[:-1], np.nan], s1=zeros)
    np.savez(tmp_path / "scores-text.npz", s0=np.array(["0.1"] * 30), s1=zeros)
    np.savez(tmp_path / "scores-flags.npz", scores=zeros, included=np.zeros(29, bool))
    np.savez(tmp_path / "scores-flag-values.npz", scores=zeros, included=np.full(30, 2))
    np.savez(tmp_path / "scores-runs.npz", s0=zeros, s1=zeros)
    np.savez(tmp_path / "scores-canaries.npz", scores=zeros, included=flags)
    np.savez(tmp_path / "scores-one.npz", scores=zeros[:1], included=flags[:1])
    (tmp_path / "keep.txt").write_text("mine")  # the folder: keep.txt and src/main.py
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('mine')\n")
    (tmp_path / "important" / "data").mkdir(parents=True)
    (tmp_path / "important" / "thesis.tex").write_text("years of work")
    (tmp_path / "important" / "data" / "a.csv").write_text("1,2")
    with staged_directory(tmp_path / "report") as staging:
        (staging / "report.md").write_text("an old report")
    (tmp_path / "report" / "notes.txt").write_text("mine, added later")
    return {
        "d0": d0,
        "d1": _npz(tmp_path / "d1.npz", x1),
        "far": _npz(tmp_path / "far.npz", far),
        "nan": _npz(tmp_path / "nan.npz", nan),
        "empty": _npz(tmp_path / "empty.npz", np.zeros((0, 1, 1))),
        "bad": str(tmp_path / "bad.json"),
        "schema": str(tmp_path / "schema.json"),
        "out": str(tmp_path / "out"),
        "home": str(Path.home()),
    }


def _tree(folder):
    """Every path under ``folder`` with its bytes (None for a folder), caches left out."""
    return sorted(
        (str(p.relative_to(folder)), p.read_bytes() if p.is_file() else None)
        for p in folder.rglob("*")
        if "__pycache__" not in p.parts
    )


REF = "lla24.alg1.reference_eps"  # a quick claim: every case below fails before its check runs
USER = ["audit", "mechs:mean", "--d1", "{d1}", "--d0"]

CLI_CASES = [
    ("cli-epsilon", ["audit", "gaussian", "--epsilon", "0"], "epsilon must be a finite number > 0"),
    (
        "cli-epsilon-nan",
        ["audit", "gaussian", "--epsilon", "nan"],
        "epsilon must be a finite number > 0",
    ),
    ("cli-delta", ["audit", "gaussian", "--delta", "1.5"], r"delta must be a number in \[0, 1\)"),
    ("cli-trials", ["audit", "gaussian", "--trials", "5"], "trials must be a whole number >= 100"),
    (
        "cli-trials-text",
        ["audit", "gaussian", "--trials", "many"],
        "argument --trials: invalid int value",
    ),
    (
        "cli-confidence",
        ["audit", "gaussian", "--confidence", "1"],
        r"confidence must be a number in \(0, 1\)",
    ),
    ("cli-backend", ["audit", "gaussian", "--backend", "gpu"], "backend must be one of"),
    ("cli-workers", ["audit", "gaussian", "--workers", "0"], "workers must be a whole number >= 1"),
    ("cli-unknown-mechanism", ["audit", "nosuch"], "unknown mechanism 'nosuch'"),
    (
        "cli-threat-model",
        ["audit", "dp-sgd", "--threat-model", "hidden"],
        "--threat-model must be one of 'final', 'all-iterates'",
    ),
    ("cli-canary", ["audit", "dp-sgd", "--canary", "member"], "--canary must be one of"),
    (
        "cli-threat-model-not-dpsgd",
        ["audit", "gaussian", "--threat-model", "final"],
        "'gaussian' is not DP-SGD",
    ),
    (
        "cli-nan-dataset",
        ["audit", "mechs:mean", "--d0", "{nan}", "--d1", "{d1}"],
        "--d0 file .*: x contains 1 NaN or infinite value",
    ),
    (
        "cli-empty-dataset",
        ["audit", "mechs:mean", "--d0", "{empty}", "--d1", "{d1}"],
        "x must have at least one user",
    ),
    (
        "cli-not-neighbours",
        ["audit", "mechs:mean", "--d0", "{d0}", "--d1", "{far}"],
        "not neighbours under unit='user'",
    ),
    (
        "cli-npz-missing",
        [*USER, "missing.npz"],
        r"cannot read --d0 file 'missing.npz': No such file or directory; pass an existing \.npz",
    ),
    (
        "cli-npz-truncated",
        [*USER, "truncated.npz"],
        r"--d0 file 'truncated.npz' is damaged or truncated \(BadZipFile.*"
        r"numpy.savez\(path, x=\.\.\., y=\.\.\.\)",
    ),
    (
        "cli-npy",
        [*USER, "plain.npy"],
        r"--d0 file 'plain.npy' is a \.npy file \(one array\); a dataset is a \.npz archive: save",
    ),
    ("cli-npy-named-npz", [*USER, "npy-named.npz"], r"is a \.npy file \(one array\)"),
    (
        "cli-npz-text",
        [*USER, "text.npz"],
        r"--d0 file 'text.npz' is not a \.npz archive \(no zip header\); save the dataset with",
    ),
    (
        "cli-npz-pickled",
        [*USER, "objects.npz"],
        r"holds Python objects \(pickled data\), which dpclaims does not load; "
        "store numeric arrays",
    ),
    (
        "cli-npz-no-x",
        [*USER, "nox.npz"],
        r"--d0 file 'nox.npz' has no array 'x' \(it holds 'features'\); save the dataset",
    ),
    (
        "cli-same-data",
        [*USER, "{d1}"],
        "--d0 and --d1 hold the same data, so there is nothing to audit; pass as --d1",
    ),
    (
        "cli-scores-missing-arrays",
        ["audit", "--scores", "scores-none.npz"],
        r"--scores file 'scores-none.npz' holds neither layout \(it holds 'losses'\); save "
        r"numpy.savez\(path, s0=..., s1=...\)",
    ),
    (
        "cli-scores-missing-s1",
        ["audit", "--scores", "scores-no-s1.npz"],
        r"has no array 's1' \(it holds 's0'\)",
    ),
    (
        "cli-scores-both-layouts",
        ["audit", "--scores", "scores-both.npz"],
        r"holds both layouts \(it holds 's0', 's1', 'scores', 'included'\)",
    ),
    (
        "cli-scores-shape",
        ["audit", "--scores", "scores-2d.npz"],
        r"array 's0' must be 1-D and non-empty, got shape \(30, 2\)",
    ),
    (
        "cli-scores-nan",
        ["audit", "--scores", "scores-nan.npz"],
        r"array 's0' holds 1 NaN or infinite value\(s\); drop those runs",
    ),
    (
        "cli-scores-text",
        ["audit", "--scores", "scores-text.npz"],
        r"array 's0' has dtype <U3, not real numbers",
    ),
    (
        "cli-scores-flags-shape",
        ["audit", "--scores", "scores-flags.npz"],
        r"'included' has shape \(29,\) but 'scores' \(30,\); one flag per canary",
    ),
    (
        "cli-scores-flag-values",
        ["audit", "--scores", "scores-flag-values.npz"],
        r"'included' must hold only True/False \(or 0/1\) flags",
    ),
    (
        "cli-scores-and-mechanism",
        ["audit", "gaussian", "--scores", "scores-nan.npz"],
        r"--scores audits scores computed elsewhere; drop a mechanism",
    ),
    (
        "cli-scores-missing-file",
        ["audit", "--scores", "nosuch.npz"],
        r"cannot read --scores file 'nosuch.npz': No such file or directory",
    ),
    (
        "cli-scores-ignored-option",
        ["audit", "--scores", "scores-runs.npz", "--method", "gdp", "--trials", "5000"],
        r"--scores audits scores computed elsewhere; drop --trials, --method \(or drop --scores",
    ),
    (
        "cli-scores-seed",
        ["audit", "--scores", "scores-runs.npz", "--seed", "3"],
        "scores s0, s1 of independent runs are certified without random draws; drop --seed",
    ),
    (
        "cli-scores-one-run-figure",
        ["audit", "--scores", "scores-canaries.npz", "--figure", "f.png"],
        "one run's canary scores have no trade-off to draw .*; drop --figure",
    ),
    (
        "cli-scores-memory",
        ["audit", "--scores", "scores-runs.npz", "--max-memory-gb", "1e-6"],
        r"--scores file 'scores-runs.npz' holds 60 scores, whose audit needs about 1.88 kB of "
        r"memory, over the limit of 1.05 kB; audit a random subsample",
    ),
    (
        "cli-scores-one-canary",
        ["audit", "--scores", "scores-one.npz"],
        r"--scores file 'scores-one.npz' holds 1 canary; a one-run audit guesses",
    ),
    (
        "cli-replay-ignored-option",
        ["audit", "gaussian", "--replay", "--figure", "f.png", "--checkpoint", "cp"],
        r"--replay runs d0 and d1 on one random stream, without an audit; drop --checkpoint, "
        r"--figure \(or add --search",
    ),
    (
        "cli-audit-nothing",
        ["audit"],
        r"name a mechanism to audit .* or pass --scores scores.npz",
    ),
    (
        "cli-module-missing",
        ["audit", "nomod:f", "--d0", "{d0}", "--d1", "{d1}"],
        r"no module 'nomod' in the current folder \(.*\) or on sys.path.*path/to/file.py:function",
    ),
    (
        "cli-file-missing",
        ["audit", "./nosuch.py:f", "--d0", "{d0}", "--d1", "{d1}"],
        r"file './nosuch.py' of mechanism './nosuch.py:f' does not exist",
    ),
    (
        "cli-file-raises",
        ["audit", "./broken.py:f", "--d0", "{d0}", "--d1", "{d1}"],
        r"importing './broken.py' .* failed at .*broken.py:2: ZeroDivisionError: division by zero; "
        "fix the module",
    ),
    (
        "cli-module-syntax",
        ["audit", "syntax:f", "--d0", "{d0}", "--d1", "{d1}"],
        r"importing 'syntax' .* failed: SyntaxError: .*line 1",
    ),
    (
        "cli-module-needs-package",
        ["audit", "needs:f", "--d0", "{d0}", "--d1", "{d1}"],
        "it needs module 'no_such_package_zzz', which is not installed",
    ),
    (
        "cli-function-missing",
        ["audit", "mechs:nope", "--d0", "{d0}", "--d1", "{d1}"],
        r"'mechs' has no attribute 'nope' .*check the function's name",
    ),
    (
        "cli-not-callable",
        ["audit", "mechs.py:VALUE", "--d0", "{d0}", "--d1", "{d1}"],
        r"'VALUE' in 'mechs.py' is not callable \(it is of type int\)",
    ),
    (
        "cli-unknown-claim",
        ["rate", "no.such.claim"],
        "unknown claim id 'no.such.claim'.*'dpclaims list'",
    ),
    (
        "cli-unknown-claim-verify",
        ["verify", "--claims", "no.such.claim", "--out", "{out}"],
        "unknown claim id 'no.such.claim'",
    ),
    (
        "cli-replicates",
        ["rate", "lla24.alg1.risk", "--replicates", "1"],
        "--replicates must be a whole number >= 2, got 1; pass e.g. --replicates 20$",
    ),
    (
        "cli-figure-no-folder",
        ["rate", "lla24.alg1.risk", "--figure", "nosuch/rate.png"],
        "--figure 'nosuch/rate.png': folder 'nosuch' does not exist; "
        "create it or pass another path",
    ),
    (
        "cli-figure-is-folder",
        ["rate", "lla24.alg1.risk", "--figure", "src"],
        "--figure 'src' is a directory; pass a file name such as figure.png",
    ),
    ("cli-unknown-paper", ["list", "--paper", "nopaper"], "paper must be one of"),
    (
        "cli-results-not-json",
        ["report", "{bad}", "--out", "{out}"],
        "results file .* is not valid JSON",
    ),
    (
        "cli-results-wrong-schema",
        ["report", "{schema}", "--out", "{out}"],
        "missing required field",
    ),
    (
        "cli-out-exists",
        ["verify", "--claims", REF, "--out", "important"],
        "output directory 'important' already exists; pass --force",
    ),
    (
        "cli-force-cwd",
        ["verify", "--claims", REF, "--out", ".", "--force"],
        r"--out '\.' is the working folder, which dpclaims never replaces; pass a new folder",
    ),
    (
        "cli-force-cwd-plain",
        ["verify", "--claims", REF, "--out", "."],
        "is the working folder, which dpclaims never replaces",
    ),
    (
        "cli-force-parent",
        ["verify", "--claims", REF, "--out", "..", "--force"],
        "is a parent of the working folder",
    ),
    (
        "cli-force-home",
        ["verify", "--claims", REF, "--out", "{home}", "--force"],
        "is your home folder",
    ),
    ("cli-force-root", ["verify", "--claims", REF, "--out", "/", "--force"], "is the root folder"),
    (
        "cli-force-foreign",
        ["verify", "--claims", REF, "--out", "important", "--force"],
        r"--out 'important' is not a report folder dpclaims wrote \(it has no \.dpclaims-report "
        r"marker\), so --force leaves it alone; choose another --out",
    ),
    (
        "cli-force-foreign-file",
        ["verify", "--claims", REF, "--out", "report", "--force"],
        "--out 'report' holds 'notes.txt', which dpclaims did not write, so --force leaves the "
        "folder alone",
    ),
    (
        "cli-report-force-foreign",
        ["report", "results.json", "--out", "important", "--force"],
        "not a report folder dpclaims wrote",
    ),
]


@pytest.mark.parametrize(
    "argv, fragment", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, results, argv, fragment):
    files = _cli_files(tmp_path, results)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        try:
            code = main([a.format(**files) for a in argv])
        except SystemExit as exit_:
            code = exit_.code
    lines = stderr.getvalue().strip().splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("dpclaims: error: ")
    assert re.search(fragment, lines[0]), lines[0]
    assert "Traceback" not in stdout.getvalue()
    assert _tree(tmp_path) == before  # nothing deleted, nothing half-written


# -------------------------------------------------------------------------------------------
# Fuzzing: any input either constructs a valid object or raises InputError.
# -------------------------------------------------------------------------------------------

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.lists(st.floats(), max_size=4),
    st.lists(st.lists(st.floats(), max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
float_arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
    elements=None,
)


@settings(max_examples=300, deadline=None)
@given(x=st.one_of(float_arrays, anything), y=st.one_of(st.none(), float_arrays, anything))
def test_fuzz_user_dataset(x, y):
    try:
        data = UserDataset(x, y)
    except InputError:
        return
    assert data.x.ndim == 3 and min(data.x.shape) >= 1 and np.all(np.isfinite(data.x))
    assert data.y is None or (data.y.shape == data.x.shape[:2] and np.all(np.isfinite(data.y)))
    assert not data.x.flags.writeable


@settings(max_examples=300, deadline=None)
@given(
    epsilon=st.one_of(st.floats(), st.integers(), anything),
    delta=st.one_of(st.floats(min_value=-1, max_value=2), anything),
    unit=st.one_of(st.sampled_from(UNITS), anything),
    relation=st.one_of(st.sampled_from(RELATIONS), anything),
    source=st.text(max_size=10),
)
def test_fuzz_privacy_claim(epsilon, delta, unit, relation, source):
    try:
        claim = PrivacyClaim(epsilon, delta, unit, relation, source)
    except InputError:
        return
    assert 0 < claim.epsilon < math.inf and 0 <= claim.delta < 1
    assert claim.unit in UNITS and claim.relation in RELATIONS
    json.dumps(claim.to_dict())


# -------------------------------------------------------------------------------------------
# Resources, calling conventions, neighbour checks of arrays, strict mode (issue #19 part B;
# docs/bad_inputs.md, "Resources, calling conventions, neighbours and strict mode").
# -------------------------------------------------------------------------------------------

_SERIAL = Execution(backend="serial", strict=False)
_FAST = dict(claim=PrivacyClaim(epsilon=1.0, delta=1e-5), trials=1000, execution=_SERIAL)


def _scribble(data, rng, trials):
    data.x[0] = 1.0
    return rng.random(trials)


def _pair(x1, y0=None, y1=None):
    return UserDataset(np.zeros((4, 2, 3)), y0), UserDataset(x1, y1)


def _rows_changed():
    x1 = np.zeros((10, 2))
    x1[:4] = 7.0
    return np.zeros((10, 2)), x1


RESOURCE_CASES = [
    (
        "trials-over-time-limit",
        lambda: audit(
            gauss,
            0.0,
            1.0,
            **{**_FAST, "trials": 10**12, "execution": replace(_SERIAL, max_seconds=60)},
        ),
        InputError,
        r"trials=1_000_000_000_000 would need about .* over the limit max_seconds=60; the largest "
        r"count that fits is trials=\d",
    ),
    (
        "outputs-over-memory-limit",
        lambda: run_trials(
            gauss,
            0.0,
            10**9,
            execution=Execution(backend="serial", max_memory=2**30),
        ),
        InputError,
        r"over the limit max_memory=.*the largest count that fits is trials=\d",
    ),
    (
        "limit-not-positive",
        lambda: audit(gauss, 0.0, 1.0, **{**_FAST, "execution": replace(_SERIAL, max_seconds=0)}),
        InputError,
        "max_seconds must be a number > 0",
    ),
    (
        "mechanism-third-parameter-not-trials",
        lambda: run_trials(lambda data, rng, n: rng.random(n), 0.0, 10),
        InputError,
        "must accept .* a batched mechanism names its batch size trials",
    ),
    (
        "mechanism-dict",
        lambda: run_trials(
            lambda data, rng, trials: {"a": rng.random(trials)},
            0.0,
            10,
            execution=Execution(backend="serial"),
        ),
        MechanismError,
        r"returned a dict \(keys \['a'\]\); return one array of shape \(trials, k\)",
    ),
    (
        "mechanism-dict-one-sample",
        lambda: run_trials(
            lambda data, rng: {"a": 1.0}, 0.0, 10, execution=Execution(backend="serial")
        ),
        MechanismError,
        r"returned a dict .*return the outputs as one vector",
    ),
    (
        "mechanism-scalar",
        lambda: run_trials(
            lambda data, rng, trials: 3.0, 0.0, 10, execution=Execution(backend="serial")
        ),
        MechanismError,
        r"returned one number for trials=\d+; .* shape \(trials,\) or \(trials, k\)",
    ),
    (
        "mechanism-writes-data",
        lambda: audit(_scribble, *_pair(np.r_[np.ones((1, 2, 3)), np.zeros((3, 2, 3))]), **_FAST),
        MechanismError,
        "wrote into its dataset .* datasets are read-only: copy first",
    ),
    (
        "arrays-not-neighbours",
        lambda: audit(gauss, *_rows_changed(), **_FAST),
        NotNeighboursError,
        "differ in 4 rows; replace-one neighbours differ in at most one row",
    ),
    (
        "query-over-sensitivity",
        lambda: audit(
            gauss,
            np.zeros(3),
            np.array([0.0, 2.0, 0.0]),
            **_FAST,
            neighbours=Neighbours(relation="query", sensitivity=1.0),
        ),
        NotNeighboursError,
        r"differ by 2 at index \(1,\), more than the per-coordinate sensitivity=1.0",
    ),
    (
        "query-without-sensitivity",
        lambda: audit(
            gauss,
            np.zeros(3),
            np.array([0.0, 2.0, 0.0]),
            **_FAST,
            neighbours=Neighbours(relation="query"),
        ),
        InputError,
        "relation='query' needs the per-coordinate sensitivity",
    ),
    (
        "users-differ",
        lambda: audit(mean_mech, *_pair(np.zeros((5, 2, 3))), **_FAST),
        NotNeighboursError,
        "the number of users differs: n = 4 in d0, 5 in d1",
    ),
    (
        "items-differ",
        lambda: audit(mean_mech, *_pair(np.zeros((4, 1, 3))), **_FAST),
        NotNeighboursError,
        "the items per user differ: m = 2 in d0, 1 in d1",
    ),
    (
        "features-differ",
        lambda: audit(mean_mech, *_pair(np.zeros((4, 2, 2))), **_FAST),
        NotNeighboursError,
        "the feature size differs: d = 3 in d0, 2 in d1",
    ),
    (
        "labels-in-one",
        lambda: audit(mean_mech, *_pair(np.zeros((4, 2, 3)), None, np.zeros((4, 2))), **_FAST),
        NotNeighboursError,
        r"labels \(y\) are present only in d1",
    ),
    (
        "strict-rng",
        lambda: audit(
            global_noise, 0.0, 1.0, **{**_FAST, "execution": replace(_SERIAL, strict=True)}
        ),
        MechanismError,
        r"draws randomness from somewhere other than its rng.*\(strict mode; to run it all",
    ),
    (
        "strict-not-bool",
        lambda: audit(gauss, 0.0, 1.0, **{**_FAST, "execution": replace(_SERIAL, strict="yes")}),
        InputError,
        "strict must be True, False or None",
    ),
    (
        "assert-private-strict",
        lambda: assert_private(
            global_noise, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=1000, strict=False
        ),
        TypeError,
        "unexpected keyword argument 'strict'",
    ),
    (
        "unseeded-in-workers",
        lambda: assert_private(
            global_noise,
            0.0,
            1.0,
            epsilon=1.0,
            delta=1e-5,
            trials=1000,
            reproducible=False,
            execution=Execution(backend="processes"),
        ),
        InputError,
        "reproducible=False runs the trials in this process.*drop backend='processes'",
    ),
    (
        "reproducible-not-bool",
        lambda: assert_private(
            gauss, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=1000, reproducible="no"
        ),
        InputError,
        "reproducible must be True or False, got 'no'",
    ),
]


@pytest.mark.parametrize(
    "call, error, fragment", [c[1:] for c in RESOURCE_CASES], ids=[c[0] for c in RESOURCE_CASES]
)
def test_resource_and_convention_cases_get_a_specific_error(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


RESOURCE_CLI_CASES = [
    (
        "cli-trials-over-limit",
        ["audit", "gaussian", "--trials", "100000000000", "--max-seconds", "60"],
        r"trials=100_000_000_000 would need about .* the largest count that fits is trials=\d",
    ),
    (
        "cli-strict",
        ["audit", "mechs2:noisy", "--d0", "{d0}", "--d1", "{d1}", "--strict"],
        r"draws randomness .*--no-strict",
    ),
    (
        "cli-users-differ",
        ["audit", "mechs2:mean", "--d0", "{d0}", "--d1", "{n5}"],
        "the number of users differs: n = 4 in d0, 5 in d1",
    ),
    (
        "cli-labels-in-one",
        ["audit", "mechs2:mean", "--d0", "{d0}", "--d1", "{labelled}"],
        r"labels \(y\) are present only in d1",
    ),
]


@pytest.mark.parametrize(
    "argv, fragment", [c[1:] for c in RESOURCE_CLI_CASES], ids=[c[0] for c in RESOURCE_CLI_CASES]
)
def test_resource_cli_cases_exit_2_with_one_line(tmp_path, monkeypatch, argv, fragment):
    (tmp_path / "mechs2.py").write_text(
        "import numpy as np\ndef mean(data, rng, trials):\n    return data.x.mean() + "
        "rng.standard_normal(trials)\ndef noisy(data, rng, trials):\n    return data.x.mean() + "
        "np.random.standard_normal(trials)\n"
    )
    x1 = np.zeros((4, 1, 1))
    x1[0] = 1.0
    files = {
        "d0": _npz(tmp_path / "d0.npz", np.zeros((4, 1, 1))),
        "d1": _npz(tmp_path / "d1.npz", x1),
        "n5": _npz(tmp_path / "n5.npz", np.zeros((5, 1, 1))),
    }
    np.savez(tmp_path / "labelled.npz", x=np.zeros((4, 1, 1)), y=np.zeros((4, 1)))
    files["labelled"] = str(tmp_path / "labelled.npz")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        try:
            code = main([a.format(**files) for a in argv])
        except SystemExit as exit_:
            code = exit_.code
    lines = stderr.getvalue().strip().splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("dpclaims: error: "), lines
    assert __import__("re").search(fragment, lines[0]), lines[0]
