"""The mutant corpus as a benchmark: every privacy mutant through the registry audit for it.

:func:`kill_matrix` builds each registered privacy mutant
(:mod:`dpclaims.targets.mutants`), audits it with the statistical settings (trials,
method, confidence) of the registry audit of its algorithm at the chosen budget, and
records the certified ε, the verdict and the seconds.  A mutant is *killed* when the
audit says ``violation`` (its certified lower bound exceeds the claimed ε).  Mutants
whose ``build()`` returns an algorithm object rather than an audit setup are caught by
white-box checks (named in their ``caught_by``); they are listed, not audited.

A paper plugin's mutants are registered when its experiments module is imported, each naming
its audit (:attr:`~dpclaims.targets.mutants.Mutant.audit`); :func:`kill_matrix` imports the
experiments modules of the selected plugin papers first (:func:`import_plugin_mutants`).

The mutation score is the fraction of the audited privacy mutants that are killed.  The
generic textbook mutants have no registry claim; their audit is the built-in target of
the correct mechanism (``catalog:NAME``) with :data:`CATALOG_TRIALS` trials.  The real-bug
corpus (``corpus="real"``, :mod:`dpclaims.targets.realbugs`) is audited on each bug's crafted
pair (``realbug:NAME``) with the bug's own trials (× :data:`REAL_BUDGET_FACTOR`) and method.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dpclaims.target import AuditTarget

from ..errors import InputError, check_choice
from ..execution import DEFAULT_EXECUTION, Execution, check_execution
from ..results.mutants import KILL_MATRIX_HEADER, MutationSummary, killed_by
from ..vocabulary import Verdict
from .experiments import BUDGETS

__all__ = [
    "AUDIT_OF",
    "audit_of",
    "import_plugin_mutants",
    "CATALOG_TRIALS",
    "kill_matrix",
    "audit_settings",
    "killed_by",
    "KILL_MATRIX_HEADER",
    "kill_matrix_lines",
    "kill_matrix_cells",
    "kill_matrix_notes",
]

CATALOG_TRIALS = {"quick": 20_000, "standard": 200_000, "full": 1_000_000}
"""Trials per dataset of the ``catalog:`` audits of the generic mutants, by budget."""

REAL_BUDGET_FACTOR = {"quick": 1, "standard": 10, "full": 50}
"""A real bug's crafted-pair audit runs ``trials × factor`` trials per dataset."""

CORPUS_CHOICES = ("papers", "real", "all")

AUDIT_OF = {
    # generic textbook mechanisms: the built-in target of the correct mechanism
    "gaussian-half-noise": "catalog:gaussian",
    "gaussian-item-noise": "catalog:gaussian",
    "laplace-half-scale": "catalog:laplace",
    "noisy-max-value": "catalog:noisy-max",
    "dp-sgd-no-clip": "catalog:dp-sgd",
    # DIFF2 (Murata & Suzuki 2023)
    "diff2-m1-unscaled-diff-radius": "diff2gd.prop41.rdp_to_dp",
    "diff2-m2-restarts-not-composed": "diff2gd.prop41.rdp_to_dp",
    "diff2-m3-add-remove-sensitivity": "diff2gd.prop41.rdp_to_dp",
    "diff2-m5-noiseless-accumulation": "diff2gd.prop41.rdp_to_dp",
    "diff2-m4-mean-silo-size": "diff2gd.prop41.rdp_to_dp",
    # Accelerated DP-SRGD (Choquette-Choo et al. 2024): blank-canary audit of the tree mechanism
    "cgt24-m1-independent-prefix-noise": "cgt24.tree.gdp",
    "cgt24-m2-no-clip": "cgt24.tree.gdp",
    "cgt24-m3-printed-sigma": "cgt24.tree.gdp",
    "cgt24-m4-fresh-yz-noise": "cgt24.tree.gdp",
    "cgt24-m5-cross-batch-difference": "cgt24.tree.gdp",
    "cgt24-m8-leaf-sum": "cgt24.tree.gdp",
    # Ghazi et al. 2023
    "ghazi23-m1-no-stability-test": "ghazi23.thm33.deloutputpert_dp",
    "ghazi23-m2-fixed-threshold": "ghazi23.thm33.deloutputpert_dp",
    "ghazi23-m6-tdlap-at-zero": "ghazi23.thm33.deloutputpert_dp",
    "ghazi23-m3-fast-no-fallback": "ghazi23.appC.fast_equivalence",
    "ghazi23-m4-sigma-no-8kappa": "ghazi23.thm31.scoutputpert_dp",
    "ghazi23-item-level-as-user": "ghazi23.thm31.scoutputpert_dp",
    "ghazi23-m5-phased-sco-reuse-users": "ghazi23.thm51.phased_sco_dp",
    "ghazi23-phased-erm-full-budget": "ghazi23.thm41.phased_erm_dp",
    # pure-DP heavy tails (Lowy 2026)
    "heavy-tailed-m1-no-tau": "lowy26.privacy.double_output_pert",
    "heavy-tailed-m2-stage2-full-eps": "lowy26.privacy.double_output_pert",
    "heavy-tailed-m3-no-extension": "lowy26.privacy.double_output_pert",
    "heavy-tailed-m6-data-dependent-C": "lowy26.privacy.double_output_pert",
    "heavy-tailed-m4-radius-exp": "lowy26.privacy.structured",
    "heavy-tailed-m5-coordwise-laplace": "lowy26.privacy.structured",
    "heavy-tailed-m7-phase-reuse": "lowy26.privacy.main",
    # Lowy, Liu & Asi 2024: Algorithm 2 runs inside Algorithm 3
    "lla24-m1-alg1-no-filter": "lla24.alg1.privacy",
    "lla24-m2-alg1-item-sigma": "lla24.alg1.privacy",
    "lla24-m3a-alg1-unnormalised-score": "lla24.alg1.privacy",
    "lla24-m3b-alg1-no-test": "lla24.alg1.privacy",
    "lla24-m3c-alg1-laplace-2": "lla24.alg1.privacy",
    "lla24-m4-alg1-reuse-users": "lla24.alg1.privacy",
    "lla24-m5-alg1-leaky-halt": "lla24.alg1.privacy",
    "lla24-m1-alg2-no-filter": "lla24.alg3.privacy",
    "lla24-m2-alg2-item-sigma": "lla24.alg3.privacy",
    "lla24-m3a-alg2-unnormalised-score": "lla24.alg3.privacy",
    "lla24-m5-alg2-leaky-halt": "lla24.alg3.privacy",
    "lla24-m3d-alg2-threshold-per-step": "lla24.alg2.abovethreshold",
}
"""Privacy mutant -> the registry audit (claim id, or ``catalog:TARGET``) meant to catch it."""


def audit_of(mutant: Any) -> str | None:
    """The registry audit meant to catch ``mutant``: :data:`AUDIT_OF`, else its own ``audit``."""
    return AUDIT_OF.get(mutant.name) or getattr(mutant, "audit", None)


def import_plugin_mutants(papers: Sequence[str] | None = None) -> dict[str, str]:
    """Import the experiments modules of the installed plugin papers (of ``papers``, or all), which
    register their mutants; the packaged papers' mutants are registered by
    :mod:`dpclaims.targets.mutants` itself.  Returns ``{module: error}`` for modules that
    failed to import (their mutants are then missing)."""
    from .experiments import import_experiments
    from .registry import _default

    chosen = [
        paper
        for paper in _default().papers.values()
        if paper.source != "dpclaims" and (papers is None or paper.id in papers)
    ]
    return import_experiments(chosen)


def audit_settings(audit_id: str, budget: str) -> dict:
    """``{"trials", "confidence", "test"}`` of the registry audit ``audit_id`` at ``budget``:
    keywords of :func:`~dpclaims.audit.audit` (``test`` an :class:`~dpclaims.audit.AuditTest`
    with the audit's method).

    A claim checked by several experiments uses its first audit part.
    """
    check_choice(budget, BUDGETS, "budget")
    return _settings(audit_id, budget)


def _settings(audit_id: str, budget: str) -> dict:
    from ..audit import AuditTest

    trials, method, confidence = _audit_size(audit_id, budget)
    return {"trials": trials, "confidence": confidence, "test": AuditTest(method=method)}


def _audit_size(audit_id: str, budget: str) -> tuple[int, str, float]:
    """``(trials, method, confidence)`` of the registry audit ``audit_id`` at ``budget``."""
    if audit_id.startswith("realbug:"):
        from ..targets.realbugs import get_bug

        bug = get_bug(audit_id.removeprefix("realbug:"))
        trials = bug.trials * REAL_BUDGET_FACTOR[budget]
        return trials, bug.method, 0.95
    if audit_id.startswith("catalog:"):
        return CATALOG_TRIALS[budget], "threshold", 0.95
    from . import experiment as experiment_of
    from . import get
    from .standard import AuditExperiment, CombinedExperiment

    experiment = experiment_of(get(audit_id), budget)
    parts = (
        list(experiment.parts.values())
        if isinstance(experiment, CombinedExperiment)
        else [experiment]
    )
    audits = [p for p in parts if isinstance(p, AuditExperiment)]
    if not audits:  # a value check (white-box invariant): the registry default audit size
        return CATALOG_TRIALS[budget], "threshold", 0.95
    first = audits[0]
    return first.trials, first.method, first.confidence


def _audit_target(built: Any) -> AuditTarget | None:
    """``built`` as the :class:`AuditTarget` to audit, or None when it is an algorithm object
    (checked white-box)."""
    return built if isinstance(built, AuditTarget) else None


def _true(eps: float | None) -> float | str | None:
    return "inf" if eps is not None and math.isinf(eps) else eps


def kill_matrix(
    papers: str | Sequence[str] | None = None,
    budget: str = "quick",
    seed: int = 0,
    *,
    names: Sequence[str] | None = None,
    after: Callable[[dict], None] | None = None,
    execution: Execution = DEFAULT_EXECUTION,
    corpus: str = "papers",
) -> dict:
    """Run every registered privacy mutant (of ``papers``, or in ``names``) through its audit.

    ``papers`` is one paper id (``"generic"`` for the textbook mechanisms; a library such as
    ``"opacus"`` for the real bugs), several, or None (all).  ``corpus`` picks the papers'
    mutants (``"papers"``, the default), the real-bug reproductions (``"real"``) or ``"all"``.
    The audits run where ``execution`` says, each mutant checkpointing into its own subfolder
    of a checkpoint folder.

    Returns
    -------
    ``{"budget", "mutation_score", "audited", "killed", "privacy_mutants", "matrix": [row, ...],
    "audits": {audit id: {"kills": [...], "survivors": [...], "white_box": [...]}}}``; each row
    has ``mutant``, ``paper``, ``audit``, ``true_epsilon``, ``claimed_epsilon``,
    ``epsilon_lower``, ``verdict`` (the audit's, or ``"not audited"``), ``killed``,
    ``seconds``, ``trials`` and ``caught_by``.  ``mutation_score`` is None when nothing was
    audited.
    """
    from dpclaims.targets.mutants import list_mutants

    from ..audit import audit

    check_choice(budget, BUDGETS, "budget")
    check_choice(corpus, CORPUS_CHOICES, "corpus")
    check_execution(execution)
    wanted = [papers] if isinstance(papers, str) else papers
    import_plugin_mutants(wanted)
    mutants = [
        m
        for m in list_mutants(kind="privacy", corpus=None if corpus == "all" else corpus)
        if wanted is None or m.paper in wanted
    ]
    if wanted is not None and not mutants:
        known = sorted({m.paper for m in list_mutants(kind="privacy")})
        raise InputError(
            f"no privacy mutant of paper(s) {', '.join(wanted)}; "
            f"papers with mutants: {', '.join(known)}"
        )
    if names is not None:
        unknown = sorted(set(names) - {m.name for m in mutants})
        if unknown:
            raise InputError(
                f"unknown privacy mutant(s) {', '.join(unknown)}; see dpclaims.targets.mutants"
            )
        mutants = [m for m in mutants if m.name in set(names)]
    rows = []
    for mutant in mutants:
        audit_id = audit_of(mutant)
        if audit_id is None:
            raise InputError(
                f"privacy mutant {mutant.name!r} names no registry audit; add it to AUDIT_OF "
                "(or, for a plugin's mutant, pass Mutant(audit=CLAIM_ID))"
            )
        start = time.perf_counter()
        target = _audit_target(mutant.build())
        row = {
            "mutant": mutant.name,
            "paper": mutant.paper,
            "audit": audit_id,
            "true_epsilon": _true(mutant.true_epsilon),
            "caught_by": mutant.caught_by,
            "corpus": getattr(mutant, "corpus", "papers"),
        }
        if target is None:
            row.update(
                claimed_epsilon=None,
                epsilon_lower=None,
                verdict="not audited",
                killed=False,
                trials=0,
            )
        else:
            settings = audit_settings(audit_id, budget)
            options = {**settings, **(getattr(mutant, "audit_options", None) or {})}
            result = audit(
                target.mechanism,
                target.d0,
                target.d1,
                target.claim,
                seed=seed,
                execution=execution.narrowed(mutant.name),
                **options,
            )
            row.update(
                claimed_epsilon=target.claim.epsilon,
                epsilon_lower=_true(result.epsilon_lower),
                verdict=result.verdict,
                killed=result.verdict == Verdict.VIOLATION,
                trials=settings["trials"],
            )
        row["seconds"] = time.perf_counter() - start
        rows.append(row)
        if after is not None:
            after(row)
    audited = [r for r in rows if r["verdict"] != "not audited"]
    killed = sum(r["killed"] for r in audited)
    return {
        "budget": budget,
        "mutation_score": killed / len(audited) if audited else None,
        "privacy_mutants": len(rows),
        "audited": len(audited),
        "killed": killed,
        "matrix": rows,
        "audits": killed_by(rows),
    }


def kill_matrix_cells(report: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """One tuple of display strings per mutant (:meth:`MutationSummary.cells`)."""
    return MutationSummary.from_json(report).cells()


def kill_matrix_notes(report: Mapping[str, Any]) -> list[str]:
    """The score, then per audit the mutants it kills (:meth:`MutationSummary.notes`)."""
    return MutationSummary.from_json(report).notes()


def kill_matrix_lines(report: Mapping[str, Any]) -> list[str]:
    """The kill matrix as a plain-text table, then its notes (:meth:`MutationSummary.lines`)."""
    return MutationSummary.from_json(report).lines()
