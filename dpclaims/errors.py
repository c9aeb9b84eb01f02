"""Project exceptions and the argument checks every public function shares.

Every check raises :class:`InputError` (a ``ValueError``) whose message names
the argument, what was given, and how to fix it.  The CLI turns these into one
line on stderr and exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "DPClaimsError",
    "InputError",
    "MechanismError",
    "NotNeighboursError",
    "NotReproducibleWarning",
    "called_exit",
    "check_epsilon",
    "check_delta",
    "check_trials",
    "check_count",
    "check_positive",
    "check_confidence",
    "check_choice",
    "check_finite_array",
]


class DPClaimsError(Exception):
    """Base class of every error dpclaims raises on purpose."""


class InputError(DPClaimsError, ValueError):
    """A public function was given an invalid argument."""


class MechanismError(DPClaimsError, ValueError):
    """A mechanism under audit returned outputs that cannot be audited."""


class NotNeighboursError(InputError):
    """Two datasets are not neighbours under the claimed unit and relation."""


class NotReproducibleWarning(RuntimeWarning):
    """A mechanism draws randomness from outside its ``rng``: the same seed gives other trials."""


def called_exit(exc: SystemExit, who: str, fix: str) -> str:
    """The message for user code (``who``: "the mechanism") that called ``sys.exit``.

    User code runs inside dpclaims, so its ``sys.exit(0)`` must not end the command with that
    code and no output (a CI gate would pass silently); ``fix`` says what it should do instead.
    """
    code = "" if exc.code is None else repr(exc.code)
    return f"{who} called sys.exit({code}); {fix}"


def _is_real_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking 0 < ε < ∞."""
    if not _is_real_number(epsilon) or not math.isfinite(epsilon) or epsilon <= 0:
        raise InputError(
            f"{name} must be a finite number > 0, got {epsilon!r}; pass e.g. {name}=1.0"
        )
    return float(epsilon)


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking 0 ≤ δ < 1."""
    if not _is_real_number(delta) or not (0.0 <= delta < 1.0):
        raise InputError(
            f"{name} must be a number in [0, 1), got {delta!r}; "
            f"pass e.g. {name}=1e-5 (or 0 for pure DP)"
        )
    return float(delta)


def check_count(value: Any, name: str, *, minimum: int = 1, example: Any = None) -> int:
    """Return ``value`` as an int after checking it is a whole number >= ``minimum``.

    ``example`` is the value the message suggests (default ``max(minimum, 10)``); a
    command-line ``name`` such as ``"--replicates"`` is suggested as a flag.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        example = max(minimum, 10) if example is None else example
        fix = f"{name} {example}" if name.startswith("--") else f"{name}={example}"
        raise InputError(
            f"{name} must be a whole number >= {minimum}, got {value!r}; pass e.g. {fix}"
        )
    return int(value)


def check_trials(trials: Any, name: str = "trials", minimum: int = 1, example: Any = None) -> int:
    """:func:`check_count` for a trial count (the message suggests 100_000 trials)."""
    if example is None and name == "trials":
        example = "100_000"
    return check_count(trials, name, minimum=minimum, example=example)


def check_positive(
    value: Any, name: str, *, allow_zero: bool = False, allow_inf: bool = False
) -> float:
    """Return ``value`` as a float after checking it is > 0 (>= 0 with ``allow_zero``).

    Infinity is refused unless ``allow_inf`` (e.g. an unconstrained radius).
    """
    ok = _is_real_number(value) and not math.isnan(value)
    ok = ok and (value >= 0 if allow_zero else value > 0) and (allow_inf or math.isfinite(value))
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        kind = "a number" if allow_inf else "a finite number"
        raise InputError(f"{name} must be {kind} {bound}, got {value!r}; pass e.g. {name}=1.0")
    return float(value)


def check_confidence(confidence: Any, name: str = "confidence") -> float:
    """Return ``confidence`` as a float after checking 0 < c < 1."""
    if not _is_real_number(confidence) or not (0.0 < confidence < 1.0):
        raise InputError(
            f"{name} must be a number in (0, 1), got {confidence!r}; pass e.g. {name}=0.95"
        )
    return float(confidence)


def check_choice(value: Any, choices: Iterable[str], name: str) -> str:
    """Return the choice equal to ``value`` after checking there is one: ``choices`` are
    strings, or the members of a ``StrEnum`` (which equal their strings and are listed as them),
    so a string naming a member comes back as the member."""
    choices = tuple(choices)
    if value not in choices:
        options = ", ".join(repr(str(c)) if isinstance(c, str) else repr(c) for c in choices)
        raise InputError(f"{name} must be one of {options}, got {value!r}")
    return choices[choices.index(value)]


def check_finite_array(array: Any, name: str, ndim: int | None = None) -> np.ndarray:
    """Return ``array`` as a float64 ndarray after checking its rank and that it is finite."""
    try:
        out = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a numeric array, got {type(array).__name__}: {exc}"
        ) from None
    if ndim is not None and out.ndim != ndim:
        raise InputError(f"{name} must have {ndim} dimensions, got shape {out.shape}")
    if out.size and not np.all(np.isfinite(out)):
        bad = int(np.size(out) - np.count_nonzero(np.isfinite(out)))
        raise InputError(
            f"{name} contains {bad} NaN or infinite value(s); remove or impute them before use"
        )
    return out
