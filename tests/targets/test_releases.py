"""The release corpus' checks (benchmarks/releases_probe.py, issue 37 item 3) on the libraries
installed here: the accountant check flags a negative ε and an ε below PLD's, not an ε above
it; Opacus' RDP accountant reports a negative ε at a large δ (Opacus #585); diffprivlib's
LinearRegression with bounds (0, U) is a violation (diffprivlib #105) and its GaussianNB
releases the private label set (diffprivlib #106); OpenDP's thresholded counts release a key of
one record more often than the δ they report (OpenDP #2922); Opacus' step divides by the private
dataset size (Opacus #571)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


probe = _load("releases_probe")
bench = _load("bench_releases")


def test_a_check_that_fails_in_its_environment_is_a_row_with_the_error():
    env = bench.Environment(bench.Release("nolib", "0"), python=Path(sys.executable))
    assert bench.probe(env, "nolib-unknown-check")["error"] == "KeyError: 'nolib-unknown-check'"
    missing = bench.Environment(bench.Release("nolib", "0"), error="install failed: no such")
    assert bench.audit_cell(bench.probe(missing, "any")) == "error: install failed: no such"


@pytest.mark.parametrize(
    ("reported", "flagged"), [(-0.5, True), (0.9, True), (0.995, False), (1.7, False)]
)
def test_accountant_row_flags_negative_or_below_pld(reported, flagged):
    row = probe._accountant_row("c", reported, {"pld": 1.0, "rdp": 1.2})
    assert row["failed"] is flagged
    assert row["ratio"] == pytest.approx(reported)


def test_accountant_row_without_positive_pld_has_no_ratio():
    row = probe._accountant_row("c", -0.5, {"pld": 0.0, "rdp": 0.0})
    assert row["failed"] and row["ratio"] is None


def test_opacus_rdp_accountant_negative_epsilon_is_flagged():
    accountants = pytest.importorskip("opacus.accountants")
    rdp = accountants.RDPAccountant()
    rdp.history = [(1.0, 1.0, 1)]
    reported = rdp.get_epsilon(delta=0.7)
    row = probe._accountant_row("rdp", reported, probe._independent(1.0, 1.0, 1, 0.7))
    assert reported < 0 and row["failed"]


def test_opendp_threshold_releases_single_record_keys_above_reported_delta():
    pytest.importorskip("opendp.prelude")
    result = probe.opendp_threshold_delta()
    assert result["failed"] and result["lower"] > result["reported"]


@pytest.fixture(scope="module")
def diffprivlib():
    return pytest.importorskip("diffprivlib", exc_type=ImportError)  # a scikit-learn it supports


def test_diffprivlib_linear_regression_bounds_from_zero_is_violation(diffprivlib):
    d0, d1 = probe._linreg_pair()
    result = probe._sequential(probe.linreg_lower_bound_zero, d0, d1, probe._claim())
    assert result["outcome"] == "violation"
    assert result["trials"] <= 1000


@pytest.mark.slow
def test_diffprivlib_gaussian_nb_releases_the_label_set(diffprivlib):
    d0, d1 = probe._labels_pair(True)
    result = probe._sequential(probe.gaussian_nb_release, d0, d1, probe._claim())
    assert result["outcome"] == "violation"


@pytest.mark.slow
def test_opacus_expected_batch_size_from_private_n_is_violation():
    pytest.importorskip("opacus")
    d0, d1 = probe._normaliser_pair(True)
    claim = probe._normaliser_claim("add-remove")
    result = probe._sequential(probe.normaliser_step, d0, d1, claim)
    assert result["outcome"] == "violation"
