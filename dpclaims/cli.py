"""The ``dpclaims`` command.

Exit codes: 0 when every checked claim is consistent, 1 when any is a violation,
2 for bad usage or bad input (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import DPClaimsError, InputError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"dpclaims: error: {message} (see 'dpclaims --help')\n")


def _print_json(payload: Any) -> None:
    print(json.dumps(payload, indent=2, default=float))


def _cmd_list(args: argparse.Namespace) -> int:
    from . import claims

    selected = claims.load(paper=args.paper, kind=args.kind)
    if args.json:
        _print_json([c.to_dict() for c in selected])
        return 0
    width = max((len(c.id) for c in selected), default=2)
    print(f"{'id':<{width}}  {'paper':<26}  {'kind':<12}  status")
    for c in selected:
        print(f"{c.id:<{width}}  {c.paper:<26}  {c.kind:<12}  {c.status}")
    print(f"{len(selected)} claim(s)")
    return 0


def _load_npz_dataset(path: str, name: str):
    from .data import UserDataset

    try:
        with np.load(path, allow_pickle=False) as archive:
            if "x" not in archive.files:
                raise InputError(f"{name} file {path!r} has no array 'x'; save it with numpy.savez(path, x=..., y=...)")
            return UserDataset(archive["x"], archive["y"] if "y" in archive.files else None)
    except (OSError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{name} file {path!r} is not a readable .npz archive: {exc}") from None


def _load_callable(spec: str):
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"mechanism {spec!r} must be a built-in name or 'package.module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import module {module_name!r} for mechanism {spec!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise InputError(f"module {module_name!r} has no attribute {attr!r} (mechanism {spec!r})") from None


def _cmd_audit(args: argparse.Namespace) -> int:
    from .algorithms.catalog import audit_target, default_unit
    from .audit import audit
    from .privacy import PrivacyClaim

    user_code = ":" in args.mechanism
    unit = args.unit or ("user" if user_code else default_unit(args.mechanism))
    claim = PrivacyClaim(args.epsilon, args.delta, unit, args.relation)
    if user_code:
        if not (args.d0 and args.d1):
            raise InputError("a user mechanism needs --d0 and --d1: neighbouring datasets saved as .npz with arrays x (and y)")
        mechanism = _load_callable(args.mechanism)
        d0, d1 = _load_npz_dataset(args.d0, "--d0"), _load_npz_dataset(args.d1, "--d1")
        description = args.mechanism
    else:
        if args.d0 or args.d1:
            raise InputError("--d0/--d1 are for a user mechanism ('package.module:function'); built-ins bring their own datasets")
        target = audit_target(args.mechanism, claim)
        mechanism, d0, d1, description = target.mechanism, target.d0, target.d1, target.description
    result = audit(
        mechanism, d0, d1, claim=claim, trials=args.trials, confidence=args.confidence,
        seed=args.seed, method=args.method, backend=args.backend, workers=args.workers,
    )
    if args.json:
        _print_json({"mechanism": args.mechanism, "description": description, **result.to_dict()})
    else:
        print(f"mechanism     {args.mechanism}: {description}")
        print(f"claim         ({claim.epsilon:g}, {claim.delta:g})-DP, {claim.unit} level, {claim.relation}")
        kind = "certified lower bound" if result.certified else "parametric estimate (not certified)"
        print(f"epsilon       {result.epsilon_lower:.4f}  ({kind} at confidence {args.confidence:g}, {args.trials} trials per side)")
        print(f"verdict       {result.verdict}")
    return 1 if result.verdict == "violation" else 0


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpclaims", description="Check, by experiment, the claims of papers on DP optimization.")
    parser.add_argument("--version", action="version", version=f"dpclaims {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="the claims registry as a table")
    p.add_argument("--paper", help="only this paper id (e.g. murata-suzuki-2023)")
    p.add_argument("--kind", help="only this kind (privacy, excess_risk, utility, complexity, lower_bound)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_cmd_list)

    p = sub.add_parser(
        "audit", help="audit a built-in mechanism or your own callable for (epsilon, delta)-DP",
        epilog=_targets_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("mechanism", help="built-in name (see 'dpclaims audit --help') or 'package.module:function'")
    p.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon (default 1)")
    p.add_argument("--delta", type=float, default=1e-5, help="claimed delta (default 1e-5; 0 for pure DP)")
    p.add_argument("--trials", type=int, default=200_000, help="mechanism runs per dataset (default 200000)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")
    p.add_argument("--unit", default=None, help="unit of privacy: user or item (default: item for dp-sgd*, else user)")
    p.add_argument("--relation", default="replace", help="neighbour relation: replace or add-remove (default replace)")
    p.add_argument("--method", default="threshold", help="threshold (default), histogram, or gdp (an estimate)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--d0", help=".npz file (arrays x, optional y) with the first dataset, for a user mechanism")
    p.add_argument("--d1", help=".npz file with the neighbouring dataset, for a user mechanism")
    p.add_argument("--backend", default="auto", help="auto, serial or processes")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_cmd_audit)
    return parser


def _targets_epilog() -> str:
    from .algorithms.catalog import TARGETS

    rows = [f"  {name:<22} {description}{'  [buggy]' if buggy else ''}" for name, (description, buggy) in TARGETS.items()]
    return "built-in mechanisms:\n" + "\n".join(rows)


def _version() -> str:
    from . import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (DPClaimsError, ValueError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"dpclaims: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpclaims: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
