"""``report.md``: the confirmed findings first, then what could not be decided and why, the tests
run and the false findings chance would give, a glossary of internal labels, then every claim
(a summary table, one section per paper and one per claim).

The text depends on the results document and the figure paths only, so
re-rendering saved results gives the same file byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any

from ..verdicts import FAILING, UNCHECKED
from .figures import SUMMARY_FIGURE
from .findings import (
    confirmation_line,
    evidence_paragraph,
    findings,
    glossary,
    measured,
    multiplicity_text,
    shown_in_findings,
    unchecked,
    undecided,
    why_undecided,
)
from .results import exit_code
from .text import (
    VERDICT_LABELS,
    counts_line,
    evidence_rows,
    footer_rows,
    key_figure,
    parts,
    plural,
    settings_rows,
)

__all__ = ["render_markdown"]


def _cell(text: Any) -> str:
    """Text for a line or a table cell: one line, HTML escaped (no raw tag from a registry or a
    results file survives), pipes and backticks escaped (a cell stays one cell)."""
    one_line = escape(" ".join(str(text).split()), quote=False)
    return one_line.replace("|", "\\|").replace("`", "\\`")


def _code(text: Any) -> str:
    """An id as inline code; escaped text (:func:`_cell`) when it holds anything an id does not."""
    text = str(text)
    return f"`{text}`" if re.fullmatch(r"[\w.+ \[\]-]+", text) else _cell(text)


def _verdict(verdict: str) -> str:
    label = VERDICT_LABELS[verdict]
    return f"**{label}**" if verdict in FAILING else label


def _claim_section(entry: Mapping[str, Any], figures: Mapping[str, str]) -> list[str]:
    lines = [
        f"#### {_code(entry['id'])} — {_verdict(entry['verdict'])}",
        "",
        f"*{_cell(entry['kind'])}* · {_cell(entry['source'])} · {_cell(entry['algorithm'])}",
        "",
        f"> {_cell(entry['statement'])}",
        "",
    ]
    if entry["verdict"] == "not_checkable":
        return lines + [f"Not checked: {_cell(entry['reason'])}.", ""]
    if entry["verdict"] == "not_implemented":
        return lines + [f"Not implemented here: {_cell(entry['reason'])}.", ""]
    if entry["verdict"] == "skipped":
        return lines + [
            f"Skipped at this budget (run it with a larger --budget): {_cell(entry['reason'])}.",
            "",
        ]
    if entry["verdict"] == "error":
        return lines + [
            f"The experiment failed: {_cell(entry['error'])}",
            "",
            f"Seed {entry['seed']}, {entry['wall_time']:.2f} s.",
            "",
        ]
    lines += [f"**Result:** {_cell(entry['summary'])}", ""]
    rerun = confirmation_line(entry)
    if rerun:
        lines += [f"**Confirmation:** {_cell(rerun)}", ""]
    pieces = parts(entry)
    for piece in pieces:
        if len(pieces) > 1:
            lines += [
                f"**{_cell(piece['id'])}** — {_verdict(piece['verdict'])}: "
                f"{_cell(piece['summary'])}",
                "",
            ]
        lines += ["| | |", "|---|---|"]
        lines += [
            f"| {_cell(label)} | {_cell(value)} |"
            for label, value in evidence_rows(piece, footer=False)
        ]
        lines.append("")
        if piece["id"] in figures and shown_in_findings(entry, piece):
            lines += ["Figure: under *Findings* above.", ""]
        elif piece["id"] in figures:
            alt = _cell(piece["id"]).replace("[", "(").replace("]", ")")
            lines += [f"![{alt}]({figures[piece['id']]})", ""]
    lines += [" · ".join(f"{label} {value}" for label, value in footer_rows(entry)), ""]
    return lines


def _mutants_section(report: Mapping[str, Any]) -> list[str]:
    """The kill matrix of ``dpclaims verify --mutants``: each privacy mutant through its audit."""
    from ..claims.mutation import KILL_MATRIX_HEADER, kill_matrix_cells, kill_matrix_notes

    lines = [
        "## Mutation testing",
        "",
        "| " + " | ".join(KILL_MATRIX_HEADER) + " |",
        "|" + "---|" * len(KILL_MATRIX_HEADER),
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in kill_matrix_cells(report)]
    return lines + [""] + [f"- {_cell(note)}" for note in kill_matrix_notes(report)] + [""]


def _findings_section(results: Mapping[str, Any], figures: Mapping[str, str]) -> list[str]:
    found = findings(results)
    confirmed = results["settings"].get("confirm", False)
    lines = ["## Findings", ""]
    if not found:
        return lines + ["No claim is contradicted by a confirmed finding.", ""]
    lines += [
        f"{len(found)} claim(s) contradicted by experiment"
        + (
            ", each found on the run's seed and again on an independent rerun at the same budget."
            if confirmed
            else " (findings were not confirmed by a rerun in this run)."
        ),
        "",
    ]
    for entry in found:
        lines += [
            f"### {_code(entry['id'])} — {_verdict(entry['verdict'])}",
            "",
            f"*{_cell(entry['kind'])}* · {_cell(entry['source'])} · {_cell(entry['algorithm'])}",
            "",
            f"> {_cell(entry['statement'])}",
            "",
            f"**Measured:** {_cell(measured(entry))}",
            "",
            _cell(evidence_paragraph(entry)),
            "",
        ]
        for piece in parts(entry):
            if shown_in_findings(entry, piece) and piece["id"] in figures:
                alt = _cell(piece["id"]).replace("[", "(").replace("]", ")")
                lines += [f"![{alt}]({figures[piece['id']]})", ""]
    return lines


def _undecided_section(results: Mapping[str, Any]) -> list[str]:
    open_, skipped = undecided(results), unchecked(results)
    lines = [
        "## What could not be decided",
        "",
        f"{len(open_)} checked claim(s) were not decided; {len(skipped)} were not checked "
        "(skipped at this budget, not checkable by any finite experiment, or not implemented "
        "here).",
        "",
    ]
    if open_:
        lines += ["| claim | verdict | why |", "|---|---|---|"]
        lines += [
            f"| {_code(e['id'])} | {_verdict(e['verdict'])} | {_cell(why_undecided(e))} |"
            for e in open_
        ]
        lines.append("")
    if skipped:
        lines += ["| not checked | status | why |", "|---|---|---|"]
        lines += [
            f"| {_code(e['id'])} | {_verdict(e['verdict'])} | {_cell(e['reason'])} |"
            for e in skipped
        ]
        lines.append("")
    return lines


def render_markdown(results: Mapping[str, Any], figures: Mapping[str, str]) -> str:
    """The Markdown report.

    Parameters
    ----------
    results : a validated results document
    figures : claim id (or ``"summary"``) -> figure path relative to the report

    Returns
    -------
    str, ending with a newline
    """
    claims = results["claims"]
    status = "fails (exit code 1)" if exit_code(results) else "passes (exit code 0)"
    lines = [
        "# dpclaims verification report",
        "",
        f"dpclaims {_cell(results['dpclaims_version'])} · budget "
        f"{_code(results['settings']['budget'])} · "
        f"seed {results['settings']['seed']} · {results['wall_time']:.1f} s",
        "",
        f"**{counts_line(results)}.** The run {status}.",
        "",
    ]
    lines += [
        f"**Warning:** the check module {_code(e['module'])} failed to import "
        f"({_cell(e['error'])}); "
        "the claims it registers are listed as not checkable."
        for e in results["load_errors"]
    ]
    lines += [""] if results["load_errors"] else []
    lines += _findings_section(results, figures)
    lines += _undecided_section(results)
    lines += [
        "## Tests run and false findings expected by chance",
        "",
        multiplicity_text(results),
        "",
    ]
    terms = glossary(results)
    if terms:
        lines += [
            "## Glossary",
            "",
            "Labels from the papers' specifications that appear in this report.",
            "",
            "| label | meaning |",
            "|---|---|",
        ]
        lines += [f"| {_cell(term)} | {_cell(meaning)} |" for term, meaning in terms]
        lines.append("")
    lines += [
        "## All claims",
        "",
        "A privacy claim is a *violation* when the certified lower bound on ε exceeds the "
        "claimed ε; a rate claim is *inconsistent* when the fitted exponent's interval excludes "
        "the claimed exponent ± margin, *inconclusive* when the interval is too wide to decide. "
        "Claims without an experiment are listed as not checkable, with the reason.",
        "",
        "| claim | paper | kind | verdict | key figure |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {_code(e['id'])} | {_cell(e['paper'])} | {_cell(e['kind'])} | "
        f"{_verdict(e['verdict'])} | {_cell(key_figure(e))} |"
        for e in claims
    ]
    lines.append("")
    if SUMMARY_FIGURE in figures:
        lines += [f"![claimed vs certified epsilon]({figures[SUMMARY_FIGURE]})", ""]
    for paper in results["papers"]:
        mine = [e for e in claims if e["paper"] == paper["id"]]
        checked = sum(e["verdict"] not in UNCHECKED for e in mine)
        lines += [
            f"### {_cell(paper['id'])}: {_cell(paper['title'])}",
            "",
            f"{plural(len(mine), 'claim')}, {checked} checked by experiment.",
            "",
        ]
        for entry in mine:
            lines += _claim_section(entry, figures)
    if results.get("mutants"):
        lines += _mutants_section(results["mutants"])
    lines += ["## How this report was made", "", "| | |", "|---|---|"]
    lines += [f"| {label} | {_cell(value)} |" for label, value in settings_rows(results)]
    lines += [
        "",
        "Every number above, with all statistical choices, is in `results.json`; "
        "`dpclaims report results.json --out DIR` re-renders this report from it.",
        "",
    ]
    return "\n".join(lines)
