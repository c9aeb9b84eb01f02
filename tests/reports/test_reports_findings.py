"""Reports open with the confirmed findings, then what was not decided and why, then all claims."""

from dpclaims.claims.run import multiplicity
from dpclaims.reports.findings import (
    evidence_paragraph,
    glossary,
    multiplicity_text,
    why_undecided,
)
from dpclaims.reports.html import render_html
from dpclaims.reports.markdown import render_markdown
from dpclaims.reports.schema import VERDICTS


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


def _entry(claim_id, verdict, **fields):
    base = {
        "id": claim_id,
        "paper": "p",
        "kind": "excess_risk",
        "algorithm": "A",
        "source": "Thm 5.1",
        "statement": f"statement of {claim_id}",
        "verdict": verdict,
        "type": "rate",
        "summary": "s",
        "reason": None,
        "error": None,
        "evidence": _rate(verdict, 0.0),
        "seed": 1,
        "wall_time": 0.1,
        "confirmation": None,
    }
    return {**base, **fields}


def _document():
    found = _entry(
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
    unconfirmed = _entry(
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
    skipped = _entry("c.skip", "not_checkable", type=None, evidence={}, reason="budget too small")
    fine = _entry("d.fine", "consistent", evidence=_rate("consistent", -0.5, note=""))
    entries = [fine, skipped, unconfirmed, found]
    return {
        "schema_version": 1,
        "dpclaims_version": "0.1.0",
        "created": "2024-01-01T00:00:00Z",
        "settings": {
            "budget": "quick",
            "seed": 0,
            "backend": "auto",
            "workers": None,
            "papers": None,
            "claims": None,
            "options": {},
            "confirm": True,
        },
        "environment": {"python": "3.11", "platform": "linux", "cpu_count": 2, "versions": {}},
        "papers": [{"id": "p", "title": "A paper"}],
        "load_errors": [],
        "wall_time": 1.0,
        "counts": {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS},
        "multiplicity": multiplicity(entries),
        "claims": entries,
    }


def test_markdown_puts_findings_first_then_undecided_then_every_claim():
    md = render_markdown(_document(), {"a.found": "figures/a.png", "d.fine": "figures/d.png"})
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


def test_html_has_the_same_order_and_embeds_each_figure_once():
    html = render_html(_document(), {"a.found": b"png", "d.fine": b"png"})
    heads = [
        html.index(h) for h in ('id="findings"', 'id="undecided"', 'id="glossary"', 'id="all"')
    ]
    assert heads == sorted(heads) and html.count("data:image/png;base64,") == 2


def test_paragraph_reason_and_counts():
    doc = _document()
    found, unconfirmed = doc["claims"][3], doc["claims"][2]
    text = evidence_paragraph(found)
    assert text.startswith("A sweep of m over {100, 1000, 10000, 100000} with 2 replicates")
    assert "slope 0.010" in text and text.endswith("Setting: RT-8: m sweep at n = 4096.")
    assert why_undecided(unconfirmed).startswith("not confirmed")
    assert why_undecided(doc["claims"][0]).startswith("the slope's 90% interval")
    summary = multiplicity_text(doc)
    assert "3 rate tests" in summary and "at most 0.15 false findings" in summary
    assert "at most 0.007" in summary and "1 finding(s) were confirmed, 1 were not" in summary
    assert [term for term, _ in glossary(doc)] == ["RT-n (RT-7A, RT-3n, ...)"]


def test_the_evidence_states_what_the_claim_allows_by_its_bound():
    from dpclaims.reports.findings import _allowed

    assert _allowed({"expected": 0.0, "margin": 0.15, "bound": "upper"}) == "at most 0.15"
    assert _allowed({"expected": -1.0, "margin": 0.1, "bound": "lower"}) == "at least -1.1"
    assert _allowed({"expected": -1.0, "margin": 0.1, "bound": "order"}) == "-1 ± 0.1"
    small = {"expected": 1.0, "margin": 0.1, "bound": "upper", "limit": "small"}
    assert _allowed(small) == "at least 0.9"
