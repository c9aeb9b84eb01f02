"""Audit setups of DIFF2 (Murata & Suzuki 2023, paper ``murata-suzuki-2023``; spec 004 §7(a)).

* :class:`DIFF2CanaryLikelihoodRatio` — the transcript statistic: DIFF2 followed by the canary's
  log-likelihood ratio.
* :func:`canary_audit_target` — the signed quadratic canary pair with the algorithm, as an
  :class:`~dpclaims.target.AuditTarget`.
* :func:`gradient_canary_target` — the all-iterates audit through the transcript interface
  (:mod:`dpclaims.algorithms.transcript`): a fixed-gradient canary, whose signal only the
  restart rounds carry, and the exact likelihood ratio of :attr:`DIFF2.step_release`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpclaims.algorithms.murata_suzuki_2023 import (
    _TINY,
    AUDIT_CENTER,
    AUDIT_STRENGTH,
    CANARY_PROBLEM,
    DIFF2,
    DIFF2GD,
    DPGD,
    EXPERIMENT_U,
)
from dpclaims.data import UserDataset
from dpclaims.errors import (
    InputError,
    check_finite_array,
    check_positive,
)
from dpclaims.losses import LinearLoss
from dpclaims.problem import Problem
from dpclaims.target import AuditTarget
from dpclaims.targets.dpsgd import transcript_target

__all__ = ["DIFF2CanaryLikelihoodRatio", "canary_audit_target", "gradient_canary_target"]


@dataclass(frozen=True)
class DIFF2CanaryLikelihoodRatio:
    """The transcript audit of spec 004 §7(a): DIFF2 followed by the canary's log-likelihood ratio.

    For the ``±(λ/2)‖θ − c‖²`` canary record (λ ≫ C1, C2) in a silo of ``n_p`` records, every
    round's clipped canary term has full radius: ``±C1 u_r`` on restarts (``u_r`` the unit vector of
    ``x_{r−1} − c``) and ``±C_{2,r} u_r`` on difference rounds (``u_r`` that of ``x_{r−1} −
    x_{r−2}``). With the *claimed* multipliers of ``reference`` (default: the algorithm itself)::

        S = Σ_r κ_r ⟨w_r, u_r⟩ / s_r,   w_r = ṽ_r − (0 on restarts, ṽ_{r−1} otherwise),
        s_r = σ1C1 or σ2C2‖x_{r−1} − x_{r−2}‖,   κ_r = 2/(n_p P σ)

    is exactly the log-likelihood ratio of the released transcript, N(±μ²/2, μ²) for a correct
    implementation (μ = :attr:`DIFF2.mu`), so the threshold test on S is optimal.  S is a
    post-processing of the released ``(x_r, ṽ_r)``, so auditing it audits the paper's claim.
    Output ``(trials, 1)``; only server rounds enter (for BVR the local steps are ignored).
    """

    algorithm: DIFF2
    center: np.ndarray
    reference: DIFF2 | None = None
    accumulated: bool = False
    """Test the hypothesis of mutant M5 instead: ``ṽ_r`` carries the *noiseless* running sum since
    the last restart plus fresh noise, so ``S = Σ_r 2⟨ṽ_r, m_r⟩/s_r²`` with ``m_r`` the canary's
    summed clipped terms."""

    def __post_init__(self) -> None:
        c = check_finite_array(self.center, "center", ndim=1)
        if c.shape != (self.algorithm.d,):
            raise InputError(f"center must have shape (d,) = ({self.algorithm.d},), got {c.shape}")
        object.__setattr__(self, "center", c)

    def __call__(self, data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
        run = self.algorithm.run(data, rng, trials, transcript=True)
        return self.statistic(run.iterates, run.estimates)[:, None]

    def statistic(self, iterates: np.ndarray, estimates: np.ndarray) -> np.ndarray:
        """S from the transcript: ``iterates (T, R+1, d)``, ``estimates (T, R, d)`` → ``(T,)``."""
        ref = self.reference or self.algorithm
        scale = ref.n_min * ref.silos
        rounds = np.arange(ref.rounds)
        restart = rounds % ref.period == 0
        x_before = iterates[:, :-1]
        toward = x_before - self.center
        move = np.zeros_like(x_before)
        move[:, 1:] = x_before[:, 1:] - x_before[:, :-1]
        direction = np.where(restart[None, :, None], toward, move)
        length = np.linalg.norm(direction, axis=-1)
        unit = direction / np.maximum(length, _TINY)[..., None]
        sigma = np.where(restart, ref.sigma1, ref.sigma2 if ref.sigma2 > 0 else 1.0)
        std = np.where(restart[None, :], ref.sigma1 * ref.clip1, ref.sigma2 * ref.clip2 * length)
        if self.accumulated:
            step = (
                np.where(restart[None, :], ref.clip1, ref.clip2 * length)[..., None] * unit / scale
            )
            total = np.cumsum(step, axis=1)
            start = (rounds // ref.period) * ref.period
            mean = total - np.where(
                (start > 0)[None, :, None], total[:, np.maximum(start - 1, 0)], 0.0
            )
            terms = 2.0 * np.einsum("trd,trd->tr", estimates, mean) / np.maximum(std, _TINY) ** 2
            return np.where(std > 0, terms, 0.0).sum(axis=1)
        w = estimates.copy()
        w[:, 1:] -= np.where(restart[1:, None], 0.0, estimates[:, :-1])
        kappa = 2.0 / (scale * sigma)
        terms = np.where(
            std > 0, kappa * np.einsum("trd,trd->tr", w, unit) / np.maximum(std, _TINY), 0.0
        )
        return terms.sum(axis=1)


def canary_audit_target(
    algorithm: type[DIFF2GD] = DIFF2GD,
    *,
    problem: Problem = CANARY_PROBLEM,
    rounds: int = 200,
    period: int = 5,
    eta: float = 0.01,
    u: float = EXPERIMENT_U,
    silo_sizes: tuple[int, ...] | None = None,
    accumulated: bool = False,
) -> AuditTarget:
    """The §7(a) white-box audit of ``algorithm`` (:class:`DIFF2GD`, :class:`DPGD` or a mutant).

    Built by ``from_theorem`` on ``problem`` (its loss replaced by the canary's) with
    C1 = C2 = 1, on the signed quadratic canary pair
    (:func:`~dpclaims.hardinstances.canaries.signed_quadratic_canary_pair`); the mechanism
    releases the canary log-likelihood ratio S of the transcript
    (:class:`DIFF2CanaryLikelihoodRatio`)
    computed with the *claimed* σ's of the paper's algorithm (DP-GD for a DP-GD subclass,
    DIFF2-GD otherwise), whose claim is the target's.  ``accumulated`` tests mutant M5's
    hypothesis (the accumulated-mean statistic).  ``silo_sizes`` (e.g. (5, 50), for M4): unequal
    silos padded to the largest, the canary in the first record of the smallest silo (spec
    §7(c) M4); ``problem.n`` and ``problem.m`` are then ignored.
    """
    from dpclaims.hardinstances.canaries import signed_quadratic_canary_pair
    from dpclaims.losses import WeightedSquaredDistanceLoss

    dp_gd = issubclass(algorithm, DPGD)
    options = dict(initial_gap=1.0, rounds=rounds, eta=eta, clip1=1.0)
    if not dp_gd:
        options.update(u=u, period=period, clip2=1.0)
    if silo_sizes is not None:
        if dp_gd:
            raise InputError("silo_sizes is supported for DIFF2-GD only")
        problem = problem.replace(n=len(silo_sizes), m=max(silo_sizes))
        options.update(silo_sizes=tuple(silo_sizes))
    pair = signed_quadratic_canary_pair(
        silos=problem.n,
        per_silo=problem.m,
        d=problem.d,
        center=AUDIT_CENTER,
        silo=int(np.argmin(silo_sizes)) if silo_sizes is not None else 0,
    )
    problem = problem.replace(loss=WeightedSquaredDistanceLoss(AUDIT_STRENGTH))
    reference = (DPGD if dp_gd else DIFF2GD).from_theorem(problem, **options)
    mechanism = DIFF2CanaryLikelihoodRatio(
        algorithm=algorithm.from_theorem(problem, **options),
        center=np.full(problem.d, AUDIT_CENTER),
        reference=reference,
        accumulated=accumulated,
    )
    return AuditTarget(mechanism=mechanism, d0=pair.d0, d1=pair.d1, claim=reference.privacy_claim)


def gradient_canary_target(
    algorithm: DIFF2, data: UserDataset, *, canary_scale: float = 10.0
) -> AuditTarget:
    """The all-iterates audit of ``algorithm`` (any :class:`DIFF2`, on a
    :class:`~dpclaims.losses.LinearLoss`, whose gradients are fixed vectors) with a gradient
    canary along the last coordinate e, through the transcript interface
    (:func:`~dpclaims.targets.dpsgd.transcript_target`).

    The first record of the smallest silo of ``data`` (P silos on n, records on m; the last
    coordinate 0 in every record, so that the other gradients are orthogonal to e) becomes a
    record whose gradient is ``canary_scale·C1·e`` in ``d1`` and ``−canary_scale·C1·e`` in
    ``d0`` (replace-one, the claim's relation; clipped to ±C1·e).  The statistic is the exact
    log-likelihood ratio of :attr:`DIFF2.step_release` on the released ṽ_r: only the restart
    rounds carry a fixed gradient, so the pair is μ-GDP with μ = 2√⌈R/T⌉/(n_min P σ1)
    (``step_release.epsilon(δ)`` is its exact ε, below the claim, which also covers the
    difference rounds' share).
    """
    if not isinstance(algorithm, DIFF2):
        raise InputError(f"algorithm must be a DIFF2, got {type(algorithm).__name__}")
    if not isinstance(algorithm.loss, LinearLoss):
        raise InputError(
            "a fixed-gradient canary record needs a LinearLoss algorithm (its gradients do not "
            f"depend on the model), got {type(algorithm.loss).__name__}"
        )
    if not isinstance(data, UserDataset) or data.d != algorithm.d:
        raise InputError(f"data must be a UserDataset of d = {algorithm.d} features")
    scale = check_positive(canary_scale, "canary_scale")
    if algorithm.loss.scale == 0:
        raise InputError("the LinearLoss scale must be nonzero (a zero loss has no canary)")
    sizes = algorithm.silo_sizes or (data.m,) * data.n
    silo = int(np.argmin(sizes))
    if sizes[silo] != algorithm.n_min:
        raise InputError(
            f"the canary's silo holds {sizes[silo]} records but the release model (and the "
            f"claim) is for n_min = {algorithm.n_min}; pass data with m = {algorithm.n_min}"
        )
    e = np.zeros(algorithm.d)
    e[-1] = 1.0
    # LinearLoss: ∇ℓ(θ; x) = −scale·x, so x = −g/scale has the fixed gradient g
    record = -(scale * algorithm.clip1 / algorithm.loss.scale) * e
    pair = []
    for sign in (-1.0, 1.0):
        x = data.x.copy()
        x[silo, 0] = sign * record
        pair.append(UserDataset(x, data.y))
    return transcript_target(
        algorithm,
        pair[0],
        pair[1],
        direction=e,
        name=f"{type(algorithm).__name__}/all-iterates/gradient",
        description=(
            f"{type(algorithm).__name__} (R = {algorithm.rounds}, T = {algorithm.period}, "
            f"σ1 = {algorithm.sigma1:.4g}), fixed-gradient canary ±C1·e in silo {silo}, "
            "all-iterates threat model"
        ),
    )
