"""The claims registry: papers' claims, typed and validated, and the experiments checking them.

A paper is a claims TOML whose ``[paper]`` table names its experiments module; papers come
from the package, installed plugins (entry-point group ``dpclaims.papers``) and folders
(``--registry DIR``), all read the same way (:mod:`.plugins`, :mod:`.registry`).  Reading
claims imports no experiment; :func:`status` and :func:`experiment` answer how a claim is
checked, and :mod:`.run` runs claims into a results document.

>>> from dpclaims import claims
>>> claims.get("diff2gd.prop41.calibration").kind
'privacy'
>>> claims.status(claims.get("cited.dp_srm")).startswith("not implemented")
True
"""

from . import experiments
from .experiments import (
    BUDGETS,
    BySize,
    Experiment,
    NotCheckable,
    Skipped,
    experiment,
    register_experiment,
    registered_experiments,
    skipped_budgets,
    status,
)
from .model import KINDS, Claim, Paper
from .registry import (
    ClaimsFileError,
    Registry,
    UnknownClaimError,
    algorithm_names,
    get,
    load,
    papers,
)

__all__ = [
    "BUDGETS",
    "KINDS",
    "BySize",
    "Claim",
    "ClaimsFileError",
    "Experiment",
    "NotCheckable",
    "Paper",
    "Registry",
    "Skipped",
    "UnknownClaimError",
    "algorithm_names",
    "experiment",
    "get",
    "load",
    "papers",
    "register_experiment",
    "registered_experiments",
    "skipped_budgets",
    "status",
]


def __getattr__(name: str):
    """``Budget``, the old name of :class:`BySize` (deprecated, with a warning)."""
    if name == "Budget":
        return experiments.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
