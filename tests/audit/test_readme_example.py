"""The README's Python example runs and prints what the README says it prints."""

import contextlib
import io
import re
from pathlib import Path

import matplotlib

README = Path(__file__).resolve().parents[2] / "README.md"


def test_python_api_example_output_is_true():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Python API") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"prints\n\n```\n(.*?)```", section, re.S).group(1)
    matplotlib.use("Agg")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == shown


def test_certify_scores_example_prints_the_bound_it_states():
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    code = next(block for block in blocks if "certify_scores(" in block)
    stated = re.search(r"# a certified lower bound on ε = 1: (\d\.\d+)", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().strip() == stated and float(stated) <= 1.0
