"""Figures, Markdown and HTML rendered from result entries alone."""

import json
import math
import re

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
from dpclaims.reports.findings import evidence_paragraph
from dpclaims.reports.html import render_html
from dpclaims.reports.markdown import render_markdown
from dpclaims.reports.schema import SCHEMA_VERSION, VERDICTS
from dpclaims.reports.text import evidence_rows, figure_name, key_figure

PNG = b"\x89PNG\r\n\x1a\n"


def _audit_entry(verdict="consistent", lower=0.8):
    evidence = {
        "epsilon_lower": lower,
        "epsilon": 1.0,
        "delta": 1e-5,
        "confidence": 0.95,
        "method": "threshold",
        "certified": True,
        "ci": "clopper-pearson",
        "trials": 1000,
        "seed": 3,
        "tradeoff": [[0.0, 1.0], [0.3, 0.4], [1.0, 0.0]],
        "false_positives": 30,
        "false_negatives": 40,
        "n_negative": 800,
        "n_positive": 800,
        "fpr_upper": 0.05,
        "fnr_upper": 0.07,
        "calibration_trials": 200,
        "certification_trials": 800,
        "unit": "user",
        "relation": "replace",
    }
    return {
        "id": "x.audit",
        "paper": "p",
        "kind": "privacy",
        "algorithm": "A | B",
        "source": "Thm 1",
        "statement": "is <private> & fine",
        "verdict": verdict,
        "type": "audit",
        "summary": "s",
        "reason": None,
        "error": None,
        "evidence": evidence,
        "seed": 3,
        "wall_time": 0.5,
    }


def _rate_entry():
    values = [10, 20, 40, 80]
    errors = [[1 / v * (1 + 0.05 * r) for r in range(3)] for v in values]
    evidence = {
        "sweep": {
            "param": "n",
            "values": values,
            "errors": errors,
            "replicates": 3,
            "seed": 1,
            "batch": 1,
            "fixed": {"d": 2},
        },
        "fit": {
            "exponent": -1.0,
            "intercept": 0.05,
            "interval": [-1.1, -0.9],
            "confidence": 0.95,
            "method": "logs",
        },
        "check": {
            "verdict": "consistent",
            "exponent": -1.0,
            "interval": [-1.05, -0.95],
            "expected": -1.0,
            "margin": 0.1,
            "confidence": 0.9,
            "drifting": False,
            "message": "",
        },
    }
    return {
        **_audit_entry(),
        "id": "x.rate",
        "kind": "excess_risk",
        "type": "rate",
        "evidence": evidence,
        "seed": 1,
    }


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 5), st.floats(0, 0.2))
def test_tradeoff_bound_is_a_valid_tradeoff_curve(epsilon, delta):
    alpha = np.linspace(0, 1, 201)
    beta = tradeoff_bound(alpha, epsilon, delta)
    assert np.all(np.diff(beta) <= 1e-12) and beta[0] == pytest.approx(1 - delta) and beta[-1] == 0
    assert np.all(beta <= 1 - alpha + 1e-12)  # never better than random guessing
    # the two constraints are the (eps, delta)-DP hypothesis-testing inequalities
    assert np.all(beta >= 1 - delta - math.exp(epsilon) * alpha - 1e-12)


def test_figures_are_pngs_and_deterministic():
    for draw, entry in ((audit_figure, _audit_entry()), (rate_figure, _rate_entry())):
        png = draw(entry)
        assert png.startswith(PNG) and png == draw(entry)
    assert summary_figure(
        [_audit_entry(), _audit_entry("violation", 1.7), _rate_entry()]
    ).startswith(PNG)


def test_figures_only_for_checked_audits_and_rates():
    assert claim_figure({**_audit_entry(), "verdict": "error"}) is None
    assert claim_figure({**_audit_entry(), "type": "value"}) is None
    assert summary_figure([_rate_entry()]) is None
    assert audit_figure(_audit_entry(lower=None)).startswith(
        PNG
    )  # an infinite bound is stored as null


def test_key_figures_and_rows():
    assert key_figure(_audit_entry()) == "ε ≥ 0.800 (claimed 1)"
    assert key_figure(_rate_entry()) == "slope -1.000 [-1.050, -0.950] vs -1 ± 0.1"
    rows = dict(evidence_rows(_audit_entry()))
    assert (
        rows["trials"] == "1000 per dataset: 200 calibration, 800 certification"
        and "audit seed" not in rows
    )
    assert dict(evidence_rows(_rate_entry()))["fixed"] == "d=2"
    assert figure_name("a_b.c-d") == "a_b.c-d.png"
    assert re.fullmatch(r"a_b_c\.d-[0-9a-f]{12}\.png", figure_name("a b/c.d"))
    assert figure_name("a b/c.d") != figure_name("a_b_c.d") != figure_name("a b_c.d")
    assert len(figure_name("x" * 5000)) <= 84 and not figure_name("..").startswith(".")


def test_small_bounds_keep_their_digits():
    """0.0004 is not 0.000: a bound that 3 (or 4) decimals would round to zero keeps 2
    significant digits, in the key figure, the evidence rows and the findings' sentences."""
    entry = _audit_entry(lower=0.0004)
    entry["evidence"]["ceiling"] = 0.00004
    assert key_figure(entry) == "ε ≥ 0.0004 (claimed 1)"
    rows = dict(evidence_rows(entry))
    assert rows["lower bound"].startswith("0.0004 ") and rows["ceiling"].startswith("4e-05 ")
    assert "ε ≥ 0.0004 at confidence" in evidence_paragraph({**entry, "confirmation": None})
    assert key_figure(_audit_entry(lower=0.0)) == "ε ≥ 0.000 (claimed 1)"


def _document(entries):
    counts = {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS}
    return {
        "schema_version": SCHEMA_VERSION,
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
        },
        "environment": {
            "python": "3.11",
            "platform": "linux",
            "cpu_count": 2,
            "versions": {"numpy": "2"},
        },
        "papers": [{"id": "p", "title": "A paper"}],
        "load_errors": [],
        "counts": counts,
        "wall_time": 1.0,
        "claims": entries,
    }


def test_markdown_and_html_escape_claim_text():
    doc = _document([_audit_entry(), _rate_entry()])
    md = render_markdown(doc, {"x.audit": "figures/x.audit.png"})
    assert "A \\| B" in md and "![x.audit](figures/x.audit.png)" in md
    html = render_html(doc, {"x.audit": b"png"})
    assert "is &lt;private&gt; &amp; fine" in html and "<private>" not in html
    assert html.count("data:image/png;base64,") == 1
    assert json.dumps(
        doc
    )  # the renderers did not modify the document into something unserialisable
