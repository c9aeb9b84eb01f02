import numpy as np
import pytest

from dpclaims.claims.standard import RateExperiment
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.rates import fit_power_law
from dpclaims.rates.caveats import Baseline, apply_caveats, saturated_values, sweep_caveats

SERIAL = Execution(backend="serial")

GRID = [100, 300, 1000, 3000, 10000]


def _errors(values, exponent, floor=0.0, sigma=0.1, reps=8, seed=0):
    rng = np.random.default_rng(seed)
    v = np.asarray(values, float)[:, None]
    return (v**exponent + floor) * np.exp(sigma * rng.standard_normal((len(values), reps)))


def test_saturated_values_flags_points_not_below_the_baseline():
    errors = _errors(GRID, -0.5)  # 0.1, 0.058, 0.032, 0.018, 0.01
    assert saturated_values(GRID, errors, Baseline("origin", 0.04)) == [100, 300]
    assert saturated_values(GRID, errors, Baseline("origin", 1.0)) == []
    assert saturated_values(GRID, errors, Baseline("origin", lambda v: 2 * v**-0.5)) == []
    assert saturated_values(GRID, errors, Baseline("origin", lambda v: 0.5 * v**-0.5)) == GRID


def test_baseline_rejects_non_positive_errors():
    with pytest.raises(InputError, match="baseline 'zero'"):
        Baseline("zero", 0.0).at(GRID)


def test_drift_and_saturation_make_inconsistent_inconclusive_only():
    clean = _errors(GRID, -0.5)
    fit = fit_power_law(GRID, clean)
    assert sweep_caveats(fit, GRID, clean) == []
    floored = _errors(GRID, -1.0, floor=1e-3, sigma=0.02)  # slope bends from -1 towards 0
    bent = fit_power_law(GRID, floored)
    reasons = sweep_caveats(bent, GRID, floored)
    assert bent.drifting and reasons[0].startswith("pre-asymptotic")
    # fitted -0.50, local slopes -0.87 ... -0.15: towards a claimed 0 ± 0.2, away from -1.5 ± 0.1
    assert sweep_caveats(bent, GRID, floored, band=(-0.2, 0.2))[0].endswith("the claimed band")
    assert sweep_caveats(bent, GRID, floored, band=(-1.6, -1.4)) == []
    assert sweep_caveats(bent, GRID, floored, band=(-0.9, -0.7)) == []
    assert apply_caveats("inconsistent", reasons) == "inconclusive"
    assert apply_caveats("consistent", reasons) == "consistent"
    assert apply_caveats("inconsistent", []) == "inconsistent"


def noisy_floor(n, rng, level):
    """A useless algorithm: error at ``level`` whatever n."""
    return float(level * np.exp(0.3 * rng.standard_normal()))


def test_rate_experiment_with_a_baseline_cannot_fail_on_a_saturated_sweep():
    base = RateExperiment(noisy_floor, "n", GRID, expected=-1.0, replicates=6, fixed={"level": 0.1})
    assert base.run(seed=0, execution=SERIAL).verdict == "inconsistent"
    named = RateExperiment(
        noisy_floor,
        "n",
        GRID,
        expected=-1.0,
        replicates=6,
        fixed={"level": 0.1},
        baseline=Baseline("outputting the origin", 0.09),
    )
    out = named.run(seed=0, execution=SERIAL)
    assert out.verdict == "inconclusive" and "saturated" in out.summary
    assert out.evidence.check["verdict"] == "inconsistent"
    assert out.evidence.baseline["name"] == "outputting the origin"
