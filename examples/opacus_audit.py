"""Audit an Opacus DP-SGD training with dpclaims, without a twin written by hand (issue 28).

The user's code is the block between the USER CODE markers: an Opacus training function
``train(dataset, seed) -> model`` and its configuration, as Opacus' tutorials write it.
``dpclaims.torch.opacus_mechanism(train, loss=loss, output=...)`` is the one call that turns it
into a mechanism: on each dataset it runs ``train`` once with ``make_private`` watched, reads
the DP-SGD Opacus set up there (noise multiplier, clip norm, Poisson rate, expected batch size,
learning rate, steps) and trains all trials at once as that ``TorchDPSGD`` description.
dpclaims then

1. audits the Opacus function itself, looped (one training per trial, a few hundred), and
   compares the canary weight's mean and sd on each dataset with the batched description's;
2. audits the Opacus training batched, with an input canary (a record on a feature no other
   record uses, labelled 0; the output is the final weight on that feature: the adversary
   sees the final model), as written, with a public sampling rate, and with the public rate
   and the noise halved; the last also with a gradient canary (the white-box threat model:
   a marker record whose gradient the description fixes to a unit vector on that weight);
3. refuses a training that does more than the DP-SGD ``make_private`` configured (three
   non-private epochs after it): on each dataset ``opacus_mechanism`` runs the function itself
   50 times and compares its outputs with the batched description's (Kolmogorov–Smirnov).

    python examples/opacus_audit.py [--trials 100000] [--opacus 200]

Opacus, as its tutorials call it (a ``DataLoader`` with ``batch_size=32``), computes the
Poisson rate as ``1 / len(data_loader)`` and the expected batch size as ``int(len(dataset) ·
rate)`` from the dataset it is given: with the canary added (257 records) they become 1/9 and
28 instead of 1/8 and 32 (Opacus #571, #819), and the add-remove audit sees that.
``train_public_rate`` passes a ``DPDataLoader(dataset, sample_rate=1/8)`` instead: the rate is
1/8 and the batch size int(n/8) = 32 on both datasets.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# ---- USER CODE ------------------------------------------------------------------------------
import torch
import torch.nn.functional as F
from opacus import PrivacyEngine
from opacus.data_loader import DPDataLoader

from dpclaims.privacy import calibrate_noise_multiplier

N, D, RATE, STEPS, CLIP, LR, EPS, DELTA = 256, 10, 1 / 8, 40, 1.0, 0.5, 1.0, 1e-5
SIGMA = calibrate_noise_multiplier(EPS, DELTA, sampling_rate=RATE, steps=STEPS)


def loss(out, target):
    return F.binary_cross_entropy_with_logits(out.squeeze(-1), target)


def make_model():
    model = torch.nn.Linear(D, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    return model


def train(dataset, seed, sigma=SIGMA):  # Opacus, as in its tutorials; seeded by dpclaims
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loader = torch.utils.data.DataLoader(dataset, batch_size=int(RATE * N))
    model, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
        max_grad_norm=CLIP, poisson_sampling=True,
    )  # fmt: skip
    for _ in range(STEPS):
        x, y = next(iter(loader))  # one Poisson-sampled batch
        optimizer.zero_grad()
        loss(model(x), y).backward()
        optimizer.step()
    return model._module


def train_public_rate(dataset, seed, sigma=SIGMA):  # the fix: a public rate and batch size
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loader = DPDataLoader(dataset, sample_rate=RATE)  # q = 1/8 whatever len(dataset) is
    model, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
        max_grad_norm=CLIP, poisson_sampling=True,
    )  # fmt: skip
    for _ in range(STEPS):
        x, y = next(iter(loader))
        optimizer.zero_grad()
        loss(model(x), y).backward()
        optimizer.step()
    return model._module


def train_fine_tuned(dataset, seed, sigma=SIGMA):  # a bug: three non-private epochs after it
    model = make_model()
    model.load_state_dict(train_public_rate(dataset, seed, sigma).state_dict())
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(3):
        for x, y in torch.utils.data.DataLoader(dataset, batch_size=int(RATE * N), shuffle=True):
            optimizer.zero_grad()
            loss(model(x), y).backward()
            optimizer.step()
    return model


# ---- END USER CODE --------------------------------------------------------------------------

import functools  # noqa: E402

from dpclaims import UserDataset  # noqa: E402
from dpclaims import torch as dpt  # noqa: E402
from dpclaims.audit import audit  # noqa: E402
from dpclaims.errors import MechanismError  # noqa: E402
from dpclaims.privacy import PrivacyClaim  # noqa: E402


def dataset(seed: int = 0) -> UserDataset:
    """256 records on the unit sphere of the first D − 1 features; the last feature is 0 for
    all of them, so only the canary moves its weight."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    x[:, -1] = 0.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return UserDataset(x, (rng.random(N) < 0.5).astype(float))


def canary_weight(model: torch.nn.Module) -> torch.Tensor:
    """The output the adversary reads: the final weight on the canary's feature."""
    return model.weight[0, -1]


def main() -> None:
    parser = argparse.ArgumentParser(description="Audit an Opacus training (issue 28)")
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument(
        "--opacus", type=int, default=200, help="Opacus trainings per dataset, looped"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="run only these audits (names)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # the canary: a record with 10 on the feature no other record uses, label 0 (its gradient
    # has norm ≈ 10 |σ(logit)|, clipped to C, almost all of it on that feature's weight)
    canary = dpt.InputCanary(np.r_[np.zeros(D - 1), 10.0], y=0.0)
    d0, d1 = canary.pair(dataset())
    print(f"DP-SGD: N = {N}, q = {RATE}, T = {STEPS}, C = {CLIP}, σ = {SIGMA:.3f} for ε = {EPS}")
    claim = PrivacyClaim(epsilon=EPS, delta=DELTA, relation="add-remove")

    if args.opacus:  # 1. the Opacus function itself, looped, against its batched description
        looped = dpt.mechanism(train, output=canary_weight)
        start = time.perf_counter()
        r = audit(looped, d0, d1, claim, trials=args.opacus, seed=0)
        rate = 2 * args.opacus / (time.perf_counter() - start)
        print(
            f"Opacus looped audit: {r.verdict}, ε ≥ {r.epsilon_lower:.3f} at {args.opacus} "
            f"trials per dataset, {rate:.2f} runs/s"
        )
        mech = dpt.opacus_mechanism(train, loss=loss, output=canary_weight)
        for name, data in (("d0", d0), ("d1", d1)):
            config, _ = mech.config(data)
            ours = looped(data, np.random.default_rng(2), args.opacus)[:, 0]
            theirs = mech(data, np.random.default_rng(3), 20_000)[:, 0]
            print(
                f"Opacus on {name} ({config.records} records): q = {config.sample_rate:.4f}, "
                f"expected batch {config.normaliser:g}, {config.steps} steps; canary weight "
                f"mean {ours.mean():+.4f}, sd {ours.std(ddof=1):.4f} over {len(ours)} looped "
                f"trainings, {theirs.mean():+.4f}, {theirs.std():.4f} over 20,000 batched"
            )

    # the white-box adversary of the DP-SGD threat models: a marker record whose gradient the
    # batched description sets to −e (the last feature's weight), clipped like any other; its
    # score is the final weight on that feature
    gradient = np.zeros(D + 1)
    gradient[D - 1] = -1.0
    white_box = dpt.GradientCanary(gradient)
    audits = [
        ("as written", train, SIGMA, canary),
        ("public rate", train_public_rate, SIGMA, canary),
        ("public rate, noise halved", train_public_rate, SIGMA / 2, canary),
        ("public rate, gradient", train_public_rate, SIGMA, white_box),
        ("… noise halved, gradient", train_public_rate, SIGMA / 2, white_box),
        ("public rate, fine-tuned", train_fine_tuned, SIGMA, canary),
    ]
    for name, user_train, sigma, chosen in audits:
        if args.only and name not in args.only:
            continue
        user_train = functools.partial(user_train, sigma=sigma)
        if chosen is canary:
            pair = d0, d1
            mech = dpt.opacus_mechanism(user_train, loss=loss, output=canary_weight)
        else:
            pair = chosen.pair(dataset())
            mech = dpt.opacus_mechanism(user_train, loss=loss, output="score", canary=chosen)
        start, cpu = time.perf_counter(), time.process_time()
        try:
            r = audit(mech, *pair, claim, trials=args.trials, seed=0)
        except MechanismError as error:  # train() is not the DP-SGD make_private configured
            print(f"{name:26s} σ = {sigma:.3f}: refused: {error}")
            continue
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        checks = ", ".join(
            f"p = {c.pvalue:.2g} ({c.records} records)" for c in mech.checks.values() if c
        )
        print(
            f"{name:26s} σ = {sigma:.3f}: {r.verdict}, certified ε ≥ {r.epsilon_lower:.3f} "
            f"(claim {EPS}), reach {r.reach.factor:.2f}×, {args.trials:,} trials per dataset, "
            f"{wall:.0f} s ({cpu:.0f} CPU s, {2 * args.trials / wall:.0f} runs/s); train "
            f"looped vs batched: {checks or 'not compared (gradient canary)'}"
        )


if __name__ == "__main__":
    main()
