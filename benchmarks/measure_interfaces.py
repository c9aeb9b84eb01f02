"""Interface measurements (issue #20) over the given paths (default: dpclaims).

``python benchmarks/measure_interfaces.py [--list] [paths...]`` prints the functions with
>= 10 parameters (self/cls excluded), the calls with >= 8 and > 4 positional arguments (a
``*args`` splat counts as one) and the lines over 100 characters; ``--list`` names them.
"""

import ast
import sys
from pathlib import Path

args = [a for a in sys.argv[1:] if a != "--list"]
show = "--list" in sys.argv
paths = [Path(p) for p in (args or ["dpclaims"])]
files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
wide, calls8, calls4, long_lines, total = [], [], [], 0, 0
for f in files:
    text = f.read_text()
    lines = text.splitlines()
    total += len(lines)
    long_lines += sum(len(line) > 100 for line in lines)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
            names = [n for n in names if n not in ("self", "cls")]
            if len(names) >= 10:
                wide.append((f"{f}:{node.lineno}", node.name, len(names)))
        elif isinstance(node, ast.Call):
            k = len(node.args)
            if k >= 8:
                calls8.append((f"{f}:{node.lineno}", k))
            if k > 4:
                calls4.append((f"{f}:{node.lineno}", k))
print(f"files {len(files)}, lines {total}")
print(f"functions with >= 10 parameters: {len(wide)} (>= 15: {sum(n >= 15 for *_, n in wide)})")
print(f"calls with >= 8 positional arguments: {len(calls8)}; with > 4: {len(calls4)}")
print(f"lines over 100 characters: {long_lines} ({100 * long_lines / max(total, 1):.2f}%)")
if show:
    for w in sorted(wide, key=lambda w: -w[2]):
        print("  wide", *w)
    for c in calls4:
        print("  call", *c)
