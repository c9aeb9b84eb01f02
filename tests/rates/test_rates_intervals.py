"""Calibration of dpclaims.rates.intervals on cases with known truth (fixed seeds)."""

import math

import numpy as np
import pytest

from dpclaims.errors import InputError
from dpclaims.rates.intervals import (
    log_ratio_interval,
    mean_interval,
    pooled_chisquare_pvalue,
    std_ratio_interval,
)


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
