"""``report.md``: the confirmed findings first, then what could not be decided and why, the tests
run and the false findings chance would give, the papers' ambiguities and errata and the
specifications' reconstructions, a glossary of internal labels, then every claim (a summary
table, one section per paper and one per claim).

The text depends on the results document and the figure paths only, so
re-rendering saved results gives the same file byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any

from ..results import ClaimResult, Results
from ..verdicts import FAILING, Verdict
from .figures import SUMMARY_FIGURE
from .findings import CAVEATS_INTRO, caveat_rows, glossary, multiplicity_text
from .text import VERDICT_LABELS, counts_line, plural, settings_rows

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


def _heading(entry: ClaimResult, level: str) -> list[str]:
    return [
        f"{level} {_code(entry.id)} — {_verdict(entry.verdict)}",
        "",
        f"*{_cell(entry.kind)}* · {_cell(entry.source)} · {_cell(entry.algorithm)}",
        "",
        f"> {_cell(entry.statement)}",
        "",
    ]


def _figure(piece: ClaimResult, figures: Mapping[str, str]) -> list[str]:
    alt = _cell(piece.id).replace("[", "(").replace("]", ")")
    return [f"![{alt}]({figures[piece.id]})", ""]


def _claim_section(entry: ClaimResult, figures: Mapping[str, str]) -> list[str]:
    lines = _heading(entry, "####")
    if entry.verdict == Verdict.NOT_CHECKABLE:
        return lines + [f"Not checked: {_cell(entry.reason)}.", ""]
    if entry.verdict == Verdict.NOT_IMPLEMENTED:
        return lines + [f"Not implemented here: {_cell(entry.reason)}.", ""]
    if entry.verdict == Verdict.SKIPPED:
        return lines + [
            f"Skipped at this budget (run it with a larger --budget): {_cell(entry.reason)}.",
            "",
        ]
    if entry.verdict == Verdict.ERROR:
        return lines + [
            f"The experiment failed: {_cell(entry.error)}",
            "",
            f"Seed {entry.seed}, {entry.wall_time:.2f} s.",
            "",
        ]
    lines += [f"**Result:** {_cell(entry.summary)}", ""]
    rerun = entry.confirmation_line()
    if rerun:
        lines += [f"**Confirmation:** {_cell(rerun)}", ""]
    pieces = entry.parts()
    for piece in pieces:
        if len(pieces) > 1:
            lines += [
                f"**{_cell(piece.id)}** — {_verdict(piece.verdict)}: {_cell(piece.summary)}",
                "",
            ]
        lines += ["| | |", "|---|---|"]
        lines += [
            f"| {_cell(label)} | {_cell(value)} |" for label, value in piece.rows(footer=False)
        ]
        lines.append("")
        if piece.id in figures and entry.shows_in_findings(piece):
            lines += ["Figure: under *Findings* above.", ""]
        elif piece.id in figures:
            lines += _figure(piece, figures)
    lines += [" · ".join(f"{label} {value}" for label, value in entry.footer_rows()), ""]
    return lines


def _mutants_section(results: Results) -> list[str]:
    """The kill matrix of ``dpclaims verify --mutants``: each privacy mutant through its audit."""
    from ..results import KILL_MATRIX_HEADER

    mutants = results.mutants
    lines = [
        "## Mutation testing",
        "",
        "| " + " | ".join(KILL_MATRIX_HEADER) + " |",
        "|" + "---|" * len(KILL_MATRIX_HEADER),
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in mutants.cells()]
    return lines + [""] + [f"- {_cell(note)}" for note in mutants.notes()] + [""]


def _findings_section(results: Results, figures: Mapping[str, str]) -> list[str]:
    found = results.findings()
    lines = ["## Findings", ""]
    if not found:
        return lines + ["No claim is contradicted by a confirmed finding.", ""]
    lines += [
        f"{len(found)} claim(s) contradicted by experiment"
        + (
            ", each found on the run's seed and again on an independent rerun at the same budget."
            if results.confirm
            else " (findings were not confirmed by a rerun in this run)."
        ),
        "",
    ]
    for entry in found:
        lines += _heading(entry, "###")
        lines += [
            f"**Measured:** {_cell(entry.measured())}",
            "",
            _cell(entry.evidence_paragraph()),
            "",
        ]
        for piece in entry.parts():
            if entry.shows_in_findings(piece) and piece.id in figures:
                lines += _figure(piece, figures)
    return lines


def _undecided_section(results: Results) -> list[str]:
    open_, skipped = results.undecided(), results.unchecked()
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
            f"| {_code(e.id)} | {_verdict(e.verdict)} | {_cell(e.why_undecided())} |" for e in open_
        ]
        lines.append("")
    if skipped:
        lines += ["| not checked | status | why |", "|---|---|---|"]
        lines += [f"| {_code(e.id)} | {_verdict(e.verdict)} | {_cell(e.reason)} |" for e in skipped]
        lines.append("")
    return lines


def _caveats_section(results: Results) -> list[str]:
    """The claims' caveats, one row each (nothing when no claim has one)."""
    rows = caveat_rows(results)
    if not rows:
        return []
    lines = ["## Ambiguities and reconstructions", "", CAVEATS_INTRO, ""]
    lines += ["| claim | kind | what |", "|---|---|---|"]
    lines += [f"| {_code(cid)} | {_cell(kind)} | {_cell(text)} |" for cid, kind, text in rows]
    return lines + [""]


def render_markdown(results: Results | Mapping[str, Any], figures: Mapping[str, str]) -> str:
    """The Markdown report.

    Parameters
    ----------
    results : a results document (or its validated JSON object)
    figures : claim id (or ``SUMMARY_FIGURE``) -> figure path relative to the report

    Returns
    -------
    str, ending with a newline
    """
    results = Results.coerce(results)
    claims = results.claims
    status = "fails (exit code 1)" if results.exit_code() else "passes (exit code 0)"
    lines = [
        "# dpclaims verification report",
        "",
        f"dpclaims {_cell(results.dpclaims_version)} · budget "
        f"{_code(results.settings.budget)} · "
        f"seed {results.settings.seed} · {results.wall_time:.1f} s",
        "",
        f"**{counts_line(results)}.** The run {status}.",
        "",
    ]
    lines += [
        f"**Warning:** the check module {_code(e.module)} failed to import "
        f"({_cell(e.error)}); "
        "the claims it registers are listed as not checkable."
        for e in results.load_errors
    ]
    lines += [""] if results.load_errors else []
    lines += _findings_section(results, figures)
    lines += _undecided_section(results)
    lines += [
        "## Tests run and false findings expected by chance",
        "",
        multiplicity_text(results),
        "",
    ]
    lines += _caveats_section(results)
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
        "A privacy claim is a *violation* when the certified lower bound on ε exceeds the ε "
        "it is audited against: the claimed ε, or a bound named as what it is (a derived bound, "
        "not the paper's, is never called claimed); a rate claim is *inconsistent* when the "
        "fitted exponent's interval excludes the claimed exponent ± margin, *inconclusive* when "
        "the interval is too wide to decide, *consistent (weak)* when the same test passes a "
        "trivial output or would miss an exponent error of 0.25 (its reach). "
        "Claims without an experiment are listed as not checkable, with the reason.",
        "",
        "| claim | paper | kind | verdict | key figure |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {_code(e.id)} | {_cell(e.paper)} | {_cell(e.kind)} | "
        f"{_verdict(e.verdict)} | {_cell(e.key_figure())} |"
        for e in claims
    ]
    lines.append("")
    if SUMMARY_FIGURE in figures:
        lines += [f"![audited vs certified epsilon]({figures[SUMMARY_FIGURE]})", ""]
    for paper in results.papers:
        mine = [e for e in claims if e.paper == paper.id]
        checked = sum(e.checked for e in mine)
        lines += [
            f"### {_cell(paper.id)}: {_cell(paper.title)}",
            "",
            f"{plural(len(mine), 'claim')}, {checked} checked by experiment.",
            "",
        ]
        for entry in mine:
            lines += _claim_section(entry, figures)
    if results.mutants is not None:
        lines += _mutants_section(results)
    lines += ["## How this report was made", "", "| | |", "|---|---|"]
    lines += [f"| {label} | {_cell(value)} |" for label, value in settings_rows(results)]
    lines += [
        "",
        "Every number above, with all statistical choices, is in `results.json`; "
        "`dpclaims report results.json --out DIR` re-renders this report from it.",
        "",
    ]
    return "\n".join(lines)
