"""``report.html``: one self-contained page (inline CSS, figures as base64 PNG, no script, no network)."""

from __future__ import annotations

import base64
import json
from html import escape
from typing import Any, Mapping

from .figures import SUMMARY_FIGURE
from .results import exit_code
from .schema import VERDICTS
from .text import VERDICT_LABELS, counts_line, evidence_rows, footer_rows, key_figure, settings_rows
from .text import parts as split_parts
from .text import plural

__all__ = ["render_html"]

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d2327;
max-width:1100px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 8px;padding-top:10px;border-top:2px solid #e3e6e8}
h3{font-size:16px;margin:0 0 6px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.meta{color:#5f6b73;margin:0 0 14px}.lead{margin:8px 0 18px}
table{border-collapse:collapse;width:100%;margin:8px 0 14px;font-size:13.5px}
th,td{border-bottom:1px solid #e3e6e8;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f5f7f8;font-weight:600}
td.nw{white-space:nowrap}td.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;white-space:nowrap}
table.kv td:first-child{color:#5f6b73;width:170px;white-space:nowrap}
a{color:#1558b0;text-decoration:none}a:hover{text-decoration:underline}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap;
font-family:system-ui,sans-serif}
.v-consistent{background:#e3f3e5;color:#1e6b25}.v-violation,.v-inconsistent,.v-error{background:#fbe4e4;color:#a31d1d}
.v-inconclusive{background:#fff1d6;color:#8a5300}.v-not_checkable{background:#eef0f2;color:#5f6b73}
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
.part{margin:12px 0 2px}.warning{background:#fbe4e4;border-left:4px solid #a31d1d;padding:8px 12px;margin:8px 0}
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


def _claim(entry: Mapping[str, Any], figures: Mapping[str, bytes]) -> str:
    verdict = entry["verdict"]
    unchecked = verdict == "not_checkable"
    parts = [
        f'<section class="claim{" unchecked" if unchecked else ""}" id="{_anchor(entry["id"])}">',
        f"<h3>{escape(entry['id'])} {_badge(verdict)}</h3>",
        f'<p class="where">{escape(entry["kind"])} · {escape(entry["source"])} · {escape(entry["algorithm"])}</p>',
        f"<blockquote>{escape(entry['statement'])}</blockquote>",
    ]
    if unchecked:
        parts.append(f'<p class="reason">Not checked: {escape(entry["reason"])}.</p>')
    elif verdict == "error":
        parts.append(f'<p>The experiment failed:</p><p class="error">{escape(entry["error"])}</p>')
        parts.append(f'<p class="reason">Seed {entry["seed"]}, {entry["wall_time"]:.2f} s.</p>')
    else:
        parts.append(f"<p><strong>Result:</strong> {escape(entry['summary'])}</p>")
        pieces = split_parts(entry)
        for piece in pieces:
            if len(pieces) > 1:
                parts.append(f'<p class="part"><code>{escape(piece["id"])}</code> {_badge(piece["verdict"])} '
                             f'{escape(piece["summary"])}</p>')
            figure = _img(figures[piece["id"]], f"figure for {piece['id']}") if piece["id"] in figures else ""
            parts.append(f'<div class="evidence">{_kv(evidence_rows(piece, footer=len(pieces) == 1))}{figure}</div>')
        if len(pieces) > 1:
            parts.append(f'<p class="reason">{" · ".join(f"{k} {v}" for k, v in footer_rows(entry))}</p>')
        evidence = json.dumps(entry["evidence"], indent=1, ensure_ascii=False)
        parts.append(f"<details><summary>All evidence (JSON)</summary><pre>{escape(evidence)}</pre></details>")
    parts.append("</section>")
    return "\n".join(parts)


def render_html(results: Mapping[str, Any], figures: Mapping[str, bytes]) -> str:
    """The HTML report.

    Parameters
    ----------
    results : a validated results document
    figures : claim id (or ``"summary"``) -> PNG bytes, embedded as data URIs

    Returns
    -------
    str: a complete HTML5 document with no script and no external reference
    """
    claims = results["claims"]
    counts = results["counts"]
    status = "fails (exit code 1)" if exit_code(results) else "passes (exit code 0)"
    badges = "".join(f"{_badge(v)}{counts[v]} &nbsp; " for v in VERDICTS if counts[v])
    rows = "".join(
        f'<tr><td class="id"><a href="#{_anchor(e["id"])}">{escape(e["id"])}</a></td>'
        f'<td class="nw">{escape(e["paper"])}</td><td class="nw">{escape(e["kind"])}</td>'
        f"<td>{_badge(e['verdict'])}</td><td>{escape(key_figure(e))}</td></tr>"
        for e in claims
    )
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>dpclaims verification report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>dpclaims verification report</h1>",
        f'<p class="meta">dpclaims {escape(results["dpclaims_version"])} · budget {escape(results["settings"]["budget"])}'
        f' · seed {results["settings"]["seed"]} · {results["wall_time"]:.1f} s · {escape(results["created"])}</p>',
        f'<p class="counts">{badges}</p>',
        f'<p class="lead"><strong>{escape(counts_line(results))}.</strong> The run {status}. A privacy claim is a '
        "<em>violation</em> when the certified lower bound on ε exceeds the claimed ε; a rate claim is "
        "<em>inconsistent</em> when the fitted exponent's interval excludes the claimed exponent ± margin, "
        "<em>inconclusive</em> when the interval is too wide to decide.</p>",
        *(f'<p class="warning"><strong>Warning:</strong> the check module <code>{escape(e["module"])}</code> failed '
          f'to import ({escape(e["error"])}); the claims it registers are listed as not checkable.</p>'
          for e in results["load_errors"]),
        "<h2>Summary</h2>",
        f"<table><tr><th>claim</th><th>paper</th><th>kind</th><th>verdict</th><th>key figure</th></tr>{rows}</table>",
    ]
    if SUMMARY_FIGURE in figures:
        out.append(_img(figures[SUMMARY_FIGURE], "claimed vs certified epsilon over all audits"))
    for paper in results["papers"]:
        mine = [e for e in claims if e["paper"] == paper["id"]]
        checked = sum(e["verdict"] not in ("not_checkable", "error") for e in mine)
        out.append(f'<h2 id="paper-{escape(paper["id"])}">{escape(paper["id"])}: {escape(paper["title"])}</h2>')
        count = plural(len(mine), "claim")
        out.append(f'<p class="meta">{count}, {checked} checked by experiment.</p>')
        out += [_claim(e, figures) for e in mine]
    if results.get("mutants"):
        from ..claims.mutation import KILL_MATRIX_HEADER, kill_matrix_cells, kill_matrix_notes

        notes = kill_matrix_notes(results["mutants"])
        head = "".join(f"<th>{escape(h)}</th>" for h in KILL_MATRIX_HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                       for row in kill_matrix_cells(results["mutants"]))
        out += ["<h2>Mutation testing</h2>", f"<table><tr>{head}</tr>{body}</table>",
                "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"]
    out.append("<h2>How this report was made</h2>")
    out.append(_kv(settings_rows(results)))
    out.append("<p class=\"meta\">Every number, with all statistical choices, is in results.json; "
               "<code>dpclaims report results.json --out DIR</code> re-renders this report from it.</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
