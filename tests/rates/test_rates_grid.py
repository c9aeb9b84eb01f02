import numpy as np
import pytest

from dpclaims.errors import InputError
from dpclaims.rates import check_grid, geometric_grid


def test_geometric_grid_spans_endpoints_evenly_on_log_scale():
    grid = geometric_grid(100, 10_000, 5)
    np.testing.assert_allclose(grid, [100, 316.227766, 1000, 3162.27766, 10_000])
    np.testing.assert_allclose(np.diff(np.log(grid)), np.log(10) / 2)


def test_integer_grid_is_int64_and_strictly_increasing():
    grid = geometric_grid(10, 1000, 7, integer=True)
    assert grid.dtype == np.int64
    assert grid[0] == 10 and grid[-1] == 1000
    assert np.all(np.diff(grid) > 0)


def test_integer_grid_refuses_rounding_to_repeats():
    with pytest.raises(InputError, match="repeated whole numbers"):
        geometric_grid(1, 10, 20, integer=True)


@pytest.mark.parametrize(
    "args, match",
    [
        ((100, 10_000, 3), "points must be a whole number >= 4"),
        ((100, 500, 5), "spans 0.70 decade"),
        ((0, 100, 5), "low must be a finite number > 0"),
        ((100, float("nan"), 5), "high must be a finite number > 0"),
        ((1000, 100, 5), "high must exceed low"),
    ],
)
def test_geometric_grid_rejects_bad_arguments(args, match):
    with pytest.raises(InputError, match=match):
        geometric_grid(*args)


@pytest.mark.parametrize(
    "values, match",
    [
        ([1, 10, 100], "values has 3 point"),
        ([1, 2, 3, 4, 5], "spans 0.70 decade"),
        ([1, 10, 10, 100], r"repeated value\(s\) \[10.0\]"),
        ([-1, 10, 100, 1000], "values must be positive"),
        ([1, 10, float("nan"), 100], "values contains 1 NaN"),
        ([[1, 10], [100, 1000]], "values must have 1 dimensions"),
    ],
)
def test_check_grid_names_the_argument(values, match):
    with pytest.raises(InputError, match=match):
        check_grid(values)


def test_check_grid_accepts_unsorted_grid():
    np.testing.assert_array_equal(check_grid([1000, 10, 100, 1]), [1000, 10, 100, 1])
