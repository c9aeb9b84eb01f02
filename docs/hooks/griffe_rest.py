"""Griffe extension of the documentation site: the docstrings' reST read as Markdown.

The docstrings are written for ``help()``: Sphinx roles (``:func:`name```), doctest lines
(``>>> ...``) and literal blocks introduced by ``::``.  Markdown would print the roles as
they are and quote the doctest lines, so a role becomes inline code, a run of doctest lines
with its output a ``pycon`` block, and a closing ``::`` one colon (the indented block after
it is already code in Markdown).  Loaded by ``mkdocs.yml`` (mkdocstrings' ``extensions``).
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:attr|class|data|exc|func|meth|mod|obj):`~?\.?([^`]+)`")
LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)


def _role(match: re.Match[str]) -> str:
    return f"`{match[1]}`"


def _fence_doctests(text: str) -> str:
    out: list[str] = []
    indent = None  # the open block's indentation, None outside a block
    for line in text.splitlines():
        if indent is None and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
        elif indent is not None and not line.strip():
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


def markdown(text: str) -> str:
    """``text`` (a docstring) with its reST markup turned into Markdown."""
    return LITERAL.sub(":", _fence_doctests(ROLE.sub(_role, text)))


class RestToMarkdown(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
