"""``dpclaims audit dp-sgd --threat-model ... --canary ...`` (issue #27)."""

import json

import pytest

from dpclaims.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_is_all_iterates_with_a_gradient_canary_and_says_so(capsys):
    code, out, err = run(capsys, "audit", "dp-sgd", "--epsilon", "2", "--trials", "10000")
    assert code == 0 and err == ""
    assert "threat model all-iterates (every noisy update" in out and "gradient canary" in out
    assert "item level, add-remove" in out
    bound = float(out.split("lower bound   ")[1].split()[0])
    assert 0.6 < bound < 2.0  # the black-box learned score of the old default got ~0.05 at ε = 1


@pytest.mark.parametrize("threat", ["final", "all-iterates"])
@pytest.mark.parametrize("canary", ["gradient", "input"])
def test_every_threat_model_and_canary_catches_the_skipped_clip(capsys, threat, canary):
    code, out, _ = run(
        capsys,
        "audit",
        "dp-sgd-no-clip",
        "--threat-model",
        threat,
        "--canary",
        canary,
        "--trials",
        "10000",
        "--json",
    )
    payload = json.loads(out)
    assert code == 1 and payload["verdict"] == "violation"
    assert f"threat model {threat}" in payload["description"]
    assert f"{canary} canary" in payload["description"]
    assert payload["threshold_strategy"] == "planned"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["dp-sgd", "--threat-model", "hidden"], "--threat-model must be one of"),
        (["dp-sgd", "--canary", "membership"], "--canary must be one of"),
        (["gaussian", "--threat-model", "final"], "'gaussian' is not DP-SGD"),
        (["gaussian", "--canary", "input"], "'gaussian' is not DP-SGD"),
        (["dp-sgd", "--relation", "replace"], "pass --relation add-remove"),
        (["dp-sgd", "--unit", "user"], "pass --unit item"),
        (["dp-sgd", "--search"], "drop them"),
    ],
)
def test_bad_values_are_one_line_and_exit_two(capsys, argv, fragment):
    code, _, err = run(capsys, "audit", *argv, "--trials", "1000")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("dpclaims: error:"), err
    assert fragment in err
