"""Parameter sweeps: run an experiment over a grid of one parameter, many seeded replicates each.

An *experiment* is any callable ``experiment(value, rng, **fixed)`` returning a
non-negative error (excess risk, squared gradient norm, gradient count, ...)
for the parameter set to ``value``.  It may also return a vector of errors (a
batch of independent trials run in one vectorised call): the sweep then records
their **mean** as that replicate's error, because rate claims bound an
*expected* error; the batch size is kept in :attr:`SweepResult.batch`.

Replicate ``r`` of grid value index ``i`` always draws from
``numpy.random.default_rng(child_seed(seed, i, r))``, so a sweep is reproducible
from its seed and identical on every backend and worker count.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import (
    DPClaimsError,
    InputError,
    MechanismError,
    called_exit,
    check_trials,
)
from ..execution import (
    DEFAULT_EXECUTION,
    Execution,
    check_execution,
    child_seed,
    resolve_workers,
    session,
)
from .grid import check_grid

__all__ = ["BYTES_PER_CELL", "SweepResult", "check_sweep_size", "sweep"]

BYTES_PER_CELL = 8 * (400 + 8)
"""Memory of one (grid value, replicate) cell: its error and its share of the fit, whose
whole-replicate bootstrap (400 resamples) holds a (G, 400, R) array, plus a few (G, R) copies."""


def check_sweep_size(values: int, replicates: int) -> None:
    """Refuse a sweep of ``values`` grid values × ``replicates`` whose errors and fit would need
    more than the memory limit (:class:`~dpclaims.resources.Limits`: half the physical memory),
    before any cell runs."""
    from ..resources import Limits, describe_bytes

    limit = Limits.checked().max_memory
    need = float(values) * replicates * BYTES_PER_CELL
    if need > limit:
        fits = max(int(limit // (values * BYTES_PER_CELL)), 0)
        raise InputError(
            f"a sweep of {values:_} values x {replicates:_} replicates would need about "
            f"{describe_bytes(need)} of memory for its errors and their fit, over the limit "
            f"({describe_bytes(limit)}, half the memory); with {values:_} values at most "
            f"{fits:_} replicates fit: pass fewer values or replicates "
            "(values=/replicates=, or --values/--replicates)"
        )


@dataclass(frozen=True)
class SweepResult:
    """Errors of a sweep, tidy: one row per grid value, one column per replicate.

    Attributes
    ----------
    param : name of the swept parameter
    values : array (G,), the grid in the order it was given
    errors : array (G, R), ``errors[i, r]`` = error of replicate r at ``values[i]``
    seed : the experiment seed
    batch : errors averaged into each replicate (1 when the experiment returns a scalar)
    wall_time : seconds the sweep took
    fixed : the other keyword arguments passed to the experiment
    """

    param: str
    values: np.ndarray
    errors: np.ndarray
    seed: int
    batch: int
    wall_time: float
    fixed: dict = field(default_factory=dict)

    @property
    def replicates(self) -> int:
        """Replicates per grid value, R."""
        return int(self.errors.shape[1])

    def fit(
        self,
        *,
        confidence: float = 0.95,
        method: str = "logs",
        groups: int | None = None,
        bootstrap: int = 400,
        drift_alpha: float = 0.01,
        seed: int = 0,
    ):
        """:func:`~dpclaims.rates.fit.fit_power_law` of these errors against the grid, with its
        options."""
        from .fit import fit_power_law

        return fit_power_law(
            self.values, self.errors, confidence=confidence, method=method, groups=groups,
            bootstrap=bootstrap, drift_alpha=drift_alpha, seed=seed,
        )  # fmt: skip

    def to_dict(self) -> dict:
        """JSON-serialisable summary (values and errors as nested lists)."""
        return {
            "param": self.param,
            "values": self.values.tolist(),
            "errors": self.errors.tolist(),
            "replicates": self.replicates,
            "seed": self.seed,
            "batch": self.batch,
            "wall_time": float(self.wall_time),
            "fixed": {str(k): _plain(v) for k, v in self.fixed.items()},
        }


def _plain(value: Any) -> Any:
    """A JSON-safe stand-in for a fixed experiment argument."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return repr(value)


def _run_cell(
    experiment: Callable,
    param: str,
    value: Any,
    seed: int,
    index: int,
    replicates: Sequence[int],
    fixed: Mapping,
) -> np.ndarray:
    """Errors (len(replicates), batch) of ``experiment`` at one grid value."""
    rows = []
    for r in replicates:
        rng = np.random.default_rng(child_seed(seed, index, r))
        where = f"at {param}={value!r} (replicate {r})"
        try:
            raw = experiment(value, rng, **fixed)
        except DPClaimsError:
            raise
        except SystemExit as exc:
            fix = f"an experiment must return its error ({where})"
            raise MechanismError(called_exit(exc, "the experiment", fix)) from None
        except Exception as exc:
            raise MechanismError(
                f"the experiment raised {type(exc).__name__}: {exc} {where}"
            ) from exc
        try:
            arr = np.asarray(raw, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise MechanismError(
                f"the experiment returned {type(raw).__name__}, not a number or array of numbers, "
                f"{where}"
            ) from None
        if arr.size == 0:
            raise MechanismError(
                f"the experiment returned an empty array {where}; return an error >= 0"
            )
        if not np.all(np.isfinite(arr)):
            raise MechanismError(
                f"the experiment returned NaN or infinite error(s) {where}; errors must be finite"
            )
        if np.any(arr < 0):
            raise MechanismError(
                f"the experiment returned a negative error ({arr.min():g}) {where}; return a "
                "non-negative error such as excess risk, a squared gradient norm or a count"
            )
        if rows and arr.size != rows[0].size:
            raise MechanismError(
                f"the experiment returned {arr.size} errors {where} but {rows[0].size} before; "
                "keep the batch size fixed"
            )
        rows.append(arr)
    return np.stack(rows)


def sweep(
    experiment: Callable,
    param: str = "n",
    values: Sequence[float] = (),
    *,
    replicates: int = 10,
    seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
    execution: Execution = DEFAULT_EXECUTION,
) -> SweepResult:
    """Run ``experiment(value, rng, **fixed)`` for every grid value and replicate.

    Parameters
    ----------
    experiment : callable ``(value, rng, **fixed) -> error >= 0`` or ``-> array (batch,)`` of errors
        (averaged per replicate); must be picklable (module-level) for the process backend
    param : name of the swept parameter (for reports)
    values : the grid (G,), >= 4 distinct positive values over >= 1 decade; whole-number
        arrays (e.g. from ``geometric_grid(..., integer=True)``) are passed to the experiment as
        ``int``
    replicates : independent runs per grid value, R >= 2
    seed : non-negative integer; replicate r of value index i uses ``child_seed(seed, i, r)``
    fixed : other keyword arguments of the experiment (d, epsilon, ...)
    execution : where the cells run (:class:`~dpclaims.execution.Execution`); the errors do not
        depend on it.  With a checkpoint folder every finished (grid value, replicate) is saved
        there and a rerun with the same arguments resumes (see :mod:`dpclaims.checkpoint`)

    Returns
    -------
    SweepResult with ``errors`` of shape (G, R), identical for every backend and worker count.
    """
    if not callable(experiment):
        raise InputError(
            "experiment must be callable as experiment(value, rng, **fixed), got "
            f"{type(experiment).__name__}"
        )
    if not isinstance(param, str) or not param:
        raise InputError(
            f"param must be a non-empty string naming the swept parameter, got {param!r}; pass "
            "e.g. param='n'"
        )
    raw_values = np.asarray(values)
    grid = check_grid(values, "values")
    integral = raw_values.dtype.kind in "iu"
    replicates = check_trials(replicates, "replicates", minimum=2)
    check_sweep_size(grid.size, replicates)
    child_seed(seed)  # validates the seed
    if fixed is None:
        fixed = {}
    if not isinstance(fixed, Mapping) or not all(isinstance(k, str) for k in fixed):
        raise InputError(
            f"fixed must be a dict of keyword arguments for the experiment, got {fixed!r}; pass "
            f"e.g. fixed={{'d': 10}}"
        )
    if param in fixed:
        raise InputError(
            f"fixed contains the swept parameter {param!r}; remove it from fixed (the sweep sets "
            "it)"
        )
    checkpoint = check_execution(execution).checkpoint
    n_workers = resolve_workers(execution.workers)

    if checkpoint is None:
        per_task = max(1, min(replicates, math.ceil(grid.size * replicates / (4 * n_workers))))
    else:
        per_task = (
            1  # one file per (value, replicate): a layout that does not depend on the workers
        )
    chunks = [
        tuple(range(r, min(r + per_task, replicates))) for r in range(0, replicates, per_task)
    ]
    cells = [(i, chunk) for i in range(grid.size) for chunk in chunks]
    tasks = [
        (
            experiment,
            param,
            int(raw_values[i]) if integral else float(grid[i]),
            seed,
            i,
            chunk,
            dict(fixed),
        )
        for i, chunk in cells
    ]
    stage = None
    if checkpoint is not None:
        from ..checkpoint import fingerprint, open_checkpoint

        stage = open_checkpoint(
            checkpoint,
            {
                "kind": "sweep",
                "experiment": fingerprint(experiment),
                "param": param,
                "values": grid.tolist(),
                "integral": bool(integral),
                "replicates": replicates,
                "seed": int(seed),
                "fixed": fingerprint(dict(fixed)),
            },
        ).stage("cells")
    start = time.perf_counter()
    probe = (experiment, tasks[:1])
    with session(execution, tasks=len(tasks), probe=probe) as runner:
        parts = runner.map(_run_cell, tasks, stage)
    wall = time.perf_counter() - start
    batches = {p.shape[1] for p in parts}
    if len(batches) > 1:
        raise MechanismError(
            "the experiment returned batches of different sizes across grid values: "
            f"{sorted(batches)}"
        )
    per_value = len(chunks)
    errors = np.stack(
        [
            np.concatenate(parts[i * per_value : (i + 1) * per_value]).mean(axis=1)
            for i in range(grid.size)
        ]
    )
    return SweepResult(
        param=param,
        values=raw_values.astype(np.int64) if integral else grid,
        errors=errors,
        seed=int(seed),
        batch=batches.pop(),
        wall_time=wall,
        fixed=dict(fixed),
    )
