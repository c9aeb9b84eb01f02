"""The building blocks: permutation concentration (Lemma 3.8, RT-1), deletion sensitivity
(Thm 3.6, Cor 3.7, RT-2, RT-3, and its worst case RT-12), the empirical vs population minimiser
(Prop. B.1, RT-10) and Lemma C.1's certificate bound."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dpclaims.hardinstances.ghazi_et_al_2023 import cube_group_means, repeated_item_users
from dpclaims.hardinstances.quadratic import QuadraticHypercubeInstance


def perm_concentration_q95(m, rng, draws=2000, G=1.0):
    """RT-1: 0.95-quantile of ‖Σ_{j≤m} v_π(j)‖, v = ±G e1 (N/2 each, N = 64m), without
    replacement."""
    m = int(m)
    plus = rng.hypergeometric(32 * m, 32 * m, m, size=draws)
    return float(np.quantile(np.abs(G * (2 * plus - m)), 0.95))


def deletion_sensitivity(n, rng, m=20, d=5, mu=0.1, deletions=3):
    """RT-2: ‖θ*(x) − θ*(x_{−u})‖ for logistic loss + (μ/2)‖θ‖², i.i.d. items, exact L-BFGS
    solves."""
    n = int(n)
    feats = rng.normal(size=(n, m, d))
    feats /= np.maximum(1.0, np.linalg.norm(feats, axis=-1, keepdims=True))
    truth = np.ones(d) / math.sqrt(d)
    labels = np.where(rng.random((n, m)) < special.expit(feats @ truth), 1.0, -1.0)

    def solve(keep):
        a = (feats[keep] * labels[keep][..., None]).reshape(-1, d)

        def f(theta):
            z = a @ theta
            val = np.mean(np.logaddexp(0.0, -z)) + 0.5 * mu * theta @ theta
            grad = -(a.T @ special.expit(-z)) / len(z) + mu * theta
            return val, grad

        return optimize.minimize(
            f,
            np.zeros(d),
            jac=True,
            method="L-BFGS-B",
            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000},
        ).x

    full = solve(np.arange(n))
    return np.array(
        [np.linalg.norm(full - solve(np.delete(np.arange(n), u))) for u in range(n - deletions, n)]
    )


def greedy_radius_sensitivity(n, rng, m=50, d=5, r=36, means=None):
    """RT-3: greedy adversarial deletion of up to r users (each step maximising the shift of
    θ* = mean);
    the largest single-deletion shift seen (a lower-bound proxy for Δ_r θ*)."""
    if means is None:
        inst = QuadraticHypercubeInstance(d, alpha=0.0, scale=1.0, strength=1.0, radius=1.0)
        means = inst.user_means(int(n), int(m), rng)
    keep = np.ones(len(means), bool)
    total, count = means.sum(axis=0), len(means)
    worst = 0.0
    for _ in range(r + 1):
        centre = total / count
        shift = np.where(keep, np.linalg.norm(means - centre, axis=1), -1.0) / (count - 1)
        u = int(np.argmax(shift))
        worst = max(worst, float(shift[u]))
        keep[u] = False
        total, count = total - means[u], count - 1
    return worst


def emp_vs_pop(n, rng, m=100, d=4):
    """RT-10: ‖x̄ − χ‖ for cube items with mean χ (θ*(x) = x̄, θ*(D) = χ for the quadratic)."""
    inst = QuadraticHypercubeInstance(d, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    data = cube_group_means(inst, int(n), m, rng, boundaries=[0, int(n)])
    return float(np.linalg.norm(data.mean() - inst.mean))


def pop_norm(n, rng, m=100, d=4):
    """The trivial control of :func:`emp_vs_pop`: ‖0 − χ‖ of outputting the origin."""
    inst = QuadraticHypercubeInstance(d, alpha=0.3, scale=1.0, strength=1.0, radius=1.0)
    return float(np.linalg.norm(inst.mean))


LEMMA_C1_TOLERANCE = 1e-12
"""Gradient norm at which :func:`ridge_logistic_minimisers` stops: a certificate, since a
μ-strongly convex objective's minimiser is within ‖∇‖/μ of the point."""


def ridge_logistic_minimisers(x, y, weights, mu, *, tolerance=LEMMA_C1_TOLERANCE):
    """Certified minimisers of ``Σ_k w_k log(1 + exp(−y_k⟨x_k, θ⟩))/Σ_k w_k + (μ/2)‖θ‖²``.

    ``x (N, d)``, ``y (N,)`` in ±1, ``weights (B, N)`` (one weighted problem per row) → ``(θ
    (B, d), certified distance bound (B,))``: Newton's method (vectorised over B) until every
    gradient norm is at most ``tolerance``; the bound is the final gradient norm over μ.
    """
    w = weights / weights.sum(axis=1, keepdims=True)
    theta = np.zeros((w.shape[0], x.shape[1]))
    for _ in range(100):
        margin = y * (theta @ x.T)  # (B, N)
        p = special.expit(-margin)
        grad = -(w * p * y) @ x + mu * theta
        norm = np.linalg.norm(grad, axis=1)
        if norm.max() <= tolerance:
            return theta, norm / mu
        curvature = w * p * (1 - p)
        hess = np.einsum("bn,ni,nj->bij", curvature, x, x) + mu * np.eye(x.shape[1])
        theta = theta - np.linalg.solve(hess, grad[..., None])[..., 0]
    raise RuntimeError(f"Newton's method did not reach the gradient tolerance {tolerance:g}")


def lemma_c1_case(rng):
    """One random ridge-logistic user-level dataset and the greedy radius-r deletion path.

    Users have their own feature centres (so γ is not small); S grows one user at a time, each
    step deleting the user whose deletion moves θ*(x_{−S}) most (all candidates solved), up to
    |S| = r.  Returns the largest single-deletion shift on the path over 2(r+1)γ/(μ(n−r−1))
    (a lower-bound proxy for Δ_r θ*(x)) and the largest ‖θ*(x_{−S}) − θ*(x)‖ over
    |S|γ/(μ(n−|S|)) on the path (|S| ≤ r+1); certified solver errors are subtracted, so a
    ratio above 1 is a real violation.
    """
    n, m, d = int(rng.integers(20, 60)), int(rng.integers(1, 20)), int(rng.integers(1, 4))
    r, mu = int(rng.integers(1, n // 2)), float(rng.uniform(0.05, 0.5))
    centres = np.repeat(rng.normal(size=(n, d)), m, axis=0)
    x = centres + rng.normal(size=(n * m, d))
    y = np.where(rng.random(n * m) < special.expit(x @ rng.normal(size=d)), 1.0, -1.0)
    owner = np.repeat(np.arange(n), m)
    kept = np.ones(n, dtype=bool)
    theta, err = ridge_logistic_minimisers(x, y, np.ones((1, n * m)), mu)
    full, full_err = theta[0], err[0]
    margin = y * (x @ full)
    per_user = np.zeros((n, d))
    np.add.at(per_user, owner, (-special.expit(-margin) * y)[:, None] * x + mu * full)
    per_user /= m
    gamma = float(np.max(np.linalg.norm(per_user - per_user.mean(axis=0), axis=1)))
    current, current_err = full, full_err
    shift, distance = 0.0, 0.0
    for size in range(1, r + 2):
        candidates = np.flatnonzero(kept)
        weights = kept[owner][None, :] & (owner[None, :] != candidates[:, None])
        theta, err = ridge_logistic_minimisers(x, y, weights.astype(float), mu)
        moves = np.linalg.norm(theta - current, axis=1) - err - current_err
        best = int(np.argmax(moves))
        shift = max(shift, float(moves[best]))
        away = float(np.linalg.norm(theta[best] - full) - err[best] - full_err)
        distance = max(distance, away / (size * gamma / (mu * (n - size))))
        kept[candidates[best]] = False
        current, current_err = theta[best], err[best]
    return {
        "shift": shift / (2 * (r + 1) * gamma / (mu * (n - r - 1))),
        "distance": distance,
    }


def lemma_c1_worst(rng, *, cases: int) -> dict:
    """The worst ratios of :func:`lemma_c1_case` over ``cases`` random datasets."""
    results = [lemma_c1_case(rng) for _ in range(cases)]
    return {
        "worst_shift_over_bound": max(c["shift"] for c in results),
        "worst_distance_over_lemma_bound": max(c["distance"] for c in results),
    }


def worst_case_sensitivity(m, rng, n=400, d=5, r=36):
    """RT-12: radius-r deletion sensitivity proxy (greedy) when every user holds m copies of one
    item."""
    data = repeated_item_users(n, int(m), d, rng)
    return greedy_radius_sensitivity(n, rng, means=np.asarray(data.means), r=r)
