"""The reach of an audit: the smallest violation it would have caught (dpclaims.audit.reach)."""

import math

import numpy as np
import pytest

from dpclaims.audit import AuditTest, Neighbours, Quantiles, audit, certify_scores
from dpclaims.audit.reach import REACH_LIMIT, reach, violation_param
from dpclaims.audit.threshold import Criterion
from dpclaims.execution import Execution
from dpclaims.gdp import gdp_epsilon
from dpclaims.privacy import PrivacyClaim

N = 10_000
REPS = 60


def _draw(kind, n, shift, rng):
    if kind == "gaussian":
        return rng.standard_normal(n), shift + rng.standard_normal(n)
    return rng.laplace(0.0, 1.0, n), shift + rng.laplace(0.0, 1.0, n)


def _reach_of(found, claim, delta):
    test = found.test
    return reach(
        test,
        claim=claim,
        delta=delta,
        alpha=found.alpha,
        tradeoff=found.tradeoff,
    )


def _detection(kind, shift, claim, rng):
    hits = [
        certify_scores(*_draw(kind, N, shift, rng), strategy=Quantiles()).epsilon_lower > claim
        for _ in range(REPS)
    ]
    return float(np.mean(hits))


@pytest.mark.parametrize(
    ("kind", "shift", "claim", "delta"),
    [("gaussian", 0.5, 2.0, 1e-5), ("gaussian", 1.0, 1.0, 1e-5), ("laplace", 0.6, 1.0, 0.0)],
)
def test_predicted_reach_is_caught_and_not_far_beyond(kind, shift, claim, delta):
    """A mechanism of the pair's family leaking the predicted factor times the *claim* is caught
    by a fresh audit with probability >= 0.9 (up to the simulation error); one leaking a factor
    1.5 smaller mostly is not (the reach is not vacuous)."""
    rng = np.random.default_rng(1)
    found = certify_scores(*_draw(kind, N, shift, rng), strategy=Quantiles())
    predicted = _reach_of(found, claim, delta)
    model = "gaussian-dp" if kind == "gaussian" else "laplace"
    assert math.isfinite(predicted.factor) and predicted.model == model
    assert predicted.epsilon == pytest.approx(predicted.factor * claim)
    error = 3 * math.sqrt(0.9 * 0.1 / REPS)
    caught = violation_param(model, predicted.factor * claim, delta)
    assert _detection(kind, caught, claim, rng) >= 0.9 - error
    missed = violation_param(model, predicted.factor * claim / 1.5, delta)
    assert _detection(kind, missed, claim, rng) < 0.9


def test_the_model_that_fits_the_tradeoff_is_chosen():
    rng = np.random.default_rng(2)
    gaussian = certify_scores(*_draw("gaussian", N, 1.0, rng), strategy=Quantiles())
    laplace = certify_scores(*_draw("laplace", N, 1.0, rng), strategy=Quantiles())
    assert _reach_of(gaussian, 3.0, 1e-5).model == "gaussian-dp"
    assert _reach_of(laplace, 3.0, 0.0).model == "laplace"
    assert _reach_of(gaussian, 3.0, 1e-5).mu == pytest.approx(1.0, abs=0.05)


def test_the_reach_is_measured_against_the_claim_not_the_pair():
    """Issue 41: pairs of one family leaking 0.2, 1 or 3 (μ) get one reach, and a pair without
    leakage the conservative family's; a claim beyond the audit's tests has none."""
    rng = np.random.default_rng(3)
    factors = [
        _reach_of(certify_scores(*_draw("gaussian", N, mu, rng), strategy=Quantiles()), 1.0, 1e-5)
        for mu in (0.2, 1.0, 3.0)
    ]
    assert [f.model for f in factors] == ["gaussian-dp"] * 3
    assert factors[0].factor == pytest.approx(factors[1].factor) == factors[2].factor
    assert [f.mu for f in factors] == pytest.approx([0.2, 1.0, 3.0], abs=0.1)
    s0, s1 = rng.standard_normal(N), rng.standard_normal(N)
    found = _reach_of(certify_scores(s0, s1, strategy=Quantiles()), 1.0, 1e-5)
    assert found.factor == pytest.approx(factors[0].factor)
    beyond = _reach_of(certify_scores(s0, s1, strategy=Quantiles()), 30.0, 1e-5)
    assert beyond.factor == math.inf and "no violation" in beyond.describe()


def test_reach_falls_with_more_trials_and_rises_with_the_claim():
    rng = np.random.default_rng(4)
    small = certify_scores(*_draw("gaussian", 2_000, 0.5, rng), strategy=Quantiles())
    large = certify_scores(*_draw("gaussian", 50_000, 0.5, rng), strategy=Quantiles())
    assert _reach_of(large, 2.0, 1e-5).factor < _reach_of(small, 2.0, 1e-5).factor
    assert _reach_of(large, 1.0, 1e-5).factor < _reach_of(large, 4.0, 1e-5).factor


def _gaussian_mechanism(sigma):
    def mechanism(data, rng, trials):
        return float(data) + sigma * rng.standard_normal(trials)

    return mechanism


def test_a_weak_pair_is_consistent_weak_and_a_strong_one_consistent():
    """At 2·10^4 trials an audit cannot catch a Gaussian mechanism leaking 2× a claim of 4 (σ = 8
    on a gap of 1 is the pair); at 2·10^5 it catches one leaking 2× a claim of 2.5."""
    weak = audit(
        _gaussian_mechanism(8.0),
        0.0,
        1.0,
        trials=20_000,
        claim=PrivacyClaim(epsilon=4.0, delta=1e-5),
        neighbours=Neighbours(relation="unchecked"),
        execution=Execution(backend="serial"),
    )
    assert weak.verdict == "consistent_weak" and weak.reach.factor > REACH_LIMIT
    assert "would catch only" in weak.reason and "reach" in weak.summary()
    strong = audit(
        _gaussian_mechanism(2.0),
        0.0,
        1.0,
        trials=200_000,
        claim=PrivacyClaim(epsilon=2.5, delta=1e-5),
        neighbours=Neighbours(relation="unchecked"),
        execution=Execution(backend="serial"),
    )
    assert strong.verdict == "consistent" and strong.reach.factor <= REACH_LIMIT
    relaxed = audit(
        _gaussian_mechanism(8.0),
        0.0,
        1.0,
        trials=20_000,
        claim=PrivacyClaim(epsilon=4.0, delta=1e-5),
        neighbours=Neighbours(relation="unchecked"),
        execution=Execution(backend="serial"),
        test=AuditTest(reach_limit=math.inf),
    )
    assert relaxed.verdict == "consistent"
    record = weak.to_dict()
    assert record["reach_factor"] == pytest.approx(weak.reach.factor)
    assert record["reach_model"] in ("gaussian-dp", "laplace")


def test_reach_limit_is_validated():
    with pytest.raises(ValueError, match="reach_limit"):
        audit(
            _gaussian_mechanism(1.0),
            0.0,
            1.0,
            trials=1000,
            claim=PrivacyClaim(epsilon=1.0),
            neighbours=Neighbours(relation="unchecked"),
            test=AuditTest(reach_limit=0.5),
        )


def test_small_bounds_are_printed_with_their_digits():
    from dpclaims.audit.result import format_epsilon

    assert format_epsilon(0.0004) == "0.0004"
    assert format_epsilon(0.0) == "0.000"
    assert format_epsilon(1.23456) == "1.235"
    assert format_epsilon(math.inf) == "∞"


def _gdp_certificate(shift, rng, delta):
    criterion = Criterion(delta=delta, objective="mu")
    return certify_scores(
        *_draw("gaussian", N, shift, rng), strategy=Quantiles(), criterion=criterion
    )


def _gdp_detection(shift, claim, delta, rng):
    """How often a fresh GDP audit's estimate ε = gdp_epsilon(μ̂, δ) exceeds the claim."""
    hits = [
        gdp_epsilon(_gdp_certificate(shift, rng, delta).test.mu, delta) > claim for _ in range(REPS)
    ]
    return float(np.mean(hits))


def test_gdp_reach_is_caught_on_a_gaussian_mechanism():
    """method='gdp': the reach under its own μ-GDP model.  On a Gaussian pair with μ = 0.25
    (claim 2 at δ = 1e-5, i.e. μ_claim = 0.50), a fresh audit of the μ-GDP mechanism leaking the
    predicted k times the claim has its estimate above the claim with probability >= 0.9 (up to
    the simulation error), and of one leaking k/1.5 times mostly not."""
    rng = np.random.default_rng(3)
    claim, delta, shift = 2.0, 1e-5, 0.25
    found = _gdp_certificate(shift, rng, delta)
    predicted = reach(
        found.test,
        claim=claim,
        delta=delta,
        alpha=found.alpha,
        tradeoff=found.tradeoff,
        objective="mu",
    )
    assert predicted.model == "gaussian-dp" and 1.0 < predicted.factor < 20
    assert predicted.epsilon == pytest.approx(predicted.factor * claim)
    error = 3 * math.sqrt(0.9 * 0.1 / REPS)
    caught = violation_param("gaussian-dp", predicted.factor * claim, delta)
    assert _gdp_detection(caught, claim, delta, rng) >= 0.9 - error
    missed = violation_param("gaussian-dp", predicted.factor * claim / 1.5, delta)
    assert _gdp_detection(missed, claim, delta, rng) < 0.9
