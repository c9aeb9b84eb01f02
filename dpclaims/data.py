"""User-level datasets and their neighbour relations.

A :class:`UserDataset` holds ``n`` users with ``m`` items each: features ``x``
of shape ``(n, m, d)`` and optional labels ``y`` of shape ``(n, m)``.  Item-level
data is ``m = 1``.  A :class:`GroupedMeans` holds only the users' item means (for
losses that see the data through means), so ``m`` can be far larger than memory.
The neighbour constructions return new datasets; datasets are immutable (their
arrays are read-only), so a neighbour never aliases a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .errors import InputError, check_choice, check_count, check_finite_array
from .vocabulary import ARRAY_RELATIONS, RELATIONS, UNITS, Relation, Unit

__all__ = [
    "UNITS",
    "RELATIONS",
    "UserDataset",
    "GroupedMeans",
    "GradientCanaryDataset",
    "DATASETS",
    "as_grouped",
    "replace_user",
    "replace_item",
    "remove_user",
    "are_neighbours",
    "neighbour_distance",
    "shape_mismatch",
    "ARRAY_RELATIONS",
    "read_only",
    "check_array_neighbours",
]


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
            raise InputError(
                "x must have shape (n, m, d) (or (n, d) for one item per user), got shape "
                f"{x.shape}"
            )
        if 0 in x.shape:
            raise InputError(
                f"x must have at least one user, item and feature, got shape {x.shape}"
            )
        object.__setattr__(self, "x", _frozen(x))
        if self.y is not None:
            y = check_finite_array(self.y, "y")
            if y.ndim == 1 and x.shape[1] == 1:
                y = y[:, None]
            if y.shape != x.shape[:2]:
                raise InputError(
                    f"y must have shape (n, m) = {x.shape[:2]} to match x, got shape {y.shape}"
                )
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


@dataclass(frozen=True, eq=False, kw_only=True)
class GroupedMeans:
    """Per-user item means, possibly pooled into consecutive groups of users ("virtual m").

    The sufficient statistics of losses that see the data only through item means (spec 001
    §7(b)); ``n·m`` items need not be stored, so m may be 10^12.  Neighbours are checked on the
    user means: replacing a user changes one row of a per-user dataset.

    Attributes
    ----------
    means : array (g, d), the average item of each group (a group of size 1 is one user)
    sizes : int array (g,), users per group (sum = n)
    m : items per user (any positive integer: the items themselves are never stored)
    point_mass : True when every item equals its group's mean (the ℓ1 loss's minimiser needs it)
    """

    means: np.ndarray
    sizes: np.ndarray
    m: int
    point_mass: bool = False

    def __post_init__(self) -> None:
        means = check_finite_array(self.means, "means", ndim=2).copy()
        sizes = np.asarray(self.sizes)
        if sizes.shape != (means.shape[0],) or sizes.dtype.kind not in "iu" or np.any(sizes < 1):
            raise InputError(
                f"sizes must be positive integers, one per group ({means.shape[0]}), "
                f"got {self.sizes!r}"
            )
        means.setflags(write=False)
        sizes = sizes.astype(np.int64)
        sizes.setflags(write=False)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "m", check_count(self.m, "m"))

    @classmethod
    def per_user(cls, means, m: int, *, point_mass: bool = False) -> GroupedMeans:
        """One group per user: ``means (n, d)``."""
        means = np.asarray(means, dtype=np.float64)
        sizes = np.ones(len(means), dtype=np.int64)
        return cls(means=means, sizes=sizes, m=m, point_mass=point_mass)

    @classmethod
    def from_dataset(cls, data: UserDataset) -> GroupedMeans:
        """User means of a :class:`UserDataset` (labels are not used by mean losses)."""
        point_mass = bool(np.all(data.x == data.x[:, :1, :]))
        return cls.per_user(data.x.mean(axis=1), data.m, point_mass=point_mass)

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def per_user_stats(self) -> bool:
        """True when every group is one user (the stability test and the certificate need it)."""
        return bool(np.all(self.sizes == 1))

    @property
    def boundaries(self) -> np.ndarray:
        """User indices where groups start, plus n: (g+1,)."""
        return np.concatenate([[0], np.cumsum(self.sizes)])

    def mean(self) -> np.ndarray:
        """Mean of all n·m items (d,)."""
        return self._mean

    @cached_property
    def _mean(self) -> np.ndarray:
        return self.sizes.astype(np.float64) @ self.means / self.n

    def block(self, lo: int, hi: int) -> GroupedMeans:
        """Users ``lo..hi−1``; ``lo`` and ``hi`` must be group boundaries."""
        b = self.boundaries
        where = np.searchsorted(b, [lo, hi])
        if (
            not (0 <= lo < hi <= self.n)
            or b[min(where[0], len(b) - 1)] != lo
            or b[min(where[1], len(b) - 1)] != hi
        ):
            raise InputError(f"block [{lo}, {hi}) does not fall on group boundaries {b.tolist()}")
        return GroupedMeans(
            means=self.means[where[0] : where[1]],
            sizes=self.sizes[where[0] : where[1]],
            m=self.m,
            point_mass=self.point_mass,
        )

    def require_per_user(self, what: str) -> None:
        if not self.per_user_stats:
            raise InputError(
                f"{what} needs per-user statistics; pass a UserDataset or "
                "GroupedMeans.per_user(...)"
            )

    def types(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct user means ``(t, d)`` and their counts ``(t,)`` (spec §2.1 type compression)."""
        self.require_per_user("type compression")
        values, counts = np.unique(self.means, axis=0, return_counts=True)
        return values, counts.astype(np.int64)

    def max_deviation(self) -> float:
        """``max_u ‖z̄_u − z̄‖`` over users (per-user statistics only)."""
        self.require_per_user("the gradient certificate")
        return self._max_deviation

    @cached_property
    def _max_deviation(self) -> float:
        return float(np.sqrt(np.max(np.sum((self.means - self.mean()) ** 2, axis=1))))

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "m": self.m,
            "d": self.d,
            "groups": int(len(self.sizes)),
            "point_mass": self.point_mass,
        }


@dataclass(frozen=True, eq=False)
class GradientCanaryDataset:
    """A :class:`UserDataset` plus one *gradient canary*: a unit whose gradient is the fixed
    vector ``gradient`` at every step, whatever the model (Nasr et al. 2023, "Tight auditing of
    differentially private machine learning", §4: the worst case of clipping).

    An algorithm that takes it (e.g. :class:`~dpclaims.algorithms.baselines.DPSGD`) treats the
    canary as one more unit (an item at item level, a user at user level), sampled and clipped
    like the others.  Its add/remove neighbour is ``data`` itself; under replace it is the same
    ``data`` with another canary gradient.

    Parameters
    ----------
    data : UserDataset
    gradient : array (d,), finite: the canary's gradient before clipping
    """

    data: UserDataset
    gradient: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.data, UserDataset):
            raise InputError(
                f"data must be a UserDataset, got {type(self.data).__name__}; wrap your "
                "features as UserDataset(x, y)"
            )
        gradient = check_finite_array(self.gradient, "gradient")
        if gradient.shape != (self.data.d,):
            raise InputError(
                f"gradient must have shape (d,) = ({self.data.d},) to match the data, got "
                f"shape {gradient.shape}"
            )
        object.__setattr__(self, "gradient", _frozen(gradient))

    @property
    def n(self) -> int:
        """Users of ``data`` (the canary is not counted)."""
        return self.data.n

    @property
    def m(self) -> int:
        return self.data.m

    @property
    def d(self) -> int:
        return self.data.d

    @property
    def y(self) -> np.ndarray | None:
        return self.data.y

    def to_dict(self) -> dict:
        return {**self.data.to_dict(), "gradient_canary_norm": float(np.linalg.norm(self.gradient))}


def _canary_distance(d0: Any, d1: Any, unit: str, relation: str) -> int | None:
    """:func:`neighbour_distance` when either dataset carries a gradient canary: the base data's
    distance plus one for a canary added (add-remove) or changed (replace)."""
    base0 = d0.data if isinstance(d0, GradientCanaryDataset) else d0
    base1 = d1.data if isinstance(d1, GradientCanaryDataset) else d1
    if not isinstance(base0, UserDataset) or not isinstance(base1, UserDataset):
        raise InputError(
            "a GradientCanaryDataset is compared with a UserDataset or another "
            f"GradientCanaryDataset, got {type(d0).__name__} and {type(d1).__name__}"
        )
    base = neighbour_distance(base0, base1, unit, relation)
    g0, g1 = (getattr(d, "gradient", None) for d in (d0, d1))
    if relation == Relation.REPLACE:
        if (g0 is None) != (g1 is None):
            return None
        changed = g0 is not None and not np.array_equal(g0, g1)
    else:
        if g0 is not None and g1 is not None and not np.array_equal(g0, g1):
            return None
        changed = (g0 is None) != (g1 is None)
        if changed and base:
            return None  # one unit added in each direction is not one removal
    return None if base is None else base + int(changed)


DATASETS = (UserDataset, GroupedMeans, GradientCanaryDataset)
"""The dataset types whose neighbour relation :func:`neighbour_distance` checks."""
Dataset = UserDataset | GroupedMeans | GradientCanaryDataset


def as_grouped(data) -> GroupedMeans:
    """``UserDataset`` or ``GroupedMeans`` → ``GroupedMeans``."""
    if isinstance(data, GroupedMeans):
        return data
    if isinstance(data, UserDataset):
        return GroupedMeans.from_dataset(data)
    raise InputError(f"data must be a UserDataset or a GroupedMeans, got {type(data).__name__}")


def _check_index(value: Any, size: int, name: str) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not -size <= value < size
    ):
        raise InputError(f"{name} must be an integer index in [0, {size}), got {value!r}")
    return int(value) % size


def _labels_required(data: UserDataset, new_y: Any, name: str) -> None:
    if (data.y is None) != (new_y is None):
        need = "pass" if data.y is not None else "omit"
        raise InputError(
            f"{name}: the dataset is {'labelled' if data.y is not None else 'unlabelled'}; {need} "
            "the new label(s)"
        )


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


def replace_item(
    data: UserDataset, user: int, item: int, x_new: Any, y_new: Any = None
) -> UserDataset:
    """Return ``data`` with item ``item`` of user ``user`` replaced by ``x_new`` (shape (d,))."""
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
        raise InputError(
            "remove_user needs a dataset with at least 2 users; an empty dataset cannot be "
            "represented"
        )
    keep = np.arange(data.n) != i
    return UserDataset(data.x[keep], None if data.y is None else data.y[keep])


def _differing_units(d0: UserDataset, d1: UserDataset, unit: str) -> int:
    """Number of users (unit='user') or items (unit='item') in which same-shape datasets differ."""
    diff = np.any(d0.x != d1.x, axis=2)
    if d0.y is not None:
        diff |= d0.y != d1.y
    return int(np.count_nonzero(np.any(diff, axis=1) if unit == Unit.USER else diff))


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


def _grouped_distance(d0: GroupedMeans, d1: GroupedMeans, unit: str, relation: str) -> int | None:
    """:func:`neighbour_distance` on user means: a replaced user changes one row of its group."""
    if d0.m != d1.m or d0.d != d1.d:
        return None
    if unit == Unit.ITEM and d0.m > 1:
        raise InputError(
            "item-level neighbours of GroupedMeans need m = 1 (a user's mean hides which of its "
            "items changed); pass unit='user' or a UserDataset"
        )
    pooled = (
        "a group pooling several users differs between d0 and d1, so how many users changed "
        "cannot be told from its mean; pass per-user statistics (GroupedMeans.per_user)"
    )
    if relation == Relation.REPLACE:
        if not np.array_equal(d0.sizes, d1.sizes):
            return None
        changed = np.any(d0.means != d1.means, axis=1)
        if np.any(d0.sizes[changed] > 1):
            raise InputError(pooled)
        return int(np.count_nonzero(changed))
    if d0.n == d1.n:
        return (
            0 if np.array_equal(d0.sizes, d1.sizes) and np.array_equal(d0.means, d1.means) else None
        )
    if not (d0.per_user_stats and d1.per_user_stats):
        raise InputError(pooled)
    big, small = (d0, d1) if d0.n > d1.n else (d1, d0)
    if big.n != small.n + 1:
        return None
    return 1 if _one_row_removed(big.means, small.means) else None


def neighbour_distance(
    d0: Dataset, d1: Dataset, unit: str = "user", relation: str = "replace"
) -> int | None:
    """Number of ``unit``s changed between ``d0`` and ``d1`` under ``relation``.

    Returns ``None`` when ``d1`` cannot be reached from ``d0`` by such changes
    (different shapes under ``replace``, or not a single removal under ``add-remove``).
    """
    check_choice(unit, UNITS, "unit")
    check_choice(relation, RELATIONS, "relation")
    if isinstance(d0, GroupedMeans) and isinstance(d1, GroupedMeans):
        return _grouped_distance(d0, d1, unit, relation)
    if isinstance(d0, GradientCanaryDataset) or isinstance(d1, GradientCanaryDataset):
        return _canary_distance(d0, d1, unit, relation)
    if not isinstance(d0, UserDataset) or not isinstance(d1, UserDataset):
        raise InputError(
            "d0 and d1 must both be UserDataset or both GroupedMeans instances, got "
            f"{type(d0).__name__} and {type(d1).__name__}"
        )
    if (d0.y is None) != (d1.y is None):
        return None
    if relation == Relation.REPLACE:
        if d0.x.shape != d1.x.shape:
            return None
        return _differing_units(d0, d1, unit)
    if unit == Unit.ITEM and max(d0.m, d1.m) > 1:
        raise InputError(
            "item-level add-remove neighbours need one item per user (m = 1); use "
            "relation='replace' for datasets with m > 1"
        )
    if d0.x.shape == d1.x.shape:
        return 0 if d0 == d1 else None
    big, small = (d0, d1) if d0.n > d1.n else (d1, d0)
    if big.n != small.n + 1 or big.x.shape[1:] != small.x.shape[1:]:
        return None
    return 1 if _is_one_removal(big, small) else None


def shape_mismatch(d0: Dataset, d1: Dataset, relation: str = "replace") -> str | None:
    """Why ``d1`` cannot be reached from ``d0`` by ``relation`` changes, from their shapes alone
    (which dimension differs: n users, m items, d features, labels in only one), or None."""
    if isinstance(d0, GradientCanaryDataset) or isinstance(d1, GradientCanaryDataset):
        if relation == Relation.REPLACE and isinstance(d0, GradientCanaryDataset) != isinstance(
            d1, GradientCanaryDataset
        ):
            return (
                "only one dataset has a gradient canary; under relation='replace' give both "
                "one (or use relation='add-remove')"
            )
        d0 = d0.data if isinstance(d0, GradientCanaryDataset) else d0
        d1 = d1.data if isinstance(d1, GradientCanaryDataset) else d1
    if isinstance(d0, GroupedMeans) and isinstance(d1, GroupedMeans):
        if relation == Relation.REPLACE and d0.n == d1.n and not np.array_equal(d0.sizes, d1.sizes):
            return (
                f"the user groups differ: sizes {d0.sizes.tolist()} in d0, "
                f"{d1.sizes.tolist()} in d1"
            )
    elif (getattr(d0, "y", None) is None) != (getattr(d1, "y", None) is None):
        which = "d0" if d0.y is not None else "d1"
        return f"labels (y) are present only in {which}; give both datasets labels or neither"
    if d0.d != d1.d:
        return f"the feature size differs: d = {d0.d} in d0, {d1.d} in d1"
    if d0.m != d1.m:
        return f"the items per user differ: m = {d0.m} in d0, {d1.m} in d1"
    if d0.n != d1.n and (relation == Relation.REPLACE or abs(d0.n - d1.n) != 1):
        fix = (
            "relation='add-remove' takes one user more or fewer"
            if relation == Relation.REPLACE
            else "at most one"
        )
        return f"the number of users differs: n = {d0.n} in d0, {d1.n} in d1 ({fix})"
    if relation == Relation.ADD_REMOVE and d0.n == d1.n:
        return (
            f"both have n = {d0.n} users but differ; add-remove neighbours differ by one user "
            "added or removed (for one user changed in place use relation='replace')"
        )
    return None


def are_neighbours(d0: Dataset, d1: Dataset, unit: str = "user", relation: str = "replace") -> bool:
    """True when ``d0`` and ``d1`` differ in at most one ``unit`` under ``relation``.

    Identical datasets are neighbours (distance 0), as in the definition of DP.
    ``unit="user", relation="replace"``: same shape, at most one user's block differs.
    ``unit="item", relation="replace"``: same shape, at most one item differs.
    ``relation="add-remove"``: one dataset is the other with one user (item, for m = 1) deleted.
    Two :class:`GroupedMeans` are compared on their user means (per-user rows wherever they
    differ; a differing pooled group raises :class:`~dpclaims.errors.InputError`).
    """
    distance = neighbour_distance(d0, d1, unit, relation)
    return distance is not None and distance <= 1


# --------------------------------------------------------------------------------------------
# Plain arrays (and numbers) as datasets: rows are records, or the arrays are query answers.
# --------------------------------------------------------------------------------------------


def read_only(data: Any) -> Any:
    """``data`` as a mechanism may see it: a numpy array becomes a read-only view (the
    caller's array is untouched); a :class:`UserDataset` is read-only already; anything else
    is unchanged."""
    if isinstance(data, np.ndarray):
        view = data.view()
        view.setflags(write=False)
        return view
    return data


def _rows(array: np.ndarray) -> np.ndarray:
    return array.reshape(1) if array.ndim == 0 else array


def _per_coordinate(sensitivity: Any, row_shape: tuple) -> np.ndarray:
    """``sensitivity`` as an array broadcasting to the answers' shape, each entry finite, > 0."""
    message = (
        "relation='query' needs the per-coordinate sensitivity of the query, a number > 0 (or "
        f"an array of them, one per coordinate), got sensitivity={sensitivity!r}; pass e.g. "
        "sensitivity=1.0"
    )
    if sensitivity is None or isinstance(sensitivity, bool):
        raise InputError(message)
    try:
        limit = np.asarray(sensitivity, dtype=np.float64)
        np.broadcast_to(limit, row_shape)
    except (TypeError, ValueError):
        raise InputError(message) from None
    if not np.all(np.isfinite(limit) & (limit > 0)):
        raise InputError(message)
    return limit


def check_array_neighbours(d0: Any, d1: Any, relation: str, sensitivity: Any = None) -> None:
    """Raise :class:`~dpclaims.errors.NotNeighboursError` unless plain arrays ``d0``, ``d1`` are
    neighbours under ``relation`` (one of :data:`ARRAY_RELATIONS`).

    Rows (axis 0) are records; a number or 0-d array is one record.
    ``"replace"``: same shape, at most one row differs.  ``"add-remove"``: one array
    is the other with one row deleted (order kept), or they are equal.  ``"query"``:
    same shape and ``|d0 − d1| ≤ sensitivity`` in every coordinate: the per-coordinate
    sensitivity of a vector of queries (a number, or an array broadcasting to the answers), the
    setting of StatDP (Ding et al. 2018) and DP-Sniper (Bichsel et al. 2021).  A mechanism
    calibrated to an ℓ1 or ℓ2 sensitivity needs the pair checked against that norm instead:
    pass ``"unchecked"`` after checking it yourself.
    """
    from .errors import NotNeighboursError

    check_choice(relation, ARRAY_RELATIONS, "relation")
    if relation == Relation.UNCHECKED:
        return
    a0, a1 = (_rows(check_finite_array(d, name)) for d, name in ((d0, "d0"), (d1, "d1")))
    if relation == Relation.QUERY:
        limit = _per_coordinate(sensitivity, a0.shape)
        if a0.shape != a1.shape:
            raise NotNeighboursError(
                f"d0 and d1 are query answers of different shapes {a0.shape} and {a1.shape}; "
                "answers of one query on neighbouring datasets have the same shape"
            )
        excess = np.abs(a0 - a1) - limit * (1 + 1e-12)
        if np.any(excess > 0):
            where = np.unravel_index(int(np.argmax(excess)), excess.shape)
            raise NotNeighboursError(
                f"d0 and d1 differ by {abs(float(a0[where] - a1[where])):.6g} at index "
                f"{tuple(int(i) for i in where)}, more than the per-coordinate "
                f"sensitivity={sensitivity!r}; they are not answers of a query with that "
                "sensitivity on neighbouring datasets (check the pair or the sensitivity)"
            )
        return
    if sensitivity is not None:
        raise InputError(
            f"sensitivity= is for relation='query', got relation={relation!r}; omit sensitivity"
        )
    if a0.shape[1:] != a1.shape[1:]:
        raise NotNeighboursError(
            f"d0 and d1 have rows of different shapes {a0.shape[1:]} and {a1.shape[1:]} (arrays "
            f"{a0.shape}, {a1.shape}); records of one dataset and its neighbour have the same "
            "shape"
        )
    if relation == Relation.REPLACE:
        if len(a0) != len(a1):
            raise NotNeighboursError(
                f"d0 has {len(a0)} rows and d1 {len(a1)}: relation='replace' changes one row in "
                "place; for one row added or removed pass relation='add-remove'"
            )
        changed = int(np.count_nonzero(np.any((a0 != a1).reshape(len(a0), -1), axis=1)))
        if changed > 1:
            raise NotNeighboursError(
                f"d0 and d1 differ in {changed} rows; replace-one neighbours differ in at most "
                "one row (records are rows, axis 0). For query answers pass relation='query' "
                "with sensitivity=, or relation='unchecked'"
            )
        return
    if len(a0) == len(a1):
        if not np.array_equal(a0, a1):
            raise NotNeighboursError(
                f"d0 and d1 both have {len(a0)} rows but differ: add-remove neighbours differ by "
                "one row added or removed; for a row changed in place pass relation='replace'"
            )
        return
    big, small = (a0, a1) if len(a0) > len(a1) else (a1, a0)
    if len(big) != len(small) + 1 or not _one_row_removed(big, small):
        raise NotNeighboursError(
            f"d0 has {len(a0)} rows and d1 {len(a1)}: add-remove neighbours are one array with "
            "one row deleted from the other (other rows unchanged, in order)"
        )


def _one_row_removed(big: np.ndarray, small: np.ndarray) -> bool:
    """True when ``small`` is ``big`` with exactly one row deleted (order kept)."""
    flat_big, flat_small = big.reshape(len(big), -1), small.reshape(len(small), -1)
    prefix = np.all(flat_big[:-1] == flat_small, axis=1)
    suffix = np.all(flat_big[1:] == flat_small, axis=1)
    ok_prefix = np.concatenate([[True], np.cumprod(prefix).astype(bool)])
    ok_suffix = np.concatenate([np.cumprod(suffix[::-1])[::-1].astype(bool), [True]])
    return bool(np.any(ok_prefix & ok_suffix))
