"""Every rate test of a results.json with its controls and exponent reach, as a Markdown table.

One row per rate test (a combined claim's rate parts each get a row): exponent and interval,
the trivial control's verdict and slope, the wrong-rate control's verdict, the exponent reach
and the verdict.  Run: ``python benchmarks/rate_controls_table.py RESULTS.json`` (after, e.g.,
``dpclaims verify --budget quick --out /tmp/rq``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any


def rate_tests(entry: Mapping[str, Any], name: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(name, outcome)`` of every rate outcome in a claim's result, parts included."""
    evidence = entry.get("evidence") or {}
    if isinstance(evidence.get("parts"), Mapping):
        for part, outcome in evidence["parts"].items():
            yield from rate_tests(outcome, f"{name} [{part}]")
    elif entry.get("type") == "rate" and "check" in evidence:
        yield name, entry


def _control(control: Mapping[str, Any] | None, slope: bool) -> str:
    if not control:
        return "—"
    if control["verdict"] is None:
        return "n/a" if control["reason"].startswith("not applicable") else "none"
    return f"{control['verdict']} ({control['exponent']:.3f})" if slope else control["verdict"]


def row(name: str, outcome: Mapping[str, Any]) -> str:
    """One Markdown row."""
    evidence = outcome["evidence"]
    check, controls = evidence["check"], evidence.get("controls") or {}
    reach = evidence.get("reach")
    low, high = check["interval"]
    cells = [
        f"`{name}`",
        f"{check['exponent']:.3f}",
        f"[{low:.3f}, {high:.3f}]",
        _control(controls.get("trivial"), slope=True),
        _control(controls.get("wrong_rate"), slope=False),
        f"{reach['shift']:.3f}" if reach else "—",
        outcome["verdict"],
    ]
    return "| " + " | ".join(cells) + " |"


def main(path: str) -> None:
    results = json.loads(open(path, encoding="utf-8").read())
    print("| rate test | exponent | 90% interval | trivial | wrong rate | reach | verdict |")
    print("|---|---|---|---|---|---|---|")
    for entry in results["claims"]:
        for name, outcome in rate_tests(entry, entry["id"]):
            print(row(name, outcome))


if __name__ == "__main__":
    main(sys.argv[1])
