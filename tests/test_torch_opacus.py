"""dpclaims.torch.opacus_mechanism: an Opacus training read off its own objects and run batched
(skipped without opacus, which CI does not install)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
F = torch.nn.functional

from opacus import PrivacyEngine  # noqa: E402

from dpclaims import InputError, MechanismError, PrivacyClaim, UserDataset  # noqa: E402
from dpclaims import torch as dpt  # noqa: E402
from dpclaims.audit import audit  # noqa: E402
from dpclaims.execution import Execution  # noqa: E402

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


@pytest.fixture(autouse=True)
def _one_thread():  # trainings this small only contend for a shared machine's cores
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_numbers_are_read_off_make_privates_objects_for_each_dataset():
    d0, d1 = _pair()
    c0, model = dpt.record_opacus(_train, d0)
    assert (c0.noise_multiplier, c0.max_grad_norm, c0.lr, c0.steps) == (SIGMA, CLIP, LR, STEPS)
    assert (c0.sample_rate, c0.normaliser, c0.records) == (1 / 4, 8.0, 32)
    assert isinstance(model, torch.nn.Linear) and not torch.any(model.weight)
    c1, _ = dpt.record_opacus(_train, d1)  # Opacus: rate 1/len(loader), batch int(n · rate)
    assert (c1.sample_rate, c1.normaliser, c1.records) == (1 / 5, 6.0, 33)
    described = c1.describe(model, _loss)
    assert (described.sampling_rate, described.batch_size, described.steps) == (1 / 5, 6.0, STEPS)


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


def _fine_tuned(dataset, seed):
    """The same DP-SGD, then three non-private epochs on the private data (the bug)."""
    model = torch.nn.Linear(D, 1)
    model.load_state_dict(_train(dataset, seed).state_dict())
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(3):
        for x, y in torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True):
            optimizer.zero_grad()
            _loss(model(x), y).backward()
            optimizer.step()
    return model


def _audit(mech):
    claim = PrivacyClaim(epsilon=1.0, delta=1e-5, relation="add-remove")
    return audit(mech, *_pair(), claim, trials=500, execution=Execution(backend="serial"))


def test_train_is_checked_against_the_dp_sgd_make_private_configured():
    """Three non-private epochs after the DP-SGD move the canary weight on the dataset with the
    canary: 50 looped runs of train and 2,000 batched runs of its description differ (KS), and
    the audit refuses it; the correct train agrees with its description on both datasets and
    every result says what was audited."""
    mech = dpt.opacus_mechanism(_fine_tuned, loss=_loss, output=_canary_weight, device="cpu")
    with pytest.raises(
        MechanismError,
        match=r"your train\(\) differs from the DP-SGD configured "
        r"by make_private on the dataset of 33 records: 50 looped runs vs 2000",
    ):
        _audit(mech)
    assert mech.checks and all(c.pvalue < 1e-10 for c in mech.checks.values() if c.records == 33)
    correct = dpt.opacus_mechanism(_train, loss=_loss, output=_canary_weight, device="cpu")
    result = _audit(correct)
    checks = sorted(correct.checks.values(), key=lambda c: c.records)
    assert [c.records for c in checks] == [32, 33] and all(c.pvalue > 0.01 for c in checks)
    (note,) = [w for w in result.warnings if w.startswith("opacus_mechanism audited")]
    assert "configured by make_private, run batched, not train itself" in note
    assert "on 33 records (σ = 1, C = 0.5, q = 0.2, batch 6, lr 0.5, 5 steps)" in note
    assert "train looped agreed with it (50 looped runs vs 2000 batched" in note


def test_the_loop_check_can_be_turned_off_and_skips_a_gradient_canarys_marker():
    mech = dpt.opacus_mechanism(_fine_tuned, loss=_loss, output=_canary_weight, loop_runs=0)
    (note,) = _audit(mech).warnings[-1:]
    assert note.endswith("not compared with train looped (loop_runs=0)")
    data, _ = _pair()
    canary = dpt.GradientCanary(np.r_[np.zeros(D - 1), -1.0, 0.0])
    d0, d1 = canary.pair(data)
    mech = dpt.opacus_mechanism(_train, loss=_loss, output="score", canary=canary, loop_runs=20)
    assert mech.check_loop(d0).passed and mech.check_loop(d1) is None
    with pytest.raises(InputError, match="loop_runs must be a whole number >= 0"):
        dpt.opacus_mechanism(_train, loss=_loss, loop_runs=-1)
    with pytest.raises(InputError, match="loop_level must be in"):
        dpt.opacus_mechanism(_train, loss=_loss, loop_level=1.5)
