"""Exactness of the smooth / convex / Cauchy instances: closed forms vs Monte Carlo, optima."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.hardinstances.linear import (
    AbsoluteCubeInstance,
    LinearBallInstance,
    LinearHypercubeInstance,
)
from dpclaims.hardinstances.murata_suzuki_2023.nonconvex import CauchyCircleInstance
from dpclaims.hardinstances.quadratic import (
    GaussianMeanInstance,
    LeastSquaresInstance,
    NesterovChainInstance,
    QuadraticHypercubeInstance,
    SphereMeanInstance,
)
from dpclaims.losses import project_l2_ball

INSTANCES = {
    "gauss": lambda: GaussianMeanInstance([0.3, -0.2, 0.1], sigma=0.7, radius=1.0, strength=2.0),
    "gauss-boundary": lambda: GaussianMeanInstance([2.0, 0.0, 0.0], sigma=0.5, radius=1.0),
    "sphere": lambda: SphereMeanInstance([0.2, 0.1, 0.0, 0.0], spread=1.5),
    "quad-cube": lambda: QuadraticHypercubeInstance(
        4, alpha=0.3, scale=1.0, strength=1.5, signs=[1, -1, 1, 1]
    ),
    "least-squares": lambda: LeastSquaresInstance(5),
    "nesterov": lambda: NesterovChainInstance.for_steps(2, d=6, noise=0.5),
    "linear-ball": lambda: LinearBallInstance([0.3, 0.0, 0.0]),
    "linear-cube": lambda: LinearHypercubeInstance(4, alpha=0.3, signs=[1, -1, 1, -1]),
    "abs-cube": lambda: AbsoluteCubeInstance(3, alpha=0.4, signs=[1, -1, 1]),
    "cauchy": lambda: CauchyCircleInstance(d=4),
}
SMOOTH = [k for k in INSTANCES if k != "abs-cube"]


def _feasible(inst, rng, count):
    """Random points of the domain (a box around the base points when unconstrained)."""
    if math.isinf(inst.radius):
        return rng.uniform(-4, 4, size=(count, inst.d)) * rng.uniform(0, 1, size=(count, 1))
    v = rng.normal(size=(count, inst.d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v * inst.radius * rng.uniform(0, 1, size=(count, 1)) ** (1 / inst.d)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(INSTANCES))
def test_population_loss_matches_monte_carlo(name):
    inst = INSTANCES[name]()
    rng = np.random.default_rng(10)
    theta = np.vstack([_feasible(inst, rng, 2), inst.theta_star])
    data = inst.sample(10**6, 1, rng)
    values = inst.loss.value(theta, data.x[:, 0], None if data.y is None else data.y[:, 0])
    mc = values.mean(axis=1)
    se = values.std(axis=1, ddof=1) / math.sqrt(values.shape[1])
    exact = inst.population_loss(theta)
    assert np.all(np.abs(mc - exact) <= 4 * se + 1e-12), (mc, exact, se)


@pytest.mark.parametrize("name", list(INSTANCES))
def test_theta_star_is_a_feasible_minimiser(name):
    inst = INSTANCES[name]()
    rng = np.random.default_rng(11)
    star = inst.theta_star
    assert star.shape == (inst.d,)
    assert np.linalg.norm(star) <= inst.radius * (1 + 1e-12)
    best = inst.population_loss(star)
    points = _feasible(inst, rng, 10**4)
    assert np.min(inst.population_loss(points)) >= best - 1e-12
    # the points near θ* do no better either
    near = star + 1e-3 * rng.normal(size=(2000, inst.d))
    if not math.isinf(inst.radius):
        near = project_l2_ball(near, inst.radius)
    assert np.min(inst.population_loss(near)) >= best - 1e-12


@pytest.mark.parametrize("name", SMOOTH)
def test_projected_gradient_vanishes_at_theta_star(name):
    inst = INSTANCES[name]()
    star = inst.theta_star
    g = inst.population_grad(star)
    step = (
        project_l2_ball((star - g)[None, :], inst.radius)[0]
        if not math.isinf(inst.radius)
        else star - g
    )
    assert np.linalg.norm(star - step) <= 1e-8
    # and population_grad is the gradient of population_loss (central differences)
    rng = np.random.default_rng(12)
    theta = _feasible(inst, rng, 5)
    h = 1e-6
    eye = np.eye(inst.d) * h
    fd = (
        inst.population_loss(theta[:, None, :] + eye)
        - inst.population_loss(theta[:, None, :] - eye)
    ) / (2 * h)
    np.testing.assert_allclose(fd, inst.population_grad(theta), atol=1e-7)


def test_absolute_cube_optimality_and_excess_formula():
    inst = INSTANCES["abs-cube"]()
    rng = np.random.default_rng(13)
    star = inst.theta_star
    # one-sided directional derivatives at θ* are >= 0 in every direction
    dirs = rng.normal(size=(500, inst.d))
    t = 1e-6
    assert np.all(inst.population_loss(star + t * dirs) >= inst.population_loss(star) - 1e-15)
    # spec 000 §5.2 H3 per-coordinate excess formula
    theta = rng.uniform(-1.2, 1.2, size=(50, inst.d))
    nu = np.array([1.0, -1.0, 1.0])
    y, a, alpha = theta * nu, inst.a, inst.alpha
    per = np.where(np.abs(y) <= a, alpha * (a - y), np.where(y > a, y - a, -y - a + 2 * a * alpha))
    np.testing.assert_allclose(
        inst.excess_risk(theta), inst.lipschitz / math.sqrt(inst.d) * per.sum(axis=1), atol=1e-12
    )


def test_closed_form_excess_risks():
    rng = np.random.default_rng(14)
    theta = _feasible(INSTANCES["least-squares"](), rng, 7)
    ls = LeastSquaresInstance(5)
    np.testing.assert_allclose(
        ls.excess_risk(theta), np.sum((theta - ls.theta_star) ** 2, axis=1) / 10
    )
    lin = LinearBallInstance([0.3, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(lin.excess_risk(theta), 0.3 - theta @ lin.mean)
    assert lin.optimal_value == pytest.approx(-0.3)
    cube = LinearHypercubeInstance(4, alpha=0.5, lipschitz=2.0, radius=1.5, signs=[1, -1, -1, 1])
    np.testing.assert_allclose(cube.theta_star, 1.5 * np.array([1, -1, -1, 1]) / 2)
    assert cube.optimal_value == pytest.approx(-1.5 * 2.0 * 0.5)
    assert cube.normalised_risk(np.zeros((1, 4)))[0] == pytest.approx(1.0)
    quad = QuadraticHypercubeInstance(4, alpha=0.2, strength=3.0)
    np.testing.assert_allclose(
        quad.excess_risk(theta[:, :4]), 1.5 * np.sum((theta[:, :4] - quad.mean) ** 2, axis=1)
    )
    assert quad.trace_cov == pytest.approx(1 - 0.04)
    assert quad.excess_risk(theta[:, :4]).shape == (7,)


def test_cauchy_instance_matches_spec_numbers():
    inst = CauchyCircleInstance(d=10)
    assert inst.population_loss(inst.theta_star) == pytest.approx(0.5 * math.log(1.25))
    assert inst.population_loss(inst.theta_star) == pytest.approx(0.111572, abs=1e-6)
    assert inst.initial_gap == pytest.approx(1.0410, abs=1e-4)
    assert inst.gradient_norm_sq(inst.x0) == pytest.approx(0.0891, abs=1e-4)
    # global minimum: outside the disk of radius 1/2 the loss grows along rays, so a grid of the
    # disk suffices
    g = np.linspace(-0.5, 0.5, 201)
    grid = np.zeros((g.size**2, 10))
    grid[:, 0], grid[:, 1] = np.repeat(g, g.size), np.tile(g, g.size)
    assert np.min(inst.population_loss(grid)) >= inst.population_loss(inst.theta_star) - 1e-15
    # the replicated silos have exactly the population loss as their empirical loss
    data = inst.replicated(3, 16)
    theta = np.random.default_rng(15).normal(size=(4, 10))
    emp = inst.loss.value(theta, data.x).mean(axis=(1, 2))
    np.testing.assert_allclose(emp, inst.population_loss(theta))
    with pytest.raises(InputError, match="multiple of 8"):
        inst.replicated(2, 12)


def test_nesterov_chain_optimum_and_span_lower_bound():
    inst = NesterovChainInstance.for_steps(4, d=12, smoothness=2.0, radius=1.0, rho=0.5)
    assert inst.k == 9
    assert np.linalg.norm(inst.theta_star) == pytest.approx(0.5)
    assert inst.population_loss(inst.theta_star) == pytest.approx(inst.optimal_value)
    assert inst.loss.smoothness(1.0) <= 2.0 + 1e-12
    # t span queries from 0 reach at most span{e_1..e_t}; its best point is above F* + bound (k =
    # 2t+1)
    ratios = []
    for t in range(1, 9):
        chain = NesterovChainInstance.for_steps(t, smoothness=2.0)
        x = np.zeros(chain.d)
        x[:t] = np.linalg.solve(chain.loss.hessian[:t, :t], -chain.loss.offset[:t])
        ratios.append((chain.population_loss(x) - chain.optimal_value) / chain.span_lower_bound(t))
    assert min(ratios) >= 1.0 and max(ratios) < 10.0
    with pytest.raises(InputError, match="k = 2"):
        inst.span_lower_bound(3)


def test_user_means_sampler_matches_item_means():
    rng = np.random.default_rng(16)
    for inst in (LinearHypercubeInstance(3, alpha=0.4), QuadraticHypercubeInstance(3, alpha=0.4)):
        fast = inst.user_means(20000, 9, rng)
        slow = inst.sample(20000, 9, rng).x.mean(axis=1)
        np.testing.assert_allclose(
            fast.mean(axis=0), inst.mean, atol=4 * fast.std(axis=0).max() / math.sqrt(20000)
        )
        np.testing.assert_allclose(fast.var(axis=0), slow.var(axis=0), rtol=0.05)
        assert set(np.unique(np.round(fast[:, 0] * math.sqrt(3) * 9))) <= set(range(-9, 10, 2))


@pytest.mark.parametrize("name", list(INSTANCES))
def test_sample_shapes_reproducibility_and_to_dict(name):
    inst = INSTANCES[name]()
    data = inst.sample(4, 3, np.random.default_rng(0))
    assert isinstance(data, UserDataset) and data.x.shape == (4, 3, inst.d)
    again = inst.sample(4, 3, np.random.default_rng(0))
    assert data == again
    assert inst.excess_risk(np.zeros((5, inst.d))).shape == (5,)
    assert inst.population_loss(np.zeros((2, 3, inst.d))).shape == (2, 3)
    info = inst.to_dict()
    assert info["instance"] == type(inst).__name__ and info["d"] == inst.d


def test_bad_inputs():
    with pytest.raises(InputError, match="n must"):
        LinearBallInstance([0.3, 0.0]).sample(0, 1, np.random.default_rng(0))
    with pytest.raises(InputError, match="rng"):
        LinearBallInstance([0.3, 0.0]).sample(2, 1, 0)
    with pytest.raises(InputError, match="theta must have shape"):
        LeastSquaresInstance(3).population_loss(np.zeros((2, 4)))
    with pytest.raises(InputError, match="norm <= 1"):
        LinearBallInstance([2.0, 0.0])
    with pytest.raises(InputError, match="alpha"):
        LinearHypercubeInstance(3, alpha=1.5)
    with pytest.raises(InputError, match="signs"):
        LinearHypercubeInstance(3, alpha=0.5, signs=[1, 0, 1])
    with pytest.raises(InputError, match="rho"):
        NesterovChainInstance(5, rho=2.0)
    with pytest.raises(InputError, match="theta_dagger"):
        LeastSquaresInstance(2, theta_dagger=[2.0, 0.0])
    with pytest.raises(InputError, match="radius"):
        AbsoluteCubeInstance(3, radius=0.5)
    with pytest.raises(InputError, match="d must"):
        CauchyCircleInstance(d=1)
