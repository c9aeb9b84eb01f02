"""``dpclaims rate``: one rate claim of the registry, or the user's own experiment
(``module:function``): sweep, power-law fit, exponent verdict and its figure."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError, check_positive, check_trials
from ..userfiles import load_callable
from ..vocabulary import BOUNDS, BUDGETS, FITS, LIMITS, Verdict
from .common import (
    add_registry_option,
    add_run_options,
    execution_of,
    print_json,
    registry_of,
    split,
    words,
)

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "rate",
        help="one rate claim, or your own experiment: sweep, power-law fit, exponent verdict "
        "and its figure",
        description="Sweep a registry claim's experiment, or your own function "
        "experiment(value, rng, **fixed) -> error (module:function found from the current "
        "folder, or path/to/file.py:function), fit the exponent of the error in the swept "
        "parameter and test it against the claim. Exit code 1 when inconsistent.",
    )
    p.add_argument(
        "claim_id",
        metavar="claim",
        help="a claim id with a rate experiment (see 'dpclaims list'), or 'module:function' "
        "/ 'path/to/file.py:function'",
    )
    p.add_argument(
        "--values",
        help="comma-separated grid of the swept parameter, e.g. 100,200,400,800,1600 "
        "(default for a claim: the budget's grid)",
    )
    p.add_argument(
        "--replicates",
        type=int,
        help="replicates per grid value (default: the budget's; 10 for your own function)",
    )
    p.add_argument(
        "--budget",
        choices=words(BUDGETS),
        help="size of a claim's experiment (default quick)",
    )
    p.add_argument(
        "--figure",
        help="PNG file for the figure (default: CLAIM_ID.png in the current folder, which must "
        "not exist)",
    )
    p.add_argument(
        "--control",
        metavar="MODULE:FUNCTION",
        help="the trivial algorithm (constant output or initial point), called as the "
        "experiment is, control(value, rng, **fixed) -> its error; the rate test must call it "
        "inconsistent for a consistent verdict (default: the claim's own, if any)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --figure file, or the d0.npz/d1.npz of --save-pair DIR",
    )
    add_registry_option(p)
    own = p.add_argument_group("your own function (module:function)")
    own.add_argument("--param", help="name of the swept parameter (default n)")
    own.add_argument(
        "--expected", type=float, help="the claimed exponent of the error, e.g. -0.5 (required)"
    )
    own.add_argument(
        "--bound",
        choices=words(BOUNDS),
        help="the claim is an upper bound (error <= C n^expected), a lower bound, or the "
        "exact order (default order)",
    )
    own.add_argument("--margin", type=float, help="tolerance on the exponent (default 0.1)")
    own.add_argument(
        "--limit",
        choices=words(LIMITS),
        help="the claim holds as the parameter grows (large, default) or shrinks (small)",
    )
    own.add_argument(
        "--fixed",
        action="append",
        metavar="NAME=VALUE",
        help="another keyword argument of the function, e.g. --fixed d=10 (repeatable)",
    )
    own.add_argument(
        "--fit",
        choices=words(FITS),
        help="fit on mean logs (logs, default) or median of means (mom, heavy-tailed errors)",
    )
    own.add_argument(  # the old name: 'method' is the audit's test (--method of 'audit')
        "--method", dest="fit", choices=words(FITS), help=argparse.SUPPRESS
    )
    add_run_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def _grid(text: str) -> list[float] | list[int]:
    """The ``--values`` grid: whole numbers stay ``int``; checked as a rate grid."""
    from ..rates import check_grid

    parts = split(text)
    try:
        values = [int(p) for p in parts]
    except ValueError:
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise InputError(
                f"--values must be comma-separated numbers such as 100,200,400,800, got {text!r}"
            ) from None
    check_grid(values, "--values")
    return values


_USER_RATE_OPTIONS = ("param", "expected", "bound", "margin", "limit", "fixed", "fit")
"""Options of ``dpclaims rate module:function``; a registry claim brings its own."""


def run(args: argparse.Namespace) -> int:
    if args.replicates is not None:
        check_trials(args.replicates, "--replicates", minimum=2, example=20)
    if ":" in args.claim_id:
        experiment, seed, name = _user_rate_experiment(args)
        figure_path = _rate_figure_path(args, name)
        header = {"experiment": args.claim_id}
        title = f"experiment    {args.claim_id}"
    else:
        experiment, seed, claim = _claim_rate_experiment(args)
        figure_path = _rate_figure_path(args, claim.id)
        header = {"id": claim.id, "paper": claim.paper, "kind": claim.kind}
        title = f"claim         {claim.id} ({claim.paper}, {claim.source})"
    if args.control is not None:
        experiment = _with_control(experiment, args.control)
    return run_rate(
        args, experiment, seed=seed, figure_path=figure_path, header=header, title=title
    )


def _with_control(experiment: Any, spec: str) -> Any:
    """``experiment`` with ``--control module:function`` as its trivial algorithm."""
    import dataclasses

    from ..claims.standard import RateExperiment

    if not isinstance(experiment, RateExperiment):
        raise InputError(
            f"--control sets the trivial algorithm of a single rate sweep; this claim's "
            f"experiment is a {type(experiment).__name__}: run it without --control"
        )
    return dataclasses.replace(experiment, trivial=load_callable(spec, role="--control"))


def _rate_figure_path(args: argparse.Namespace, name: str):
    """``--figure``, checked (an existing file only with --force), else NAME.png here, which
    must not exist."""
    from dpclaims.atomic import check_output_file

    from ..reports.text import figure_name

    if args.figure:
        return check_output_file(args.figure, "--figure", force=args.force)
    return check_output_file(figure_name(name), "--figure", default=True)


def _user_rate_experiment(args: argparse.Namespace):
    """The RateExperiment of ``dpclaims rate module:function``, its seed and figure name."""
    from pathlib import Path

    from ..claims.standard import RateExperiment

    if args.budget is not None:
        raise InputError(
            "--budget sizes a registry claim's experiment; for your own function pass "
            "--values and --replicates"
        )
    if args.values is None or args.expected is None:
        raise InputError(
            f"rate {args.claim_id} needs --values (the grid, e.g. 100,200,400,800) and "
            "--expected (the claimed exponent, e.g. -0.5)"
        )
    if args.margin is not None:
        check_positive(args.margin, "--margin", allow_zero=True)
    param = args.param or "n"
    values, fixed = _grid(args.values), _fixed(args.fixed or [], param)
    location, _, attr = args.claim_id.rpartition(":")
    experiment = RateExperiment(
        experiment=load_callable(args.claim_id, role="experiment"),
        param=param,
        values=values,
        expected=args.expected,
        replicates=10 if args.replicates is None else args.replicates,
        margin=0.1 if args.margin is None else args.margin,
        fixed=fixed,
        method=args.fit or "logs",
        bound=args.bound or "order",
        limit=args.limit or "large",
    )
    module = Path(location).stem if location.endswith(".py") else Path(location).name
    return experiment, args.seed, f"{module}.{attr}"


def _claim_rate_experiment(args: argparse.Namespace):
    """The rate experiment of a registry claim (``--values``/``--replicates`` applied), its
    seed and the claim."""
    import dataclasses

    from ..claims import experiment as experiment_of
    from ..claims.run import claim_seed
    from ..claims.standard import AuditExperiment, ValueExperiment

    given = [f"--{name}" for name in _USER_RATE_OPTIONS if getattr(args, name) is not None]
    if given:
        raise InputError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for your own function "
            f"(module:function); claim {args.claim_id!r} takes them from the registry"
        )
    claim = registry_of(args).get(args.claim_id)
    experiment = experiment_of(claim, args.budget or "quick")
    if isinstance(experiment, (AuditExperiment, ValueExperiment)):
        raise InputError(_not_a_sweep(claim.id, experiment))
    changes = {
        name: value
        for name, value in (("values", args.values), ("replicates", args.replicates))
        if value is not None
    }
    if "values" in changes:
        changes["values"] = _grid(changes["values"])
    if changes:
        names = (
            {f.name for f in dataclasses.fields(experiment)}
            if dataclasses.is_dataclass(experiment)
            else set()
        )
        missing = sorted(set(changes) - names)
        if missing:
            raise InputError(
                f"the experiment of {claim.id!r} ({type(experiment).__name__}) has no "
                f"{', '.join(missing)} to change; run it without --{' --'.join(missing)}"
            )
        experiment = dataclasses.replace(experiment, **changes)
    return experiment, claim_seed(args.seed, claim.id), claim


def _not_a_sweep(claim_id: str, experiment: Any) -> str:
    return (
        f"claim {claim_id!r} is checked by {type(experiment).__name__}, not a rate sweep; "
        f"run it with: dpclaims verify --claims {claim_id}"
    )


def _fixed(pairs: list[str], param: str) -> dict[str, Any]:
    """``--fixed k=v`` options as keyword arguments; values are Python literals, else strings."""
    import ast

    fixed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise InputError(
                f"--fixed must be NAME=VALUE such as d=10 or epsilon=0.5, got {pair!r}"
            )
        if key == param or key in fixed:
            reason = "is the swept --param" if key == param else "is given twice"
            raise InputError(f"--fixed {key} {reason}; give each other argument once")
        try:
            fixed[key] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            fixed[key] = text.strip()
    return fixed


def run_rate(args, experiment, *, seed: int, figure_path, header: dict, title: str) -> int:
    """Run a rate experiment; print its evidence and verdict, draw its figure."""
    from ..reports import write_atomic
    from ..reports.figures import rate_figure
    from ..results import ClaimResult, read_outcome

    outcome = read_outcome(experiment.run(seed=seed, execution=execution_of(args)))
    if outcome.type != "rate":
        raise InputError(_not_a_sweep(header.get("id", args.claim_id), experiment))
    shown = ClaimResult(
        **dict.fromkeys(("paper", "algorithm", "source", "statement"), ""),
        id=header.get("id", args.claim_id),
        kind=header.get("kind") or "",
        verdict=outcome.verdict,
        type=outcome.type,
        summary=outcome.summary,
        evidence=outcome.evidence,
        seed=seed,
        wall_time=outcome.evidence.sweep.get("wall_time", 0.0),
    )
    figure = write_atomic(figure_path, rate_figure(shown))
    if args.json:
        print_json({**header, "seed": seed, "figure": str(figure), **outcome.to_json()})
    else:
        print(title)
        for label, value in shown.rows():
            print(f"{label:<13} {value}")
        print(f"verdict       {outcome.verdict}")
        print(f"figure        {figure}")
    return 1 if outcome.verdict == Verdict.INCONSISTENT else 0
