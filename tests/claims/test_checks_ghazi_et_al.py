"""Quick-budget run of every registered Ghazi et al. 2023 claim experiment, with the verdict we expect.

Non-``consistent`` verdicts are findings or honest small-sweep outcomes (see the module notes):
``thm51.convex_sco.statistical_term`` is ``inconsistent`` because RT-8 (sharp minimum, spec
[ERRATA?]) shows an m-independent final-phase term.
"""

import pytest

from dpclaims.claims import load
from dpclaims.claims.experiments import registered_experiments

PAPER = "ghazi-et-al-2023"
EXPECTED = {
    "ghazi23.thm51.convex_sco.statistical_term": "inconsistent",
    "ghazi23.thm43.sc_erm": "inconclusive",
    "ghazi23.thm36.deletion_sensitivity": "inconclusive",
    "ghazi23.thm53.sc_sco.statistical_term": "inconclusive",
    "ghazi23.table1.item_sc_sco": "inconclusive",
    # exact ε 0 on the pair: the audit certifies 0 and says inconclusive (#17)
    "ghazi23.appC.fast_equivalence": "inconclusive",
}
CLAIMS = [c for c in load(paper=PAPER) if c.uncheckable_reason is None]


def test_every_claim_has_an_experiment_or_a_reason():
    registered = registered_experiments()
    for claim in load(paper=PAPER):
        assert claim.id in registered or claim.uncheckable_reason, claim.id


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_quick_experiment_verdict(claim):
    result = claim.experiment("quick").run(seed=0, backend="serial")
    assert result["verdict"] == EXPECTED.get(claim.id, "consistent"), result["summary"]


def test_bottom_channel_audits_reach_half_epsilon():
    for cid in ("ghazi23.thm33.deloutputpert_dp", "ghazi23.thm31.scoutputpert_dp"):
        claim = next(c for c in CLAIMS if c.id == cid)
        evidence = claim.experiment("quick").run(seed=0, backend="serial")["evidence"]
        assert 0.45 <= evidence["epsilon_lower"] <= evidence["reference_epsilon"] <= 0.5
