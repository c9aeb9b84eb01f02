"""A CI gate for a library that cannot be seeded: OpenDP's Laplace and Gaussian on a bounded sum.

OpenDP draws its noise from the operating system's entropy, so a release cannot be repeated
from a seed and ``assert_private`` refuses it in its default, strict mode.  With
``reproducible=False`` it gates it all the same: the trials run in this process, each an
independent draw, so the verdict means what it means for a seeded mechanism; only a rerun
draws other trials (the result says "not reproducible").  In a pytest suite the same is
``@pytest.mark.dpclaims_privacy(reproducible=False)`` on a test using the ``dpclaims_audit``
fixture, or ``dpclaims_reproducible = false`` in the ini file.

The release is the sum of records clamped to [0, BOUND] (sensitivity BOUND under add/remove)
plus noise whose scale OpenDP finds for the claim (``binary_search_param``).  The bug it
catches: a scale computed for sensitivity 1 (forgetting the clamp bound), so the noise is
BOUND times too small.  Run it as a script (``python examples/opendp_gate.py``,
``pip install opendp``); each release is one OpenDP call (about 0.2 ms).
"""

from __future__ import annotations

import numpy as np
import opendp.prelude as dp

from dpclaims.testing import assert_private

dp.enable_features("contrib")

EPSILON, DELTA = 1.0, 1e-5  # the claims: ε-DP for the Laplace release, (ε, δ) for the Gaussian
BOUND = 4.0  # records are clamped to [0, BOUND]: the sum's sensitivity under add/remove
SPACE = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
BOUNDED_SUM = SPACE >> dp.t.then_clamp((0.0, BOUND)) >> dp.t.then_sum()


def laplace_sum(share: float = 1.0):
    """The Laplace release at ``share`` times the scale OpenDP finds for ε = EPSILON
    (``1 / BOUND``: the bug, a scale for sensitivity 1)."""
    scale = dp.binary_search_param(
        lambda s: BOUNDED_SUM >> dp.m.then_laplace(scale=s), d_in=1, d_out=EPSILON
    )
    return BOUNDED_SUM >> dp.m.then_laplace(scale=share * scale)


def _gaussian_approx_dp(scale: float):
    measurement = BOUNDED_SUM >> dp.m.then_gaussian(scale=scale)
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(measurement), delta=DELTA)


def gaussian_sum(share: float = 1.0):
    """The Gaussian release at ``share`` times the scale OpenDP finds for (EPSILON, DELTA)."""
    scale = dp.binary_search_param(_gaussian_approx_dp, d_in=1, d_out=(EPSILON, DELTA))
    return BOUNDED_SUM >> dp.m.then_gaussian(scale=share * scale)


def release(measurement):
    """The measurement as a dpclaims mechanism ``mech(data, rng)``: OpenDP ignores ``rng``."""

    def mechanism(data, rng):
        return measurement(data.tolist())

    return mechanism


def datasets():
    """Eight records in [0, BOUND] and the same with a record at BOUND added (the pair that
    attains the sum's sensitivity)."""
    d0 = np.linspace(0.0, BOUND, 8)
    return d0, np.append(d0, BOUND)


def gate(measurement, *, delta: float, trials: int = 20_000, **options):
    """``assert_private`` of the release on :func:`datasets`, add/remove, not reproducible."""
    d0, d1 = datasets()
    return assert_private(
        release(measurement),
        d0,
        d1,
        epsilon=EPSILON,
        delta=delta,
        trials=trials,
        unit="item",
        relation="add-remove",
        reproducible=False,
        **options,
    )


def main() -> None:
    bug = 1 / BOUND
    cases = [
        ("Laplace, OpenDP's scale", laplace_sum(), 0.0),
        ("Laplace, scale for sensitivity 1", laplace_sum(bug), 0.0),
        ("Gaussian, OpenDP's scale", gaussian_sum(), DELTA),
        ("Gaussian, scale for sensitivity 1", gaussian_sum(bug), DELTA),
    ]
    for name, measurement, delta in cases:
        try:
            result = gate(measurement, delta=delta)
            line = f"passes: {result.verdict}, ε ≥ {result.epsilon_lower:.3f}"
        except AssertionError as failure:
            line = f"fails: {failure}"
        print(f"{name:34s} {line}")


if __name__ == "__main__":
    main()
