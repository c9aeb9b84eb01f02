"""Spec 003 (pure ε-DP SCO, heavy tails): formulas, subroutines, batching, mutants and rates."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from dpclaims.algorithms.pure_dp_heavy_tails import (
    Ball,
    ClippedSlopes1D,
    DoubleOutputPert,
    PolyhedralTerms,
    PopLocalize,
    adapsg,
    c_a,
    clip_level,
    gamma_radius,
    inexact_projection,
    joint_objective,
    l2_laplace,
    polyhedral_form,
    pv2_minimize,
)
from dpclaims.algorithms.pure_dp_heavy_tails.em import EMPGM, LocalizedGridEM, gibbs_rejection_1d
from dpclaims.audit import AuditTest, audit
from dpclaims.claims.checks.pure_dp_heavy_tails import rt1_d_distance, rt1_distance
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import Execution
from dpclaims.hardinstances.canaries import heavy_outlier_pair
from dpclaims.hardinstances.pure_dp_heavy_tails import ParetoRadiusInstance
from dpclaims.losses import (
    AbsoluteLoss,
    HingeLoss,
    LinearLoss,
    SquaredLoss,
    project_ball_intersection,
)
from dpclaims.problem import Problem
from dpclaims.rates import check_exponent, fit_power_law, sweep
from dpclaims.targets.mutants import list_mutants
from dpclaims.targets.mutants.pure_dp_heavy_tails import (
    NoLocalizationAlg4,
    NoTauAlg4,
    StageTwoFullEpsilonAlg4,
    WrongClipExponentAlg4,
    exp_radius_laplace,
)

W10 = Ball.centered(1, 10.0)


def problem(n=200, *, d=1, epsilon=1.0, radius=10.0, loss=None):
    loss = AbsoluteLoss() if loss is None else loss
    return Problem(n=n, d=d, epsilon=epsilon, radius=radius, loss=loss)


ALG4 = {"moment_k": 1.0, "k": 2, "lam": 1.0, "beta0": 0.1}


def spec_alg4(algorithm=DoubleOutputPert, **kw):
    return algorithm.from_theorem(problem(), **ALG4, **kw)


def test_parameters_match_the_spec_worked_numbers():
    alg = spec_alg4()
    p = alg.params
    assert p["clip"] == pytest.approx(24.6, abs=0.01) and p["tau"] == pytest.approx(0.123, abs=1e-3)
    assert p["alpha"] == pytest.approx(p["clip"] ** 2 / (2 * 200**2))
    assert p["sensitivity"] == pytest.approx(4 * p["clip"] / 200)
    assert p["epsilon1"] == p["epsilon2"] == 0.5
    assert p["radius"] == pytest.approx(p["clip"] / 200 + 16 * p["clip"] * (1 + math.log(10)) / 200)
    assert alg.privacy_claim.delta == 0.0 and alg.privacy_claim.unit == "item"
    assert c_a(2) == pytest.approx(18 + math.sqrt(68))
    assert clip_level(
        1000, 4, 1.0, moment_k=2.0, k=4, beta0=0.1, rule="rate-test"
    ) == pytest.approx(2.0 * (1000 / 4) ** 0.25)
    assert spec_alg4(NoTauAlg4).params["sensitivity"] == pytest.approx(p["sensitivity"] / 2)
    assert spec_alg4(StageTwoFullEpsilonAlg4).epsilon2 == 1.0


@pytest.mark.parametrize("d", [1, 2, 5, 20])
@pytest.mark.parametrize("beta", [0.5, 0.1, 1e-3])
def test_gamma_radius_is_a_valid_tail_bound(d, beta):
    assert stats.gamma(d).sf(gamma_radius(d, beta)) <= beta
    assert gamma_radius(d, beta, "exact") <= gamma_radius(d, beta)


def test_l2_laplace_radius_is_gamma_and_direction_isotropic():
    rng = np.random.default_rng(0)
    xi = l2_laplace(rng, 40_000, 3, 0.5)
    radius = np.linalg.norm(xi, axis=1)
    assert stats.kstest(radius, stats.gamma(3, scale=0.5).cdf).pvalue > 0.01
    assert np.abs(xi.mean(axis=0)).max() < 0.03
    np.testing.assert_allclose(np.cov(xi.T), np.eye(3) * np.mean(radius**2) / 3, atol=0.03)
    exp_radius = np.linalg.norm(exp_radius_laplace(rng, 40_000, 3, 0.5), axis=1)
    assert stats.kstest(exp_radius, stats.expon(scale=0.5).cdf).pvalue > 0.01


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    lam=st.floats(0.1, 5.0),
    clip=st.floats(0.2, 20.0),
    loss=st.sampled_from(["abs", "hinge", "lin"]),
)
def test_exact_1d_root_minimizes_the_clipped_objective(seed, lam, clip, loss):
    rng = np.random.default_rng(seed)
    n = 30
    x = np.exp(2 * rng.standard_normal(n)) * rng.choice([-1, 1], n)
    losses = {
        "abs": (AbsoluteLoss(), x * rng.uniform(-2, 2, n)),
        "hinge": (HingeLoss(), rng.choice([-1.0, 1.0], n)),
        "lin": (LinearLoss(), None),
    }
    f, y = losses[loss]
    slopes = ClippedSlopes1D.from_data(UserDataset(x[:, None], y), f, clip)
    center = rng.uniform(-1, 1, 3)
    root = slopes.root(center, lam)
    for c, w in zip(center, root, strict=True):

        def obj(v, c=c):
            return slopes.objective(np.array(v)) + 0.5 * lam * (v - c) ** 2

        brute = optimize.minimize_scalar(
            obj, bounds=(w - 50, w + 50), method="bounded", options={"xatol": 1e-10}
        )
        assert obj(w) <= obj(brute.x) + 1e-7
        assert slopes.slope(np.array(w - 1e-9)) + lam * (w - 1e-9 - c) <= 1e-6
        assert slopes.slope(np.array(w)) + lam * (w - c) >= -1e-6


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.floats(0.2, 3.0), clip=st.floats(0.5, 10.0))
def test_minimizer_sensitivity_is_at_most_2C_over_lambda_n(seed, lam, clip):
    rng = np.random.default_rng(seed)
    n = 25
    a = np.exp(3 * rng.standard_normal(n))
    b = rng.uniform(-3, 3, n)
    a1, b1 = a.copy(), b.copy()
    a1[3], b1[3] = np.exp(3 * rng.standard_normal()), rng.uniform(-5, 5)
    roots = [
        ClippedSlopes1D.from_data(UserDataset(aa[:, None], aa * bb), AbsoluteLoss(), clip).root(
            np.zeros(1), lam
        )[0]
        for aa, bb in ((a, b), (a1, b1))
    ]
    assert abs(roots[0] - roots[1]) <= 2 * clip / (lam * n) * (1 + 1e-9)


def test_harness_makes_the_stage1_shift_exactly_delta():
    d0, d1 = heavy_outlier_pair()
    from dpclaims.algorithms.pure_dp_heavy_tails import WorstValidPoint

    alg = spec_alg4(harness=WorstValidPoint.for_record(d0, 0))
    w0 = [
        alg.run(d, np.random.default_rng(0), 5, transcript=True).transcript["w0"][0, 0]
        for d in (d0, d1)
    ]
    assert w0[1] - w0[0] == pytest.approx(alg.localizer.sensitivity, rel=1e-9)
    assert (1 - alg.clip) / 200 - alg.localizer.tau == pytest.approx(w0[0], rel=1e-9)


def test_run_is_batched_seeded_and_stays_in_K():
    d0, _ = heavy_outlier_pair()
    alg = spec_alg4()
    a = alg.run(d0, np.random.default_rng(3), 1000, transcript=True)
    b = alg.run(d0, np.random.default_rng(3), 1000, transcript=True)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert a.theta.shape == (1000, 1) and alg(d0, np.random.default_rng(0), 7).shape == (7, 2)
    assert np.all(np.abs(a.theta - a.transcript["w_tilde"]) <= alg.localizer.radius + 1e-12)
    assert np.all(np.abs(a.theta) <= 10) and np.all(a.gradient_evaluations == 400)


def test_bad_inputs_raise_input_errors():
    with pytest.raises(InputError, match="epsilon"):
        DoubleOutputPert.from_theorem(problem(epsilon=0.0), **ALG4)
    with pytest.raises(InputError, match="exact-1d"):
        DoubleOutputPert.from_theorem(problem(d=2, radius=1.0), **ALG4)
    with pytest.raises(InputError, match="pv2"):
        PolyhedralTerms.from_loss(SquaredLoss(), np.ones((3, 2)), np.ones(3), clip=1.0)
    with pytest.raises(InputError, match="delta = 0"):
        DoubleOutputPert.from_theorem(problem().replace(delta=1e-6), **ALG4)
    with pytest.raises(InputError, match="domain"):
        DoubleOutputPert.from_theorem(problem(radius=math.inf), **ALG4)
    with pytest.raises(InputError, match="m = 1"):
        spec_alg4().run(
            UserDataset(np.ones((3, 2, 1)), np.ones((3, 2))), np.random.default_rng(0), 2
        )
    with pytest.raises(InputError, match="exact-1d"):
        ClippedSlopes1D.from_data(UserDataset(np.ones((3, 1)), np.ones(3)), SquaredLoss(), 1.0)


def test_inexact_projection_is_zeta_close_and_inside_K():
    rng = np.random.default_rng(1)
    dom = Ball.centered(4, 2.0)
    c = dom.project(rng.standard_normal((200, 4)))
    u = 5 * rng.standard_normal((200, 4))
    p, calls = inexact_projection(u, dom, center=c, r=0.7, zeta=1e-7)
    exact = np.stack(
        [
            project_ball_intersection(
                u[i : i + 1], radius1=2.0, center1=np.zeros(4), radius2=0.7, center2=c[i]
            )[0]
            for i in range(200)
        ]
    )
    assert np.max(np.linalg.norm(p - exact, axis=1)) <= 1e-7
    assert np.all(np.linalg.norm(p - c, axis=1) <= 0.7 + 1e-12) and np.all(
        np.linalg.norm(p, axis=1) <= 2 + 1e-12
    )
    assert calls < 60


def test_adapsg_certificate_holds_and_respects_the_iteration_bound():
    rng = np.random.default_rng(2)
    d, n = 2, 4
    x = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    dom = Ball.centered(d, 1.0)
    center = np.zeros((1, d))
    alpha, clip, lam = 0.3, 1.0, 1.0

    def h(s):
        return joint_objective(s, AbsoluteLoss(), x=x, y=y, clip=clip, lam=lam, center=center)

    radius = math.sqrt(n + 1) * dom.diameter
    res = adapsg(
        lambda s: h(s)[1],
        lambda u, z: (dom.project(u), 1),
        np.zeros((1, n + 1, d)),
        radius=radius,
        alpha=alpha,
    )
    best = min(
        optimize.minimize(
            lambda v: (
                h(dom.project(v.reshape(1, n + 1, d)))[0][0]
                + 10 * max(0, np.linalg.norm(v.reshape(n + 1, d), axis=1).max() - 1)
            ),
            rng.uniform(-0.3, 0.3, (n + 1) * d),
            method="Powell",
            options={"xtol": 1e-9, "ftol": 1e-12, "maxfev": 40000},
        ).fun
        for _ in range(4)
    )
    assert h(res.point)[0][0] - best <= alpha
    lip = clip + lam * dom.diameter + 4.0 * (np.linalg.norm(x, axis=1).max() + clip)
    assert res.iterations[0] <= math.ceil((5 * radius * lip / (2 * alpha)) ** 2)
    with pytest.raises(MechanismError, match="max_iterations"):
        adapsg(
            lambda s: h(s)[1],
            lambda u, z: (dom.project(u), 1),
            np.zeros((1, n + 1, d)),
            radius=radius,
            alpha=1e-4,
            max_iterations=50,
        )


def test_adapsg_solver_path_runs_in_d2_and_outputs_in_the_domain():
    from dataclasses import replace

    rng = np.random.default_rng(0)
    dom = Ball.centered(2, 3.0)
    alg = DoubleOutputPert.from_theorem(
        problem(4, d=2), domain=dom, solver="adapsg", output="final", **ALG4
    )
    alg = replace(alg, localizer=replace(alg.localizer, alpha=3.0, tau=1.0))
    data = UserDataset(rng.standard_normal((4, 2)), rng.standard_normal(4))
    res = alg.run(data, rng, 3, transcript=True)
    assert res.theta.shape == (3, 2) and np.all(np.linalg.norm(res.theta, axis=1) <= 3 + 1e-9)
    assert np.all(
        np.linalg.norm(res.theta - res.transcript["w_tilde"], axis=1) <= alg.localizer.radius + 1e-9
    )
    assert np.all(res.gradient_evaluations > 0)


def test_pop_localize_schedule_and_disjoint_blocks():
    alg1 = {"moment_2": 1.0, "moment_k": 1.0, "k": 2, "beta": 0.1}
    alg = PopLocalize.from_theorem(problem(1024), **alg1)
    assert alg.phases == 10 and alg.repetitions == math.ceil(18 * math.log(100))
    ends = [b for blk in alg.blocks for b in blk]
    assert all(ends[i] <= ends[i + 1] for i in range(len(ends) - 1))
    assert alg.lambdas[3] == pytest.approx(8 * alg.lambdas[0])
    test = PopLocalize.from_theorem(problem(1000), constants="test", **alg1)
    assert test.repetitions == 1 and test.params["block_size"] == 100


def test_em_pgm_and_grid_em_parameters_and_shapes():
    d0, _ = heavy_outlier_pair()
    knobs = {"moment_k": 1.0, "k": 2, "lam": 1.0, "beta": 0.1}
    em = EMPGM.from_theorem(problem(), smoothing=0.1, **knobs)
    assert (
        em.sensitivity == pytest.approx(2 * em.clip / 200)
        and em.params["net_points"] <= em.params["net_size_bound"]
    )
    out = em(d0, np.random.default_rng(0), 50)
    assert out.shape == (50, 1) and np.all(np.isin(out[:, 0], em.grid[:, 0]))
    grid = LocalizedGridEM.from_theorem(problem(), **knobs)
    assert grid.score_sensitivity == pytest.approx(
        4 * grid.localizer.clip * grid.localizer.radius / 200
    )
    assert grid(d0, np.random.default_rng(0), 20).shape == (20, 2)


def test_correct_alg4_audit_is_consistent_and_near_the_reference():
    from dpclaims.targets.pure_dp_heavy_tails import audit_alg4

    t = audit_alg4()
    result = audit(t.mechanism, t.d0, t.d1, claim=t.claim, trials=50_000, seed=0)
    assert result.verdict == "consistent" and 0.6 <= result.epsilon_lower <= 1.0


# statistics on the raw d = 2 sampler output; the registered M4/M5 builds release the fixed
# quadrant statistic min(x1, x2) themselves (QuadrantStatistic)
STATISTICS = {
    "small-ball": lambda x: -np.linalg.norm(x, axis=1),
    "quadrant-low": lambda x: -np.max(x, axis=1),
}


@pytest.mark.parametrize(
    "mutant", [m.name for m in list_mutants(paper="pure-dp-heavy-tails", kind="privacy")]
)
def test_privacy_mutants_are_caught(mutant):
    m = [x for x in list_mutants(paper="pure-dp-heavy-tails") if x.name == mutant][0]
    t = m.build()
    result = audit(
        t.mechanism,
        t.d0,
        t.d1,
        claim=t.claim,
        trials=50_000,
        seed=0,
    )
    assert result.verdict == "violation", (mutant, result.epsilon_lower)


def test_sampler_audit_of_the_correct_laplace_is_consistent():
    from dpclaims.targets.pure_dp_heavy_tails import audit_sampler

    t = audit_sampler(statistic="raw")
    q = audit_sampler()
    assert (
        audit(q.mechanism, q.d0, q.d1, claim=q.claim, trials=50_000, seed=0).verdict == "consistent"
    )
    for stat in STATISTICS.values():  # weaker events (reach above 2×), never a violation
        assert audit(
            t.mechanism,
            t.d0,
            t.d1,
            claim=t.claim,
            trials=50_000,
            seed=0,
            test=AuditTest(statistic=stat),
        ).verdict in ("consistent", "consistent_weak")


def _rt1_fit(k, algorithm=DoubleOutputPert, reps=4):
    result = sweep(
        rt1_distance,
        "n",
        [1000, 3000, 10_000, 30_000],
        replicates=reps,
        seed=1,
        fixed={"k": k, "trials": 200, "algorithm": algorithm},
        execution=Execution(backend="serial"),
    )
    return fit_power_law(result.values, result.errors)


@pytest.mark.parametrize("k", [2.0, 3.0, 4.0])
def test_rt1_n_exponent_is_minus_one_minus_one_over_k(k):
    fit = _rt1_fit(k)
    assert abs(fit.exponent + (1 - 1 / k)) <= 0.1, fit.summary()


def test_m8_wrong_clip_exponent_fails_the_k4_rate_check():
    fit = _rt1_fit(4.0, WrongClipExponentAlg4)
    assert check_exponent(fit, -0.75).verdict == "inconsistent", fit.summary()
    assert abs(fit.exponent + 0.5) <= 0.1


def test_m9_is_not_a_bug_in_d1_and_d2():
    errors = [
        rt1_distance(3000, np.random.default_rng(5), k=2.0, trials=400, algorithm=a)
        for a in (DoubleOutputPert, NoLocalizationAlg4)
    ]
    assert errors[1] <= errors[0] * 1.05
    # d = 2, Pareto absolute loss on W = B(0, 10): every kink hyperplane is within 1/2 of the
    # origin, so near the
    # minimizer the PV-2 objective IS the paper's W-extension and M9 runs exactly; it beats the
    # correct algorithm
    rng = np.random.default_rng(0)
    n, dom = 1000, Ball.centered(2, 10.0)
    inst = ParetoRadiusInstance(2, 2.5, scale=1.0, radius=10.0, half_width=0.5)
    data = inst.sample(n, 1, rng)
    terms = PolyhedralTerms.from_loss(AbsoluteLoss(), data.x[:, 0], data.y[:, 0], clip=math.inf)
    w_hat = pv2_minimize(
        terms, lam=1.0, center=np.zeros((1, 2)), domain=dom, target_gap=1e-10
    ).point[0]
    dist = {}
    for a, trials in ((DoubleOutputPert, 20), (NoLocalizationAlg4, 200)):
        alg = a.from_theorem(
            problem(n, d=2),
            moment_k=inst.moment_parameter(2),
            k=2,
            lam=1.0,
            beta0=0.1,
            output="final",
            solver="pv2",
        )
        dist[a] = np.median(np.linalg.norm(alg.run(data, rng, trials).theta - w_hat, axis=1))
    no_loc = dist[NoLocalizationAlg4]
    assert no_loc <= dist[DoubleOutputPert] and no_loc <= alg.distance_bound
    # so it is not a known bug: the mutant corpus leaves it out
    assert not [
        m
        for m in list_mutants(paper="pure-dp-heavy-tails")
        if "m9" in m.name or "no-localization" in m.name
    ]


def test_gibbs_rejection_draws_the_exact_target_law():
    rng = np.random.default_rng(0)

    def psi(w):
        return 3 * np.abs(w - 0.2) + 2 * w**2

    samples = gibbs_rejection_1d(
        lambda w, rows: psi(w),
        lo=np.full(20_000, -1.0),
        hi=np.full(20_000, 1.5),
        psi_min=np.full(20_000, psi(0.2)),
        rng=rng,
    )
    norm = integrate.quad(lambda w: np.exp(-psi(w)), -1, 1.5, points=[0.2])[0]
    cdf = np.vectorize(
        lambda t: (
            integrate.quad(lambda w: np.exp(-psi(w)), -1, t, points=[0.2] if t > 0.2 else None)[0]
            / norm
        )
    )
    assert stats.kstest(samples, cdf).pvalue > 0.01
    with pytest.raises(MechanismError, match="max_rounds"):
        gibbs_rejection_1d(
            lambda w, rows: 50 + 0 * w,
            lo=np.zeros(3),
            hi=np.ones(3),
            psi_min=np.zeros(3),
            rng=rng,
            max_rounds=2,
        )


def test_alg7_with_the_exact_continuous_sampler_is_audited_consistent():
    from dpclaims.algorithms.pure_dp_heavy_tails import WorstValidPoint

    d0, d1 = heavy_outlier_pair()
    em = LocalizedGridEM.from_theorem(
        problem(),
        moment_k=1.0,
        k=2,
        lam=1.0,
        beta=0.1,
        harness=WorstValidPoint.for_record(d0, 0),
        sampler="rejection",
    )
    out = em.run(d0, np.random.default_rng(0), 2000, transcript=True)
    assert np.all(np.abs(out.theta - out.transcript["w_tilde"]) <= em.localizer.radius + 1e-12)
    assert len(np.unique(out.theta)) == 2000  # continuous, not a grid
    result = audit(em, d0, d1, claim=em.privacy_claim, trials=30_000, seed=0)
    # the pair shows about 0.45 of the claim: consistent but weak (reach above 2×, issue #26)
    assert result.verdict in ("consistent", "consistent_weak") and result.epsilon_lower >= 0.3


@pytest.mark.parametrize("loss", ["abs", "hinge", "lin"])
@pytest.mark.parametrize("localized", [False, True])
def test_pv2_minimizer_is_certified_and_matches_brute_force(loss, localized):
    rng = np.random.default_rng(7)
    n, d, lam, clip = 12, 2, 0.7, 1.5
    x = np.exp(rng.standard_normal((n, 1))) * rng.standard_normal((n, d))
    f, y = {
        "abs": (AbsoluteLoss(), rng.standard_normal(n)),
        "hinge": (HingeLoss(), rng.choice([-1.0, 1.0], n)),
        "lin": (LinearLoss(), None),
    }[loss]
    dom = Ball.centered(d, 3.0)
    center = rng.uniform(-1, 1, (2, d))
    local, r = (dom.project(rng.uniform(-3, 3, (2, d))), 0.8) if localized else (None, 0.0)
    terms = PolyhedralTerms.from_loss(f, x, y, clip=clip)
    res = pv2_minimize(
        terms, lam=lam, center=center, domain=dom, local=local, r=r, target_gap=1e-10
    )
    a, e, lo, hi = polyhedral_form(f, x, y)
    c = np.minimum(1.0, clip / np.linalg.norm(a, axis=1))
    grid = np.stack(np.meshgrid(np.linspace(-3, 3, 601), np.linspace(-3, 3, 601)), -1).reshape(
        -1, 2
    )
    for t in range(2):

        def objective(w, t=t):
            u = w @ a.T + e
            return (c * np.where(u > 0, hi * u, lo * u)).mean(-1) + 0.5 * lam * np.sum(
                (w - center[t]) ** 2, -1
            )

        inside = np.linalg.norm(grid, axis=1) <= 3.0
        if localized:
            inside &= np.linalg.norm(grid - local[t], axis=1) <= r
            assert np.linalg.norm(res.point[t] - local[t]) <= r + 1e-9
        brute = grid[inside][np.argmin(objective(grid[inside]))]
        assert np.linalg.norm(res.point[t]) <= 3.0 + 1e-9 and res.gap[t] <= 1e-10
        assert objective(res.point[t]) <= objective(brute) + 1e-12
        # λ-strong convexity: both points lie within √(2·(objective − min)/λ) of the true minimizer
        slack = math.sqrt(2 * (objective(brute) - objective(res.point[t]) + res.gap[t]) / lam)
        assert (
            np.linalg.norm(res.point[t] - brute) <= slack + math.sqrt(2 * res.gap[t] / lam) + 1e-6
        )


def test_pv2_solver_path_in_d3_is_batched_and_stays_in_K():
    rng = np.random.default_rng(1)
    inst = ParetoRadiusInstance(3, 2.5, scale=1.0, radius=10.0, half_width=0.5)
    data = inst.sample(300, 1, rng)
    alg = DoubleOutputPert.from_theorem(
        problem(300, d=3),
        moment_k=inst.moment_parameter(2),
        k=2,
        lam=1.0,
        beta0=0.1,
        solver="pv2",
    )
    res = alg.run(data, rng, 5, transcript=True)
    assert res.theta.shape == (5, 3) and alg(data, np.random.default_rng(0), 4).shape == (4, 6)
    assert np.all(
        np.linalg.norm(res.theta - res.transcript["w_tilde"], axis=1) <= alg.localizer.radius + 1e-9
    )
    assert np.all(res.gradient_evaluations >= 600)


def test_rt1_epsilon_and_d_exponents():
    result = sweep(
        rt1_distance,
        "epsilon",
        [0.25, 0.5, 1.0, 2.0, 4.0],
        replicates=3,
        seed=2,
        fixed={"param": "epsilon", "k": 2.0, "n": 10_000, "trials": 300},
        execution=Execution(backend="serial"),
    )
    assert check_exponent(fit_power_law(result.values, result.errors), -0.5).verdict == "consistent"
    result = sweep(
        rt1_d_distance,
        "d",
        [1, 2, 4, 8, 16],
        replicates=3,
        seed=2,
        fixed={"k": 4.0, "n": 1500, "trials": 60},
        execution=Execution(backend="serial"),
    )
    assert check_exponent(fit_power_law(result.values, result.errors), 0.75).verdict == "consistent"


def test_raw_sampler_mutants_die_with_the_fixed_statistics():
    from dpclaims.targets.mutants.pure_dp_heavy_tails import CoordinatewiseLaplace, ExpRadiusLaplace
    from dpclaims.targets.pure_dp_heavy_tails import audit_sampler

    for mech, stat in ((ExpRadiusLaplace, "small-ball"), (CoordinatewiseLaplace, "quadrant-low")):
        t = audit_sampler(mechanism=mech, statistic="raw")
        r = audit(
            t.mechanism,
            t.d0,
            t.d1,
            claim=t.claim,
            trials=50_000,
            seed=0,
            test=AuditTest(statistic=STATISTICS[stat]),
        )
        assert r.verdict == "violation", (mech, r.epsilon_lower)


def test_pop_localize_transcript_output():
    """``output="transcript"`` releases (w̃_i, w_i) per phase; its w_i are the ``"phases"``
    release drawn with the same seed (the transcript flag draws nothing extra)."""
    from dataclasses import replace as _replace

    from dpclaims.hardinstances.canaries import heavy_outlier_pair
    from dpclaims.targets.pure_dp_heavy_tails import audit_problem

    alg = PopLocalize.from_theorem(
        audit_problem(),
        moment_2=1.0,
        moment_k=1.0,
        k=2,
        beta=0.1,
        constants="test",
        phases=4,
        output="transcript",
    )
    d0, _ = heavy_outlier_pair(200)
    out = alg(d0, np.random.default_rng(3), 7)
    phases = _replace(alg, output="phases")(d0, np.random.default_rng(3), 7)
    assert out.shape == (7, 8)
    np.testing.assert_array_equal(out[:, 1::2], phases)


def test_alg7_proved_bound_is_five_eighths_of_epsilon():
    """Laplace ε/2 plus the centred-score EM's ε_em/2 (ε_em = ε/4): 5ε/8, at any ε."""
    for epsilon in (0.5, 1.0, 2.0):
        em = LocalizedGridEM.from_theorem(
            problem().replace(epsilon=epsilon), moment_k=1.0, k=2, lam=1.0, beta=0.1
        )
        assert em.epsilon_bound == pytest.approx(5 * epsilon / 8)
        assert em.epsilon_bound < em.privacy_claim.epsilon


def test_alg7_grid_law_is_what_stage2_samples():
    """grid_log_probabilities is the law stage 2 draws from: normalised, and 20,000 draws at one
    w̃ pass a chi-square goodness-of-fit test against it (64 cells, p > 0.001)."""
    from dpclaims.algorithms.pure_dp_heavy_tails import WorstValidPoint

    d0, _ = heavy_outlier_pair()
    em = LocalizedGridEM.from_theorem(
        problem(), moment_k=1.0, k=2, lam=1.0, beta=0.1, harness=WorstValidPoint.for_record(d0, 0)
    )
    w_tilde = np.full((20_000, 1), 1.5)
    grid, logp = em.grid_log_probabilities(d0, w_tilde[:1])
    assert np.exp(logp).sum() == pytest.approx(1.0)
    draws, _ = em.stage2(d0, np.random.default_rng(0), w_tilde)
    counts = np.array([np.sum(draws[:, 0] == g) for g in grid[0]])
    assert counts.sum() == 20_000
    expected = 20_000 * np.exp(logp[0])
    assert stats.chisquare(counts, expected * 20_000 / expected.sum()).pvalue > 1e-3
