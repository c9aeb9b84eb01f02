"""Spec 003 Algorithm 7 (LocalizedGridEM) in d ∈ {2, 3}: exact samplers, certified bound, audits."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpclaims.algorithms.pure_dp_heavy_tails import Ball, WorstValidPoint
from dpclaims.algorithms.pure_dp_heavy_tails.em import (
    LOWER_BOUND_SLACK,
    LocalizedGridEM,
    gibbs_rejection,
    net,
)
from dpclaims.audit import audit
from dpclaims.data import UserDataset
from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import Execution
from dpclaims.hardinstances.canaries import heavy_outlier_pair
from dpclaims.losses import AbsoluteLoss, HingeLoss, uniform_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem


def balls(rng, centers, radius, size):
    """``size`` uniform points in each ball ``B(centers_t, radius)`` → ``(T, size, d)``."""
    t, d = centers.shape
    return centers[:, None, :] + uniform_ball(rng, shape=(t, size), d=d, radius=radius)


def grid_em(n=200, *, d=2, lam=1.0, loss=None, **kw):
    """Algorithm 7 on ``B(0, 10)`` (or ``kw["domain"]``), G_k = 1, k = 2, β = 0.1."""
    loss = AbsoluteLoss() if loss is None else loss
    problem = Problem(n=n, d=d, epsilon=1.0, radius=10.0, loss=loss)
    return LocalizedGridEM.from_theorem(problem, moment_k=1.0, k=2, lam=lam, beta=0.1, **kw)


def lift(data, d):
    """The 1-d pair lifted to d features with zero extra coordinates."""
    return UserDataset(
        np.concatenate([data.x, np.zeros(data.x.shape[:2] + (d - 1,))], axis=-1), data.y
    )


def small_instance(seed, n=20, d=2, loss="abs"):
    rng = np.random.default_rng(seed)
    x = np.exp(rng.standard_normal((n, 1))) * rng.standard_normal((n, d))
    y = rng.standard_normal(n) if loss == "abs" else rng.choice([-1.0, 1.0], n)
    return UserDataset(x[:, None, :], y[:, None]), AbsoluteLoss() if loss == "abs" else HingeLoss()


@pytest.mark.parametrize("d", [2, 3])
def test_uniform_ball_proposal_is_uniform(d):
    rng = np.random.default_rng(0)
    c = np.array([[1.0] * d, [-2.0] * d])
    w = balls(rng, c, 1.5, 20_000)
    radius = np.linalg.norm(w - c[:, None, :], axis=-1) / 1.5
    assert radius.max() <= 1.0
    assert stats.kstest(radius.ravel(), lambda t: np.clip(t, 0, 1) ** d).pvalue > 0.01
    # isotropic: a fixed coordinate's sign is fair and the projection on e_1 has the ball's
    # marginal law
    proj = ((w - c[:, None, :])[..., 0] / 1.5).ravel()
    marginal = {
        2: lambda t: 0.5 + (t * np.sqrt(1 - t**2) + np.arcsin(t)) / np.pi,
        3: lambda t: 0.5 + 0.75 * (t - t**3 / 3),
    }[d]
    assert stats.kstest(proj, lambda t: marginal(np.clip(t, -1, 1))).pvalue > 0.01


def test_gibbs_rejection_in_d2_matches_the_integrated_density():
    rng = np.random.default_rng(1)
    trials = 20_000
    centers = np.tile([0.3, 0.0], (trials, 1))

    def psi(w, rows):
        return 3 * np.abs(w[..., 0] - 0.2) + 2 * w[..., 1] ** 2 + w[..., 0]

    def sample_uniform(rows, size, gen):
        w = balls(gen, centers[rows], 1.0, size)
        return w, np.linalg.norm(w, axis=-1) <= 1.0  # K = B(0,1) ∩ B((0.3,0),1)

    samples, rounds = gibbs_rejection(psi, sample_uniform, np.full(trials, 0.2), rng)
    assert samples.shape == (trials, 2) and rounds.min() >= 1
    assert np.all(np.linalg.norm(samples, axis=1) <= 1) and np.all(
        np.linalg.norm(samples - centers, axis=1) <= 1
    )
    # numerically integrated density on a fine midpoint grid → 1-d marginal CDFs of w1 and of w1 +
    # w2
    h = 2.0 / 1500
    g = np.arange(-1 + h / 2, 1.3, h)
    w1, w2 = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([w1, w2], -1)
    dens = (
        np.exp(-psi(pts, None))
        * (np.linalg.norm(pts, axis=-1) <= 1)
        * (np.hypot(w1 - 0.3, w2) <= 1)
    )
    for proj, values in ((samples[:, 0], w1), (samples[:, 0] + samples[:, 1], w1 + w2)):
        order = np.argsort(values.ravel())
        cdf = np.cumsum(dens.ravel()[order])
        cdf /= cdf[-1]
        knots = values.ravel()[order]
        assert stats.kstest(proj, lambda t, k=knots, c=cdf: np.interp(t, k, c)).pvalue > 0.01
    with pytest.raises(MechanismError, match="max_rounds"):
        gibbs_rejection(
            lambda w, rows: 60.0 + 0 * w[..., 0],
            sample_uniform,
            np.zeros(3),
            rng,
            max_rounds=2,
        )


def test_stage2_rejection_draws_match_the_grid_em_marginal_density():
    data, loss = small_instance(3)
    em = grid_em(20, loss=loss, domain=Ball.centered(2, 3.0), sampler="rejection")
    trials = 20_000
    w_tilde = np.tile([1.5, -0.5], (trials, 1))
    out, evals = em.stage2(data, np.random.default_rng(2), w_tilde)
    r = em.localizer.radius
    assert np.all(np.linalg.norm(out, axis=1) <= 3.0) and np.all(
        np.linalg.norm(out - w_tilde, axis=1) <= r + 1e-12
    )
    assert np.all(evals >= 20 * 32)
    psi = em.potential(data, w_tilde[:1])
    h = 2 * r / 1200
    g1 = np.arange(1.5 - r + h / 2, 1.5 + r, h)
    g2 = np.arange(-0.5 - r + h / 2, -0.5 + r, h)
    pts = np.stack(np.meshgrid(g1, g2, indexing="ij"), -1)
    inside = (np.linalg.norm(pts, axis=-1) <= 3.0) & (
        np.linalg.norm(pts - [1.5, -0.5], axis=-1) <= r
    )
    dens = np.exp(-psi(pts.reshape(1, -1, 2))[0].reshape(inside.shape)) * inside
    marg = dens.sum(axis=1)
    cdf = np.cumsum(marg) / marg.sum()
    assert stats.kstest(out[:, 0], lambda t: np.interp(t, g1 + h / 2, cdf)).pvalue > 0.01


def test_grid_sampler_is_the_exact_finite_em_on_the_net():
    data, loss = small_instance(4)
    em = grid_em(20, loss=loss, domain=Ball.centered(2, 3.0), points=5)
    trials = 20_000
    w_tilde = np.tile([1.5, -0.5], (trials, 1))
    out, _ = em.stage2(data, np.random.default_rng(5), w_tilde)
    grid = em.localizer.domain.project(
        w_tilde[0] + net(Ball.centered(2, em.localizer.radius), em.net_gamma)
    )
    assert grid.shape[0] >= 5 * 5 - 4  # `points` per axis (the four corners project onto the disc)
    logits = -em.potential(data, w_tilde[:1])(grid[None])[0]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    idx = np.argmin(np.linalg.norm(out[:, None, :] - grid[None], axis=-1), axis=1)
    assert np.allclose(out, grid[idx])
    counts = np.bincount(idx, minlength=grid.shape[0])
    keep = p * trials >= 5
    expected = np.r_[p[keep], p[~keep].sum()] * trials
    observed = np.r_[counts[keep], counts[~keep].sum()]
    assert stats.chisquare(observed[expected > 0], expected[expected > 0]).pvalue > 0.01


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(["abs", "hinge"]))
def test_certified_lower_bound_is_below_the_minimum_of_psi(seed, loss):
    data, f = small_instance(seed, n=15, loss=loss)
    em = grid_em(15, lam=0.7, loss=f, domain=Ball.centered(2, 3.0), sampler="rejection")
    rng = np.random.default_rng(seed)
    w_tilde = em.localizer.domain.project(rng.uniform(-3.5, 3.5, (3, 2)))
    psi = em.potential(data, w_tilde)
    m, _ = em.potential_lower_bound(data, w_tilde)
    cand = balls(rng, w_tilde, em.localizer.radius, 40_000)
    cand = np.where((np.linalg.norm(cand, axis=-1) <= 3.0)[..., None], cand, w_tilde[:, None, :])
    values = psi(cand)
    assert np.all(m <= values.min(axis=1))
    # and it is tight up to the certified slack plus the sampling resolution
    assert np.all(m >= values.min(axis=1) - LOWER_BOUND_SLACK - 0.5)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("sampler", ["grid", "rejection"])
def test_end_to_end_outputs_stay_in_K(d, sampler):
    d0 = lift(heavy_outlier_pair().d0, d)
    em = grid_em(
        d=d,
        points=6,
        harness=WorstValidPoint.for_record(d0, 0),
        sampler=sampler,
    )
    assert em.localizer.solver == "pv2" and em.params["net_gamma"] > 0
    res = em.run(d0, np.random.default_rng(0), 300, transcript=True)
    assert res.theta.shape == (300, d) and np.all(np.isfinite(res.theta))
    assert np.all(np.linalg.norm(res.theta, axis=1) <= 10.0 + 1e-9)
    assert np.all(
        np.linalg.norm(res.theta - res.transcript["w_tilde"], axis=1) <= em.localizer.radius + 1e-9
    )
    assert em(d0, np.random.default_rng(0), 7).shape == (7, 2 * d)
    again = em.run(d0, np.random.default_rng(0), 300).theta
    assert np.array_equal(again, res.theta)


@pytest.mark.parametrize("d", [1, 2])
def test_scores_are_the_same_at_any_block_size(monkeypatch, d):
    """The stage-2 scores (PV-2 objective for d = 2, the grid law for d = 1) run in cache-sized
    row blocks; draws and laws are the same bits at any block size (here a few scores each)."""
    from dpclaims.algorithms.pure_dp_heavy_tails import em as em_module

    d0, d1 = (lift(x, d) for x in heavy_outlier_pair()) if d > 1 else heavy_outlier_pair()
    em = grid_em(d=d, points=8, sampler="grid")

    def outputs():
        res = em.run(d0, np.random.default_rng(0), 60, transcript=True)
        law = em.grid_log_probabilities(d1, res.transcript["w_tilde"])[1] if d == 1 else None
        return res.theta, law

    (theta, law) = outputs()
    monkeypatch.setattr(em_module, "_CACHE_BLOCK", 3)
    again, law_again = outputs()
    assert np.array_equal(again, theta)
    assert d > 1 or np.array_equal(law_again, law)


def test_bad_inputs_raise():
    with pytest.raises(InputError, match="d must be <= 3"):
        grid_em(d=4)
    with pytest.raises(InputError, match="net"):
        grid_em(d=3, points=80)
    em = grid_em(d=2)
    with pytest.raises(InputError, match="pv2"):
        replace(em, localizer=replace(em.localizer, solver="adapsg"))


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["grid", "rejection"])
def test_pure_dp_audit_in_d2_is_consistent(sampler):
    d0, d1 = (lift(x, 2) for x in heavy_outlier_pair())
    em = grid_em(
        d=2,
        points=8,
        harness=WorstValidPoint.for_record(d0, 0),
        sampler=sampler,
    )
    result = audit(
        em,
        d0,
        d1,
        trials=20_000,
        seed=0,
        claim=PrivacyClaim(epsilon=1.0, delta=0.0, unit="item", relation="replace"),
        execution=Execution(backend="serial"),
    )
    # not a violation; the outlier pair shows about half the claim, and the audit would catch a
    # mechanism leaking 2x the claim on it (the reach is against the claim since issue 41; it
    # was consistent_weak, the reach then a multiple of the pair's leakage)
    assert result.verdict == "consistent" and 0.15 <= result.epsilon_lower <= 1.0
    assert result.reach.factor <= 2


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("gamma", [0.3, 0.1, 0.07])
def test_net_covers_the_ball_at_gamma_and_respects_the_size_bound(d, gamma):
    from scipy.spatial import cKDTree

    from dpclaims.algorithms.pure_dp_heavy_tails.em import net, net_size_bound

    ball = Ball.centered(d, 1.0)
    points = net(ball, gamma)
    assert points.shape[0] <= net_size_bound(2.0, gamma, d)
    rng = np.random.default_rng(0)
    probe = ball.project(rng.standard_normal((4000, d)) * rng.uniform(0, 1.2, (4000, 1)))
    nearest, _ = cKDTree(points).query(probe)  # exact Euclidean nearest-point distances
    assert nearest.max() <= gamma + 1e-12
