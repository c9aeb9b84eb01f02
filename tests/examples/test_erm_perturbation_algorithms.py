"""Unit tests of the example plugin's algorithms (Chaudhuri, Monteleoni, Sarwate 2011)."""

import math

import numpy as np
import pytest
from erm_perturbation.algorithms import (
    ObjectivePerturbation,
    OutputPerturbation,
    gamma_norm_noise,
    minimise,
    regularised_risk,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.audit import audit
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem


def _data(rng, n, d):
    x = rng.standard_normal((n, d))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    return x, np.where(rng.random(n) < 0.5, 1.0, -1.0)


def _gradient(f, x, y, *, lam, linear):
    """Central finite differences of J(f) + linear·f -> (d,)."""
    h, grad = 1e-6, []
    for j in range(len(f)):
        step = np.zeros_like(f)
        step[j] = h
        up, down = (regularised_risk((f + s)[None], x, y, lam)[0] for s in (step, -step))
        grad.append((up - down) / (2 * h) + linear[j])
    return np.array(grad)


def test_gamma_norm_noise_has_gamma_norms_and_uniform_directions():
    b = gamma_norm_noise(np.random.default_rng(0), shape=(200_000,), d=4, beta=2.0)
    norms = np.linalg.norm(b, axis=1)
    assert b.shape == (200_000, 4)
    assert norms.mean() == pytest.approx(4 / 2.0, rel=0.01)  # Gamma(d, 1/β): mean d/β
    assert norms.var() == pytest.approx(4 / 2.0**2, rel=0.03)  # variance d/β²
    assert np.abs((b / norms[:, None]).mean(axis=0)).max() < 0.01


def test_minimise_solves_each_perturbed_problem():
    rng = np.random.default_rng(1)
    x, y = _data(rng, 50, 3)
    linear = 0.1 * rng.standard_normal((4, 3))
    solutions = minimise(x, y, 0.05, linear)
    for f, b in zip(solutions, linear, strict=True):
        assert np.abs(_gradient(f, x, y, lam=0.05, linear=b)).max() < 1e-6
        assert np.allclose(minimise(x, y, 0.05, b[None])[0], f, atol=1e-9)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), lam=st.floats(0.01, 10.0))
def test_minimiser_moves_at_most_the_sensitivity_bound(seed, n, lam):
    """Proof of Theorem 6: replacing one record moves argmin J by at most 2/(nΛ)."""
    rng = np.random.default_rng(seed)
    x, y = _data(rng, n, 2)
    x1, y1 = x.copy(), y.copy()
    x1[0], y1[0] = -x[0] / max(1.0, np.linalg.norm(x[0])), -y[0]
    zero = np.zeros((1, 2))
    gap = np.linalg.norm(minimise(x, y, lam, zero) - minimise(x1, y1, lam, zero))
    assert gap <= OutputPerturbation(n=n, epsilon=1.0, lam=lam).sensitivity


def test_output_perturbation_parameters_follow_algorithm_1():
    mechanism = OutputPerturbation.from_theorem(Problem(n=200, epsilon=0.5, strong_convexity=0.1))
    assert mechanism.sensitivity == pytest.approx(2 / (200 * 0.1))
    assert mechanism.beta == pytest.approx(200 * 0.1 * 0.5 / 2)
    with pytest.raises(InputError, match="pure ε-DP"):
        OutputPerturbation.from_theorem(Problem(n=10, epsilon=1.0, delta=1e-5, strong_convexity=1))
    with pytest.raises(InputError, match="Λ = strong_convexity > 0"):
        OutputPerturbation.from_theorem(Problem(n=10, epsilon=1.0))


def test_objective_perturbation_parameters_follow_algorithm_2():
    roomy = ObjectivePerturbation.from_theorem(Problem(n=100, epsilon=1.0, strong_convexity=0.1))
    slack = math.log(1 + 2 * 0.25 / 10 + 0.25**2 / 10**2)
    assert roomy.c == 0.25 and roomy.extra_ridge == 0.0
    assert (
        roomy.epsilon_noise == pytest.approx(1.0 - slack) and roomy.beta == roomy.epsilon_noise / 2
    )
    tight = ObjectivePerturbation.from_theorem(Problem(n=2, epsilon=0.1, strong_convexity=0.01))
    assert tight.epsilon - tight.slack <= 0
    assert tight.epsilon_noise == 0.05
    assert tight.extra_ridge == pytest.approx(0.25 / (2 * math.expm1(0.1 / 4)) - 0.01)


def _flip_pair(n):
    x = np.zeros((n, 1, 1))
    x[0] = 1.0
    y = np.ones((n, 1))
    flipped = y.copy()
    flipped[0] = -1.0
    return UserDataset(x, y), UserDataset(x, flipped)


def test_exact_epsilon_of_objective_perturbation_on_the_flip_pair_is_beta():
    """The privacy loss at output f: noise densities of b_D(f) = -n(∇J_D(f) + Δf) and the
    Jacobians n(J_D''(f) + Δ); its supremum over f is the exact ε the experiments report."""
    mechanism = ObjectivePerturbation(n=10, epsilon=1.0, lam=1.0)
    f = np.linspace(-20, 20, 40_001)

    def noise_and_jacobian(label):
        s = 1.0 / (1.0 + np.exp(label * f))  # σ(-y f) = -ℓ'(y f)
        grad = (-label * s) / mechanism.n + mechanism.lam * f
        return -mechanism.n * grad, mechanism.n * (s * (1 - s) / mechanism.n + mechanism.lam)

    (b0, j0), (b1, j1) = noise_and_jacobian(1.0), noise_and_jacobian(-1.0)
    loss = -mechanism.beta * (np.abs(b0) - np.abs(b1)) + np.log(j0) - np.log(j1)
    assert np.abs(loss).max() == pytest.approx(mechanism.beta, rel=1e-6)
    assert mechanism.beta < mechanism.epsilon


class SumLossOutputPerturbation(OutputPerturbation):
    """A classic bug: the sensitivity of the sum-of-losses objective, 2/(n·nΛ), used for the
    mean-loss J of the paper (Algorithm 1 needs 2/(nΛ)): n times too little noise."""

    @property
    def sensitivity(self) -> float:
        return 2.0 / (self.n * self.n * self.lam)


@pytest.mark.parametrize(
    "mechanism, verdict",
    [
        (OutputPerturbation(n=10, epsilon=1.0, lam=1.0, loss="huber"), "consistent"),
        (ObjectivePerturbation(n=10, epsilon=1.0, lam=1.0, c=1.0, loss="huber"), "consistent"),
        (SumLossOutputPerturbation(n=10, epsilon=1.0, lam=1.0, loss="huber"), "violation"),
    ],
)
def test_audit_passes_the_algorithms_and_catches_the_sum_loss_bug(mechanism, verdict):
    """On the flip pair under the Huber loss (it attains the sensitivity, so the audit reaches
    the claim: ``consistent``, not ``consistent_weak``)."""
    d0, d1 = _flip_pair(10)
    claim = PrivacyClaim(epsilon=1.0, delta=0.0)
    result = audit(
        mechanism, d0, d1, claim=claim, trials=5000, seed=3, execution=Execution(backend="serial")
    )
    assert result.verdict == verdict, result.reason
