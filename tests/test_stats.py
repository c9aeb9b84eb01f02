"""dpclaims.stats: paired t-test, Holm's correction, the Gaussian shift interval (calibration on
cases with known truth, fixed seeds)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dpclaims.errors import InputError
from dpclaims.stats import gaussian_shift, holm, paired_pvalue


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_holm_matches_statsmodels_and_is_monotone(pvalues):
    adjusted = holm(pvalues)
    assert np.allclose(adjusted, multipletests(pvalues, method="holm")[1])
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
