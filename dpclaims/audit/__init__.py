"""Privacy auditing: neighbouring-dataset distinguishing tests → certified ε lower bounds.

``audit`` runs a mechanism many times on two neighbouring datasets (collecting,
:mod:`.collect`), learns a test on a calibration split and certifies it on the rest
(certifying, :mod:`.certify`: usable alone on scores or counts computed anywhere;
``audit_scores`` gives such scores the whole :class:`AuditResult`, ``audit_one_run_scores``
the one-run bounds);
``one_run_audit`` / ``one_run`` implement the one-training-run audit of Steinke, Nasr and
Jagielski (2023), with the Gaussian-DP bound of Mahloujifar et al. (2024) and the full-ranking
bound for independent canaries (:mod:`.one_run_rank`) beside it, each stating its assumption.
``percall`` makes a library function that releases once per call an audited mechanism
(:mod:`.percall`); ``audit_sequential`` stops on a schedule of looks as soon as the answer is
known (:mod:`.sequential`).
"""

from dpclaims.gdp import gdp_delta, gdp_epsilon, gdp_mu, gdp_mu_of
from dpclaims.target import AuditTarget

from .bounds import (
    CI_METHODS,
    alpha_per_test,
    epsilon_ceiling,
    epsilon_from_counts,
    epsilon_from_rates,
    joint_levels,
    rate_upper,
    trials_for_epsilon,
    trials_to_certify,
)
from .certify import Certificate, certify_fixed, certify_scores
from .collect import Collector
from .core import (
    DEFAULT_CALIBRATION_FRACTION,
    METHODS,
    MIN_TRIALS,
    THRESHOLD_STRATEGIES,
    AuditPlan,
    audit,
    audit_ceiling,
    audit_scores,
)
from .methods import AuditMethod, Gdp, Histogram, Threshold
from .one_run import (
    ASSUMPTIONS,
    GUESS_FRACTIONS,
    OneRunAudit,
    OneRunResult,
    audit_one_run_scores,
    one_run,
    one_run_audit,
    one_run_epsilon,
    one_run_gdp_epsilon,
    one_run_gdp_mu,
    one_run_gdp_rejects,
    one_run_p_value,
)
from .one_run_family import SubsampledGaussian
from .options import AuditTest, Neighbours, Reference
from .percall import SEED_TYPES, PerCall, percall
from .relation import relation_hint
from .replay import ReplayResult, replay
from .result import AuditResult, Provenance
from .sequential import audit_sequential, schedule
from .threshold import (
    Auto,
    Bonferroni,
    Counts,
    Criterion,
    Planned,
    PlannedTest,
    Quantiles,
    Split,
    ThresholdStrategy,
    plan_quantile_tests,
    predicted_epsilon,
    predicted_power,
)

__all__ = [
    "audit",
    "AuditTest",
    "Neighbours",
    "Reference",
    "AuditMethod",
    "Threshold",
    "Histogram",
    "Gdp",
    "ThresholdStrategy",
    "audit_ceiling",
    "audit_scores",
    "AuditPlan",
    "AuditResult",
    "AuditTarget",
    "Provenance",
    "certify_scores",
    "certify_fixed",
    "Certificate",
    "Collector",
    "Counts",
    "Criterion",
    "METHODS",
    "THRESHOLD_STRATEGIES",
    "CI_METHODS",
    "MIN_TRIALS",
    "DEFAULT_CALIBRATION_FRACTION",
    "rate_upper",
    "epsilon_from_rates",
    "epsilon_from_counts",
    "alpha_per_test",
    "joint_levels",
    "epsilon_ceiling",
    "trials_for_epsilon",
    "trials_to_certify",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "gdp_mu_of",
    "one_run",
    "one_run_audit",
    "SubsampledGaussian",
    "one_run_p_value",
    "one_run_epsilon",
    "OneRunResult",
    "OneRunAudit",
    "audit_one_run_scores",
    "one_run_gdp_rejects",
    "one_run_gdp_mu",
    "one_run_gdp_epsilon",
    "ASSUMPTIONS",
    "GUESS_FRACTIONS",
    "replay",
    "ReplayResult",
    "Auto",
    "Bonferroni",
    "Quantiles",
    "Planned",
    "PlannedTest",
    "plan_quantile_tests",
    "predicted_epsilon",
    "predicted_power",
    "Split",
    "percall",
    "PerCall",
    "SEED_TYPES",
    "audit_sequential",
    "schedule",
    "relation_hint",
]
