"""Sampler and configuration checks for DP-SGD-like mechanisms: one-line findings with numbers.

Privacy amplification by subsampling holds for the sampler the accountant assumed (Poisson at
rate q: each unit independently, every step) and for a normaliser that does not look at the
private data.  These checks test the sampler a mechanism really uses, without statistics on its
outputs:

- :func:`inclusion_check` — each unit's realised inclusion frequency against the claimed rate
  (two-sided binomial tests, one per unit and one overall, Bonferroni-corrected);
- :func:`independence_check` — the batch-size distribution against Binomial(n, q) (a
  fixed-size or shuffled batch has too little variance) and the pairwise co-inclusion rate
  against q²;
- :func:`normaliser_check` — a released denominator (expected batch size, a mean's n) on two
  neighbouring datasets of different size: it must not change.

A sampler is ``sampler(data, rng, draws) -> bool (draws, n)``: which of the ``n`` units each
draw (step) uses.  A failed check is a configuration bug found with certainty up to the stated
p-value; a passed one says nothing about the rest of the mechanism.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError, check_confidence, check_trials

__all__ = [
    "Finding",
    "inclusion_check",
    "independence_check",
    "normaliser_check",
    "check_sampler",
]

DRAWS = 4000
"""Sampler draws (steps) per check."""


@dataclass(frozen=True)
class Finding:
    """One check's answer: ``passed``, a one-line ``line`` with the numbers, and ``numbers``."""

    check: str
    passed: bool
    line: str
    numbers: dict = field(default_factory=dict)

    def summary(self) -> str:
        return f"{'ok  ' if self.passed else 'FAIL'} {self.check}: {self.line}"

    def to_dict(self) -> dict:
        return {"check": self.check, "passed": self.passed, "line": self.line, **self.numbers}


def _masks(sampler: Callable, data: Any, draws: int, seed: int) -> np.ndarray:
    masks = np.asarray(sampler(data, np.random.default_rng(seed), draws))
    if masks.ndim != 2 or masks.shape[0] != draws:
        raise InputError(
            f"a sampler must return a bool array (draws, n) = ({draws}, n), got shape {masks.shape}"
        )
    return masks.astype(bool)


def _check_rate(rate: Any) -> float:
    rate = float(rate)
    if not 0.0 < rate <= 1.0:
        raise InputError(f"rate must be the claimed sampling rate in (0, 1], got {rate!r}")
    return rate


def _two_sided(k: np.ndarray, n: int, p: float) -> np.ndarray:
    """Two-sided binomial p-values (twice the smaller tail, at most 1)."""
    return np.minimum(1.0, 2.0 * np.minimum(stats.binom.cdf(k, n, p), stats.binom.sf(k - 1, n, p)))


def inclusion_check(
    sampler: Callable,
    data: Any,
    *,
    rate: float,
    draws: int = DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
) -> Finding:
    """Each unit's inclusion frequency over ``draws`` draws against the claimed ``rate``.

    n + 1 two-sided binomial tests (each unit, and all inclusions together), Bonferroni at
    level ``1 - confidence``; the line names the unit farthest from the claim.
    """
    rate = _check_rate(rate)
    draws = check_trials(draws, "draws")
    alpha = 1.0 - check_confidence(confidence)
    masks = _masks(sampler, data, draws, seed)
    units = masks.shape[1]
    counts = masks.sum(axis=0)
    p_unit = _two_sided(counts, draws, rate)
    total = int(counts.sum())
    p_all = float(_two_sided(np.array([total]), draws * units, rate)[0])
    level = alpha / (units + 1)
    worst = int(np.argmin(p_unit))
    passed = bool(p_unit.min() > level and p_all > level)
    high = int(np.sum((p_unit <= level) & (counts > draws * rate)))
    line = (
        f"unit {worst} included {counts[worst]}/{draws} ({counts[worst] / draws:.2%}) vs "
        f"claimed q = {rate:g} (p = {p_unit[worst]:.2g}); overall {total / (draws * units):.2%} "
        f"(p = {p_all:.2g}); {high} of {units} units above q at level {alpha:g}/{units + 1} "
        "(Bonferroni)"
    )
    return Finding(
        "inclusion",
        passed,
        line,
        {
            "rate": rate,
            "draws": draws,
            "worst_unit": worst,
            "worst_frequency": float(counts[worst] / draws),
            "worst_p": float(p_unit[worst]),
            "overall_frequency": total / (draws * units),
            "overall_p": p_all,
            "units_above": high,
        },
    )


def independence_check(
    sampler: Callable,
    data: Any,
    *,
    rate: float,
    draws: int = DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
) -> Finding:
    """Independence of inclusions: the batch sizes' variance against Binomial(n, q)'s
    ``n q (1 − q)`` (two-sided chi-square test on the sample variance) and the pairwise
    co-inclusion rate ``Σ B(B−1) / (draws n (n−1))`` against ``q²`` (its z-score, reported);
    the check fails when the variance test rejects at level ``1 - confidence``."""
    rate = _check_rate(rate)
    draws = check_trials(draws, "draws", minimum=2)
    alpha = 1.0 - check_confidence(confidence)
    masks = _masks(sampler, data, draws, seed)
    units = masks.shape[1]
    sizes = masks.sum(axis=1).astype(float)
    expected_var = units * rate * (1.0 - rate)
    var = float(sizes.var(ddof=1))
    if expected_var == 0.0:  # q = 1: every unit, every draw
        p_var = 1.0 if var == 0.0 else 0.0
    else:
        statistic = (draws - 1) * var / expected_var
        p_var = float(
            min(
                1.0,
                2 * min(stats.chi2.cdf(statistic, draws - 1), stats.chi2.sf(statistic, draws - 1)),
            )
        )
    pairs = sizes * (sizes - 1.0) / (units * (units - 1.0)) if units > 1 else np.zeros(draws)
    co = float(pairs.mean())
    spread = float(pairs.std(ddof=1)) / np.sqrt(draws)
    co_z = float((co - rate**2) / spread) if spread > 0 else float(np.sign(co - rate**2) * np.inf)
    passed = p_var > alpha
    line = (
        f"batch size mean {sizes.mean():.2f}, variance {var:.3g} vs Binomial({units}, {rate:g})'s "
        f"{expected_var:.3g} (p = {p_var:.2g}); co-inclusion {co:.3g} vs q² = {rate**2:.3g} "
        f"(z = {co_z:.1f})"
    )
    return Finding(
        "independence",
        passed,
        line,
        {
            "batch_mean": float(sizes.mean()),
            "batch_variance": var,
            "binomial_variance": expected_var,
            "variance_p": p_var,
            "co_inclusion": co,
            "co_inclusion_z": co_z,
        },
    )


def normaliser_check(normaliser: Callable, d0: Any, d1: Any, *, rtol: float = 1e-12) -> Finding:
    """``normaliser(data) -> float`` (the expected batch size or denominator a release divides
    by) on neighbours of different size: a value that changes depends on the private size."""
    a, b = float(normaliser(d0)), float(normaliser(d1))
    n0, n1 = (getattr(d, "n", None) for d in (d0, d1))
    passed = abs(a - b) <= rtol * max(abs(a), abs(b))
    sizes = f" ({n0} vs {n1} records)" if n0 is not None else ""
    line = f"normaliser {a:g} on d0 vs {b:g} on d1{sizes}: " + (
        "does not depend on the private dataset size" if passed else "depends on the data"
    )
    return Finding("normaliser", passed, line, {"normaliser_d0": a, "normaliser_d1": b})


def check_sampler(
    sampler: Callable,
    data: Any,
    *,
    rate: float,
    normaliser: Callable | None = None,
    draws: int = DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Finding]:
    """The inclusion and independence checks, and the normaliser check on ``data`` against
    ``data`` without its first unit when a ``normaliser`` is given."""
    options = {"rate": rate, "draws": draws, "seed": seed, "confidence": confidence}
    findings = [
        inclusion_check(sampler, data, **options),
        independence_check(sampler, data, **options),
    ]
    if normaliser is not None:
        from ..data import UserDataset, remove_user

        if not isinstance(data, UserDataset):
            raise InputError("the normaliser check needs a UserDataset (it removes one unit)")
        findings.append(normaliser_check(normaliser, data, remove_user(data, 0)))
    return findings
