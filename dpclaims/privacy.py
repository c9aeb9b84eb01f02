"""Privacy claims: what a paper says its algorithm guarantees.

A :class:`PrivacyClaim` is (ε, δ) together with the unit of privacy (a user or
an item) and the neighbour relation (replace-one or add/remove-one).  An audit on
datasets that are not neighbours under the claim's unit and relation is refused.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import dp_accounting

from .errors import (
    InputError,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_trials,
)
from .vocabulary import RELATIONS, UNITS, Relation, Unit

__all__ = [
    "PrivacyClaim",
    "claim_at_door",
    "ACCOUNTANTS",
    "gaussian_epsilon",
    "laplace_epsilon",
    "subsampled_gaussian_epsilon",
    "calibrate_noise_multiplier",
    "accountant_claim",
]


@dataclass(frozen=True)
class PrivacyClaim:
    """An (ε, δ)-DP guarantee at a stated unit and neighbour relation.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in [0, 1); 0 is pure DP
    unit : :class:`Unit` ``"user"`` or ``"item"`` (a string is coerced to the member)
    relation : :class:`Relation` ``"replace"`` (same size, one unit changed) or ``"add-remove"``
    source : where the claim comes from (theorem, accountant, ...), for reports
    """

    epsilon: float
    delta: float = 0.0
    unit: Unit = Unit.USER
    relation: Relation = Relation.REPLACE
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "unit", check_choice(self.unit, UNITS, "unit"))
        object.__setattr__(self, "relation", check_choice(self.relation, RELATIONS, "relation"))
        if not isinstance(self.source, str):
            raise InputError(
                "source must be a string describing where the claim comes from, got "
                f"{type(self.source).__name__}"
            )

    @property
    def pure(self) -> bool:
        """True for pure ε-DP (δ = 0)."""
        return self.delta == 0.0

    @property
    def is_user_level(self) -> bool:
        """True when the unit of privacy is a user (all their items)."""
        return self.unit is Unit.USER

    @property
    def is_add_remove(self) -> bool:
        """True when neighbours differ by one unit added or removed (not replaced)."""
        return self.relation is Relation.ADD_REMOVE

    def to_dict(self) -> dict:
        return asdict(self)


def claim_at_door(
    claim: Any,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    unit: str | None = None,
    relation: str | None = None,
) -> PrivacyClaim:
    """The :class:`PrivacyClaim` an audit door was given: ``claim`` itself, or the one the loose
    keywords build (``epsilon`` required; ``delta`` 0, ``unit`` user, ``relation`` replace by
    default) — one or the other, never both."""
    loose = {
        name: value
        for name, value in (
            ("epsilon", epsilon), ("delta", delta), ("unit", unit), ("relation", relation)
        )
        if value is not None
    }  # fmt: skip
    if isinstance(claim, PrivacyClaim):
        if loose:
            raise InputError(
                f"pass {', '.join(loose)} inside claim=PrivacyClaim(...) or instead of it, not both"
            )
        return claim
    if claim is not None:
        raise InputError(
            f"claim must be a PrivacyClaim, got {type(claim).__name__} {claim!r}; pass "
            "claim=PrivacyClaim(epsilon, delta) or epsilon=..., delta=..."
        )
    if "epsilon" not in loose:
        raise InputError(
            "no claim to audit: pass claim=PrivacyClaim(epsilon, delta) or epsilon=..."
        )
    return PrivacyClaim(**loose)


# --------------------------------------------------------------------------------------------
# Accountant bridge (dp-accounting).  PLD (privacy loss distributions, pessimistic estimate,
# so every ε it returns is an upper bound) is the reference; RDP is a looser second opinion.
# --------------------------------------------------------------------------------------------

ACCOUNTANTS = ("pld", "rdp")

_PLD_DISCRETIZATION = 1e-4
"""Value discretization of the PLD accountant for reported ε (dp-accounting's default)."""

_CALIBRATION_DISCRETIZATION = 1e-3
"""Coarser PLD grid used while searching σ; pessimistic rounding keeps the result conservative."""

_SIGMA_FLOOR = 0.02
"""Smallest noise multiplier the calibration searches (a PLD below it needs too much memory)."""

_RELATIONS = {
    "add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace": dp_accounting.NeighboringRelation.REPLACE_ONE,
}


def _check_delta_positive(delta: Any) -> float:
    delta = check_delta(delta)
    if delta == 0:
        raise InputError(
            "delta must be > 0 for an accountant ε of a Gaussian mechanism; pass e.g. delta=1e-5"
        )
    return delta


def _check_rate(sampling_rate: Any) -> float:
    rate = check_positive(sampling_rate, "sampling_rate")
    if rate > 1:
        raise InputError(
            f"sampling_rate must be in (0, 1], got {rate!r}; use 1.0 for full-batch DP-GD"
        )
    return rate


def _event(noise_multiplier: float, sampling_rate: float, steps: int) -> dp_accounting.DpEvent:
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier)
    step = (
        gaussian
        if sampling_rate == 1.0
        else dp_accounting.PoissonSampledDpEvent(sampling_rate, gaussian)
    )
    return dp_accounting.SelfComposedDpEvent(step, steps)


def _accountant(
    accountant: str, relation: str, discretization: float
) -> dp_accounting.PrivacyAccountant:
    if accountant == "pld":
        return dp_accounting.pld.PLDAccountant(
            _RELATIONS[relation], value_discretization_interval=discretization
        )
    return dp_accounting.rdp.RdpAccountant(neighboring_relation=_RELATIONS["add-remove"])


def _rdp_inputs(noise_multiplier: float, sampling_rate: float, relation: str) -> float:
    """Noise multiplier to give dp-accounting's RDP accountant, which only knows add/remove."""
    if relation == Relation.ADD_REMOVE:
        return noise_multiplier
    if sampling_rate == 1.0:
        return (
            noise_multiplier / 2.0
        )  # replace-one moves the clipped sum by 2C: sensitivity doubles
    raise InputError(
        "accountant='rdp' supports relation='replace' only without subsampling (sampling_rate=1); "
        "use accountant='pld' or relation='add-remove'"
    )


class _Steps(NamedTuple):
    """``steps`` self-composed Gaussian steps of ``noise_multiplier``, Poisson-subsampled at
    ``sampling_rate`` (1: no subsampling)."""

    noise_multiplier: float
    sampling_rate: float
    steps: int


@functools.lru_cache(maxsize=512)
def _epsilon(
    run: _Steps, delta: float, accountant: str, *, relation: str, discretization: float
) -> float:
    noise_multiplier, sampling_rate, steps = run
    if accountant == "rdp":
        noise_multiplier = _rdp_inputs(noise_multiplier, sampling_rate, relation)
    acc = _accountant(accountant, relation, discretization)
    acc.compose(_event(noise_multiplier, sampling_rate, steps))
    return float(acc.get_epsilon(delta))


def gaussian_epsilon(
    sigma: float, delta: float, sensitivity: float = 1.0, accountant: str = "pld"
) -> float:
    """ε of the Gaussian mechanism N(f(D), σ² I) with l2-sensitivity Δ at the given δ.

    The pair of output distributions is N(0, σ²) vs N(Δ, σ²) whatever the neighbour
    relation (Δ already accounts for it), so this is the add/remove accountant with
    noise multiplier σ/Δ.  PLD agrees with the exact analytic value (Balle & Wang 2018,
    Theorem 8) up to its discretization; RDP is an upper bound that is looser.
    """
    sigma = check_positive(sigma, "sigma")
    sensitivity = check_positive(sensitivity, "sensitivity")
    delta = _check_delta_positive(delta)
    check_choice(accountant, ACCOUNTANTS, "accountant")
    run = _Steps(sigma / sensitivity, 1.0, 1)
    return _epsilon(
        run, delta, accountant, relation="add-remove", discretization=_PLD_DISCRETIZATION
    )


def laplace_epsilon(scale: float, sensitivity: float = 1.0, delta: float = 0.0) -> float:
    """ε of the Laplace mechanism with noise scale b and l1-sensitivity Δ.

    With δ = 0 this is the exact pure-DP value Δ/b (Dwork & Roth 2014, Theorem 3.6);
    with δ > 0 it is dp-accounting's PLD ε(δ) ≤ Δ/b.
    """
    scale = check_positive(scale, "scale")
    sensitivity = check_positive(sensitivity, "sensitivity")
    delta = check_delta(delta)
    if delta == 0:
        return sensitivity / scale
    acc = dp_accounting.pld.PLDAccountant(
        _RELATIONS["add-remove"], value_discretization_interval=_PLD_DISCRETIZATION
    )
    acc.compose(dp_accounting.LaplaceDpEvent(scale / sensitivity))
    return min(float(acc.get_epsilon(delta)), sensitivity / scale)


def subsampled_gaussian_epsilon(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    accountant: str = "pld",
    relation: str = "add-remove",
) -> float:
    """ε after ``steps`` Poisson-subsampled Gaussian steps (DP-SGD), at the given δ.

    Parameters
    ----------
    noise_multiplier : σ; the noise std on the clipped sum is σ·C (C the clipping norm)
    sampling_rate : Poisson sampling probability q in (0, 1]; q = 1 is full-batch DP-GD
    steps : number of composed steps T
    delta : target δ in (0, 1)
    accountant : "pld" (reference, dp-accounting ``PLDAccountant``) or "rdp" (``RdpAccountant``)
    relation : "add-remove" (natural for Poisson sampling; one unit's clipped gradient,
        norm ≤ C, is in or out) or "replace" (one unit's gradient swapped for another:
        PLD REPLACE_ONE; at q = 1 this is sensitivity 2C)
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    rate = _check_rate(sampling_rate)
    steps = check_trials(steps, "steps")
    delta = _check_delta_positive(delta)
    check_choice(accountant, ACCOUNTANTS, "accountant")
    check_choice(relation, RELATIONS, "relation")
    run = _Steps(sigma, rate, steps)
    return _epsilon(run, delta, accountant, relation=relation, discretization=_PLD_DISCRETIZATION)


def calibrate_noise_multiplier(
    epsilon: float,
    delta: float,
    sampling_rate: float = 1.0,
    steps: int = 1,
    relation: str = "add-remove",
    tol: float = 1e-4,
) -> float:
    """Smallest noise multiplier σ whose PLD ε (at δ) is at most ``epsilon``.

    Uses ``dp_accounting.calibrate_dp_mechanism`` (Brent's method over σ) with a
    PLD accountant on a 1e-3 grid (pessimistic, so ε is over- not under-estimated);
    the answer is within ``tol`` of the optimum on the safe side.
    """
    epsilon = check_epsilon(epsilon)
    delta = _check_delta_positive(delta)
    rate = _check_rate(sampling_rate)
    steps = check_trials(steps, "steps")
    check_choice(relation, RELATIONS, "relation")
    tol = check_positive(tol, "tol")
    return _calibrated(float(epsilon), float(delta), float(rate), int(steps), str(relation), tol)


@functools.lru_cache(maxsize=256)
def _calibrated(
    epsilon: float, delta: float, rate: float, steps: int, relation: str, tol: float
) -> float:
    """:func:`calibrate_noise_multiplier` on checked arguments, once per process for each (a
    calibration costs up to a second; tests and experiments ask for the same ones again)."""

    def fresh() -> dp_accounting.PrivacyAccountant:
        return _accountant("pld", relation, _CALIBRATION_DISCRETIZATION)

    def pld_epsilon(sigma: float) -> float:
        run = _Steps(sigma, rate, steps)
        return _epsilon(
            run, delta, "pld", relation=relation, discretization=_CALIBRATION_DISCRETIZATION
        )

    # Bracket [lo, hi] with ε(hi) ≤ target < ε(lo).  A PLD at a tiny σ is enormous, so grow hi
    # from 1 first and only then walk lo down from hi / 4 (never below _SIGMA_FLOOR).
    hi = 1.0
    while pld_epsilon(hi) > epsilon:
        hi *= 2.0
    lo = hi / 4.0
    while pld_epsilon(lo) <= epsilon:
        hi, lo = lo, lo / 4.0
        if lo < _SIGMA_FLOOR:
            raise InputError(
                f"epsilon={epsilon} needs a noise multiplier below {hi:.3g}; such a target is "
                "outside what this calibration supports, pass a smaller epsilon"
            )
    sigma = dp_accounting.calibrate_dp_mechanism(
        fresh,
        lambda s: _event(s, rate, steps),
        epsilon,
        delta,
        bracket_interval=dp_accounting.ExplicitBracketInterval(lo, hi),
        tol=tol,
    )
    return float(sigma)


def accountant_claim(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    unit: str = "item",
    relation: str = "add-remove",
) -> PrivacyClaim:
    """The :class:`PrivacyClaim` dp-accounting's PLD accountant certifies for DP-SGD / DP-GD."""
    epsilon = subsampled_gaussian_epsilon(
        noise_multiplier, sampling_rate, steps, delta, accountant="pld", relation=relation
    )
    return PrivacyClaim(epsilon, delta, unit=unit, relation=relation, source="dp-accounting PLD")
