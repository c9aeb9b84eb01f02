"""Audit setups: what to audit, as which adversary, with which canary and statistic.

One module per audited algorithm family (:mod:`dpclaims.targets.dpsgd`); each builds
:class:`~dpclaims.target.AuditTarget` values whose statistic is fixed before any
certifying trial is seen.  Setups sit above ``algorithms`` and ``audit``: they import both,
and neither imports them.
"""

from .dpsgd import (
    THREAT_MODELS,
    ThreatModel,
    canary_data,
    dpsgd_target,
    optimal_limit,
    transcript_target,
)

__all__ = [
    "THREAT_MODELS",
    "ThreatModel",
    "canary_data",
    "dpsgd_target",
    "optimal_limit",
    "transcript_target",
]
