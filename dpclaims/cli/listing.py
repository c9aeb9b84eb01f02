"""``dpclaims list``: the claims registry as a table (reads the claims files only)."""

from __future__ import annotations

import argparse

from .common import add_paper_option, add_registry_option, print_json, registry_of, split

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "list",
        help="the claims registry as a table",
        description="List the claims of the packaged papers, the installed plugins and the "
        "--registry folders: id, paper, kind and whether an experiment checks it. Reads the "
        "claims files only; no experiments module is imported.",
    )
    add_paper_option(p, "(default: all), e.g. murata-suzuki-2023")
    add_registry_option(p)
    p.add_argument(
        "--kind", help="only this kind (privacy, excess_risk, utility, complexity, lower_bound)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..claims import status

    registry = registry_of(args)
    papers = split(args.paper)
    for paper in papers:  # an unknown id is an error that lists the known ones
        registry.select(paper=paper)
    selected = [c for c in registry.select(kind=args.kind) if not papers or c.paper in papers]
    statuses = [status(c) for c in selected]
    if args.json:
        print_json(
            [
                {**c.to_dict(), "checkable": text.startswith("checkable"), "status": text}
                for c, text in zip(selected, statuses, strict=True)
            ]
        )
        return 0
    width = max((len(c.id) for c in selected), default=2)
    paper_width = max((len(c.paper) for c in selected), default=5)
    print(f"{'id':<{width}}  {'paper':<{paper_width}}  {'kind':<12}  status")
    for c, text in zip(selected, statuses, strict=True):
        print(f"{c.id:<{width}}  {c.paper:<{paper_width}}  {c.kind:<12}  {text}")
    print(f"{len(selected)} claim{'' if len(selected) == 1 else 's'}")
    return 0
