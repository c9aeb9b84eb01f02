"""Plain-text pieces shared by the Markdown and HTML writers and the command line.

A claim's own rows, key figure and sentences come from its result
(:meth:`~dpclaims.results.ClaimResult.rows`, :meth:`~dpclaims.results.ClaimResult.key_figure`);
this module holds what is about the whole document.
"""

from __future__ import annotations

import hashlib
import re

from ..results import VERDICTS, Results
from ..results.display import plural

__all__ = [
    "SUMMARY_FIGURE",
    "figure_name",
    "counts_line",
    "settings_rows",
    "plural",
    "VERDICT_LABELS",
]

VERDICT_LABELS = {
    "consistent": "consistent",
    "consistent_weak": "consistent (weak)",
    "formula": "formula",
    "violation": "VIOLATION",
    "inconsistent": "INCONSISTENT",
    "inconclusive": "inconclusive",
    "skipped": "skipped",
    "not_checkable": "not checkable",
    "not_implemented": "not implemented",
    "error": "ERROR",
}


MAX_FIGURE_STEM = 80
"""The longest figure file name (without the suffix) taken from an id as it is."""

SUMMARY_FIGURE = "[summary]"
"""Key of the summary chart among the claim figures, drawn as ``summary.png``: no claim id
holds ``[`` (:data:`~dpclaims.claims.model.CLAIM_ID_PATTERN`) and no part id
(``"<claim id> [<part>]"``) starts with one, and a claim ``summary`` gets another file name."""

_SUMMARY_FILE = "summary.png"


def figure_name(claim_id: str) -> str:
    """File name of a claim's figure: the id with ``.png`` when it is at most
    :data:`MAX_FIGURE_STEM` characters of ``[A-Za-z0-9._-]`` not starting with a dot; else its
    first such characters (anything else replaced by ``_``) and a digest of the whole id, so
    that two ids never share a file and a name stays short.  :data:`SUMMARY_FIGURE` is
    ``summary.png``, which no id gets."""
    if claim_id == SUMMARY_FIGURE:
        return _SUMMARY_FILE
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", claim_id)
    fits = len(safe) <= MAX_FIGURE_STEM and not safe.startswith(".")
    if safe == claim_id and fits and f"{safe}.png" != _SUMMARY_FILE:
        return f"{safe}.png"
    digest = hashlib.sha256(claim_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{safe.lstrip('.')[: MAX_FIGURE_STEM - 13]}-{digest}.png"


def counts_line(results: Results) -> str:
    """E.g. ``"150 claims: 3 consistent, 1 violation, 146 not checkable"`` (zero counts left
    out)."""
    counts = results.counts
    parts = [f"{counts[v]} {VERDICT_LABELS[v].lower()}" for v in VERDICTS if counts.get(v)]
    return f"{plural(len(results.claims), 'claim')}: " + ", ".join(parts)


def settings_rows(results: Results) -> list[tuple[str, str]]:
    """(label, value) rows describing how the results were produced."""
    s, env = results.settings, results.environment
    versions = ", ".join(f"{k} {v}" for k, v in env.versions.items() if v)
    rows = [
        ("created", results.created),
        ("budget", s.budget),
        (
            "seed",
            f"{s.seed} (each claim runs with its own seed derived from it and the claim id)",
        ),
        ("backend", f"{s.backend}, workers {s.workers if s.workers else 'all cores'}"),
        (
            "selection",
            f"papers {', '.join(s.papers) if s.papers else 'all'}; "
            f"claims {', '.join(s.claims) if s.claims else 'all'}",
        ),
    ]
    if s.options:
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in s.options.items())))
    rows += [
        ("wall time", f"{results.wall_time:.1f} s"),
        ("versions", versions),
        ("python", f"{env.python} on {env.platform}, {env.cpu_count} cores"),
    ]
    return rows
