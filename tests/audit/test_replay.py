"""`replay`'s point masses: a constant one side always gives and the other never did is a finite
certified bound, not a certain ε = ∞ (not seeing an atom in N trials does not make it 0)."""

import math

import numpy as np
import pytest

from dpclaims.audit import replay
from dpclaims.cli import main


def clipped(epsilon):
    """``max(d + Lap(1/ε), 1/2)`` on d ∈ {0, 1}: post-processed Laplace, ε-DP; d = 0 is 1/2 on
    all but a fraction e^(-ε/2)/2 of trials."""

    def mechanism(data, rng, trials):
        d = float(np.asarray(data).ravel()[0])
        return np.maximum(d + rng.laplace(0.0, 1.0 / epsilon, (trials, 1)), 0.5)

    return mechanism


D0, D1 = np.array([0.0]), np.array([1.0])


@pytest.mark.parametrize("epsilon", [10.0, 20.0])
def test_a_correct_claim_is_never_refuted(epsilon):
    """The old rule said ε = ∞ (certain) on most of these replays at ε = 20."""
    results = [replay(clipped(epsilon), D0, D1, trials=1_000, seed=s) for s in range(200)]
    assert not any(r.infinite or r.refutes(epsilon) for r in results)
    if epsilon == 20.0:
        masses = [r for r in results if r.finding == "point-mass"]
        assert len(masses) > 150  # the atom is still reported, with its finite bound
        assert all(0 < r.epsilon_lower < 6 for r in masses)
        assert "seen, not certain" in masses[0].lines[0]


def test_the_bound_is_the_clopper_pearson_formula():
    """N = 1,000 trials each, one column, confidence 0.95: α = 0.05 over the 2 candidates
    (column 0, either side), α/2 to each side's one-sided interval; side A's first trial chose
    the constant, so 999 of 999 count for it."""
    result = replay(clipped(20.0), D0, D1, trials=1_000, seed=0, delta=1e-3)
    assert result.finding == "point-mass"
    level = 0.05 / 2 / 2
    p_b_high = 1 - level ** (1 / 1_000)
    p_a_low = level ** (1 / 999)
    assert result.epsilon_lower == pytest.approx(math.log((p_a_low - 1e-3) / p_b_high), rel=1e-9)
    assert result.epsilon_lower == pytest.approx(5.427, abs=1e-3)
    assert result.to_dict()["epsilon_lower"] == result.epsilon_lower


def test_a_true_point_mass_bug_is_still_refuted():
    """Against a claim of ε = 1 the same finding refutes (the mechanism is 20-DP, not 1-DP)."""
    result = replay(clipped(20.0), D0, D1, trials=1_000, seed=0)
    assert result.refutes(1.0) and not result.infinite


def test_cli_exits_1_only_when_the_bound_exceeds_the_claim(capsys, tmp_path):
    module = tmp_path / "clipped.py"
    module.write_text(
        "import numpy as np\n\n\n"
        "def clipped(data, rng, trials):\n"
        "    d = float(data.x[0, 0, 0])\n"
        "    return np.maximum(d + rng.laplace(0.0, 1.0 / 20.0, (trials, 1)), 0.5)\n"
    )
    x = np.zeros((10, 1, 1))
    np.savez(tmp_path / "d0.npz", x=x, y=np.zeros(10))
    x[0, 0, 0] = 1.0
    np.savez(tmp_path / "d1.npz", x=x, y=np.zeros(10))
    argv = ["audit", f"{module}:clipped", "--d0", tmp_path / "d0.npz", "--d1"]
    argv += [tmp_path / "d1.npz", "--replay", "--delta", 0]
    code = main([str(a) for a in [*argv, "--epsilon", 20]])
    out = capsys.readouterr().out
    assert code == 0 and "verdict" not in out and "within the claimed 20: no violation" in out
    code = main([str(a) for a in [*argv, "--epsilon", 1]])
    out = capsys.readouterr().out
    assert code == 1 and "verdict       violation: the replay certifies ε >= 5.4" in out
