"""Reference mechanisms: calibration golden numbers, noise on samples, sensitivity on neighbours."""

import math
import pickle

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.algorithms.mechanisms import (
    ClippedQuery,
    ExponentialMechanism,
    FeatureCountQuery,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ReportNoisyMax,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    gaussian_sigma,
    user_mean_query,
    user_sum_query,
)
from dpclaims.data import UserDataset, remove_user, replace_item, replace_user
from dpclaims.errors import InputError, MechanismError
from dpclaims.execution import Execution, run_trials


def first_category(data):
    """Category 0/1/2 from the sign pattern of user 0's first feature (for randomized response)."""
    v = data.x[0, 0, 0]
    return 0 if v < 0 else (1 if v < 1 else 2)


# ------------------------------------------------------------------ calibration


def test_analytic_sigma_golden_numbers():
    # Balle & Wang (2018), Theorem 8; cross-checked against dp-accounting's exact solver
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306316, abs=1e-6)
    assert analytic_gaussian_sigma(0.5, 1e-5) == pytest.approx(7.0318267, abs=1e-6)
    assert analytic_gaussian_sigma(4.0, 1e-5) == pytest.approx(1.0811618, abs=1e-6)
    for eps, delta in [(1.0, 1e-5), (0.1, 1e-8), (10.0, 1e-3), (0.01, 0.3)]:
        sigma = analytic_gaussian_sigma(eps, delta)
        assert sigma == pytest.approx(dp_accounting.get_sigma_gaussian(eps, delta), rel=1e-12)
        assert analytic_gaussian_delta(sigma, eps) == pytest.approx(delta, rel=1e-10)


def test_analytic_sigma_is_linear_in_sensitivity_and_beats_classical():
    assert analytic_gaussian_sigma(1.0, 1e-5, 2.5) == pytest.approx(
        2.5 * analytic_gaussian_sigma(1.0, 1e-5), rel=1e-14
    )
    assert classical_gaussian_sigma(0.5, 1e-5) == pytest.approx(
        math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14
    )
    assert gaussian_sigma(0.5, 1e-5, calibration="classical") > gaussian_sigma(0.5, 1e-5)
    with pytest.raises(InputError, match="epsilon < 1"):
        classical_gaussian_sigma(1.0, 1e-5)
    with pytest.raises(InputError, match="delta"):
        analytic_gaussian_sigma(1.0, 0.0)


# ------------------------------------------------------------------ noise on samples


def scalar_data(value=0.3, n=4):
    return UserDataset(np.full((n, 1, 1), value))


def test_gaussian_noise_std_and_mean_on_samples():
    data = scalar_data()
    mech = GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5)
    out = mech(data, np.random.default_rng(0), 200_000)
    assert out.shape == (200_000, 1)
    assert out.std() == pytest.approx(mech.noise_std, rel=0.01)
    assert out.mean() == pytest.approx(1.2, abs=5 * mech.noise_std / math.sqrt(200_000))
    assert mech.noise_std == pytest.approx(analytic_gaussian_sigma(1.0, 1e-5, 2.0))
    assert GaussianMechanism(user_sum_query(1.0), 2.0, 1.0, 1e-5, sigma=0.5).noise_std == 0.5


def test_laplace_noise_scale_on_samples():
    mech = LaplaceMechanism(user_sum_query(1.0, norm=1), 2.0, 0.5)
    out = mech(scalar_data(), np.random.default_rng(1), 200_000)
    assert mech.noise_scale == 4.0
    assert np.abs(out - 1.2).mean() == pytest.approx(4.0, rel=0.01)  # E|Lap(b)| = b
    assert mech.privacy_claim.pure


def test_randomized_response_frequencies():
    mech = RandomizedResponse(first_category, 3, 1.0)
    out = mech(scalar_data(0.5), np.random.default_rng(2), 100_000)[:, 0]
    keep = math.e / (math.e + 2)
    assert mech.keep_probability == pytest.approx(keep)
    freq = np.bincount(out.astype(int), minlength=3) / out.size
    np.testing.assert_allclose(freq, [(1 - keep) / 2, keep, (1 - keep) / 2], atol=0.006)
    # the exact ratio of output probabilities between any two inputs is e^ε
    assert keep / ((1 - keep) / 2) == pytest.approx(math.e)


def test_exponential_mechanism_matches_softmax():
    x = np.zeros((5, 1, 3))
    x[:3, 0, 0] = 1.0
    x[:1, 0, 1] = 1.0
    data = UserDataset(x)
    mech = ExponentialMechanism(FeatureCountQuery(0.5), 1.0, 2.0)
    probs = mech.probabilities(data)
    np.testing.assert_allclose(probs, np.exp([3.0, 1.0, 0.0]) / np.exp([3.0, 1.0, 0.0]).sum())
    out = mech(data, np.random.default_rng(3), 100_000)[:, 0]
    np.testing.assert_allclose(
        np.bincount(out.astype(int), minlength=3) / out.size, probs, atol=0.006
    )


def test_report_noisy_max_index_and_value_mutant():
    x = np.zeros((10, 1, 3))
    x[:, 0, 2] = 1.0
    data = UserDataset(x)
    mech = ReportNoisyMax(FeatureCountQuery(0.5), 1.0, 1.0, relation="add-remove", monotone=True)
    assert mech.noise_scale == 1.0
    out = mech(data, np.random.default_rng(4), 10_000)
    assert out.shape == (10_000, 1)
    assert np.mean(out[:, 0] == 2) > 0.99
    buggy = ReportNoisyMax(FeatureCountQuery(0.5), 1.0, 1.0, return_value=True)
    out = buggy(data, np.random.default_rng(4), 1000)
    assert out.shape == (1000, 2)
    assert np.all(np.isin(out[:, 0], [0, 1, 2])) and len(np.unique(out[:, 1])) == 1000


def test_same_seed_same_numbers_and_picklable():
    mech = GaussianMechanism.from_epsilon(user_mean_query(1.0), 1.0, 1e-5, n=4, m=1)
    a = run_trials(mech, scalar_data(), 20_000, seed=7, execution=Execution(backend="serial"))
    b = run_trials(
        pickle.loads(pickle.dumps(mech)),
        scalar_data(),
        20_000,
        seed=7,
        execution=Execution(backend="serial"),
    )
    np.testing.assert_array_equal(a, b)
    assert mech.sensitivity == 0.5
    claim = mech.privacy_claim
    assert (claim.epsilon, claim.delta, claim.unit, claim.relation) == (
        1.0,
        1e-5,
        "user",
        "replace",
    )


# ------------------------------------------------------------------ sensitivities

QUERIES = [
    ClippedQuery(0.7, clip, reduce, norm)
    for clip in ("item", "user")
    for reduce in ("mean", "sum")
    for norm in (1, 2)
]


@st.composite
def dataset_and_neighbour(draw):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([0.1, 1.0, 10.0]))
    data = UserDataset(scale * rng.standard_normal((n, m, d)))
    kind = draw(st.sampled_from(["user", "item", "remove"] if n > 1 else ["user", "item"]))
    user = draw(st.integers(0, n - 1))
    if kind == "user":
        return (
            data,
            replace_user(data, user, scale * 3 * rng.standard_normal((m, d))),
            "user",
            "replace",
        )
    if kind == "item":
        item = draw(st.integers(0, m - 1))
        return (
            data,
            replace_item(data, user, item, scale * 3 * rng.standard_normal(d)),
            "item",
            "replace",
        )
    return data, remove_user(data, user), "user", "add-remove"


@settings(max_examples=150, deadline=None)
@given(dataset_and_neighbour())
def test_clipped_query_sensitivities_hold_on_random_neighbours(case):
    data, neighbour, unit, relation = case
    for query in QUERIES:
        sensitivity = query.sensitivity(data.n, data.m, unit, relation)
        change = np.linalg.norm(query(data) - query(neighbour), ord=query.norm)
        assert change <= sensitivity * (1 + 1e-12) + 1e-15, (query, unit, relation)


def test_clipped_query_sensitivity_table_and_tightness():
    q = user_mean_query(1.0)
    assert q.sensitivity(10, 5, "user", "replace") == pytest.approx(0.2)
    assert q.sensitivity(10, 5, "item", "replace") == pytest.approx(0.04)
    assert ClippedQuery(1.0, clip="user").sensitivity(10, 5, "item", "replace") == pytest.approx(
        0.2
    )
    assert user_sum_query(1.0).sensitivity(10, 5, "user", "add-remove") == 1.0
    with pytest.raises(InputError, match="m = 1"):
        q.sensitivity(10, 5, "item", "add-remove")
    # the replace-one-user bound is attained by swapping a user at +B for one at -B
    data = UserDataset(np.ones((10, 5, 1)))
    other = replace_user(data, 0, -np.ones((5, 1)))
    assert abs(q(data) - q(other))[0] == pytest.approx(q.sensitivity(10, 5, "user", "replace"))


@settings(max_examples=60, deadline=None)
@given(dataset_and_neighbour())
def test_feature_counts_move_by_at_most_one(case):
    data, neighbour, unit, relation = case
    query = FeatureCountQuery(0.0)
    if data.n == neighbour.n:
        assert np.max(np.abs(query(data) - query(neighbour))) <= query.sensitivity(
            data.n, data.m, unit, relation
        )
    else:  # add/remove: every count moves the same way (monotone), by at most one
        diff = query(data) - query(neighbour)
        assert np.all((diff >= 0) & (diff <= 1))


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: GaussianMechanism(user_sum_query(1.0), 0.0, 1.0, 1e-5), InputError, "sensitivity"),
        (lambda: GaussianMechanism(user_sum_query(1.0), 1.0, 1.0, 0.0), InputError, "delta"),
        (
            lambda: GaussianMechanism(user_sum_query(1.0), 1.0, 2.0, 1e-5, calibration="classical"),
            InputError,
            "epsilon < 1",
        ),
        (lambda: GaussianMechanism("sum", 1.0, 1.0, 1e-5), InputError, "query"),
        (
            lambda: GaussianMechanism(user_sum_query(1.0), 1.0, 1.0, 1e-5, unit="row"),
            InputError,
            "unit",
        ),
        (lambda: LaplaceMechanism.from_epsilon(user_sum_query(1.0), 1.0, 4, 1), InputError, "l1"),
        (lambda: ClippedQuery(-1.0), InputError, "bound"),
        (lambda: ClippedQuery(1.0, norm=3), InputError, "norm"),
        (lambda: RandomizedResponse(first_category, 1, 1.0), InputError, "categories"),
        (
            lambda: RandomizedResponse(first_category, 2, 1.0)(
                scalar_data(2.0), np.random.default_rng(0), 5
            ),
            MechanismError,
            "category",
        ),
        (lambda: user_sum_query(1.0)(np.zeros((3, 1))), InputError, "UserDataset"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
