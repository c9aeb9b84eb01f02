"""The calibrated §6 stand-in: shape, determinism, the §6.1 preprocessing, and privacy headroom."""

import numpy as np
import pytest

from dpclaims.claims.checks.murata_suzuki_2023.section6 import HEADROOM, Section6
from dpclaims.hardinstances.murata_suzuki_2023 import CALIBRATED_SNR, STANDINS, regression_standin


def _draw(seed, **kw):
    return regression_standin("calibrated", np.random.default_rng(seed), **kw)


def test_calibrated_standin_has_its_shape_and_the_section61_preprocessing():
    split = _draw(0)
    n, p = STANDINS["calibrated"]
    assert (split.train.n, split.train.m, split.train.d) == (10, 160, p)
    assert split.test_x.shape == (n // 5, p) and split.model.d == 101
    x = split.train.x.reshape(-1, p)
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-12)  # standardised on train
    np.testing.assert_allclose(x.std(axis=0), 1.0, rtol=1e-12)
    y = np.concatenate([split.train.y.ravel(), split.test_y])
    assert np.max(np.abs(y)) == 1.0  # divided by max |y| over the whole set
    # the designed correlation survives: neighbouring features correlate at about 0.8
    assert 0.75 < np.corrcoef(x[:, 0], x[:, 1])[0, 1] < 0.85


def test_calibrated_standin_is_determined_by_its_seeds():
    a, b = _draw(3), _draw(3)
    np.testing.assert_array_equal(a.train.x, b.train.x)
    np.testing.assert_array_equal(a.test_y, b.test_y)
    assert not np.array_equal(a.train.y, _draw(4).train.y)
    c = _draw(3, split_rng=np.random.default_rng(9))  # same data, another split
    np.testing.assert_array_equal(
        np.sort(np.concatenate([a.train.y.ravel(), a.test_y])),
        np.sort(np.concatenate([c.train.y.ravel(), c.test_y])),
    )
    assert _draw(3, samples=500).train.m == 40


def test_calibrated_standin_is_a_linear_teacher_with_the_stated_noise():
    """Least squares on the pooled data leaves residuals with the designed signal-to-noise ratio."""
    split = _draw(5, samples=2000)
    x = np.concatenate([split.train.x.reshape(-1, split.train.d), split.test_x])
    y = np.concatenate([split.train.y.ravel(), split.test_y])
    design = np.column_stack([x, np.ones(len(x))])
    fit = design @ np.linalg.lstsq(design, y, rcond=None)[0]
    snr = np.std(fit) / np.std(y - fit)
    assert CALIBRATED_SNR * 0.9 < snr < CALIBRATED_SNR * 1.1


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20, 21])
def test_calibrated_standin_leaves_privacy_headroom(seed):
    """Non-private GD's train loss under App. A's tuning (the whole η ladder, R = 2000) is below
    HEADROOM x DP-GD's, on a smaller configuration (1,000 records, C1 = 1, one repetition) and
    dataset seeds not used to calibrate the stand-in."""
    setup = Section6("calibrated", seed=seed, samples=1000, clips=(1.0,))
    gd, dpgd = (min(setup.run_task(0, m, 0)["curves"]["train"]) for m in ("gd", "dp-gd"))
    assert gd < HEADROOM * dpgd
