"""The dp-accounting bridge: PLD vs the exact analytic Gaussian, RDP looser, calibrations."""

import math

import dp_accounting
import pytest

from dpclaims.algorithms.mechanisms import analytic_gaussian_sigma
from dpclaims.errors import InputError
from dpclaims.privacy import (
    PrivacyClaim,
    accountant_claim,
    calibrate_noise_multiplier,
    gaussian_epsilon,
    laplace_epsilon,
    subsampled_gaussian_epsilon,
)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("sensitivity", [1.0, 0.3])
def test_pld_gaussian_matches_analytic_calibration(epsilon, sensitivity):
    sigma = analytic_gaussian_sigma(epsilon, 1e-5, sensitivity)
    assert gaussian_epsilon(sigma, 1e-5, sensitivity) == pytest.approx(epsilon, rel=1e-3)


def test_rdp_is_looser_than_pld():
    sigma = analytic_gaussian_sigma(1.0, 1e-5)
    assert gaussian_epsilon(sigma, 1e-5, accountant="rdp") > gaussian_epsilon(sigma, 1e-5) * 1.01
    pld = subsampled_gaussian_epsilon(1.0, 0.1, 50, 1e-5)
    rdp = subsampled_gaussian_epsilon(1.0, 0.1, 50, 1e-5, accountant="rdp")
    assert rdp > pld > 0


def test_composition_and_subsampling_move_epsilon_the_right_way():
    one = subsampled_gaussian_epsilon(2.0, 1.0, 1, 1e-5)
    assert one == pytest.approx(dp_accounting.get_epsilon_gaussian(2.0, 1e-5), rel=1e-3)
    assert subsampled_gaussian_epsilon(2.0, 1.0, 10, 1e-5) > one
    assert subsampled_gaussian_epsilon(2.0, 0.1, 10, 1e-5) < subsampled_gaussian_epsilon(
        2.0, 1.0, 10, 1e-5
    )


def test_replace_at_full_batch_is_twice_the_sensitivity():
    replace = subsampled_gaussian_epsilon(4.0, 1.0, 1, 1e-5, relation="replace")
    assert replace == pytest.approx(dp_accounting.get_epsilon_gaussian(2.0, 1e-5), rel=1e-3)
    assert (
        subsampled_gaussian_epsilon(4.0, 1.0, 1, 1e-5, accountant="rdp", relation="replace")
        >= replace
    )
    with pytest.raises(InputError, match="relation='replace'"):
        subsampled_gaussian_epsilon(4.0, 0.5, 1, 1e-5, accountant="rdp", relation="replace")


@pytest.mark.parametrize(
    ("epsilon", "rate", "steps"), [(1.0, 1.0, 1), (2.0, 0.1, 100), (0.5, 0.05, 20)]
)
def test_calibrate_noise_multiplier_round_trips(epsilon, rate, steps):
    sigma = calibrate_noise_multiplier(epsilon, 1e-5, rate, steps)
    achieved = subsampled_gaussian_epsilon(sigma, rate, steps, 1e-5)
    assert achieved <= epsilon * (1 + 1e-6)
    assert achieved == pytest.approx(epsilon, rel=1e-3)
    assert subsampled_gaussian_epsilon(sigma * 0.99, rate, steps, 1e-5) > epsilon


def test_calibrated_single_gaussian_is_the_analytic_sigma():
    assert calibrate_noise_multiplier(1.0, 1e-5) == pytest.approx(
        analytic_gaussian_sigma(1.0, 1e-5), rel=1e-3
    )


def test_laplace_epsilon():
    assert laplace_epsilon(0.5, 2.0) == 4.0
    approx = laplace_epsilon(1.0, 1.0, delta=1e-3)
    assert 0.9 < approx <= 1.0


def test_accountant_claim():
    claim = accountant_claim(1.0, 0.1, 100, 1e-5, unit="user")
    assert isinstance(claim, PrivacyClaim)
    assert (claim.unit, claim.relation, claim.delta, claim.source) == (
        "user",
        "add-remove",
        1e-5,
        "dp-accounting PLD",
    )
    assert claim.epsilon == pytest.approx(subsampled_gaussian_epsilon(1.0, 0.1, 100, 1e-5))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gaussian_epsilon(0.0, 1e-5), "sigma"),
        (lambda: gaussian_epsilon(1.0, 0.0), "delta"),
        (lambda: gaussian_epsilon(1.0, 1e-5, accountant="moments"), "accountant"),
        (lambda: subsampled_gaussian_epsilon(1.0, 1.5, 10, 1e-5), "sampling_rate"),
        (lambda: subsampled_gaussian_epsilon(1.0, 0.1, 0, 1e-5), "steps"),
        (lambda: subsampled_gaussian_epsilon(1.0, 0.1, 10, 1e-5, relation="swap"), "relation"),
        (lambda: calibrate_noise_multiplier(-1.0, 1e-5), "epsilon"),
        (lambda: calibrate_noise_multiplier(1e4, 1e-5), "smaller epsilon"),
        (lambda: laplace_epsilon(math.inf), "scale"),
    ],
)
def test_bad_arguments_name_the_argument(call, match):
    with pytest.raises(InputError, match=match):
        call()
