"""Shared fixtures of the target tests."""

import dataclasses
import functools

import pytest

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.losses import LogisticLoss


@pytest.fixture(scope="session")
def dpsgd():
    """``dpsgd(loss=None, *, epsilon=2.0, steps=10, rate=1/8)``: DP-SGD (step size 0.5, clip 1,
    logistic loss by default) with σ from the PLD accountant at (ε, 1e-5), the algorithm
    ``DPSGD.from_accountant`` builds.  The calibration (about a second) runs once per session
    per (ε, T, q), shared by the losses (σ does not depend on the loss) and by the test files."""

    @functools.cache
    def calibrated(epsilon, steps, rate):
        return DPSGD.from_accountant(
            epsilon, 1e-5, LogisticLoss(), steps=steps, step_size=0.5, clip_norm=1.0,
            sampling_rate=rate,
        )  # fmt: skip

    @functools.cache
    def build(loss=None, *, epsilon=2.0, steps=10, rate=1 / 8):
        alg = calibrated(epsilon, steps, rate)
        return alg if loss is None else dataclasses.replace(alg, loss=loss)

    return build
