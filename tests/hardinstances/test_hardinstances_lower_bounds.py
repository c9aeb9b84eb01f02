"""Lower-bound formulas against the worked numbers and exponents the specs state (quoted)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpclaims.errors import InputError
from dpclaims.hardinstances import lower_bounds as lb
from dpclaims.hardinstances.packings import exact_sphere_packing
from dpclaims.hardinstances.pure_dp_heavy_tails import HeavyPackingInstance, TwoPointInstance
from dpclaims.problem import Problem


def slope(func, name, lo, hi, **kwargs):
    """Log-log slope of ``func`` in the argument ``name`` between ``lo`` and ``hi``."""
    a = func(**{**kwargs, name: lo})
    b = func(**{**kwargs, name: hi})
    return math.log(b / a) / math.log(hi / lo)


# ----------------------------------------------------------------------------- spec 000 / 001


def test_user_level_sco_bound_terms_and_exponents():
    # spec 000 §5.1: "Ω( L·R·( 1/sqrt(n·m) + sqrt(d)/(ε·n·sqrt(m)) ) )"
    val = lb.user_level_sco_lower_bound(n=100, m=25, d=16, epsilon=0.5, lipschitz=2.0, diameter=3.0)
    assert val == pytest.approx(6.0 * (1 / 50 + 4 / (0.5 * 100 * 5)))
    # "The exponents match the upper bound of §4.3 (stat: n −1/2, m −1/2; priv: n −1, m −1/2, d
    # +1/2, ε −1)"
    base = dict(n=1000, m=100, d=64, epsilon=1.0)
    stat = lambda **k: lb.user_level_sco_lower_bound(**k, part="statistical")  # noqa: E731
    priv = lambda **k: lb.user_level_sco_lower_bound(**k, part="private")  # noqa: E731
    assert slope(
        stat, "n", 1000, 8000, **{k: v for k, v in base.items() if k != "n"}
    ) == pytest.approx(-0.5)
    assert slope(
        stat, "m", 100, 800, **{k: v for k, v in base.items() if k != "m"}
    ) == pytest.approx(-0.5)
    assert slope(
        priv, "n", 1000, 8000, **{k: v for k, v in base.items() if k != "n"}
    ) == pytest.approx(-1.0)
    assert slope(
        priv, "m", 100, 800, **{k: v for k, v in base.items() if k != "m"}
    ) == pytest.approx(-0.5)
    assert slope(
        priv, "d", 64, 512, **{k: v for k, v in base.items() if k != "d"}
    ) == pytest.approx(0.5)
    assert slope(
        priv, "epsilon", 1.0, 8.0, **{k: v for k, v in base.items() if k != "epsilon"}
    ) == pytest.approx(-1.0)
    # spec 001 §5.1 "LB-convex-ERM ... Ω(RG √d/(ε n √m))" is the private term
    assert lb.user_level_erm_lower_bound(100, 25, 16, 0.5, 2.0, 3.0) == pytest.approx(
        6.0 * 4 / (0.5 * 100 * 5)
    )


def test_strongly_convex_user_level_bounds():
    # spec 001 §5.1 Thm D.7: "Ω((G²/μ)(1/(nm) + d/(ε² n² m)))"; exponents "{n: -2, m: -1, d: 1, eps:
    # -2}"
    val = lb.user_level_sc_sco_lower_bound(
        n=50, m=10, d=20, epsilon=0.5, lipschitz=3.0, strong_convexity=2.0
    )
    assert val == pytest.approx(4.5 * (1 / 500 + 20 / (0.25 * 2500 * 10)))
    priv = lambda **k: lb.user_level_sc_sco_lower_bound(**k, part="private")  # noqa: E731
    assert slope(priv, "n", 50, 400, m=10, d=20, epsilon=0.5) == pytest.approx(-2.0)
    assert slope(priv, "m", 10, 80, n=50, d=20, epsilon=0.5) == pytest.approx(-1.0)
    assert slope(priv, "d", 20, 160, n=50, m=10, epsilon=0.5) == pytest.approx(1.0)
    assert slope(priv, "epsilon", 0.1, 0.8, n=50, m=10, d=20) == pytest.approx(-2.0)
    # Thm D.8: "Ω(G² d/(μ ε² n² m))"
    assert lb.user_level_sc_erm_lower_bound(50, 10, 20, 0.5, 3.0, 2.0) == pytest.approx(
        4.5 * 20 / (0.25 * 2500 * 10)
    )


def test_ghazi_d7_explicit_constants():
    # spec 001 §5.3: "B = G/(2*mu)", "sigma = B / (1000*sqrt(d))",
    # "alpha = d*sigma/(100*eps*n*sqrt(m))", "The lower-bound value is (μ/2)·α² = Ω(G² d/(μ ε² n²
    # m)),
    # up to the constants 10^{-10} and 4"  ->  (μ/2)α² = G² d / (8·10^10 μ ε² n² m)
    d, n, m, eps, G, mu = 32, 200, 16, 0.7, 3.0, 0.5
    B, sigma = lb.ghazi_thm_d7_scales(d, G, mu)
    assert B == pytest.approx(3.0) and sigma == pytest.approx(3.0 / (1000 * math.sqrt(32)))
    assert lb.ghazi_thm_d7_alpha(n, m, d, eps, sigma) == pytest.approx(
        d * sigma / (100 * eps * n * 4)
    )
    val = lb.ghazi_thm_d7_explicit_lower_bound(n, m, d, eps, sigma, mu)
    assert val == pytest.approx(G**2 * d / (8e10 * mu * eps**2 * n**2 * m))
    # the order form with constant 1/(8·10^10) equals the explicit private term
    assert val == pytest.approx(
        lb.user_level_sc_sco_lower_bound(n, m, d, eps, G, mu, constant=1 / 8e10, part="private")
    )
    # paper convention "B = G/μ" (spec 001 §5.3 comment): 4× larger, G² d/(2·10^10 μ ε² n² m)
    B_p, sigma_p = lb.ghazi_thm_d7_scales(d, G, mu, convention="paper")
    assert B_p == pytest.approx(6.0)
    assert lb.ghazi_thm_d7_explicit_lower_bound(n, m, d, eps, sigma_p, mu) == pytest.approx(4 * val)
    # paper (proof of D.7): "when n ≥ √d/ε, we also have α² ≤ dσ²ψ²/(12m)" (the Lemma D.6 premise)
    n_min = math.ceil(math.sqrt(d) / eps)
    assert lb.ghazi_thm_d7_alpha(n_min, m, d, eps, sigma) ** 2 <= d * sigma**2 / (12 * m)


def test_user_gaussian_mean_lemma_d5_d6():
    # spec 001 §5.2 Lemma D.5: "α² ≤ dσ²ψ²/(6m). Then n ≥ dσ/(24 α ε √m)"
    d, sigma, eps, m = 10, 2.0, 1.0, 4
    n = 1000
    assert lb.user_gaussian_mean_lower_bound(n, m, d, sigma, eps) == pytest.approx(
        (d * sigma / (24 * eps * n * 2)) ** 2
    )
    # at the α the bound returns, the lemma's sample-size requirement is met with equality
    alpha = math.sqrt(lb.user_gaussian_mean_lower_bound(n, m, d, sigma, eps))
    assert d * sigma / (24 * alpha * eps * math.sqrt(m)) == pytest.approx(n)
    # tiny n: capped at dσ²ψ²/(6m)
    assert lb.user_gaussian_mean_lower_bound(1, m, d, sigma, eps, psi=0.1) == pytest.approx(
        d * sigma**2 * 0.01 / 24
    )
    # Lemma D.6: "α² ≤ dσ²ψ²/(12m). It gives n ≥ dσ/(50 α ε √m)"
    assert lb.user_gaussian_mean_lower_bound(n, m, d, sigma, eps, truncated=True) == pytest.approx(
        (d * sigma / (50 * eps * n * 2)) ** 2
    )


# ----------------------------------------------------------------------------- spec 002 / 004


def test_item_level_cited_bounds():
    # spec 002 §5: "Ω(LR·(1/√n + min{1, √p/(εn)}))"; "p ≤ ε²n² (otherwise the trivial output 0
    # already meets the bound)"
    assert lb.dpsco_lower_bound(
        n=100, d=400, epsilon=0.5, lipschitz=2.0, radius=1.5
    ) == pytest.approx(3.0 * (0.1 + 20 / 50))
    assert (
        lb.dpsco_lower_bound(n=10, d=10_000, epsilon=1.0, part="private") == 1.0
    )  # p ≥ ε²n²: saturates
    # "Exponents: n −1/2 (statistical), n −1, p +1/2, ε −1 (privacy)"
    priv = lambda **k: lb.dpsco_lower_bound(**k, part="private")  # noqa: E731
    assert slope(priv, "n", 1000, 8000, d=16, epsilon=1.0) == pytest.approx(-1.0)
    assert slope(priv, "d", 16, 128, n=1000, epsilon=1.0) == pytest.approx(0.5)
    # "F(x_t) − F* ≥ 3M‖x*‖²/(32(t+1)²)"
    assert lb.nesterov_lower_bound(steps=3, smoothness=2.0, distance=0.5) == pytest.approx(
        3 * 2 * 0.25 / (32 * 16)
    )
    # spec 004 §5: "Ω̃(√d/(nε)) for convex and Ω̃(d/(n²ε²)) for strongly convex"
    assert lb.item_level_erm_lower_bound(100, 25, 0.5) == pytest.approx(5 / 50)
    assert lb.item_level_erm_lower_bound(100, 25, 0.5, strongly_convex=True) == pytest.approx(
        25 / (1e4 * 0.25)
    )


# ----------------------------------------------------------------------------- spec 003


def test_two_point_bias_kl_and_bound():
    # spec 003 §5: "KL(P_+ ‖ P_−) = δ ln((1+δ)/(1−δ)) ≤ 3δ² for δ ≤ 1/2"
    for delta in np.linspace(0.0, 0.5, 11):
        p_plus = [(1 + delta) / 2, (1 - delta) / 2]
        assert lb.two_point_kl(delta) == pytest.approx(
            stats.entropy(p_plus, p_plus[::-1]), abs=1e-15
        )
        assert lb.two_point_kl(delta) <= 3 * delta**2 + 1e-15
    # "Take δ = √(ln(1/(4β))/(3n)); this needs n ≥ (4/3)ln(1/(4β))"; "Then KL(P_+^n ‖ P_−^n) ≤
    # ln(1/(4β))"
    beta = 0.01
    n_min = math.ceil(4 / 3 * math.log(1 / (4 * beta)))
    delta = lb.two_point_bias(n_min, beta)
    assert delta <= 0.5
    assert n_min * lb.two_point_kl(delta) <= math.log(1 / (4 * beta))
    with pytest.raises(InputError, match="n must be >="):
        lb.two_point_bias(n_min - 1, beta)
    # "SCO excess ≥ (G D/4)·δ = (G D/4)√(ln(1/(4β))/(3n))"
    assert lb.two_point_lower_bound(1000, 2.0, 3.0, 0.1) == pytest.approx(
        1.5 * math.sqrt(math.log(2.5) / 3000)
    )
    inst = TwoPointInstance.from_theorem(
        Problem(n=1000, d=2, epsilon=1.0), moment=2.0, diameter=3.0, beta=0.1
    )
    assert inst.lower_bound() == lb.two_point_lower_bound(1000, 2.0, 3.0, 0.1)


def test_heavy_packing_bound_and_rt3_worked_number():
    # spec 003 §5: "SCO excess ≥ (s_V²/16)·G D·p^{1−1/k}"; d = 1 packing "{±1} (s_V=2)"
    n, eps, k, beta = 10_000, 0.25, 2.0, 0.1
    p = lb.heavy_packing_probability(n, eps, 2, beta)
    assert p == pytest.approx(math.log(1 / (2 * beta)) / (8 * eps * n))
    val = lb.heavy_packing_lower_bound(n, eps, k, 1.0, 2.0, beta, packing_size=2, separation=2.0)
    assert val == pytest.approx(0.25 * 2.0 * p**0.5)
    # §7b RT3: "0.9-quantile ≈ 0.93·G D p^{1−1/k} ≈ 3.7× the formula" (formula = (2²/16)·G D
    # p^{1−1/k})
    assert 0.93 / (val / (2.0 * p**0.5)) == pytest.approx(3.7, abs=0.05)
    # "When p = 1 (εn ≲ d + ln(1/β)) the bound is the constant c·G D"
    assert lb.heavy_packing_probability(1, 0.01, 12, beta) == 1.0
    assert lb.heavy_packing_lower_bound(1, 0.01, 3.0, 1.0, 2.0, beta, 12, 1.0) == pytest.approx(
        2.0 / 16
    )
    # the instance delegates with its packing's certified separation
    inst = HeavyPackingInstance.from_theorem(
        Problem(n=n, d=1, epsilon=eps),
        k=k,
        moment=1.0,
        diameter=2.0,
        beta=beta,
        packing=exact_sphere_packing(1, 1.0),
    )
    assert inst.lower_bound() == pytest.approx(val)


def test_lemma_g1_reduction_holds_on_heavy_packing_instance():
    # spec 003 §5 Lemma G.1: "F_P(w) − F_P* = (D/2)ρ − ⟨w, μ⟩ ≥ (D/(4ρ))·‖μ̂ − μ‖²", μ̂ = (2ρ/D)·w
    inst = HeavyPackingInstance(
        exact_sphere_packing(3, 1.0), index=3, p=0.02, k=3.0, moment=1.0, diameter=4.0
    )
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5000, 3))
    w *= (2.0 * rng.random(5000) ** (1 / 3) / np.linalg.norm(w, axis=1))[:, None]
    excess = inst.excess_risk(w)
    mu_hat = (2 * inst.rho / inst.diameter) * w
    assert np.all(
        excess >= inst.diameter / (4 * inst.rho) * np.sum((mu_hat - inst.mean) ** 2, axis=1) - 1e-15
    )


def test_heavy_tailed_sco_and_mean_bounds():
    # spec 003 §5 Thm 4.1: "c·( G_2 D √(log(1/β)/n) + G_k D · min{1, (d + log(1/β))/(εn)}^{1−1/k} )"
    n, d, eps, k, beta = 10_000, 8, 0.5, 4.0, 0.05
    val = lb.heavy_tailed_sco_lower_bound(
        n, d, eps, k=k, moment_2=1.0, moment_k=2.0, diameter=3.0, beta=beta
    )
    stat = 3.0 * math.sqrt(math.log(20) / n)
    priv = 6.0 * ((8 + math.log(20)) / (0.5 * n)) ** 0.75
    assert val == pytest.approx(stat + priv)
    # claim lowy26.lb.sco exponents "{n: -(1-1/k), eps: -(1-1/k), d: 1-1/k}" (private term, d ≫
    # log(1/β))
    priv_f = lambda **kw: lb.heavy_tailed_sco_lower_bound(**kw, part="private")  # noqa: E731
    common = dict(d=d, epsilon=eps, k=k, moment_2=1.0, moment_k=1.0, diameter=1.0, beta=beta)
    assert slope(priv_f, "n", 10_000, 80_000, **common) == pytest.approx(-0.75)
    # claim lowy26.lb.mean_estimation: "c G² ( log(1/β)/n + min{1, (d+log(1/β))/(εn)}^(2-2/k) )"
    m_val = lb.heavy_tailed_mean_lower_bound(n, d, eps, k, moment=2.0, beta=beta)
    assert m_val == pytest.approx(
        4.0 * (math.log(20) / n + ((8 + math.log(20)) / (0.5 * n)) ** 1.5)
    )
    with pytest.raises(InputError, match="beta"):
        lb.heavy_tailed_sco_lower_bound(
            n, d, eps, k=k, moment_2=1.0, moment_k=1.0, diameter=1.0, beta=0.3
        )


def test_bad_inputs_name_the_argument():
    with pytest.raises(InputError, match="epsilon"):
        lb.user_level_sco_lower_bound(10, 1, 1, epsilon=0.0)
    with pytest.raises(InputError, match="part"):
        lb.dpsco_lower_bound(10, 1, 1.0, part="all")
    with pytest.raises(InputError, match="psi"):
        lb.user_gaussian_mean_lower_bound(10, 1, 1, 1.0, 1.0, psi=2.0)
    with pytest.raises(InputError, match="convention"):
        lb.ghazi_thm_d7_scales(4, 1.0, 1.0, convention="other")
    with pytest.raises(InputError, match="separation"):
        lb.heavy_packing_lower_bound(10, 1.0, 2.0, 1.0, 1.0, 0.1, 2, 3.0)
