"""``dpclaims mutants``: every privacy mutant through its registry audit, the kill matrix and
the mutation score."""

from __future__ import annotations

import argparse

from ..vocabulary import BUDGETS
from .common import add_paper_option, add_run_options, execution_of, print_json, split, words

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "mutants",
        help="run every privacy mutant through its registry audit: kill matrix and mutation score",
        description="Run each known-buggy variant (mutant) of the selected papers through the "
        "audit of the claim it breaks, and print which audits catch which mutants (the kill "
        "matrix) and the share caught (the mutation score).",
    )
    add_paper_option(p, "whose mutants run (default: all); also generic, or a library: opacus, ...")
    p.add_argument(
        "--corpus",
        default="papers",
        choices=("papers", "real", "all"),
        help="the papers' mutants (default), the real-bug reproductions, or both",
    )
    p.add_argument("--budget", default="quick", choices=words(BUDGETS), help="default quick")
    add_run_options(p)
    p.add_argument(
        "--json", action="store_true", help="machine-readable output: mutation_score and matrix"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..claims.mutation import kill_matrix, kill_matrix_lines

    report = kill_matrix(
        papers=split(args.paper) or None,
        budget=args.budget,
        seed=args.seed,
        execution=execution_of(args),
        corpus=args.corpus,
    )
    if args.json:
        print_json(report)
    else:
        print("\n".join(kill_matrix_lines(report)))
    return 0
