"""Calibration of every certified number dpclaims prints (issue #38, item 2).

Each cell runs one estimator on replicates of a mechanism whose claim is its exact ε (or, for
the DP-SGD transcript, its PLD accountant's) and counts the replicates whose verdict is
``violation`` (certified bound above the claim): every one is false, and the promise is a rate
of at most α = 1 − confidence = 0.05.  The check: rate ≤ α + 3 se, se = sqrt(α (1 − α) / reps).

Estimators (the public call each replicate makes):

- ``default`` / ``planned`` / ``calibration``: the threshold audit's certification
  (:func:`dpclaims.audit.certify_scores` with ``strategy="auto"``, a
  :class:`~dpclaims.audit.Planned` planned from the claim's law of the statistic
  (:func:`~dpclaims.audit.plan_quantile_tests`, :func:`~dpclaims.targets.dpsgd.planned_threshold`
  for DP-SGD), ``"calibration"``) on the audit's statistic of simulated outputs: the identity on
  a 1-D output, the exact log-likelihood ratio on the DP-SGD transcript.  For ``default`` and
  ``planned`` this is the whole of :func:`~dpclaims.audit.audit` on such outputs (a fixed
  score; ``audit``'s verdict is ``violation`` exactly when this bound exceeds the claim); with
  ``threshold="calibration"`` ``audit`` also picks the score (identity or a Gaussian likelihood
  ratio) on the calibration split, a choice the ``audit`` rows make on randomized response
  (discrete outputs: the split with a learned score).  Draws are vectorised over replicates;
- ``audit``: :func:`~dpclaims.audit.audit` end to end on the mechanism (default test; on
  discrete or multi-column outputs the score is learned on the calibration split), fewer
  replicates;
- ``histogram``: ``audit(..., test=AuditTest(method="histogram"))`` (discrete outputs);
- ``audit_scores``: :func:`~dpclaims.audit.audit_scores` (``dpclaims audit --scores``) verdicts;
- ``one-run``: :func:`~dpclaims.audit.audit_one_run_scores` on m canaries, each in with
  probability 1/2 (Steinke et al., the Gaussian-DP bound, the full-ranking bound);
- ``one-run family``: ``one_run_audit(..., family=SubsampledGaussian(sampling_rate=q))`` with no
  guesses (the family's score test, :mod:`dpclaims.audit.one_run_score`) on the subsampled
  Gaussian it assumes, at its exact ε;
- ``search``: :func:`~dpclaims.audit.search.search` over :class:`~dpclaims.targets.pairs.QueryPairs`
  (screening, selection and certifying audit) on the peers' mechanisms with a finite ε
  (``benchmarks/bench_audit_blackbox.py``);
- ``replay``: :func:`~dpclaims.audit.replay` refuting the claim (``result.refutes``: a certain
  ε = ∞, or a point mass's bound above the claimed ε) on any pattern pair; its rate must be 0
  on a mechanism with finite ε;
- ``reach``: the reach of replicate 0's ``audit_scores`` result (a mechanism leaking ``k`` times
  the claim in the reach's model family); the fraction of replicates of that leaking mechanism
  certified above the claim must be ≥ 0.9 − 3 se (se = sqrt(0.9 · 0.1 / reps));
- ``gdp``: the Gaussian-DP estimate (``method="gdp"``, *not certified*) on the same
  certification: the rate at which its μ exceeds the true μ (Gaussian) or its ε the exact ε at
  the claim's δ (Laplace); its coverage is 1 − rate.

Run: ``python benchmarks/bench_calibration.py [--scale 1.0] [--only default,search]
[--max-n 10000] [--workers 2] [--markdown benchmarks/results/calibration.md]``; ``--scale``
multiplies every cell's replicates (the slow tests run the same cells at a small scale),
``--max-n`` skips the cells above that N.  The full grid: about 1,900 s of CPU, 16 minutes on
two idle cores.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
from scipy import stats

from dpclaims import PrivacyClaim
from dpclaims.algorithms.transcript import StepRelease
from dpclaims.audit import (
    AuditTest,
    Criterion,
    Gdp,
    SubsampledGaussian,
    audit,
    audit_one_run_scores,
    audit_scores,
    certify_scores,
    gdp_delta,
    gdp_epsilon,
    one_run_audit,
    plan_quantile_tests,
    replay,
)
from dpclaims.audit.one_run_family import subsampled_gaussian_epsilon
from dpclaims.audit.reach import REACH_POWER, violation_param
from dpclaims.audit.search import search
from dpclaims.execution import Execution, map_tasks
from dpclaims.privacy import calibrate_noise_multiplier
from dpclaims.targets.dpsgd import planned_threshold
from dpclaims.targets.pairs import QueryPairs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_blackbox import CASES as PEERS  # noqa: E402

CONFIDENCE = 0.95
ALPHA = 1.0 - CONFIDENCE
SERIAL = Execution(backend="serial")
BLOCK_VALUES = 2_000_000
"""Simulated outputs drawn at once (replicates × trials × columns)."""
SCREEN_TRIALS = 1_000
"""Trials per dataset of each of ``search``'s screens."""
PAIR = (np.array([0.0]), np.array([1.0]))


@dataclass(frozen=True)
class Case:
    """A mechanism on the pair d0 = 0, d1 = 1 and its exact claim.

    ``law``: ``"gauss"`` (``d μ + N(0, 1)``, μ-GDP; the claim ``(μ, δ(μ))`` or ``(ε(δ), δ)``
    at a given ``delta``), ``"laplace"`` (``d + Lap(1/ε)``, pure ε, or its exact ε at a given
    ``delta``), ``"rr"`` (randomized response on the bit d, pure ε), ``"clipped"``
    (``max(d + Lap(1/ε), 1/2)``, pure ε: atoms at 1/2 of mass 1 − e^(−ε/2)/2 on d0 and
    e^(−ε/2)/2 on d1) or ``"dpsgd"`` (the projected transcript of DP-SGD with a gradient
    canary, T = 20, q = 0.1, σ from the PLD accountant at (ε, 10⁻⁵)).
    """

    law: str
    param: float
    delta: float | None = None
    claimed: float | None = None
    """A claimed ε other than the exact one (to check that the check can fail)."""

    @property
    def name(self) -> str:
        symbol = "μ" if self.law == "gauss" else "ε"
        label = {"rr": "randomized response", "clipped": "clipped Laplace", "dpsgd": "DP-SGD"}
        text = f"{label.get(self.law, self.law)} {symbol} = {self.param:g}"
        if self.law == "dpsgd":
            text += " (T = 20, q = 0.1)"
        text += f", δ = {self.delta:g}" if self.delta is not None else ""
        return text + (f", claimed ε = {self.claimed:g}" if self.claimed is not None else "")

    @property
    def claim(self) -> PrivacyClaim:
        exact = self.exact
        if self.claimed is None:
            return exact
        return PrivacyClaim(self.claimed, exact.delta)

    @property
    def exact(self) -> PrivacyClaim:
        """The mechanism's exact (ε, δ) (the accountant's for DP-SGD)."""
        if self.law == "gauss":
            if self.delta is None:
                return PrivacyClaim(self.param, float(gdp_delta(self.param, self.param)))
            return PrivacyClaim(float(gdp_epsilon(self.param, self.delta)), self.delta)
        if self.law == "dpsgd":
            return PrivacyClaim(self.param, 1e-5)
        if self.delta is not None:  # Laplace: the exact ε at δ, ε₀ + 2 log(1 − δ)
            return PrivacyClaim(self.param + 2.0 * math.log1p(-self.delta), self.delta)
        return PrivacyClaim(self.param, 0.0)

    @property
    def release(self) -> StepRelease:
        """The DP-SGD transcript's steps (``law="dpsgd"``)."""
        return dpsgd_release(self.param)

    @property
    def width(self) -> int:
        return 20 if self.law == "dpsgd" else 1

    def draw(self, rng: np.random.Generator, shape: tuple, bit: float) -> np.ndarray:
        """Outputs of the mechanism on ``d = bit`` (``shape`` for a 1-D output, ``shape + (T,)``
        for DP-SGD)."""
        if self.law == "gauss":
            return bit * self.param + rng.standard_normal(shape)
        if self.law == "laplace":
            return bit + rng.laplace(0.0, 1.0 / self.param, shape)
        if self.law == "clipped":
            return np.maximum(bit + rng.laplace(0.0, 1.0 / self.param, shape), 0.5)
        if self.law == "rr":
            keep = rng.random(shape) < math.exp(self.param) / (1.0 + math.exp(self.param))
            return np.where(keep, bit, 1.0 - bit)
        draws = self.release.sample_projections(rng, math.prod(shape), canary=bool(bit))
        return draws.reshape(*shape, 20)

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The audit's fixed statistic: the identity, or the transcript's exact log-likelihood
        ratio."""
        if self.law == "dpsgd":
            return self.release.log_likelihood_ratio(outputs.reshape(-1, 20)).reshape(
                outputs.shape[:-1]
            )
        return outputs

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The mechanism, for the end-to-end ``audit`` and ``replay``."""
        out = self.draw(rng, (trials,), float(np.sum(data)))
        return out if out.ndim == 2 else out[:, None]


@cache
def dpsgd_release(epsilon: float) -> StepRelease:
    """DP-SGD's steps (T = 20, q = 0.1, clip 1) with σ from the PLD accountant at (ε, 10⁻⁵)."""
    sigma = calibrate_noise_multiplier(epsilon, 1e-5, sampling_rate=0.1, steps=20)
    return StepRelease(steps=20, sampling_rate=0.1, clip_norm=1.0, noise_std=sigma)


def replicate_scores(case: Case, n: int, reps: int, seed: int):
    """Yield the statistic ``(s0 (n,), s1 (n,))`` of each of ``reps`` replicates, drawn in
    blocks."""
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_VALUES // (n * case.width))
    for start in range(0, reps, block):
        shape = (min(block, reps - start), n)
        s0 = case.score(case.draw(rng, shape, 0.0))
        s1 = case.score(case.draw(rng, shape, 1.0))
        yield from zip(s0, s1, strict=True)


def _criterion(case: Case, objective: str = "epsilon") -> Criterion:
    return Criterion(delta=case.claim.delta, objective=objective)


def _planned(case: Case, n: int):
    """The :class:`Planned` strategy from the claim's own law of the statistic."""
    if case.law == "dpsgd":
        return planned_threshold(
            case.release, trials=n, delta=case.claim.delta, epsilon=case.claim.epsilon
        )
    if case.law == "gauss":
        law, shift = stats.norm(), case.param
    else:
        law, shift = stats.laplace(scale=1.0 / case.param), 1.0
    t = np.linspace(-12.0, 12.0 + shift, 4001) / (1.0 if case.law == "gauss" else case.param)
    return plan_quantile_tests(
        t, (law.sf(t), law.sf(t - shift)), trials=n, confidence=CONFIDENCE,
        criterion=_criterion(case),
    )  # fmt: skip


def certified(strategy_of):
    """An estimator certifying each replicate's statistic with ``certify_scores`` at the
    strategy ``strategy_of(case, n)``."""

    def run(case: Case, n: int, reps: int, seed: int) -> dict:
        strategy = strategy_of(case, n)
        eps = np.array(
            [
                certify_scores(
                    s0, s1, strategy=strategy, confidence=CONFIDENCE, criterion=_criterion(case)
                ).epsilon_lower
                for s0, s1 in replicate_scores(case, n, reps, seed)
            ]
        )
        return {"": (eps > case.claim.epsilon, eps)}

    return run


def run_audit_scores(case: Case, n: int, reps: int, seed: int) -> dict:
    found = [
        audit_scores(s0, s1, case.claim, confidence=CONFIDENCE)
        for s0, s1 in replicate_scores(case, n, reps, seed)
    ]
    return {"": _verdicts(found)}


def _verdicts(results) -> tuple[np.ndarray, np.ndarray]:
    hits = np.array([r.verdict == "violation" for r in results])
    return hits, np.array([r.epsilon_lower for r in results])


def end_to_end(method: str):
    """``audit`` on the mechanism itself, one seed per replicate."""

    def run(case: Case, n: int, reps: int, seed: int) -> dict:
        test = AuditTest(method=method)
        found = [
            audit(case, *PAIR, case.claim, trials=n, seed=seed + i, test=test, execution=SERIAL)
            for i in range(reps)
        ]
        return {"": _verdicts(found)}

    return run


def run_gdp(case: Case, n: int, reps: int, seed: int) -> dict:
    """The Gaussian-DP estimate's μ above the true μ (Gaussian), or its ε above the exact ε at
    the claim's δ (Laplace, whose claim is that ε)."""
    delta = case.claim.delta
    values = []
    for s0, s1 in replicate_scores(case, n, reps, seed):
        test = certify_scores(s0, s1, confidence=CONFIDENCE, criterion=_criterion(case, "mu")).test
        values.append(Gdp().bound(test, delta))
    eps, mu = (np.array(v) for v in zip(*values, strict=True))
    if case.law == "gauss":
        return {"": (mu > case.param, eps)}
    return {"": (eps > case.claim.epsilon, eps)}


ONE_RUN_ROWS = ("one-run Steinke et al.", "one-run Gaussian-DP", "one-run full ranking")


def run_one_run(case: Case, m: int, reps: int, seed: int) -> dict:
    """m canaries, each in with probability 1/2, the score its own release (μ shift + N(0, 1)
    or 1 + Lap(1/ε) when in)."""
    rng = np.random.default_rng(seed)
    claim = case.claim
    eps = []
    for i in range(reps):
        included = rng.random(m) < 0.5
        scores = case.draw(rng, (m,), 0.0)
        scores[included] = case.draw(rng, (int(included.sum()),), 1.0)
        found = audit_one_run_scores(
            scores, included, epsilon=claim.epsilon, delta=claim.delta, confidence=CONFIDENCE,
            seed=i,
        )  # fmt: skip
        eps.append([b.epsilon_lower for b in found.bounds])
    eps = np.array(eps)
    return {
        row: (eps[:, j] > claim.epsilon, eps[:, j])
        for j, row in enumerate(ONE_RUN_ROWS[: eps.shape[1]])
    }


@dataclass(frozen=True)
class Family:
    """The Poisson-subsampled Gaussian of rate ``q``: an included canary scores ``N(μ, 1)`` with
    probability q, else ``N(0, 1)``, as an excluded one does; claimed at its exact ε."""

    mu: float
    q: float

    @property
    def name(self) -> str:
        return f"subsampled Gaussian μ = {self.mu:g}, q = {self.q:g}, δ = 1e-05"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(subsampled_gaussian_epsilon(self.mu, self.q, 1e-5), 1e-5)


def run_one_run_family(target: Family, m: int, reps: int, seed: int) -> dict:
    """The family's score test (no guesses) on m canaries of the family it assumes."""
    rng = np.random.default_rng(seed)
    family, claim = SubsampledGaussian(sampling_rate=target.q), target.claim
    found = []
    for _ in range(reps):
        included = rng.random(m) < 0.5
        sampled = included & (rng.random(m) < target.q)
        scores = rng.standard_normal(m) + target.mu * sampled
        found.append(one_run_audit(scores, included, claim, family=family))
    hits = np.array([r.verdict == "violation" for r in found])
    return {"": (hits, np.array([r.epsilon_lower for r in found]))}


@dataclass(frozen=True)
class Peer:
    """One of the peers' mechanisms with a finite ε (``bench_audit_blackbox.CASES``)."""

    name: str

    @property
    def spec(self) -> tuple:
        return PEERS[self.name]

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(float(self.spec[3]))


FINITE_PEERS = ("laplace", "laplace half scale", "noisy-max index", "SVT1 (c = 1)")


def run_search(peer: Peer, n: int, reps: int, seed: int) -> dict:
    mechanism, k = peer.spec[:2]
    found = [
        search(
            mechanism,
            QueryPairs(k),
            trials=n,
            seed=seed + i,
            screen_trials=SCREEN_TRIALS,
            claim=peer.claim,
            confidence=CONFIDENCE,
            execution=SERIAL,
            progress=False,
        )  # fmt: skip
        for i in range(reps)
    ]
    return {"": _verdicts(found)}


def run_replay(target, n: int, reps: int, seed: int) -> dict:
    """Any refutation of the claim over the pattern pairs (a peer) or the pair 0, 1 (a case)."""
    if isinstance(target, Peer):
        mechanism, k = target.spec[:2]
        pairs = [(p.d0, p.d1) for p in QueryPairs(k).patterns()]
    else:
        mechanism, pairs = target, [PAIR]
    claim = target.claim
    hits = np.array(
        [
            any(
                replay(
                    mechanism, d0, d1, trials=n, seed=seed + i, confidence=CONFIDENCE,
                    delta=claim.delta,
                ).refutes(claim.epsilon)
                for d0, d1 in pairs
            )
            for i in range(reps)
        ]
    )  # fmt: skip
    return {"": (hits, np.full(reps, np.nan))}


def run_reach(case: Case, n: int, reps: int, seed: int) -> dict:
    """Replicate 0's reach, then ``reps`` audits of a mechanism leaking at it."""
    s0, s1 = next(replicate_scores(case, n, 1, seed))
    found = audit_scores(s0, s1, case.claim, confidence=CONFIDENCE).reach
    param = violation_param(found.model, found.epsilon, case.claim.delta)
    law = "gauss" if found.model == "gaussian-dp" else "laplace"
    leak = replace(case, law=law, param=param)
    eps = np.array(
        [
            certify_scores(s0, s1, confidence=CONFIDENCE, criterion=_criterion(case)).epsilon_lower
            for s0, s1 in replicate_scores(leak, n, reps, seed + 1)
        ]
    )
    return {f" (k = {found.factor:.3g}, {found.model})": (eps > case.claim.epsilon, eps)}


ESTIMATORS = {
    "default": certified(lambda case, n: "auto"),
    "planned": certified(_planned),
    "calibration": certified(lambda case, n: "calibration"),
    "audit": end_to_end("threshold"),
    "histogram": end_to_end("histogram"),
    "audit_scores": run_audit_scores,
    "one-run": run_one_run,
    "one-run family": run_one_run_family,
    "search": run_search,
    "replay": run_replay,
    "reach": run_reach,
    "gdp": run_gdp,
}
"""name -> run(target, n, reps, seed) -> {row suffix: (hits (reps,), certified ε (reps,))}."""

KIND = {"replay": "never", "reach": "caught", "gdp": "uncertified"}
"""How a row is judged (default ``"violation"``: rate ≤ α + 3 se)."""

GAUSS = [Case("gauss", mu) for mu in (0.5, 1.0, 2.0)]
LAPLACE = [Case("laplace", eps) for eps in (0.5, 1.0, 2.0)]
RR = Case("rr", 1.0)
DPSGD = Case("dpsgd", 2.0)
N3 = (1_000, 10_000, 100_000)


def grid() -> list[tuple[str, object, int, int]]:
    """Every cell ``(estimator, target, N, replicates at scale 1)``."""
    cells = []
    for case in [*GAUSS, *LAPLACE, DPSGD]:
        cells += [("default", case, n, 1000) for n in N3]
    for case in (GAUSS[1], LAPLACE[1], DPSGD):
        cells += [("planned", case, n, 1000) for n in N3]
    for case in (GAUSS[1], LAPLACE[1]):
        cells += [("calibration", case, n, 1000) for n in N3]
        cells += [("audit_scores", case, n, r) for n, r in zip(N3, (1000, 1000, 300), strict=True)]
        cells += [("reach", case, n, 1000) for n in N3]
        cells += [("audit", case, n, reps) for n, reps in ((1_000, 300), (10_000, 200))]
    cells += [("audit", RR, n, reps) for n, reps in zip(N3, (1000, 1000, 300), strict=True)]
    cells += [("histogram", RR, n, reps) for n, reps in zip(N3, (1000, 1000, 300), strict=True)]
    cells += [("audit", DPSGD, n, reps) for n, reps in ((1_000, 200), (10_000, 100))]
    for case in [*GAUSS, Case("laplace", 1.0, 1e-3)]:
        cells += [("gdp", case, n, 1000) for n in N3]
    for case in (Case("gauss", 1.0, 1e-5), Case("gauss", 2.0, 1e-5), LAPLACE[1]):
        cells += [("one-run", case, m, reps) for m, reps in zip(N3, (1000, 300, 100), strict=True)]
    for target in (Family(2.0, 0.2), Family(1.0, 0.5)):
        cells += [
            ("one-run family", target, m, r) for m, r in zip(N3, (1000, 300, 100), strict=True)
        ]
    for name in FINITE_PEERS:
        cells += [("search", Peer(name), n, reps) for n, reps in ((1_000, 200), (10_000, 100))]
        cells += [("replay", Peer(name), n, reps) for n, reps in ((1_000, 300), (10_000, 100))]
    for case in (GAUSS[1], LAPLACE[1], RR, Case("clipped", 10.0), Case("clipped", 20.0)):
        cells += [("replay", case, n, 1000) for n in (100, 1_000, 10_000)]
    return cells


def cell_seed(estimator: str, target, n: int) -> int:
    """A fixed seed per cell (its replicates use ``seed + i`` or one stream from it)."""
    return zlib.crc32(f"{estimator}|{target}|{n}".encode()) % 2**31


def run_cell(estimator: str, target, n: int, reps: int) -> list[dict]:
    """The rows of one cell: rate of ``violation`` (or of the row's event), its se and limit."""
    start = time.process_time()
    found = ESTIMATORS[estimator](target, n, reps, cell_seed(estimator, target, n))
    seconds = time.process_time() - start
    return [
        judged(
            {
                "estimator": ("" if row.startswith("one-run") else estimator) + row,
                "case": target.name,
                "claim": target.claim.epsilon,
                "n": n,
                "reps": reps,
                "events": int(np.sum(hits)),
                "median": float(np.nanmedian(eps)) if np.any(np.isfinite(eps)) else math.nan,
                "seconds": seconds if j == 0 else 0.0,  # a cell's CPU time, on its first row
            },
            KIND.get(estimator, "violation"),
        )
        for j, (row, (hits, eps)) in enumerate(found.items())
    ]


def judged(row: dict, kind: str) -> dict:
    """``row`` with its rate, se, limit and whether it passes (``ok``)."""
    reps, rate = row["reps"], row["events"] / row["reps"]
    if kind == "caught":
        se = math.sqrt(REACH_POWER * (1 - REACH_POWER) / reps)
        limit, ok = REACH_POWER - 3 * se, rate >= REACH_POWER - 3 * se
    elif kind == "never":
        se, limit, ok = 0.0, 0.0, row["events"] == 0
    else:
        se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
        limit, ok = ALPHA + 3 * se, rate <= ALPHA + 3 * se
    return {**row, "kind": kind, "rate": rate, "se": se, "limit": limit, "ok": bool(ok)}


def run_grid(cells, *, scale: float = 1.0, workers: int | None = None) -> list[dict]:
    """Every cell at ``scale`` × its replicates (at least 20), on ``workers`` processes."""
    tasks = [(e, t, n, max(20, round(r * scale))) for e, t, n, r in cells]
    execution = SERIAL if workers == 1 else Execution(workers=workers)
    return [row for rows in map_tasks(run_cell, tasks, execution) for row in rows]


HEADER = (
    "| estimator | case | claim ε | N | reps | events | rate | se | limit | "
    "ok | median certified / claim | CPU s |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def markdown(rows: list[dict]) -> str:
    """The table: ``limit`` is α + 3 se (``violation``; ``rate`` must not exceed it), 0.9 − 3 se
    (``caught``; rate must reach it), 0 (``never``); ``uncertified`` rows are reported only."""
    lines = [HEADER]
    for r in rows:
        ok = {"uncertified": "(uncertified)"}.get(r["kind"], "ok" if r["ok"] else "**FAIL**")
        ratio = r["median"] / r["claim"] if math.isfinite(r["median"]) else math.nan
        lines.append(
            f"| {r['estimator']} | {r['case']} | {r['claim']:.4g} | {r['n']:,} | {r['reps']} | "
            f"{r['events']} | {r['rate']:.3f} | {r['se']:.3f} | {r['limit']:.3f} | {ok} | "
            f"{'—' if math.isnan(ratio) else f'{ratio:.3f}'} | {r['seconds']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="× each cell's replicates")
    parser.add_argument("--only", default="", help="comma-separated estimators (default: all)")
    parser.add_argument("--max-n", type=int, default=None, help="skip cells above this N")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    parser.add_argument("--markdown", type=Path, default=None, help="write the table there")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    cells = [
        c
        for c in grid()
        if (not only or c[0] in only) and (args.max_n is None or c[2] <= args.max_n)
    ]
    start = time.perf_counter()
    rows = run_grid(cells, scale=args.scale, workers=args.workers)
    wall = time.perf_counter() - start
    table = markdown(rows)
    failed = [r for r in rows if r["kind"] != "uncertified" and not r["ok"]]
    cpu = sum(r["seconds"] for r in rows)
    summary = f"{len(rows)} rows, {len(failed)} failing; {wall:.0f} s wall, {cpu:.0f} s CPU (cells)"
    print(table + "\n\n" + summary)
    if args.markdown is not None:
        args.markdown.write_text(table + "\n\n" + summary + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
