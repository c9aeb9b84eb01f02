"""``dpclaims audit``: audit a built-in mechanism or the user's own callable for
(epsilon, delta)-DP, or certify scores computed anywhere (``--scores``,
:mod:`.audit_scores`).  The rules of an audit are the library's
(:class:`dpclaims.targets.request.AuditRequest`); this module reads them from the options,
loads the mechanism and its pair, runs and shows the audit (:mod:`.audit_show`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..errors import InputError
from ..userfiles import load_callable, load_npz_dataset
from ..vocabulary import Verdict
from .audit_options import add_arguments, check_mode
from .audit_scores import run_scores
from .audit_show import print_audit, print_certain, print_replay, replay_pair
from .common import execution_of, print_json

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "audit",
        help="audit a built-in mechanism or your own callable for (epsilon, delta)-DP",
        description="Run the mechanism on two neighbouring datasets (a built-in pair, --d0 and "
        "--d1, or a pair --search finds) and certify a lower bound on its epsilon at "
        "--confidence, or certify scores computed anywhere (--scores). Exit code 1 on a "
        "violation (the bound exceeds the claimed epsilon), 0 otherwise.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.lazy_epilog = _targets_epilog
    add_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.scores is not None:
        return run_scores(args)
    if args.replay is not None and not args.search:
        check_mode(args, "--replay")
    if args.mechanism is None:
        raise InputError(
            "name a mechanism to audit (a built-in, 'module:function' or "
            "'path/to/file.py:function'), or pass --scores scores.npz"
        )
    request = _request(args)
    _log_estimates()
    mechanism, d0, d1, description, target = _load(args, request)
    request.check_target(target)
    if args.save_pair:
        from ..audit.search import check_pair_dir
        from ..userfiles import check_writable_folder

        check_pair_dir(args.save_pair, force=args.force)
        check_writable_folder(args.save_pair, "--save-pair")
    if request.replay_only:
        return replay_pair(args, mechanism, d0, d1, description, request.claim)
    request.check_pair(d0, d1)
    if args.figure:
        from dpclaims.atomic import check_output_file

        figure_path = check_output_file(args.figure, "--figure", force=args.force)
    execution = dataclasses.replace(
        execution_of(args),
        strict=args.strict,
        max_seconds=args.max_seconds,
        max_memory=None if args.max_memory_gb is None else args.max_memory_gb * 2**30,
    )
    per_call = _per_call(mechanism, execution) if request.user_code else None
    mechanism = per_call or mechanism
    test = request.test(target)
    found = None
    sequential = request.sequential(per_call=per_call is not None)
    if args.search:
        found = _search(
            args, request, mechanism, d0, d1, test=test, execution=execution, sequential=sequential
        )
        if found.certain:
            return print_certain(args, description, found)
        result = found.result
    else:
        result = _audit(
            args, request, mechanism, d0, d1, test=test, execution=execution, sequential=sequential
        )
    if args.save_pair and found is None:
        from ..audit.search import Pair, save_pair

        save_pair(Pair("given", d0, d1), args.save_pair, force=args.force)
    figure = None
    if args.figure:
        from ..reports import write_atomic
        from ..reports.figures import audit_figure

        figure = write_atomic(figure_path, audit_figure(result))
    replayed = None if args.replay is None else _replay_found(args, request, mechanism, found)
    _show(
        args,
        description,
        result,
        claim=request.claim,
        figure=figure,
        found=found,
        replayed=replayed,
    )
    refuted = replayed is not None and replayed.refutes(request.claim.epsilon)
    return 1 if result.verdict == Verdict.VIOLATION or refuted else 0


def _request(args: argparse.Namespace):
    """The :class:`~dpclaims.targets.request.AuditRequest` of the options, checked."""
    from ..targets.request import AuditRequest

    return AuditRequest(
        mechanism=args.mechanism,
        epsilon=args.epsilon,
        delta=args.delta,
        unit=args.unit,
        relation=args.relation,
        sensitivity=args.sensitivity,
        threat_model=args.threat_model,
        canary=args.canary,
        d0=args.d0 or None,
        d1=args.d1 or None,
        method=args.method,
        trials=args.trials,
        search=args.search,
        derived=args.derived,
        save_pair=bool(args.save_pair),
        replay=args.replay,
        fixed_trials=args.fixed_trials,
    )


def _load(args: argparse.Namespace, request) -> tuple[Any, Any, Any, str, Any]:
    """The mechanism, its pair, its description and the built-in target (None for user
    code)."""
    if request.user_code:
        mechanism = load_callable(args.mechanism)
        d0, d1 = load_npz_dataset(args.d0, "--d0"), load_npz_dataset(args.d1, "--d1")
        return mechanism, d0, d1, _describe(mechanism), None
    from ..targets.catalog import audit_target

    target = audit_target(
        args.mechanism, request.claim, threat_model=args.threat_model, canary=args.canary
    )
    return target.mechanism, target.d0, target.d1, target.description, target


def _search(args: argparse.Namespace, request, mechanism, d0, d1, *, test, execution, sequential):
    """``--search``: the pairs around ``d0`` screened, the best audited (and saved with
    ``--save-pair``); screens that stop early and sequential looks when ``sequential``."""
    from ..audit.search import save_pair, search

    found = search(
        mechanism,
        request.pairs(d0, d1),
        claim=request.claim,
        trials=args.trials,
        confidence=args.confidence,
        seed=args.seed,
        test=test,
        execution=execution,
        screen_trials=request.screen_trials,
        sequential=sequential,
    )
    if args.save_pair:
        save_pair(found.pair, args.save_pair, force=args.force)
    return found


def _audit(args: argparse.Namespace, request, mechanism, d0, d1, *, test, execution, sequential):
    """The audit of the given pair, with sequential looks (estimate and looks on stderr,
    unless --json) when ``sequential``."""
    from ..audit import Reference, audit

    run = audit
    if sequential:
        from ..audit.sequential import audit_sequential as run

        execution = dataclasses.replace(execution, progress=not args.json)
    return run(
        mechanism,
        d0,
        d1,
        request.claim,
        trials=args.trials,
        confidence=args.confidence,
        seed=args.seed,
        test=test,
        neighbours=request.neighbours,
        execution=execution,
        reference=Reference(epsilon=args.reference),
    )


def _replay_found(args: argparse.Namespace, request, mechanism, found):
    """``--replay`` with ``--search``: the coupled replay of the pair found."""
    from ..audit import replay

    return replay(
        mechanism, found.pair.d0, found.pair.d1, trials=args.replay, seed=args.seed,
        confidence=args.confidence, delta=request.claim.delta,
    )  # fmt: skip


def _show(args: argparse.Namespace, description: str, result, *, claim, figure, found, replayed):
    """The audit's JSON object, or its text with the pair saved and the replay."""
    if args.json:
        record = found.to_dict() if found is not None else result.to_dict()
        extra = {} if figure is None else {"figure": str(figure)}
        if args.save_pair:
            extra["saved_pair"] = args.save_pair
        if replayed is not None:
            extra["replay"] = replayed.to_dict()
        print_json({"mechanism": args.mechanism, "description": description, **record, **extra})
        return
    print_audit(args, description, result, figure=figure, found=found)
    if args.save_pair:
        print(
            f"saved         {args.save_pair}/d0.npz, {args.save_pair}/d1.npz (reproduce: "
            f"--d0 {args.save_pair}/d0.npz --d1 {args.save_pair}/d1.npz)"
        )
    if replayed is not None:
        print_replay(replayed, claim)


def _per_call(function: Any, execution: Any) -> Any:
    """``function`` as a per-call mechanism (:func:`dpclaims.audit.percall`, its calls spread
    over ``execution``'s workers) when it takes one dataset and a seed or RNG (a second
    parameter named rng, random_state or seed, or so annotated) and no trials; else None."""
    import inspect

    from ..audit.percall import percall, seed_type_of

    try:
        batched = "trials" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if batched or seed_type_of(function) is None:
        return None
    return percall(function, execution=execution)


def _describe(function: Any) -> str:
    """First line of a user callable's docstring (or its class's), else its name."""
    import inspect

    doc = inspect.getdoc(function)
    if doc:
        return doc.splitlines()[0]
    return getattr(function, "__qualname__", None) or type(function).__name__


def _log_estimates() -> None:
    """Show the time/memory estimate of a long audit (logger "dpclaims", INFO) on stderr."""
    import logging

    log = logging.getLogger("dpclaims")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


def _targets_epilog() -> str:
    from dpclaims.targets.catalog import TARGETS

    rows = [
        f"  {name:<22} {description}{'  [buggy]' if buggy else ''}"
        for name, (description, buggy) in TARGETS.items()
    ]
    return "built-in mechanisms:\n" + "\n".join(rows)
