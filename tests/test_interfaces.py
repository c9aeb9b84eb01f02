"""The spine measurements of issue #29 (``benchmarks/measure_interfaces.py``).

The detectors are checked on a small package built here; on ``dpclaims/`` every count must be
zero.
"""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "measure_interfaces", ROOT / "benchmarks" / "measure_interfaces.py"
)
measure = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = measure  # dataclasses resolve their module by name
_spec.loader.exec_module(measure)


@pytest.fixture(scope="module")
def spine():
    return measure.measure_spine(ROOT / "dpclaims")


def test_spine_counts_are_zero(spine):
    """Import cycles, upward imports, the forbidden arrows (``algorithms`` -> ``audit``,
    ``reports`` -> ``claims``), functions with more than 12 parameters, ``isinstance`` dispatch
    on strategies and backends, string vocabularies with the same strings or one name in two
    rooms: all zero."""
    failing = {what: n for what, n in spine.failures.items() if n}
    assert not failing, failing


def test_every_module_has_a_room(spine):
    assert not spine.unlayered, f"add these modules to LAYERS: {spine.unlayered}"


def test_one_vocabulary_is_defined_once(spine):
    assert not spine.same_strings, spine.same_strings
    assert not spine.across_rooms, spine.across_rooms
    names = {
        name
        for _, name, _ in measure.string_vocabularies(measure.package_modules(ROOT / "dpclaims"))
    }
    assert {"Unit", "Relation", "Bound", "Limit", "ClaimKind", "Budget", "Fit"} <= names
    assert {"ThreatModel", "Canary", "Plan", "Verdict"} <= names


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / "pkg"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.setattr(
        measure, "LAYERS", (("errors", "vocabulary"), ("data",), ("algorithms",), ("audit",))
    )
    monkeypatch.setattr(measure, "FORBIDDEN", (("data", "errors"),))
    return _package(
        tmp_path,
        {
            "__init__.py": "from .audit import core\n",
            "errors.py": "from . import data\nKINDS = ('a', 'b')\n",
            "vocabulary.py": (
                "from enum import StrEnum\nclass Budget(StrEnum):\n"
                "    QUICK = 'quick'\n    FULL = 'full'\n"
            ),
            "data.py": "from .errors import KINDS\nBUDGETS = frozenset({'full', 'quick'})\n",
            "algorithms/__init__.py": "",
            "algorithms/mech.py": (
                "def f():\n    from ..audit.core import g\n"
                "def wide(self, a, b, c, d, e, f, g, h, i, j, k, l, m):\n    pass\n"
                "def from_theorem(cls, a, b, c, d, e, f, g, h, i, j, k, l, m):\n    pass\n"
            ),
            "audit/__init__.py": "",
            "audit/core.py": (
                "import pkg.errors.x\nKINDS = ('c', 'd')\n"
                "def g(s):\n    return isinstance(s, (Split, int)) or isinstance(s, x._Dask)\n"
            ),
            "audit/other.py": "import pkg\n",
        },
    )


def test_detectors_on_a_toy_package(toy):
    s = measure.measure_spine(toy)
    assert s.cycles == [["pkg.data", "pkg.errors"]]
    assert s.graph["pkg.algorithms.mech"] == {"pkg.audit.core": 2}  # relative, function-local
    up = {(imp, target) for imp, _, target, *_ in s.upward}
    assert up == {
        ("pkg.errors", "pkg.data"),
        ("pkg.algorithms.mech", "pkg.audit.core"),
        ("pkg.audit.other", "pkg"),  # the face, from inside
    }
    assert [f[:3:2] for f in s.forbidden] == [("pkg.data", "pkg.errors")]
    assert [(name, n) for _, name, n in s.wide] == [("wide", 13)]
    assert [classes for _, classes in s.dispatch] == ["Split", "_Dask"]
    assert [set(pair[:2]) for pair in s.same_strings] == [
        {"pkg.vocabulary.Budget", "pkg.data.BUDGETS"}
    ]
    assert [set(pair[:2]) for pair in s.across_rooms] == [
        {"pkg.errors.KINDS", "pkg.audit.core.KINDS"}
    ]
    assert s.graph["pkg.audit.core"] == {"pkg.errors": 1}  # import a.b.c of a non-module c
    assert s.unlayered == []


def test_check_flag_exits_one_on_findings(toy, tmp_path, capsys):
    assert measure.main([str(toy), "--check"]) == 1
    assert "check failed: cycles 1" in capsys.readouterr().out
    clean = _package(tmp_path / "clean", {"__init__.py": "", "errors.py": "X = ('a', 'b')\n"})
    assert measure.main([str(clean), "--check"]) == 0


@pytest.fixture
def toy39(tmp_path, monkeypatch):
    """A package with one finding of each issue-#39 property."""
    monkeypatch.setattr(measure, "LAYERS", (("vocabulary",), ("data",), ("results",)))
    monkeypatch.setattr(measure, "EXCEPTIONS", {})
    return _package(
        tmp_path,
        {
            "__init__.py": "",
            "vocabulary.py": (
                "from enum import StrEnum\nclass Word(StrEnum):\n    pass\n"
                "class Unit(Word):\n    USER = 'user'\n    ITEM = 'item'\n"
                "def is_user(unit):\n    return unit == 'user'\n"
            ),
            "data.py": (
                "def f(unit):\n    return unit == 'user' or unit in ('item', 'x') or unit == 'y'\n"
                "class Pair:\n    pass\n"
                "def g(**kwargs):\n    pass\n"
                "def replace(**changes):\n    pass\n"
                "def _h(**kwargs):\n    pass\n" + "\n" * measure.LONG
            ),
            "results/__init__.py": "",
            "results/doc.py": (
                "from collections.abc import Mapping\nclass Outcome(Mapping):\n    pass\n"
                "class Pair:\n    def for_x(self, **k):\n        pass\n"
                "    def _private(self, **k):\n        pass\n"
            ),
        },
    )


def test_property_detectors_on_a_toy_package(toy39, monkeypatch, capsys):
    """Vocabulary literals outside vocabulary.py (a ``Word`` subclass counts as a word set),
    one class name in two modules, a Mapping base in results/, public ``**kwargs`` outside
    ``replace``, a long module: each found, and silenced only by a listed exception."""
    found = measure.measure_spine(toy39).properties.findings
    assert [(n, d.split()[-1]) for n, d in found["vocabulary literals"]] == [
        ("pkg.data.f", "'user'"),
        ("pkg.data.f", "'item'"),
    ]
    assert found["duplicate class names"] == [("Pair", "pkg.data, pkg.results.doc")]
    assert [n for n, _ in found["Mapping bases in results"]] == ["pkg.results.doc.Outcome"]
    assert sorted(n for n, _ in found["public **kwargs"]) == [
        "pkg.data.g",
        "pkg.results.doc.Pair.for_x",
    ]
    assert [n for n, _ in found[f"modules over {measure.LONG} lines"]] == ["pkg.data"]
    assert measure.main([str(toy39), "--check"]) == 1
    assert "vocabulary literals (unlisted) 2" in capsys.readouterr().out
    listed = {check: {name: "a reason" for name, _ in pairs} for check, pairs in found.items()}
    monkeypatch.setattr(measure, "EXCEPTIONS", {**listed, "public **kwargs": {"pkg.gone": "x"}})
    assert measure.main([str(toy39), "--check"]) == 1  # the kwargs are no longer listed
    monkeypatch.setattr(measure, "EXCEPTIONS", {**listed, "Mapping bases in results": {}})
    assert measure.main([str(toy39), "--check"]) == 1
    monkeypatch.setattr(measure, "EXCEPTIONS", {**listed, "duplicate class names": {"Old": "x"}})
    capsys.readouterr()
    assert measure.main([str(toy39), "--check"]) == 1
    assert "stale exception (duplicate class names): Old" in capsys.readouterr().out
    monkeypatch.setattr(measure, "EXCEPTIONS", listed)
    assert measure.main([str(toy39), "--check"]) == 0
