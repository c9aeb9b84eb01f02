"""The example's privacy audits reach their claims (issue #26, item 4): the flip pair under the
Huber loss attains the sensitivity 2/(nΛ), the correct algorithms are ``consistent`` (not weak)
at the quick budget, and the β×2 mutants of both algorithms (the "/2" forgotten) are killed."""

import math
from pathlib import Path

import numpy as np
import pytest
from erm_perturbation.algorithms import (
    HUBER_H,
    ObjectivePerturbation,
    OutputPerturbation,
    huber_terms,
)

from dpclaims import claims
from dpclaims.audit.reach import REACH_LIMIT
from dpclaims.claims.registry import Registry, UnknownClaimError
from dpclaims.execution import Execution

PACKAGE = Path(__file__).resolve().parents[2] / "examples" / "erm_perturbation" / "src"
PAPER = "chaudhuri-monteleoni-sarwate-2011"


@pytest.fixture(scope="module")
def experiments():
    """The example's experiments module, its claims known to dpclaims (installed or not)."""
    try:
        claims.get("cms11.alg1.privacy")
    except UnknownClaimError:
        Registry.discover(folders=[PACKAGE / "erm_perturbation"])
    from erm_perturbation import experiments

    return experiments


def test_huber_terms_are_the_loss_and_its_derivatives():
    z = np.linspace(-1.0, 3.0, 4001)
    h, step = 0.5, 1e-6
    value, slope, curvature = huber_terms(z, h)
    up, down = huber_terms(z + step, h), huber_terms(z - step, h)
    assert np.allclose((up[0] - down[0]) / (2 * step), -slope, atol=1e-6)
    inside = np.abs(np.abs(1.0 - z) - h) > 1e-3  # away from the kinks of ℓ''
    assert np.allclose(((down[1] - up[1]) / (2 * step))[inside], curvature[inside], atol=1e-6)
    assert value[z < 1 - h] == pytest.approx(1 - z[z < 1 - h]) and slope.max() == 1.0
    assert curvature.max() == 1 / (2 * h) and value[z > 1 + h].max() == 0.0


def test_flip_pair_under_the_huber_loss_attains_the_sensitivity(experiments):
    """Both differing records on the loss's linear part: their gradients differ by 2 (the
    worst case |ℓ'| + |ℓ'|), so the minimisers are 2/(nΛ) apart (proof of Theorem 6)."""
    mechanism = OutputPerturbation.from_theorem(experiments.AUDIT, **experiments.AUDIT_LOSS)
    d0, d1 = experiments.flip_pair(mechanism.n)
    f0, f1 = mechanism.minimiser(d0), mechanism.minimiser(d1)
    for f in (f0, f1):
        # the differing record's gradient ℓ'(y f x) y x in d0 (y = +1) and d1 (y = -1), x = 1
        g0 = -huber_terms(f, HUBER_H)[1]
        g1 = huber_terms(-f, HUBER_H)[1]
        assert abs(g0 - g1)[0] == pytest.approx(2.0)
    assert np.linalg.norm(f0 - f1) == pytest.approx(mechanism.sensitivity, rel=1e-9)
    assert experiments.output_flip_epsilon(mechanism) == pytest.approx(1.0, rel=1e-9)


def _objective_loss_on_a_grid(mechanism, beta):
    """The privacy loss of Algorithm 2 (Huber, d = 1) on the flip pair at outputs f: the noise
    densities of b_D(f) = -n∇J_D(f) and the Jacobians nΛ + ℓ''(±f) -> sup over f."""
    f = np.linspace(-20, 20, 400_001)
    n_lam = mechanism.n * mechanism.lam
    (_, s0, c0), (_, s1, c1) = huber_terms(f, mechanism.h), huber_terms(-f, mechanism.h)
    b0, b1 = -n_lam * f + s0, -n_lam * f - s1  # ℓ'(z) = -s
    loss = beta * (np.abs(b1) - np.abs(b0)) + np.log(n_lam + c0) - np.log(n_lam + c1)
    return np.abs(loss).max()


@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_exact_epsilon_of_objective_perturbation_on_the_huber_flip_pair(experiments, factor):
    mechanism = ObjectivePerturbation.from_theorem(experiments.AUDIT, **experiments.AUDIT_LOSS)
    assert mechanism.c == 1.0 and mechanism.extra_ridge == 0.0
    exact = _objective_loss_on_a_grid(mechanism, factor * mechanism.beta)
    formula = factor * mechanism.epsilon_noise + math.log1p(mechanism.c / 10)
    assert exact == pytest.approx(formula, abs=1e-3)
    if factor == 1.0:
        assert experiments.objective_flip_epsilon(mechanism) == pytest.approx(formula)
        assert formula == pytest.approx(1.0 - math.log(1.1))  # ε - log(1 + c/(nΛ)) = 0.9047


@pytest.mark.parametrize("claim_id", ["cms11.alg1.privacy", "cms11.alg2.privacy"])
def test_correct_algorithms_are_consistent_within_reach_at_quick(experiments, claim_id):
    result = claims.experiment(claims.get(claim_id), "quick").run(seed=0)
    evidence = result.evidence
    assert result.verdict == "consistent", result.summary
    assert evidence.reach.factor <= REACH_LIMIT
    assert evidence.reference.epsilon >= 0.9  # the pair leaks (nearly) the claim
    assert evidence.epsilon_lower <= evidence.reference.epsilon


def test_beta_x2_mutants_are_registered_and_killed_at_quick(experiments):
    from dpclaims.claims.mutation import kill_matrix

    report = kill_matrix(papers=PAPER, budget="quick", execution=Execution(backend="serial"))
    rows = {row["mutant"]: row for row in report["matrix"]}
    assert set(rows) == {"cms11-m1-alg1-beta-x2", "cms11-m2-alg2-beta-x2"}
    assert rows["cms11-m1-alg1-beta-x2"]["audit"] == "cms11.alg1.privacy"
    assert rows["cms11-m2-alg2-beta-x2"]["audit"] == "cms11.alg2.privacy"
    assert rows["cms11-m1-alg1-beta-x2"]["true_epsilon"] == 2.0
    assert rows["cms11-m2-alg2-beta-x2"]["true_epsilon"] == pytest.approx(1.714, abs=1e-3)
    for row in rows.values():
        assert row["verdict"] == "violation" and row["epsilon_lower"] > 1.0, row
    assert report["mutation_score"] == 1.0


def test_the_logistic_flip_pair_could_not_see_the_mutant(experiments):
    """Why the audit moved to the Huber loss: under the logistic loss the flip pair's gradients
    differ by 1, so even Algorithm 1 with β×2 leaks less than the claim on it."""
    d0, d1 = experiments.flip_pair(10)
    logistic = OutputPerturbation(n=10, epsilon=1.0, lam=1.0)
    gap = np.linalg.norm(logistic.minimiser(d0) - logistic.minimiser(d1))
    assert 0.45 < gap / logistic.sensitivity < 0.5
    assert 2 * logistic.beta * gap < 1.0  # the β×2 mutant's exact ε on the logistic pair
