"""dpclaims.torch.opacus_mechanism: an Opacus training read off its own objects and run batched
(skipped without opacus, which CI does not install)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
F = torch.nn.functional

from opacus import PrivacyEngine  # noqa: E402

from dpclaims import InputError, UserDataset  # noqa: E402
from dpclaims import torch as dpt  # noqa: E402

N, D, BATCH, STEPS, CLIP, LR, SIGMA = 32, 4, 8, 5, 0.5, 0.5, 1.0


def _loss(out, target):
    return F.binary_cross_entropy_with_logits(out.squeeze(-1), target)


def _train(dataset, seed, momentum=0.0, sigma=SIGMA):
    """An Opacus loop as its tutorials write it (zero start, Poisson batches of 8 expected)."""
    model = torch.nn.Linear(D, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=momentum)
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH)
    model, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
        max_grad_norm=CLIP, poisson_sampling=True,
    )  # fmt: skip
    for _ in range(STEPS):
        x, y = next(iter(loader))
        optimizer.zero_grad()
        _loss(model(x), y).backward()
        optimizer.step()
    return model._module


def _pair():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, D))
    x[:, -1] = 0.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    data = UserDataset(x, (rng.random(N) < 0.5).astype(float))
    return dpt.InputCanary(np.r_[np.zeros(D - 1), 10.0], y=0.0).pair(data)


def _canary_weight(model):
    return model.weight[0, -1]


@pytest.fixture(autouse=True)
def _quiet(recwarn):  # Opacus warns about its secure RNG and a full backward hook
    yield


def test_the_numbers_are_read_off_make_privates_objects_for_each_dataset():
    d0, d1 = _pair()
    c0, model = dpt.record_opacus(_train, d0)
    assert (c0.noise_multiplier, c0.max_grad_norm, c0.lr, c0.steps) == (SIGMA, CLIP, LR, STEPS)
    assert (c0.sample_rate, c0.normaliser, c0.records) == (1 / 4, 8.0, 32)
    assert isinstance(model, torch.nn.Linear) and not torch.any(model.weight)
    c1, _ = dpt.record_opacus(_train, d1)  # Opacus: rate 1/len(loader), batch int(n · rate)
    assert (c1.sample_rate, c1.normaliser, c1.records) == (1 / 5, 6.0, 33)
    described = c1.describe(model, _loss)
    assert (described.sample_rate, described.batch_size, described.steps) == (1 / 5, 6.0, STEPS)


def test_what_dpsgd_cannot_describe_is_named():
    d0, _ = _pair()
    with pytest.raises(InputError, match="momentum"):
        dpt.record_opacus(lambda data, seed: _train(data, seed, momentum=0.9), d0)
    with pytest.raises(InputError, match="never called PrivacyEngine.make_private"):
        dpt.record_opacus(lambda data, seed: torch.nn.Linear(D, 1), d0)


@pytest.mark.slow
def test_the_description_has_the_law_of_the_opacus_trainings():
    """300 Opacus trainings, looped, against 20,000 of the batched description on the dataset
    with the canary: the canary weight's mean and sd agree within four standard errors."""
    _, d1 = _pair()
    looped = dpt.mechanism(_train, output=_canary_weight, progress=False, device="cpu")
    ours = looped(d1, np.random.default_rng(0), 300)[:, 0]
    mech = dpt.opacus_mechanism(_train, loss=_loss, output=_canary_weight, device="cpu")
    theirs = mech(d1, np.random.default_rng(1), 20_000)[:, 0]
    sd = theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 4 * sd / np.sqrt(300)
    assert abs(ours.std(ddof=1) - sd) < 4 * sd / np.sqrt(2 * 300)
    assert len(mech.configs) == 1  # one recorded training per dataset
    same = mech(d1, np.random.default_rng(1), 50)[:, 0]
    np.testing.assert_allclose(same, theirs[:50], rtol=1e-5, atol=1e-7)  # same seeds
