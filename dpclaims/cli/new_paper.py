"""``dpclaims new-paper ID [DIR]``: write a working paper plugin to start from."""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "new-paper",
        help="write a working paper plugin (claims TOML, experiments module, test) to start from",
        description="Write DIR/claims.toml (one privacy and one rate claim), the experiments "
        "module it names and a pytest test. 'dpclaims verify --registry DIR' runs it as "
        "written; then replace the mechanism, the error function and the claims with yours.",
    )
    p.add_argument("id", help="the paper id, e.g. smith-2025 (letters, digits, - _ .)")
    p.add_argument("dir", nargs="?", help="a new or empty folder (default: ./ID)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..claims.skeleton import write_skeleton

    written = write_skeleton(args.id, args.dir)
    folder = written[0].parent
    for path in written:
        print(f"wrote {path}")
    print(f"next: dpclaims verify --registry {folder} --papers {args.id} --out {folder}/report")
    print(f"      python -m pytest {folder}")
    return 0
