"""Extra neighbouring pairs for the spec 003 audits (pure ε-DP SCO with heavy tails).

* :func:`block_outlier_pair` — the §7(a) heavy-outlier pair with the special record moved into a
  chosen position (e.g. the block of Algorithm 1's last phase, where the privacy loss is largest).
* :func:`light_replacement_pair` — D has the heavy outlier ``(10⁶, −5)``, D' replaces it by a light
  record ``(1, +5)``: the pair that exposes data-dependent clipping levels (mutant M6).
* :func:`hinge_outlier_pair` — a hinge-loss (Cor D.7) outlier ``(x, y) = (10⁶, ±1)`` flipping its
label.
* :func:`shift_pair` — one record at 0 vs one at ``Δ·(1,…,1)/√d``: the ℓ2-Laplace sampler audit in
d ≥ 2.
* :func:`step_pair` — absolute-loss records whose mean clipped gradient is a step at ``kink``;
  record 0 pushes by −C in D and +C in D' on the whole domain: the pair on which a finite
  exponential mechanism with a gradient-map score loses almost its full ε (EM-PGM).

All are item-level replace-one neighbours (:class:`~dpclaims.hardinstances.canaries.NeighbourPair`).
"""

from __future__ import annotations

import numpy as np

from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_count, check_positive
from dpclaims.hardinstances.canaries import NeighbourPair, heavy_outlier_pair

__all__ = [
    "block_outlier_pair",
    "light_replacement_pair",
    "hinge_outlier_pair",
    "shift_pair",
    "step_pair",
]


def block_outlier_pair(
    n: int = 200, position: int = 0, weight: float = 1e6, target: float = 5.0
) -> NeighbourPair:
    """:func:`heavy_outlier_pair` with record 0 (the special point) swapped to index
    ``position``."""
    n = check_count(n, "n", minimum=2)
    position = check_count(position, "position", minimum=0)
    if position >= n:
        position = n - 1
    base = heavy_outlier_pair(n, weight, target)
    order = np.arange(n)
    order[[0, position]] = order[[position, 0]]
    d0 = UserDataset(base.d0.x[order], base.d0.y[order])
    d1 = UserDataset(base.d1.x[order], base.d1.y[order])
    source = f"spec 003 §7(a) heavy outlier at record {position}"
    return NeighbourPair(d0=d0, d1=d1, unit="item", relation="replace", source=source)


def light_replacement_pair(n: int = 200, weight: float = 1e6, target: float = 5.0) -> NeighbourPair:
    """D: the §7(a) dataset with outlier ``(weight, −target)``; D': that record replaced by ``(1,
    +target)``."""
    base = heavy_outlier_pair(n, weight, target)
    x = np.array(base.d0.x)
    y = np.array(base.d0.y)
    x[0, 0, 0], y[0, 0] = 1.0, target
    return NeighbourPair(
        d0=base.d0,
        d1=UserDataset(x, y),
        unit="item",
        relation="replace",
        source="spec 003 §7(c) M6: heavy vs light record",
    )


def hinge_outlier_pair(n: int = 200, weight: float = 1e6) -> NeighbourPair:
    """Hinge records ``(x, y)``: half ``(1, +1)``, half ``(1, −1)``; record 0 is ``(weight, +1)``
    in D, ``(weight, −1)`` in D'."""
    n = check_count(n, "n", minimum=2)
    weight = check_positive(weight, "weight")
    x = np.ones((n, 1))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    x[0, 0], y[0] = weight, 1.0
    y1 = y.copy()
    y1[0] = -1.0
    return NeighbourPair(
        d0=UserDataset(x, y),
        d1=UserDataset(x, y1),
        unit="item",
        relation="replace",
        source="spec 003 Cor D.7: hinge outlier",
    )


def shift_pair(d: int = 2, shift: float = 1.0) -> NeighbourPair:
    """One record at the origin vs one at ``shift·(1,…,1)/√d`` (ℓ2 distance ``shift``), spec 003
    §7(a) sampler audit."""
    d = check_count(d, "d", minimum=1)
    shift = check_positive(shift, "shift")
    return NeighbourPair(
        d0=UserDataset(np.zeros((1, d))),
        d1=UserDataset(np.full((1, d), shift / np.sqrt(d))),
        unit="item",
        relation="replace",
        source="spec 003 §7(a): diagonal shift for the Lap2 sampler",
    )


def step_pair(
    n: int = 200, kink: float = 8.75, weight: float = 1e6, far: float = 20.0
) -> NeighbourPair:
    """Absolute-loss records ``a|w − b|`` (``x = a``, ``y = a·b``) on 𝒲 ⊆ [−far, far]:

    * record 0: ``(weight, +far)`` in D (gradient −weight on all of 𝒲), ``(weight, −far)`` in D'
      (gradient +weight): after clipping at C ≤ weight the mean gradient moves by 2C/n everywhere;
    * record 1: ``(weight, kink)``: a clipped step −C → +C at ``kink``;
    * records 2…: ``(1, ∓far)`` alternately, whose gradients ±1 cancel in pairs (n even).

    So the mean clipped gradient is −2C/n left of ``kink`` and 0 right of it in D, 0 and +2C/n
    in D': a score ‖ĝ_C + λ(w − w̄)‖ with small λ falls by 2C/n left of the kink and rises by
    2C/n right of it.  Unit item, relation replace.
    """
    n = check_count(n, "n", minimum=4)
    if n % 2:
        raise InputError(f"step_pair needs an even n (its light records cancel in pairs), got {n}")
    weight, far = check_positive(weight, "weight"), check_positive(far, "far")
    a = np.ones(n)
    b = np.where(np.arange(n) % 2 == 0, -far, far)
    a[:2], b[:2] = weight, (far, kink)
    b1 = b.copy()
    b1[0] = -far
    return NeighbourPair(
        d0=UserDataset(a[:, None], a * b),
        d1=UserDataset(a[:, None], a * b1),
        unit="item",
        relation="replace",
        source="step pair: the score falls left of the kink and rises right of it",
    )
