"""Experiments for the claims in ``chaudhuri_monteleoni_sarwate_2011.toml``.

Each factory ``f(claim, budget)`` returns the experiment that checks one claim.  Privacy claims
are audited on a neighbouring pair that attains the sensitivity, so its exact ε is (nearly) the
claim and a factor-2 calibration error is caught: the flip pair under the Huber loss, whose
linear part gives the differing records gradients 2 apart (the worst case).  The β×2 mutants
of both algorithms (the "/2" of the noise rate forgotten) are registered here too; rate claims
sweep n with :meth:`RateExperiment.for_claim`, which reads exponent, bound and margin from the
TOML, with outputting 0 as their trivial control; the sizes of every experiment at each budget
are the :class:`BySize` values below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.claims.experiments import BySize, register_experiment
from dpclaims.claims.standard import AuditExperiment, RateExperiment, ValueExperiment
from dpclaims.data import UserDataset
from dpclaims.losses import uniform_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem
from dpclaims.rates import geometric_grid
from dpclaims.target import AuditTarget
from dpclaims.targets.mutants import Mutant, register_mutant

from .algorithms import (
    HUBER_H,
    ObjectivePerturbation,
    OutputPerturbation,
    minimise,
    regularised_risk,
)

TRIALS = BySize(quick=20_000, standard=200_000, full=1_000_000)
GRID = BySize(quick=(200, 3200, 5), standard=(200, 12_800, 7))  # n from, to, points
REPLICATES = BySize(quick=4, standard=10)
DRAWS = BySize(quick=100, standard=200)  # noise draws averaged per replicate
PAIRS = BySize(quick=50, standard=500)  # random neighbouring pairs for the sensitivity check

AUDIT = Problem(n=10, d=1, epsilon=1.0, strong_convexity=1.0)
"""The audited setting: ten records, one feature, Λ = 1, ε = 1."""

AUDIT_LOSS = {"loss": "huber", "h": HUBER_H}
"""The audited loss: Huber (h = 1/2, c = 1), whose linear part attains the sensitivity."""

PAPER = "chaudhuri-monteleoni-sarwate-2011"

RATE = {"d": 5, "epsilon": 1.0, "lam": 0.1}
"""The swept setting: d = 5, ε = 1, Λ = 0.1 (ε' > 0 for n ≥ 200, so Δ = 0 in Algorithm 2)."""


def flip_pair(n: int) -> tuple[UserDataset, UserDataset]:
    """Record 0 is ``(x = 1, y = +1)`` in d0 and ``(x = 1, y = -1)`` in d1; the others ``x = 0``.

    Under the logistic loss the gradients of the differing records differ by
    ``σ(f) + σ(-f) = 1`` at every f, half the paper's bound 2.  Under the Huber loss both
    records are on its linear part (``|ℓ'| = 1``) for ``|f| < 1 - h``, so the gradients differ
    by exactly 2 there: the minimisers are ``±1/(nΛ)`` (for ``nΛ > 1/(1 - h)``), ``2/(nΛ)``
    apart, the sensitivity bound of Theorem 6.
    """
    x = np.zeros((n, 1, 1))
    x[0] = 1.0
    y = np.ones((n, 1))
    flipped = y.copy()
    flipped[0] = -1.0
    return UserDataset(x, y), UserDataset(x, flipped)


def logistic_data(rng: np.random.Generator, n: int, d: int) -> UserDataset:
    """``n`` records: x uniform in the unit ball of R^d, ``P(y = 1) = σ(2 x_1)``."""
    x = uniform_ball(rng, shape=(n,), d=d, radius=1.0)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * x[:, 0])), 1.0, -1.0)
    return UserDataset(x[:, None, :], y[:, None])


def excess_risk(mechanism, data: UserDataset, rng: np.random.Generator, draws: int) -> np.ndarray:
    """``J(f_priv) - J(f*)`` for ``draws`` runs of ``mechanism`` on ``data`` -> (draws,)."""
    x, y, lam = data.x[:, 0, :], data.y[:, 0], mechanism.lam
    best = _minimiser(data, lam)[None, :]
    private = mechanism(data, rng, draws)
    return regularised_risk(private, x, y, lam) - regularised_risk(best, x, y, lam)


def alg1_excess_risk(n: int, rng: np.random.Generator, *, d, epsilon, lam, draws) -> np.ndarray:
    """Excess regularised risk of Algorithm 1 on fresh data of ``n`` records -> (draws,)."""
    problem = Problem(n=n, d=d, epsilon=epsilon, strong_convexity=lam)
    data = logistic_data(rng, n, d)
    return excess_risk(OutputPerturbation.from_theorem(problem), data, rng, draws)


def alg2_excess_risk(n: int, rng: np.random.Generator, *, d, epsilon, lam, draws) -> np.ndarray:
    """Excess regularised risk of Algorithm 2 on fresh data of ``n`` records -> (draws,)."""
    problem = Problem(n=n, d=d, epsilon=epsilon, strong_convexity=lam)
    data = logistic_data(rng, n, d)
    return excess_risk(ObjectivePerturbation.from_theorem(problem), data, rng, draws)


def origin_excess_risk(n: int, rng: np.random.Generator, *, d, epsilon, lam, draws) -> float:
    """The trivial control of both sweeps: the excess risk of outputting 0 (where the solvers
    start) on the same data, drawn first from the same ``rng``."""
    data = logistic_data(rng, n, d)
    x, y = data.x[:, 0, :], data.y[:, 0]
    best = _minimiser(data, lam)[None, :]
    gap = regularised_risk(np.zeros_like(best), x, y, lam) - regularised_risk(best, x, y, lam)
    return float(gap[0])


def flip_target(mechanism) -> AuditTarget:
    """``mechanism`` on the flip pair against (ε, 0)-DP at the audited setting."""
    d0, d1 = flip_pair(AUDIT.n)
    claim = PrivacyClaim(epsilon=AUDIT.epsilon, delta=0.0)
    return AuditTarget(mechanism=mechanism, d0=d0, d1=d1, claim=claim)


def output_flip_epsilon(mechanism: OutputPerturbation) -> float:
    """Exact ε of Algorithm 1 on the flip pair: ``β ‖f*(d0) - f*(d1)‖``.

    With noise density ``∝ exp(-β‖b‖)`` the privacy loss at output ``o`` is
    ``β(‖o - f₁‖ - ‖o - f₀‖) ≤ β‖f₀ - f₁‖`` (triangle inequality), with equality on the ray
    from ``f₁`` through ``f₀``: the exact ε of a pair is β times its minimisers' distance.
    Under the Huber loss that distance is ``2/(nΛ)``, so the exact ε is ``nΛε/2 · 2/(nΛ) = ε``.
    """
    d0, d1 = flip_pair(AUDIT.n)
    return float(mechanism.beta * np.linalg.norm(mechanism.minimiser(d0) - mechanism.minimiser(d1)))


def objective_flip_epsilon(mechanism: ObjectivePerturbation) -> float:
    """Exact ε of Algorithm 2 (Huber loss, d = 1, Δ = 0) on the flip pair:
    ``2β + log(1 + c/(nΛ))``.

    The output ``f`` determines the noise, ``b_D(f) = -n ∇J_D(f)``: ``b₀ = -nΛf - ℓ'(f)`` and
    ``b₁ = -nΛf + ℓ'(-f)``; with the Laplace density ``(β/2) e^{-β|b|}`` and the Jacobians
    ``nΛ + ℓ''(±f)`` the privacy loss at ``f`` is
    ``β(|b₁| - |b₀|) + log((nΛ + ℓ''(f))/(nΛ + ℓ''(-f)))`` (change of variables, as in the
    proof of Theorem 9).  The first term is at most ``β|ℓ'(f) + ℓ'(-f)| ≤ 2β`` and the second
    at most ``log(1 + c/(nΛ))``; both bounds are approached as ``f ↓ 1 - h`` (both records still
    on the linear part, record 0 entering the quadratic part, ``b₀ ≤ 0`` since
    ``nΛ(1 - h) ≥ 1``), so the supremum is their sum.  With ``2β = ε' = ε - 2 log(1 + c/(nΛ))``
    it is ``ε - log(1 + c/(nΛ))``; ``tests/examples`` checks it on a grid.
    """
    if mechanism.loss != "huber" or mechanism.extra_ridge != 0.0:
        raise ValueError("the formula is for the Huber loss with Δ = 0")
    n_lam = mechanism.n * mechanism.lam
    if n_lam * (1.0 - mechanism.h) < 1.0:
        raise ValueError("the formula needs nΛ(1 - h) ≥ 1")
    return 2.0 * mechanism.beta + math.log1p(mechanism.c / n_lam)


def _audit(mechanism, trials: int, *, reference: float, note: str) -> AuditExperiment:
    """The audit of ``mechanism`` on the flip pair against (ε, 0)-DP."""
    return AuditExperiment(
        build=lambda: flip_target(mechanism),
        trials=trials,
        reference_epsilon=reference,
        note=note,
    )


def _minimiser(data: UserDataset, lam: float) -> np.ndarray:
    """``argmin J(·, data)`` -> (d,)."""
    x, y = data.x[:, 0, :], data.y[:, 0]
    return minimise(x, y, lam, np.zeros((1, x.shape[1])))[0]


@register_experiment("cms11.alg1.privacy")
def audit_alg1_privacy(claim, budget):
    mechanism = OutputPerturbation.from_theorem(AUDIT, **AUDIT_LOSS)
    return _audit(
        mechanism,
        TRIALS[budget],
        reference=round(output_flip_epsilon(mechanism), 4),
        note="flip pair (n = 10, d = 1, Λ = 1) under the Huber loss (h = 1/2): both records on "
        "its linear part, |f*(d0) - f*(d1)| = 2/(nΛ), the sensitivity bound; the exact ε of the "
        "pair is β·2/(nΛ) = ε, the claim",
    )


@register_experiment("cms11.alg1.sensitivity")
def value_alg1_sensitivity(claim, budget):
    pairs, n, d, lam = PAIRS[budget], 20, 3, 0.1

    def compute(rng: np.random.Generator) -> dict:
        ratios = []
        for _ in range(pairs):
            d0 = logistic_data(rng, n, d)
            x, y = np.array(d0.x), np.array(d0.y)
            x[0, 0] = uniform_ball(rng, shape=(), d=d, radius=1.0)
            y[0, 0] = -y[0, 0]
            gap = np.linalg.norm(_minimiser(d0, lam) - _minimiser(UserDataset(x, y), lam))
            ratios.append(gap / (2.0 / (n * lam)))
        return {"max_gap_over_bound": max(ratios)}

    return ValueExperiment(
        compute=compute,
        le={"max_gap_over_bound": 1.0},
        note=f"{pairs} random replace-one pairs (n = {n}, d = {d}, Λ = {lam}): largest "
        "|f*(D) - f*(D')| as a fraction of 2/(nΛ)",
    )


@register_experiment("cms11.alg1.excess_risk")
def sweep_alg1_excess_risk_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg1_excess_risk,
        "n",
        geometric_grid(*GRID[budget], integer=True),
        replicates=REPLICATES[budget],
        fixed={**RATE, "draws": DRAWS[budget]},
        trivial=origin_excess_risk,
        note="logistic data in the unit ball of R^5, Λ = 0.1, ε = 1; the mean over noise draws",
    )


@register_experiment("cms11.alg2.privacy")
def audit_alg2_privacy(claim, budget):
    mechanism = ObjectivePerturbation.from_theorem(AUDIT, **AUDIT_LOSS)
    return _audit(
        mechanism,
        TRIALS[budget],
        reference=round(objective_flip_epsilon(mechanism), 4),
        note="flip pair (n = 10, d = 1, Λ = 1) under the Huber loss (h = 1/2, c = 1): the noise "
        "solving for f_priv differs by up to 2 between d0 and d1 and the Jacobians by up to "
        "1 + c/(nΛ), so the exact ε is 2β + log(1 + c/(nΛ)) = ε - log 1.1",
    )


@register_experiment("cms11.alg2.excess_risk")
def sweep_alg2_excess_risk_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        alg2_excess_risk,
        "n",
        geometric_grid(*GRID[budget], integer=True),
        replicates=REPLICATES[budget],
        fixed={**RATE, "draws": DRAWS[budget]},
        trivial=origin_excess_risk,
        note="logistic data in the unit ball of R^5, Λ = 0.1, ε = 1 (ε' > 0: Δ = 0)",
    )


@dataclass(frozen=True, kw_only=True)
class OutputPerturbationBetaX2(OutputPerturbation):
    """Mutant of Algorithm 1: ``β = nΛε`` (the "/2" of ``β = nΛε/2`` forgotten): half the noise."""

    @property
    def beta(self) -> float:
        return 2.0 * super().beta


@dataclass(frozen=True, kw_only=True)
class ObjectivePerturbationBetaX2(ObjectivePerturbation):
    """Mutant of Algorithm 2: ``β = ε'`` (the "/2" of ``β = ε'/2`` forgotten): half the noise."""

    @property
    def beta(self) -> float:
        return 2.0 * super().beta


def _alg1_beta_x2() -> AuditTarget:
    return flip_target(OutputPerturbationBetaX2.from_theorem(AUDIT, **AUDIT_LOSS))


def _alg2_beta_x2() -> AuditTarget:
    return flip_target(ObjectivePerturbationBetaX2.from_theorem(AUDIT, **AUDIT_LOSS))


register_mutant(
    Mutant(
        name="cms11-m1-alg1-beta-x2",
        paper=PAPER,
        kind="privacy",
        description="Algorithm 1 with β = nΛε instead of nΛε/2 (the '/2' forgotten): half the "
        "noise; true ε 2ε = 2 (the flip pair under the Huber loss attains the sensitivity)",
        true_epsilon=2.0,
        build=_alg1_beta_x2,
        caught_by="audit",
        audit="cms11.alg1.privacy",
    )
)
register_mutant(
    Mutant(
        name="cms11-m2-alg2-beta-x2",
        paper=PAPER,
        kind="privacy",
        description="Algorithm 2 with β = ε' instead of ε'/2 (the '/2' forgotten): half the "
        "noise; true ε in the audited setting (n = 10, d = 1, Λ = 1, Huber h = 1/2) "
        "2ε' + log(1 + c/(nΛ)) = 1.714, attained on the flip pair",
        true_epsilon=round(
            objective_flip_epsilon(ObjectivePerturbationBetaX2.from_theorem(AUDIT, **AUDIT_LOSS)),
            4,
        ),
        build=_alg2_beta_x2,
        caught_by="audit",
        audit="cms11.alg2.privacy",
    )
)
