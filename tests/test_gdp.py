"""Gaussian DP: the (ε, δ) duality against dp-accounting and the analytic Gaussian mechanism."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution
from scipy import optimize, stats

from dpclaims.audit import gdp_delta, gdp_epsilon, gdp_mu
from dpclaims.errors import InputError


def analytic_sigma(epsilon, delta):
    """Balle & Wang (2018) analytic Gaussian calibration, sensitivity 1."""

    def gap(sigma):
        return (
            stats.norm.cdf(0.5 / sigma - epsilon * sigma)
            - math.exp(epsilon) * stats.norm.cdf(-0.5 / sigma - epsilon * sigma)
            - delta
        )

    return optimize.brentq(gap, 1e-3, 100.0)


def test_mu_one_at_delta_1e5_matches_dp_accounting():
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        1.0, sensitivity=1.0, value_discretization_interval=1e-4
    )
    expected = pld.get_epsilon_for_delta(1e-5)
    assert gdp_epsilon(1.0, 1e-5) == pytest.approx(expected, abs=1e-4)
    assert gdp_epsilon(1.0, 1e-5) == pytest.approx(4.3772, abs=1e-3)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_round_trip_through_the_analytic_gaussian(epsilon):
    mu = 1.0 / analytic_sigma(epsilon, 1e-5)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(epsilon, rel=1e-8)
    assert gdp_delta(gdp_epsilon(mu, 1e-5), mu) == pytest.approx(1e-5, rel=1e-6)


def test_edge_cases():
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_epsilon(0.01, 0.5) == 0.0  # delta above delta(0)
    assert gdp_epsilon(1.0, 0.0) == math.inf
    assert gdp_delta(50.0, 1.0) == 0.0
    with pytest.raises(InputError, match="mu"):
        gdp_epsilon(-1.0, 1e-5)
    with pytest.raises(InputError, match="delta"):
        gdp_epsilon(1.0, 1.5)


def test_mu_from_rates():
    fpr = stats.norm.sf(1.0)
    fnr = stats.norm.cdf(1.0 - 2.0)
    assert gdp_mu(fpr, fnr) == pytest.approx(2.0)
    assert gdp_mu(0.6, 0.5) == 0.0
    np.testing.assert_array_equal(gdp_mu(np.array([0.5, 1.0]), np.array([0.5, 0.0])), [0.0, 0.0])
