"""Reports open with the confirmed findings, then what was not decided and why, then all claims."""

import pytest

from dpclaims.reports.findings import glossary, multiplicity_text
from dpclaims.reports.html import render_html
from dpclaims.reports.markdown import render_markdown
from dpclaims.results.evidence import allowed


def _rate(verdict, slope, note="RT-8: m sweep at n = 4096"):
    sweep = {
        "param": "m",
        "values": [100, 1000, 10000, 100000],
        "errors": [[1, 1.1]] * 4,
        "replicates": 2,
        "seed": 1,
    }
    fit = {
        "exponent": slope,
        "intercept": 0.0,
        "interval": [slope - 0.02, slope + 0.02],
        "confidence": 0.95,
        "method": "logs",
    }
    check = {
        "verdict": verdict,
        "exponent": slope,
        "interval": [slope - 0.01, slope + 0.01],
        "expected": -0.5,
        "margin": 0.15,
        "confidence": 0.9,
        "direction": "slower",
    }
    return {"sweep": sweep, "fit": fit, "check": check, "note": note}


@pytest.fixture
def document(make_claim, make_results):
    """A confirmed finding, an unconfirmed one, a claim not checkable and a consistent one."""

    def entry(claim_id, verdict, **fields):
        fields.setdefault("evidence", _rate(verdict, 0.0))
        return make_claim(claim_id, verdict, **fields)

    found = entry(
        "a.found",
        "inconsistent",
        confirmation={
            "seed": 9,
            "confirmed": True,
            "verdict": "inconsistent",
            "summary": "again",
            "evidence": _rate("inconsistent", 0.01),
        },
    )
    unconfirmed = entry(
        "b.open",
        "inconclusive",
        reason="not confirmed: the first run was "
        "inconsistent, a rerun on the independent seed 7 at the same budget was "
        "consistent",
        confirmation={
            "seed": 7,
            "confirmed": False,
            "verdict": "consistent",
            "summary": "fine",
            "evidence": _rate("consistent", -0.5),
        },
    )
    skipped = entry("c.skip", "not_checkable", type=None, evidence={}, reason="budget too small")
    fine = entry("d.fine", "consistent", evidence=_rate("consistent", -0.5, note=""))
    return make_results([fine, skipped, unconfirmed, found])


def test_markdown_puts_findings_first_then_undecided_then_every_claim(document):
    md = render_markdown(document, {"a.found": "figures/a.png", "d.fine": "figures/d.png"})
    order = [
        md.index(h)
        for h in (
            "## Findings",
            "## What could not be decided",
            "## Tests run",
            "## Glossary",
            "## All claims",
        )
    ]
    assert order == sorted(order)
    findings = md[order[0] : order[1]]
    assert "statement of a.found" in findings and "![a.found](figures/a.png)" in findings
    assert "independent seed 9" in findings and "d.fine" not in findings
    undecided = md[order[1] : order[2]]
    assert (
        "`b.open`" in undecided and "not confirmed" in undecided and "budget too small" in undecided
    )
    assert md.count("figures/a.png") == 1  # the finding's figure is not repeated in its section
    assert "| RT-n (RT-7A, RT-3n, ...) |" in md


def test_html_has_the_same_order_and_embeds_each_figure_once(document):
    html = render_html(document, {"a.found": b"png", "d.fine": b"png"})
    heads = [
        html.index(h) for h in ('id="findings"', 'id="undecided"', 'id="glossary"', 'id="all"')
    ]
    assert heads == sorted(heads) and html.count("data:image/png;base64,") == 2


def test_paragraph_reason_and_counts(document):
    doc = document
    found, unconfirmed = doc.claims[3], doc.claims[2]
    text = found.evidence_paragraph()
    assert text.startswith("A sweep of m over {100, 1000, 10000, 100000} with 2 replicates")
    assert "slope 0.010" in text and text.endswith("Setting: RT-8: m sweep at n = 4096.")
    assert unconfirmed.why_undecided().startswith("not confirmed")
    assert doc.claims[0].why_undecided().startswith("the slope's 90% interval")
    summary = multiplicity_text(doc)
    assert "3 rate tests" in summary and "at most 0.15 false findings" in summary
    assert "at most 0.007" in summary and "1 finding(s) were confirmed, 1 were not" in summary
    assert [term for term, _ in glossary(doc)] == ["RT-n (RT-7A, RT-3n, ...)"]


def test_the_evidence_states_what_the_claim_allows_by_its_bound():
    assert allowed({"expected": 0.0, "margin": 0.15, "bound": "upper"}) == "at most 0.15"
    assert allowed({"expected": -1.0, "margin": 0.1, "bound": "lower"}) == "at least -1.1"
    assert allowed({"expected": -1.0, "margin": 0.1, "bound": "order"}) == "-1 ± 0.1"
    small = {"expected": 1.0, "margin": 0.1, "bound": "upper", "limit": "small"}
    assert allowed(small) == "at least 0.9"
