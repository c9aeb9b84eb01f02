"""DP-SGD's transcript (``run(..., transcript=True)``) and gradient canaries (issue #27, item 1)."""

import dataclasses
import math

import numpy as np
import pytest

from dpclaims.algorithms.baselines import DPSGD
from dpclaims.algorithms.transcript import ReleasesTranscript, StepRelease
from dpclaims.data import GradientCanaryDataset, UserDataset, are_neighbours, neighbour_distance
from dpclaims.errors import InputError
from dpclaims.losses import LogisticLoss, SquaredLoss
from dpclaims.targets.mutants.baselines import HalfNoiseDPSGD, half_noise, no_clip


def _data(n=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x[:, -1] = 0.0  # the canary's coordinate
    return UserDataset(x, np.sign(rng.standard_normal(n)))


def _alg(**options):
    base = dict(steps=6, step_size=0.3, clip_norm=1.0, noise_multiplier=1.5, sampling_rate=0.25)
    return DPSGD(loss=LogisticLoss(), **{**base, **options})


@pytest.mark.parametrize("rate", [1.0, 0.25])
def test_transcript_has_every_step_and_leaves_the_outputs_unchanged(rate):
    alg, data = _alg(sampling_rate=rate, batch_size=3.0), _data()
    plain = alg.run(data, np.random.default_rng(1), 5)
    full = alg.run(data, np.random.default_rng(1), 5, transcript=True)
    assert plain.transcript is None
    assert full.transcript.shape == (5, alg.steps, data.d)
    np.testing.assert_array_equal(plain.theta, full.theta)
    # no projection: θ_T = −η/B Σ_t released_t
    np.testing.assert_allclose(full.theta, -alg.step_size / 3.0 * full.transcript.sum(axis=1))
    assert isinstance(alg, ReleasesTranscript)
    with pytest.raises(InputError, match="transcript"):
        alg.run(data, np.random.default_rng(1), 5, transcript="yes")


def test_gradient_canary_is_sampled_and_clipped_like_a_unit():
    alg = _alg(noise_multiplier=0.5)
    data = _data()
    canary = GradientCanaryDataset(data, [0.0, 0.0, 10.0])
    released = alg.run(canary, np.random.default_rng(2), 20_000, transcript=True).transcript
    along = released[:, :, -1]  # only the canary acts on the last coordinate
    sd = 0.5 * alg.clip_norm
    assert abs(along.mean() - 0.25) < 5 * math.sqrt((sd**2 + 0.25 * 0.75) / along.size)
    assert abs(along.var() - (sd**2 + 0.25 * 0.75)) < 0.01
    # clip skipped: the canary adds its raw norm 10
    raw = no_clip(alg).run(canary, np.random.default_rng(2), 4000, transcript=True).transcript
    assert abs(raw[:, :, -1].mean() - 2.5) < 0.05
    # without the canary the coordinate is noise only
    alone = alg.run(data, np.random.default_rng(2), 4000, transcript=True).transcript
    assert abs(alone[:, :, -1].mean()) < 0.02


def test_gradient_canary_counts_as_a_unit_of_the_normaliser_and_gradient_count():
    alg = _alg(sampling_rate=1.0)
    data = _data(n=4)
    run = alg.run(GradientCanaryDataset(data, [0, 0, 1.0]), np.random.default_rng(0), 3)
    assert np.all(run.gradient_evaluations == alg.steps * 5)


def test_gradient_canary_dataset_neighbours():
    data = _data()
    with_canary = GradientCanaryDataset(data, [0, 0, 1.0])
    assert are_neighbours(data, with_canary, "item", "add-remove")
    assert neighbour_distance(with_canary, with_canary, "item", "add-remove") == 0
    other = GradientCanaryDataset(data, [0, 1.0, 0])
    assert neighbour_distance(with_canary, other, "item", "replace") == 1
    assert neighbour_distance(with_canary, other, "item", "add-remove") is None
    assert neighbour_distance(data, with_canary, "item", "replace") is None
    with pytest.raises(InputError, match="shape"):
        GradientCanaryDataset(data, [1.0, 0.0])
    with pytest.raises(InputError, match="UserDataset"):
        GradientCanaryDataset(np.zeros((3, 3)), [1.0, 0.0, 0.0])


def test_step_release_likelihood_ratio_is_the_subsampled_gaussian_mixture():
    release = StepRelease(steps=3, sampling_rate=0.2, clip_norm=2.0, noise_std=1.5)
    x = np.random.default_rng(0).standard_normal((7, 3)) * 2
    mixture = 0.8 + 0.2 * np.exp((2.0 * x - 2.0) / 1.5**2)  # ratio of N(C, s²)·q + N(0, s²)(1−q)
    np.testing.assert_allclose(release.log_likelihood_ratio(x), np.log(mixture).sum(axis=1))
    gauss = dataclasses.replace(release, sampling_rate=1.0)
    np.testing.assert_allclose(
        gauss.log_likelihood_ratio(x), ((2.0 * x - 2.0) / 1.5**2).sum(axis=1)
    )
    with pytest.raises(InputError, match="shape"):
        release.log_likelihood_ratio(x[:, :2])


def test_step_release_reports_the_claimed_noise_not_the_mutants():
    alg = _alg()
    mutant = half_noise(alg)
    assert isinstance(mutant, HalfNoiseDPSGD)
    assert mutant.step_release == alg.step_release
    assert mutant.privacy_claim == alg.privacy_claim
    assert mutant._noise_std == pytest.approx(alg._noise_std / 2)
    data = GradientCanaryDataset(_data(), [0, 0, 1.0])
    released = mutant.run(data, np.random.default_rng(0), 4000, transcript=True).transcript
    assert released[:, :, -1].std() == pytest.approx(math.sqrt(0.75**2 + 0.25 * 0.75), rel=0.05)


def test_squared_loss_and_user_level_accept_a_gradient_canary():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 2, 3))
    x[..., -1] = 0
    data = UserDataset(x, rng.standard_normal((6, 2)))
    alg = _alg(unit="user", relation="add-remove")
    alg = dataclasses.replace(alg, loss=SquaredLoss())
    run = alg.run(GradientCanaryDataset(data, [0, 0, 3.0]), rng, 4, transcript=True)
    assert run.transcript.shape == (4, alg.steps, 3)
