"""Known-buggy variants of :class:`~dpclaims.algorithms.baselines.DPSGD` for its white-box audits.

Each is the reference algorithm with one documented change and the reference's privacy claim,
which it does not meet:

- :class:`HalfNoiseDPSGD`: half the calibrated noise (σ/2) on every step;
- clipping skipped is the reference's own ``clip=False`` (:func:`no_clip`).

They are not registered in the mutant corpus (its kill matrix is a fixed set of registry
audits); :mod:`dpclaims.targets.dpsgd` audits them.
"""

from __future__ import annotations

import dataclasses

from dpclaims.algorithms.baselines import DPSGD

__all__ = ["HalfNoiseDPSGD", "half_noise", "no_clip"]


class HalfNoiseDPSGD(DPSGD):
    """DP-SGD adding noise of std σ·C/2 per coordinate while claiming the ε of σ (a factor-2
    calibration error; the accountant's ε of σ/2 is its true ε on a worst-case pair)."""

    @property
    def _noise_std(self) -> float:
        return 0.5 * self.noise_multiplier * self.clip_norm


def half_noise(algorithm: DPSGD) -> HalfNoiseDPSGD:
    """``algorithm`` with half its noise and the same claim."""
    fields = {f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm)}
    return HalfNoiseDPSGD(**fields)


def no_clip(algorithm: DPSGD) -> DPSGD:
    """``algorithm`` with clipping skipped (gradients summed unclipped) and the same claim."""
    return dataclasses.replace(algorithm, clip=False)
