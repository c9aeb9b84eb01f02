"""Calling a mechanism: its signature read once (:func:`as_batched`), its outputs checked
(:func:`check_outputs`), one seed block or one chunk of blocks run (:func:`call_block`,
:func:`run_blocks`, :func:`reduce_blocks`), and the check that it draws from its ``rng``."""

from __future__ import annotations

import inspect
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import (
    DPClaimsError,
    InputError,
    MechanismError,
    NotReproducibleWarning,
    called_exit,
)
from .seeds import child_seed, root_seed

__all__ = [
    "DETERMINISM_PROBE",
    "as_batched",
    "check_outputs",
    "call_block",
    "run_blocks",
    "reduce_blocks",
    "joined",
    "first_block",
    "ignores_rng",
    "strict_default",
    "check_determinism",
]

DETERMINISM_PROBE = 32
"""Trials of the repeated first-block call that checks a mechanism draws its randomness from
``rng``."""


def _sample(value: Any) -> np.ndarray:
    """One output of a one-sample mechanism as an array (a number or a vector (k,))."""
    if isinstance(value, dict):
        raise MechanismError(
            f"mechanism returned a dict (keys {sorted(map(str, value))[:4]}); return the outputs "
            "as one vector of numbers, e.g. np.array([out['a'], out['b']]) for mechanism(data, "
            "rng) -> (k,)"
        )
    return np.asarray(value)


@dataclass(frozen=True)
class _Looped:
    """Adapter that turns ``f(data, rng) -> (k,)`` into a batched mechanism by looping."""

    func: Callable

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        rows = [_sample(self.func(data, rng)) for _ in range(trials)]
        if any(r.shape != rows[0].shape for r in rows):
            raise MechanismError(
                "mechanism returned outputs of different shapes on different calls"
            )
        if rows[0].ndim > 1:
            raise MechanismError(
                f"mechanism(data, rng) returned shape {rows[0].shape}; a one-sample mechanism "
                "returns one output: a number or a vector (k,) (flatten it, e.g. np.ravel(out))"
            )
        return np.stack(rows)


@dataclass(frozen=True)
class _TrialsByKeyword:
    """Adapter for a batched mechanism whose ``trials`` is not its third positional parameter."""

    func: Callable

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> Any:
        return self.func(data, rng, trials=trials)


def as_batched(mechanism: Callable) -> Callable:
    """``mechanism`` as ``f(data, rng, trials)``, recognised by its signature, never by position.

    A callable with a parameter named ``trials`` is batched (``trials`` is passed by
    name unless it is the third positional parameter); one without it that can be
    called as ``f(data, rng)`` is a one-sample mechanism (its other parameters keep
    their defaults) and is looped.  Anything else is an :class:`InputError`.
    """
    if not callable(mechanism):
        raise InputError(
            "mechanism must be callable as mechanism(data, rng, trials), got "
            f"{type(mechanism).__name__}"
        )
    if isinstance(mechanism, (_Looped, _TrialsByKeyword)):
        return mechanism
    try:
        signature = inspect.signature(mechanism)
    except (TypeError, ValueError):
        return mechanism
    params = signature.parameters
    name = getattr(mechanism, "__name__", type(mechanism).__name__)
    if "trials" in params:
        positional = [
            p.name
            for p in params.values()
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        if positional[2:3] == ["trials"]:
            return mechanism
        if params["trials"].kind == inspect.Parameter.POSITIONAL_ONLY:
            raise InputError(
                f"mechanism {name!r} has signature {signature}; its trials parameter must be the "
                "third one (data, rng, trials) or accept trials=..."
            )
        return _TrialsByKeyword(mechanism)
    try:
        signature.bind(None, None)
    except TypeError:
        raise InputError(
            f"mechanism {name!r} has signature {signature}; it must accept (data, rng, trials) or "
            "(data, rng): a batched mechanism names its batch size trials, mechanism(data, rng, "
            "trials) -> (trials, k); a one-sample mechanism is mechanism(data, rng) -> (k,)"
        ) from None
    return _Looped(mechanism)


def check_outputs(outputs: Any, trials: int, name: str = "mechanism") -> np.ndarray:
    """Return mechanism outputs as float64 of shape ``(trials, k)`` or raise
    :class:`MechanismError`."""
    if isinstance(outputs, dict):
        raise MechanismError(
            f"{name} returned a dict (keys {sorted(map(str, outputs))[:4]}); return one array of "
            "shape (trials, k), e.g. np.column_stack([out['a'], out['b']]), or (trials,) for one "
            "output per trial"
        )
    try:
        arr = np.asarray(outputs)
    except Exception as exc:  # ragged lists and the like
        raise MechanismError(f"{name} returned something that is not an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise MechanismError(
            f"{name} returned non-numeric outputs (dtype {arr.dtype}); return numbers, booleans "
            "or integers"
        )
    if arr.ndim == 0:
        raise MechanismError(
            f"{name} returned one number for trials={trials}; a batched mechanism(data, rng, "
            "trials) returns one output per trial, shape (trials,) or (trials, k) (e.g. "
            "rng.standard_normal(trials)); a mechanism returning one sample takes (data, rng) "
            "only"
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != trials or arr.shape[1] == 0:
        raise MechanismError(
            f"{name} returned shape {np.shape(outputs)} for trials={trials}; it must return "
            "(trials, k) or (trials,)"
        )
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise MechanismError(
            f"{name} returned NaN or infinite outputs; a mechanism's outputs must be finite"
        )
    return arr


def call_block(
    mechanism: Callable, data: Any, seed: np.random.SeedSequence, *, index: int, size: int
) -> np.ndarray:
    """Outputs ``(size, k)`` of ``mechanism`` on seed block ``index`` of ``size`` trials."""
    rng = np.random.default_rng(child_seed(seed, index))
    try:
        raw = mechanism(data, rng, size)
    except DPClaimsError:
        raise
    except SystemExit as exc:
        who, fix = "the mechanism", "a mechanism must return its outputs"
        raise MechanismError(called_exit(exc, who, fix)) from None
    except Exception as exc:
        if isinstance(exc, ValueError) and "read-only" in str(exc):
            raise MechanismError(
                f"the mechanism wrote into its dataset ({type(exc).__name__}: {exc}); datasets "
                "are read-only: copy first, e.g. x = data.x.copy() (or np.array(data)), and "
                "change the copy"
            ) from exc
        raise MechanismError(f"the mechanism raised {type(exc).__name__}: {exc}") from exc
    return check_outputs(raw, size)


def run_blocks(
    mechanism: Callable,
    data: Any,
    seed: np.random.SeedSequence,
    blocks: Sequence[tuple[int, int, int, int]],
) -> np.ndarray:
    """Outputs ``(sum of hi - lo, k)`` of ``mechanism`` on one chunk of seed blocks.

    Block ``(b, size, lo, hi)``: ``mechanism(data, rng_b, size)`` with ``rng_b`` seeded
    by ``child_seed(seed, b)``, rows ``[lo, hi)`` kept.
    """
    out = [
        call_block(mechanism, data, seed, index=index, size=size)[lo:hi]
        for index, size, lo, hi in blocks
    ]
    return joined(out)


def joined(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Outputs ``(n_i, k)`` of several calls stacked into ``(sum n_i, k)``; an error when their
    widths ``k`` differ."""
    widths = {p.shape[1] for p in parts}
    if len(widths) > 1:
        raise MechanismError(
            f"mechanism returned different output widths across calls: {sorted(widths)}"
        )
    return np.concatenate(parts)


def reduce_blocks(
    mechanism: Callable,
    data: Any,
    seed: np.random.SeedSequence,
    blocks: Sequence[tuple[int, int, int, int]],
    reducer: Callable,
) -> np.ndarray:
    """``sum over blocks of reducer(kept rows of the block)`` as int64 (blocks as
    :func:`run_blocks`): only one block of outputs is alive at a time.

    ``reducer(outputs (n, k)) -> integer array`` of a fixed shape (counts); integer
    sums are exact, so the total does not depend on how blocks are grouped.
    """
    total = None
    for index, size, lo, hi in blocks:
        counts = np.asarray(
            reducer(call_block(mechanism, data, seed, index=index, size=size)[lo:hi])
        )
        if counts.dtype.kind not in "biu":
            raise InputError(
                f"reducer returned dtype {counts.dtype}; it must return integer counts so chunk "
                "sums are exact"
            )
        if total is not None and counts.shape != total.shape:
            raise InputError(
                f"reducer returned shape {counts.shape} after {total.shape}; keep the result "
                "shape fixed"
            )
        total = counts.astype(np.int64) if total is None else total + counts
    return total


def first_block(
    mechanism: Callable, data: Any, seed: np.random.SeedSequence, trials: int = DETERMINISM_PROBE
) -> tuple[bool, np.ndarray, float]:
    """Run the first seed block twice on ``trials`` trials: ``(same outputs?, outputs (trials, k),
    CPU seconds of one call)``."""
    start = time.process_time()
    first = call_block(mechanism, data, seed, index=0, size=trials)
    seconds = time.process_time() - start
    second = call_block(mechanism, data, seed, index=0, size=trials)
    return first.shape == second.shape and bool(np.array_equal(first, second)), first, seconds


STRICT_WAY_OUT = (
    " (strict mode; to run it all the same, its results not reproducible: "
    "execution=Execution(strict=False) in audit, run_trials and reduce_trials, --no-strict in "
    "dpclaims audit, reproducible=False in assert_private and the dpclaims_audit fixture)"
)
"""The end of the strict-mode error: every way to run such a mechanism anyway, each where it
works."""


def ignores_rng(mechanism: Callable, strict: bool) -> str:
    """The message for a mechanism whose outputs differ for the same seed; raised as a
    :class:`MechanismError` when ``strict``, else issued as a
    :class:`~dpclaims.errors.NotReproducibleWarning` (a ``RuntimeWarning``) and returned."""
    inner = mechanism.func if isinstance(mechanism, _Looped) else mechanism
    name = getattr(inner, "__qualname__", type(inner).__qualname__)
    message = (
        f"mechanism {name!r} returned different outputs for the same seed: it draws randomness "
        "from somewhere other than its rng argument (np.random.*, random, a global generator, "
        "the clock). Draw all randomness from the rng argument (e.g. rng.standard_normal) so "
        "results are reproducible and chunks are independent"
    )
    if strict:
        raise MechanismError(message + STRICT_WAY_OUT)
    warnings.warn(message, NotReproducibleWarning, stacklevel=4)
    return message


def strict_default(strict: bool | None) -> bool:
    """``strict`` checked; None means on when the environment variable ``CI`` is ``true``
    (as CI services set it)."""
    if strict is None:
        return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
    if not isinstance(strict, (bool, np.bool_)):
        raise InputError(f"strict must be True, False or None (on under CI=true), got {strict!r}")
    return bool(strict)


def check_determinism(
    mechanism: Callable,
    data: Any,
    seed: int | np.random.SeedSequence = 0,
    trials: int = DETERMINISM_PROBE,
    *,
    strict: bool = False,
) -> bool:
    """Run the first seed block twice on ``trials`` trials; warn (raise :class:`MechanismError`
    when ``strict``) and return False if the outputs differ.

    A mechanism that draws randomness from anywhere but its ``rng`` argument
    (``np.random.*``, ``random``, a global generator, the clock) gives different
    numbers for the same seed: results are then not reproducible, and chunks run
    in different processes may share random streams.
    """
    batched = as_batched(mechanism)
    root = seed if isinstance(seed, np.random.SeedSequence) else root_seed(seed)
    same, _, _ = first_block(batched, data, root, trials)
    if not same:
        ignores_rng(mechanism, strict)
    return same
