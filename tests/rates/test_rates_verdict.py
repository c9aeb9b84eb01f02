import json

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
    edge = max(abs(v + 0.5) for v in fit.interval_at(0.90))  # margin that just contains the 90 % interval
    assert check_exponent(fit, -0.5, margin=edge + 1e-9).verdict == "consistent"
    assert check_exponent(fit, -0.5, margin=edge + 1e-9, confidence=0.99).verdict == "inconclusive"


def test_drift_warning_reaches_the_message():
    rng = np.random.default_rng(3)
    errors = (GRID**-0.5 + 100 / GRID)[:, None] * np.exp(0.05 * rng.standard_normal((7, 10)))
    verdict = check_exponent(fit_power_law(GRID, errors), -1.0)
    assert verdict.drifting and "local slope is still changing" in verdict.message


def test_to_dict_is_json(fit):
    record = json.loads(json.dumps(check_exponent(fit, -0.5).to_dict()))
    assert record["verdict"] == "consistent" and record["expected"] == -0.5 and len(record["interval"]) == 2


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
