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
4. The verdict weighs the bound against what the audit could have seen: the
   ceiling (:func:`~dpclaims.audit.bounds.epsilon_ceiling`), identical outputs on
   the pair, a bound of 0 (:func:`_verdict`).

That is the :class:`~dpclaims.audit.threshold.Split` strategy.  The default
(:class:`~dpclaims.audit.threshold.Auto`) instead holds every trial's output when they fit
in memory (:data:`MAX_HELD_VALUES`) and the outputs are continuous, and certifies tests at
order statistics of all trials (:class:`~dpclaims.audit.threshold.Quantiles`): no split for a
fixed score, so the whole run certifies.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..resources import LONG_RUN, check_budget, check_limits, probe
from ..data import (
    ARRAY_RELATIONS,
    DATASETS,
    UserDataset,
    check_array_neighbours,
    neighbour_distance,
    read_only,
    shape_mismatch,
)
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
    TaskGrid,
    as_batched,
    call_block,
    child_seed,
    first_block,
    ignores_rng,
    plan_chunks,
    reduce_blocks,
    resolve_workers,
    run_blocks,
    session,
    strict_default,
)
from ..privacy import PrivacyClaim
from .bounds import (
    CI_METHODS,
    epsilon_from_rates,
    per_bound_alpha,
    rate_upper,
    trials_for_epsilon,
    trials_to_certify,
)
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
    "audit_ceiling",
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

IDENTITY_PROBE = 256
"""Trials of each dataset run on the same random draws, to detect a pair the mechanism ignores."""

INFINITE_MARGIN = math.log(10)
"""A bound with no false positive within this of the ceiling reads as ε = ∞ on the pair (as far as
the trials can show): the positive dataset put ≥ ~1/10 of its outputs where the other put none."""

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
    reference_epsilon: float | None = None,
    reference_note: str = "",
    progress: bool | None = None,
    sensitivity: float | None = None,
    strict: bool | None = None,
    max_seconds: float | None = None,
    max_memory: float | None = None,
) -> AuditResult:
    """Audit ``mechanism`` on neighbours ``d0``, ``d1`` against an (ε, δ) claim.

    Parameters
    ----------
    mechanism : ``mechanism(data, rng, trials) -> (trials, k)`` or ``(trials,)``;
        ``mechanism(data, rng) -> (k,)`` is accepted and looped.  Which one is read from
        the signature: a parameter named ``trials`` or not.  It must draw all randomness
        from ``rng`` (an error when ``strict``, else a :class:`RuntimeWarning` and a
        note in ``warnings``) and must not write into its dataset (datasets are read-only)
    d0, d1 : whatever the mechanism takes.  Two ``UserDataset`` s must be neighbours
        under the claim's unit and relation, two numpy arrays (or numbers) under
        ``relation`` (rows are records, see :func:`dpclaims.data.check_array_neighbours`),
        else :class:`NotNeighboursError`; other objects cannot be checked (a note in
        ``warnings``)
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
    unit, relation : neighbour relation when ``epsilon`` is given (default user/replace).
        For array datasets ``relation`` may also be ``"query"`` (the arrays are answers of a
        query with ℓ1 ``sensitivity``) or ``"unchecked"`` (an explicit opt-out of the check)
    sensitivity : ℓ1 sensitivity of the query, with ``relation="query"``
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
    reference_epsilon : the exact ε of the mechanism on this pair, when known; reported
        beside the bound (``reference_note``: its source, or why there is none)
    progress : a tqdm bar on stderr (default: when stderr is a terminal; shown after 1 s)
    strict : a mechanism that ignores ``rng`` is an error, not a warning; default (None):
        on when the environment has ``CI=true``
    max_seconds, max_memory : limits (seconds, bytes) on the estimated time and memory
        of the run (see :mod:`dpclaims.resources`; default 24 h and half the physical
        memory); a run over them is refused with the largest trial count that fits

    Returns
    -------
    AuditResult
    """
    start = time.perf_counter()
    if relation is not None:
        check_choice(relation, ARRAY_RELATIONS, "relation")
    array_relation = relation if relation in ("query", "unchecked") else None
    claim = _resolve_claim(claim, epsilon, delta, unit, None if array_relation else relation)
    strict = strict_default(strict)
    max_seconds, max_memory = check_limits(max_seconds, max_memory)
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    confidence = check_confidence(confidence)
    check_choice(method, METHODS, "method")
    check_choice(ci, CI_METHODS, "ci")
    grid_size = check_trials(grid_size, "grid_size", minimum=2)
    strategy = _resolve_strategy(threshold, calibration_fraction, grid_size)
    fraction = _check_fraction(strategy.fraction, trials)
    if method == "gdp" and claim.delta == 0.0:
        raise InputError(
            "method='gdp' needs delta > 0 (a Gaussian-DP curve implies no finite pure ε); use method='threshold'"
        )
    if statistic is not None and not callable(statistic):
        raise InputError(
            f"statistic must be callable as statistic(outputs) -> scores, got {type(statistic).__name__}"
        )
    if statistic is not None and method == "histogram":
        raise InputError(
            "method='histogram' learns its own statistic; pass statistic=None or use method='threshold'"
        )
    d0, d1 = read_only(d0), read_only(d1)
    notes = _check_neighbours(d0, d1, claim, array_relation, sensitivity)
    reference_epsilon = _check_reference(reference_epsilon)
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
    cert_chunks = plan_chunks(trials, chunk, n_workers, checkpointed, start=cal_stop)
    same, first, seconds = first_block(batched, d0, seed_0, min(n_cal, DETERMINISM_PROBE))
    if not same:
        notes.append(ignores_rng(batched, strict))
    identical = _identical_outputs(batched, d0, d1, seed_0, min(trials, IDENTITY_PROBE))
    parallel = backend != "serial" and n_workers > 1
    stand_in = np.linspace(-3.0, 3.0, TRADEOFF_POINTS + 2)  # counted, as certification does

    def probe_call(n: int) -> np.ndarray:
        return counts_above(call_block(batched, d0, seed_0, 0, n).sum(axis=1), stand_in)

    long_run = min(LONG_RUN, max_seconds)
    found = probe(
        probe_call,
        seconds,
        first.shape[1],
        trials,
        refine=lambda per_trial: 2 * trials * per_trial / (n_workers if parallel else 1) > long_run,
    )
    check_budget(
        found,
        trials,
        lambda n: n if held else _held(n, fraction),
        n_workers,
        parallel,
        max_seconds,
        max_memory,
        MIN_TRIALS,
    )
    store = None
    if checkpointed:
        from ..checkpoint import fingerprint, open_checkpoint

        store = open_checkpoint(
            checkpoint,
            {
                "kind": "audit",
                "mechanism": fingerprint(batched),
                "d0": fingerprint(d0),
                "d1": fingerprint(d1),
                "trials": trials,
                "seed": int(seed),
                "calibration_chunks": cal_chunks.layout,
                "certification_chunks": cert_chunks.layout,
                "method": method,
                "threshold": repr(strategy),
                "ci": ci,
                "confidence": confidence,
                "calibration_fraction": fraction,
                "grid_size": grid_size,
                "statistic": None if statistic is None else fingerprint(statistic),
                "claim": claim.to_dict(),
            },
        )

    bar = _progress_bar(progress, 2 * trials)
    probe_args = (batched, d0, d1, statistic)
    with bar, session(backend, n_workers, scheduler, len(cert_chunks), probe_args) as runner:
        tasks = TaskGrid([(batched, d0, seed_0), (batched, d1, seed_1)], cal_chunks)
        stage = _Progress(bar, tasks, store and store.stage("calibration"))
        parts = runner.map(run_blocks, tasks, stage)
        run0, run1 = (
            np.concatenate(parts[: len(cal_chunks)]),
            np.concatenate(parts[len(cal_chunks) :]),
        )
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
                cal0,
                cal1,
                strategy,
                statistic,
                method,
                discrete,
                claim.delta,
                confidence,
                ci,
                objective,
                seed,
            )
            n_cert, fraction = trials - n_cal, n_cal / trials
        else:
            bounds = 1 if threshold == "calibration" else 2 * grid_size
            alpha = per_bound_alpha(confidence, bounds)
            rng = np.random.default_rng(child_seed(seed, 2))
            score, candidates, choice = _learn(
                statistic,
                method,
                cal0,
                cal1,
                discrete,
                n_cert,
                claim.delta,
                alpha,
                ci,
                objective,
                rng,
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
            streams = [(batched, d0, seed_0), (batched, d1, seed_1)]
            tasks = TaskGrid(streams, cert_chunks, (reducer,))
            stage = store and store.stage(
                "certification", thresholds=reducer.thresholds, score=score.name
            )
            above0, above1 = reducer(rest0), reducer(rest1)
            for i, counts in runner.stream(reduce_blocks, tasks, _Progress(bar, tasks, stage)):
                if i < len(cert_chunks):
                    above0 += counts
                else:
                    above1 += counts
    if not held:
        per_test = np.repeat(np.arange(len(tests)), len(thresholds) // len(tests))
        cert = certify_counts(
            above0[per_test],
            n_cert,
            above1[per_test],
            n_cert,
            thresholds,
            directions,
            claim.delta,
            alpha,
            ci,
            objective,
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
    ceiling = _ceiling(n_cert, alpha, ci, claim.delta)
    near_ceiling = eps_lower > 0 and eps_lower >= ceiling - INFINITE_MARGIN
    infinite = cert.false_positives == 0 and near_ceiling
    needed = _trials_needed(claim, cert, ceiling, alpha, ci, fraction)
    verdict, reason = _verdict(
        float(eps_lower),
        claim.epsilon,
        ceiling,
        needed,
        trials,
        identical,
        min(trials, IDENTITY_PROBE),
        reference_epsilon,
    )
    return AuditResult(
        epsilon_lower=float(eps_lower),
        verdict=verdict,
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
        relation=array_relation or claim.relation,
        output_dim=output_dim,
        discrete=bool(discrete),
        mu=mu,
        candidates=candidates,
        tradeoff=tuple(tuple(p) for p in tradeoff),
        wall_time=time.perf_counter() - start,
        ceiling=ceiling,
        trials_needed=needed,
        reference_epsilon=reference_epsilon,
        reference_note=str(reference_note),
        reason=reason,
        infinite=bool(infinite),
        identical_outputs=bool(identical),
        warnings=tuple(notes),
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
            None,
            method,
            run0[:n_fit],
            run1[:n_fit],
            discrete,
            len(run0) - n_fit,
            delta,
            per_bound_alpha(confidence),
            ci,
            objective,
            rng,
        )
    s0, s1 = score(run0[n_fit:]), score(run1[n_fit:])
    grid = strategy.grid or default_grid(len(s0))
    cert, alpha = certify_quantiles(s0, s1, grid, delta, confidence, ci, objective)
    curve = tradeoff_thresholds(np.concatenate([s0, s1]), TRADEOFF_POINTS)
    above0, above1 = counts_above(s0, curve), counts_above(s1, curve)
    tradeoff = tradeoff_from_counts(above0, len(s0), above1, len(s1), cert.direction)
    return score, candidates, n_fit, grid, cert, alpha, tradeoff


def audit_ceiling(
    trials: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    calibration_fraction: float = DEFAULT_CALIBRATION_FRACTION,
    threshold: str = "calibration",
    grid_size: int = 32,
    ci: str = "clopper-pearson",
) -> float:
    """The largest ε :func:`audit` with these options can certify, known before running it.

    It is the bound of an error-free test on the certification split (see
    :func:`~dpclaims.audit.bounds.epsilon_ceiling`); a claim at or above it comes out
    ``inconclusive``, whatever the mechanism.
    """
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    check_choice(threshold, THRESHOLD_STRATEGIES, "threshold")
    check_choice(ci, CI_METHODS, "ci")
    fraction = _check_fraction(calibration_fraction, trials)
    n_cert = trials - min(int(round(fraction * trials)), MAX_CALIBRATION_TRIALS)
    bounds = 1
    if threshold != "calibration":
        bounds = 2 * check_trials(grid_size, "grid_size", minimum=2)
    alpha = per_bound_alpha(check_confidence(confidence), bounds)
    return _ceiling(n_cert, alpha, ci, check_delta(delta))


def _check_reference(reference: Any) -> float | None:
    """``reference_epsilon`` as a float (``math.inf`` allowed) or None."""
    if reference is None:
        return None
    number = (int, float, np.integer, np.floating)
    ok = isinstance(reference, number) and not isinstance(reference, bool)
    if not ok or not reference >= 0:
        raise InputError(
            f"reference_epsilon must be a number >= 0 (math.inf allowed) or None, "
            f"got {reference!r}; pass e.g. reference_epsilon=0.93"
        )
    return float(reference)


def _ceiling(n_cert: int, alpha: float, ci: str, delta: float) -> float:
    """The bound of zero false positives and zero false negatives among ``n_cert`` trials each."""
    zero = rate_upper(0, n_cert, alpha, ci)
    return float(epsilon_from_rates(zero, zero, delta))


def _verdict(eps_lower, claimed, ceiling, needed, trials, identical, probe, reference):
    """``(verdict, reason)``: a violation when the bound exceeds the claim; ``consistent`` only
    when the audit had power to see the claim, else ``inconclusive`` with the reason."""
    if eps_lower > claimed:
        return "violation", ""
    if claimed >= ceiling:
        return "inconclusive", (
            f"this audit cannot reach ε = {claimed:g} with {trials:,} trials; "
            f"it needs about {needed:,}"
        )
    if identical == "data":
        return "inconclusive", (
            "d0 and d1 are the same data: an audit needs two different neighbouring datasets"
        )
    if identical:
        return "inconclusive", (
            f"d0 and d1 gave identical outputs on the same {probe} random "
            "draws: the mechanism does not see where they differ, so this pair "
            "cannot show any privacy loss"
        )
    if eps_lower <= 0:
        reason = (
            f"the audit separated nothing (certified ε ≥ 0), so it could not have seen "
            f"ε = {claimed:g}"
        )
        if reference == 0:
            return "inconclusive", reason + (
                "; the exact ε of this pair is 0, so it can only "
                "catch a bug that makes the pair distinguishable"
            )
        if reference is not None:
            return "inconclusive", reason + (
                f"; the exact ε of this pair is {reference:.3g}: "
                "more trials, or a pair nearer the claim"
            )
        return "inconclusive", reason + ": use a pair the mechanism separates, or more trials"
    return "consistent", ""


def _trials_needed(claim, cert, ceiling, alpha, ci, fraction) -> int | None:
    """Trials per dataset that would decide the claim: enough for the chosen test to certify it
    with probability ~0.9 when its point estimate is above the claim, and at least enough for the
    ceiling to pass it; None when nothing suggests more (or the bound already exceeds the claim)."""
    if cert.epsilon_lower > claim.epsilon:
        return None
    fpr = cert.false_positives / cert.n_negative
    fnr = cert.false_negatives / cert.n_positive
    confidence = _confidence_of(alpha)
    per_dataset = trials_to_certify(
        claim.epsilon, fpr, fnr, delta=claim.delta, confidence=confidence, ci=ci
    )
    if claim.epsilon >= ceiling:
        floor = trials_for_epsilon(claim.epsilon, delta=claim.delta, confidence=confidence)
        per_dataset = max(per_dataset or 0, floor)
    if per_dataset is None:
        return None
    total = math.ceil(per_dataset / (1.0 - fraction)) + 1
    if total - per_dataset > MAX_CALIBRATION_TRIALS:
        total = per_dataset + MAX_CALIBRATION_TRIALS
    return _round_up(max(total, MIN_TRIALS))


def _confidence_of(alpha: float) -> float:
    """The confidence whose :func:`per_bound_alpha` is ``alpha`` (one bound per dataset)."""
    return (1.0 - alpha) ** 2


def _round_up(n: int) -> int:
    """``n`` rounded up to two significant digits (a suggested trial count)."""
    scale = 10 ** max(0, len(str(n)) - 2)
    return -(-n // scale) * scale


def _identical_outputs(batched, d0, d1, seed, probe: int) -> str:
    """``"data"`` when ``d0`` and ``d1`` are the same data, ``"outputs"`` when the mechanism
    gives them identical outputs on the same ``probe`` random draws (it then ignores where they
    differ), else ""."""
    if d0 is d1 or _same_data(d0, d1):
        return "data"
    block = [(0, probe, 0, probe)]
    first, second = run_blocks(batched, d0, seed, block), run_blocks(batched, d1, seed, block)
    same = first.shape == second.shape and bool(np.array_equal(first, second, equal_nan=True))
    return "outputs" if same else ""


def _same_data(d0, d1) -> bool:
    """Equal arrays, equal numbers, or ``UserDataset`` s with equal ``x`` and ``y``."""
    if isinstance(d0, UserDataset) and isinstance(d1, UserDataset):
        return (
            _same_data(d0.x, d1.x)
            and (d0.y is None) == (d1.y is None)
            and (d0.y is None or _same_data(d0.y, d1.y))
        )
    numeric = (np.ndarray, int, float, np.number)
    if isinstance(d0, numeric) and isinstance(d1, numeric) and not isinstance(d0, bool):
        a, b = np.asarray(d0), np.asarray(d1)
        return a.shape == b.shape and a.dtype.kind in "biuf" and bool(np.array_equal(a, b))
    return False


def _progress_bar(progress: bool | None, total: int):
    """A tqdm bar over all trials on stderr (default: only when stderr is a terminal)."""
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else bool(progress)
    return tqdm(
        total=total,
        file=sys.stderr,
        unit="trial",
        unit_scale=True,
        desc="audit",
        delay=1.0,
        disable=not show,
        leave=False,
    )


class _Progress:
    """A checkpoint stage (or none) for ``runner.stream`` that also advances the bar per task."""

    def __init__(self, bar, tasks, stage):
        self.bar, self.tasks, self.stage = bar, tasks, stage

    def _size(self, index: int) -> int:
        return sum(hi - lo for _, _, lo, hi in self.tasks[index][3])

    def saved(self, count: int):
        for index, value in self.stage.saved(count) if self.stage is not None else ():
            self.bar.update(self._size(index))
            yield index, value

    def save(self, index: int, value) -> None:
        if self.stage is not None:
            self.stage.save(index, value)
        self.bar.update(self._size(index))


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
        return (
            Score(f"user:{name}", lambda x: apply_statistic(statistic, x)),
            {},
            (choice.threshold, choice.direction),
        )
    names = (
        ("histogram_lr",) if method == "histogram" else candidate_scores(cal0.shape[1], discrete)
    )
    half = len(cal0) // 2
    best = None
    candidates = {}
    for name in names:
        score = fit_score(name, cal0[:half], cal1[:half], rng)
        choice = choose_threshold(
            score(cal0[half:]), score(cal1[half:]), n_cert, n_cert, delta, alpha, ci, objective
        )
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
        given = [
            n
            for n, v in (
                ("epsilon", epsilon),
                ("delta", delta),
                ("unit", unit),
                ("relation", relation),
            )
            if v is not None
        ]
        if given:
            raise InputError(
                f"pass either claim= or {', '.join(given)}=, not both; the claim already carries them"
            )
        return claim
    if epsilon is None:
        raise InputError(
            "pass the claimed epsilon (e.g. epsilon=1.0, delta=1e-5) or claim=PrivacyClaim(...)"
        )
    return PrivacyClaim(
        epsilon=check_epsilon(epsilon),
        delta=0.0 if delta is None else check_delta(delta),
        unit="user" if unit is None else unit,
        relation="replace" if relation is None else relation,
    )


def _check_fraction(fraction: Any, trials: int) -> float:
    ok = isinstance(fraction, (int, float, np.integer, np.floating)) and not isinstance(
        fraction, bool
    )
    if not ok or not (0.0 < fraction < 1.0) or not math.isfinite(fraction):
        raise InputError(
            f"calibration_fraction must be a number in (0, 1), got {fraction!r}; pass e.g. calibration_fraction=0.2"
        )
    n_cal = min(int(round(fraction * trials)), MAX_CALIBRATION_TRIALS)
    if n_cal < 20 or trials - n_cal < 20:
        raise InputError(
            f"calibration_fraction={fraction!r} leaves {n_cal} calibration and {trials - n_cal} certification trials; "
            "each needs at least 20: raise trials or move calibration_fraction towards 0.5"
        )
    return float(fraction)


def _held(trials: int, fraction: float) -> int:
    """Trials per side whose outputs the main process holds: the calibration's whole blocks."""
    n_cal = min(int(round(fraction * trials)), MAX_CALIBRATION_TRIALS)
    return min(trials, -(-n_cal // SEED_BLOCK) * SEED_BLOCK)


def _check_neighbours(
    d0: Any, d1: Any, claim: PrivacyClaim, array_relation: str | None, sensitivity: Any
) -> list[str]:
    """Raise :class:`NotNeighboursError` unless ``d0``, ``d1`` are neighbours; return notes."""
    if isinstance(d0, DATASETS) and isinstance(d1, DATASETS):
        if array_relation is not None or sensitivity is not None:
            raise InputError(
                f"relation={array_relation!r} and sensitivity= are for array datasets; "
                "UserDatasets are checked under relation='replace' or 'add-remove'"
            )
        distance = neighbour_distance(d0, d1, claim.unit, claim.relation)
        if distance is None or distance > 1:
            found = shape_mismatch(d0, d1, claim.relation) or (
                f"not one {claim.unit} removed"
                if distance is None
                else f"{distance} {claim.unit}s differ (distance {distance})"
            )
            raise NotNeighboursError(
                f"d0 and d1 are not neighbours under unit={claim.unit!r}, "
                f"relation={claim.relation!r}: {found}; {'an' if claim.unit == 'item' else 'a'} "
                f"{claim.unit}-level claim needs "
                f"datasets differing in at most one {claim.unit}"
            )
        return []
    numeric = (np.ndarray, int, float, np.integer, np.floating)
    arrays = all(isinstance(d, numeric) for d in (d0, d1))
    if arrays and not any(isinstance(d, bool) for d in (d0, d1)):
        check_array_neighbours(d0, d1, array_relation or claim.relation, sensitivity)
        if array_relation == "unchecked":
            return ["the neighbour relation of d0 and d1 was not checked (relation='unchecked')"]
        return []
    if sensitivity is not None or array_relation == "query":
        raise InputError(
            "relation='query' and sensitivity= are for numpy-array datasets (query answers)"
        )
    kinds = f"{type(d0).__name__} and {type(d1).__name__}"
    return [
        f"d0 and d1 are {kinds}: their neighbour relation cannot be checked; "
        "make sure they are neighbours"
    ]
