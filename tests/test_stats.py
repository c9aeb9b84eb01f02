"""dpclaims.stats: tests, corrections and intervals, calibrated on cases with known truth
(fixed seeds)."""

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dpclaims.errors import InputError
from dpclaims.stats import (
    binom_cdf,
    exceedance_interval,
    gaussian_shift,
    holm,
    log_ratio_interval,
    mean_interval,
    paired_pvalue,
    pooled_chisquare_pvalue,
    std_ratio_interval,
)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_holm_matches_statsmodels_and_is_monotone(pvalues):
    adjusted = holm(pvalues)
    with mock.patch("gc.collect"):  # statsmodels' Holm collects garbage: 0.4 s in a full suite
        expected = multipletests(pvalues, method="holm")[1]
    assert np.allclose(adjusted, expected)
    assert (adjusted >= np.asarray(pvalues) - 1e-12).all()
    order = np.argsort(pvalues, kind="stable")
    assert (np.diff(adjusted[order]) >= -1e-12).all()


def test_holm_keeps_nan_pvalues_out_of_the_ranking():
    adjusted = holm([0.02, math.nan, 0.01])
    assert math.isnan(adjusted[1]) and np.allclose(
        adjusted[[0, 2]], [0.04, 0.03]
    )  # m = 3 still counts the NaN


def test_paired_pvalue_is_scipys_one_sided_test_and_calibrated():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 5))
    assert paired_pvalue(a, b) == stats.ttest_rel(a, b, alternative="less").pvalue
    assert paired_pvalue(a - 10, b) < 1e-3 and paired_pvalue(a + 10, b) > 0.999
    null = [paired_pvalue(*rng.normal(size=(2, 5))) for _ in range(2000)]
    assert abs(np.mean(np.array(null) < 0.05) - 0.05) < 0.015  # uniform p under H0
    with pytest.raises(InputError, match="paired"):
        paired_pvalue([1.0, 2.0], [1.0, 2.0, 3.0])


def test_gaussian_shift_interval_covers_the_true_shift():
    rng = np.random.default_rng(1)
    mu, trials, reps = 0.6, 2000, 400
    covered = 0
    for _ in range(reps):
        estimate, low, high = gaussian_shift(
            rng.normal(mu, 1.0, trials), rng.normal(0.0, 1.0, trials), confidence=0.99
        )
        assert low < estimate < high
        covered += low <= mu <= high
    assert 0.97 <= covered / reps <= 1.0
    with pytest.raises(InputError, match="confidence"):
        gaussian_shift(np.zeros(3), np.ones(3), confidence=1.5)


def _coverage(intervals, truth):
    return np.mean([lo <= truth <= hi for _, lo, hi in intervals])


def test_mean_interval_covers_at_its_level():
    rng = np.random.default_rng(0)
    cover = _coverage([mean_interval(rng.normal(2.0, 3.0, size=12)) for _ in range(2000)], 2.0)
    assert cover == pytest.approx(0.95, abs=0.015)


def test_std_ratio_interval_covers_at_its_level():
    rng = np.random.default_rng(1)
    runs = [std_ratio_interval(rng.normal(0.0, 0.5, size=50), 0.5) for _ in range(2000)]
    assert _coverage(runs, 1.0) == pytest.approx(0.99, abs=0.006)


def test_log_ratio_interval_covers_at_its_level():
    rng = np.random.default_rng(2)
    n, p0, p1 = 5000, 0.2, 0.3
    hits = rng.binomial(n, [p0, p1], size=(2000, 2))
    runs = [log_ratio_interval(h0, h1, n, n) for h0, h1 in hits]
    assert _coverage(runs, math.log(p1 / p0)) == pytest.approx(0.99, abs=0.006)


def test_pooled_chisquare_is_uniform_under_the_law_and_rejects_another():
    rng = np.random.default_rng(3)
    law = np.array([0.5, 0.3, 0.15, 0.04, 0.01])
    pvals = [pooled_chisquare_pvalue(rng.multinomial(400, law), law) for _ in range(2000)]
    assert np.mean(np.array(pvals) < 0.05) == pytest.approx(0.05, abs=0.015)
    other = rng.multinomial(400, [0.4, 0.4, 0.15, 0.04, 0.01])
    assert pooled_chisquare_pvalue(other, law) < 1e-4


def test_confidence_is_validated():
    with pytest.raises(InputError, match="confidence"):
        mean_interval(np.ones(3), confidence=1.5)


def test_exceedance_interval_covers_at_its_level():
    rng = np.random.default_rng(4)
    hits = rng.binomial(400, 0.03, 2000)
    interval = {k: exceedance_interval(k, 400, alpha=0.05) for k in map(int, np.unique(hits))}
    runs = [interval[int(k)] for k in hits]  # the 2000 runs' intervals, each count's once
    assert _coverage(runs, 0.03) >= 0.95  # Clopper-Pearson is conservative
    assert exceedance_interval(0, 100, alpha=0.05)[2] == pytest.approx(1 - 0.05 ** (1 / 100))


def test_degenerate_inputs_name_the_argument():
    with pytest.raises(InputError, match="len\\(values\\) must be a whole number >= 2"):
        mean_interval(np.ones(1))
    with pytest.raises(InputError, match="hits0 must be a whole number >= 1"):
        log_ratio_interval(0, 5, 100, 100)


def test_binom_cdf_is_scipys_value_for_value():
    """The reach's binomial CDF without scipy's wrapper: the same numbers, edges included
    (k below 0, k at and above n, p at 0 and 1, tiny p)."""
    rng = np.random.default_rng(7)
    n = rng.integers(1, 100_000, 200_000).astype(float)
    k = np.floor(rng.random(n.size) * (n + 3)) - 1
    p = rng.random(n.size)
    p[::5], p[1::9] = 0.0, 1.0
    p[2::7] **= 30
    assert np.array_equal(binom_cdf(k, n, p), stats.binom.cdf(k, n, p))
    assert binom_cdf([[-1.0, 3.0, 10.0]], 10, [[0.5], [0.0]]).shape == (2, 3)
