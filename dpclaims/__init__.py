"""dpclaims: check, by experiment, what papers on differentially private optimization claim.

The names below are imported on first use (PEP 562), so ``import dpclaims`` and the
``dpclaims`` command start without loading numpy, scipy or the experiments.  Papers and
their claims: :mod:`dpclaims.claims` (``claims.load()``, ``claims.Registry``); running
them: :mod:`dpclaims.claims.run`; their results: :mod:`dpclaims.results`; rendering them:
:mod:`dpclaims.reports`.  The rooms and their order: ``docs/architecture.md``.
"""

from importlib import import_module
from typing import Any

from .version import __version__

_HOMES = {
    "UserDataset": ".data",
    "GradientCanaryDataset": ".data",
    "are_neighbours": ".data",
    "remove_user": ".data",
    "replace_item": ".data",
    "replace_user": ".data",
    "DPClaimsError": ".errors",
    "InputError": ".errors",
    "MechanismError": ".errors",
    "NotNeighboursError": ".errors",
    "Execution": ".execution",
    "run_trials": ".execution",
    "PrivacyClaim": ".privacy",
    "AuditTarget": ".target",
    "AuditTest": ".audit.options",
    "Neighbours": ".audit.options",
    "Reference": ".audit.options",
    "percall": ".audit.percall",
    "audit_sequential": ".audit.sequential",
    "Results": ".results",
    "Verdict": ".verdicts",
}

__all__ = ["__version__", "audit", *_HOMES]


def __getattr__(name: str) -> Any:
    if name == "audit":  # the subpackage (``dpclaims.audit.audit`` is the function)
        return import_module(".audit", __name__)
    if name not in _HOMES:
        raise AttributeError(f"module 'dpclaims' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
