"""Audit setups for DP-SGD: the threat model, the canary, and the statistic fixed in advance.

A setup (:func:`dpsgd_target`) is an :class:`~dpclaims.target.AuditTarget`: the mechanism
as the adversary of the chosen threat model sees it, the neighbouring datasets with the canary
and without, the accountant's claim, and the test statistic, chosen from the threat model and
the canary before any certifying trial is seen (``audit(target.mechanism, target.d0,
target.d1, target.claim, test=AuditTest(statistic=target.statistic), ...)``, or the test
planned from the claim, ``test=planned_test(target, trials=...)``).

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
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpclaims.target import AuditTarget

from ..algorithms.baselines import DPSGD
from ..algorithms.transcript import ReleaseModel, ReleasesTranscript, StepRelease
from ..audit.bounds import epsilon_from_rates, joint_upper, tilt_of
from ..audit.options import AuditTest
from ..audit.reach import REACH_LIMIT
from ..audit.threshold import (
    Criterion,
    Planned,
    plan_quantile_tests,
    predicted_epsilon,
    predicted_power,
)
from ..data import GradientCanaryDataset, UserDataset
from ..errors import InputError, check_choice, check_count, check_positive, check_trials
from ..losses import LogisticLoss, SquaredLoss
from ..vocabulary import (
    CANARIES,
    PLANS,
    THREAT_MODELS,
    Canary,
    Plan,
    Relation,
    ThreatModel,
    Unit,
)

__all__ = [
    "ThreatModel",
    "THREAT_MODELS",
    "SEEN",
    "CANARIES",
    "Canary",
    "PLANS",
    "Plan",
    "crafted_start",
    "INPUT_LABEL",
    "TranscriptProjections",
    "FinalModel",
    "CanaryLikelihoodRatio",
    "Projection",
    "canary_data",
    "dpsgd_target",
    "transcript_target",
    "OptimalTest",
    "optimal_limit",
    "limit_samples",
    "limit_rates",
    "statistic_samples",
    "final_limit",
    "PLAN_SEED",
    "planned_test",
    "planned_threshold",
]


SEEN = {
    ThreatModel.FINAL: "the last model only, black box",
    ThreatModel.ALL_ITERATES: "every noisy update, as the accountant assumes",
}
"""What the adversary of each threat model sees, in words (reports and the CLI)."""

CRAFTED_START_SPREAD = 8.0
"""[DEFAULT, ours] Noise standard deviations of the canary coordinate's random walk that
:func:`crafted_start` keeps between the canary and the point where its gradient drops below C."""

INPUT_LABEL = -1e6
"""The squared-loss input canary's label: its residual stays positive, so its clipped gradient
is ``C·e`` while the model's canary coordinate is above ``INPUT_LABEL / canary_scale``."""

TRANSCRIPT_BLOCK = 4096
"""Trials per call of ``releases`` inside :class:`TranscriptProjections` (bounds the
``(trials, T, d)`` transcript held at once)."""


@dataclass(frozen=True)
class TranscriptProjections:
    """The all-iterates view along one direction: ``(data, rng, trials) -> (trials, T)``, each
    step's release (``algorithm.releases``, :class:`ReleasesTranscript`) projected on
    ``direction`` (a unit vector, (d,))."""

    algorithm: Any
    direction: np.ndarray

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        parts = []
        for start in range(0, trials, TRANSCRIPT_BLOCK):
            size = min(TRANSCRIPT_BLOCK, trials - start)
            parts.append(self.algorithm.releases(data, rng, size) @ self.direction)
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
    (``ReleaseModel.log_likelihood_ratio``, with the algorithm's *claimed* noise)."""

    release: ReleaseModel

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
    threat_model: ThreatModel = ThreatModel.ALL_ITERATES,
    canary: Canary = Canary.GRADIENT,
    canary_scale: float = 10.0,
) -> AuditTarget:
    """The audit of ``algorithm`` on ``data`` with a canary added along the last coordinate,
    under ``threat_model`` ("final" or "all-iterates"), with its statistic fixed in advance.

    ``algorithm`` is a :class:`DPSGD` (or a mutant of it) under the add/remove relation; its
    claim is the accountant's.  ``d0`` is ``data``, ``d1`` is ``data`` plus the canary (one unit
    at the algorithm's unit).  A data-dependent normaliser (``batch_size=None``) is fixed to
    ``q ×`` the units of ``data`` so that it is public.  ``data``'s last coordinate should be 0
    in every example (:func:`canary_data`); otherwise the audit stays valid but falls short of
    the limit.
    """
    if not isinstance(algorithm, DPSGD) or not isinstance(algorithm, ReleasesTranscript):
        raise InputError(
            f"algorithm must be a DPSGD (or a mutant of it), got {type(algorithm).__name__}"
        )
    threat = check_choice(threat_model, THREAT_MODELS, "threat_model")
    canary = check_choice(canary, CANARIES, "canary")
    scale = check_positive(canary_scale, "canary_scale")
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a UserDataset, got {type(data).__name__}")
    if algorithm.relation != Relation.ADD_REMOVE:
        raise InputError(
            "a canary audit adds one unit: the algorithm's relation must be 'add-remove', got "
            f"{algorithm.relation!r}"
        )
    if algorithm.batch_size is None:
        units = data.n * (data.m if algorithm.unit == Unit.ITEM else 1)
        algorithm = dataclasses.replace(algorithm, batch_size=algorithm.sampling_rate * units)
    direction = np.zeros(data.d)
    direction[-1] = 1.0
    if canary == Canary.GRADIENT:
        d1 = GradientCanaryDataset(data, scale * algorithm.clip_norm * direction)
    else:
        d1 = _with_input_canary(algorithm, data, scale * direction)
    if canary == Canary.INPUT_INIT:
        algorithm = dataclasses.replace(algorithm, initial=tuple(crafted_start(algorithm, data.d)))
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


def crafted_start(algorithm: DPSGD, d: int) -> np.ndarray:
    """θ_0 (d,) for the ``input-init`` canary (Annamalai & De Cristofaro 2024): 0 but on the
    canary's coordinate, M = (T·η·C + s·η·σC·√T) / B (s = :data:`CRAFTED_START_SPREAD`).
    Descent moves that coordinate down by at most η·C/B a step plus the noise's random walk,
    so it stays positive, the logistic canary (label −1, input ``scale`` ≥ 2C on the coordinate)
    stays misclassified and its gradient ``scale·σ(θ·x) ≥ scale/2`` is clipped to C at every
    step: the gradient canary's law, in the final model too.  The coordinate moves no other
    example (the data leave it at 0).  ``algorithm.batch_size`` must be set (B)."""
    if not isinstance(algorithm, DPSGD) or algorithm.batch_size is None:
        raise InputError(
            "crafted_start needs a DPSGD with a public batch_size B (dpsgd_target fixes it to "
            "q × the units of the data)"
        )
    d = check_count(d, "d")
    c, eta, sigma = algorithm.clip_norm, algorithm.step_size, algorithm.noise_multiplier
    steps = algorithm.steps
    start = np.zeros(d)
    walk = CRAFTED_START_SPREAD * eta * sigma * c * math.sqrt(steps)
    start[-1] = (steps * eta * c + walk) / algorithm.batch_size
    return start


def _with_input_canary(algorithm: DPSGD, data: UserDataset, x: np.ndarray) -> UserDataset:
    if algorithm.unit != Unit.ITEM or data.m != 1:
        raise InputError("the input canary is one example: use unit='item' data with m = 1")
    if isinstance(algorithm.loss, SquaredLoss):
        label = INPUT_LABEL
    elif isinstance(algorithm.loss, LogisticLoss):
        label = -1.0
    else:
        raise InputError("the input canary is crafted for SquaredLoss and LogisticLoss")
    y = np.zeros(data.n) if data.y is None else data.y[:, 0]
    return UserDataset(np.concatenate([data.x[:, 0], x[None]]), np.append(y, label))


def transcript_target(
    algorithm: ReleasesTranscript,
    d0: Any,
    d1: Any,
    *,
    direction: Any,
    release: ReleaseModel | None = None,
    name: str,
    description: str = "",
) -> AuditTarget:
    """The all-iterates audit of any algorithm of :class:`ReleasesTranscript` on a gradient
    canary: ``d1`` holds the canary, ``d0`` not (or its neighbour), ``direction`` (d,) is the
    canary's clipped gradient direction (normalised here).

    The mechanism projects every release on ``direction`` (:class:`TranscriptProjections`); the
    statistic, fixed before any trial, is the exact log-likelihood ratio of ``release`` (default
    ``algorithm.step_release``, the claim's worst-placed full-radius canary), which must
    describe the canary of ``d1``; the claim is ``algorithm.privacy_claim``.  The paper-specific
    builders (:func:`dpclaims.targets.murata_suzuki_2023.gradient_canary_target`,
    :func:`dpclaims.targets.choquette_choo_et_al_2024.gradient_canary_target`) build the pair.
    """
    if not isinstance(algorithm, ReleasesTranscript):
        raise InputError(
            "algorithm must release its transcript (releases(), step_release; see "
            f"dpclaims.algorithms.transcript), got {type(algorithm).__name__}"
        )
    release = algorithm.step_release if release is None else release
    if not isinstance(release, ReleaseModel):
        raise InputError(f"release must be a ReleaseModel, got {type(release).__name__}")
    u = np.asarray(direction, dtype=np.float64)
    norm = float(np.linalg.norm(u)) if u.ndim == 1 and np.all(np.isfinite(u)) else 0.0
    if norm == 0.0:
        raise InputError(f"direction must be a finite nonzero vector (d,), got {direction!r}")
    return AuditTarget(
        mechanism=TranscriptProjections(algorithm, u / norm),
        d0=d0,
        d1=d1,
        claim=algorithm.privacy_claim,
        name=name,
        description=description,
        statistic=CanaryLikelihoodRatio(release),
    )


# --------------------------------------------------------------------------------------------
# The limit of the optimal test at N trials
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptimalTest:
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
    """Index and ε of the best single test with expected counts ``N·rate``, its two rates
    bounded jointly at ``1 − confidence`` with the tilt its counts call for, as the audit bounds
    the test it certifies at (:func:`~dpclaims.audit.bounds.joint_upper`)."""
    fp, fn = np.round(fpr * trials), np.round(fnr * trials)
    tilt = tilt_of(fp, trials, fn, trials)
    bounds = joint_upper(fp, trials, fn, trials, 1.0 - confidence, "clopper-pearson", tilt)
    eps = np.min(epsilon_from_rates(*bounds, delta), axis=0)
    i = int(np.argmax(eps))
    return i, float(eps[i])


def _limit(rates, thresholds, *, trials, delta, confidence) -> OptimalTest:
    """Max over both directions: ``rates = (P0(s > t), P1(s <= t))`` per threshold t."""
    p0_high, p1_low = (np.clip(r, 0.0, 1.0) for r in rates)
    found = []
    for name, fpr, fnr in (
        ("canary-high", p0_high, p1_low),
        ("canary-low", p1_low, p0_high),
    ):
        i, eps = _best(fpr, fnr, check_trials(trials), delta, confidence)
        found.append(OptimalTest(eps, float(thresholds[i]), name, float(fpr[i]), float(fnr[i])))
    return max(found, key=lambda limit: limit.epsilon)


def optimal_limit(
    release: ReleaseModel,
    *,
    trials: int,
    delta: float,
    confidence: float = LIMIT_CONFIDENCE,
    draws: int = 400_000,
    seed: int = 0,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
) -> OptimalTest:
    """The limit of the optimal test of a gradient canary's presence in the transcript.

    The log-likelihood ratio L is drawn exactly ``draws`` times with the canary and without
    (:func:`limit_samples`) and its two laws estimated with thin tails importance-weighted
    (:func:`limit_rates`).  The limit is then the best ε any threshold test on L (the
    Neyman–Pearson tests, so any test) certifies at ``trials`` per dataset with expected
    counts, its two rates bounded jointly as the audit bounds one test (no union over tests),
    in either direction.  ``samples = (L0, L1)`` reuses draws across N.
    """
    if samples is None and isinstance(release, StepRelease):
        return _cached_optimal_limit(release, trials, delta, confidence, draws, seed)
    return _optimal_limit(release, trials, delta, confidence, draws, seed, samples)


def _optimal_limit(release, trials, delta, confidence, draws, seed, samples=None) -> OptimalTest:
    """:func:`optimal_limit`, positional (the cache's key)."""
    l0, l1 = samples if samples is not None else limit_samples(release, draws=draws, seed=seed)
    thresholds, p0_high, p1_high = limit_rates(l0, l1)
    return _limit(
        (p0_high, 1.0 - p1_high), thresholds, trials=trials, delta=delta, confidence=confidence
    )


_cached_optimal_limit = functools.lru_cache(maxsize=16)(_optimal_limit)
"""Limits of a :class:`StepRelease` (a frozen value) from its own draws: the same numbers."""


def limit_rates(
    l0: np.ndarray,
    l1: np.ndarray,
    *,
    statistic: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The laws of a statistic S from exact draws of a mechanism without the canary and with
    it, ``l0``, ``l1`` (D,) each the draw's own log-likelihood ratio L = log(dP1/dP0), and
    ``statistic = (S0, S1)`` the statistic's values on the same draws (default S = L): returns
    ``(thresholds (G,), P0(S > t), P1(S > t))``.

    Each thin tail is estimated by importance weighting, ``P0(S > t) = E1[1{S > t} e^{−L}]``
    above the median of S0 and ``P1(S ≤ t) = E0[1{S ≤ t} e^{L}]`` below the median of S1,
    which keeps rates near 1/N accurate; the thresholds are quantiles of the pooled values,
    dense in both tails (levels down to 1/(2·D)).
    """
    s0, s1 = (l0, l1) if statistic is None else statistic
    pooled = np.concatenate([s0, s1])
    tail = np.geomspace(0.5 / len(pooled), 0.01, 800)
    levels = np.unique(np.concatenate([tail, np.linspace(0.0, 1.0, 4001), 1.0 - tail]))
    thresholds = np.unique(np.quantile(pooled, levels))
    order0, order1 = np.argsort(s0), np.argsort(s1)
    sorted0, sorted1 = s0[order0], s1[order1]
    at0 = np.searchsorted(sorted0, thresholds, side="right")
    at1 = np.searchsorted(sorted1, thresholds, side="right")
    p0_high = 1.0 - at0 / len(s0)
    p1_low = at1 / len(s1)
    # importance-weighted estimates: cumulative sums of the weights in the statistic's order
    w1 = np.exp(-l1[order1])  # P0 density ratio on P1 draws
    tail1 = np.concatenate([np.cumsum(w1[::-1])[::-1], [0.0]]) / len(s1)
    w0 = np.exp(np.minimum(l0[order0], 700.0))
    head0 = np.concatenate([[0.0], np.cumsum(w0)]) / len(s0)
    p0_high = np.where(thresholds > np.median(s0), tail1[at1], p0_high)
    p1_low = np.where(thresholds < np.median(s1), head0[at0], p1_low)
    return thresholds, np.clip(p0_high, 0.0, 1.0), np.clip(1.0 - p1_low, 0.0, 1.0)


def limit_samples(
    release: ReleaseModel, *, draws: int = 400_000, seed: int = 0
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


def statistic_samples(
    claimed: ReleaseModel, actual: ReleaseModel, *, draws: int, seed: int
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Draws of a mechanism meeting ``actual`` without and with the canary: ``((L0, L1), (S0,
    S1))``, its own log-likelihood ratio L and the statistic fixed from ``claimed``, S (each
    (draws,)), for :func:`limit_rates`."""
    rng = np.random.default_rng(seed)
    block = max(1, 20_000_000 // (8 * actual.steps))
    own, stat = [], []
    for canary in (False, True):
        parts_l, parts_s = [], []
        for start in range(0, draws, block):
            x = actual.sample_projections(rng, min(block, draws - start), canary=canary)
            parts_l.append(actual.log_likelihood_ratio(x))
            same = actual is claimed  # the claimed mechanism's own ratio is the statistic
            parts_s.append(parts_l[-1] if same else claimed.log_likelihood_ratio(x))
        own.append(np.concatenate(parts_l))
        stat.append(np.concatenate(parts_s))
    return (own[0], own[1]), (stat[0], stat[1])


def final_limit(
    release: StepRelease, *, trials: int, delta: float, confidence: float = LIMIT_CONFIDENCE
) -> OptimalTest:
    """The limit of the optimal test on the final model's canary coordinate (threat model
    ``final``), exactly: the sum of the T steps, ``N(0, T s²)`` without the canary and
    ``Σ_k Binomial(k; T, q) N(k C, T s²)`` with it; its likelihood ratio is monotone in the
    sum, so the threshold tests on it are the optimal ones."""
    thresholds, p0_high, p1_high = _final_laws(release)
    return _limit(
        (p0_high, 1.0 - p1_high), thresholds, trials=trials, delta=delta, confidence=confidence
    )


def _final_laws(release: StepRelease) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(thresholds (G,), P0(S > t), P1(S > t))`` of the sum S of the T steps' releases along
    the canary (see :func:`final_limit`)."""
    t_steps, q, c, s = release.steps, release.sampling_rate, release.clip_norm, release.noise_std
    spread = math.sqrt(t_steps) * s
    thresholds = np.linspace(-12 * spread, t_steps * c + 12 * spread, 20_001)
    k = np.arange(t_steps + 1)
    weights = stats.binom.pmf(k, t_steps, q)
    keep = weights > 1e-300
    p0_high = stats.norm.sf(thresholds / spread)
    p1_high = stats.norm.sf((thresholds[:, None] - c * k[keep]) / spread) @ weights[keep]
    return thresholds, p0_high, p1_high


# --------------------------------------------------------------------------------------------
# The test planned from the claim
# --------------------------------------------------------------------------------------------

PLAN_SEED = 20_231_127
"""Seed of the draws under the claim that plan a test (:func:`planned_test`): a stream of its
own, never an audit's trials."""

PLAN_DRAWS = 200_000
"""Draws of the log-likelihood ratio per dataset that plan an all-iterates test."""


def _plan_law(
    claimed: ReleaseModel, actual: ReleaseModel, draws: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The law of ``claimed``'s log-likelihood ratio on a mechanism meeting ``actual``, drawn
    ``draws`` times on the stream :data:`PLAN_SEED` (:func:`limit_rates`'s output, read-only)."""
    own, stat = statistic_samples(claimed, actual, draws=draws, seed=PLAN_SEED)
    law = limit_rates(*own, statistic=stat)
    for array in law:
        array.setflags(write=False)
    return law


_cached_plan_law = functools.lru_cache(maxsize=16)(_plan_law)
"""Plans of a :class:`StepRelease` (a frozen value) share their draws: the same numbers."""


def planned_test(
    target: AuditTarget,
    *,
    trials: int,
    confidence: float = 0.95,
    violation: float | None = REACH_LIMIT,
    draws: int = PLAN_DRAWS,
    plan: Plan = Plan.AUTO,
) -> AuditTest:
    """The test of ``target`` (from :func:`dpsgd_target` or :func:`transcript_target`) planned
    from the *claim* alone for an audit of ``trials`` per dataset: the target's fixed statistic,
    certified at the tests of :func:`planned_threshold` for the claimed release (the
    statistic's, all iterates; the algorithm's ``step_release``, final model) and the claimed
    ε under the target's threat model (``plan``: as there).  No trial of the audit is seen.
    """
    view = target.mechanism if isinstance(target, AuditTarget) else None
    statistic = target.statistic if isinstance(target, AuditTarget) else None
    transcript = isinstance(view, TranscriptProjections)
    if not (
        isinstance(view, FinalModel)
        or (transcript and isinstance(statistic, CanaryLikelihoodRatio))
    ):
        raise InputError(
            "target must come from dpsgd_target or transcript_target (a view and its statistic)"
        )
    threat = ThreatModel.ALL_ITERATES
    release = view.algorithm.step_release
    if isinstance(view, FinalModel):
        threat = ThreatModel.FINAL
    else:
        release = statistic.release
    tests = planned_threshold(
        release,
        trials=trials,
        delta=target.claim.delta,
        threat_model=threat,
        confidence=confidence,
        violation=violation,
        draws=draws,
        epsilon=target.claim.epsilon,
        plan=plan,
    )
    return AuditTest(statistic=target.statistic, threshold=tests)


def planned_threshold(
    release: ReleaseModel,
    *,
    trials: int,
    delta: float,
    threat_model: ThreatModel = ThreatModel.ALL_ITERATES,
    confidence: float = 0.95,
    violation: float | None = REACH_LIMIT,
    draws: int = PLAN_DRAWS,
    epsilon: float | None = None,
    plan: Plan = Plan.AUTO,
) -> Planned:
    """The :class:`~dpclaims.audit.threshold.Planned` strategy for an audit of ``trials`` per
    dataset of a gradient canary under ``threat_model``, planned from the claimed ``release``
    and ``epsilon`` alone, among three plans of order-statistic tests
    (:func:`~dpclaims.audit.threshold.plan_quantile_tests`):

    - the *claim's* test, the one the claimed mechanism's law of the statistic predicts to
      certify most (so that a correct mechanism certifies about the limit of the optimal test,
      :func:`optimal_limit`);
    - the *violation's* test, the one that law predicts to certify most when the noise is
      ``violation`` times smaller (the violation a ``consistent`` verdict must be able to
      catch, the reach limit: a factor-2 calibration error);
    - both, union bound over 2.

    The plan is the one with the most predicted power to refute ``epsilon`` on the violation
    (:func:`~dpclaims.audit.threshold.predicted_power`) plus log of what it is predicted to
    certify on the claimed mechanism (:func:`~dpclaims.audit.threshold.predicted_epsilon`):
    0.1 more probability of catching the violation is worth a bound 10% lower, no more.  So the
    claim's test is planned alone where it catches the violation about as well itself or
    nothing catches it (a union costs a correct mechanism's bound most where it is small:
    T = 100, ε = 1, 10³ trials, limit 0.19); both where the violation's test adds power (T = 10,
    ε = 4, 10⁴: 0.06 → 0.90, at 4% of the bound); the violation's test alone where its power is
    worth more than the claim's bound (T = 100, ε = 8, 10⁴ trials: only it can refute the claim
    on a skipped clip, ``violation=10``, and a correct mechanism then certifies 1.9 instead of
    3.6).
    ``plan`` overrides the choice (``"claim"``, ``"both"``, ``"violation"``); ``epsilon=None``
    plans both tests and ``violation=None`` the claim's alone.

    The statistic is that of the threat model:
    for ``all-iterates`` the exact log-likelihood ratio of the steps' projections on the canary
    (``release.log_likelihood_ratio``, any :class:`ReleaseModel`), its law drawn ``draws``
    times on the stream :data:`PLAN_SEED` with importance-weighted tails
    (:func:`limit_rates`); for ``final`` (a :class:`StepRelease`) the sum of the steps'
    projections (θ_T's, up to a positive factor), exactly (:func:`final_limit`'s law).  A
    user's own transcript audit passes this as ``AuditTest(statistic=...,
    threshold=planned_threshold(...))``.
    """
    if not isinstance(release, ReleaseModel):
        raise InputError(f"release must be a ReleaseModel, got {type(release).__name__}")
    threat = check_choice(threat_model, THREAT_MODELS, "threat_model")
    if threat is ThreatModel.FINAL and not isinstance(release, StepRelease):
        raise InputError(
            "the final-model plan is for DP-SGD's steps: release must be a StepRelease, got "
            f"{type(release).__name__}"
        )
    trials = check_trials(trials)
    criterion = Criterion(delta=delta)
    plan = check_choice(plan, PLANS, "plan")
    factor = None if violation is None else check_positive(violation, "violation")
    if factor is None and plan in (Plan.BOTH, Plan.VIOLATION):
        raise InputError(f"plan={plan!r} needs a violation to plan for: pass violation=2.0")
    actuals = [release] if factor is None else [release, release.noise_divided(factor)]
    if threat is ThreatModel.ALL_ITERATES:
        law = _cached_plan_law if isinstance(release, StepRelease) else _plan_law
        laws = [law(release, actual, draws) for actual in actuals]
    else:
        laws = [_final_laws(actual) for actual in actuals]

    def best(law, union: int) -> Planned:
        return plan_quantile_tests(
            *law[:1], law[1:], trials=trials, confidence=confidence, criterion=criterion,
            directions=(0, 3), union=union,  # the canary's presence shows as a high statistic
        )  # fmt: skip

    if factor is None:
        return best(laws[0], 1)
    claim_law, violation_law = laws
    both = best(claim_law, 2).tests + best(violation_law, 2).tests
    candidates = {
        Plan.CLAIM: best(claim_law, 1),
        Plan.BOTH: Planned(tests=tuple(dict.fromkeys(both))),
        Plan.VIOLATION: best(violation_law, 1),
    }
    if plan != Plan.AUTO:
        return candidates[plan]
    if epsilon is None:
        return candidates[Plan.BOTH]
    epsilon = check_positive(epsilon, "epsilon")
    grid = {"trials": trials, "confidence": confidence, "criterion": criterion}
    power = [
        predicted_power(p, *violation_law[:1], violation_law[1:], epsilon=epsilon, **grid)
        for p in candidates.values()
    ]
    bound = [
        predicted_epsilon(p, *claim_law[:1], claim_law[1:], **grid) for p in candidates.values()
    ]
    worth = [p + math.log(max(b, 1e-12)) for p, b in zip(power, bound, strict=True)]
    return list(candidates.values())[int(np.argmax(worth))]  # ties: the claim's test first
