import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.errors import InputError
from dpclaims.rates import check_exponent, fit_power_law, fit_terms, geometric_grid

GRID = geometric_grid(100, 10_000, 7)  # 7 points over two decades


def lognormal_errors(b, seed, replicates=10, sigma=0.2, c=3.0):
    rng = np.random.default_rng(seed)
    return c * GRID[:, None] ** b * np.exp(sigma * rng.standard_normal((GRID.size, replicates)))


@pytest.mark.parametrize("b", [-0.5, -1.0, -4 / 3, -0.25])
def test_recovery_coverage_and_verdicts(b):
    reps = 200
    covered = consistent = low_rejected = high_rejected = 0
    for rep in range(reps):
        fit = fit_power_law(GRID, lognormal_errors(b, [rep, round(-1000 * b)]), seed=rep)
        covered += fit.interval[0] <= b <= fit.interval[1]
        consistent += check_exponent(fit, b).verdict == "consistent"
        low_rejected += check_exponent(fit, b - 0.3).verdict == "inconsistent"
        high_rejected += check_exponent(fit, b + 0.3).verdict == "inconsistent"
    assert covered / reps >= 0.93, covered
    assert consistent / reps >= 0.90, consistent
    assert low_rejected / reps >= 0.90 and high_rejected / reps >= 0.90, (
        low_rejected,
        high_rejected,
    )


@pytest.mark.parametrize("b", [-0.5, -1.0])
def test_median_of_means_covers_under_pareto_noise(b):
    reps, covered = 200, 0
    for rep in range(reps):
        rng = np.random.default_rng([rep, round(-1000 * b), 15])
        errors = GRID[:, None] ** b * (
            1.0 + rng.pareto(1.5, size=(GRID.size, 10))
        )  # Pareto(x_m=1, alpha=1.5)
        fit = fit_power_law(GRID, errors, method="mom", seed=rep)
        covered += fit.interval[0] <= b <= fit.interval[1]
    assert covered / reps >= 0.90, covered


def test_exact_power_law_is_recovered_by_every_estimator():
    noise = np.exp(np.random.default_rng(0).standard_normal(12))
    errors = 2.0 * GRID[:, None] ** -0.75 * noise[None, :]
    for method in ("logs", "mom"):
        fit = fit_power_law(GRID, errors, method=method)
        assert fit.exponent == pytest.approx(-0.75)
        assert fit.theil_sen == pytest.approx(-0.75)
        np.testing.assert_allclose(fit.local_slopes, -0.75)
        # whole-replicate resampling shifts every grid value by the same replicate noise: slope
        # unchanged
        np.testing.assert_allclose(fit.interval_bootstrap, -0.75, atol=1e-9)
        assert fit.interval[0] <= -0.75 <= fit.interval[1]


def test_median_of_means_uses_group_means():
    # 2 grid-value pattern repeated: replicates [1, 1, 1, 1, 1, 100]; 3 groups of 2 -> means 1, 1,
    # 50.5 -> median 1
    row = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 100.0])
    errors = GRID[:, None] ** -1.0 * row[None, :]
    fit = fit_power_law(GRID, errors, method="mom", groups=3)
    assert fit.intercept == pytest.approx(0.0, abs=1e-9)
    assert fit.groups == 3 and "median over 3 replicate groups" in fit.fitted_on
    logs = fit_power_law(GRID, errors)
    assert logs.intercept == pytest.approx(np.log(100) / 6)
    assert logs.groups is None and "every replicate" in logs.fitted_on


def test_fit_is_reproducible_and_serialisable():
    errors = lognormal_errors(-0.5, 4)
    first, second = fit_power_law(GRID, errors, seed=9), fit_power_law(GRID, errors, seed=9)
    assert first.to_dict() == second.to_dict()
    record = json.loads(json.dumps(first.to_dict()))
    assert record["method"] == "logs" and len(record["local_slopes"]) == GRID.size - 1
    assert (
        record["interval"][0] <= record["interval_hc3"][0]
        and record["interval"][0] <= record["interval_bootstrap"][0]
    )
    assert first.theil_sen_interval[0] < first.theil_sen < first.theil_sen_interval[1]
    assert "exponent" in first.summary()


def test_unsorted_grid_gives_the_same_fit():
    errors = lognormal_errors(-1.0, 5)
    order = np.random.default_rng(1).permutation(GRID.size)
    a, b = fit_power_law(GRID, errors), fit_power_law(GRID[order], errors[order])
    assert a.exponent == pytest.approx(b.exponent)
    assert a.local_slopes == pytest.approx(b.local_slopes)


def two_term_errors(seed, replicates=10, sigma=0.05):
    grid = geometric_grid(100, 10_000, 9)
    rng = np.random.default_rng(seed)
    mean = grid**-0.5 + 100 * grid**-1.0
    return grid, mean[:, None] * np.exp(sigma * rng.standard_normal((grid.size, replicates)))


@pytest.mark.parametrize("seed", range(5))
def test_lower_order_term_is_flagged_and_terms_recovered(seed):
    grid, errors = two_term_errors(seed)
    fit = fit_power_law(grid, errors, seed=seed)
    assert fit.drifting and fit.drift_pvalue < 1e-4
    assert fit.slope_change > 0  # the slope flattens from about -0.95 towards -0.5
    assert fit.local_slopes[0] < fit.local_slopes[-1]
    terms = fit_terms(grid, errors, exponents=[-0.5, -1.0], seed=seed)
    assert terms.coefficients[0] == pytest.approx(1.0, rel=0.10)
    assert terms.coefficients[1] == pytest.approx(100.0, rel=0.10)
    for (lo, hi), c in zip(terms.intervals, terms.coefficients, strict=True):
        assert lo <= c <= hi
    (crossing,) = terms.crossovers
    assert crossing["exponents"] == [-0.5, -1.0]
    assert crossing["value"] == pytest.approx(10_000, rel=0.25)  # (c2 / c1)^2
    assert terms.relative_rms < 0.05
    json.dumps(terms.to_dict())


@pytest.mark.parametrize("seed", range(5))
def test_pure_power_law_is_not_flagged(seed):
    fit = fit_power_law(GRID, lognormal_errors(-0.5, [seed, 77]), seed=seed)
    assert not fit.drifting
    assert check_exponent(fit, -0.5).drifting is False


def test_fit_terms_keeps_coefficients_non_negative_and_predicts():
    grid = geometric_grid(100, 10_000, 7)
    errors = 3 * grid**-0.5
    terms = fit_terms(grid, errors, exponents=[-0.5, -1.0, -2.0])
    assert min(terms.coefficients) >= 0
    assert terms.coefficients[0] == pytest.approx(3.0, rel=1e-6)
    np.testing.assert_allclose(terms.predict(grid), errors, rtol=1e-6)
    assert terms.replicates == 1 and terms.intervals[0] == (
        terms.coefficients[0],
        terms.coefficients[0],
    )


@pytest.mark.parametrize(
    "errors, match",
    [
        (np.ones((7, 1)), "1 replicate"),
        (np.ones(7), r"single replicate per grid value"),
        (np.ones((6, 5)), r"shape \(G, R\) = \(7, replicates\)"),
        (np.where(np.eye(7, 5) > 0, 0.0, 1.0), "errors contains 5 zero or negative"),
        (-np.ones((7, 5)), "zero or negative value"),
        (np.full((7, 5), np.nan), "errors contains 35 NaN"),
    ],
)
def test_fit_power_law_rejects_bad_errors(errors, match):
    with pytest.raises(InputError, match=match):
        fit_power_law(GRID, errors)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"values": [100, 100, 1000, 10_000, 3000, 300, 30]}, "repeated value"),
        ({"values": np.linspace(100, 400, 7)}, "decade"),
        ({"method": "median"}, "method must be one of"),
        ({"groups": 3}, "groups only applies to method='mom'"),
        ({"method": "mom", "groups": 6}, "groups=6 exceeds the 5 replicates"),
        ({"bootstrap": 10}, "bootstrap must be a whole number >= 100"),
        ({"confidence": 1.0}, "confidence must be a number in"),
    ],
)
def test_fit_power_law_rejects_bad_arguments(kwargs, match):
    arguments = {"values": GRID, "errors": np.ones((7, 5)), **kwargs}
    with pytest.raises(InputError, match=match):
        fit_power_law(**arguments)


@pytest.mark.parametrize(
    "exponents, match",
    [
        ([-0.5, -0.5], "distinct"),
        ([], "between 1 and 6"),
        ([-1, -2, -3, -4, -5, -6, -7], "between 1 and 6"),
    ],
)
def test_fit_terms_rejects_bad_exponents(exponents, match):
    with pytest.raises(InputError, match=match):
        fit_terms(GRID, np.ones((7, 3)), exponents=exponents)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    b=st.floats(-1.5, 0.5),
    c1=st.floats(0.5, 0.9),
    c2=st.floats(0.9, 0.995),
)
def test_interval_contains_estimate_and_widens_with_confidence(seed, b, c1, c2):
    grid = geometric_grid(10, 1000, 5)
    rng = np.random.default_rng(seed)
    errors = grid[:, None] ** b * np.exp(0.3 * rng.standard_normal((5, 4)))
    for method in ("logs", "mom"):
        fit = fit_power_law(grid, errors, method=method, seed=seed, bootstrap=100)
        lo1, hi1 = fit.interval_at(c1)
        lo2, hi2 = fit.interval_at(c2)
        assert lo1 <= fit.exponent <= hi1
        assert lo2 <= lo1 and hi1 <= hi2
        assert fit.interval == fit.interval_at(fit.confidence)
