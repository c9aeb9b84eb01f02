"""Gaussian instances: exact population loss, minimiser, user-level reduction, fingerprinting
instance."""

import math

import numpy as np
import pytest
from scipy import stats

from dpclaims.errors import InputError
from dpclaims.hardinstances.gaussian import (
    GaussianPackingFamily,
    TruncatedGaussianInstance,
    UserLevelGaussianInstance,
    sample_user_level_gaussian,
)
from dpclaims.hardinstances.packings import sphere_packing
from dpclaims.losses import project_l2_ball

MC_DRAWS = 10**6


def assert_population_loss_matches_mc(inst, thetas, seed):
    """Closed-form L(θ) within 4 standard errors of the mean loss over 10^6 fresh items."""
    data = inst.sample(MC_DRAWS, 1, np.random.default_rng(seed))
    x = data.x[:, 0, :]
    y = None if data.y is None else data.y[:, 0]
    values = inst.loss.value(thetas, x, y)
    mc = values.mean(axis=1)
    se = values.std(axis=1, ddof=1) / math.sqrt(MC_DRAWS)
    exact = inst.population_loss(thetas)
    assert np.all(np.abs(mc - exact) <= 4 * se + 1e-12), (mc, exact, se)


def random_ball(rng, count, d, radius):
    """Uniform points in the ball plus points on its boundary sphere."""
    g = rng.standard_normal((count, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    r = radius * rng.random(count) ** (1.0 / d)
    r[: count // 4] = radius
    return g * r[:, None]


def assert_theta_star_minimises(inst, seed):
    star = inst.theta_star
    assert np.linalg.norm(star) <= inst.radius * (1 + 1e-12)
    # projected gradient mapping vanishes at θ*
    grad = inst.population_grad(star)
    step = project_l2_ball((star - grad)[None, :], inst.radius)[0]
    assert np.linalg.norm(star - step) <= 1e-8
    # no feasible point of a random sample does better
    pts = random_ball(np.random.default_rng(seed), 10**4, inst.d, inst.radius)
    assert inst.population_loss(pts).min() >= inst.population_loss(star) - 1e-12
    assert np.all(inst.excess_risk(pts) >= 0)
    # population_grad is the gradient of population_loss (central differences)
    theta = 0.3 * pts[:3]
    h = 1e-6
    fd = np.stack(
        [
            (inst.population_loss(theta + h * e) - inst.population_loss(theta - h * e)) / (2 * h)
            for e in np.eye(inst.d)
        ],
        axis=-1,
    )
    assert np.allclose(fd, inst.population_grad(theta), atol=1e-6)


def test_user_level_gaussian_instance_exact():
    inst = UserLevelGaussianInstance(
        np.array([0.4, -0.3, 0.8]), sigma=0.7, radius=0.6, strength=1.5
    )
    thetas = np.array([[0.0, 0.0, 0.0], [0.2, -0.1, 0.5], [-0.6, 0.0, 0.0], [1.0, 2.0, -1.0]])
    assert_population_loss_matches_mc(inst, thetas, seed=1)
    assert_theta_star_minimises(inst, seed=2)


def test_user_level_reduction_gives_iid_items():
    """Lemma D.3: x_ij = y_i + σ(w_ij − w̄_i) are i.i.d. N(μ, σ²I) and y_i is the user mean."""
    mean, sigma, n, m = np.array([1.0, -2.0]), 0.5, 200_000, 3
    x, user_means = sample_user_level_gaussian(mean, sigma, n, m, np.random.default_rng(3))
    assert np.allclose(x.mean(axis=1), user_means)
    flat = x.reshape(n, m * 2)
    se_mean = sigma / math.sqrt(n)
    assert np.all(np.abs(flat.mean(axis=0) - np.tile(mean, m)) <= 4 * se_mean)
    cov = np.cov(flat, rowvar=False)
    se_cov = sigma**2 * math.sqrt(2.0 / n)  # sd of a sample variance; off-diagonals have sd σ²/√n
    assert np.all(np.abs(cov - sigma**2 * np.eye(m * 2)) <= 5 * se_cov)
    # each coordinate is normal (KS on 2·10^5 draws)
    assert stats.kstest((x[:, 1, 0] - mean[0]) / sigma, "norm").pvalue > 1e-3
    # the sufficient statistic alone has variance σ²/m
    inst = UserLevelGaussianInstance(mean, sigma, 5.0)
    ybar = inst.sample_user_means(n, m, np.random.default_rng(4))
    assert np.var(ybar[:, 0], ddof=1) == pytest.approx(sigma**2 / m, rel=4 * math.sqrt(2.0 / n))


def test_sampling_is_reproducible_and_shaped():
    inst = UserLevelGaussianInstance(np.zeros(4), 1.0, 1.0)
    a = inst.sample(7, 5, np.random.default_rng(11))
    b = inst.sample(7, 5, np.random.default_rng(11))
    assert a.x.shape == (7, 5, 4) and np.array_equal(a.x, b.x)


def test_gaussian_packing_family():
    pk = sphere_packing(3, 1.0)  # icosahedron
    fam = GaussianPackingFamily(pk, scale=0.5, sigma=1.0, radius=1.0)
    assert len(fam) == 12
    assert fam.mean_separation == pytest.approx(0.5 * pk.min_distance)
    assert np.allclose(fam.member(4).mean, 0.5 * pk.points[4])
    assert np.allclose(fam.member(4).theta_star, 0.5 * pk.points[4])
    i1, d1 = fam.sample_mixture(5, 2, np.random.default_rng(9))
    i2, d2 = fam.sample_mixture(5, 2, np.random.default_rng(9))
    assert i1 == i2 and np.array_equal(d1.x, d2.x)
    with pytest.raises(InputError, match="index"):
        fam.member(12)


@pytest.mark.parametrize("loss_kind", ["squared_distance", "linear"])
def test_truncated_gaussian_exact_with_active_truncation(loss_kind):
    # B close to the typical norm, so a large fraction of items is zeroed
    inst = TruncatedGaussianInstance(
        np.array([0.5, -0.3, 0.2]),
        sigma=0.6,
        truncation=1.2,
        strength=2.0,
        radius=1.0,
        loss_kind=loss_kind,
    )
    assert 0.2 < inst.keep_probability < 0.9
    data = inst.sample(MC_DRAWS, 1, np.random.default_rng(5)).x[:, 0, :]
    kept = np.any(data != 0, axis=1)
    assert abs(kept.mean() - inst.keep_probability) <= 4 * math.sqrt(
        inst.keep_probability / MC_DRAWS
    )
    se = data.std(axis=0, ddof=1) / math.sqrt(MC_DRAWS)
    assert np.all(np.abs(data.mean(axis=0) - inst.chi_tr) <= 4 * se)
    thetas = np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1], [1.0, 1.0, 1.0]])
    assert_population_loss_matches_mc(inst, thetas, seed=6)
    assert_theta_star_minimises(inst, seed=7)


@pytest.mark.parametrize("d", [2, 8, 32])
def test_hard_instance_sc_follows_theorem_d7(d):
    n, m, mu, G, eps = 400, 50, 2.0, 3.0, 0.5
    inst = TruncatedGaussianInstance.from_theorem(d, n, m, mu, G, eps, np.random.default_rng(d))
    # spec 001 §5.3: "B = G/(2*mu)", "sigma = B / (1000*sqrt(d))", "K = B_d(0, B)"
    assert inst.truncation == pytest.approx(G / (2 * mu))
    assert inst.sigma == pytest.approx(G / (2 * mu) / (1000 * math.sqrt(d)))
    assert inst.radius == inst.truncation
    # "chi ~ Uniform([-psi*sigma/sqrt(m), +psi*sigma/sqrt(m)]^d)", psi = 1
    assert np.all(np.abs(inst.chi) <= inst.sigma / math.sqrt(m))
    # spec 001 §7(b) RT-11: "‖χ^tr − χ‖ ≤ 1e-6·σ"
    assert np.linalg.norm(inst.chi_tr - inst.chi) <= 1e-6 * inst.sigma
    assert np.allclose(inst.theta_star, inst.chi)
    # the loss (μ/2)‖θ − x‖² is exactly G-Lipschitz on K for ‖x‖ ≤ B
    assert inst.loss.lipschitz(inst.radius, inst.truncation) == pytest.approx(G)
    # "The statistical floor is E‖x̄ − χ‖² = dσ²/(nm) = B²/(10^6 nm)"
    assert d * inst.sigma**2 / (n * m) == pytest.approx(inst.truncation**2 / (1e6 * n * m))
    xbar = inst.sample(n, m, np.random.default_rng(1)).x.reshape(-1, d).mean(axis=0)
    assert np.sum((xbar - inst.chi) ** 2) < 10 * d * inst.sigma**2 / (n * m)
    # lower bound delegates to the Thm D.7 formula: G² d / (8·10^10 μ ε² n² m)
    assert inst.lower_bound() == pytest.approx(G**2 * d / (8e10 * mu * eps**2 * n**2 * m))


def test_paper_convention_doubles_truncation():
    inst = TruncatedGaussianInstance.from_theorem(
        4, 100, 10, 1.0, 1.0, 1.0, np.random.default_rng(0), convention="paper"
    )
    assert inst.truncation == pytest.approx(1.0) and inst.radius == pytest.approx(1.0)
    # spec 001 §5.3 [ERRATA?]: "K = B(0, G/μ) (gradient ≤ 2G there)"
    assert inst.loss.lipschitz(inst.radius, inst.truncation) == pytest.approx(2.0)


def test_gaussian_lower_bound_lemma_d5():
    inst = UserLevelGaussianInstance(np.zeros(16), sigma=1.0, radius=1.0, strength=2.0)
    n, m, eps = 1000, 4, 1.0
    expected = 0.5 * 2.0 * min(16 / (6 * m), (16 / (24 * eps * n * math.sqrt(m))) ** 2)
    assert inst.lower_bound(n, m, eps) == pytest.approx(expected)
    linear = TruncatedGaussianInstance(np.zeros(2), 1.0, 3.0, 1.0, 1.0, loss_kind="linear")
    with pytest.raises(InputError, match="squared_distance"):
        linear.lower_bound(n, m, eps)


def test_bad_inputs():
    with pytest.raises(InputError, match="sigma"):
        TruncatedGaussianInstance(np.zeros(2), -1.0, 1.0, 1.0, 1.0)
    with pytest.raises(InputError, match="loss_kind"):
        TruncatedGaussianInstance(np.zeros(2), 1.0, 1.0, 1.0, 1.0, loss_kind="huber")
    with pytest.raises(InputError, match="rng"):
        UserLevelGaussianInstance(np.zeros(2), 1.0, 1.0).sample(3, 2, 0)
    with pytest.raises(InputError, match="theta"):
        TruncatedGaussianInstance(np.zeros(2), 1.0, 1.0, 1.0, 1.0).population_loss(np.zeros((4, 3)))
    with pytest.raises(InputError, match="delta"):
        UserLevelGaussianInstance(np.zeros(2), 1.0, 1.0).lower_bound(10, 2, 1.0, delta=1.5)
    with pytest.raises(InputError, match="n, m and epsilon"):
        TruncatedGaussianInstance(np.zeros(2), 1.0, 3.0, 1.0, 1.0).lower_bound()
