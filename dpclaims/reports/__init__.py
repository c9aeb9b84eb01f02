"""Reports: render a results document: ``results.json``, ``report.md``, ``report.html``, figures.

The document (:class:`dpclaims.results.Results`) comes from
:func:`dpclaims.claims.run.run_claims` (running claims is the claims layer's job) or from a
saved ``results.json`` (:func:`load_results`).  Nothing here imports the claims layer.

>>> from dpclaims.claims.run import run_claims, select_claims            # doctest: +SKIP
>>> from dpclaims.reports import write_report
>>> results = run_claims(select_claims(patterns=["diff2gd.*"]), budget="quick")
>>> write_report(results, "dpclaims-report")
"""

from dpclaims.atomic import write_atomic

from ..results import (
    SCHEMA,
    SCHEMA_VERSION,
    VERDICTS,
    ResultsError,
    dumps_results,
    exit_code,
    load_results,
    validate_results,
)
from .writer import REPORT_FILES, write_report

__all__ = [
    "REPORT_FILES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "VERDICTS",
    "ResultsError",
    "dumps_results",
    "exit_code",
    "load_results",
    "validate_results",
    "write_atomic",
    "write_report",
]
