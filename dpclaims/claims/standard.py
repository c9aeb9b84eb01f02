"""The three kinds of experiment every paper's checks are built from.

- :class:`AuditExperiment`: a privacy claim, audited on a neighbouring pair
  (verdict ``consistent`` / ``violation`` from :func:`dpclaims.audit.audit`).
- :class:`RateExperiment`: an exponent claim, checked by a sweep, a power-law fit
  and a test in the claim's direction (``consistent`` / ``inconsistent`` / ``inconclusive``);
  :meth:`RateExperiment.for_claim` reads exponent, bound and margin from the registry.
- :class:`ValueExperiment`: a formula, calibration or white-box invariant, computed
  and compared with the paper's value, or checked against a one-sided bound
  (``consistent`` / ``inconsistent``).
- :class:`CombinedExperiment`: several of these for one claim; the worst verdict wins.

Each ``run(*, seed=0, execution=Execution())`` (the
:class:`~dpclaims.claims.experiments.Experiment` protocol; ``execution`` says where trials
run, and its ``checkpoint`` is a folder this experiment alone writes to) returns an
:class:`~dpclaims.results.Outcome`: type, verdict, one-line summary and typed evidence
(:class:`~dpclaims.results.AuditEvidence`, :class:`~dpclaims.results.RateEvidence`,
:class:`~dpclaims.results.ValueEvidence`, :class:`~dpclaims.results.CombinedEvidence`), built
here from what the experiment measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..execution import Execution
from ..results import (
    CombinedEvidence,
    Outcome,
    RateEvidence,
    ValueEvidence,
    read_outcome,
    to_jsonable,
)
from ..verdicts import Verdict, worst
from ..vocabulary import Bound

if TYPE_CHECKING:
    from dpclaims.target import AuditTarget

__all__ = [
    "DEFAULT_EXECUTION",
    "AuditExperiment",
    "RateExperiment",
    "ValueExperiment",
    "CombinedExperiment",
]

DEFAULT_EXECUTION = Execution()
"""``Execution()``: the default of every ``run`` (frozen, so one shared value is safe)."""


@dataclass(frozen=True)
class AuditExperiment:
    """Audit ``build() -> AuditTarget`` with ``trials`` runs per dataset.

    ``build`` is called at run time, so constructing the experiment is cheap.
    ``reference_epsilon`` is what an exact implementation should reach (a spec's
    §7(a) value), reported beside the certified bound and the audit's ceiling; it does
    not change the verdict.  ``reference_note`` says where it comes from, or why there
    is none (every packaged audit gives one or the other).  ``bound`` names the target's
    (ε, δ) when it is not the paper's claim as stated, e.g. ``"derived bound, not the
    paper's"`` or ``"the paper's eq. (9)"``: reports print it in place of "claimed".
    """

    build: Callable[[], AuditTarget]
    trials: int
    method: str = "threshold"
    confidence: float = 0.95
    reference_epsilon: float | None = None
    note: str = ""
    reference_note: str = ""
    bound: str = ""

    def run(self, *, seed: int = 0, execution: Execution = DEFAULT_EXECUTION) -> Outcome:
        from dpclaims.target import AuditTarget

        from ..audit import AuditTest, Reference, audit

        target = self.build()
        if not isinstance(target, AuditTarget):
            raise InputError(
                f"the audit builder {getattr(self.build, '__qualname__', self.build)!r} returned "
                f"{type(target).__name__}; return an AuditTarget(mechanism=, d0=, d1=, claim=)"
            )
        claim = target.claim
        result = audit(
            target.mechanism,
            target.d0,
            target.d1,
            claim,
            trials=self.trials,
            confidence=self.confidence,
            seed=seed,
            test=AuditTest(method=self.method),
            execution=replace(execution, progress=False),
            reference=Reference(epsilon=self.reference_epsilon, note=self.reference_note),
        )
        evidence = result.evidence(self.note, bound=self.bound)
        return Outcome("audit", result.verdict, evidence.headline(), evidence)


@dataclass(frozen=True)
class RateExperiment:
    """Sweep ``experiment(value, rng, **fixed) -> error`` over ``values`` and test the exponent.

    ``experiment`` must be picklable (a module-level function or a dataclass instance)
    for the process backend.  ``method`` is ``"logs"`` or ``"mom"`` (median of means,
    for heavy-tailed errors).  ``expected``, ``margin``, ``bound`` and ``limit`` go to
    :func:`~dpclaims.rates.check_exponent`; a registry claim's experiment is built with
    :meth:`for_claim`, which reads them from the claim and keeps the claim's
    :class:`~dpclaims.claims.model.RateClaim` in ``stated`` (printed in the summary).
    ``baseline`` names a trivial output (a
    :class:`~dpclaims.rates.caveats.Baseline`, e.g. the initial point): where the sweep does
    no better, or where its local slopes drift, an ``inconsistent`` verdict becomes
    ``inconclusive`` with the reason (:func:`~dpclaims.rates.caveats.sweep_caveats`).

    Every verdict comes with its controls and exponent reach (:mod:`dpclaims.rates.controls`):
    ``trivial`` is the trivial algorithm (the constant output or initial point the paper's
    algorithm starts from): a callable ``trivial(value, rng, **fixed) -> error`` swept like
    ``experiment`` on the same seeds, or a :class:`~dpclaims.rates.caveats.Baseline`; without
    one the ``baseline`` serves.  A ``consistent`` verdict stays so only when the trivial
    control comes out ``inconsistent`` and the reach is at most ``reach_limit`` (default
    :data:`~dpclaims.rates.reach.REACH_LIMIT`), else it is
    ``consistent_weak`` with the reason; a sweep whose replicates have zero spread (a
    deterministic schedule) is ``formula`` where it would be ``consistent``.
    """

    experiment: Callable
    param: str
    values: Sequence[float]
    expected: float
    replicates: int = 10
    margin: float = 0.1
    fixed: Mapping[str, Any] = field(default_factory=dict)
    method: str = "logs"
    note: str = ""
    bound: str = "order"
    limit: str = "large"
    stated: Any = None
    baseline: Any = None
    trivial: Any = None
    reach_limit: float = 0.25

    @classmethod
    def for_claim(
        cls,
        claim: Any,
        experiment: Callable,
        param: str,
        values: Sequence[float],
        *,
        variable: str | None = None,
        at: Mapping[str, float] | None = None,
        **options: Any,
    ) -> RateExperiment:
        """The sweep of ``param`` testing ``claim``'s exponent of ``variable`` (default ``param``).

        ``at`` evaluates a symbolic exponent (e.g. ``{"k": 4}``); ``options`` are the other
        fields (``replicates``, ``fixed``, ``method``, ``note``).  Exponent, bound, margin
        and limit come from :meth:`Claim.rate <dpclaims.claims.model.Claim.rate>`.
        """
        rate = claim.rate(variable or param, **dict(at or {}))
        return cls(
            experiment,
            param,
            values,
            rate.exponent,
            margin=rate.margin,
            bound=rate.bound,
            limit=rate.limit,
            stated=rate,
            **options,
        )

    def run(self, *, seed: int = 0, execution: Execution = DEFAULT_EXECUTION) -> Outcome:
        from ..rates import check_exponent, fit_power_law, sweep
        from ..rates.caveats import apply_caveats, sweep_caveats
        from ..rates.controls import DETERMINISTIC, deterministic

        result = sweep(
            self.experiment,
            param=self.param,
            values=list(self.values),
            replicates=self.replicates,
            seed=seed,
            fixed=dict(self.fixed),
            execution=execution,
        )
        fit = fit_power_law(result.values, result.errors, method=self.method, seed=seed)
        check = check_exponent(
            fit, self.expected, margin=self.margin, bound=self.bound, limit=self.limit
        )
        low, high = check.interval
        claimed = (
            self.stated.describe()
            if self.stated is not None
            else f"claimed {self.expected:g} ± {self.margin:g} ({self.bound})"
        )
        relation = (
            "" if check.direction == "indistinguishable" else f"; {check.direction} than claimed"
        )
        summary = (
            f"exponent in {self.param}: {fit.exponent:.3f}, 90% CI [{low:.3f}, {high:.3f}] "
            f"vs {claimed}{relation}"
        )
        tested = check.to_dict()
        if self.stated is not None:
            tested["claimed"] = self.stated.stated + (
                f", tested as exponent {self.expected:g}" if self.stated.tested else ""
            )
        evidence = {
            "sweep": to_jsonable(result.to_dict()),
            "fit": to_jsonable(fit.to_dict()),
            "check": to_jsonable(tested),
            "note": self.note,
            "claim": None if self.stated is None else to_jsonable(self.stated.to_dict()),
        }
        band = (self.expected - self.margin, self.expected + self.margin)
        caveats = sweep_caveats(
            fit, result.values, result.errors, baseline=self.baseline, band=band
        )
        verdict = apply_caveats(check.verdict, caveats)
        evidence["caveats"] = tuple(caveats)
        if self.baseline is not None:
            evidence["baseline"] = to_jsonable(self.baseline.to_dict(result.values))
        if verdict != check.verdict:
            summary += f"; inconclusive, {'; '.join(caveats)}"
        if deterministic(result.errors):
            evidence["deterministic"] = True
            if verdict == Verdict.CONSISTENT:
                verdict = Verdict.FORMULA
                summary += f"; formula: {DETERMINISTIC}"
            return Outcome("rate", verdict, summary, RateEvidence(**evidence))
        verdict, weak = self._strength(result, verdict, seed, execution, evidence)
        if weak:
            summary += f"; {verdict}: {weak}"
        return Outcome("rate", verdict, summary, RateEvidence(**evidence))

    def _strength(
        self, result: Any, verdict: str, seed: int, execution: Execution, evidence: dict
    ) -> tuple[str, str]:
        """The controls and exponent reach of the sweep ``result`` (recorded in ``evidence``),
        and ``(verdict, reason)``: ``consistent_weak`` with the reason where they fall short."""
        from ..rates.controls import strength
        from ..rates.reach import exponent_reach

        test = {
            "expected": self.expected,
            "margin": self.margin,
            "bound": self.bound,
            "limit": self.limit,
            "method": self.method,
            "seed": seed,
        }
        controls = (self._trivial_control(result, test, execution), _wrong_rate(result, test))
        reach = exponent_reach(
            result.values,
            result.errors,
            margin=self.margin,
            bound=self.bound,
            limit=self.limit,
            method=self.method,
            reach_limit=self.reach_limit,
            seed=seed,
        )
        evidence["controls"] = to_jsonable({c.name: c.to_dict() for c in controls})
        evidence["reach"] = to_jsonable(reach.to_dict())
        verdict, weak = strength(verdict, bound=self.bound, trivial=controls[0], reach=reach)
        evidence["weak"] = weak
        return verdict, weak

    def _trivial_control(self, result: Any, test: dict, execution: Execution) -> Any:
        """The test applied to the trivial algorithm (not applicable to a lower bound)."""
        from ..rates import sweep
        from ..rates.caveats import Baseline
        from ..rates.controls import NO_TRIVIAL, NOT_APPLICABLE, run_control, unavailable

        trivial = self.trivial if self.trivial is not None else self.baseline
        if self.bound == Bound.LOWER:
            return unavailable("trivial", "trivial output", NOT_APPLICABLE)
        if trivial is None:
            return unavailable("trivial", "trivial output", NO_TRIVIAL)
        if isinstance(trivial, Baseline):
            what = trivial.name
            errors = np.repeat(trivial.at(result.values)[:, None], result.replicates, axis=1)
        else:
            what = getattr(trivial, "__qualname__", type(trivial).__name__)
            errors = sweep(
                trivial,
                param=self.param,
                values=list(self.values),
                replicates=self.replicates,
                seed=test["seed"],
                fixed=dict(self.fixed),
                execution=execution.narrowed("trivial"),
            ).errors
        try:
            return run_control("trivial", what, result.values, errors, **test)
        except InputError as exc:  # e.g. a zero error: no power law to fit
            return unavailable("trivial", what, f"not fitted: {exc}")


def _wrong_rate(result: Any, test: dict) -> Any:
    """The test applied to the measured errors times the swept variable to the power ±0.25."""
    from ..rates.controls import run_control, wrong_rate_errors

    errors, power = wrong_rate_errors(
        result.values, result.errors, bound=test["bound"], limit=test["limit"]
    )
    what = f"the measured error × {result.param}{power}"
    return run_control("wrong_rate", what, result.values, errors, **test)


def _within(
    measured: Any, expected: float, *, rtol: float, atol: float, relation: str = "=="
) -> tuple[bool, dict]:
    """Compare a measured value with ``expected`` under ``relation`` (``==``, ``<=`` or ``>=``).

    ``==``: a point value must match within tolerance, ``(estimate, low, high)`` must cover
    ``expected``.  ``<=`` (``>=``): a point value must be at most (at least) ``expected`` up to
    ``atol``; an interval passes unless it lies wholly above (below) ``expected``.
    """
    if isinstance(measured, (tuple, list)):
        estimate, low, high = (float(v) for v in measured)
        ok = {
            "==": low - atol <= expected <= high + atol,
            "<=": low - atol <= expected,
            ">=": high + atol >= expected,
        }[relation]
        detail = {"estimate": estimate, "low": low, "high": high}
    else:
        value = float(measured)
        ok = {
            "==": math.isclose(value, expected, rel_tol=rtol, abs_tol=atol),
            "<=": value <= expected + atol,
            ">=": value >= expected - atol,
        }[relation]
        detail = {"value": value}
    key = {"==": "expected", "<=": "le", ">=": "ge"}[relation]
    return ok, {**detail, key: expected}


@dataclass(frozen=True)
class ValueExperiment:
    """Compare ``compute(rng) -> {name: value or (estimate, low, high)}`` with the paper's values.

    ``expected``: a point value passes when it matches within ``rtol``/``atol``; an interval
    passes when it covers the expected value (widened by ``atol``).  ``le`` / ``ge``: one-sided
    bounds; a point value passes when it is at most / at least the bound (up to ``atol``), an
    interval unless it lies wholly above / below it.  Every named quantity must be computed.
    ``transcription``: the quantities are the toolkit's own formulas evaluated (a constant, a
    bound's exponents, a step count), so a match checks a transcription of the paper, not an
    algorithm's behaviour: the verdict is ``formula`` (``inconsistent`` on a mismatch).
    """

    compute: Callable[[np.random.Generator], Mapping[str, Any]]
    expected: Mapping[str, float] = field(default_factory=dict)
    rtol: float = 1e-6
    atol: float = 0.0
    note: str = ""
    le: Mapping[str, float] = field(default_factory=dict)
    ge: Mapping[str, float] = field(default_factory=dict)
    transcription: bool = False

    def run(self, *, seed: int = 0, execution: Execution = DEFAULT_EXECUTION) -> Outcome:
        """Compute and compare (serially: value checks are small; ``execution`` is unused)."""
        measured = self.compute(np.random.default_rng(seed))
        tables = (("==", self.expected), ("<=", self.le), (">=", self.ge))
        wanted = [
            (name, value, relation) for relation, table in tables for name, value in table.items()
        ]
        missing = sorted({name for name, _, _ in wanted} - set(measured))
        if missing:
            raise InputError(f"the computation did not return the expected quantities {missing}")
        checks = {}
        for name, bound, relation in wanted:
            ok, detail = _within(
                measured[name], float(bound), rtol=self.rtol, atol=self.atol, relation=relation
            )
            checks[name] = {**detail, "ok": ok}
        failed = [name for name, c in checks.items() if not c["ok"]]
        matched = Verdict.FORMULA if self.transcription else Verdict.CONSISTENT
        verdict = Verdict.INCONSISTENT if failed else matched
        summary = f"{len(checks) - len(failed)}/{len(checks)} quantities match" + (
            f"; off: {', '.join(failed)}" if failed else ""
        )
        evidence = ValueEvidence(checks=checks, rtol=self.rtol, atol=self.atol, note=self.note)
        return Outcome("value", verdict, summary, evidence)


@dataclass(frozen=True)
class CombinedExperiment:
    """Several experiments checking one claim together; the verdict is the worst of theirs
    (:data:`dpclaims.verdicts.SEVERITY`).  Evidence: ``{"parts": {name: outcome}}``."""

    parts: Mapping[str, Any]
    note: str = ""

    def run(self, *, seed: int = 0, execution: Execution = DEFAULT_EXECUTION) -> Outcome:
        results = {
            name: read_outcome(
                part.run(seed=seed, execution=execution.narrowed(name)), f"part {name!r}"
            )
            for name, part in self.parts.items()
        }
        verdict = worst(r.verdict for r in results.values())
        types = {r.type for r in results.values()}
        summary = "; ".join(f"{name}: {r.verdict} ({r.summary})" for name, r in results.items())
        evidence = CombinedEvidence(results, self.note)
        return Outcome(types.pop() if len(types) == 1 else "rate", verdict, summary, evidence)
