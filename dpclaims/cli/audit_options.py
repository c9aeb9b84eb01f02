"""The options of ``dpclaims audit`` and the modes that read them: an option set to other
than its default in a mode that does not read it is refused in one line
(:func:`check_mode`), never silently ignored."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .common import Parser, add_run_options

__all__ = ["MODES", "add_arguments", "check_mode"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments and options of ``dpclaims audit``."""
    p.add_argument(
        "mechanism",
        nargs="?",
        default=None,
        help="built-in name (see 'dpclaims audit --help'), or your own 'module:function' "
        "(found from the current folder) or 'path/to/file.py:function'; none with --scores",
    )
    p.add_argument(
        "--scores",
        default=None,
        help="audit scores computed anywhere instead of a mechanism: an .npz with arrays s0, s1 "
        "(one score per run without / with the canary) or scores, included (one run's canaries)",
    )
    p.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon (default 1)")
    p.add_argument(
        "--delta", type=float, default=1e-5, help="claimed delta (default 1e-5; 0 for pure DP)"
    )
    p.add_argument(
        "--trials", type=int, default=200_000, help="mechanism runs per dataset (default 200000)"
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence of the lower bound (default 0.95)",
    )
    p.add_argument(
        "--unit",
        default=None,
        help="unit of privacy: user or item (default: item for dp-sgd*, else user)",
    )
    p.add_argument(
        "--relation",
        default=None,
        help="neighbour relation: replace or add-remove (default: add-remove for dp-sgd*, else "
        "replace); for array datasets also query (with --sensitivity) or unchecked",
    )
    p.add_argument(
        "--sensitivity",
        type=float,
        default=None,
        help="l1 sensitivity of the query, with --relation query",
    )
    p.add_argument(
        "--threat-model",
        default=None,
        help="dp-sgd*: what the adversary sees, all-iterates (every noisy update, as the "
        "accountant assumes; default) or final (the last model, black box)",
    )
    p.add_argument(
        "--canary",
        default=None,
        help="dp-sgd*: gradient (a fixed gradient, the worst case of clipping; default) or input "
        "(a crafted example)",
    )
    p.add_argument(
        "--method", default="threshold", help="threshold (default), histogram, or gdp (an estimate)"
    )
    add_run_options(p, seed_help="seed of the trials (default 0)")
    p.add_argument(
        "--d0", help=".npz file (arrays x, optional y) with the first dataset, for a user mechanism"
    )
    p.add_argument("--d1", help=".npz file with the neighbouring dataset, for a user mechanism")
    p.add_argument(
        "--search",
        action="store_true",
        help="search canary pairs around --d0 (replacing the user where --d1 "
        "differs), then certify the best on fresh trials",
    )
    p.add_argument(
        "--derived",
        action="store_true",
        help="with --search and --relation replace: also screen pairs on a smaller dataset "
        "derived from --d0 (say so when the claim holds for every dataset size; add-remove "
        "screens them always)",
    )
    p.add_argument(
        "--save-pair",
        metavar="DIR",
        default=None,
        help="write the audited pair (with --search: the pair found) as DIR/d0.npz and "
        "DIR/d1.npz (x, y), to reproduce with --d0/--d1; a non-empty DIR needs --force",
    )
    p.add_argument(
        "--replay",
        nargs="?",
        type=int,
        const=1000,
        default=None,
        metavar="N",
        help="coupled replay: run d0 and d1 on the same random stream N times (default 1000) "
        "and report identical outputs, a certain infinite epsilon (output widths differ), a "
        "point mass's epsilon bound at --confidence or a realised sensitivity above the "
        "declared one; no certificate of privacy (with --search: of the pair found)",
    )
    p.add_argument(
        "--fixed-trials",
        action="store_true",
        help="run exactly --trials trials per dataset, even for a per-call function "
        "'module:function(data, rng)' (default for those: sequential looks from 500 trials, "
        "doubling up to --trials, stopping at the first that decides; with --search, screens "
        "from 500 trials that stop once one shows a violation, then those looks)",
    )
    p.add_argument(
        "--reference",
        type=float,
        default=None,
        help="the exact epsilon of the mechanism on this pair, when known (shown beside the bound)",
    )
    p.add_argument(
        "--figure", default=None, help="write the trade-off figure (PNG, log axes) to this path"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --figure file, or the d0.npz/d1.npz of --save-pair DIR",
    )
    p.add_argument(
        "--strict",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a mechanism that ignores its rng is an error (default: on when CI=true)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="refuse runs estimated longer (default 86400)",
    )
    p.add_argument(
        "--max-memory-gb",
        type=float,
        default=None,
        help="refuse runs estimated to need more memory (default: half the RAM)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


MODES = {
    "--scores": (
        ("scores", "epsilon", "delta", "confidence", "seed", "reference", "figure", "force",
         "max_memory_gb"),
        "--scores audits scores computed elsewhere",
        " (or drop --scores to run a mechanism)",
    ),
    "multi-run": (
        ("scores", "epsilon", "delta", "confidence", "reference", "figure", "force",
         "max_memory_gb"),
        "scores s0, s1 of independent runs are certified without random draws",
        "",
    ),
    "one-run": (
        ("scores", "epsilon", "delta", "confidence", "seed", "max_memory_gb"),
        "one run's canary scores have no trade-off to draw and no exact epsilon to show",
        "",
    ),
    "--replay": (
        ("mechanism", "epsilon", "delta", "unit", "relation", "threat_model", "canary", "seed",
         "d0", "d1", "save_pair", "replay", "force"),
        "--replay runs d0 and d1 on one random stream, without an audit",
        " (or add --search to audit a pair and replay it)",
    ),
}  # fmt: skip
"""The options each mode of ``dpclaims audit`` reads (besides --json and --debug), what it
does and how else to run: an option set to other than its default in a mode that does not
read it is refused (:func:`check_mode`), never silently ignored."""


def check_mode(args: argparse.Namespace, mode: str) -> None:
    """Refuse, in one line, the options given that ``mode`` of ``audit`` does not read."""
    reads, what, instead = MODES[mode]
    defaults = _defaults()
    given = [
        _option_label(dest, value)
        for dest, value in vars(args).items()
        if dest in defaults and dest not in (*reads, "json", "debug") and value != defaults[dest]
    ]
    if given:
        raise InputError(f"{what}; drop {', '.join(given)}{instead}")


def _defaults() -> dict[str, Any]:
    """Each audit option's value when it is not given."""
    parser = Parser(prog="dpclaims audit")
    add_arguments(parser)
    return vars(parser.parse_args([]))


def _option_label(dest: str, value: Any) -> str:
    """How an audit option is written on the command line."""
    if dest == "mechanism":
        return "a mechanism"
    if dest == "strict" and value is False:
        return "--no-strict"
    return f"--{dest.replace('_', '-')}"
