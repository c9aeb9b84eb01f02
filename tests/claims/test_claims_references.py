"""Every packaged registry audit carries the exact ε of its pair or the reason it has none (#17)."""

import pytest

from dpclaims import claims
from dpclaims.claims import BUDGETS, NotCheckable, Skipped
from dpclaims.claims.standard import AuditExperiment, CombinedExperiment


def _audits(experiment, name):
    if isinstance(experiment, AuditExperiment):
        yield name, experiment
    elif isinstance(experiment, CombinedExperiment):
        for part, sub in experiment.parts.items():
            yield from _audits(sub, f"{name}/{part}")


def _experiment(claim, budget):
    try:
        return claims.experiment(claim, budget)
    except (NotCheckable, Skipped):  # e.g. a claim checked only at larger budgets
        return None


@pytest.mark.parametrize("budget", BUDGETS)
def test_every_registry_audit_has_a_reference_or_says_why_not(budget):
    audits = [
        pair
        for claim in claims.load()
        if claims.status(claim).startswith("checkable")
        for pair in _audits(_experiment(claim, budget), claim.id)
    ]
    assert audits
    missing = [
        name for name, a in audits if a.reference_epsilon is None and not a.reference_note.strip()
    ]
    assert not missing, f"audits without a reference epsilon or the reason: {missing}"
