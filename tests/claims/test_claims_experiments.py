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
from dpclaims.claims.experiments import _FACTORIES, _SKIPS, Skipped
from dpclaims.errors import DPClaimsError, InputError

CLAIM_ID = "lla24.alg1.privacy"


@pytest.fixture(autouse=True)
def isolated_factories():
    """Keep registrations made by a test out of every other test."""
    claims.registered_experiments()  # the packaged ones register first: popping one sticks
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

    def run(self, *, seed=0, execution=None):
        return {
            "claim": self.claim.id,
            "budget": self.budget,
            "seed": seed,
            "verdict": "consistent",
        }


def test_without_experiment_the_claim_is_honestly_not_checkable():
    claim = claims.get(CLAIM_ID)
    assert claims.status(claim) == "no experiment yet"
    assert claims.status(claim, "quick") == "no experiment yet"
    with pytest.raises(NotCheckable, match="no experiment yet") as info:
        claims.experiment(claim, "quick")
    assert info.value.reason == "no experiment yet" and info.value.claim_id == CLAIM_ID
    assert isinstance(info.value, DPClaimsError)


def test_registering_makes_the_claim_checkable():
    @register_experiment(CLAIM_ID)
    def factory(claim, budget):
        return ToyExperiment(claim, budget)

    claim = claims.get(CLAIM_ID)
    assert claims.status(claim) == "checkable"
    assert CLAIM_ID in claims.registered_experiments()
    for budget in BUDGETS:
        experiment = claims.experiment(claim, budget)
        assert isinstance(experiment, ToyExperiment) and isinstance(experiment, Experiment)
        assert experiment.claim is claim and experiment.budget == budget
    assert claims.experiment(claim).budget == "standard"
    assert claims.experiment(claim, "quick").run(seed=3) == {
        "claim": CLAIM_ID,
        "budget": "quick",
        "seed": 3,
        "verdict": "consistent",
    }


@pytest.mark.parametrize("budget", ["fast", "", None, 1, "Quick"])
def test_bad_budget_is_an_input_error(budget):
    register_experiment(CLAIM_ID)(ToyExperiment)
    with pytest.raises(InputError, match="budget must be one of 'quick', 'standard', 'full'"):
        claims.experiment(claims.get(CLAIM_ID), budget)
    with pytest.raises(InputError, match="budget must be one of"):  # checked before checkability
        claims.experiment(claims.get("lla24.alg1.risk"), budget)
    if budget is not None:  # status(claim) without a budget covers them all
        with pytest.raises(InputError, match="budget must be one of"):
            claims.status(claims.get(CLAIM_ID), budget)


def test_context_only_claims_refuse_experiments():
    claim = claims.get("cited.srn_sgd")
    with pytest.raises(NotCheckable, match="cited result of another paper"):
        claims.experiment(claim, "quick")
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
        claims.experiment(claims.get(CLAIM_ID), "quick")


def test_a_budget_skip_is_skipped_not_not_checkable():
    register_experiment(CLAIM_ID, skip={"quick": "too few trials"})(ToyExperiment)
    claim = claims.get(CLAIM_ID)
    assert claims.status(claim) == "checkable at standard, full; skipped at quick: too few trials"
    assert claims.status(claim, "quick") == "skipped at quick: too few trials"
    assert claims.status(claim, "full") == "checkable"
    with pytest.raises(Skipped, match="--budget standard or full") as info:
        claims.experiment(claim, "quick")
    skip = info.value
    assert (skip.budget, skip.reason) == ("quick", "too few trials")
    assert skip.budgets == ("standard", "full")
    assert not isinstance(info.value, NotCheckable)
    assert claims.experiment(claim, "standard").budget == "standard"


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
            claims.experiment(claims.get(claim_id), "quick")


def test_status_read_from_the_source_matches_the_registered_experiments():
    """status() reads the decorators of a module not imported yet; once imported, the
    registrations themselves.  Both agree on every packaged claim."""
    from dpclaims.claims.experiments import _declared
    from dpclaims.claims.plugins import module_file
    from dpclaims.claims.registry import Registry

    registry = Registry.discover(installed=False)
    registered = claims.registered_experiments(registry.papers.values())
    for paper in registry.papers.values():
        path = module_file(paper.experiments)
        declared = _declared(path, path.stat().st_mtime_ns, paper.experiments)
        ours = {c.id for c in registry.select(paper=paper.id) if c.id in registered}
        assert set(declared) - {CLAIM_ID} == ours, paper.id  # the fixture unregistered CLAIM_ID
        for claim_id, skips in declared.items():
            assert skips == _SKIPS.get(claim_id, {}), claim_id
