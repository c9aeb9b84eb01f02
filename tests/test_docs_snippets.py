"""Every ```python and ```console block of README.md and docs/ runs, and prints what the page says.

The blocks of one ``## `` section of a page run in order in one namespace (a later block may
use what an earlier one defined), in a fresh process (forked from one that imported dpclaims
and its libraries once: the ``example_server`` fixture) whose working folder is a temporary
folder with the repository's ``examples/`` linked in (the pages' paths are relative to the
repository root, as their shell commands are), with the example paper installed (the
``example_env`` fixture: as ``pip install -e examples/erm_perturbation`` would leave it),
matplotlib's ``Agg`` backend and one thread per library (torch oversubscribes a shared
machine).  A fresh process keeps what a page registers (a paper's claims, its
experiments) out of the other tests.

A block followed by a paragraph that reads ``prints`` and a plain fenced block must print
exactly that.  An HTML comment on the line before a block's fence opts it out:

- ``<!-- requires: torch -->``: the section's test is skipped when the module is missing
  (an optional extra);
- ``<!-- no-test: reason -->``: the block is not run at all, for what cannot run here (a GPU,
  a cluster); keep these few, the reason is printed in the test's skip list.

A ```console block is a transcript: each ``$ dpclaims ...`` line runs (in a temporary folder,
with the same environment) and must print the lines after it, up to the next ``$``.

The README repeats a few of the site's sections word for word (its front door); a section or
transcript identical to one on an earlier page runs once, under the first page's id.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>```+)(?P<lang>[\w+-]*)[ \t]*$")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>no-test|requires)\s*:\s*(?P<arg>.*?)\s*-->\s*$")
SLOW = {
    "README.md#audit-your-own-function",
    "README.md#gate-ci-on-a-privacy-claim",
    "docs/torch.md#a-training-function-as-a-mechanism",
}
"""Sections whose blocks take several seconds (audits at the pages' trial counts, torch)."""


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the first code line
    code: str
    expected: str | None = None  # what it prints, when the page says so
    no_test: str | None = None
    requires: list[str] = field(default_factory=list)


@dataclass
class Section:
    page: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-") or "top"
        return f"{self.page}#{slug}"


def _fences(lines: list[str]):
    """``(start, end, indent, lang)`` of each fenced block (``start``/``end`` the fence lines)."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        j = i + 1
        while j < len(lines):
            close = FENCE.match(lines[j])
            if close and close["ticks"] == m["ticks"] and not close["lang"]:
                break
            j += 1
        yield i, j, m["indent"], m["lang"]
        i = j + 1


def _dedent(lines: list[str], indent: str) -> str:
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines)


def sections(page: Path) -> list[Section]:
    """The page's ``## `` sections that hold Python blocks, each with its blocks in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix()
    fences = list(_fences(lines))
    inside = {k for start, end, _, _ in fences for k in range(start, end + 1)}
    titles = {k: line[3:].strip() for k, line in enumerate(lines) if line.startswith("## ")}
    titles = {k: t for k, t in titles.items() if k not in inside}
    found: dict[str, Section] = {}
    for n, (start, end, indent, lang) in enumerate(fences):
        if lang != "python":
            continue
        title = next((titles[k] for k in sorted(titles, reverse=True) if k < start), "")
        block = Block(name, start + 2, _dedent(lines[start + 1 : end], indent))
        before = next((line for line in reversed(lines[:start]) if line.strip()), "")
        if (marker := MARKER.match(before)) is not None:
            if marker["kind"] == "no-test":
                block.no_test = marker["arg"]
            else:
                block.requires = marker["arg"].replace(",", " ").split()
        if n + 1 < len(fences):
            after = [line.strip() for line in lines[end + 1 : fences[n + 1][0]] if line.strip()]
            nxt_start, nxt_end, nxt_indent, nxt_lang = fences[n + 1]
            if after == ["prints"] and not nxt_lang:
                block.expected = _dedent(lines[nxt_start + 1 : nxt_end], nxt_indent) + "\n"
        found.setdefault(title, Section(name, title)).blocks.append(block)
    return list(found.values())


def _once(items, key):
    """``items`` without those whose ``key`` an earlier one has (the README's repeats)."""
    seen = set()
    return [x for x in items if not (key(x) in seen or seen.add(key(x)))]


ALL = _once(
    [s for page in PAGES for s in sections(page)],
    key=lambda s: tuple((b.code, b.expected, b.no_test) for b in s.blocks),
)


@dataclass
class Transcript:
    page: str
    line: int  # 1-based line of the command
    command: str  # what follows ``$ ``
    expected: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def transcripts(page: Path) -> list[Transcript]:
    """The ``$`` commands of the page's ```console blocks, each with the lines it prints."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix()
    found = []
    for start, end, indent, lang in _fences(lines):
        if lang != "console":
            continue
        body = _dedent(lines[start + 1 : end], indent).splitlines()
        commands = [k for k, line in enumerate(body) if line.startswith("$ ")]
        for k, nxt in zip(commands, [*commands[1:], len(body)], strict=True):
            output = "".join(line + "\n" for line in body[k + 1 : nxt])
            found.append(Transcript(name, start + 2 + k, body[k][2:], output))
    return found


TRANSCRIPTS = _once(
    [t for page in PAGES for t in transcripts(page)], key=lambda t: (t.command, t.expected)
)

DRIVER = r"""
import contextlib, io, json, sys, traceback

blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
results = []
for block in blocks:
    out = io.StringIO()
    source = "\n" * (block["line"] - 1) + block["code"]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, block["page"], "exec"), namespace)
    except BaseException:
        results.append({"line": block["line"], "out": out.getvalue(),
                        "error": traceback.format_exc()})
        break
    results.append({"line": block["line"], "out": out.getvalue(), "error": None})
json.dump(results, open(sys.argv[2], "w", encoding="utf-8"))
"""


def run_blocks(blocks: list[Block], workdir: Path, server) -> list[dict]:
    """Run ``blocks`` in order in one namespace of a fresh process in ``workdir``."""
    (workdir / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (workdir / "blocks.json").write_text(json.dumps([b.__dict__ for b in blocks]), encoding="utf-8")
    (workdir / "driver.py").write_text(DRIVER, encoding="utf-8")
    done = server.run(["driver.py", "blocks.json", "results.json"], cwd=workdir, timeout=600)
    assert done.returncode == 0, f"the snippet driver failed:\n{done.stdout}\n{done.stderr}"
    return json.loads((workdir / "results.json").read_text(encoding="utf-8"))


def _param(section: Section):
    marks = [pytest.mark.slow] if section.id in SLOW else []
    return pytest.param(section, id=section.id, marks=marks)


@pytest.mark.parametrize("section", [_param(s) for s in ALL])
def test_python_blocks_run_and_print_what_the_page_says(section: Section, tmp_path, example_server):
    missing = [m for b in section.blocks for m in b.requires if find_spec(m) is None]
    if missing:
        pytest.skip(f"{section.id} needs {', '.join(sorted(set(missing)))} (an optional extra)")
    blocks = [b for b in section.blocks if b.no_test is None]
    if not blocks:
        pytest.skip("; ".join(f"{b.page}:{b.line}: {b.no_test}" for b in section.blocks))
    for block, result in zip(blocks, run_blocks(blocks, tmp_path, example_server), strict=False):
        where = f"{block.page}:{block.line}"
        assert result["error"] is None, f"the block at {where} raised:\n{result['error']}"
        if block.expected is not None:
            assert result["out"] == block.expected, f"the block at {where} prints otherwise"


@pytest.mark.parametrize("transcript", [pytest.param(t, id=t.id) for t in TRANSCRIPTS])
def test_console_blocks_print_what_the_page_says(transcript: Transcript, tmp_path, example_server):
    argv = shlex.split(transcript.command)
    assert argv[0] == "dpclaims", f"{transcript.id}: a transcript runs dpclaims commands only"
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    done = example_server.run(argv, cwd=tmp_path, module="dpclaims.cli", timeout=600)
    assert done.returncode in (0, 1), f"{transcript.id} exited {done.returncode}:\n{done.stderr}"
    assert done.stdout == transcript.expected, f"{transcript.id} prints otherwise"


def test_pages_have_python_blocks_and_few_opt_outs():
    """The collector sees the pages' blocks (a changed fence syntax would silently test
    nothing) and the opt-outs stay rare."""
    blocks = [b for s in ALL for b in s.blocks]
    assert {b.page for b in blocks} >= {"README.md", "docs/own_paper.md"}
    assert len(blocks) >= 10
    assert sum(b.no_test is not None for b in blocks) <= 2
    assert all(b.no_test.strip() for b in blocks if b.no_test is not None)
    assert any(b.expected for b in blocks)
    assert len(TRANSCRIPTS) >= 2


def test_every_page_is_collected_and_the_readme_repeats_the_site():
    """The site's pages are read (a docs/ folder moved would silently test nothing), and the
    README's runnable sections are the site's own, so what runs once holds for both."""
    pages = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {"docs/index.md", "docs/python-api.md", "docs/ci.md", "docs/auditing.md"} <= pages
    site = {
        tuple((b.code, b.expected) for b in s.blocks) for page in PAGES[1:] for s in sections(page)
    }
    readme = sections(ROOT / "README.md")
    assert readme and all(tuple((b.code, b.expected) for b in s.blocks) in site for s in readme)
    shown = {(t.command, t.expected) for page in PAGES[1:] for t in transcripts(page)}
    assert all((t.command, t.expected) in shown for t in transcripts(ROOT / "README.md"))


def test_readme_links_resolve():
    """The README is not part of the site, so ``mkdocs build --strict`` does not check its
    links: each relative one names a file of the repository, each ``#anchor`` a heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    slugs = {
        re.sub(r"[^\w\- ]", "", line[3:].strip().lower()).replace(" ", "-")
        for line in text.splitlines()
        if line.startswith("## ")
    }
    assert targets
    for target in targets:
        if target.startswith(("http://", "https://")):
            continue
        if target.startswith("#"):
            assert target[1:] in slugs, f"README.md links to a missing heading {target}"
        else:
            assert (ROOT / target.split("#")[0]).exists(), f"README.md links to a missing {target}"
