"""Figures, Markdown and HTML rendered from result entries alone."""

import json
import math
import re
from dataclasses import replace
from html import escape

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.reports.figures import (
    audit_figure,
    claim_figure,
    rate_figure,
    summary_figure,
    tradeoff_bound,
)
from dpclaims.reports.html import render_html
from dpclaims.reports.markdown import render_markdown
from dpclaims.reports.text import figure_name
from dpclaims.results import ValueEvidence

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def audit_entry(make_claim, audit_record):
    """``audit_entry(verdict, lower)``: a checked audit's result."""

    def entry(verdict="consistent", lower=0.8):
        return make_claim(
            "x.audit",
            verdict,
            kind="privacy",
            algorithm="A | B",
            source="Thm 1",
            statement="is <private> & fine",
            type="audit",
            evidence=audit_record(lower),
            seed=3,
            wall_time=0.5,
        )

    return entry


@pytest.fixture
def rate_entry(make_claim):
    return make_claim("x.rate", algorithm="A | B", statement="is <private> & fine")


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 5), st.floats(0, 0.2))
def test_tradeoff_bound_is_a_valid_tradeoff_curve(epsilon, delta):
    alpha = np.linspace(0, 1, 201)
    beta = tradeoff_bound(alpha, epsilon, delta)
    assert np.all(np.diff(beta) <= 1e-12) and beta[0] == pytest.approx(1 - delta) and beta[-1] == 0
    assert np.all(beta <= 1 - alpha + 1e-12)  # never better than random guessing
    # the two constraints are the (eps, delta)-DP hypothesis-testing inequalities
    assert np.all(beta >= 1 - delta - math.exp(epsilon) * alpha - 1e-12)


def test_figures_are_pngs_and_deterministic(audit_entry, rate_entry):
    for draw, entry in ((audit_figure, audit_entry()), (rate_figure, rate_entry)):
        png = draw(entry)
        assert png.startswith(PNG) and png == draw(entry)
    entries = [audit_entry(), audit_entry("violation", 1.7), rate_entry]
    assert summary_figure(entries).startswith(PNG)


def test_figures_only_for_checked_audits_and_rates(audit_entry, rate_entry):
    assert claim_figure(replace(audit_entry(), verdict="error")) is None
    assert (
        claim_figure(replace(audit_entry(), type="value", evidence=ValueEvidence(checks={})))
        is None
    )
    assert summary_figure([rate_entry]) is None
    # an infinite bound is stored as null
    assert audit_figure(audit_entry(lower=None)).startswith(PNG)


def test_key_figures_and_rows(audit_entry, rate_entry):
    assert audit_entry().key_figure() == "ε ≥ 0.800 (claimed 1)"
    assert rate_entry.key_figure() == "slope -1.000 [-1.050, -0.950] vs -1 ± 0.1"
    rows = dict(audit_entry().rows())
    assert (
        rows["trials"] == "1000 per dataset: 200 calibration, 800 certification"
        and "audit seed" not in rows
    )
    assert dict(rate_entry.rows())["fixed"] == "d=2"
    assert figure_name("a_b.c-d") == "a_b.c-d.png"
    assert re.fullmatch(r"a_b_c\.d-[0-9a-f]{12}\.png", figure_name("a b/c.d"))
    assert figure_name("a b/c.d") != figure_name("a_b_c.d") != figure_name("a b_c.d")
    assert len(figure_name("x" * 5000)) <= 84 and not figure_name("..").startswith(".")


def test_small_bounds_keep_their_digits(audit_entry):
    """0.0004 is not 0.000: a bound that 3 (or 4) decimals would round to zero keeps 2
    significant digits, in the key figure, the evidence rows and the findings' sentences."""
    entry = audit_entry(lower=0.0004)
    entry = replace(entry, evidence=replace(entry.evidence, ceiling=4e-5))
    assert entry.key_figure() == "ε ≥ 0.0004 (claimed 1)"
    rows = dict(entry.rows())
    assert rows["lower bound"].startswith("0.0004 ") and rows["ceiling"].startswith("4e-05 ")
    assert "ε ≥ 0.0004 at confidence" in entry.evidence_paragraph()
    assert audit_entry(lower=0.0).key_figure() == "ε ≥ 0.000 (claimed 1)"


def test_markdown_and_html_escape_claim_text(make_results, audit_entry, rate_entry):
    doc = make_results([audit_entry(), rate_entry])
    md = render_markdown(doc, {"x.audit": "figures/x.audit.png"})
    assert "A \\| B" in md and "![x.audit](figures/x.audit.png)" in md
    html = render_html(doc, {"x.audit": b"png"})
    assert "is &lt;private&gt; &amp; fine" in html and "<private>" not in html
    assert html.count("data:image/png;base64,") == 1
    assert json.dumps(doc.to_json())  # the renderers left the document serialisable


def _drawn(monkeypatch, draw, entry):
    """The matplotlib figure ``draw(entry)`` makes, drawn (instead of its PNG bytes)."""
    from dpclaims.reports import figures

    made = []
    monkeypatch.setattr(figures, "_png", made.append)
    draw(entry)
    (fig,) = made
    fig.canvas.draw()
    return fig


def _shown(text) -> str:
    """What matplotlib draws for a Text (or a title's string, drawn with mathtext on): its
    string, or a marker when it renders a formula."""
    from matplotlib import cbook

    string = text if isinstance(text, str) else text.get_text()
    parsed = isinstance(text, str) or text.get_parse_math()
    if parsed and cbook.is_math_text(string):
        return "<formula>"
    return string.replace(r"\$", "$")


def test_log_axes_draw_their_tick_labels_as_numbers_and_user_text_literally(
    monkeypatch, make_claim, audit_entry
):
    """Tick labels of log axes are formulas drawn as 10^k, never their source text, while a
    ``$`` in an id, a parameter or a claimed rate is drawn as written; the y axis names what
    is measured."""
    entry = make_claim("p.$x$.rate", kind="excess_risk")
    evidence = entry.evidence
    evidence = replace(
        evidence,
        sweep={**evidence.sweep, "param": "$n$"},
        check={**evidence.check, "claimed": "O($n^{-1}$)"},
    )
    entry = replace(entry, evidence=evidence)
    fig = _drawn(monkeypatch, rate_figure, entry)
    ax = fig.axes[0]
    ticks = [t for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and all(_shown(t) == "<formula>" for t in ticks)
    renderer = fig.canvas.get_renderer()
    assert max(t.get_window_extent(renderer).width for t in ticks) < 60  # not the source's width
    assert _shown(ax.get_title(loc="left")) == "p.$x$.rate — consistent"
    assert _shown(ax.xaxis.label) == "$n$"
    assert ax.get_ylabel() == "excess risk (or distance)"
    legend = [_shown(t) for t in ax.get_legend().get_texts()]
    assert "claimed O($n^{-1}$) (order, margin 0.1)" in legend
    audit = replace(audit_entry(), id="a.$\\alpha_{$")
    ax = _drawn(monkeypatch, audit_figure, audit).axes[0]
    assert all(_shown(t) == "<formula>" for t in ax.get_xticklabels() if t.get_text())
    assert _shown(ax.get_title(loc="left")) == "a.$\\alpha_{$ — consistent"
    fig = _drawn(monkeypatch, summary_figure, [audit])
    assert [_shown(t) for t in fig.axes[0].get_yticklabels()] == ["a.$\\alpha_{$"]


def test_a_claim_named_summary_keeps_its_figure_beside_the_summary_chart(
    tmp_path, make_claim, make_results, audit_record
):
    from dpclaims.reports import write_report

    claim = make_claim("summary", kind="privacy", type="audit", evidence=audit_record())
    write_report(make_results([claim]), tmp_path / "out")
    figures = tmp_path / "out" / "figures"
    names = sorted(p.name for p in figures.iterdir())
    assert len(names) == 2 and names[0] == figure_name("summary") != "summary.png"
    assert names[1] == "summary.png"
    assert (figures / names[0]).read_bytes() != (figures / names[1]).read_bytes()
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert markdown.count("(figures/summary.png)") == 1
    assert markdown.count(f"(figures/{names[0]})") == 1
    html = (tmp_path / "out" / "report.html").read_text()
    assert html.count("figure for summary") == 1 and html.count("over all audits") == 1


def test_ambiguities_and_reconstructions_section(make_results, make_claim, audit_entry):
    """Every claim's caveat is a row of the section, with its claim and kind in words; a claim
    without one adds none, and a report of claims without caveats has no section."""
    caveats = [
        {"kind": "ambiguity", "text": "line 4 draws xi per step; the proof draws it once"},
        {"kind": "reconstruction", "text": "the budget split is the spec's"},
    ]
    doc = make_results(
        [
            audit_entry(),
            make_claim("x.amb", caveats=caveats),
            make_claim("x.err", caveats=[{"kind": "erratum", "text": "eq. (3) drops a 1/2"}]),
        ]
    )
    md = render_markdown(doc, {})
    section = md.split("## Ambiguities and reconstructions\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows == [
        "| `x.amb` | ambiguity of the paper | line 4 draws xi per step; the proof draws it once |",
        "| `x.amb` | reconstruction by the specification | the budget split is the spec's |",
        "| `x.err` | erratum of the paper | eq. (3) drops a 1/2 |",
    ]
    html = render_html(doc, {})
    table = html.split('<h2 id="caveats">Ambiguities and reconstructions</h2>', 1)[1]
    table = table.split("</table>", 1)[0]
    assert table.count("<tr>") == 4 and '<a href="#claim-x.err">x.err</a>' in table
    assert "erratum of the paper</td><td>eq. (3) drops a 1/2</td>" in table
    plain = make_results([audit_entry()])
    assert "Ambiguities" not in render_markdown(plain, {}) + render_html(plain, {})


def test_results_without_caveats_still_load(results):
    """A results.json written before claims carried caveats loads, with none."""
    from dpclaims.results import Results, validate_results

    data = results.to_json()
    for entry in data["claims"]:
        del entry["caveats"]
    validate_results(data)
    assert all(entry.caveats == () for entry in Results.from_json(data).claims)


def test_a_derived_bound_is_never_printed_as_claimed():
    """Issue 36: an LLA24 privacy result audits the paper's (2, 1e-5) and the halt bit's bound
    derived here (≈ 0.2); report.md, report.html and the key figure print the derived one as
    "derived bound, not the paper's", never as "claimed", and the paper's as claimed."""
    from dpclaims import claims
    from dpclaims.claims.run import run_claims
    from dpclaims.execution import Execution

    doc = run_claims(
        [claims.get("lla24.alg1.privacy")], execution=Execution(backend="serial"), confirm=False
    )
    (entry,) = doc.claims
    parts = {piece.part_name: piece for piece in entry.parts()}
    derived = f"{parts['derived'].evidence.epsilon:g}"
    assert derived.startswith("0.1999") and parts["derived"].evidence.bound
    label = "derived bound, not the paper's"
    md, html = render_markdown(doc, {}), render_html(doc, {})
    for text in (md, html, entry.key_figure(), parts["derived"].key_figure()):
        assert f"claimed {derived}" not in text and f"claimed ({derived}" not in text
    assert f"| audited bound | {label}: ({derived}, 1e-05)-DP" in md
    assert (
        f"vs {label}: {derived} " in md and f"({label}: {derived})" in parts["derived"].key_figure()
    )
    assert f"<td>audited bound</td><td>{escape(label)}: ({derived}, 1e-05)-DP" in html
    assert "| claim | (2, 1e-05)-DP, user level, replace |" in md and "vs claimed 2 " in md


def test_figures_never_call_a_derived_bound_claimed(monkeypatch, audit_entry):
    """An audit against a bound that is not the paper's claim is drawn under that bound's name:
    in its trade-off legend and as its own marker in the summary chart."""
    entry = audit_entry()
    entry = replace(entry, evidence=replace(entry.evidence, bound="derived bound, not the paper's"))
    axes = _drawn(monkeypatch, audit_figure, entry).axes[0]
    legend = [t.get_text() for t in axes.get_legend().texts]
    assert not any(text.startswith("claimed") for text in legend)
    assert any(text.startswith("derived bound, not the paper's:") for text in legend)
    plain = audit_entry()
    summary = _drawn(monkeypatch, summary_figure, [entry, plain])
    labels = [t.get_text() for t in summary.legends[0].texts]
    assert "claimed ε" in labels and "a bound, not the claim" in labels
