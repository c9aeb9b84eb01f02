"""Library functions audited per call and sequentially (examples/diffprivlib_percall.py,
examples/opendp_percall.py; issue 37): diffprivlib's leaks are caught from the given pair within
a few thousand calls, its bounded twins never read as violations; OpenDP's measurements (not
seedable, so these audits are not seeded) pass, their sensitivity-1 bugs do not."""

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))


@pytest.fixture(scope="module")
def dpl():
    pytest.importorskip("diffprivlib", exc_type=ImportError)  # needs a scikit-learn it supports
    import diffprivlib_percall

    return diffprivlib_percall


@pytest.mark.parametrize(
    "name", ["mean_unbounded", "std_unbounded", "histogram_unranged", "histogram_ranged"]
)
def test_diffprivlib_leaks_caught_under_replace_one_in_few_calls(dpl, name):
    result = dpl.audit_case(getattr(dpl, name), "replace")
    assert result.verdict == "violation"
    assert dpl.trials_spent(result) <= 4500


@pytest.mark.slow
def test_diffprivlib_bounded_twins_never_violate(dpl):
    for function, relation in (
        (dpl.mean_bounded, "replace"),
        (dpl.mean_bounded, "add-remove"),
        (dpl.histogram_ranged, "add-remove"),
    ):
        assert dpl.audit_case(function, relation).verdict != "violation"


@pytest.fixture(scope="module")
def odp():
    pytest.importorskip("opendp")
    import opendp_percall

    return opendp_percall


@pytest.mark.slow
@pytest.mark.parametrize(("name", "correct"), [("laplace", True), ("gaussian, bug", False)])
def test_opendp_measurements_per_call(odp, name, correct):
    result = odp.audit_measurement(name)
    assert (result.verdict != "violation") == correct
    assert not result.reproducible
