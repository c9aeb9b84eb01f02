"""The three kinds of experiment every paper's checks are built from.

- :class:`AuditExperiment`: a privacy claim, audited on a neighbouring pair
  (verdict ``consistent`` / ``violation`` from :func:`dpclaims.audit.audit`).
- :class:`RateExperiment`: an exponent claim, checked by a sweep, a power-law fit
  and an equivalence test (``consistent`` / ``inconsistent`` / ``inconclusive``).
- :class:`ValueExperiment`: a formula, calibration or white-box invariant, computed
  and compared with the paper's value (``consistent`` / ``inconsistent``).
- :class:`CombinedExperiment`: several of these for one claim; the worst verdict wins.

Each ``run(seed, backend, workers, scheduler=None, checkpoint=None)`` returns the same
JSON-ready shape (``scheduler`` is a Dask address; ``checkpoint`` a folder this
experiment alone writes to)::

    {"type": "audit" | "rate" | "value", "verdict": ..., "summary": "one line", "evidence": {...}}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InputError

__all__ = ["AuditExperiment", "RateExperiment", "ValueExperiment", "CombinedExperiment"]


@dataclass(frozen=True)
class AuditExperiment:
    """Audit ``build() -> (mechanism, d0, d1, claim)`` with ``trials`` runs per dataset.

    ``build`` is called at run time, so constructing the experiment is cheap.
    ``reference_epsilon`` is what an exact implementation should reach (a spec's
    §7(a) value), reported beside the certified bound and the audit's ceiling; it does
    not change the verdict.  ``reference_note`` says where it comes from, or why there
    is none (every packaged audit gives one or the other).
    """

    build: Callable[[], tuple[Any, Any, Any, Any]]
    trials: int
    method: str = "threshold"
    confidence: float = 0.95
    reference_epsilon: float | None = None
    note: str = ""
    reference_note: str = ""

    def run(self, seed: int = 0, backend: str = "auto", workers: int | None = None,
            scheduler: str | None = None, checkpoint: str | None = None) -> dict:
        from ..audit import audit

        mechanism, d0, d1, claim = self.build()
        result = audit(mechanism, d0, d1, claim=claim, trials=self.trials, confidence=self.confidence,
                       seed=seed, method=self.method, backend=backend, workers=workers,
                       scheduler=scheduler, checkpoint=checkpoint,
                       reference_epsilon=self.reference_epsilon,
                       reference_note=self.reference_note, progress=False)
        label = "certified" if result.certified else "estimated (not certified)"
        summary = (f"{label} eps >= {result.epsilon_lower:.3f} vs claimed {claim.epsilon:g} "
                   f"(ceiling {result.ceiling:.2f}")
        if self.reference_epsilon is not None:
            summary += f", exact implementation: ~{self.reference_epsilon:g}"
        summary += ")" + (f"; {result.reason}" if result.reason else "")
        if result.infinite:
            summary += f"; {result.infinite_message}"
        evidence = {**result.to_dict(), "note": self.note}
        return {"type": "audit", "verdict": result.verdict, "summary": summary, "evidence": evidence}


@dataclass(frozen=True)
class RateExperiment:
    """Sweep ``experiment(value, rng, **fixed) -> error`` over ``values`` and test the exponent.

    ``experiment`` must be picklable (a module-level function or a dataclass instance)
    for the process backend.  ``method`` is ``"logs"`` or ``"mom"`` (median of means,
    for heavy-tailed errors).
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

    def run(self, seed: int = 0, backend: str = "auto", workers: int | None = None,
            scheduler: str | None = None, checkpoint: str | None = None) -> dict:
        from ..rates import check_exponent, fit_power_law, sweep

        result = sweep(self.experiment, param=self.param, values=list(self.values), replicates=self.replicates,
                       seed=seed, fixed=dict(self.fixed), backend=backend, workers=workers,
                       scheduler=scheduler, checkpoint=checkpoint)
        fit = fit_power_law(result.values, result.errors, method=self.method, seed=seed)
        check = check_exponent(fit, self.expected, margin=self.margin)
        low, high = check.interval
        summary = (f"exponent in {self.param}: {fit.exponent:.3f}, 90% CI [{low:.3f}, {high:.3f}] "
                   f"vs claimed {self.expected:g} ± {self.margin:g}")
        evidence = {"sweep": result.to_dict(), "fit": fit.to_dict(), "check": check.to_dict(), "note": self.note}
        return {"type": "rate", "verdict": check.verdict, "summary": summary, "evidence": evidence}


def _within(measured: Any, expected: float, rtol: float, atol: float) -> tuple[bool, dict]:
    """Point values must match within tolerance; ``(estimate, low, high)`` must cover ``expected``."""
    if isinstance(measured, (tuple, list)):
        estimate, low, high = (float(v) for v in measured)
        ok = low - atol <= expected <= high + atol
        return ok, {"estimate": estimate, "low": low, "high": high, "expected": expected}
    value = float(measured)
    ok = math.isclose(value, expected, rel_tol=rtol, abs_tol=atol)
    return ok, {"value": value, "expected": expected}


@dataclass(frozen=True)
class ValueExperiment:
    """Compare ``compute(rng) -> {name: value or (estimate, low, high)}`` with ``expected``.

    A point value passes when it matches within ``rtol``/``atol``; an interval passes
    when it covers the expected value (widened by ``atol``).  Every expected name must
    be computed.
    """

    compute: Callable[[np.random.Generator], Mapping[str, Any]]
    expected: Mapping[str, float]
    rtol: float = 1e-6
    atol: float = 0.0
    note: str = ""

    def run(self, seed: int = 0, backend: str = "auto", workers: int | None = None,
            scheduler: str | None = None, checkpoint: str | None = None) -> dict:
        """Compute and compare (serially: value checks are small; the execution options are accepted and unused)."""
        measured = self.compute(np.random.default_rng(seed))
        missing = sorted(set(self.expected) - set(measured))
        if missing:
            raise InputError(f"the computation did not return the expected quantities {missing}")
        checks = {}
        for name, expected in self.expected.items():
            ok, detail = _within(measured[name], float(expected), self.rtol, self.atol)
            checks[name] = {**detail, "ok": ok}
        failed = [name for name, c in checks.items() if not c["ok"]]
        verdict = "inconsistent" if failed else "consistent"
        summary = f"{len(checks) - len(failed)}/{len(checks)} quantities match" + (f"; off: {', '.join(failed)}" if failed else "")
        evidence = {"checks": checks, "rtol": self.rtol, "atol": self.atol, "note": self.note}
        return {"type": "value", "verdict": verdict, "summary": summary, "evidence": evidence}


_SEVERITY = ("consistent", "inconclusive", "inconsistent", "violation")


@dataclass(frozen=True)
class CombinedExperiment:
    """Several experiments checking one claim together; the verdict is the worst of theirs
    (violation > inconsistent > inconclusive > consistent).  Evidence: ``{"parts": {name: result}}``."""

    parts: Mapping[str, Any]
    note: str = ""

    def run(self, seed: int = 0, backend: str = "auto", workers: int | None = None,
            scheduler: str | None = None, checkpoint: str | None = None) -> dict:
        results = {
            name: part.run(seed=seed, backend=backend, workers=workers, scheduler=scheduler,
                           checkpoint=None if checkpoint is None else str(Path(checkpoint) / name))
            for name, part in self.parts.items()
        }
        verdict = max((r["verdict"] for r in results.values()), key=_SEVERITY.index)
        types = {r["type"] for r in results.values()}
        summary = "; ".join(f"{name}: {r['verdict']} ({r['summary']})" for name, r in results.items())
        return {"type": types.pop() if len(types) == 1 else "rate", "verdict": verdict, "summary": summary,
                "evidence": {"parts": results, "note": self.note}}
