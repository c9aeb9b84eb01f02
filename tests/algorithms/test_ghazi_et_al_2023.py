"""Ghazi et al. 2023 (spec 001): parameter formulas, subroutines, batched runs, mutants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.algorithms.ghazi_et_al_2023 import (
    BottomChannel,
    DelOutputPert,
    ItemLevelOutputPert,
    NaiveUserOutputPert,
    PhasedERM,
    PhasedSCO,
    SCOutputPert,
    StronglyConvexERM,
    StronglyConvexSCO,
    encode,
    min_users,
    phased_sco_blocks,
    phased_sco_n0,
)
from dpclaims.algorithms.ghazi_et_al_2023.stability import (
    Domain,
    L1Minimiser,
    LinearMinimiser,
    QuadraticMinimiser,
    TDLap,
    exact_minimiser,
    inner_privacy_params,
    kappa_fn,
)
from dpclaims.audit import audit
from dpclaims.claims.checks.ghazi_et_al_2023.privacy import noise_calibration, quadratic_s_star
from dpclaims.claims.checks.ghazi_et_al_2023.rates import phased_erm_budget, phased_sco_blocks_check
from dpclaims.data import GroupedMeans
from dpclaims.errors import InputError, MechanismError
from dpclaims.hardinstances.canaries import outlier_count_pair
from dpclaims.losses import L1DistanceLoss, LinearLoss, LogisticLoss, SquaredDistanceLoss
from dpclaims.problem import Problem
from dpclaims.targets.mutants import get_mutant, list_mutants
from dpclaims.targets.mutants.ghazi_et_al_2023 import SigmaNo8Kappa


def _problem(n=20, m=1, d=1, epsilon=1.0, delta=1e-5, **kw):
    return Problem(n=n, m=m, d=d, epsilon=epsilon, delta=delta, **kw)


def _sc(n, m=1, *, beta=0.01, **kw):
    """SCOutputPert at (1, 1e-5), G = 1, μ = 1 (the spec §2.2 reference values)."""
    return SCOutputPert.from_theorem(_problem(n, m, strong_convexity=1.0), beta=beta, **kw)


# ----------------------------------------------------------------- formulas (spec §2.0, §2.2, §2.4)


@pytest.mark.parametrize(
    "eps, delta, kappa, p0",
    [(1, 1e-5, 28, 2.04e-7), (1, 1e-3, 18, 3.0e-5), (1, 0.1, 9, 2.7e-3), (0.5, 1e-5, 53, 2.2e-7)],
)
def test_tdlap_reference_values(eps, delta, kappa, p0):
    e1, d1, k = inner_privacy_params(eps, delta)
    assert (e1, k) == (eps / 2, kappa)
    assert d1 == pytest.approx(delta / (math.exp(eps) + 2))
    assert TDLap(e1, d1).pmf[0] == pytest.approx(p0, rel=0.02)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 1.0), st.floats(1e-12, 0.5))
def test_tdlap_properties_hold(eps, delta):
    t = TDLap(eps, delta)
    props = t.properties()
    assert t.kappa == 1 + math.ceil(math.log(1 / delta) / eps)
    assert props["endpoint_mass"] <= delta
    assert props["max_log_ratio"] <= eps * (1 + 1e-9)
    assert t.pmf.sum() == pytest.approx(1.0)
    assert t.cdf(2 * t.kappa) == pytest.approx(1.0) and t.cdf(-1) == 0.0


def test_deloutputpert_sigma_and_noise_multiplier_match_spec():
    mech = DelOutputPert.from_theorem(_problem(), Delta=1.0)
    assert mech.sigma == pytest.approx(2350, rel=1e-3)  # σ/Δ of spec §2.2
    exact = _sc(1000, path="exact", interior=True)
    assert exact.noise_multiplier == pytest.approx(3.7e5, rel=0.02)
    fast = _sc(1000, path="fast", interior=True)
    assert fast.noise_multiplier / 1000 == pytest.approx(1.0e4, rel=0.05)  # σ√m μ/G at n = 1000
    assert exact.c_delta == 5.0 and _sc(1000).c_delta == 10.0
    assert set(exact.params) >= {
        "kappa",
        "Delta",
        "Delta_fast",
        "sigma",
        "eps1",
        "delta1",
        "noise_multiplier",
    }
    assert exact.privacy_claim.unit == "user" and exact.privacy_claim.relation == "replace"


def test_min_users_and_blocks():
    assert (min_users(1.0, 1e-5, 10**6), min_users(1.0, 1e-5, 10**12)) == (2506, 5226)
    n0 = phased_sco_n0(1.0, 1e-5)
    assert n0 == 2 * (4 * 28 + 1)
    blocks = phased_sco_blocks(10000, 64)
    assert len(blocks) == math.floor(math.log2(10000 / 64))
    assert blocks[0] == (5000, 10000) and all(
        b[1] == a[0] for a, b in zip(blocks, blocks[1:], strict=False)
    )


def test_input_errors():
    with pytest.raises(InputError, match="delta must be > 0"):
        DelOutputPert.from_theorem(_problem(delta=0.0), Delta=1.0)
    with pytest.raises(InputError, match="problem must be"):
        DelOutputPert.from_theorem(1.0, Delta=1.0)
    with pytest.raises(TypeError):
        DelOutputPert.from_theorem(_problem(), 1.0)  # knobs are keyword-only
    with pytest.raises(InputError, match="4\\*kappa \\+ 2"):
        _sc(50, 10)
    with pytest.raises(InputError, match="not private"):
        _ = _sc(50, 10, oracle=1.0).privacy_claim
    with pytest.raises(InputError, match="strong_convexity must be"):
        SCOutputPert.from_theorem(_problem(1000), beta=0.01)  # μ = 0 is not strongly convex
    with pytest.raises(InputError, match="exact minimiser"):
        DelOutputPert.from_theorem(_problem(loss=LogisticLoss()), Delta=1.0)
    with pytest.raises(InputError, match="bounded K"):
        PhasedERM.from_theorem(_problem(1000, 10))
    with pytest.raises(InputError, match="lam must be one of"):
        PhasedERM.from_theorem(_problem(1000, 10, radius=1.0), lam="typo")
    with pytest.raises(InputError, match="data must be"):
        DelOutputPert.from_theorem(_problem(), Delta=1.0).run(
            np.zeros((3, 1)), np.random.default_rng(0), 5
        )
    mech = SCOutputPert.from_theorem(_problem(200, 10, delta=1e-3, strong_convexity=1.0), beta=0.01)
    with pytest.raises(InputError, match="built for"):
        mech.run(GroupedMeans.per_user(np.zeros((150, 1)), 10), np.random.default_rng(0), 5)


# ------------------------------------------------------------------- the stability test (spec §2.1)


@pytest.mark.parametrize("k", [1, 5, 17, 19, 20])
def test_outlier_family_has_s_star_k(k):
    mech = DelOutputPert.from_theorem(_problem(delta=1e-3), Delta=1e-6)
    d0, _ = outlier_count_pair(20, 1, k)
    s_star, choice = mech.stability(d0)
    assert s_star == k and choice[0] == 0.0
    assert mech.bottom_probability(d0) == pytest.approx(float(mech.tdlap.cdf(k - 1)))


def _s_star(means, kappa, target):
    return quadratic_s_star(GroupedMeans.per_user(means, 1), kappa, target)


def _brute_s_star(means, kappa, target):
    """Algorithm 1's test by brute force over user subsets (no type compression)."""
    n = len(means)
    f = {}
    for mask in range(2**n):
        idx = [i for i in range(n) if mask >> i & 1]
        f[mask] = means[idx].mean() if idx else 0.0
    full = 2**n - 1
    deleted = {mask: n - bin(mask).count("1") for mask in f}
    d_of = {
        mask: max(
            [abs(f[mask] - f[mask & ~(1 << i)]) for i in range(n) if mask >> i & 1], default=0.0
        )
        for mask in f
    }
    for s in range(2 * kappa + 1):
        for mask in f:
            if deleted[mask] != s or (mask & full) != mask:
                continue
            subs = [b for b in f if (b & mask) == b and deleted[b] <= 4 * kappa]
            if max(d_of[b] for b in subs) <= target:
                return s
    return 2 * kappa + 1


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0]), min_size=3, max_size=7),
    st.floats(1e-3, 0.5),
    st.integers(1, 3),
)
def test_type_compressed_test_equals_brute_force(values, target, kappa):
    means = np.array(values)[:, None]
    assert _s_star(means, kappa, target) == _brute_s_star(means[:, 0], kappa, target)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.05, 0.2, 1.0]), min_size=5, max_size=9),
    st.integers(0, 8),
    st.sampled_from([0.0, 0.05, 3.0]),
    st.floats(1e-3, 0.5),
)
def test_observation_3_5_monotone(values, user, new, target):
    means = np.array(values)[:, None]
    other = means.copy()
    other[user % len(values)] = new
    a, b = _s_star(means, 6, target), _s_star(other, 6, target)
    assert a <= b + 1 and b <= a + 1


def test_exhaustive_test_refuses_infeasible_enumeration():
    mech = DelOutputPert.from_theorem(_problem(delta=1e-3), Delta=1e-6)
    data = GroupedMeans.per_user(np.arange(40.0)[:, None], 1)
    with pytest.raises(MechanismError, match="exhaustive stability test"):
        mech.run(data, np.random.default_rng(0), 10)


# ---------------------------------------------------------------- minimisers and projections (§2.8)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.floats(0.1, 2.0), st.floats(0.05, 2.0), st.integers(0, 10**6))
def test_two_ball_projection_is_feasible_and_nearest(d, radius, local, seed):
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=(1, d))
    centre *= min(1.0, radius / np.linalg.norm(centre)) * rng.uniform()
    dom = Domain(radius, centre, np.array([local]))
    y = rng.normal(size=(1, 5, d)) * 3
    p = dom.project(y)
    assert np.all(np.linalg.norm(p, axis=-1) <= radius * (1 + 1e-9))
    assert np.all(np.linalg.norm(p - centre[:, None], axis=-1) <= local * (1 + 1e-9))
    candidates = centre + rng.normal(size=(2000, d)) * local
    ok = (np.linalg.norm(candidates, axis=1) <= radius) & (
        np.linalg.norm(candidates - centre, axis=1) <= local
    )
    for point, proj in zip(y[0], p[0], strict=True):
        assert (
            np.linalg.norm(point - proj)
            <= np.min(np.linalg.norm(candidates[ok] - point, axis=1), initial=np.inf) + 1e-9
        )


def test_closed_form_minimisers():
    values, weights = np.array([[1.0], [3.0]]), np.array([[1, 1]])
    dom = Domain(10.0)
    quad = exact_minimiser(SquaredDistanceLoss(2.0))
    assert quad == QuadraticMinimiser(2.0)
    out = quad.minimiser(values, weights, reg=2.0, centre=np.array([[0.0]]), domain=dom)
    assert out[0, 0, 0] == pytest.approx((2 * 2 + 2 * 0) / 4)
    lin = exact_minimiser(LinearLoss(1.0))
    assert lin == LinearMinimiser(1.0)
    out = lin.minimiser(values, weights, reg=4.0, centre=np.array([[0.1]]), domain=dom)
    assert out[0, 0, 0] == pytest.approx(0.1 + 2 / 4)
    soft = exact_minimiser(L1DistanceLoss(1.0))
    assert soft == L1Minimiser(1.0)
    centres = np.array([[2.0], [0.3]])
    out = soft.minimiser(np.array([[0.0]]), np.array([[5]]), reg=2.0, centre=centres, domain=dom)
    assert out[:, 0, 0] == pytest.approx([1.5, 0.0], abs=1e-9)  # soft-threshold at G/λ = 0.5


@pytest.mark.parametrize("weights", ["counts", "fractions"])
def test_l1_minimiser_is_the_same_at_any_block_of_centres(monkeypatch, weights):
    """The bisection runs over cache-sized blocks of centres; every centre's midpoints are the
    same bits at any block size (here one centre per block)."""
    from dpclaims.algorithms.ghazi_et_al_2023 import stability

    rng = np.random.default_rng(0)
    values = rng.standard_normal((5, 1))
    w = rng.integers(0, 9, (3, 5)) if weights == "counts" else rng.random((3, 5))
    centres = rng.uniform(-1, 1, (6, 1))

    def solve():
        return L1Minimiser(1.0).minimiser(values, w, reg=0.7, centre=centres, domain=Domain(1.0))

    whole = solve()
    monkeypatch.setattr(stability, "_CACHE_BLOCK", 1)
    assert np.array_equal(solve(), whole)


# --------------------------------------------------------------------------- runs


def test_deloutputpert_batched_run_and_encoding():
    mech = DelOutputPert.from_theorem(_problem(delta=1e-3), Delta=1e-6)
    d0, _ = outlier_count_pair(20, 1, 19)
    out = mech.run(d0, np.random.default_rng(0), 4000, transcript=True)
    assert out.theta.shape == (4000, 1) and np.all(np.isnan(out.theta[out.bottom]))
    assert np.array_equal(out.bottom, out.r1 < 19)
    enc = encode(out.theta, out.bottom)
    assert enc.shape == (4000, 2) and np.all(np.isfinite(enc))
    again = mech(d0, np.random.default_rng(0), 4000)
    assert np.array_equal(again, enc)
    assert BottomChannel(mech)(d0, np.random.default_rng(0), 10).shape == (10, 1)


def test_fast_path_certificate_and_exact_fallback():
    from dpclaims.targets.mutants.ghazi_et_al_2023 import fast_path_mechanism, fast_path_pair

    exact = fast_path_mechanism()
    d0, d1 = fast_path_pair(exact)
    assert exact.certificate(d0)[0] and not exact.certificate(d1)[0]
    out = exact.run(d1, np.random.default_rng(1), 500)
    assert not out.bottom.any() and out.certified is False and out.f_evaluations > 1
    assert np.mean(out.theta) == pytest.approx(
        exact.minimiser(d1)[0, 0], abs=5 * exact.sigma / math.sqrt(500)
    )
    passed = exact.run(d0, np.random.default_rng(1), 500)
    assert passed.certified and passed.gradient_evaluations == exact.n * exact.m


def test_phased_algorithms_run_batched():
    rng = np.random.default_rng(0)
    data = GroupedMeans.per_user(rng.uniform(-0.5, 0.5, size=(600, 3)), 10**9)
    problem = _problem(600, 10**9, 3, radius=1.0)
    erm = PhasedERM.from_theorem(problem, oracle=1.0)
    run = erm.run(data, rng, 16, transcript=True)
    assert run.theta.shape == (16, 3) and run.phases.shape == (16, erm.phases, 3)
    assert np.all(np.linalg.norm(run.theta, axis=1) <= 1 + 1e-12)
    sco = PhasedSCO.from_theorem(problem, n0=64, oracle=1.0)
    assert sco.run(data, rng, 8).theta.shape == (8, 3)
    sc = StronglyConvexSCO.from_theorem(
        problem.replace(lipschitz=2.0, strong_convexity=1.0), oracle=1.0, n0=64
    )
    assert sc.run(data, rng, 8).theta.shape == (8, 3)


def test_strongly_convex_erm_paper_mode_is_accurate_and_private():
    rng = np.random.default_rng(0)
    n, m, d = 20000, 10**14, 4
    data = GroupedMeans.per_user(rng.uniform(-0.3, 0.3, size=(n, d)) / math.sqrt(m) + 0.1, m)
    problem = _problem(n, m, d, lipschitz=2.0, strong_convexity=1.0, radius=1.0)
    alg = StronglyConvexERM.from_theorem(problem)
    out = alg.run(data, rng, 10)
    assert alg.privacy_claim.epsilon == 1.0
    assert np.mean(0.5 * np.sum((out.theta - data.mean()) ** 2, axis=1)) < 1e-3
    assert out.gradient_evaluations >= n * m


def test_baselines_noise_and_contrast():
    problem = _problem(100, 10, lipschitz=2.0, strong_convexity=1.0)
    naive = NaiveUserOutputPert.from_theorem(problem)
    item = ItemLevelOutputPert.from_theorem(problem)
    assert naive.sensitivity == pytest.approx(
        10 * item.sensitivity
    ) and naive.sigma == pytest.approx(10 * item.sigma)
    assert item.privacy_claim.unit == "item" and naive.privacy_claim.unit == "user"
    t = get_mutant("ghazi23-item-level-as-user").build()
    assert t.claim.unit == "user" and t.mechanism.privacy_claim.unit == "item"
    assert audit(t.mechanism, t.d0, t.d1, claim=t.claim, trials=20_000, seed=0).verdict == (
        "violation"
    )


# --------------------------------------------------------------------------- mutants caught


@pytest.mark.parametrize(
    "name",
    [
        "ghazi23-m1-no-stability-test",
        "ghazi23-m2-fixed-threshold",
        "ghazi23-m3-fast-no-fallback",
        "ghazi23-m6-tdlap-at-zero",
    ],
)
def test_black_box_mutants_are_violations(name):
    t = get_mutant(name).build()
    result = audit(t.mechanism, t.d0, t.d1, claim=t.claim, trials=20_000, seed=0)
    assert result.verdict == "violation" and result.epsilon_lower > 3.0


def test_exact_implementations_pass_the_same_pairs():
    for name in ("ghazi23-m1-no-stability-test", "ghazi23-m6-tdlap-at-zero"):
        t = get_mutant(name).build()
        mech = t.mechanism
        inner = mech.mechanism if isinstance(mech, BottomChannel) else mech
        problem = _problem(epsilon=inner.epsilon, delta=inner.delta)
        exact = DelOutputPert.from_theorem(problem, Delta=inner.Delta)
        assert type(inner) is not DelOutputPert and isinstance(inner, DelOutputPert)
        target = BottomChannel(exact) if isinstance(mech, BottomChannel) else exact
        result = audit(target, t.d0, t.d1, claim=t.claim, trials=20_000, seed=0)
        # the exact mechanism cannot tell the pair apart: no violation, and it says why (#17)
        assert result.verdict == "inconclusive" and result.identical_outputs


def test_white_box_mutants_are_caught():
    rng = np.random.default_rng(0)
    good = noise_calibration(rng, ns=(2000, 4000, 8000, 16000), trials=64)
    bad = noise_calibration(rng, ns=(2000, 4000, 8000, 16000), trials=64, algorithm=SigmaNo8Kappa)
    assert good["variance_over_sigma2"][1] <= 1.0 <= good["variance_over_sigma2"][2]
    assert bad["variance_over_sigma2"][2] < 0.01  # σ is (8κ)² too small in variance
    m5 = get_mutant("ghazi23-m5-phased-sco-reuse-users").build()
    assert phased_sco_blocks_check(m5)["max_phases_per_user"] > 1
    assert phased_sco_blocks_check(reference_of(m5))["max_phases_per_user"] == 1
    full = get_mutant("ghazi23-phased-erm-full-budget").build()
    assert phased_erm_budget(full)["epsilon_sum"] == pytest.approx(full.phases * full.epsilon)


def reference_of(alg):
    """The reference algorithm with the fields of mutant ``alg`` (its parent class)."""
    from dataclasses import fields

    return type(alg).__mro__[1](**{f.name: getattr(alg, f.name) for f in fields(alg)})


def test_mutant_corpus_entries():
    names = {m.name for m in list_mutants(paper="ghazi-et-al-2023")}
    assert {
        "ghazi23-m1-no-stability-test",
        "ghazi23-m4-sigma-no-8kappa",
        "ghazi23-m5-phased-sco-reuse-users",
    } <= names
    assert all(m.kind == "privacy" for m in list_mutants(paper="ghazi-et-al-2023"))
    assert kappa_fn(0.5, 1e-3) == 15


def test_auditor_checks_grouped_means_neighbours():
    from dpclaims.errors import NotNeighboursError
    from dpclaims.targets.ghazi_et_al_2023 import outlier_means_pair, sc_bottom_mechanism

    mech = sc_bottom_mechanism()
    d0, d1 = outlier_means_pair(mech.n, mech.m, 3)
    far = GroupedMeans.per_user(np.ones((mech.n, 1)), mech.m)  # every user moved
    with pytest.raises(NotNeighboursError, match="not neighbours"):
        audit(BottomChannel(mech), d0, far, claim=mech.privacy_claim, trials=200, seed=0)
    result = audit(BottomChannel(mech), d0, d1, claim=mech.privacy_claim, trials=200, seed=0)
    assert not any("cannot be checked" in w for w in result.warnings)


def test_mutants_are_subclasses_overriding_one_method():
    from dpclaims.targets.mutants import ghazi_et_al_2023 as mutants

    pairs = {
        mutants.NoStabilityTest: "_release",
        mutants.FixedThreshold: "_draw_radius",
        mutants.TDLapAtZero: "_draw_radius",
        mutants.NoFallback: "_fallback",
        mutants.SigmaNo8Kappa: "_sensitivity_factor",
        mutants.ReuseUsers: "phase_blocks",
        mutants.FullBudgetPerPhase: "_budget_share",
    }
    for cls, method in pairs.items():
        own = {name for name in vars(cls) if not name.startswith("__")}
        assert own == {method}, (cls.__name__, own)
        assert cls.from_theorem.__func__ is cls.__mro__[1].from_theorem.__func__
    m4 = get_mutant("ghazi23-m4-sigma-no-8kappa").build()
    problem = _problem(2000, 10**6, lipschitz=2.0, strong_convexity=1.0, radius=1.0)
    reference = SCOutputPert.from_theorem(problem, beta=0.01)
    assert type(reference_of(m4)) is SCOutputPert and m4.Delta_fast == reference.Delta_fast
    assert m4.sigma == pytest.approx(reference.sigma / (8 * reference.kappa), rel=1e-12)
