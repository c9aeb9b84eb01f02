"""``dpclaims report RESULTS``: re-render a report from a saved results.json; also the summary
that ``verify`` prints of the report it wrote."""

from __future__ import annotations

import argparse
import dataclasses

from ..vocabulary import Verdict
from .common import print_json

__all__ = ["add_parser", "report_summary", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report",
        help="re-render a report from a saved results.json, without rerunning anything",
        description="Write report.md, report.html and figures/ to --out from a results.json "
        "that 'dpclaims verify' wrote; no experiment runs. Exit code as verify's: 1 when any "
        "claim is a violation, inconsistent or an error.",
    )
    p.add_argument("results", help="a results.json written by 'dpclaims verify'")
    p.add_argument(
        "--out", default="dpclaims-report", help="report directory (default dpclaims-report)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a report directory dpclaims wrote (never any other folder)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes drawing the figures (default: all cores)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..reports import write_report
    from ..results import read_results

    results = read_results(args.results)
    paths = write_report(results, args.out, force=args.force, workers=args.workers)
    report_summary(results, paths, args.json)
    return results.exit_code()


def report_summary(results, paths: dict, as_json: bool) -> None:
    from ..reports.text import VERDICT_LABELS, counts_line

    if as_json:
        print_json(
            {
                "files": {name: str(path) for name, path in paths.items()},
                "counts": results.counts,
                "load_errors": [dataclasses.asdict(e) for e in results.load_errors],
                "exit_code": results.exit_code(),
                "wall_time": results.wall_time,
                "claims": [
                    {"id": e.id, "paper": e.paper, "kind": e.kind, "verdict": e.verdict,
                     "summary": e.summary}
                    for e in results.claims
                ],
            }
        )  # fmt: skip
        return
    unchecked = (Verdict.NOT_CHECKABLE, Verdict.NOT_IMPLEMENTED)
    shown = [e for e in results.claims if e.verdict not in unchecked]
    if shown:
        width = max(len(e.id) for e in shown)
        print(f"{'claim':<{width}}  {'verdict':<13}  key figure")
        for e in shown:
            print(f"{e.id:<{width}}  {VERDICT_LABELS[e.verdict]:<13}  {e.key_figure()}")
    for failure in results.load_errors:
        print(f"warning: check module {failure.module} failed to import: {failure.error}")
    print(f"{counts_line(results)} ({results.wall_time:.1f} s)")
    print(f"report: {paths['report.html']} (also report.md, results.json, figures/)")
