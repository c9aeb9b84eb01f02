"""The worst-case neighbouring pairs of dpclaims.hardinstances.canaries."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims.data import UserDataset, are_neighbours
from dpclaims.errors import InputError, NotNeighboursError
from dpclaims.hardinstances.canaries import (
    NeighbourPair,
    balanced_clusters_pair,
    blank_canary_pair,
    extreme_item_pair,
    extreme_user_pair,
    far_outlier_pair,
    halting_threshold_pair,
    halting_threshold_size,
    heavy_outlier_pair,
    outlier_count_pair,
    signed_quadratic_canary_pair,
    users_at_points,
)
from dpclaims.hardinstances.linear import LinearHypercubeInstance
from dpclaims.losses import AbsoluteLoss, LinearLoss, WeightedSquaredDistanceLoss

_BASE = LinearHypercubeInstance(3, alpha=0.3).sample(6, 4, np.random.default_rng(0))
_LABELLED = UserDataset(_BASE.x, np.zeros((6, 4)))

PAIRS = {
    "extreme-user": lambda: extreme_user_pair(
        _BASE, np.array([1.0, 1.0, 1.0]) / np.sqrt(3), user=2
    ),
    "extreme-user-labelled": lambda: extreme_user_pair(_LABELLED, np.ones(3), labels=(1.0, -1.0)),
    "extreme-item": lambda: extreme_item_pair(_BASE, np.ones(3), user=1, item=3),
    "P1": lambda: halting_threshold_pair(50, None, m=16),
    "Q1": lambda: halting_threshold_pair(40, 35, m=4, d=2, cluster_b=1.0),
    "P2": lambda: far_outlier_pair(10, 16),
    "P3": lambda: far_outlier_pair(10, 16, d=2, displacement=[0.3, 0.0], base=1.0),
    "P4": lambda: balanced_clusters_pair(11, 16),
    "Q4": lambda: balanced_clusters_pair(12, 3, majority=1.0),
    "bottom-k": lambda: outlier_count_pair(20, 8, k=19),
    "bottom-1": lambda: outlier_count_pair(20, 8, k=1),
    "blank-zero": lambda: blank_canary_pair(16, d=2, canary=4.0),
    "blank-flip": lambda: blank_canary_pair(16, canary=4.0, position=3, mode="flip"),
    "blank-remove": lambda: blank_canary_pair(16, canary=[1.0, 2.0], d=2, mode="remove"),
    "heavy": lambda: heavy_outlier_pair(),
    "diff2": lambda: signed_quadratic_canary_pair(),
}


@pytest.mark.parametrize("name", list(PAIRS))
def test_pairs_are_neighbours_for_their_unit_and_relation(name):
    pair = PAIRS[name]()
    d0, d1 = pair
    assert d0 is pair.d0 and d1 is pair.d1
    assert are_neighbours(d0, d1, pair.unit, pair.relation)
    assert d0 != d1  # never a trivial pair
    assert pair.source.startswith("spec") or "extreme" in pair.source
    info = pair.to_dict()
    assert info["unit"] == pair.unit and info["relation"] == pair.relation


@pytest.mark.parametrize("name", [k for k in PAIRS if PAIRS[k]().unit == "user"])
def test_user_pairs_are_not_item_neighbours_when_m_exceeds_one(name):
    pair = PAIRS[name]()
    assert pair.d0.m > 1
    assert not are_neighbours(pair.d0, pair.d1, "item", pair.relation)


def test_item_pairs_with_m_one_are_also_user_neighbours():
    for name in ("blank-zero", "blank-flip", "heavy"):
        pair = PAIRS[name]()
        assert pair.d0.m == 1 and are_neighbours(pair.d0, pair.d1, "user", pair.relation)


def test_neighbour_pair_rejects_non_neighbours():
    x = np.zeros((3, 2, 1))
    far = x.copy()
    far[:2] = 1.0
    with pytest.raises(NotNeighboursError):
        NeighbourPair(UserDataset(x), UserDataset(far), "user", "replace")
    with pytest.raises(InputError, match="unit"):
        NeighbourPair(UserDataset(x), UserDataset(x), "silo", "replace")


def test_spec000_cluster_pairs_have_the_stated_structure():
    size = 1407
    k = halting_threshold_size(size)
    assert k / size == pytest.approx(0.8873, abs=2e-3)
    s = lambda kk: ((kk - 1) ** 2 + (size - kk) ** 2 + 1) / size  # noqa: E731
    assert s(k) >= 0.8 * size > s(k - 1)
    d0, d1 = halting_threshold_pair(size, None, m=16)
    z0, z1 = d0.x[:, 0, 0], d1.x[:, 0, 0]
    assert np.all(d0.x == d0.x[:, :1])  # identical items per user
    assert np.sum(z0 == 0) == k and np.sum(z0 == -1) == size - k
    assert z1[0] == 1.0 and np.array_equal(z1[1:], z0[1:])
    p4 = balanced_clusters_pair(11, 4)
    assert np.sum(p4.d0.x[:, 0, 0] == -1) == 6 and np.sum(p4.d1.x[:, 0, 0] == -1) == 5


def test_spec001_outlier_count_pair():
    d0, d1 = outlier_count_pair(20, 5, k=19, outlier=2.0)
    outliers = lambda data: int(np.sum(np.all(data.x[..., 0] == 2.0, axis=1)))  # noqa: E731
    assert outliers(d0) == 19 and outliers(d1) == 18
    assert np.all((d0.x == 0) | (d0.x == 2.0))
    with pytest.raises(InputError, match="k must"):
        outlier_count_pair(5, 2, k=6)


def test_spec002_blank_canary_gradients_vanish_except_the_canary():
    loss = LinearLoss()
    theta = np.random.default_rng(1).normal(size=(3, 2))
    d0, d1 = blank_canary_pair(8, d=2, canary=[3.0, 4.0])
    g0, g1 = loss.grad(theta, d0.x[:, 0]), loss.grad(theta, d1.x[:, 0])
    np.testing.assert_array_equal(g0[:, 1:], 0.0)
    np.testing.assert_array_equal(g0[:, 0], np.tile([-3.0, -4.0], (3, 1)))  # δ = −g
    np.testing.assert_array_equal(g1, 0.0)
    flipped = blank_canary_pair(8, d=2, canary=[3.0, 4.0], mode="flip")
    np.testing.assert_array_equal(flipped.d1.x[0, 0], [-3.0, -4.0])
    removed = blank_canary_pair(8, canary=1.0, mode="remove")
    assert removed.d1.n == 7 and np.all(removed.d1.x == 0)
    with pytest.raises(InputError, match="mode"):
        blank_canary_pair(8, mode="swap")


def test_spec003_heavy_outlier_encodes_weighted_absolute_loss():
    d0, d1 = heavy_outlier_pair()
    assert d0.n == 200
    a = d0.x[:, 0, 0]
    assert a[0] == 1e6 and np.all(a[1:] == 1)
    b0, b1 = d0.y[:, 0] / a, d1.y[:, 0] / a
    assert b0[0] == -5 and b1[0] == 5 and np.sum(b0 == -1) == 99 and np.sum(b0 == 1) == 100
    w = np.array([[0.3], [-0.7]])
    np.testing.assert_allclose(AbsoluteLoss().value(w, d0.x[:, 0], d0.y[:, 0]), a * np.abs(w - b0))


def test_spec004_signed_quadratic_canary():
    loss = WeightedSquaredDistanceLoss(strength=1e6)
    d0, d1 = signed_quadratic_canary_pair(silos=2, per_silo=5, d=2)
    theta = np.random.default_rng(2).normal(size=(4, 2))
    g0, g1 = loss.grad(theta, d0.x, d0.y), loss.grad(theta, d1.x, d1.y)
    np.testing.assert_array_equal(g0.reshape(4, 10, 2)[:, 1:], 0.0)
    np.testing.assert_allclose(g0[:, 0, 0], 1e6 * (theta - 5.0))
    np.testing.assert_allclose(g1[:, 0, 0], -g0[:, 0, 0])
    assert are_neighbours(d0, d1, "item") and d0.m == 5


def test_users_at_points_and_bad_inputs():
    data = users_at_points(np.array([[1.0, 2.0], [3.0, 4.0]]), 3)
    assert data.x.shape == (2, 3, 2) and np.all(data.x[1] == [3.0, 4.0])
    with pytest.raises(InputError, match="labels"):
        extreme_user_pair(_LABELLED, np.ones(3))
    with pytest.raises(InputError, match="point"):
        extreme_user_pair(_BASE, np.ones(2))
    with pytest.raises(InputError, match="UserDataset"):
        extreme_item_pair(np.zeros((2, 2, 2)), np.ones(2))
    with pytest.raises(InputError, match="user"):
        extreme_user_pair(_BASE, np.ones(3), user=10)
