"""Interface measurements (issues #20 and #29) over the given paths (default: dpclaims).

``python benchmarks/measure_interfaces.py [--list] [--check] [paths...]`` prints

* the functions with >= 10 parameters (self/cls excluded), the calls with >= 8 and > 4
  positional arguments (a ``*args`` splat counts as one) and the lines over 100 characters
  (issue #20);
* the import graph of the package (module-level and function-local ``import`` / ``from``,
  relative ones resolved, ``TYPE_CHECKING`` ones included): its cycles (strongly connected
  components of more than one module) and its upward imports against :data:`LAYERS`, with
  the two arrows issue #29 names (``algorithms`` into ``audit``, ``reports`` into ``claims``);
* the functions with more than 12 parameters outside ``from_theorem`` constructors;
* the ``isinstance`` dispatches on threshold strategies and execution backends;
* the string vocabularies defined twice: module-level tuples / sets / frozensets of strings
  with the same contents, and one such name defined in two rooms (two modules of one room,
  e.g. two algorithms' ``CONSTANTS`` for their own ``constants=`` parameter, are listed apart
  and not failed: each is read as ``module.NAME``);
* the properties of issue #39: a vocabulary word (a member of a ``StrEnum`` of
  ``vocabulary.py`` or ``verdicts.py``) compared as a string literal outside those two modules;
  a class name defined in two modules; a ``Mapping`` base of a class in ``results/``; a public
  function with ``**kwargs`` outside ``from_theorem`` / ``replace`` constructors; a module over
  :data:`LONG` lines.  Each has a table of listed exceptions with a reason (:data:`EXCEPTIONS`);
  a listed exception that no longer occurs is printed as stale.

``--list`` names each finding; ``--check`` exits 1 when any issue-#29 count, or any issue-#39
count outside its listed exceptions, is not zero.
The graph is drawn over the package that the first path lies in (``dpclaims``), whatever
modules it holds today: a module no layer names is listed as unlayered, not failed.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "version", "vocabulary", "verdicts"),
    ("stats",),
    ("noise",),
    ("data",),
    ("losses",),
    ("problem",),
    ("privacy", "gdp"),
    ("target",),
    ("resources",),
    ("atomic", "userfiles"),
    ("timelimit",),
    ("checkpoint",),
    ("execution",),
    ("results",),
    ("hardinstances",),
    ("algorithms",),
    ("audit",),
    ("targets",),
    ("rates",),
    ("claims",),
    ("reports",),
    ("testing",),
    ("torch",),
    ("cli",),
)
"""The package's rooms, bottom to top, by module path below the package (``"audit"`` is
``dpclaims.audit`` and every module below it; the longest prefix names a module's room).
A module imports its own room or lower ones; the package face (``dpclaims/__init__.py``)
sits above them all and is exempt. ``version``, ``vocabulary`` and ``verdicts`` share the
bottom room with ``errors``: they import nothing from the package (``vocabulary`` re-exports
``Verdict``); ``gdp`` (the Gaussian-DP conversions) sits with ``privacy``, ``atomic`` (atomic
file writes) with ``userfiles``."""

FORBIDDEN: tuple[tuple[str, str], ...] = (("algorithms", "audit"), ("reports", "claims"))
"""Arrows issue #29 names, importer room first, reported even where the order allows them."""

WIDE = 12
"""More parameters than this (self/cls excluded) is a wide door (``from_theorem`` aside)."""

STRATEGIES = frozenset({"Auto", "Split", "Bonferroni", "Quantiles"})
"""Threshold strategies (:mod:`dpclaims.audit.threshold`)."""

BACKENDS = frozenset(
    {"_Serial", "_Processes", "_Dask", "Serial", "Processes", "Dask", "AutoBackend"}
)
"""Execution backends, private classes today and public ones after issue #29."""

VOCABULARY_MODULES = ("vocabulary", "verdicts")
"""The modules (below the package) that define the words; their ``StrEnum`` members are the
vocabulary, compared as literals nowhere else."""

KWARGS_CONSTRUCTORS = frozenset({"from_theorem", "replace"})
"""Public functions that may take ``**kwargs``: constructors from a theorem's named
quantities, and ``replace``-style copies with fields changed."""

LONG = 800
"""More lines than this is a module to split."""

_H1_FIELDS = "fields of H1Setting replacing the sweep's defaults (a declared sweep's fixed values)"

_DECLARED = (
    "a declaration: the declared experiment's own fields (AuditExperiment's, ValueExperiment's, "
    "for_claim's options, a builder's keywords), any of them by budget"
)

EXCEPTIONS: dict[str, dict[str, str]] = {
    "wide functions": {
        "dpclaims.audit.search.search": (
            "audit's option values, the same keywords (#39 item 4), and the screening's five"
        ),
        "dpclaims.testing.assert_private": (
            "audit's option values, the same keywords, the claim's loose words and the gate's two"
        ),
    },
    "vocabulary literals": {
        "dpclaims.algorithms.pure_dp_heavy_tails.pop_localize.PopLocalize": (
            "'final' is one of the algorithm's OUTPUTS, not a threat model"
        ),
        "dpclaims.hardinstances.packings.sphere_packing": (
            "'auto' is a packing method, not a plan"
        ),
        "dpclaims.testing._gate_execution": "'auto' is a backend's name, not a plan",
    },
    "duplicate class names": {},
    "Mapping bases in results": {},
    "public **kwargs": {
        "dpclaims.algorithms.baselines.DPSGD.from_accountant": (
            "a from_theorem-style constructor: the accountant's σ, the other fields as given"
        ),
        "dpclaims.algorithms.choquette_choo_et_al_2024.AcceleratedDPSRGD.calibrated": (
            "a from_theorem-style constructor: the calibrated σ, the other fields as given"
        ),
        "dpclaims.hardinstances.quadratic.NesterovChainInstance.for_steps": (
            "a from_theorem-style constructor: the instance sized for T steps"
        ),
        "dpclaims.claims.standard.RateExperiment.for_claim": (
            "a from_theorem-style constructor (a claim's sweep); its file is the values branch's"
        ),
        "dpclaims.results.document.ClaimResult.for_claim": (
            "a from_theorem-style constructor: the claim's own fields, the others as given"
        ),
        "dpclaims.claims.model.Claim.exponents_at": (
            "the values of a claim's own parameters, named by the claim's TOML (k=4)"
        ),
        "dpclaims.claims.model.Claim.rate": (
            "the values of a claim's own parameters, named by the claim's TOML (k=4)"
        ),
        "dpclaims.checkpoint.Checkpoint.stage": (
            "what a stage's key depends on, fingerprinted whatever its names"
        ),
        "dpclaims.algorithms.lowy_liu_asi_2024.core.run_summary": (
            "a run's own extra numbers, recorded under their names"
        ),
        "dpclaims.targets.lowy_liu_asi_2024.audit_builder": (
            "the audited algorithm's from_theorem options, passed through"
        ),
        "dpclaims.claims.declare.sweep": _DECLARED,
        "dpclaims.claims.declare.audit": _DECLARED,
        "dpclaims.claims.declare.value": _DECLARED,
        "dpclaims.claims.declare.built": _DECLARED,
        "dpclaims.claims.checks.choquette_choo_et_al_2024.chain_origin_excess": (
            "NesterovChainInstance.for_steps's keywords, passed through"
        ),
        "dpclaims.claims.checks.lowy_liu_asi_2024.alg3_risk": _H1_FIELDS,
        "dpclaims.claims.checks.lowy_liu_asi_2024.alg1_risk": _H1_FIELDS,
    },
    "modules over 800 lines": {
        "dpclaims.algorithms.ghazi_et_al_2023": (
            "one paper's algorithms in one module; to split by algorithm as alg1..alg3 of "
            "lowy_liu_asi_2024 are"
        ),
        "dpclaims.algorithms.murata_suzuki_2023": (
            "one paper's algorithms in one module; to split by algorithm"
        ),
        "dpclaims.algorithms.choquette_choo_et_al_2024": (
            "one paper's algorithms in one module; to split by algorithm"
        ),
        "dpclaims.torch": "the optional torch adapter: the batched DP-SGD and the Opacus bridge",
        "dpclaims.audit.threshold": "the threshold strategies and their planning; to split",
        "dpclaims.audit.search": "the pair search with its screens; to split",
        "dpclaims.audit.core": "the audit driver and its verdict; to split",
        "dpclaims.losses": "every loss with its gradients and constants; to split by family",
    },
}
"""Listed exceptions of the issue-#39 checks: finding -> reason, by check.  A finding is named
``module`` (long modules), ``module.Class`` (Mapping bases), ``module.function`` or
``module.Class.method`` (``**kwargs``), and for vocabulary literals ``module`` or
``module.function`` (the enclosing top-level function)."""


@dataclass(frozen=True)
class Module:
    """One module of the package: dotted ``name``, source ``path``, parsed ``tree``."""

    name: str
    path: Path
    tree: ast.Module
    is_package: bool


def package_modules(package: Path) -> dict[str, Module]:
    """Every ``.py`` module below the directory ``package``, keyed by dotted name."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, path, ast.parse(path.read_text(), str(path)), is_package)
    return modules


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    base = base if module.is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(modules: dict[str, Module]) -> dict[str, dict[str, int]]:
    """The import graph: importer -> {imported module: first line}, package modules only.

    ``from a import b`` is an import of ``a.b`` when that is a module, else of ``a``;
    ``import a.b.c`` is one of ``a.b.c``. Imports anywhere in a module count (function-local
    and ``TYPE_CHECKING`` ones too).
    """
    graph: dict[str, dict[str, int]] = {}
    for module in modules.values():
        edges = graph.setdefault(module.name, {})
        for node in ast.walk(module.tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, node)
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in modules else source)
            for target in targets:
                while target and target not in modules:  # import a.b.c of a non-module c
                    target = target.rpartition(".")[0]
                if target and target != module.name:
                    edges.setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(root: str) -> None:
        # iterative Tarjan: (node, iterator over its successors)
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def room(name: str) -> str | None:
    """The :data:`LAYERS` entry naming module ``name`` (longest prefix), or None."""
    parts = name.split(".")[1:]
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if any(prefix in layer for layer in LAYERS):
            return prefix
    return None


def level(name: str) -> int | None:
    """Position of module ``name``'s room in :data:`LAYERS` (0 = bottom), or None."""
    prefix = room(name)
    return next((i for i, layer in enumerate(LAYERS) if prefix in layer), None)


def upward(graph: dict[str, dict[str, int]], modules: dict[str, Module]) -> list[tuple]:
    """Imports of a higher room: (importer, line, imported, importer room, imported room).

    The package face (the top ``__init__``) is exempt as an importer; an import *of* the face
    from inside the package counts as upward. Unlayered modules are skipped here.
    """
    found = []
    for importer, edges in sorted(graph.items()):
        if "." not in importer:
            continue
        low = level(importer)
        for imported, line in sorted(edges.items()):
            high = len(LAYERS) if "." not in imported else level(imported)
            if low is not None and high is not None and high > low:
                found.append((importer, line, imported, room(importer), room(imported) or "face"))
    return found


def forbidden(graph: dict[str, dict[str, int]]) -> list[tuple]:
    """Imports along :data:`FORBIDDEN` arrows: (importer, line, imported, arrow)."""
    found = []
    for importer, edges in sorted(graph.items()):
        for imported, line in sorted(edges.items()):
            for low, high in FORBIDDEN:
                if room(importer) == low and room(imported) == high:
                    found.append((importer, line, imported, f"{low} -> {high}"))
    return found


def unlayered(modules: dict[str, Module]) -> list[str]:
    """Modules below the face that no :data:`LAYERS` entry names."""
    return [name for name in modules if "." in name and level(name) is None]


def _functions(tree: ast.AST):
    """Every (async) function definition in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Named parameters (positional-only, ordinary, keyword-only), self/cls excluded."""
    a = node.args
    return sum(x.arg not in ("self", "cls") for x in a.posonlyargs + a.args + a.kwonlyargs)


def wide_functions(modules: dict[str, Module], limit: int = WIDE) -> list[tuple]:
    """Functions with more than ``limit`` parameters, ``from_theorem`` and the listed
    exceptions (:data:`EXCEPTIONS`, ``"wide functions"``) aside: (where, name, n)."""
    listed = EXCEPTIONS.get("wide functions", {})
    return [
        (f"{m.path}:{node.lineno}", node.name, _parameters(node))
        for m in modules.values()
        for node in _functions(m.tree)
        if node.name != "from_theorem"
        and _parameters(node) > limit
        and f"{m.name}.{node.name}" not in listed
    ]


def _class_names(node: ast.expr) -> list[str]:
    """The class names an ``isinstance`` second argument lists (``a.B`` counts as ``B``)."""
    if isinstance(node, ast.Tuple):
        return [name for elt in node.elts for name in _class_names(elt)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def isinstance_dispatch(modules: dict[str, Module]) -> list[tuple]:
    """``isinstance(x, C)`` calls with C a strategy or a backend class: (where, classes)."""
    found = []
    for m in modules.values():
        for node in ast.walk(m.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
            ):
                hit = [c for c in _class_names(node.args[1]) if c in STRATEGIES | BACKENDS]
                if hit:
                    found.append((f"{m.path}:{node.lineno}", ",".join(hit)))
    return found


def _strings(node: ast.expr | None) -> tuple[str, ...] | None:
    """The strings of a tuple / set / frozenset(...) literal of only strings, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "frozenset"
        and len(node.args) == 1
        and not node.keywords
    ):
        node = node.args[0]
    if not isinstance(node, (ast.Tuple, ast.Set)) or len(node.elts) < 2:
        return None
    if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


STR_ENUM_BASES = frozenset({"StrEnum", "Word"})
"""Bases of a word set: ``StrEnum``, or ``dpclaims.verdicts.Word`` (a ``StrEnum`` that reprs as
its string)."""


def _enum_values(node: ast.ClassDef) -> tuple[str, ...] | None:
    """The member strings of a ``class X(StrEnum)`` (or ``X(Word)``) with string members, else
    None."""
    if not any(
        isinstance(b, (ast.Name, ast.Attribute)) and set(_class_names(b)) <= STR_ENUM_BASES
        for b in node.bases
    ):
        return None
    values = tuple(
        item.value.value
        for item in node.body
        if isinstance(item, ast.Assign)
        and isinstance(item.value, ast.Constant)
        and isinstance(item.value.value, str)
    )
    return values or None


def string_vocabularies(modules: dict[str, Module]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Module-level string vocabularies: (module, name, strings); a ``StrEnum`` class counts
    as one (its name is the class name), so a tuple spelling out its values again shows."""
    found = []
    for m in modules.values():
        for node in m.tree.body:
            if isinstance(node, ast.ClassDef) and (values := _enum_values(node)):
                found.append((m.name, node.name, values))
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            else:
                continue
            strings = _strings(value)
            if isinstance(target, ast.Name) and strings is not None:
                found.append((m.name, target.id, strings))
    return found


def defined_twice(vocabularies: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """Pairs of vocabularies with the same strings (any order), and same-named ones.

    Each pair is ``(module.NAME, module.NAME, detail)``; a same-named pair's detail is True
    when the two modules lie in one room of :data:`LAYERS`.
    """
    same_strings, same_names = [], []
    for i, (m1, n1, s1) in enumerate(vocabularies):
        for m2, n2, s2 in vocabularies[i + 1 :]:
            if sorted(s1) == sorted(s2):
                same_strings.append((f"{m1}.{n1}", f"{m2}.{n2}", s1))
            if n1 == n2 and m1 != m2:
                same_names.append((f"{m1}.{n1}", f"{m2}.{n2}", room(m1) == room(m2)))
    return same_strings, same_names


def _top_level(module: Module):
    """``(name, node)`` for each top-level statement: ``module.function`` or ``module.Class``
    for a definition, ``module`` for anything else."""
    for node in module.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield f"{module.name}.{node.name}", node
        else:
            yield module.name, node


def vocabulary_words(modules: dict[str, Module]) -> frozenset[str]:
    """The members' strings of the word sets of :data:`VOCABULARY_MODULES`."""
    words: set[str] = set()
    for m in modules.values():
        if m.name.split(".", 1)[-1] in VOCABULARY_MODULES:
            for node in m.tree.body:
                if isinstance(node, ast.ClassDef):
                    words.update(_enum_values(node) or ())
    return frozenset(words)


def _literals(node: ast.expr) -> list[str]:
    """The string constants of a comparison operand: itself, or a tuple / set / list's."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.Set, ast.List)) else [node]
    return [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def vocabulary_literals(modules: dict[str, Module]) -> list[tuple[str, str, str]]:
    """Vocabulary words compared as string literals (``==``, ``!=``, ``in``, ...) outside
    :data:`VOCABULARY_MODULES`: ``(name, where, word)``, ``name`` as in :data:`EXCEPTIONS`."""
    words = vocabulary_words(modules)
    found = []
    for m in modules.values():
        if m.name.split(".", 1)[-1] in VOCABULARY_MODULES:
            continue
        for name, top in _top_level(m):
            for node in ast.walk(top):
                if not isinstance(node, ast.Compare):
                    continue
                for operand in (node.left, *node.comparators):
                    for word in _literals(operand):
                        if word in words:
                            found.append((name, f"{m.path}:{node.lineno}", word))
    return found


def duplicate_classes(modules: dict[str, Module]) -> list[tuple[str, list[str]]]:
    """Class names defined (at a module's top level) in more than one module: ``(name,
    modules)``."""
    where: dict[str, list[str]] = {}
    for m in modules.values():
        for node in m.tree.body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(m.name)
    return sorted((name, found) for name, found in where.items() if len(found) > 1)


def mapping_bases(modules: dict[str, Module]) -> list[tuple[str, str]]:
    """Classes of the ``results`` room with a ``Mapping`` base: ``(module.Class, where)``."""
    found = []
    for m in modules.values():
        if room(m.name) != "results":
            continue
        for node in m.tree.body:
            if isinstance(node, ast.ClassDef) and any(
                {"Mapping", "MutableMapping"} & set(_class_names(b)) for b in node.bases
            ):
                found.append((f"{m.name}.{node.name}", f"{m.path}:{node.lineno}"))
    return found


def _public(name: str) -> bool:
    return not name.startswith("_")


def public_kwargs(modules: dict[str, Module]) -> list[tuple[str, str]]:
    """Public functions and methods of public classes with ``**kwargs``, outside
    :data:`KWARGS_CONSTRUCTORS`: ``(module.function or module.Class.method, where)``.  A
    module below a private one (``_x``) is private; nested functions are not counted."""
    found = []
    for m in modules.values():
        if not all(_public(part) for part in m.name.split(".")):
            continue
        for node in m.tree.body:
            functions = [(m.name, node)]
            if isinstance(node, ast.ClassDef) and _public(node.name):
                functions = [(f"{m.name}.{node.name}", item) for item in node.body]
            for owner, item in functions:
                if (
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and _public(item.name)
                    and item.args.kwarg is not None
                    and item.name not in KWARGS_CONSTRUCTORS
                ):
                    found.append((f"{owner}.{item.name}", f"{m.path}:{item.lineno}"))
    return found


def long_modules(modules: dict[str, Module], limit: int = LONG) -> list[tuple[str, int]]:
    """Modules over ``limit`` lines: ``(module, lines)``."""
    counts = ((m.name, len(m.path.read_text().splitlines())) for m in modules.values())
    return [(name, n) for name, n in counts if n > limit]


def _outside(check: str, names: list[str]) -> list[str]:
    """The names of findings of ``check`` that :data:`EXCEPTIONS` does not list (a vocabulary
    literal is listed by its module or its top-level function)."""
    listed = EXCEPTIONS.get(check, {})
    return [n for n in names if n not in listed and n.rpartition(".")[0] not in listed]


@dataclass(frozen=True)
class Properties:
    """The issue-#39 findings of one package, each ``(name, detail)``, name as in
    :data:`EXCEPTIONS`."""

    findings: dict[str, list[tuple[str, str]]]

    @property
    def unlisted(self) -> dict[str, list[tuple[str, str]]]:
        """The findings outside the listed exceptions, by check."""
        return {
            check: [f for f in found if _outside(check, [f[0]])]
            for check, found in self.findings.items()
        }

    @property
    def stale(self) -> list[tuple[str, str]]:
        """Listed exceptions that no longer occur: ``(check, name)``."""
        return [
            (check, name)
            for check, listed in EXCEPTIONS.items()
            if check in self.findings
            for name in listed
            if not any(
                found == name or found.rpartition(".")[0] == name or found.startswith(name + ".")
                for found, _ in self.findings.get(check, [])
            )
        ]


def measure_properties(modules: dict[str, Module]) -> Properties:
    """The issue-#39 property checks of ``modules``."""
    return Properties(
        findings={
            "vocabulary literals": [
                (name, f"{where} {word!r}") for name, where, word in vocabulary_literals(modules)
            ],
            "duplicate class names": [
                (name, ", ".join(found)) for name, found in duplicate_classes(modules)
            ],
            "Mapping bases in results": mapping_bases(modules),
            "public **kwargs": public_kwargs(modules),
            f"modules over {LONG} lines": [
                (name, f"{n} lines") for name, n in long_modules(modules)
            ],
        }
    )


@dataclass(frozen=True)
class Spine:
    """The issue-#29 measurements of one package."""

    graph: dict[str, dict[str, int]]
    cycles: list[list[str]]
    upward: list[tuple]
    forbidden: list[tuple]
    unlayered: list[str]
    wide: list[tuple]
    dispatch: list[tuple]
    same_strings: list[tuple]
    same_names: list[tuple]
    properties: Properties

    @property
    def across_rooms(self) -> list[tuple]:
        """Same-named string vocabularies in two different rooms."""
        return [pair for pair in self.same_names if not pair[2]]

    @property
    def failures(self) -> dict[str, int]:
        """Counts that ``--check`` requires to be zero."""
        return {
            "cycles": len(self.cycles),
            "upward imports": len(self.upward),
            "forbidden imports": len(self.forbidden),
            f"functions with > {WIDE} parameters": len(self.wide),
            "isinstance dispatch": len(self.dispatch),
            "string vocabularies with the same strings": len(self.same_strings),
            "string vocabulary names defined in two rooms": len(self.across_rooms),
            **{
                f"{check} (unlisted)": len(found)
                for check, found in self.properties.unlisted.items()
            },
        }


def measure_spine(package: Path = ROOT / "dpclaims") -> Spine:
    """The issue-#29 measurements of the package directory ``package``."""
    modules = package_modules(package)
    graph = imports(modules)
    same_strings, same_names = defined_twice(string_vocabularies(modules))
    return Spine(
        graph=graph,
        cycles=cycles(graph),
        upward=upward(graph, modules),
        forbidden=forbidden(graph),
        unlayered=unlayered(modules),
        wide=wide_functions(modules),
        dispatch=isinstance_dispatch(modules),
        same_strings=same_strings,
        same_names=same_names,
        properties=measure_properties(modules),
    )


def measure_widths(files: list[Path]) -> dict:
    """The issue-#20 measurements (wide functions, long calls, long lines) of ``files``."""
    wide, calls8, calls4, long_lines, total = [], [], [], 0, 0
    for f in files:
        text = f.read_text()
        lines = text.splitlines()
        total += len(lines)
        long_lines += sum(len(line) > 100 for line in lines)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _parameters(node) >= 10:
                    wide.append((f"{f}:{node.lineno}", node.name, _parameters(node)))
            elif isinstance(node, ast.Call):
                k = len(node.args)
                if k >= 8:
                    calls8.append((f"{f}:{node.lineno}", k))
                if k > 4:
                    calls4.append((f"{f}:{node.lineno}", k))
    return dict(
        files=len(files), lines=total, wide=wide, calls8=calls8, calls4=calls4, long=long_lines
    )


def report_widths(w: dict, show: bool) -> None:
    """Print the issue-#20 measurements."""
    print(f"files {w['files']}, lines {w['lines']}")
    wide = w["wide"]
    print(f"functions with >= 10 parameters: {len(wide)} (>= 15: {sum(n >= 15 for *_, n in wide)})")
    print(f"calls with >= 8 positional arguments: {len(w['calls8'])}; with > 4: {len(w['calls4'])}")
    print(f"lines over 100 characters: {w['long']} ({100 * w['long'] / max(w['lines'], 1):.2f}%)")
    if show:
        for item in sorted(wide, key=lambda item: -item[2]):
            print("  wide", *item)
        for c in w["calls4"]:
            print("  call", *c)


def report_spine(s: Spine, show: bool) -> None:
    """Print the issue-#29 measurements (each finding too when ``show``)."""
    edges = sum(len(e) for e in s.graph.values())
    print(f"import graph: {len(s.graph)} modules, {edges} imports")
    print(f"import cycles: {len(s.cycles)}")
    for component in s.cycles:
        print("  cycle", " <-> ".join(component))
    print(f"upward imports: {len(s.upward)}")
    rooms = Counter(f"{a} -> {b}" for *_, a, b in s.upward)
    for arrow, n in sorted(rooms.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {n:4d}  {arrow}")
    if show:
        for importer, line, imported, *_ in s.upward:
            print(f"  up {importer}:{line} imports {imported}")
    print(f"forbidden imports: {len(s.forbidden)}")
    for arrow, n in sorted(Counter(f[3] for f in s.forbidden).items()):
        print(f"  {n:4d}  {arrow}")
    if show:
        for importer, line, imported, _ in s.forbidden:
            print(f"  forbidden {importer}:{line} imports {imported}")
    if s.unlayered:
        print(f"unlayered modules (add them to LAYERS): {', '.join(s.unlayered)}")
    print(
        f"functions with > {WIDE} parameters (from_theorem aside): {len(s.wide)} "
        f"(+ {len(EXCEPTIONS.get('wide functions', {}))} listed)"
    )
    if show:
        for item in sorted(s.wide, key=lambda item: -item[2]):
            print("  wide", *item)
    print(f"isinstance dispatch on strategies and backends: {len(s.dispatch)}")
    if show:
        for item in s.dispatch:
            print("  isinstance", *item)
    print(f"string vocabularies with the same strings: {len(s.same_strings)}")
    for a, b, strings in s.same_strings:
        print(f"  same {a} = {b} = {strings}")
    within = len(s.same_names) - len(s.across_rooms)
    print(
        f"string vocabulary names defined twice: {len(s.across_rooms)} across rooms "
        f"(+ {within} within one room)"
    )
    for a, b, one_room in s.same_names:
        print(f"  name {a}, {b}" + (" (one room)" if one_room else ""))
    unlisted = s.properties.unlisted
    for check, found in s.properties.findings.items():
        print(f"{check}: {len(found)} ({len(unlisted[check])} outside the listed exceptions)")
        for name, detail in found if show else unlisted[check]:
            listed = "" if (name, detail) in unlisted[check] else " (listed)"
            print(f"  {name}: {detail}{listed}")
    for check, name in s.properties.stale:
        print(f"stale exception ({check}): {name} no longer occurs; remove it from EXCEPTIONS")


def main(argv: list[str]) -> int:
    """Print the measurements; with ``--check``, 1 when an issue-#29 count is not zero."""
    show, check = "--list" in argv, "--check" in argv
    paths = [Path(a) for a in argv if a not in ("--list", "--check")] or [ROOT / "dpclaims"]
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
    report_widths(measure_widths(files), show)
    package = paths[0].resolve()
    while package.parent != package and (package.parent / "__init__.py").exists():
        package = package.parent
    if package.is_file():
        package = package.parent
    spine = measure_spine(package)
    report_spine(spine, show)
    failing = {what: n for what, n in spine.failures.items() if n}
    if check and failing:
        print("check failed: " + ", ".join(f"{what} {n}" for what, n in failing.items()))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
