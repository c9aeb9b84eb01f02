"""Discrete outputs: the histogram likelihood-ratio method and pure DP (delta = 0)."""

import math

import numpy as np
import pytest

from dpclaims.audit import AuditTest, audit
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim

P = 0.8  # randomized response keeps the bit with probability P: exactly log(P / (1 - P))-DP


def randomized_response(bit, rng, trials):
    keep = rng.random(trials) < P
    return np.where(keep, bit, 1 - bit).astype(bool)


def test_histogram_reaches_the_exact_epsilon_of_randomized_response():
    exact = math.log(P / (1 - P))
    r = audit(
        randomized_response,
        0,
        1,
        trials=10**6,
        seed=0,
        claim=PrivacyClaim(epsilon=exact, delta=0.0),
        test=AuditTest(method="histogram"),
        execution=Execution(backend="serial"),
    )
    assert r.provenance.statistic == "histogram_lr"
    assert r.provenance.discrete and r.certified
    assert 0.97 * exact <= r.epsilon_lower <= exact
    assert r.verdict == "consistent"


def test_histogram_detects_an_understated_claim():
    r = audit(
        randomized_response,
        0,
        1,
        trials=20_000,
        seed=1,
        claim=PrivacyClaim(epsilon=1.0, delta=0.0),
        test=AuditTest(method="histogram"),
        execution=Execution(backend="serial"),
    )
    assert r.verdict == "violation"


def categorical(data, rng, trials):
    """Three outcomes; only outcome 2 distinguishes the datasets (ratio 4)."""
    probs = [0.45, 0.45, 0.1] if data == 0 else [0.4, 0.2, 0.4]
    return rng.choice(3, size=trials, p=probs)[:, None] * np.ones((1, 2))


def test_default_method_uses_the_histogram_score_for_discrete_vectors():
    r = audit(
        categorical,
        0,
        1,
        trials=20_000,
        seed=2,
        claim=PrivacyClaim(epsilon=0.5, delta=0.0),
        execution=Execution(backend="serial"),
    )
    assert "histogram_lr" in r.provenance.candidates
    assert r.verdict == "violation"
    assert r.epsilon_lower <= math.log(4.0)


def test_histogram_refuses_continuous_outputs():
    def gauss(data, rng, trials):
        return data + rng.standard_normal(trials)

    with pytest.raises(InputError, match="discrete"):
        audit(
            gauss,
            0.0,
            1.0,
            trials=1000,
            claim=PrivacyClaim(epsilon=1.0),
            test=AuditTest(method="histogram"),
            execution=Execution(backend="serial"),
        )
