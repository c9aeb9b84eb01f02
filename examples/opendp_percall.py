"""OpenDP's Laplace and Gaussian measurements audited per call, sequentially (``pip install
opendp``).

A measurement releases once per call, ``measurement(records)``, drawing its noise from the
operating system, so the per-call function takes an ``rng`` it cannot use: the audit runs
with ``strict=False`` and says its trials are not reproducible (each is an independent draw, so
the bound's confidence holds).  The measurements and the pair are those of
``examples/opendp_gate.py`` (a bounded sum, sensitivity 4 under add/remove, a record at the
bound added); the bug is a scale for sensitivity 1.  Run ``python examples/opendp_percall.py``.
"""

from __future__ import annotations

import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opendp_gate import BOUND, DELTA, EPSILON, datasets, gaussian_sum, laplace_sum  # noqa: E402

from dpclaims import PrivacyClaim, audit_sequential, percall  # noqa: E402
from dpclaims.errors import NotReproducibleWarning  # noqa: E402
from dpclaims.execution import Execution  # noqa: E402

MEASUREMENTS = {
    "laplace": laplace_sum(),
    "gaussian": gaussian_sum(),
    "laplace, bug": laplace_sum(1 / BOUND),
    "gaussian, bug": gaussian_sum(1 / BOUND),
}


def one_release(name: str, data, rng):
    """One release of measurement ``name`` (``rng`` unused: OpenDP cannot be seeded)."""
    return MEASUREMENTS[name](np.ravel(data).tolist())


def audit_measurement(name: str, *, seed: int = 0):
    """The sequential audit of measurement ``name`` on the pair of ``opendp_gate.datasets``,
    add/remove, against its claim."""
    d0, d1 = datasets()
    delta = 0.0 if name.startswith("laplace") else DELTA
    claim = PrivacyClaim(EPSILON, delta, unit="item", relation="add-remove")
    execution = Execution(strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotReproducibleWarning)
        return audit_sequential(
            percall(partial(one_release, name), execution=execution),
            d0,
            d1,
            claim,
            seed=seed,
            execution=execution,
        )


def main() -> None:
    # the calls run in worker processes, which import this file as a module by its name:
    # a function of __main__ would travel by value, with the measurements, which do not pickle
    import opendp_percall

    for name in MEASUREMENTS:
        result = opendp_percall.audit_measurement(name)
        note = next(w for w in result.warnings if w.startswith("sequential:"))
        print(f"{name:14s} {result.verdict:16s} ε ≥ {result.epsilon_lower:.3f}  {note}")


if __name__ == "__main__":
    main()
