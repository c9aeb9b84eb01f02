"""Null calibration: on identical datasets a certified bound is positive in at most ~5% of audits."""

import numpy as np
import pytest

from dpclaims.audit import audit

AUDITS = 200
TRIALS = 2000


def gauss(data, rng, trials):
    return data + rng.standard_normal(trials)


def laplace(data, rng, trials):
    return data + rng.laplace(size=trials)


def gauss5(data, rng, trials):
    return data + rng.standard_normal((trials, 5))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["threshold", "gdp"])
@pytest.mark.parametrize("mechanism", [gauss, laplace, gauss5], ids=["gauss", "laplace", "gauss5"])
def test_identical_datasets_rarely_give_positive_bound(mechanism, method):
    bounds = np.array(
        [
            audit(mechanism, 0.0, 0.0, epsilon=1.0, delta=1e-5, trials=TRIALS, seed=seed, method=method, backend="serial").epsilon_lower
            for seed in range(AUDITS)
        ]
    )
    assert np.all(bounds >= 0)
    assert np.mean(bounds == 0) >= 0.95
