"""Audit datasets for spec 000 §7(a) run end-to-end through Algorithms 1 and 3.

The canaries of :mod:`dpclaims.hardinstances.canaries` (P1–P4, Q1–Q4) describe the users of
one phase.  The full algorithms need ``n`` users, of which phase 1 takes the first ``n_1``
under ``partition="index"``; :func:`padded_pair` appends identical filler users (all
items at ``filler``) to both datasets, so they stay replace-one-user neighbours and the
differing user (user 0) lands in phase 1, group 1.
"""

from __future__ import annotations

import numpy as np

from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_count
from dpclaims.hardinstances.canaries import NeighbourPair

__all__ = ["padded_pair"]


def padded_pair(pair: NeighbourPair, n: int, filler=0.0) -> NeighbourPair:
    """``pair`` with filler users appended up to ``n`` users (scalar ``filler`` ⇒ ``filler·e₁``).

    Unlabelled pairs only.  Unit user, relation replace (the pair's own).
    """
    n = check_count(n, "n")
    d0, d1 = pair.d0, pair.d1
    if d0.y is not None:
        raise InputError("padded_pair needs unlabelled datasets")
    extra = n - d0.n
    if extra < 0:
        raise InputError(f"n must be >= the pair's {d0.n} users, got {n}")
    point = np.zeros(d0.d)
    if np.ndim(filler) == 0:
        point[0] = float(filler)
    else:
        point = np.asarray(filler, dtype=np.float64).reshape(d0.d)
    pad = np.broadcast_to(point, (extra, d0.m, d0.d))
    return NeighbourPair(
        d0=UserDataset(np.concatenate([d0.x, pad])),
        d1=UserDataset(np.concatenate([d1.x, pad])),
        unit=pair.unit,
        relation=pair.relation,
        source=pair.source + f" (padded to n = {n})",
    )
