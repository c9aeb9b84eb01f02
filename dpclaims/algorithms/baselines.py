"""DP-SGD / DP-GD baselines at item or user level, batched over trials.

One step (Abadi et al. 2016, Algorithm 1, with Poisson sampling as analysed by
the PLD accountant): every unit (an item at item level, a user at user level) is
in the batch independently with probability q; each sampled unit's gradient is
clipped to l2 norm C (at user level the gradient of the user's *average* loss
over its m items); then

    θ ← Π_R( θ − η · (Σ_batch clip(g) + N(0, σ²C² I)) / B ),   B = q·N (expected batch size),

with Π_R the projection onto the l2 ball of radius R (if given).  q = 1 is DP-GD.
The privacy is that of T compositions of the Poisson-subsampled Gaussian mechanism
with noise multiplier σ (sensitivity C under add/remove of one unit); its ε comes
from dp-accounting's PLD accountant (:func:`dpclaims.privacy.accountant_claim`).

For white-box audits ``run(..., transcript=True)`` also returns the released noisy sums
``Σ_batch clip(g) + N(0, σ²C² I)`` of every step, ``(trials, T, d)`` (``releases``, the
interface of :mod:`dpclaims.algorithms.transcript`), and the data may be a
:class:`~dpclaims.data.GradientCanaryDataset`: one more unit whose gradient is a fixed vector,
sampled and clipped like the others.

Generalised linear losses (``loss.glm``) take a fast path: margins are one matmul
``(T, d) @ (d, N)``, per-example gradient norms are ``|φ'|·‖x‖`` (at user level
``sqrt(aᵀ K_i a)/m`` with the items' Gram matrix ``K_i``), and the clipped sum is
``(T, N) @ (N, d)``; ``(T, N, d)`` is never built.  Other losses build per-example
gradients in sub-batches of trials that keep memory under :data:`CHUNK_BYTES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from ..data import RELATIONS, UNITS, GradientCanaryDataset, UserDataset
from ..errors import InputError, check_choice, check_delta, check_positive, check_trials
from ..losses import project_l2_ball
from ..privacy import PrivacyClaim, accountant_claim, calibrate_noise_multiplier
from ..vocabulary import Relation, Unit
from .transcript import StepRelease

__all__ = ["CHUNK_BYTES", "DPSGD", "BaselineRun"]

CHUNK_BYTES = 256 * 2**20
"""Bytes of working arrays per sub-batch of trials (the peak stays well under 500 MB)."""

_GLM_ARRAYS = 6
"""Float64 arrays of shape (trials, items) alive at once on the GLM path."""

_GENERAL_ARRAYS = 3
"""Float64 arrays of shape (trials, n, m, d) alive at once on the general path."""


def _numbers(value: Any) -> bool:
    """Whether ``value`` is a sequence of real numbers (no strings, no booleans)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        return False
    return all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        for v in value
    )


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class BaselineRun:
    """Outputs of :meth:`DPSGD.run`.

    theta : (trials, d) final (or averaged) iterates
    gradient_evaluations : (trials,) per-example gradient evaluations of the sampled units
        (at user level a sampled user costs m; a sampled gradient canary costs 1)
    transcript : (trials, T, d) the released noisy sums of every step, when asked for
        (``run(..., transcript=True)``), else None
    """

    theta: np.ndarray
    gradient_evaluations: np.ndarray
    transcript: np.ndarray | None = None

    def to_dict(self) -> dict:
        """Summary (not the iterates): trials, d and the mean gradient-evaluation count."""
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "mean_gradient_evaluations": float(np.mean(self.gradient_evaluations)),
        }


@dataclass(frozen=True)
class DPSGD:
    """DP-SGD (``sampling_rate < 1``) / DP-GD (``sampling_rate = 1``) with per-unit clipping.

    Parameters
    ----------
    loss : a :mod:`dpclaims.losses` loss (``glm=True`` losses take the fast path)
    steps : T, number of noisy steps
    step_size : η
    clip_norm : C, per-unit l2 clipping bound
    noise_multiplier : σ; the noise on the clipped sum has std σ·C per coordinate
    sampling_rate : Poisson sampling probability q in (0, 1]
    unit : "item" (clip each example's gradient) or "user" (clip the gradient of each
        user's average loss over its m items; sampling picks users)
    radius : R, project every iterate onto ``{‖θ‖ ≤ R}``; None for no projection
    delta : δ at which :attr:`privacy_claim` reports ε
    relation : neighbour relation of the claim: "add-remove" (natural for Poisson
        sampling) or "replace" (PLD REPLACE_ONE; sensitivity 2C at q = 1)
    batch_size : the public normaliser B of the noisy sum; None uses q × (units in the
        data), which is a function of the data size — for add/remove neighbours fix it
    average : return the average of θ_1..θ_T instead of θ_T
    random_iterate : return θ_τ for τ uniform on {0, .., T − 1} per trial (the output rule of the
        non-convex DP-SGD analyses, e.g. Wang et al. 2017); exclusive with ``average``
    clip : **False is a mutant, not private**: gradients are summed unclipped while the
        noise and the claim stay those of clipping at C
    initial : θ_0 (d,), a tuple of numbers; None is 0.  It is public, so an auditor may craft
        it (Annamalai & De Cristofaro 2024: a start that keeps a canary's gradient large)
    """

    loss: Any
    steps: int
    step_size: float
    clip_norm: float
    noise_multiplier: float
    sampling_rate: float = 1.0
    unit: Unit = Unit.ITEM
    radius: float | None = None
    delta: float = 1e-5
    relation: Relation = Relation.ADD_REMOVE
    batch_size: float | None = None
    average: bool = False
    clip: bool = True
    random_iterate: bool = False
    initial: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not hasattr(self.loss, "grad") or not hasattr(self.loss, "glm"):
            raise InputError(
                "loss must be a dpclaims.losses loss (with grad() and a glm attribute)"
            )
        object.__setattr__(self, "steps", check_trials(self.steps, "steps"))
        object.__setattr__(self, "step_size", check_positive(self.step_size, "step_size"))
        object.__setattr__(self, "clip_norm", check_positive(self.clip_norm, "clip_norm"))
        object.__setattr__(
            self, "noise_multiplier", check_positive(self.noise_multiplier, "noise_multiplier")
        )
        rate = check_positive(self.sampling_rate, "sampling_rate")
        if rate > 1:
            raise InputError(f"sampling_rate must be in (0, 1], got {rate}; use 1.0 for DP-GD")
        object.__setattr__(self, "sampling_rate", rate)
        object.__setattr__(self, "unit", check_choice(self.unit, UNITS, "unit"))
        if self.radius is not None:
            object.__setattr__(self, "radius", check_positive(self.radius, "radius"))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.delta == 0:
            raise InputError(
                "delta must be > 0 (the Gaussian noise gives approximate DP); pass e.g. delta=1e-5"
            )
        object.__setattr__(self, "relation", check_choice(self.relation, RELATIONS, "relation"))
        if self.batch_size is not None:
            object.__setattr__(self, "batch_size", check_positive(self.batch_size, "batch_size"))
        object.__setattr__(self, "average", _flag(self.average, "average"))
        object.__setattr__(self, "clip", _flag(self.clip, "clip"))
        object.__setattr__(self, "random_iterate", _flag(self.random_iterate, "random_iterate"))
        if self.average and self.random_iterate:
            raise InputError("average and random_iterate are two output rules; pick one")
        if self.initial is not None:
            start = np.asarray(self.initial, dtype=np.float64) if _numbers(self.initial) else None
            if start is None or start.ndim != 1 or not np.all(np.isfinite(start)):
                raise InputError(
                    f"initial must be a sequence of finite numbers (θ_0, one per feature), got "
                    f"{self.initial!r}"
                )
            object.__setattr__(self, "initial", tuple(float(v) for v in start))

    @classmethod
    def from_accountant(
        cls,
        epsilon: float,
        delta: float,
        loss: Any,
        steps: int,
        step_size: float,
        clip_norm: float,
        sampling_rate: float = 1.0,
        relation: Relation = Relation.ADD_REMOVE,
        **options: Any,
    ) -> DPSGD:
        """DP-SGD whose σ is the smallest the PLD accountant allows for (ε, δ) after T steps.

        ``options`` are the remaining fields (unit, radius, batch_size, average).
        """
        sigma = calibrate_noise_multiplier(
            epsilon, delta, sampling_rate=sampling_rate, steps=steps, relation=relation
        )
        return cls(
            loss=loss,
            steps=steps,
            step_size=step_size,
            clip_norm=clip_norm,
            noise_multiplier=sigma,
            sampling_rate=sampling_rate,
            delta=delta,
            relation=relation,
            **options,
        )

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ) from dp-accounting's PLD accountant, at ``unit`` and ``relation``.

        A ``clip=False`` mutant reports the same claim, which it does not satisfy.
        """
        return accountant_claim(
            self.noise_multiplier,
            self.sampling_rate,
            self.steps,
            self.delta,
            unit=self.unit,
            relation=self.relation,
        )

    @property
    def params(self) -> dict:
        """Every parameter as plain values (the loss as its repr)."""
        return {
            "loss": repr(self.loss),
            "steps": self.steps,
            "step_size": self.step_size,
            "clip_norm": self.clip_norm,
            "noise_multiplier": self.noise_multiplier,
            "sampling_rate": self.sampling_rate,
            "unit": self.unit,
            "radius": self.radius,
            "delta": self.delta,
            "relation": self.relation,
            "batch_size": self.batch_size,
            "average": self.average,
            "clip": self.clip,
            "random_iterate": self.random_iterate,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def step_release(self) -> StepRelease:
        """What each step of the transcript is claimed to be (the claimed σ·C, not a mutant's)."""
        return StepRelease(
            steps=self.steps,
            sampling_rate=self.sampling_rate,
            clip_norm=self.clip_norm,
            noise_std=self.noise_multiplier * self.clip_norm,
        )

    @property
    def _noise_std(self) -> float:
        """Standard deviation of the noise actually added per coordinate (a mutant's hook)."""
        return self.noise_multiplier * self.clip_norm

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The mechanism view for auditing: ``(trials, d)`` outputs of :meth:`run`."""
        return self.run(data, rng, trials).theta

    def releases(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The released noisy sums of every step, ``(trials, T, d)``: ``run(data, rng, trials,
        transcript=True).transcript`` (the interface of :mod:`dpclaims.algorithms.transcript`)."""
        return self.run(data, rng, trials, transcript=True).transcript

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> BaselineRun:
        """Run ``trials`` independent copies; outputs ``(trials, d)``, gradient counts
        ``(trials,)`` and, with ``transcript=True``, the released noisy sums ``(trials, T, d)``.

        ``data`` is a :class:`UserDataset` or a :class:`~dpclaims.data.GradientCanaryDataset`
        (its canary is one more unit, in the batch with probability q at every step, whose
        gradient is the fixed vector, clipped at C like the others).
        """
        canary = None
        if isinstance(data, GradientCanaryDataset):
            canary = data.gradient
            if self.clip:
                canary = canary * _clip_factor(np.linalg.norm(canary), self.clip_norm)
            data = data.data
        if not isinstance(data, UserDataset):
            raise InputError(
                f"data must be a UserDataset or a GradientCanaryDataset, got {type(data).__name__}"
            )
        trials = check_trials(trials)
        transcript = _flag(transcript, "transcript")
        units = data.n * (data.m if self.unit == Unit.ITEM else 1) + (canary is not None)
        normaliser = self.batch_size if self.batch_size is not None else self.sampling_rate * units
        if self.loss.glm:
            step = _GLMStep(self, data)
            width = _GLM_ARRAYS * data.n * data.m * 8
        else:
            step = _GeneralStep(self, data)
            width = _GENERAL_ARRAYS * data.n * data.m * data.d * 8
        if transcript:
            width += self.steps * data.d * 8
        chunk = max(1, min(trials, CHUNK_BYTES // width))
        thetas, counts, transcripts = [], [], []
        for start in range(0, trials, chunk):
            t = min(chunk, trials - start)
            theta, count, released = self._iterate(
                step,
                data,
                rng,
                trials=t,
                normaliser=normaliser,
                canary=canary,
                transcript=transcript,
            )
            thetas.append(theta)
            counts.append(count)
            transcripts.append(released)
        return BaselineRun(
            np.concatenate(thetas),
            np.concatenate(counts),
            np.concatenate(transcripts) if transcript else None,
        )

    def _iterate(self, step, data, rng, *, trials, normaliser, canary, transcript):
        theta = np.zeros((trials, data.d))
        if self.initial is not None:
            if len(self.initial) != data.d:
                raise InputError(
                    f"initial has {len(self.initial)} entries, the data has {data.d} features"
                )
            theta += np.asarray(self.initial)
        total = np.zeros_like(theta)
        count = np.zeros(trials, dtype=np.int64)
        units = data.n * (data.m if self.unit == Unit.ITEM else 1)
        cost = data.m if self.unit == Unit.USER else 1
        noise_std = self._noise_std
        released = np.empty((trials, self.steps, data.d)) if transcript else None
        pick = rng.integers(self.steps, size=trials) if self.random_iterate else None
        out = np.zeros_like(theta)
        for t in range(self.steps):
            if pick is not None:
                out[pick == t] = theta[pick == t]
            mask = (
                None
                if self.sampling_rate == 1.0
                else _poisson_mask(rng, (trials, units), self.sampling_rate)
            )
            clipped_sum = step(theta, mask)
            count += cost * (units if mask is None else mask.sum(axis=1))
            if canary is not None:
                sampled = (
                    np.ones(trials, dtype=bool)
                    if mask is None
                    else _poisson_mask(rng, (trials, 1), self.sampling_rate)[:, 0]
                )
                clipped_sum = clipped_sum + sampled[:, None] * canary
                count += sampled
            noisy = clipped_sum + noise_std * rng.standard_normal(theta.shape)
            if released is not None:
                released[:, t] = noisy
            theta = theta - (self.step_size / normaliser) * noisy
            if self.radius is not None:
                theta = project_l2_ball(theta, self.radius)
            if self.average:
                total += theta
        if pick is not None:
            return out, count, released
        return (total / self.steps if self.average else theta), count, released


def _poisson_mask(rng: np.random.Generator, shape: tuple[int, int], rate: float) -> np.ndarray:
    """Bernoulli mask with P(True) = floor(rate·2³²)/2³² ≤ rate, exactly.

    Each entry compares one 32-bit half of the generator's raw 64-bit output (uniform
    bits) with the threshold: about 3x cheaper than ``rng.integers`` and never above ``rate``.
    """
    size = shape[0] * shape[1]
    bits = rng.bit_generator.random_raw((size + 1) // 2).view(np.uint32)[:size].reshape(shape)
    return bits < np.uint32(math.floor(rate * 2**32))


def _clip_factor(norms: np.ndarray, bound: float) -> np.ndarray:
    """``min(1, C/‖g‖)`` elementwise (1 for a zero gradient)."""
    return bound / np.maximum(norms, bound)  # = min(1, bound/norm), no division by zero


class _GLMStep:
    """Clipped gradient sums of a GLM loss ``φ(⟨θ, x⟩, y)`` without materialising (T, N, d).

    A unit (an item, or a user of m items) has gradient ``Σ_j c_j x_j`` with
    ``c_j = φ'(⟨θ, x_j⟩, y_j)/s`` (s = items per unit), so its squared norm is ``cᵀ K c``
    with the unit's Gram matrix K, and the clipped sum is ``coef (T, N) @ X (N, d)``.
    Under Poisson sampling only the sampled (trial, unit) pairs are evaluated and the
    sum is a sparse-dense product.
    """

    def __init__(self, algo: DPSGD, data: UserDataset) -> None:
        self.algo = algo
        self.items = data.items  # (N, d)
        self.size = data.m if algo.unit == Unit.USER else 1  # items per unit
        units = data.x.reshape(-1, self.size, data.d)  # (U, s, d)
        self.gram = np.einsum("usd,urd->usr", units, units)  # (U, s, s)
        self.y = None if data.y is None else data.y.reshape(-1, self.size)  # (U, s)
        self.offsets = np.arange(self.size)

    def __call__(self, theta: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """theta (T, d), mask (T, U) or None → clipped sum (T, d)."""
        trials = theta.shape[0]
        margins = (theta @ self.items.T).reshape(trials, -1, self.size)  # (T, U, s)
        if mask is None:
            coef = self._clipped(self.algo.loss.dphi(margins, self.y), self.gram)  # (T, U, s)
            return coef.reshape(trials, -1) @ self.items
        rows, units = np.divmod(np.flatnonzero(mask), mask.shape[1])
        y = None if self.y is None else self.y[units]
        coef = self._clipped(
            self.algo.loss.dphi(margins[rows, units], y), self.gram[units]
        )  # (K, s)
        columns = (units[:, None] * self.size + self.offsets).ravel()
        indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]) * self.size
        sampled = sparse.csr_matrix(
            (coef.ravel(), columns, indptr), shape=(trials, self.items.shape[0])
        )
        return np.asarray(sampled @ self.items)

    def _clipped(self, dphi: np.ndarray, gram: np.ndarray) -> np.ndarray:
        """Coefficients ``(..., s)`` of the clipped unit gradients; ``gram`` broadcasts as
        ``(..., s, s)``."""
        coef = dphi / self.size
        if not self.algo.clip:
            return coef
        if self.size == 1:
            sq = coef[..., 0] ** 2 * gram[..., 0, 0]
        else:
            sq = np.einsum("...s,...s->...", coef, np.einsum("...sr,...r->...s", gram, coef))
        return coef * _clip_factor(np.sqrt(np.maximum(sq, 0.0)), self.algo.clip_norm)[..., None]


class _GeneralStep:
    """Clipped gradient sums from per-example gradients ``loss.grad`` (T, n, m, d)."""

    def __init__(self, algo: DPSGD, data: UserDataset) -> None:
        self.algo = algo
        self.x, self.y = data.x, data.y

    def __call__(self, theta: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        algo = self.algo
        grads = algo.loss.grad(theta, self.x, self.y)  # (T, n, m, d)
        if algo.unit == Unit.ITEM:
            grads = grads.reshape(theta.shape[0], -1, theta.shape[1])  # (T, N, d)
        else:
            grads = grads.mean(axis=2)  # (T, n, d): gradient of each user's average loss
        if algo.clip:
            grads = grads * _clip_factor(np.linalg.norm(grads, axis=-1), algo.clip_norm)[..., None]
        if mask is not None:
            grads = grads * mask[..., None]
        return grads.sum(axis=1)
