"""Exponent reach and controls of a rate test (issue 36 item 1) and zero-spread sweeps (item 4)."""

import math

import numpy as np
import pytest

from dpclaims.claims.standard import RateExperiment
from dpclaims.execution import Execution
from dpclaims.rates import (
    REACH_LIMIT,
    check_exponent,
    deterministic,
    exponent_reach,
    fit_power_law,
)
from dpclaims.rates.caveats import Baseline
from dpclaims.rates.controls import wrong_rate_errors
from dpclaims.rates.reach import forbidden_sides

SERIAL = Execution(backend="serial")
GRID = np.array([100, 200, 400, 800, 1600, 3200])


def _lognormal(rng, shape):
    return np.exp(0.4 * rng.standard_normal(shape))


def _heavy(rng, shape):  # Student t with 3 degrees of freedom on the log scale
    return np.exp(0.25 * rng.standard_t(3, shape))


def _contaminated(rng, shape):  # lognormal, the curve bent by a lower-order term
    return _lognormal(rng, shape)


def _curve(kind, exponent):
    """A curve over GRID whose fitted (noise-free) exponent is ``exponent``."""
    if kind == "contaminated":  # v^b (1 + 3 v^-1/2), tilted so its log-log slope is b
        shape = 1 + 3 * GRID**-0.5
        tilt = np.polyfit(np.log(GRID), np.log(shape), 1)[0]
        return GRID ** (exponent - tilt) * shape
    return GRID.astype(float) ** exponent


NOISES = {"lognormal": _lognormal, "heavy": _heavy, "contaminated": _contaminated}


def _sweep(rng, kind, exponent, reps=10):
    return _curve(kind, exponent)[:, None] * NOISES[kind](rng, (GRID.size, reps))


def _caught(errors, seed):
    fit = fit_power_law(GRID, errors, seed=seed)
    return check_exponent(fit, -0.5, 0.1, bound="upper").verdict == "inconsistent"


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(NOISES))
def test_reach_is_caught_with_probability_power_and_half_of_it_far_less(kind):
    """Each round: one sweep predicts its reach; fresh sweeps with that exponent error (and half
    of it) go through the real fit and test.  Detection at the reach is ≥ 0.9 - 3 se; at half
    of it, at most 0.5."""
    rng = np.random.default_rng(7)
    rounds, at_reach, at_half = 150, 0, 0
    for k in range(rounds):
        reach = exponent_reach(GRID, _sweep(rng, kind, -0.5), margin=0.1, bound="upper", seed=k)
        at_reach += _caught(_sweep(rng, kind, -0.5 + reach.shift), k)
        at_half += _caught(_sweep(rng, kind, -0.5 + reach.shift / 2), k)
    se = math.sqrt(0.9 * 0.1 / rounds)
    assert at_reach / rounds >= 0.9 - 3 * se, (kind, at_reach / rounds)
    assert at_half / rounds <= 0.5, (kind, at_half / rounds)


def test_reach_grows_with_noise_and_is_the_margin_without_it():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((GRID.size, 10))
    quiet = (GRID**-0.5)[:, None] * np.exp(0.05 * noise)
    loud = (GRID**-0.5)[:, None] * np.exp(0.8 * noise)
    small = exponent_reach(GRID, quiet, margin=0.1, bound="upper")
    large = exponent_reach(GRID, loud, margin=0.1, bound="upper")
    assert 0.1 < small.shift < 0.15 and small.within
    assert large.shift > REACH_LIMIT and not large.within
    both = exponent_reach(GRID, loud, margin=0.1, bound="order")
    assert set(both.sides) == {"above", "below"} and both.shift == max(both.sides.values())
    mom = exponent_reach(GRID, loud, margin=0.1, bound="upper", method="mom")
    assert mom.shift > 0.1


def test_forbidden_sides_follow_the_bound_and_the_limit():
    assert forbidden_sides("upper", "large") == ("above",)
    assert forbidden_sides("upper", "small") == ("below",)
    assert forbidden_sides("lower", "large") == ("below",)
    assert forbidden_sides("order", "small") == ("above", "below")


def test_wrong_rate_errors_slow_the_rate_on_the_forbidden_side():
    errors = np.ones((GRID.size, 2))
    up, text = wrong_rate_errors(GRID, errors, bound="upper", limit="large")
    assert text == "^+0.25" and np.allclose(up[:, 0], GRID**0.25)
    down, text = wrong_rate_errors(GRID, errors, bound="upper", limit="small")
    assert text == "^-0.25" and np.allclose(down[:, 0], GRID**-0.25)


def test_deterministic_means_zero_spread_at_every_value():
    assert deterministic(np.tile([[1.0], [2.0]], (1, 3)))
    assert not deterministic(np.array([[1.0, 1.0], [2.0, 2.0 + 1e-9]]))


def precise(n, rng):
    """An algorithm with error n^-1/2, little noise."""
    return float(n**-0.5 * np.exp(0.05 * rng.standard_normal()))


def noisy(n, rng):
    """Faster than claimed, with so much noise that an exponent error of 0.25 would pass."""
    return float(n**-0.8 * np.exp(0.9 * rng.standard_normal()))


def origin(n, rng):
    """The trivial algorithm: its error does not fall with n."""
    return float(0.5 * np.exp(0.05 * rng.standard_normal()))


def schedule(n, rng):
    """A deterministic count: n^(4/3) rounds, whatever the seed."""
    return float(np.ceil(n ** (4 / 3)))


def _run(experiment, **options):
    options = {"replicates": 10, "bound": "upper", **options}
    return RateExperiment(experiment, "n", list(GRID), -0.5, **options).run(
        seed=0, execution=SERIAL
    )


def test_consistent_needs_a_caught_trivial_control_and_a_reach_within_limit():
    strong = _run(precise, trivial=origin)
    assert strong.verdict == "consistent", strong.summary
    evidence = strong.evidence
    assert evidence.controls["trivial"]["verdict"] == "inconsistent"
    assert evidence.controls["wrong_rate"]["verdict"] == "inconsistent"
    assert evidence.reach["within"] and evidence.weak == ""

    missing = _run(precise)
    assert missing.verdict == "consistent_weak"
    assert missing.evidence.weak.startswith("no trivial control")

    # a trivial output whose error falls as fast as claimed: the test cannot tell them apart
    fooled = _run(precise, baseline=Baseline("the origin", lambda n: n**-0.5))
    assert fooled.verdict == "consistent_weak"
    assert "a constant output passes this test" in fooled.evidence.weak

    blunt = _run(noisy, trivial=origin)
    assert blunt.verdict == "consistent_weak", blunt.summary
    assert "exponent reach" in blunt.evidence.weak

    stricter = _run(precise, trivial=origin, reach_limit=0.05)
    assert stricter.verdict == "consistent_weak"


def test_a_lower_bound_needs_no_trivial_control():
    result = _run(precise, bound="lower")
    trivial = result.evidence.controls["trivial"]
    assert trivial["verdict"] is None and trivial["reason"].startswith("not applicable")
    assert result.verdict == "consistent"


def test_a_zero_spread_sweep_is_formula_without_controls():
    result = RateExperiment(schedule, "n", list(GRID), 4 / 3, replicates=3).run(
        seed=0, execution=SERIAL
    )
    assert result.verdict == "formula", result.summary
    assert result.evidence.deterministic is True
    assert "controls" not in result.evidence.to_json()
    assert any(label == "replicates" for label, _ in result.evidence.rows())


def test_rows_show_controls_and_reach():
    rows = dict(_run(precise, trivial=origin).evidence.rows())
    assert rows["trivial"].startswith("origin: inconsistent (slope")
    assert rows["wrong rate"].startswith("the measured error × n^+0.25: inconsistent")
    assert rows["reach"].split(":")[0] == f"{float(rows['reach'].split(':')[0]):.3f}"
