"""Plain-text pieces shared by the Markdown and HTML writers and the command line."""

from __future__ import annotations

import re
from typing import Any, Mapping

from .schema import VERDICTS

__all__ = ["parts", "key_figure", "evidence_rows", "footer_rows", "figure_name", "counts_line", "settings_rows",
           "VERDICT_LABELS", "FINDING_VERDICTS", "findings", "undecided", "unchecked", "why_undecided",
           "evidence_paragraph", "measured", "multiplicity_text", "shown_in_findings", "glossary", "confirmation_line"]

VERDICT_LABELS = {
    "consistent": "consistent",
    "violation": "VIOLATION",
    "inconsistent": "INCONSISTENT",
    "inconclusive": "inconclusive",
    "not_checkable": "not checkable",
    "error": "ERROR",
}


FINDING_VERDICTS = ("violation", "inconsistent")
"""Verdicts that are findings against a claim (kept only when a rerun confirmed them)."""

_GLOSSARY = (
    (r"\bspec \d{3}\b|\bspec(?:'s)? §?\d", "spec NNN, spec x.y",
     "the project's written specification of a paper (000 Lowy-Liu-Asi, 001 Ghazi et al., 002 "
     "Choquette-Choo-Ganesh-Thakurta, 003 pure-DP heavy-tailed SCO, 004 Murata-Suzuki DIFF2) and its sections"),
    (r"§\s?7\s?\(a\)", "§7(a)", "the spec's privacy audits: neighbouring datasets to audit each privacy claim on"),
    (r"§\s?7\s?\(b\)", "§7(b)", "the spec's rate tests: sweeps that check a claimed exponent"),
    (r"§\s?7\s?\(c\)", "§7(c)", "the spec's mutants: deliberately broken implementations an audit must catch"),
    (r"\bRT-?\d", "RT-n (RT-7A, RT-3n, ...)",
     "rate test number n of the spec's plan; a suffix names a variant (e.g. the parameter swept)"),
    (r"\b[PQ][1-4]\b", "P1-P4, Q1-Q4", "the neighbouring dataset pairs of the spec's privacy audits"),
    (r"\bPV-\d", "PV-1, PV-2, PV-3",
     "exactly solvable variants of the heavy-tailed paper's private minimiser (1-d, low-d box, grid)"),
    (r"\bM\d{1,2}\b", "M1, M2, ...", "a mutant of the spec's list (a known bug the checks must catch)"),
    (r"\bH[1-4]\b", "H1-H4",
     "hard instances: H1 linear loss on a hypercube, H2 its one-dimensional case, H3 absolute deviation "
     "(non-smooth), H4 strongly convex quadratic"),
    (r"\[DERIVED\]", "[DERIVED]", "a statement the spec's authors worked out; the paper does not print it"),
    (r"\[DEFAULT", "[DEFAULT]", "a choice the paper leaves open, fixed by the spec"),
    (r"\[PROTOTYPE\]|\[SIM\]", "[PROTOTYPE], [SIM]", "a number from a quick prototype written with the spec"),
    (r"\[RECON", "[RECON]",
     "reconstructed by the spec's authors where the paper's text is garbled or missing; check it"),
    (r"\brelaxed\b", "relaxed (constants)",
     "the algorithm with smaller constants than the paper's so that rate tests run at laptop scale (the "
     "exponents are unchanged; the paper's privacy theorem does not cover this mode)"),
    (r"\bTOST\b", "TOST", "two one-sided tests: the equivalence test behind consistent/inconsistent"),
)
"""(pattern, term, meaning) of the internal labels a report may contain."""


def parts(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``[entry]``, or for a combined experiment (evidence ``{"parts": {name: result}}``) one entry per part.

    A part's entry has the id ``"<claim id> [<name>]"`` and the part's type, verdict, summary and evidence.
    """
    sub = entry["evidence"].get("parts") if entry["verdict"] not in ("not_checkable", "error") else None
    if not isinstance(sub, Mapping):
        return [entry]
    out: list[Mapping[str, Any]] = []
    for name, result in sub.items():
        out += parts({**entry, "id": f"{entry['id']} [{name}]", "type": result["type"], "verdict": result["verdict"],
                      "summary": result["summary"], "evidence": result["evidence"]})
    return out


def _num(value: Any, spec: str = ".3g") -> str:
    return "n/a" if value is None else format(value, spec)


def key_figure(entry: Mapping[str, Any]) -> str:
    """The one number a reader looks at first, e.g. ``"ε ≥ 0.912 (claimed 1)"``."""
    verdict, ev = entry["verdict"], entry["evidence"]
    if verdict == "not_checkable":
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
        return (f"slope {check['exponent']:.3f} [{_num(low, '.3f')}, {_num(high, '.3f')}] "
                f"vs {check['expected']:g} ± {check['margin']:g}")
    return entry["summary"]


def _brief(text: str, limit: int = 140) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (the claim's section has it whole)."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _join(values: Any) -> str:
    return ", ".join(format(v, "g") if isinstance(v, (int, float)) else str(v) for v in values)


def evidence_rows(entry: Mapping[str, Any], footer: bool = True) -> list[tuple[str, str]]:
    """(label, value) rows with every statistical choice of a checked (single-part) entry's evidence.

    ``footer`` adds the experiment seed and wall time.
    """
    ev, kind = entry["evidence"], entry["type"]
    rows: list[tuple[str, str]] = []
    if kind == "audit":
        rows += [
            ("claim", f"({ev['epsilon']:g}, {ev['delta']:g})-DP, {ev['unit']} level, {ev['relation']}"),
            ("lower bound", f"{_num(ev['epsilon_lower'], '.4f')} "
                            f"({'certified' if ev['certified'] else 'parametric estimate, not certified'})"),
            ("method", f"{ev['method']}; interval {ev['ci']} at confidence {ev['confidence']:g}"),
            ("trials", f"{ev['trials']} per dataset: {ev['calibration_trials']} calibration, "
                       f"{ev['certification_trials']} certification"),
            ("test", f"{ev.get('statistic', 'n/a')}; {ev.get('direction', 'n/a')}, threshold {_num(ev.get('threshold'))}"),
            ("errors", f"FP {ev['false_positives']}/{ev['n_negative']} (upper {ev['fpr_upper']:.4g}), "
                       f"FN {ev['false_negatives']}/{ev['n_positive']} (upper {ev['fnr_upper']:.4g})"),
        ]
        if ev.get("reference_epsilon") is not None:
            rows.append(("exact implementation", f"ε ≈ {ev['reference_epsilon']:g}"))
        if ev["seed"] != entry["seed"]:
            rows.append(("audit seed", str(ev["seed"])))
    elif kind == "rate":
        sweep, fit, check = ev["sweep"], ev["fit"], ev["check"]
        rows += [
            ("sweep", f"{sweep['param']} ∈ {{{_join(sweep['values'])}}}, {sweep['replicates']} replicates"
                      + (f", batch {sweep['batch']}" if sweep.get("batch", 1) != 1 else "")),
            ("fixed", ", ".join(f"{k}={v}" for k, v in sweep.get("fixed", {}).items()) or "none"),
            ("fit", f"{fit['method']}: slope {_num(fit['exponent'], '.4f')}, {fit['confidence']:.0%} interval "
                    f"[{_num(fit['interval'][0], '.4f')}, {_num(fit['interval'][1], '.4f')}]"),
            ("test", f"equivalence to {check['expected']:g} ± {check['margin']:g} at {check['confidence']:.0%}: "
                     f"{check['verdict']}" + ("; slope drifts over the grid" if check.get("drifting") else "")),
        ]
        if check.get("message"):
            rows.append(("note", check["message"]))
        if sweep["seed"] != entry["seed"]:
            rows.append(("sweep seed", str(sweep["seed"])))
    elif kind == "value":
        for name, c in ev.get("checks", {}).items():
            if isinstance(c, Mapping):
                measured = c.get("value", c.get("estimate"))
                interval = f" [{_num(c.get('low'))}, {_num(c.get('high'))}]" if "low" in c else ""
                rows.append((name, f"{_num(measured, '.6g')}{interval} vs {_num(c.get('expected'), '.6g')}: "
                                   f"{'ok' if c.get('ok') else 'off'}"))
    if ev.get("note"):
        rows.append(("note", str(ev["note"])))
    if footer:
        rows += footer_rows(entry)
    return rows


def footer_rows(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The experiment seed and wall time of an entry."""
    return [("experiment seed", str(entry["seed"])), ("wall time", f"{entry['wall_time']:.2f} s")]


def figure_name(claim_id: str) -> str:
    """File name of a claim's figure: the id with anything but ``[A-Za-z0-9._-]`` replaced."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", claim_id) + ".png"


def counts_line(results: Mapping[str, Any]) -> str:
    """E.g. ``"150 claims: 3 consistent, 1 violation, 146 not checkable"`` (zero counts left out)."""
    counts = results["counts"]
    parts = [f"{counts[v]} {VERDICT_LABELS[v].lower()}" for v in VERDICTS if counts[v]]
    return f"{len(results['claims'])} claims: " + ", ".join(parts)


def settings_rows(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows describing how the results were produced."""
    s, env = results["settings"], results["environment"]
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v)
    rows = [
        ("created", results["created"]),
        ("budget", s["budget"]),
        ("seed", f"{s['seed']} (each claim runs with its own seed derived from it and the claim id)"),
        ("backend", f"{s['backend']}, workers {s['workers'] if s['workers'] else 'all cores'}"),
        ("selection", f"papers {', '.join(s['papers']) if s['papers'] else 'all'}; "
                      f"claims {', '.join(s['claims']) if s['claims'] else 'all'}"),
    ]
    if s["options"]:
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in s["options"].items())))
    rows += [
        ("wall time", f"{results['wall_time']:.1f} s"),
        ("versions", versions),
        ("python", f"{env['python']} on {env['platform']}, {env['cpu_count']} cores"),
    ]
    return rows


def findings(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries whose verdict is a finding (confirmed by a rerun when the run confirmed findings)."""
    return [e for e in results["claims"] if e["verdict"] in FINDING_VERDICTS]


def undecided(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries the run could not decide: inconclusive (including unconfirmed findings) or failed."""
    return [e for e in results["claims"] if e["verdict"] in ("inconclusive", "error")]


def unchecked(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries without an experiment at this budget (``not_checkable``)."""
    return [e for e in results["claims"] if e["verdict"] == "not_checkable"]


def _piece_why(piece: Mapping[str, Any]) -> str:
    """Why one checked piece is inconclusive."""
    ev = piece["evidence"]
    if ev.get("caveats"):
        return "; ".join(ev["caveats"])
    if piece["type"] == "rate":
        check = ev["check"]
        low, high = check["interval"]
        return (f"the slope's {check['confidence']:.0%} interval [{_num(low, '.3f')}, {_num(high, '.3f')}] "
                f"straddles an edge of the claimed {check['expected']:g} ± {check['margin']:g}: the sweep is too "
                "noisy or too short to decide")
    return piece["summary"]


def why_undecided(entry: Mapping[str, Any]) -> str:
    """One sentence: why an inconclusive or failed claim was not decided."""
    if entry["verdict"] == "error":
        return f"the experiment failed: {entry['error']}"
    if entry.get("reason"):
        return entry["reason"]
    pieces = [p for p in parts(entry) if p["verdict"] == "inconclusive"]
    if len(parts(entry)) == 1:
        return _piece_why(entry)
    return "; ".join(f"{p['id'].split(' [')[-1].rstrip(']')}: {_piece_why(p)}" for p in pieces)


def _measured(piece: Mapping[str, Any]) -> str:
    """What one checked piece measured, in a sentence."""
    ev = piece["evidence"]
    if piece["type"] == "rate":
        sweep, check = ev["sweep"], ev["check"]
        low, high = check["interval"]
        return (f"a sweep of {sweep['param']} over {{{_join(sweep['values'])}}} with {sweep['replicates']} "
                f"replicates gives a fitted slope of {check['exponent']:.3f}, {check['confidence']:.0%} interval "
                f"[{_num(low, '.3f')}, {_num(high, '.3f')}], where the claim allows {check['expected']:g} ± "
                f"{check['margin']:g}")
    if piece["type"] == "audit":
        label = "certifies" if ev["certified"] else "estimates (not certified)"
        return (f"an audit with {ev['trials']} runs per dataset {label} ε ≥ {_num(ev['epsilon_lower'], '.3f')} "
                f"at confidence {ev['confidence']:g}, against the claimed ({ev['epsilon']:g}, {ev['delta']:g})-DP")
    off = [f"{name} = {_num(c.get('value', c.get('estimate')), '.6g')} against {_num(c.get('expected'), '.6g')}"
           for name, c in ev.get("checks", {}).items() if isinstance(c, Mapping) and not c.get("ok")]
    return "the computation gives " + ("; ".join(off) if off else piece["summary"])


def shown_in_findings(entry: Mapping[str, Any], piece: Mapping[str, Any]) -> bool:
    """True when ``piece`` is the contradicted part of a finding: its figure is shown under Findings."""
    return entry["verdict"] in FINDING_VERDICTS and piece["verdict"] == entry["verdict"]


def measured(entry: Mapping[str, Any]) -> str:
    """The key figure of a finding's contradicted part(s), e.g. ``"RT-8_m: slope 0.005 [...] vs -0.5 ± 0.15"``."""
    pieces = [p for p in parts(entry) if p["verdict"] in FINDING_VERDICTS]
    if len(parts(entry)) == 1 or not pieces:
        return key_figure(entry)
    return "; ".join(f"{p['id'].split(' [')[-1].rstrip(']')}: {key_figure(p)}" for p in pieces)


def evidence_paragraph(entry: Mapping[str, Any]) -> str:
    """One paragraph of evidence for a finding: what the first run measured, the setting, the rerun."""
    pieces = [p for p in parts(entry) if p["verdict"] in FINDING_VERDICTS] or [entry]
    text = "; ".join((f"{p['id'].split(' [')[-1].rstrip(']')}: " if len(parts(entry)) > 1 else "") + _measured(p)
                     for p in pieces)
    text = text[0].upper() + text[1:] + "."
    confirmation = entry.get("confirmation")
    if confirmation and confirmation.get("confirmed"):
        rerun = {p["id"]: p for p in parts({**entry, "verdict": confirmation["verdict"],
                                            "summary": confirmation["summary"],
                                            "evidence": confirmation["evidence"]})}
        again = "; ".join(key_figure(rerun[p["id"]]) for p in pieces if p["id"] in rerun)
        text += (f" A rerun on the independent seed {confirmation['seed']} at the same budget finds it again "
                 f"({again}).")
    elif confirmation is None:
        text += " This run did not confirm findings by a rerun."
    note = str(entry["evidence"].get("note") or "").strip().rstrip(".")
    if note:
        text += f" Setting: {note}."
    return " ".join(text.split())


def multiplicity_text(results: Mapping[str, Any]) -> str:
    """How many tests ran and how many false findings chance alone would give at their levels."""
    m = results.get("multiplicity")
    if m is None:
        from .results import multiplicity

        m = multiplicity(results["claims"])
    levels = ", ".join(f"{a:.3g}" for a in m.get("levels", [])) or "n/a"
    text = (f"This run made {m['rate_tests']} rate tests and {m['audit_tests']} privacy audits (each a "
            f"statistical test at level {levels}: the chance of a false finding when the claim holds, at most) "
            f"and {m['value_checks']} value checks (computed numbers compared with the paper's within a "
            "tolerance; no error level). If every claim held, chance alone would give at most "
            f"{m['expected_false_first']:.2f} false findings on first runs")
    if results["settings"].get("confirm", False):
        text += (f"; a finding counts only when a rerun on an independent seed finds it again, which brings this "
                 f"to at most {m['expected_false_confirmed']:.3f}. {m['findings_confirmed']} finding(s) were "
                 f"confirmed, {m['findings_not_confirmed']} were not (listed as not decided).")
    else:
        text += "; findings were not confirmed by a rerun in this run."
    return text


def _texts(results: Mapping[str, Any]):
    for e in results["claims"]:
        yield e["statement"]
        yield e["summary"]
        yield e.get("reason") or ""
        for piece in parts(e):
            yield piece["id"]
            yield str(piece["evidence"].get("note") or "") if isinstance(piece["evidence"], Mapping) else ""


def glossary(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(term, meaning) of every internal label that occurs in the report's text."""
    text = "\n".join(_texts(results))
    return [(term, meaning) for pattern, term, meaning in _GLOSSARY if re.search(pattern, text)]


def confirmation_line(entry: Mapping[str, Any]) -> str | None:
    """The rerun of a finding in one line (None when the first run found nothing)."""
    confirmation = entry.get("confirmation")
    if not confirmation:
        return None
    if confirmation.get("error"):
        return confirmation["error"]
    outcome = "confirms the finding" if confirmation["confirmed"] else "does not confirm it: not decided"
    return (f"rerun on the independent seed {confirmation['seed']}: {confirmation['verdict']} "
            f"({confirmation['summary']}); {outcome}")
