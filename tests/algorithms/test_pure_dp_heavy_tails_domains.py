"""Spec 003 structured case (Prop D.6 / Cor D.7): ellipsoid and polytope domains for the PV-2
solver."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from dpclaims.algorithms.pure_dp_heavy_tails import (
    DoubleOutputPert,
    Ellipsoid,
    PolyhedralTerms,
    Polytope,
    polyhedral_form,
    pv2_minimize,
)
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.losses import AbsoluteLoss, HingeLoss, LinearLoss
from dpclaims.problem import Problem

ELL = Ellipsoid(center=np.array([0.3, -0.2]), shape_matrix=np.array([[0.5, 0.2], [0.2, 0.25]]))
POLY = Polytope(
    G=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [1.0, -2.0], [-1.0, 0.5]]),
    h=np.array([2.0, 1.5, 2.0, 3.0, 2.5]),
)
GRID = np.stack(np.meshgrid(np.linspace(-4, 4, 801), np.linspace(-4, 4, 801)), -1).reshape(-1, 2)
points = st.lists(st.floats(-6, 6), min_size=2, max_size=2).map(np.array)


@pytest.mark.parametrize("dom", [ELL, POLY], ids=["ellipsoid", "polytope"])
def test_projection_matches_grid_brute_force(dom):
    u = np.random.default_rng(0).uniform(-4, 4, (12, 2))
    p = dom.project(u)
    assert np.all(dom.contains(p))
    inside = GRID[dom.contains(GRID, 0.0)]
    for ui, pi in zip(u, p, strict=True):
        best = np.min(np.linalg.norm(inside - ui, axis=1))
        assert np.linalg.norm(pi - ui) <= best + 1e-12  # no grid point of the domain is closer
        assert np.linalg.norm(pi - ui) >= best - 0.01 * math.sqrt(2) / 2  # grid spacing 0.01


def test_ellipsoid_projection_kkt_and_brentq():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3))
    dom = Ellipsoid(center=rng.standard_normal(3), shape_matrix=a @ a.T + 0.1 * np.eye(3))
    u = dom.center + 5 * rng.standard_normal((50, 3))
    p = dom.project(u)
    for ui, pi in zip(u, p, strict=True):
        if dom.contains(ui, 0.0):
            assert np.array_equal(pi, ui)
            continue
        # KKT: u − p = μ A (p − c) with μ ≥ 0 and p on the boundary
        normal = dom.shape_matrix @ (pi - dom.center)
        mu = (ui - pi) @ normal / (normal @ normal)
        assert mu > 0 and np.allclose(ui - pi, mu * normal, atol=1e-9)
        assert abs(dom._quad(pi) - 1.0) <= 1e-12

        # the same multiplier by scipy's brentq on the secular equation
        def secular(m, ui=ui):
            w = np.linalg.solve(np.eye(3) + m * dom.shape_matrix, ui - dom.center)
            return w @ dom.shape_matrix @ w - 1.0

        assert math.isclose(optimize.brentq(secular, 0.0, 1e8, xtol=1e-14), mu, rel_tol=1e-7)


def test_polytope_projection_kkt():
    u = np.random.default_rng(2).uniform(-6, 6, (30, 2))
    p = POLY.project(u)
    for ui, pi in zip(u, p, strict=True):
        active = POLY.G @ pi >= POLY.h - 1e-7
        mult, *_ = (
            np.linalg.lstsq(POLY.G[active].T, ui - pi, rcond=None)
            if active.any()
            else (np.zeros(0),)
        )
        assert np.all(mult >= -1e-6)
        assert np.allclose(POLY.G[active].T @ mult if active.any() else 0.0, ui - pi, atol=1e-6)


@pytest.mark.parametrize("dom", [ELL, POLY], ids=["ellipsoid", "polytope"])
@settings(max_examples=25, deadline=None)
@given(u=points, v=points)
def test_projection_is_nonexpansive_and_idempotent(dom, u, v):
    p = dom.project(np.stack([u, v]))
    assert np.linalg.norm(p[0] - p[1]) <= np.linalg.norm(u - v) + 1e-7
    assert np.allclose(dom.project(p), p, atol=1e-9) and np.all(dom.contains(p))


def test_domain_validation():
    with pytest.raises(InputError, match="positive definite"):
        Ellipsoid(center=np.zeros(2), shape_matrix=np.diag([1.0, -1.0]))
    with pytest.raises(InputError, match="bounded"):
        Polytope(G=np.array([[1.0, 0.0], [0.0, 1.0]]), h=np.array([1.0, 1.0]))
    with pytest.raises(InputError, match="interior"):
        Polytope(
            G=np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]),
            h=np.array([0.0, 0.0, 1.0, 1.0]),
        )
    assert math.isclose(ELL.diameter, 2 / math.sqrt(np.linalg.eigvalsh(ELL.shape_matrix)[0]))
    assert POLY.diameter >= np.ptp(GRID[POLY.contains(GRID)], axis=0).max()


@pytest.mark.parametrize("loss", ["abs", "hinge", "lin"])
@pytest.mark.parametrize(
    "dom,localized",
    [(ELL, False), (ELL, True), (POLY, False), (POLY, True)],
    ids=["ell", "ell-local", "poly", "poly-local"],
)
def test_structured_solver_matches_grid_minimizer_within_tau_half(loss, dom, localized):
    rng = np.random.default_rng(7)
    n, d, lam, clip, tau = 12, 2, 0.7, 1.5, 0.05
    x = np.exp(rng.standard_normal((n, 1))) * rng.standard_normal((n, d))
    f, y = {
        "abs": (AbsoluteLoss(), rng.standard_normal(n)),
        "hinge": (HingeLoss(), rng.choice([-1.0, 1.0], n)),
        "lin": (LinearLoss(), None),
    }[loss]
    center = rng.uniform(-1, 1, (2, d))
    local, r = (dom.project(rng.uniform(-3, 3, (2, d))), 0.8) if localized else (None, 0.0)
    target = lam * tau**2 / 8  # gap ≤ λτ²/8 ⇒ ‖w − argmin‖ ≤ τ/2 (the stage's α/4)
    terms = PolyhedralTerms.from_loss(f, x, y, clip=clip)
    where = {"lam": lam, "center": center, "domain": dom, "local": local, "r": r}
    res = pv2_minimize(terms, target_gap=target, **where)
    ref = pv2_minimize(terms, target_gap=1e-12, **where)
    assert (
        np.all(res.gap <= target)
        and np.all(dom.contains(res.point))
        and np.all(dom.contains(ref.point))
    )
    a, e, lo, hi = polyhedral_form(f, x, y)
    c = np.minimum(1.0, clip / np.linalg.norm(a, axis=1))
    for t in range(2):
        u = GRID @ a.T + e
        obj = (c * np.where(u > 0, hi * u, lo * u)).mean(-1) + 0.5 * lam * np.sum(
            (GRID - center[t]) ** 2, -1
        )
        inside = dom.contains(GRID, 0.0)
        if localized:
            inside &= np.linalg.norm(GRID - local[t], axis=1) <= r
            assert np.linalg.norm(res.point[t] - local[t]) <= r + 1e-9
        best = np.argmin(obj[inside])
        brute, brute_value = GRID[inside][best], obj[inside][best]

        def value(w, t=t):
            data = (c * np.maximum(hi * (w @ a.T + e), lo * (w @ a.T + e))).mean()
            return data + 0.5 * lam * np.sum((w - center[t]) ** 2)

        # the certified point is no worse than the grid minimiser beyond its gap, and (λ-strong
        # convexity)
        # the grid minimiser lies within √(2(P(brute) − P*)/λ) of the argmin, so within τ/2 + that
        # of the point
        assert value(res.point[t]) <= brute_value + res.gap[t] + 1e-12
        slack = math.sqrt(2 * (brute_value - value(res.point[t]) + res.gap[t]) / lam)
        assert np.linalg.norm(res.point[t] - brute) <= tau / 2 + slack + 1e-9
        # and directly: within τ/2 of a near-exact (gap 1e-12 ⇒ ‖ref − argmin‖ ≤ 1.7e-6) solve
        assert np.linalg.norm(res.point[t] - ref.point[t]) <= tau / 2 + 2e-6
        assert value(ref.point[t]) <= brute_value + 1e-12
        assert np.linalg.norm(ref.point[t] - brute) <= math.sqrt(
            2 * (brute_value - value(ref.point[t]) + 1e-12) / lam
        )


def test_double_output_pert_end_to_end_on_new_domains():
    rng = np.random.default_rng(3)
    n = 60
    x = rng.standard_t(3, (n, 1, 2))
    data = UserDataset(x, x[:, :, 0] - 0.5 * x[:, :, 1] + 0.1 * rng.standard_normal((n, 1)))
    problem = Problem(n=n, d=2, epsilon=1.0, loss=AbsoluteLoss())
    knobs = {"moment_k": 3.0, "k": 2, "lam": 1.0, "beta0": 0.1}
    for dom in (
        Ellipsoid(center=np.zeros(2), shape_matrix=np.diag([0.25, 1.0])),
        Polytope.box_domain([-1.0, -2.0], [2.0, 1.0]),
    ):
        alg = DoubleOutputPert.from_theorem(problem, domain=dom, solver="pv2", **knobs)
        res = alg.run(data, np.random.default_rng(0), 4, transcript=True)
        assert (
            res.theta.shape == (4, 2)
            and np.all(np.isfinite(res.theta))
            and np.all(dom.contains(res.theta))
        )
        assert np.all(dom.contains(res.transcript["w_tilde"]))
        assert np.all(
            np.linalg.norm(res.theta - res.transcript["w_tilde"], axis=1)
            <= alg.localizer.radius + 1e-9
        )
        assert alg(data, np.random.default_rng(1), 3).shape == (3, 4)
    with pytest.raises(InputError, match="pv2"):
        DoubleOutputPert.from_theorem(
            problem,
            domain=Polytope.box_domain([-1.0, -1.0], [1.0, 1.0]),
            solver="adapsg",
            **knobs,
        )
