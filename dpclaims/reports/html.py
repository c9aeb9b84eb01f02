"""``report.html``: one self-contained page (inline CSS, base64 PNG figures, no script or network).

Same order as ``report.md``: confirmed findings, what could not be decided and why, tests run and
false findings expected by chance, the papers' ambiguities and errata and the specifications'
reconstructions, a glossary of internal labels, then every claim.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from html import escape
from typing import Any

from ..results import VERDICTS, ClaimResult, Results
from ..verdicts import NOT_RUN, Verdict
from .figures import SUMMARY_FIGURE
from .findings import CAVEATS_INTRO, caveat_rows, glossary, multiplicity_text
from .text import VERDICT_LABELS, counts_line, plural, settings_rows

__all__ = ["render_html"]

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:#1d2327;
max-width:1100px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 8px;padding-top:10px;
border-top:2px solid #e3e6e8}
h3{font-size:16px;margin:0 0 6px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.meta{color:#5f6b73;margin:0 0 14px}.lead{margin:8px 0 18px}
table{border-collapse:collapse;width:100%;margin:8px 0 14px;font-size:13.5px}
th,td{border-bottom:1px solid #e3e6e8;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f5f7f8;font-weight:600}
td.nw{white-space:nowrap}td.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:12.5px;white-space:nowrap}
table.kv td:first-child{color:#5f6b73;width:170px;white-space:nowrap}
a{color:#1558b0;text-decoration:none}a:hover{text-decoration:underline}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
white-space:nowrap;
font-family:system-ui,sans-serif}
.v-consistent{background:#e3f3e5;color:#1e6b25}
.v-consistent_weak{background:#eef3e0;color:#4d6b1e}
.v-violation,.v-inconsistent,.v-error{background:#fbe4e4;color:#a31d1d}
.v-inconclusive{background:#fff1d6;color:#8a5300}.v-not_checkable,.v-not_implemented{background:#eef0f2;color:#5f6b73}
.v-formula{background:#eef0f2;color:#2e5f73}
.counts .badge{margin-right:6px;font-size:13px;padding:3px 10px}
section.claim{border:1px solid #e3e6e8;border-radius:6px;padding:12px 16px;margin:12px 0}
section.claim.unchecked{padding:8px 16px;background:#fafbfb}
.where{color:#5f6b73;font-size:13px;margin:0 0 6px}
blockquote{margin:6px 0 8px;padding:4px 12px;border-left:3px solid #cfd6db;color:#333}
img{max-width:100%;height:auto;display:block;margin:8px 0}
.evidence{display:flex;flex-wrap:wrap;gap:8px 20px;align-items:flex-start}
.evidence table{flex:1 1 420px;width:auto}.evidence img{flex:0 0 auto;margin:4px 0}
details{margin-top:6px}summary{cursor:pointer;color:#1558b0;font-size:13px}
pre{background:#f5f7f8;padding:10px;overflow-x:auto;font-size:12px;max-height:420px}
.error{color:#a31d1d;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.reason{color:#5f6b73;font-size:13.5px;margin:4px 0 0}
.part{margin:12px 0 2px}.warning{background:#fbe4e4;border-left:4px solid #a31d1d;padding:8px 12px;
margin:8px 0}
"""


def _badge(verdict: str) -> str:
    return f'<span class="badge v-{verdict}">{escape(VERDICT_LABELS[verdict])}</span>'


def _anchor(claim_id: str) -> str:
    return "claim-" + escape("".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in claim_id))


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _kv(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="kv">{body}</table>'


def _where(entry: ClaimResult) -> str:
    return " · ".join(escape(text) for text in (entry.kind, entry.source, entry.algorithm))


def _claim(entry: ClaimResult, figures: Mapping[str, bytes]) -> str:
    verdict = entry.verdict
    unchecked = verdict in NOT_RUN
    parts = [
        f'<section class="claim{" unchecked" if unchecked else ""}" id="{_anchor(entry.id)}">',
        f"<h3>{escape(entry.id)} {_badge(verdict)}</h3>",
        f'<p class="where">{_where(entry)}</p>',
        f"<blockquote>{escape(entry.statement)}</blockquote>",
    ]
    if unchecked:
        parts.append(f'<p class="reason">Not checked: {escape(entry.reason)}.</p>')
    elif verdict == Verdict.ERROR:
        parts.append(f'<p>The experiment failed:</p><p class="error">{escape(entry.error)}</p>')
        parts.append(f'<p class="reason">Seed {entry.seed}, {entry.wall_time:.2f} s.</p>')
    else:
        parts.append(f"<p><strong>Result:</strong> {escape(entry.summary)}</p>")
        rerun = entry.confirmation_line()
        if rerun:
            parts.append(f"<p><strong>Confirmation:</strong> {escape(rerun)}</p>")
        pieces = entry.parts()
        for piece in pieces:
            if len(pieces) > 1:
                code, badge = escape(piece.id), _badge(piece.verdict)
                parts.append(
                    f'<p class="part"><code>{code}</code> {badge} {escape(piece.summary)}</p>'
                )
            if piece.id not in figures:
                figure = ""
            elif entry.shows_in_findings(piece):
                figure = (
                    '<p class="reason">Figure: under <a href="#findings">Findings</a> above.</p>'
                )
            else:
                figure = _img(figures[piece.id], f"figure for {piece.id}")
            rows = _kv(piece.rows(footer=len(pieces) == 1))
            parts.append(f'<div class="evidence">{rows}{figure}</div>')
        if len(pieces) > 1:
            parts.append(
                f'<p class="reason">{" · ".join(f"{k} {v}" for k, v in entry.footer_rows())}</p>'
            )
        evidence = json.dumps(entry.evidence.to_json(), indent=1, ensure_ascii=False)
        parts.append(
            "<details><summary>All evidence (JSON)</summary>"
            f"<pre>{escape(evidence)}</pre></details>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _claim_link(entry: ClaimResult) -> str:
    return f'<a href="#{_anchor(entry.id)}">{escape(entry.id)}</a>'


def _findings_html(results: Results, figures: Mapping[str, bytes]) -> list[str]:
    found = results.findings()
    out = ['<h2 id="findings">Findings</h2>']
    if not found:
        return out + ["<p>No claim is contradicted by a confirmed finding.</p>"]
    if results.confirm:
        how = ", each found on the run's seed and again on an independent rerun at the same budget."
    else:
        how = " (findings were not confirmed by a rerun in this run)."
    out.append(f"<p>{len(found)} claim(s) contradicted by experiment{escape(how)}</p>")
    for entry in found:
        images = "".join(
            _img(figures[p.id], f"figure for {p.id}")
            for p in entry.parts()
            if entry.shows_in_findings(p) and p.id in figures
        )
        out.append(
            "\n".join(
                [
                    '<section class="claim">',
                    f"<h3>{_claim_link(entry)} {_badge(entry.verdict)}</h3>",
                    f'<p class="where">{_where(entry)}</p>',
                    f"<blockquote>{escape(entry.statement)}</blockquote>",
                    f"<p><strong>Measured:</strong> {escape(entry.measured())}</p>",
                    f"<p>{escape(entry.evidence_paragraph())}</p>",
                    images,
                    "</section>",
                ]
            )
        )
    return out


def _undecided_html(results: Results) -> list[str]:
    open_, skipped = results.undecided(), results.unchecked()
    out = [
        '<h2 id="undecided">What could not be decided</h2>',
        f"<p>{len(open_)} checked claim(s) were not decided; {len(skipped)} were not checked "
        "(skipped at this budget, not checkable by any finite experiment, or not implemented "
        "here).</p>",
    ]
    if open_:
        rows = "".join(
            f'<tr><td class="id">{_claim_link(e)}</td><td>{_badge(e.verdict)}</td>'
            f"<td>{escape(e.why_undecided())}</td></tr>"
            for e in open_
        )
        out.append(f"<table><tr><th>claim</th><th>verdict</th><th>why</th></tr>{rows}</table>")
    if skipped:
        rows = "".join(
            f'<tr><td class="id">{_claim_link(e)}</td><td>{_badge(e.verdict)}</td>'
            f"<td>{escape(e.reason)}</td></tr>"
            for e in skipped
        )
        out.append(f"<table><tr><th>not checked</th><th>status</th><th>why</th></tr>{rows}</table>")
    return out


def _caveats_html(results: Results) -> list[str]:
    """The claims' caveats, one row each (nothing when no claim has one)."""
    rows = caveat_rows(results)
    if not rows:
        return []
    body = "".join(
        f'<tr><td class="id"><a href="#{_anchor(cid)}">{escape(cid)}</a></td>'
        f'<td class="nw">{escape(kind)}</td><td>{escape(text)}</td></tr>'
        for cid, kind, text in rows
    )
    return [
        '<h2 id="caveats">Ambiguities and reconstructions</h2>',
        f"<p>{escape(CAVEATS_INTRO)}</p>",
        f"<table><tr><th>claim</th><th>kind</th><th>what</th></tr>{body}</table>",
    ]


def render_html(results: Results | Mapping[str, Any], figures: Mapping[str, bytes]) -> str:
    """The HTML report.

    Parameters
    ----------
    results : a results document (or its validated JSON object)
    figures : claim id (or ``SUMMARY_FIGURE``) -> PNG bytes, embedded as data URIs

    Returns
    -------
    str: a complete HTML5 document with no script and no external reference
    """
    results = Results.coerce(results)
    claims = results.claims
    counts = results.counts
    status = "fails (exit code 1)" if results.exit_code() else "passes (exit code 0)"
    badges = "".join(f"{_badge(v)}{counts[v]} &nbsp; " for v in VERDICTS if counts.get(v))
    rows = "".join(
        f'<tr><td class="id">{_claim_link(e)}</td>'
        f'<td class="nw">{escape(e.paper)}</td><td class="nw">{escape(e.kind)}</td>'
        f"<td>{_badge(e.verdict)}</td><td>{escape(e.key_figure())}</td></tr>"
        for e in claims
    )
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>dpclaims verification report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>dpclaims verification report</h1>",
        f'<p class="meta">dpclaims {escape(results.dpclaims_version)} · budget '
        f"{escape(results.settings.budget)}"
        f" · seed {results.settings.seed} · {results.wall_time:.1f} s · "
        f"{escape(results.created)}</p>",
        f'<p class="counts">{badges}</p>',
        f'<p class="lead"><strong>{escape(counts_line(results))}.</strong> The run {status}.</p>',
        *(
            '<p class="warning"><strong>Warning:</strong> the check module '
            f"<code>{escape(e.module)}</code> failed "
            f"to import ({escape(e.error)}); the claims it registers are listed as not "
            "checkable.</p>"
            for e in results.load_errors
        ),
        *_findings_html(results, figures),
        *_undecided_html(results),
        "<h2>Tests run and false findings expected by chance</h2>",
        f"<p>{escape(multiplicity_text(results))}</p>",
        *_caveats_html(results),
    ]
    terms = glossary(results)
    if terms:
        body = "".join(f"<tr><td>{escape(t)}</td><td>{escape(m)}</td></tr>" for t, m in terms)
        out += [
            '<h2 id="glossary">Glossary</h2>',
            "<p>Labels from the papers' specifications that appear in this report.</p>",
            f"<table><tr><th>label</th><th>meaning</th></tr>{body}</table>",
        ]
    out += [
        '<h2 id="all">All claims</h2>',
        '<p class="lead">A privacy claim is a <em>violation</em> when the certified lower bound '
        "on ε exceeds the ε it is audited against: the claimed ε, or a bound named as what it "
        "is (a derived bound, not the paper's, is never called claimed); a rate claim is "
        "<em>inconsistent</em> when the fitted "
        "exponent's interval excludes the claimed exponent ± margin, <em>inconclusive</em> when "
        "the interval is too wide to decide, <em>consistent (weak)</em> when the same test "
        "passes a trivial output or would miss an exponent error of 0.25 (its reach).</p>",
        "<table><tr><th>claim</th><th>paper</th><th>kind</th><th>verdict</th><th>key "
        f"figure</th></tr>{rows}</table>",
    ]
    if SUMMARY_FIGURE in figures:
        out.append(_img(figures[SUMMARY_FIGURE], "audited vs certified epsilon over all audits"))
    for paper in results.papers:
        mine = [e for e in claims if e.paper == paper.id]
        checked = sum(e.checked for e in mine)
        out.append(
            f'<h2 id="paper-{escape(paper.id)}">{escape(paper.id)}: {escape(paper.title)}</h2>'
        )
        count = plural(len(mine), "claim")
        out.append(f'<p class="meta">{count}, {checked} checked by experiment.</p>')
        out += [_claim(e, figures) for e in mine]
    if results.mutants is not None:
        from ..results import KILL_MATRIX_HEADER

        notes = results.mutants.notes()
        head = "".join(f"<th>{escape(h)}</th>" for h in KILL_MATRIX_HEADER)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
            for row in results.mutants.cells()
        )
        out += [
            "<h2>Mutation testing</h2>",
            f"<table><tr>{head}</tr>{body}</table>",
            "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>",
        ]
    out.append("<h2>How this report was made</h2>")
    out.append(_kv(settings_rows(results)))
    out.append(
        '<p class="meta">Every number, with all statistical choices, is in results.json; '
        "<code>dpclaims report results.json --out DIR</code> re-renders this report from it.</p>"
    )
    out.append("</body></html>")
    return "\n".join(out) + "\n"
