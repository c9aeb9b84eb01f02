"""Privacy auditing with one training run (Steinke, Nasr, Jagielski 2023, arXiv:2305.08846).

``m`` canaries are each included independently with probability 1/2 in a single
run.  The auditor ranks canaries by a score and guesses "in" for the ``k_plus``
highest and "out" for the ``k_minus`` lowest (abstaining on the rest), making
``r = k_plus + k_minus`` guesses of which ``v`` are correct.  Under (ε, δ)-DP their
main theorem (Theorem 3.1; general form Corollary 5.4) bounds

    P[W >= v] <= f(v) + 2 m δ · max_{i=1..v} (f(v - i) - f(v)) / i,
    f(v) = P[Binomial(r, e^ε / (1 + e^ε)) >= v],

which is the p-value computed here exactly as in their Appendix D; the ε lower
bound is the largest ε whose p-value is below ``1 - confidence`` (bisection, as
in Appendix D, returning the conservative end).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import (
    InputError,
    MechanismError,
    check_confidence,
    check_count,
    check_delta,
    check_epsilon,
    check_finite_array,
)
from ..execution import child_seed

__all__ = ["OneRunResult", "one_run_p_value", "one_run_epsilon", "one_run_audit", "one_run"]

_BISECTION_STEPS = 50


@dataclass(frozen=True)
class OneRunResult:
    """Outcome of a one-run audit: ``correct`` of ``guesses`` guesses over ``canaries`` canaries."""

    epsilon_lower: float
    p_value: float
    verdict: str
    epsilon: float
    delta: float
    confidence: float
    canaries: int
    guesses: int
    correct: int
    k_plus: int
    k_minus: int
    seed: int

    def to_dict(self) -> dict:
        """JSON-serialisable record of the audit."""
        return asdict(self)


def _check_counts(m: Any, r: Any, v: Any) -> tuple[int, int, int]:
    m, r, v = (
        check_count(value, name, minimum=0) for name, value in (("m", m), ("r", r), ("v", v))
    )
    if not v <= r <= m:
        raise InputError(f"need correct v <= guesses r <= canaries m, got v={v}, r={r}, m={m}")
    return m, r, v


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P-value of ``v`` correct out of ``r`` guesses on ``m`` canaries under (ε, δ)-DP.

    Steinke, Nasr, Jagielski (2023), Theorem 3.1 / Corollary 5.4; Appendix D's
    ``p_value_DP_audit`` with the inner loop vectorised.  ``epsilon`` may be 0.
    """
    m, r, v = _check_counts(m, r, v)
    if not math.isfinite(epsilon) or epsilon < 0:
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    delta = check_delta(delta)
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0.0 or v == 0:
        return min(tail, 1.0)
    steps = np.arange(1, v + 1)
    window = stats.binom.sf(v - steps - 1, r, q) - tail
    alpha = float(np.max(window / steps))
    return min(tail + alpha * delta * 2 * m, 1.0)


def one_run_epsilon(m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """Largest ε (to bisection precision, rounded down) rejected at level ``1 - confidence``; 0 if
    none."""
    m, r, v = _check_counts(m, r, v)
    significance = 1.0 - check_confidence(confidence)
    if one_run_p_value(m, r, v, epsilon=0.0, delta=delta) >= significance:
        return 0.0
    low, high = 0.0, 1.0
    while one_run_p_value(m, r, v, epsilon=high, delta=delta) < significance:
        low, high = high, 2.0 * high
        if high > 1e3:
            return low
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if one_run_p_value(m, r, v, epsilon=mid, delta=delta) < significance:
            low = mid
        else:
            high = mid
    return low


def _guess_counts(m: int, k_plus: Any, k_minus: Any) -> tuple[int, int]:
    default = max(1, m // 10)
    k_plus = default if k_plus is None else k_plus
    k_minus = default if k_minus is None else k_minus
    for name, value in (("k_plus", k_plus), ("k_minus", k_minus)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(f"{name} must be a non-negative whole number, got {value!r}")
    if k_plus + k_minus < 1 or k_plus + k_minus > m:
        raise InputError(
            f"need 1 <= k_plus + k_minus <= number of canaries ({m}), got k_plus={k_plus}, "
            f"k_minus={k_minus}"
        )
    return int(k_plus), int(k_minus)


def one_run_audit(
    scores: Any,
    included: Any,
    epsilon: float,
    *,
    delta: float = 0.0,
    k_plus: int | None = None,
    k_minus: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> OneRunResult:
    """Audit one run from per-canary scores.

    Parameters
    ----------
    scores : (m,) finite; higher means "more likely included"
    included : (m,) bool, the true inclusion of each canary (each drawn with prob. 1/2)
    epsilon, delta : the claim under test
    k_plus, k_minus : guesses "in" for the ``k_plus`` highest and "out" for the
        ``k_minus`` lowest scores; fix them before seeing the scores (default ``m // 10`` each)
    confidence : level of the ε lower bound
    seed : ties in ``scores`` are broken at random with ``child_seed(seed, 2)``
    """
    scores = check_finite_array(scores, "scores", ndim=1)
    included_arr = np.asarray(included)
    if (
        included_arr.shape != scores.shape
        or included_arr.dtype.kind not in "biu"
        or not np.all(np.isin(included_arr, (0, 1)))
    ):
        raise InputError(
            f"included must be a boolean array of shape {scores.shape} (one flag per canary), got "
            f"{included_arr.shape}"
        )
    included_arr = included_arr.astype(bool)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    m = len(scores)
    k_plus, k_minus = _guess_counts(m, k_plus, k_minus)
    ties = np.random.default_rng(child_seed(seed, 2)).random(m)
    order = np.lexsort((ties, scores))
    correct = int(
        np.count_nonzero(included_arr[order[m - k_plus :]])
        + np.count_nonzero(~included_arr[order[:k_minus]])
    )
    r = k_plus + k_minus
    p_value = one_run_p_value(m, r, correct, epsilon=epsilon, delta=delta)
    eps_lower = one_run_epsilon(m, r, correct, delta=delta, confidence=confidence)
    return OneRunResult(
        epsilon_lower=eps_lower,
        p_value=p_value,
        verdict="violation" if eps_lower > epsilon else "consistent",
        epsilon=epsilon,
        delta=delta,
        confidence=confidence,
        canaries=m,
        guesses=r,
        correct=correct,
        k_plus=k_plus,
        k_minus=k_minus,
        seed=int(seed),
    )


def one_run(
    mechanism: Callable,
    canaries: int,
    epsilon: float,
    *,
    delta: float = 0.0,
    k_plus: int | None = None,
    k_minus: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    score: Callable | None = None,
) -> OneRunResult:
    """Draw canary inclusion, run ``mechanism(included (m,) bool, rng)`` once, audit it.

    Inclusion uses ``child_seed(seed, 0)`` (each canary in with probability 1/2), the
    mechanism ``child_seed(seed, 1)``.  The mechanism returns per-canary scores ``(m,)``,
    or any output that ``score(output) -> (m,)`` turns into them.
    """
    canaries = int(_check_counts(canaries, 0, 0)[0])
    if canaries < 1:
        raise InputError(f"canaries must be >= 1, got {canaries}")
    if not callable(mechanism):
        raise InputError(
            "mechanism must be callable as mechanism(included, rng), got "
            f"{type(mechanism).__name__}"
        )
    included = np.random.default_rng(child_seed(seed, 0)).random(canaries) < 0.5
    try:
        output = mechanism(included.copy(), np.random.default_rng(child_seed(seed, 1)))
        raw = np.asarray(score(output) if score is not None else output)
    except (InputError, MechanismError):
        raise
    except Exception as exc:
        raise MechanismError(
            f"the one-run mechanism or score raised {type(exc).__name__}: {exc}"
        ) from exc
    if raw.shape != (canaries,) or raw.dtype.kind not in "biuf" or not np.all(np.isfinite(raw)):
        raise MechanismError(
            "the one-run mechanism (or score) must return finite per-canary scores of shape "
            f"({canaries},), "
            f"got shape {raw.shape} and dtype {raw.dtype}"
        )
    return one_run_audit(
        raw.astype(np.float64),
        included,
        epsilon,
        delta=delta,
        k_plus=k_plus,
        k_minus=k_minus,
        confidence=confidence,
        seed=seed,
    )
