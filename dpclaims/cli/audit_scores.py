"""``dpclaims audit --scores FILE``: certify scores computed anywhere, of independent runs
(``s0``, ``s1``) or of one run's canaries (``scores``, ``included``)."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from ..vocabulary import Verdict
from .audit_options import check_mode
from .audit_show import print_audit
from .common import print_json

__all__ = ["run_scores"]


def run_scores(args: argparse.Namespace) -> int:
    """``dpclaims audit --scores FILE``: certify scores computed anywhere (see
    :func:`dpclaims.userfiles.load_npz_scores` for the two layouts)."""
    from ..privacy import PrivacyClaim
    from ..resources import Limits
    from ..userfiles import load_npz_scores

    check_mode(args, "--scores")
    claim = PrivacyClaim(args.epsilon, args.delta)
    given = None if args.max_memory_gb is None else args.max_memory_gb * 2**30
    limit = Limits.checked(max_memory=given).max_memory
    try:
        layout, first, second = load_npz_scores(args.scores, max_memory=limit)
        check_mode(args, layout)
        if layout == "one-run":
            return _audit_one_run_scores(args, claim, first, second)
        return _audit_multi_run_scores(args, claim, first, second)
    except MemoryError:
        raise InputError(
            f"--scores file {args.scores!r} ran out of memory; audit a random subsample of the "
            "runs (or canaries), or use a machine with more memory"
        ) from None


def _audit_one_run_scores(args: argparse.Namespace, claim, scores: Any, included: Any) -> int:
    from ..audit import audit_one_run_scores

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
        print_json({"scores": args.scores, "layout": "one-run", **found.to_dict()})
    else:
        print(f"scores        {args.scores}: one run, per-canary scores and inclusion")
        print(found.summary())
    return 1 if found.verdict == Verdict.VIOLATION else 0


def _audit_multi_run_scores(args: argparse.Namespace, claim, s0: Any, s1: Any) -> int:
    from ..audit import Reference, audit_scores

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
        from ..reports import write_atomic
        from ..reports.figures import audit_figure

        figure = write_atomic(figure_path, audit_figure(result))
    if args.json:
        extra = {} if figure is None else {"figure": str(figure)}
        print_json({"scores": args.scores, "layout": "multi-run", **result.to_dict(), **extra})
    else:
        args.mechanism = args.scores
        print_audit(
            args, "scores of runs without (s0) and with (s1) the canary", result, figure=figure
        )
    return 1 if result.verdict == Verdict.VIOLATION else 0
