"""The experiment hook: honest 'no experiment yet' until a factory is registered."""

import pytest

from dpclaims import claims
from dpclaims.claims import (
    BUDGETS,
    Experiment,
    NotCheckable,
    UnknownClaimError,
    register_experiment,
)
from dpclaims.claims.experiments import _FACTORIES, _SKIPS, Skipped, load_checks
from dpclaims.errors import DPClaimsError, InputError

CLAIM_ID = "lla24.alg1.privacy"


@pytest.fixture(autouse=True)
def isolated_factories():
    """Keep registrations made by a test out of every other test."""
    load_checks()  # the packaged experiments register first, so popping one below sticks
    saved, skips = dict(_FACTORIES), dict(_SKIPS)
    _FACTORIES.pop(CLAIM_ID, None)
    yield
    _FACTORIES.clear()
    _FACTORIES.update(saved)
    _SKIPS.clear()
    _SKIPS.update(skips)


class ToyExperiment:
    def __init__(self, claim, budget):
        self.claim, self.budget = claim, budget

    def run(self, seed=0, backend="auto", workers=None):
        return {
            "claim": self.claim.id,
            "budget": self.budget,
            "seed": seed,
            "verdict": "consistent",
        }


def test_without_experiment_the_claim_is_honestly_not_checkable():
    claim = claims.get(CLAIM_ID)
    assert not claim.checkable
    assert claim.status == "no experiment yet"
    assert claim.to_dict()["checkable"] is False
    with pytest.raises(NotCheckable, match="no experiment yet") as info:
        claim.experiment("quick")
    assert info.value.reason == "no experiment yet" and info.value.claim_id == CLAIM_ID
    assert isinstance(info.value, DPClaimsError)


def test_registering_makes_the_claim_checkable():
    @register_experiment(CLAIM_ID)
    def factory(claim, budget):
        return ToyExperiment(claim, budget)

    claim = claims.get(CLAIM_ID)
    assert claim.checkable and claim.status == "checkable"
    assert CLAIM_ID in claims.registered_experiments()
    for budget in BUDGETS:
        experiment = claim.experiment(budget)
        assert isinstance(experiment, ToyExperiment) and isinstance(experiment, Experiment)
        assert experiment.claim is claim and experiment.budget == budget
    assert claim.experiment().budget == "standard"
    assert claim.experiment("quick").run(seed=3) == {
        "claim": CLAIM_ID,
        "budget": "quick",
        "seed": 3,
        "verdict": "consistent",
    }


@pytest.mark.parametrize("budget", ["fast", "", None, 1, "Quick"])
def test_bad_budget_is_an_input_error(budget):
    register_experiment(CLAIM_ID)(ToyExperiment)
    with pytest.raises(InputError, match="budget must be one of 'quick', 'standard', 'full'"):
        claims.get(CLAIM_ID).experiment(budget)
    with pytest.raises(InputError, match="budget must be one of"):  # checked before checkability
        claims.get("lla24.alg1.risk").experiment(budget)


def test_context_only_claims_refuse_experiments():
    claim = claims.get("cited.srn_sgd")
    with pytest.raises(NotCheckable, match="cited result of another paper"):
        claim.experiment("quick")
    with pytest.raises(InputError, match="marked not checkable"):
        register_experiment("cited.srn_sgd")


def test_registration_errors():
    with pytest.raises(UnknownClaimError, match="'lla24.alg1.privacy'"):
        register_experiment("lla24.alg1.privcy")
    with pytest.raises(InputError, match="must decorate a callable"):
        register_experiment(CLAIM_ID)("not a function")
    register_experiment(CLAIM_ID)(ToyExperiment)
    register_experiment(CLAIM_ID)(ToyExperiment)  # re-registering the same factory is harmless

    def other(claim, budget):
        return ToyExperiment(claim, budget)

    with pytest.raises(InputError, match="already has the experiment .*ToyExperiment"):
        register_experiment(CLAIM_ID)(other)
    register_experiment(CLAIM_ID, replace=True)(other)
    assert _FACTORIES[CLAIM_ID] is other
    register_experiment(CLAIM_ID, replace=True)(lambda claim, budget: ToyExperiment(claim, budget))
    with pytest.raises(
        InputError, match="already has the experiment"
    ):  # a different lambda is a different factory
        register_experiment(CLAIM_ID)(lambda claim, budget: ToyExperiment(claim, budget))


def test_factory_must_return_an_experiment():
    register_experiment(CLAIM_ID)(lambda claim, budget: {"verdict": "pass"})
    with pytest.raises(DPClaimsError, match="returned dict, which has no run"):
        claims.get(CLAIM_ID).experiment("quick")


def test_a_budget_skip_is_skipped_not_not_checkable():
    register_experiment(CLAIM_ID, skip={"quick": "too few trials"})(ToyExperiment)
    claim = claims.get(CLAIM_ID)
    assert claim.checkable
    assert claim.status == "checkable at standard, full; skipped at quick: too few trials"
    with pytest.raises(Skipped, match="--budget standard or full") as info:
        claim.experiment("quick")
    skip = info.value
    assert (skip.budget, skip.reason) == ("quick", "too few trials")
    assert skip.budgets == ("standard", "full")
    assert not isinstance(info.value, NotCheckable)
    assert claim.experiment("standard").budget == "standard"


@pytest.mark.parametrize(
    "skip, match",
    [
        ({"huge": "x"}, "skip budget must be one of"),
        ({"quick": ""}, "must be the reason"),
        (dict.fromkeys(BUDGETS, "x"), "skips every budget"),
    ],
)
def test_bad_skips(skip, match):
    with pytest.raises(InputError, match=match):
        register_experiment(CLAIM_ID, skip=skip)


def test_the_registry_budget_skips_are_skipped():
    for claim_id in (
        "lla24.alg3ns.risk.stat",
        "lla24.alg3ns.risk.priv",
        "lla24.alg3sc.risk.stat",
        "experiments.regression",
    ):
        assert claims.skipped_budgets(claim_id).keys() == {"quick"}, claim_id
        with pytest.raises(Skipped):
            claims.get(claim_id).experiment("quick")
