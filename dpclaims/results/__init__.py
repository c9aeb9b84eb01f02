"""The results document, below both the runner and the renderers.

:class:`Results` is one run: its settings and environment, one :class:`ClaimResult` per claim
(verdict, summary, typed evidence: :class:`AuditEvidence`, :class:`RateEvidence`,
:class:`ValueEvidence`, :class:`CombinedEvidence`, a plugin's :class:`RecordEvidence`), the
tests made and the kill matrix (:class:`MutationSummary`) when mutants ran.
:func:`dpclaims.claims.run.run_claims` builds it; :mod:`dpclaims.reports` renders it;
``results.json`` is its ``to_json()`` (one codec, :mod:`.codec`, derived from the dataclasses'
fields), in the format of :mod:`.schema` (version :data:`SCHEMA_VERSION`), read back by
:func:`load_results`.

This package imports nothing from the claims or reports layers.
"""

from .document import (
    FINDINGS,
    ClaimResult,
    Confirmation,
    Environment,
    LoadError,
    Multiplicity,
    PaperTitle,
    Results,
    Settings,
    multiplicity,
    read_outcome,
)
from .evidence import (
    AuditCounts,
    AuditEvidence,
    AuditTestRecord,
    CombinedEvidence,
    Evidence,
    Outcome,
    RateEvidence,
    ReachRecord,
    RecordEvidence,
    ReferenceRecord,
    ValueEvidence,
)
from .files import MAX_RESULTS_BYTES, dumps_results, exit_code, load_results, read_results
from .jsonable import to_jsonable
from .mutants import KILL_MATRIX_HEADER, MutationSummary, killed_by
from .schema import (
    CHECKED_VERDICTS,
    FAILING_VERDICTS,
    SCHEMA,
    SCHEMA_VERSION,
    VERDICTS,
    ResultsError,
    validate_experiment_result,
    validate_results,
)

__all__ = [
    "AuditCounts",
    "AuditEvidence",
    "AuditTestRecord",
    "CHECKED_VERDICTS",
    "ClaimResult",
    "CombinedEvidence",
    "Confirmation",
    "Environment",
    "Evidence",
    "FAILING_VERDICTS",
    "FINDINGS",
    "KILL_MATRIX_HEADER",
    "LoadError",
    "MAX_RESULTS_BYTES",
    "Multiplicity",
    "MutationSummary",
    "Outcome",
    "PaperTitle",
    "RateEvidence",
    "ReachRecord",
    "RecordEvidence",
    "ReferenceRecord",
    "Results",
    "ResultsError",
    "Settings",
    "SCHEMA",
    "SCHEMA_VERSION",
    "VERDICTS",
    "ValueEvidence",
    "dumps_results",
    "exit_code",
    "killed_by",
    "load_results",
    "multiplicity",
    "read_outcome",
    "read_results",
    "to_jsonable",
    "validate_experiment_result",
    "validate_results",
]
