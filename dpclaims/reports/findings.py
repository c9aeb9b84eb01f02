"""The reader's first pages of a report: tests run, caveats, and the labels a reader may not know.

Plain text shared by the Markdown and HTML writers: how many tests ran with the false
findings chance alone would give, the claims' caveats (the papers' ambiguities and errata, the
specifications' reconstructions), and a glossary of the specs' internal labels (RT-8, §7(a),
Q2, ...) that occur in the report.  Which claims are findings, why a claim was not decided and
the paragraph of evidence of a finding come from the results themselves
(:meth:`~dpclaims.results.Results.findings`, :meth:`~dpclaims.results.ClaimResult.why_undecided`,
:meth:`~dpclaims.results.ClaimResult.evidence_paragraph`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..results import Results
from ..vocabulary import CaveatKind

__all__ = ["multiplicity_text", "glossary", "caveat_rows", "CAVEATS_INTRO"]

CAVEATS_INTRO = (
    "Where a paper can be read two ways, where its text is wrong or garbled, and where the "
    "paper's specification filled in what the paper leaves blank: each bears on the claim named, "
    "whose experiment follows the reading given."
)
"""The sentence under the report's "Ambiguities and reconstructions" heading."""

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


def multiplicity_text(results: Results) -> str:
    """How many tests ran and how many false findings chance alone would give at their levels."""
    m = results.tests_made()
    levels = ", ".join(f"{a:.3g}" for a in m.levels or ()) or "n/a"
    text = (
        f"This run made {m.rate_tests} rate tests and {m.audit_tests} privacy audits "
        f"(statistical tests at level {levels}: at most this chance of a false finding when "
        f"the claim holds) and {m.value_checks} value checks (computed numbers compared "
        "with the paper's within a tolerance; no error level). If every claim held, chance "
        f"alone would give at most {m.expected_false_first:.2f} false findings on first "
        "runs"
    )
    if results.confirm:
        text += (
            f"; a finding counts only when a rerun on an independent seed finds it again, "
            f"which brings this to at most {m.expected_false_confirmed:.3f}. "
            f"{m.findings_confirmed} finding(s) were confirmed, "
            f"{m.findings_not_confirmed} were not (listed as not decided)."
        )
    else:
        text += "; findings were not confirmed by a rerun in this run."
    return text


def _texts(results: Results) -> Iterator[str]:
    for e in results.claims:
        yield e.statement
        yield e.summary
        yield e.reason or ""
        for piece in e.parts():
            yield piece.id
            yield piece.note


def glossary(results: Results) -> list[tuple[str, str]]:
    """(term, meaning) of every internal label that occurs in the report's text."""
    text = "\n".join(_texts(results))
    return [(term, meaning) for pattern, term, meaning in _GLOSSARY if re.search(pattern, text)]


def caveat_rows(results: Results) -> list[tuple[str, str, str]]:
    """(claim id, kind in words, text) of every claim's caveat, in claim order."""
    return [
        (entry.id, CaveatKind(caveat["kind"]).label, caveat["text"])
        for entry in results.claims
        for caveat in entry.caveats
    ]
