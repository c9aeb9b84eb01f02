from dataclasses import replace

import numpy as np
import pytest

from dpclaims.claims.standard import (
    AuditExperiment,
    CombinedExperiment,
    RateExperiment,
    ValueExperiment,
)
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.target import AuditTarget
from dpclaims.targets.catalog import audit_target

SERIAL = Execution(backend="serial")


def power_law_error(n, rng, exponent):
    """n^exponent with 10% log-normal noise."""
    return float(n) ** exponent * float(np.exp(0.1 * rng.standard_normal()))


def build_gaussian(noise="gaussian"):
    claim = PrivacyClaim(1.0, 1e-5)
    t = audit_target(noise, claim)
    return AuditTarget(mechanism=t.mechanism, d0=t.d0, d1=t.d1, claim=claim)


def test_audit_experiment_reports_verdict_and_reference():
    out = AuditExperiment(build_gaussian, trials=100_000, reference_epsilon=1.0).run(
        seed=0, execution=SERIAL
    )
    assert out.type == "audit" and out.verdict == "consistent"
    assert out.evidence.reference.epsilon == 1.0 and "claimed 1" in out.summary
    bad = AuditExperiment(lambda: build_gaussian("gaussian-half-noise"), trials=50_000).run(
        seed=0, execution=SERIAL
    )
    assert bad.verdict == "violation"


@pytest.mark.parametrize(
    "true, claimed, verdict", [(-0.5, -0.5, "consistent"), (-0.5, -1.0, "inconsistent")]
)
def test_rate_experiment_verdicts(true, claimed, verdict):
    exp = RateExperiment(
        power_law_error,
        "n",
        [10, 30, 100, 300, 1000, 3000],
        expected=claimed,
        replicates=8,
        fixed={"exponent": true},
        trivial=constant_error,
    )
    out = exp.run(seed=2, execution=SERIAL)
    assert out.type == "rate" and out.verdict == verdict
    assert set(out.evidence.to_json()) >= {"sweep", "fit", "check", "controls", "reach"}
    # without a trivial control the test is not shown to fail for a constant output
    weak = replace(exp, trivial=None).run(seed=2, execution=SERIAL).verdict
    assert weak == ("consistent_weak" if verdict == "consistent" else verdict)


def constant_error(n, rng, exponent):
    """The trivial algorithm of ``power_law_error``: an error that does not fall with n."""
    return float(np.exp(0.1 * rng.standard_normal()))


def test_value_experiment_points_and_intervals():
    exp = ValueExperiment(
        lambda rng: {"sigma": 3.7306316, "eps_hat": (0.17, 0.16, 0.19)},
        expected={"sigma": 3.73063, "eps_hat": 0.177},
        rtol=1e-5,
    )
    out = exp.run()
    assert out.verdict == "consistent" and out.summary.startswith("2/2")
    off = ValueExperiment(lambda rng: {"sigma": 3.0}, expected={"sigma": 3.73}).run()
    assert off.verdict == "inconsistent" and "sigma" in off.summary
    with pytest.raises(InputError, match="did not return"):
        ValueExperiment(lambda rng: {}, expected={"sigma": 1.0}).run()


def test_combined_experiment_takes_the_worst_verdict_and_gives_each_part_its_checkpoint(tmp_path):
    good = RateExperiment(
        power_law_error,
        "n",
        [10, 30, 100, 300, 1000],
        expected=-0.5,
        replicates=6,
        fixed={"exponent": -0.5},
        trivial=constant_error,  # its sweep checkpoints into the part's own subfolder
    )
    bad = RateExperiment(
        power_law_error,
        "n",
        [10, 30, 100, 300, 1000],
        expected=-1.0,
        replicates=6,
        fixed={"exponent": -0.5},
    )
    out = CombinedExperiment({"good": good, "bad": bad}).run(
        seed=1, execution=Execution(backend="serial", checkpoint=str(tmp_path))
    )
    assert out.verdict == "inconsistent" and out.type == "rate"
    assert [out.evidence.parts[k].verdict for k in ("good", "bad")] == [
        "consistent",
        "inconsistent",
    ]
    assert {p.name for p in tmp_path.iterdir()} == {"good", "bad"}
    again = CombinedExperiment({"good": good, "bad": bad}).run(
        seed=1, execution=Execution(backend="serial", checkpoint=str(tmp_path))
    )
    assert again.evidence.parts["bad"].evidence.fit == out.evidence.parts["bad"].evidence.fit
