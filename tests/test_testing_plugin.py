"""dpclaims.testing: the assert helpers in-process, and the pytest plugin from an outside
project."""

import importlib.metadata
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpclaims.data import UserDataset, replace_user
from dpclaims.errors import InputError, MechanismError, NotNeighboursError
from dpclaims.execution import Execution
from dpclaims.testing import MARKERS, assert_exponent, assert_private, pytest_configure

OUTSIDE_TESTS = textwrap.dedent(
    """
    import numpy as np
    import pytest

    from dpclaims.data import UserDataset, replace_user
    from dpclaims.execution import Execution
    from dpclaims.testing import assert_exponent, assert_private

    GRID = [100, 300, 1000, 3000, 10000]


    def experiment(n, rng):
        return 2.0 * n**-0.5 * np.exp(0.1 * rng.standard_normal())


    def laplace(data, rng, trials):
        return data.x.sum() + rng.laplace(0.0, 1.0, size=trials)


    @pytest.mark.dpclaims_rate
    def test_rate_holds():
        serial = Execution(backend="serial")
        assert_exponent(
            experiment, "n", GRID, expected=-0.5, margin=0.1, replicates=8, seed=0, execution=serial
        )


    @pytest.mark.dpclaims_rate
    def test_wrong_claim():
        serial = Execution(backend="serial")
        assert_exponent(
            experiment, "n", GRID, expected=-1.0, margin=0.1, replicates=8, seed=0, execution=serial
        )


    @pytest.mark.dpclaims_privacy
    def test_private():
        d0 = UserDataset(np.zeros((4, 1, 1)))
        d1 = replace_user(d0, 0, np.ones((1, 1)))
        assert_private(laplace, d0, d1, epsilon=1.0, delta=0.0, trials=4000)


    def test_unmarked():
        raise AssertionError("an unmarked test must be deselected")
    """
)


@pytest.fixture()
def project(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_claims.py").write_text(OUTSIDE_TESTS)
    return tmp_path


def run_pytest(project, *args, autoload=True, pythonpath=None):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS")
    }
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    else:  # the entry points load, but not those of the other plugins this suite uses
        args = (*OTHER_PLUGINS, *args)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(pythonpath)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--strict-markers",
        "-rA",
        "test_claims.py",
        *args,
    ]
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


OTHER_PLUGINS = tuple(
    option
    for name in ("hypothesispytest", "xdist", "xdist.looponfail", "benchmark")
    for option in ("-p", f"no:{name}")
)
"""The other plugins installed with dpclaims' test extras, blocked by name (about 1 s of
start-up each run): an outside project has its own."""

ONLY_THE_PLUGIN = ("-p", "dpclaims.testing")
"""A run that checks the plugin's fixtures and ini options loads it alone; its entry points
are the loading tests' subject."""


def check_rate_run(run, passed, deselected):
    out = run.stdout + run.stderr
    assert run.returncode == 1, out  # exactly the wrong claim fails
    assert f"1 failed, {passed} passed, {deselected} deselected" in out, out
    assert "FAILED test_claims.py::test_wrong_claim" in out, out
    assert "PASSED test_claims.py::test_rate_holds" in out, out
    assert "rate claim for n: inconsistent: fitted exponent" in out and "90% CI [" in out, out
    assert "vs claimed -1 ± 0.1 (slower than claimed)" in out, out
    assert "unmarked test must be deselected" not in out, out


@pytest.mark.slow
def test_plugin_selects_marked_tests_with_dash_p(project):
    # autoload stays on: once dpclaims's own pytest11 entry point is installed this also checks
    # that -p and the entry point together do not register the plugin twice
    run = run_pytest(project, "-p", "dpclaims.testing", "-m", "dpclaims_rate")
    check_rate_run(run, passed=1, deselected=2)


@pytest.mark.slow
def test_markers_are_unknown_without_the_plugin(project):
    run = run_pytest(project, "-m", "dpclaims_rate", autoload=False)
    assert run.returncode != 0
    assert "'dpclaims_rate' not found in `markers` configuration option" in run.stdout + run.stderr


@pytest.mark.slow
def test_plugin_loads_through_a_pytest11_entry_point(project, tmp_path_factory):
    # a throw-away distribution declaring the same entry point as pyproject.toml's
    # [project.entry-points.pytest11] "dpclaims.testing" = "dpclaims.testing"
    site = tmp_path_factory.mktemp("site")
    info = site / "dpclaims_plugin_probe-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: dpclaims-plugin-probe\nVersion: 0.0\n"
    )
    (info / "entry_points.txt").write_text("[pytest11]\ndpclaims.testing = dpclaims.testing\n")
    run = run_pytest(project, "-m", "dpclaims_rate or dpclaims_privacy", pythonpath=site)
    check_rate_run(run, passed=2, deselected=1)
    assert "PASSED test_claims.py::test_private" in run.stdout


def installed_entry_point():
    points = importlib.metadata.entry_points(group="pytest11")
    return [
        p
        for p in points
        if p.value == "dpclaims.testing" and p.dist is not None and p.dist.name == "dpclaims"
    ]


@pytest.mark.slow
@pytest.mark.skipif(
    not installed_entry_point(),
    reason="dpclaims's pytest11 entry point is not installed (pip install -e .)",
)
def test_installed_entry_point_loads_the_plugin_without_dash_p(project):
    assert (
        installed_entry_point()[0].name == "dpclaims.testing"
    )  # same name as -p, so both together do not clash
    run = run_pytest(project, "-m", "dpclaims_rate")
    check_rate_run(run, passed=1, deselected=2)


def test_pytest_configure_registers_both_markers():
    class Config:
        def __init__(self):
            self.lines = []

        def addinivalue_line(self, name, line):
            self.lines.append((name, line))

    config = Config()
    pytest_configure(config)
    assert [name for name, _ in config.lines] == ["markers", "markers"]
    assert [line.split(":")[0] for _, line in config.lines] == ["dpclaims_rate", "dpclaims_privacy"]
    assert set(MARKERS) == {"dpclaims_rate", "dpclaims_privacy"}


def rate(n, rng, b=-1.0):
    return n**b * np.exp(0.1 * rng.standard_normal())


def test_assert_exponent_returns_the_verdict_or_raises_with_the_interval():
    verdict = assert_exponent(
        rate,
        "n",
        [10, 100, 1000, 10_000],
        expected=-1.0,
        margin=0.1,
        replicates=6,
        seed=1,
        execution=Execution(backend="serial"),
    )
    assert verdict.verdict == "consistent"
    with pytest.raises(
        AssertionError, match=r"rate claim for m: inconsistent: .*90% CI \[-0\.5\d\d, -0\.4\d\d\]"
    ):
        assert_exponent(
            rate,
            "m",
            [10, 100, 1000, 10_000],
            expected=-1.0,
            margin=0.1,
            replicates=6,
            seed=1,
            fixed={"b": -0.5},
            execution=Execution(backend="serial"),
        )


def laplace(scale):
    def mechanism(data, rng, trials):
        return data.x.sum() + rng.laplace(0.0, scale, size=trials)

    return mechanism


def test_assert_private_passes_honest_and_fails_buggy_mechanism():
    d0 = UserDataset(np.zeros((5, 1, 1)))
    d1 = replace_user(d0, 0, np.ones((1, 1)))
    result = assert_private(laplace(1.0), d0, d1, epsilon=1.0, delta=0.0, trials=20_000)
    assert result.verdict != "violation" and result.epsilon_lower <= 1.0
    with pytest.raises(
        AssertionError,
        match=r"privacy claim violated: epsilon >= [23]\.\d+ certified at confidence 0\.95 "
        r"\(claimed epsilon=1",
    ):
        assert_private(laplace(0.25), d0, d1, epsilon=1.0, delta=0.0, trials=20_000)


def test_a_gate_that_cannot_fail_does_not_pass():
    """The must-fail CI example: the same dataset twice fails (or skips, if asked), the noise
    halved fails, the correct Gaussian mechanism on a pair that attains its sensitivity passes."""
    d0 = UserDataset(np.zeros((5, 1, 1)))
    d1 = replace_user(d0, 0, np.ones((1, 1)))
    claim = dict(epsilon=1.0, delta=1e-5, trials=100_000)
    with pytest.raises(AssertionError, match="too weak to gate on: inconclusive: d0 and d1 are"):
        assert_private(gaussian(1.0), d0, d0, **claim)
    with pytest.raises(pytest.skip.Exception, match="the same data"):
        assert_private(gaussian(1.0), d0, d0, on_weak="skip", **claim)
    with pytest.raises(AssertionError, match="privacy claim violated"):
        assert_private(gaussian(0.5), d0, d1, **claim)
    passed = assert_private(gaussian(1.0), d0, d1, **claim)
    assert passed.verdict == "consistent" and passed.reach.factor <= 2
    with pytest.raises(InputError, match="on_weak"):
        assert_private(gaussian(1.0), d0, d1, on_weak="ignore", **claim)


def gaussian(noise_share: float):
    """The Gaussian mechanism calibrated for (1, 1e-5)-DP at sensitivity 1, its noise scaled by
    ``noise_share`` (0.5: the most common calibration bug, the noise halved)."""
    from dpclaims.algorithms.mechanisms import analytic_gaussian_sigma

    sigma = noise_share * analytic_gaussian_sigma(1.0, 1e-5, sensitivity=1.0)

    def mechanism(data, rng, trials):
        return data.x.sum() + sigma * rng.standard_normal(trials)

    return mechanism


def dpsgd_add_remove(clip: bool):
    """Item-level DP-SGD (Poisson q = 0.5, 3 steps), a canary item and its add/remove neighbour."""
    from dpclaims.algorithms.baselines import DPSGD
    from dpclaims.data import remove_user
    from dpclaims.losses import LogisticLoss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 1, 2)) / 4
    x[0, 0] = [20.0, 0.0]  # the canary: its gradient is clipped (or not, in the mutant)
    d0 = UserDataset(x, np.ones((20, 1)))
    algo = DPSGD.from_accountant(
        2.0,
        1e-5,
        LogisticLoss(),
        steps=3,
        step_size=1.0,
        clip_norm=1.0,
        sampling_rate=0.5,
        batch_size=10.0,
        clip=clip,
    )
    return algo, d0, remove_user(d0, 0)


def test_assert_private_checks_an_add_remove_dpsgd_claim():
    algo, d0, d1 = dpsgd_add_remove(clip=True)
    claim = algo.privacy_claim
    assert (claim.unit, claim.relation) == ("item", "add-remove")
    kwargs = dict(
        epsilon=claim.epsilon, delta=claim.delta, trials=4000, unit="item", relation="add-remove"
    )
    # 4000 trials on this pair could catch only a ~5x violation: the gate says so and fails
    with pytest.raises(AssertionError, match="too weak to gate on: consistent_weak"):
        assert_private(algo, d0, d1, **kwargs)
    with pytest.raises(pytest.skip.Exception, match="item-level add-remove"):
        assert_private(algo, d0, d1, on_weak="skip", **kwargs)
    mutant, _, _ = dpsgd_add_remove(clip=False)
    with pytest.raises(AssertionError, match="item-level add-remove"):
        assert_private(mutant, d0, d1, **kwargs)
    with pytest.raises(NotNeighboursError, match="relation='replace'"):
        assert_private(algo, d0, d1, **{**kwargs, "relation": "replace"})


def test_assert_private_is_strict_about_randomness_outside_rng():
    def global_noise(data, rng, trials):
        return data + np.random.standard_normal(trials)

    with pytest.raises(MechanismError, match="draws randomness from somewhere other than its rng"):
        assert_private(global_noise, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=1000)
    with pytest.raises(TypeError, match="unexpected keyword argument 'strict'"):
        assert_private(global_noise, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=1000, strict=False)


def unseeded_laplace(scale: float):
    """Laplace noise on a sum of sensitivity 1 drawn from a fresh OS-entropy generator, as an
    unseedable library does (ε = 1 / scale)."""

    def mechanism(data, rng, trials):
        return data.x.sum() + np.random.default_rng().laplace(0.0, scale, size=trials)

    return mechanism


def test_a_mechanism_that_ignores_its_seed_is_gated_when_not_reproducible(recwarn):
    """The strict error names reproducible=False; with it the correct mechanism (ε = 0.8) passes
    a claim of 1, the mis-scaled one (ε = 2) fails, and both say they are not reproducible."""
    d0 = UserDataset(np.zeros((5, 1, 1)))
    d1 = replace_user(d0, 0, np.ones((1, 1)))
    claim = dict(epsilon=1.0, delta=0.0, trials=20_000)
    with pytest.raises(MechanismError, match="reproducible=False in assert_private"):
        assert_private(unseeded_laplace(1.25), d0, d1, **claim)
    passed = assert_private(unseeded_laplace(1.25), d0, d1, reproducible=False, **claim)
    assert passed.verdict == "consistent" and not passed.reproducible
    assert "not reproducible" in passed.summary()
    with pytest.raises(AssertionError, match="privacy claim violated.*not reproducible"):
        assert_private(unseeded_laplace(0.5), d0, d1, reproducible=False, **claim)
    seeded = assert_private(laplace(1.25), d0, d1, reproducible=False, **claim)
    assert seeded.reproducible and "not reproducible" not in seeded.summary()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    with pytest.raises(InputError, match="drop backend='processes'"):
        processes = Execution(backend="processes", workers=2)
        assert_private(laplace(1.0), d0, d1, reproducible=False, execution=processes, **claim)
    with pytest.raises(InputError, match="reproducible must be True or False"):
        assert_private(laplace(1.0), d0, d1, reproducible="no", **claim)


def test_assert_exponent_upper_bound_passes_a_faster_decay():
    # error ~ n^-1 against an O(n^-1/2) claim: a gap two-sided, consistent as an upper bound
    grid = [10, 100, 1000, 10_000]
    verdict = assert_exponent(
        rate,
        "n",
        grid,
        expected=-0.5,
        margin=0.1,
        replicates=6,
        seed=1,
        bound="upper",
        execution=Execution(backend="serial"),
    )
    assert verdict.verdict == "consistent" and verdict.direction == "faster"
    with pytest.raises(AssertionError, match="inconsistent"):
        assert_exponent(
            rate,
            "n",
            [10, 100, 1000, 10_000],
            expected=-0.5,
            margin=0.1,
            replicates=6,
            seed=1,
            execution=Execution(backend="serial"),
        )
    with pytest.raises(AssertionError, match="inconsistent"):
        assert_exponent(
            rate,
            "n",
            grid,
            expected=-1.5,
            margin=0.1,
            replicates=6,
            seed=1,
            bound="upper",
            execution=Execution(backend="serial"),
        )


FIXTURE_TESTS = textwrap.dedent(
    """
    import numpy as np
    import pytest

    from dpclaims.algorithms.mechanisms import analytic_gaussian_sigma
    from dpclaims.data import UserDataset, replace_user

    SIGMA = analytic_gaussian_sigma(1.0, 1e-5, sensitivity=1.0)
    D0 = UserDataset(np.zeros((5, 1, 1)))
    D1 = replace_user(D0, 0, np.ones((1, 1)))


    def gaussian(share):
        def mechanism(data, rng, trials):
            return data.x.sum() + share * SIGMA * rng.standard_normal(trials)

        return mechanism


    def test_rng_is_seeded_from_the_ini(dpclaims_rng):
        assert dpclaims_rng.integers(1 << 30) == np.random.default_rng(7).integers(1 << 30)


    @pytest.mark.dpclaims_privacy
    def test_correct_mechanism_passes(dpclaims_audit):
        result = dpclaims_audit(gaussian(1.0), D0, D1, epsilon=1.0, delta=1e-5)
        assert result.trials == 60000 and result.verdict == "consistent"


    @pytest.mark.dpclaims_privacy
    def test_noise_halved_must_fail(dpclaims_audit):
        dpclaims_audit(gaussian(0.5), D0, D1, epsilon=1.0, delta=1e-5)


    @pytest.mark.dpclaims_privacy(on_weak="skip", trials=2000)
    def test_same_data_twice_skips_with_the_reason(dpclaims_audit):
        dpclaims_audit(gaussian(1.0), D0, D0, epsilon=1.0, delta=1e-5)
    """
)


def test_fixtures_use_the_ini_options_and_marker_arguments(tmp_path):
    """The plugin's fixtures: a seeded rng; an audit with the project's trials (ini) that fails
    on the noise halved (the must-fail example), passes the correct mechanism and skips, when
    the marker asks, a check that cannot fail."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ndpclaims_seed = 7\ndpclaims_trials = 60000\n")
    (tmp_path / "test_claims.py").write_text(FIXTURE_TESTS)
    run = run_pytest(tmp_path, *ONLY_THE_PLUGIN, autoload=False)
    out = run.stdout + run.stderr
    assert "1 failed, 2 passed, 1 skipped" in out, out
    assert "FAILED test_claims.py::test_noise_halved_must_fail" in out, out
    assert "privacy claim violated" in out, out
    assert "too weak to gate on: inconclusive: d0 and d1 are the same data" in out, out


def test_a_positional_marker_argument_is_refused_not_ignored():
    """@pytest.mark.dpclaims_privacy(2000) would otherwise run the default trials silently."""
    from types import SimpleNamespace

    from dpclaims.testing import _audit_settings

    marker = pytest.mark.dpclaims_privacy(2000).mark
    ini = {"dpclaims_on_weak": "fail", "dpclaims_reproducible": "true"}
    config = SimpleNamespace(getini=lambda name: ini.get(name, "1"))
    node = SimpleNamespace(get_closest_marker=lambda name: marker)
    with pytest.raises(InputError, match=r"keyword arguments only, got \(2000,\).*trials=2000"):
        _audit_settings(SimpleNamespace(config=config, node=node))
    marker = pytest.mark.dpclaims_privacy(trials=9).mark
    assert _audit_settings(SimpleNamespace(config=config, node=node))["trials"] == 9


UNSEEDED_TESTS = textwrap.dedent(
    """
    import numpy as np
    import pytest

    from dpclaims.data import UserDataset, replace_user

    D0 = UserDataset(np.zeros((5, 1, 1)))
    D1 = replace_user(D0, 0, np.ones((1, 1)))


    def unseeded(data, rng, trials):
        return data.x.sum() + np.random.default_rng().laplace(0.0, 2.5, size=trials)  # ε = 0.4


    @pytest.mark.dpclaims_privacy
    def test_unseeded_passes_under_the_ini(dpclaims_audit):
        result = dpclaims_audit(unseeded, D0, D1, epsilon=1.0, delta=0.0)
        assert result.verdict == "consistent" and not result.reproducible


    @pytest.mark.dpclaims_privacy(reproducible=True)
    def test_the_marker_can_ask_for_reproducibility(dpclaims_audit):
        dpclaims_audit(unseeded, D0, D1, epsilon=1.0, delta=0.0)
    """
)


def test_the_plugin_gates_an_unseedable_mechanism_with_dpclaims_reproducible_false(tmp_path):
    ini = "[pytest]\ndpclaims_trials = 20000\ndpclaims_reproducible = false\n"
    (tmp_path / "pytest.ini").write_text(ini)
    (tmp_path / "test_claims.py").write_text(UNSEEDED_TESTS)
    run = run_pytest(tmp_path, *ONLY_THE_PLUGIN, autoload=False)
    out = run.stdout + run.stderr
    assert "1 failed, 1 passed" in out, out
    assert "FAILED test_claims.py::test_the_marker_can_ask_for_reproducibility" in out, out
    assert "returned different outputs for the same seed" in out, out


def test_assert_private_takes_a_privacy_claim_or_the_loose_words_not_both():
    from dpclaims.privacy import PrivacyClaim

    def laplace(data, rng, trials):
        return data + rng.laplace(0.0, 1.0, size=trials)

    claim = PrivacyClaim(1.0, 0.0, unit="item", relation="add-remove")
    with pytest.raises(InputError, match="pass epsilon inside claim=PrivacyClaim"):
        assert_private(laplace, 0.0, 1.0, claim, epsilon=1.0, trials=1000)
    with pytest.raises(InputError, match="no claim to audit"):
        assert_private(laplace, 0.0, 1.0, trials=1000)
