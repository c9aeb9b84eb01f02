import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.data import (
    UserDataset,
    are_neighbours,
    neighbour_distance,
    remove_user,
    replace_item,
    replace_user,
)
from dpclaims.errors import InputError


def make(n=5, m=3, d=2, seed=0, labelled=False):
    rng = np.random.default_rng(seed)
    return UserDataset(rng.normal(size=(n, m, d)), rng.normal(size=(n, m)) if labelled else None)


shapes = st.tuples(st.integers(2, 6), st.integers(1, 4), st.integers(1, 3))


def test_shapes_and_immutability():
    data = make()
    assert (data.n, data.m, data.d) == (5, 3, 2)
    assert data.items.shape == (15, 2)
    with pytest.raises(ValueError):
        data.x[0, 0, 0] = 1.0


def test_two_dimensional_x_is_item_level():
    data = UserDataset(np.zeros((4, 2)), np.ones(4))
    assert (data.n, data.m, data.d) == (4, 1, 2)
    assert data.y.shape == (4, 1)


@pytest.mark.parametrize(
    "x, y, fragment",
    [
        (np.full((2, 1, 1), np.nan), None, "NaN"),
        (np.zeros((2, 2, 2, 2)), None, r"shape \(n, m, d\)"),
        (np.zeros((0, 1, 1)), None, "at least one user"),
        (np.zeros((2, 3, 1)), np.zeros((2, 2)), "y must have shape"),
        ([["a"]], None, "numeric"),
    ],
)
def test_bad_datasets_are_refused(x, y, fragment):
    with pytest.raises(InputError, match=fragment):
        UserDataset(x, y)


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_replace_user_is_a_user_neighbour_only(shape, draw):
    n, m, d = shape
    data = make(n, m, d, seed=draw.draw(st.integers(0, 10**6)))
    user = draw.draw(st.integers(0, n - 1))
    other = replace_user(data, user, np.full((m, d), 7.0))
    assert are_neighbours(data, other, "user", "replace")
    assert neighbour_distance(data, other, "user") == 1
    assert neighbour_distance(data, other, "item") == m
    assert are_neighbours(data, other, "item", "replace") == (m == 1)
    assert not are_neighbours(data, other, "user", "add-remove")


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_replace_item_is_both_item_and_user_neighbour(shape, draw):
    n, m, d = shape
    data = make(n, m, d, seed=1, labelled=True)
    i, j = draw.draw(st.integers(0, n - 1)), draw.draw(st.integers(0, m - 1))
    other = replace_item(data, i, j, np.full(d, 9.0), 3.0)
    assert are_neighbours(data, other, "item", "replace")
    assert are_neighbours(data, other, "user", "replace")


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_remove_user_is_add_remove_neighbour_in_both_orders(shape, draw):
    n, m, d = shape
    data = make(n, m, d, seed=2)
    smaller = remove_user(data, draw.draw(st.integers(0, n - 1)))
    assert smaller.n == n - 1
    assert are_neighbours(data, smaller, "user", "add-remove")
    assert are_neighbours(smaller, data, "user", "add-remove")
    assert not are_neighbours(data, smaller, "user", "replace")
    if n >= 3:
        assert not are_neighbours(data, remove_user(smaller, 0), "user", "add-remove")


def test_two_changes_are_not_neighbours():
    data = make()
    other = replace_user(replace_user(data, 0, np.ones((3, 2))), 4, np.ones((3, 2)))
    assert not are_neighbours(data, other)
    assert neighbour_distance(data, other) == 2


def test_identical_datasets_are_neighbours_and_label_changes_count():
    data = make(labelled=True)
    assert are_neighbours(data, make(labelled=True))
    relabelled = replace_item(data, 1, 1, data.x[1, 1], 42.0)
    assert neighbour_distance(data, relabelled, "item") == 1
    assert not are_neighbours(data, make(), "user")


def test_removal_that_reorders_users_is_not_a_neighbour():
    data = make(n=4)
    shuffled = UserDataset(data.x[[1, 0, 2]])
    assert not are_neighbours(data, shuffled, "user", "add-remove")


def test_item_level_add_remove_requires_one_item_per_user():
    data = make(m=3)
    with pytest.raises(InputError, match="m = 1"):
        are_neighbours(data, remove_user(data, 0), "item", "add-remove")
    flat = make(m=1)
    assert are_neighbours(flat, remove_user(flat, 2), "item", "add-remove")


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda d: replace_user(d, 9, np.zeros((3, 2))), "user must be an integer index"),
        (lambda d: replace_user(d, 0, np.zeros((2, 2))), "x_new must have shape"),
        (lambda d: replace_item(d, 0, 5, np.zeros(2)), "item must be an integer index"),
        (lambda d: replace_user(d, 0, np.zeros((3, 2)), np.zeros(3)), "unlabelled"),
        (lambda d: are_neighbours(d, d, unit="group"), "unit must be one of"),
        (lambda d: are_neighbours(d, d.x), "UserDataset"),
    ],
)
def test_bad_neighbour_arguments(call, fragment):
    with pytest.raises(InputError, match=fragment):
        call(make())


def test_array_neighbours_rows_are_records():
    from dpclaims.data import check_array_neighbours, read_only
    from dpclaims.errors import NotNeighboursError

    x = np.arange(12.0).reshape(4, 3)
    check_array_neighbours(x, np.delete(x, 2, axis=0), "add-remove")
    check_array_neighbours(1.0, 5.0, "replace")  # a number is a one-record dataset
    with pytest.raises(NotNeighboursError, match="one row deleted"):
        check_array_neighbours(x, np.delete(x, [1, 2], axis=0), "add-remove")
    with pytest.raises(NotNeighboursError, match="rows of different shapes"):
        check_array_neighbours(x, x[:, :2], "replace")
    with pytest.raises(NotNeighboursError, match="pass relation='add-remove'"):
        check_array_neighbours(x, x[1:], "replace")
    with pytest.raises(NotNeighboursError, match="pass relation='replace'"):
        check_array_neighbours(x, x + (np.arange(4) == 0)[:, None], "add-remove")
    with pytest.raises(InputError, match="sensitivity= is for relation='query'"):
        check_array_neighbours(x, x, "replace", sensitivity=1.0)
    view = read_only(x)
    assert not view.flags.writeable and x.flags.writeable


# --------------------------------------------------------------------------------------------
# GroupedMeans: user means as the dataset, neighbours checked on the means.
# --------------------------------------------------------------------------------------------


def test_grouped_means_replace_neighbours_are_checked_per_user():
    from dpclaims.data import GroupedMeans

    means = np.arange(12.0).reshape(6, 2)
    d0 = GroupedMeans.per_user(means, 10**12)
    moved = means.copy()
    moved[3] += 1.0
    d1 = GroupedMeans.per_user(moved, 10**12)
    assert neighbour_distance(d0, d1) == 1 and are_neighbours(d0, d1)
    moved[4] += 1.0
    assert neighbour_distance(d0, GroupedMeans.per_user(moved, 10**12)) == 2
    assert not are_neighbours(d0, GroupedMeans.per_user(moved, 10**12))
    assert not are_neighbours(d0, GroupedMeans.per_user(means, 10))  # m differs
    with pytest.raises(InputError, match="item-level neighbours of GroupedMeans"):
        are_neighbours(d0, d1, unit="item")
    with pytest.raises(InputError, match="both be UserDataset or both GroupedMeans"):
        are_neighbours(d0, UserDataset(means[:, None, :]))


def test_grouped_means_add_remove_and_pooled_groups():
    from dpclaims.data import GroupedMeans, shape_mismatch

    means = np.arange(5.0)[:, None]
    d0 = GroupedMeans.per_user(means, 3)
    assert are_neighbours(
        d0, GroupedMeans.per_user(np.delete(means, 2, axis=0), 3), "user", "add-remove"
    )
    assert not are_neighbours(d0, GroupedMeans.per_user(means[:3], 3), "user", "add-remove")
    pooled = GroupedMeans(means=np.array([[0.0], [1.0]]), sizes=np.array([2, 3]), m=3)
    same_shape = GroupedMeans(means=np.array([[0.0], [2.0]]), sizes=np.array([2, 3]), m=3)
    with pytest.raises(InputError, match="pooling several users"):
        are_neighbours(pooled, same_shape)
    regrouped = GroupedMeans(means=np.array([[0.0], [1.0]]), sizes=np.array([3, 2]), m=3)
    assert not are_neighbours(pooled, regrouped)
    assert "user groups differ" in shape_mismatch(pooled, regrouped)


def test_grouped_means_validation_and_blocks():
    from dpclaims.data import GroupedMeans, as_grouped

    with pytest.raises(InputError, match="m must be a whole number"):
        GroupedMeans.per_user(np.zeros((3, 1)), 0)
    with pytest.raises(InputError, match="sizes must be positive integers"):
        GroupedMeans(means=np.zeros((2, 1)), sizes=np.array([1, 0]), m=1)
    data = GroupedMeans(means=np.array([[1.0], [4.0]]), sizes=np.array([1, 3]), m=2)
    assert (data.n, data.d, data.mean().tolist()) == (4, 1, [3.25])
    assert data.block(1, 4).n == 3
    with pytest.raises(InputError, match="group boundaries"):
        data.block(0, 2)
    users = as_grouped(UserDataset(np.ones((3, 2, 1))))
    assert users.point_mass and users.per_user_stats and users.m == 2
    with pytest.raises(InputError, match="data must be"):
        as_grouped(np.zeros(3))
