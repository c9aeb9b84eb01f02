"""``audit``: an ε lower bound for a mechanism on two neighbouring datasets.

The pipeline: run ``trials`` trials on each dataset (seeds ``child_seed(seed, 0)``
and ``child_seed(seed, 1)``); split the trials by index into a calibration part
(the first ``calibration_fraction``) and a certification part; on calibration
data learn a scalar score and choose a test; certify that test on the
certification data with one-sided binomial upper bounds.  The certification data
never influence the choice of test, so the bound holds at ``confidence``.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ..data import UserDataset, neighbour_distance
from ..errors import (
    InputError,
    NotNeighboursError,
    check_choice,
    check_confidence,
    check_delta,
    check_epsilon,
    check_trials,
)
from ..execution import child_seed, run_trials
from ..privacy import PrivacyClaim
from .bounds import CI_METHODS, per_bound_alpha
from .gdp import gdp_epsilon
from .result import AuditResult
from .scores import Score, apply_statistic, candidate_scores, fit_score, is_discrete
from .threshold import DIRECTIONS, bonferroni_thresholds, certify, choose_threshold, tradeoff_curve

__all__ = ["audit", "METHODS", "THRESHOLD_STRATEGIES", "MIN_TRIALS", "DEFAULT_CALIBRATION_FRACTION"]

METHODS = ("threshold", "histogram", "gdp")
THRESHOLD_STRATEGIES = ("calibration", "bonferroni")
MIN_TRIALS = 100
DEFAULT_CALIBRATION_FRACTION = 0.2
"""Share of each dataset's trials used to learn the score and choose the test (see the tightness benchmark)."""


def audit(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    epsilon: float | None = None,
    delta: float | None = None,
    trials: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    statistic: Callable | None = None,
    method: str = "threshold",
    *,
    claim: PrivacyClaim | None = None,
    unit: str | None = None,
    relation: str | None = None,
    threshold: str = "calibration",
    ci: str = "clopper-pearson",
    calibration_fraction: float = DEFAULT_CALIBRATION_FRACTION,
    grid_size: int = 32,
    backend: str = "auto",
    workers: int | None = None,
) -> AuditResult:
    """Audit ``mechanism`` on neighbours ``d0``, ``d1`` against an (ε, δ) claim.

    Parameters
    ----------
    mechanism : ``mechanism(data, rng, trials) -> (trials, k)`` or ``(trials,)``;
        ``mechanism(data, rng) -> (k,)`` is accepted and looped
    d0, d1 : whatever the mechanism takes; two ``UserDataset`` s must be neighbours
        under the claim's unit and relation (else :class:`NotNeighboursError`)
    epsilon, delta : the claim (δ defaults to 0); or pass ``claim=PrivacyClaim(...)``
    trials : trials per dataset, at least :data:`MIN_TRIALS`
    confidence : probability that a certified ``epsilon_lower`` is a valid lower bound
    seed : one integer; d0 uses ``child_seed(seed, 0)``, d1 ``child_seed(seed, 1)``,
        score learning ``child_seed(seed, 2)``
    statistic : optional ``statistic(outputs (n, k)) -> (n,)``; skips score learning
    method : "threshold" (certified, any outputs), "histogram" (certified, discrete
        outputs: the event is a set of outcomes ranked by estimated likelihood ratio),
        "gdp" (a Gaussian-DP *estimate*, not certified; needs δ > 0)
    unit, relation : neighbour relation when ``epsilon`` is given (default user/replace)
    threshold : "calibration" (one test chosen on calibration data) or "bonferroni"
        (``grid_size`` thresholds at pre-set quantile levels, all certified with a
        Bonferroni correction)
    ci : "clopper-pearson" or "jeffreys"
    calibration_fraction : share of the trials (by index) used for learning, in (0, 1)
    grid_size : thresholds in the Bonferroni grid
    backend, workers : passed to :func:`dpclaims.execution.run_trials`

    Returns
    -------
    AuditResult
    """
    start = time.perf_counter()
    claim = _resolve_claim(claim, epsilon, delta, unit, relation)
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    confidence = check_confidence(confidence)
    check_choice(method, METHODS, "method")
    check_choice(threshold, THRESHOLD_STRATEGIES, "threshold")
    check_choice(ci, CI_METHODS, "ci")
    fraction = _check_fraction(calibration_fraction, trials)
    grid_size = check_trials(grid_size, "grid_size", minimum=2)
    if method == "gdp" and claim.delta == 0.0:
        raise InputError("method='gdp' needs delta > 0 (a Gaussian-DP curve implies no finite pure ε); use method='threshold'")
    if statistic is not None and not callable(statistic):
        raise InputError(f"statistic must be callable as statistic(outputs) -> scores, got {type(statistic).__name__}")
    if statistic is not None and method == "histogram":
        raise InputError("method='histogram' learns its own statistic; pass statistic=None or use method='threshold'")
    _check_neighbours(d0, d1, claim)

    x0 = run_trials(mechanism, d0, trials, seed=child_seed(seed, 0), backend=backend, workers=workers)
    x1 = run_trials(mechanism, d1, trials, seed=child_seed(seed, 1), backend=backend, workers=workers)
    if x0.shape[1] != x1.shape[1]:
        raise InputError(f"the mechanism returned {x0.shape[1]} columns on d0 but {x1.shape[1]} on d1; outputs must have the same width")
    n_cal = int(round(fraction * trials))
    cal0, cal1, cert0, cert1 = x0[:n_cal], x1[:n_cal], x0[n_cal:], x1[n_cal:]
    discrete = is_discrete(np.concatenate([cal0, cal1]))
    if method == "histogram" and not discrete:
        raise InputError(
            "method='histogram' needs discrete outputs (at most 64 distinct output rows in the calibration split); "
            "use method='threshold' for continuous outputs"
        )

    objective = "mu" if method == "gdp" else "epsilon"
    n_cert = trials - n_cal
    if threshold == "calibration":
        alpha = per_bound_alpha(confidence)
    else:
        alpha = per_bound_alpha(confidence, 2 * grid_size)
    rng = np.random.default_rng(child_seed(seed, 2))
    score, candidates, choice = _learn(statistic, method, cal0, cal1, discrete, n_cert, claim.delta, alpha, ci, objective, rng)

    s0, s1 = score(cert0), score(cert1)
    if threshold == "calibration":
        thresholds, directions = np.array([choice[0]]), np.array([choice[1]])
    else:
        grid = bonferroni_thresholds(np.concatenate([score(cal0), score(cal1)]), grid_size, n_cert)
        thresholds = np.repeat(grid, len(DIRECTIONS))
        directions = np.tile(np.arange(len(DIRECTIONS)), len(grid))
    cert = certify(s0, s1, thresholds, directions, claim.delta, alpha, ci, objective)

    if method == "gdp":
        eps_lower = gdp_epsilon(cert.mu, claim.delta)
        mu: float | None = cert.mu
    else:
        eps_lower, mu = cert.epsilon_lower, None
    return AuditResult(
        epsilon_lower=float(eps_lower),
        verdict="violation" if eps_lower > claim.epsilon else "consistent",
        epsilon=claim.epsilon,
        delta=claim.delta,
        confidence=confidence,
        method=method,
        certified=method != "gdp",
        kind="estimate" if method == "gdp" else "certified",
        statistic=score.name,
        threshold=cert.threshold,
        direction=DIRECTIONS[cert.direction],
        false_positives=cert.false_positives,
        false_negatives=cert.false_negatives,
        n_negative=cert.n_negative,
        n_positive=cert.n_positive,
        calibration_trials=n_cal,
        certification_trials=n_cert,
        fpr_upper=cert.fpr_upper,
        fnr_upper=cert.fnr_upper,
        ci=ci,
        ci_alpha=alpha,
        threshold_strategy=threshold,
        grid_size=grid_size if threshold == "bonferroni" else 1,
        calibration_fraction=fraction,
        seed=int(seed),
        trials=trials,
        unit=claim.unit,
        relation=claim.relation,
        output_dim=int(x0.shape[1]),
        discrete=bool(discrete),
        mu=mu,
        candidates=candidates,
        tradeoff=tuple(tuple(p) for p in tradeoff_curve(s0, s1, cert.direction)),
        wall_time=time.perf_counter() - start,
    )


def _learn(statistic, method, cal0, cal1, discrete, n_cert, delta, alpha, ci, objective, rng):
    """Fit candidate scores on the first half of calibration and pick one on the second half.

    The test (threshold, direction) of the chosen score is then picked on the whole
    calibration split: a choice that also looks at the fitting half can only cost
    power, never validity, since certification uses other trials.

    Returns the chosen :class:`Score`, ``{name: predicted value}`` for every
    candidate, and ``(threshold, direction)`` chosen on calibration data.
    """
    if statistic is not None:
        s0, s1 = apply_statistic(statistic, cal0), apply_statistic(statistic, cal1)
        choice = choose_threshold(s0, s1, n_cert, n_cert, delta, alpha, ci, objective)
        name = getattr(statistic, "__name__", type(statistic).__name__)
        return Score(f"user:{name}", lambda x: apply_statistic(statistic, x)), {}, (choice.threshold, choice.direction)
    names = ("histogram_lr",) if method == "histogram" else candidate_scores(cal0.shape[1], discrete)
    half = len(cal0) // 2
    best = None
    candidates = {}
    for name in names:
        score = fit_score(name, cal0[:half], cal1[:half], rng)
        choice = choose_threshold(score(cal0[half:]), score(cal1[half:]), n_cert, n_cert, delta, alpha, ci, objective)
        candidates[name] = choice.predicted
        if best is None or choice.predicted > best[1].predicted:
            best = (score, choice)
    score = best[0]
    choice = choose_threshold(score(cal0), score(cal1), n_cert, n_cert, delta, alpha, ci, objective)
    return score, candidates, (choice.threshold, choice.direction)


def _resolve_claim(claim, epsilon, delta, unit, relation) -> PrivacyClaim:
    if claim is not None:
        if not isinstance(claim, PrivacyClaim):
            raise InputError(f"claim must be a dpclaims.PrivacyClaim, got {type(claim).__name__}")
        given = [n for n, v in (("epsilon", epsilon), ("delta", delta), ("unit", unit), ("relation", relation)) if v is not None]
        if given:
            raise InputError(f"pass either claim= or {', '.join(given)}=, not both; the claim already carries them")
        return claim
    if epsilon is None:
        raise InputError("pass the claimed epsilon (e.g. epsilon=1.0, delta=1e-5) or claim=PrivacyClaim(...)")
    return PrivacyClaim(
        epsilon=check_epsilon(epsilon),
        delta=0.0 if delta is None else check_delta(delta),
        unit="user" if unit is None else unit,
        relation="replace" if relation is None else relation,
    )


def _check_fraction(fraction: Any, trials: int) -> float:
    ok = isinstance(fraction, (int, float, np.integer, np.floating)) and not isinstance(fraction, bool)
    if not ok or not (0.0 < fraction < 1.0) or not math.isfinite(fraction):
        raise InputError(f"calibration_fraction must be a number in (0, 1), got {fraction!r}; pass e.g. calibration_fraction=0.2")
    n_cal = int(round(fraction * trials))
    if n_cal < 20 or trials - n_cal < 20:
        raise InputError(
            f"calibration_fraction={fraction!r} leaves {n_cal} calibration and {trials - n_cal} certification trials; "
            "each needs at least 20: raise trials or move calibration_fraction towards 0.5"
        )
    return float(fraction)


def _check_neighbours(d0: Any, d1: Any, claim: PrivacyClaim) -> None:
    if not (isinstance(d0, UserDataset) and isinstance(d1, UserDataset)):
        return
    distance = neighbour_distance(d0, d1, claim.unit, claim.relation)
    if distance is None or distance > 1:
        found = "not reachable by such changes" if distance is None else f"{distance} {claim.unit}s differ"
        raise NotNeighboursError(
            f"d0 and d1 are not neighbours under unit={claim.unit!r}, relation={claim.relation!r}: {found} "
            f"(distance {distance}); a {claim.unit}-level claim needs datasets differing in at most one {claim.unit}"
        )
