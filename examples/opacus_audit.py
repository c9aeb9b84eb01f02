"""Audit an Opacus DP-SGD training with dpclaims, without glue (issue 28, must-show 3).

The user's code is the block between the USER CODE markers: an Opacus training function
``train(dataset, seed) -> model`` and its configuration.  dpclaims then

1. runs that Opacus function as a mechanism (looped, one training per trial, progress bar)
   to check it agrees with the batched description of the same configuration, and
2. audits the batched description (``dpclaims.torch.DPSGD``, the same numbers) with a
   gradient canary (white-box threat model: a record whose gradient is fixed to a unit
   vector on a weight no other record touches, the final weights' movement along it as the
   output), once at the calibrated noise and once with the noise halved.

    python examples/opacus_audit.py [--trials 100000] [--opacus 40]

The calibrated run is ``consistent`` (ε = 1 at δ = 1e-5), the noise-halved one a
``violation``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# ---- USER CODE ------------------------------------------------------------------------------
import torch
import torch.nn.functional as F
from opacus import PrivacyEngine

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


# ---- END USER CODE --------------------------------------------------------------------------

from dpclaims import UserDataset  # noqa: E402
from dpclaims import torch as dpt  # noqa: E402
from dpclaims.audit import audit  # noqa: E402
from dpclaims.privacy import PrivacyClaim  # noqa: E402


def dataset(seed: int = 0) -> UserDataset:
    """256 records on the unit sphere of the first D − 1 features; the last feature is 0 for
    all of them, so only the canary moves its weight."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    x[:, -1] = 0.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return UserDataset(x, (rng.random(N) < 0.5).astype(float))


def description(sigma: float, canary: dpt.GradientCanary) -> dpt.DPSGD:
    """The batched twin of ``train``: the same model, loss and numbers (Opacus' expected batch
    size q·N is fixed to 32 here, so the add-remove pair shares the normaliser)."""
    return dpt.DPSGD(
        make_model(), loss, steps=STEPS, lr=LR, clip_norm=CLIP, noise_multiplier=sigma,
        sample_rate=RATE, batch_size=RATE * N, canary=canary,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description="Audit an Opacus training (issue 28)")
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--opacus", type=int, default=40, help="Opacus trainings to compare")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gradient = np.zeros(D + 1)
    gradient[D - 1] = -1.0  # descent moves the last weight up by lr·C/B when the canary is in
    canary = dpt.GradientCanary(gradient)
    d0, d1 = canary.pair(dataset())
    print(f"DP-SGD: N = {N}, q = {RATE}, T = {STEPS}, C = {CLIP}, σ = {SIGMA:.3f} for ε = {EPS}")

    if args.opacus:  # 1. the Opacus function itself, looped: its noise on the canary weight
        looped = dpt.mechanism(train, output=lambda m: m.weight[0, -1] * N * RATE / LR)
        start = time.perf_counter()
        ours = looped(d0, np.random.default_rng(0), args.opacus)[:, 0]
        rate = args.opacus / (time.perf_counter() - start)
        twin = dpt.mechanism(description(SIGMA, canary), output="score")
        theirs = twin(d0, np.random.default_rng(1), 20_000)[:, 0] * N * RATE / LR
        print(
            f"Opacus looped: {rate:.2f} runs/s; on d0 the canary weight·B/lr has sd "
            f"{ours.std(ddof=1):.1f} over {len(ours)} trainings (batched twin "
            f"{theirs.std():.1f}, σ·C·√T = {SIGMA * CLIP * np.sqrt(STEPS):.1f})"
        )

    for name, sigma in [("calibrated", SIGMA), ("noise halved", SIGMA / 2)]:
        mech = dpt.mechanism(description(sigma, canary), output="score")
        start, cpu = time.perf_counter(), time.process_time()
        claim = PrivacyClaim(epsilon=EPS, delta=DELTA, relation="add-remove")
        r = audit(mech, d0, d1, claim, trials=args.trials, seed=0)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(
            f"{name:12s} σ = {sigma:.3f}: {r.verdict}, certified ε ≥ {r.epsilon_lower:.3f} "
            f"(claim {EPS}), reach {r.reach.factor:.2f}×, {args.trials:,} trials per dataset, "
            f"{wall:.0f} s ({cpu:.0f} CPU s, {2 * args.trials / wall:.0f} runs/s)"
        )


if __name__ == "__main__":
    main()
