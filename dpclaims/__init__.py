"""dpclaims: check, by experiment, what papers on differentially private optimization claim."""

from .data import UserDataset, are_neighbours, remove_user, replace_item, replace_user
from .errors import DPClaimsError, InputError, MechanismError, NotNeighboursError
from .execution import run_trials
from .privacy import PrivacyClaim
from .audit import audit

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "UserDataset",
    "are_neighbours",
    "remove_user",
    "replace_item",
    "replace_user",
    "DPClaimsError",
    "InputError",
    "MechanismError",
    "NotNeighboursError",
    "run_trials",
    "PrivacyClaim",
    "audit",
]
