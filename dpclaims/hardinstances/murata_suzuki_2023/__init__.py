"""Regression data for DIFF2's §6: offline stand-ins (spec 004 §6.6 [DEFAULT] generators) and one
real set.

No downloads: each generator draws, from one seed, a dataset with the shape of the original
(California Housing, Gas Turbine CO, BlogFeedback); the teacher is a random 10-unit softplus
network, so the model class is well specified.  :func:`regression_real` loads a real dataset that
ships inside scikit-learn (the optional ``real`` extra).  Both apply the §6.1 preprocessing (random
80/20 split, features standardised with train statistics, target divided by max |y| over the whole
set) and cut the training set into P equal IID silos (remainder dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_choice, check_count
from dpclaims.hardinstances._items import check_rng
from dpclaims.losses import SoftplusNetwork

__all__ = [
    "STANDINS",
    "CALIBRATED_CORRELATION",
    "CALIBRATED_SNR",
    "REAL_DATASETS",
    "RegressionSplit",
    "regression_standin",
    "regression_real",
]

STANDINS = {
    "california_like": (20_640, 8),
    "gas_like": (36_733, 9),
    "blog_like": (60_021, 280),
    "calibrated": (2_000, 8),
}
"""Name → (samples, features): the originals' shapes (spec 004 §6.1, Table 2), and the
``calibrated`` stand-in of :func:`regression_standin` (the paper's regime, see there)."""

CALIBRATED_CORRELATION = 0.8
"""Feature correlation ``ρ`` of the calibrated stand-in (``X ~ N(0, ρ^{|i−j|})``, gas_like's).
Chosen so that non-private GD converges under App. A's η rule: with ρ = 0 (0.5) GD kept η = 1 on
6 (1) of 6 exploratory dataset seeds and crept down there, passing the early-stopping test, to up to
9x its loss at η = 0.25; at ρ = 0.8 η = 1 diverged and was rejected on 8 of 8."""

CALIBRATED_SNR = 10.0
"""Signal-to-noise ratio (std of ``Xw`` over std of the label noise) of the calibrated stand-in,
the one calibrated knob: the largest noise level (smallest SNR) on the ladder {3, 5, 10, 20} at
which, on pilot dataset seeds 100–102 (2,000 records, ε = 5, δ = 1e-5, R = 2000, the standard
grid), non-private GD's train loss is below 0.64 = HEADROOM² times DP-GD's on every seed."""

REAL_DATASETS = {"diabetes": (442, 10)}
"""Name → (samples, features) of the real regression sets bundled with scikit-learn (offline):
diabetes (Efron et al. 2004, raw features; the issue's suggested real-data check)."""


@dataclass(frozen=True, eq=False)
class RegressionSplit:
    """A preprocessed stand-in: ``train`` (P silos × n_p records, labelled), ``test_x (n_test, p)``,
    ``test_y``."""

    name: str
    train: UserDataset
    test_x: np.ndarray
    test_y: np.ndarray

    @property
    def model(self) -> SoftplusNetwork:
        """The §6.2 model: one hidden layer, 10 softplus units, squared loss."""
        return SoftplusNetwork(self.train.d)


def _teacher(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    net = SoftplusNetwork(x.shape[1])
    theta = net.init(rng, 1)
    return net.predict(theta, x)[0]


def _correlated(rng, n, p, rho):
    cov = rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    return rng.standard_normal((n, p)) @ np.linalg.cholesky(cov).T


def regression_standin(
    name: str,
    rng: np.random.Generator,
    *,
    silos: int = 10,
    samples: int | None = None,
    split_rng: np.random.Generator | None = None,
) -> RegressionSplit:
    """Draw the stand-in ``name`` (a key of :data:`STANDINS`); ``samples`` shrinks it for quick
    runs.

    ``rng`` draws the dataset; ``split_rng`` (default: ``rng``) draws the 80/20 split and the silos,
    so repetitions of an experiment on one dataset keep ``rng`` fixed and vary ``split_rng``.

    california_like: ``X ~ N(0, 0.5^{|i−j|})`` with two columns replaced by ``exp(N(0,1))``,
    ``y = teacher(X) + 0.3 N(0,1)`` capped at its 95th percentile; gas_like: ``0.8^{|i−j|}``,
    ``y = exp(teacher(X)/2 + 0.2 N(0,1))``; blog_like: 140 Bernoulli(0.05) and 140 ``⌊exp(N(0,1))⌋``
    features, ``y = 0`` w.p. 0.6 else ``exp(teacher(X) + N(0,1))``.

    calibrated (ours, not in the spec): the paper's regime, where privacy costs accuracy, so that
    DIFF2-GD has something to recover (on the three above non-private GD is not clearly below
    DP-GD).  2,000 records (the privacy cost grows as the records shrink: DP-GD's σ ∝ 1/N), 8
    features (d = 101, as California) ``X ~ N(0, ρ^{|i−j|})`` with ρ =
    :data:`CALIBRATED_CORRELATION`, and a linear teacher ``y = s + N(0,1)/SNR``, where ``s`` is
    ``Xw`` standardised, ``w ~ N(0, I/8)`` and SNR = :data:`CALIBRATED_SNR`: the label noise is
    chosen so that the Bayes floor sits well below DP-GD's privacy cost.
    """
    check_choice(name, tuple(STANDINS), "name")
    rng = check_rng(rng)
    n, p = STANDINS[name]
    n = n if samples is None else check_count(samples, "samples", minimum=10 * silos)
    if name == "california_like":
        x = _correlated(rng, n, p, 0.5)
        x[:, [2, 4]] = np.exp(rng.standard_normal((n, 2)))
        y = _teacher(x, rng) + 0.3 * rng.standard_normal(n)
        y = np.minimum(y, np.quantile(y, 0.95))
    elif name == "gas_like":
        x = _correlated(rng, n, p, 0.8)
        y = np.exp(_teacher(x, rng) / 2 + 0.2 * rng.standard_normal(n))
    elif name == "calibrated":
        x = _correlated(rng, n, p, CALIBRATED_CORRELATION)
        signal = x @ (rng.standard_normal(p) / np.sqrt(p))
        signal = (signal - signal.mean()) / signal.std()
        y = signal + rng.standard_normal(n) / CALIBRATED_SNR
    else:
        x = np.concatenate(
            [
                (rng.random((n, 140)) < 0.05).astype(float),
                np.floor(np.exp(rng.standard_normal((n, 140)))),
            ],
            axis=1,
        )
        y = np.where(rng.random(n) < 0.6, 0.0, np.exp(_teacher(x, rng) + rng.standard_normal(n)))
    split_rng = rng if split_rng is None else check_rng(split_rng)
    return _preprocess(name, x, y, split_rng=split_rng, silos=silos)


def regression_real(
    name: str, split_rng: np.random.Generator, *, silos: int = 10
) -> RegressionSplit:
    """Load the real set ``name`` (a key of :data:`REAL_DATASETS`) from scikit-learn's bundled files
    and apply the §6.1 preprocessing; ``split_rng`` draws the 80/20 split and the silos."""
    check_choice(name, tuple(REAL_DATASETS), "name")
    split_rng = check_rng(split_rng)
    try:
        from sklearn.datasets import load_diabetes
    except ImportError:
        raise InputError(
            f"the real dataset {name!r} ships with scikit-learn; install it with "
            "pip install 'dpclaims[real]'"
        ) from None
    x, y = load_diabetes(return_X_y=True, scaled=False)
    return _preprocess(name, x, y, split_rng=split_rng, silos=silos)


def _preprocess(
    name: str, x: np.ndarray, y: np.ndarray, *, split_rng: np.random.Generator, silos: int
) -> RegressionSplit:
    """§6.1: ``x (n, p)``, ``y (n,)`` → y / max|y|, random 80/20 split, features standardised with
    train statistics, training set cut into ``silos`` equal silos."""
    n, p = x.shape
    y = y / np.max(np.abs(y))
    order = split_rng.permutation(n)
    n_train = int(round(0.8 * n))
    tr, te = order[:n_train], order[n_train:]
    mean, std = x[tr].mean(axis=0), x[tr].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    x = (x - mean) / std
    per = n_train // check_count(silos, "silos")
    if per < 1:
        raise InputError(f"{n_train} training samples cannot fill {silos} silos")
    train = UserDataset(
        x[tr[: per * silos]].reshape(silos, per, p), y[tr[: per * silos]].reshape(silos, per)
    )
    return RegressionSplit(name=name, train=train, test_x=x[te], test_y=y[te])
