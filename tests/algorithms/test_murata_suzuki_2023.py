"""DIFF2 (spec 004): calibration formulas against the spec's worked numbers, subroutines, audit,
mutants."""

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.algorithms.murata_suzuki_2023 import DIFF2BVRLSGD, DIFF2GD, DPGD, clipped_mean
from dpclaims.algorithms.murata_suzuki_2023.privacy import (
    accountant_tight_epsilon,
    alpha_star,
    bvr_minibatch,
    bvr_sigma3_closed_form,
    bvr_sigma3_exact,
    diff2_gd_sigmas,
    diff2_rdp_epsilon,
    dpgd_sigma,
    tight_epsilon,
    transcript_mu,
)
from dpclaims.audit import AuditTest, audit
from dpclaims.errors import InputError
from dpclaims.hardinstances.murata_suzuki_2023 import regression_real, regression_standin
from dpclaims.hardinstances.murata_suzuki_2023.nonconvex import CauchyCircleInstance
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget
from dpclaims.targets.murata_suzuki_2023 import canary_audit_target
from dpclaims.targets.mutants import list_mutants
from dpclaims.targets.mutants.murata_suzuki_2023 import MeanSiloSize


def _cauchy(n, m, d, epsilon, **loss):
    """The §7(b) problem class (G = 0.5, L = 1, δ = 1e-5) with P = n silos of m records."""
    return Problem(
        n=n, m=m, d=d, epsilon=epsilon, delta=1e-5, lipschitz=0.5, smoothness=1.0, **loss
    )


@pytest.mark.parametrize(
    "eps,alpha,tight,b4", [(1, 25, 0.726, 0.980), (3, 9, 2.341, 2.937), (5, 6, 3.940, 4.797)]
)
def test_gdp_reference_table(eps, alpha, tight, b4):
    assert alpha_star(eps, 1e-5) == alpha
    s1, s2 = diff2_gd_sigmas(
        n_min=5, silos=2, rounds=200, period=5, epsilon=eps, delta=1e-5, u=1.25
    )
    schedule = dict(n_p=5, silos=2, rounds=200, period=5, sigma1=s1, sigma2=s2)
    mu = transcript_mu(**schedule)
    assert mu == pytest.approx(math.sqrt(eps / alpha))
    assert tight_epsilon(mu, 1e-5) == pytest.approx(tight, abs=6e-4)
    assert accountant_tight_epsilon(mu, 1e-5) == pytest.approx(tight, abs=6e-4)
    assert diff2_rdp_epsilon(**schedule, delta=1e-5) == pytest.approx(b4, abs=1e-3)
    assert diff2_rdp_epsilon(**schedule, delta=1e-5, alpha=alpha) <= eps


def test_section6_sigma_table():
    common = dict(silos=10, rounds=2000, delta=1e-5)
    assert dpgd_sigma(n_min=1651, epsilon=3, **common) == pytest.approx(0.00938, rel=2e-3)
    assert diff2_gd_sigmas(n_min=1651, period=6, epsilon=3, u=1.25, **common) == pytest.approx(
        (0.00429, 0.0191), rel=3e-3
    )
    assert diff2_gd_sigmas(n_min=4801, period=200, epsilon=5, u=1.25, **common) == pytest.approx(
        (0.00016, 0.0046), rel=0.03
    )


def test_bvr_calibration_prototype_numbers():
    common = dict(silos=10, rounds=2000, local_steps=10, delta=1e-5)
    first = dict(n_min=1651, batch=13, epsilon=3, **common)
    second = dict(n_min=4801, batch=16, epsilon=5, **common)
    assert bvr_sigma3_exact(**first) == pytest.approx(0.354, rel=3e-3)
    assert bvr_sigma3_closed_form(**first) == pytest.approx(0.565, rel=3e-3)
    assert bvr_sigma3_exact(**second) == pytest.approx(0.098, rel=5e-3)
    assert bvr_sigma3_closed_form(**second) == pytest.approx(0.375, rel=3e-3)
    assert bvr_minibatch(n_min=1651, epsilon=3, **common) == 13


def test_theory_schedules_match_spec_prototype():
    inst = CauchyCircleInstance(d=10)
    kw = dict(initial_gap=inst.initial_gap, x0=inst.x0)
    problem = _cauchy(10, 3200, 10, 1.0, loss=inst.loss)
    a = DIFF2GD.from_theorem(problem, **kw)
    assert (a.rounds, a.period, a.eta) == (10297, 50, 0.5)
    assert (a.sigma1, a.sigma2) == pytest.approx((0.0063, 0.0444), abs=1e-4)
    b = DPGD.from_theorem(problem, **kw)
    assert (b.rounds, b.eta, b.period) == (2920, 0.5, 1)
    assert b.sigma1 == pytest.approx(0.0169, abs=1e-4)
    small = DIFF2GD.from_theorem(problem.replace(m=400), **kw)
    assert (small.rounds, small.period) == (644, 12)
    assert a.privacy_claim.unit == "item" and a.privacy_claim.relation == "replace"
    assert a.params["tight_epsilon"] < a.params["rdp_epsilon"] <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.floats(0.0, 3.0), st.integers(0, 2**31 - 1))
def test_clipped_mean_norm_bound(k, d, radius, seed):
    y = np.random.default_rng(seed).standard_normal((3, k, d)) * 10
    out = clipped_mean(y, radius)
    assert np.all(np.linalg.norm(out, axis=-1) <= radius + 1e-9)
    small = clipped_mean(y * 1e-6, 1e3)
    assert np.allclose(small, y.mean(axis=1) * 1e-6)


def test_merging_duplicates_is_exact():
    inst = CauchyCircleInstance(d=3)
    data = inst.replicated(2, 16)
    from dpclaims.data import UserDataset

    rng = np.random.default_rng(1)
    perturbed = UserDataset(data.x + 1e-3 * rng.standard_normal(data.x.shape))
    alg = DIFF2GD.from_theorem(
        _cauchy(2, 16, 3, 2.0, loss=inst.loss), initial_gap=1.0, rounds=20, period=4
    )
    r1 = alg.run(perturbed, np.random.default_rng(0), 4, transcript=True)
    r2 = alg.run(perturbed, np.random.default_rng(0), 4)
    assert np.array_equal(r1.theta, r2.theta)
    assert np.array_equal(r1.theta, r1.iterates[np.arange(4), r1.output_index])
    assert r1.gradient_evaluations == 32 * (5 + 2 * 15)


def test_restart_resets_and_noise_scales():
    from dpclaims.data import UserDataset
    from dpclaims.losses import WeightedSquaredDistanceLoss

    data = UserDataset(np.zeros((2, 4, 2)), np.zeros((2, 4)))
    alg = DIFF2GD(
        loss=WeightedSquaredDistanceLoss(1.0),
        d=2,
        silos=2,
        n_min=4,
        epsilon=1.0,
        delta=1e-5,
        rounds=6,
        period=3,
        sigma1=0.5,
        sigma2=0.25,
        clip1=2.0,
        clip2=1.0,
        eta=1.0,
    )
    run = alg.run(data, np.random.default_rng(0), 20000, transcript=True)
    noise = np.diff(np.concatenate([np.zeros((20000, 1, 2)), run.estimates], axis=1), axis=1)
    assert run.estimates[:, 0].std() == pytest.approx(1.0, rel=0.02)
    assert run.estimates[:, 3].std() == pytest.approx(
        1.0, rel=0.02
    )  # restart: fresh, not accumulated
    move = np.linalg.norm(run.iterates[:, 1] - run.iterates[:, 0], axis=1)
    assert (noise[:, 1, 0] / (0.25 * move)).std() == pytest.approx(1.0, rel=0.03)


def test_bvr_runs_and_counts():
    inst = CauchyCircleInstance(d=4)
    alg = DIFF2BVRLSGD.from_theorem(
        _cauchy(10, 160, 4, 8.0, loss=inst.loss),
        initial_gap=inst.initial_gap,
        x0=inst.x0,
        rounds=30,
    )
    run = alg.run(inst.replicated(10, 160), np.random.default_rng(0), 8, transcript=True)
    assert run.points.shape == (8, 30 * alg.local_steps, 4)
    assert np.array_equal(run.theta, run.points[np.arange(8), run.output_index])
    assert alg.paper_epsilon <= 8.0 and alg.accountant_epsilon <= alg.paper_epsilon
    assert (
        run.gradient_evaluations
        == 10 * 160 * (alg.restarts + 2 * (30 - alg.restarts)) + 2 * alg.batch * 9 * 30
    )


def test_bad_inputs():
    inst = CauchyCircleInstance(d=2)
    with pytest.raises(TypeError, match="mutant"):
        DIFF2GD.from_theorem(_cauchy(2, 8, 2, 1.0, loss=inst.loss), initial_gap=1.0, mutant="nope")
    with pytest.raises(InputError, match="silos"):
        DIFF2GD.from_theorem(_cauchy(3, 8, 2, 1.0, loss=inst.loss), initial_gap=1.0, rounds=5).run(
            inst.replicated(2, 8), np.random.default_rng(0), 2
        )
    with pytest.raises(InputError, match="smoothness"):
        DIFF2GD.from_theorem(Problem(n=2, m=8, d=2, epsilon=1.0, delta=1e-5), initial_gap=1.0)
    with pytest.raises(InputError, match="initial_gap"):
        DPGD.from_theorem(_cauchy(2, 8, 2, 1.0, loss=inst.loss), initial_gap=-1.0)
    with pytest.raises(InputError):
        alpha_star(1.0, 0.0)


def test_standins_have_the_paper_shapes():
    split = regression_standin("gas_like", np.random.default_rng(0), samples=2000)
    assert split.train.n == 10 and split.model.d == 111
    full = regression_standin("california_like", np.random.default_rng(0))
    assert full.train.m == 1651 and full.model.d == 101


def test_real_diabetes_set_gets_the_section61_preprocessing():
    split = regression_real("diabetes", np.random.default_rng(0))
    assert (split.train.n, split.train.m, split.model.d, split.test_x.shape) == (
        10,
        35,
        121,
        (88, 10),
    )
    x = split.train.x.reshape(-1, 10)
    # standardised with train statistics (all 354 training rows; 4 dropped by the silo cut)
    assert np.abs(x.mean(axis=0)).max() < 0.05 and np.allclose(x.std(axis=0), 1.0, atol=0.05)
    y = np.concatenate([split.train.y.ravel(), split.test_y])
    assert 0 < y.min() and np.isclose(
        y.max(), 1.0
    )  # the target divided by max |y| (346) over the whole set
    other = regression_real("diabetes", np.random.default_rng(1))
    assert not np.array_equal(split.test_y, other.test_y)
    with pytest.raises(InputError, match="name"):
        regression_real("iris", np.random.default_rng(0))


def test_real_set_without_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)  # import fails as if not installed
    with pytest.raises(InputError, match=r"pip install 'dpclaims\[real\]'"):
        regression_real("diabetes", np.random.default_rng(0))


def _audit(target, *, seed, method, trials=10_000):
    """An audit of a canary target against its claim (``trials`` per dataset)."""
    return audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=target.claim,
        trials=trials,
        seed=seed,
        test=AuditTest(method=method),
    )


def test_transcript_audit_is_consistent_and_near_gaussian():
    target = canary_audit_target(rounds=40, period=8)
    assert isinstance(target, AuditTarget) and target.claim.epsilon == 3.0
    res = _audit(target, seed=0, method="gdp")
    assert res.verdict == "consistent"
    assert 0.45 < res.mu < 0.65  # claim μ = 0.577


@pytest.mark.parametrize(
    "name,trials,options",
    [
        ("diff2-m1-unscaled-diff-radius", 10_000, dict(rounds=40, period=8)),
        ("diff2-m2-restarts-not-composed", 200_000, dict(rounds=40, period=2)),
        ("diff2-m3-add-remove-sensitivity", 200_000, dict(rounds=40, period=8)),
        ("diff2-m5-noiseless-accumulation", 10_000, dict(rounds=40, period=8)),
        ("diff2-m4-mean-silo-size", 10_000, dict(rounds=40, period=8)),
    ],
)
def test_privacy_mutants_are_caught(name, trials, options):
    """Certified (threshold) audits: a Gaussian-DP estimate above the claim is not a violation;
    m2 and m3 leak ε ≈ 3.3–3.6 against the claimed 3, certified only at 200,000 trials."""
    mutant = next(m for m in list_mutants(paper="murata-suzuki-2023") if m.name == name)
    target = mutant.build(**options)
    assert (
        type(target.mechanism.algorithm).__module__ == "dpclaims.targets.mutants.murata_suzuki_2023"
    )
    assert isinstance(target.mechanism.algorithm, DIFF2GD)
    assert type(target.mechanism.reference) is DIFF2GD  # the claim stays the paper's
    res = _audit(target, seed=1, method="threshold", trials=trials)
    assert res.verdict == "violation" and res.certified, res.epsilon_lower


def test_utility_mutant_misses_prop_d2_bound():
    mutant = next(m for m in list_mutants(paper="murata-suzuki-2023") if m.kind == "utility")
    alg = mutant.build()
    inst = CauchyCircleInstance(d=10)
    run = alg.run(inst.replicated(10, 400), np.random.default_rng(0), 8, transcript=True)
    u = inst.gradient_norm_sq(run.analysed_points()).mean()
    assert u > 3 * alg.utility_bound(inst.initial_gap)


def test_unequal_silos_use_only_real_records():
    from dpclaims.data import UserDataset
    from dpclaims.losses import WeightedSquaredDistanceLoss

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 2))
    padded = x.copy()
    padded[0, 3:] = 100.0  # silo 0 holds 3 real records; the padding must be ignored
    loss = WeightedSquaredDistanceLoss(1.0)
    kw = dict(initial_gap=1.0, rounds=4, period=2, eta=0.1, clip1=50.0, clip2=50.0)
    problem = Problem(
        n=2, m=6, d=2, epsilon=1.0, delta=1e-5, lipschitz=1.0, smoothness=1.0, loss=loss
    )
    alg = DIFF2GD.from_theorem(problem, silo_sizes=(3, 6), **kw)
    assert alg.n_min == 3 and alg.sigma1 == pytest.approx(
        DIFF2GD.from_theorem(problem.replace(m=3), **kw).sigma1
    )
    y = np.ones((2, 6))
    a = alg.run(UserDataset(padded, y), np.random.default_rng(0), 3, transcript=True)
    b = alg.run(
        UserDataset(
            np.where(np.arange(6)[None, :, None] < np.array([3, 6])[:, None, None], x, -7.0), y
        ),
        np.random.default_rng(0),
        3,
        transcript=True,
    )
    assert np.array_equal(a.iterates, b.iterates)
    assert list(a.client_gradient_evaluations) == [3 * (2 + 2 * 2), 6 * (2 + 2 * 2)]
    m4 = MeanSiloSize.from_theorem(problem, silo_sizes=(3, 6), **kw)
    assert m4.sigma1 == pytest.approx(alg.sigma1 * 3 / 4.5)
    with pytest.raises(InputError, match="silo_sizes"):
        MeanSiloSize.from_theorem(problem, **kw)
    with pytest.raises(InputError, match="silo_sizes"):
        DIFF2GD.from_theorem(problem, silo_sizes=(3, 7), **kw)


def test_unequal_silo_audit_is_consistent():
    target = canary_audit_target(rounds=40, period=8, silo_sizes=(5, 50))
    assert target.d0.m == 50 and target.mechanism.algorithm.n_min == 5
    res = _audit(target, seed=0, method="gdp")
    assert res.verdict == "consistent"
    assert 0.45 < res.mu < 0.65  # μ = 0.577 for a record of the 5-record silo


class _Unfactored:
    """The same loss without ``grad_factors``: DIFF2 then takes the generic per-record-gradient
    path."""

    def __init__(self, loss):
        self._loss = loss

    def __getattr__(self, name):
        if name == "grad_factors":
            raise AttributeError(name)
        return getattr(self._loss, name)


@pytest.mark.parametrize("algorithm", [DIFF2GD, DPGD])
def test_factored_softplus_path_matches_the_generic_one(algorithm):
    split = regression_standin("california_like", np.random.default_rng(1), samples=400)
    net, data = split.model, split.train
    x0 = net.init(np.random.default_rng(2), 1)[0]
    extra = {"period": 4, "clip2": 0.5} if algorithm is DIFF2GD else {}
    runs = [
        algorithm.from_theorem(
            Problem(
                n=data.n,
                m=data.m,
                d=net.d,
                epsilon=3.0,
                delta=1e-5,
                lipschitz=0.3,
                smoothness=1.0,
                loss=loss,
            ),
            initial_gap=1.0,
            x0=x0,
            rounds=12,
            eta=0.2,
            clip1=0.3,
            **extra,
        ).run(data, np.random.default_rng(3), 3)
        for loss in (net, _Unfactored(net))
    ]
    np.testing.assert_allclose(runs[0].final, runs[1].final, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(runs[0].output_index, runs[1].output_index)


def test_scheduled_gradient_count_equals_a_runs_count():
    inst = CauchyCircleInstance(d=4)
    kw = dict(initial_gap=inst.initial_gap, x0=inst.x0, rounds=30)
    bvr = DIFF2BVRLSGD.from_theorem(_cauchy(10, 160, 4, 8.0, loss=inst.loss), **kw)
    gd = DIFF2GD.from_theorem(_cauchy(10, 160, 4, 1.0, loss=inst.loss), **kw)
    for alg in (bvr, gd):
        run = alg.run(inst.replicated(10, 160), np.random.default_rng(0), 2)
        assert alg.scheduled_gradient_evaluations == run.gradient_evaluations


def test_bvr_sigma3_rules():
    """closed_form is Prop. E.2's proof formula; table1 its second branch √(6α*)/b; exact is the
    default."""
    inst = CauchyCircleInstance(d=4)
    kw = dict(initial_gap=inst.initial_gap, x0=inst.x0, rounds=30, batch=4)
    problem = _cauchy(10, 160, 4, 8.0, loss=inst.loss)
    exact = DIFF2BVRLSGD.from_theorem(problem, **kw)
    closed = DIFF2BVRLSGD.from_theorem(problem, sigma3_rule="closed_form", **kw)
    table1 = DIFF2BVRLSGD.from_theorem(problem, sigma3_rule="table1", **kw)
    schedule = dict(
        n_min=160, silos=10, rounds=30, local_steps=10, batch=4, epsilon=8.0, delta=1e-5
    )
    assert exact.sigma3 == bvr_sigma3_exact(**schedule)
    assert closed.sigma3 == bvr_sigma3_closed_form(**schedule) >= table1.sigma3
    assert table1.sigma3 == pytest.approx(math.sqrt(6 * alpha_star(8.0, 1e-5)) / 4)
    with pytest.raises(InputError, match="sigma3_rule"):
        DIFF2BVRLSGD.from_theorem(problem, sigma3_rule="other", **kw)


def test_subsampled_rdp_wor_survives_huge_sigma():
    """e2 underflows to 0 for very large σ3: the bound tends to its j ≥ 3 floor instead of
    raising."""
    from dpclaims.algorithms.murata_suzuki_2023.privacy import subsampled_rdp_wor

    huge = subsampled_rdp_wor(4, 1e153, 506, 25600)  # b²σ3² overflows to inf, so e2 = 0
    large = subsampled_rdp_wor(4, 1e6, 506, 25600)
    assert math.isfinite(huge) and 0 < huge <= large


def test_calibration_mutants_change_only_their_line():
    from dpclaims.algorithms.murata_suzuki_2023 import CANARY_PROBLEM
    from dpclaims.losses import WeightedSquaredDistanceLoss
    from dpclaims.targets.mutants.murata_suzuki_2023 import (
        AddRemoveSensitivity,
        RestartsNotComposed,
    )

    problem = CANARY_PROBLEM.replace(loss=WeightedSquaredDistanceLoss(1.0))
    kw = dict(initial_gap=1.0, rounds=40, period=8, eta=0.01)
    ref = DIFF2GD.from_theorem(problem, **kw)
    half = AddRemoveSensitivity.from_theorem(problem, **kw)
    assert (half.sigma1, half.sigma2) == (ref.sigma1 / 2, ref.sigma2 / 2)
    once = RestartsNotComposed.from_theorem(problem, **kw)
    assert once.sigma2 == ref.sigma2
    assert once.sigma1 == pytest.approx(ref.sigma1 / math.sqrt(ref.restarts))
    assert (once.rounds, once.period, once.eta) == (ref.rounds, ref.period, ref.eta)


def test_mutant_audits_run_at_the_quick_registry_setting():
    """The mutants' canary audits use the quick registry audit's R and T (M2: R = 20, T = 2);
    their true ε is the GDP ε of the σ's they use (M3 halves both: μ doubles to 1.155)."""
    from dpclaims.claims.tables.murata_suzuki_2023 import AUDIT_PERIOD, AUDIT_ROUNDS
    from dpclaims.targets.mutants.murata_suzuki_2023 import M2_AUDIT, MUTANT_AUDIT

    assert MUTANT_AUDIT == {"rounds": AUDIT_ROUNDS["quick"], "period": AUDIT_PERIOD["quick"]}
    true = {m.name: m.true_epsilon for m in list_mutants(paper="murata-suzuki-2023")}
    assert true["diff2-m2-restarts-not-composed"] == pytest.approx(7.93, abs=0.01)
    assert true["diff2-m3-add-remove-sensitivity"] == pytest.approx(5.17, abs=0.01)
    assert true["diff2-m4-mean-silo-size"] == pytest.approx(17.95, abs=0.01)
    m2 = next(m for m in list_mutants(paper="murata-suzuki-2023") if m.name.startswith("diff2-m2"))
    alg = m2.build().mechanism.algorithm
    assert (alg.rounds, alg.period) == (M2_AUDIT["rounds"], M2_AUDIT["period"])


@pytest.mark.slow
def test_add_remove_mutant_dies_at_quick():
    """M3 (σ's halved, true ε 5.17) survived the 1e4-trial audit (2.99 ≤ 3); the quick registry
    audit (5e5 trials) kills it."""
    from dpclaims.claims.mutation import kill_matrix
    from dpclaims.execution import Execution

    report = kill_matrix(
        "murata-suzuki-2023",
        budget="quick",
        names=["diff2-m3-add-remove-sensitivity"],
        execution=Execution(backend="serial"),
    )
    row = report["matrix"][0]
    assert row["killed"] and row["epsilon_lower"] > 3.3, row
