"""Built-in audit targets: a mechanism, the neighbouring pair that stresses it, and a description.

``dpclaims audit NAME`` audits one of these.  Each target is calibrated to the claim
being audited, so a correct mechanism should come out ``consistent`` and each
known-buggy variant (marked ``buggy``) ``violation``.  The neighbouring pairs sit at
the worst case of each query's sensitivity, so an exact implementation's privacy
loss is the full claimed ε.  The clipped means' noise is fixed for their :data:`USERS` users
(the sensitivity 2/n), so they refuse datasets of another size (``users=USERS``): a search
never shrinks their data into a pair they make no claim about.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.mechanisms import (
    FeatureCountQuery,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ReportNoisyMax,
    gaussian_sigma,
    user_mean_query,
)
from dpclaims.data import UserDataset, remove_user, replace_item, replace_user
from dpclaims.errors import InputError, check_choice
from dpclaims.losses import SquaredLoss
from dpclaims.privacy import PrivacyClaim
from dpclaims.target import AuditTarget
from dpclaims.targets.dpsgd import SEEN, canary_data, dpsgd_target
from dpclaims.vocabulary import CANARIES, THREAT_MODELS, Canary, Relation, ThreatModel, Unit

__all__ = ["TARGETS", "audit_target", "default_relation", "default_unit", "target_names"]

USERS = 100
ITEMS = 10


def _mean_pair(unit: str, relation: str, d: int = 1) -> tuple[UserDataset, UserDataset]:
    """Users at −1 except user 0 at +1, against user 0 (or one of its items) moved to −1 or removed.

    The clipped user-mean moves by exactly its sensitivity: 2/n (user) or 2/(n·m) (item).
    """
    m = 1 if (unit == Unit.ITEM and relation == Relation.ADD_REMOVE) else ITEMS
    x = -np.ones((USERS, m, d))
    x[0] = 1.0
    d0 = UserDataset(x)
    if relation == Relation.ADD_REMOVE:
        return d0, remove_user(d0, 0)
    if unit == Unit.USER:
        return d0, replace_user(d0, 0, -np.ones((m, d)))
    return d0, replace_item(d0, 0, 0, -np.ones(d))


def _mean_items(claim: PrivacyClaim) -> int:
    return 1 if (claim.unit == Unit.ITEM and claim.relation == Relation.ADD_REMOVE) else ITEMS


def _gaussian(
    claim: PrivacyClaim, noise_factor: float = 1.0, calibrate_unit: str | None = None
) -> GaussianMechanism:
    query = user_mean_query(1.0)
    unit = calibrate_unit or claim.unit
    sensitivity = query.sensitivity(USERS, _mean_items(claim), unit, claim.relation)
    sigma = noise_factor * gaussian_sigma(claim.epsilon, _positive_delta(claim), sensitivity)
    return GaussianMechanism(
        query=query,
        sensitivity=sensitivity,
        epsilon=claim.epsilon,
        delta=_positive_delta(claim),
        unit=claim.unit,
        relation=claim.relation,
        sigma=sigma,
        users=USERS,
    )


def _positive_delta(claim: PrivacyClaim) -> float:
    if claim.delta == 0:
        raise InputError(
            "this target is the Gaussian mechanism, which needs delta > 0; pass e.g. --delta 1e-5"
        )
    return claim.delta


def _laplace(claim: PrivacyClaim, scale_factor: float = 1.0) -> LaplaceMechanism:
    query = user_mean_query(1.0, norm=1)
    sensitivity = query.sensitivity(USERS, _mean_items(claim), claim.unit, claim.relation)
    return LaplaceMechanism(
        query=query,
        sensitivity=sensitivity,
        epsilon=claim.epsilon,
        unit=claim.unit,
        relation=claim.relation,
        scale=scale_factor * sensitivity / claim.epsilon,
        users=USERS,
    )


def _first_user_sign(data: UserDataset) -> np.ndarray:
    """Category 1 when the first user's first item is positive, else 0."""
    return np.array([float(data.x[0, 0, 0] > 0)])


def _noisy_max(
    claim: PrivacyClaim, return_value: bool
) -> tuple[ReportNoisyMax, UserDataset, UserDataset]:
    """Five equal counts that all move by one between the datasets (the noisy-max-value worst
    case)."""
    k = 5
    x = np.zeros((USERS, 1, k))
    x[1 : k + 1, 0, :] = np.eye(k)
    d0 = UserDataset(x)
    d1 = replace_user(d0, 0, np.ones((1, k)))
    mechanism = ReportNoisyMax(
        utility=FeatureCountQuery(0.5),
        sensitivity=1.0,
        epsilon=claim.epsilon,
        unit=claim.unit,
        relation=claim.relation,
        return_value=return_value,
    )
    return mechanism, d0, d1


def _dp_sgd(
    claim: PrivacyClaim, clip: bool, *, threat_model: ThreatModel, canary: Canary
) -> AuditTarget:
    """DP-SGD (5 steps, Poisson rate 0.5, clip 1, σ from the PLD accountant) on 20 squared-loss
    examples that leave their last coordinate to a canary, audited as the ``threat_model``
    adversary with a ``canary`` of norm 10 (:func:`~dpclaims.targets.dpsgd.dpsgd_target`)."""
    if claim.unit != Unit.ITEM:
        raise InputError("the dp-sgd targets clip per item; pass --unit item")
    if claim.relation != Relation.ADD_REMOVE:
        raise InputError(
            "the dp-sgd targets add or remove one canary (the accountant's relation); pass "
            "--relation add-remove"
        )
    loss = SquaredLoss()
    mechanism = DPSGD.from_accountant(
        claim.epsilon,
        _positive_delta(claim),
        loss,
        steps=5,
        step_size=1.0,
        clip_norm=1.0,
        sampling_rate=0.5,
        relation="add-remove",
    )
    if not clip:
        mechanism = dataclasses.replace(mechanism, clip=False)
    data = canary_data(loss, n=20, d=2)
    return dpsgd_target(mechanism, data, threat_model=threat_model, canary=canary)


def _build(name: str, claim: PrivacyClaim) -> tuple[Any, UserDataset, UserDataset]:
    if name == "gaussian":
        return (_gaussian(claim), *_mean_pair(claim.unit, claim.relation))
    if name == "gaussian-half-noise":
        return (_gaussian(claim, noise_factor=0.5), *_mean_pair(claim.unit, claim.relation))
    if name == "gaussian-item-noise":
        if claim.unit != Unit.USER or claim.relation != Relation.REPLACE:
            raise InputError(
                "gaussian-item-noise is audited with user-level replace neighbours; pass --unit "
                "user --relation replace"
            )
        return (_gaussian(claim, calibrate_unit="item"), *_mean_pair("user", "replace"))
    if name == "laplace":
        return (_laplace(claim), *_mean_pair(claim.unit, claim.relation))
    if name == "laplace-half-scale":
        return (_laplace(claim, scale_factor=0.5), *_mean_pair(claim.unit, claim.relation))
    if name == "randomized-response":
        mechanism = RandomizedResponse(
            query=_first_user_sign,
            categories=2,
            epsilon=claim.epsilon,
            unit=claim.unit,
            relation=claim.relation,
        )
        return (mechanism, *_mean_pair(claim.unit, claim.relation))
    if name == "noisy-max":
        return _noisy_max(claim, return_value=False)
    return _noisy_max(claim, return_value=True)  # noisy-max-value (dp-sgd: _dp_sgd)


TARGETS: dict[str, tuple[str, bool]] = {
    "gaussian": ("Gaussian mechanism (analytic calibration) on a clipped user mean", False),
    "gaussian-half-noise": ("Gaussian mechanism with half the calibrated noise", True),
    "gaussian-item-noise": (
        "Gaussian noise calibrated to one item's sensitivity, users holding 10 items",
        True,
    ),
    "laplace": ("Laplace mechanism on a clipped user mean", False),
    "laplace-half-scale": ("Laplace mechanism with scale 1/(2 eps) times the sensitivity", True),
    "randomized-response": ("binary randomized response on one user's bit", False),
    "noisy-max": ("report-noisy-max returning the index", False),
    "noisy-max-value": ("report-noisy-max that also returns the noisy maximum value", True),
    "dp-sgd": (
        "DP-SGD (5 steps, Poisson rate 0.5, PLD-calibrated) with a norm-10 canary",
        False,
    ),
    "dp-sgd-no-clip": ("DP-SGD with clipping skipped, same noise, norm-10 canary", True),
}
"""name -> (description, known to be buggy)."""


def default_unit(name: str) -> str:
    """The unit a target is audited at when none is given: ``item`` for DP-SGD, else ``user``."""
    return "item" if name.startswith("dp-sgd") else "user"


def default_relation(name: str) -> str:
    """The relation a target is audited under when none is given: ``add-remove`` for DP-SGD
    (a canary added, the accountant's relation), else ``replace``."""
    return "add-remove" if name.startswith("dp-sgd") else "replace"


def target_names() -> list[str]:
    """Names of the built-in targets."""
    return list(TARGETS)


def audit_target(
    name: str,
    claim: PrivacyClaim,
    *,
    threat_model: ThreatModel | None = None,
    canary: Canary | None = None,
) -> AuditTarget:
    """The built-in target ``name`` calibrated to ``claim``, described as in :data:`TARGETS`
    (whether it is known to be buggy is there too).

    The DP-SGD targets (``dp-sgd``, ``dp-sgd-no-clip``) take the adversary's ``threat_model``
    (``"all-iterates"``, the default: every noisy update, as the accountant assumes; or
    ``"final"``: the last model) and the ``canary`` (``"gradient"``, the default: a fixed
    gradient, the worst case of clipping; or ``"input"``), and carry the statistic fixed for
    them (:mod:`dpclaims.targets.dpsgd`); the other targets take neither.
    """
    if name not in TARGETS:
        raise InputError(
            f"unknown mechanism {name!r}; built-ins are {', '.join(TARGETS)} (or pass "
            "'package.module:function')"
        )
    description = TARGETS[name][0]
    if name.startswith("dp-sgd"):
        threat = check_choice(
            threat_model or ThreatModel.ALL_ITERATES, THREAT_MODELS, "threat_model"
        )
        canary = check_choice(canary or Canary.GRADIENT, CANARIES, "canary")
        target = _dp_sgd(claim, clip=name == "dp-sgd", threat_model=threat, canary=canary)
        return dataclasses.replace(
            target,
            claim=claim,  # the claim audited (the accountant's σ meets it)
            name=name,
            description=f"{description}; threat model {threat} ({SEEN[threat]}), {canary} canary",
        )
    if threat_model is not None or canary is not None:
        raise InputError(
            f"--threat-model and --canary choose how DP-SGD is audited; {name!r} is not DP-SGD "
            "(drop them, or audit dp-sgd)"
        )
    mechanism, d0, d1 = _build(name, claim)
    return AuditTarget(
        mechanism=mechanism, d0=d0, d1=d1, claim=claim, name=name, description=description
    )
