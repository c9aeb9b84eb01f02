"""The kill matrix of ``dpclaims verify --mutants`` as a record: each privacy mutant through its
audit, the mutation score, and its rendering (cells, notes, a plain-text table).

:func:`dpclaims.claims.mutation.kill_matrix` runs the audits and builds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .codec import decode, encode

__all__ = ["KILL_MATRIX_HEADER", "MutationSummary", "killed_by"]

KILL_MATRIX_HEADER = ("mutant", "audit", "true ε", "audited ε", "certified ε ≥", "verdict", "s")
"""The columns of :meth:`MutationSummary.cells`."""


def killed_by(rows: Sequence[Mapping[str, Any]]) -> dict:
    """``{audit id: {"kills": [...], "survivors": [...], "white_box": [...]}}`` from the rows."""
    out: dict[str, dict[str, list]] = {}
    for row in rows:
        entry = out.setdefault(row["audit"], {"kills": [], "survivors": [], "white_box": []})
        key = (
            "white_box"
            if row["verdict"] == "not audited"
            else ("kills" if row["killed"] else "survivors")
        )
        entry[key].append(row["mutant"])
    return out


def _eps(value: Any) -> str:
    return "—" if value is None else ("∞" if value == "inf" else f"{value:.3g}")


@dataclass(frozen=True)
class MutationSummary:
    """Every privacy mutant through its audit (the ``mutants`` object of results.json).

    ``matrix`` holds one row per mutant (``mutant``, ``paper``, ``audit``, ``true_epsilon``,
    ``claimed_epsilon``, ``epsilon_lower``, ``verdict``, ``killed``, ``seconds``, ...);
    ``audits`` the mutants each audit kills (:func:`killed_by`).  ``mutation_score`` is the
    fraction of audited mutants killed (None when none was audited).
    """

    budget: str
    mutation_score: float | None
    privacy_mutants: int
    audited: int
    killed: int
    matrix: tuple[Mapping[str, Any], ...]
    audits: Mapping[str, Mapping[str, list]] | None = None

    def __post_init__(self) -> None:
        if self.audits is None:  # a file written before the audits were recorded
            object.__setattr__(self, "audits", killed_by(self.matrix))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MutationSummary:
        return decode(cls, data)

    def to_json(self) -> dict:
        return encode(self)

    def cells(self) -> list[tuple[str, ...]]:
        """One tuple of display strings per mutant, in the order of :data:`KILL_MATRIX_HEADER`."""
        return [
            (
                r["mutant"],
                r["audit"],
                _eps(r["true_epsilon"]),
                "—" if r["claimed_epsilon"] is None else f"{r['claimed_epsilon']:g}",
                _eps(r["epsilon_lower"]),
                ("killed" if r["killed"] else r["verdict"])
                if r["verdict"] != "not audited"
                else "white-box only",
                f"{r['seconds']:.1f}",
            )
            for r in self.matrix
        ]

    def notes(self) -> list[str]:
        """The score, then per audit the mutants it kills (or that it kills none of them)."""
        score = self.mutation_score
        shown = "—" if score is None else f"{score:.3f}"
        white_box = self.privacy_mutants - self.audited
        lines = [
            f"mutation score {shown}: {self.killed} of {self.audited} audited privacy "
            f"mutants killed ({self.privacy_mutants} registered, {white_box} left to white-box "
            f"checks), budget {self.budget}"
        ]
        for audit_id, entry in self.audits.items():
            if entry["kills"]:
                lines.append(
                    f"{audit_id} kills {', '.join(entry['kills'])}"
                    + (
                        f"; survivors: {', '.join(entry['survivors'])}"
                        if entry["survivors"]
                        else ""
                    )
                )
            elif entry["survivors"]:
                lines.append(
                    f"{audit_id} kills none of its algorithm's {len(entry['survivors'])} audited "
                    "privacy "
                    f"mutant(s): {', '.join(entry['survivors'])}"
                )
        return lines

    def lines(self) -> list[str]:
        """The kill matrix as a plain-text table, then :meth:`notes`."""
        cells = [KILL_MATRIX_HEADER, *self.cells()]
        widths = [max(len(row[i]) for row in cells) for i in range(len(KILL_MATRIX_HEADER))]
        lines = [
            "  ".join(
                c.ljust(w) if i < 2 or i == 5 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            for row in cells
        ]
        return lines + self.notes()
