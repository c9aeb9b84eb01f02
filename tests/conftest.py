"""Test configuration and shared fixtures.

Hypothesis runs derandomized, so every machine gets the same result.  ``make_claim`` and
``make_results`` build results documents (:class:`dpclaims.results.Results`) the way the runner
does, counts and tests made included; ``results`` is a small one.
"""

import pytest
from hypothesis import settings

from dpclaims.results import ClaimResult, Results, multiplicity

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")


def audit_record(lower=0.8):
    """The evidence record of a certified audit of a (1, 1e-5)-DP claim."""
    return {
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


def rate_record(verdict="consistent", slope=-1.0, note=""):
    """The evidence record of a sweep of n (4 values, 3 replicates) testing exponent -1 ± 0.1."""
    values = [10, 20, 40, 80]
    errors = [[1 / v * (1 + 0.05 * r) for r in range(3)] for v in values]
    return {
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
            "exponent": slope,
            "intercept": 0.05,
            "interval": [slope - 0.1, slope + 0.1],
            "confidence": 0.95,
            "method": "logs",
        },
        "check": {
            "verdict": verdict,
            "exponent": slope,
            "interval": [slope - 0.05, slope + 0.05],
            "expected": -1.0,
            "margin": 0.1,
            "confidence": 0.9,
            "drifting": False,
            "message": "",
        },
        "note": note,
    }


def _claim(claim_id="x.claim", verdict="consistent", **fields):
    """A claim's result of paper ``p``: a rate check unless ``fields`` say otherwise
    (``evidence`` may be a JSON record)."""
    kind = fields.pop("type", "rate")
    record = fields.pop("evidence", None)
    if record is None:
        record = rate_record(verdict) if kind == "rate" else {}
    confirmation = fields.pop("confirmation", None)
    base = {
        "id": claim_id,
        "paper": "p",
        "kind": "excess_risk",
        "algorithm": "A",
        "source": "Thm 5.1",
        "statement": f"statement of {claim_id}",
        "verdict": verdict,
        "type": kind,
        "summary": "s",
        "reason": None,
        "error": None,
        "evidence": record if isinstance(record, dict) else record.to_json(),
        "seed": 1,
        "wall_time": 0.1,
        "confirmation": confirmation,
        **fields,
    }
    return ClaimResult.from_json(base)


def _results(claims=(), *, papers=({"id": "p", "title": "A paper"},), **settings_):
    """A results document of ``claims`` (results or JSON objects), counts and tests computed."""
    claims = tuple(c if isinstance(c, ClaimResult) else ClaimResult.from_json(c) for c in claims)
    return Results(
        dpclaims_version="0.1.0",
        created="2024-01-01T00:00:00Z",
        settings={
            "budget": "quick",
            "seed": 0,
            "backend": "auto",
            "workers": None,
            "papers": None,
            "claims": None,
            "options": {},
            "confirm": True,
            **settings_,
        },
        environment={"python": "3.11", "platform": "linux", "cpu_count": 2, "versions": {}},
        papers=tuple(papers) if claims else (),
        claims=claims,
        multiplicity=multiplicity(claims),
        wall_time=1.0,
    )


@pytest.fixture
def make_claim():
    """``make_claim(id, verdict, **fields) -> ClaimResult`` (see :func:`_claim`)."""
    return _claim


@pytest.fixture
def make_results():
    """``make_results(claims, **settings) -> Results`` (see :func:`_results`)."""
    return _results


@pytest.fixture
def results():
    """A small results document: paper ``p`` with a certified audit, a rate check and a claim
    not checkable by experiment."""
    return _results(
        [
            _claim("x.audit", kind="privacy", type="audit", evidence=audit_record(), seed=3),
            _claim("x.rate"),
            _claim("x.open", "not_checkable", type=None, reason="context only"),
        ]
    )


@pytest.fixture(name="audit_record")
def _audit_record_fixture():
    """``audit_record(lower=0.8)``: an audit's evidence record (see :func:`audit_record`)."""
    return audit_record


@pytest.fixture(name="rate_record")
def _rate_record_fixture():
    """``rate_record(verdict, slope, note)``: a rate check's evidence record."""
    return rate_record
