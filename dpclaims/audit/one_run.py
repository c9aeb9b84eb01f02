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
in Appendix D, returning the conservative end).  It assumes nothing about the mechanism
(``assumption="none"``).

The second bound (``assumption="gaussian-dp"``) is the f-DP one-run bound of Mahloujifar,
Melis and Chaudhuri (2024, "Auditing f-Differential Privacy in One Run", arXiv:2410.22235),
taken with the Gaussian trade-off family ``G_μ`` (Dong, Roth, Su): their recursion
(:func:`one_run_gdp_rejects`, the ``audit_rh_with_cap`` algorithm) decides whether ``v``
correct of ``r`` guesses has probability below ``1 - confidence`` for *every* μ-GDP
mechanism; the bound is the largest such μ (bisection), turned into ε at δ with
:func:`~dpclaims.gdp.gdp_epsilon`.  Rejecting μ-GDP says ε ≥ that value only for a
mechanism whose privacy profile is Gaussian, which is the assumption the result states.
Without fixed ``k_plus``/``k_minus`` it guesses symmetrically (``k/2`` highest in, ``k/2``
lowest out) at each count of :data:`GUESS_FRACTIONS` and pays for the best with a union
bound.

Both bounds allow any dependence between canaries, and their guesses use only the two ends
of the ranking: on Gaussian scores the Gaussian-DP bound cannot exceed about 0.75 of the true
ε even at 1e5 canaries (``benchmarks/bench_one_run.py`` computes this ceiling).  The third
bound (``assumption="independent-gaussian-dp"``, :mod:`.one_run_rank`) uses the full ranking
and assumes more: canaries that do not interact, each a μ-GDP channel.

``family="gaussian"`` (:mod:`.one_run_family`, Xiang et al. 2025) replaces the decision by a
bound that assumes the mechanism is μ-GDP for some μ with independent canaries and certifies
the smallest μ consistent with the guesses: far tighter, but valid only under that assumption,
so its verdict is worded "assuming μ-GDP".  ``family=SubsampledGaussian(sampling_rate=q)``
assumes the Poisson-subsampled Gaussian of rate q instead, and guesses the
canaries with the largest |privacy loss| of the claimed member (its scores must be on the
family's scale).  The default (``family=None``) assumes nothing.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from dpclaims.gdp import gdp_epsilon, gdp_mu_of

from ..errors import (
    InputError,
    MechanismError,
    check_choice,
    check_confidence,
    check_count,
    check_delta,
    check_finite_array,
)
from ..execution import child_seed
from ..privacy import PrivacyClaim, claim_at_door
from ..vocabulary import Verdict
from .one_run_family import (
    SubsampledGaussian,
    family_at_door,
    family_epsilon,
    family_guesses,
    family_p_value,
    family_reach,
    subsampled_gaussian_mu,
)
from .one_run_rank import mann_whitney_pairs, rank_gdp_mu, rank_gdp_p_value
from .one_run_score import misfit_text, refutes, score_test
from .reach import MAX_FACTOR, REACH_LIMIT, REACH_POWER, Reach

__all__ = [
    "ASSUMPTIONS",
    "GUESS_FRACTIONS",
    "OneRunResult",
    "OneRunAudit",
    "one_run_p_value",
    "one_run_epsilon",
    "one_run_gdp_rejects",
    "one_run_gdp_mu",
    "one_run_gdp_epsilon",
    "one_run_audit",
    "one_run_reach",
    "audit_one_run_scores",
    "one_run",
]

_BISECTION_STEPS = 50

ASSUMPTIONS = ("none", "gaussian-dp", "independent-gaussian-dp")
"""What a one-run bound assumes of the mechanism: nothing (Steinke et al.), a Gaussian-DP
privacy profile (the f-DP bound of Mahloujifar et al. with the ``G_μ`` family), or independent
canaries each seen through the same μ-GDP channel (the full-ranking bound of
:mod:`.one_run_rank`)."""

_BOUND_NAMES = {
    "none": "Steinke et al. 2023",
    "gaussian-dp": "Mahloujifar et al. 2024",
    "independent-gaussian-dp": "full-ranking Mann-Whitney bound",
    "gaussian-family": "Xiang et al. 2025 family test",
    "subsampled-gaussian-family": "Xiang et al. 2025 family test",
}
_ASSUMES = {
    "none": "no assumption",
    "gaussian-dp": "assumes a Gaussian-DP mechanism",
    "independent-gaussian-dp": "assumes independent canaries, each a Gaussian-DP channel",
    "gaussian-family": "valid only if the mechanism is μ-GDP (the Gaussian family) with "
    "independent canaries",
    "subsampled-gaussian-family": "valid only if the mechanism is the subsampled Gaussian with "
    "rate q = {q:g}, its scores on the family's scale (N(0, 1) when excluded), with independent "
    "canaries",
}

GUESS_FRACTIONS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)
"""Shares of the canaries guessed by the Gaussian-DP bound when ``k_plus``/``k_minus`` are not
fixed: each share is tried (half guessed in from the top, half out from the bottom; counts
below 2 skipped) and the best is paid for with a union bound over those tried."""

_MAX_MU = 64.0
"""Largest μ the Gaussian-DP bisection considers (μ = 64 is ε in the thousands at δ = 1e-5)."""


@dataclass(frozen=True)
class OneRunResult:
    """Outcome of a one-run audit: ``correct`` of ``guesses`` guesses over ``canaries`` canaries.

    For the full-ranking bound (``assumption="independent-gaussian-dp"``) the guesses are the
    ``n_in · n_out`` (in, out) pairs and ``correct`` those ranked in above out (Mann-Whitney
    ``U``; ``k_plus``, ``k_minus`` are 0).  Under ``family="gaussian"`` (``assumption``
    ``"gaussian-family"``) the bound and the verdict hold only if the mechanism is μ-GDP:
    :meth:`line` says so ("violation assuming μ-GDP"); under a
    :class:`~.one_run_family.SubsampledGaussian` family (``family="subsampled-gaussian"``,
    ``"subsampled-gaussian-family"``) only if it is the subsampled Gaussian of rate
    ``sampling_rate``, and ``k_plus``/``k_minus`` count the guesses "in" and "out" that its
    privacy loss chose; with none fixed, the score test's ``loss_difference`` and ``fit_p_value``.

    ``verdict``: as a multi-run audit's, ``violation`` when the bound exceeds the claim,
    ``inconclusive`` when it is 0 (the guesses showed nothing) or when a family bound's
    guesses reject its whole family (:attr:`family_refuted`), else ``consistent`` when the
    ``reach`` (:func:`one_run_reach`, a multiple of the claim) is within
    :data:`~dpclaims.audit.reach.REACH_LIMIT` and ``consistent_weak`` when it is not (the
    assumption-free bound and the family tests have a reach; the Gaussian-DP bounds none).
    """

    epsilon_lower: float
    p_value: float
    verdict: Verdict
    epsilon: float
    delta: float
    confidence: float
    canaries: int
    guesses: int
    correct: int
    k_plus: int
    k_minus: int
    seed: int
    assumption: str = "none"
    mu_lower: float | None = None
    grid: int = 1
    reach: Reach | None = None
    family: str | None = None
    sampling_rate: float | None = None
    loss_difference: float | None = None
    fit_p_value: float | None = None

    def to_dict(self) -> dict:
        """JSON-serialisable record of the audit (``epsilon_lower`` None when infinite; the
        reach as ``reach_factor``, ``reach_epsilon``, ``reach_model``)."""
        out = asdict(self)
        if not math.isfinite(out["epsilon_lower"]):
            out["epsilon_lower"] = None
        reach = out.pop("reach")
        found = self.reach.to_dict() if reach is not None else {}
        for key in ("factor", "epsilon", "model"):
            out[f"reach_{key}"] = found.get(key)
        return out

    @property
    def bound_name(self) -> str:
        """Whose bound: ``"Steinke et al. 2023"``, ``"Mahloujifar et al. 2024"``,
        ``"full-ranking Mann-Whitney bound"``, ``"Xiang et al. 2025 family test"`` or
        ``"family score test"``."""
        if self.loss_difference is not None:
            return "family score test"
        return _BOUND_NAMES[self.assumption]

    def line(self) -> str:
        """One line for people: the bound, its assumption, the guesses and the verdict."""
        mu = "" if self.mu_lower is None else f", μ ≥ {self.mu_lower:.3f}"
        if self.assumption == "independent-gaussian-dp":
            auc = self.correct / self.guesses if self.guesses else 0.0
            evidence = f"AUC {auc:.4f} over {self.guesses:,} (in, out) pairs"
        elif self.loss_difference is not None:
            evidence = f"mean privacy loss {self.loss_difference:.4f} higher on the included "
            evidence += f"canaries than on the excluded ones, over {self.canaries:,} scores"
        else:
            union = f", best of {self.grid} guess counts" if self.grid > 1 else ""
            evidence = f"{self.correct:,} of {self.guesses:,} guesses correct{union}"
        reach = "" if self.reach is None else f", reach {self.reach.factor:.3g}×"
        if self.family_refuted:
            evidence += misfit_text(self.fit_p_value)
        assumes = _ASSUMES[self.assumption].format(q=self.sampling_rate)
        return (
            f"ε ≥ {self.epsilon_lower:.4f}{mu} ({self.bound_name}; "
            f"{assumes}): {evidence}; {self.verdict_text}{reach}"
        )

    @property
    def family_refuted(self) -> bool:
        """Whether the guesses reject the whole family searched (μ up to
        :data:`~.one_run_family.FAMILY_MU_MAX`) or the scores fail its fit check
        (:func:`~.one_run_score.family_fit`): the assumption, not the claim, is then in doubt,
        and the verdict is ``inconclusive``."""
        return self.family is not None and refutes(self.mu_lower, self.fit_p_value)

    @property
    def verdict_text(self) -> str:
        """The verdict, conditional on the family when one is assumed ("violation assuming
        μ-GDP", "violation assuming the subsampled Gaussian with q = 0.01")."""
        if self.family is None:
            return str(self.verdict)
        if self.sampling_rate is None:
            return f"{self.verdict} assuming μ-GDP"
        return f"{self.verdict} assuming the subsampled Gaussian with q = {self.sampling_rate:g}"


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


def one_run_gdp_rejects(m: int, r: int, v: int, mu: float, significance: float) -> bool:
    """Whether ``v`` or more correct of ``r`` guesses on ``m`` canaries has probability below
    ``significance`` for every μ-GDP mechanism.

    Mahloujifar, Melis, Chaudhuri (2024), the recursion ``audit_rh_with_cap`` (their
    Theorem 9 for the trade-off function ``G_μ``): with ``τ = significance``, start from
    ``r_v = τ v / m``, ``h_v = τ (r - v) / m`` and for ``i = v - 1, ..., 0`` set
    ``h_i = max(h_{i+1}, f̄⁻¹(r_{i+1}))``, ``r_i = min(1, r_{i+1} + i / (r - i) · (h_i - h_{i+1}))``
    with ``f̄⁻¹(x) = Φ(Φ⁻¹(x) - μ)`` the inverse of ``x ↦ 1 - G_μ(x)``; τ is impossible (the
    tail is smaller) when ``r_0 + h_0 > r / m``.  Guesses abstain on the other ``m - r``
    canaries.
    """
    rate, held = significance * v / m, significance * (r - v) / m
    for i in range(v - 1, -1, -1):
        lifted = max(held, float(special.ndtr(special.ndtri(rate) - mu)))
        if lifted == held:  # neither changes again
            break
        rate, held = min(rate + i / (r - i) * (lifted - held), 1.0), lifted
    return rate + held > r / m


def one_run_gdp_mu(m: int, r: int, v: int, confidence: float = 0.95, *, tests: int = 1) -> float:
    """Largest μ (to bisection precision, rounded down) such that μ-GDP is rejected by ``v``
    correct of ``r`` guesses at level ``(1 - confidence) / tests``; 0 if none."""
    m, r, v = _check_counts(m, r, v)
    significance = (1.0 - check_confidence(confidence)) / check_count(tests, "tests")
    if r == 0 or not one_run_gdp_rejects(m, r, v, 0.0, significance):
        return 0.0
    low, high = 0.0, 1.0
    while one_run_gdp_rejects(m, r, v, high, significance):
        low, high = high, 2.0 * high
        if high > _MAX_MU:
            return low
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if one_run_gdp_rejects(m, r, v, mid, significance):
            low = mid
        else:
            high = mid
    return low


def one_run_gdp_epsilon(
    m: int, r: int, v: int, delta: float, confidence: float = 0.95, *, tests: int = 1
) -> float:
    """The ε at ``delta`` of the μ of :func:`one_run_gdp_mu`: a lower bound on ε *if* the
    mechanism is Gaussian-DP (Dong, Roth, Su, Corollary 2.13)."""
    return gdp_epsilon(one_run_gdp_mu(m, r, v, confidence, tests=tests), _gdp_delta(delta))


def _gdp_delta(delta: Any) -> float:
    delta = check_delta(delta)
    if delta == 0.0:
        raise InputError(
            "the Gaussian-DP one-run bound needs delta > 0 (a Gaussian-DP mechanism has no "
            "finite pure ε); pass e.g. delta=1e-5"
        )
    return delta


def _gdp_p_value(m: int, r: int, v: int, mu: float, tests: int) -> float:
    """Smallest level at which μ-GDP is rejected (bisection, rounded up), times ``tests``."""
    if not one_run_gdp_rejects(m, r, v, mu, 1.0):
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if one_run_gdp_rejects(m, r, v, mu, mid):
            high = mid
        else:
            low = mid
    return min(1.0, high * tests)


def _guess_grid(m: int) -> list[tuple[int, int]]:
    """``(k_plus, k_minus)`` for each share of :data:`GUESS_FRACTIONS` with at least 2 guesses
    (always at least one entry: 1 and 1)."""
    halves = sorted({int(f * m) // 2 for f in GUESS_FRACTIONS if int(f * m) // 2 >= 1})
    return [(k, k) for k in halves] or [(1, 1) if m >= 2 else (1, 0)]


def _guess_counts(m: int, k_plus: Any, k_minus: Any) -> tuple[int, int]:
    default = max(1, m // 10)
    given = [name for name, v in (("k_plus", k_plus), ("k_minus", k_minus)) if v is not None]
    k_plus = default if k_plus is None else k_plus
    k_minus = default if k_minus is None else k_minus
    for name, value in (("k_plus", k_plus), ("k_minus", k_minus)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(f"{name} must be a non-negative whole number, got {value!r}")
    if k_plus + k_minus < 1 or k_plus + k_minus > m:
        if len(given) < 2:  # a default is at fault: say so, never as if the caller had set it
            defaults = " and ".join(n for n in ("k_plus", "k_minus") if n not in given)
            raise InputError(
                f"{m} canar{'y is' if m == 1 else 'ies are'} too few for the guesses "
                f"k_plus={k_plus}, k_minus={k_minus} ({defaults} by default max(1, m // 10)); "
                f"k_plus + k_minus may not exceed the canaries: audit more canaries or set "
                f"{defaults}"
            )
        raise InputError(
            f"need 1 <= k_plus + k_minus <= number of canaries ({m}), got k_plus={k_plus}, "
            f"k_minus={k_minus}"
        )
    return int(k_plus), int(k_minus)


def _checked_scores(scores: Any, included: Any) -> tuple[np.ndarray, np.ndarray]:
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
    return scores, included_arr.astype(bool)


def _correct(order: np.ndarray, included: np.ndarray, k_plus: int, k_minus: int) -> int:
    """Correct guesses: ``in`` for the ``k_plus`` last of ``order``, ``out`` for its first
    ``k_minus``."""
    m = len(order)
    return int(
        np.count_nonzero(included[order[m - k_plus :]])
        + np.count_nonzero(~included[order[:k_minus]])
    )


def one_run_audit(
    scores: Any,
    included: Any,
    claim: PrivacyClaim | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    k_plus: int | None = None,
    k_minus: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    assumption: str = "none",
    family: str | SubsampledGaussian | None = None,
) -> OneRunResult:
    """Audit one run from per-canary scores.

    Parameters
    ----------
    scores : (m,) finite; higher means "more likely included"
    included : (m,) bool, the true inclusion of each canary (each drawn with prob. 1/2)
    claim : the :class:`~dpclaims.privacy.PrivacyClaim` under test (its ε and δ; a canary is
        one unit added or removed)
    epsilon, delta : the claim's ε and δ instead of ``claim`` (a convenience that builds it)
    k_plus, k_minus : guesses "in" for the ``k_plus`` highest and "out" for the
        ``k_minus`` lowest scores; fix them before seeing the scores (default ``m // 10`` each
        for ``assumption="none"``; for ``"gaussian-dp"`` the best of :data:`GUESS_FRACTIONS`
        under a union bound; under a ``family``, none: every score is read, see ``family``)
    confidence : level of the ε lower bound
    seed : ties in ``scores`` are broken at random with ``child_seed(seed, 2)``
    assumption : one of :data:`ASSUMPTIONS`: ``"none"`` (Steinke et al.), ``"gaussian-dp"``
        (Mahloujifar et al. with the Gaussian family) or ``"independent-gaussian-dp"`` (the
        full-ranking bound of :mod:`.one_run_rank`, which ignores ``k_plus``/``k_minus``); the
        last two need ``delta > 0``
    family : None (default: no family assumed), ``"gaussian"`` or a
        :class:`~.one_run_family.SubsampledGaussian`: ``"gaussian"``
        certifies the smallest μ consistent with the ``k_plus``/``k_minus`` guesses of a μ-GDP
        mechanism with independent canaries (:mod:`.one_run_family`, Xiang et al. 2025) and its
        ε at ``delta > 0``; the bound and its verdict hold only under that assumption, which
        the result carries (``assumption="gaussian-family"``) and its line states;
        ``SubsampledGaussian(sampling_rate=q)`` assumes the Poisson-subsampled Gaussian of
        rate q instead and guesses the ``k_plus + k_minus`` canaries with the
        largest |privacy loss| of the claimed member (μ exactly (ε, δ)-DP at that rate), each
        by its sign (:func:`~.one_run_family.family_guesses`), so ``k_plus``/``k_minus`` fix
        only their number; its scores must be on the family's scale (an excluded canary
        scores N(0, 1), a sampled included one N(μ, 1)).  With no guesses fixed, every score
        is read: ``"gaussian"`` by the full ranking (:mod:`.one_run_rank`), the subsampled
        family by its claimed member's privacy loss (:mod:`.one_run_score`)
    """
    scores, included_arr = _checked_scores(scores, included)
    claim = claim_at_door(claim, epsilon=epsilon, delta=delta)
    epsilon, delta = claim.epsilon, claim.delta
    confidence = check_confidence(confidence)
    check_choice(assumption, ASSUMPTIONS, "assumption")
    family, sampling_rate = family_at_door(family)
    if family is not None:
        if assumption != "none":
            raise InputError(
                f"family={family!r} is its own assumption: drop assumption={assumption!r}"
            )
        _gdp_delta(delta)
    m = len(scores)
    ties = np.random.default_rng(child_seed(seed, 2)).random(m)
    order = np.lexsort((ties, scores))
    mu_lower, grid, difference, fit, reach = None, 1, None, None, None
    every_score = family is not None and k_plus is None and k_minus is None
    if sampling_rate is not None and every_score:
        test = score_test(scores, included_arr, claim, q=sampling_rate, confidence=confidence)
        difference, mu_lower, eps_lower, p_value, fit, reach = test
        r, correct, k_plus, k_minus, assumption = 0, 0, 0, 0, "subsampled-gaussian-family"
    elif sampling_rate is not None:
        r = sum(_guess_counts(m, k_plus, k_minus))
        mu_claim = subsampled_gaussian_mu(epsilon, sampling_rate, delta)
        chosen, guess_in = family_guesses(scores, r, mu_claim, sampling_rate, ties=ties)
        correct = int(np.count_nonzero(guess_in == included_arr[chosen]))
        k_plus = int(np.count_nonzero(guess_in))
        k_minus, assumption = r - k_plus, "subsampled-gaussian-family"
        mu_lower, eps_lower = family_epsilon(
            m, r, correct, delta, confidence, family=family, sampling_rate=sampling_rate
        )
        p_value = family_p_value(r - correct, r, m, mu_claim, q=sampling_rate)
    elif family is not None and not every_score:
        k_plus, k_minus = _guess_counts(m, k_plus, k_minus)
        correct = _correct(order, included_arr, k_plus, k_minus)
        r, assumption = k_plus + k_minus, "gaussian-family"
        mu_lower, eps_lower = family_epsilon(m, r, correct, delta, confidence, family=family)
        p_value = family_p_value(r - correct, r, m, gdp_mu_of(epsilon, delta))
    elif assumption == "independent-gaussian-dp" or every_score:
        _gdp_delta(delta)
        assumption = "independent-gaussian-dp"
        n_in = int(np.count_nonzero(included_arr))
        correct = mann_whitney_pairs(order, included_arr)
        r, k_plus, k_minus = n_in * (m - n_in), 0, 0
        mu_lower = rank_gdp_mu(correct, n_in, m - n_in, confidence)
        eps_lower = gdp_epsilon(mu_lower, delta)
        p_value = rank_gdp_p_value(correct, n_in, m - n_in, gdp_mu_of(epsilon, delta))
    elif assumption == "none":
        k_plus, k_minus = _guess_counts(m, k_plus, k_minus)
        correct = _correct(order, included_arr, k_plus, k_minus)
        r = k_plus + k_minus
        p_value = one_run_p_value(m, r, correct, epsilon=epsilon, delta=delta)
        eps_lower = one_run_epsilon(m, r, correct, delta=delta, confidence=confidence)
    else:
        _gdp_delta(delta)
        if k_plus is None and k_minus is None:
            choices = _guess_grid(m)
        else:
            choices = [_guess_counts(m, k_plus, k_minus)]
        grid = len(choices)
        found = []
        for kp, km in choices:
            v = _correct(order, included_arr, kp, km)
            found.append((one_run_gdp_mu(m, kp + km, v, confidence, tests=grid), kp, km, v))
        mu_lower, k_plus, k_minus, correct = max(found, key=lambda row: row[0])
        r = k_plus + k_minus
        eps_lower = gdp_epsilon(mu_lower, delta)
        p_value = _gdp_p_value(m, r, correct, gdp_mu_of(epsilon, delta), grid)
    if assumption == "none":
        reach = one_run_reach(
            m, k_plus, k_minus, epsilon=epsilon, delta=delta, confidence=confidence
        )
    elif family is not None and not every_score:
        reach = family_reach(
            m, r, q=sampling_rate or 1.0, epsilon=epsilon, delta=delta, confidence=confidence
        )
    return OneRunResult(
        epsilon_lower=eps_lower,
        p_value=p_value,
        verdict=_one_run_verdict(
            eps_lower, epsilon, reach, refuted=family is not None and refutes(mu_lower, fit)
        ),
        epsilon=epsilon,
        delta=delta,
        confidence=confidence,
        canaries=m,
        guesses=r,
        correct=correct,
        k_plus=k_plus,
        k_minus=k_minus,
        seed=int(seed),
        assumption=assumption,
        mu_lower=mu_lower,
        grid=grid,
        reach=reach,
        family=family,
        sampling_rate=sampling_rate,
        loss_difference=difference,
        fit_p_value=fit,
    )


def _one_run_verdict(
    eps_lower: float, epsilon: float, reach: Reach | None, *, refuted: bool = False
) -> Verdict:
    """The verdict of one bound: the multi-run rule (a bound of 0 shows nothing; nor does a
    family bound whose guesses ``refuted`` its family)."""
    if refuted:
        return Verdict.INCONCLUSIVE
    if eps_lower > epsilon:
        return Verdict.VIOLATION
    if eps_lower <= 0:
        return Verdict.INCONCLUSIVE
    if reach is not None and not reach.factor <= REACH_LIMIT:
        return Verdict.CONSISTENT_WEAK
    return Verdict.CONSISTENT


def _guess_accuracy(model: str, epsilon: float, delta: float, k_plus: int, k_minus: int, m: int):
    """The share of correct guesses, ``k_plus`` "in" at the top and ``k_minus`` "out" at the
    bottom of ``m`` canaries, of a mechanism that is exactly (``epsilon``, ``delta``)-DP per
    canary in the ``model`` family: randomized response (each guess right with probability
    ``e^ε / (1 + e^ε)``), or Gaussian-DP scores (N(μ, 1) when included, N(0, 1) when not, μ
    with ``ε(μ, δ) = epsilon``; the guesses' thresholds at the mixture's quantiles)."""
    if model == "randomized-response":
        return 1.0 / (1.0 + math.exp(-min(epsilon, 700.0)))
    mu = gdp_mu_of(epsilon, delta)
    right = 0.0  # Φ = ndtr and Φ̄(x) = ndtr(−x), as scipy.stats.norm computes them
    if k_plus:
        top = optimize.brentq(
            lambda t: 0.5 * (special.ndtr(-t) + special.ndtr(mu - t)) - k_plus / m, -40, 40 + mu
        )
        inside, outside = special.ndtr(mu - top), special.ndtr(-top)
        right += k_plus * inside / (inside + outside)
    if k_minus:
        low = optimize.brentq(
            lambda t: 0.5 * (special.ndtr(t) + special.ndtr(t - mu)) - k_minus / m, -40, 40 + mu
        )
        outside, inside = special.ndtr(low), special.ndtr(low - mu)
        right += k_minus * outside / (inside + outside)
    return right / (k_plus + k_minus)


@functools.lru_cache(maxsize=256)
def one_run_reach(
    m: int,
    k_plus: int,
    k_minus: int,
    *,
    epsilon: float,
    delta: float,
    confidence: float = 0.95,
    power: float = REACH_POWER,
) -> Reach:
    """The reach of the assumption-free one-run bound (Steinke et al.) with these guesses: the
    smallest multiple ``k`` of the claimed ``epsilon`` such that a mechanism leaking ``k ε``
    per canary makes the bound exceed the claim with probability ``power``, as for a multi-run
    audit (:mod:`dpclaims.audit.reach`).

    The bound exceeds the claim from ``v*`` correct guesses on (its p-value at the claim below
    ``1 - confidence``); the correct guesses of the violation are read as Binomial(r,
    :func:`_guess_accuracy`) in the Gaussian-DP family when ``delta > 0`` (DP-SGD's canaries),
    in the randomized-response family (the most accurate ε-DP guesses) when ``delta = 0``.
    It depends on the guess counts and the claim only, never on the scores: cached (audits
    of many runs with the same guesses ask it again and again).
    """
    r = k_plus + k_minus
    significance = 1.0 - confidence
    model = "gaussian-dp" if delta > 0 else "randomized-response"
    if one_run_p_value(m, r, r, epsilon, delta) >= significance:
        return Reach(factor=math.inf, epsilon=math.inf, mu=None, power=power, model=model)
    low, high = -1, r  # p-value at the claim: >= significance at low, below at high
    while high - low > 1:
        middle = (low + high) // 2
        if one_run_p_value(m, r, middle, epsilon, delta) < significance:
            high = middle
        else:
            low = middle

    def caught(factor: float) -> bool:
        accuracy = _guess_accuracy(model, factor * epsilon, delta, k_plus, k_minus, m)
        return stats.binom.sf(high - 1, r, accuracy) >= power

    if not caught(MAX_FACTOR):
        return Reach(factor=math.inf, epsilon=math.inf, mu=None, power=power, model=model)
    lo, hi = math.log(1e-3), math.log(MAX_FACTOR)
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if caught(math.exp(mid)) else (mid, hi)
    factor = math.exp(hi)
    return Reach(factor=factor, epsilon=factor * epsilon, mu=None, power=power, model=model)


@dataclass(frozen=True)
class OneRunAudit:
    """The one-run bounds on the same scores: ``bounds`` (the assumption-free bound of
    Steinke et al., then, when ``delta > 0``, the Gaussian-DP bound of Mahloujifar et al. and
    the full-ranking bound for independent Gaussian-DP canaries).

    ``verdict`` is the assumption-free bound's: ``violation`` only when it exceeds the claim.
    The other bounds are reported beside it with their assumptions, and decide nothing alone
    (a mechanism whose privacy profile is not Gaussian, or whose canaries interact, may exceed
    them legitimately).
    """

    bounds: tuple[OneRunResult, ...]

    @property
    def verdict(self) -> Verdict:
        return self.bounds[0].verdict

    @property
    def epsilon_lower(self) -> float:
        """The assumption-free bound."""
        return self.bounds[0].epsilon_lower

    def bound(self, assumption: str) -> OneRunResult | None:
        """The bound that makes ``assumption`` (None when it was not computed)."""
        return next((b for b in self.bounds if b.assumption == assumption), None)

    def summary(self) -> str:
        """A few lines: the claim, the canaries, each bound with its assumption, the verdict."""
        first = self.bounds[0]
        lines = [
            f"claim      ({first.epsilon:g}, {first.delta:g})-DP, one run, {first.canaries:,} "
            f"canaries (each included with probability 1/2)",
            *(f"bound      {b.line()}" for b in self.bounds),
            f"verdict    {self.verdict} (by the bound without assumption)",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict:
        """JSON-serialisable: the verdict, the assumption-free bound, every bound's record."""
        return {
            "kind": "one-run",
            "verdict": self.verdict,
            "epsilon_lower": self.bounds[0].to_dict()["epsilon_lower"],
            "bounds": [b.to_dict() for b in self.bounds],
        }


def audit_one_run_scores(
    scores: Any,
    included: Any,
    claim: PrivacyClaim | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    confidence: float = 0.95,
    k_plus: int | None = None,
    k_minus: int | None = None,
    seed: int = 0,
) -> OneRunAudit:
    """The one-run bounds on per-canary ``scores (m,)`` and ``included (m,)`` computed
    anywhere (one training run; each canary included with probability 1/2), against ``claim``
    (or the ``epsilon``, ``delta`` that build it, as for :func:`one_run_audit`).

    ``k_plus``/``k_minus``, when given, fix the guesses of the two guessing bounds; otherwise
    each uses its default (see :func:`one_run_audit`).  The two Gaussian-DP bounds need
    ``delta > 0`` and are left out at ``delta = 0``.
    """
    claim = claim_at_door(claim, epsilon=epsilon, delta=delta)
    common = dict(
        confidence=confidence,
        k_plus=k_plus,
        k_minus=k_minus,
        seed=seed,
    )
    bounds = [one_run_audit(scores, included, claim, assumption="none", **common)]
    if claim.delta > 0:
        for assumption in ASSUMPTIONS[1:]:
            bounds.append(one_run_audit(scores, included, claim, assumption=assumption, **common))
    return OneRunAudit(bounds=tuple(bounds))


def one_run(
    mechanism: Callable,
    canaries: int,
    claim: PrivacyClaim | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    k_plus: int | None = None,
    k_minus: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    score: Callable | None = None,
    assumption: str = "none",
    family: str | SubsampledGaussian | None = None,
) -> OneRunResult:
    """Draw canary inclusion, run ``mechanism(included (m,) bool, rng)`` once, audit it.

    Inclusion uses ``child_seed(seed, 0)`` (each canary in with probability 1/2), the
    mechanism ``child_seed(seed, 1)``.  The mechanism returns per-canary scores ``(m,)``,
    or any output that ``score(output) -> (m,)`` turns into them.  ``claim`` (or ``epsilon``,
    ``delta``) and the other options are as for :func:`one_run_audit`.
    """
    claim = claim_at_door(claim, epsilon=epsilon, delta=delta)
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
        claim,
        k_plus=k_plus,
        k_minus=k_minus,
        confidence=confidence,
        seed=seed,
        assumption=assumption,
        family=family,
    )
