"""The ``dpclaims`` command: ``verify``, ``list``, ``audit``, ``rate``, ``report``, ``new-paper``.

``verify`` and ``list`` read the packaged papers, installed plugins (entry-point group
``dpclaims.papers``) and every ``--registry DIR`` folder; ``new-paper ID [DIR]`` writes a
working paper plugin to start from.  ``list`` imports no experiment.

Exit codes: 0 when every checked claim is consistent (or inconclusive), 1 when any
is a violation or inconsistent (or its experiment failed with an error), 2 for bad
usage or bad input (one line on stderr, never a traceback), 3 for an unexpected
internal error (one line; ``--debug`` shows the traceback), 130 after Ctrl-C and
141 when stdout is closed early (``dpclaims list | head``).  Every command takes
``--json`` for machine-readable output on stdout; a JSON object carries the
``warnings`` raised during the command, which are also printed to stderr.
"""

from __future__ import annotations

import os
import signal
import sys

from .vocabulary import Relation, Verdict


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C while the command's modules load: one line and exit 130, no traceback."""
    sys.stderr.write("dpclaims: interrupted\n")
    os._exit(130)


# The console script imports this module before main() can catch KeyboardInterrupt; from
# here on Ctrl-C ends the process quietly.  The dpclaims command keeps this handler outside
# main()'s own (through parsing the arguments and the interpreter's exit); a program that
# imports the module gets its previous handler back below.
_previous_sigint = signal.signal(signal.SIGINT, _interrupted_while_starting)
_COMMAND = __name__ == "__main__" or os.path.basename(getattr(sys, "argv", [""])[0]) in (
    "dpclaims",
    "dpclaims.exe",
)
"""Whether this process is the ``dpclaims`` command, not a program importing the module."""


_MEMORY_WORDS = ("failed to map segment", "cannot allocate memory")
"""What the loader says when a library does not fit in the process's memory."""


def _out_of_memory(exc: BaseException) -> str | None:
    """``"Type: the line that says so"`` when ``exc`` says the process ran out of memory, also
    while loading a library (``ImportError: ….so: failed to map segment from shared object``);
    else None."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [""]
    said = [line for line in lines if any(word in line.lower() for word in _MEMORY_WORDS)]
    if isinstance(exc, MemoryError) or (isinstance(exc, (ImportError, OSError)) and said):
        return f"{type(exc).__name__}: {(said or lines)[0]}".rstrip(": ")
    return None


_NO_MEMORY_TO_START = (
    "out of memory while loading {what} ({problem}); free memory or raise the memory limit "
    "of the process (ulimit -v)"
)


try:
    import argparse
    import dataclasses
    import json
    import threading
    import traceback
    import warnings
    from collections.abc import Iterator, Sequence
    from contextlib import contextmanager, redirect_stdout, suppress
    from typing import Any, TextIO

    from .errors import (
        DPClaimsError,
        InputError,
        called_exit,
        check_choice,
        check_positive,
        check_trials,
    )
    from .userfiles import first_line as _first_line
    from .userfiles import load_callable as _load_callable
    from .userfiles import load_npz_dataset as _load_npz_dataset
    from .vocabulary import BOUNDS, BUDGETS, FITS, LIMITS
except (ImportError, MemoryError) as exc:
    problem = _out_of_memory(exc)
    if not (_COMMAND and problem):
        raise
    sys.stderr.write(
        f"dpclaims: error: {_NO_MEMORY_TO_START.format(what='dpclaims', problem=problem)}\n"
    )
    sys.exit(3)

if not _COMMAND:
    signal.signal(signal.SIGINT, _previous_sigint)

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line and exit code 2."""

    lazy_epilog = None
    """A function returning the epilog, called only when the help is shown (keeps start-up fast)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"dpclaims: error: {message} (see 'dpclaims --help')\n")

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


_WARNINGS: list[dict[str, str]] = []
"""The warnings of the running command (category, one-line message), in order, no repeats."""


_JSON_STDOUT: list[TextIO] = []
"""With ``--json``, the stream on the real stdout that the JSON object alone is written to."""


def _print_json(payload: Any) -> None:
    if isinstance(payload, dict):
        payload = {**payload, "warnings": list(_WARNINGS)}
    stream = _JSON_STDOUT[-1] if _JSON_STDOUT else sys.stdout
    print(json.dumps(payload, indent=2, default=float), file=stream, flush=True)


def _registry(args: argparse.Namespace):
    """The registry of the packaged and installed papers plus the ``--registry`` folders."""
    from .claims import Registry

    return Registry.discover(folders=args.registry or ())


def _cmd_list(args: argparse.Namespace) -> int:
    from .claims import status

    registry = _registry(args)
    papers = _split(args.paper)
    for paper in papers:  # an unknown id is an error that lists the known ones
        registry.select(paper=paper)
    selected = [c for c in registry.select(kind=args.kind) if not papers or c.paper in papers]
    statuses = [status(c) for c in selected]
    if args.json:
        _print_json(
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


MAX_AUDIT_EPSILON = 700.0
"""The largest claimed epsilon ``dpclaims audit`` takes: e^epsilon must stay a finite float."""


def _cmd_audit(args: argparse.Namespace) -> int:
    from dpclaims.targets.catalog import audit_target, default_relation, default_unit

    from .audit import AuditTest, Neighbours, Reference, audit
    from .privacy import PrivacyClaim

    if args.scores is not None:
        return _cmd_audit_scores(args)
    if args.replay is not None and not args.search:
        _check_mode(args, "--replay")
    if args.mechanism is None:
        raise InputError(
            "name a mechanism to audit (a built-in, 'module:function' or "
            "'path/to/file.py:function'), or pass --scores scores.npz"
        )

    user_code = ":" in args.mechanism
    unit = args.unit or ("user" if user_code else default_unit(args.mechanism))
    given = args.relation or ("replace" if user_code else default_relation(args.mechanism))
    array_relation = given if given in (Relation.QUERY, Relation.UNCHECKED) else None
    relation = "replace" if array_relation else given
    claim = PrivacyClaim(args.epsilon, args.delta, unit, relation)
    if claim.epsilon > MAX_AUDIT_EPSILON:
        raise InputError(
            f"--epsilon {args.epsilon:g} is too large to audit (e^epsilon overflows a float "
            f"beyond {MAX_AUDIT_EPSILON:g}); pass a claimed epsilon <= {MAX_AUDIT_EPSILON:g}"
        )
    _log_estimates()
    from .targets.dpsgd import CANARIES, THREAT_MODELS

    if args.threat_model is not None:
        check_choice(args.threat_model, THREAT_MODELS, "--threat-model")
    if args.canary is not None:
        check_choice(args.canary, CANARIES, "--canary")
    if user_code and (args.threat_model or args.canary):
        raise InputError(
            "--threat-model and --canary choose how DP-SGD is audited; for your own mechanism "
            "release what your adversary sees and drop them"
        )
    if user_code:
        if not (args.d0 and args.d1):
            raise InputError(
                "a user mechanism needs --d0 and --d1: neighbouring datasets saved as .npz "
                "with arrays x (and y)"
            )
        mechanism = _load_callable(args.mechanism)
        d0, d1 = _load_npz_dataset(args.d0, "--d0"), _load_npz_dataset(args.d1, "--d1")
        description = _describe(mechanism)
    else:
        if args.d0 or args.d1:
            raise InputError(
                "--d0/--d1 are for a user mechanism ('module:function' or "
                "'path/to/file.py:function'); built-ins bring their own datasets"
            )
        target = audit_target(
            args.mechanism, claim, threat_model=args.threat_model, canary=args.canary
        )
        mechanism, d0, d1, description = target.mechanism, target.d0, target.d1, target.description
        if target.statistic is not None and (args.search or args.save_pair):
            raise InputError(
                f"{args.mechanism} audits a fixed canary with a statistic fixed for it; "
                "--search and --save-pair vary or save plain datasets: drop them"
            )
    if args.derived and not args.search:
        raise InputError("--derived chooses the pairs --search screens: add --search or drop it")
    if args.save_pair:
        from .audit.search import check_pair_dir
        from .userfiles import check_writable_folder

        check_pair_dir(args.save_pair, force=args.force)
        check_writable_folder(args.save_pair, "--save-pair")
    if args.replay is not None and not args.search:
        return _replay(args, mechanism, d0, d1, description, claim)
    if user_code and not args.search:
        _check_pair_differs(d0, d1)
    if args.figure:
        from dpclaims.atomic import check_output_file

        figure_path = check_output_file(args.figure, "--figure", force=args.force)
    execution = dataclasses.replace(
        _execution(args),
        strict=args.strict,
        max_seconds=args.max_seconds,
        max_memory=None if args.max_memory_gb is None else args.max_memory_gb * 2**30,
    )
    per_call = _per_call(mechanism, execution) if user_code else None
    mechanism = per_call or mechanism
    test = AuditTest(method=args.method)
    if not user_code and target.statistic is not None:
        test = _fixed_statistic_test(target, args)
    found = None
    if args.search:
        from .audit.core import MIN_TRIALS
        from .audit.search import SCREEN_TRIALS, search
        from .targets.pairs import pairs_for

        family = pairs_for(
            d0,
            d1,
            unit=claim.unit,
            relation=claim.relation,
            resize=True if args.derived else None,
            data_name="--d0" if user_code else "the built-in's data",
        )
        found = search(
            mechanism,
            family,
            claim=claim,
            trials=args.trials,
            confidence=args.confidence,
            seed=args.seed,
            test=test,
            execution=execution,
            screen_trials=max(MIN_TRIALS, min(SCREEN_TRIALS, args.trials // 10)),
        )
        result = found.result
        if args.save_pair:
            from .audit.search import save_pair

            save_pair(found.pair, args.save_pair, force=args.force)
        if found.certain:
            return _print_certain(args, description, found)
    else:
        sequential = per_call is not None and not args.fixed_trials
        run = audit
        if sequential:  # its estimate and looks on stderr, unless --json
            from dataclasses import replace

            from .audit.sequential import audit_sequential as run

            execution = replace(execution, progress=not args.json)
        result = run(
            mechanism,
            d0,
            d1,
            claim,
            trials=args.trials,
            confidence=args.confidence,
            seed=args.seed,
            test=test,
            neighbours=(
                Neighbours(relation=array_relation, sensitivity=args.sensitivity)
                if array_relation
                else None
            ),
            execution=execution,
            reference=Reference(epsilon=args.reference),
        )
    if args.save_pair and found is None:
        from .audit.search import Pair, save_pair

        save_pair(Pair("given", d0, d1), args.save_pair, force=args.force)
    figure = None
    if args.figure:
        from .reports import write_atomic
        from .reports.figures import audit_figure

        figure = write_atomic(figure_path, audit_figure(result))
    replayed = None
    if args.replay is not None:
        from .audit import replay

        replayed = replay(
            mechanism, found.pair.d0, found.pair.d1, trials=args.replay, seed=args.seed,
            confidence=args.confidence, delta=claim.delta,
        )  # fmt: skip
    if args.json:
        record = found.to_dict() if found is not None else result.to_dict()
        extra = {} if figure is None else {"figure": str(figure)}
        if args.save_pair:
            extra["saved_pair"] = args.save_pair
        if replayed is not None:
            extra["replay"] = replayed.to_dict()
        _print_json({"mechanism": args.mechanism, "description": description, **record, **extra})
    else:
        _print_audit(args, description, result, figure=figure, found=found)
        if args.save_pair:
            print(
                f"saved         {args.save_pair}/d0.npz, {args.save_pair}/d1.npz (reproduce: "
                f"--d0 {args.save_pair}/d0.npz --d1 {args.save_pair}/d1.npz)"
            )
        if replayed is not None:
            _print_replay(replayed, claim)
    refuted = replayed is not None and replayed.refutes(claim.epsilon)
    return 1 if result.verdict == Verdict.VIOLATION or refuted else 0


def _print_certain(args: argparse.Namespace, description: str, found) -> int:
    """A search that found ε = ∞, certain, on a neighbouring pair: the verdict ``violation``
    with the pair (saved with --save-pair), no audit; exit code 1."""
    if args.json:
        extra = {"saved_pair": args.save_pair} if args.save_pair else {}
        _print_json(
            {"mechanism": args.mechanism, "description": description, **found.to_dict(), **extra}
        )
        return 1
    print(f"mechanism     {args.mechanism}: {description}")
    print(f"pair          {found.pair.name} ({found.samples} mechanism runs in all)")
    print(f"change        {found.pair.change}")
    print(f"verdict       violation: {found.reason}")
    if args.save_pair:
        print(
            f"saved         {args.save_pair}/d0.npz, {args.save_pair}/d1.npz (reproduce: "
            f"--d0 {args.save_pair}/d0.npz --d1 {args.save_pair}/d1.npz --replay 100)"
        )
    return 1


def _per_call(function: Any, execution: Any) -> Any:
    """``function`` as a per-call mechanism (:func:`dpclaims.audit.percall`, its calls spread
    over ``execution``'s workers) when it takes one dataset and a seed or RNG (a second
    parameter named rng, random_state or seed, or so annotated) and no trials; else None."""
    import inspect

    from .audit.percall import percall, seed_type_of

    try:
        batched = "trials" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if batched or seed_type_of(function) is None:
        return None
    return percall(function, execution=execution)


def _check_pair_differs(d0: Any, d1: Any) -> None:
    """Refuse --d0 and --d1 holding the same data: there is no difference to audit."""
    from .audit.core import same_data

    if same_data(d0, d1):
        raise InputError(
            "--d0 and --d1 hold the same data, so there is nothing to audit; pass as --d1 a "
            "neighbouring dataset that differs from --d0 (e.g. in one user), or add --search "
            "to vary --d0"
        )


def _cmd_audit_scores(args: argparse.Namespace) -> int:
    """``dpclaims audit --scores FILE``: certify scores computed anywhere (see
    :func:`dpclaims.userfiles.load_npz_scores` for the two layouts)."""
    from .privacy import PrivacyClaim
    from .resources import Limits
    from .userfiles import load_npz_scores

    _check_mode(args, "--scores")
    claim = PrivacyClaim(args.epsilon, args.delta)
    given = None if args.max_memory_gb is None else args.max_memory_gb * 2**30
    limit = Limits.checked(max_memory=given).max_memory
    try:
        layout, first, second = load_npz_scores(args.scores, max_memory=limit)
        _check_mode(args, layout)
        if layout == "one-run":
            return _audit_one_run_scores(args, claim, first, second)
        return _audit_multi_run_scores(args, claim, first, second)
    except MemoryError:
        raise InputError(
            f"--scores file {args.scores!r} ran out of memory; audit a random subsample of the "
            "runs (or canaries), or use a machine with more memory"
        ) from None


def _audit_one_run_scores(args: argparse.Namespace, claim, scores: Any, included: Any) -> int:
    from .audit import audit_one_run_scores

    if len(scores) < 2:
        raise InputError(
            f"--scores file {args.scores!r} holds 1 canary; a one-run audit guesses which "
            "canaries were included, one in and one out at least: save 2 or more canaries"
        )
    found = audit_one_run_scores(
        scores,
        included,
        claim,
        confidence=args.confidence,
        seed=args.seed,
    )
    if args.json:
        _print_json({"scores": args.scores, "layout": "one-run", **found.to_dict()})
    else:
        print(f"scores        {args.scores}: one run, per-canary scores and inclusion")
        print(found.summary())
    return 1 if found.verdict == Verdict.VIOLATION else 0


def _audit_multi_run_scores(args: argparse.Namespace, claim, s0: Any, s1: Any) -> int:
    from .audit import Reference, audit_scores

    if args.figure:
        from dpclaims.atomic import check_output_file

        figure_path = check_output_file(args.figure, "--figure", force=args.force)
    result = audit_scores(
        s0,
        s1,
        claim,
        confidence=args.confidence,
        reference=Reference(epsilon=args.reference),
    )
    figure = None
    if args.figure:
        from .reports import write_atomic
        from .reports.figures import audit_figure

        figure = write_atomic(figure_path, audit_figure(result))
    if args.json:
        extra = {} if figure is None else {"figure": str(figure)}
        _print_json({"scores": args.scores, "layout": "multi-run", **result.to_dict(), **extra})
    else:
        args.mechanism = args.scores
        _print_audit(
            args, "scores of runs without (s0) and with (s1) the canary", result, figure=figure
        )
    return 1 if result.verdict == Verdict.VIOLATION else 0


_AUDIT_MODES = {
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
read it is refused (:func:`_check_mode`), never silently ignored."""


def _check_mode(args: argparse.Namespace, mode: str) -> None:
    """Refuse, in one line, the options given that ``mode`` of ``audit`` does not read."""
    reads, what, instead = _AUDIT_MODES[mode]
    defaults = vars(_build_parser().parse_args(["audit"]))
    given = [
        _option_label(dest, value)
        for dest, value in vars(args).items()
        if dest in defaults and dest not in (*reads, "json", "debug") and value != defaults[dest]
    ]
    if given:
        raise InputError(f"{what}; drop {', '.join(given)}{instead}")


def _option_label(dest: str, value: Any) -> str:
    """How an audit option is written on the command line."""
    if dest == "mechanism":
        return "a mechanism"
    if dest == "strict" and value is False:
        return "--no-strict"
    return f"--{dest.replace('_', '-')}"


def _replay(
    args: argparse.Namespace, mechanism: Any, d0: Any, d1: Any, description: str, claim: Any
) -> int:
    """``audit --replay`` without --search: the coupled replay of the given pair, no audit; a
    bound it certifies above the claimed ε (a certain ε = ∞, or a point mass's) is a violation
    (exit 1) of the claim, whose neighbours the pair must be."""
    from .audit import replay
    from .audit.core import _check_neighbours
    from .data import DATASETS

    if isinstance(d0, DATASETS) and isinstance(d1, DATASETS):
        _check_neighbours(d0, d1, claim, None)

    if args.save_pair:
        from .audit.search import Pair, save_pair

        save_pair(Pair("given", d0, d1), args.save_pair, force=args.force)
    replayed = replay(
        mechanism, d0, d1, trials=args.replay, seed=args.seed, confidence=args.confidence,
        delta=claim.delta,
    )  # fmt: skip
    if args.json:
        _print_json(
            {"mechanism": args.mechanism, "description": description, "replay": replayed.to_dict()}
        )
    else:
        print(f"mechanism     {args.mechanism}: {description}")
        _print_replay(replayed, claim)
    return 1 if replayed.refutes(claim.epsilon) else 0


def _print_replay(replayed, claim) -> None:
    print(
        f"replay        {replayed.finding} ({replayed.trials} coupled trials, seed "
        f"{replayed.seed}; same random stream on d0 and d1)"
    )
    for line in replayed.lines:
        print(f"              {line}")
    print("              not a certificate: a falsification check on this one pair")
    if replayed.infinite:
        print("verdict       violation: the replay shows ε = ∞ on this neighbouring pair, certain")
    elif replayed.refutes(claim.epsilon):
        print(
            f"verdict       violation: the replay certifies ε >= {replayed.epsilon_lower:.4g} > "
            f"{claim.epsilon:g} claimed on this neighbouring pair (at confidence "
            f"{replayed.confidence:g})"
        )
    elif replayed.finding == "point-mass":
        print(
            f"bound         ε >= {replayed.epsilon_lower:.4g} from the point mass, within the "
            f"claimed {claim.epsilon:g}: no violation shown"
        )


def _describe(function: Any) -> str:
    """First line of a user callable's docstring (or its class's), else its name."""
    import inspect

    doc = inspect.getdoc(function)
    if doc:
        return doc.splitlines()[0]
    return getattr(function, "__qualname__", None) or type(function).__name__


def _cmd_mutants(args: argparse.Namespace) -> int:
    from .claims.mutation import kill_matrix, kill_matrix_lines

    report = kill_matrix(
        papers=_split(args.paper) or None,
        budget=args.budget,
        seed=args.seed,
        execution=_execution(args),
        corpus=args.corpus,
    )
    if args.json:
        _print_json(report)
    else:
        print("\n".join(kill_matrix_lines(report)))
    return 0


def _fixed_statistic_test(target, args: argparse.Namespace):
    """The test of a built-in target whose statistic is fixed (the DP-SGD threat models): its
    threshold test planned from the claim (:func:`dpclaims.targets.dpsgd.planned_test`), or
    ``--method`` on that statistic."""
    from .audit import AuditTest
    from .targets.dpsgd import planned_test

    if args.method == "threshold":
        return planned_test(target, trials=check_trials(args.trials, "--trials"))
    return AuditTest(method=args.method, statistic=target.statistic)


def _print_audit(args: argparse.Namespace, description: str, result, *, figure, found=None) -> None:
    """The audit's text output: the mechanism, the pair searched, the audit's rows (its
    :meth:`~dpclaims.audit.AuditResult.summary`, the rows a report shows) and the figure."""
    print(f"mechanism     {args.mechanism}: {description}")
    if found is not None:
        print(
            f"pair          {found.pair.name} (best of {len(found.screened)} screened; "
            f"{found.samples} mechanism runs in all)"
        )
        print(f"change        {found.pair.change}")
        for name, why in found.skipped[:5]:
            print(f"skipped       {name}: {why}")
    print(result.summary())
    if figure is not None:
        print(f"figure        {figure}")


def _log_estimates() -> None:
    """Show the time/memory estimate of a long audit (logger "dpclaims", INFO) on stderr."""
    import logging

    log = logging.getLogger("dpclaims")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


def _split(text: str | None) -> list[str]:
    """Comma-separated values, blanks dropped."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


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


def _report_summary(results, paths: dict, as_json: bool) -> None:
    from .reports.text import VERDICT_LABELS, counts_line

    if as_json:
        _print_json(
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


def _execution(args: argparse.Namespace):
    """The one Execution of a command, from --backend, --workers, --scheduler, --checkpoint,
    checked before anything runs (the scheduler answers, the checkpoint folder is usable and
    apart from --out)."""
    from .execution import Execution

    execution = Execution(
        backend=args.backend,
        workers=args.workers,
        scheduler=args.scheduler,
        checkpoint=args.checkpoint,
    )
    execution.check(out=getattr(args, "out", None), option="--{}".format)
    return execution


def _cmd_verify(args: argparse.Namespace) -> int:
    from dpclaims.atomic import check_output_dir, output_lock

    from .claims.run import select_claims

    papers, patterns = _split(args.paper), _split(args.claims)
    registry = _registry(args)
    selected = select_claims(papers, patterns, registry=registry)
    if args.claim_timeout is not None:
        from .timelimit import check_time_limit

        check_time_limit(args.claim_timeout, "--claim-timeout")
    execution = _execution(args)
    check_output_dir(args.out, args.force)
    with output_lock(args.out):  # another run into --out refuses before it starts
        return _verify(args, selected=selected, execution=execution)


def _verify(args: argparse.Namespace, *, selected, execution) -> int:
    """``dpclaims verify`` once its arguments are checked and --out is locked."""
    from .claims.run import run_claims
    from .reports import write_report

    papers, patterns = _split(args.paper), _split(args.claims)
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
        from .claims.mutation import kill_matrix

        results = results.with_mutants(
            kill_matrix(
                papers=papers or None,
                budget=args.budget,
                seed=args.seed,
                execution=execution.narrowed("mutants"),
            )
        )
    paths = write_report(results, args.out, force=args.force, workers=args.workers)
    _report_summary(results, paths, args.json)
    return results.exit_code()


def _cmd_report(args: argparse.Namespace) -> int:
    from .reports import write_report
    from .results import read_results

    results = read_results(args.results)
    paths = write_report(results, args.out, force=args.force, workers=args.workers)
    _report_summary(results, paths, args.json)
    return results.exit_code()


def _cmd_new_paper(args: argparse.Namespace) -> int:
    from .claims.skeleton import write_skeleton

    written = write_skeleton(args.id, args.dir)
    folder = written[0].parent
    for path in written:
        print(f"wrote {path}")
    print(f"next: dpclaims verify --registry {folder} --papers {args.id} --out {folder}/report")
    print(f"      python -m pytest {folder}")
    return 0


def _grid(text: str) -> list[float] | list[int]:
    """The ``--values`` grid: whole numbers stay ``int``; checked as a rate grid."""
    from .rates import check_grid

    parts = _split(text)
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


def _cmd_rate(args: argparse.Namespace) -> int:
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
    return _run_rate(
        args, experiment, seed=seed, figure_path=figure_path, header=header, title=title
    )


def _with_control(experiment: Any, spec: str) -> Any:
    """``experiment`` with ``--control module:function`` as its trivial algorithm."""
    import dataclasses

    from .claims.standard import RateExperiment

    if not isinstance(experiment, RateExperiment):
        raise InputError(
            f"--control sets the trivial algorithm of a single rate sweep; this claim's "
            f"experiment is a {type(experiment).__name__}: run it without --control"
        )
    return dataclasses.replace(experiment, trivial=_load_callable(spec, role="--control"))


def _rate_figure_path(args: argparse.Namespace, name: str):
    """``--figure``, checked (an existing file only with --force), else NAME.png here, which
    must not exist."""
    from dpclaims.atomic import check_output_file

    from .reports.text import figure_name

    if args.figure:
        return check_output_file(args.figure, "--figure", force=args.force)
    return check_output_file(figure_name(name), "--figure", default=True)


def _user_rate_experiment(args: argparse.Namespace):
    """The RateExperiment of ``dpclaims rate module:function``, its seed and figure name."""
    from pathlib import Path

    from .claims.standard import RateExperiment

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
        experiment=_load_callable(args.claim_id, role="experiment"),
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

    from .claims import experiment as experiment_of
    from .claims.run import claim_seed
    from .claims.standard import AuditExperiment, ValueExperiment

    given = [f"--{name}" for name in _USER_RATE_OPTIONS if getattr(args, name) is not None]
    if given:
        raise InputError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for your own function "
            f"(module:function); claim {args.claim_id!r} takes them from the registry"
        )
    claim = _registry(args).get(args.claim_id)
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


def _run_rate(args, experiment, *, seed: int, figure_path, header: dict, title: str) -> int:
    """Run a rate experiment; print its evidence and verdict, draw its figure."""
    from .reports import write_atomic
    from .reports.figures import rate_figure
    from .results import ClaimResult, read_outcome

    outcome = read_outcome(experiment.run(seed=seed, execution=_execution(args)))
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
        _print_json({**header, "seed": seed, "figure": str(figure), **outcome.to_json()})
    else:
        print(title)
        for label, value in shown.rows():
            print(f"{label:<13} {value}")
        print(f"verdict       {outcome.verdict}")
        print(f"figure        {figure}")
    return 1 if outcome.verdict == Verdict.INCONSISTENT else 0


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpclaims",
        description="Check, by experiment, the claims of papers on DP optimization.",
    )
    parser.add_argument("--version", action="version", version=f"dpclaims {_version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=_Parser,
        metavar="COMMAND",
        help="one of the commands below; 'dpclaims COMMAND --help' gives its options",
    )

    p = sub.add_parser(
        "verify",
        help="check every selected claim by experiment and write the report",
        description="Run the experiments of the selected claims and write results.json, "
        "report.md, report.html and figures/ to --out. Exit code 1 when any claim is a "
        "violation or inconsistent (a finding "
        "about the paper, or a bug) or its experiment failed.",
    )
    _add_paper_option(p, "(default: all; see 'dpclaims list')")
    _add_registry_option(p)
    p.add_argument(
        "--claims", help="comma-separated claim ids or globs, e.g. 'diff2gd.*' (default: all)"
    )
    p.add_argument(
        "--budget",
        default="quick",
        choices=_words(BUDGETS),
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
    _add_run_options(p)
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
    p.set_defaults(handler=_cmd_verify)

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
    p.set_defaults(handler=_cmd_report)

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
        choices=_words(BUDGETS),
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
    _add_registry_option(p)
    own = p.add_argument_group("your own function (module:function)")
    own.add_argument("--param", help="name of the swept parameter (default n)")
    own.add_argument(
        "--expected", type=float, help="the claimed exponent of the error, e.g. -0.5 (required)"
    )
    own.add_argument(
        "--bound",
        choices=_words(BOUNDS),
        help="the claim is an upper bound (error <= C n^expected), a lower bound, or the "
        "exact order (default order)",
    )
    own.add_argument("--margin", type=float, help="tolerance on the exponent (default 0.1)")
    own.add_argument(
        "--limit",
        choices=_words(LIMITS),
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
        choices=_words(FITS),
        help="fit on mean logs (logs, default) or median of means (mom, heavy-tailed errors)",
    )
    own.add_argument(  # the old name: 'method' is the audit's test (--method of 'audit')
        "--method", dest="fit", choices=_words(FITS), help=argparse.SUPPRESS
    )
    _add_run_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_cmd_rate)

    p = sub.add_parser(
        "list",
        help="the claims registry as a table",
        description="List the claims of the packaged papers, the installed plugins and the "
        "--registry folders: id, paper, kind and whether an experiment checks it. Reads the "
        "claims files only; no experiments module is imported.",
    )
    _add_paper_option(p, "(default: all), e.g. murata-suzuki-2023")
    _add_registry_option(p)
    p.add_argument(
        "--kind", help="only this kind (privacy, excess_risk, utility, complexity, lower_bound)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_cmd_list)

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
    _add_run_options(p, seed_help="seed of the trials (default 0)")
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
        "doubling up to --trials, stopping at the first that decides)",
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
    p.set_defaults(handler=_cmd_audit)

    p = sub.add_parser(
        "new-paper",
        help="write a working paper plugin (claims TOML, experiments module, test) to start from",
        description="Write DIR/claims.toml (one privacy and one rate claim), the experiments "
        "module it names and a pytest test. 'dpclaims verify --registry DIR' runs it as "
        "written; then replace the mechanism, the error function and the claims with yours.",
    )
    p.add_argument("id", help="the paper id, e.g. smith-2025 (letters, digits, - _ .)")
    p.add_argument("dir", nargs="?", help="a new or empty folder (default: ./ID)")
    p.set_defaults(handler=_cmd_new_paper)

    p = sub.add_parser(
        "mutants",
        help="run every privacy mutant through its registry audit: kill matrix and mutation score",
        description="Run each known-buggy variant (mutant) of the selected papers through the "
        "audit of the claim it breaks, and print which audits catch which mutants (the kill "
        "matrix) and the share caught (the mutation score).",
    )
    _add_paper_option(
        p, "whose mutants run (default: all); also generic, or a library: opacus, ..."
    )
    p.add_argument(
        "--corpus",
        default="papers",
        choices=("papers", "real", "all"),
        help="the papers' mutants (default), the real-bug reproductions, or both",
    )
    p.add_argument("--budget", default="quick", choices=_words(BUDGETS), help="default quick")
    _add_run_options(p)
    p.add_argument(
        "--json", action="store_true", help="machine-readable output: mutation_score and matrix"
    )
    p.set_defaults(handler=_cmd_mutants)
    for command in sub.choices.values():
        command.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show the traceback of an error",
        )
    return parser


def _words(members: Sequence[str]) -> tuple[str, ...]:
    """Enum members as plain strings: argparse writes ``repr(choice)`` in its messages."""
    return tuple(map(str, members))


def _add_paper_option(p: argparse.ArgumentParser, which: str) -> None:
    """``--paper ID[,ID...]``, the one name of the paper selection of every command (the old
    spelling ``--papers`` of ``verify`` is kept as a hidden alias)."""
    p.add_argument("--paper", metavar="ID[,ID...]", help=f"comma-separated paper ids {which}")
    p.add_argument("--papers", dest="paper", help=argparse.SUPPRESS)


def _add_registry_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--registry",
        action="append",
        metavar="DIR",
        help="also read the papers in this folder of claims TOMLs (repeatable); installed "
        "plugins (entry points in group dpclaims.papers) are always read",
    )


def _add_run_options(
    p: argparse.ArgumentParser,
    seed_help: str = "run seed (default 0); each claim derives its own from it",
) -> None:
    """--seed and the options of the one Execution: --backend, --workers, --scheduler,
    --checkpoint."""
    p.add_argument("--seed", type=int, default=0, help=seed_help)
    p.add_argument(
        "--backend",
        default="auto",
        help="auto (default), serial, processes (or dask, when installed)",
    )
    p.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: all cores)"
    )
    p.add_argument(
        "--scheduler",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (a trusted machine: "
        "it runs the code it is sent)",
    )
    p.add_argument(
        "--checkpoint",
        help="new, empty or checkpoint folder: finished chunks are saved there and the same "
        "command resumes from them",
    )


def _targets_epilog() -> str:
    from dpclaims.targets.catalog import TARGETS

    rows = [
        f"  {name:<22} {description}{'  [buggy]' if buggy else ''}"
        for name, (description, buggy) in TARGETS.items()
    ]
    return "built-in mechanisms:\n" + "\n".join(rows)


def _version() -> str:
    from dpclaims.version import __version__

    return __version__


@contextmanager
def _collect_warnings() -> Iterator[None]:
    """Print each warning once as one line on stderr and keep it for the JSON output."""
    _WARNINGS.clear()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        entry = {"category": category.__name__, "message": " ".join(str(message).split())}
        if entry not in _WARNINGS:
            _WARNINGS.append(entry)
            print(f"dpclaims: warning: {entry['message']}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


@contextmanager
def _quiet_interrupt() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt here and ends forked worker processes without a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    parent = os.getpid()

    def on_interrupt(signum, frame) -> None:
        if os.getpid() != parent:
            os._exit(130)  # a worker forked from this process: the parent reports the interrupt
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _stdout_for_json(active: bool) -> Iterator[None]:
    """With ``--json`` (``active``), stdout carries the JSON object alone: whatever else is
    printed while the command runs (by user code, a C extension, a child process) goes to
    stderr, also at the file-descriptor level when stdout has a descriptor."""
    if not active:
        yield
        return
    stream = sys.stdout
    stream.flush()
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor, e.g. StringIO
        fd = None
    if fd is None:
        json_stream = stream
    else:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        json_stream = open(os.dup(fd), "w", encoding=encoding)  # noqa: SIM115
        os.dup2(sys.stderr.fileno(), fd)
    _JSON_STDOUT.append(json_stream)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        _JSON_STDOUT.pop()
        sys.stderr.flush()
        if fd is not None:
            os.dup2(json_stream.fileno(), fd)
            with suppress(BrokenPipeError):  # a closed pipe is reported once, by main()
                json_stream.close()


def _fail(message: str, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    print(f"dpclaims: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    try:
        args = _build_parser().parse_args(argv)
    except (
        SystemExit
    ) as exc:  # usage errors (code 2, already printed as one line), --help and --version
        return exc.code if isinstance(exc.code, int) else 2
    except KeyboardInterrupt:  # in a program calling main(); the command exits 130 at once
        print("dpclaims: interrupted", file=sys.stderr)
        return 130
    debug = args.debug
    try:
        with (
            _collect_warnings(),
            _quiet_interrupt(),
            _stdout_for_json(getattr(args, "json", False)),
        ):
            code = args.handler(args)
            sys.stdout.flush()  # a closed pipe shows here, not as noise at interpreter exit
            return code
    except BrokenPipeError:  # stdout closed early, e.g. by `dpclaims list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes stdout at exit
        return 141
    except DPClaimsError as exc:
        _fail(f"error: {_first_line(exc)}", debug)
        return 2
    except OSError as exc:
        if _out_of_memory(exc):  # before importing anything more
            _fail(_internal(exc, args.command), debug)
            return 3
        from dpclaims.atomic import full_disk_error

        full = full_disk_error(exc, exc.filename or "the output", _output_option(args, exc))
        if full is not None:
            _fail(f"error: {full}", debug)
            return 2
        if exc.filename is None:
            _fail(_internal(exc, args.command), debug)
            return 3
        _fail(
            f"error: cannot use {exc.filename!r}: {exc.strerror or _first_line(exc)}; "
            "check the path and its permissions",
            debug,
        )
        return 2
    except SystemExit as exc:  # user code ended the program; a CI gate must not pass silently
        _fail(f"error: {called_exit(exc, 'user code', 'it must return instead')}", debug)
        return 2
    except KeyboardInterrupt:
        checkpoint = getattr(args, "checkpoint", None)
        resume = "; rerun the same command to resume from --checkpoint" if checkpoint else ""
        print(f"dpclaims: interrupted{resume}", file=sys.stderr)
        return 130
    except Exception as exc:
        _fail(_internal(exc, args.command), debug)
        return 3


_OUTPUT_OPTIONS = ("checkpoint", "save_pair", "figure", "out")
"""The options that name what a command writes."""


def _output_option(args: argparse.Namespace, exc: OSError) -> str:
    """The option naming the path a failed write was writing (that path or a folder above it),
    for the message; else ``--out`` where the command has one."""
    written = os.path.abspath(os.fsdecode(exc.filename)) if exc.filename else ""
    for name in _OUTPUT_OPTIONS:
        given = getattr(args, name, None)
        if given and (written + os.sep).startswith(os.path.abspath(given) + os.sep):
            return "--" + name.replace("_", "-")
    return "--out" if getattr(args, "out", None) else "output path"


_SIZE_OPTIONS = {
    "audit": "--trials or --workers",
    "rate": "--values or --replicates",
    "verify": "--budget or --workers",
    "mutants": "--budget or --workers",
    "report": "--workers",
}
"""The options that size each command's run, named when it runs out of memory."""


def _internal(exc: BaseException, command: str) -> str:
    """The one line of an unexpected exception: out of memory, a killed worker, else a bug.
    Imports nothing, as memory may have run out."""
    pool = sys.modules.get("concurrent.futures.process")  # not imported: no worker ran
    if isinstance(exc, MemoryError) or (pool and isinstance(exc, pool.BrokenProcessPool)):
        lower = _SIZE_OPTIONS.get(command, "the run's size")
        return (
            f"error: {type(exc).__name__}: the run ran out of memory or a worker process was "
            f"killed; lower {lower} (rerun with --debug for the traceback)"
        )
    problem = _out_of_memory(exc)
    if problem:
        return "error: " + _NO_MEMORY_TO_START.format(what="a library", problem=problem)
    return (
        f"internal error: {type(exc).__name__}: {_first_line(exc)} (a bug in dpclaims; "
        "rerun with --debug for the traceback and report it)"
    )


if __name__ == "__main__":
    sys.exit(main())
