"""Quick-budget run of every registered experiment of choquette-choo-et-al-2024 (spec 002)."""

import pytest

from dpclaims.claims import load

PAPER = "choquette-choo-et-al-2024"

EXPECTED = {
    "cgt24.tree.gdp": "consistent",
    "cgt24.tree.error": "consistent",
    "cgt24.v1.privacy.clipped": "consistent",
    "cgt24.v1.privacy.unclipped": "consistent",
    "cgt24.v1.sensitivity": "consistent",
    "cgt24.v2.sensitivity.deterministic": "consistent",
    "cgt24.v2.clip_inactive": "consistent",
    "cgt24.v2.privacy": "consistent",
    "cgt24.utility.generic": "consistent",
    "cgt24.utility.deterministic_accel": "consistent",
    "cgt24.v1.gradnorm_decay": "consistent",
    "cgt24.v1.rate.statistical": "consistent",
    "cgt24.v1.rate.privacy": "consistent",
    "cgt24.v2.rate.statistical": "consistent",
    "cgt24.v2.rate.privacy": "consistent",
    "cgt24.v2.rate.batch_flat": "consistent",
    "cgt24.indep.rate": "consistent",
    "cgt24.srg.error": "consistent",
    "cgt24.complexity.gradients": "consistent",
    "cgt24.complexity.v1_steps": "consistent",
    "cgt24.complexity.v2_steps": "consistent",
    "cgt24.lb.first_order": "consistent",
}


def test_every_claim_has_an_experiment_or_a_reason():
    claims = load(paper=PAPER)
    assert len(claims) == 24
    for claim in claims:
        assert claim.status == "checkable" or claim.status.startswith("not checkable:"), claim.id
    assert {c.id for c in claims if c.status == "checkable"} == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", sorted(EXPECTED))
def test_quick_experiment_verdict(claim_id):
    claim = next(c for c in load(paper=PAPER) if c.id == claim_id)
    result = claim.experiment("quick").run(seed=0, backend="serial")
    assert result["verdict"] == EXPECTED[claim_id], result["summary"]
