"""DIFF2 §6 / App. A: the grid, the early-stopping rule, the selection and t-test, determinism,
checkpoints."""

import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dpclaims.claims.checks.murata_suzuki_2023 import section6
from dpclaims.claims.checks.murata_suzuki_2023.section6 import (
    ALGORITHMS,
    PAPER_GRID,
    STANDIN_GRID,
    Section6,
    _EarlyStopping,
    _Rejected,
    section6_verdict,
)
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.results import ClaimResult, read_outcome

TINY = dict(
    samples=1000,
    rounds=60,
    seeds=2,
    clips=(1.0, 10.0),
    period_fractions=(0.1,),
    etas=(1.0, 0.25, 0.0625),
    every=20,
)


def test_grids_are_the_papers():
    paper = Section6(**PAPER_GRID)
    assert len(paper.configs("gd")) == 1
    assert paper.configs("dp-gd") == [(c, None, 1) for c in (1.0, 3.0, 10.0, 30.0, 100.0)]
    diff2 = paper.configs("diff2-gd")
    assert len(diff2) == 100 and {t for _, _, t in diff2} == {6, 20, 60, 200}
    standin = Section6(**STANDIN_GRID)
    assert len(standin.configs("diff2-gd")) == 27 and {
        t for _, _, t in standin.configs("diff2-gd")
    } == {20, 60, 200}
    assert len(standin.tasks()) == 5 * (1 + 3 + 27)
    assert (
        paper.etas == tuple(0.5**i for i in range(10))
        and paper.epsilon == 5.0
        and paper.rounds == 2000
    )


def _feed(losses):
    rule = _EarlyStopping()
    for i, loss in enumerate(losses):
        try:
            rule.update(loss)
        except _Rejected:
            return i
    return None


def test_early_stopping_follows_appendix_a():
    assert _feed([1.0] + [1.06] * 4) is None  # patience 4 < 5
    assert _feed([1.0] + [1.06] * 5) == 5  # the fifth rise beyond 1.05x the best
    assert _feed([1.0] + [1.04] * 50) is None  # within 1.05x: not counted
    assert (
        _feed([1.0, 1.1, 1.1, 1.1, 1.1, 0.9, 1.0, 1.0, 1.0, 1.0]) is None
    )  # improvement resets the count
    assert (
        _feed([1.0, 2.0, 1.02, 2.0, 2.0, 2.0, 2.0]) == 6
    )  # a loss that is no improvement does not reset
    assert _feed([1.0, math.nan]) == 1
    assert _feed([1.0, 1e7]) == 1


def _cell(train, grad, test, eta=1.0, config=(1.0, None, 1)):
    return {
        "eta": eta,
        "config": list(config),
        "curves": {"train": train, "grad": grad, "test": test},
    }


def test_summary_selects_per_criterion_and_runs_the_papers_t_test():
    setup = Section6(seeds=3, clips=(1.0, 10.0), period_fractions=(0.1,))
    rng = np.random.default_rng(0)
    cells = {}
    for s in range(3):
        for method in ALGORITHMS:
            for i, config in enumerate(setup.configs(method)):
                base = {"gd": 1.0, "dp-gd": 3.0, "diff2-gd": 2.0}[method] + 0.1 * rng.random()
                cells[(s, method, i)] = _cell(
                    [50.0, base + i], [50.0, 2 * base - i], [50.0, base + 7], config=config
                )
    cells[(0, "diff2-gd", 1)] = None  # every η rejected
    res = setup.summarize(cells)
    for s in range(3):
        row = res["per_seed"]["dp-gd"][s]
        assert row["train"]["config"] == [1.0, None, 1]  # lowest train minimum: index 0
        assert row["grad"]["config"] == [10.0, None, 1]  # lowest grad minimum: index 1
        assert (
            row["test"]["config"] == row["train"]["config"]
            and row["test"]["min"] == row["train"]["min"] + 7
        )
    a = [r["train"]["min"] for r in res["per_seed"]["diff2-gd"]]
    b = [r["train"]["min"] for r in res["per_seed"]["dp-gd"]]
    assert res["tests"]["train"]["pvalue"] == pytest.approx(
        stats.ttest_rel(a, b, alternative="less").pvalue
    )
    assert res["tests"]["train"]["wins"] and res["tests"]["test"]["wins"]
    assert res["curves"]["train"]["gd"]["mean"][1] == pytest.approx(
        np.mean([r["train"]["min"] for r in res["per_seed"]["gd"]])
    )
    assert res["rounds_axis"] == list(range(0, 2001, 20))


def test_a_tiny_run_is_deterministic_across_backends_and_resumes(tmp_path, monkeypatch):
    setup = Section6(**TINY)
    serial = setup.run(execution=Execution(backend="serial"))
    for s in range(2):
        for method in ALGORITHMS:
            row = serial["per_seed"][method][s]
            if row:
                assert len(row["train"]["curve"]) == TINY["rounds"] // TINY["every"] + 1
                assert row["train"]["eta"] in TINY["etas"]
    assert setup.run(execution=Execution(backend="processes", workers=2)) == serial
    assert setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "ck")) == serial
    assert len(list((tmp_path / "ck").glob("*-*-*.json"))) == len(setup.tasks())
    monkeypatch.setattr(
        Section6, "run_task", lambda *a: pytest.fail("a finished cell was recomputed")
    )
    assert setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "ck")) == serial
    with pytest.raises(InputError, match="different settings"):
        Section6(**{**TINY, "seeds": 3}).run(execution=Execution(checkpoint=tmp_path / "ck"))


def test_a_stopped_run_is_summarized_over_its_finished_seeds(tmp_path):
    setup = Section6(**{**TINY, "seeds": 3})
    setup.run(execution=Execution(backend="serial", checkpoint=tmp_path / "ck"))
    (tmp_path / "ck" / "2-dp-gd-1.json").unlink()  # seed 2 unfinished
    partial = setup.summarize_finished(tmp_path / "ck")
    assert partial["setup"]["seeds"] == 2
    assert partial == Section6(**{**TINY, "seeds": 2}).run(execution=Execution(backend="serial"))
    (tmp_path / "ck" / "1-gd-0.json").unlink()
    with pytest.raises(InputError, match="1 finished seed"):
        setup.summarize_finished(tmp_path / "ck")
    with pytest.raises(InputError, match="no manifest"):
        setup.summarize_finished(tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_summary_is_json_serialisable():
    res = Section6(**{**TINY, "seeds": 2, "clips": (1.0,)}).run(
        execution=Execution(backend="serial")
    )
    assert json.loads(json.dumps(res))["setup"]["rounds"] == TINY["rounds"]


def test_bad_settings_are_named():
    with pytest.raises(InputError, match="name"):
        Section6("boston_like")
    with pytest.raises(InputError, match="seeds"):
        Section6(seeds=1)
    with pytest.raises(InputError, match="etas"):
        Section6(etas=())
    with pytest.raises(InputError, match="clips"):
        Section6(clips=(1.0, -3.0))
    with pytest.raises(InputError, match="epsilon"):
        Section6(epsilon=0.0)
    with pytest.raises(InputError, match="seed"):
        Section6(seed=-1)
    with pytest.raises(InputError, match="method"):
        Section6().configs("sgd")
    with pytest.raises(InputError, match="samples shrinks the stand-ins only"):
        Section6("diabetes", samples=100)


def test_the_real_diabetes_set_runs_a_cell():
    setup = Section6(
        "diabetes", rounds=40, seeds=2, clips=(1.0,), period_fractions=(0.1,), etas=(0.5, 0.05)
    )
    cell = setup.run_task(1, "diff2-gd", 0)
    assert cell["config"] == [1.0, 1.0, 4] and len(cell["curves"]["train"]) == 3
    assert setup.split(1).train.m == 35


def test_gradient_descent_reference_is_plain_full_batch_gd():
    split = Section6(**TINY).split(0)
    net, data = split.model, split.train
    x, y = data.x.reshape(-1, data.d), data.y.reshape(-1)
    theta = net.init(np.random.default_rng(0), 1)
    seen = []
    section6._gradient_descent(
        split, x0=theta[0], eta=0.5, rounds=3, monitor=lambda r, t: seen.append(t.copy())
    )
    for r in range(3):
        theta = theta - 0.5 * net.grad(theta, x, y).mean(axis=1)
        np.testing.assert_allclose(seen[r], theta, rtol=1e-10, atol=1e-12)
    cell = Section6(**TINY).run_task(0, "gd", 0)
    assert cell["curves"]["train"][-1] < cell["curves"]["train"][0] and cell["eta"] in TINY["etas"]


def test_repetitions_share_the_dataset_and_vary_the_split():
    setup = Section6(**TINY)
    first, second = setup.split(0), setup.split(1)

    def targets(split):  # 800 + 200, none dropped
        return np.sort(np.concatenate([split.train.y.ravel(), split.test_y]))

    np.testing.assert_array_equal(targets(first), targets(second))
    assert not np.array_equal(first.test_y, second.test_y)


def _summary(diff2_level, dpgd_level, seeds=5, gd_level=0.5):
    """A §6 summary whose per-seed minima are ``level + noise`` for each method."""
    setup = Section6(seeds=seeds, rounds=20, every=20, clips=(1.0,), period_fractions=(0.1,))
    rng = np.random.default_rng(0)
    level = {"gd": gd_level, "dp-gd": dpgd_level, "diff2-gd": diff2_level}
    cells = {}
    for s in range(seeds):
        for method in ALGORITHMS:
            value = level[method] + 0.05 * rng.normal()
            cells[(s, method, 0)] = {
                "eta": 1.0,
                "config": [1.0, None, 1],
                "curves": {"train": [9.0, value], "grad": [9.0, value], "test": [9.0, value]},
            }
    return setup.summarize(cells)


@pytest.mark.parametrize(
    "levels,verdict",
    [((1.0, 2.0), "consistent"), ((2.0, 1.0), "inconsistent"), ((1.5, 1.5), "inconclusive")],
)
def test_section6_verdict_rule(monkeypatch, levels, verdict):
    from dpclaims.claims.checks.murata_suzuki_2023 import Section6Experiment
    from dpclaims.reports.figures import claim_figure

    monkeypatch.setattr(Section6, "run", lambda self, **kw: _summary(*levels))
    result = Section6Experiment({}).run(seed=0)
    assert result.verdict == verdict, result.summary
    assert set(result.evidence.checks) == {
        "train_diff2_wins",
        "grad_diff2_wins",
        "test_diff2_wins",
    }
    names = dict.fromkeys(("paper", "kind", "algorithm", "source", "statement"), "")
    entry = ClaimResult(id="experiments.regression", **names, **vars(read_outcome(result)))
    png = claim_figure(entry)
    assert png.startswith(b"\x89PNG")


def test_section6_experiment_runs_on_the_calibrated_standin_and_reports_its_headroom(monkeypatch):
    from dpclaims.claims.checks.murata_suzuki_2023 import Section6Experiment
    from dpclaims.claims.tables.murata_suzuki_2023 import SECTION6_SETTINGS

    assert SECTION6_SETTINGS["standard"]["name"] == SECTION6_SETTINGS["full"]["name"]
    assert SECTION6_SETTINGS["standard"]["name"] == "calibrated"
    names = []

    def fake_run(self, **kw):
        names.append(self.name)
        return _summary(*levels, gd_level=gd_level)

    monkeypatch.setattr(Section6, "run", fake_run)
    levels, gd_level = (2.0, 1.0), 0.5  # DP-GD wins, GD at half of DP-GD: headroom
    result = Section6Experiment(SECTION6_SETTINGS["standard"]).run(seed=0)
    assert names == ["calibrated"] and result.verdict == "inconsistent"
    evidence = result.evidence.extra
    assert evidence["standin"] == "calibrated" and evidence["privacy_headroom"]
    assert evidence["headroom_ratio"] == pytest.approx(0.5, abs=0.05)
    assert f"is {evidence['headroom_ratio']:.2f}x DP-GD's (privacy headroom" in result.summary
    assert "calibrated stand-in (2,000 records" in result.evidence.note
    levels, gd_level = (2.0, 1.0), 1.2  # GD above DP-GD: no headroom, not testable
    result = Section6Experiment({"name": "gas_like"}).run(seed=0)
    assert result.verdict == "inconclusive" and not result.evidence.extra["privacy_headroom"]
    assert "not testable on this stand-in" in result.summary
    assert "gas_like stand-in" in result.evidence.note


def _tests_from_minima(diff2, dpgd):
    """``Section6.summarize``'s ``tests`` from per-seed minima ``(reps, metrics, seeds)`` of each
    method: one dict per repetition."""
    p = stats.ttest_rel(diff2, dpgd, axis=-1, alternative="less").pvalue
    reverse = stats.ttest_rel(dpgd, diff2, axis=-1, alternative="less").pvalue
    a, b = diff2.mean(axis=-1), dpgd.mean(axis=-1)
    return [
        {
            metric: {
                "diff2_mean": a[r, k],
                "dpgd_mean": b[r, k],
                "pvalue": p[r, k],
                "reverse_pvalue": reverse[r, k],
            }
            for k, metric in enumerate(("train", "grad", "test"))
        }
        for r in range(len(p))
    ]


def test_section6_verdict_false_alarm_rates_under_the_null():
    """Equal methods, independent metrics, 5 seeds: neither 'inconsistent' (Holm over the three
    reverse tests) nor 'consistent' (intersection-union) exceeds α = 0.05; without Holm the false
    'inconsistent' rate would be about 1 − 0.95³ ≈ 0.14."""
    reps = 4000
    tests = _tests_from_minima(*np.random.default_rng(7).normal(size=(2, reps, 3, 5)))
    verdicts = [section6_verdict(t)[0] for t in tests]
    counts = {v: verdicts.count(v) for v in ("consistent", "inconsistent", "inconclusive")}
    alarm = stats.binomtest(counts["inconsistent"], reps).proportion_ci(0.99)
    assert alarm.low < 0.05 and counts["inconsistent"] / reps > 0.03  # Holm: close to, not above, α
    assert (
        counts["consistent"] / reps < 0.01
    )  # all three must win: far below α when metrics are independent
    uncorrected = np.mean([min(m["reverse_pvalue"] for m in t.values()) < 0.05 for t in tests])
    assert uncorrected > 0.11


def test_section6_verdict_power_and_holm_values():
    rng = np.random.default_rng(8)
    noise = rng.normal(size=(2, 1, 3, 5))
    verdict, checks = section6_verdict(_tests_from_minima(noise[0] - 3.0, noise[1])[0])
    assert verdict == "consistent" and all(c["ok"] for c in checks.values())
    verdict, checks = section6_verdict(_tests_from_minima(noise[0] + 3.0, noise[1])[0])
    assert verdict == "inconsistent" and not any(c["ok"] for c in checks.values())
    holm_values = [c["reverse_pvalue_holm"] for c in checks.values()]
    assert np.allclose(
        holm_values, multipletests([c["reverse_pvalue"] for c in checks.values()], method="holm")[1]
    )
