"""The one interface through which iterative algorithms release their transcript.

A white-box audit under the *all-iterates* threat model (the adversary the accountant of
DP-SGD-like algorithms assumes: every noisy update is released) needs two things from an
algorithm, and nothing else (:class:`ReleasesTranscript`):

- ``releases(data, rng, trials)``: the array ``(trials, T, d)`` of what the algorithm releases
  step by step (DESIGN.md, "The shape of an algorithm"), batched over trials, drawn from
  ``rng`` exactly as ``run(data, rng, trials)`` draws (same seed, same run);
- ``step_release``: a :class:`ReleaseModel`, what the algorithm *claims* its releases are along
  a gradient canary (a unit whose gradient is a fixed vector, clipped to the full radius), from
  which the audit derives the exact log-likelihood ratio of the canary's presence, its test
  statistic, before any certifying trial is seen.

The implementations:

- :class:`~dpclaims.algorithms.baselines.DPSGD`: ``run(..., transcript=True).transcript``, the
  noisy clipped sums; :class:`StepRelease`, T Poisson-subsampled Gaussian steps (the canary
  is in each batch with probability q).
- :class:`~dpclaims.algorithms.murata_suzuki_2023.DIFF2` (and its GD, DP-GD and BVR-L-SGD
  routines): ``run(..., transcript=True).estimates``, the server's ṽ_1..ṽ_R (Alg. 1 lines 6
  and 13, full batch, record level, replace-one within a silo).  A restart round releases a
  fresh clipped mean at (C1, σ1); a difference round adds to ṽ_{r−1} a clipped mean of
  gradient *differences*, to which a fixed gradient contributes exactly 0, with noise whose
  law given the past is the same with and without the canary.  So only the ⌈R/T⌉ restart
  rounds carry the canary: a :class:`GaussianRelease` on them, independent N(·, σ1²C1²).
- :class:`~dpclaims.algorithms.choquette_choo_et_al_2024.AcceleratedDPSRGD`:
  ``run(..., transcript=RELEASES).transcript.prefixes``, the noisy prefix sums
  P_t = G_t/β + e_t (Algorithm 1 line 6, Lemma 5.6's tree); a canary in batch t* shifts
  every P_t, t ≥ t*, by min(‖g‖, C_Δ)/(Bβ), under noise correlated across steps with
  covariance σ²WWᵀ (:func:`~dpclaims.algorithms.choquette_choo_et_al_2024.tree.
  prefix_noise_covariance`): a :class:`GaussianRelease` on all T steps (zero-out relation).

An audit view (:class:`dpclaims.targets.dpsgd.TranscriptProjections`) projects the releases on
the canary's direction, ``(trials, T)``, and scores them with
``step_release.log_likelihood_ratio``: the Neyman–Pearson statistic of the claimed release, so
the audit can reach the limit of the optimal test (:func:`dpclaims.targets.dpsgd.
optimal_limit`), and a mechanism that leaks more than it claims is caught by the same test;
:func:`dpclaims.targets.dpsgd.planned_threshold` plans its thresholds from the claimed model
alone (``sample_projections``, ``noise_divided``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import InputError, check_finite_array, check_positive, check_trials
from ..gdp import gdp_epsilon

__all__ = ["ReleaseModel", "StepRelease", "GaussianRelease", "ReleasesTranscript"]


@runtime_checkable
class ReleaseModel(Protocol):
    """What a transcript of ``steps`` releases is claimed to be along a gradient canary.

    ``log_likelihood_ratio(projections (trials, T)) -> (trials,)``: the exact log-likelihood
    ratio log(dP_with/dP_without) of the canary's presence, from each step's release projected
    on the canary's direction; ``sample_projections(rng, draws, canary=...)``: exact draws of
    the projections ``(draws, T)`` without and with the canary, and
    ``sample_log_likelihood_ratio`` of the ratio on them (the limit of the optimal test);
    ``noise_divided(factor)``: the same release with its noise std divided by ``factor`` (the
    violation an audit plans to catch).
    """

    steps: int

    def log_likelihood_ratio(self, projections: np.ndarray) -> np.ndarray: ...

    def sample_projections(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray: ...

    def sample_log_likelihood_ratio(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray: ...

    def noise_divided(self, factor: float) -> ReleaseModel: ...


def _projections(x: Any, steps: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != steps:
        raise InputError(
            f"projections must have shape (trials, T) = (trials, {steps}), got {x.shape}"
        )
    return x


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
        x = _projections(projections, self.steps)
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
        return self.log_likelihood_ratio(self.sample_projections(rng, draws, canary=canary))

    def sample_projections(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray:
        """``draws`` exact draws of the steps' projections, ``(draws, T)``: ``N(0, s²)`` each,
        plus ``C`` with probability q with the canary."""
        c, s, q = self.clip_norm, self.noise_std, self.sampling_rate
        x = s * rng.standard_normal((draws, self.steps))
        if canary:
            x += c * (rng.random((draws, self.steps)) < q)
        return x

    def noise_divided(self, factor: float) -> StepRelease:
        """The same steps with noise std ``noise_std / factor``."""
        return dataclasses.replace(
            self, noise_std=self.noise_std / check_positive(factor, "factor")
        )

    def to_dict(self) -> dict:
        return {
            "steps": self.steps,
            "sampling_rate": self.sampling_rate,
            "clip_norm": self.clip_norm,
            "noise_std": self.noise_std,
        }


@dataclass(frozen=True, kw_only=True, eq=False)
class GaussianRelease:
    """A transcript whose canary signal is a Gaussian mean shift under known covariance.

    Along the canary's direction the releases of the steps ``carriers`` (K,) are jointly
    ``N(mean_without, Σ)`` without the canary and ``N(mean_with, Σ)`` with it (Σ =
    ``covariance`` (K, K)); every other step has, given the steps before it, the same law in
    both worlds (the canary adds nothing to it), so it cancels from the likelihood ratio.  The
    log-likelihood ratio is then linear,

        L(x) = (x_S − (a + b)/2)ᵀ Σ⁻¹ (b − a),   a = mean_without, b = mean_with,

    distributed ``N(−μ²/2, μ²)`` without the canary and ``N(μ²/2, μ²)`` with it, μ² =
    ``(b − a)ᵀ Σ⁻¹ (b − a)``: L is a sufficient statistic, so the pair's trade-off is that of
    N(0, 1) vs N(μ, 1), exactly μ-GDP (Dong, Roth & Su 2022, Def. 2.6; ε(δ) by their Cor.
    2.13), and the threshold tests on L are the most powerful ones (Neyman–Pearson).

    Attributes
    ----------
    steps : T, the releases of the transcript
    carriers : (K,) distinct steps in 0..T−1 that carry the canary
    mean_without, mean_with : (K,) the carriers' means without and with the canary
    covariance : (K, K) their noise covariance, symmetric positive definite
    """

    steps: int
    carriers: np.ndarray
    mean_without: np.ndarray
    mean_with: np.ndarray
    covariance: np.ndarray

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "steps", check_trials(self.steps, "steps"))
        carriers = np.array(self.carriers)
        if (
            carriers.ndim != 1
            or carriers.size == 0
            or not np.issubdtype(carriers.dtype, np.integer)
            or len(np.unique(carriers)) != carriers.size
            or carriers.min() < 0
            or carriers.max() >= self.steps
        ):
            raise InputError(
                f"carriers must be distinct step indices in 0..{self.steps - 1}, got {carriers}"
            )
        k = carriers.size
        a = check_finite_array(self.mean_without, "mean_without", ndim=1).copy()
        b = check_finite_array(self.mean_with, "mean_with", ndim=1).copy()
        cov = check_finite_array(self.covariance, "covariance", ndim=2).copy()
        if a.shape != (k,) or b.shape != (k,) or cov.shape != (k, k):
            raise InputError(
                f"mean_without, mean_with must have shape ({k},) and covariance ({k}, {k}) for "
                f"{k} carriers, got {a.shape}, {b.shape}, {cov.shape}"
            )
        if not np.allclose(cov, cov.T) or np.linalg.eigvalsh(cov).min() <= 0:
            raise InputError("covariance must be symmetric positive definite")
        weights = np.linalg.solve(cov, b - a)
        set_(self, "carriers", carriers)
        set_(self, "_weights", weights)
        set_(self, "_centre", 0.5 * (a + b))
        set_(self, "_mu", math.sqrt(max(float((b - a) @ weights), 0.0)))
        for array in (carriers, a, b, cov, weights):
            array.setflags(write=False)
        set_(self, "mean_without", a)
        set_(self, "mean_with", b)
        set_(self, "covariance", cov)

    @property
    def mu(self) -> float:
        """μ = sqrt((b − a)ᵀ Σ⁻¹ (b − a)): the pair's Gaussian-DP parameter."""
        return self._mu

    def epsilon(self, delta: float) -> float:
        """The exact ε(δ) of the pair (Dong, Roth & Su 2022, Cor. 2.13 at μ): what the optimal
        test approaches with many trials."""
        return gdp_epsilon(self._mu, delta)

    def log_likelihood_ratio(self, projections: np.ndarray) -> np.ndarray:
        """``(trials, T) -> (trials,)``: L(x) of the class docstring (the non-carriers'
        columns do not enter)."""
        x = _projections(projections, self.steps)
        return (x[:, self.carriers] - self._centre) @ self._weights

    def sample_log_likelihood_ratio(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray:
        """``draws`` exact draws of L, ``N(±μ²/2, μ²)`` (+ with the canary), ``(draws,)``."""
        mu = self._mu
        return (
            mu * rng.standard_normal(check_trials(draws, "draws"))
            + (0.5 if canary else -0.5) * mu**2
        )

    def sample_projections(
        self, rng: np.random.Generator, draws: int, *, canary: bool
    ) -> np.ndarray:
        """``draws`` exact draws of the carriers' projections, ``N(mean, Σ)``, in a ``(draws,
        T)`` array whose other steps are 0 (their law is the data's; they do not enter L)."""
        mean = self.mean_with if canary else self.mean_without
        z = rng.standard_normal((check_trials(draws, "draws"), len(self.carriers)))
        x = np.zeros((z.shape[0], self.steps))
        x[:, self.carriers] = mean + z @ np.linalg.cholesky(self.covariance).T
        return x

    def noise_divided(self, factor: float) -> GaussianRelease:
        """The same release with noise std divided by ``factor`` (covariance ``Σ/factor²``)."""
        factor = check_positive(factor, "factor")
        return GaussianRelease(
            steps=self.steps,
            carriers=self.carriers,
            mean_without=self.mean_without,
            mean_with=self.mean_with,
            covariance=self.covariance / factor**2,
        )

    def to_dict(self) -> dict:
        return {
            "steps": self.steps,
            "carriers": self.carriers.tolist(),
            "mean_without": self.mean_without.tolist(),
            "mean_with": self.mean_with.tolist(),
            "covariance": self.covariance.tolist(),
            "mu": self._mu,
        }


@runtime_checkable
class ReleasesTranscript(Protocol):
    """An algorithm that releases its transcript of noisy updates (see the module docstring)."""

    @property
    def step_release(self) -> ReleaseModel: ...

    def releases(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray: ...

    def run(self, data: Any, rng: np.random.Generator, trials: int, transcript: bool = False): ...
