"""Write canary scores from a torch "training run" to scores.npz, for `dpclaims audit --scores`.

The training here is a stand-in for yours: the model is the noisy sum of the included
*gradient canaries* (random unit vectors in d dimensions, each included with probability 1/2),
plus Gaussian noise of scale ``sigma`` — one step of DP-SGD with clip norm 1 and no other data.
A canary's score is its inner product with the model (higher: more likely included).  Replace
``train`` with your own training and ``score`` with your own attack score; the file layout is
what matters:

    one run    np.savez(path, scores=(m,) float, included=(m,) bool)
    many runs  np.savez(path, s0=(n0,) float, s1=(n1,) float)   # runs without / with one canary

Run (CPU torch is enough):

    python examples/scores_from_torch.py scores.npz --sigma 1.0
    dpclaims audit --scores scores.npz --epsilon 2 --delta 1e-5

With ``--runs N`` it writes the multi-run layout instead: N runs without and N runs with one
canary, the canary's score in each.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch


def train(canaries: torch.Tensor, included: torch.Tensor, sigma: float, gen) -> torch.Tensor:
    """The model after one noisy step: the sum of the included canaries plus N(0, σ² I)."""
    model = (canaries * included[:, None].to(canaries.dtype)).sum(dim=0)
    return model + sigma * torch.randn(canaries.shape[1], generator=gen, dtype=canaries.dtype)


def score(model: torch.Tensor, canaries: torch.Tensor) -> torch.Tensor:
    """Each canary's score: its inner product with the model, (m,)."""
    return canaries @ model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="the .npz file to write")
    parser.add_argument("--canaries", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=100_000)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=0, help="multi-run layout with this many")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(args.seed)
    canaries = torch.randn(args.canaries, args.dim, generator=gen, dtype=torch.float64)
    canaries /= canaries.norm(dim=1, keepdim=True)  # clipped: norm 1
    if args.runs:
        one = canaries[:1]
        s0 = [
            score(train(one, torch.tensor([False]), args.sigma, gen), one)[0]
            for _ in range(args.runs)
        ]
        s1 = [
            score(train(one, torch.tensor([True]), args.sigma, gen), one)[0]
            for _ in range(args.runs)
        ]
        np.savez(args.path, s0=torch.stack(s0).numpy(), s1=torch.stack(s1).numpy())
    else:
        included = torch.rand(args.canaries, generator=gen) < 0.5
        scores = score(train(canaries, included, args.sigma, gen), canaries)
        np.savez(args.path, scores=scores.numpy(), included=included.numpy())
    print(f"wrote {args.path}")


if __name__ == "__main__":
    main()
