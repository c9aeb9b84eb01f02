"""Write a whole report directory: ``results.json``, ``report.md``, ``report.html`` and
``figures/``.

The report is built in a staging folder and renamed into place (see :mod:`.atomic`),
and everything is rendered from the JSON text written, so ``dpclaims report``
re-renders saved results into the same files.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dpclaims.atomic import check_output_dir, staged_directory

from ..errors import InputError
from ..execution import Execution, map_tasks
from ..results import (
    AuditEvidence,
    ClaimResult,
    RateEvidence,
    Results,
    dumps_results,
    validate_results,
)
from ..userfiles import first_line
from ..verdicts import UNCHECKED
from .figures import SUMMARY_FIGURE, claim_figure, summary_figure
from .html import render_html
from .markdown import render_markdown
from .text import figure_name

__all__ = ["REPORT_FILES", "render_figures", "write_report"]

REPORT_FILES = ("results.json", "report.md", "report.html")

_DRAWN = (AuditEvidence, RateEvidence)
"""The evidence a claim's figure is drawn from."""


PARALLEL_FIGURES = 16
"""From this many figures on, :func:`render_figures` draws them in worker processes."""


def _draw(piece: ClaimResult) -> bytes | str:
    """The PNG bytes of a claim's figure, or why it could not be drawn (one line)."""
    try:
        with np.errstate(all="ignore"):  # huge values: the figure fails as a whole, or draws
            return claim_figure(piece)
    except Exception as exc:  # a figure is an illustration: the report goes on without it
        return f"{type(exc).__name__}: {first_line(exc)}"


def render_figures(
    results: Results | Mapping[str, Any], workers: int | None = 1
) -> dict[str, bytes]:
    """Claim id (or part id, and ``SUMMARY_FIGURE``) -> PNG bytes, for every checked audit and rate.

    ``workers`` other than 1 draws many figures in parallel (None: all cores); the
    bytes do not depend on it.  A figure that cannot be drawn is left out with a warning
    naming the claim and the reason; the other figures and the report are written.
    """
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise InputError(
            f"workers must be a positive integer, got {workers!r}; pass e.g. --workers 2"
        )
    results = Results.coerce(results)
    pieces = [piece for entry in results.claims for piece in entry.parts()]
    drawn = [
        piece
        for piece in pieces
        if piece.verdict not in UNCHECKED and isinstance(piece.evidence, _DRAWN)
    ]
    if workers != 1 and len(drawn) >= PARALLEL_FIGURES:
        where = Execution(backend="processes", workers=workers)
        pngs = map_tasks(_draw, [(piece,) for piece in drawn], where)
    else:
        pngs = [_draw(piece) for piece in drawn]
    pngs.append(_draw_summary(pieces))
    figures = {}
    for name, png in zip([piece.id for piece in drawn] + [SUMMARY_FIGURE], pngs, strict=True):
        if isinstance(png, str):
            warnings.warn(f"figure of {name!r} left out of the report: {png}", stacklevel=2)
        elif png is not None:
            figures[name] = png
    return figures


def _draw_summary(pieces: list[ClaimResult]) -> bytes | str | None:
    try:
        with np.errstate(all="ignore"):
            return summary_figure(pieces)
    except Exception as exc:
        return f"{type(exc).__name__}: {first_line(exc)}"


def write_report(
    results: Results | Mapping[str, Any],
    out: str | Path,
    force: bool = False,
    workers: int | None = 1,
) -> dict[str, Path]:
    """Validate ``results`` and write the report to the directory ``out``.

    Parameters
    ----------
    results : a results document (from :func:`dpclaims.claims.run.run_claims`, or its JSON
        object from :func:`~dpclaims.results.load_results`)
    out : report directory; must not exist or be empty unless ``force``
    force : replace an existing report directory that dpclaims wrote (see :mod:`.atomic`)
    workers : processes drawing the figures (see :func:`render_figures`)

    Returns
    -------
    dict: ``results.json``, ``report.md``, ``report.html`` and ``figures`` -> their final paths

    Raises
    ------
    ResultsError
        ``results`` does not follow the schema.
    InputError
        ``out`` exists and ``force`` is False, or cannot be written.
    """
    target = check_output_dir(out, force)  # fail before the figures are drawn
    text = dumps_results(results)
    loaded = json.loads(text)
    validate_results(loaded)
    document = Results.from_json(loaded)
    with staged_directory(out, force) as staging:
        (staging / "results.json").write_text(text, encoding="utf-8")
        figures = render_figures(document, workers)
        paths = {name: f"figures/{figure_name(name)}" for name in figures}
        (staging / "figures").mkdir()
        for name, png in figures.items():
            (staging / paths[name]).write_bytes(png)
        (staging / "report.md").write_text(render_markdown(document, paths), encoding="utf-8")
        (staging / "report.html").write_text(render_html(document, figures), encoding="utf-8")
    return {name: target / name for name in (*REPORT_FILES, "figures")}
