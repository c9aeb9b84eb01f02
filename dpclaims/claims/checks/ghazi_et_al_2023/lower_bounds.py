"""Lower bounds: the cited bounds' exponents and Appendix D's bounds run (Thm D.7, D.8, Lemmas
D.2, D.3, D.5)."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from dpclaims.algorithms.mechanisms import GaussianMechanism, user_mean_query
from dpclaims.claims.standard import CombinedExperiment, RateExperiment, ValueExperiment
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.hardinstances.gaussian import (
    TruncatedGaussianInstance,
    UserLevelGaussianInstance,
    sample_user_level_gaussian,
)
from dpclaims.hardinstances.lower_bounds import (
    ghazi_thm_d7_alpha,
    ghazi_thm_d7_explicit_lower_bound,
    ghazi_thm_d7_scales,
    ghazi_thm_d8_explicit_lower_bound,
    user_gaussian_mean_lower_bound,
)
from dpclaims.losses import project_l2_ball


def bound_exponents(rng, *, bound, base: dict) -> dict:
    """The exponent of ``bound(**base)`` in each key of ``base``: the log-ratio of the bound at
    16× the key's value to the bound at ``base``, over log 16 (a formula: no randomness)."""
    out = {}
    for name in base:
        lo, hi = dict(base), dict(base)
        hi[name] = base[name] * 16
        out[name] = math.log(bound(**hi) / bound(**lo)) / math.log(16)
    return out


# Appendix D's lower bounds, run: the reference user-level estimator on the hard family.  A lower
# bound holds for every (ε, δ)-DP algorithm, which no run can show; what is checked is that the
# family behaves as the proof needs (the theorem's conditions hold, the truncation is inactive)
# and that a known-good estimator's error is above the bound and scales with its exponents.

LB_DELTA = 1e-12
"""δ of the reference estimator: below 1/n² for every n swept ("δ small"; the lemmas' δ
condition is garbled in the paper)."""


def lb_clip_radius(sigma: float, m: int, d: int, psi: float = 1.0) -> float:
    """The radius the reference estimator clips user means to: the prior box's corner ψσ√(d/m)
    plus σ(√d + 8)/√m, so a user mean is clipped with probability below e^{-32}."""
    return sigma * ((psi + 1.0) * math.sqrt(d) + 8.0) / math.sqrt(m)


def clipped_gaussian_mean(user_means, rng, *, radius, epsilon, delta=LB_DELTA, trials=1):
    """The reference user-level (ε, δ)-DP mean estimator (Levy et al. 2021's upper bound on the
    Gaussian family): each user's mean clipped to B(0, radius), averaged, plus the analytic
    Gaussian noise of the replace-one-user sensitivity 2·radius/n: ``(trials, d)``.  It reads the
    user means only, the sufficient statistic of Lemma D.3."""
    n = user_means.shape[0]
    mech = GaussianMechanism(
        user_mean_query(radius, clip="user"), 2.0 * radius / n, epsilon, delta, users=n
    )
    return mech(UserDataset(user_means[:, None, :]), rng, trials)


def _gaussian_user_means(chi, sigma: float, n: int, m: int, rng) -> np.ndarray:
    """n user means of m items N(χ, σ² I) (Lemma D.3: N(χ, σ²/m I))."""
    return UserLevelGaussianInstance(chi, sigma).sample_user_means(int(n), int(m), rng)


def fingerprinting_mse(
    epsilon, rng, *, n=1000, m=16, d=16, sigma=1.0, psi=0.9, trials=1000, estimator=None
):
    """Lemma D.5's family: χ ~ Uniform([−ψσ/√m, ψσ/√m]^d), n users of m items N(χ, σ² I);
    ``estimator``'s (default :func:`clipped_gaussian_mean`) mean ‖χ̂ − χ‖² over ``trials``."""
    estimator = estimator or clipped_gaussian_mean
    half = psi * sigma / math.sqrt(m)
    chi = rng.uniform(-half, half, size=int(d))
    means = _gaussian_user_means(chi, sigma, n, m, rng)
    radius = lb_clip_radius(sigma, int(m), int(d), psi)
    released = estimator(means, rng, radius=radius, epsilon=epsilon, trials=trials)
    return float(np.mean(np.sum((released - chi) ** 2, axis=1)))


def fingerprinting_rmse(epsilon, rng, *, estimator=None):
    """√ of :func:`fingerprinting_mse` at its defaults: the α of Lemma D.5."""
    return math.sqrt(fingerprinting_mse(epsilon, rng, estimator=estimator))


def _thm_d7_instance(n, m, d, epsilon, mu, lipschitz, rng) -> TruncatedGaussianInstance:
    """The Thm D.7 instance (χ ~ Uniform([−σ/√m, σ/√m]^d), B = G/(2μ), σ = B/(1000√d)), refused
    outside the proof's conditions: n ≥ √d/ε, α² ≤ dσ²/(12m) (Lemma D.6 with ψ = 1), and the
    truncation inactive in double precision (so the user means are exactly N(χ, σ²/m I) and χ^tr
    = χ, Lemma D.2)."""
    inst = TruncatedGaussianInstance.from_theorem(
        d=int(d),
        n=int(n),
        m=int(m),
        strong_convexity=mu,
        lipschitz=lipschitz,
        epsilon=epsilon,
        rng=rng,
    )
    alpha = ghazi_thm_d7_alpha(int(n), int(m), int(d), epsilon, inst.sigma)
    if n < math.sqrt(d) / epsilon or alpha**2 > d * inst.sigma**2 / (12 * m):
        raise InputError(f"n = {n} is outside Thm D.7's regime n >= sqrt(d)/eps at d = {d}")
    if inst.keep_probability != 1.0 or np.any(inst.chi_tr != inst.chi):
        raise InputError("the truncation of the Thm D.7 instance must be inactive")
    return inst


def _thm_d7_release(n, rng, *, m, d, epsilon, mu, lipschitz, trials, estimator):
    """The Thm D.7 instance, its user means and ``estimator``'s releases projected onto K."""
    inst = _thm_d7_instance(n, m, d, epsilon, mu, lipschitz, rng)
    means = _gaussian_user_means(inst.chi, inst.sigma, n, m, rng)
    radius = lb_clip_radius(inst.sigma, int(m), int(d))
    released = (estimator or clipped_gaussian_mean)(
        means, rng, radius=radius, epsilon=epsilon, trials=trials
    )
    return inst, means, project_l2_ball(released, inst.radius)


def sc_sco_lb_excess(
    n, rng, *, m=16, d=16, epsilon=0.5, mu=1.0, lipschitz=2.0, trials=1000, estimator=None
):
    """Thm D.7: the mean excess population risk (μ/2)‖θ̂ − χ^tr‖² (exact) of ``estimator``
    (default :func:`clipped_gaussian_mean`) on the hard instance."""
    inst, _, theta = _thm_d7_release(
        n,
        rng,
        m=m,
        d=d,
        epsilon=epsilon,
        mu=mu,
        lipschitz=lipschitz,
        trials=trials,
        estimator=estimator,
    )
    return float(np.mean(inst.population_loss(theta) - inst.population_loss(inst.theta_star)))


def sc_sco_lb_bound(n, *, m=16, d=16, epsilon=0.5, mu=1.0, lipschitz=2.0) -> float:
    """Thm D.7's private term with the proof's constants, (μ/2)α²."""
    _, sigma = ghazi_thm_d7_scales(int(d), lipschitz, mu)
    return ghazi_thm_d7_explicit_lower_bound(int(n), int(m), int(d), epsilon, sigma, mu)


def sc_erm_lb_excess(
    n, rng, *, m=16, d=2, epsilon=4.8e-6, mu=1.0, lipschitz=2.0, trials=1000, estimator=None
):
    """Thm D.8: the mean excess empirical risk (μ/2)‖θ̂ − x̄‖² (x̄ the ERM, in K) of
    ``estimator`` on the Thm D.7 instance."""
    _, means, theta = _thm_d7_release(
        n,
        rng,
        m=m,
        d=d,
        epsilon=epsilon,
        mu=mu,
        lipschitz=lipschitz,
        trials=trials,
        estimator=estimator,
    )
    return float(0.5 * mu * np.mean(np.sum((theta - means.mean(axis=0)) ** 2, axis=1)))


def sc_erm_lb_bound(n, *, m=16, d=2, epsilon=4.8e-6, mu=1.0, lipschitz=2.0) -> float:
    """Thm D.8's bound from its proof's constants (:func:`ghazi_thm_d8_explicit_lower_bound`;
    the item variance is dσ², the truncation being inactive)."""
    _, sigma = ghazi_thm_d7_scales(int(d), lipschitz, mu)
    return ghazi_thm_d8_explicit_lower_bound(
        int(n), int(m), int(d), epsilon, sigma, mu, item_variance=d * sigma**2
    )


def _point_name(value, setting: dict) -> str:
    """``over_bound_at_V`` (``_k=v`` for each key of ``setting``)."""
    return f"over_bound_at_{value:g}" + "".join(f"_{k}={v:g}" for k, v in setting.items())


def ratio_to_bound(rng, *, error, bound, points, draws) -> dict:
    """``{name: (mean, low, high)}`` per ``(value, setting)`` of ``points``: ``error(value, rng,
    **setting)`` over ``draws`` calls (each a fresh member of the family's prior) divided by
    ``bound(value, **setting)``, ± 3.5 standard errors.  The prior average is at most the worst
    member's error, so an average above the bound puts the worst case above it too."""
    out = {}
    for value, setting in points:
        errors = np.array([error(value, rng, **setting) for _ in range(draws)])
        ratios = errors / bound(value, **setting)
        mean, half = ratios.mean(), 3.5 * ratios.std(ddof=1) / math.sqrt(draws)
        out[_point_name(value, setting)] = (float(mean), float(mean - half), float(mean + half))
    return out


def lower_bound_run(
    claim,
    *,
    error,
    bound,
    points,
    param,
    grid,
    draws,
    replicates,
    note,
    sweep=None,
    estimator=None,
) -> CombinedExperiment:
    """A lower bound's two parts, with ``estimator`` (default the reference one) on the hard
    family: its error over the bound at ``points`` (``draws`` members of the family each, ≥ 1 up
    to 3.5 s.e.), and its ``sweep`` (default ``error``) of ``param`` over ``grid`` against the Ω
    exponent (``replicates`` per value)."""
    error = functools.partial(error, estimator=estimator)
    sweep = functools.partial(sweep or error, estimator=estimator)
    return CombinedExperiment(
        {
            "above the bound": ValueExperiment(
                functools.partial(
                    ratio_to_bound, error=error, bound=bound, points=points, draws=draws
                ),
                ge={_point_name(value, setting): 1.0 for value, setting in points},
                note=note,
            ),
            "exponent": RateExperiment.for_claim(
                claim, sweep, param, grid, replicates=replicates, note=note
            ),
        },
        note="a lower bound holds for every DP algorithm, which no run shows: the reference "
        "estimator on the hard family must stay above the bound (also where the non-private "
        "estimator falls below it) and meet its exponent.",
    )


def truncation_bias(rng, *, samples: int) -> dict:
    """Lemma D.2: the exact truncated mean's distance to χ (over σ) and a Monte-Carlo item mean
    (coordinate 1, ``samples`` items, ±3.5 s.e.) centred on χ^tr, at d = 2, 8, 32."""
    out = {}
    for d in (2, 8, 32):
        inst = TruncatedGaussianInstance.from_theorem(
            d=d, n=1000, m=100, strong_convexity=1.0, lipschitz=2.0, epsilon=1.0, rng=rng
        )
        out[f"bias_over_sigma_d{d}"] = float(np.linalg.norm(inst.chi_tr - inst.chi) / inst.sigma)
        x = inst.sample(samples // 100, 100, rng).items.reshape(-1, d)
        z = (x[:, 0] - inst.chi_tr[0]) / inst.sigma
        half = 3.5 * z.std() / math.sqrt(len(z))
        out[f"mc_mean_d{d}"] = (float(z.mean()), float(z.mean() - half), float(z.mean() + half))
    return out


def user_to_item(rng, *, n: int) -> dict:
    """Lemma D.3 on ``n`` users of m = 8 items N(0, σ²I), σ = 2, d = 3: user means are the items'
    means, items have variance σ² and user means σ²/m (99.9% χ² intervals)."""
    sigma, m, d = 2.0, 8, 3
    x, means = sample_user_level_gaussian(np.zeros(d), sigma=sigma, n=n, m=m, rng=rng)
    items = x.reshape(-1, d)
    var, mvar = float(items.var()), float(means.var() * m)
    k1, k2 = items.size - 1, means.size - 1
    return {
        "mean_identity": float(np.max(np.abs(x.mean(axis=1) - means))),
        "item_variance": (
            var / sigma**2,
            var * k1 / stats.chi2.ppf(0.9995, k1) / sigma**2 * 0.98,
            var * k1 / stats.chi2.ppf(0.0005, k1) / sigma**2 * 1.02,
        ),
        "user_mean_variance_times_m": (
            mvar / sigma**2,
            mvar * k2 / stats.chi2.ppf(0.9995, k2) / sigma**2,
            mvar * k2 / stats.chi2.ppf(0.0005, k2) / sigma**2,
        ),
    }


def fingerprinting_bound(epsilon, *, n=1000, m=16, d=16, sigma=1.0, psi=0.9) -> float:
    """Lemma D.5 read at fixed n: the worst E‖χ̂ − χ‖² is at least
    min(dσ²ψ²/(6m), (dσ/(24εn√m))²)."""
    return user_gaussian_mean_lower_bound(n, m, d, sigma=sigma, epsilon=epsilon, psi=psi)
