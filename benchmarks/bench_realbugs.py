"""Kill matrix of the real-bug corpus (issue 28): each bug by its crafted pair, by a search from
the plain user dataset (the CLI's defaults: 200,000 trials, screens of 10,000), by a coupled
replay of the crafted pair, by the sampler checks; each twin on its crafted pair and by a search
from the plain dataset, at 4 seeds.

Usage: ``python benchmarks/bench_realbugs.py [--search-trials N] [--twin-seeds K] [--out FILE.md]``
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

from dpclaims.audit import AuditTest, audit, replay
from dpclaims.audit.core import MIN_TRIALS
from dpclaims.audit.sampler import check_sampler, normaliser_check
from dpclaims.audit.search import SCREEN_TRIALS, search
from dpclaims.claims.mutation import audit_settings
from dpclaims.execution import Execution
from dpclaims.targets.pairs import CanaryPairs
from dpclaims.targets.realbugs import list_bugs


def _eps(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.3g}"


def crafted(bug, twin: bool = False, seed: int = 0):
    settings = {**audit_settings(f"realbug:{bug.name}", "quick"), **bug.audit_options()}
    t = bug.target(twin=twin)
    start = time.perf_counter()
    r = audit(
        t.mechanism,
        t.d0,
        t.d1,
        claim=t.claim,
        seed=seed,
        **settings,
        execution=Execution(progress=False),
    )
    return r, time.perf_counter() - start


def searched(bug, trials: int, twin: bool = False, seed: int = 0):
    plain = bug.plain()
    family = CanaryPairs(plain, unit=bug.claim.unit, relation=bug.claim.relation)
    method = bug.method if bug.method != "histogram" else "threshold"
    start = time.perf_counter()
    try:
        found = search(
            bug.twin if twin else bug.mechanism,
            family,
            claim=bug.claim,
            trials=trials,
            seed=seed,
            screen_trials=max(MIN_TRIALS, min(SCREEN_TRIALS, trials // 10)),  # as the CLI
            test=AuditTest(method=method, statistic=bug.statistic),
            execution=Execution(progress=False),
        )
    except Exception as error:  # noqa: BLE001 - a row of the table, not a crash
        return None, f"error: {error}", time.perf_counter() - start
    return found, found.pair.name, time.perf_counter() - start


def replay_line(bug) -> tuple[str, bool]:
    """The replay's finding (with a point mass's certified ε bound) and its time; whether it
    refutes the claim (a certain ε = ∞, or that bound above the claimed ε)."""
    d0, d1 = bug.pair()
    start = time.perf_counter()
    seen = replay(bug.mechanism, d0, d1, trials=1000, seed=0, delta=bug.claim.delta)
    bound = f" (ε ≥ {_eps(seen.epsilon_lower)})" if seen.finding == "point-mass" else ""
    line = f"{seen.finding}{bound}, {time.perf_counter() - start:.1f}"
    return line, seen.refutes(bug.claim.epsilon)


def sampler_line(bug) -> str:
    if bug.sampler is None:
        return "—"
    findings = check_sampler(bug.sampler, bug.plain(), rate=bug.sampling_rate, draws=2000)
    if bug.normaliser is not None:
        findings.append(normaliser_check(bug.normaliser, *bug.pair()))
    failed = [f.check for f in findings if not f.passed]
    return "FAIL " + ", ".join(failed) if failed else "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--search-trials", type=int, default=200_000)
    parser.add_argument("--twin-seeds", type=int, default=4)
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    lines = [
        "| bug | true ε | claim ε | crafted: verdict, ε ≥, s | search: verdict, ε ≥, s "
        "(pair) | replay (crafted pair), s | sampler check | twin on crafted pair "
        f"(seeds 0–{args.twin_seeds - 1}) | twin searched (seeds 0–{args.twin_seeds - 1}) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    caught = {"crafted": 0, "search": 0, "replay": 0, "sampler": 0}
    twin_violations = 0
    bugs = [b for b in list_bugs() if not args.only or b.name in args.only]
    for bug in bugs:
        r, sec = crafted(bug)
        found, pair, ssec = searched(bug, args.search_trials)
        rline, refuted = replay_line(bug)
        sline = sampler_line(bug)
        seeds = range(args.twin_seeds)
        twins = [crafted(bug, twin=True, seed=s)[0].verdict for s in seeds]
        twin_found = [searched(bug, args.search_trials, twin=True, seed=s)[0] for s in seeds]
        twin_search = [f.verdict if f is not None else "error" for f in twin_found]
        twin_violations += (twins + twin_search).count("violation")
        caught["crafted"] += r.verdict == "violation"
        caught["search"] += found is not None and found.verdict == "violation"
        caught["replay"] += refuted
        caught["sampler"] += sline.startswith("FAIL")
        s_cell = (
            pair
            if found is None
            else f"{found.verdict}, {_eps(found.epsilon_lower)}, {ssec:.1f} ({pair})"
        )
        true = "—" if bug.true_epsilon is None else _eps(bug.true_epsilon)
        row = (
            f"| {bug.name} | {true} | {bug.claim.epsilon:g} | {r.verdict}, "
            f"{_eps(r.epsilon_lower)}, {sec:.1f} | {s_cell} | {rline} | {sline} | "
            f"{', '.join(twins)} | {', '.join(twin_search)} |"
        )
        lines.append(row)
        print(row, flush=True)
    summary = (
        f"{len(bugs)} bugs: crafted pair catches {caught['crafted']}, search from the plain "
        f"dataset {caught['search']}, replay (ε = ∞ certain, or a point mass's bound above the "
        f"claim) {caught['replay']}, sampler checks {caught['sampler']}; twins said violation "
        f"{twin_violations} times"
    )
    lines.append("")
    lines.append(summary)
    print(summary)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
