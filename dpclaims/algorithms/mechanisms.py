"""Reference DP mechanisms and the clipped queries they release, batched over trials.

Every mechanism is a frozen dataclass of its parameters with a ``privacy_claim``
property (the :class:`~dpclaims.privacy.PrivacyClaim` its textbook theorem gives)
and ``__call__(data, rng, trials) -> (trials, k)``: the query is evaluated once and
``trials`` independent noise draws are added in one vectorised call.

Mutants for the audit corpus are the same classes with one documented change: a
``sigma=`` / ``scale=`` override that ignores the calibration, a sensitivity that
does not match the claimed unit, or ``ReportNoisyMax(return_value=True)``.

References
----------
Balle & Wang (2018), *Improving the Gaussian mechanism for differential privacy*,
Theorem 8 / Algorithm 1 (analytic Gaussian).  Dwork & Roth (2014), *The algorithmic
foundations of DP*: Theorem 3.6 (Laplace), Claim 3.9 (report-noisy-max), Theorem
3.10 (exponential mechanism), Theorem A.1 (classical Gaussian).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .. import noise
from ..data import RELATIONS, UNITS, UserDataset
from ..errors import (
    InputError,
    MechanismError,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_trials,
)
from ..privacy import PrivacyClaim
from ..vocabulary import Relation, Unit

__all__ = [
    "CALIBRATIONS",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_sigma",
    "check_users",
    "ClippedQuery",
    "user_mean_query",
    "user_sum_query",
    "FeatureCountQuery",
    "GaussianMechanism",
    "LaplaceMechanism",
    "RandomizedResponse",
    "ExponentialMechanism",
    "ReportNoisyMax",
]

CALIBRATIONS = ("analytic", "classical")


# ------------------------------------------------------------------------------------ calibration


def analytic_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    ``δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``, evaluated in log space.
    """
    return math.exp(
        _log_delta(
            check_positive(sigma, "sigma"),
            check_epsilon(epsilon),
            check_positive(sensitivity, "sensitivity"),
        )
    )


def _log_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    log_pa = float(log_ndtr(a))
    log_pb = epsilon + float(log_ndtr(b))
    if log_pb >= log_pa:  # only by rounding: the true difference is > 0 for finite σ
        return -math.inf
    return log_pa + math.log1p(-math.exp(log_pb - log_pa))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with which ``N(f(D), σ²)`` is (ε, δ)-DP for l2-sensitivity Δ.

    Solves ``δ(σ) = δ`` of :func:`analytic_gaussian_delta` (Balle & Wang 2018, Theorem 8,
    Algorithm 1) by Brent's method on ``log σ`` (``log δ(σ)`` is decreasing in σ);
    relative accuracy ≈ 1e-14.  E.g. ε = 1, δ = 1e-5, Δ = 1 gives σ ≈ 3.7306.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if delta == 0:
        raise InputError("delta must be > 0 for the Gaussian mechanism; pass e.g. delta=1e-5")
    return sensitivity * _unit_sigma(epsilon, delta)


@functools.lru_cache(maxsize=256)
def _unit_sigma(epsilon: float, delta: float) -> float:
    """σ of :func:`analytic_gaussian_sigma` for Δ = 1 (σ scales linearly in Δ)."""
    target = math.log(delta)

    def gap(log_sigma: float) -> float:
        # log δ is -inf only when rounding swallows it (huge σ); keep Brent's method finite
        return max(_log_delta(math.exp(log_sigma), epsilon, 1.0), -1e6) - target

    lo, hi = -1.0, 1.0
    while gap(lo) < 0:
        lo -= 2.0
    while gap(hi) > 0:
        hi += 2.0
    return math.exp(brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``σ = sqrt(2 ln(1.25/δ))·Δ/ε`` (Dwork & Roth 2014, Theorem A.1), proved only for ε < 1."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if epsilon >= 1:
        raise InputError(
            "the classical Gaussian calibration is proved only for epsilon < 1, got "
            f"epsilon={epsilon}; "
            "use calibration='analytic'"
        )
    if delta == 0:
        raise InputError("delta must be > 0 for the Gaussian mechanism; pass e.g. delta=1e-5")
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


def gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic"
) -> float:
    """Noise std by the named calibration: ``"analytic"`` (exact) or ``"classical"``."""
    check_choice(calibration, CALIBRATIONS, "calibration")
    if calibration == "analytic":
        return analytic_gaussian_sigma(epsilon, delta, sensitivity)
    return classical_gaussian_sigma(epsilon, delta, sensitivity)


# ------------------------------------------------------------------------------------ queries


def _clip_rows(v: np.ndarray, bound: float, norm: int) -> np.ndarray:
    """Scale each vector on the last axis into the ``norm``-ball of radius ``bound``."""
    size = np.linalg.norm(v, ord=norm, axis=-1, keepdims=True)
    return v * (bound / np.maximum(size, bound))  # = v·min(1, bound/‖v‖)


@dataclass(frozen=True)
class ClippedQuery:
    """Clipped per-user vectors, summed or averaged over users: ``UserDataset -> (d,)``.

    Parameters
    ----------
    bound : clipping radius B
    clip : ``"item"`` — clip every item ``x_ij`` to norm B, user vector ``u_i = mean_j clip(x_ij)``;
        ``"user"`` — clip each user's item-mean, ``u_i = clip(mean_j x_ij)`` (user-level clipping)
    reduce : ``"mean"`` releases ``(1/n) Σ_i u_i``; ``"sum"`` releases ``Σ_i u_i``
    norm : 2 (for the Gaussian mechanism) or 1 (for Laplace): the norm of the ball and of
        the sensitivity

    Sensitivities (``‖u_i‖ ≤ B`` always; a changed item moves ``u_i`` by ≤ 2B/m only under
    item clipping):

    ==========================  ========  ===========================
    neighbours                  sum       mean
    ==========================  ========  ===========================
    replace one user            2B        2B/n
    replace one item, "item"    2B/m      2B/(n·m)
    replace one item, "user"    2B        2B/n
    add/remove one user         B         2B/n  (n: either size)
    ==========================  ========  ===========================
    """

    bound: float
    clip: str = "item"
    reduce: str = "mean"
    norm: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", check_positive(self.bound, "bound"))
        check_choice(self.clip, ("item", "user"), "clip")
        check_choice(self.reduce, ("mean", "sum"), "reduce")
        if self.norm not in (1, 2) or isinstance(self.norm, bool):
            raise InputError(f"norm must be 1 or 2, got {self.norm!r}")

    def __call__(self, data: UserDataset) -> np.ndarray:
        """The released vector, shape ``(d,)``."""
        _check_dataset(data)
        if self.clip == Unit.ITEM:
            users = _clip_rows(data.x, self.bound, self.norm).mean(axis=1)
        else:
            users = _clip_rows(data.x.mean(axis=1), self.bound, self.norm)
        return users.mean(axis=0) if self.reduce == "mean" else users.sum(axis=0)

    def sensitivity(self, n: int, m: int, unit: str = "user", relation: str = "replace") -> float:
        """Sensitivity (in the clipping norm) on datasets of ``n`` users × ``m`` items (table
        above)."""
        n = check_trials(n, "n")
        m = check_trials(m, "m")
        check_choice(unit, UNITS, "unit")
        check_choice(relation, RELATIONS, "relation")
        b = self.bound
        if relation == Relation.ADD_REMOVE:
            if unit == Unit.ITEM and m > 1:
                raise InputError(
                    "item-level add-remove neighbours need m = 1; use relation='replace' for m > 1"
                )
            return b if self.reduce == "sum" else 2.0 * b / n
        per_user = 2.0 * b / m if (unit == Unit.ITEM and self.clip == Unit.ITEM) else 2.0 * b
        return per_user if self.reduce == "sum" else per_user / n


def user_mean_query(bound: float, clip: str = "item", norm: int = 2) -> ClippedQuery:
    """Mean over users of each user's mean of clipped items (``clip="item"``) or clipped mean.

    With item clipping the sensitivity is 2B/n (replace one user) and 2B/(n·m) (replace one item).
    """
    return ClippedQuery(bound, clip=clip, reduce="mean", norm=norm)


def user_sum_query(bound: float, clip: str = "item", norm: int = 2) -> ClippedQuery:
    """Sum over users of the clipped per-user vectors (see :class:`ClippedQuery`)."""
    return ClippedQuery(bound, clip=clip, reduce="sum", norm=norm)


@dataclass(frozen=True)
class FeatureCountQuery:
    """Scores for selection: ``c_j`` = number of users with some item whose feature j exceeds
    ``threshold``.

    Returns ``(d,)``.  Each count moves by at most 1 when one user (or one item) changes,
    so the score sensitivity is 1; under add/remove of a user the counts move in the same
    direction (monotone), which Dwork & Roth Claim 3.9 uses.
    """

    threshold: float = 0.5

    def __call__(self, data: UserDataset) -> np.ndarray:
        _check_dataset(data)
        return np.any(data.x > self.threshold, axis=1).sum(axis=0).astype(np.float64)

    def sensitivity(self, n: int, m: int, unit: str = "user", relation: str = "replace") -> float:
        """1 for every unit and relation."""
        check_choice(unit, UNITS, "unit")
        check_choice(relation, RELATIONS, "relation")
        return 1.0

    @staticmethod
    def monotone(relation: str) -> bool:
        """True for add/remove (all counts move the same way), False for replace."""
        return check_choice(relation, RELATIONS, "relation") == Relation.ADD_REMOVE


def _check_dataset(data: Any) -> None:
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a UserDataset, got {type(data).__name__}")


def _check_query(query: Any, name: str = "query") -> None:
    if not callable(query):
        raise InputError(
            f"{name} must be callable as {name}(data) -> array, got {type(query).__name__}"
        )


def _evaluate(query: Callable, data: Any, name: str = "query") -> np.ndarray:
    """``query(data)`` as a finite float vector ``(k,)``."""
    value = np.atleast_1d(np.asarray(query(data), dtype=np.float64))
    if value.ndim != 1 or value.size == 0 or not np.all(np.isfinite(value)):
        raise MechanismError(
            f"{name}(data) must return a finite scalar or vector, got shape {value.shape}"
        )
    return value


def _check_users_field(mechanism: Any) -> None:
    if mechanism.users is not None:
        object.__setattr__(mechanism, "users", check_trials(mechanism.users, "users"))


def check_users(mechanism: Any, data: Any) -> None:
    """Refuse ``data`` unless it has the ``users`` the mechanism's sensitivity was computed for
    (add-remove: that many or one fewer); a mechanism with ``users=None`` takes any size.

    A clipped mean's sensitivity 2B/n holds for datasets of n users only: noise fixed for
    n = 100 is far too small on 2 users, so a search that shrank the data would find a
    violation of a claim the mechanism never made.
    """
    users = mechanism.users
    if users is None:
        return
    sizes = (users - 1, users) if mechanism.relation == Relation.ADD_REMOVE else (users,)
    n = getattr(data, "n", None)
    if n not in sizes:
        raise MechanismError(
            f"{type(mechanism).__name__} is calibrated for datasets of {users} users (users="
            f"{users}, the n of its sensitivity), got {n}; pass datasets of {users} users or "
            f"calibrate it for {n}"
        )


def _check_unit_relation(unit: str, relation: str) -> None:
    check_choice(unit, UNITS, "unit")
    check_choice(relation, RELATIONS, "relation")


def _check_selection(mechanism: Any) -> None:
    """Check (and coerce) the fields of a selection mechanism: its ``utility`` scores, their
    ``sensitivity``, ``epsilon``, ``unit`` and ``relation``."""
    _check_query(mechanism.utility, "utility")
    sensitivity = check_positive(mechanism.sensitivity, "sensitivity")
    object.__setattr__(mechanism, "sensitivity", sensitivity)
    object.__setattr__(mechanism, "epsilon", check_epsilon(mechanism.epsilon))
    _check_unit_relation(mechanism.unit, mechanism.relation)


def _pure_claim(mechanism: Any, source: str) -> PrivacyClaim:
    """The pure ε-DP claim of ``mechanism`` (its ``epsilon``, ``unit``, ``relation``)."""
    return PrivacyClaim(
        epsilon=mechanism.epsilon,
        delta=0.0,
        unit=mechanism.unit,
        relation=mechanism.relation,
        source=source,
    )


# ------------------------------------------------------------------------------------ mechanisms


@dataclass(frozen=True)
class GaussianMechanism:
    """``query(D) + N(0, σ² I)`` with σ calibrated to (ε, δ) and the l2-``sensitivity``.

    Parameters
    ----------
    query : callable ``UserDataset -> (k,)`` (e.g. :func:`user_mean_query`)
    sensitivity : l2-sensitivity Δ of ``query`` under (``unit``, ``relation``) neighbours
    epsilon, delta : the claimed guarantee (δ > 0)
    unit, relation : the neighbour notion of the claim
    calibration : ``"analytic"`` (Balle & Wang 2018, Thm 8) or ``"classical"`` (ε < 1 only)
    sigma : optional noise std that overrides the calibration (for mutants: the claim stays
        (ε, δ) whatever σ is, so a too-small σ is a false claim)
    users : the dataset size the ``sensitivity`` was computed for, when it depends on it (a
        mean's 2B/n): datasets of another size are refused (:func:`check_users`); None: any
    """

    query: Callable
    sensitivity: float
    epsilon: float
    delta: float
    unit: str = "user"
    relation: str = "replace"
    calibration: str = "analytic"
    sigma: float | None = None
    users: int | None = None

    def __post_init__(self) -> None:
        _check_query(self.query)
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.delta == 0:
            raise InputError("delta must be > 0 for the Gaussian mechanism; pass e.g. delta=1e-5")
        _check_unit_relation(self.unit, self.relation)
        check_choice(self.calibration, CALIBRATIONS, "calibration")
        _check_users_field(self)
        if self.sigma is not None:
            object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        else:  # raises now, not at the first call, for an invalid calibration (classical, ε ≥ 1)
            gaussian_sigma(self.epsilon, self.delta, self.sensitivity, self.calibration)

    @classmethod
    def from_epsilon(
        cls,
        query: Any,
        epsilon: float,
        delta: float,
        n: int,
        m: int,
        unit: str = "user",
        relation: str = "replace",
        calibration: str = "analytic",
    ) -> GaussianMechanism:
        """Calibrated mechanism for a query with a ``sensitivity(n, m, unit, relation)`` method."""
        if not hasattr(query, "sensitivity"):
            raise InputError(
                "query must have a sensitivity(n, m, unit, relation) method; or pass sensitivity "
                "directly"
            )
        return cls(
            query=query,
            sensitivity=query.sensitivity(n, m, unit, relation),
            epsilon=epsilon,
            delta=delta,
            unit=unit,
            relation=relation,
            calibration=calibration,
        )

    @property
    def noise_std(self) -> float:
        """σ: the override if given, else the calibrated value."""
        if self.sigma is not None:
            return self.sigma
        return gaussian_sigma(self.epsilon, self.delta, self.sensitivity, self.calibration)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        source = (
            "Balle & Wang 2018, Theorem 8"
            if self.calibration == "analytic"
            else "Dwork & Roth 2014, Theorem A.1"
        )
        return PrivacyClaim(
            epsilon=self.epsilon,
            delta=self.delta,
            unit=self.unit,
            relation=self.relation,
            source=f"Gaussian mechanism ({source})",
        )

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``trials`` releases: ``(trials, k)``."""
        check_users(self, data)
        value = _evaluate(self.query, data)
        trials = check_trials(trials)
        return noise.gaussian(
            rng, value, sigma=self.noise_std, sensitivity=self.sensitivity, trials=trials
        )


@dataclass(frozen=True)
class LaplaceMechanism:
    """``query(D) + Lap(b)^k`` with ``b = sensitivity/ε`` (Dwork & Roth 2014, Theorem 3.6): pure
    ε-DP.

    ``sensitivity`` is the **l1**-sensitivity (use ``norm=1`` clipped queries for k > 1).
    ``scale`` overrides b (mutants; the claim stays ε).  ``users``: as for
    :class:`GaussianMechanism`.
    """

    query: Callable
    sensitivity: float
    epsilon: float
    unit: str = "user"
    relation: str = "replace"
    scale: float | None = None
    users: int | None = None

    def __post_init__(self) -> None:
        _check_query(self.query)
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        _check_unit_relation(self.unit, self.relation)
        _check_users_field(self)
        if self.scale is not None:
            object.__setattr__(self, "scale", check_positive(self.scale, "scale"))

    @classmethod
    def from_epsilon(
        cls,
        query: Any,
        epsilon: float,
        n: int,
        m: int,
        unit: str = "user",
        relation: str = "replace",
    ) -> LaplaceMechanism:
        """Calibrated mechanism for a query with an l1 sensitivity (``ClippedQuery(norm=1)``)."""
        if getattr(query, "norm", 1) != 1 or not hasattr(query, "sensitivity"):
            raise InputError(
                "the Laplace mechanism needs an l1 sensitivity: use a query with norm=1 and a "
                "sensitivity method"
            )
        sensitivity = query.sensitivity(n, m, unit, relation)
        return cls(
            query=query, sensitivity=sensitivity, epsilon=epsilon, unit=unit, relation=relation
        )

    @property
    def noise_scale(self) -> float:
        """b: the override if given, else sensitivity/ε."""
        return self.scale if self.scale is not None else self.sensitivity / self.epsilon

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _pure_claim(self, "Laplace mechanism (Dwork & Roth 2014, Theorem 3.6)")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        check_users(self, data)
        value = _evaluate(self.query, data)
        trials = check_trials(trials)
        return noise.laplace(
            rng, value, scale=self.noise_scale, sensitivity=self.sensitivity, trials=trials
        )


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response on a categorical ``query(D) ∈ {0, …, k−1}``: exactly ε-DP.

    Reports the true category with probability ``e^ε/(e^ε + k − 1)``, otherwise one of the
    other ``k − 1`` uniformly, so every output's probability ratio is at most ``e^ε``.
    The claim assumes a neighbour may change the category arbitrarily.  Output ``(trials, 1)``.
    """

    query: Callable
    categories: int
    epsilon: float
    unit: str = "user"
    relation: str = "replace"

    def __post_init__(self) -> None:
        _check_query(self.query)
        object.__setattr__(
            self, "categories", check_trials(self.categories, "categories", minimum=2)
        )
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        _check_unit_relation(self.unit, self.relation)

    @property
    def keep_probability(self) -> float:
        """``e^ε/(e^ε + k − 1)``."""
        return 1.0 / (1.0 + (self.categories - 1) * math.exp(-self.epsilon))

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _pure_claim(self, f"{self.categories}-ary randomized response")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        value = _evaluate(self.query, data)
        k = self.categories
        if value.size != 1 or value[0] != int(value[0]) or not 0 <= value[0] < k:
            raise MechanismError(
                f"query(data) must return one category in {{0, ..., {k - 1}}}, got {value}"
            )
        trials = check_trials(trials)
        truth = int(value[0])
        other = (truth + 1 + rng.integers(0, k - 1, trials)) % k
        keep = rng.random(trials) < self.keep_probability
        return np.where(keep, truth, other)[:, None].astype(np.float64)


@dataclass(frozen=True)
class ExponentialMechanism:
    """Select candidate i with probability ∝ ``exp(ε u_i / (2Δ))`` (Dwork & Roth 2014, Thm 3.10).

    ``utility(D) -> (k,)`` scores, each moving by at most ``sensitivity`` Δ between
    neighbours; ``monotone=True`` (all scores move the same way) allows ``exp(ε u_i / Δ)``.
    Sampling is the Gumbel-max trick, ``argmax_i(ε u_i/(2Δ) + G_i)``, batched: ``(trials, 1)``
    indices.
    """

    utility: Callable
    sensitivity: float
    epsilon: float
    unit: str = "user"
    relation: str = "replace"
    monotone: bool = False

    def __post_init__(self) -> None:
        _check_selection(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _pure_claim(self, "exponential mechanism (Dwork & Roth 2014, Thm 3.10)")

    def probabilities(self, data: UserDataset) -> np.ndarray:
        """Exact selection probabilities ``(k,)`` (softmax of the scaled utilities)."""
        logits = self._logits(data)
        w = np.exp(logits - logits.max())
        return w / w.sum()

    def _logits(self, data: UserDataset) -> np.ndarray:
        factor = 1.0 if self.monotone else 2.0
        return self.epsilon * _evaluate(self.utility, data, "utility") / (factor * self.sensitivity)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        logits = self._logits(data)
        trials = check_trials(trials)
        return np.argmax(logits + rng.gumbel(size=(trials, logits.size)), axis=1)[:, None].astype(
            np.float64
        )


@dataclass(frozen=True)
class ReportNoisyMax:
    """Index of the largest ``u_i + Lap(b)`` (Dwork & Roth 2014, Claim 3.9): pure ε-DP.

    ``b = Δ/ε`` for monotone scores (counts under add/remove, Claim 3.9) and ``2Δ/ε``
    otherwise.  Output ``(trials, 1)`` indices.

    ``return_value=True`` is the classic bug (not private at ε): it releases
    ``(index, noisy maximum)``, shape ``(trials, 2)``.  The noisy maximum of k equal
    counts shifted by one has privacy loss up to kε in its lower tail.
    """

    utility: Callable
    sensitivity: float
    epsilon: float
    unit: str = "user"
    relation: str = "replace"
    monotone: bool = False
    return_value: bool = False

    def __post_init__(self) -> None:
        _check_selection(self)

    @property
    def noise_scale(self) -> float:
        """Laplace scale b."""
        return (1.0 if self.monotone else 2.0) * self.sensitivity / self.epsilon

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _pure_claim(self, "report-noisy-max (Dwork & Roth 2014, Claim 3.9)")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        scores = _evaluate(self.utility, data, "utility")
        trials = check_trials(trials)
        noisy = scores + rng.laplace(0.0, self.noise_scale, (trials, scores.size))
        index = np.argmax(noisy, axis=1)
        if not self.return_value:
            return index[:, None].astype(np.float64)
        return np.column_stack([index.astype(np.float64), noisy[np.arange(trials), index]])
