"""The search over (features, label) records: label pairs are neighbours, ranked and capped, and
a label leak (the class set read off the private labels) is caught from a plain dataset."""

import numpy as np
import pytest

from dpclaims.audit.search import describe_change, search
from dpclaims.data import UserDataset, are_neighbours
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.pairs import LABEL_PAIRS, CanaryPairs

K = 4


def _class_histogram(data, rng, trials):
    """Noisy per-class counts (Laplace, ℓ1 sensitivity 2 under replace, ε = 1) over the classes
    present in the private labels: diffprivlib #106's bug (the label set inferred from the
    private data).  A class that disappears releases an exact 0 instead of a noisy count."""
    y = data.y.ravel().astype(int)
    present = np.unique(y)  # the bug: the classes should be the public range(K)
    out = np.zeros((trials, K))
    out[:, present] = np.bincount(y, minlength=K)[present] + rng.laplace(
        0.0, 2.0, (trials, len(present))
    )
    return out


def _plain(n=40, m=1, seed=0):
    """Every class of range(K) held by n / K users (at least twice)."""
    rng = np.random.default_rng(seed)
    return UserDataset(rng.standard_normal((n, m, 2)), np.repeat(np.arange(n) % K, m).reshape(n, m))


@pytest.mark.parametrize(
    "unit,relation,m",
    [
        ("user", "replace", 1),
        ("user", "replace", 3),
        ("item", "replace", 3),
        ("user", "add-remove", 1),
    ],
)
def test_label_pairs_are_neighbours_and_capped(unit, relation, m):
    family = CanaryPairs(_plain(m=m), unit=unit, relation=relation, user=1)
    labelled = family.patterns()[
        len(
            CanaryPairs(_plain(m=m), unit=unit, relation=relation, user=1, labels=False).patterns()
        ) :
    ]
    assert 0 < len(labelled) <= LABEL_PAIRS
    assert any("disappears" in p.name for p in labelled)
    rng = np.random.default_rng(3)
    walk = labelled + [family.perturb(p, rng) for p in labelled for _ in range(3)]
    for p in walk:  # a local move may land on the same data: the search never screens those
        assert are_neighbours(p.d0, p.d1, unit, relation), p.name
    assert all(p.d0 != p.d1 for p in labelled)
    gone = next(p for p in labelled if "disappears" in p.name)
    assert "only in d0" in gone.change  # the class is held by the replaced unit alone


def test_regression_labels_are_negated_and_pushed_to_the_extremes():
    rng = np.random.default_rng(1)
    data = UserDataset(rng.standard_normal((6, 2, 2)), rng.standard_normal((6, 2)))
    family = CanaryPairs(data, user=2)
    assert family.classes() is None
    names = [p.name for p in family.label_patterns()]
    assert "label negated" in names and any(n.startswith("labels 0 vs outlier") for n in names)
    for p in family.label_patterns():
        assert are_neighbours(p.d0, p.d1, "user", "replace") and p.d0 != p.d1


def test_unlabelled_data_screens_the_feature_canaries_only():
    data = UserDataset(np.zeros((5, 1, 2)))
    assert [p.name for p in CanaryPairs(data).patterns()] == [
        p.name for p in CanaryPairs(data, labels=False).patterns()
    ]


def test_describe_change_names_the_unit_and_what_changed():
    data = _plain()
    family = CanaryPairs(data, user=1)
    flip = next(p for p in family.patterns() if p.name == "label → 0")
    assert flip.change == "user 1: label 1 → 0"
    both = next(p for p in family.patterns() if p.name.startswith("opposite signs (e1), label"))
    assert both.change.startswith("user 1: features (moved by up to") and "label 1 →" in both.change
    removal = CanaryPairs(data, relation="add-remove", user=1).patterns()[-1]
    assert "only in d0 with its label" in removal.change
    assert (
        describe_change(np.zeros(3), np.r_[0.0, 1.0, 0.0]) == "1 of 3 answers differ (by up to 1)"
    )


def test_search_catches_a_class_that_disappears_from_a_plain_dataset():
    """Must-show 2 (issue 28): the class set of a noisy histogram read off the private labels.
    From a plain dataset (each class held by 10 users) the search screens the pair where a
    class disappears (the new-class pair the mechanism refuses is skipped) and certifies ε far
    above the claim, with ε = ∞ on the pair flagged."""
    found = search(
        _class_histogram,
        CanaryPairs(_plain()),
        trials=20_000,
        screen_trials=2_000,
        claim=PrivacyClaim(epsilon=1.0),
    )
    assert found.verdict == "violation" and found.epsilon_lower > 5
    assert found.result.infinite
    assert "class" in found.pair.change and "only in d" in found.pair.change
    assert [name for name, _ in found.skipped] == ["new class 4 appears"]
    assert "refused" in found.skipped[0][1]


def test_the_feature_canaries_alone_miss_the_label_leak():
    found = search(
        _class_histogram,
        CanaryPairs(_plain(), labels=False),
        trials=4_000,
        screen_trials=1_000,
        local_steps=2,
        claim=PrivacyClaim(epsilon=1.0),
    )
    assert found.epsilon_lower == 0.0  # the features never reach the output


def test_outputs_of_different_widths_skip_the_pair_with_the_reason():
    def classes_present(data, rng, trials):
        counts = np.unique(data.y, return_counts=True)[1]
        return counts[None, :] + rng.laplace(0.0, 2.0, (trials, len(counts)))

    data = UserDataset(np.zeros((8, 1, 1)), np.arange(8) % 2)
    found = search(
        classes_present,
        CanaryPairs(data),
        trials=2_000,
        screen_trials=500,
        local_steps=2,
        random_pairs=1,
        claim=PrivacyClaim(epsilon=1.0),
    )
    reasons = dict(found.skipped)
    assert "ε = ∞ on this pair" in reasons["new class 2 appears"]
    assert "columns on d0" in reasons["class 0 disappears (relabelled 1)"]


@pytest.mark.parametrize(
    "unit,relation,m",
    [
        ("user", "replace", 1),
        ("user", "replace", 3),
        ("item", "replace", 3),
        ("user", "add-remove", 1),
    ],
)
def test_derived_data_pairs_are_novel_neighbours_on_tiny_opposed_and_tied_data(unit, relation, m):
    family = CanaryPairs(_plain(m=m), unit=unit, relation=relation, user=1, resize=True)
    shaped = family.shape_patterns()
    names = [p.name for p in shaped]
    assert [n.split(":")[0] for n in names][-2:] == ["opposed data", "tied features"]
    assert names == [p.name for p in family.patterns() if p.name in names]
    for p in shaped + [family.perturb(p, np.random.default_rng(4)) for p in shaped]:
        assert are_neighbours(p.d0, p.d1, unit, relation), p.name
        assert p.novel and p.d0 != p.d1
        assert p.derived.startswith(f"{max(p.d0.n, p.d1.n)} users, derived from the data: ")
    tiny = next(p for p in shaped if p.name.startswith("tiny"))
    assert max(tiny.d0.n, tiny.d1.n) == 2
    assert tiny.change.endswith("; 2 users, derived from the data: its first 2 users")
    tied = next(p for p in shaped if p.name.startswith("tied"))
    others = np.arange(tied.d0.n) != 1
    assert np.all(tied.d0.x[others, :, 0] == tied.d0.x[others, :, 1])
    opposed = next(p for p in shaped if p.name.startswith("opposed"))
    assert np.all(opposed.d0.x[others, :, 0] == -family.scale)


@pytest.mark.parametrize(
    "relation,resize,tiny",
    [
        ("replace", None, False),
        ("replace", True, True),
        ("add-remove", None, True),
        ("add-remove", False, False),
    ],
)
def test_a_replace_search_keeps_the_data_size_unless_told_every_size_is_covered(
    relation, resize, tiny
):
    """Issue 40: noise fixed for the data's n is no claim about two users; a replace claim
    covers other sizes only when the user says so (--derived), add-remove always."""
    family = CanaryPairs(_plain(m=1), relation=relation, resize=resize, data_name="--d0")
    sizes = {p.d0.n for p in family.patterns()} | {p.d1.n for p in family.patterns()}
    assert (min(sizes) <= 2) == tiny
    assert family.patterns()[0].derived == ""  # the data itself: no note
    opposed = next(p for p in family.patterns() if p.name.startswith("opposed"))
    assert f"{family.data.n} users, derived from --d0: every unit at" in opposed.change


def test_one_feature_has_no_tied_pair_and_tiny_data_needs_more_than_two_users():
    data = UserDataset(np.zeros((2, 1, 1)), np.array([[0.0], [1.0]]))
    assert [p.name.split(":")[0] for p in CanaryPairs(data).shape_patterns()] == ["opposed data"]
