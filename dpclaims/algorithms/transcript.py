"""The one interface through which iterative algorithms release their transcript.

A white-box audit under the *all-iterates* threat model (the adversary the accountant of
DP-SGD-like algorithms assumes: every noisy update is released) needs two things from an
algorithm, and nothing else:

- ``run(data, rng, trials, transcript=True)`` returning a run whose ``transcript`` is the
  array ``(trials, T, d)`` of the released noisy updates, step by step (DESIGN.md, "The shape
  of an algorithm"), batched over trials;
- ``step_release``: a :class:`StepRelease`, what the algorithm *claims* about each released
  step (the noise it adds, the clipping bound, the sampling rate), from which the audit derives
  its test statistic before any certifying trial is seen.

:class:`~dpclaims.algorithms.baselines.DPSGD` implements it.  DIFF2 and DP-SRGD record their
releases already, each its own way (``DIFF2Run.estimates``: the running estimates ṽ_r, whose
steps alternate a restart's clipped gradient at (C1, σ1) with clipped gradient *differences* at
(C2, σ2), to which a fixed-gradient canary contributes nothing; ``SRGDRun.transcript``: an
``SRGDTranscript`` of tree-aggregated prefix sums, noise correlated across steps).  Joining this
interface needs, for each, the per-step releases as ``(trials, T, d)`` under the name
``transcript`` and a ``StepRelease`` subclass whose likelihood ratio is that mechanism's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import InputError, check_positive, check_trials

__all__ = ["StepRelease", "ReleasesTranscript"]


@dataclass(frozen=True, kw_only=True)
class StepRelease:
    """What each released step of a transcript is claimed to be.

    Step t releases ``Σ_{units in batch} clip(g_unit) + N(0, noise_std² I)``, every unit in the
    batch independently with probability ``sampling_rate``, ``‖clip(g)‖ ≤ clip_norm``; the
    noise is independent across steps.

    Attributes
    ----------
    steps : T
    sampling_rate : q in (0, 1]
    clip_norm : C
    noise_std : standard deviation per coordinate of each step's noise (σ·C for DP-SGD)
    """

    steps: int
    sampling_rate: float
    clip_norm: float
    noise_std: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", check_trials(self.steps, "steps"))
        for name in ("sampling_rate", "clip_norm", "noise_std"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        if self.sampling_rate > 1:
            raise InputError(f"sampling_rate must be in (0, 1], got {self.sampling_rate}")

    def log_likelihood_ratio(self, projections: np.ndarray) -> np.ndarray:
        """The exact log-likelihood ratio of a gradient canary's presence, ``(trials, T) ->
        (trials,)``.

        ``projections[:, t]`` is step t's release projected on the canary's clipped gradient
        direction (unit vector).  With the canary, a step is ``C·b + N(0, s²)``, b ~
        Bernoulli(q); without it ``N(0, s²)``; so the log-ratio is
        ``Σ_t log((1 − q) + q·exp((x_t·C − C²/2)/s²))`` (the Poisson-subsampled Gaussian
        mixture, e.g. Mironov et al. 2019, §3), the statistic of the most powerful tests between
        the two (Neyman–Pearson).
        """
        x = np.asarray(projections, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.steps:
            raise InputError(
                f"projections must have shape (trials, T) = (trials, {self.steps}), got {x.shape}"
            )
        c, s2, q = self.clip_norm, self.noise_std**2, self.sampling_rate
        shift = (x * c - 0.5 * c * c) / s2
        if q == 1.0:
            return shift.sum(axis=1)
        return np.logaddexp(math.log1p(-q), math.log(q) + shift).sum(axis=1)

    def sample_log_likelihood_ratio(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray:
        """``draws`` exact draws of :meth:`log_likelihood_ratio` with (``canary=True``) or
        without the canary, ``(draws,)``: for the limit of the optimal test."""
        c, s, q = self.clip_norm, self.noise_std, self.sampling_rate
        x = s * rng.standard_normal((draws, self.steps))
        if canary:
            x += c * (rng.random((draws, self.steps)) < q)
        return self.log_likelihood_ratio(x)

    def to_dict(self) -> dict:
        return {
            "steps": self.steps,
            "sampling_rate": self.sampling_rate,
            "clip_norm": self.clip_norm,
            "noise_std": self.noise_std,
        }


@runtime_checkable
class ReleasesTranscript(Protocol):
    """An algorithm that releases its transcript of noisy updates (see the module docstring)."""

    @property
    def step_release(self) -> StepRelease: ...

    def run(self, data: Any, rng: np.random.Generator, trials: int, transcript: bool = False): ...
