"""The transcript interface (issue #27, item 1): DP-SGD, DIFF2 and DP-SRGD release their
transcripts one way, each with the exact likelihood ratio of a gradient canary."""

import math

import numpy as np
import pytest
from scipy import stats

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.choquette_choo_et_al_2024 import AcceleratedDPSRGD
from dpclaims.algorithms.choquette_choo_et_al_2024.tree import up_path
from dpclaims.algorithms.murata_suzuki_2023 import DIFF2BVRLSGD, DIFF2GD, DPGD
from dpclaims.algorithms.transcript import (
    GaussianRelease,
    ReleaseModel,
    ReleasesTranscript,
    StepRelease,
)
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.gdp import gdp_epsilon
from dpclaims.losses import LinearLoss, LogisticLoss
from dpclaims.problem import Problem
from dpclaims.targets.choquette_choo_et_al_2024 import TranscriptStatistic
from dpclaims.targets.choquette_choo_et_al_2024 import (
    gradient_canary_target as srgd_target,
)
from dpclaims.targets.murata_suzuki_2023 import gradient_canary_target as diff2_target

PROBLEM = Problem(
    n=2, m=5, d=3, epsilon=3.0, delta=1e-5, lipschitz=1.0, smoothness=1.0, loss=LinearLoss()
)


def _silos(seed=0):
    """P = 2 silos of 5 records, d = 3, the last coordinate (the canary's) 0."""
    x = np.random.default_rng(seed).standard_normal((2, 5, 3))
    x[..., -1] = 0.0
    return UserDataset(x)


def _diff2(cls=DIFF2GD, **options):
    base = dict(initial_gap=1.0, rounds=40, eta=0.01, clip1=1.0)
    if cls is not DPGD:
        base.update(period=5, clip2=1.0, u=1.25)
    return cls.from_theorem(PROBLEM, **{**base, **options})


def _bvr():
    return DIFF2BVRLSGD.from_theorem(
        PROBLEM,
        initial_gap=1.0,
        rounds=12,
        period=4,
        eta=0.01,
        local_steps=3,
        batch=2,
        sigma3_rule="table1",
    )


def _srgd(**options):
    base = dict(
        epsilon=2.0, delta=1e-5, loss=LinearLoss(), steps=8, batch_size=3, beta=2.0, clip=4.0
    )
    return AcceleratedDPSRGD.calibrated(**{"radius": 1.0, **base, **options})


def _release(k=3, steps=5):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, k))
    return GaussianRelease(
        steps=steps,
        carriers=np.array([0, 2, 4])[:k],
        mean_without=rng.standard_normal(k),
        mean_with=rng.standard_normal(k),
        covariance=a @ a.T + np.eye(k),
    )


# ------------------------------------------------------------------ the Gaussian release model


def test_gaussian_release_likelihood_ratio_is_the_log_density_ratio():
    release = _release()
    x = np.random.default_rng(1).standard_normal((6, 5))
    s = x[:, release.carriers]
    expected = stats.multivariate_normal(release.mean_with, release.covariance).logpdf(
        s
    ) - stats.multivariate_normal(release.mean_without, release.covariance).logpdf(s)
    np.testing.assert_allclose(release.log_likelihood_ratio(x), expected, rtol=1e-10)
    # the steps that carry no canary do not enter
    y = x.copy()
    y[:, [1, 3]] += 100.0
    np.testing.assert_array_equal(release.log_likelihood_ratio(y), release.log_likelihood_ratio(x))
    shift = release.mean_with - release.mean_without
    assert release.mu == pytest.approx(
        math.sqrt(shift @ np.linalg.solve(release.covariance, shift))
    )
    assert release.epsilon(1e-5) == pytest.approx(gdp_epsilon(release.mu, 1e-5))
    assert isinstance(release, ReleaseModel)


def test_gaussian_release_draws_follow_the_gdp_laws():
    release = _release()
    mu, rng = release.mu, np.random.default_rng(2)
    for canary, mean in ((False, -0.5 * mu**2), (True, 0.5 * mu**2)):
        draws = release.sample_log_likelihood_ratio(rng, 50_000, canary=canary)
        assert abs(draws.mean() - mean) < 5 * mu / math.sqrt(50_000)
        assert draws.std() == pytest.approx(mu, rel=0.02)
    # the exact law of L under each hypothesis, drawn from the releases themselves
    x = rng.multivariate_normal(release.mean_with, release.covariance, 50_000)
    full = np.zeros((50_000, 5))
    full[:, release.carriers] = x
    assert release.log_likelihood_ratio(full).mean() == pytest.approx(0.5 * mu**2, abs=0.05)


def test_release_models_sample_their_projections_and_divide_their_noise():
    release = _release()
    x = release.sample_projections(np.random.default_rng(3), 40_000, canary=True)
    assert np.all(x[:, [1, 3]] == 0.0)
    np.testing.assert_allclose(x[:, release.carriers].mean(axis=0), release.mean_with, atol=0.05)
    np.testing.assert_allclose(np.cov(x[:, release.carriers].T), release.covariance, atol=0.1)
    assert release.noise_divided(2.0).mu == pytest.approx(2 * release.mu)
    step = StepRelease(steps=3, sampling_rate=0.2, clip_norm=2.0, noise_std=1.5)
    assert step.noise_divided(3.0).noise_std == 0.5
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(
        step.sample_log_likelihood_ratio(rng_a, 10, canary=True),
        step.log_likelihood_ratio(step.sample_projections(rng_b, 10, canary=True)),
    )


def test_gaussian_release_rejects_bad_input():
    good = dict(steps=3, carriers=[0, 1], mean_without=[0, 0], mean_with=[1, 1])
    with pytest.raises(InputError, match="positive definite"):
        GaussianRelease(**good, covariance=[[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(InputError, match="carriers"):
        GaussianRelease(**{**good, "carriers": [0, 3]}, covariance=np.eye(2))
    with pytest.raises(InputError, match="shape"):
        GaussianRelease(**good, covariance=np.eye(3))
    with pytest.raises(InputError, match="projections"):
        GaussianRelease(**good, covariance=np.eye(2)).log_likelihood_ratio(np.zeros((4, 2)))


# ------------------------------------------------------------------ one interface, three algorithms


def _algorithms():
    dpsgd = DPSGD(
        loss=LogisticLoss(),
        steps=6,
        step_size=0.3,
        clip_norm=1.0,
        noise_multiplier=1.5,
        sampling_rate=0.25,
    )
    x = np.random.default_rng(3).standard_normal((12, 3))
    blank = srgd_target(_srgd()).d1
    return [
        (dpsgd, UserDataset(x, np.sign(x[:, 0])), "transcript"),
        (_diff2(), _silos(), "estimates"),
        (_diff2(DPGD), _silos(), "estimates"),
        (_srgd(), blank, "prefixes"),
    ]


@pytest.mark.parametrize("case", range(4), ids=["dpsgd", "diff2", "dpgd", "srgd"])
def test_releases_are_the_run_transcript_with_the_same_draws(case):
    algorithm, data, field = _algorithms()[case]
    assert isinstance(algorithm, ReleasesTranscript)
    assert isinstance(algorithm.step_release, ReleaseModel)
    released = algorithm.releases(data, np.random.default_rng(4), 5)
    assert released.shape == (5, algorithm.step_release.steps, data.d)
    plain = algorithm.run(data, np.random.default_rng(4), 5)
    full = algorithm.run(data, np.random.default_rng(4), 5, transcript=True)
    np.testing.assert_array_equal(plain.theta, full.theta)
    record = full.transcript if field == "prefixes" else full
    np.testing.assert_array_equal(released, getattr(record, field))


def test_diff2_last_iterate_is_the_sum_of_the_releases():
    """GD-Routine: x_R = x_0 − η Σ_r ṽ_r."""
    alg = _diff2()
    run = alg.run(_silos(), np.random.default_rng(5), 7, transcript=True)
    np.testing.assert_allclose(run.final, alg.x0 - alg.eta * run.estimates.sum(axis=1))


def test_srgd_last_iterate_is_the_weighted_sum_of_the_releases():
    """Unaccelerated, unconstrained: y_T = −Σ_t P_t/(t + 1) (Algorithm 1 line 8, τ = 0)."""
    alg = _srgd(radius=math.inf, interpolation="none")
    data = srgd_target(alg).d1
    released = alg.releases(data, np.random.default_rng(6), 7)
    theta = alg.run(data, np.random.default_rng(6), 7).theta
    weights = 1.0 / np.arange(1, alg.steps + 1)
    np.testing.assert_allclose(theta, -np.einsum("t,ntp->np", weights, released), atol=1e-12)


# ------------------------------------------------------------------ each mechanism's model


def test_diff2_release_carries_the_canary_on_restart_rounds_only():
    alg = _diff2()
    release = alg.step_release
    restarts = np.arange(0, alg.rounds, alg.period)
    np.testing.assert_array_equal(release.carriers, restarts)
    assert release.mu == pytest.approx(
        2 * math.sqrt(len(restarts)) / (alg.n_min * alg.silos * alg.sigma1)
    )
    # DP-GD restarts every round: the whole transcript μ of Prop. 4.1's analysis
    dpgd = _diff2(DPGD)
    assert dpgd.step_release.mu == pytest.approx(dpgd.mu)
    assert alg.step_release.mu < alg.mu  # the difference rounds' share is not a fixed gradient's
    assert len(_bvr().step_release.carriers) == 3


@pytest.mark.parametrize("make", [_diff2, lambda: _diff2(DPGD), _bvr], ids=["gd", "dpgd", "bvr"])
def test_diff2_likelihood_ratio_has_its_claimed_law_on_the_canary_pair(make):
    """On the transcript of the real algorithm, L ~ N(∓μ²/2, μ²): the model is the mechanism
    (BVR's local steps see only gradient differences, 0 for a fixed gradient)."""
    alg = make()
    target = diff2_target(alg, _silos())
    mu = alg.step_release.mu
    for data, sign, seed in ((target.d0, -1, 7), (target.d1, 1, 8)):
        scores = target.statistic(target.mechanism(data, np.random.default_rng(seed), 3000))
        assert abs(scores.mean() - sign * mu**2 / 2) < 5 * mu / math.sqrt(3000)
        assert scores.std() == pytest.approx(mu, rel=0.06)


@pytest.mark.parametrize("batch", [0, 3])
def test_srgd_likelihood_ratio_is_the_tree_node_statistic(batch):
    """Decorrelating the prefixes into the tree's nodes: L = (s/σ²)·S − h s²/(2σ²) with S the
    spec's node statistic (the canary is in the h = |up(t*+1)| nodes above its leaf)."""
    alg = _srgd()
    target = srgd_target(alg, batch=batch)
    release = target.statistic.release
    s, h = alg.leaf_sensitivity, len(up_path(batch + 1, alg.steps))
    assert release.mu == pytest.approx(s * math.sqrt(h) / alg.sigma)
    projections = target.mechanism(target.d1, np.random.default_rng(9), 200)
    nodes = TranscriptStatistic(algorithm=alg, direction=np.array([-1.0]), batch=batch)
    statistic = nodes(target.d1, np.random.default_rng(9), 200)[:, 0]
    np.testing.assert_allclose(
        release.log_likelihood_ratio(projections),
        s / alg.sigma**2 * statistic - h * s**2 / (2 * alg.sigma**2),
        rtol=1e-9,
        atol=1e-9,
    )
    assert alg.step_release.mu == pytest.approx(alg.mu)  # batch 0: the claim's μ


def test_srgd_independent_estimator_release_is_one_step():
    alg = _srgd(estimator="independent")
    release = alg.canary_release(batch=2)
    assert release.mu == pytest.approx(alg.mu)
    target = srgd_target(alg, batch=2)
    scores = target.statistic(target.mechanism(target.d1, np.random.default_rng(10), 4000))
    assert abs(scores.mean() - release.mu**2 / 2) < 5 * release.mu / math.sqrt(4000)


def test_release_models_reject_what_they_cannot_describe():
    with pytest.raises(InputError, match="batch"):
        _srgd().canary_release(batch=8)
    with pytest.raises(InputError, match="noise"):
        _srgd(epsilon=math.inf).canary_release()
    logistic = DIFF2GD.from_theorem(
        PROBLEM.replace(loss=LogisticLoss()), initial_gap=1.0, rounds=4, period=2
    )
    with pytest.raises(InputError, match="LinearLoss"):
        diff2_target(logistic, _silos())
    with pytest.raises(InputError, match="LinearLoss"):
        srgd_target(_srgd(loss=LogisticLoss()))
    step = StepRelease(steps=2, sampling_rate=0.5, clip_norm=1.0, noise_std=1.0)
    assert isinstance(step, ReleaseModel)
