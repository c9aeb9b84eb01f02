"""Rate bounds and the ε bound from counts: cross-checks against statsmodels and invariants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from dpclaims.audit import (
    alpha_per_test,
    epsilon_from_counts,
    epsilon_from_rates,
    joint_levels,
    rate_upper,
)
from dpclaims.audit.bounds import JOINT_CORNERS, joint_upper
from dpclaims.errors import InputError


@pytest.mark.parametrize(
    "count,n", [(0, 10), (3, 10), (10, 10), (17, 1000), (500, 1000), (1, 10**6)]
)
@pytest.mark.parametrize("alpha", [0.05, 0.0253])
def test_clopper_pearson_matches_statsmodels(count, n, alpha):
    # a one-sided bound at 1 - alpha is the upper end of the two-sided interval at 1 - 2 alpha
    _, upper = proportion_confint(count, n, alpha=2 * alpha, method="beta")
    assert rate_upper(count, n, alpha) == pytest.approx(upper, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("count,n", [(0, 10), (3, 10), (17, 1000), (500, 1000)])
def test_jeffreys_matches_statsmodels(count, n):
    _, upper = proportion_confint(count, n, alpha=0.1, method="jeffreys")
    assert rate_upper(count, n, 0.05, ci="jeffreys") == pytest.approx(upper, rel=1e-10)


def test_rate_upper_is_vectorised_and_unknown_ci_is_refused():
    counts = np.array([0, 5, 10])
    assert rate_upper(counts, 10, 0.05).shape == (3,)
    assert rate_upper(counts, 10, 0.05)[-1] == 1.0
    with pytest.raises(InputError, match="ci"):
        rate_upper(1, 10, 0.05, ci="wald")


def test_epsilon_from_rates_known_value():
    assert epsilon_from_rates(0.1, 0.2, 0.0) == pytest.approx(math.log(0.8 / 0.1))
    assert epsilon_from_rates(0.1, 0.2, 0.05) == pytest.approx(math.log(0.75 / 0.1))
    assert epsilon_from_rates(0.6, 0.6, 0.0) == 0.0
    assert epsilon_from_rates(0.3, 1.0, 0.0) == 0.0


def test_test_alpha_is_a_union_bound():
    assert alpha_per_test(0.95) == pytest.approx(0.05)
    assert alpha_per_test(0.95, 10) == pytest.approx(0.005)
    with pytest.raises(InputError, match="tests"):
        alpha_per_test(0.95, 0)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 1e-3, 1e-6])
def test_joint_levels_staircase_fails_with_probability_alpha(alpha):
    a, b = (np.array(v) for v in joint_levels(alpha))
    assert len(a) == len(b) == JOINT_CORNERS
    assert np.all(np.diff(a) > 0) and np.all(np.diff(b) < 0)
    # P(u0 <= a_j or u1 <= b_j for every j) for independent uniforms, by the staircase area ...
    area = a[0] + np.sum(np.diff(a) * b[:-1]) + (1 - a[-1]) * b[-1]
    assert area == pytest.approx(alpha, rel=1e-9) and area <= alpha
    # ... and by simulation
    if alpha >= 0.05:
        u = np.random.default_rng(0).random((2, 400_000))
        missed = np.all((u[0][:, None] <= a) | (u[1][:, None] <= b), axis=1)
        assert abs(missed.mean() - alpha) < 4 * math.sqrt(alpha / 400_000)


@pytest.mark.parametrize("tilt", [1 / 32, 0.2, 3.0, 32.0])
def test_tilted_staircases_fail_with_probability_alpha(tilt):
    # a tilt > 1 is the mirror image of 1 / tilt: both must keep the area at alpha
    for alpha in (0.05, 1e-3):
        a, b = (np.array(v) for v in joint_levels(alpha, tilt))
        assert np.all(np.diff(a) >= 0) and np.all(np.diff(b) <= 0)
        area = a[0] + np.sum(np.diff(a) * b[:-1]) + (1 - a[-1]) * b[-1]
        assert area <= alpha and area == pytest.approx(alpha, rel=1e-9)


@pytest.mark.parametrize("tilt", [0.05, 0.3, 4.0])
def test_tilted_joint_bound_covers_the_true_epsilon(tilt):
    # whatever the region's shape, a fixed test's bound exceeds the truth in <= 5% of audits
    rng = np.random.default_rng(2)
    fpr, fnr, n = 0.01, 0.9, 5000
    fp, fn = rng.binomial(n, fpr, 20_000), rng.binomial(n, fnr, 20_000)
    bounds = joint_upper(fp, n, fn, n, 0.05, "clopper-pearson", tilt)
    bound = np.min(epsilon_from_rates(*bounds, 0.0), axis=0)
    exceed = np.mean(bound > math.log((1 - fnr) / fpr))
    assert exceed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 20_000)


@pytest.mark.parametrize("tilt", [0.0, -1.0, float("nan"), float("inf")])
def test_a_bad_tilt_is_refused_naming_it(tilt):
    with pytest.raises(InputError, match="tilt must be a positive finite number"):
        joint_upper(3, 100, 40, 100, 0.05, "clopper-pearson", tilt)


@pytest.mark.parametrize(
    "fpr,fnr,n", [(0.02, 0.95, 1000), (0.2, 0.5, 1000), (0.005, 0.99, 20_000), (0.3, 0.1, 200)]
)
def test_joint_bound_covers_the_true_epsilon(fpr, fnr, n):
    # the bound of one fixed test stays below log((1 - FNR) / FPR) in >= 95% of 20,000 audits
    rng = np.random.default_rng(1)
    fp, fn = rng.binomial(n, fpr, 20_000), rng.binomial(n, fnr, 20_000)
    bound = epsilon_from_counts(fp, n, fn, n, 0.0, 0.95)
    exceed = np.mean(bound > math.log((1 - fnr) / fpr))
    assert exceed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 20_000)


def test_joint_bound_is_tighter_than_two_separate_bounds():
    # the usual rectangle (each rate at 1 - sqrt(0.95)) on balanced counts certifies less
    alpha = 1 - math.sqrt(0.95)
    fp, fn, n = 265, 9521, 10_000
    rectangle = epsilon_from_rates(rate_upper(fp, n, alpha), rate_upper(fn, n, alpha), 0.0)
    assert float(epsilon_from_counts(fp, n, fn, n, 0.0, 0.95)) > 1.05 * float(rectangle)


counts = st.integers(min_value=0, max_value=2000)
sizes = st.integers(min_value=1, max_value=2000)


@settings(max_examples=200, deadline=None)
@given(
    fp=counts,
    fn=counts,
    n0=sizes,
    n1=sizes,
    extra=st.integers(1, 50),
    delta=st.sampled_from([0.0, 1e-5, 0.01]),
)
def test_more_errors_never_give_a_larger_bound(fp, fn, n0, n1, extra, delta):
    fp, fn = min(fp, n0), min(fn, n1)
    base = float(epsilon_from_counts(fp, n0, fn, n1, delta))
    assert base >= 0
    assert float(epsilon_from_counts(min(fp + extra, n0), n0, fn, n1, delta)) <= base + 1e-12
    assert float(epsilon_from_counts(fp, n0, min(fn + extra, n1), n1, delta)) <= base + 1e-12


@settings(max_examples=200, deadline=None)
@given(fp=counts, fn=counts, n0=sizes, n1=sizes, c1=st.floats(0.5, 0.99), c2=st.floats(0.5, 0.99))
def test_higher_confidence_barely_ever_gives_a_larger_bound(fp, fn, n0, n1, c1, c2):
    # the joint regions of different confidences are shaped separately, not nested: the bound
    # falls with the confidence up to a little slack (measured at most 0.054 over 300 draws)
    fp, fn = min(fp, n0), min(fn, n1)
    low, high = sorted((c1, c2))
    assert (
        epsilon_from_counts(fp, n0, fn, n1, 1e-5, high)
        <= epsilon_from_counts(fp, n0, fn, n1, 1e-5, low) + 0.1
    )


@settings(max_examples=200, deadline=None)
@given(
    count=counts,
    n=sizes,
    alpha=st.floats(1e-6, 0.5),
    ci=st.sampled_from(["clopper-pearson", "jeffreys"]),
)
def test_upper_bound_exceeds_point_estimate_and_is_monotone(count, n, alpha, ci):
    count = min(count, n)
    upper = float(rate_upper(count, n, alpha, ci))
    assert count / n <= upper <= 1.0
    if count < n:
        assert float(rate_upper(count + 1, n, alpha, ci)) >= upper
    assert float(rate_upper(count, n, alpha / 2, ci)) >= upper
