"""Soundness and power of the auditor on the reference mechanisms and their known-buggy variants.

Soundness: correctly calibrated mechanisms are never reported as violations.
Power: each classic bug is reported as a violation with at most 10^6 trials per side
(here far fewer: the trial counts are the smallest that pass with a margin over seeds 0-7).
Neighbouring pairs are worst cases: one user moved from +B to -B (replace), or a
canary removed (add/remove).
"""

import numpy as np
import pytest

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.mechanisms import (
    FeatureCountQuery,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ReportNoisyMax,
    user_mean_query,
    user_sum_query,
)
from dpclaims.audit import AuditTest, audit
from dpclaims.data import UserDataset, remove_user, replace_user
from dpclaims.execution import Execution
from dpclaims.losses import LinearLoss


def run_audit(mech, d0, d1, trials, seed=0, **test):
    return audit(
        mech,
        d0,
        d1,
        trials=trials,
        claim=mech.privacy_claim,
        seed=seed,
        test=AuditTest(**test),
        execution=Execution(backend="serial"),
    )


def swapped_user_pair(n=10, m=1, bound=1.0):
    """d0: user 0's items all at +bound, others 0; d1: user 0 at -bound (replace-one-user
    neighbours)."""
    x = np.zeros((n, m, 1))
    x[0] = bound
    d0 = UserDataset(x)
    return d0, replace_user(d0, 0, -bound * np.ones((m, 1)))


def canary_pair(norm):
    """Ten items in R^2 with a canary of the given norm as item 0; d1 removes it (add/remove)."""
    x = 0.3 * np.random.default_rng(0).standard_normal((10, 1, 2))
    x[0, 0] = [norm, 0.0]
    d0 = UserDataset(x)
    return d0, remove_user(d0, 0)


def sign_of_first_item(data):
    """Category 1 if user 0's first feature is positive, else 0."""
    return int(data.x[0, 0, 0] > 0)


def counts_pair(k=5):
    """Six users; user 0 has all k features (so removing it lowers every count by one)."""
    x = np.zeros((6, 1, k))
    x[0] = 1.0
    d0 = UserDataset(x)
    return d0, remove_user(d0, 0)


# ---------------------------------------------------------------------------------- soundness


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_correct_gaussian_is_never_a_violation(epsilon):
    d0, d1 = swapped_user_pair()
    mech = GaussianMechanism(user_sum_query(1.0), 2.0, epsilon, 1e-5)
    result = run_audit(mech, d0, d1, 200_000)
    assert result.verdict == "consistent"
    assert 0.3 * epsilon < result.epsilon_lower <= epsilon


def test_correct_laplace_is_never_a_violation():
    d0, d1 = swapped_user_pair()
    mech = LaplaceMechanism(user_sum_query(1.0, norm=1), 2.0, 1.0)
    result = run_audit(mech, d0, d1, 200_000)
    assert result.verdict == "consistent"
    assert 0.8 < result.epsilon_lower <= 1.0  # the pair is tight for Laplace


def test_randomized_response_is_consistent_and_a_powerless_noisy_max_pair_inconclusive():
    d0, d1 = swapped_user_pair()
    rr = run_audit(
        RandomizedResponse(sign_of_first_item, 2, 1.0), d0, d1, 100_000, method="histogram"
    )
    assert rr.verdict == "consistent" and rr.epsilon_lower > 0.8
    c0, c1 = counts_pair()
    rnm = ReportNoisyMax(FeatureCountQuery(0.5), 1.0, 1.0, relation="add-remove", monotone=True)
    # removing a user who adds one to every count moves no argmax: the pair is powerless, says so
    result = run_audit(rnm, c0, c1, 20_000)
    assert result.verdict == "inconclusive" and result.identical_outputs


@pytest.mark.parametrize(("rate", "steps"), [(1.0, 1), (0.5, 5)])
def test_correct_dp_sgd_is_never_a_violation(rate, steps):
    d0, d1 = canary_pair(50.0)
    algo = DPSGD.from_accountant(
        2.0,
        1e-5,
        LinearLoss(),
        steps=steps,
        step_size=1.0,
        clip_norm=1.0,
        sampling_rate=rate,
        batch_size=10 * rate,
    )
    result = run_audit(algo, d0, d1, 200_000)
    assert result.verdict == "consistent"
    assert (
        result.epsilon_lower > 0.8
    )  # the canary makes the audit meaningful (1.44 and 1.17 of 2.0)


# ---------------------------------------------------------------------------------- power


def test_gaussian_with_halved_sigma_is_a_violation():
    d0, d1 = swapped_user_pair()
    correct = GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5)
    mutant = GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5, sigma=correct.noise_std / 2)
    assert run_audit(mutant, d0, d1, 100_000).verdict == "violation"


def test_laplace_with_scale_one_over_two_epsilon_is_a_violation():
    # sensitivity 2 with scale 1/(2ε) = 0.5 is 4ε-DP, not ε-DP
    d0, d1 = swapped_user_pair()
    mutant = LaplaceMechanism(user_sum_query(1.0, norm=1), 2.0, 1.0, scale=0.5)
    result = run_audit(mutant, d0, d1, 2000)
    assert result.verdict == "violation" and result.epsilon_lower > 2.0


def test_user_mean_with_item_level_noise_is_a_user_level_violation():
    n, m = 10, 10
    d0, d1 = swapped_user_pair(n, m)  # the two datasets differ in one whole user
    query = user_mean_query(1.0)
    mutant = GaussianMechanism(
        query, query.sensitivity(n, m, "item", "replace"), 1.0, 1e-5, unit="user"
    )
    assert mutant.privacy_claim.unit == "user"
    result = run_audit(mutant, d0, d1, 1000)
    assert result.verdict == "violation" and result.epsilon_lower > 2.0


def test_dp_sgd_without_clipping_is_a_violation():
    d0, d1 = canary_pair(50.0)
    correct = DPSGD.from_accountant(
        2.0,
        1e-5,
        LinearLoss(),
        steps=5,
        step_size=1.0,
        clip_norm=1.0,
        sampling_rate=0.5,
        batch_size=5.0,
    )
    mutant = DPSGD(**{**correct.params, "loss": LinearLoss(), "clip": False})
    assert mutant.privacy_claim == correct.privacy_claim
    result = run_audit(mutant, d0, d1, 1000)
    assert result.verdict == "violation" and result.epsilon_lower > 4.0


def test_report_noisy_max_returning_the_value_is_a_violation():
    d0, d1 = counts_pair()
    mutant = ReportNoisyMax(
        FeatureCountQuery(0.5), 1.0, 1.0, relation="add-remove", monotone=True, return_value=True
    )
    result = run_audit(mutant, d0, d1, 2000)
    assert result.verdict == "violation" and result.epsilon_lower > 1.5
