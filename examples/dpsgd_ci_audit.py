"""A CI gate for your own DP-SGD: a gradient canary, all iterates, under a minute.

Copy this file next to your training code and replace ``train`` with your training loop
(numpy here; keep it batched over trials: one row per independent training run).  The audit
adds one *gradient canary* (a unit whose gradient is a fixed vector along a coordinate your
data never uses: clipped, it is the worst case of clipping), releases every noisy update (the
all-iterates threat model your accountant assumes), scores each run by the exact
log-likelihood ratio of the canary's presence (fixed in advance from the noise, clip and
sampling rate you claim), and certifies ε at 95% at the order-statistic tests that the
claimed mechanism predicts best, for itself and, where it takes its own test, against half its
noise (``planned_threshold``: planned from the claim, no run seen).

``assert_private`` fails on a violation, and also when the audit is too weak to have caught a
2× violation of this canary's leakage, so a passing gate means something.  Run it as a test
(``pytest examples/dpsgd_ci_audit.py``) or a script; about 10 s of CPU.
"""

from __future__ import annotations

import numpy as np

from dpclaims import GradientCanaryDataset, UserDataset
from dpclaims.algorithms.transcript import StepRelease
from dpclaims.audit import AuditTest
from dpclaims.privacy import calibrate_noise_multiplier
from dpclaims.targets.dpsgd import planned_threshold
from dpclaims.testing import assert_private

EPSILON, DELTA = 2.0, 1e-5  # the claim your accountant makes
STEPS, RATE, CLIP, LR = 10, 0.5, 1.0, 0.5  # T steps, Poisson rate q, clip C, learning rate
SIGMA = calibrate_noise_multiplier(EPSILON, DELTA, sampling_rate=RATE, steps=STEPS)
TRIALS = 100_000  # training runs per dataset


def train(data, rng, trials, *, noise_multiplier=SIGMA, clip=True):
    """Your DP-SGD (logistic regression, Poisson sampling, per-example clipping), batched over
    trials; releases every noisy update: ``(trials, T × d)``.  (``noise_multiplier`` and
    ``clip=False`` are here only to show the gate failing on the bugs it must catch.)"""
    canary = data.gradient if isinstance(data, GradientCanaryDataset) else None
    data = data.data if isinstance(data, GradientCanaryDataset) else data
    x, y = data.x[:, 0], data.y[:, 0]  # (n, d), (n,)
    n, d = x.shape
    theta = np.zeros((trials, d))
    released = np.empty((trials, STEPS, d))
    for t in range(STEPS):
        margins = theta @ x.T  # (trials, n)
        grads = (-y / (1.0 + np.exp(y * margins)))[..., None] * x  # (trials, n, d)
        norms = np.linalg.norm(grads, axis=-1, keepdims=True)
        if clip:
            grads *= CLIP / np.maximum(norms, CLIP)  # clip each example's gradient
        batch = rng.random((trials, n)) < RATE  # Poisson sampling
        total = np.einsum("tn,tnd->td", batch, grads)
        if canary is not None:  # the canary is one more example, sampled and clipped alike
            scale = CLIP / max(np.linalg.norm(canary), CLIP) if clip else 1.0
            total += (rng.random(trials) < RATE)[:, None] * (scale * canary)
        noisy = total + noise_multiplier * CLIP * rng.standard_normal((trials, d))
        released[:, t] = noisy
        theta -= LR / (RATE * n) * noisy
    return released.reshape(trials, -1)


RELEASE = StepRelease(steps=STEPS, sampling_rate=RATE, clip_norm=CLIP, noise_std=SIGMA * CLIP)


def canary_score(outputs):
    """The exact log-likelihood ratio of the canary from the released updates' last coordinate
    (the canary's direction), fixed before any run is seen."""
    steps = outputs.reshape(len(outputs), STEPS, -1)
    return RELEASE.log_likelihood_ratio(steps[:, :, -1])


def datasets(n=32, d=4, seed=0):
    """Your data with a coordinate left at 0 for the canary, and the same data plus the canary
    (add/remove neighbours: the claim is the accountant's, add-remove, item level)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, :-1] = rng.standard_normal((n, d - 1)) / np.sqrt(d - 1)
    y = np.where(x[:, 0] + 0.3 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    d0 = UserDataset(x, y)
    canary = np.zeros(d)
    canary[-1] = 10.0 * CLIP  # any norm >= C: clipped to C; a skipped clip shows
    return d0, GradientCanaryDataset(d0, canary)


def audit_training(mechanism=train, trials=TRIALS):
    """The gate: passes for a correct ``mechanism``, raises AssertionError otherwise."""
    d0, d1 = datasets()
    return assert_private(
        mechanism,
        d0,
        d1,
        epsilon=EPSILON,
        delta=DELTA,
        trials=trials,
        unit="item",
        relation="add-remove",
        test=AuditTest(
            statistic=canary_score,
            threshold=planned_threshold(RELEASE, trials=trials, delta=DELTA, epsilon=EPSILON),
        ),
    )


def test_dpsgd_is_private():
    audit_training()


if __name__ == "__main__":
    print(audit_training().summary())
