"""Plain-text pieces shared by the Markdown and HTML writers and the command line."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any

from ..verdicts import NOT_RUN, UNCHECKED
from .schema import VERDICTS

__all__ = [
    "parts",
    "key_figure",
    "evidence_rows",
    "footer_rows",
    "figure_name",
    "counts_line",
    "settings_rows",
    "VERDICT_LABELS",
]
__all__ += ["plural"]

VERDICT_LABELS = {
    "consistent": "consistent",
    "consistent_weak": "consistent (weak)",
    "formula": "formula",
    "violation": "VIOLATION",
    "inconsistent": "INCONSISTENT",
    "inconclusive": "inconclusive",
    "skipped": "skipped",
    "not_checkable": "not checkable",
    "not_implemented": "not implemented",
    "error": "ERROR",
}


_TESTS = {
    "order": "equivalence to {e:g} ± {m:g}",
    "upper": "one-sided: exponent ≤ {e:g} + {m:g}",
    "lower": "one-sided: exponent ≥ {e:g} − {m:g}",
}


def _exponent_bound(check: Mapping[str, Any]) -> str:
    """The side of ``expected`` the exponent keeps (an upper bound as the parameter → 0: below)."""
    bound = check.get("bound", "order")
    if check.get("limit") == "small" and bound != "order":
        return {"upper": "lower", "lower": "upper"}[bound]
    return bound


def parts(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``[entry]``, or for a combined experiment (evidence ``{"parts": {name: result}}``) one entry
    per part.

    A part's entry has the id ``"<claim id> [<name>]"`` and the part's type, verdict, summary and
    evidence.
    """
    sub = entry["evidence"].get("parts") if entry["verdict"] not in UNCHECKED else None
    if not isinstance(sub, Mapping):
        return [entry]
    out: list[Mapping[str, Any]] = []
    for name, result in sub.items():
        out += parts(
            {
                **entry,
                "id": f"{entry['id']} [{name}]",
                "type": result["type"],
                "verdict": result["verdict"],
                "summary": result["summary"],
                "evidence": result["evidence"],
            }
        )
    return out


def _num(value: Any, spec: str = ".3g") -> str:
    """``value`` formatted with ``spec``; a fixed-point spec that would round a nonzero value
    to zero gives 2 significant digits instead (0.0004 is not 0.000)."""
    if value is None:
        return "n/a"
    text = format(value, spec)
    fixed = spec.endswith("f") and isinstance(value, (int, float)) and math.isfinite(value)
    if fixed and value != 0 and float(text) == 0:
        return f"{value:.2g}"
    return text


def key_figure(entry: Mapping[str, Any]) -> str:
    """The one number a reader looks at first, e.g. ``"ε ≥ 0.912 (claimed 1)"``."""
    verdict, ev = entry["verdict"], entry["evidence"]
    if verdict in NOT_RUN:
        return _brief(entry["reason"])
    if verdict == "error":
        return _brief(entry["error"])
    if len(parts(entry)) > 1:
        return _brief(entry["summary"])
    if entry["type"] == "audit":
        sign = "≥" if ev["certified"] else "≈"
        note = "" if ev["certified"] else ", estimate"
        return f"ε {sign} {_num(ev['epsilon_lower'], '.3f')} (claimed {ev['epsilon']:g}{note})"
    if entry["type"] == "rate":
        check = ev["check"]
        low, high = check["interval"]
        claimed = check.get("claimed") or f"{check['expected']:g} ± {check['margin']:g}"
        interval = f"[{_num(low, '.3f')}, {_num(high, '.3f')}]"
        return f"slope {check['exponent']:.3f} {interval} vs {claimed}"
    return entry["summary"]


def _brief(text: str, limit: int = 140) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (the claim's section has it
    whole)."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _join(values: Any) -> str:
    return ", ".join(format(v, "g") if isinstance(v, (int, float)) else str(v) for v in values)


def evidence_rows(entry: Mapping[str, Any], footer: bool = True) -> list[tuple[str, str]]:
    """(label, value) rows with every statistical choice of a checked (single-part) entry's
    evidence.

    ``footer`` adds the experiment seed and wall time.
    """
    ev, kind = entry["evidence"], entry["type"]
    rows: list[tuple[str, str]] = []
    if kind == "audit":
        rows += [
            (
                "claim",
                f"({ev['epsilon']:g}, {ev['delta']:g})-DP, {ev['unit']} level, {ev['relation']}",
            ),
            (
                "lower bound",
                f"{_num(ev['epsilon_lower'], '.4f')} "
                f"({'certified' if ev['certified'] else 'parametric estimate, not certified'})",
            ),
            ("method", f"{ev['method']}; interval {ev['ci']} at confidence {ev['confidence']:g}"),
            (
                "trials",
                f"{ev['trials']} per dataset: {ev['calibration_trials']} calibration, "
                f"{ev['certification_trials']} certification",
            ),
            (
                "test",
                f"{ev.get('statistic', 'n/a')}; {ev.get('direction', 'n/a')}, threshold "
                f"{_num(ev.get('threshold'))}",
            ),
            (
                "errors",
                f"FP {ev['false_positives']}/{ev['n_negative']} (upper {ev['fpr_upper']:.4g}), "
                f"FN {ev['false_negatives']}/{ev['n_positive']} (upper {ev['fnr_upper']:.4g})",
            ),
        ]
        if ev.get("reference_epsilon") is not None:
            rows.append(("exact implementation", f"ε ≈ {ev['reference_epsilon']:g}"))
        elif ev.get("reference_note"):
            rows.append(("exact implementation", f"none: {ev['reference_note']}"))
        if ev.get("ceiling") is not None:
            ceiling = _num(ev["ceiling"], ".4f")
            rows.append(("ceiling", f"{ceiling} (the most these trials can certify)"))
        if ev.get("reason"):
            rows.append(("why", ev["reason"]))
        if ev["seed"] != entry["seed"]:
            rows.append(("audit seed", str(ev["seed"])))
    elif kind == "rate":
        sweep, fit, check = ev["sweep"], ev["fit"], ev["check"]
        rows += [
            (
                "sweep",
                f"{sweep['param']} ∈ {{{_join(sweep['values'])}}}, {sweep['replicates']} replicates"
                + (f", batch {sweep['batch']}" if sweep.get("batch", 1) != 1 else ""),
            ),
            ("fixed", ", ".join(f"{k}={v}" for k, v in sweep.get("fixed", {}).items()) or "none"),
            (
                "fit",
                f"{fit['method']}: slope {_num(fit['exponent'], '.4f')}, "
                f"{fit['confidence']:.0%} interval "
                f"[{_num(fit['interval'][0], '.4f')}, {_num(fit['interval'][1], '.4f')}]",
            ),
            (
                "test",
                _TESTS[_exponent_bound(check)].format(e=check["expected"], m=check["margin"])
                + f" at {check['confidence']:.0%}: {check['verdict']}"
                + ("; slope drifts over the grid" if check.get("drifting") else ""),
            ),
        ]
        claim = ev.get("claim") or {}
        if claim.get("stated"):
            bound = "" if claim["bound"] == "order" else f" ({claim['bound']} bound)"
            rows.insert(0, ("claim", claim["stated"] + bound))
        if claim.get("tested"):
            rows.insert(1, ("tested", f"{claim['tested']} — why: {claim['why']}"))
        if check.get("message"):
            rows.append(("note", check["message"]))
        if sweep["seed"] != entry["seed"]:
            rows.append(("sweep seed", str(sweep["seed"])))
    elif kind == "value":
        for name, c in ev.get("checks", {}).items():
            if isinstance(c, Mapping):
                measured = c.get("value", c.get("estimate"))
                interval = f" [{_num(c.get('low'))}, {_num(c.get('high'))}]" if "low" in c else ""
                sides = (("le", "≤"), ("ge", "≥"))
                relation, limit = next(
                    ((r, c[k]) for k, r in sides if k in c), ("vs", c.get("expected"))
                )
                rows.append(
                    (
                        name,
                        f"{_num(measured, '.6g')}{interval} {relation} "
                        f"{_num(limit, '.6g')}: {'ok' if c.get('ok') else 'off'}",
                    )
                )
    if ev.get("note"):
        rows.append(("note", str(ev["note"])))
    if footer:
        rows += footer_rows(entry)
    return rows


def footer_rows(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The experiment seed and wall time of an entry."""
    return [("experiment seed", str(entry["seed"])), ("wall time", f"{entry['wall_time']:.2f} s")]


MAX_FIGURE_STEM = 80
"""The longest figure file name (without the suffix) taken from an id as it is."""


def figure_name(claim_id: str) -> str:
    """File name of a claim's figure: the id with ``.png`` when it is at most
    :data:`MAX_FIGURE_STEM` characters of ``[A-Za-z0-9._-]`` not starting with a dot; else its
    first such characters (anything else replaced by ``_``) and a digest of the whole id, so
    that two ids never share a file and a name stays short."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", claim_id)
    if safe == claim_id and len(safe) <= MAX_FIGURE_STEM and not safe.startswith("."):
        return f"{safe}.png"
    digest = hashlib.sha256(claim_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{safe.lstrip('.')[: MAX_FIGURE_STEM - 13]}-{digest}.png"


def plural(count: int, noun: str) -> str:
    """``"1 claim"``, ``"2 claims"``: a count and its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def counts_line(results: Mapping[str, Any]) -> str:
    """E.g. ``"150 claims: 3 consistent, 1 violation, 146 not checkable"`` (zero counts left
    out)."""
    counts = results["counts"]
    parts = [f"{counts[v]} {VERDICT_LABELS[v].lower()}" for v in VERDICTS if counts.get(v)]
    return f"{plural(len(results['claims']), 'claim')}: " + ", ".join(parts)


def settings_rows(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows describing how the results were produced."""
    s, env = results["settings"], results["environment"]
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v)
    rows = [
        ("created", results["created"]),
        ("budget", s["budget"]),
        (
            "seed",
            f"{s['seed']} (each claim runs with its own seed derived from it and the claim id)",
        ),
        ("backend", f"{s['backend']}, workers {s['workers'] if s['workers'] else 'all cores'}"),
        (
            "selection",
            f"papers {', '.join(s['papers']) if s['papers'] else 'all'}; "
            f"claims {', '.join(s['claims']) if s['claims'] else 'all'}",
        ),
    ]
    if s["options"]:
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in s["options"].items())))
    rows += [
        ("wall time", f"{results['wall_time']:.1f} s"),
        ("versions", versions),
        ("python", f"{env['python']} on {env['platform']}, {env['cpu_count']} cores"),
    ]
    return rows
