"""Reading a result (#17 item 5): summary, repr, log-axes plot, figure, CLI lines, progress."""

import json
import math

import pytest

from dpclaims.audit import Reference, audit, collect
from dpclaims.cli import main
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.reports.figures import audit_figure

PNG = b"\x89PNG\r\n\x1a\n"


def gauss(data, rng, trials):
    return data + 2.0 * rng.standard_normal(trials)


def constant(data, rng, trials):
    return rng.standard_normal(trials)


@pytest.fixture(scope="module")
def result():
    return audit(
        gauss,
        0.0,
        1.0,
        trials=5_000,
        seed=1,
        claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
        execution=Execution(backend="serial"),
        reference=Reference(epsilon=math.inf, note="a test value"),
    )


def test_summary_has_the_claim_bound_ceiling_reference_verdict_and_counts(result):
    lines = result.summary().splitlines()
    assert len(lines) <= 12
    text = result.summary()
    for piece in (
        f"verdict       {result.verdict}",
        "claim         (1, 1e-05)-DP",
        f"lower bound   {result.epsilon_lower:.4f} (certified)",
        f"ceiling       {result.ceiling:.4f}",
        "reference     exact ε ≈ ∞ on this pair",
        f"FP {result.false_positives}/{result.n_negative}",
        result.provenance.statistic,
    ):
        assert piece in text
    assert str(result) == text


def test_summary_headline_command_line_and_report_render_the_same_rows(result, capsys):
    """One formatter (#39 item 5): the summary is the evidence's verdict rows and report rows,
    the headline is the evidence's, and the command line prints the same rows."""
    evidence = result.evidence()
    rows = evidence.verdict_rows() + [r for r in evidence.rows(evidence.seed) if r[0] != "why"]
    assert result.summary() == "\n".join(f"{label:<13} {value}" for label, value in rows)
    assert result.headline() == evidence.headline()
    code = main(["audit", "gaussian", "--trials", "2000", "--backend", "serial", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0 and all(f"{label:<13}" in out for label in ("verdict", "lower bound", "test"))


def test_repr_is_one_short_line_without_the_tradeoff(result):
    text = repr(result)
    assert "\n" not in text and len(text) < 250 and "tradeoff" not in text
    assert text.startswith("AuditResult(verdict=")


def test_record_is_json_and_an_infinite_reference_is_null(result):
    record = result.to_dict()
    json.dumps(record, allow_nan=False)
    assert record["reference_epsilon"] is None and record["reference_note"] == "a test value"
    assert record["ceiling"] == pytest.approx(result.ceiling) and record["reason"] == result.reason


def test_plot_uses_log_axes_down_to_one_over_n(result):
    import matplotlib

    matplotlib.use("Agg")
    ax = result.plot()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlim()[0] == pytest.approx(1 / result.certification_trials)
    assert ax.get_ylim() == pytest.approx((1 / result.certification_trials, 1.0))


def test_audit_figure_takes_the_result(result):
    assert audit_figure(result).startswith(PNG)


def test_identical_data_and_a_pair_the_mechanism_ignores_are_inconclusive():
    same = audit(
        gauss,
        0.0,
        0.0,
        trials=1_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
    )
    assert same.verdict == "inconclusive" and same.identical_outputs and "same data" in same.reason
    ignored = audit(
        constant,
        0.0,
        1.0,
        trials=1_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
    )
    assert ignored.verdict == "inconclusive" and "identical outputs on the same" in ignored.reason
    assert ignored.epsilon_lower <= ignored.ceiling


def test_a_zero_bound_is_inconclusive_and_names_the_pairs_exact_epsilon():
    weak = audit(
        gauss,
        0.0,
        0.01,
        trials=1_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
        reference=Reference(epsilon=0.02),
    )
    assert weak.epsilon_lower == 0 and weak.verdict == "inconclusive"
    assert "separated nothing" in weak.reason and "exact ε of this pair is 0.02" in weak.reason


def test_a_bound_above_the_stated_exact_epsilon_is_flagged():
    """gauss's pair is 0.5-GDP (exact ε 1.99 at δ = 1e-5): a certified bound above a stated
    exact ε says the reference, or the mechanism, is wrong; the true one raises nothing."""
    common = dict(trials=20_000, seed=0, claim=PrivacyClaim(epsilon=1.0, delta=1e-5))
    serial = Execution(backend="serial")
    wrong = audit(gauss, 0.0, 1.0, **common, execution=serial, reference=Reference(epsilon=0.1))
    assert wrong.epsilon_lower > 0.1
    assert any("above this pair's stated exact ε 0.1" in note for note in wrong.warnings)
    right = audit(gauss, 0.0, 1.0, **common, execution=serial, reference=Reference(epsilon=1.99))
    assert not any("stated exact ε" in note for note in right.warnings)


def test_progress_counts_every_trial(monkeypatch):
    seen = []

    class Bar:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            seen.append(n)

    monkeypatch.setattr(collect, "_progress_bar", lambda progress, total: Bar())
    audit(
        gauss,
        0.0,
        1.0,
        trials=30_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial", chunk=8192),
    )
    assert sum(seen) == 2 * 30_000 and len(seen) > 2


def test_cli_prints_ceiling_and_reference_and_writes_the_figure(tmp_path, capsys):
    path = tmp_path / "tradeoff.png"
    code = main(
        [
            "audit",
            "laplace",
            "--delta",
            "0",
            "--trials",
            "3000",
            "--backend",
            "serial",
            "--reference",
            "1.0",
            "--figure",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and path.read_bytes().startswith(PNG)
    assert (
        "\nceiling       " in out
        and "reference     exact ε ≈ 1 on this pair\n" in out
        and f"figure        {path}" in out
    )


def test_a_bad_reference_is_refused_before_any_trial():
    from dpclaims.errors import InputError

    for bad in (-1.0, float("nan"), "1", True):
        with pytest.raises(InputError, match="Reference.epsilon must be a number"):
            audit(
                gauss,
                0.0,
                1.0,
                trials=1_000,
                claim=PrivacyClaim(epsilon=1.0),
                reference=Reference(epsilon=bad),
            )


def test_outputs_are_compared_on_real_draws_whatever_the_calibration_split():
    """The default strategy certifies a 1-D output on all trials (no calibration split); the
    identical-output probe must still run on its own draws, not on an empty one."""

    def shifted(data, rng, trials):
        return data + rng.standard_normal(trials)

    weak = audit(
        shifted,
        0.0,
        1e-9,
        trials=2_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
    )
    assert not weak.identical_outputs and "identical outputs" not in weak.reason

    def ignores_data(data, rng, trials):
        return rng.standard_normal(trials)

    same = audit(
        ignores_data,
        0.0,
        1.0,
        trials=2_000,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
    )
    assert same.identical_outputs and "identical outputs on the same 256" in same.reason
