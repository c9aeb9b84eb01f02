"""The text and JSON of ``dpclaims audit``: an audit's rows, a search's certain finding, a
coupled replay, and the replay of a given pair without an audit (``--replay`` alone)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import print_json

__all__ = ["print_audit", "print_certain", "print_replay", "replay_pair"]


def print_audit(args: argparse.Namespace, description: str, result, *, figure, found=None) -> None:
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


def print_certain(args: argparse.Namespace, description: str, found) -> int:
    """A search that found ε = ∞, certain, on a neighbouring pair: the verdict ``violation``
    with the pair (saved with --save-pair), no audit; exit code 1."""
    if args.json:
        extra = {"saved_pair": args.save_pair} if args.save_pair else {}
        print_json(
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


def print_replay(replayed, claim) -> None:
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


def replay_pair(
    args: argparse.Namespace, mechanism: Any, d0: Any, d1: Any, description: str, claim: Any
) -> int:
    """``audit --replay`` without --search: the coupled replay of the given pair, no audit; a
    bound it certifies above the claimed ε (a certain ε = ∞, or a point mass's) is a violation
    (exit 1) of the claim, whose neighbours the pair must be."""
    from ..audit import replay
    from ..audit.core import _check_neighbours
    from ..data import DATASETS

    if isinstance(d0, DATASETS) and isinstance(d1, DATASETS):
        _check_neighbours(d0, d1, claim, None)

    if args.save_pair:
        from ..audit.search import Pair, save_pair

        save_pair(Pair("given", d0, d1), args.save_pair, force=args.force)
    replayed = replay(
        mechanism, d0, d1, trials=args.replay, seed=args.seed, confidence=args.confidence,
        delta=claim.delta,
    )  # fmt: skip
    if args.json:
        print_json(
            {"mechanism": args.mechanism, "description": description, "replay": replayed.to_dict()}
        )
    else:
        print(f"mechanism     {args.mechanism}: {description}")
        print_replay(replayed, claim)
    return 1 if replayed.refutes(claim.epsilon) else 0
