"""Audit setups of Accelerated-DP-SRGD (Choquette-Choo, Ganesh, Thakurta 2024, paper
``choquette-choo-et-al-2024``; spec 002 §7(a)).

* :class:`TranscriptStatistic` — the white-box statistic on the tree's node releases.
* :func:`canary_audit` — the worst-case zero-out pair with the algorithm, as an
  :class:`~dpclaims.target.AuditTarget`.
* :func:`gradient_canary_target` — the same pair audited through the transcript interface
  (:mod:`dpclaims.algorithms.transcript`): every released prefix, scored by the exact
  likelihood ratio of :meth:`AcceleratedDPSRGD.canary_release`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpclaims.algorithms.choquette_choo_et_al_2024 import RELEASES, AcceleratedDPSRGD
from dpclaims.algorithms.choquette_choo_et_al_2024.tree import (
    up_path,
)
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    check_choice,
    check_positive,
)
from dpclaims.losses import LinearLoss
from dpclaims.target import AuditTarget
from dpclaims.targets.dpsgd import transcript_target

__all__ = ["TranscriptStatistic", "canary_audit", "gradient_canary_target"]


@dataclass(frozen=True, kw_only=True)
class TranscriptStatistic:
    """White-box audit view (spec §7(a)): ``S = Σ_{m ∈ up(t*+1)} ⟨ν_m, u⟩`` from the prefixes.

    (``statistic="prefixes"``: ``S = Σ_{t ≥ t*} ⟨P_t, u⟩``, the spec's statistic for M1.)

    ``ν`` are the node releases recovered from ``P`` (and from the y-copy when the mutant
    releases one, summed); ``u`` the unit direction the canary moves its leaf (``−ĝ`` for a
    linear canary ``g``).  On blank data S ~ N(0, hσ²) vs N(h_t ‖g‖/(Bβ), h_t σ²): exactly the
    GDP trade-off.  A post-processing of the release, so any bound on it is a valid audit.
    """

    algorithm: AcceleratedDPSRGD
    direction: np.ndarray
    batch: int = 0
    statistic: str = "nodes"

    def __post_init__(self) -> None:
        check_choice(self.statistic, ("nodes", "prefixes"), "statistic")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        algo = self.algorithm
        record = algo.run(data, rng, trials, transcript=RELEASES).transcript
        u = np.asarray(self.direction, dtype=np.float64)
        copies = [record.prefixes] + ([record.prefixes_y] if record.prefixes_y is not None else [])
        stat = np.zeros(trials)
        for prefixes in copies:
            if self.statistic == "prefixes":
                # Σ_{t ≥ t*} ⟨P_t, u⟩: optimal against independent prefix noise (M1)
                stat = stat + prefixes[:, self.batch :, :].sum(axis=1) @ u
            else:
                nodes = [m - 1 for m in up_path(self.batch + 1, algo.steps)]
                stat = stat + algo._tree.node_values(prefixes)[:, nodes, :].sum(axis=1) @ u
        return stat[:, None]


def canary_audit(
    algorithm: AcceleratedDPSRGD | None = None,
    *,
    batch: int = 0,
    canary_norm: float | None = None,
    white_box: bool = True,
    statistic: str = "nodes",
) -> AuditTarget:
    """The spec §7(a) worst-case zero-out pair with the algorithm, as an :class:`AuditTarget`.

    Blank stream of ``n = B·T`` null items (linear loss, gradient 0) with the canary
    ``f_c(θ) = −⟨g, θ⟩`` (``‖g‖ = canary_norm``, default C_Δ) in batch ``batch`` (0: in the
    most tree nodes); D' zeroes it out.  ``white_box=True`` audits :class:`TranscriptStatistic`
    (``statistic="nodes"`` or ``"prefixes"``), else the final iterate y_T.  ``algorithm``
    (default :meth:`AcceleratedDPSRGD.for_canary`, the spec's setting) must have a linear loss.
    """
    from dpclaims.hardinstances.canaries import blank_canary_pair

    algo = AcceleratedDPSRGD.for_canary() if algorithm is None else algorithm
    if not isinstance(algo.loss, LinearLoss):
        raise InputError(
            "the blank canary needs a LinearLoss algorithm (null items then have zero gradient)"
        )
    norm = algo.clip if canary_norm is None else check_positive(canary_norm, "canary_norm")
    if not 0 <= batch < algo.steps:
        raise InputError(f"batch must be in [0, steps) = [0, {algo.steps}), got {batch!r}")
    size = algo.steps * algo.batch_size
    pair = blank_canary_pair(
        size, d=1, canary=norm, position=batch * algo.batch_size, mode="zero-out"
    )
    mechanism = (
        TranscriptStatistic(
            algorithm=algo, direction=np.array([-1.0]), batch=batch, statistic=statistic
        )
        if white_box
        else algo
    )
    return AuditTarget(
        mechanism=mechanism,
        d0=pair.d0,
        d1=pair.d1,
        claim=algo.privacy_claim,
        name=type(algo).__name__,
    )


def gradient_canary_target(
    algorithm: AcceleratedDPSRGD | None = None,
    *,
    batch: int = 0,
    canary_norm: float | None = None,
) -> AuditTarget:
    """The spec §7(a) blank-stream pair audited through the transcript interface
    (:func:`~dpclaims.targets.dpsgd.transcript_target`): ``d1`` holds the linear canary
    ``f_c(θ) = −⟨g, θ⟩`` (‖g‖ = ``canary_norm``, default C_Δ) in batch ``batch``, ``d0`` the
    null item in its place (zero-out, the claim's relation); the mechanism releases every
    prefix P_t projected on the canary's gradient, the statistic is the exact log-likelihood
    ratio of :meth:`AcceleratedDPSRGD.canary_release` (linear in the prefixes, the tree's
    covariance inverted), so the pair is μ-GDP with μ = ``canary_release(...).mu``
    (:attr:`AcceleratedDPSRGD.mu` at batch 0 and full norm).  ``algorithm`` (default
    :meth:`AcceleratedDPSRGD.for_canary`) must have a linear loss.
    """
    from dpclaims.hardinstances.canaries import blank_canary_pair

    algo = AcceleratedDPSRGD.for_canary() if algorithm is None else algorithm
    if not isinstance(algo, AcceleratedDPSRGD):
        raise InputError(f"algorithm must be an AcceleratedDPSRGD, got {type(algo).__name__}")
    if not isinstance(algo.loss, LinearLoss) or algo.loss.scale == 0:
        raise InputError(
            "the blank canary needs a LinearLoss algorithm with a nonzero scale (null items "
            "then have zero gradient)"
        )
    norm = algo.clip if canary_norm is None else check_positive(canary_norm, "canary_norm")
    release = algo.canary_release(batch=batch, norm=norm * abs(algo.loss.scale))
    pair = blank_canary_pair(
        algo.steps * algo.batch_size,
        d=1,
        canary=norm,
        position=batch * algo.batch_size,
        mode="zero-out",
    )
    return transcript_target(
        algo,
        pair.d1,
        pair.d0,
        direction=np.array([-np.sign(algo.loss.scale)]),  # ∇f_c = −scale·g
        release=release,
        name=f"{type(algo).__name__}/all-iterates/gradient",
        description=(
            f"{type(algo).__name__} (T = {algo.steps}, σ = {algo.sigma:.4g}), linear canary in "
            f"batch {batch}, zero-out, all-iterates threat model"
        ),
    )
