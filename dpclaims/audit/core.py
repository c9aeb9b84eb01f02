"""``audit``: an ε lower bound for a mechanism on two neighbouring datasets.

The pipeline, in bounded memory whatever ``trials`` is:

Each dataset has one stream of ``trials`` trials (seeds ``child_seed(seed, 0)`` for
d0, ``child_seed(seed, 1)`` for d1, cut into seed blocks as in
:mod:`dpclaims.execution`).

1. *Calibration*: its first ``n_cal = min(round(calibration_fraction × trials),``
   :data:`MAX_CALIBRATION_TRIALS` ``)`` trials, held in memory.  On them a scalar
   score is learned and the test (threshold, direction) chosen.
2. *Certification*: the other ``trials - n_cal`` trials are generated chunk by chunk;
   each seed block is scored and reduced *on its worker* to the counts
   ``#{score > t}`` at the chosen threshold(s) and at the
   :data:`TRADEOFF_POINTS` quantiles of the calibration scores that draw the
   trade-off curve.  Only these integer counts travel back and are summed, so an
   audit of 10^8 trials holds one block of outputs per worker, and the counts are
   the same for every backend, worker count and chunk size.
3. The test is certified from the summed counts with one-sided binomial upper
   bounds.  The certification trials never influence the choice of test, so the
   bound holds at ``confidence``.

That is the :class:`~dpclaims.audit.threshold.Split` strategy.  The default
(:class:`~dpclaims.audit.threshold.Auto`) instead holds every trial's output when they fit
in memory (:data:`MAX_HELD_VALUES`) and the outputs are continuous, and certifies tests at
order statistics of all trials (:class:`~dpclaims.audit.threshold.Quantiles`): no split for a
fixed score, so the whole run certifies.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..data import UserDataset, neighbour_distance
from ..errors import (
    InputError,
    MechanismError,
    NotNeighboursError,
    check_choice,
    check_confidence,
    check_delta,
    check_epsilon,
    check_trials,
)
from ..execution import (
    DETERMINISM_PROBE,
    SEED_BLOCK,
    as_batched,
    check_determinism,
    child_seed,
    plan_chunks,
    reduce_blocks,
    resolve_workers,
    run_blocks,
    session,
)
from ..privacy import PrivacyClaim
from .bounds import CI_METHODS, per_bound_alpha
from .gdp import gdp_epsilon
from .result import AuditResult
from .scores import Score, apply_statistic, candidate_scores, fit_score, is_discrete
from .threshold import (
    DIRECTIONS,
    Auto,
    Bonferroni,
    Quantiles,
    Split,
    Strategy,
    bonferroni_thresholds,
    certify_counts,
    certify_quantiles,
    choose_threshold,
    counts_above,
    default_grid,
    tradeoff_from_counts,
    tradeoff_thresholds,
)

__all__ = [
    "audit",
    "METHODS",
    "THRESHOLD_STRATEGIES",
    "MIN_TRIALS",
    "DEFAULT_CALIBRATION_FRACTION",
    "MAX_CALIBRATION_TRIALS",
    "TRADEOFF_POINTS",
]

METHODS = ("threshold", "histogram", "gdp")
THRESHOLD_STRATEGIES = ("auto", "calibration", "bonferroni", "quantiles")
"""String forms of the strategies: Auto(f), Split(f), Bonferroni(grid_size, f), Quantiles(None, f)
with f = ``calibration_fraction``."""
MIN_TRIALS = 100
DEFAULT_CALIBRATION_FRACTION = 0.2
"""Share of each dataset's trials used to learn the score and choose the test (see the tightness benchmark)."""

MAX_CALIBRATION_TRIALS = 200_000
"""Cap on calibration trials per dataset: the calibration split is held in memory, so it is bounded;
beyond it more calibration barely moves the chosen test (all further trials certify)."""

MAX_HELD_VALUES = 10_000_000
"""Auto holds every output in memory (trials × output width ≤ this, per dataset) to certify on
order statistics; beyond it the certification is streamed (Split)."""

SHAPE_PROBE = 32
"""Trials run on d0 (own seed, never certifying) to read the output width and discreteness."""

TRADEOFF_POINTS = 101
"""Quantile levels of the pooled calibration scores at which the trade-off curve is counted."""


@dataclass(frozen=True)
class _ScoreCounts:
    """Reducer run on the workers: a block of outputs → ``#{score > t}`` for each fixed threshold."""

    score: Score
    thresholds: np.ndarray
    width: int

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.shape[1] != self.width:
            raise MechanismError(
                f"the mechanism returned {outputs.shape[1]} columns in a certification block but {self.width} "
                "during calibration; outputs must keep the same width"
            )
        if len(outputs) == 0:
            return np.zeros(len(self.thresholds), dtype=np.int64)
        return counts_above(self.score(outputs), self.thresholds)


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
    threshold: str | Split | Bonferroni | Quantiles | Auto = "auto",
    ci: str = "clopper-pearson",
    calibration_fraction: float = DEFAULT_CALIBRATION_FRACTION,
    grid_size: int = 32,
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    chunk: int | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> AuditResult:
    """Audit ``mechanism`` on neighbours ``d0``, ``d1`` against an (ε, δ) claim.

    Parameters
    ----------
    mechanism : ``mechanism(data, rng, trials) -> (trials, k)`` or ``(trials,)``;
        ``mechanism(data, rng) -> (k,)`` is accepted and looped.  It must draw all
        randomness from ``rng`` (a :class:`RuntimeWarning` says when it does not)
    d0, d1 : whatever the mechanism takes; two ``UserDataset`` s must be neighbours
        under the claim's unit and relation (else :class:`NotNeighboursError`)
    epsilon, delta : the claim (δ defaults to 0); or pass ``claim=PrivacyClaim(...)``
    trials : trials per dataset, at least :data:`MIN_TRIALS`
    confidence : probability that a certified ``epsilon_lower`` is a valid lower bound
    seed : one integer; d0 uses ``child_seed(seed, 0)``, d1 ``child_seed(seed, 1)``
        (the first ``n_cal`` trials of each calibrate, the rest certify), score
        learning ``child_seed(seed, 2)``
    statistic : optional ``statistic(outputs (n, k)) -> (n,)``; skips score learning
    method : "threshold" (certified, any outputs), "histogram" (certified, discrete
        outputs: the event is a set of outcomes ranked by estimated likelihood ratio),
        "gdp" (a Gaussian-DP *estimate*, not certified; needs δ > 0)
    unit, relation : neighbour relation when ``epsilon`` is given (default user/replace)
    threshold : a strategy from :mod:`dpclaims.audit.threshold` or its string form:
        "auto" (default, :class:`Auto`: order statistics of all trials when they fit in
        memory, else a calibration split), "quantiles" (:class:`Quantiles`),
        "calibration" (:class:`Split`, one test chosen on calibration data) or "bonferroni"
        (:class:`Bonferroni`, ``grid_size`` thresholds at pre-set quantile levels)
    ci : "clopper-pearson" or "jeffreys"
    calibration_fraction : share of the trials used for learning, in (0, 1), for string
        strategies; at most :data:`MAX_CALIBRATION_TRIALS` per dataset are used
    grid_size : thresholds in the Bonferroni grid
    backend, workers, scheduler, chunk : where the trials run (see
        :func:`dpclaims.execution.session`, :func:`dpclaims.execution.plan_chunks`);
        the result does not depend on them
    checkpoint : directory; finished chunks are saved there and an interrupted audit
        rerun with the same arguments resumes from them (see :mod:`dpclaims.checkpoint`)

    Returns
    -------
    AuditResult
    """
    start = time.perf_counter()
    claim = _resolve_claim(claim, epsilon, delta, unit, relation)
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    confidence = check_confidence(confidence)
    check_choice(method, METHODS, "method")
    check_choice(ci, CI_METHODS, "ci")
    grid_size = check_trials(grid_size, "grid_size", minimum=2)
    strategy = _resolve_strategy(threshold, calibration_fraction, grid_size)
    fraction = _check_fraction(strategy.fraction, trials)
    if method == "gdp" and claim.delta == 0.0:
        raise InputError("method='gdp' needs delta > 0 (a Gaussian-DP curve implies no finite pure ε); use method='threshold'")
    if statistic is not None and not callable(statistic):
        raise InputError(f"statistic must be callable as statistic(outputs) -> scores, got {type(statistic).__name__}")
    if statistic is not None and method == "histogram":
        raise InputError("method='histogram' learns its own statistic; pass statistic=None or use method='threshold'")
    _check_neighbours(d0, d1, claim)
    batched = as_batched(mechanism)
    seed_0, seed_1 = child_seed(seed, 0), child_seed(seed, 1)
    n_workers = resolve_workers(workers)
    if isinstance(strategy, (Auto, Quantiles)):
        strategy = _held_strategy(strategy, batched, d0, seed, trials, method)
    threshold = _strategy_name(strategy)
    if isinstance(strategy, Bonferroni):
        grid_size = strategy.grid
    held = isinstance(strategy, Quantiles)
    n_cal = trials if held else min(int(round(fraction * trials)), MAX_CALIBRATION_TRIALS)
    n_cert = trials - n_cal
    checkpointed = checkpoint is not None
    # Calibration runs whole seed blocks; the rows of its last block past n_cal certify (reduced
    # here, not recomputed), and the remaining blocks are certified chunk by chunk on the workers.
    cal_stop = min(trials, -(-n_cal // SEED_BLOCK) * SEED_BLOCK)
    cal_chunks = plan_chunks(trials, chunk, n_workers, checkpointed, stop=cal_stop)
    cert_chunks = plan_chunks(trials, chunk, n_workers, checkpointed, start=cal_stop) if cal_stop < trials else []
    check_determinism(batched, d0, seed_0, min(n_cal, DETERMINISM_PROBE))
    store = None
    if checkpointed:
        from ..checkpoint import fingerprint, open_checkpoint

        store = open_checkpoint(checkpoint, {
            "kind": "audit", "mechanism": fingerprint(batched), "d0": fingerprint(d0), "d1": fingerprint(d1),
            "trials": trials, "seed": int(seed), "calibration_chunks": [len(c) for c in cal_chunks],
            "certification_chunks": [len(c) for c in cert_chunks], "method": method,
            "threshold": repr(strategy),
            "ci": ci, "confidence": confidence, "calibration_fraction": fraction, "grid_size": grid_size,
            "statistic": None if statistic is None else fingerprint(statistic), "claim": claim.to_dict(),
        })

    with session(backend, n_workers, scheduler, len(cert_chunks), (batched, d0, d1, statistic)) as runner:
        tasks = [(batched, d, s, c) for d, s in ((d0, seed_0), (d1, seed_1)) for c in cal_chunks]
        parts = runner.map(run_blocks, tasks, store and store.stage("calibration"))
        run0, run1 = np.concatenate(parts[: len(cal_chunks)]), np.concatenate(parts[len(cal_chunks) :])
        cal0, cal1, rest0, rest1 = run0[:n_cal], run1[:n_cal], run0[n_cal:], run1[n_cal:]
        del parts, run0, run1
        if cal0.shape[1] != cal1.shape[1]:
            raise InputError(
                f"the mechanism returned {cal0.shape[1]} columns on d0 but {cal1.shape[1]} on d1; outputs must have the same width"
            )
        discrete = is_discrete(np.concatenate([cal0, cal1]))
        if method == "histogram" and not discrete:
            raise InputError(
                "method='histogram' needs discrete outputs (at most 64 distinct output rows in the calibration split); "
                "use method='threshold' for continuous outputs"
            )
        objective = "mu" if method == "gdp" else "epsilon"
        output_dim = int(cal0.shape[1])
        if held:
            score, candidates, n_cal, grid_size, cert, alpha, tradeoff = _certify_held(
                cal0, cal1, strategy, statistic, method, discrete, claim.delta, confidence, ci,
                objective, seed,
            )
            n_cert, fraction = trials - n_cal, n_cal / trials
        else:
            bounds = 1 if threshold == "calibration" else 2 * grid_size
            alpha = per_bound_alpha(confidence, bounds)
            rng = np.random.default_rng(child_seed(seed, 2))
            score, candidates, choice = _learn(
                statistic, method, cal0, cal1, discrete, n_cert, claim.delta, alpha, ci,
                objective, rng,
            )
            pooled = np.concatenate([score(cal0), score(cal1)])
            if threshold == "calibration":
                tests = np.array([choice[0]])
                thresholds, directions = tests, np.array([choice[1]])
            else:
                tests = bonferroni_thresholds(pooled, grid_size, n_cert)
                thresholds = np.repeat(tests, len(DIRECTIONS))
                directions = np.tile(np.arange(len(DIRECTIONS)), len(tests))
            curve = tradeoff_thresholds(pooled, TRADEOFF_POINTS)
            del cal0, cal1, pooled
            reducer = _ScoreCounts(score, np.concatenate([tests, curve]), output_dim)
            streams = ((d0, seed_0), (d1, seed_1))
            tasks = [(batched, d, s, c, reducer) for d, s in streams for c in cert_chunks]
            stage = store and store.stage(
                "certification", thresholds=reducer.thresholds, score=score.name
            )
            parts = runner.map(reduce_blocks, tasks, stage)
    if not held:
        above0 = reducer(rest0) + np.sum(parts[: len(cert_chunks)], axis=0, dtype=np.int64)
        above1 = reducer(rest1) + np.sum(parts[len(cert_chunks) :], axis=0, dtype=np.int64)
        per_test = np.repeat(np.arange(len(tests)), len(thresholds) // len(tests))
        cert = certify_counts(
            above0[per_test], n_cert, above1[per_test], n_cert, thresholds, directions,
            claim.delta, alpha, ci, objective,
        )
        n_tests = len(tests)
        tradeoff = tradeoff_from_counts(
            above0[n_tests:], n_cert, above1[n_tests:], n_cert, cert.direction
        )

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
        grid_size=grid_size if threshold in ("bonferroni", "quantiles") else 1,
        calibration_fraction=fraction,
        seed=int(seed),
        trials=trials,
        unit=claim.unit,
        relation=claim.relation,
        output_dim=output_dim,
        discrete=bool(discrete),
        mu=mu,
        candidates=candidates,
        tradeoff=tuple(tuple(p) for p in tradeoff),
        wall_time=time.perf_counter() - start,
    )


def _resolve_strategy(threshold: Any, fraction: Any, grid_size: int) -> Strategy:
    """The strategy value for ``audit(threshold=...)``: an instance as given, or a string
    mapped with ``calibration_fraction`` and ``grid_size``."""
    if isinstance(threshold, (Split, Bonferroni, Quantiles, Auto)):
        if isinstance(threshold, Bonferroni):
            check_trials(threshold.grid, "Bonferroni.grid", minimum=2)
        if isinstance(threshold, Quantiles) and threshold.grid is not None:
            check_trials(threshold.grid, "Quantiles.grid", minimum=1)
        return threshold
    check_choice(threshold, THRESHOLD_STRATEGIES, "threshold")
    return {
        "auto": lambda: Auto(fraction),
        "calibration": lambda: Split(fraction),
        "bonferroni": lambda: Bonferroni(grid_size, fraction),
        "quantiles": lambda: Quantiles(None, fraction),
    }[threshold]()


def _strategy_name(strategy: Split | Bonferroni | Quantiles) -> str:
    return {Split: "calibration", Bonferroni: "bonferroni", Quantiles: "quantiles"}[type(strategy)]


def _held_strategy(
    strategy: Quantiles | Auto, batched, d0, seed, trials: int, method: str
) -> Strategy:
    """Resolve :class:`Auto` and check that :class:`Quantiles` fits in memory, from
    :data:`SHAPE_PROBE` outputs of ``d0`` drawn with their own seed (they never certify)."""
    probe = run_blocks(batched, d0, child_seed(seed, 3), [(0, SHAPE_PROBE, 0, SHAPE_PROBE)])
    fits = trials * probe.shape[1] <= MAX_HELD_VALUES
    if isinstance(strategy, Quantiles):
        if not fits:
            raise InputError(
                f"threshold=Quantiles holds all {trials} × {probe.shape[1]} outputs per "
                f"dataset, more than {MAX_HELD_VALUES:,}; use threshold='calibration' "
                "(streamed) or fewer trials"
            )
        return strategy
    ties = len(np.unique(probe, axis=0)) < len(probe)
    if fits and not ties and method != "histogram":
        return Quantiles(None, strategy.fraction)
    return Split(strategy.fraction)


def _certify_held(
    run0, run1, strategy, statistic, method, discrete, delta, confidence, ci, objective, seed
):
    """:class:`Quantiles` on all held outputs ``run0``, ``run1`` (trials, k).

    A fixed score (``statistic``, or the identity on 1-D outputs) certifies on every trial;
    a learned one is fitted on the first ``fraction`` (at most :data:`MAX_CALIBRATION_TRIALS`)
    trials, which then do not certify.  Returns the score, candidate values, fitting trials,
    ranks per tail, the :class:`Certified` test, the per-bound α and the trade-off curve.
    """
    candidates, n_fit = {}, 0
    if statistic is not None:
        name = getattr(statistic, "__name__", type(statistic).__name__)
        score = Score(f"user:{name}", lambda x: apply_statistic(statistic, x))
    elif run0.shape[1] == 1 and method != "histogram":
        score = fit_score("identity", run0, run1, None)
    else:
        n_fit = min(int(round(strategy.fraction * len(run0))), MAX_CALIBRATION_TRIALS)
        rng = np.random.default_rng(child_seed(seed, 2))
        score, candidates, _ = _learn(
            None, method, run0[:n_fit], run1[:n_fit], discrete, len(run0) - n_fit, delta,
            per_bound_alpha(confidence), ci, objective, rng,
        )
    s0, s1 = score(run0[n_fit:]), score(run1[n_fit:])
    grid = strategy.grid or default_grid(len(s0))
    cert, alpha = certify_quantiles(s0, s1, grid, delta, confidence, ci, objective)
    curve = tradeoff_thresholds(np.concatenate([s0, s1]), TRADEOFF_POINTS)
    above0, above1 = counts_above(s0, curve), counts_above(s1, curve)
    tradeoff = tradeoff_from_counts(above0, len(s0), above1, len(s1), cert.direction)
    return score, candidates, n_fit, grid, cert, alpha, tradeoff


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
    n_cal = min(int(round(fraction * trials)), MAX_CALIBRATION_TRIALS)
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
