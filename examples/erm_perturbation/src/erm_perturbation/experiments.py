"""Experiments for the claims in ``chaudhuri_monteleoni_sarwate_2011.toml``.

Each factory ``f(claim, budget)`` returns the experiment that checks one claim.  Privacy claims
are audited on a neighbouring pair chosen so the exact ε of the pair is known; rate claims
sweep n with :meth:`RateExperiment.for_claim`, which reads exponent, bound and margin from the
TOML; the sizes of every experiment at each budget are the :class:`Budget` values below.
"""

from __future__ import annotations

import numpy as np

from dpclaims.audit.target import AuditTarget
from dpclaims.claims.experiments import Budget, register_experiment
from dpclaims.claims.standard import AuditExperiment, RateExperiment, ValueExperiment
from dpclaims.data import UserDataset
from dpclaims.losses import uniform_ball
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem
from dpclaims.rates import geometric_grid

from .algorithms import ObjectivePerturbation, OutputPerturbation, minimise, regularised_risk

TRIALS = Budget(quick=20_000, standard=200_000, full=1_000_000)
GRID = Budget(quick=(200, 3200, 5), standard=(200, 12_800, 7))  # n from, to, points
REPLICATES = Budget(quick=4, standard=10)
DRAWS = Budget(quick=100, standard=200)  # noise draws averaged per replicate
PAIRS = Budget(quick=50, standard=500)  # random neighbouring pairs for the sensitivity check

AUDIT = Problem(n=10, d=1, epsilon=1.0, strong_convexity=1.0)
"""The audited setting: ten records, one feature, Λ = 1, ε = 1."""

RATE = {"d": 5, "epsilon": 1.0, "lam": 0.1}
"""The swept setting: d = 5, ε = 1, Λ = 0.1 (ε' > 0 for n ≥ 200, so Δ = 0 in Algorithm 2)."""


def flip_pair(n: int) -> tuple[UserDataset, UserDataset]:
    """Record 0 is ``(x = 1, y = +1)`` in d0 and ``(x = 1, y = -1)`` in d1; the others ``x = 0``.

    The gradients of the differing records differ by ``σ(f) + σ(-f) = 1`` at every f, the
    most the logistic loss allows in one dimension (the paper's bound, 2, needs |ℓ'| = 1).
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


def _audit(mechanism, trials: int, *, reference: float, note: str) -> AuditExperiment:
    """The audit of ``mechanism`` on the flip pair against (ε, 0)-DP."""

    def build() -> AuditTarget:
        d0, d1 = flip_pair(AUDIT.n)
        claim = PrivacyClaim(epsilon=AUDIT.epsilon, delta=0.0)
        return AuditTarget(mechanism=mechanism, d0=d0, d1=d1, claim=claim)

    return AuditExperiment(build=build, trials=trials, reference_epsilon=reference, note=note)


def _minimiser(data: UserDataset, lam: float) -> np.ndarray:
    """``argmin J(·, data)`` -> (d,)."""
    x, y = data.x[:, 0, :], data.y[:, 0]
    return minimise(x, y, lam, np.zeros((1, x.shape[1])))[0]


@register_experiment("cms11.alg1.privacy")
def audit_alg1_privacy(claim, budget):
    mechanism = OutputPerturbation.from_theorem(AUDIT)
    d0, d1 = flip_pair(AUDIT.n)
    gap = np.linalg.norm(_minimiser(d0, mechanism.lam) - _minimiser(d1, mechanism.lam))
    return _audit(
        mechanism,
        TRIALS[budget],
        reference=round(float(mechanism.beta * gap), 4),
        note="flip pair (n = 10, d = 1, Λ = 1): the exact ε of the pair is β·|f*(d0) - f*(d1)|, "
        "about half the claim: the logistic loss reaches half the sensitivity bound 2/(nΛ)",
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
        note="logistic data in the unit ball of R^5, Λ = 0.1, ε = 1; the mean over noise draws",
    )


@register_experiment("cms11.alg2.privacy")
def audit_alg2_privacy(claim, budget):
    mechanism = ObjectivePerturbation.from_theorem(AUDIT)
    return _audit(
        mechanism,
        TRIALS[budget],
        reference=round(mechanism.beta, 4),
        note="flip pair (n = 10, d = 1, Λ = 1): the noise solving for f_priv differs by exactly 1 "
        "between d0 and d1 and the Jacobians are equal, so the exact ε is β = ε'/2",
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
        note="logistic data in the unit ball of R^5, Λ = 0.1, ε = 1 (ε' > 0: Δ = 0)",
    )
