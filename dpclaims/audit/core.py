"""``audit``: an ε lower bound for a mechanism on two neighbouring datasets.

A thin driver over two public steps, collecting (:mod:`dpclaims.audit.collect`) and
certifying (:mod:`dpclaims.audit.certify`).  The pipeline, in bounded memory whatever
``trials`` is:

Each dataset has one stream of ``trials`` trials (seeds ``child_seed(seed, 0)`` for
d0, ``child_seed(seed, 1)`` for d1, cut into seed blocks as in
:mod:`dpclaims.execution`).

1. *Calibration*: its first ``n_cal = min(round(fraction × trials),``
   :data:`MAX_CALIBRATION_TRIALS` ``)`` trials (``fraction`` of the strategy), held in
   memory.  On them a scalar score is learned and the test (threshold, direction) chosen.
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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import (
    DATASETS,
    UserDataset,
    check_array_neighbours,
    neighbour_distance,
    read_only,
    shape_mismatch,
)
from ..errors import (
    InputError,
    NotNeighboursError,
    check_choice,
    check_confidence,
    check_finite_array,
    check_trials,
)
from ..execution import (
    DEFAULT_EXECUTION,
    DETERMINISM_PROBE,
    SEED_BLOCK,
    Execution,
    as_batched,
    call_block,
    check_execution,
    child_seed,
    first_block,
    ignores_rng,
    resolve_workers,
    run_blocks,
    strict_default,
)
from ..privacy import PrivacyClaim
from ..resources import Workload, check_budget, probe, refine_above
from ..vocabulary import Relation, Unit, Verdict
from .bounds import (
    CI_METHODS,
    alpha_per_test,
    epsilon_ceiling,
    joint_ceiling,
    trials_for_epsilon,
    trials_to_certify,
)
from .certify import (
    TRADEOFF_POINTS,
    Certificate,
    certify_quantile_scores,
    certify_scores,
    fixed_tests,
    split_alpha,
)
from .collect import Collector, HeldOutputs, Layout, ScoreCounts, Streams
from .methods import METHODS, AuditMethod
from .options import DEFAULT_TEST, NO_REFERENCE, AuditTest, Neighbours, Reference
from .reach import REACH_LIMIT, Reach, reach
from .relation import with_relation_hint
from .result import AuditResult, Provenance
from .scores import Score, apply_statistic, fit_score, is_discrete
from .threshold import (
    MAX_CALIBRATION_TRIALS,
    MAX_HELD_VALUES,
    STRATEGY_NAMES,
    Criterion,
    Split,
    ThresholdStrategy,
    choose_threshold,
    counts_above,
    strategy_named,
)

__all__ = [
    "audit",
    "audit_scores",
    "audit_ceiling",
    "AuditPlan",
    "METHODS",
    "THRESHOLD_STRATEGIES",
    "MIN_TRIALS",
    "DEFAULT_CALIBRATION_FRACTION",
    "MAX_CALIBRATION_TRIALS",
    "MAX_HELD_VALUES",
    "TRADEOFF_POINTS",
    "AuditTest",
    "Neighbours",
    "Reference",
]

THRESHOLD_STRATEGIES = STRATEGY_NAMES
"""String forms of the strategies, each with its default options: Auto(), Split(),
Bonferroni(), Quantiles()."""
MIN_TRIALS = 100
MIN_SCORES = 20
"""Fewest scores per dataset :func:`audit_scores` takes (one per training run: few runs
certify little, and the verdict says so)."""
DEFAULT_CALIBRATION_FRACTION = Split().fraction
"""Share of each dataset's trials used to learn the score and choose the test (see the tightness
benchmark); every strategy's default ``fraction``."""

SHAPE_PROBE = 32
"""Trials run on d0 (own seed, never certifying) to read the output width and discreteness."""

IDENTITY_PROBE = 256
"""Trials of each dataset run on the same random draws, to detect a pair the mechanism ignores."""

SELECTION_TOLERANCE = 0.05
"""A held strategy's learned score is the first candidate (fewest parameters) whose cross-fitted
prediction is within this share of the best one's, or within the best one's standard error
(the one-standard-error rule, :func:`_within_noise`), whichever is wider: a flexible score that
wins by noise alone costs power (the README's two-column example, with a 20% split: 0.517 with
the sum of column ratios against 0.552 with LDA, the likelihood ratio's own form)."""

INFINITE_MARGIN = math.log(10)
"""A bound with no false positive within this of the ceiling reads as ε = ∞ on the pair (as far
as the trials can show): the positive dataset put ≥ ~1/10 of its outputs where the other put
none."""


@dataclass(frozen=True, kw_only=True)
class AuditPlan:
    """The statistical choices of one audit, validated: ``trials`` per dataset, ``seed``, the
    ``method``, the threshold ``strategy``, the ``criterion`` (interval, δ, objective), the
    ``confidence`` and an optional fixed ``statistic``."""

    claim: PrivacyClaim
    trials: int
    seed: int
    method: AuditMethod
    strategy: ThresholdStrategy
    criterion: Criterion
    confidence: float
    statistic: Callable | None = None

    @property
    def alpha(self) -> float:
        """Failure probability of each test's joint bound under a split strategy
        (:func:`split_alpha`)."""
        return split_alpha(self.strategy, self.confidence)

    def calibration_trials(self) -> int:
        """Calibration trials per dataset: all of them for :class:`Quantiles` (held), else the
        strategy's ``fraction`` of them, at most :data:`MAX_CALIBRATION_TRIALS`."""
        return self.strategy.held_trials(self.trials)

    def fingerprint(self) -> dict:
        """What a checkpoint of this plan records (see :mod:`dpclaims.checkpoint`)."""
        from ..checkpoint import fingerprint

        return {
            "method": self.method.name,
            "threshold": repr(self.strategy),
            "ci": self.criterion.ci,
            "confidence": self.confidence,
            "statistic": None if self.statistic is None else fingerprint(self.statistic),
            "claim": self.claim.to_dict(),
        }


def audit(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    claim: PrivacyClaim | None = None,
    *,
    trials: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    test: AuditTest = DEFAULT_TEST,
    neighbours: Neighbours | None = None,
    execution: Execution = DEFAULT_EXECUTION,
    reference: Reference = NO_REFERENCE,
) -> AuditResult:
    """Audit ``mechanism`` on neighbours ``d0``, ``d1`` against an (ε, δ) ``claim``.

    A thin driver over public steps: the trials are collected (:mod:`dpclaims.audit.collect`)
    and certified (:mod:`dpclaims.audit.certify`); the verdict weighs the bound against what
    the audit could have seen.  All options after ``claim`` are keyword-only and independent.

    Parameters
    ----------
    mechanism : ``mechanism(data, rng, trials) -> (trials, k)`` or ``(trials,)``;
        ``mechanism(data, rng) -> (k,)`` is accepted and looped.  Which one is read from
        the signature: a parameter named ``trials`` or not.  It must draw all randomness
        from ``rng`` (an error when ``execution.strict``, else a :class:`RuntimeWarning` and
        a note in ``warnings``) and must not write into its dataset (datasets are read-only);
        one with an ``audit_notes()`` method (an adapter that runs a description of the user's
        code, like :func:`dpclaims.torch.opacus_mechanism`) adds its notes to ``warnings``
    d0, d1 : whatever the mechanism takes.  Two ``UserDataset`` s must be neighbours
        under the claim's unit and relation, two numpy arrays (or numbers) too (rows are
        records, see :func:`dpclaims.data.check_array_neighbours`) unless ``neighbours``
        says otherwise, else :class:`NotNeighboursError`; other objects cannot be checked
        (a note in ``warnings``)
    claim : :class:`~dpclaims.PrivacyClaim`, e.g. ``PrivacyClaim(epsilon=1.0, delta=1e-5)``
        (unit and neighbour relation default to user/replace)
    trials : trials per dataset, at least :data:`MIN_TRIALS`
    confidence : probability that a certified ``epsilon_lower`` is a valid lower bound
    seed : one integer; d0 uses ``child_seed(seed, 0)``, d1 ``child_seed(seed, 1)``
        (the first calibration trials of each calibrate, the rest certify), score
        learning ``child_seed(seed, 2)``
    test : how the audit tests (:class:`AuditTest`: method, threshold strategy, statistic,
        interval, reach limit); at most :data:`MAX_CALIBRATION_TRIALS` calibration trials per
        dataset are used
    neighbours : :class:`Neighbours` for array datasets that are query answers
        (``relation="query"`` with a ``sensitivity``) or not checked (``"unchecked"``)
    execution : where and how the trials run (:class:`~dpclaims.execution.Execution`:
        backend, workers, checkpoint, chunk, progress, strict, max_seconds, max_memory); the
        result does not depend on it.  With a checkpoint folder finished chunks are saved
        there and an interrupted audit rerun with the same arguments resumes from them (see
        :mod:`dpclaims.checkpoint`); a run over the time and memory limits is refused with
        the largest trial count that fits
    reference : the exact ε of the mechanism on this pair, when known (:class:`Reference`),
        reported beside the bound

    Returns
    -------
    AuditResult
    """
    start = time.perf_counter()
    claim = _check_claim(claim)
    execution = check_execution(execution)
    test = _check_value(test, AuditTest, "test", "AuditTest(method='threshold')")
    reference = _check_value(reference, Reference, "reference", "Reference(epsilon=0.93)")
    if neighbours is not None:
        _check_value(neighbours, Neighbours, "neighbours", "Neighbours(relation='unchecked')")
    strict = strict_default(execution.strict)
    limits = execution.limits()
    plan = _plan(claim, trials=trials, confidence=confidence, seed=seed, test=test)
    d0, d1 = read_only(d0), read_only(d1)
    notes = _check_neighbours(d0, d1, claim, neighbours)
    streams = Streams(mechanism=as_batched(mechanism), d0=d0, d1=d1, seed=seed)
    plan = _replace(
        plan,
        strategy=plan.strategy.for_audit(
            plan.trials, lambda: _shape_probe(plan, streams), histogram=plan.method.histogram
        ),
    )
    layout = Layout(
        trials=plan.trials,
        calibration=plan.calibration_trials(),
        workers=resolve_workers(execution.workers),
        chunk=execution.chunk,
        checkpointed=execution.checkpoint is not None,
    )
    seed_0 = child_seed(seed, 0)
    same, first, seconds = first_block(
        streams.mechanism, d0, seed_0, min(layout.calibration, DETERMINISM_PROBE)
    )
    if not same:
        notes.append(ignores_rng(streams.mechanism, strict))
    identical = _identical_outputs(streams, min(plan.trials, IDENTITY_PROBE))
    _check_resources(
        streams, plan, layout, execution=execution, limits=limits, first=(first, seconds)
    )
    collector = Collector(
        streams=streams,
        layout=layout,
        execution=execution,
        progress=execution.progress,
        store=_open_store(execution.checkpoint, streams, plan, layout),
        probe=(streams.mechanism, d0, d1, test.statistic),
    )
    with collector:
        calibration = collector.calibration()
        discrete = _check_outputs(calibration, plan.method)
        certify = _certify_held if plan.strategy.held else _certify_split
        score, candidates, certificate = certify(plan, collector, calibration, discrete)
    provenance = Provenance(
        statistic=score.name,
        threshold=certificate.test.threshold,
        direction=certificate.direction,
        calibration_trials=plan.trials - certificate.certification_trials,
        calibration_fraction=plan.strategy.calibration_share(
            plan.trials, certificate.certification_trials
        ),
        threshold_strategy=plan.strategy.name,
        grid_size=certificate.grid,
        ci=plan.criterion.ci,
        ci_alpha=certificate.alpha,
        ci_tilt=certificate.test.tilt,
        seed=int(seed),
        output_dim=int(calibration.cal0.shape[1]),
        discrete=bool(discrete),
        candidates=candidates,
        tradeoff=certificate.tradeoff,
        wall_time=time.perf_counter() - start,
    )
    result = _result(
        plan,
        certificate,
        provenance,
        identical=identical,
        reference=reference,
        relation=neighbours.relation if neighbours is not None else claim.relation,
        notes=[*notes, *_mechanism_notes(mechanism)],
        reach_limit=test.reach_limit,
        reproducible=same,
    )
    return with_relation_hint(result)


def _mechanism_notes(mechanism: Callable) -> list[str]:
    """What the mechanism says about what was audited (its ``audit_notes()``, e.g. an adapter
    that runs a description of the user's code), read after the trials ran."""
    notes = getattr(mechanism, "audit_notes", None)
    return list(notes()) if callable(notes) else []


def audit_scores(
    s0: Any,
    s1: Any,
    claim: PrivacyClaim | None = None,
    *,
    confidence: float = 0.95,
    test: AuditTest = DEFAULT_TEST,
    reference: Reference = NO_REFERENCE,
) -> AuditResult:
    """Audit scores computed anywhere (JAX, TF, torch, a cluster job) against an (ε, δ) claim:
    the same :class:`AuditResult` as :func:`audit`, with its ceiling, reach and verdict.

    Parameters
    ----------
    s0, s1 : (n0,), (n1,) finite; one fixed score per independent training run without the
        canary (d0) and with it (d1).  The score must not have been chosen on these runs.
    claim, confidence, reference : as for :func:`audit`
    test : as for :func:`audit`, a threshold test (``method="threshold"``, no ``statistic``);
        its ``"auto"`` strategy certifies at order statistics of all scores
        (:class:`Quantiles`), a split strategy fixes its tests on the first ``fraction`` of
        each array

    The runs are the user's: ``trials`` is ``min(n0, n1)`` and nothing about the pair of
    datasets can be checked (a note in ``warnings``).
    """
    start = time.perf_counter()
    claim = _check_claim(claim)
    test = _check_value(test, AuditTest, "test", "AuditTest(threshold='quantiles')")
    reference = _check_value(reference, Reference, "reference", "Reference(epsilon=0.93)")
    if test.method != "threshold" or test.statistic is not None:
        raise InputError(
            "audit_scores certifies the scores given: pass test=AuditTest(threshold=..., ci=..., "
            f"reach_limit=...) without method or statistic, got method={test.method!r}"
        )
    s0 = check_finite_array(s0, "s0", ndim=1)
    s1 = check_finite_array(s1, "s1", ndim=1)
    trials = min(len(s0), len(s1))
    if trials < MIN_SCORES:
        raise InputError(
            f"audit_scores needs at least {MIN_SCORES} scores of each dataset, got {len(s0)} "
            f"(s0) and {len(s1)} (s1); one score per independent training run"
        )
    strategy = test.threshold.for_scores()  # a fixed score: Auto certifies on all runs
    if not strategy.held:
        strategy.check_calibration(trials)
    plan = AuditPlan(
        claim=claim,
        trials=trials,
        seed=0,
        method=test.behaviour,
        strategy=strategy,
        criterion=Criterion(delta=claim.delta, ci=test.ci, objective="epsilon"),
        confidence=check_confidence(confidence),
    )
    certificate = certify_scores(
        s0, s1, strategy=strategy, confidence=plan.confidence, criterion=plan.criterion
    )
    calibration = trials - certificate.certification_trials
    provenance = Provenance(
        statistic="user scores",
        threshold=certificate.test.threshold,
        direction=certificate.direction,
        calibration_trials=calibration,
        calibration_fraction=calibration / trials,
        threshold_strategy=strategy.name,
        grid_size=certificate.grid,
        ci=test.ci,
        ci_alpha=certificate.alpha,
        ci_tilt=certificate.test.tilt,
        seed=0,
        output_dim=1,
        discrete=bool(is_discrete(np.concatenate([s0, s1])[:, None])),
        tradeoff=certificate.tradeoff,
        wall_time=time.perf_counter() - start,
    )
    notes = [
        "scores given (audit_scores): the runs, the neighbouring pair and the score's choice "
        "before these runs are the caller's to vouch for"
    ]
    return _result(
        plan,
        certificate,
        provenance,
        identical="",
        reference=reference,
        relation=claim.relation,
        notes=notes,
        reach_limit=test.reach_limit,
    )


def _plan(
    claim: PrivacyClaim, *, trials: Any, confidence: Any, seed: int, test: AuditTest
) -> AuditPlan:
    """The validated :class:`AuditPlan` of ``audit``'s statistical arguments."""
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    method, strategy = test.behaviour, test.threshold
    strategy.check_calibration(trials)
    method.check(claim, test.statistic)
    return AuditPlan(
        claim=claim,
        trials=trials,
        seed=seed,
        method=method,
        strategy=strategy,
        criterion=Criterion(delta=claim.delta, ci=test.ci, objective=method.objective),
        confidence=check_confidence(confidence),
        statistic=test.statistic,
    )


def _shape_probe(plan: AuditPlan, streams: Streams) -> np.ndarray:
    """:data:`SHAPE_PROBE` outputs (SHAPE_PROBE, k) of ``d0`` drawn with their own seed (they
    never certify): what :class:`Auto` and :class:`Quantiles` read the width and ties from."""
    block = [(0, SHAPE_PROBE, 0, SHAPE_PROBE)]
    return run_blocks(streams.mechanism, streams.d0, child_seed(plan.seed, 3), block)


def _replace(plan: AuditPlan, **changes: Any) -> AuditPlan:
    from dataclasses import replace

    return replace(plan, **changes)


def _check_resources(streams, plan, layout, *, execution, limits, first) -> None:
    """Refuse a run over the time and memory ``limits``, estimated from a probe of ``d0``
    (``first``: the outputs and CPU seconds of the determinism check's block)."""
    outputs, seconds = first
    seed_0 = child_seed(plan.seed, 0)
    stand_in = np.linspace(-3.0, 3.0, TRADEOFF_POINTS + 2)  # counted, as certification does
    trials, workers = plan.trials, layout.workers
    long_run = refine_above(limits)

    def probe_call(n: int) -> np.ndarray:
        outputs = call_block(streams.mechanism, streams.d0, seed_0, index=0, size=n)
        return counts_above(outputs.sum(axis=1), stand_in)

    def kept(n: int) -> int:
        return Layout(trials=n, calibration=plan.strategy.held_trials(n)).held

    work = Workload(
        trials=trials,
        held=kept,
        workers=workers,
        parallel=execution.backend.parallel(workers),
        minimum=MIN_TRIALS,
        block=SEED_BLOCK,
        probe_trials=DETERMINISM_PROBE,
    )
    found = probe(probe_call, seconds, outputs.shape[1], work, long_run)
    check_budget(found, work, limits)


def _open_store(directory: Any, streams: Streams, plan: AuditPlan, layout: Layout) -> Any:
    """The checkpoint of this audit in ``directory`` (None: no checkpoint)."""
    if directory is None:
        return None
    from ..checkpoint import fingerprint, open_checkpoint

    cal_chunks, cert_chunks = layout.chunks()
    return open_checkpoint(
        directory,
        {
            "kind": "audit",
            "mechanism": fingerprint(streams.mechanism),
            "d0": fingerprint(streams.d0),
            "d1": fingerprint(streams.d1),
            "trials": plan.trials,
            "seed": int(plan.seed),
            "calibration_chunks": cal_chunks.layout,
            "certification_chunks": cert_chunks.layout,
            **plan.fingerprint(),
        },
    )


def _check_outputs(calibration: HeldOutputs, method: AuditMethod) -> bool:
    """Whether the calibration outputs are discrete; an error when the datasets' output widths
    differ or the ``method`` cannot certify them (histogram on continuous outputs)."""
    cal0, cal1 = calibration.cal0, calibration.cal1
    if cal0.shape[1] != cal1.shape[1]:
        raise InputError(
            f"the mechanism returned {cal0.shape[1]} columns on d0 but {cal1.shape[1]} on d1; "
            "outputs must have the same width"
        )
    discrete = is_discrete(np.concatenate([cal0, cal1]))
    method.check_outputs(discrete)
    return discrete


def _certify_split(
    plan: AuditPlan, collector: Collector, calibration: HeldOutputs, discrete: bool
) -> tuple[Score, dict, Certificate]:
    """:class:`Split` or :class:`Bonferroni`: learn the score and fix the tests on the
    calibration outputs, count the certifying trials on the workers, certify the counts."""
    cal0, cal1 = calibration.cal0, calibration.cal1
    n_cert = plan.trials - len(cal0)
    rng = np.random.default_rng(child_seed(plan.seed, 2))
    score, candidates = _learn(plan, (cal0, cal1), discrete=discrete, n_cert=n_cert, rng=rng)
    scores = (score(cal0), score(cal1))
    tests = fixed_tests(
        plan.strategy, scores, n_certify=n_cert, alpha=plan.alpha, criterion=plan.criterion
    )
    reducer = ScoreCounts(score, tests.thresholds, int(cal0.shape[1]))
    counts = collector.counts(reducer, (calibration.rest0, calibration.rest1))
    return score, candidates, tests.certify(counts, alpha=plan.alpha, criterion=plan.criterion)


def _certify_held(
    plan: AuditPlan, collector: Collector, calibration: HeldOutputs, discrete: bool
) -> tuple[Score, dict, Certificate]:
    """A held strategy (:class:`Quantiles`, :class:`Planned`) on all held outputs (trials, k).

    A fixed score (``statistic``, or the identity on 1-D outputs) certifies on every trial;
    a learned one is fitted on the first ``fraction`` (at most :data:`MAX_CALIBRATION_TRIALS`)
    trials, which then do not certify.
    """
    run0, run1 = calibration.cal0, calibration.cal1
    candidates, n_fit = {}, 0
    if plan.statistic is not None:
        score = _user_score(plan.statistic)
    elif plan.method.fixed_score(run0.shape[1]):
        score = fit_score("identity", run0, run1, None)
    else:
        n_fit = plan.strategy.calibration_size(len(run0))
        rng = np.random.default_rng(child_seed(plan.seed, 2))
        fit = (run0[:n_fit], run1[:n_fit])
        score, candidates = _learn(
            plan,
            fit,
            discrete=discrete,
            n_cert=len(run0) - n_fit,
            rng=rng,
            alpha=alpha_per_test(plan.confidence),
            held=True,
        )
    s0, s1 = score(run0[n_fit:]), score(run1[n_fit:])
    certificate = certify_quantile_scores(
        s0,
        s1,
        strategy=plan.strategy,
        confidence=plan.confidence,
        criterion=plan.criterion,
        oriented=score.oriented,
    )
    return score, candidates, certificate


def _user_score(statistic: Callable) -> Score:
    name = getattr(statistic, "__name__", type(statistic).__name__)
    return Score(f"user:{name}", lambda x: apply_statistic(statistic, x))


def _learn(
    plan: AuditPlan,
    calibration: tuple,
    *,
    discrete: bool,
    n_cert: int,
    rng,
    alpha: float | None = None,
    held: bool = False,
) -> tuple[Score, dict]:
    """The score: the user's ``statistic``, or the candidate fitted on half the
    ``calibration`` outputs ``(cal0, cal1)`` that predicts the largest value on the other half.

    Split strategies fit on the first half, predict on the second and keep that fit: their test
    is then fixed on the whole calibration split (by
    :func:`~dpclaims.audit.certify.fixed_tests`), a choice that also looks at the fitting half
    and so can only cost power, never validity, since certification uses other trials.
    ``held`` strategies (Auto's for continuous outputs without ties) also try the nonlinear
    candidates (``nonlinear`` of :func:`~dpclaims.audit.scores.candidate_scores`) and fix no
    test on the calibration split, so each candidate is cross-fitted (its two predictions,
    fitted on either half, averaged: less noise in the choice) and the first candidate (they
    come in order of parameters) the cross-fit cannot tell from the best (:func:`_within_noise`)
    is chosen and refitted on the whole split (twice the rows of either half's fit).
    Split strategies keep the cheap set: their outputs tie (a lattice, as the sparse vector's)
    or stream, where the spline and boosting fits cost more than they find.  Returns the
    :class:`Score` and ``{name: predicted value}`` for every candidate.
    """
    if plan.statistic is not None:
        return _user_score(plan.statistic), {}
    cal0, cal1 = calibration
    alpha = plan.alpha if alpha is None else alpha
    half = len(cal0) // 2
    folds = [(slice(None, half), slice(half, None))]
    if held:
        folds.append((slice(half, None), slice(None, half)))
    fitted, predicted = {}, {}
    for name in plan.method.candidates(cal0.shape[1], discrete, nonlinear=held):
        predictions = []
        for fit, other in folds:
            score = fit_score(name, cal0[fit], cal1[fit], rng)
            fitted.setdefault(name, score)
            choice = choose_threshold(
                score(cal0[other]),
                score(cal1[other]),
                n_certify=(n_cert, n_cert),
                alpha=alpha,
                criterion=plan.criterion,
            )
            predictions.append(choice.predicted)
        predicted[name] = predictions
    candidates = {name: float(np.mean(p)) for name, p in predicted.items()}
    if held:
        return fit_score(_within_noise(predicted), cal0, cal1, rng), candidates
    return fitted[max(candidates, key=candidates.get)], candidates  # the first of equals


def _within_noise(predicted: dict[str, list[float]]) -> str:
    """The first candidate of ``predicted`` (``{name: [prediction of the fit on either
    half]}``, fewest parameters first) whose mean prediction is within
    :data:`SELECTION_TOLERANCE` of the best mean or within the best one's standard error (of
    the mean of its two folds' predictions, ``|p1 - p2| / 2``), whichever is wider:
    cross-validation's one-standard-error rule (Breiman et al., *Classification and Regression
    Trees*, 1984; Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
    §7.10), the simplest model it cannot tell from the best.  Measured on the DP-SGD
    transcripts of ``benchmarks/bench_blackbox_llr.py`` (its 7 marginal halved-noise cells, 10
    seeds): 59 of the exact likelihood ratio's 62 ``violation``s, 54 with the tolerance alone."""
    means = {name: float(np.mean(p)) for name, p in predicted.items()}
    best = max(means, key=means.get)
    error = float(np.std(predicted[best], ddof=1) / np.sqrt(len(predicted[best])))
    margin = max(SELECTION_TOLERANCE * abs(means[best]), error)
    return next(name for name, value in means.items() if value >= means[best] - margin)


def _result(
    plan: AuditPlan,
    certificate: Certificate,
    provenance: Provenance,
    *,
    identical: str,
    reference: Reference,
    relation: str,
    notes: list,
    reach_limit: float = REACH_LIMIT,
    reproducible: bool = True,
) -> AuditResult:
    """The :class:`AuditResult`: the bound (or the GDP estimate), the ceiling, the reach, the
    verdict."""
    claim, test, ci = plan.claim, certificate.test, plan.criterion.ci
    n_cert, alpha = certificate.certification_trials, certificate.alpha
    eps_lower, mu = plan.method.bound(test, claim.delta)
    ceiling = _ceiling(n_cert, alpha, ci, claim.delta, certificate.tilts)
    near_ceiling = eps_lower > 0 and eps_lower >= ceiling - INFINITE_MARGIN
    fraction = provenance.calibration_fraction
    needed = _trials_needed(claim, test, ceiling=ceiling, alpha=alpha, ci=ci, fraction=fraction)
    found = reach(
        test,
        claim=claim.epsilon,
        delta=claim.delta,
        alpha=alpha,
        tradeoff=certificate.tradeoff,
        ci=ci,
        objective=plan.method.objective,
        ranks=plan.strategy.ranks(n_cert) if plan.strategy.held else None,
    )
    evidence = _Evidence(
        ceiling=ceiling,
        needed=needed,
        trials=plan.trials,
        identical=identical,
        probe=min(plan.trials, IDENTITY_PROBE),
        reference=reference.epsilon,
        reach=found,
        reach_limit=reach_limit,
    )
    verdict, reason = _verdict(
        float(eps_lower), claim.epsilon, evidence, certified=plan.method.certified
    )
    if plan.method.certified and reference.epsilon is not None and eps_lower > reference.epsilon:
        notes = [*notes, _above_reference(float(eps_lower), reference.epsilon, plan.confidence)]
    return AuditResult(
        verdict=verdict,
        reason=reason,
        epsilon_lower=float(eps_lower),
        epsilon=claim.epsilon,
        delta=claim.delta,
        unit=claim.unit,
        relation=relation,
        confidence=plan.confidence,
        method=plan.method.name,
        mu=mu,
        ceiling=ceiling,
        infinite=bool(test.false_positives == 0 and near_ceiling),
        identical_outputs=bool(identical),
        trials_needed=needed,
        reach=found,
        reference_epsilon=reference.epsilon,
        reference_note=reference.note,
        false_positives=test.false_positives,
        false_negatives=test.false_negatives,
        n_negative=test.n_negative,
        n_positive=test.n_positive,
        fpr_upper=test.fpr_upper,
        fnr_upper=test.fnr_upper,
        trials=plan.trials,
        certification_trials=n_cert,
        warnings=tuple(notes),
        reproducible=reproducible,
        provenance=provenance,
    )


def _above_reference(eps_lower: float, exact: float, confidence: float) -> str:
    """The note of a certified bound above the pair's stated exact ε: a correct reference allows
    it with probability at most ``1 - confidence``, so it more likely says the reference (or the
    mechanism) is not what its description says."""
    return (
        f"certified ε ≥ {eps_lower:.4g} is above this pair's stated exact ε {exact:.4g}; with a "
        f"correct exact ε that happens with probability ≤ {1 - confidence:.2g}: check the "
        "reference's derivation and the mechanism"
    )


@dataclass(frozen=True, kw_only=True)
class _Evidence:
    """What the verdict weighs beside the bound: the ``ceiling``, the ``needed`` trials, the
    ``trials`` run, identical data or outputs on ``probe`` draws, the ``reference`` ε, the
    audit's ``reach`` (the GDP estimate's under its own model) and the ``reach_limit`` of a
    ``consistent``."""

    ceiling: float
    needed: int | None
    trials: int
    identical: str
    probe: int
    reference: float | None
    reach: Reach | None = None
    reach_limit: float = REACH_LIMIT


def audit_ceiling(
    trials: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    threshold: str | ThresholdStrategy = "calibration",
    ci: str = "clopper-pearson",
) -> float:
    """The most :func:`audit` with a split strategy (:class:`Split` or :class:`Bonferroni`, or
    their names) can certify, known before running it.

    It bounds the bound of an error-free test on the certification split (see
    :func:`~dpclaims.audit.bounds.epsilon_ceiling`); a claim at or above it comes out
    ``inconclusive``, whatever the mechanism.  The audit's own ``ceiling``, that of the region
    its test ends up with, is at most this.
    """
    trials = check_trials(trials, "trials", minimum=MIN_TRIALS)
    strategy = strategy_named(threshold)
    tests = strategy.number_of_tests()
    if tests is None:
        raise InputError(
            f"audit_ceiling needs a split strategy (Split or Bonferroni), got {threshold!r}; "
            "the ceiling of the others depends on the outputs"
        )
    check_choice(ci, CI_METHODS, "ci")
    strategy.check_calibration(trials)
    n_cert = trials - strategy.calibration_size(trials)
    return epsilon_ceiling(n_cert, confidence=confidence, delta=delta, tests=tests)


def _ceiling(n_cert: int, alpha: float, ci: str, delta: float, tilts: tuple) -> float:
    """The largest bound of zero false positives and zero false negatives among ``n_cert``
    trials each, over the regions of the certified tests (``tilts``)."""
    return joint_ceiling(n_cert, alpha=alpha, delta=delta, ci=ci, tilts=tilts)


def _verdict(
    eps_lower: float, claimed: float, evidence: _Evidence, *, certified: bool = True
) -> tuple[Verdict, str]:
    """``(verdict, reason)``: a violation when the certified bound exceeds the claim (an
    uncertified estimate above it is ``inconclusive``); ``consistent`` only when the audit had
    power to see the claim and its reach (a multiple of the claim, :mod:`~dpclaims.audit.reach`)
    is within the limit, ``consistent_weak`` when it is not, else ``inconclusive`` with the
    reason."""
    if eps_lower > claimed and not certified:
        return Verdict.INCONCLUSIVE, (
            f"the Gaussian-DP estimate ε ≈ {eps_lower:.4g} exceeds the claim, but it assumes a "
            "Gaussian trade-off curve and is not certified: audit with method='threshold' to "
            "certify"
        )
    if eps_lower > claimed:
        return Verdict.VIOLATION, ""
    if claimed >= evidence.ceiling:
        return Verdict.INCONCLUSIVE, (
            f"this audit cannot reach ε = {claimed:g} with {evidence.trials:,} trials; "
            f"it needs about {evidence.needed:,}"
        )
    if evidence.identical == "data":
        return Verdict.INCONCLUSIVE, (
            "d0 and d1 are the same data: an audit needs two different neighbouring datasets"
        )
    if evidence.identical:
        return Verdict.INCONCLUSIVE, (
            f"d0 and d1 gave identical outputs on the same {evidence.probe} random "
            "draws: the mechanism does not see where they differ, so this pair "
            "cannot show any privacy loss"
        )
    if eps_lower <= 0:
        reason = (
            f"the audit separated nothing (certified ε ≥ 0), so it could not have seen "
            f"ε = {claimed:g}"
        )
        reference = evidence.reference
        if reference == 0:
            return Verdict.INCONCLUSIVE, reason + (
                "; the exact ε of this pair is 0, so it can only "
                "catch a bug that makes the pair distinguishable"
            )
        if reference is not None:
            return Verdict.INCONCLUSIVE, reason + (
                f"; the exact ε of this pair is {reference:.3g}: "
                "more trials, or a pair nearer the claim"
            )
        return Verdict.INCONCLUSIVE, reason + ": use a pair the mechanism separates, or more trials"
    found = evidence.reach
    if found is not None and not found.factor <= evidence.reach_limit:
        return Verdict.CONSISTENT_WEAK, weak_reason(found.factor, evidence.reach_limit)
    return Verdict.CONSISTENT, ""


def weak_reason(factor: float, limit: float) -> str:
    """The reason of a ``consistent_weak``: the reach ``factor`` (a multiple of the claim) above
    the reach ``limit``."""
    shown = f"a {factor:.3g}×" if math.isfinite(factor) else "no"
    return (
        f"would catch only {shown} violation of the audited ε (a mechanism leaking {limit:g}× "
        f"it on this pair would likely pass): more trials, or a stronger test"
    )


def _trials_needed(claim, cert, *, ceiling, alpha, ci, fraction) -> int | None:
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
    """The confidence whose :func:`alpha_per_test` is ``alpha`` (one test)."""
    return 1.0 - alpha


def _round_up(n: int) -> int:
    """``n`` rounded up to two significant digits (a suggested trial count)."""
    scale = 10 ** max(0, len(str(n)) - 2)
    return -(-n // scale) * scale


def _identical_outputs(streams: Streams, probe: int) -> str:
    """``"data"`` when ``d0`` and ``d1`` are the same data, ``"outputs"`` when the mechanism
    gives them identical outputs on the same ``probe`` random draws of d0's stream (it then
    ignores where they differ), else ""."""
    d0, d1 = streams.d0, streams.d1
    if d0 is d1 or same_data(d0, d1):
        return "data"
    block, seed = [(0, probe, 0, probe)], child_seed(streams.seed, 0)
    first = run_blocks(streams.mechanism, d0, seed, block)
    second = run_blocks(streams.mechanism, d1, seed, block)
    same = first.shape == second.shape and bool(np.array_equal(first, second, equal_nan=True))
    return "outputs" if same else ""


def same_data(d0, d1) -> bool:
    """Equal arrays, equal numbers, or ``UserDataset`` s with equal ``x`` and ``y``."""
    if isinstance(d0, UserDataset) and isinstance(d1, UserDataset):
        return (
            same_data(d0.x, d1.x)
            and (d0.y is None) == (d1.y is None)
            and (d0.y is None or same_data(d0.y, d1.y))
        )
    numeric = (np.ndarray, int, float, np.number)
    if isinstance(d0, numeric) and isinstance(d1, numeric) and not isinstance(d0, bool):
        a, b = np.asarray(d0), np.asarray(d1)
        return a.shape == b.shape and a.dtype.kind in "biuf" and bool(np.array_equal(a, b))
    return False


def _check_claim(claim: Any) -> PrivacyClaim:
    """``claim`` checked to be a :class:`PrivacyClaim`."""
    if claim is None:
        raise InputError(
            "pass the claim, e.g. audit(mechanism, d0, d1, PrivacyClaim(epsilon=1.0, delta=1e-5))"
        )
    if not isinstance(claim, PrivacyClaim):
        raise InputError(
            f"claim must be a dpclaims.PrivacyClaim, got {type(claim).__name__}; pass e.g. "
            "PrivacyClaim(epsilon=1.0, delta=1e-5)"
        )
    return claim


def _check_value(value: Any, kind: type, name: str, example: str) -> Any:
    """``value`` checked to be a ``kind``: an :class:`InputError` naming ``name`` else."""
    if not isinstance(value, kind):
        raise InputError(
            f"{name} must be a {kind.__module__.split('.')[0]}.{kind.__name__}, got "
            f"{type(value).__name__}; pass e.g. {name}={example}"
        )
    return value


def _check_neighbours(
    d0: Any, d1: Any, claim: PrivacyClaim, neighbours: Neighbours | None
) -> list[str]:
    """Raise :class:`NotNeighboursError` unless ``d0``, ``d1`` are neighbours under ``claim``
    (or as ``neighbours`` says, for arrays); return notes."""
    relation = None if neighbours is None else neighbours.relation
    sensitivity = None if neighbours is None else neighbours.sensitivity
    if isinstance(d0, DATASETS) and isinstance(d1, DATASETS):
        if neighbours is not None:
            raise InputError(
                f"neighbours=Neighbours(relation={relation!r}) is for array datasets; "
                "UserDatasets are checked under the claim's relation ('replace' or 'add-remove')"
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
                f"relation={claim.relation!r}: {found}; {'an' if claim.unit == Unit.ITEM else 'a'} "
                f"{claim.unit}-level claim needs "
                f"datasets differing in at most one {claim.unit}"
            )
        return []
    numeric = (np.ndarray, int, float, np.integer, np.floating)
    arrays = all(isinstance(d, numeric) for d in (d0, d1))
    if arrays and not any(isinstance(d, bool) for d in (d0, d1)):
        check_array_neighbours(d0, d1, relation or claim.relation, sensitivity)
        if relation == Relation.UNCHECKED:
            return ["the neighbour relation of d0 and d1 was not checked (relation='unchecked')"]
        return []
    if sensitivity is not None or relation == Relation.QUERY:
        raise InputError(
            "relation='query' and sensitivity= are for numpy-array datasets (query answers)"
        )
    kinds = f"{type(d0).__name__} and {type(d1).__name__}"
    return [
        f"d0 and d1 are {kinds}: their neighbour relation cannot be checked; "
        "make sure they are neighbours"
    ]
