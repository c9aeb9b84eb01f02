"""Reports: run the selected claims, write ``results.json``, ``report.md``, ``report.html`` and figures.

>>> from dpclaims.reports import select_claims, run_claims, write_report     # doctest: +SKIP
>>> results = run_claims(select_claims(patterns=["diff2gd.*"]), budget="quick")
>>> write_report(results, "dpclaims-report")
"""

from .atomic import write_atomic
from .results import (
    claim_seed,
    dumps_results,
    exit_code,
    load_results,
    run_claim,
    run_claims,
    select_claims,
)
from .schema import SCHEMA, SCHEMA_VERSION, VERDICTS, ResultsError, validate_results
from .writer import REPORT_FILES, write_report

__all__ = [
    "REPORT_FILES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "VERDICTS",
    "ResultsError",
    "claim_seed",
    "dumps_results",
    "exit_code",
    "load_results",
    "run_claim",
    "run_claims",
    "select_claims",
    "validate_results",
    "write_atomic",
    "write_report",
]
