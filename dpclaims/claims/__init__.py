"""The claims registry: every claim of the five paper specs, typed, validated, with experiment hooks.

>>> from dpclaims import claims
>>> claims.get("diff2gd.prop41.calibration").kind
'privacy'
"""

from .experiments import (
    BUDGETS,
    Experiment,
    NotCheckable,
    Skipped,
    register_experiment,
    registered_experiments,
    skipped_budgets,
)
from .model import KINDS, Claim
from .registry import ClaimsFileError, UnknownClaimError, algorithm_names, get, load, papers

__all__ = [
    "BUDGETS",
    "KINDS",
    "Claim",
    "ClaimsFileError",
    "Experiment",
    "NotCheckable",
    "Skipped",
    "UnknownClaimError",
    "algorithm_names",
    "get",
    "load",
    "papers",
    "register_experiment",
    "registered_experiments",
    "skipped_budgets",
]
