"""DP-SGD / DP-GD baselines: fast GLM path = general path, clipping, noise, sampling, claims."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from dpclaims.algorithms import baselines
from dpclaims.algorithms.baselines import DPSGD
from dpclaims.data import UserDataset
from dpclaims.errors import InputError
from dpclaims.losses import LinearLoss, LogisticLoss, SquaredDistanceLoss, SquaredLoss
from dpclaims.privacy import accountant_claim, subsampled_gaussian_epsilon


@dataclass(frozen=True)
class NoFastPath:
    """The same loss seen only through per-example gradients (forces the general path)."""

    inner: object
    glm = False

    def grad(self, theta, x, y=None):
        return self.inner.grad(theta, x, y)


def labelled(n=30, m=3, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return UserDataset(2 * rng.standard_normal((n, m, d)), np.sign(rng.standard_normal((n, m))))


@pytest.mark.parametrize("unit", ["item", "user"])
@pytest.mark.parametrize("rate", [1.0, 0.3])
@pytest.mark.parametrize("loss", [LogisticLoss(), SquaredLoss()])
def test_glm_fast_path_equals_per_example_gradients(unit, rate, loss):
    data = labelled()
    kwargs = dict(
        steps=8,
        step_size=0.3,
        clip_norm=0.5,
        noise_multiplier=0.7,
        sampling_rate=rate,
        unit=unit,
        radius=1.5,
    )
    fast = DPSGD(loss, **kwargs).run(data, np.random.default_rng(1), 9)
    slow = DPSGD(NoFastPath(loss), **kwargs).run(data, np.random.default_rng(1), 9)
    np.testing.assert_allclose(fast.theta, slow.theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(fast.gradient_evaluations, slow.gradient_evaluations)


def test_noise_std_on_samples():
    # zero gradients (x = 0): θ_T = -η Σ_t N(0, σ²C²) / B, std η σ C sqrt(T) / B
    data = UserDataset(np.zeros((20, 1, 2)))
    algo = DPSGD(LinearLoss(), steps=4, step_size=0.5, clip_norm=2.0, noise_multiplier=1.5)
    theta = algo(data, np.random.default_rng(0), 50_000)
    assert theta.shape == (50_000, 2)
    assert theta.std() == pytest.approx(0.5 * 1.5 * 2.0 * 2 / 20, rel=0.01)


def test_item_clipping_and_the_unclipped_mutant():
    x = np.zeros((4, 1, 2))
    x[0, 0] = [100.0, 0.0]  # one large-norm canary; linear loss gradient is -x
    data = UserDataset(x)
    kwargs = dict(steps=1, step_size=1.0, clip_norm=1.0, noise_multiplier=0.01)
    clipped = DPSGD(LinearLoss(), **kwargs)(data, np.random.default_rng(0), 2000).mean(axis=0)
    raw = DPSGD(LinearLoss(), clip=False, **kwargs)(data, np.random.default_rng(0), 2000).mean(
        axis=0
    )
    np.testing.assert_allclose(clipped, [1.0 / 4, 0.0], atol=1e-3)
    np.testing.assert_allclose(raw, [100.0 / 4, 0.0], atol=1e-3)


def test_user_level_clips_the_average_gradient():
    x = np.zeros((2, 2, 1))
    x[0] = [[3.0], [-1.0]]  # user 0's average gradient is -1, its items' are -3 and +1
    data = UserDataset(x)
    kwargs = dict(steps=1, step_size=1.0, clip_norm=0.5, noise_multiplier=1e-3)
    user = DPSGD(LinearLoss(), unit="user", **kwargs)(data, np.random.default_rng(0), 1000).mean()
    item = DPSGD(LinearLoss(), unit="item", **kwargs)(data, np.random.default_rng(0), 1000).mean()
    assert user == pytest.approx(0.5 / 2, abs=1e-3)  # clip(1.0) / (n = 2 users)
    assert item == pytest.approx((0.5 - 0.5) / 4, abs=1e-3)  # clip(3) - clip(1), over 4 items


def test_poisson_sampling_counts_and_projection():
    data = labelled(n=40, m=2)
    run = DPSGD(LogisticLoss(), 10, 5.0, 1.0, 0.5, sampling_rate=0.25, unit="user", radius=0.2).run(
        data, np.random.default_rng(3), 4000
    )
    assert run.gradient_evaluations.mean() == pytest.approx(10 * 0.25 * 40 * 2, rel=0.01)
    assert np.all(np.linalg.norm(run.theta, axis=1) <= 0.2 + 1e-12)
    assert run.to_dict()["trials"] == 4000


def test_average_iterate():
    # squared distance to 0.8: θ_t = 0.8 (1 - 0.5^t); the average of θ_1..θ_20 is 0.8 - 0.04
    data = UserDataset(np.full((10, 1, 1), 0.8))
    common = dict(steps=20, step_size=0.5, clip_norm=10.0, noise_multiplier=1e-6)
    last = DPSGD(SquaredDistanceLoss(), **common)(data, np.random.default_rng(0), 5).mean()
    avg = DPSGD(SquaredDistanceLoss(), average=True, **common)(
        data, np.random.default_rng(0), 5
    ).mean()
    assert last == pytest.approx(0.8, abs=1e-4)
    assert avg == pytest.approx(0.76, abs=1e-4)


def test_sub_batching_keeps_shapes_and_sampling(monkeypatch):
    monkeypatch.setattr(baselines, "CHUNK_BYTES", 6 * 8 * 90 * 7)  # 7 trials per sub-batch
    data = labelled(n=30, m=3)
    run = DPSGD(LogisticLoss(), 3, 0.1, 1.0, 1.0, sampling_rate=0.5).run(
        data, np.random.default_rng(0), 50
    )
    assert run.theta.shape == (50, 4) and run.gradient_evaluations.shape == (50,)
    assert np.all(np.isfinite(run.theta))
    assert len(np.unique(run.theta[:, 0])) == 50


def test_privacy_claim_and_from_accountant():
    algo = DPSGD(LogisticLoss(), 50, 0.1, 1.0, 1.1, sampling_rate=0.1, unit="user")
    assert algo.privacy_claim == accountant_claim(1.1, 0.1, 50, 1e-5, unit="user")
    calibrated = DPSGD.from_accountant(
        1.0, 1e-5, LogisticLoss(), 50, 0.1, 1.0, sampling_rate=0.1, unit="user"
    )
    assert calibrated.privacy_claim.epsilon == pytest.approx(1.0, rel=1e-3)
    assert calibrated.privacy_claim.epsilon <= 1.0 + 1e-9
    gd = DPSGD(LogisticLoss(), 1, 0.1, 1.0, 4.0, relation="replace")
    assert gd.privacy_claim.relation == "replace"
    assert gd.privacy_claim.epsilon == pytest.approx(
        subsampled_gaussian_epsilon(2.0, 1.0, 1, 1e-5), rel=1e-3
    )
    assert (
        DPSGD(LogisticLoss(), 50, 0.1, 1.0, 1.1, clip=False).privacy_claim
        == DPSGD(LogisticLoss(), 50, 0.1, 1.0, 1.1).privacy_claim
    )
    assert algo.params["unit"] == "user" and math.isclose(algo.to_dict()["noise_multiplier"], 1.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(steps=0), "steps"),
        (dict(step_size=-1.0), "step_size"),
        (dict(clip_norm=0.0), "clip_norm"),
        (dict(noise_multiplier=math.nan), "noise_multiplier"),
        (dict(sampling_rate=1.5), "sampling_rate"),
        (dict(unit="group"), "unit"),
        (dict(radius=0.0), "radius"),
        (dict(delta=0.0), "delta"),
        (dict(relation="swap"), "relation"),
        (dict(clip="no"), "clip"),
        (dict(loss="logistic"), "loss"),
    ],
)
def test_bad_parameters(kwargs, match):
    base = dict(loss=LogisticLoss(), steps=5, step_size=0.1, clip_norm=1.0, noise_multiplier=1.0)
    with pytest.raises(InputError, match=match):
        DPSGD(**{**base, **kwargs})


def test_bad_data():
    with pytest.raises(InputError, match="UserDataset"):
        DPSGD(LogisticLoss(), 5, 0.1, 1.0, 1.0).run(np.zeros((3, 2)), np.random.default_rng(0), 4)


def test_random_iterate_returns_one_of_the_iterates():
    """With a linear loss and negligible noise the iterates are θ_t = t·η·x̄ (no projection): the
    random-iterate output is θ_τ for τ in {0..T−1}, every τ appears, and it cannot be combined with
    ``average``."""
    data = UserDataset(np.ones((20, 1, 2)) / math.sqrt(2))
    alg = DPSGD(
        LinearLoss(1.0),
        steps=4,
        step_size=1.0,
        clip_norm=1.0,
        noise_multiplier=1e-12,
        random_iterate=True,
    )
    theta = alg.run(data, np.random.default_rng(0), 400).theta
    steps_taken = np.round(theta[:, 0] * math.sqrt(2)).astype(int)
    assert np.allclose(theta[:, 0] * math.sqrt(2), steps_taken, atol=1e-6)
    assert set(steps_taken) == {0, 1, 2, 3}
    with pytest.raises(InputError, match="random_iterate"):
        DPSGD(
            LinearLoss(1.0),
            steps=4,
            step_size=1.0,
            clip_norm=1.0,
            noise_multiplier=1.0,
            average=True,
            random_iterate=True,
        )
