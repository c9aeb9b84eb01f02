"""Lowy, Liu & Asi (2024), "Faster Algorithms for User-Level Private SCO" — spec 000.

* :class:`Algorithm1` — linear-time user-level DP phased SGD with outlier-iterate removal
  and Gaussian output perturbation (Alg. 1, Thm 2.1 / B.1).
* :class:`Algorithm2` — one phase of user-level DP accelerated minibatch SGD (AC-SA) with
  per-step outlier-gradient removal gated by AboveThreshold (Alg. 2; threshold noise drawn
  **once** per call, spec §7(d) item 7).
* :class:`Algorithm3` — accelerated phased ERM with iterative localization, calling
  Algorithm 2 once per phase (Alg. 3, Thm 3.1/3.2, C.1/C.3).
* :class:`SmoothedAlgorithm3` — Algorithm 3 on the uniform-ball smoothed loss (Thm 4.1 / D.3).
* :class:`StronglyConvexAlgorithm3` — **not from the paper**: the localization wrapper spec
  §2.5 proposes for Remark 3.6.
* :func:`user_level_dpsgd`, :func:`item_level_dpsgd` — the baselines, configured
  :class:`~dpclaims.algorithms.baselines.DPSGD`.

Constants: ``constants="paper"`` uses every printed constant (privacy audits, formula tests);
``constants="relaxed"`` uses the spec §2.6 laptop-scale constants for rate tests — **not covered
by the paper's privacy theorem** (its :attr:`privacy_claim` raises).  ``noise_mult = 0`` is a
non-private diagnostic of the optimizer (spec §2.6), also without a privacy claim.
Logs are natural (spec §0).  Rounding: C, T_i, K_i up; n_i, N_i down, then n_i = N_i·C (Alg. 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..data import UserDataset
from ..errors import InputError, check_choice, check_delta, check_epsilon, check_trials
from ..losses import LinearLoss
from ..privacy import PrivacyClaim
from .baselines import DPSGD
from .lowy_liu_asi_core import (
    MEAN_SUFFICIENT,
    MEMORY_BUDGET,
    acsa_coefficients,
    check_loss,
    concentration,
    distinct_users,
    keep_probability,
    ln,
    paired_grad,
    uniform_ball,
    user_gradients,
)

__all__ = [
    "PAPER_ID",
    "CONSTANTS",
    "PARTITIONS",
    "SAMPLINGS",
    "EPSILON_MAX",
    "DEFAULT_Q",
    "ALG1_MUTANTS",
    "ALG2_MUTANTS",
    "Algorithm1",
    "Algorithm1Run",
    "Algorithm2",
    "Algorithm2Run",
    "Algorithm3",
    "Algorithm3Run",
    "SmoothedAlgorithm3",
    "StronglyConvexAlgorithm3",
    "alg1_schedule",
    "alg3_schedule",
    "alg3_tau",
    "alg3_gradient_count",
    "user_level_dpsgd",
    "item_level_dpsgd",
    "AUDIT_EPSILON",
    "q1_cluster_size",
    "alg1_audit",
    "alg2_audit",
    "alg3_audit",
    "HaltIndicator",
    "HaltingStep",
]

PAPER_ID = "lowy-liu-asi-2024"
CONSTANTS = ("paper", "relaxed")
PARTITIONS = ("random", "index")
SAMPLINGS = ("without", "with")
EPSILON_MAX = 10.0
"""Largest ε the theorems allow (Thm 2.1, 3.1, 4.1: ε ≤ 10)."""

DEFAULT_Q = 0.5
"""Phase-size exponent q [DEFAULT, spec §2.2/§2.3]; the paper only asks for q > 0 small."""

ALG1_PAPER_TAU = 1000.0
"""Alg. 1 line 4: τ_i = 1000·η_i·L·√T_i·ln(ndm)."""

ALG1_PAPER_SIGMA = 100.0
"""Alg. 1 line 22: σ_i = 100·τ_i·ln²(n/δ)/(εC)."""

ALG1_SCORE_LAPLACE = 20.0
"""Alg. 1 line 10: ŝ_i = s_i + Lap(20/ε)."""

ALG2_THRESHOLD_LAPLACE = 8.0
"""Alg. 2 line 4: Δ̂ = 4K/5 + Lap(8/ε) (drawn once per call)."""

ALG2_QUERY_LAPLACE = 16.0
"""Alg. 2 line 6: ŝ_t = s_t + Lap(16/ε), fresh each step."""

ALG2_PAPER_SIGMA = 1000.0
"""Alg. 2 line 14: σ_i = 1000·τ·√T_i·ln(nde^ε/δ)/(εn_i)."""

ALG3_PAPER_K = 500.0
"""Alg. 3 line 4: K_i = 500·ln(n_i²m²e^ε/δ)(1/ε + n_iε/√(T_i ln(1/δ)))."""

ALG3_KMIN = 320.0
"""[DERIVED] spec §2.3: a phase needs K_i ≥ 320·ln(20T_ie^ε/δ)/ε (Laplace-tail event); else it is skipped."""

RELAXED_K = 120.0
"""Relaxed K_i = min(n_i, ⌈120·ln(20T_i l n m)/ε + n_iε/√T_i⌉) and phase floor (spec §2.6)."""

ACSA_STAGE = 4.0
"""Multi-stage AC-SA [DEFAULT, spec §2.1 P-d]: N_s = ⌈4√(L_f/λ)⌉ iterations per stage."""

ALG1_MUTANTS = (
    "no-filter",
    "item-sigma",
    "unnormalised-score",
    "no-test",
    "laplace-2",
    "reuse-users",
    "leaky-halt",
)
"""Known-buggy variants of Algorithm 1 (spec §7(c) M1–M5); see :mod:`dpclaims.algorithms.mutants.lowy_liu_asi`."""

ALG2_MUTANTS = (
    "no-filter",
    "item-sigma",
    "unnormalised-score",
    "no-test",
    "threshold-per-step",
    "reuse-users",
    "leaky-halt",
    "sigma-sqrt-n",
)
"""Known-buggy variants of Algorithms 2/3 (spec §7(c) M1–M5 and the §7(b) noise-calibration mutant)."""


# --------------------------------------------------------------------------- argument checks


def _count(value: Any, name: str, minimum: int = 1) -> int:
    return check_trials(value, name, minimum=minimum)


def _positive(value: Any, name: str, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise InputError(
            f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, got {value!r}"
        )
    return float(value)


def _privacy_args(epsilon: Any, delta: Any) -> tuple[float, float]:
    epsilon = check_epsilon(epsilon)
    if epsilon > EPSILON_MAX:
        raise InputError(
            f"epsilon must be <= {EPSILON_MAX:g} (the theorems assume eps <= 10), got {epsilon!r}"
        )
    delta = check_delta(delta)
    if delta == 0:
        raise InputError(
            "delta must be in (0, 1): the paper proves approximate (eps, delta)-DP; pass e.g. delta=1e-6"
        )
    return epsilon, delta


def _vector(value: Any, d: int, name: str) -> tuple[float, ...]:
    if value is None:
        return (0.0,) * d
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.size == 1 and d > 1:
        arr = np.full(d, float(arr[0]))
    if arr.size != d or not np.all(np.isfinite(arr)):
        raise InputError(
            f"{name} must be a finite vector of length d = {d} (or a scalar), got {value!r}"
        )
    return tuple(float(v) for v in arr)


def _check_data(data: Any, d: int, n: int) -> UserDataset:
    if not isinstance(data, UserDataset):
        raise InputError(f"data must be a UserDataset, got {type(data).__name__}")
    if data.d != d:
        raise InputError(
            f"data has d = {data.d} features but the algorithm was built for d = {d}; rebuild with from_theorem(d={data.d})"
        )
    if data.n < n:
        raise InputError(
            f"data has {data.n} users but the algorithm was built for n = {n}; rebuild with from_theorem(n={data.n})"
        )
    return data


def _project(theta: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Π onto ``B(center, radius)`` (spec P-a); ``center`` (d,) or (T, d); radius inf = identity."""
    if math.isinf(radius):
        return theta
    diff = theta - center
    norm = np.linalg.norm(diff, axis=-1, keepdims=True)
    with np.errstate(over="ignore", divide="ignore"):
        factor = np.minimum(1.0, radius / norm)
    return center + diff * factor


def _trial_chunk(trials: int, per_trial_floats: float) -> int:
    return max(1, min(trials, int(MEMORY_BUDGET // (8 * max(per_trial_floats, 1.0)))))


def _partition(rng: np.random.Generator, trials: int, n: int, partition: str) -> np.ndarray:
    """A data-independent user order per trial (Alg. 1 line 5 / Alg. 3 line 5): ``(T, n)``."""
    if partition == "index":
        return np.broadcast_to(np.arange(n), (trials, n))
    return np.argsort(rng.random((trials, n)), axis=1)


def _lookup(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``table[rows]``, kept a broadcast view when every row of ``rows`` is the same."""
    if rows.shape[0] > 1 and rows.strides[0] == 0:
        return np.broadcast_to(table[rows[0]], rows.shape + table.shape[1:])
    return table[rows]


def _counts(index_rows: np.ndarray, size: int) -> np.ndarray:
    """Per-row histogram of integer ids ``(T, k)`` in ``[0, size)`` → ``(T, size)``."""
    t = index_rows.shape[0]
    if t > 1 and index_rows.strides[0] == 0:  # the same row for every trial (index partition)
        return np.broadcast_to(np.bincount(index_rows[0], minlength=size), (t, size))
    flat = (np.arange(t)[:, None] * size + index_rows).reshape(-1)
    return np.bincount(flat, minlength=t * size).reshape(t, size)


# --------------------------------------------------------------------------- Algorithm 1


def alg1_schedule(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    delta: float,
    lipschitz: float,
    eta: float,
    p: float,
    q: float,
    constants: str,
    tau_const: float | None = None,
    mutant: str | None = None,
) -> dict:
    """Phase schedule of Algorithm 1 (line 2, 4 and 22), data-free.

    Returns a dict with ``C``, ``levels`` and per-phase lists ``n_i`` (= N_i·C users used),
    ``N_i``, ``T_i``, ``eta_i``, ``tau_i``, ``sigma_i``; phases stop at the first ``N_i < 1``
    (spec §2.2 [DEFAULT]).  ``tau_const`` multiplies ``η_i L √T_i`` (default ``1000·ln(ndm)``
    in paper mode, ``1 + √(2 ln(2C²lnm))`` relaxed, spec §2.6).
    """
    levels = int(math.floor(math.log2(n)))
    C = int(math.ceil(100.0 * ln(20.0 * n * m * math.exp(epsilon) / delta) / epsilon))
    if tau_const is None:
        tau_const = (
            ALG1_PAPER_TAU * ln(n * d * m)
            if constants == "paper"
            else 1.0 + math.sqrt(2.0 * ln(2.0 * C * C * max(levels, 1) * n * m))
        )
    out = {
        "C": C,
        "levels": levels,
        "tau_const": float(tau_const),
        "n_i": [],
        "N_i": [],
        "T_i": [],
        "eta_i": [],
        "tau_i": [],
        "sigma_i": [],
    }
    for i in range(1, levels + 1):
        n_i = int(math.floor((1.0 - 2.0 ** (-q)) * n / 2.0 ** (i * q)))
        groups = n_i // C
        if groups < 1:
            break
        steps = groups * m
        eta_i = eta / 2.0 ** (p * i)
        tau_i = tau_const * eta_i * lipschitz * math.sqrt(steps)
        sens = (
            2.0 * eta_i * lipschitz if mutant == "item-sigma" else tau_i
        )  # M2: item-level sensitivity
        if constants == "paper":
            sigma = ALG1_PAPER_SIGMA * sens * ln(n / delta) ** 2 / (epsilon * C)
        else:
            sigma = 4.0 * math.sqrt(2.0 * ln(2.0 / delta)) * sens / (epsilon * C)
        for key, value in (
            ("n_i", groups * C),
            ("N_i", groups),
            ("T_i", steps),
            ("eta_i", eta_i),
            ("tau_i", tau_i),
            ("sigma_i", sigma),
        ):
            out[key].append(value)
    return out


def _paper_privacy_claim(algorithm, source: str) -> PrivacyClaim:
    """(ε, δ)-user-level DP, replace-one-user, for paper constants with full noise; diagnostics carry no claim."""
    if algorithm.constants != "paper" or algorithm.noise_mult < 1.0:
        raise InputError(
            "only constants='paper' with noise_mult >= 1 carries the paper's privacy claim; "
            "relaxed constants and noise_mult < 1 are utility diagnostics (spec §2.6)"
        )
    return PrivacyClaim(algorithm.epsilon, algorithm.delta, "user", "replace", source=source)


@dataclass(frozen=True)
class Algorithm1Run:
    """Outputs of :meth:`Algorithm1.run`.

    theta : (T, d) released output, Π_X(x_l) (post-processing), or 0 after a halt
    unprojected : (T, d) x_l itself (0 after a halt)
    halted : (T,) bool
    gradient_evaluations : (T,) Σ over the phases run of C·T_i = n_i·m
    phase_iterates : (T, P, d) x_i (transcript only; 0 from the halting phase on)
    halt_phase : (T,) 1-based phase of the halt, 0 if none (transcript only)
    scores, noisy_scores, kept : (T, P) s_i, ŝ_i, |S_i| (transcript only; pre-noise, never release)
    users : list of (T, n_i) users of each phase (transcript only; for the disjointness check)
    """

    theta: np.ndarray
    unprojected: np.ndarray
    halted: np.ndarray
    gradient_evaluations: np.ndarray
    phase_iterates: np.ndarray | None = None
    halt_phase: np.ndarray | None = None
    scores: np.ndarray | None = None
    noisy_scores: np.ndarray | None = None
    kept: np.ndarray | None = None
    users: list | None = None

    def to_dict(self) -> dict:
        """Summary: trials, halts, empty filtered sets and mean gradient count."""
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "halt_rate": float(np.mean(self.halted)),
            "gradient_evaluations": float(np.mean(self.gradient_evaluations)),
        }


@dataclass(frozen=True, eq=False)
class Algorithm1:
    """Algorithm 1: user-level DP phased SGD, outlier-iterate removal, output perturbation.

    Build with :meth:`from_theorem`; every field is a number of the paper's line 2/4/22 or a
    spec default.  Domain X = ``B(center, radius)``; start point ``x_0 = start`` (default the
    centre, spec [DEFAULT]).
    """

    n: int
    m: int
    d: int
    epsilon: float
    delta: float
    lipschitz: float
    diameter: float  # R in the paper's formulas
    radius: float  # domain X = B(center, radius)
    center: tuple
    start: tuple
    eta: float  # Thm B.1: η = R/(L√(dmnε)) (× c_η relaxed)
    p: float  # Thm B.1: p = J + 3/2
    q: float
    J: float  # m ≤ n^J, default ln m/ln n
    C: int  # line 2: ⌈100 ln(20nme^ε/δ)/ε⌉
    levels: int  # line 2: l = ⌊log2 n⌋
    tau_const: float
    phase_sizes: tuple  # n_i (users used, N_i·C)
    group_sizes: tuple  # N_i
    steps: tuple  # T_i = N_i m
    step_sizes: tuple  # η_i = η/2^{pi}
    taus: tuple  # τ_i
    sigmas: tuple  # σ_i
    loss: Any = field(default_factory=LinearLoss)
    smoothness: float | None = None
    constants: str = "paper"
    noise_mult: float = 1.0
    partition: str = "random"
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float = 1.0,
        smoothness: float | None = None,
        radius: float = 1.0,
        *,
        loss: Any = None,
        constants: str = "paper",
        diameter: float | None = None,
        center=None,
        start=None,
        q: float = DEFAULT_Q,
        J: float | None = None,
        eta: float | None = None,
        eta_const: float | None = None,
        tau_const: float | None = None,
        noise_mult: float = 1.0,
        partition: str = "random",
        mutant: str | None = None,
    ) -> Algorithm1:
        """Parameters of Theorem B.1 (formal Thm 2.1) and Algorithm 1 lines 2, 4, 22.

        ``radius`` is the domain ball's radius; ``diameter`` (R) defaults to ``2·radius``.
        ``eta`` overrides η (privacy holds for any η, spec §3.7); else
        ``η = c_η·R/(L√(dmnε))`` with ``c_η = 1`` (paper) or ``√(Cnε/n_1)`` (relaxed, spec §2.6)
        unless ``eta_const`` is given.  ``J`` defaults to ``max(ln m/ln n, 0)``; ``p = J + 3/2``.
        """
        n, m, d = _count(n, "n", 2), _count(m, "m"), _count(d, "d")
        epsilon, delta = _privacy_args(epsilon, delta)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(partition, PARTITIONS, "partition")
        if mutant is not None:
            check_choice(mutant, ALG1_MUTANTS, "mutant")
        lipschitz = _positive(lipschitz, "lipschitz")
        radius = (
            _positive(radius, "radius")
            if not (isinstance(radius, float) and math.isinf(radius))
            else radius
        )
        diameter = 2.0 * radius if diameter is None else _positive(diameter, "diameter")
        if math.isinf(diameter):
            raise InputError("diameter must be finite when radius is infinite; pass diameter=R")
        q = _positive(q, "q")
        J = max(math.log(m) / math.log(n), 0.0) if J is None else _positive(J, "J", allow_zero=True)
        p = J + 1.5
        loss = LinearLoss() if loss is None else loss
        check_loss(loss)
        if eta is None:
            base = diameter / (lipschitz * math.sqrt(d * m * n * epsilon))
            if eta_const is None and constants == "relaxed":
                C = math.ceil(100.0 * ln(20.0 * n * m * math.exp(epsilon) / delta) / epsilon)
                n1 = (1.0 - 2.0 ** (-q)) * n / 2.0**q
                eta_const = math.sqrt(C * n * epsilon / n1)
            eta = base * (1.0 if eta_const is None else _positive(eta_const, "eta_const"))
        eta = _positive(eta, "eta")
        if tau_const is not None:
            tau_const = _positive(tau_const, "tau_const")
        s = alg1_schedule(
            n, m, d, epsilon, delta, lipschitz, eta, p, q, constants, tau_const, mutant
        )
        return cls(
            n=n,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            lipschitz=lipschitz,
            diameter=diameter,
            radius=radius,
            center=_vector(center, d, "center"),
            start=_vector(center if start is None else start, d, "start"),
            eta=eta,
            p=p,
            q=q,
            J=J,
            C=s["C"],
            levels=s["levels"],
            tau_const=s["tau_const"],
            phase_sizes=tuple(s["n_i"]),
            group_sizes=tuple(s["N_i"]),
            steps=tuple(s["T_i"]),
            step_sizes=tuple(s["eta_i"]),
            taus=tuple(s["tau_i"]),
            sigmas=tuple(s["sigma_i"]),
            loss=loss,
            smoothness=None if smoothness is None else _positive(smoothness, "smoothness", True),
            constants=constants,
            noise_mult=_positive(noise_mult, "noise_mult", allow_zero=True),
            partition=partition,
            mutant=mutant,
        )

    @property
    def params(self) -> dict:
        """Every parameter, per-phase lists included (JSON-ready)."""
        return {
            "algorithm": "Algorithm 1",
            "n": self.n,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "lipschitz": self.lipschitz,
            "diameter": self.diameter,
            "radius": self.radius,
            "center": list(self.center),
            "start": list(self.start),
            "eta": self.eta,
            "p": self.p,
            "q": self.q,
            "J": self.J,
            "C": self.C,
            "levels": self.levels,
            "tau_const": self.tau_const,
            "n_i": list(self.phase_sizes),
            "N_i": list(self.group_sizes),
            "T_i": list(self.steps),
            "eta_i": list(self.step_sizes),
            "tau_i": list(self.taus),
            "sigma_i": list(self.sigmas),
            "loss": repr(self.loss),
            "smoothness": self.smoothness,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "partition": self.partition,
            "mutant": self.mutant,
            "eta_le_1_over_beta": None
            if not self.smoothness
            else self.eta <= 1.0 / self.smoothness,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ)-user-level DP, replace-one-user (Thm 2.1 / B.1); only for paper constants with noise."""
        return _paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem B.1")

    @property
    def gradient_count(self) -> int:
        """Σ_i C·T_i = Σ_i n_i·m ≤ n·m (spec §2.7), if no phase halts."""
        return int(sum(self.phase_sizes) * self.m)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The audited output ``(trials, d)`` (the released x_l, or 0)."""
        return self.run(data, rng, trials).theta

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> Algorithm1Run:
        """Run ``trials`` independent copies on ``data`` (its first ``n`` users)."""
        data = _check_data(data, self.d, self.n)
        trials = check_trials(trials)
        x, y = data.x[: self.n], None if data.y is None else data.y[: self.n]
        constant = bool(np.all(x == x[:, :1])) and (y is None or bool(np.all(y == y[:, :1])))
        width = self.n + max(
            [ni * self.m * (0 if constant else 3) + 6 * self.C * self.d for ni in self.phase_sizes],
            default=1,
        )
        chunk = _trial_chunk(trials, width)
        parts = [
            self._run_chunk(x, y, constant, rng, min(chunk, trials - s), transcript)
            for s in range(0, trials, chunk)
        ]
        return _stack_runs(Algorithm1Run, parts)

    # ---------------------------------------------------------------- subroutines, in the paper's order

    def _run_chunk(self, x, y, constant, rng, trials, transcript):
        d, P = self.d, len(self.phase_sizes)
        center = np.asarray(self.center)
        order = _partition(rng, trials, self.n, self.partition)
        x_prev = np.broadcast_to(np.asarray(self.start), (trials, d)).copy()
        halted = np.zeros(trials, dtype=bool)
        out = np.zeros((trials, d))
        grads = np.zeros(trials, dtype=np.int64)
        rec = {k: np.zeros((trials, P)) for k in ("scores", "noisy_scores", "kept")}
        iterates, halt_phase, users_log = (
            np.zeros((trials, P, d)),
            np.zeros(trials, dtype=np.int64),
            [],
        )
        offset = 0
        for i in range(P):
            n_i, N_i = self.phase_sizes[i], self.group_sizes[i]
            start = 0 if self.mutant == "reuse-users" else offset  # M4: phases overlap
            users = order[:, start : start + n_i]  # line 5: next n_i users, disjoint
            offset += n_i
            points, counts = self._group_iterates(
                x, y, constant, users, N_i, self.steps[i], self.step_sizes[i], x_prev, rng
            )
            score, h = concentration(
                points,
                counts,
                self.taus[i],
                2.0 * self.taus[i],
                normalise=self.mutant != "unnormalised-score",
            )  # line 10
            scale = (2.0 if self.mutant == "laplace-2" else ALG1_SCORE_LAPLACE) / self.epsilon
            noisy = score + rng.laplace(0.0, scale, trials)
            halt_now = ~halted & (noisy < 0.8 * self.C)  # line 11/19
            if self.mutant == "no-test":
                halt_now[:] = False
            kept = (
                counts
                if self.mutant == "no-filter"
                else rng.binomial(counts, keep_probability(h, self.C))
            )
            size = kept.sum(axis=1)
            mean = (
                np.einsum("tu,tud->td", kept.astype(np.float64), points)
                / np.maximum(size, 1)[:, None]
            )
            mean = np.where((size > 0)[:, None], mean, x_prev)  # S_i = ∅: x̃_i = x_{i−1} [DEFAULT]
            noise = self.noise_mult * self.sigmas[i] * rng.standard_normal((trials, d))  # line 22
            live = ~halted
            grads[live] += n_i * self.m
            if self.mutant == "leaky-halt":  # M5: the halt branch releases the pre-noise average
                plain = np.einsum("tu,tud->td", counts.astype(np.float64), points) / self.C
                out[halt_now] = plain[halt_now]
            if transcript:
                rec["scores"][:, i], rec["noisy_scores"][:, i], rec["kept"][:, i] = (
                    score,
                    noisy,
                    size,
                )
                iterates[live & ~halt_now, i] = (mean + noise)[live & ~halt_now]
                halt_phase[halt_now] = i + 1
                users_log.append(users)
            halted |= halt_now
            x_prev = np.where(halted[:, None], x_prev, mean + noise)
        final = np.where(halted[:, None], out, x_prev)
        theta = np.where(halted[:, None], out, _project(x_prev, center, self.radius))
        extra = {}
        if transcript:
            extra = dict(phase_iterates=iterates, halt_phase=halt_phase, users=users_log, **rec)
        return Algorithm1Run(
            theta=theta, unprojected=final, halted=halted, gradient_evaluations=grads, **extra
        )

    def _group_iterates(self, x, y, constant, users, N_i, T_i, eta_i, x_prev, rng):
        """Line 6–8: C disjoint groups of N_i users, x̃_{i,j} = ProjSGD(group, η_i, T_i, x_{i−1}).

        Returns ``(points (T, U, d), counts (T, U))``.  When every user's items are identical
        and N_i = 1, a group's SGD path does not depend on the item order, so each distinct
        user is run once per trial (exact; spec P-c (ii)).
        """
        trials, C = users.shape[0], self.C
        center = np.asarray(self.center)
        if constant and N_i == 1:
            table_x, table_y, uid = distinct_users(x[:, :1], None if y is None else y[:, :1])
            z, zy = table_x[:, 0, :][None], None if table_y is None else table_y[:, 0][None]
            it = np.repeat(x_prev[:, None, :], z.shape[1], axis=1)
            total = np.zeros_like(it)
            for _ in range(T_i):
                it = _project(it - eta_i * paired_grad(self.loss, it, z, zy), center, self.radius)
                total += it
            return total / T_i, _counts(_lookup(uid, users), z.shape[1])
        groups = users.reshape(trials, C, N_i)
        order = np.argsort(rng.random((trials, C, N_i * self.m)), axis=2)  # one pass, random order
        it = np.repeat(x_prev[:, None, :], C, axis=1)
        total = np.zeros_like(it)
        for s in range(T_i):
            pos = order[:, :, s]
            who = np.take_along_axis(groups, (pos // self.m)[:, :, None], axis=2)[:, :, 0]
            item = pos % self.m
            g = paired_grad(self.loss, it, x[who, item], None if y is None else y[who, item])
            it = _project(it - eta_i * g, center, self.radius)
            total += it
        return total / T_i, np.ones((trials, C), dtype=np.int64)


def _stack_runs(cls, parts: list):
    """Concatenate per-chunk run results along the trial axis."""
    if len(parts) == 1:
        return parts[0]
    fields = {}
    for name in cls.__dataclass_fields__:
        values = [getattr(p, name) for p in parts]
        if values[0] is None:
            fields[name] = None
        elif isinstance(values[0], list):
            fields[name] = [np.concatenate(v) for v in zip(*values)]
        elif np.ndim(values[0]) == 0:
            fields[name] = values[0]
        else:
            fields[name] = np.concatenate(values)
    return cls(**fields)


# --------------------------------------------------------------------------- Algorithm 2


@dataclass(frozen=True)
class Algorithm2Run:
    """Outputs of :meth:`Algorithm2.run` / one phase of Algorithm 3.

    theta : (T, d) x_ag after T_i steps, or 0 after a halt
    halted : (T,) bool;  halt_step : (T,) 1-based step of the halt, 0 if none
    gradient_evaluations : (T,) K_i·m per step run (the halting step included)
    removed : (T,) a user of a passing step was filtered out (off the good event)
    noisy_gradients : (T, T_i, d) ĝ_t (transcript only; 0 after a halt)
    kept : (T, T_i) |S_t| (transcript only); xi : (T,) threshold noise (transcript only)
    """

    theta: np.ndarray
    halted: np.ndarray
    halt_step: np.ndarray
    gradient_evaluations: np.ndarray
    removed: np.ndarray
    noisy_gradients: np.ndarray | None = None
    kept: np.ndarray | None = None
    xi: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "halt_rate": float(np.mean(self.halted)),
            "gradient_evaluations": float(np.mean(self.gradient_evaluations)),
        }


def alg3_tau(n: int, m: int, d: int, epsilon: float, lipschitz: float) -> float:
    """Alg. 3's τ [DEFAULT from the proof of Thm C.3, spec §2.3]:
    ``L·[ln(nd) + 1.25 ln(nm) + ln ln(ndm) + 2ε]/√m``."""
    return (
        lipschitz
        * (ln(n * d) + 1.25 * ln(n * m) + ln(ln(n * d * m)) + 2.0 * epsilon)
        / math.sqrt(m)
    )


def _alg2_sigma(
    constants: str,
    tau: float,
    steps: int,
    n: int,
    d: int,
    n_i: int,
    epsilon: float,
    delta: float,
    mutant: str | None = None,
    m: int = 1,
    lipschitz: float = 1.0,
) -> float:
    """Alg. 2 line 14: σ_i = 1000·τ·√T_i·ln(nde^ε/δ)/(εn_i) (paper) or 4√(8 ln(2/δ))·τ√T_i/(εn_i) (relaxed)."""
    sens = (
        2.0 * lipschitz / m if mutant == "item-sigma" else tau
    )  # M2: item-level sensitivity in σ only
    size = math.sqrt(n_i) if mutant == "sigma-sqrt-n" else n_i  # σ ∝ 1/√n_i mutant of spec §7(b)
    if constants == "paper":
        return (
            ALG2_PAPER_SIGMA
            * sens
            * math.sqrt(steps)
            * (ln(n * d / delta) + epsilon)
            / (epsilon * size)
        )
    return 4.0 * math.sqrt(8.0 * ln(2.0 / delta)) * sens * math.sqrt(steps) / (epsilon * size)


def _alg2_batch(
    constants: str,
    n_i: int,
    steps: int,
    m: int,
    n: int,
    levels: int,
    epsilon: float,
    delta: float,
    k_const: float = ALG3_PAPER_K,
) -> int:
    """Alg. 3 line 4's K_i, capped at n_i (paper; spec §7(d) item 10), or the relaxed K_i of spec §2.6."""
    if constants == "paper":
        k = (
            k_const
            * (2 * ln(n_i * m) + epsilon + ln(1 / delta))
            * (1 / epsilon + n_i * epsilon / math.sqrt(steps * ln(1 / delta)))
        )
    else:
        k = RELAXED_K * ln(
            20.0 * steps * max(levels, 1) * n * m
        ) / epsilon + n_i * epsilon / math.sqrt(steps)
    return int(min(n_i, math.ceil(k)))


def _alg2_kmin(
    constants: str, steps: int, n: int, m: int, levels: int, epsilon: float, delta: float
) -> float:
    """Smallest phase that may run: 320·ln(20T_ie^ε/δ)/ε [DERIVED] (paper) / 120·ln(20T_i l n m)/ε (relaxed)."""
    if constants == "paper":
        return ALG3_KMIN * (ln(20.0 * steps / delta) + epsilon) / epsilon
    return RELAXED_K * ln(20.0 * steps * max(levels, 1) * n * m) / epsilon


@dataclass(frozen=True, eq=False)
class Algorithm2:
    """Algorithm 2: one phase of user-level DP accelerated minibatch SGD (AC-SA, [GL12]).

    Objective ``F̂_i(x) = (1/n_i)Σ_Z F̂(x, Z) + (λ_i/2)‖x − x_{i−1}‖²`` (Alg. 3 line 6) on the
    domain ``B(center, radius)``; the regulariser's gradient is added to the noisy minibatch
    gradient (line 15).  ``smoothing = r > 0`` evaluates each item's gradient at ``x + u``,
    ``u ~ Unif(B(0, r))`` fresh per item and call (the oracle of Thm 4.1, spec §2.4).
    """

    n_total: int  # n in the log terms
    n_phase: int  # n_i
    m: int
    d: int
    epsilon: float
    delta: float
    steps: int  # T_i
    batch: int  # K_i (≤ n_i)
    tau: float
    sigma: float  # line 14
    lam: float  # λ_i
    smoothness: float  # β (of the loss; L_f = β + λ_i)
    radius: float = math.inf
    center: tuple = ()
    loss: Any = field(default_factory=LinearLoss)
    smoothing: float = 0.0
    constants: str = "paper"
    noise_mult: float = 1.0
    sampling: str = "without"
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n_phase: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        steps: int,
        tau: float,
        lam: float = 1.0,
        smoothness: float = 0.0,
        *,
        n_total: int | None = None,
        levels: int | None = None,
        batch: int | None = None,
        loss: Any = None,
        constants: str = "paper",
        radius: float = math.inf,
        center=None,
        smoothing: float = 0.0,
        noise_mult: float = 1.0,
        sampling: str = "without",
        mutant: str | None = None,
        lipschitz: float = 1.0,
    ) -> Algorithm2:
        """One Algorithm-2 call with Alg. 3 line 4's K_i (capped at n_i) and line 14's σ_i.

        ``n_total`` (n of the log terms) defaults to ``n_phase``; ``batch`` overrides K_i.
        Privacy holds for any τ, λ, β (spec §3.7), so audits may pick them freely.
        """
        n_phase, m, d, steps = (
            _count(n_phase, "n_phase"),
            _count(m, "m"),
            _count(d, "d"),
            _count(steps, "steps"),
        )
        epsilon, delta = _privacy_args(epsilon, delta)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(sampling, SAMPLINGS, "sampling")
        if mutant is not None:
            check_choice(mutant, ALG2_MUTANTS, "mutant")
        n_total = n_phase if n_total is None else _count(n_total, "n_total")
        levels = (
            int(math.floor(math.log2(max(n_total, 2))))
            if levels is None
            else _count(levels, "levels")
        )
        tau = _positive(tau, "tau")
        if batch is None:
            batch = _alg2_batch(constants, n_phase, steps, m, n_total, levels, epsilon, delta)
        batch = _count(batch, "batch")
        if batch > n_phase:
            raise InputError(f"batch must be <= n_phase = {n_phase}, got {batch}")
        loss = LinearLoss() if loss is None else loss
        check_loss(loss)
        sigma = _alg2_sigma(
            constants, tau, steps, n_total, d, n_phase, epsilon, delta, mutant, m, lipschitz
        )
        return cls(
            n_total=n_total,
            n_phase=n_phase,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            steps=steps,
            batch=batch,
            tau=tau,
            sigma=sigma,
            lam=_positive(lam, "lam"),
            smoothness=_positive(smoothness, "smoothness", allow_zero=True),
            radius=radius if math.isinf(radius) else _positive(radius, "radius"),
            center=_vector(center, d, "center"),
            loss=loss,
            smoothing=_positive(smoothing, "smoothing", allow_zero=True),
            constants=constants,
            noise_mult=_positive(noise_mult, "noise_mult", allow_zero=True),
            sampling=sampling,
            mutant=mutant,
        )

    @property
    def params(self) -> dict:
        return {
            "algorithm": "Algorithm 2",
            "n_total": self.n_total,
            "n_phase": self.n_phase,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "steps": self.steps,
            "batch": self.batch,
            "tau": self.tau,
            "sigma": self.sigma,
            "lam": self.lam,
            "smoothness": self.smoothness,
            "radius": self.radius,
            "center": list(self.center),
            "loss": repr(self.loss),
            "smoothing": self.smoothing,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "sampling": self.sampling,
            "mutant": self.mutant,
            "stage_length": self.stage_length,
            "threshold": 0.8 * self.batch,
            "threshold_laplace": ALG2_THRESHOLD_LAPLACE / self.epsilon,
            "query_laplace": ALG2_QUERY_LAPLACE / self.epsilon,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def stage_length(self) -> int:
        """AC-SA stage length N_s = ⌈4√((β + λ_i)/λ_i)⌉ [DEFAULT, spec P-d]."""
        return int(math.ceil(ACSA_STAGE * math.sqrt((self.smoothness + self.lam) / self.lam)))

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """The phase (transcript of ĝ_t and halting pattern) is (ε, δ)-user-level DP (Thm C.1)."""
        return _paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem C.1")

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        start=None,
    ) -> Algorithm2Run:
        """Run on the first ``n_phase`` users of ``data``; ``start`` = x_{i−1} (default the domain centre)."""
        data = _check_data(data, self.d, self.n_phase)
        trials = check_trials(trials)
        table_x, table_y, uid = distinct_users(
            data.x[: self.n_phase], None if data.y is None else data.y[: self.n_phase]
        )
        counts = np.bincount(uid, minlength=table_x.shape[0])
        x0 = np.asarray(self.center if start is None else _vector(start, self.d, "start"))
        chunk = _trial_chunk(
            trials,
            8 * table_x.shape[0] * (self.m if self.smoothing else 1) * self.d
            + (self.steps * self.d if transcript else 0),
        )
        parts = []
        for s in range(0, trials, chunk):
            t = min(chunk, trials - s)
            parts.append(
                self._phase(
                    table_x,
                    table_y,
                    np.broadcast_to(counts, (t, counts.size)),
                    np.broadcast_to(x0, (t, self.d)).copy(),
                    rng,
                    transcript,
                )
            )
        return _stack_runs(Algorithm2Run, parts)

    # ---------------------------------------------------------------- subroutines, in the paper's order

    def _phase(
        self, table_x, table_y, phase_counts, x_prev, rng, transcript, domain_center=None
    ) -> Algorithm2Run:
        """Lines 1–21 for ``T`` trials; ``phase_counts (T, U)``: multiplicity of each distinct user in D_i.

        ``domain_center (T, d)`` replaces the domain's centre per trial (the spec §2.5 wrapper only).
        """
        trials, d, K, eps = x_prev.shape[0], self.d, self.batch, self.epsilon
        center = np.asarray(self.center) if domain_center is None else domain_center
        active = np.flatnonzero(
            np.any(np.asarray(phase_counts) > 0, axis=0)
        )  # users of D_i in some trial
        table_x, phase_counts = table_x[active], np.asarray(phase_counts)[:, active]
        table_y = None if table_y is None else table_y[active]
        if self.smoothing == 0 and table_y is None and isinstance(self.loss, MEAN_SUFFICIENT):
            table_x = table_x.mean(
                axis=1, keepdims=True
            )  # exact: q(x, Z) depends on Z only via its mean
        xi = rng.laplace(
            0.0, ALG2_THRESHOLD_LAPLACE / eps, trials
        )  # line 4, drawn ONCE (spec §7(d) 7)
        threshold = 0.8 * K + xi
        x, x_ag = x_prev.copy(), x_prev.copy()
        halted = np.zeros(trials, dtype=bool)
        halt_step = np.zeros(trials, dtype=np.int64)
        leaked = np.zeros((trials, d))
        grads = np.zeros(trials, dtype=np.int64)
        removed = np.zeros(trials, dtype=bool)
        rec_g = np.zeros((trials, self.steps, d)) if transcript else None
        rec_k = np.zeros((trials, self.steps)) if transcript else None
        lf, lam, local = self.smoothness + self.lam, self.lam, 0
        for t in range(1, self.steps + 1):
            local += 1
            if local > self.stage_length:  # multi-stage restart from x_ag (Remark C.5, spec P-d)
                x, local = x_ag.copy(), 1
            a, w_ag, w_x, g_t = acsa_coefficients(local, lf, lam)
            x_md = w_ag * x_ag + w_x * x
            batch = self._minibatch(phase_counts, rng)  # line 3
            q = self._user_gradients(table_x, table_y, x_md, batch, rng)  # line 5
            score, h = concentration(
                q,
                batch,
                2.0 * self.tau,
                2.0 * self.tau,
                normalise=self.mutant != "unnormalised-score",
            )  # line 6
            if self.mutant == "threshold-per-step":  # M3(d): the printed in-loop redraw
                threshold = 0.8 * K + rng.laplace(0.0, ALG2_THRESHOLD_LAPLACE / eps, trials)
            noisy = score + rng.laplace(0.0, ALG2_QUERY_LAPLACE / eps, trials)
            halt_now = ~halted & (noisy < threshold)  # line 7/18
            if self.mutant == "no-test":
                halt_now[:] = False
            kept = (
                batch if self.mutant == "no-filter" else rng.binomial(batch, keep_probability(h, K))
            )  # 8–12
            size = kept.sum(axis=1)
            g = (
                np.einsum("tu,tud->td", kept.astype(np.float64), q) / np.maximum(size, 1)[:, None]
            )  # line 13
            g[size == 0] = 0.0  # S_t = ∅: g_t = 0 [DEFAULT]
            noisy_g = g + self.noise_mult * self.sigma * rng.standard_normal((trials, d))  # line 14
            live = ~halted
            grads[live] += K * self.m
            removed |= live & ~halt_now & (size < K)
            if (
                self.mutant == "leaky-halt"
            ):  # M5: the halt branch releases the pre-noise batch gradient
                leaked[halt_now] = (np.einsum("tu,tud->td", batch.astype(np.float64), q) / K)[
                    halt_now
                ]
            if transcript:
                rec_g[live & ~halt_now, t - 1] = noisy_g[live & ~halt_now]
                rec_k[:, t - 1] = size
            halt_step[halt_now] = t
            halted |= halt_now
            G = noisy_g + lam * (x_md - x_prev)  # line 15: gradient of the regulariser folded in
            x = _project(
                (a * lam * x_md + ((1 - a) * lam + g_t) * x - a * G) / (lam + g_t),
                center,
                self.radius,
            )
            x_ag = a * x + (1 - a) * x_ag
        theta = np.where(halted[:, None], leaked, x_ag)
        return Algorithm2Run(
            theta=theta,
            halted=halted,
            halt_step=halt_step,
            gradient_evaluations=grads,
            removed=removed,
            noisy_gradients=rec_g,
            kept=rec_k,
            xi=xi if transcript else None,
        )

    def _minibatch(self, phase_counts: np.ndarray, rng) -> np.ndarray:
        """Line 3: K_i users of D_i as multiplicities ``(T, U)``; without replacement by default (spec §7(d) 8)."""
        K, n_i = self.batch, int(phase_counts[0].sum())
        if self.sampling == "without" and K == n_i:
            return np.asarray(phase_counts)
        same = bool(np.all(phase_counts == phase_counts[:1]))
        if self.sampling == "with":
            if same:
                return rng.multinomial(K, phase_counts[0] / n_i, size=phase_counts.shape[0])
            return np.stack([rng.multinomial(K, row / n_i) for row in phase_counts])
        if same:
            return rng.multivariate_hypergeometric(phase_counts[0], K, size=phase_counts.shape[0])
        return np.stack([rng.multivariate_hypergeometric(row, K) for row in phase_counts])

    def _user_gradients(self, table_x, table_y, x_md, batch, rng) -> np.ndarray:
        """Line 5: q_t(Z) = (1/m)Σ_z ∇f(x, z) for every distinct user in use: ``(T, U, d)``."""
        used = np.flatnonzero(batch.any(axis=0))
        q = np.zeros(batch.shape + (self.d,))
        tx, ty = table_x[used], None if table_y is None else table_y[used]
        if self.smoothing > 0:  # Thm 4.1 oracle: ∇f(x + u, z), u ~ Unif(B(0, r)) fresh per item
            u = uniform_ball(rng, (x_md.shape[0], used.size, self.m), self.d, self.smoothing)
            pts = x_md[:, None, None, :] + u
            q[:, used] = paired_grad(
                self.loss, pts, tx[None], None if ty is None else ty[None]
            ).mean(axis=2)
        else:
            q[:, used] = user_gradients(self.loss, x_md, tx, ty)
        return q


# --------------------------------------------------------------------------- Algorithm 3


def alg3_schedule(
    n: float,
    m: float,
    d: float,
    epsilon: float,
    delta: float,
    lipschitz: float,
    smoothness: float,
    diameter: float,
    constants: str = "paper",
    q: float = DEFAULT_Q,
    lam: float | None = None,
    tau: float | None = None,
    k_const: float = ALG3_PAPER_K,
    dry_run: bool = False,
    mutant: str | None = None,
    noise_mult: float = 1.0,
) -> dict:
    """Phase schedule of Algorithm 3 (lines 2–4) with Thm C.3's λ and p, data-free (spec §2.7 dry run).

    ``dry_run=True`` skips the rounding of n_i (allowing n up to 1e17) and the phase floor.
    Returns λ, p, τ, ``levels`` and per-phase lists ``n_i``, ``lam_i``, ``T_i``, ``K_i``, ``sigma_i``.
    """
    levels = int(math.floor(math.log2(n)))
    tau = alg3_tau(n, m, d, epsilon, lipschitz) if tau is None else tau
    p = 3 * q + 2.5 + math.log(math.sqrt(m)) / math.log(n)  # Thm C.3, equality [DEFAULT]
    n1 = (1 - 2 ** (-q)) * n / 2**q
    if lam is None:
        if constants == "paper":  # Thm C.3
            lam = (lipschitz / diameter) * (
                1 / math.sqrt(n * m) + math.sqrt(d) / (epsilon * n * math.sqrt(m))
            )
        else:  # noise-aware relaxed λ of spec §2.6; c_σ is the σ multiplier in use (× noise_mult)
            c_sigma = noise_mult * 4.0 * math.sqrt(8.0 * ln(2.0 / delta))
            lam1 = (
                math.sqrt(lipschitz**2 / (n * m) + d * (c_sigma * tau / (epsilon * n1)) ** 2)
                / diameter
            )
            lam = lam1 / 2**p
    out = {
        "lam": lam,
        "p": p,
        "q": q,
        "tau": tau,
        "levels": levels,
        "n_i": [],
        "lam_i": [],
        "T_i": [],
        "K_i": [],
        "sigma_i": [],
    }
    for i in range(1, levels + 1):
        n_i = (1 - 2 ** (-q)) * n / 2 ** (i * q)
        n_i = n_i if dry_run else int(math.floor(n_i))
        lam_i = lam * 2 ** (p * i)
        steps = int(
            math.ceil((1 + math.sqrt(smoothness / lam_i)) * ln(n * d * m))
        )  # proof of D.3 [DEFAULT]
        if not dry_run and (
            n_i < 1 or n_i < _alg2_kmin(constants, steps, n, m, levels, epsilon, delta)
        ):
            break
        if dry_run:
            k = (
                k_const
                * (2 * ln(n_i * m) + epsilon + ln(1 / delta))
                * (1 / epsilon + n_i * epsilon / math.sqrt(steps * ln(1 / delta)))
            )
            batch = (
                min(n_i, math.ceil(k))
                if constants == "paper"
                else _alg2_batch(constants, max(int(n_i), 1), steps, m, n, levels, epsilon, delta)
            )
        else:
            batch = _alg2_batch(constants, n_i, steps, m, n, levels, epsilon, delta, k_const)
        sigma = _alg2_sigma(constants, tau, steps, n, d, n_i, epsilon, delta, mutant, m, lipschitz)
        for key, value in (
            ("n_i", n_i),
            ("lam_i", lam_i),
            ("T_i", steps),
            ("K_i", batch),
            ("sigma_i", sigma),
        ):
            out[key].append(value)
    return out


def alg3_gradient_count(
    n: float,
    m: float,
    d: float,
    epsilon: float,
    delta: float,
    smoothness: float,
    lipschitz: float = 1.0,
    diameter: float = 1.0,
    k_const: float = ALG3_PAPER_K,
    constants: str = "paper",
) -> float:
    """Dry-run gradient count Σ_i T_i·K_i·m of Algorithm 3 (spec §2.7, RT-6), no data needed."""
    s = alg3_schedule(
        n,
        m,
        d,
        epsilon,
        delta,
        lipschitz,
        smoothness,
        diameter,
        constants,
        k_const=k_const,
        dry_run=True,
    )
    return float(sum(t * k * m for t, k in zip(s["T_i"], s["K_i"])))


@dataclass(frozen=True)
class Algorithm3Run:
    """Outputs of :meth:`Algorithm3.run`.

    theta : (T, d) x_l, or 0 after a halt;  halted : (T,);  halt_phase : (T,) 1-based, 0 if none
    gradient_evaluations : (T,) Σ over phases run of T_i·K_i·m, stopping at a halt
    kept_all : (T,) True when no user was ever filtered out (the good event of spec §4.8)
    phases : list of per-phase :class:`Algorithm2Run` (transcript only)
    users : list of (T, n_i) users of each phase (transcript only)
    """

    theta: np.ndarray
    halted: np.ndarray
    halt_phase: np.ndarray
    gradient_evaluations: np.ndarray
    kept_all: np.ndarray
    phases: list | None = None
    users: list | None = None

    def to_dict(self) -> dict:
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "halt_rate": float(np.mean(self.halted)),
            "removal_rate": float(np.mean(~self.kept_all)),
            "gradient_evaluations": float(np.mean(self.gradient_evaluations)),
        }


@dataclass(frozen=True, eq=False)
class Algorithm3:
    """Algorithm 3: user-level DP accelerated phased ERM with outlier-gradient removal.

    Phase i runs :class:`Algorithm2` on fresh users D_i with regularisation λ_i centred at
    x_{i−1}; a halt anywhere halts everything and outputs 0.
    """

    n: int
    m: int
    d: int
    epsilon: float
    delta: float
    lipschitz: float
    smoothness: float
    diameter: float
    radius: float
    center: tuple
    start: tuple
    q: float
    p: float  # Thm C.3: p = 3q + 2.5 + log_n √m
    lam: float  # Thm C.3 (or relaxed noise-aware λ)
    tau: float  # proof of Thm C.3
    levels: int
    phase_sizes: tuple  # n_i
    lams: tuple  # λ_i = λ 2^{pi}
    steps: tuple  # T_i
    batches: tuple  # K_i
    sigmas: tuple  # σ_i
    loss: Any = field(default_factory=LinearLoss)
    smoothing: float = 0.0
    constants: str = "paper"
    noise_mult: float = 1.0
    partition: str = "random"
    sampling: str = "without"
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float = 1.0,
        smoothness: float = 0.0,
        radius: float = 1.0,
        *,
        loss: Any = None,
        constants: str = "paper",
        diameter: float | None = None,
        center=None,
        start=None,
        q: float = DEFAULT_Q,
        lam: float | None = None,
        tau: float | None = None,
        noise_mult: float = 1.0,
        partition: str = "random",
        sampling: str = "without",
        mutant: str | None = None,
        smoothing: float = 0.0,
    ) -> Algorithm3:
        """Parameters of Theorem C.3 (formal Thm 3.2) and Algorithm 3 line 2–4.

        ``tau``/``lam`` override the defaults (privacy holds for any, spec §3.7).
        """
        n, m, d = _count(n, "n", 2), _count(m, "m"), _count(d, "d")
        epsilon, delta = _privacy_args(epsilon, delta)
        check_choice(constants, CONSTANTS, "constants")
        check_choice(partition, PARTITIONS, "partition")
        check_choice(sampling, SAMPLINGS, "sampling")
        if mutant is not None:
            check_choice(mutant, ALG2_MUTANTS, "mutant")
        lipschitz = _positive(lipschitz, "lipschitz")
        smoothness = _positive(smoothness, "smoothness", allow_zero=True)
        radius = (
            radius
            if isinstance(radius, float) and math.isinf(radius)
            else _positive(radius, "radius")
        )
        diameter = 2.0 * radius if diameter is None else _positive(diameter, "diameter")
        if math.isinf(diameter):
            raise InputError("diameter must be finite when radius is infinite; pass diameter=R")
        loss = LinearLoss() if loss is None else loss
        check_loss(loss)
        s = alg3_schedule(
            n,
            m,
            d,
            epsilon,
            delta,
            lipschitz,
            smoothness,
            diameter,
            constants,
            _positive(q, "q"),
            None if lam is None else _positive(lam, "lam"),
            None if tau is None else _positive(tau, "tau"),
            mutant=mutant,
            noise_mult=_positive(noise_mult, "noise_mult", allow_zero=True),
        )
        return cls(
            n=n,
            m=m,
            d=d,
            epsilon=epsilon,
            delta=delta,
            lipschitz=lipschitz,
            smoothness=smoothness,
            diameter=diameter,
            radius=radius,
            center=_vector(center, d, "center"),
            start=_vector(center if start is None else start, d, "start"),
            q=q,
            p=s["p"],
            lam=s["lam"],
            tau=s["tau"],
            levels=s["levels"],
            phase_sizes=tuple(s["n_i"]),
            lams=tuple(s["lam_i"]),
            steps=tuple(s["T_i"]),
            batches=tuple(s["K_i"]),
            sigmas=tuple(s["sigma_i"]),
            loss=loss,
            smoothing=_positive(smoothing, "smoothing", allow_zero=True),
            constants=constants,
            noise_mult=_positive(noise_mult, "noise_mult", allow_zero=True),
            partition=partition,
            sampling=sampling,
            mutant=mutant,
        )

    @property
    def params(self) -> dict:
        return {
            "algorithm": type(self).__name__,
            "n": self.n,
            "m": self.m,
            "d": self.d,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "lipschitz": self.lipschitz,
            "smoothness": self.smoothness,
            "diameter": self.diameter,
            "radius": self.radius,
            "center": list(self.center),
            "start": list(self.start),
            "q": self.q,
            "p": self.p,
            "lam": self.lam,
            "tau": self.tau,
            "levels": self.levels,
            "n_i": list(self.phase_sizes),
            "lam_i": list(self.lams),
            "T_i": list(self.steps),
            "K_i": list(self.batches),
            "sigma_i": list(self.sigmas),
            "loss": repr(self.loss),
            "smoothing": self.smoothing,
            "constants": self.constants,
            "noise_mult": self.noise_mult,
            "partition": self.partition,
            "sampling": self.sampling,
            "mutant": self.mutant,
            "gradient_count": self.gradient_count,
        }

    def to_dict(self) -> dict:
        return self.params

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ)-user-level DP, replace-one-user (Thm 3.1 / C.1; Thm 4.1 for the smoothed loss)."""
        return _paper_privacy_claim(self, "Lowy-Liu-Asi 2024, Theorem C.1")

    @property
    def gradient_count(self) -> int:
        """Σ_i T_i·K_i·m over the phases of the schedule (no halts), spec §2.7."""
        return int(sum(t * k * self.m for t, k in zip(self.steps, self.batches)))

    def phase(self, i: int) -> Algorithm2:
        """The :class:`Algorithm2` call of phase ``i`` (0-based)."""
        return Algorithm2(
            n_total=self.n,
            n_phase=self.phase_sizes[i],
            m=self.m,
            d=self.d,
            epsilon=self.epsilon,
            delta=self.delta,
            steps=self.steps[i],
            batch=self.batches[i],
            tau=self.tau,
            sigma=self.sigmas[i],
            lam=self.lams[i],
            smoothness=self.smoothness,
            radius=self.radius,
            center=self.center,
            loss=self.loss,
            smoothing=self.smoothing,
            constants=self.constants,
            noise_mult=self.noise_mult,
            sampling=self.sampling,
            mutant=self.mutant,
        )

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> Algorithm3Run:
        """Run ``trials`` copies on the first ``n`` users of ``data``."""
        data = _check_data(data, self.d, self.n)
        trials = check_trials(trials)
        table_x, table_y, uid = distinct_users(
            data.x[: self.n], None if data.y is None else data.y[: self.n]
        )
        U = table_x.shape[0]
        per = self.n + 8 * U * (self.m if self.smoothing else 1) * self.d
        if transcript:
            per += sum(self.steps) * self.d
        chunk = _trial_chunk(trials, per)
        parts = [
            self._run_chunk(table_x, table_y, uid, rng, min(chunk, trials - s), transcript)
            for s in range(0, trials, chunk)
        ]
        return _stack_runs(Algorithm3Run, parts)

    def _run_chunk(self, table_x, table_y, uid, rng, trials, transcript) -> Algorithm3Run:
        order = _partition(rng, trials, self.n, self.partition)
        x = np.broadcast_to(np.asarray(self.start), (trials, self.d)).copy()
        halted = np.zeros(trials, dtype=bool)
        halt_phase = np.zeros(trials, dtype=np.int64)
        out = np.zeros((trials, self.d))
        grads = np.zeros(trials, dtype=np.int64)
        kept_all = np.ones(trials, dtype=bool)
        phases, users_log, offset = [], [], 0
        for i, n_i in enumerate(self.phase_sizes):
            start = 0 if self.mutant == "reuse-users" else offset  # M4: phases overlap
            users = order[:, start : start + n_i]  # line 5: fresh users
            offset += n_i
            res = self.phase(i)._phase(
                table_x, table_y, _counts(_lookup(uid, users), table_x.shape[0]), x, rng, transcript
            )
            live = ~halted
            grads[live] += res.gradient_evaluations[live]
            kept_all &= ~(live & res.removed)
            halt_now = live & res.halted
            out[halt_now] = res.theta[halt_now]  # 0, or the leak of mutant M5
            halt_phase[halt_now] = i + 1
            halted |= halt_now
            x = np.where(halted[:, None], x, res.theta)
            if transcript:
                phases.append(res)
                users_log.append(users)
        theta = np.where(halted[:, None], out, x)
        return Algorithm3Run(
            theta=theta,
            halted=halted,
            halt_phase=halt_phase,
            gradient_evaluations=grads,
            kept_all=kept_all,
            phases=phases if transcript else None,
            users=users_log if transcript else None,
        )


class SmoothedAlgorithm3(Algorithm3):
    """Algorithm 3 on the uniform-ball smoothed loss ``f_r`` (Thm 4.1 / D.3, spec §2.4)."""

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float = 1.0,
        smoothness: float = 0.0,
        radius: float = 1.0,
        **options: Any,
    ) -> SmoothedAlgorithm3:
        """``r = √d·R/(εn√m)``, ``β_r = L√d/r`` (Lemma D.1), then Algorithm 3 with β = β_r.

        ``smoothness`` is ignored (f need not be smooth); λ is Thm C.3's [DEFAULT, spec §2.4],
        not D.3's ``1/√(mn)`` which is suboptimal in the private regime.
        """
        n, m, d = _count(n, "n", 2), _count(m, "m"), _count(d, "d")
        epsilon = check_epsilon(epsilon)
        diameter = options.pop("diameter", None)
        diameter = (
            2.0 * _positive(radius, "radius")
            if diameter is None
            else _positive(diameter, "diameter")
        )
        r = math.sqrt(d) * diameter / (epsilon * n * math.sqrt(m))
        beta_r = _positive(lipschitz, "lipschitz") * math.sqrt(d) / r
        base = Algorithm3.from_theorem(
            n,
            m,
            d,
            epsilon,
            delta,
            lipschitz,
            beta_r,
            radius,
            diameter=diameter,
            smoothing=r,
            **options,
        )
        return cls(**{f: getattr(base, f) for f in Algorithm3.__dataclass_fields__})


# --------------------------------------------------------------------------- strongly convex wrapper (not from the paper)

SC_BOUND_CONSTANT = 1.0
"""c_B in B(n') = c_B(1/√(n'm) + √(d ln(1/δ))/(εn'√m)) of the spec §2.5 wrapper [DEFAULT, not from the paper]."""


@dataclass(frozen=True, eq=False)
class StronglyConvexAlgorithm3:
    """**Not from the paper** (Remark 3.6 cites [FKT20, §5.1] without details): spec §2.5's stand-in.

    ``k = ⌈log2 log2 n⌉ + 1`` disjoint blocks of users; block j runs Algorithm 3 on
    ``B(c, R_j/2)`` centred at the previous output, ``R_{j+1} = √(8 L R_j B(n/k)/μ)``.
    Privacy: parallel composition over disjoint blocks.  The final output is projected onto X.
    """

    base: Algorithm3
    blocks: int
    strong_convexity: float
    radii: tuple  # R_j (diameters of the localisation balls)

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float = 1.0,
        smoothness: float = 0.0,
        radius: float = 1.0,
        strong_convexity: float = 1.0,
        **options: Any,
    ) -> StronglyConvexAlgorithm3:
        n, m, d = _count(n, "n", 4), _count(m, "m"), _count(d, "d")
        mu = _positive(strong_convexity, "strong_convexity")
        blocks = int(math.ceil(math.log2(math.log2(n)))) + 1
        size = n // blocks
        base = Algorithm3.from_theorem(
            size, m, d, epsilon, delta, lipschitz, smoothness, radius, **options
        )
        bound = SC_BOUND_CONSTANT * (
            1 / math.sqrt(size * m)
            + math.sqrt(d * ln(1 / base.delta)) / (base.epsilon * size * math.sqrt(m))
        )
        radii = [base.diameter]
        for _ in range(blocks - 1):
            radii.append(min(radii[-1], math.sqrt(8 * lipschitz * radii[-1] * bound / mu)))
        return cls(base=base, blocks=blocks, strong_convexity=mu, radii=tuple(radii))

    @property
    def params(self) -> dict:
        return {
            "algorithm": "StronglyConvexAlgorithm3 (spec §2.5, not from the paper)",
            "blocks": self.blocks,
            "strong_convexity": self.strong_convexity,
            "radii": list(self.radii),
            "base": self.base.params,
        }

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return self.base.privacy_claim

    @property
    def gradient_count(self) -> int:
        return self.blocks * self.base.gradient_count

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta

    def run(
        self, data: UserDataset, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> Algorithm3Run:
        """Run the blocks in turn (users ``j·n/k … (j+1)·n/k − 1`` for block j); per-trial centres."""
        trials = check_trials(trials)
        size, d = self.base.n, self.base.d
        _check_data(data, d, size * self.blocks)
        c = np.broadcast_to(np.asarray(self.base.start), (trials, d)).copy()
        halted = np.zeros(trials, dtype=bool)
        grads = np.zeros(trials, dtype=np.int64)
        for j in range(self.blocks):
            block = UserDataset(
                data.x[j * size : (j + 1) * size],
                None if data.y is None else data.y[j * size : (j + 1) * size],
            )
            res = _run_localised(self.base, block, rng, c, self.radii[j] / 2.0)
            grads[~halted] += res.gradient_evaluations[~halted]
            halted |= res.halted
            c = np.where(halted[:, None], 0.0, res.theta)
        theta = np.where(
            halted[:, None], 0.0, _project(c, np.asarray(self.base.center), self.base.radius)
        )
        return Algorithm3Run(
            theta=theta,
            halted=halted,
            halt_phase=halted.astype(np.int64),
            gradient_evaluations=grads,
            kept_all=np.ones(trials, dtype=bool),
        )


def _run_localised(
    base: Algorithm3, data: UserDataset, rng, centres: np.ndarray, radius: float
) -> Algorithm3Run:
    """Algorithm 3 started at per-trial ``centres (T, d)`` on ``B(centre, radius)`` (spec §2.5)."""
    table_x, table_y, uid = distinct_users(data.x, data.y)
    trials = centres.shape[0]
    order = _partition(rng, trials, base.n, base.partition)
    x = centres.copy()
    halted = np.zeros(trials, dtype=bool)
    grads = np.zeros(trials, dtype=np.int64)
    offset = 0
    for i, n_i in enumerate(base.phase_sizes):
        alg2 = replace(base.phase(i), radius=radius)
        users = order[:, offset : offset + n_i]
        offset += n_i
        res = alg2._phase(
            table_x,
            table_y,
            _counts(_lookup(uid, users), table_x.shape[0]),
            x,
            rng,
            False,
            domain_center=centres,
        )
        grads[~halted] += res.gradient_evaluations[~halted]
        halted |= res.halted
        x = np.where(halted[:, None], x, res.theta)
    return Algorithm3Run(
        theta=np.where(halted[:, None], 0.0, x),
        halted=halted,
        halt_phase=halted.astype(np.int64),
        gradient_evaluations=grads,
        kept_all=np.ones(trials, dtype=bool),
    )


# --------------------------------------------------------------------------- baselines


def user_level_dpsgd(
    loss: Any,
    epsilon: float,
    delta: float,
    steps: int,
    step_size: float,
    clip_norm: float,
    sampling_rate: float = 1.0,
    radius: float | None = None,
    **options: Any,
) -> DPSGD:
    """User-level DP-SGD with per-user clipping (the baseline of spec 000), replace-one-user,
    σ calibrated by dp-accounting's PLD accountant."""
    return DPSGD.from_accountant(
        epsilon,
        delta,
        loss,
        steps,
        step_size,
        clip_norm,
        sampling_rate,
        relation="replace",
        level="user",
        radius=radius,
        **options,
    )


def item_level_dpsgd(
    loss: Any,
    epsilon: float,
    delta: float,
    steps: int,
    step_size: float,
    clip_norm: float,
    sampling_rate: float = 1.0,
    radius: float | None = None,
    **options: Any,
) -> DPSGD:
    """Item-level DP-SGD (per-example clipping): the m = 1 notion the paper does **not** claim."""
    return DPSGD.from_accountant(
        epsilon,
        delta,
        loss,
        steps,
        step_size,
        clip_norm,
        sampling_rate,
        relation="replace",
        level="item",
        radius=radius,
        **options,
    )


# --------------------------------------------------------------------------- spec §7(a) audit configurations

AUDIT_EPSILON = 2.0
"""Audits run at ε = 2 (spec §7(a): 10^4 trials suffice to flag a violation there)."""


def _audit_loss() -> LinearLoss:
    """The audit loss ``f(x, z) = ⟨z, x⟩`` (gradient z) of spec §7(a)."""
    return LinearLoss(scale=-1.0)


def q1_cluster_size(size: int, offset: float = -1.0) -> int:
    """k with ``s(D) − 4K/5 = (k² + (K−k)²)/K − 0.8K`` closest to ``offset`` (Q1, spec §7(a))."""
    k = np.arange(size // 2 + 1, size + 1)
    return int(k[np.argmin(np.abs((k**2 + (size - k) ** 2) / size - 0.8 * size - offset))])


def alg1_audit(
    pair: str = "P1",
    mutant: str | None = None,
    n: int = 7000,
    m: int = 16,
    epsilon: float = AUDIT_EPSILON,
    delta: float = 1e-5,
):
    """Algorithm 1 end-to-end on a spec §7(a) pair: ``(algorithm, d0, d1, claim, info)``.

    n = 7000, m = 16, d = 1, η = 1, index partition (user 0 in phase 1, group 1), domain
    radius 10³ηLm; τ-multiplier: τ_1 = D_c/4 (P1, P3), 10⁻⁶·D_c (P2), 10⁻³·D_c (P4: a small σ makes a
    filter that runs off the gate visible; privacy holds for any τ, spec §3.7), with D_c = η_1(m+1)/2
    the cluster offset.  P3 places the outlier at 1.99τ_1.  ``info`` holds C, k, D_c, τ_1 and the
    predicted exact ε.
    """
    from ..hardinstances.canaries import (
        balanced_clusters_pair,
        far_outlier_pair,
        halting_threshold_pair,
    )
    from ..hardinstances.lowy_liu_asi import padded_pair

    check_choice(pair, ("P1", "P2", "P3", "P4"), "pair")
    probe = Algorithm1.from_theorem(
        n,
        m,
        1,
        epsilon,
        delta,
        1.0,
        radius=1000.0 * m,
        eta=1.0,
        partition="index",
        loss=_audit_loss(),
    )
    eta1, steps = probe.step_sizes[0], probe.steps[0]
    offset = (
        eta1 * (steps + 1) / 2.0
    )  # D_c: a constant-gradient user's average iterate moves η_1(T+1)/2
    tau1 = offset * {"P1": 0.25, "P2": 1e-6, "P3": 0.25, "P4": 1e-3}[pair]
    algo = Algorithm1.from_theorem(
        n,
        m,
        1,
        epsilon,
        delta,
        1.0,
        radius=1000.0 * m,
        eta=1.0,
        partition="index",
        loss=_audit_loss(),
        tau_const=tau1 / (eta1 * math.sqrt(steps)),
        mutant=mutant,
    )
    C = algo.C
    info = {"C": C, "D_c": offset, "tau_1": algo.taus[0], "reference_epsilon": 0.0}
    if pair == "P1":
        from ..hardinstances.canaries import halting_threshold_size

        k = halting_threshold_size(C)
        base = halting_threshold_pair(C, k, m, 1, -1.0)
        info.update(k=k, reference_epsilon=2.0 * (k - 1) * epsilon / (20.0 * C))
    elif pair == "P2":
        base = far_outlier_pair(C, m, 1, -1.0)
    elif pair == "P3":
        base = far_outlier_pair(C, m, 1, -1.99 * algo.taus[0] / offset)
    else:
        base = balanced_clusters_pair(C, m, 1, -1.0)
    d0, d1 = padded_pair(base, n)
    return algo, d0, d1, algo.privacy_claim, info


def alg2_audit(
    pair: str = "Q1",
    mutant: str | None = None,
    n_phase: int = 10_000,
    steps: int = 20,
    epsilon: float = AUDIT_EPSILON,
    delta: float = 1e-6,
    n_total: int = 48_000,
    smoothing: float = 0.0,
):
    """Algorithm 2 (one phase, full batch K_i = n_i) on a spec §7(a) pair: ``(algorithm, d0, d1, claim, info)``.

    m = 16, d = 1, τ = 0.1 (Q1, Q4) or 10⁻⁶ (Q2); Q3 puts the outlier gradient at 1.99τ.
    Q1 picks the cluster size k with s(D) − 4K/5 ≈ −1.  ``smoothing`` > 0 uses the smoothed
    oracle of Thm 4.1 (the audit loss is linear, so its gradients are unchanged).
    """
    from ..hardinstances.canaries import (
        balanced_clusters_pair,
        far_outlier_pair,
        halting_threshold_pair,
    )

    check_choice(pair, ("Q1", "Q2", "Q3", "Q4"), "pair")
    tau = 1e-6 if pair == "Q2" else 0.1
    algo = Algorithm2.from_theorem(
        n_phase,
        16,
        1,
        epsilon,
        delta,
        steps,
        tau,
        n_total=n_total,
        loss=_audit_loss(),
        mutant=mutant,
        smoothing=smoothing,
    )
    K = algo.batch
    info = {"K": K, "tau": tau}
    if pair == "Q1":
        k = q1_cluster_size(K)
        base = halting_threshold_pair(K, k, 16, 1, 1.0)
        info.update(
            k=k, score_d0=(k**2 + (K - k) ** 2) / K, score_d1=((k - 1) ** 2 + (K - k) ** 2 + 1) / K
        )
    elif pair == "Q2":
        base = far_outlier_pair(K, 16, 1, 1.0)
    elif pair == "Q3":
        base = far_outlier_pair(K, 16, 1, 1.99 * tau)
    else:
        base = balanced_clusters_pair(K, 16, 1, 1.0)
    return algo, base.d0, base.d1, algo.privacy_claim, info


def alg3_audit(
    pair: str = "Q1", mutant: str | None = None, epsilon: float = AUDIT_EPSILON, delta: float = 1e-6
):
    """Algorithm 3 end-to-end (paper constants, index partition, β = 0) with phase 1 holding a Q pair.

    n is chosen so that n_1 = 10⁴; the other phases' users are filler at 0 (concentrated).
    """
    from ..hardinstances.canaries import far_outlier_pair, halting_threshold_pair
    from ..hardinstances.lowy_liu_asi import padded_pair

    check_choice(pair, ("Q1", "Q2"), "pair")
    n = int(math.ceil(10_000 / ((1 - 2**-DEFAULT_Q) / 2**DEFAULT_Q))) + 1
    tau = 1e-6 if pair == "Q2" else 0.1
    algo = Algorithm3.from_theorem(
        n,
        16,
        1,
        epsilon,
        delta,
        1.0,
        0.0,
        1000.0,
        loss=_audit_loss(),
        tau=tau,
        lam=1.0,
        partition="index",
        mutant=mutant,
    )
    K = algo.phase_sizes[0]
    info = {"n": n, "K": K, "T_1": algo.steps[0], "tau": tau}
    if pair == "Q1":
        k = q1_cluster_size(K)
        base = halting_threshold_pair(K, k, 16, 1, 1.0)
        info.update(
            k=k, score_d0=(k**2 + (K - k) ** 2) / K, score_d1=((k - 1) ** 2 + (K - k) ** 2 + 1) / K
        )
    else:
        base = far_outlier_pair(K, 16, 1, 1.0)
    d0, d1 = padded_pair(base, n)
    return algo, d0, d1, algo.privacy_claim, info


@dataclass(frozen=True)
class HaltIndicator:
    """Post-processing ``1[output = 0]`` of an algorithm's release (the P1/Q1 statistic): ``(T, 1)``."""

    algorithm: Any

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return np.all(self.algorithm(data, rng, trials) == 0.0, axis=1, keepdims=True).astype(
            np.float64
        )


@dataclass(frozen=True)
class HaltingStep:
    """White-box release of Algorithm 2's halting step H (0 = never halted): ``(T, 1)``.

    The proof of Thm C.1 shows the halting pattern alone is ε/2-DP (AboveThreshold).
    """

    algorithm: Algorithm2

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.algorithm.run(data, rng, trials).halt_step[:, None].astype(np.float64)
