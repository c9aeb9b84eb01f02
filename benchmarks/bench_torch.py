"""Trials per second: the torch adapter's batched DP-SGD against a hand-batched torch rewrite.

The issue-28 speed anchor: DP-SGD of a 256-example logistic regression (d = 10 features and
a bias), Poisson rate 1/8, 40 steps, clip 1, batched over trials.  ``hand`` is what a user
would write by hand: analytic per-example gradients, norms |r|·‖(x, 1)‖, one matmul per
step, one generator for all trials.  ``adapter`` is ``dpclaims.torch.mechanism(TorchDPSGD(...))``
called as the auditor calls it (seeds from the audit's rng, one generator per trial, outputs
as numpy).  Both run on the same device, interleaved, repeated; the script prints the median
wall-clock and CPU rate of each and their ratio.

    python benchmarks/bench_torch.py [--trials 4096] [--repeats 5] [--threads 2] [--opacus 20]

``--opacus N`` also times N Opacus trainings one at a time (the looped path).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

from dpclaims import UserDataset
from dpclaims import torch as dpt

N, D, RATE, STEPS, CLIP, SIGMA, LR = 256, 10, 1 / 8, 40, 1.0, 1.0, 0.5


def dataset(seed: int = 0) -> UserDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return UserDataset(x, (rng.random(N) < 0.5).astype(float))


def loss(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(out.squeeze(-1), target)


@torch.no_grad()
def hand_batched(x: torch.Tensor, y: torch.Tensor, trials: int, gen: torch.Generator):
    """The reference: DP-SGD of logistic regression for ``trials`` runs at once, (trials, D+1)."""
    xb = torch.cat([x, torch.ones(len(x), 1)], dim=1)  # bias as a feature
    row_norms = torch.linalg.vector_norm(xb, dim=1)
    theta = torch.zeros(trials, D + 1)
    for _ in range(STEPS):
        mask = torch.rand(trials, N, generator=gen) < RATE
        residual = torch.sigmoid(theta @ xb.T) - y  # dloss/dmargin, (trials, N)
        factor = torch.clamp(CLIP / (residual.abs() * row_norms + 1e-12), max=1.0) * mask
        noise = torch.randn(trials, D + 1, generator=gen)
        theta = theta - (LR / (RATE * N)) * ((factor * residual) @ xb + SIGMA * CLIP * noise)
    return theta


def opacus_train(dataset_: torch.utils.data.TensorDataset, seed: int) -> torch.nn.Module:
    from opacus import PrivacyEngine

    model = torch.nn.Linear(D, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), step_size=LR)
    loader = torch.utils.data.DataLoader(dataset_, batch_size=int(RATE * N))
    engine = PrivacyEngine(accountant="rdp")
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=SIGMA,
        max_grad_norm=CLIP,
        poisson_sampling=True,
    )
    step = 0
    while step < STEPS:
        for xb, yb in loader:
            optimizer.zero_grad()
            loss(model(xb), yb).backward()
            optimizer.step()
            step += 1
            if step == STEPS:
                break
    return model._module


def rate(fn, trials: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn(trials)
    return trials / (time.perf_counter() - wall), trials / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--opacus", type=int, default=0)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device) if args.device else dpt.default_device()
    data = dataset()
    tensors = dpt.as_tensors(data, device)
    x, y = tensors.tensors
    model = torch.nn.Linear(D, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    sgd = dpt.TorchDPSGD(
        model,
        loss,
        steps=STEPS,
        step_size=LR,
        clip_norm=CLIP,
        noise_multiplier=SIGMA,
        sampling_rate=RATE,
    )
    mech = dpt.mechanism(sgd, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    rng = np.random.default_rng(0)
    runs = {
        "hand": lambda t: hand_batched(x.to(device), y.to(device), t, gen).cpu(),
        "adapter": lambda t: mech(data, rng, t),
    }
    for fn in runs.values():  # warm up
        fn(256)
    results = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, fn in runs.items():
            results[name].append(rate(fn, args.trials))
    print(
        f"device {device}, torch {torch.__version__}, {args.threads} threads, "
        f"{args.trials} trials x {args.repeats} repeats (median)"
    )
    medians = {}
    for name, values in results.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        medians[name] = (wall, cpu)
        print(f"{name:8s} {wall:9.0f} runs/s wall   {cpu:9.0f} runs per CPU-second")
    print(
        f"adapter / hand: {medians['adapter'][0] / medians['hand'][0]:.2f} wall, "
        f"{medians['adapter'][1] / medians['hand'][1]:.2f} CPU"
    )
    if args.opacus:
        looped = dpt.mechanism(opacus_train, progress=False, device="cpu")
        wall, cpu = rate(lambda t: looped(data, rng, t), args.opacus)
        print(f"opacus   {wall:9.2f} runs/s wall   {cpu:9.2f} runs per CPU-second (looped)")


if __name__ == "__main__":
    main()
