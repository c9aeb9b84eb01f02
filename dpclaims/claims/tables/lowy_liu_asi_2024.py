"""The experiments of Lowy, Liu & Asi (2024), declared (paper id ``lowy-liu-asi-2024``).

Measuring code: :mod:`dpclaims.claims.checks.lowy_liu_asi_2024`.
"""

from __future__ import annotations

import numpy as np

import dpclaims.claims.checks.lowy_liu_asi_2024  # noqa: F401  (registers the factories left)
from dpclaims.claims import declare
from dpclaims.claims.checks.lowy_liu_asi_2024 import (
    acsa_iterations,
    alg1_count,
    alg3_count,
    sc_count,
)

# --------------------------------------------------------------------------- complexity (dry runs)

DRY_N = list(np.geomspace(1e10, 1e13, 5))
"""The n grid of the dry runs at m = 1e3 (n^7 >= m throughout)."""

COMPLEXITY = (
    declare.sweep(
        "lla24.alg3.complexity.stat",
        alg3_count,
        "n",
        DRY_N,
        replicates=2,
        fixed={"param": "n"},
        note="dry run: beta=1e4, m=1e3, d=10, eps=1, delta=1e-12, K constant 500 -> 1",
    ),
    declare.sweep(
        "lla24.alg3.complexity.headline",
        alg3_count,
        "m",
        list(np.geomspace(1e2, 1e5, 5)),
        replicates=2,
        fixed={"param": "m", "n": 1e11},
        note="dry run, m sweep at n = 1e11 (n^7 >= m)",
    ),
    declare.sweep(
        "lla24.alg3.complexity.priv",
        alg3_count,
        "n",
        list(np.geomspace(1e6, 1e9, 5)),
        replicates=2,
        fixed={"param": "n", "d": 1e12},
        note="dry run, private branch: d = 1e12 so n <= d/eps^2",
    ),
    declare.sweep(
        "lla24.alg3.complexity.C1",
        alg3_count,
        "m",
        list(np.geomspace(1e40, 1e44, 5)),
        replicates=2,
        fixed={"param": "m", "n": 1e4, "d": 10.0},
        note="dry run with m >> n^7 (n = 1e4): the T_i/eps floor of K_i dominates",
    ),
    declare.sweep(
        "lla24.alg3sc.complexity",
        sc_count,
        "n",
        DRY_N,
        replicates=2,
        note="dry run of the spec's strongly convex wrapper (k blocks of n/k users), with the "
        "other dry runs' parameters",
    ),
    declare.sweep(
        "lla24.alg3ns.complexity",
        alg3_count,
        "n",
        list(np.geomspace(1e8, 1e11, 5)),
        replicates=2,
        fixed={"param": "n", "smoothed": True},
        note="dry run of the smoothed variant, beta = eps n sqrt(m)",
    ),
    declare.sweep(
        "lla24.alg3ns.complexity.omitted",
        alg3_count,
        "m",
        list(np.geomspace(1e30, 1e34, 5)),
        replicates=2,
        fixed={"param": "m", "n": 1e6, "smoothed": True},
        note="smoothed dry run with m >> eps^7 n^(5/2): the term the paper omits",
    ),
    declare.sweep(
        "lla24.alg1.complexity",
        alg1_count,
        "n",
        [10**5, 10**6, 10**7, 10**8],
        replicates=2,
        note="sum_i n_i m of Algorithm 1's schedule (asserted <= nm)",
    ),
    declare.sweep(
        "lla24.lemmaC4.acsa",
        acsa_iterations,
        "kappa",
        [10.0, 100.0, 1000.0, 10000.0],
        variable="beta_over_lambda",
        replicates=2,
        fixed={"d": 2, "tol": 1e-10},
        note="noise-free multi-stage AC-SA on a quadratic with eigenvalues {1, kappa}, to a 1e-10 "
        "relative gap (at the spec's tolerance 1e-6 the fit is pre-asymptotic: slope 0.38)",
    ),
)

declare.register(COMPLEXITY)
