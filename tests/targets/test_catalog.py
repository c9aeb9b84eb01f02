import pytest

from dpclaims.audit import audit
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.catalog import TARGETS, audit_target, default_unit


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TARGETS))
def test_builtin_targets_get_the_verdict_their_bug_status_predicts(name):
    delta = 0.0 if name.startswith(("laplace", "randomized", "noisy-max")) else 1e-5
    claim = PrivacyClaim(1.0, delta, default_unit(name), "replace")
    target = audit_target(name, claim)
    result = audit(
        target.mechanism,
        target.d0,
        target.d1,
        claim=claim,
        trials=50_000,
        seed=3,
        execution=Execution(backend="serial"),
    )
    assert (target.name, target.claim, target.description) == (name, claim, TARGETS[name][0])
    expected = "violation" if TARGETS[name][1] else "consistent"
    if name == "noisy-max":  # all counts move by one, no argmax moves: a powerless pair (#17)
        expected = "inconclusive"
    if name == "dp-sgd":  # a final-model black-box audit sees a small share of the claim: its
        expected = "consistent_weak"  # reach is far above 2x (white-box audits: issue #27)
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
