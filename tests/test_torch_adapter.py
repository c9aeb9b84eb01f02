"""dpclaims.torch: PyTorch training functions as mechanisms (the optional extra)."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from dpclaims import InputError, MechanismError, UserDataset  # noqa: E402
from dpclaims import torch as dpt  # noqa: E402
from dpclaims.execution import Execution  # noqa: E402
from dpclaims.privacy import PrivacyClaim  # noqa: E402

N, D = 32, 4


def _data(zero_last: bool = False) -> UserDataset:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, D))
    if zero_last:
        x[:, -1] = 0.0
    return UserDataset(x, (rng.random(N) < 0.5).astype(float))


def _loss(out, target):
    return F.binary_cross_entropy_with_logits(out.squeeze(-1), target)


def _sgd(model=None, **options):
    torch.manual_seed(0)
    model = torch.nn.Linear(D, 1) if model is None else model
    config = dict(steps=5, step_size=0.5, clip_norm=0.5, noise_multiplier=1.0, sampling_rate=0.25)
    return dpt.TorchDPSGD(model, _loss, **{**config, **options})


def test_shape_and_same_seed_same_outputs():
    mech = dpt.mechanism(_sgd(), device="cpu")
    a = mech(_data(), np.random.default_rng(3), 6)
    b = mech(_data(), np.random.default_rng(3), 6)
    assert a.shape == (6, D + 1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, mech(_data(), np.random.default_rng(4), 6))


def _sum_cross_entropy(out, target):
    return F.cross_entropy(out, target.long(), reduction="sum")


@pytest.mark.parametrize(
    "model, ghost, loss",
    [
        (lambda: torch.nn.Linear(D, 1), True, _loss),
        (
            lambda: torch.nn.Sequential(
                torch.nn.Linear(D, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)
            ),
            True,
            _loss,
        ),
        (lambda: torch.nn.Linear(D, 2), True, _sum_cross_entropy),  # not a mean: per-row path
        (lambda: torch.nn.Linear(D, 1), False, _loss),
    ],
    ids=["linear-ghost", "mlp-ghost", "two-class-sum-ghost", "linear-vmap"],
)
def test_vmap_path_equals_looped_path(model, ghost, loss):
    sgd = dataclasses.replace(_sgd(model(), ghost=ghost), loss=loss)
    data = dpt.as_tensors(_data(), "cpu")
    seeds = [11, 12, 13, 2**62]
    batched = sgd.train_batched(data, seeds)
    looped = torch.stack([dpt.flat_weights(sgd.train(data, s)) for s in seeds])
    assert batched.shape == (4, sgd.parameters)
    torch.testing.assert_close(batched, looped, rtol=1e-5, atol=1e-6)


def test_user_train_is_seeded_and_leaves_global_rng_alone():
    def train(dataset, seed):  # plain torch, drawing from the global generator
        model = torch.nn.Linear(D, 1)
        with torch.no_grad():
            model.weight.add_(torch.randn(1, D) + dataset.tensors[0].mean())
        return model

    mech = dpt.mechanism(train, progress=False, device="cpu")
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = mech(_data(), np.random.default_rng(0), 3)
    assert torch.rand(1) == before  # fork_rng restored the caller's generator
    np.testing.assert_array_equal(a, mech(_data(), np.random.default_rng(0), 3))
    score = dpt.mechanism(train, output=lambda m: m.weight.sum(), progress=False)
    assert score(_data(), np.random.default_rng(0), 3).shape == (3, 1)


def test_gradient_canary_moves_the_weights_by_its_clipped_gradient():
    gradient = np.zeros(D + 1)
    gradient[D - 1] = -2.0  # the weight of the last feature, which no record uses
    canary = dpt.GradientCanary(gradient)
    sgd = _sgd(noise_multiplier=0.0, canary=canary)
    torch.nn.init.zeros_(sgd.model.weight)
    sgd = _sgd(model=sgd.model, noise_multiplier=0.0, canary=canary)
    d0, d1 = canary.pair(_data(zero_last=True))
    assert d1.n == d0.n + 1
    mech = dpt.mechanism(sgd, output="score", device="cpu")
    s0 = mech(d0, np.random.default_rng(0), 64)
    s1 = mech(d1, np.random.default_rng(0), 64)
    np.testing.assert_allclose(s0, 0.0, atol=1e-6)
    steps_with_canary = s1[:, 0] * (0.25 * d1.n) / (0.5 * 0.5)  # score = -lr·C·k / B
    np.testing.assert_allclose(steps_with_canary, np.round(steps_with_canary), atol=1e-4)
    assert -1e-4 <= steps_with_canary.min() and steps_with_canary.max() > 0
    assert abs(steps_with_canary.mean() - 5 * 0.25) < 0.5  # k ~ Binomial(5, 1/4)


def test_input_canary_score_and_pair():
    canary = dpt.InputCanary(np.ones(D), y=1.0)
    d0, d1 = canary.pair(_data())
    assert d1.n == N + 1 and np.all(d1.x[-1, 0] == 1.0)
    mech = dpt.mechanism(_sgd(), output="score", canary=canary, device="cpu")
    assert mech(d1, np.random.default_rng(0), 5).shape == (5, 1)


def test_wrong_train_signature_is_one_line():
    with pytest.raises(InputError, match=r"train\(dataset, seed\)") as err:
        dpt.mechanism(lambda dataset: None)
    assert "\n" not in str(err.value)


def test_nan_output_is_one_line():
    def train(dataset, seed):
        return torch.nn.Linear(D, 1)

    mech = dpt.mechanism(train, output=lambda model: float("nan"), progress=False)
    with pytest.raises(MechanismError, match="NaN") as err:
        mech(_data(), np.random.default_rng(0), 2)
    assert "\n" not in str(err.value)


def test_score_needs_a_canary_and_train_a_model():
    with pytest.raises(InputError, match="canary"):
        dpt.mechanism(_sgd(), output="score")
    mech = dpt.mechanism(lambda dataset, seed: 3.0, progress=False)
    with pytest.raises(MechanismError, match="torch.nn.Module"):
        mech(_data(), np.random.default_rng(0), 1)


def test_halved_noise_is_caught_by_the_gradient_canary_audit():
    from dpclaims.audit import audit

    gradient = np.zeros(D + 1)
    gradient[D - 1] = -1.0
    canary = dpt.GradientCanary(gradient)
    d0, d1 = canary.pair(_data(zero_last=True))
    for sigma, verdicts in [(4.0, {"consistent", "consistent_weak"}), (1.0, {"violation"})]:
        sgd = _sgd(
            noise_multiplier=sigma, sampling_rate=1.0, steps=2, batch_size=1.0, canary=canary
        )
        mech = dpt.mechanism(sgd, output="score", device="cpu")
        # q = 1, T = 2, σ = 4: the sum is N(2, 2·16) against N(0, 2·16), μ = 2/√32 ≈ 0.354
        r = audit(
            mech,
            d0,
            d1,
            trials=4000,
            seed=0,
            claim=PrivacyClaim(epsilon=2.0, delta=1e-5, relation="add-remove"),
            execution=Execution(progress=False),
        )
        assert r.verdict in verdicts, r.summary()


def test_input_canary_of_the_wrong_width_is_one_line():
    canary = dpt.InputCanary(np.ones(D + 1), y=1.0)
    with pytest.raises(InputError, match=f"InputCanary.x has {D + 1} features, the data has {D}"):
        canary.pair(_data())


def test_old_name_and_keywords_warn_and_build_the_same_description():
    """``dpt.DPSGD(lr=, sample_rate=)`` (the README's old spelling) still builds the
    :class:`TorchDPSGD` with ``step_size``, ``sampling_rate``, and warns."""
    torch.manual_seed(0)
    model = torch.nn.Linear(D, 1)
    with pytest.warns(DeprecationWarning, match="renamed TorchDPSGD"):
        old = dpt.DPSGD(
            model, _loss, steps=5, lr=0.5, clip_norm=0.5, noise_multiplier=1.0, sample_rate=0.25
        )
    assert isinstance(old, dpt.TorchDPSGD)
    assert (old.step_size, old.sampling_rate) == (0.5, 0.25)
