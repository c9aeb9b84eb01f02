"""Heavy-tailed instances of spec 003: exact population loss, moments and tail index."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpclaims.errors import InputError
from dpclaims.hardinstances.lower_bounds import heavy_packing_probability, two_point_bias
from dpclaims.hardinstances.packings import exact_sphere_packing, sphere_packing
from dpclaims.hardinstances.pure_dp_heavy_tails import (
    HeavyPackingInstance,
    ParetoRadiusInstance,
    TwoPointInstance,
)
from dpclaims.losses import project_l2_ball
from dpclaims.problem import Problem

MC_DRAWS = 10**6


def item_arrays(inst, seed, draws=MC_DRAWS):
    data = inst.sample(draws, 1, np.random.default_rng(seed))
    return data.x[:, 0, :], None if data.y is None else data.y[:, 0]


def assert_population_loss_matches_mc(inst, thetas, seed):
    x, y = item_arrays(inst, seed)
    values = inst.loss.value(thetas, x, y)
    mc = values.mean(axis=1)
    se = values.std(axis=1, ddof=1) / math.sqrt(MC_DRAWS)
    exact = inst.population_loss(thetas)
    assert np.all(np.abs(mc - exact) <= 4 * se + 1e-12), (mc, exact, se)


def assert_theta_star_minimises(inst, seed):
    star = inst.theta_star
    grad = inst.population_grad(star)
    step = project_l2_ball((star - grad)[None, :], inst.radius)[0]
    assert np.linalg.norm(star - step) <= 1e-8
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((10**4, inst.d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    r = inst.radius * rng.random(10**4) ** (1.0 / inst.d)
    r[:2500] = inst.radius
    pts = g * r[:, None]
    assert inst.population_loss(pts).min() >= inst.population_loss(star) - 1e-12
    assert np.all(inst.excess_risk(pts) >= 0)


def test_two_point_exact_and_moments():
    inst = TwoPointInstance.from_theorem(
        Problem(n=50, d=3, epsilon=1.0), moment=2.0, diameter=3.0, beta=0.05, sign=-1
    )
    assert inst.bias == pytest.approx(math.sqrt(math.log(1 / 0.2) / 150))
    x, _ = item_arrays(inst, 1)
    # ‖z‖ ≡ G, so every moment is G^j exactly
    assert np.allclose(np.linalg.norm(x, axis=1), 2.0)
    assert inst.moment(4) == 16.0
    thetas = np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [-1.0, 0.5, 0.2]])
    assert_population_loss_matches_mc(inst, thetas, 2)
    assert_theta_star_minimises(inst, 3)
    assert np.allclose(inst.theta_star, [-1.5, 0.0, 0.0])
    # spec 003 §5 table: "excess(w) = (D/2)δG − ⟨w, μ_v⟩"
    w = np.array([[0.3, 0.1, 0.0]])
    assert inst.excess_risk(w)[0] == pytest.approx(1.5 * inst.bias * 2.0 - (-0.3 * inst.bias * 2.0))


@pytest.mark.parametrize("k", [2.0, 3.0, 4.0])
def test_heavy_packing_moments_match_g_to_the_k(k):
    pk = sphere_packing(2, 1.0)
    inst = HeavyPackingInstance(pk, index=2, p=0.01, k=k, moment=1.5, diameter=2.0)
    x, _ = item_arrays(inst, int(10 * k))
    norms = np.linalg.norm(x, axis=1)
    for order in (1.0, 2.0, k):
        vals = norms**order
        se = vals.std(ddof=1) / math.sqrt(MC_DRAWS)
        assert abs(vals.mean() - inst.moment(order)) <= 4 * se
    # spec 003 §5: "E‖z‖^k = p·A^k = G^k", "G_2 = G p^{1/2−1/k}", "‖μ_v‖ = ρ := G p^{1−1/k}"
    assert inst.moment(k) == pytest.approx(1.5**k)
    assert inst.moment(2.0) ** 0.5 == pytest.approx(1.5 * 0.01 ** (0.5 - 1 / k))
    assert np.linalg.norm(inst.mean) == pytest.approx(1.5 * 0.01 ** (1 - 1 / k))


def test_heavy_packing_exact_population_loss_and_minimiser():
    inst = HeavyPackingInstance(
        exact_sphere_packing(3, 1.0), index=5, p=0.05, k=3.0, moment=1.0, diameter=4.0
    )
    thetas = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, 0.3], [-2.0, 1.0, 1.0]])
    assert_population_loss_matches_mc(inst, thetas, 4)
    assert_theta_star_minimises(inst, 5)
    assert np.allclose(inst.theta_star, 2.0 * inst.direction)


def test_heavy_packing_from_theorem_uses_spec_p():
    inst = HeavyPackingInstance.from_theorem(
        Problem(n=1000, d=3, epsilon=0.5), k=2.0, moment=1.0, diameter=2.0, beta=0.1
    )
    # spec 003 §5: "p := min{1, ln((|V| − 1)/(2β)) / (8εn)}"; d = 3 packing is the icosahedron (|V|
    # = 12)
    assert inst.packing.size == 12
    assert inst.p == pytest.approx(math.log(11 / 0.2) / (8 * 0.5 * 1000))
    assert inst.p == heavy_packing_probability(1000, 0.5, 12, 0.1)
    lb = inst.lower_bound()
    assert lb == pytest.approx(inst.packing.min_distance**2 / 16 * 1.0 * 2.0 * inst.p**0.5)
    with pytest.raises(InputError, match="pure-DP"):
        inst.lower_bound(delta=1e-5)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_pareto_radius_population_loss_exact(d):
    inst = ParetoRadiusInstance(d, alpha=3.0, scale=1.0, radius=0.5)
    rng = np.random.default_rng(d)
    inside = 0.4 * rng.standard_normal((2, d)) / math.sqrt(d)
    outside = np.vstack([np.full((1, d), 2.0 / math.sqrt(d)), 1.3 * np.eye(d)[:1]])
    thetas = np.vstack([np.zeros((1, d)), inside, outside])
    assert_population_loss_matches_mc(inst, thetas, 10 + d)
    assert_theta_star_minimises(inst, 20 + d)
    # spec 003 §7b RT5: "population excess = E[a]·w² (for |w| ≤ ½)" (d = 1, h = 1/2)
    if d == 1:
        w = np.array([[0.3], [-0.45]])
        assert np.allclose(inst.excess_risk(w), inst.moment(1) * w[:, 0] ** 2)


def test_pareto_radius_population_loss_against_quadrature():
    inst = ParetoRadiusInstance(4, alpha=2.5, scale=0.7, radius=1.0, half_width=1.0)
    r = 2.7

    def dens(t):
        """Density of ⟨e, u⟩ on S^3, up to a constant."""
        return (1 - t * t) ** ((4 - 3) / 2)

    def g(s):
        return (s * s + 1.0) / 2.0 if abs(s) <= 1.0 else abs(s)

    num = integrate.quad(lambda t: g(r * t) * dens(t), -1, 1, points=[-1 / r, 1 / r])[0]
    den = integrate.quad(dens, -1, 1)[0]
    theta = np.array([[r, 0.0, 0.0, 0.0]])
    assert inst.population_loss(theta)[0] == pytest.approx(inst.moment(1) * num / den, rel=1e-9)


def test_pareto_moments_and_tail_index():
    alpha, xm = 4.5, 2.0
    inst = ParetoRadiusInstance(3, alpha=alpha, scale=xm, radius=1.0)
    x, y = item_arrays(inst, 31)
    a = np.linalg.norm(x, axis=1)
    # L_z = ‖x‖ = a, and y/a is uniform on [−h, h]
    assert stats.kstest(y / a, "uniform", args=(-1.0, 2.0)).pvalue > 1e-3
    # moments with finite variance (2j < α): Monte Carlo within 4 SE
    for j in (1.0, 2.0):
        vals = a**j
        assert abs(vals.mean() - inst.moment(j)) <= 4 * vals.std(ddof=1) / math.sqrt(MC_DRAWS)
    # j = k = 4 (infinite variance): exact formula against scipy's Pareto law
    for j in (1, 2, 3, 4):
        assert inst.moment(j) == pytest.approx(stats.pareto(alpha, scale=xm).moment(j), rel=1e-10)
    assert inst.moment(5) == math.inf
    # spec 003 §5: "G_k = x_m (α/(α−k))^{1/k}"
    assert inst.moment_parameter(4) == pytest.approx(xm * (alpha / (alpha - 4)) ** 0.25)
    # Hill estimator on the top 10^4 of 10^6 draws: 1/α̂ has standard error ≈ (1/α)/√k
    top = 10**4
    order = np.sort(a)[::-1]
    hill = np.mean(np.log(order[:top] / order[top]))
    assert abs(hill - 1 / alpha) <= 4 * (1 / alpha) / math.sqrt(top)


def test_heavy_tailed_bad_inputs():
    with pytest.raises(InputError, match="alpha"):
        ParetoRadiusInstance(2, alpha=1.0)
    with pytest.raises(InputError, match="k must"):
        HeavyPackingInstance(
            exact_sphere_packing(1, 1.0), index=0, p=0.1, k=1.5, moment=1.0, diameter=1.0
        )
    with pytest.raises(InputError, match="p must"):
        HeavyPackingInstance(
            exact_sphere_packing(1, 1.0), index=0, p=0.0, k=2.0, moment=1.0, diameter=1.0
        )
    with pytest.raises(InputError, match="n must be >="):
        two_point_bias(1, 0.01)
    with pytest.raises(InputError, match="sign"):
        TwoPointInstance(2, moment=1.0, diameter=1.0, bias=0.1, sign=0)


def test_step_pair_mean_clipped_gradient_is_a_step():
    """step_pair: with clip C the mean clipped gradient of a|w − b| is −2C/n (D) / 0 (D') left of
    the kink and 0 (D) / +2C/n (D') right of it; the datasets differ in record 0 only."""
    from dpclaims.hardinstances.pure_dp_heavy_tails.pairs import step_pair

    n, clip = 20, 3.0
    pair = step_pair(n, kink=2.0)
    w = np.array([-9.0, 1.9, 2.1, 9.0])

    def mean_clipped(data):
        a = np.asarray(data.x).reshape(n)
        b = np.asarray(data.y).reshape(n) / a
        g = a * np.sign(w[:, None] - b)
        return np.clip(g, -clip, clip).mean(axis=1)

    step = 2 * clip / n
    np.testing.assert_allclose(mean_clipped(pair.d0), [-step, -step, 0, 0], atol=1e-12)
    np.testing.assert_allclose(mean_clipped(pair.d1), [0, 0, step, step], atol=1e-12)
    differs = np.asarray(pair.d0.y).reshape(n) != np.asarray(pair.d1.y).reshape(n)
    assert differs.tolist() == [True] + [False] * (n - 1)
    with pytest.raises(InputError, match="even n"):
        step_pair(21)
