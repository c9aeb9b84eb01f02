"""``dpclaims verify``: check every selected claim by experiment and write the report."""

from __future__ import annotations

import argparse
import sys

from ..vocabulary import BUDGETS
from .common import (
    add_paper_option,
    add_registry_option,
    add_run_options,
    execution_of,
    registry_of,
    split,
    words,
)
from .report import report_summary

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="check every selected claim by experiment and write the report",
        description="Run the experiments of the selected claims and write results.json, "
        "report.md, report.html and figures/ to --out. Exit code 1 when any claim is a "
        "violation or inconsistent (a finding "
        "about the paper, or a bug) or its experiment failed.",
    )
    add_paper_option(p, "(default: all; see 'dpclaims list')")
    add_registry_option(p)
    p.add_argument(
        "--claims", help="comma-separated claim ids or globs, e.g. 'diff2gd.*' (default: all)"
    )
    p.add_argument(
        "--budget",
        default="quick",
        choices=words(BUDGETS),
        help="experiment size: quick (default, minutes), standard (under an hour), full",
    )
    p.add_argument(
        "--out", default="dpclaims-report", help="report directory (default dpclaims-report)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a report directory dpclaims wrote (never any other folder)",
    )
    add_run_options(p)
    p.add_argument(
        "--claim-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time limit of each claim (its experiment, and its experiments module's import); "
        "a claim over it is an error and the run goes on (default: no limit)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--mutants",
        action="store_true",
        help="also run the selected papers' privacy mutants through their audits "
        "(kill matrix in results.json and the report)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dpclaims.atomic import check_output_dir, output_lock

    from ..claims.run import select_claims

    papers, patterns = split(args.paper), split(args.claims)
    registry = registry_of(args)
    selected = select_claims(papers, patterns, registry=registry)
    if args.claim_timeout is not None:
        from ..timelimit import check_time_limit

        check_time_limit(args.claim_timeout, "--claim-timeout")
    execution = execution_of(args)
    check_output_dir(args.out, args.force)
    with output_lock(args.out):  # another run into --out refuses before it starts
        return _verify(args, selected=selected, execution=execution)


def _verify(args: argparse.Namespace, *, selected, execution) -> int:
    """``dpclaims verify`` once its arguments are checked and --out is locked."""
    from ..claims.run import run_claims
    from ..reports import write_report

    papers, patterns = split(args.paper), split(args.claims)
    with _progress(len(selected), args.quiet) as bar:
        results = run_claims(
            selected,
            budget=args.budget,
            seed=args.seed,
            execution=execution,
            papers=papers,
            patterns=patterns,
            claim_timeout=args.claim_timeout,
            before=lambda claim: bar.set_postfix_str(claim.id, refresh=True),
            after=lambda entry: bar.update(1),
        )
    if args.mutants:
        from ..claims.mutation import kill_matrix

        results = results.with_mutants(
            kill_matrix(
                papers=papers or None,
                budget=args.budget,
                seed=args.seed,
                execution=execution.narrowed("mutants"),
            )
        )
    paths = write_report(results, args.out, force=args.force, workers=args.workers)
    report_summary(results, paths, args.json)
    return results.exit_code()


def _progress(total: int, quiet: bool):
    """A tqdm bar on stderr, disabled with --quiet or when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        file=sys.stderr,
        unit="claim",
        desc="verify",
        dynamic_ncols=True,
        disable=quiet or not sys.stderr.isatty(),
    )
