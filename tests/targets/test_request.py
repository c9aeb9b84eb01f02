"""The rules of an audit of a named mechanism (:class:`AuditRequest`): the defaults derived from
the options, and each rule's one-line message, the same as ``dpclaims audit`` gives."""

import numpy as np
import pytest

from dpclaims.audit import AuditTest, Neighbours
from dpclaims.audit.core import MIN_TRIALS
from dpclaims.audit.search import SCREEN_TRIALS
from dpclaims.audit.threshold import Planned
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim
from dpclaims.target import AuditTarget
from dpclaims.targets.catalog import audit_target
from dpclaims.targets.request import MAX_AUDIT_EPSILON, AuditRequest
from dpclaims.vocabulary import Relation

USER = {"mechanism": "mechs:mean", "d0": "d0.npz", "d1": "d1.npz"}
"""A user mechanism with its pair given."""


def _target(statistic=None) -> AuditTarget:
    data = UserDataset(np.zeros((2, 1, 1)))
    return AuditTarget(
        mechanism=lambda data, rng: 0.0,
        d0=data,
        d1=data,
        claim=PrivacyClaim(1.0),
        statistic=statistic,
    )


@pytest.mark.parametrize(
    "options, unit, relation",
    [
        ({"mechanism": "gaussian"}, "user", "replace"),
        ({"mechanism": "dp-sgd"}, "item", "add-remove"),
        ({"mechanism": "dp-sgd-no-clip"}, "item", "add-remove"),
        (USER, "user", "replace"),
        ({**USER, "unit": "item", "relation": "add-remove"}, "item", "add-remove"),
    ],
)
def test_the_claim_takes_its_unit_and_relation_from_the_mechanism(options, unit, relation):
    request = AuditRequest(epsilon=2.0, delta=1e-6, **options)
    assert request.claim == PrivacyClaim(2.0, 1e-6, unit, relation)
    assert request.array_relation is None and request.neighbours is None


@pytest.mark.parametrize("relation, sensitivity", [("query", 2.0), ("unchecked", None)])
def test_an_array_relation_checks_the_pair_under_a_replace_claim(relation, sensitivity):
    request = AuditRequest(**USER, relation=relation, sensitivity=sensitivity)
    assert request.claim.relation == Relation.REPLACE
    assert request.array_relation == relation
    assert request.neighbours == Neighbours(relation=relation, sensitivity=sensitivity)


def test_a_claimed_epsilon_beyond_the_float_range_is_refused():
    assert AuditRequest(mechanism="gaussian", epsilon=MAX_AUDIT_EPSILON).claim.epsilon == 700.0
    with pytest.raises(InputError) as caught:
        AuditRequest(mechanism="gaussian", epsilon=800.0)
    assert str(caught.value) == (
        "--epsilon 800 is too large to audit (e^epsilon overflows a float beyond 700); pass a "
        "claimed epsilon <= 700"
    )


@pytest.mark.parametrize(
    "options, message",
    [
        ({"epsilon": 0.0}, "epsilon must be a finite number > 0, got 0.0"),
        ({"unit": "nobody"}, "unit must be one of 'user', 'item', got 'nobody'"),
        ({"relation": "nope"}, "relation must be one of 'replace', 'add-remove', got 'nope'"),
    ],
)
def test_the_claim_is_checked_by_privacy_claim(options, message):
    with pytest.raises(InputError, match=message):
        AuditRequest(mechanism="gaussian", **options)


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"mechanism": "dp-sgd", "threat_model": "x"},
            "--threat-model must be one of 'final', 'all-iterates', got 'x'",
        ),
        (
            {"mechanism": "dp-sgd", "canary": "x"},
            "--canary must be one of 'gradient', 'input', 'input-init', got 'x'",
        ),
        (
            {**USER, "threat_model": "final"},
            "--threat-model and --canary choose how DP-SGD is audited; for your own mechanism "
            "release what your adversary sees and drop them",
        ),
        (
            {**USER, "canary": "input"},
            "--threat-model and --canary choose how DP-SGD is audited; for your own mechanism "
            "release what your adversary sees and drop them",
        ),
        (
            {"mechanism": "mechs:mean", "d0": "d0.npz"},
            "a user mechanism needs --d0 and --d1: neighbouring datasets saved as .npz with "
            "arrays x (and y)",
        ),
        (
            {"mechanism": "gaussian", "d1": "d1.npz"},
            "--d0/--d1 are for a user mechanism ('module:function' or "
            "'path/to/file.py:function'); built-ins bring their own datasets",
        ),
    ],
)
def test_each_option_rule_refuses_in_one_line(options, message):
    with pytest.raises(InputError) as caught:
        AuditRequest(**options)
    assert str(caught.value) == message


@pytest.mark.parametrize("options", [{"search": True}, {"save_pair": True}])
def test_a_fixed_statistic_takes_neither_search_nor_a_saved_pair(options):
    request = AuditRequest(mechanism="dp-sgd", **options)
    request.check_target(_target())  # a learned statistic: both are fine
    with pytest.raises(InputError) as caught:
        request.check_target(_target(statistic=np.sum))
    assert str(caught.value) == (
        "dp-sgd audits a fixed canary with a statistic fixed for it; --search and --save-pair "
        "vary or save plain datasets: drop them"
    )


def test_derived_pairs_need_a_search():
    AuditRequest(**USER, derived=True, search=True).check_target(None)
    with pytest.raises(InputError) as caught:
        AuditRequest(**USER, derived=True).check_target(None)
    assert str(caught.value) == (
        "--derived chooses the pairs --search screens: add --search or drop it"
    )


def test_a_user_pair_holding_the_same_data_is_refused_unless_searched():
    same, other = UserDataset(np.zeros((4, 1, 1))), UserDataset(np.ones((4, 1, 1)))
    AuditRequest(**USER).check_pair(same, other)
    AuditRequest(**USER, search=True).check_pair(same, same)
    AuditRequest(mechanism="gaussian").check_pair(same, same)  # a built-in's pair is its own
    with pytest.raises(InputError) as caught:
        AuditRequest(**USER).check_pair(same, same)
    assert str(caught.value) == (
        "--d0 and --d1 hold the same data, so there is nothing to audit; pass as --d1 a "
        "neighbouring dataset that differs from --d0 (e.g. in one user), or add --search to "
        "vary --d0"
    )


@pytest.mark.parametrize(
    "options, replay_only",
    [({}, False), ({"replay": 10}, True), ({"replay": 10, "search": True}, False)],
)
def test_a_replay_without_search_replays_the_given_pair_alone(options, replay_only):
    assert AuditRequest(**USER, **options).replay_only is replay_only


@pytest.mark.parametrize(
    "per_call, fixed_trials, sequential",
    [(True, False, True), (True, True, False), (False, False, False)],
)
def test_sequential_looks_are_for_a_per_call_function_without_fixed_trials(
    per_call, fixed_trials, sequential
):
    request = AuditRequest(**USER, fixed_trials=fixed_trials)
    assert request.sequential(per_call=per_call) is sequential


@pytest.mark.parametrize(
    "trials, screen",
    [(100, MIN_TRIALS), (50_000, 5_000), (200_000, SCREEN_TRIALS), (10**7, SCREEN_TRIALS)],
)
def test_a_search_screens_a_tenth_of_the_trials_within_bounds(trials, screen):
    assert AuditRequest(mechanism="gaussian", trials=trials).screen_trials == screen


def test_the_pairs_searched_follow_the_claim_and_derived():
    d0 = UserDataset(np.zeros((4, 1, 1)))
    d1 = UserDataset(np.r_[np.ones((1, 1, 1)), np.zeros((3, 1, 1))])
    plain = AuditRequest(**USER, search=True).pairs(d0, d1)
    assert (plain.unit, plain.relation, plain.resize, plain.user) == ("user", "replace", None, 0)
    assert not plain.resizes and plain.data_name == "--d0"
    derived = AuditRequest(**USER, unit="item", search=True, derived=True).pairs(d0, d1)
    assert (derived.unit, derived.resize) == ("item", True) and derived.resizes
    built_in = AuditRequest(mechanism="dp-sgd", search=True).pairs(d0, d1)
    assert built_in.relation == "add-remove" and built_in.data_name == "the built-in's data"


def test_the_test_is_the_method_or_the_fixed_statistics_planned_test():
    assert AuditRequest(**USER, method="histogram").test(None) == AuditTest(method="histogram")
    with pytest.raises(InputError, match="method must be one of"):
        AuditRequest(**USER, method="nope").test(None)
    request = AuditRequest(mechanism="dp-sgd", trials=2_000)
    target = audit_target("dp-sgd", request.claim)
    assert isinstance(request.test(target).threshold, Planned)
    histogram = AuditRequest(mechanism="dp-sgd", method="histogram").test(target)
    assert histogram.method == "histogram" and histogram.statistic is target.statistic
    with pytest.raises(InputError, match="--trials must be a whole number >= 1, got 0"):
        AuditRequest(mechanism="dp-sgd", trials=0).test(target)
