"""The public audit() entry point: claims, neighbours, bad input, reproducibility, result record."""

import json
import math

import numpy as np
import pytest

from dpclaims import PrivacyClaim, replace_user
from dpclaims.audit import AuditResult, AuditTest, Split, audit
from dpclaims.audit.scores import candidate_scores
from dpclaims.errors import InputError, MechanismError, NotNeighboursError
from dpclaims.execution import Execution


def gauss(data, rng, trials):
    return data + 2.0 * rng.standard_normal(trials)


def mean_mech(data, rng, trials):
    """Mean of all features plus Gaussian noise: takes a UserDataset."""
    return float(data.x.mean()) + 0.1 * rng.standard_normal((trials, 1))


def test_result_record_is_complete_and_json_serialisable(gaussian_target):
    t = gaussian_target
    r = audit(
        t.mechanism,
        t.d0,
        t.d1,
        claim=t.claim,
        trials=5000,
        seed=1,
        execution=Execution(backend="serial"),
    )
    assert isinstance(r, AuditResult)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    for key in (
        "epsilon_lower",
        "verdict",
        "method",
        "certified",
        "kind",
        "statistic",
        "threshold",
        "direction",
        "false_positives",
        "false_negatives",
        "n_negative",
        "n_positive",
        "calibration_trials",
        "certification_trials",
        "fpr_upper",
        "fnr_upper",
        "ci",
        "ci_alpha",
        "ci_tilt",
        "threshold_strategy",
        "calibration_fraction",
        "seed",
        "trials",
        "slack",
        "tradeoff",
        "wall_time",
        "candidates",
    ):
        assert key in d
    assert d["calibration_trials"] + d["certification_trials"] == 5000
    assert len(d["tradeoff"]) > 10 and all(len(p) == 2 for p in d["tradeoff"])
    assert r.slack == (math.inf if r.epsilon_lower == 0 else 1.0 / r.epsilon_lower)


def test_gdp_is_labelled_an_estimate():
    def noisy_gauss(data, rng, trials):
        return data + rng.standard_normal(trials)

    r = audit(
        noisy_gauss,
        0.0,
        1.0,
        trials=20_000,
        seed=2,
        claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
        test=AuditTest(method="gdp"),
        execution=Execution(backend="serial"),
    )
    d = r.to_dict()
    assert d["certified"] is False and d["kind"] == "estimate"
    assert 0.0 < d["mu"] <= 1.2
    assert r.verdict == ("inconclusive" if r.epsilon_lower > 1.0 else "consistent")
    with pytest.raises(InputError, match="delta > 0"):
        audit(
            noisy_gauss,
            0.0,
            1.0,
            trials=1000,
            claim=PrivacyClaim(epsilon=1.0, delta=0.0),
            test=AuditTest(method="gdp"),
            execution=Execution(backend="serial"),
        )


def test_gdp_estimate_above_the_claim_is_never_a_violation():
    """Laplace ε = 1 under its exact claim (0.998, 1e-3): the Gaussian-DP estimate overstates a
    pure-DP mechanism (ε ≈ 2.5 here); being uncertified it gives inconclusive with the reason,
    while the certified threshold audit of the same pair is no violation."""

    def laplace(data, rng, trials):
        return data + rng.laplace(0.0, 1.0, trials)

    options = dict(
        trials=10_000, seed=0, claim=PrivacyClaim(epsilon=0.998, delta=1e-3),
        execution=Execution(backend="serial"),
    )  # fmt: skip
    r = audit(laplace, 0.0, 1.0, test=AuditTest(method="gdp"), **options)
    assert r.epsilon_lower > 2.0 and r.verdict == "inconclusive"
    assert "not certified" in r.reason and "threshold" in r.reason
    assert audit(laplace, 0.0, 1.0, **options).verdict != "violation"


def test_gdp_consistent_follows_the_reach_rule():
    """method='gdp' gets a reach under its own μ-GDP model, against the claim (1, 1e-5): the
    μ-GDP mechanism leaking 2× the claim is caught at 2·10^4 trials, not at 10^3, whatever the
    pair's own μ (0.08 or 0.2): the verdict follows the trials, not the pair's leakage."""

    def noisy_gauss(data, rng, trials):
        return data + rng.standard_normal(trials)

    found = {}
    for shift, trials in ((0.2, 1_000), (0.08, 20_000), (0.2, 20_000)):
        r = audit(
            noisy_gauss,
            0.0,
            shift,
            trials=trials,
            seed=2,
            claim=PrivacyClaim(epsilon=1.0, delta=1e-5),
            test=AuditTest(method="gdp"),
            execution=Execution(backend="serial"),
        )
        assert r.reach is not None and r.reach.model == "gaussian-dp"
        assert (r.reach.factor <= 2.0) == (r.verdict == "consistent")
        found[shift, trials] = r.verdict, r.reach.factor
    assert {key: verdict for key, (verdict, _) in found.items()} == {
        (0.2, 1_000): "consistent_weak",
        (0.08, 20_000): "consistent",
        (0.2, 20_000): "consistent",
    }
    assert found[0.08, 20_000][1] == pytest.approx(found[0.2, 20_000][1])


def test_same_seed_same_numbers_and_backends_agree():
    kwargs = dict(claim=PrivacyClaim(epsilon=1.0, delta=1e-5), trials=20_000, seed=7)
    a = audit(gauss, 0.0, 1.0, **kwargs, execution=Execution(backend="serial")).to_dict()
    b = audit(gauss, 0.0, 1.0, **kwargs, execution=Execution(backend="serial")).to_dict()
    c = audit(
        gauss, 0.0, 1.0, **kwargs, execution=Execution(backend="processes", workers=2)
    ).to_dict()
    for d in (a, b, c):
        d.pop("wall_time")
    assert a == b == c
    other = audit(
        gauss, 0.0, 1.0, **{**kwargs, "seed": 8}, execution=Execution(backend="serial")
    ).to_dict()
    assert other["false_positives"] != a["false_positives"] or other["threshold"] != a["threshold"]


def test_vector_outputs_two_argument_mechanism_and_user_statistic():
    def vector(data, rng, trials):
        return data + rng.standard_normal((trials, 3))

    r = audit(
        vector,
        0.0,
        1.0,
        trials=20_000,
        seed=3,
        claim=PrivacyClaim(epsilon=0.5, delta=1e-5),
        execution=Execution(backend="serial"),
    )
    assert (
        r.provenance.statistic in candidate_scores(3, False)
        and r.provenance.output_dim == 3
        and r.verdict == "violation"
    )

    def single(data, rng):
        return data + rng.standard_normal(2)

    r2 = audit(
        single,
        0.0,
        0.0,
        trials=200,
        seed=0,
        claim=PrivacyClaim(epsilon=1.0),
        execution=Execution(backend="serial"),
    )
    assert r2.provenance.output_dim == 2

    def total(outputs):
        return outputs.sum(axis=1)

    r3 = audit(
        vector,
        0.0,
        1.0,
        trials=20_000,
        seed=3,
        claim=PrivacyClaim(epsilon=0.5, delta=1e-5),
        test=AuditTest(statistic=total),
        execution=Execution(backend="serial"),
    )
    assert (
        r3.provenance.statistic == "user:total"
        and r3.provenance.candidates == {}
        and r3.verdict == "violation"
    )


def test_claim_object_and_neighbour_checks(user_pair):
    d0, d1 = user_pair
    claim = PrivacyClaim(1.0, 1e-5, unit="user", relation="replace")
    r = audit(mean_mech, d0, d1, claim=claim, trials=2000, execution=Execution(backend="serial"))
    assert (r.unit, r.relation) == ("user", "replace")
    far = replace_user(d1, 2, np.ones((2, 1)))
    with pytest.raises(
        NotNeighboursError, match=r"unit='user', relation='replace'.*2 users differ"
    ):
        audit(mean_mech, d0, far, claim=claim, trials=2000, execution=Execution(backend="serial"))
    with pytest.raises(NotNeighboursError, match="item"):
        audit(
            mean_mech,
            d0,
            d1,
            trials=2000,
            claim=PrivacyClaim(epsilon=1.0, unit="item"),
            execution=Execution(backend="serial"),
        )
    with pytest.raises(NotNeighboursError, match="add-remove"):
        audit(
            mean_mech,
            d0,
            d1,
            trials=2000,
            claim=PrivacyClaim(epsilon=1.0, relation="add-remove"),
            execution=Execution(backend="serial"),
        )
    with pytest.raises(InputError, match="claim must be a dpclaims.PrivacyClaim, got float"):
        audit(mean_mech, d0, d1, 1.0, trials=2000)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=1.0, delta=1.0), "delta"),
        (dict(epsilon=1.0, delta=-0.1), "delta"),
        (dict(epsilon=1.0, trials=50), "trials"),
        (dict(epsilon=1.0, confidence=1.0), "confidence"),
        (dict(epsilon=1.0, method="bayes"), "method"),
        (dict(epsilon=1.0, threshold="max"), "threshold"),
        (dict(epsilon=1.0, ci="wald"), "ci"),
        (dict(epsilon=1.0, threshold=Split(0.995)), "fraction of 0.995 leaves"),
        (dict(epsilon=1.0, unit="group"), "unit"),
        (dict(), "epsilon"),
        (dict(epsilon=1.0, statistic=lambda x: x[:10, 0]), "statistic"),
        (dict(epsilon=1.0, statistic=lambda x: np.full(len(x), np.nan)), "statistic"),
        (dict(epsilon=1.0, statistic=3), "statistic"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(kwargs, match):
    def run(epsilon=None, delta=0.0, unit="user", trials=1000, confidence=0.95, **test):
        claim = None if epsilon is None else PrivacyClaim(epsilon, delta, unit)
        where = Execution(backend="serial")
        test = AuditTest(**test)
        return audit(
            gauss, 0.0, 1.0, claim, trials=trials, confidence=confidence, test=test, execution=where
        )

    with pytest.raises(InputError, match=match):
        run(**kwargs)


@pytest.mark.parametrize(
    "mechanism",
    [
        lambda data, rng, trials: np.full(trials, np.nan),
        lambda data, rng, trials: np.zeros(trials + 1),
        lambda data, rng, trials: np.full(trials, np.inf),
    ],
    ids=["nan", "shape", "inf"],
)
def test_bad_mechanism_outputs_are_refused(mechanism):
    with pytest.raises(MechanismError):
        audit(
            mechanism,
            0.0,
            1.0,
            trials=1000,
            claim=PrivacyClaim(epsilon=1.0),
            execution=Execution(backend="serial"),
        )
