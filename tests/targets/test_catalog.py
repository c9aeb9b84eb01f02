import pytest

from dpclaims.audit import AuditTest, audit
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.catalog import TARGETS, audit_target, default_relation, default_unit


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TARGETS))
def test_builtin_targets_get_the_verdict_their_bug_status_predicts(name):
    delta = 0.0 if name.startswith(("laplace", "randomized", "noisy-max")) else 1e-5
    claim = PrivacyClaim(1.0, delta, default_unit(name), default_relation(name))
    target = audit_target(name, claim)
    result = audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=claim,
        trials=50_000,
        seed=3,
        execution=Execution(backend="serial"),
        test=AuditTest(statistic=target.statistic),
    )
    assert (target.name, target.claim) == (name, claim)
    assert target.description.startswith(TARGETS[name][0])
    expected = "violation" if TARGETS[name][1] else "consistent"
    if name == "noisy-max":  # all counts move by one, no argmax moves: a powerless pair (#17)
        expected = "inconclusive"
    # dp-sgd (all iterates, a gradient canary) shows a share of the claim at 5e4 trials; its reach
    # against the claim is within 2x, so it is consistent (issue 41; it was consistent_weak)
    assert result.verdict == expected, (name, result.epsilon_lower, result.reason)


@pytest.mark.parametrize(
    "unit, relation",
    [("user", "replace"), ("item", "replace"), ("user", "add-remove"), ("item", "add-remove")],
)
def test_gaussian_target_pairs_are_neighbours_at_full_sensitivity(unit, relation):
    claim = PrivacyClaim(1.0, 1e-5, unit, relation)
    target = audit_target("gaussian", claim)
    gap = abs(target.mechanism.query(target.d0) - target.mechanism.query(target.d1))
    assert gap == pytest.approx(target.mechanism.sensitivity)


def test_unknown_target_lists_the_builtins():
    with pytest.raises(InputError, match="built-ins are gaussian"):
        audit_target("nope", PrivacyClaim(1.0, 1e-5))
