"""Number and text formatting shared by the evidence rows and every renderer."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["number", "brief", "join", "plural"]


def number(value: Any, spec: str = ".3g") -> str:
    """``value`` formatted with ``spec`` ("n/a" for None); a fixed-point spec that would round a
    nonzero value to zero gives 2 significant digits instead (0.0004 is not 0.000)."""
    if value is None:
        return "n/a"
    text = format(value, spec)
    fixed = spec.endswith("f") and isinstance(value, (int, float)) and math.isfinite(value)
    if fixed and value != 0 and float(text) == 0:
        return f"{value:.2g}"
    return text


def brief(text: str, limit: int = 140) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (the claim's section has it
    whole)."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def join(values: Any) -> str:
    """``"100, 1000, 1e+04"``: a grid of values, comma-separated."""
    return ", ".join(format(v, "g") if isinstance(v, (int, float)) else str(v) for v in values)


def plural(count: int, noun: str) -> str:
    """``"1 claim"``, ``"2 claims"``: a count and its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
