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
