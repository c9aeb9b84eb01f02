"""`dpclaims audit --scores` and `--replay`: every option a mode does not read is refused in
one line (never silently ignored), a scores file too large for memory is refused before it is
read, and inputs with nothing to audit say so."""

import time
import warnings

import numpy as np
import pytest

from dpclaims import cli
from dpclaims.audit import audit_scores
from dpclaims.cli import main
from dpclaims.privacy import PrivacyClaim


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    """The one error line of a command that must exit 2."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    return err


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A multi-run and a one-run scores file, a one-canary file, and a dataset."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.savez("runs.npz", s0=rng.normal(size=200), s1=rng.normal(1.0, 1.0, size=200))
    np.savez("canaries.npz", scores=rng.normal(size=40), included=rng.random(40) < 0.5)
    np.savez("one.npz", scores=np.array([0.5]), included=np.array([True]))
    np.savez("d0.npz", x=np.zeros((4, 1, 1)))
    (tmp_path / "mechs.py").write_text(
        "def mean(data, rng, trials):\n    return data.x.mean() + rng.standard_normal(trials)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    "options, named",
    [
        (["--method", "gdp"], "--method"),
        (["--trials", "5000"], "--trials"),
        (["--backend", "dask", "--workers", "7"], "--backend, --workers"),
        (["--threat-model", "final"], "--threat-model"),
        (["--unit", "item", "--relation", "add-remove"], "--unit, --relation"),
        (["--sensitivity", "1"], "--sensitivity"),
        (["--no-strict", "--max-seconds", "60"], "--no-strict, --max-seconds"),
        (["--search"], "--search"),
    ],
)
def test_scores_refuses_every_option_it_does_not_read(capsys, files, options, named):
    err = refused(capsys, "audit", "--scores", "runs.npz", *options)
    assert f"--scores audits scores computed elsewhere; drop {named} (or drop --scores" in err


def test_scores_layouts_refuse_the_options_of_the_other(capsys, files):
    err = refused(capsys, "audit", "--scores", "runs.npz", "--seed", "3")
    assert "certified without random draws; drop --seed" in err
    err = refused(capsys, "audit", "--scores", "canaries.npz", "--figure", "f.png")
    assert "no trade-off to draw" in err and "drop --figure" in err
    assert not (files / "f.png").exists()
    err = refused(capsys, "audit", "--scores", "canaries.npz", "--reference", "1")
    assert "drop --reference" in err
    # what each mode reads still works, the defaults spelt out included
    assert run(capsys, "audit", "--scores", "canaries.npz", "--seed", "3")[0] == 0
    argv = ["--scores", "runs.npz", "--confidence", "0.9", "--reference", "1", "--seed", "0"]
    assert run(capsys, "audit", *argv, "--trials", "200000", "--debug", "--json")[0] == 0


def test_replay_refuses_the_audit_options_it_ignores(capsys, files):
    err = refused(capsys, "audit", "gaussian", "--replay", "--figure", "f.png", "--checkpoint", "c")
    assert "--replay runs d0 and d1 on one random stream, without an audit" in err
    assert "drop --checkpoint, --figure (or add --search" in err
    assert "drop --trials" in refused(capsys, "audit", "gaussian", "--replay", "--trials", "300")
    assert not (files / "f.png").exists() and not (files / "c").exists()


def test_the_same_data_twice_has_nothing_to_audit(capsys, files):
    err = refused(capsys, "audit", "mechs:mean", "--d0", "d0.npz", "--d1", "d0.npz")
    assert "--d0 and --d1 hold the same data, so there is nothing to audit" in err
    assert "1,400,000" not in err and "estimate" not in err


def test_one_canary_is_refused_without_inventing_settings(capsys, files):
    err = refused(capsys, "audit", "--scores", "one.npz")
    assert "holds 1 canary" in err and "k_plus" not in err


def test_a_scores_file_too_large_for_memory_is_refused_before_it_is_read(
    capsys, files, monkeypatch
):
    def never(*args, **kwargs):
        raise AssertionError("the arrays were read")

    monkeypatch.setattr(np, "load", never)
    start = time.perf_counter()
    err = refused(capsys, "audit", "--scores", "runs.npz", "--max-memory-gb", "1e-5")
    assert time.perf_counter() - start < 5
    assert "--scores file 'runs.npz' holds 400 scores, whose audit needs about 12.5 kB" in err
    assert "audit a random subsample of the runs" in err and "--trials" not in err


def test_out_of_memory_on_scores_names_the_scores_remedy(capsys, files, monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("dpclaims.audit.audit_scores", out_of_memory)
    err = refused(capsys, "audit", "--scores", "runs.npz")
    assert "--scores file 'runs.npz' ran out of memory; audit a random subsample" in err
    assert "--trials" not in err and "--workers" not in err


def test_scores_near_the_float_limit_raise_no_numpy_warning(capsys, files):
    s0 = np.r_[np.full(15, 1e308), np.full(15, -1e308)]
    s1 = np.r_[np.full(25, 1e308), np.full(5, -1e308)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = audit_scores(s0, s1, PrivacyClaim(1.0, 1e-5))
    assert np.isfinite(result.epsilon_lower)
    np.savez(files / "huge.npz", s0=np.full(30, 1e308), s1=np.full(30, -1e308))
    code, _, err = run(capsys, "audit", "--scores", "huge.npz")
    assert code == 1 and "warning" not in err


def test_the_mode_table_names_only_audit_options():
    defaults = vars(cli._build_parser().parse_args(["audit"]))
    for reads, _, _ in cli.audit_options.MODES.values():
        assert set(reads) <= set(defaults)
