"""Noise helpers that say what they add: the declared sensitivity and the noiseless value.

A mechanism that draws its noise as ``noise.laplace(rng, value, scale=b, sensitivity=Δ₁,
trials=n)`` or ``noise.gaussian(rng, value, sigma=σ, sensitivity=Δ₂, trials=n)`` releases
``value + noise`` with exactly the draws of ``rng.laplace(0, b, (n, k))`` or
``σ · rng.standard_normal((n, k))`` (so switching to the helpers changes no result).  Inside
:func:`recording` each call also records a :class:`Release`: the noiseless ``value``, the
declared sensitivity (ℓ1 for Laplace, ℓ2 for Gaussian) and the noise scale.
:func:`dpclaims.audit.replay` runs two neighbours on the same random stream and compares the
sensitivity the pair realises (the distance between the two noiseless values, in the declared
norm) with the declared one: "realised 2 > declared 1: the noise is calibrated for 1/2 of the
sensitivity".  Outside :func:`recording` the helpers record nothing.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .errors import check_positive, check_trials

__all__ = ["Release", "laplace", "gaussian", "recording"]

_RECORD: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "dpclaims_noise", default=None
)


@dataclass(frozen=True, eq=False)
class Release:
    """One noisy release: ``kind`` ("laplace" or "gaussian"), the ``norm`` its ``sensitivity``
    is declared in (1 or 2), the noise ``scale`` (b or σ) and the noiseless ``value`` ((k,) or
    (trials, k), as passed)."""

    kind: str
    norm: int
    sensitivity: float
    scale: float
    value: np.ndarray


@contextmanager
def recording() -> Iterator[list[Release]]:
    """Record every helper call made inside the block (in this thread or task) into the list
    it yields, in call order."""
    releases: list[Release] = []
    token = _RECORD.set(releases)
    try:
        yield releases
    finally:
        _RECORD.reset(token)


def _release(kind: str, norm: int, value, scale: float, sensitivity: float, trials) -> tuple:
    value = np.asarray(value, dtype=np.float64)
    scale = check_positive(scale, "sigma" if kind == "gaussian" else "scale")
    sensitivity = check_positive(sensitivity, "sensitivity")
    shape = value.shape if trials is None else (check_trials(trials), value.size)
    releases = _RECORD.get()
    if releases is not None:
        releases.append(Release(kind, norm, sensitivity, scale, value.copy()))
    return value if trials is None else value.reshape(-1), shape


def laplace(
    rng: np.random.Generator, value, *, scale: float, sensitivity: float, trials: int | None = None
) -> np.ndarray:
    """``value + Lap(scale)`` noise, declared for an ℓ1 ``sensitivity`` (ε = sensitivity/scale).

    ``value``: the noiseless release, ``(k,)`` (then ``trials`` rows ``(trials, k)`` are drawn)
    or already ``(trials, k)`` (``trials=None``: noise of ``value``'s shape).
    """
    value, shape = _release("laplace", 1, value, scale, sensitivity, trials)
    return value + rng.laplace(0.0, scale, shape)


def gaussian(
    rng: np.random.Generator, value, *, sigma: float, sensitivity: float, trials: int | None = None
) -> np.ndarray:
    """``value + N(0, sigma²)`` noise, declared for an ℓ2 ``sensitivity``; shapes as
    :func:`laplace`."""
    value, shape = _release("gaussian", 2, value, sigma, sensitivity, trials)
    return value + sigma * rng.standard_normal(shape)
