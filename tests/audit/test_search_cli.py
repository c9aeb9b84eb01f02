"""`dpclaims audit --search --save-pair DIR` and `--replay`: the pair found is printed, saved,
reproduced from the files, and replayed on the same random stream."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dpclaims.audit import replay
from dpclaims.cli import main
from dpclaims.data import UserDataset
from dpclaims.privacy import PrivacyClaim
from dpclaims.targets.catalog import audit_target

EXAMPLE = Path(__file__).parents[2] / "examples" / "label_leak.py"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def plain(tmp_path):
    """40 users, each of the 4 classes held by 10; and the example module beside it."""
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "plain.npz", x=rng.standard_normal((40, 1, 2)), y=np.arange(40) % 4)
    shutil.copy(EXAMPLE, tmp_path / "label_leak.py")
    return tmp_path


def test_search_prints_saves_and_reproduces_the_label_leak(capsys, plain):
    mech = f"{plain / 'label_leak.py'}:class_histogram"
    found = plain / "found"
    common = ("--trials", 4_000, "--d0", plain / "plain.npz", "--d1", plain / "plain.npz")
    code, out, _ = run(capsys, "audit", mech, *common, "--search", "--save-pair", found)
    assert code == 1 and "verdict       violation" in out
    change = next(line for line in out.splitlines() if line.startswith("change"))
    assert "user 0" in change and "label 0 → 1" in change and "class 0 only in d0" in change
    assert "skipped       new class 4 appears: the mechanism refused it" in out
    assert sorted(p.name for p in found.iterdir()) == ["d0.npz", "d1.npz"]
    with np.load(found / "d0.npz") as d0:
        assert set(d0.files) == {"x", "y"} and np.count_nonzero(d0["y"] == 0) == 1
    bound = next(line for line in out.splitlines() if line.startswith("lower bound"))
    pair = ("--d0", found / "d0.npz", "--d1", found / "d1.npz")
    code, again, _ = run(capsys, "audit", mech, "--trials", 4_000, *pair)
    assert code == 1 and bound in again  # the saved pair reproduces the certified bound
    code, out, _ = run(capsys, "audit", mech, *pair, "--replay", "--json")
    record = json.loads(out)["replay"]
    assert code == 1 and record["finding"] == "point-mass" and record["certified"] is False
    assert record["epsilon_lower"] > 5  # a class d1 never gives: certified far above the claim
    assert "never a certification" in record["note"]


def test_save_pair_never_overwrites_user_files(capsys, plain):
    mech = f"{plain / 'label_leak.py'}:class_histogram"
    args = ("audit", mech, "--d0", plain / "plain.npz", "--d1", plain / "plain.npz")
    code, _, err = run(capsys, *args, "--save-pair", plain, "--replay")
    assert code == 2 and "not empty; pass --force" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, *args, "--save-pair", plain, "--force", "--replay")
    assert code == 2 and "holds 'label_leak.py'" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, *args, "--save-pair", plain / "nowhere" / "deep", "--replay")
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, *args, "--replay", "0")
    assert code == 2 and "trials" in err and len(err.splitlines()) == 1
    folder = plain / "again"
    assert run(capsys, *args, "--save-pair", folder, "--replay")[0] == 0  # identical: nothing
    assert run(capsys, *args, "--save-pair", folder, "--replay")[0] == 2
    assert run(capsys, *args, "--save-pair", folder, "--force", "--replay")[0] == 0


def test_replay_reads_the_realised_sensitivity_of_the_noise_helpers(capsys):
    claim = PrivacyClaim(1.0, 1e-5, "user", "replace")
    target = audit_target("gaussian-item-noise", claim)
    result = replay(target.mechanism, target.d0, target.d1, trials=200)
    (check,) = result.sensitivity
    assert result.finding == "sensitivity" and check.exceeded
    assert check.realised == pytest.approx(10 * check.declared)
    assert "calibrated for 1/10 of the sensitivity" in result.summary()
    target = audit_target("gaussian", claim)
    result = replay(target.mechanism, target.d0, target.d1, trials=200)
    assert result.finding == "differs" and not result.sensitivity[0].exceeded
    code, out, _ = run(capsys, "audit", "gaussian-item-noise", "--replay")
    assert code == 0 and "replay        sensitivity" in out and "not a certificate" in out


def test_replay_sees_identical_outputs_and_different_widths():
    data = UserDataset(np.zeros((4, 1, 1)), np.arange(4) % 2)
    relabelled = UserDataset(np.zeros((4, 1, 1)), np.r_[0.0, 1.0, 0.0, 2.0])

    def blind(d, rng, trials):
        return rng.standard_normal((trials, 2))

    def per_class(d, rng, trials):
        counts = np.unique(d.y, return_counts=True)[1]
        return counts + rng.laplace(0.0, 1.0, (trials, len(counts)))

    same = replay(blind, data, relabelled, trials=50)
    assert same.finding == "identical" and "shows nothing" in same.lines[0]
    widths = replay(per_class, data, relabelled, trials=50)
    assert widths.infinite and "2 columns on d0 but 3 on d1" in widths.lines[0]
