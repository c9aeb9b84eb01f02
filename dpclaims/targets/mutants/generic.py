"""Mutants of the textbook mechanisms (the buggy built-in audit targets of
:mod:`dpclaims.targets.catalog`).

True ε values are at the default claim (ε, δ) = (1, 1e-5) (δ = 0 for the pure-DP ones).
"""

from __future__ import annotations

import math

from dpclaims.algorithms.mechanisms import analytic_gaussian_sigma
from dpclaims.privacy import PrivacyClaim
from dpclaims.target import AuditTarget
from dpclaims.targets.catalog import ITEMS, TARGETS, audit_target, default_relation, default_unit
from dpclaims.targets.mutants import Mutant, register_mutant


def _builder(name: str, delta: float):
    def build(epsilon: float = 1.0, delta: float = delta) -> AuditTarget:
        unit = default_unit(name)
        relation = default_relation(name)
        claim = PrivacyClaim(epsilon=epsilon, delta=delta, unit=unit, relation=relation)
        return audit_target(name, claim)

    build.__name__ = f"build_{name.replace('-', '_')}"
    return build


def _gaussian_epsilon_with_sigma_ratio(
    ratio: float, epsilon: float = 1.0, delta: float = 1e-5
) -> float:
    """Exact ε at δ of a Gaussian mechanism whose σ is ``ratio`` × the calibrated σ."""
    from dpclaims.privacy import gaussian_epsilon

    return gaussian_epsilon(ratio * analytic_gaussian_sigma(epsilon, delta), delta)


_TRUE_EPSILON = {
    "gaussian-half-noise": lambda: _gaussian_epsilon_with_sigma_ratio(0.5),
    "gaussian-item-noise": lambda: _gaussian_epsilon_with_sigma_ratio(1.0 / ITEMS),
    "laplace-half-scale": lambda: 2.0,
    "noisy-max-value": lambda: None,
    "dp-sgd-no-clip": lambda: math.inf,
}

for _name, (_description, _buggy) in TARGETS.items():
    if _buggy:
        _delta = 0.0 if _name.startswith(("laplace", "noisy-max")) else 1e-5
        register_mutant(
            Mutant(
                name=_name,
                paper="generic",
                kind="privacy",
                description=_description,
                true_epsilon=_TRUE_EPSILON[_name](),
                build=_builder(_name, _delta),
                caught_by="audit",
            )
        )
