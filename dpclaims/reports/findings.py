"""The reader's first pages of a report: findings, what was not decided and why, tests run, labels.

Plain text shared by the Markdown and HTML writers: which claims are findings (a violation
or inconsistency, confirmed by a rerun when the run confirmed findings), why each
undecided claim was not decided, one paragraph of evidence per finding, how many tests
ran with the false findings chance alone would give, and a glossary of the specs'
internal labels (RT-8, §7(a), Q2, ...) that occur in the report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..verdicts import FINDINGS, NOT_RUN
from .text import _join, _num, key_figure, parts

__all__ = [
    "FINDINGS",
    "findings",
    "undecided",
    "unchecked",
    "why_undecided",
    "measured",
    "evidence_paragraph",
    "shown_in_findings",
    "confirmation_line",
    "multiplicity_text",
    "glossary",
]


_SPECS = (
    "000 Lowy-Liu-Asi, 001 Ghazi et al., 002 Choquette-Choo-Ganesh-Thakurta, "
    "003 pure-DP heavy-tailed SCO, 004 Murata-Suzuki DIFF2"
)

_GLOSSARY = (
    (
        r"\bspec \d{3}\b|\bspec(?:'s)? §?\d",
        "spec NNN, spec x.y",
        f"the project's written specification of a paper ({_SPECS}) and its sections",
    ),
    (
        r"§\s?7\s?\(a\)",
        "§7(a)",
        "the spec's privacy audits: neighbouring datasets to audit each privacy claim on",
    ),
    (r"§\s?7\s?\(b\)", "§7(b)", "the spec's rate tests: sweeps that check a claimed exponent"),
    (
        r"§\s?7\s?\(c\)",
        "§7(c)",
        "the spec's mutants: deliberately broken implementations an audit must catch",
    ),
    (
        r"\bRT-?\d",
        "RT-n (RT-7A, RT-3n, ...)",
        "rate test number n of the spec's plan; a suffix names a variant (e.g. the parameter "
        "swept)",
    ),
    (
        r"\b[PQ][1-4]\b",
        "P1-P4, Q1-Q4",
        "the neighbouring dataset pairs of the spec's privacy audits (Lowy-Liu-Asi: P1 and Q1 "
        "two clusters of users at the halting threshold, P2 and Q2 one user moved far away)",
    ),
    (
        r"\bPV-\d",
        "PV-1, PV-2, PV-3",
        "exactly solvable variants of the heavy-tailed paper's private minimiser "
        "(one-dimensional, low-dimensional box, grid)",
    ),
    (
        r"\bM\d{1,2}\b",
        "M1, M2, ...",
        "a mutant of the spec's list (a known bug the checks must catch)",
    ),
    (
        r"\bH[1-4]\b",
        "H1-H4",
        "hard instances of the Lowy-Liu-Asi spec: H1 linear loss on a hypercube, H2 its "
        "one-dimensional case, H3 absolute deviation (non-smooth), H4 strongly convex quadratic",
    ),
    (
        r"\[DERIVED\]",
        "[DERIVED]",
        "a statement the spec's authors worked out; the paper does not print it",
    ),
    (r"\[DEFAULT", "[DEFAULT]", "a choice the paper leaves open, fixed by the spec"),
    (
        r"\[PROTOTYPE\]|\[SIM\]",
        "[PROTOTYPE], [SIM]",
        "a number from a quick prototype written with the spec",
    ),
    (
        r"\[RECON",
        "[RECON]",
        "reconstructed by the spec's authors where the paper's text is garbled or missing; "
        "check it",
    ),
    (
        r"\brelaxed\b",
        "relaxed (constants)",
        "the algorithm with smaller constants than the paper's so that rate tests run at laptop "
        "scale (the exponents are unchanged; the paper's privacy theorem does not cover this mode)",
    ),
    (
        r"\bTOST\b",
        "TOST",
        "two one-sided tests: the equivalence test behind consistent/inconsistent",
    ),
)
"""(pattern, term, meaning) of the internal labels a report may contain."""


def findings(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries whose verdict is a finding (confirmed by a rerun when the run confirms findings)."""
    return [e for e in results["claims"] if e["verdict"] in FINDINGS]


def undecided(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries checked but not decided: inconclusive (unconfirmed findings too) or failed."""
    return [e for e in results["claims"] if e["verdict"] in ("inconclusive", "error")]


def unchecked(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries not checked by experiment in this run (``skipped`` at this budget, or
    ``not_checkable`` or ``not_implemented`` at any), skipped first."""
    entries = [e for e in results["claims"] if e["verdict"] in NOT_RUN]
    return sorted(entries, key=lambda e: e["verdict"] != "skipped")


def _name(piece: Mapping[str, Any]) -> str:
    """The part name of a combined experiment's piece (``"sweep of m"`` of
    ``"id [sweep of m]"``)."""
    return piece["id"].split(" [")[-1].rstrip("]")


def _interval(check: Mapping[str, Any]) -> str:
    low, high = check["interval"]
    return f"[{_num(low, '.3f')}, {_num(high, '.3f')}]"


def _piece_why(piece: Mapping[str, Any]) -> str:
    """Why one checked piece is inconclusive."""
    ev = piece["evidence"]
    caveats = "; ".join(ev.get("caveats") or ())
    if piece["type"] != "rate":
        return caveats or piece["summary"]
    check = ev["check"]
    if caveats and check["verdict"] == "inconsistent":  # the caveats alone made it undecided
        return caveats
    why = check.get("reason") or (  # results written before checks carried their reason
        f"the slope's {check['confidence']:.0%} interval {_interval(check)} straddles an "
        f"edge of the claimed {check['expected']:g} ± {check['margin']:g}: this sweep cannot "
        "tell whether the exponent lies inside the band"
    )
    return f"{why}; also {caveats}" if caveats else why


def why_undecided(entry: Mapping[str, Any]) -> str:
    """One sentence: why an inconclusive or failed claim was not decided."""
    if entry["verdict"] == "error":
        return f"the experiment failed: {entry['error']}"
    if entry.get("reason"):
        return entry["reason"]
    pieces = parts(entry)
    if len(pieces) == 1:
        return _piece_why(entry)
    return "; ".join(
        f"{_name(p)}: {_piece_why(p)}" for p in pieces if p["verdict"] == "inconclusive"
    )


def _allowed(check: Mapping[str, Any]) -> str:
    """The exponents a claim allows, read with its bound (an upper bound allows any faster rate)."""
    expected, margin = check["expected"], check["margin"]
    small = check.get("limit") == "small"  # a rate as the variable goes to 0: the sides flip
    upper = {"upper": not small, "lower": small}.get(check.get("bound", "order"))
    if upper is None:
        return f"{expected:g} ± {margin:g}"
    return f"at most {expected + margin:g}" if upper else f"at least {expected - margin:g}"


def _measured(piece: Mapping[str, Any]) -> str:
    """What one checked piece measured, in a sentence."""
    ev = piece["evidence"]
    if piece["type"] == "rate":
        sweep, check = ev["sweep"], ev["check"]
        return (
            f"a sweep of {sweep['param']} over {{{_join(sweep['values'])}}} with "
            f"{sweep['replicates']} replicates gives a fitted slope of "
            f"{check['exponent']:.3f}, {check['confidence']:.0%} interval {_interval(check)}, "
            f"where the claim allows {_allowed(check)}"
        )
    if piece["type"] == "audit":
        label = "certifies" if ev["certified"] else "estimates (not certified)"
        return (
            f"an audit with {ev['trials']} runs per dataset {label} "
            f"ε ≥ {_num(ev['epsilon_lower'], '.3f')} at confidence {ev['confidence']:g}, "
            f"against the claimed ({ev['epsilon']:g}, {ev['delta']:g})-DP"
        )
    off = [
        f"{name} = {_num(c.get('value', c.get('estimate')), '.6g')} against {_wanted(c)}"
        for name, c in ev.get("checks", {}).items()
        if isinstance(c, Mapping) and not c.get("ok")
    ]
    return "the computation gives " + ("; ".join(off) if off else piece["summary"])


def _wanted(check: Mapping[str, Any]) -> str:
    """What a value check allows: ``"1.5"``, ``"at most 2"`` or ``"at least 0.9"``."""
    if "le" in check:
        return f"at most {_num(check['le'], '.6g')}"
    if "ge" in check:
        return f"at least {_num(check['ge'], '.6g')}"
    return _num(check.get("expected"), ".6g")


def _found(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The contradicted pieces of a finding (the entry itself when it has one part)."""
    return [p for p in parts(entry) if p["verdict"] in FINDINGS] or [entry]


def measured(entry: Mapping[str, Any]) -> str:
    """The key figure of a finding's contradicted part(s), e.g.
    ``"sweep of m: slope 0.005 [...]"``."""
    if len(parts(entry)) == 1:
        return key_figure(entry)
    return "; ".join(f"{_name(p)}: {key_figure(p)}" for p in _found(entry))


def evidence_paragraph(entry: Mapping[str, Any]) -> str:
    """One paragraph of evidence for a finding: what the first run measured, the rerun, the
    setting."""
    named = len(parts(entry)) > 1
    pieces = _found(entry)
    text = "; ".join((f"{_name(p)}: " if named else "") + _measured(p) for p in pieces)
    text = text[0].upper() + text[1:] + "."
    confirmation = entry.get("confirmation")
    if confirmation and confirmation.get("confirmed"):
        rerun = {
            p["id"]: p
            for p in parts(
                {
                    **entry,
                    "verdict": confirmation["verdict"],
                    "summary": confirmation["summary"],
                    "evidence": confirmation["evidence"],
                }
            )
        }
        again = "; ".join(key_figure(rerun[p["id"]]) for p in pieces if p["id"] in rerun)
        text += (
            f" A rerun on the independent seed {confirmation['seed']} at the same budget "
            f"finds it again ({again})."
        )
    elif confirmation is None:
        text += " This run did not confirm findings by a rerun."
    note = str(entry["evidence"].get("note") or "").strip().rstrip(".")
    if note:
        text += f" Setting: {note}."
    return " ".join(text.split())


def shown_in_findings(entry: Mapping[str, Any], piece: Mapping[str, Any]) -> bool:
    """True when ``piece`` is the contradicted part of a finding (its figure is under Findings)."""
    return entry["verdict"] in FINDINGS and piece["verdict"] == entry["verdict"]


def confirmation_line(entry: Mapping[str, Any]) -> str | None:
    """The rerun of a finding in one line (None when the first run found nothing)."""
    confirmation = entry.get("confirmation")
    if not confirmation:
        return None
    if confirmation.get("error"):
        return confirmation["error"]
    outcome = (
        "confirms the finding" if confirmation["confirmed"] else "does not confirm it: not decided"
    )
    return (
        f"rerun on the independent seed {confirmation['seed']}: {confirmation['verdict']} "
        f"({confirmation['summary']}); {outcome}"
    )


def multiplicity_text(results: Mapping[str, Any]) -> str:
    """How many tests ran and how many false findings chance alone would give at their levels."""
    m = results.get("multiplicity")
    if m is None:  # a results.json written before multiplicity was recorded
        from ..claims.run import multiplicity

        m = multiplicity(results["claims"])
    levels = ", ".join(f"{a:.3g}" for a in m.get("levels", [])) or "n/a"
    text = (
        f"This run made {m['rate_tests']} rate tests and {m['audit_tests']} privacy audits "
        f"(statistical tests at level {levels}: at most this chance of a false finding when "
        f"the claim holds) and {m['value_checks']} value checks (computed numbers compared "
        "with the paper's within a tolerance; no error level). If every claim held, chance "
        f"alone would give at most {m['expected_false_first']:.2f} false findings on first "
        "runs"
    )
    if results["settings"].get("confirm", False):
        text += (
            f"; a finding counts only when a rerun on an independent seed finds it again, "
            f"which brings this to at most {m['expected_false_confirmed']:.3f}. "
            f"{m['findings_confirmed']} finding(s) were confirmed, "
            f"{m['findings_not_confirmed']} were not (listed as not decided)."
        )
    else:
        text += "; findings were not confirmed by a rerun in this run."
    return text


def _texts(results: Mapping[str, Any]) -> Iterator[str]:
    for e in results["claims"]:
        yield e["statement"]
        yield e["summary"]
        yield e.get("reason") or ""
        for piece in parts(e):
            yield piece["id"]
            yield str(piece["evidence"].get("note") or "")


def glossary(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(term, meaning) of every internal label that occurs in the report's text."""
    text = "\n".join(_texts(results))
    return [(term, meaning) for pattern, term, meaning in _GLOSSARY if re.search(pattern, text)]
