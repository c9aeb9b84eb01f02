"""Shared fixtures of the claim-check tests."""

import functools

import pytest

from dpclaims import claims
from dpclaims.execution import Execution


@pytest.fixture(scope="session")
def quick_outcome():
    """The quick-budget Outcome of a claim id at seed 0 (serial), run once per session: several
    tests read the same claim's quick experiment; the seed fixes every number, and every backend
    gives bit-identical outputs, so the shared run is the run each test would make."""

    @functools.cache
    def run(claim_id):
        experiment = claims.experiment(claims.get(claim_id), "quick")
        return experiment.run(seed=0, execution=Execution(backend="serial"))

    return run
