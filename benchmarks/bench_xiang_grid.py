"""One-run bounds on Xiang et al.'s 60 settings, with sampled outcomes.

Xiang, Wang, Xiao, Tian, Wang (2025, "Tight Privacy Audit in One Run", arXiv:2509.08704)
compare their test with Steinke, Nasr, Jagielski (2023) on 5 mechanisms x canaries
n in 10^3, 10^4, 10^5 x released guesses r/n in 0.10, 0.25, 0.50, 1.00 (δ = 1e-5, 95%), each
fed only the *expected* number of mistakes (their ``compare/compare_methods.py``).  Here every
setting is also run ``--reps`` times on sampled outcomes, and every bound is scored by its
median and 10th-percentile share of the true ε and by its **coverage**, the share of runs in
which it exceeds the true ε (a valid 95% bound: at most 5%, here within 3 standard errors).

Each canary is included with probability 1/2; an included canary is sampled with probability
``q`` (q = 1 for the plain Gaussian) and scores ``N(μ, 1)`` if sampled, ``N(0, 1)`` otherwise
(excluded canaries too).  The privacy loss ``L(x) = log((1 - q) + q e^{μx - μ²/2})`` is
increasing in the score, so ranking by score is ranking by privacy loss.  From one run:

* **dpclaims** (:func:`dpclaims.audit.audit_one_run_scores` with ``k_plus = k_minus = r/2``,
  its symmetric guesses: "in" for the r/2 highest scores, "out" for the r/2 lowest): its
  verdict bound (Steinke et al.'s theorem, no assumption; :func:`one_run_epsilon`), beside it
  the Gaussian-DP bound of Mahloujifar et al. (:func:`one_run_gdp_mu`, same guesses) and the
  full-ranking bound (:func:`rank_gdp_mu`, independent of r); the last two assume a
  Gaussian-DP mechanism, which the subsampled Gaussian is not.  Its **family** bound is
  Xiang et al.'s test as the library computes it (:mod:`dpclaims.audit.one_run_family`): on
  the Gaussian rows ``one_run_audit(..., family="gaussian")``, on the same symmetric guesses;
  on the subsampled rows ``one_run_audit(..., family=SubsampledGaussian(sampling_rate=q))``
  with the true q and the claimed member the true one (as Xiang's column assumes), whose
  guesses are the library's :func:`family_guesses` (the r largest |L| of the claimed member,
  by its sign) and whose bound is :func:`family_epsilon` (its two steps, called here per
  count).
* **Xiang's guesses**: the r canaries with the largest ``|L|``, each guessed by the sign of
  ``L`` (as in their code), and their ``u`` mistakes, read by
  - **SNJ 2023**: Steinke et al.'s theorem (dpclaims' :func:`one_run_epsilon`) at ``v = r - u``;
  - **Xiang**: their test, reimplemented from their ``onerun/tail.py``, ``profile.py``,
    ``mechanisms.py`` and ``audit.py`` (the math now in :mod:`dpclaims.audit.one_run_family`):
    ``P[T <= u] = E_W[BinCDF(u; r, γ̄(W))]``,
    ``W ~ Beta(n - r, r + 1)`` (``r = n``: ``Binomial(n, E γ)``), with ``γ̄(w)`` the mean error
    ``1/(1 + e^{|L|})`` above mixture quantile ``w`` of the null mechanism, computed on their
    grid (100 000 cells, span 14) and quadrature (20 001 nodes over ±18 sd); the bound bisects
    (40 steps, range 0.01-32) the parameter μ of the *known* family (the Gaussian, or the
    subsampled Gaussian with the true q), so it assumes the mechanism's family and independent
    canaries.

Every count-based bound is non-decreasing in its count, so its median and 10th percentile are
the bound at the count's quantiles (``inverted_cdf``: an observed count), and its coverage is
the share of runs whose count rejects the truth (p-value at the true ε below 0.05, one p-value
per distinct count).  The *expected* outcome (counts at their expectation, u rounded as in
their code) reproduces their table.  True ε: the exact (ε, δ) curve of the mixture against
``N(0, 1)`` in both directions (the larger).  Run: ``python benchmarks/bench_xiang_grid.py
[--reps 200] [--canaries 1000 10000 100000] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import optimize, stats

from dpclaims.audit import one_run_epsilon, one_run_gdp_mu
from dpclaims.audit.one_run import one_run_gdp_rejects, one_run_p_value
from dpclaims.audit.one_run_family import (
    family_epsilon,
    family_guesses,
    family_mu,
    family_profile,
    privacy_loss,
    profile_p_value,
    subsampled_gaussian_epsilon,
)
from dpclaims.audit.one_run_rank import rank_gdp_mu, rank_gdp_p_value
from dpclaims.audit.one_run_score import score_mu, score_p_value
from dpclaims.gdp import gdp_epsilon, gdp_mu_of

DELTA, CONFIDENCE = 1e-5, 0.95
ALPHA = 1.0 - CONFIDENCE
MECHANISMS = (
    ("Gaussian mu=0.5", 0.5, 1.0),
    ("Gaussian mu=1", 1.0, 1.0),
    ("Gaussian mu=2", 2.0, 1.0),
    ("SGM mu=1 q=0.5", 1.0, 0.5),
    ("SGM mu=2 q=0.2", 2.0, 0.2),
)
CANARIES = (1_000, 10_000, 100_000)
FRACTIONS = (0.10, 0.25, 0.50, 1.00)
METHODS = ("dpclaims", "family", "scores", "GDP", "rank", "SNJ", "Xiang")
"""dpclaims' verdict bound, its family bound (``family="gaussian"``; on the SGM rows
``SubsampledGaussian(sampling_rate=q)`` with the true q, guessing by the claimed member's |L|),
the same family reading every score (no guesses: the full ranking on the Gaussian rows, the
score test of :mod:`dpclaims.audit.one_run_score` on the SGM rows), its Gaussian-DP and
full-ranking bounds, SNJ 2023 and Xiang et al. on Xiang's guesses."""
CHUNK = 2_000_000  # scores drawn at once


xiang_profile = family_profile
"""Their ``ScoreProfile`` of the null mechanism (``dpclaims.audit.one_run_family``)."""
xiang_p_value = profile_p_value
"""``P[T <= u]`` (their ``exact_tail``, ``dpclaims.audit.one_run_family``)."""


def mixture_epsilon(mu: float, q: float, delta: float = DELTA) -> float:
    """ε at ``delta`` of the subsampled Gaussian (the Gaussian at q = 1)."""
    return subsampled_gaussian_epsilon(mu, q, delta)


def xiang_epsilon(u: int, r: int, n: int, q: float) -> float:
    """Their ``epsilon_lower_bound``: bisect μ of the family (known q) in [0.01, 32], 40 steps;
    the ε at δ of the midpoint (0 when μ = 0.01 is not rejected)."""

    def rejects(mu: float) -> bool:
        return profile_p_value(family_profile(mu, q), u, r, n) < ALPHA

    low, high = 0.01, 32.0
    if not rejects(low):
        return 0.0
    if rejects(high):
        return mixture_epsilon(high, q)
    for _ in range(40):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if rejects(mid) else (low, mid)
    return mixture_epsilon(0.5 * (low + high), q)


def xiang_expected_errors(profile, n: int, r: int) -> float:
    """``E[T]``: ``r ∫ Beta(w; n - r, r + 1) γ̄(w) dw`` (``n E γ`` at ``r = n``), their code."""
    knots, errors, mean_error = profile
    if r == n:
        return n * mean_error
    w = np.linspace(1e-12, 1 - 1e-12, 100_001)
    rate = np.interp(w, knots, errors) / (1.0 - w)
    return r * float(np.trapezoid(stats.beta.pdf(w, n - r, r + 1) * rate, w))


# --- sampled outcomes -------------------------------------------------------------------------


def sample_counts(n: int, mu: float, q: float, reps: int, rng: np.random.Generator) -> dict:
    """Per run: dpclaims' correct guesses (k = r/2 each end), Xiang's mistakes (top r by
    ``|L|``) and, on the subsampled rows, the family bound's correct guesses
    (:func:`family_guesses` of the true member) for each r of :data:`FRACTIONS`, the
    Mann-Whitney ``U`` and ``n_in``."""
    rs = [guesses(n, f) for f in FRACTIONS]
    out = {"correct": [], "mistakes": [], "family": [], "pairs": [], "n_in": [], "difference": []}
    per = max(1, CHUNK // n)
    for start in range(0, reps, per):
        size = min(per, reps - start)
        included = rng.random((size, n)) < 0.5
        sampled = included & (rng.random((size, n)) < q)
        scores = rng.standard_normal((size, n)) + mu * sampled
        by_score = np.take_along_axis(included, np.argsort(scores, axis=1), axis=1)
        top_in = np.cumsum(by_score[:, ::-1], axis=1)  # included among the k highest
        bottom_out = np.cumsum(~by_score, axis=1)  # excluded among the k lowest
        out["correct"].append([top_in[:, r // 2 - 1] + bottom_out[:, r - r // 2 - 1] for r in rs])
        loss = privacy_loss(scores, mu, q)
        wrong = (loss > 0) != included
        by_loss = np.take_along_axis(wrong, np.argsort(-np.abs(loss), axis=1), axis=1)
        out["mistakes"].append(np.cumsum(by_loss, axis=1)[:, np.array(rs) - 1].T)
        if q < 1.0:
            chosen, guess_in = family_guesses(scores, n, mu, q)
            right = np.cumsum(guess_in == np.take_along_axis(included, chosen, axis=1), axis=1)
            out["family"].append(right[:, np.array(rs) - 1].T)
        n_in = by_score.sum(axis=1)
        rank_sum = (by_score * np.arange(1, n + 1)).sum(axis=1)
        out["pairs"].append(rank_sum - n_in * (n_in + 1) // 2)
        out["n_in"].append(n_in)
        out["difference"].append(
            (loss * included).sum(axis=1) / n_in - (loss * ~included).sum(axis=1) / (n - n_in)
        )
    return {
        "correct": np.concatenate([np.array(c) for c in out["correct"]], axis=1),
        "mistakes": np.concatenate(out["mistakes"], axis=1),
        "family": np.concatenate(out["family"], axis=1) if q < 1.0 else None,
        "pairs": np.concatenate(out["pairs"]),
        "n_in": np.concatenate(out["n_in"]),
        "difference": np.concatenate(out["difference"]),
    }


def guesses(n: int, fraction: float) -> int:
    """Released guesses r, as in their code (at least 2)."""
    return max(2, int(round(n * fraction)))


def quantile_count(counts: np.ndarray, p: float, *, larger_is_stronger: bool = True) -> int:
    """The observed count at which a bound monotone in it takes its p-quantile over the runs
    (``inverted_cdf`` of the bounds, so a count of mistakes and its count of correct guesses
    give the same run)."""
    sign = 1 if larger_is_stronger else -1
    return sign * int(np.quantile(sign * counts, p, method="inverted_cdf"))


def coverage(counts: np.ndarray, exceeds) -> float:
    """Share of runs whose count makes the bound exceed the truth (one call per distinct
    count)."""
    values, times = np.unique(counts, return_counts=True)
    hits = np.array([exceeds(int(c)) for c in values])
    return float(times[hits].sum() / len(counts))


# --- one setting ------------------------------------------------------------------------------


def expected_correct(n: int, r: int, mu: float, q: float) -> int:
    """dpclaims' correct guesses at their expectation: the r/2 highest "in", r/2 lowest "out",
    thresholds at the mixture's quantiles."""
    k_plus, k_minus = r // 2, r - r // 2

    def sf_in(t):
        return (1 - q) * stats.norm.sf(t) + q * stats.norm.sf(t - mu)

    def mixture_sf(t):
        return 0.5 * (stats.norm.sf(t) + sf_in(t))

    right = 0.0
    if k_plus < n:
        top = optimize.brentq(lambda t: mixture_sf(t) - k_plus / n, -40, 40 + mu)
        right += 0.5 * n * sf_in(top)
    else:
        right += 0.5 * n
    if k_minus < n:
        low = optimize.brentq(lambda t: mixture_sf(t) - (1 - k_minus / n), -40, 40 + mu)
        right += 0.5 * n * stats.norm.cdf(low)
    else:
        right += 0.5 * n
    return int(round(right))


def rank_bound(pairs: int, n_in: int, n: int) -> float:
    return gdp_epsilon(rank_gdp_mu(int(pairs), int(n_in), n - int(n_in), CONFIDENCE), DELTA)


def setting(n, r_index, mu, q, counts, true_eps, profile_true, *, methods=METHODS):
    """Each count-based method's (of ``methods``) expected-outcome share, median and 10th
    percentile share, and coverage."""
    r = guesses(n, FRACTIONS[r_index])
    correct, mistakes = counts["correct"][r_index], counts["mistakes"][r_index]
    mu_true = gdp_mu_of(true_eps, DELTA)

    def dp_bound(v):
        return one_run_epsilon(n, r, v, delta=DELTA, confidence=CONFIDENCE)

    def family_bound(v):
        if q < 1.0:
            options = dict(family="subsampled-gaussian", sampling_rate=q)
            return family_epsilon(n, r, v, DELTA, CONFIDENCE, **options)[1]
        return mixture_epsilon(family_mu(n, r, v, CONFIDENCE, q=q), q)

    def gdp_bound(v):
        return gdp_epsilon(one_run_gdp_mu(n, r, v, CONFIDENCE), DELTA)

    u_expected = int(round(xiang_expected_errors(profile_true, n, r)))
    family_counts, family_expected = correct, expected_correct(n, r, mu, q)
    if q < 1.0:
        family_counts, family_expected = counts["family"][r_index], r - u_expected
    bounds = {
        "dpclaims": (
            dp_bound,
            correct,
            True,
            expected_correct(n, r, mu, q),
            lambda v: one_run_p_value(n, r, v, true_eps, DELTA) < ALPHA,
        ),
        "family": (
            family_bound,
            family_counts,
            True,
            family_expected,
            lambda v: xiang_p_value(profile_true, r - v, r, n) < ALPHA,
        ),
        "GDP": (
            gdp_bound,
            correct,
            True,
            expected_correct(n, r, mu, q),
            lambda v: one_run_gdp_rejects(n, r, v, mu_true, ALPHA),
        ),
    }
    bounds["SNJ"] = (
        lambda u: dp_bound(r - u),
        mistakes,
        False,
        u_expected,
        lambda u: one_run_p_value(n, r, r - u, true_eps, DELTA) < ALPHA,
    )
    bounds["Xiang"] = (
        lambda u: xiang_epsilon(u, r, n, q),
        mistakes,
        False,
        u_expected,
        lambda u: xiang_p_value(profile_true, u, r, n) < ALPHA,
    )
    row = {"r": r}
    for name, (bound, values, larger, expected, exceeds) in bounds.items():
        if name not in methods:
            continue
        row[name] = {
            "expected": bound(expected) / true_eps,
            "median": bound(quantile_count(values, 0.5, larger_is_stronger=larger)) / true_eps,
            "p10": bound(quantile_count(values, 0.1, larger_is_stronger=larger)) / true_eps,
            "coverage": coverage(values, exceeds),
        }
    return row


def rank_row(n, mu, q, counts, true_eps):
    """The full-ranking bound (independent of r): per run, exact."""
    found = np.array(
        [rank_bound(p, k, n) for p, k in zip(counts["pairs"], counts["n_in"], strict=True)]
    )
    mu_true = gdp_mu_of(true_eps, DELTA)
    over = [
        rank_gdp_p_value(int(p), int(k), n - int(k), mu_true) < ALPHA
        for p, k in zip(counts["pairs"], counts["n_in"], strict=True)
    ]
    auc = (1 - q) * 0.5 + q * stats.norm.cdf(mu / math.sqrt(2.0))
    expected = rank_bound(int(round(auc * (n // 2) * (n - n // 2))), n // 2, n)
    return {
        "expected": expected / true_eps,
        "median": float(np.quantile(found, 0.5, method="inverted_cdf")) / true_eps,
        "p10": float(np.quantile(found, 0.1, method="inverted_cdf")) / true_eps,
        "coverage": float(np.mean(over)),
    }


def scores_row(n, mu, q, counts, true_eps):
    """The family reading every score (independent of r): on the Gaussian rows the full
    ranking (:func:`rank_row`), on the SGM rows the score test of the claimed (true) member, per
    run, with its expected outcome at ``D``'s mean and n/2 canaries a side."""
    if q == 1.0:
        return rank_row(n, mu, q, counts, true_eps)
    sides = [(int(k), n - int(k)) for k in counts["n_in"]]

    def bound(difference, n_in, n_out):
        found = score_mu(difference, n_in, n_out, mu_claim=mu, q=q, confidence=CONFIDENCE)
        return subsampled_gaussian_epsilon(found, q, DELTA)

    found = [bound(d, *side) for d, side in zip(counts["difference"], sides, strict=True)]
    over = [
        score_p_value(d, *side, mu, mu_claim=mu, q=q) < ALPHA
        for d, side in zip(counts["difference"], sides, strict=True)
    ]
    x, w = np.polynomial.hermite_e.hermegauss(160)
    w = w / w.sum()
    loss_out = w @ privacy_loss(x, mu, q)
    loss_in = (1 - q) * loss_out + q * (w @ privacy_loss(x + mu, mu, q))
    expected = bound(float(loss_in - loss_out), n // 2, n - n // 2)
    return {
        "expected": expected / true_eps,
        "median": float(np.quantile(found, 0.5, method="inverted_cdf")) / true_eps,
        "p10": float(np.quantile(found, 0.1, method="inverted_cdf")) / true_eps,
        "coverage": float(np.mean(over)),
    }


# --- the grid and its tables ------------------------------------------------------------------


def grid(canaries, reps: int, seed: int = 0) -> list[dict]:
    """Every setting's row (mechanism x n x r/n)."""
    rows = []
    for index, (name, mu, q) in enumerate(MECHANISMS):
        true_eps = mixture_epsilon(mu, q)
        profile = xiang_profile(mu, q)
        for n in canaries:
            counts = sample_counts(n, mu, q, reps, np.random.default_rng([seed, index, n]))
            rank = rank_row(n, mu, q, counts, true_eps)
            scores = scores_row(n, mu, q, counts, true_eps)
            for r_index, fraction in enumerate(FRACTIONS):
                row = setting(n, r_index, mu, q, counts, true_eps, profile)
                row.update(mechanism=name, true_eps=true_eps, n=n, fraction=fraction)
                row.update(rank=rank, scores=scores)
                rows.append(row)
    return rows


def coverage_limit(reps: int) -> float:
    """5% plus three standard errors of a share over ``reps`` runs."""
    return ALPHA + 3.0 * math.sqrt(ALPHA * CONFIDENCE / reps)


def row_lines(rows: list[dict]) -> list[str]:
    head = "| mechanism | ε | n | r | " + " | ".join(f"{m} exp / med / p10 / cov" for m in METHODS)
    lines = [head + " |", "|" + "---|" * (4 + len(METHODS))]
    for row in rows:
        cells = [
            f"{row[m]['expected']:.3f} / {row[m]['median']:.3f} / {row[m]['p10']:.3f} / "
            f"{row[m]['coverage']:.1%}"
            for m in METHODS
        ]
        lines.append(
            f"| {row['mechanism']} | {row['true_eps']:.3f} | {row['n']:,} | {row['r']:,} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def slice_lines(rows: list[dict], key: str, reps: int) -> list[str]:
    """Mean over the slice's settings of each method's expected and median share, and the
    settings whose coverage exceeds :func:`coverage_limit`."""
    limit = coverage_limit(reps)
    lines = [
        f"| {key} | " + " | ".join(f"{m} exp / med / p10 (cov fails)" for m in METHODS) + " |",
        "|" + "---|" * (1 + len(METHODS)),
    ]
    for value in dict.fromkeys(row[key] for row in rows):
        part = [row for row in rows if row[key] == value]
        cells = []
        for m in METHODS:
            share = {s: np.mean([row[m][s] for row in part]) for s in ("expected", "median", "p10")}
            fails = sum(row[m]["coverage"] > limit for row in part)
            cells.append(
                f"{share['expected']:.1%} / {share['median']:.1%} / {share['p10']:.1%} "
                f"({fails}/{len(part)})"
            )
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return lines


def report(rows: list[dict], reps: int, seconds: float) -> str:
    limit = coverage_limit(reps)
    everything = [dict(row, all="all") for row in rows]
    lines = [
        f"{len(rows)} settings, {reps} sampled runs each, δ = {DELTA:g}, confidence "
        f"{CONFIDENCE:.0%}; {seconds:.0f} s on one core.",
        "Shares of the true ε: exp = on the expected outcome, med / p10 = median / 10th "
        "percentile over the runs; cov = share of runs whose bound exceeds the true ε "
        f"(limit 5% + 3 se = {limit:.1%}).",
        "",
        *slice_lines(everything, "all", reps),
        "",
        *slice_lines(rows, "n", reps),
        "",
        *slice_lines(rows, "fraction", reps),
        "",
        *slice_lines(rows, "mechanism", reps),
        "",
        *row_lines(rows),
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--canaries", type=int, nargs="+", default=list(CANARIES))
    parser.add_argument("--out", default=None, help="also write the tables to this new file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = grid(args.canaries, args.reps)
    text = report(rows, args.reps, time.perf_counter() - start)
    print(text)
    if args.out:
        with open(args.out, "x", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
