"""DIFF2's experiment (paper §6 and App. A; spec 004 §6): DIFF2-GD vs DP-GD vs non-private GD.

The experiment protocol behind the claim ``experiments.regression`` (declared in
:mod:`dpclaims.claims.tables.murata_suzuki_2023`).  One *task* is a (seed, method, configuration)
cell of App.
A's grid: it walks the η ladder from the largest η down with the paper's early stopping and keeps
the curves of the first η that survives all R rounds.  Tasks are independent (their random streams
are keyed by the cell), so they run on any backend and worker count with the same numbers, and a
checkpoint directory keeps each finished cell, so a long run resumes where it stopped.
:meth:`Section6.summarize` then applies App. A's selection and the paper's one-sided paired t-test,
and :func:`section6_verdict` decides the claim.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from dpclaims.algorithms.murata_suzuki_2023 import DIFF2GD, DPGD, EXPERIMENT_U
from dpclaims.errors import (
    InputError,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from dpclaims.execution import Execution, map_tasks
from dpclaims.hardinstances.murata_suzuki_2023 import (
    REAL_DATASETS,
    STANDINS,
    RegressionSplit,
    regression_real,
    regression_standin,
)
from dpclaims.problem import Problem
from dpclaims.stats import holm, paired_pvalue

__all__ = [
    "ALGORITHMS",
    "CURVES",
    "SIGNIFICANCE",
    "PAPER_GRID",
    "STANDIN_GRID",
    "ETA_LADDER",
    "HEADROOM",
    "Section6",
    "section6_verdict",
]

ALGORITHMS = ("gd", "dp-gd", "diff2-gd")
"""Non-private GD (the paper's "GD (ref)"), DP-GD and DIFF2-GD."""

CURVES = ("train", "grad", "test")
"""Train loss, squared train gradient norm, test loss (paper §6 "Evaluation")."""

SIGNIFICANCE = 0.05
"""Level of the paper's one-sided paired t-tests (§6)."""

PAPER_GRID = {"clips": (1.0, 3.0, 10.0, 30.0, 100.0), "period_fractions": (0.003, 0.01, 0.03, 0.1)}
"""App. A: C1 (and C2 for DIFF2-GD) ∈ {1, 3, 10, 30, 100}, T ∈ {0.003R, 0.01R, 0.03R, 0.1R}."""

STANDIN_GRID = {"clips": (1.0, 10.0, 100.0), "period_fractions": (0.01, 0.03, 0.1)}
"""Spec 004 §6.6's reduced grid for the offline stand-ins: C ∈ {1, 10, 100}, T ∈ {20, 60, 200} at R
= 2000."""

ETA_LADDER = tuple(0.5**i for i in range(10))
"""App. A: η ∈ {0.5^i : i = 0..9}, tried from the largest down."""

PATIENCE, TOLERANCE = 5, 1.05
"""App. A's early stopping: give up an η when the train loss exceeds 1.05× the best so far 5
times."""

OVERFLOW = 1e6
"""[DEFAULT, ours] a train loss above this counts as NaN (the targets are scaled to |y| ≤ 1, so a
loss this large has diverged; waiting for float overflow would only spend rounds)."""


class _Rejected(Exception):
    """App. A's early stopping rejected the learning rate."""


DEFAULT_EXECUTION = Execution()


@dataclass(frozen=True)
class Section6:
    """The §6 comparison on one stand-in
    (:data:`~dpclaims.hardinstances.murata_suzuki_2023.STANDINS`) or real set
    (:data:`~dpclaims.hardinstances.murata_suzuki_2023.REAL_DATASETS`, needs scikit-learn).

    Defaults are the paper's settings: ε = 5 (App. A, Fig. 2), δ = 1e-5, R = 2000, 5 seeds, the
    whole App. A grid, train loss checked every 20 rounds.  ``samples`` shrinks a stand-in (None:
    full size).
    """

    name: str = "california_like"
    epsilon: float = 5.0
    delta: float = 1e-5
    rounds: int = 2000
    seeds: int = 5
    samples: int | None = None
    clips: tuple[float, ...] = PAPER_GRID["clips"]
    period_fractions: tuple[float, ...] = PAPER_GRID["period_fractions"]
    etas: tuple[float, ...] = ETA_LADDER
    every: int = 20
    seed: int = 0
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice(self.name, tuple(STANDINS) + tuple(REAL_DATASETS), "name")
        if self.name in REAL_DATASETS and self.samples is not None:
            raise InputError(
                f"samples shrinks the stand-ins only; leave it None for the real set {self.name!r}"
            )
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        for key, low in (("rounds", 1), ("seeds", 1), ("every", 1), ("seed", 0)):
            object.__setattr__(self, key, check_count(getattr(self, key), key, minimum=low))
        if self.seeds < 2:
            raise InputError(
                "seeds must be >= 2: the paper's paired t-test needs at least two seeds"
            )
        for key in ("clips", "period_fractions", "etas"):
            values = getattr(self, key)
            if not values:
                raise InputError(f"{key} must be a non-empty tuple of positive numbers")
            for v in values:
                check_positive(v, f"{key} entries")

    def settings(self) -> dict:
        """The settings as plain JSON values (what a checkpoint is keyed by)."""
        return json.loads(
            json.dumps({f.name: getattr(self, f.name) for f in fields(self) if f.init})
        )

    # ------------------------------------------------------------------ the grid

    def configs(self, method: str) -> list[tuple[float | None, float | None, int]]:
        """App. A's grid for ``method`` as ``(C1, C2, T)``: GD has one cell, DP-GD has T = 1."""
        check_choice(method, ALGORITHMS, "method")
        if method == "gd":
            return [(None, None, 1)]
        if method == "dp-gd":
            return [(c1, None, 1) for c1 in self.clips]
        periods = sorted({max(1, round(f * self.rounds)) for f in self.period_fractions})
        return [(c1, c2, t) for c1 in self.clips for c2 in self.clips for t in periods]

    def tasks(self) -> list[tuple[int, str, int]]:
        """Every cell ``(seed index, method, configuration index)``."""
        return [
            (s, method, i)
            for s in range(self.seeds)
            for method in ALGORITHMS
            for i in range(len(self.configs(method)))
        ]

    def split(self, s: int) -> RegressionSplit:
        """Repetition ``s``'s split of the dataset (a stand-in is drawn from ``seed`` alone, as the
        paper repeats its runs on one dataset; the 80/20 split and silos vary with ``s``; cached per
        process)."""
        if s not in self._cache:
            self._cache.clear()
            split_rng = np.random.default_rng([self.seed, s])
            self._cache[s] = (
                regression_real(self.name, split_rng)
                if self.name in REAL_DATASETS
                else regression_standin(
                    self.name,
                    np.random.default_rng(self.seed),
                    samples=self.samples,
                    split_rng=split_rng,
                )
            )
        return self._cache[s]

    # ------------------------------------------------------------------ one cell

    def run_task(self, s: int, method: str, index: int) -> dict | None:
        """Walk the η ladder for one cell: ``{"eta", "config", "curves": {metric: list (R/every +
        1)}}``, or None when every η is rejected."""
        split = self.split(s)
        net = split.model
        x0 = net.init(np.random.default_rng([self.seed, s, 1]), 1)[0]
        rng = np.random.default_rng([self.seed, s, 2 + ALGORITHMS.index(method), index])
        c1, c2, period = self.configs(method)[index]
        for eta in self.etas:
            curves = _Curves(split, self.every)
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    curves(0, x0[None])
                    if method == "gd":
                        _gradient_descent(split, x0=x0, eta=eta, rounds=self.rounds, monitor=curves)
                    else:
                        algorithm = self._algorithm(
                            method, split=split, x0=x0, eta=eta, clips=(c1, c2), period=period
                        )
                        algorithm.run(split.train, rng, 1, monitor=curves)
            except _Rejected:
                continue
            return {"eta": eta, "config": [c1, c2, period], "curves": curves.values}
        return None

    def _algorithm(self, method, *, split, x0, eta, clips, period):
        """DP-GD (Prop. 4.1 with T = 1, u → 1) or DIFF2-GD (Prop. 4.1 with u = 1.25), as in paper
        §6, with clipping radii ``clips = (C1, C2)`` (C2 None for DP-GD, where L = 1 is unused)."""
        c1, c2 = clips
        problem = Problem(
            n=split.train.n,
            m=split.train.m,
            d=split.model.d,
            epsilon=self.epsilon,
            delta=self.delta,
            lipschitz=c1,
            smoothness=1.0 if method == "dp-gd" else c2,
            loss=split.model,
        )
        common = dict(initial_gap=1.0, x0=x0, rounds=self.rounds, eta=eta, clip1=c1)
        if method == "dp-gd":
            return DPGD.from_theorem(problem, **common)
        return DIFF2GD.from_theorem(problem, period=period, clip2=c2, u=EXPERIMENT_U, **common)

    # ------------------------------------------------------------------ the whole run

    def run(self, *, execution: Execution = DEFAULT_EXECUTION) -> dict:
        """Run every cell where ``execution`` says, resuming from its ``checkpoint`` folder when
        given, and summarize."""
        checkpoint = execution.checkpoint
        directory = None if checkpoint is None else _open_checkpoint(Path(checkpoint), self)
        tasks = self.tasks()
        done = {} if directory is None else _load(directory)
        todo = [t for t in tasks if _key(*t) not in done]
        cells = [(self, *t, directory) for t in todo]
        fresh = map_tasks(_run_cell, cells, execution) if todo else []
        done.update({_key(*t): r for t, r in zip(todo, fresh, strict=True)})
        return self.summarize({t: done[_key(*t)] for t in tasks})

    def summarize_finished(self, checkpoint: str | Path) -> dict:
        """The summary of a stopped run: over the leading seeds whose cells are all in
        ``checkpoint`` (``setup["seeds"]`` says how many; at least two, for the paired t-test)."""
        directory = Path(checkpoint)
        if not (directory / "manifest.json").is_file():
            raise InputError(
                f"checkpoint {directory} holds no §6 run (no manifest.json); pass the directory "
                "given "
                "to run(checkpoint=...)"
            )
        done = _load(_open_checkpoint(directory, self))
        finished = 0
        while finished < self.seeds and all(
            _key(*t) in done for t in self.tasks() if t[0] == finished
        ):
            finished += 1
        if finished < 2:
            raise InputError(
                f"checkpoint {directory} has {finished} finished seed(s); the paired t-test "
                "needs 2 "
                "(resume the run with run(checkpoint=...))"
            )
        part = replace(self, seeds=finished)
        return part.summarize({t: done[_key(*t)] for t in part.tasks()})

    def summarize(self, cells: dict) -> dict:
        """App. A's selection and the paper's test from ``{(s, method, index): run_task(...)}``.

        Per seed and method: the train-loss and gradient-norm curves come from the cell minimising
        that criterion (min over rounds), the test-loss curve from the train-loss cell.  Per metric:
        the one-sided paired t-test of the per-seed minima (H1: DIFF2-GD lower; df = seeds − 1), the
        reverse test (H1: DP-GD lower) and ``wins`` = DIFF2-GD's mean lower and p <
        :data:`SIGNIFICANCE`. Curves are mean and std over seeds.
        """
        per_seed = {method: [] for method in ALGORITHMS}
        for s in range(self.seeds):
            for method in ALGORITHMS:
                runs = [cells[(s, method, i)] for i in range(len(self.configs(method)))]
                runs = [r for r in runs if r is not None]
                if not runs:
                    per_seed[method].append(None)
                    continue
                by_train = min(runs, key=lambda r: min(r["curves"]["train"]))
                by_grad = min(runs, key=lambda r: min(r["curves"]["grad"]))
                chosen = {"train": by_train, "grad": by_grad, "test": by_train}
                per_seed[method].append(
                    {
                        metric: {
                            "min": float(min(run["curves"][metric])),
                            "eta": run["eta"],
                            "config": run["config"],
                            "curve": run["curves"][metric],
                        }
                        for metric, run in chosen.items()
                    }
                )
        out = {
            "setup": self.settings(),
            "rounds_axis": list(range(0, self.rounds + 1, self.every)),
            "per_seed": per_seed,
            "tests": {},
            "curves": {},
        }
        for metric in CURVES:
            minima = {
                m: np.array([r[metric]["min"] if r else np.inf for r in per_seed[m]])
                for m in ALGORITHMS
            }
            a, b = minima["diff2-gd"], minima["dp-gd"]
            finite = bool(np.isfinite(a).all() and np.isfinite(b).all())
            p = paired_pvalue(a, b) if finite else math.nan
            reverse = paired_pvalue(b, a) if finite else math.nan
            out["tests"][metric] = {
                "diff2_mean": float(a.mean()),
                "dpgd_mean": float(b.mean()),
                "gd_mean": float(minima["gd"].mean()),
                "pvalue": p,
                "reverse_pvalue": reverse,
                "wins": bool(finite and a.mean() < b.mean() and p < SIGNIFICANCE),
            }
            out["curves"][metric] = {}
            for m in ALGORITHMS:
                rows = [r[metric]["curve"] for r in per_seed[m] if r]
                if rows:
                    c = np.array(rows)
                    out["curves"][metric][m] = {
                        "mean": c.mean(axis=0).tolist(),
                        "std": c.std(axis=0).tolist(),
                    }
        return out


# --------------------------------------------------------------------------- monitoring and plain
# GD


class _EarlyStopping:
    """App. A's rule for one learning rate: :meth:`update` raises :class:`_Rejected` when the train
    loss is NaN (or above :data:`OVERFLOW`) or when the patience count reaches :data:`PATIENCE`; the
    count goes up when the loss exceeds :data:`TOLERANCE` × the best so far and is reset when the
    loss improves."""

    def __init__(self) -> None:
        self.best, self.patience = math.inf, 0

    def update(self, loss: float) -> None:
        if not loss <= OVERFLOW:
            raise _Rejected
        if loss < self.best:
            self.best, self.patience = loss, 0
        elif loss > TOLERANCE * self.best:
            self.patience += 1
            if self.patience >= PATIENCE:
                raise _Rejected


class _Curves:
    """App. A's monitor: every ``every`` rounds record train loss, squared train gradient norm and
    test loss of the current point, applying :class:`_EarlyStopping` to the train loss."""

    def __init__(self, split: RegressionSplit, every: int) -> None:
        self.net, self.every = split.model, every
        data = split.train
        self.x, self.y = data.x.reshape(-1, data.d), data.y.reshape(-1)
        self.test = (split.test_x, split.test_y)
        self.stopping = _EarlyStopping()
        self.values = {metric: [] for metric in CURVES}

    def __call__(self, r: int, theta: np.ndarray) -> None:
        theta = theta[:1]
        if not np.isfinite(theta).all():  # the loss at the next check would be NaN; stop now
            raise _Rejected
        if r % self.every:
            return
        loss = float(self.net.value(theta, self.x, self.y).mean())
        self.stopping.update(loss)
        self.values["train"].append(loss)
        self.values["grad"].append(
            float(np.sum(_mean_gradient(self.net, theta, self.x, self.y) ** 2))
        )
        self.values["test"].append(float(self.net.value(theta, *self.test).mean()))


def _mean_gradient(net, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``∇F(θ) = (1/B)Σ_b ∇ℓ(θ; x_b, y_b)``: ``theta (1, d)`` → ``(1, d)``."""
    return net.sum_factors(net.grad_factors(theta, x, y) / len(x), x)


def _gradient_descent(
    split: RegressionSplit, *, x0: np.ndarray, eta: float, rounds: int, monitor
) -> None:
    """Non-private full-batch GD on the pooled training data (the paper's "GD (ref)")."""
    data, net = split.train, split.model
    x, y = data.x.reshape(-1, data.d), data.y.reshape(-1)
    theta = x0[None].copy()
    for r in range(1, rounds + 1):
        theta = theta - eta * _mean_gradient(net, theta, x, y)
        monitor(r, theta)


# --------------------------------------------------------------------------- tasks and checkpoints


def _key(s: int, method: str, index: int) -> str:
    return f"{s}-{method}-{index}"


def _run_cell(
    setup: Section6, s: int, method: str, index: int, directory: Path | None
) -> dict | None:
    result = setup.run_task(s, method, index)
    if directory is not None:
        tmp = directory / f".{_key(s, method, index)}.tmp"
        tmp.write_text(json.dumps(result))
        tmp.replace(directory / f"{_key(s, method, index)}.json")
    return result


def _open_checkpoint(directory: Path, setup: Section6) -> Path:
    """Create ``directory`` with a manifest of ``setup``, or check that an existing one matches."""
    manifest = setup.settings()
    path = directory / "manifest.json"
    if path.exists():
        if json.loads(path.read_text()) != manifest:
            raise InputError(
                f"checkpoint {directory} was written for different settings; pass a new directory "
                "or delete it to start over"
            )
    else:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, indent=1))
    return directory


def _load(directory: Path) -> dict:
    cells = {}
    for path in directory.glob("*-*-*.json"):
        try:
            cells[path.stem] = json.loads(path.read_text())
        except ValueError as exc:
            raise InputError(
                f"checkpoint cell '{path}' is corrupt ({type(exc).__name__}); delete it "
                "(the cell is "
                "recomputed) or pass a new checkpoint directory"
            ) from None
    return cells


# --------------------------------------------------------------------------- the verdict


HEADROOM = 0.8
"""The §6 claim is testable when non-private GD's mean train loss is below HEADROOM × DP-GD's (the
paper's regime: privacy costs accuracy); otherwise an 'inconsistent' comparison is reported as
inconclusive."""


def section6_verdict(tests: dict, alpha: float = SIGNIFICANCE) -> tuple[str, dict]:
    """Verdict on "DIFF2-GD beats DP-GD on every metric" from :meth:`Section6.summarize`'s
    ``tests``.

    consistent: DIFF2-GD lower with one-sided paired p < α on every metric (an intersection-union
    test, level α without correction); inconsistent: DP-GD lower on some metric, reverse p-values
    Holm-adjusted over the metrics < α (family-wise false alarm ≤ α); otherwise inconclusive.
    Returns the verdict and one check per metric.
    """
    reverse = holm([t["reverse_pvalue"] for t in tests.values()])
    checks = {}
    for (metric, t), r in zip(tests.items(), reverse, strict=True):
        won = bool(t["diff2_mean"] < t["dpgd_mean"] and t["pvalue"] < alpha)  # NaN p: not won
        checks[f"{metric}_diff2_wins"] = {
            "value": float(won),
            "expected": 1.0,
            "ok": won,
            **{k: t[k] for k in ("pvalue", "reverse_pvalue", "diff2_mean", "dpgd_mean")},
            "reverse_pvalue_holm": float(r),
        }
    if all(c["ok"] for c in checks.values()):
        return "consistent", checks
    return ("inconsistent" if (reverse < alpha).any() else "inconclusive"), checks
