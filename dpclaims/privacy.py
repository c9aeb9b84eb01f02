"""Privacy claims: what a paper says its algorithm guarantees.

A :class:`PrivacyClaim` is (ε, δ) together with the unit of privacy (a user or
an item) and the neighbour relation (replace-one or add/remove-one).  An audit on
datasets that are not neighbours under the claim's unit and relation is refused.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .data import RELATIONS, UNITS
from .errors import check_choice, check_delta, check_epsilon

__all__ = ["PrivacyClaim"]


@dataclass(frozen=True)
class PrivacyClaim:
    """An (ε, δ)-DP guarantee at a stated unit and neighbour relation.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in [0, 1); 0 is pure DP
    unit : "user" or "item"
    relation : "replace" (same size, one unit changed) or "add-remove"
    source : where the claim comes from (theorem, accountant, ...), for reports
    """

    epsilon: float
    delta: float = 0.0
    unit: str = "user"
    relation: str = "replace"
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        check_choice(self.unit, UNITS, "unit")
        check_choice(self.relation, RELATIONS, "relation")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {type(self.source).__name__}")

    @property
    def pure(self) -> bool:
        """True for pure ε-DP (δ = 0)."""
        return self.delta == 0.0

    def to_dict(self) -> dict:
        return asdict(self)
