import json
import re

import numpy as np
import pytest

from dpclaims.errors import InputError
from dpclaims.rates import check_exponent, fit_power_law, geometric_grid

GRID = geometric_grid(100, 10_000, 7)


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(21)
    return fit_power_law(GRID, GRID[:, None] ** -0.5 * np.exp(0.2 * rng.standard_normal((7, 10))))


def test_consistent_when_interval_inside_band(fit):
    verdict = check_exponent(fit, -0.5, margin=0.1)
    lo, hi = fit.interval_at(0.90)
    assert verdict.verdict == "consistent" and verdict.passed
    assert verdict.interval == (lo, hi) and verdict.confidence == 0.90
    assert -0.6 <= lo and hi <= -0.4
    assert verdict.direction == "indistinguishable"
    assert f"[{lo:.3f}, {hi:.3f}]" in verdict.message


def test_inconsistent_and_direction(fit):
    claimed_slower = check_exponent(fit, -0.2, margin=0.1)  # fitted rate is faster than claimed
    assert claimed_slower.verdict == "inconsistent" and claimed_slower.direction == "faster"
    claimed_faster = check_exponent(fit, -1.0, margin=0.1)
    assert claimed_faster.verdict == "inconsistent" and claimed_faster.direction == "slower"
    assert "slower than claimed" in claimed_faster.message


def test_inconclusive_when_interval_straddles_band_edge(fit):
    verdict = check_exponent(fit, fit.exponent + 0.1, margin=0.1)  # band edge at the estimate
    assert verdict.verdict == "inconclusive" and not verdict.passed
    assert verdict.direction == "faster"
    wide = check_exponent(fit, -0.5, margin=0.01)  # interval wider than the band
    assert wide.verdict == "inconclusive"


def test_higher_confidence_can_only_weaken_a_verdict(fit):
    edge = max(
        abs(v + 0.5) for v in fit.interval_at(0.90)
    )  # margin that just contains the 90 % interval
    assert check_exponent(fit, -0.5, margin=edge + 1e-9).verdict == "consistent"
    assert check_exponent(fit, -0.5, margin=edge + 1e-9, confidence=0.99).verdict == "inconclusive"


def test_drift_warning_reaches_the_message():
    rng = np.random.default_rng(3)
    errors = (GRID**-0.5 + 100 / GRID)[:, None] * np.exp(0.05 * rng.standard_normal((7, 10)))
    verdict = check_exponent(fit_power_law(GRID, errors), -1.0)
    assert verdict.drifting and "local slope is still changing" in verdict.message


def test_to_dict_is_json(fit):
    record = json.loads(json.dumps(check_exponent(fit, -0.5).to_dict()))
    assert (
        record["verdict"] == "consistent"
        and record["expected"] == -0.5
        and len(record["interval"]) == 2
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"expected": float("nan")}, "expected must be a finite number"),
        ({"margin": 0.0}, "margin must be > 0"),
        ({"margin": "wide"}, "margin must be a finite number"),
        ({"confidence": 0.0}, "confidence must be a number in"),
    ],
)
def test_bad_arguments(fit, kwargs, match):
    with pytest.raises(InputError, match=match):
        check_exponent(fit, **{"expected": -0.5, **kwargs})


def test_fit_must_be_a_power_law_fit():
    with pytest.raises(InputError, match="fit must be a PowerLawFit"):
        check_exponent({"exponent": -0.5}, -0.5)


# ----------------------------------------------------------------- one-sided claims (bound=)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dpclaims.verdicts import Verdict  # noqa: E402

_EXPECTED = st.floats(-2.0, 1.0, allow_nan=False)
_MARGIN = st.floats(0.01, 0.5, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(expected=_EXPECTED, margin=_MARGIN)
def test_upper_bound_rule(fit, expected, margin):
    lo, hi = fit.interval_at(0.90)
    verdict = check_exponent(fit, expected, margin, bound="upper")
    want = (
        "consistent"
        if hi <= expected + margin
        else "inconsistent"
        if lo > expected + margin
        else "inconclusive"
    )
    assert verdict.verdict == want and isinstance(verdict.verdict, Verdict)
    assert verdict.bound == "upper" and verdict.to_dict()["bound"] == "upper"


@settings(max_examples=200, deadline=None)
@given(expected=_EXPECTED, margin=_MARGIN)
def test_lower_bound_rule_and_small_limit_mirror(fit, expected, margin):
    lo, hi = fit.interval_at(0.90)
    verdict = check_exponent(fit, expected, margin, bound="lower")
    want = (
        "consistent"
        if lo >= expected - margin
        else "inconsistent"
        if hi < expected - margin
        else "inconclusive"
    )
    assert verdict.verdict == want
    # an upper bound as the parameter goes to 0 bounds the exponent from below
    assert check_exponent(fit, expected, margin, bound="upper", limit="small").verdict == want


@settings(max_examples=200, deadline=None)
@given(expected=_EXPECTED, margin=_MARGIN)
def test_one_sided_is_never_stricter_than_two_sided(fit, expected, margin):
    order = check_exponent(fit, expected, margin).verdict
    for bound in ("upper", "lower"):
        one_sided = check_exponent(fit, expected, margin, bound=bound).verdict
        assert one_sided.severity <= order.severity


def test_faster_than_an_upper_bound_is_consistent(fit):
    # fitted ~ -0.5; an O(n^-0.2) claim is met with room to spare, an Ω(n^-0.2) one is not
    upper = check_exponent(fit, -0.2, margin=0.1, bound="upper")
    assert upper.verdict == "consistent" and upper.direction == "faster"
    assert "faster than claimed" in upper.message
    assert "exponent ≤ -0.2 + 0.1 (one-sided)" in upper.message
    assert check_exponent(fit, -0.2, margin=0.1, bound="lower").verdict == "inconsistent"
    assert check_exponent(fit, -0.2, margin=0.1).verdict == "inconsistent"  # two-sided: a gap
    slower = check_exponent(fit, -1.0, margin=0.1, bound="upper")
    assert slower.verdict == "inconsistent" and slower.direction == "slower"


def test_small_limit_flips_the_direction_words(fit):
    verdict = check_exponent(fit, -1.0, margin=0.1, bound="upper", limit="small")
    # exponent -0.5 > -1: as the parameter goes to 0 the quantity grows more slowly than claimed
    assert verdict.verdict == "consistent" and verdict.direction == "faster"


@pytest.mark.parametrize(
    "kwargs, match",
    [({"bound": "two-sided"}, "bound must be one of"), ({"limit": "zero"}, "limit must be one of")],
)
def test_bad_bound_or_limit(fit, kwargs, match):
    with pytest.raises(InputError, match=match):
        check_exponent(fit, -0.5, **kwargs)


def _simulated_fits(b, reps, seed, sigma=0.3):
    """Fits of lognormal power-law sweeps with true exponent ``b`` (7 points, 6 replicates)."""
    for rep in range(reps):
        rng = np.random.default_rng([seed, rep])
        noise = np.exp(sigma * rng.standard_normal((7, 6)))
        yield fit_power_law(GRID, 2.0 * GRID[:, None] ** b * noise, seed=rep)


@pytest.mark.parametrize("bound, sign", [("upper", 1.0), ("lower", -1.0)])
def test_one_sided_calibration_and_power(bound, sign):
    """False-inconsistent rate at the worst null (truth on the band's edge) <= the nominal 5 %.

    With 600 fits the binomial 99 % upper end for a 5 % rate is about 7.4 %; at the claimed
    exponent itself no fit is called inconsistent, and 0.3 beyond the edge nearly every fit is.
    """
    expected, margin, reps = -0.5, 0.1, 600
    edge = expected + sign * margin
    at_edge = sum(
        check_exponent(f, expected, margin, bound=bound).verdict == "inconsistent"
        for f in _simulated_fits(edge, reps, seed=1)
    )
    assert at_edge / reps <= 0.074, at_edge
    at_claim = sum(
        check_exponent(f, expected, margin, bound=bound).verdict == "inconsistent"
        for f in _simulated_fits(expected, reps, seed=2)
    )
    assert at_claim / reps <= 0.01, at_claim
    beyond = sum(
        check_exponent(f, expected, margin, bound=bound).verdict == "inconsistent"
        for f in _simulated_fits(edge + sign * 0.3, 200, seed=3)
    )
    assert beyond / 200 >= 0.90, beyond
    faster = sum(
        check_exponent(f, expected, margin, bound=bound).verdict == "consistent"
        for f in _simulated_fits(expected - sign * 0.3, 200, seed=4)
    )
    assert faster / 200 >= 0.90, faster


def test_one_sided_reason_names_only_the_edge_tested(fit):
    # upper bound, claimed edge at the estimate: inconclusive, and the text names the upper edge
    upper = check_exponent(fit, fit.exponent - 0.1, margin=0.1, bound="upper")
    edge = f"{fit.exponent:.4g}"
    assert upper.verdict == "inconclusive"
    assert f"straddles the claimed upper edge {edge}" in upper.reason
    assert "bound 'upper'" in upper.reason and "decaying slower than claimed" in upper.reason
    assert not re.search(r"\blower\b|band|±", upper.reason)
    lower = check_exponent(fit, fit.exponent + 0.1, margin=0.1, bound="lower")
    assert lower.verdict == "inconclusive"
    assert f"straddles the claimed lower edge {edge}" in lower.reason
    assert not re.search(r"\bupper\b|band|±", lower.reason)
    assert lower.to_dict()["reason"] == lower.reason


def test_one_sided_reason_for_decided_verdicts_and_small_limit(fit):
    assert "at or below the claimed upper edge -0.4" in (
        check_exponent(fit, -0.5, margin=0.1, bound="upper").reason
    )
    assert "entirely above the claimed upper edge -0.9" in (
        check_exponent(fit, -1.0, margin=0.1, bound="upper").reason
    )
    # an O(·) claim as the variable goes to 0 tests the lower edge of the exponent
    small = check_exponent(fit, -0.5, margin=0.1, bound="upper", limit="small")
    assert "claimed lower edge -0.6" in small.reason and "goes to 0" in small.reason


def test_two_sided_reason_names_the_band_and_the_edge_straddled(fit):
    inside = check_exponent(fit, -0.5, margin=0.1)
    assert "inside the claimed band -0.5 ± 0.1 = [-0.6, -0.4]" in inside.reason
    edge = check_exponent(fit, fit.exponent - 0.1, margin=0.1)
    assert f"straddles the upper edge {fit.exponent:.4g} of the claimed band" in edge.reason
    assert "both edges" in check_exponent(fit, -0.5, margin=0.01).reason
    assert "entirely above the upper edge -0.9" in check_exponent(fit, -1.0, margin=0.1).reason
