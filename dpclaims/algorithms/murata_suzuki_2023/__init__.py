"""DIFF2 (Murata & Suzuki, ICML 2023): private non-convex distributed optimisation via gradient
differences.

Spec: ``shared/papers/004_murata_suzuki_diff2.md``.  Data layout: a
:class:`~dpclaims.data.UserDataset` whose ``n`` axis holds the P silos and whose ``m`` axis holds
each silo's ``n_p = m`` records (so ``n_min = m``); privacy is per silo at the record level,
replace-one (``PrivacyClaim(unit="item", relation="replace")``).

* :func:`clipped_mean` — Algorithm 2 (ClippedMean).
* :class:`DIFF2` — Algorithm 1 (the framework: restarts every T rounds, gradient differences clipped
  to ``C2·‖x_{r−1} − x_{r−2}‖`` in between, Gaussian noise on the server's estimator).
* :class:`DIFF2GD` — DIFF2 with GD-Routine (Algorithm 3); :class:`DPGD` — the T = 1 baseline.
* :class:`DIFF2BVRLSGD` — DIFF2 with BVR-L-SGD-Routine (Algorithm 4).

Identical records are merged (with multiplicities) before the run: clipping is per record, so the
clipped mean is unchanged and a replicated silo costs what its distinct records cost.  Gradient
evaluations are counted for the records as the paper counts them (``n_p`` per silo per restart,
``2n_p`` per difference round, ``2b`` per local step), not for the merged ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

from dpclaims.algorithms.murata_suzuki_2023.privacy import (
    alpha_star,
    bvr_accountant_epsilon,
    bvr_minibatch,
    bvr_sigma3_closed_form,
    bvr_sigma3_exact,
    bvr_sigmas,
    diff2_gd_sigmas,
    diff2_rdp_epsilon,
    dpgd_sigma,
    restart_rounds,
    subsampled_rdp_wor,
    tight_epsilon,
    transcript_mu,
)
from dpclaims.algorithms.transcript import GaussianRelease
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_trials,
)
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = [
    "DEFAULT_U",
    "EXPERIMENT_U",
    "DEFAULT_LOCAL_STEPS",
    "DEFAULT_U1",
    "DEFAULT_U2",
    "DEFAULT_ROUNDS_FACTOR",
    "CHUNK_BYTES",
    "clipped_mean",
    "DIFF2Run",
    "DIFF2",
    "DIFF2GD",
    "DPGD",
    "DIFF2BVRLSGD",
    "AUDIT_STRENGTH",
    "AUDIT_CENTER",
    "CANARY_PROBLEM",
]

DEFAULT_U = 2.0
"""[DEFAULT, spec §2.6.1] budget split u of Prop. 4.1 in theory mode: ``(16u²/(u−1))^{1/3}`` is
smallest at u = 2."""

EXPERIMENT_U = 1.25
"""The u of the paper's experiments (§6, spec §6.3) and of the §7(a) audit."""

DEFAULT_LOCAL_STEPS = 10
"""[DEFAULT, spec §2.6.7] K, the local steps of BVR-L-SGD."""

DEFAULT_U1 = 3.0
"""[DEFAULT, spec §2.6.3] u1 of Prop. E.2 (its closed form implicitly takes u1 = u2 = 3)."""

DEFAULT_U2 = 3.0
"""[DEFAULT, spec §2.6.3] u2 of Prop. E.2."""

DEFAULT_ROUNDS_FACTOR = 1.0
"""[DEFAULT, spec §2.6.5] c_R in ``R = ⌈c_R·L N/(C2 sqrt(x* a2 d))⌉`` (larger only costs
compute)."""

CHUNK_BYTES = 64 * 2**20
"""Bytes of per-record gradient arrays alive at once (records are processed in chunks under it)."""

_TINY = np.finfo(np.float64).tiny


# --------------------------------------------------------------------------- Algorithm 2


def clipped_mean(vectors, radius, weights=None) -> np.ndarray:
    """ClippedMean (Algorithm 2): ``(1/|I|) Σ_i min{C/‖y_i‖, 1}·y_i``.

    Parameters
    ----------
    vectors : array (..., k, d), the vectors ``y_i`` along axis -2
    radius : scalar or array broadcastable to (...), the radius C (C = 0 gives 0)
    weights : optional (..., k) weights summing to 1 (multiplicities / |I|); default 1/k

    Returns
    -------
    array (..., d)
    """
    y = check_finite_array(vectors, "vectors")
    if y.ndim < 2:
        raise InputError(f"vectors must have shape (..., k, d), got {y.shape}")
    r = check_finite_array(radius, "radius")
    if np.any(r < 0):
        raise InputError("radius must be >= 0")
    w = (
        np.full(y.shape[-2], 1.0 / y.shape[-2])
        if weights is None
        else check_finite_array(weights, "weights")
    )
    return _clipped_mean(y, r, w)


def _clipped_mean(y: np.ndarray, radius: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`clipped_mean` without input checks (the hot path)."""
    norms = np.sqrt(np.einsum("...d,...d->...", y, y))
    r = radius[..., None]
    factor = np.where(norms > r, r / np.where(norms > 0, norms, 1.0), 1.0)
    return np.einsum("...k,...kd->...d", factor * weights, y)


# --------------------------------------------------------------------------- data preparation


@dataclass(frozen=True)
class _Silos:
    """The data, with identical records merged.

    Server view (all silos): distinct records ``x (G, d_in)``, ``y (G,)`` or None, ``weight (G,)`` =
    ``Σ_p (multiplicity in silo p)/(n_p P)``, so ``Σ_g weight_g clip(∇ℓ(z_g))`` is Alg. 1's
    ``(1/P)Σ_p ClippedMean`` (the radius is the same for every record).  Client view (BVR
    minibatches): ``index (P, n_p)`` maps each record to its row of ``x``.  ``sizes (P,)``: the
    records each silo really holds (unequal silos are padded to a common m; padding rows get weight
    0).
    """

    x: np.ndarray
    y: np.ndarray | None
    weight: np.ndarray
    index: np.ndarray
    silos: int
    size: int
    sizes: np.ndarray


def _prepare(data: UserDataset, sizes: tuple[int, ...] | None = None) -> _Silos:
    """Merge identical records; ``sizes`` (P,) marks silo p's first ``sizes[p]`` records as real,
    the rest padding."""
    if not isinstance(data, UserDataset):
        raise InputError(
            f"data must be a UserDataset (silos on the n axis, records on m), "
            f"got {type(data).__name__}"
        )
    n_p = np.full(data.n, data.m) if sizes is None else np.asarray(sizes, dtype=np.int64)
    if n_p.shape != (data.n,) or n_p.min() < 1 or n_p.max() > data.m:
        raise InputError(
            f"silo_sizes must give one size in 1..m = {data.m} per silo ({data.n}), got {sizes!r}"
        )
    real = np.arange(data.m)[None, :] < n_p[:, None]
    rows = data.x if data.y is None else np.concatenate([data.x, data.y[..., None]], axis=-1)
    uniq, inverse = np.unique(rows.reshape(-1, rows.shape[-1]), axis=0, return_inverse=True)
    inverse = inverse.reshape(data.n, data.m)
    weight = np.bincount(
        inverse.ravel(),
        weights=np.where(real, 1.0 / (n_p[:, None] * data.n), 0.0).ravel(),
        minlength=len(uniq),
    )
    x, y = (uniq, None) if data.y is None else (uniq[:, :-1], uniq[:, -1])
    return _Silos(x=x, y=y, weight=weight, index=inverse, silos=data.n, size=data.m, sizes=n_p)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class DIFF2Run:
    """Outputs of :meth:`DIFF2.run`.

    theta : (trials, d) the output ``x_out`` (uniform draw of the analysed iterates)
    final : (trials, d) the last iterate ``x_R``
    output_index : (trials,) which analysed point was drawn (r̂ − 1 for GD; (r̂−1)·K + k̂ − 1 for
        BVR)
    gradient_evaluations : per-sample gradients as the paper counts them (same for every trial)
    fresh_gradient_evaluations : the count when the previous round's gradients are cached (spec
        §2.7)
    client_gradient_evaluations : (P,) per-silo counts (Remark 5.5)
    iterates : (trials, R + 1, d) ``x_0..x_R`` when ``transcript=True``
    estimates : (trials, R, d) the released ``ṽ_1..ṽ_R`` when ``transcript=True``
    points : (trials, R·K, d) the local points ``x_{k,r−1}``, k < K (BVR only, ``transcript=True``)
    """

    theta: np.ndarray
    final: np.ndarray
    output_index: np.ndarray
    gradient_evaluations: int
    fresh_gradient_evaluations: int
    client_gradient_evaluations: np.ndarray
    iterates: np.ndarray | None = None
    estimates: np.ndarray | None = None
    points: np.ndarray | None = None

    def analysed_points(self) -> np.ndarray:
        """The points the utility theorems average over: ``x_0..x_{R−1}`` (GD) or every local point
        (BVR)."""
        if self.points is not None:
            return self.points
        if self.iterates is None:
            raise InputError("run with transcript=True to keep the iterates")
        return self.iterates[:, :-1]

    def to_dict(self) -> dict:
        """Counts and shapes (not the arrays)."""
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "gradient_evaluations": int(self.gradient_evaluations),
            "fresh_gradient_evaluations": int(self.fresh_gradient_evaluations),
            "client_gradient_evaluations": [int(c) for c in self.client_gradient_evaluations],
            "transcript": self.iterates is not None,
        }


# --------------------------------------------------------------------------- Algorithm 1


@dataclass
class _Output:
    """The output draw, tracked on the fly: ``index (T,)`` into the analysed points, ``theta (T,
    d)``."""

    index: np.ndarray
    theta: np.ndarray
    points: np.ndarray | None

    def keep(self, position: int, x: np.ndarray) -> None:
        hit = self.index == position
        if hit.any():
            self.theta[hit] = x[hit]
        if self.points is not None:
            self.points[:, position] = x


@dataclass(frozen=True)
class DIFF2:
    """The DIFF2 framework (Algorithm 1) with GD-Routine (Algorithm 3) as its routine.

    Subclasses change the routine (:class:`DIFF2BVRLSGD`) or the calibration (:class:`DPGD`);
    the known-buggy variants of :mod:`dpclaims.targets.mutants.murata_suzuki_2023` override one line
    (:meth:`_difference_radii`, :meth:`_accumulated`, or the calibration
    :meth:`DIFF2GD._noise_multipliers`).  Noise multipliers are std ÷ radius (spec §2.6).
    """

    CLAIM_SOURCE: ClassVar[str] = "Proposition 4.1"
    """The paper's result behind :attr:`privacy_claim`."""
    loss: Any
    """Per-sample loss with ``grad(theta (T, d), x (*batch, d_in), y) -> (T, *batch, d)``."""
    d: int
    """Parameter dimension."""
    silos: int
    """P (the n axis of the data)."""
    n_min: int
    """Smallest silo size (the m axis): the n_min of Prop. 4.1's calibration."""
    epsilon: float
    """Target ε the σ's were calibrated for."""
    delta: float
    """Target δ."""
    rounds: int
    """R, communication rounds."""
    period: int
    """T, restart period: round r restarts iff (r − 1) mod T = 0 (Alg. 1 line 2)."""
    sigma1: float
    """σ1, restart noise multiplier (Prop. 4.1 / E.2): noise N(0, σ1²C1² I)."""
    sigma2: float
    """σ2, difference-round multiplier (Prop. 4.1 / E.2): noise N(0, σ2²C_{2,r}² I); unused when T =
    1."""
    clip1: float
    """C1 ≥ G, restart clipping radius (spec §2.6.4 [DEFAULT] C1 = G)."""
    clip2: float
    """C2 ≥ L; round r clips differences to C_{2,r} = C2·‖x_{r−1} − x_{r−2}‖ (Alg. 1 line 7)."""
    eta: float
    """η, step size (Prop. D.2 caps; spec §2.6.5)."""
    x0: np.ndarray = field(default=None, repr=False)
    """Initial point (d,); default 0."""
    u: float = DEFAULT_U
    """Budget split of Prop. 4.1 (recorded; the σ's already include it)."""
    silo_sizes: tuple[int, ...] | None = None
    """Unequal silos (spec 004 §7(c) M4): n_p of each silo, the data padded to a common m; silo p
    uses its first n_p records (ClippedMean over them, weight 1/(n_p P)).  None: every silo holds
    all m records."""

    def __post_init__(self) -> None:
        for name in ("d", "silos", "n_min", "rounds", "period"):
            check_count(getattr(self, name), name)
        if self.silo_sizes is not None:
            sizes = tuple(check_count(s, "silo_sizes entries") for s in self.silo_sizes)
            if len(sizes) != self.silos or min(sizes) != self.n_min:
                raise InputError(
                    f"silo_sizes must list P = {self.silos} sizes whose minimum is "
                    f"n_min = {self.n_min}, "
                    f"got {self.silo_sizes!r}"
                )
            object.__setattr__(self, "silo_sizes", sizes)
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        if self.period > self.rounds:
            raise InputError(f"period T must be in 1..R = {self.rounds}, got {self.period}")
        check_positive(self.sigma1, "sigma1")
        check_positive(self.sigma2, "sigma2", allow_zero=True)
        if self.sigma2 == 0 and self.period > 1:
            raise InputError("sigma2 must be > 0 when there are difference rounds (period > 1)")
        for name in ("clip1", "clip2", "eta"):
            check_positive(getattr(self, name), name)
        x0 = np.zeros(self.d) if self.x0 is None else check_finite_array(self.x0, "x0", ndim=1)
        if x0.shape != (self.d,):
            raise InputError(f"x0 must have shape (d,) = ({self.d},), got {x0.shape}")
        x0 = x0.copy()
        x0.setflags(write=False)
        object.__setattr__(self, "x0", x0)
        if not callable(getattr(self.loss, "grad", None)):
            raise InputError("loss must have a grad(theta, x, y) method (see dpclaims.losses)")

    # ------------------------------------------------------------------ privacy

    @property
    def alpha(self) -> int:
        """α* = 1 + ⌈2 ln(1/δ)/ε⌉ (Prop. 4.1)."""
        return alpha_star(self.epsilon, self.delta)

    @property
    def restarts(self) -> int:
        """⌈R/T⌉ restart rounds."""
        return restart_rounds(self.rounds, self.period)

    @property
    def scheduled_gradient_evaluations(self) -> int:
        """Per-sample gradients one run counts (spec §2.7), from the schedule alone (equal silos of
        n_min): ``N(2R − ⌈R/T⌉)``, plus ``2b(K − 1)R`` for DIFF2-BVR-L-SGD (Table 1's GC)."""
        big_n = self.n_min * self.silos
        local = (
            2 * self.batch * (self.local_steps - 1) * self.rounds
            if isinstance(self, DIFF2BVRLSGD)
            else 0
        )
        return big_n * (2 * self.rounds - self.restarts) + local

    @property
    def mu(self) -> float:
        """[DERIVED, spec §3.6] μ of the server transcript ``(x_r, ṽ_r)`` for a silo of n_min
        records."""
        return transcript_mu(**self._transcript())

    def _transcript(self) -> dict:
        """The schedule and σ's the transcript's privacy formulas take (σ2 = 1 when unused)."""
        return dict(
            n_p=self.n_min,
            silos=self.silos,
            rounds=self.rounds,
            period=self.period,
            sigma1=self.sigma1,
            sigma2=self.sigma2 or 1.0,
        )

    @property
    def tight_epsilon(self) -> float:
        """Exact ε(δ) of the μ-GDP transcript (spec §3.6): what a worst-case audit approaches."""
        return tight_epsilon(self.mu, self.delta)

    @property
    def rdp_epsilon(self) -> float:
        """Prop. 4.1's ε with these σ's, minimised over α (≤ the target for the paper's
        calibration)."""
        return diff2_rdp_epsilon(**self._transcript(), delta=self.delta)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        """(ε, δ)-DP w.r.t. replacing one record of one silo (the result ``CLAIM_SOURCE`` names)."""
        return PrivacyClaim(
            epsilon=self.epsilon,
            delta=self.delta,
            unit="item",
            relation="replace",
            source=f"Murata & Suzuki 2023, {self.CLAIM_SOURCE}",
        )

    @property
    def params(self) -> dict:
        """Every parameter plus α*, ⌈R/T⌉, μ, the RDP ε and the tight ε."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("loss", "x0")}
        out.update(
            loss=type(self.loss).__name__,
            alpha=self.alpha,
            restarts=self.restarts,
            mu=self.mu,
            rdp_epsilon=self.rdp_epsilon,
            tight_epsilon=self.tight_epsilon,
        )
        return out

    def utility_bound(self, initial_gap: float) -> float:
        """Prop. D.2: ``2Δ0/(ηR) + 2σ1²C1²d`` (valid when C1 ≥ G, C2 ≥ L and η respects both
        caps)."""
        return (
            2 * check_positive(initial_gap, "initial_gap") / (self.eta * self.rounds)
            + 2 * self.sigma1**2 * self.clip1**2 * self.d
        )

    @property
    def step_release(self) -> GaussianRelease:
        """The claimed law of the released ``ṽ_1..ṽ_R`` along a fixed-gradient canary (the
        interface of :mod:`dpclaims.algorithms.transcript`), the worst case of replace-one.

        The canary is a record of a silo of ``n_min`` records whose gradient is a fixed vector
        clipped to ``C1·e`` (e a unit vector), replaced by one clipped to ``−C1·e``; every other
        record's gradient is orthogonal to e.  On a restart round (r − 1 ≡ 0 mod T) ṽ_r is the
        fresh ``(1/P)Σ_p ClippedMean(∇ℓ, C1) + N(0, σ1²C1² I)`` (Alg. 1 lines 5-6), the canary's
        term ``±C1 e/(n_min P)`` (Alg. 2's mean, weight 1/(n_p P)); on a difference round ṽ_r is
        ṽ_{r−1} plus a clipped mean of gradient differences, where the canary's is exactly 0,
        plus noise whose std depends on the past only (Alg. 1 lines 7-13), so it has the same
        law given the past with the canary and without.  Hence a :class:`GaussianRelease` on
        the ⌈R/T⌉ restart rounds, independent N(±C1/(n_min P), σ1²C1²): μ = 2√⌈R/T⌉/(n_min P σ1),
        the restart part of :attr:`mu` (spec §3.6).  Uses the claimed σ1, C1 (a mutant's
        changed noise is not described).
        """
        restarts = np.arange(0, self.rounds, self.period)
        half = self.clip1 / (self.n_min * self.silos)
        return GaussianRelease(
            steps=self.rounds,
            carriers=restarts,
            mean_without=np.full(len(restarts), -half),
            mean_with=np.full(len(restarts), half),
            covariance=(self.sigma1 * self.clip1) ** 2 * np.eye(len(restarts)),
        )

    # ------------------------------------------------------------------ running

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The audited output ``x_out``: ``(trials, d)``."""
        return self.run(data, rng, trials).theta

    def releases(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        """The released estimates ``ṽ_1..ṽ_R``, ``(trials, R, d)``: ``run(data, rng, trials,
        transcript=True).estimates`` (the interface of :mod:`dpclaims.algorithms.transcript`;
        the same draws as ``run(data, rng, trials)``)."""
        return self.run(data, rng, trials, transcript=True).estimates

    @property
    def analysed_points(self) -> int:
        """Number of points the output is drawn from: R (x_0..x_{R−1})."""
        return self.rounds

    def run(
        self,
        data: UserDataset,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        monitor=None,
    ) -> DIFF2Run:
        """Run Algorithm 1 for ``trials`` independent trials at once.

        Parameters
        ----------
        data : UserDataset (P silos on n, n_p ≥ n_min records on m)
        rng : numpy Generator (the output draw r̂ is taken first, then the noise)
        trials : number of trials
        transcript : keep ``x_0..x_R``, ``ṽ_1..ṽ_R`` (and BVR's local points)
        monitor : optional ``monitor(r, x_r (trials, d))`` called after every round (it may raise to
            stop the run early, e.g. the learning-rate early stopping of the paper's App. A)
        """
        trials = check_trials(trials)
        if self.silo_sizes is not None and data.m < max(self.silo_sizes):
            raise InputError(
                f"data has m = {data.m} records per silo but silo_sizes needs "
                f"{max(self.silo_sizes)}; "
                "pad the silos to the largest size"
            )
        silos = _prepare(data, self.silo_sizes)
        if silos.silos != self.silos:
            raise InputError(
                f"data has {silos.silos} silos (n axis) but the algorithm was built for "
                f"P = {self.silos}"
            )
        if silos.sizes.min() < self.n_min:
            raise InputError(
                f"silos hold {silos.sizes.min()} records but the calibration assumed "
                f"n_min = {self.n_min}; "
                "rebuild with from_theorem(m=data.m, ...)"
            )
        t, d = trials, self.d
        x_prev = np.broadcast_to(self.x0, (t, d)).copy()
        x_prev2 = x_prev
        v_noisy = np.zeros((t, d))
        v_clean = np.zeros((t, d))
        out = _Output(
            index=rng.integers(0, self.analysed_points, size=t),
            theta=np.empty((t, d)),
            points=np.empty((t, self.analysed_points, d))
            if transcript and self.analysed_points > self.rounds
            else None,
        )
        iterates = np.empty((t, self.rounds + 1, d)) if transcript else None
        estimates = np.empty((t, self.rounds, d)) if transcript else None
        if transcript:
            iterates[:, 0] = x_prev
        cache = _GradientCache(self, silos, t)
        for r in range(1, self.rounds + 1):
            if (r - 1) % self.period == 0:
                v_clean = cache.mean(x_prev, None, np.full(t, self.clip1))
                v_tilde = v_clean + self.sigma1 * self.clip1 * rng.standard_normal((t, d))
            else:
                radius = self.clip2 * np.linalg.norm(x_prev - x_prev2, axis=1)
                clip, noise = self._difference_radii(radius)
                base = self._accumulated(v_clean=v_clean, v_released=v_noisy)
                v_clean = cache.mean(x_prev, x_prev2, clip) + base
                v_tilde = v_clean + (self.sigma2 * noise)[:, None] * rng.standard_normal((t, d))
            v_noisy = v_tilde
            x_next = self._routine(r, x_prev, v_tilde, silos=silos, rng=rng, out=out)
            x_prev2, x_prev = x_prev, x_next
            if monitor is not None:
                monitor(r, x_prev)
            if transcript:
                iterates[:, r] = x_prev
                estimates[:, r - 1] = v_tilde
        counts = self._counts(silos)
        return DIFF2Run(
            theta=out.theta,
            final=x_prev,
            output_index=out.index,
            gradient_evaluations=int(counts.sum()),
            fresh_gradient_evaluations=int(
                counts.sum() - silos.sizes.sum() * (self.rounds - self.restarts)
            ),
            client_gradient_evaluations=counts,
            iterates=iterates,
            estimates=estimates,
            points=out.points,
        )

    def _difference_radii(self, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Clip and noise radii ``(T,)``, ``(T,)`` of a difference round: both
        ``C_{2,r} = C2·‖x_{r−1} − x_{r−2}‖`` (Alg. 1 lines 7-8)."""
        return radius, radius

    def _accumulated(self, *, v_clean: np.ndarray, v_released: np.ndarray) -> np.ndarray:
        """What a difference round adds its clipped mean to (Alg. 1 line 13): the released
        ``ṽ_{r−1}`` ``(T, d)`` (``v_clean`` is the noiseless running sum)."""
        return v_released

    def _routine(
        self, r: int, x_prev: np.ndarray, v_tilde: np.ndarray, *, silos: _Silos, rng, out: _Output
    ) -> np.ndarray:
        """GD-Routine (Algorithm 3): ``x_r = x_{r−1} − η ṽ_r``; the analysed point of round r is
        x_{r−1}."""
        out.keep(r - 1, x_prev)
        return x_prev - self.eta * v_tilde

    def _counts(self, silos: _Silos) -> np.ndarray:
        """Per-silo per-sample gradients (spec §2.7): n_p per restart round, 2n_p per difference
        round."""
        return (silos.sizes * (self.restarts + 2 * (self.rounds - self.restarts))).astype(np.int64)


class _GradientCache:
    """Silo means of clipped per-record gradients (differences), Alg. 1 lines 5/8 and 13.

    When the per-record gradients of all trials fit in :data:`CHUNK_BYTES`, the gradients at
    ``x_{r−1}`` are kept for the next round's difference (spec §2.7 "fresh evaluations"); otherwise
    records are processed in chunks and both gradients are recomputed.  A loss with factored
    per-record gradients (``grad_factors``, e.g. the §6 softplus network) is clipped and averaged
    on the factors, without forming the (records, d) gradients.
    """

    def __init__(self, alg: DIFF2, silos: _Silos, trials: int) -> None:
        self.loss, self.silos, self.d = alg.loss, silos, alg.d
        units = silos.x.shape[0]
        self.factored = hasattr(
            alg.loss, "grad_factors"
        )  # per-record gradients in O(width), not O(d)
        per_record = alg.loss.n_factors if self.factored else alg.d
        self.chunk = max(1, min(units, CHUNK_BYTES // (trials * per_record * 8 * 6)))
        self.cached = self.chunk == units
        self.last = None

    def mean(self, theta: np.ndarray, prev: np.ndarray | None, radius: np.ndarray) -> np.ndarray:
        """``(1/P)Σ_p ClippedMean({∇ℓ(θ,z) − ∇ℓ(prev,z)}_{z∈D_p}, radius)`` (prev None: no
        difference): (T, d)."""
        s = self.silos
        if self.factored and self.cached:
            a = self.loss.grad_factors(theta, s.x, s.y)
            diff = (
                a
                if prev is None
                else a
                - (self.last if self.last is not None else self.loss.grad_factors(prev, s.x, s.y))
            )
            self.last = a
            norms = self.loss.factor_norms(diff, s.x)
            r = radius[:, None]
            factor = np.where(norms > r, r / np.where(norms > 0, norms, 1.0), 1.0)
            return self.loss.sum_factors((factor * s.weight)[..., None] * diff, s.x)
        if self.cached:
            g = self.loss.grad(theta, s.x, s.y)
            diff = (
                g
                if prev is None
                else g - (self.last if self.last is not None else self.loss.grad(prev, s.x, s.y))
            )
            self.last = g
            return _clipped_mean(diff, radius, s.weight)
        total = np.zeros((theta.shape[0], self.d))
        for start in range(0, s.x.shape[0], self.chunk):
            sl = slice(start, start + self.chunk)
            x, y = s.x[sl], None if s.y is None else s.y[sl]
            g = self.loss.grad(theta, x, y)
            if prev is not None:
                g -= self.loss.grad(prev, x, y)
            total += _clipped_mean(g, radius, s.weight[sl])
        return total


def _smoothness(problem: Problem) -> float:
    """L of A2.1 (the default C2): DIFF2's problems are smooth."""
    if problem.smoothness is None:
        raise InputError(
            "DIFF2 needs the smoothness L of A2.1 (C2 = L by default); pass "
            "Problem(..., smoothness=1.0)"
        )
    return problem.smoothness


def _problem_constants(problem: Problem, *, initial_gap, clip1, clip2=None) -> tuple:
    """``(G, L, Δ0, C1, C2)`` of a ``from_theorem``: C1 = G and C2 = L unless overridden."""
    g, lsm = problem.lipschitz, _smoothness(problem)
    gap = check_positive(initial_gap, "initial_gap")
    c1 = g if clip1 is None else check_positive(clip1, "clip1")
    c2 = lsm if clip2 is None else check_positive(clip2, "clip2")
    return g, lsm, gap, c1, c2


def _problem_fields(problem: Problem, n_min: int) -> dict:
    """The fields every DIFF2 variant copies from ``problem`` (``n_min``: the smallest silo)."""
    return dict(
        loss=problem.loss,
        d=problem.d,
        silos=problem.n,
        n_min=n_min,
        epsilon=problem.epsilon,
        delta=problem.delta,
    )


@dataclass(frozen=True)
class DIFF2GD(DIFF2):
    """DIFF2-GD: DIFF2 with GD-Routine (Algorithm 3), σ's of Proposition 4.1, schedule of Thm 4.3.

    Output rule (spec §2.3): ``x_out = x_{r̂−1}``, r̂ ~ Unif{1..R}.
    """

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        initial_gap: float,
        x0=None,
        u: float = DEFAULT_U,
        rounds: int | None = None,
        period: int | None = None,
        eta: float | None = None,
        clip1: float | None = None,
        clip2: float | None = None,
        constants: str = "paper",
        rounds_factor: float = DEFAULT_ROUNDS_FACTOR,
        silo_sizes: tuple[int, ...] | None = None,
    ) -> DIFF2GD:
        """σ's of Proposition 4.1 and the schedule of spec §2.6.5 (Prop. D.2 / Thm 4.3).

        Parameters
        ----------
        problem : P = ``problem.n`` silos of n_min = ``problem.m`` records, dimension d, target
            (ε, δ), G = ``lipschitz`` and L = ``smoothness`` (A2.3, A2.1; C1 = G, C2 = L by
            default, spec §2.6.4), the per-sample ``loss``; the radius is unused (unconstrained)
        initial_gap : Δ0 ≥ f(x0) − f(x*); x0 : the initial point (default 0)
        u : Prop. 4.1's budget split (default 2; the paper's experiments use 1.25)
        rounds, period, eta, clip1, clip2 : overrides (e.g. the §6 grid)
        constants : "paper" — the closed-form minimiser of B_GD (spec §2.6.5 [DERIVED]):
            ``a1 = 4uα*/ε``, ``a2 = 4uα*/((u−1)ε)``, ``x* = min{1, (a1C1²√d/(Δ0C2√a2 N))^{2/3}}``,
            ``R = ⌈c_R L N/(C2 sqrt(x* a2 d))⌉``, ``T = max{1, round(x*R)}``,
            ``η = min{1/(2L), 1/(2√T σ2 C2 √d)}``;
            "literal" — ``T = max(1, ⌈τR⌉)``, ``τ = (G²√d/(L N ε))^{2/3}``,
            ``η = 1/(2max{L, √T L σ2 √d})``
        rounds_factor : c_R (spec §2.6.5)
        silo_sizes : unequal silos (P sizes; data padded to m ≥ max): n_min = min(silo_sizes)
            (Prop. 4.1)
        """
        check_choice(constants, ("paper", "literal"), "constants")
        p, n_min, d = problem.n, problem.m, problem.d
        if silo_sizes is not None:
            if len(silo_sizes) != p or max(silo_sizes) > n_min:
                raise InputError(
                    f"silo_sizes must list n = {p} sizes, none above m = {n_min}, "
                    f"got {silo_sizes!r}"
                )
            n_min = min(check_count(s, "silo_sizes entries") for s in silo_sizes)
        eps, dl = problem.epsilon, problem.delta
        g, lsm, gap, c1, c2 = _problem_constants(
            problem, initial_gap=initial_gap, clip1=clip1, clip2=clip2
        )
        if not u > 1:
            raise InputError(f"u must be > 1, got {u!r}")
        alpha, big_n = alpha_star(eps, dl), n_min * p
        a1, a2 = 4 * u * alpha / eps, 4 * u * alpha / ((u - 1) * eps)
        if constants == "paper":
            scale = a1 * c1**2 * d / (gap * c2 * math.sqrt(a2 * d) * big_n)
        else:
            scale = g**2 * math.sqrt(d) / (lsm * big_n * eps)
        frac = min(1.0, scale ** (2 / 3))
        if rounds is None:
            rounds = max(
                2,
                math.ceil(
                    check_positive(rounds_factor, "rounds_factor")
                    * lsm
                    * big_n
                    / (c2 * math.sqrt(frac * a2 * d))
                ),
            )
        if period is None:
            period = max(
                1, round(frac * rounds) if constants == "paper" else math.ceil(frac * rounds)
            )
        period = min(check_count(period, "period"), check_count(rounds, "rounds"))
        s1, s2 = cls._noise_multipliers(
            n_min=n_min,
            silos=p,
            rounds=rounds,
            period=period,
            epsilon=eps,
            delta=dl,
            u=u,
            silo_sizes=silo_sizes,
        )
        if eta is None:
            if constants == "paper":
                cap = 1 / (2 * math.sqrt(period) * s2 * c2 * math.sqrt(d)) if s2 > 0 else math.inf
                eta = min(1 / (2 * lsm), cap)
            else:
                eta = 1 / (2 * max(lsm, math.sqrt(period) * lsm * s2 * math.sqrt(d)))
        return cls(
            **_problem_fields(problem, n_min),
            rounds=rounds,
            period=period,
            sigma1=s1,
            sigma2=s2,
            clip1=c1,
            clip2=c2,
            eta=eta,
            x0=x0,
            u=u,
            silo_sizes=None if silo_sizes is None else tuple(silo_sizes),
        )

    @classmethod
    def _noise_multipliers(cls, *, silo_sizes, **schedule) -> tuple[float, float]:
        """``(σ1, σ2)`` of Proposition 4.1 for the smallest silo; ``schedule``: the keywords of
        :func:`diff2_gd_sigmas` (n_min, silos, rounds, period, epsilon, delta, u; ``silo_sizes``
        enter through n_min only)."""
        return diff2_gd_sigmas(**schedule)


@dataclass(frozen=True)
class DPGD(DIFF2GD):
    """DP-GD baseline: DIFF2-GD with T = 1 (every round restarts), ``σ² = 4α*R/(n_min²P²ε)``
    (spec §2.4)."""

    CLAIM_SOURCE: ClassVar[str] = "Proposition 4.1 with T = 1 (Sec. 6)"

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        initial_gap: float,
        x0=None,
        rounds: int | None = None,
        eta: float | None = None,
        clip1: float | None = None,
    ) -> DPGD:
        """σ of Prop. 4.1 with T = 1, u → 1 (§6 setup) and the schedule of spec §2.6.6 [DERIVED
        from Prop. D.2]: ``η = 1/(2L)``, ``R = round(N sqrt(LΔ0ε/(2α*C1²d)))``.

        ``problem`` as for :meth:`DIFF2GD.from_theorem`; C2 = L is recorded but unused.
        """
        p, n_min, d = problem.n, problem.m, problem.d
        eps, dl = problem.epsilon, problem.delta
        _, lsm, gap, c1, _ = _problem_constants(problem, initial_gap=initial_gap, clip1=clip1)
        alpha = alpha_star(eps, dl)
        if rounds is None:
            rounds = max(1, round(n_min * p * math.sqrt(lsm * gap * eps / (2 * alpha * c1**2 * d))))
        sigma, _ = cls._noise_multipliers(
            n_min=n_min,
            silos=p,
            rounds=check_count(rounds, "rounds"),
            period=1,
            epsilon=eps,
            delta=dl,
            u=1.0,
            silo_sizes=None,
        )
        return cls(
            **_problem_fields(problem, n_min),
            rounds=rounds,
            period=1,
            sigma1=sigma,
            sigma2=0.0,
            clip1=c1,
            clip2=lsm,
            eta=1 / (2 * lsm) if eta is None else eta,
            x0=x0,
            u=1.0,
        )

    @classmethod
    def _noise_multipliers(cls, *, period, u, silo_sizes, **schedule) -> tuple[float, float]:
        """``(σ, 0)``: Prop. 4.1 with T = 1 and u → 1 (``period``, ``u`` and ``silo_sizes`` are
        DIFF2-GD's; ``schedule``: n_min, silos, rounds, epsilon, delta)."""
        return dpgd_sigma(**schedule), 0.0


@dataclass(frozen=True)
class DIFF2BVRLSGD(DIFF2):
    """DIFF2-BVR-L-SGD: DIFF2 with BVR-L-SGD-Routine (Algorithm 4), σ's of Proposition E.2.

    In round r, client ``p_r = 1 + (r mod P)`` (0-based: ``r mod P``) runs K − 1 local steps on
    minibatches of b records drawn without replacement, each clipped to
    ``C3·‖x_{k−1,r−1} − x_{k−2,r−1}‖`` with noise ``N(0, σ3²C_{3,k,r}² I)``.  Output (spec §2.5):
    a uniform draw over the local points ``x_{k,r−1}``, k = 0..K−1, r = 1..R.
    """

    CLAIM_SOURCE: ClassVar[str] = "Proposition E.2 / 5.1"
    local_steps: int = DEFAULT_LOCAL_STEPS
    """K (Alg. 4); [DEFAULT] 10."""
    batch: int = 1
    """b, minibatch size (Prop. E.2 b-condition)."""
    sigma3: float = 1.0
    """σ3, local-step noise multiplier (Prop. E.2; exact Lemma B.7 solve by default)."""
    clip3: float = 1.0
    """C3 = C2 (Thm 5.3)."""
    zeta: float = 0.0
    """ζ of A5.2 (0 for IID silos), used only in the step-size cap."""
    u2: float = DEFAULT_U2
    """u2 of Prop. E.2 (``u`` holds u1)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_count(self.local_steps, "local_steps")
        check_count(self.batch, "batch")
        if self.batch > self.n_min:
            raise InputError(f"batch must be <= n_min = {self.n_min}, got {self.batch}")
        check_positive(self.sigma3, "sigma3")
        check_positive(self.clip3, "clip3")
        check_positive(self.zeta, "zeta", allow_zero=True)
        if self.silo_sizes is not None:
            raise InputError(
                "unequal silos (silo_sizes) are supported by the GD routine only; "
                "BVR needs equal silos"
            )

    @property
    def analysed_points(self) -> int:
        """R·K local points ``x_{k,r−1}``, k = 0..K−1."""
        return self.rounds * self.local_steps

    @property
    def local_rdp_epsilon(self) -> float:
        """``K⌈R/P⌉ε'_{B7}(α*)``: the local steps' share of Prop. E.2's ε (RDP at α*)."""
        active = -(-self.rounds // self.silos)
        return (
            self.local_steps
            * active
            * subsampled_rdp_wor(self.alpha, self.sigma3, self.batch, self.n_min)
        )

    @property
    def paper_epsilon(self) -> float:
        """Prop. E.2's ε at α = α*: DIFF2 rounds + K⌈R/P⌉ε'(α*) + ln(1/δ)/(α* − 1) (≤ the
        target)."""
        return (
            diff2_rdp_epsilon(**self._transcript(), delta=self.delta, alpha=self.alpha)
            + self.local_rdp_epsilon
        )

    @property
    def accountant_epsilon(self) -> float:
        """dp-accounting RDP (REPLACE_ONE, sampled w/o replacement) ε of the full transcript (spec
        §3.7)."""
        return bvr_accountant_epsilon(self)

    @property
    def params(self) -> dict:
        out = super().params
        out.update(paper_epsilon=self.paper_epsilon, local_rdp_epsilon=self.local_rdp_epsilon)
        return out

    def utility_bound(self, initial_gap: float) -> float:
        """Prop. F.3: ``2Δ0/(ηKR) + 2eσ1²C1²d`` (under the η caps of Prop. F.2/F.3)."""
        return (
            2
            * check_positive(initial_gap, "initial_gap")
            / (self.eta * self.local_steps * self.rounds)
            + 2 * math.e * self.sigma1**2 * self.clip1**2 * self.d
        )

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        initial_gap: float,
        x0=None,
        local_steps: int = DEFAULT_LOCAL_STEPS,
        batch: int | None = None,
        zeta: float = 0.0,
        u1: float = DEFAULT_U1,
        u2: float = DEFAULT_U2,
        rounds: int | None = None,
        period: int | None = None,
        eta: float | None = None,
        clip1: float | None = None,
        clip2: float | None = None,
        sigma3_rule: str = "exact",
    ) -> DIFF2BVRLSGD:
        """σ's of Prop. E.2 (σ3 by the exact Lemma B.7 solve), b from the b-condition, η from Props
        F.2/F.3.

        ``sigma3_rule="closed_form"`` takes σ3 from the proof of Prop. E.2
        (:func:`bvr_sigma3_closed_form`); ``"table1"`` its second branch σ3 = √(6α*)/b alone, the
        value behind Thm 5.3's Θ̃(L√d/(√K b√ε)) term and Table 1.  Both are defined for every (K, b,
        R); with a ``batch`` outside the b-condition the result is NOT private, only Thm 5.3's
        schedule (R, η, T) for counting (Table 1's K = b = √N: at P = 10 the first branch of σ3
        dominates for every N, so only ``"table1"`` gives the table's regime).

        Schedule [DERIVED like spec §2.6.5, for the Prop. F.3 bound ``2Δ0/(ηKR) + 2eσ1²C1²d`` with η
        at the cap ``1/(2K sqrt(2eTσ2²C2²d))``]: ``x* = min{1, (e a1 C1² d/(Δ0 C2 sqrt(2e a2 d)
        N))^{2/3}}``, ``R = ⌈N/(2K C2 sqrt(2e x* a2 d) η₀)⌉`` with ``η₀ = min{1/(2L),
        1/(2sqrt(2e(K²ζ² + KL²/b + KC3²σ3²d)))}`` (iterated with σ3 and b, which depend on R), ``T =
        max{1, round(x*R)}``; ``a1 = 4u1α*/ε``, ``a2 = 4u2α*/ε``.
        """
        p, n_min, d = problem.n, problem.m, problem.d
        eps, dl = problem.epsilon, problem.delta
        _, lsm, gap, c1, c2 = _problem_constants(
            problem, initial_gap=initial_gap, clip1=clip1, clip2=clip2
        )
        k = check_count(local_steps, "local_steps")
        check_choice(sigma3_rule, ("exact", "closed_form", "table1"), "sigma3_rule")
        alpha, big_n = alpha_star(eps, dl), n_min * p
        a1, a2 = 4 * u1 * alpha / eps, 4 * u2 * alpha / eps
        frac = min(
            1.0,
            (math.e * a1 * c1**2 * d / (gap * c2 * math.sqrt(2 * math.e * a2 * d) * big_n))
            ** (2 / 3),
        )
        r_est = (
            rounds
            if rounds is not None
            else max(
                2, math.ceil(2 * lsm * big_n / (2 * k * c2 * math.sqrt(2 * math.e * frac * a2 * d)))
            )
        )
        for _ in range(4):
            schedule = dict(
                n_min=n_min, silos=p, rounds=r_est, local_steps=k, epsilon=eps, delta=dl
            )
            b = batch if batch is not None else bvr_minibatch(**schedule)
            if sigma3_rule == "exact":
                s3 = bvr_sigma3_exact(**schedule, batch=b, u1=u1, u2=u2)
            elif sigma3_rule == "closed_form":
                s3 = bvr_sigma3_closed_form(**schedule, batch=b)
            else:
                s3 = math.sqrt(6.0 * alpha) / b
            eta0 = min(
                1 / (2 * lsm),
                1
                / (
                    2
                    * math.sqrt(
                        2 * math.e * (k**2 * zeta**2 + k * lsm**2 / b + k * c2**2 * s3**2 * d)
                    )
                ),
            )
            if rounds is not None:
                break
            r_est = max(
                2, math.ceil(big_n / (2 * k * c2 * math.sqrt(2 * math.e * frac * a2 * d) * eta0))
            )
        rounds = r_est
        if period is None:
            period = max(1, round(frac * rounds))
        period = min(check_count(period, "period"), rounds)
        s1, s2 = bvr_sigmas(
            n_min=n_min, silos=p, rounds=rounds, period=period, epsilon=eps, delta=dl, u1=u1, u2=u2
        )
        if eta is None:
            cap3 = (
                1 / (2 * k * math.sqrt(2 * math.e * period * s2**2 * c2**2 * d))
                if s2 > 0
                else math.inf
            )
            eta = min(eta0, cap3)
        return cls(
            **_problem_fields(problem, n_min),
            rounds=rounds,
            period=period,
            sigma1=s1,
            sigma2=s2,
            clip1=c1,
            clip2=c2,
            eta=eta,
            x0=x0,
            u=u1,
            local_steps=k,
            batch=b,
            sigma3=s3,
            clip3=c2,
            zeta=zeta,
            u2=u2,
        )

    def _routine(
        self, r: int, x_prev: np.ndarray, v_tilde: np.ndarray, *, silos: _Silos, rng, out: _Output
    ) -> np.ndarray:
        """BVR-L-SGD-Routine (Algorithm 4) for round r: returns ``x_r = x_{K,r−1}``."""
        t, base = x_prev.shape[0], (r - 1) * self.local_steps
        out.keep(base, x_prev)
        prev2, prev = x_prev, x_prev - self.eta * v_tilde
        v = v_tilde
        silo = r % self.silos
        rows = np.arange(t)[:, None]
        for k in range(2, self.local_steps + 1):
            out.keep(base + k - 1, prev)
            picks = np.argpartition(rng.random((t, silos.size)), self.batch - 1, axis=1)[
                :, : self.batch
            ]
            ids = silos.index[silo][picks]
            radius = self.clip3 * np.linalg.norm(prev - prev2, axis=1)
            g = self.loss.grad(prev, silos.x, silos.y) - self.loss.grad(prev2, silos.x, silos.y)
            v = _clipped_mean(g[rows, ids], radius, np.full(self.batch, 1.0 / self.batch)) + v
            v = v + (self.sigma3 * radius)[:, None] * rng.standard_normal((t, self.d))
            prev2, prev = prev, prev - self.eta * v
        return prev

    def _counts(self, silos: _Silos) -> np.ndarray:
        """DIFF2 rounds (spec §2.7) plus 2b(K − 1) per round at client p_r (Remark 5.5)."""
        counts = super()._counts(silos)
        active = np.bincount(np.arange(1, self.rounds + 1) % self.silos, minlength=self.silos)
        return counts + 2 * self.batch * (self.local_steps - 1) * active


# --------------------------------------------------------------------------- white-box audit view


AUDIT_STRENGTH = 1e6
"""λ of the §7(a) canary ``±(λ/2)‖θ − c‖²`` (λ ≫ C1, C2 makes every clip bind)."""

AUDIT_CENTER = 5.0
"""The canary's centre c = (5, 5): a point the iterates never reach (η = 0.01)."""


CANARY_PROBLEM = Problem(n=2, m=5, d=2, epsilon=3.0, delta=1e-5, lipschitz=1.0, smoothness=1.0)
"""The §7(a) audit's problem: P = 2 silos of 5 records, d = 2, (ε, δ) = (3, 1e-5), G = L = 1."""
