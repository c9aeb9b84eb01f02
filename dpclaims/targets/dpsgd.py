"""Audit setups for DP-SGD: the threat model, the canary, and the statistic fixed in advance.

A setup (:func:`dpsgd_target`) is an :class:`~dpclaims.target.AuditTarget`: the mechanism
as the adversary of the chosen threat model sees it, the neighbouring datasets with the canary
and without, the accountant's claim, and the test statistic, chosen from the threat model and
the canary before any certifying trial is seen (``audit(target.mechanism, target.d0,
target.d1, claim=target.claim, statistic=target.statistic, ...)``).

Threat models (:class:`ThreatModel`):

- ``final``: the last model θ_T only (the black-box adversary); the statistic is θ_T's
  projection on the canary's direction (the sum of the steps' projections, whose likelihood
  ratio is monotone in it, so the threshold tests on it are the optimal ones on this view).
- ``all-iterates``: the released transcript of noisy updates (what the accountant assumes is
  public), through :mod:`dpclaims.algorithms.transcript`; the mechanism returns each step's
  release projected on the canary's direction ``(trials, T)`` (post-processing, so a bound on
  it is a bound on the transcript) and the statistic is the exact log-likelihood ratio of the
  Poisson-subsampled Gaussian mixture, :meth:`StepRelease.log_likelihood_ratio`: the
  Neyman–Pearson statistic, so the audit can reach the statistical limit.

Canaries (Nasr et al. 2023, "Tight auditing of differentially private machine learning"):

- ``gradient``: a unit whose gradient is ``canary_scale · C · e`` at every step, whatever the
  model (:class:`~dpclaims.data.GradientCanaryDataset`): after clipping exactly ``C · e``, the
  worst case of clipping; ``canary_scale > 1`` makes a skipped clip visible;
- ``input``: an ordinary example ``x = canary_scale · e`` with a crafted label (``−10⁶`` for
  the squared loss, whose clipped gradient is then ``C · e`` while the model's coordinate stays
  above ``−10⁶``: the gradient canary, realised as data; ``−1`` for the logistic loss, whose
  gradient fades as the model learns it).

``e`` is the last coordinate, which :func:`canary_data` leaves at 0 in every other example: the
other gradients of a GLM loss (``φ'·x``) are orthogonal to it, so along ``e`` the transcript is
exactly the subsampled Gaussian mechanism the accountant analyses (a crafted worst case, as the
adversarial initialisation of Annamalai & De Cristofaro 2024 makes the other gradients vanish).

:func:`optimal_limit` is the best certified bound of any threshold test on the exact
privacy-loss distribution at N trials (``final_limit`` the same for the final model).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from scipy import stats

from dpclaims.target import AuditTarget

from ..algorithms.baselines import DPSGD
from ..algorithms.transcript import ReleasesTranscript, StepRelease
from ..audit.bounds import epsilon_from_rates, rate_upper
from ..data import GradientCanaryDataset, UserDataset
from ..errors import InputError, check_choice, check_positive, check_trials
from ..losses import LogisticLoss, SquaredLoss

__all__ = [
    "ThreatModel",
    "THREAT_MODELS",
    "CANARIES",
    "INPUT_LABEL",
    "TranscriptProjections",
    "FinalModel",
    "CanaryLikelihoodRatio",
    "Projection",
    "canary_data",
    "dpsgd_target",
    "Limit",
    "optimal_limit",
    "limit_samples",
    "final_limit",
]


class ThreatModel(StrEnum):
    """What the adversary sees of an iterative mechanism."""

    FINAL = "final"
    ALL_ITERATES = "all-iterates"


THREAT_MODELS = tuple(t.value for t in ThreatModel)
CANARIES = ("gradient", "input")

INPUT_LABEL = -1e6
"""The squared-loss input canary's label: its residual stays positive, so its clipped gradient
is ``C·e`` while the model's canary coordinate is above ``INPUT_LABEL / canary_scale``."""

TRANSCRIPT_BLOCK = 4096
"""Trials per call of ``run(..., transcript=True)`` inside :class:`TranscriptProjections`
(bounds the ``(trials, T, d)`` transcript held at once)."""


@dataclass(frozen=True)
class TranscriptProjections:
    """The all-iterates view along one direction: ``(data, rng, trials) -> (trials, T)``, each
    step's released noisy update projected on ``direction`` (a unit vector, (d,))."""

    algorithm: Any
    direction: np.ndarray

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        parts = []
        for start in range(0, trials, TRANSCRIPT_BLOCK):
            size = min(TRANSCRIPT_BLOCK, trials - start)
            released = self.algorithm.run(data, rng, size, transcript=True).transcript
            parts.append(released @ self.direction)
        return np.concatenate(parts)


@dataclass(frozen=True)
class FinalModel:
    """The black-box view: ``(data, rng, trials) -> (trials, d)``, the last model θ_T."""

    algorithm: Any

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.algorithm.run(data, rng, trials).theta


@dataclass(frozen=True)
class CanaryLikelihoodRatio:
    """Statistic ``(n, T) -> (n,)``: the exact log-likelihood ratio of the canary's presence
    (:meth:`StepRelease.log_likelihood_ratio`, with the algorithm's *claimed* noise)."""

    release: StepRelease

    def __call__(self, projections: np.ndarray) -> np.ndarray:
        return self.release.log_likelihood_ratio(projections)


@dataclass(frozen=True)
class Projection:
    """Statistic ``(n, d) -> (n,)``: the outputs' projection on ``direction``."""

    direction: np.ndarray

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return outputs @ self.direction


def canary_data(loss: Any, *, n: int = 32, d: int = 4, seed: int = 0) -> UserDataset:
    """``n`` examples (item level) of ``d`` features whose last coordinate is 0 (the canary's
    direction): features N(0, I/(d − 1)) on the first d − 1, labels ±1 (logistic) or a linear
    model plus noise (squared)."""
    n, d = check_trials(n, "n"), check_trials(d, "d")
    if d < 2:
        raise InputError(f"d must be >= 2 (one coordinate is the canary's), got {d}")
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, :-1] = rng.standard_normal((n, d - 1)) / math.sqrt(d - 1)
    signal = x[:, :-1] @ rng.standard_normal(d - 1)
    if isinstance(loss, LogisticLoss):
        y = np.where(signal + 0.3 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    else:
        y = signal + 0.1 * rng.standard_normal(n)
    return UserDataset(x, y)


def dpsgd_target(
    algorithm: DPSGD,
    data: UserDataset,
    *,
    threat_model: str = "all-iterates",
    canary: str = "gradient",
    canary_scale: float = 10.0,
) -> AuditTarget:
    """The audit of ``algorithm`` on ``data`` with a canary added along the last coordinate,
    under ``threat_model`` ("final" or "all-iterates"), with its statistic fixed in advance.

    ``algorithm`` is a :class:`DPSGD` (or a mutant of it) under the add/remove relation; its
    claim is the accountant's.  ``d0`` is ``data``, ``d1`` is ``data`` plus the canary (one unit
    at the algorithm's level).  A data-dependent normaliser (``batch_size=None``) is fixed to
    ``q ×`` the units of ``data`` so that it is public.  ``data``'s last coordinate should be 0
    in every example (:func:`canary_data`); otherwise the audit stays valid but falls short of
    the limit.
    """
    if not isinstance(algorithm, DPSGD) or not isinstance(algorithm, ReleasesTranscript):
        raise InputError(
            f"algorithm must be a DPSGD (or a mutant of it), got {type(algorithm).__name__}"
        )
    threat = ThreatModel(check_choice(threat_model, THREAT_MODELS, "threat_model"))
    check_choice(canary, CANARIES, "canary")
    scale = check_positive(canary_scale, "canary_scale")
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a UserDataset, got {type(data).__name__}")
    if algorithm.relation != "add-remove":
        raise InputError(
            "a canary audit adds one unit: the algorithm's relation must be 'add-remove', got "
            f"{algorithm.relation!r}"
        )
    if algorithm.batch_size is None:
        units = data.n * (data.m if algorithm.level == "item" else 1)
        algorithm = dataclasses.replace(algorithm, batch_size=algorithm.sampling_rate * units)
    direction = np.zeros(data.d)
    direction[-1] = 1.0
    if canary == "gradient":
        d1 = GradientCanaryDataset(data, scale * algorithm.clip_norm * direction)
    else:
        d1 = _with_input_canary(algorithm, data, scale * direction)
    release = algorithm.step_release
    mechanism: Callable
    if threat is ThreatModel.ALL_ITERATES:
        mechanism = TranscriptProjections(algorithm, direction)
        statistic: Callable = CanaryLikelihoodRatio(release)
    else:
        mechanism = FinalModel(algorithm)
        statistic = Projection(-direction)  # descent moves θ against the canary's gradient
    return AuditTarget(
        mechanism=mechanism,
        d0=data,
        d1=d1,
        claim=algorithm.privacy_claim,
        name=f"dp-sgd/{threat.value}/{canary}",
        description=(
            f"DP-SGD ({algorithm.steps} steps, Poisson rate {algorithm.sampling_rate:g}, "
            f"σ {algorithm.noise_multiplier:.4g}), {canary} canary, {threat.value} threat model"
        ),
        statistic=statistic,
    )


def _with_input_canary(algorithm: DPSGD, data: UserDataset, x: np.ndarray) -> UserDataset:
    if algorithm.level != "item" or data.m != 1:
        raise InputError("the input canary is one example: use level='item' data with m = 1")
    if isinstance(algorithm.loss, SquaredLoss):
        label = INPUT_LABEL
    elif isinstance(algorithm.loss, LogisticLoss):
        label = -1.0
    else:
        raise InputError("the input canary is crafted for SquaredLoss and LogisticLoss")
    y = np.zeros(data.n) if data.y is None else data.y[:, 0]
    return UserDataset(np.concatenate([data.x[:, 0], x[None]]), np.append(y, label))


# --------------------------------------------------------------------------------------------
# The limit of the optimal test at N trials
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """The best certified ε of a threshold test on the exact distributions, and where.

    epsilon : the limit at ``trials`` per dataset
    threshold : the test's threshold on its statistic
    direction : "canary-high" (the event is a high statistic) or "canary-low"
    fpr, fnr : the test's exact error rates
    """

    epsilon: float
    threshold: float
    direction: str
    fpr: float
    fnr: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


LIMIT_CONFIDENCE = 0.95


def _best(fpr: np.ndarray, fnr: np.ndarray, trials: int, delta: float, confidence: float):
    """Index and ε of the best test with expected counts ``N·rate`` and two separate one-sided
    Clopper–Pearson bounds, each at ``1 − √confidence`` (the limit of bench_audit_tightness)."""
    alpha = 1.0 - math.sqrt(confidence)
    fp, fn = np.round(fpr * trials), np.round(fnr * trials)
    eps = epsilon_from_rates(rate_upper(fp, trials, alpha), rate_upper(fn, trials, alpha), delta)
    i = int(np.argmax(eps))
    return i, float(eps[i])


def _limit(rates, thresholds, *, trials, delta, confidence) -> Limit:
    """Max over both directions: ``rates = (P0(s > t), P1(s <= t))`` per threshold t."""
    p0_high, p1_low = (np.clip(r, 0.0, 1.0) for r in rates)
    found = []
    for name, fpr, fnr in (
        ("canary-high", p0_high, p1_low),
        ("canary-low", p1_low, p0_high),
    ):
        i, eps = _best(fpr, fnr, check_trials(trials), delta, confidence)
        found.append(Limit(eps, float(thresholds[i]), name, float(fpr[i]), float(fnr[i])))
    return max(found, key=lambda limit: limit.epsilon)


def optimal_limit(
    release: StepRelease,
    *,
    trials: int,
    delta: float,
    confidence: float = LIMIT_CONFIDENCE,
    draws: int = 400_000,
    seed: int = 0,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
) -> Limit:
    """The limit of the optimal test of a gradient canary's presence in the transcript.

    The log-likelihood ratio L is drawn exactly ``draws`` times with the canary and without;
    since L = log(dP1/dP0), each tail is estimated by importance weighting where it is thin
    (``P0(L > t) = E1[1{L > t} e^{−L}]``, ``P1(L ≤ t) = E0[1{L ≤ t} e^{L}]``), which keeps
    the rates near 1/N accurate.  The limit is then the best ε any threshold test on L (the
    Neyman–Pearson tests, so any test) certifies at ``trials`` per dataset with expected
    counts and separate Clopper–Pearson bounds (each at ``1 − √confidence``), in either
    direction.  ``samples = (L0, L1)`` reuses draws across N.
    """
    l0, l1 = samples if samples is not None else limit_samples(release, draws=draws, seed=seed)
    thresholds = np.quantile(np.concatenate([l0, l1]), np.linspace(0.0, 1.0, 4001))
    s0, s1 = np.sort(l0), np.sort(l1)
    # plain estimates
    p0_high = 1.0 - np.searchsorted(s0, thresholds, side="right") / len(s0)
    p1_low = np.searchsorted(s1, thresholds, side="right") / len(s1)
    # importance-weighted estimates: cumulative sums of the weights in sorted order
    w1 = np.exp(-s1)  # P0 density ratio on P1 draws
    tail1 = np.concatenate([np.cumsum(w1[::-1])[::-1], [0.0]]) / len(s1)
    is_p0_high = tail1[np.searchsorted(s1, thresholds, side="right")]
    w0 = np.exp(np.minimum(s0, 700.0))
    head0 = np.concatenate([[0.0], np.cumsum(w0)]) / len(s0)
    is_p1_low = head0[np.searchsorted(s0, thresholds, side="right")]
    p0_high = np.where(thresholds > np.median(s0), is_p0_high, p0_high)
    p1_low = np.where(thresholds < np.median(s1), is_p1_low, p1_low)
    return _limit((p0_high, p1_low), thresholds, trials=trials, delta=delta, confidence=confidence)


def limit_samples(
    release: StepRelease, *, draws: int = 400_000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact draws ``(L0, L1)`` of the log-likelihood ratio without and with the canary."""
    rng = np.random.default_rng(seed)
    block = max(1, 20_000_000 // (8 * release.steps))
    out = []
    for canary in (False, True):
        parts = [
            release.sample_log_likelihood_ratio(rng, min(block, draws - s), canary=canary)
            for s in range(0, draws, block)
        ]
        out.append(np.concatenate(parts))
    return out[0], out[1]


def final_limit(
    release: StepRelease, *, trials: int, delta: float, confidence: float = LIMIT_CONFIDENCE
) -> Limit:
    """The limit of the optimal test on the final model's canary coordinate (threat model
    ``final``), exactly: the sum of the T steps, ``N(0, T s²)`` without the canary and
    ``Σ_k Binomial(k; T, q) N(k C, T s²)`` with it; its likelihood ratio is monotone in the
    sum, so the threshold tests on it are the optimal ones."""
    t_steps, q, c, s = release.steps, release.sampling_rate, release.clip_norm, release.noise_std
    spread = math.sqrt(t_steps) * s
    thresholds = np.linspace(-12 * spread, t_steps * c + 12 * spread, 20_001)
    k = np.arange(t_steps + 1)
    weights = stats.binom.pmf(k, t_steps, q)
    keep = weights > 1e-300
    p0_high = stats.norm.sf(thresholds / spread)
    p1_low = stats.norm.cdf((thresholds[:, None] - c * k[keep]) / spread) @ weights[keep]
    return _limit((p0_high, p1_low), thresholds, trials=trials, delta=delta, confidence=confidence)
