"""User-level datasets and their neighbour relations.

A :class:`UserDataset` holds ``n`` users with ``m`` items each: features ``x``
of shape ``(n, m, d)`` and optional labels ``y`` of shape ``(n, m)``.  Item-level
data is ``m = 1``.  The neighbour constructions return new datasets; datasets are
immutable (their arrays are read-only), so a neighbour never aliases a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError, check_choice, check_finite_array

__all__ = [
    "UNITS",
    "RELATIONS",
    "UserDataset",
    "replace_user",
    "replace_item",
    "remove_user",
    "are_neighbours",
    "neighbour_distance",
]

UNITS = ("user", "item")
RELATIONS = ("replace", "add-remove")


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.float64, copy=True)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class UserDataset:
    """``n`` users × ``m`` items of ``d`` features, with optional labels.

    Parameters
    ----------
    x : array (n, m, d)
        Features; finite.  A 2-D array ``(n, d)`` is read as item-level data (m = 1).
    y : array (n, m), optional
        Labels; finite.  A 1-D array ``(n,)`` is accepted with 2-D ``x``.
    """

    x: np.ndarray
    y: np.ndarray | None = None

    def __post_init__(self) -> None:
        x = check_finite_array(self.x, "x")
        if x.ndim == 2:
            x = x[:, None, :]
        if x.ndim != 3:
            raise InputError(f"x must have shape (n, m, d) (or (n, d) for one item per user), got shape {x.shape}")
        if 0 in x.shape:
            raise InputError(f"x must have at least one user, item and feature, got shape {x.shape}")
        object.__setattr__(self, "x", _frozen(x))
        if self.y is not None:
            y = check_finite_array(self.y, "y")
            if y.ndim == 1 and x.shape[1] == 1:
                y = y[:, None]
            if y.shape != x.shape[:2]:
                raise InputError(f"y must have shape (n, m) = {x.shape[:2]} to match x, got shape {y.shape}")
            object.__setattr__(self, "y", _frozen(y))

    @property
    def n(self) -> int:
        """Number of users."""
        return self.x.shape[0]

    @property
    def m(self) -> int:
        """Items per user."""
        return self.x.shape[1]

    @property
    def d(self) -> int:
        """Feature dimension."""
        return self.x.shape[2]

    @property
    def items(self) -> np.ndarray:
        """All items flattened to shape ``(n * m, d)`` (users in order)."""
        return self.x.reshape(-1, self.d)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UserDataset):
            return NotImplemented
        same_y = (self.y is None and other.y is None) or (
            self.y is not None and other.y is not None and np.array_equal(self.y, other.y)
        )
        return self.x.shape == other.x.shape and np.array_equal(self.x, other.x) and same_y

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict:
        """Shape summary (not the data) for reports."""
        return {"n": self.n, "m": self.m, "d": self.d, "labelled": self.y is not None}


def _check_index(value: Any, size: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not -size <= value < size:
        raise InputError(f"{name} must be an integer index in [0, {size}), got {value!r}")
    return int(value) % size


def _labels_required(data: UserDataset, new_y: Any, name: str) -> None:
    if (data.y is None) != (new_y is None):
        need = "pass" if data.y is not None else "omit"
        raise InputError(f"{name}: the dataset is {'labelled' if data.y is not None else 'unlabelled'}; {need} the new label(s)")


def replace_user(data: UserDataset, user: int, x_new: Any, y_new: Any = None) -> UserDataset:
    """Return ``data`` with user ``user``'s items replaced.

    ``x_new`` has shape ``(m, d)``; ``y_new`` shape ``(m,)`` when the data is labelled.
    """
    i = _check_index(user, data.n, "user")
    x_new = check_finite_array(x_new, "x_new")
    if x_new.shape not in ((data.m, data.d), (data.d,) if data.m == 1 else ()):
        raise InputError(f"x_new must have shape (m, d) = ({data.m}, {data.d}), got {x_new.shape}")
    _labels_required(data, y_new, "y_new")
    x = np.array(data.x)
    x[i] = x_new
    y = None
    if data.y is not None:
        y = np.array(data.y)
        y[i] = check_finite_array(y_new, "y_new").reshape(data.m)
    return UserDataset(x, y)


def replace_item(data: UserDataset, user: int, item: int, x_new: Any, y_new: Any = None) -> UserDataset:
    """Return ``data`` with item ``item`` of user ``user`` replaced by ``x_new`` (shape ``(d,)``)."""
    i = _check_index(user, data.n, "user")
    j = _check_index(item, data.m, "item")
    x_new = check_finite_array(x_new, "x_new")
    if x_new.shape != (data.d,):
        raise InputError(f"x_new must have shape (d,) = ({data.d},), got {x_new.shape}")
    _labels_required(data, y_new, "y_new")
    x = np.array(data.x)
    x[i, j] = x_new
    y = None
    if data.y is not None:
        y = np.array(data.y)
        y[i, j] = float(check_finite_array(y_new, "y_new").reshape(()))
    return UserDataset(x, y)


def remove_user(data: UserDataset, user: int) -> UserDataset:
    """Return ``data`` without user ``user`` (n − 1 users, order kept)."""
    i = _check_index(user, data.n, "user")
    if data.n == 1:
        raise InputError("remove_user needs a dataset with at least 2 users; an empty dataset cannot be represented")
    keep = np.arange(data.n) != i
    return UserDataset(data.x[keep], None if data.y is None else data.y[keep])


def _differing_units(d0: UserDataset, d1: UserDataset, unit: str) -> int:
    """Number of users (unit='user') or items (unit='item') in which two same-shape datasets differ."""
    diff = np.any(d0.x != d1.x, axis=2)
    if d0.y is not None:
        diff |= d0.y != d1.y
    return int(np.count_nonzero(np.any(diff, axis=1) if unit == "user" else diff))


def _is_one_removal(big: UserDataset, small: UserDataset) -> bool:
    """True when ``small`` is ``big`` with exactly one user deleted (order kept)."""
    prefix = np.all(big.x[:-1] == small.x, axis=(1, 2))
    suffix = np.all(big.x[1:] == small.x, axis=(1, 2))
    if big.y is not None:
        prefix &= np.all(big.y[:-1] == small.y, axis=1)
        suffix &= np.all(big.y[1:] == small.y, axis=1)
    # user k removed  <=>  rows < k agree with big[:-1] and rows >= k agree with big[1:]
    ok_prefix = np.concatenate([[True], np.cumprod(prefix).astype(bool)])
    ok_suffix = np.concatenate([np.cumprod(suffix[::-1])[::-1].astype(bool), [True]])
    return bool(np.any(ok_prefix & ok_suffix))


def neighbour_distance(d0: UserDataset, d1: UserDataset, unit: str = "user", relation: str = "replace") -> int | None:
    """Number of ``unit``s changed between ``d0`` and ``d1`` under ``relation``.

    Returns ``None`` when ``d1`` cannot be reached from ``d0`` by such changes
    (different shapes under ``replace``, or not a single removal under ``add-remove``).
    """
    check_choice(unit, UNITS, "unit")
    check_choice(relation, RELATIONS, "relation")
    if not isinstance(d0, UserDataset) or not isinstance(d1, UserDataset):
        raise InputError("d0 and d1 must both be UserDataset instances")
    if (d0.y is None) != (d1.y is None):
        return None
    if relation == "replace":
        if d0.x.shape != d1.x.shape:
            return None
        return _differing_units(d0, d1, unit)
    if unit == "item" and max(d0.m, d1.m) > 1:
        raise InputError(
            "item-level add-remove neighbours need one item per user (m = 1); "
            "use relation='replace' for datasets with m > 1"
        )
    if d0.x.shape == d1.x.shape:
        return 0 if d0 == d1 else None
    big, small = (d0, d1) if d0.n > d1.n else (d1, d0)
    if big.n != small.n + 1 or big.x.shape[1:] != small.x.shape[1:]:
        return None
    return 1 if _is_one_removal(big, small) else None


def are_neighbours(d0: UserDataset, d1: UserDataset, unit: str = "user", relation: str = "replace") -> bool:
    """True when ``d0`` and ``d1`` differ in at most one ``unit`` under ``relation``.

    Identical datasets are neighbours (distance 0), as in the definition of DP.
    ``unit="user", relation="replace"``: same shape, at most one user's block differs.
    ``unit="item", relation="replace"``: same shape, at most one item differs.
    ``relation="add-remove"``: one dataset is the other with one user (item, for m = 1) deleted.
    """
    distance = neighbour_distance(d0, d1, unit, relation)
    return distance is not None and distance <= 1
