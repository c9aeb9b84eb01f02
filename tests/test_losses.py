"""Tests of dpclaims.losses: finite differences, constants, shapes, projections."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.errors import InputError
from dpclaims.losses import (
    AbsoluteLoss,
    CauchyLoss,
    HingeLoss,
    HuberLoss,
    L1DistanceLoss,
    LinearLoss,
    LogisticLoss,
    QuadraticFormLoss,
    SmoothedAbsoluteLoss,
    SoftplusNetwork,
    SquaredDistanceLoss,
    SquaredLoss,
    WeightedSquaredDistanceLoss,
    project_ball_intersection,
    project_box,
    project_l2_ball,
)

# (loss, label kind): "real" labels in [-1, 1], "sign" labels in {-1, +1}, "weight" in [-1, 1], None
LOSSES = [
    (SquaredLoss(), "real"),
    (LogisticLoss(), "sign"),
    (LinearLoss(), None),
    (LinearLoss(scale=-2.5), None),
    (AbsoluteLoss(), "real"),
    (HingeLoss(), "sign"),
    (HuberLoss(delta=0.3), "real"),
    (SmoothedAbsoluteLoss(smoothing=0.2), "real"),
    (SquaredDistanceLoss(strength=1.7), None),
    (WeightedSquaredDistanceLoss(strength=3.0), "real"),
    (L1DistanceLoss(scale=2.0), None),
    (CauchyLoss(scale=1.0), None),
    (CauchyLoss(scale=0.4), None),
]
IDS = [f"{type(loss).__name__}-{i}" for i, (loss, _) in enumerate(LOSSES)]


def _ball(rng, shape, radius):
    """Points of shape (*shape, d) uniform in direction with norms spread over [0, radius]."""
    v = rng.normal(size=shape)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return v * radius * rng.uniform(0, 1, size=shape[:-1] + (1,)) ** 0.5


def _labels(rng, kind, shape):
    if kind is None:
        return None
    if kind == "sign":
        return rng.choice([-1.0, 1.0], size=shape)
    return rng.uniform(-1, 1, size=shape)


def _kink_distance(loss, theta, x, y):
    """Distance (in margin / coordinate units) of each example to the loss's kink; inf if smooth."""
    if isinstance(loss, AbsoluteLoss):
        return np.abs(np.einsum("td,...d->t...", theta, x) - y)
    if isinstance(loss, HingeLoss):
        return np.abs(1 - y * np.einsum("td,...d->t...", theta, x))
    if isinstance(loss, L1DistanceLoss):
        diff = theta.reshape((theta.shape[0],) + (1,) * (x.ndim - 1) + (-1,)) - x
        return np.min(np.abs(diff), axis=-1)
    return np.full((theta.shape[0],) + x.shape[:-1], np.inf)


@pytest.mark.parametrize("loss,kind", LOSSES, ids=IDS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 5))
def test_gradient_matches_central_differences(loss, kind, seed, d):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(3, d)) * rng.uniform(0.1, 3)
    x = rng.normal(size=(4, 2, d))
    y = _labels(rng, kind, (4, 2))
    g = loss.grad(theta, x, y)
    h = 1e-6
    fd = np.empty_like(g)
    for k in range(d):
        e = np.zeros(d)
        e[k] = h
        fd[..., k] = (loss.value(theta + e, x, y) - loss.value(theta - e, x, y)) / (2 * h)
    smooth = _kink_distance(loss, theta, x, y) > 1e-3
    scale = 1 + np.abs(g)
    assert np.all(np.abs(fd - g)[smooth] <= 1e-5 * scale[smooth])


@pytest.mark.parametrize(
    "loss,kind",
    [(loss, kind) for loss, kind in LOSSES if loss.glm],
    ids=[i for i, (loss, _) in zip(IDS, LOSSES, strict=True) if loss.glm],
)
def test_glm_grad_is_dphi_times_x(loss, kind):
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(3, 4))
    x = rng.normal(size=(6, 4))
    y = _labels(rng, kind, (6,))
    margins = theta @ x.T
    np.testing.assert_allclose(loss.value(theta, x, y), loss.phi(margins, y))
    np.testing.assert_allclose(loss.grad(theta, x, y), loss.dphi(margins, y)[..., None] * x)


@pytest.mark.parametrize("loss,kind", LOSSES, ids=IDS)
def test_lipschitz_and_smoothness_constants_hold(loss, kind):
    rng = np.random.default_rng(2)
    radius, x_bound, d, trials, batch = 1.5, 2.0, 3, 400, 50
    theta = _ball(rng, (trials, d), radius)
    x = _ball(rng, (batch, d), x_bound)
    y = _labels(rng, kind, (batch,))
    g = loss.grad(theta, x, y)
    lip = loss.lipschitz(radius, x_bound)
    assert np.max(np.linalg.norm(g, axis=-1)) <= lip * (1 + 1e-9)
    beta = loss.smoothness(x_bound)
    theta2 = project_l2_ball(theta + 0.05 * rng.normal(size=theta.shape), radius)
    dg = np.linalg.norm(loss.grad(theta2, x, y) - g, axis=-1)
    dt = np.linalg.norm(theta2 - theta, axis=-1)[:, None]
    if math.isfinite(beta):
        assert np.all(dg <= beta * dt * (1 + 1e-9) + 1e-12)
    inner = np.einsum("tbd,td->tb", loss.grad(theta2, x, y) - g, theta2 - theta)
    mu = loss.strong_convexity
    if loss.convex:  # monotone gradient, with modulus mu
        assert np.all(inner >= mu * dt**2 * (1 - 1e-9) - 1e-12)


def test_constants_are_attained_where_stated():
    # Cauchy: |grad| = s/2 at distance s; Hessian eigenvalue -1/8 radially at r^2 = 3 s^2
    s = 0.7
    loss = CauchyLoss(scale=s)
    z = np.zeros((1, 2))
    g = loss.grad(np.array([[s, 0.0]]), z)
    assert np.linalg.norm(g) == pytest.approx(s / 2)
    r, h = math.sqrt(3) * s, 1e-5
    curv = (loss.grad(np.array([[r + h, 0.0]]), z) - loss.grad(np.array([[r - h, 0.0]]), z))[
        0, 0, 0
    ] / (2 * h)
    assert curv == pytest.approx(-loss.weak_convexity, rel=1e-6)
    assert loss.lipschitz(0.1, 0.1) == pytest.approx(0.2 / (1 + 0.04 / s**2))
    # logistic smoothness X^2/4 is attained at margin 0
    assert LogisticLoss().smoothness(2.0) == 1.0
    assert SquaredLoss().lipschitz(1.0, 2.0, y_bound=0.5) == pytest.approx(5.0)


def test_nonconvexity_flags():
    assert not CauchyLoss().convex and not WeightedSquaredDistanceLoss().convex
    # Cauchy really is non-convex: midpoint above the chord along a ray at distance > s
    loss = CauchyLoss()
    z = np.zeros((1, 1))
    a, b = loss.value(np.array([[2.0]]), z), loss.value(np.array([[6.0]]), z)
    assert loss.value(np.array([[4.0]]), z) > (a + b) / 2


def test_softplus_network_matches_finite_differences_and_bounds():
    rng = np.random.default_rng(3)
    net = SoftplusNetwork(n_inputs=8)
    assert net.d == 101
    assert SoftplusNetwork(n_inputs=9).d == 111 and SoftplusNetwork(n_inputs=280).d == 2821
    net = SoftplusNetwork(n_inputs=3, width=4)
    theta = net.init(rng, 2)
    x = rng.normal(size=(5, 3))
    y = rng.normal(size=5)
    g = net.grad(theta, x, y)
    assert g.shape == (2, 5, net.d)
    h = 1e-6
    for k in range(net.d):
        e = np.zeros(net.d)
        e[k] = h
        fd = (net.value(theta + e, x, y) - net.value(theta - e, x, y)) / (2 * h)
        np.testing.assert_allclose(fd, g[..., k], rtol=1e-5, atol=1e-7)
    # forward pass by hand for one trial / example
    w1, b1, w2, b2 = net.unpack(theta)
    manual = w2[0] @ np.logaddexp(0, w1[0] @ x[0] + b1[0]) + b2[0]
    assert net.predict(theta, x)[0, 0] == pytest.approx(manual)
    # stated constants hold on random points of the domain
    radius, x_bound = 2.0, 1.5
    th = _ball(rng, (300, net.d), radius)
    xs = _ball(rng, (40, 3), x_bound)
    ys = rng.uniform(-1, 1, size=40)
    g = net.grad(th, xs, ys)
    assert np.max(np.linalg.norm(g, axis=-1)) <= net.lipschitz(radius, x_bound)
    th2 = project_l2_ball(th + 0.05 * rng.normal(size=th.shape), radius)
    dg = np.linalg.norm(net.grad(th2, xs, ys) - g, axis=-1)
    dt = np.linalg.norm(th2 - th, axis=-1)[:, None]
    assert np.all(dg <= net.smoothness(x_bound, radius) * dt)


def test_softplus_init_ranges():
    rng = np.random.default_rng(4)
    net = SoftplusNetwork(n_inputs=4, width=10)
    theta = net.init(rng, 50)
    w1, b1, w2, b2 = net.unpack(theta)
    assert np.max(np.abs(w1)) <= 0.5 and np.max(np.abs(b1)) <= 0.5
    assert np.max(np.abs(w2)) <= 1 / math.sqrt(10) and np.max(np.abs(b2)) <= 1 / math.sqrt(10)
    literal = net.init(rng, 50, literal=True)
    assert np.max(np.abs(literal[:, :40])) > 1.0
    with pytest.raises(InputError, match="trials"):
        net.init(rng, 0)


@pytest.mark.parametrize("loss,kind", LOSSES, ids=IDS)
@pytest.mark.parametrize("batch", [(7,), (3, 4)])
def test_shapes(loss, kind, batch):
    rng = np.random.default_rng(5)
    theta = rng.normal(size=(2, 3))
    x = rng.normal(size=batch + (3,))
    y = _labels(rng, kind, batch)
    assert loss.value(theta, x, y).shape == (2,) + batch
    assert loss.grad(theta, x, y).shape == (2,) + batch + (3,)


def test_softplus_shapes_with_user_batch():
    rng = np.random.default_rng(6)
    net = SoftplusNetwork(n_inputs=2, width=3)
    theta = net.init(rng, 4)
    x = rng.normal(size=(5, 6, 2))
    y = rng.normal(size=(5, 6))
    assert net.value(theta, x, y).shape == (4, 5, 6)
    assert net.grad(theta, x, y).shape == (4, 5, 6, net.d)


def test_bad_inputs_raise():
    theta = np.zeros((2, 3))
    x = np.ones((4, 3))
    with pytest.raises(InputError, match="theta"):
        SquaredLoss().value(np.zeros(3), x, np.zeros(4))
    with pytest.raises(InputError, match="x must have shape"):
        SquaredLoss().value(theta, np.ones((4, 2)), np.zeros(4))
    with pytest.raises(InputError, match="needs labels"):
        SquaredLoss().grad(theta, x)
    with pytest.raises(InputError, match="takes no labels"):
        LinearLoss().value(theta, x, np.zeros(4))
    with pytest.raises(InputError, match="batch shape"):
        SquaredLoss().value(theta, x, np.zeros(5))
    with pytest.raises(InputError, match=r"\{-1, \+1\}"):
        LogisticLoss().value(theta, x, np.array([0.0, 1, 1, 1]))
    with pytest.raises(InputError, match="NaN"):
        CauchyLoss().value(theta, np.full((4, 3), np.nan))
    with pytest.raises(InputError, match="radius"):
        SquaredLoss().lipschitz(-1.0, 1.0)
    with pytest.raises(InputError, match="delta"):
        HuberLoss(delta=0.0)
    with pytest.raises(InputError, match="scale"):
        LinearLoss(scale=float("inf"))
    with pytest.raises(InputError, match="n_inputs"):
        SoftplusNetwork(n_inputs=0)
    with pytest.raises(InputError, match="101 columns"):
        SoftplusNetwork(n_inputs=8).value(np.zeros((1, 100)), np.zeros((2, 8)), np.zeros(2))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 4))
def test_projections_are_feasible_and_optimal(seed, d):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(20, d)) * 3
    feasible_checks = []
    # l2 ball with centre
    c = rng.normal(size=d)
    p = project_l2_ball(theta, 1.2, c)
    feasible_checks.append(
        (p, _ball(rng, (200, d), 1.2) + c, np.linalg.norm(p - c, axis=1) <= 1.2 + 1e-12)
    )
    # box
    p = project_box(theta, -0.5, np.linspace(0.5, 1.0, d))
    z = rng.uniform(-0.5, 0.5, size=(200, d))
    feasible_checks.append((p, z, np.all((p >= -0.5) & (p <= np.linspace(0.5, 1.0, d)), axis=1)))
    # intersection of two overlapping balls
    c1, c2 = np.zeros(d), np.r_[1.3, np.zeros(d - 1)]
    p = project_ball_intersection(theta, 1.0, c1, 0.8, c2)
    z = _ball(rng, (4000, d), 1.0)
    z = z[np.linalg.norm(z - c2, axis=1) <= 0.8]
    ok = (np.linalg.norm(p - c1, axis=1) <= 1 + 1e-9) & (
        np.linalg.norm(p - c2, axis=1) <= 0.8 + 1e-9
    )
    feasible_checks.append((p, z, ok))
    for proj, points, feasible in feasible_checks:
        assert np.all(feasible)
        # variational inequality <theta - p, z - p> <= 0 for every feasible z
        inner = np.einsum("td,tzd->tz", theta - proj, points[None] - proj[:, None])
        assert np.all(inner <= 1e-9 * (1 + np.abs(inner).max()))


def test_projection_fixed_points_and_errors():
    rng = np.random.default_rng(7)
    inside = _ball(rng, (10, 3), 0.9)
    np.testing.assert_array_equal(project_l2_ball(inside, 1.0), inside)
    np.testing.assert_allclose(project_l2_ball(np.array([[3.0, 4.0]]), 1.0), [[0.6, 0.8]])
    # a point above the lens projects to its corner (the rim of both spheres)
    p = project_ball_intersection(
        np.array([[0.65, 5.0], [-5.0, 0.0]]), 1.0, np.zeros(2), 1.0, np.array([1.3, 0.0])
    )
    np.testing.assert_allclose(p, [[0.65, math.sqrt(1 - 0.65**2)], [0.3, 0.0]])
    with pytest.raises(InputError, match="do not intersect"):
        project_ball_intersection(np.zeros((1, 2)), 1.0, np.zeros(2), 1.0, np.array([3.0, 0.0]))
    with pytest.raises(InputError, match="empty"):
        project_box(np.zeros((1, 2)), 1.0, 0.0)
    with pytest.raises(InputError, match="center"):
        project_l2_ball(np.zeros((1, 2)), 1.0, np.zeros(3))


def test_quadratic_form_loss():
    rng = np.random.default_rng(8)
    a = rng.normal(size=(4, 4))
    loss = QuadraticFormLoss(a @ a.T + 0.1 * np.eye(4), rng.normal(size=4))
    theta = rng.normal(size=(3, 4))
    x = rng.normal(size=(2, 5, 4))
    g = loss.grad(theta, x)
    assert loss.value(theta, x).shape == (3, 2, 5) and g.shape == (3, 2, 5, 4)
    h = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd = (loss.value(theta + e, x) - loss.value(theta - e, x)) / (2 * h)
        np.testing.assert_allclose(fd, g[..., k], rtol=1e-6, atol=1e-6)
    eig = np.linalg.eigvalsh(loss.hessian)
    assert loss.smoothness(1.0) == pytest.approx(
        eig[-1]
    ) and loss.strong_convexity == pytest.approx(eig[0])
    th = _ball(rng, (500, 4), 2.0)
    xs = _ball(rng, (30, 4), 0.5)
    assert np.max(np.linalg.norm(loss.grad(th, xs), axis=-1)) <= loss.lipschitz(2.0, 0.5)
    with pytest.raises(InputError, match="symmetric"):
        QuadraticFormLoss(np.array([[1.0, 1.0], [0.0, 1.0]]), np.zeros(2))
    with pytest.raises(InputError, match="semi-definite"):
        QuadraticFormLoss(-np.eye(2), np.zeros(2))
    with pytest.raises(InputError, match="offset"):
        QuadraticFormLoss(np.eye(2), np.zeros(3))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    inputs=st.integers(1, 6),
    width=st.integers(1, 5),
    batch=st.integers(1, 9),
)
def test_softplus_factored_gradients_match_the_full_ones(seed, inputs, width, batch):
    rng = np.random.default_rng(seed)
    net = SoftplusNetwork(n_inputs=inputs, width=width)
    theta, other = 3 * rng.normal(size=(2, 2, net.d))
    x, y, w = rng.normal(size=(batch, inputs)), rng.normal(size=batch), rng.random(batch)
    a, b = net.grad_factors(theta, x, y), net.grad_factors(other, x, y)
    g, h = net.grad(theta, x, y), net.grad(other, x, y)
    assert a.shape == (2, batch, 2 * width + 1)
    np.testing.assert_allclose(
        net.factor_norms(a - b, x), np.linalg.norm(g - h, axis=-1), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        net.sum_factors(w[None, :, None] * (a - b), x),
        np.einsum("b,tbd->td", w, g - h),
        rtol=1e-9,
        atol=1e-12,
    )


def test_softplus_is_stable_at_extremes():
    z = np.array([-800.0, -30.0, -1.0, 0.0, 1.0, 30.0, 800.0])
    net = SoftplusNetwork(n_inputs=1, width=1)
    theta = np.array([[1.0, 0.0, 1.0, 0.0]])  # f(x) = softplus(x)
    np.testing.assert_allclose(net.predict(theta, z[:, None])[0], np.logaddexp(0.0, z), rtol=1e-14)


def test_project_l2_ball_batched_radii_and_undefined_points():
    rng = np.random.default_rng(11)
    y = rng.normal(size=(3, 5, 2)) * 4
    centre = rng.normal(size=(3, 1, 2))
    radius = np.array([0.5, 1.0, 2.0])[:, None, None]
    p = project_l2_ball(y, radius, centre)
    assert p.shape == y.shape
    dist = np.linalg.norm(p - centre, axis=-1)
    assert np.all(dist <= radius[..., 0] * (1 + 1e-12))
    for b in range(3):  # agrees with the (T, d) form, one ball at a time
        one = project_l2_ball(y[b], float(radius[b, 0, 0]), centre[b, 0])
        np.testing.assert_array_equal(p[b], one)
    np.testing.assert_array_equal(project_l2_ball(y, math.inf), y)
    undefined = np.array([[np.nan, np.nan], [3.0, 4.0]])
    out = project_l2_ball(undefined, 1.0)
    assert np.all(np.isnan(out[0])) and np.allclose(out[1], [0.6, 0.8])
    with pytest.raises(InputError, match="infinite"):
        project_l2_ball(np.array([[np.inf, 0.0]]), 1.0)
    with pytest.raises(InputError, match="radius must be >= 0"):
        project_l2_ball(y, -radius)
