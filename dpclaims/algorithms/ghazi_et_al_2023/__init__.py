"""User-level DP convex optimisation by deletion-sensitivity output perturbation.

Ghazi et al., ICML 2023.  Spec: ``shared/papers/001_ghazi_et_al_user_level_convex.md`` (paper
id ``ghazi-et-al-2023``).  Reference implementations, in the paper's order:

* :class:`DelOutputPert` — Algorithm 1 (Thm 3.3): stability test with the shifted truncated
  discrete Laplace radius, ``⊥`` output, Gaussian noise;
* :class:`SCOutputPert` — Algorithm 2 (Thm 3.1) with the exact ERM minimiser, ``path="exact"``
  (exhaustive test) or ``path="fast"`` (Appendix C gradient certificate, exhaustive fallback);
* :class:`PhasedERM` — Algorithm 3 (Thm 4.1); :class:`PhasedSCO` — Algorithm 4 (Thm 5.1);
* :class:`StronglyConvexERM` — Algorithm 5 (Thm 4.3); :class:`StronglyConvexSCO` —
  Algorithm 6 (Thm 5.3);
* baselines :class:`NaiveUserOutputPert` and :class:`ItemLevelOutputPert` (spec §2.9).

Every ``from_theorem(problem, *, ...)`` reads n, m, d, ε, δ, G, μ, the radius of K and the loss
from a :class:`~dpclaims.problem.Problem`; the loss is a :mod:`dpclaims.losses` loss with an
exact minimiser (squared distance, linear, ℓ1 distance in d = 1).  The algorithms run with the
paper's constants (private) or, where the spec asks for it, with ``oracle=C``: the per-call
output is the "ideal" ``θ* + N(0, σ²)`` with ``σ = C·G/(μ n √m)`` — **not private**, only for
exponent tests (spec §7(b)).  Outputs of the ⊥-capable mechanisms are encoded for auditors as
``[⊥ flag, θ (0 when ⊥)]``.  Known-buggy variants are subclasses in
:mod:`dpclaims.targets.mutants.ghazi_et_al_2023`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from dpclaims.algorithms.ghazi_et_al_2023.stability import (
    Domain,
    L1Minimiser,
    QuadraticMinimiser,
    TDLap,
    exact_minimiser,
    inner_privacy_params,
    stability_profile,
)
from dpclaims.algorithms.mechanisms import gaussian_sigma
from dpclaims.data import GroupedMeans, as_grouped
from dpclaims.errors import (
    InputError,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_trials,
)
from dpclaims.losses import LinearLoss, SquaredDistanceLoss
from dpclaims.privacy import PrivacyClaim
from dpclaims.problem import Problem

__all__ = [
    "PAPER_ID",
    "C_DELTA_INTERIOR",
    "C_DELTA_CONSTRAINED",
    "PROP_B1_CONSTANT",
    "MODES",
    "PATHS",
    "DelOutputPert",
    "SCOutputPert",
    "PhasedERM",
    "PhasedSCO",
    "StronglyConvexERM",
    "StronglyConvexSCO",
    "NaiveUserOutputPert",
    "ItemLevelOutputPert",
    "BottomChannel",
    "OutputPertRun",
    "PhasedRun",
    "phased_sco_blocks",
    "phased_sco_n0",
    "min_users",
    "encode",
]

PAPER_ID = "ghazi-et-al-2023"
C_DELTA_INTERIOR = 5.0
"""``C_Δ = C_γ`` when the minimisers are interior [DERIVED, spec §2.2]: union bound over
2n^{4κ+1} events."""
C_DELTA_CONSTRAINED = 10.0
"""``C_Δ = C_γ`` with an active constraint [DERIVED, spec §2.2] (centred gradients of norm
≤ 2G)."""
PROP_B1_CONSTANT = 30.0
"""Proposition B.1: ``‖θ*(x) − θ*(D)‖ ≤ 30 G √(ln(2/β))/(μ√(nm))``."""
MODES = ("paper", "oracle")
PATHS = ("exact", "fast")
STABILITY_CHUNK = 64
"""Per-trial functions (Phased calls with per-trial centres) handled per exhaustive-test batch."""


def _check_budget(problem: Problem) -> tuple[float, float]:
    if not isinstance(problem, Problem):
        raise InputError(
            f"problem must be a dpclaims.problem.Problem, got {type(problem).__name__}; pass "
            "e.g. Problem(n=1000, m=10, epsilon=1.0, delta=1e-5)"
        )
    if problem.delta == 0:
        raise InputError(
            "delta must be > 0 (the paper proves approximate DP only); pass e.g. delta=1e-5"
        )
    return problem.epsilon, problem.delta


def _mode(oracle: float | None) -> tuple[str, float]:
    """``(mode, oracle_constant)``: paper constants (None) or the oracle's C > 0."""
    if oracle is None:
        return "paper", 1.0
    return "oracle", check_positive(oracle, "oracle")


def _check_loss(loss: Any, default: Any) -> Any:
    """``loss`` (``default`` when None), after checking it has an exact minimiser."""
    loss = default if loss is None else loss
    exact_minimiser(loss)
    return loss


def encode(theta: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Auditor encoding ``[⊥ flag, θ with ⊥ rows set to 0]``: (trials, d) → (trials, 1 + d)."""
    return np.concatenate(
        [bottom[:, None].astype(np.float64), np.where(bottom[:, None], 0.0, theta)], axis=1
    )


@dataclass(frozen=True, kw_only=True)
class OutputPertRun:
    """One batched run of an output-perturbation mechanism.

    ``theta (trials, d)`` (NaN rows where the output is ⊥), ``bottom (trials,)`` bool,
    ``gradient_evaluations`` per trial (per-item gradients of the certificate, n·m),
    ``f_evaluations`` (sub-datasets the exhaustive test solved), ``sigma``, ``certified``
    (the Appendix-C certificate passed), and with ``transcript=True`` the radius draws ``r1``
    (trials,) and ``s_star`` (per trial or one value).
    """

    theta: np.ndarray
    bottom: np.ndarray
    gradient_evaluations: int
    f_evaluations: int
    sigma: float
    certified: bool | None = None
    r1: np.ndarray | None = None
    s_star: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "bottom_rate": float(self.bottom.mean()),
            "gradient_evaluations": int(self.gradient_evaluations),
            "f_evaluations": int(self.f_evaluations),
            "sigma": float(self.sigma),
            "certified": self.certified,
        }


@dataclass(frozen=True, kw_only=True)
class PhasedRun:
    """A run of a phased algorithm: ``theta (trials, d)``, ``gradient_evaluations`` per trial;
    with ``transcript=True`` the phase iterates ``phases (trials, T, d)`` and ⊥ flags
    ``bottoms (trials, T)``."""

    theta: np.ndarray
    gradient_evaluations: int
    phases: np.ndarray | None = None
    bottoms: np.ndarray | None = None

    def to_dict(self) -> dict:
        out = {
            "trials": int(self.theta.shape[0]),
            "d": int(self.theta.shape[1]),
            "gradient_evaluations": int(self.gradient_evaluations),
        }
        if self.bottoms is not None:
            out["bottom_rate_per_phase"] = self.bottoms.mean(axis=0).tolist()
        return out


def _params(obj) -> dict:
    """The fields of ``obj``, with loss objects as their repr."""
    return {
        key: repr(getattr(obj, key)) if isinstance(value, dict) else value
        for key, value in asdict(obj).items()
    }


def _claim(obj, theorem: str) -> PrivacyClaim:
    """User-level replace-one (ε, δ) claim of ``theorem``; oracle mode is refused."""
    if getattr(obj, "mode", "paper") == "oracle":
        raise InputError(
            "oracle mode is not private (an exponent-test device, spec §7(b)); build without "
            "oracle= for the private algorithm"
        )
    return PrivacyClaim(
        epsilon=obj.epsilon,
        delta=obj.delta,
        unit="user",
        relation="replace",
        source=f"Ghazi et al. 2023, {theorem}",
    )


# --------------------------------------------------------------------------- Algorithm 1


class _StableRelease:
    """Lines 2-7 of Algorithm 1, shared by :class:`DelOutputPert` and :class:`SCOutputPert`.

    The mutants of :mod:`dpclaims.targets.mutants.ghazi_et_al_2023` override one of
    :meth:`_sensitivity_factor`, :meth:`_draw_radius` or :meth:`_release`.
    """

    @staticmethod
    def _sensitivity_factor(kappa: int) -> float:
        """8κ: sensitivity of f at the chosen sub-dataset, in units of Δ (Alg. 1 line 2)."""
        return 8.0 * kappa

    @classmethod
    def _gaussian_scale(cls, eps1: float, delta1: float, kappa: int, target: float) -> float:
        """``σ = √(2 ln(2/δ1))·8κΔ/ε1`` (Algorithm 1 line 2 [RECON]: Gaussian mechanism)."""
        factor = cls._sensitivity_factor(kappa)
        return math.sqrt(2.0 * math.log(2.0 / delta1)) * factor * target / eps1

    @property
    def tdlap(self) -> TDLap:
        """The radius distribution ``TDLap(ε1, δ1)``."""
        return TDLap(self.eps1, self.delta1)

    def _draw_radius(self, rng: np.random.Generator, trials: int) -> np.ndarray:
        """``R1 ~ TDLap(ε1, δ1)`` (Algorithm 1 line 3), one per trial."""
        return self.tdlap.sample(rng, trials)

    def _solver(self) -> Any:
        """The f of Algorithm 1: an object with ``minimiser(values, weights, *, reg, centre,
        domain) -> (B, N, d)``; ``θ*_{ℓ,K}`` (:func:`exact_minimiser`) unless a generic ``f``
        was given (Theorem 3.3 holds for every deterministic f)."""
        generic = getattr(self, "f", None)
        return exact_minimiser(self.loss) if generic is None else generic

    def _user_types(self, data: GroupedMeans) -> tuple[np.ndarray, np.ndarray]:
        """Distinct users ``(t, d)`` and their counts ``(t,)``, after checking the data suit
        the exhaustive test (per-user statistics; point masses for the l1 loss)."""
        data.require_per_user("the exhaustive stability test")
        if isinstance(self._solver(), L1Minimiser):
            _require_atoms(data)
        return data.types()

    def _release(self, data: GroupedMeans, rng, trials: int, *, reg, centre, domain, target):
        """Algorithm 1 lines 3-7 with per-trial (``centre (trials, d)``) or shared (None) f.

        Returns ``theta (trials, d)`` (NaN on ⊥), ``bottom``, ``r1``, ``s_star`` and the
        number of f evaluations.
        """
        values, counts = self._user_types(data)
        solver = self._solver()
        d = data.d
        batches = (
            [None]
            if centre is None
            else [centre[i : i + STABILITY_CHUNK] for i in range(0, trials, STABILITY_CHUNK)]
        )
        s_parts, c_parts, evaluations = [], [], 0
        for part in batches:
            b = 1 if part is None else part.shape[0]
            profile = stability_profile(
                values,
                counts,
                lambda states, part=part: solver.minimiser(
                    values, states, reg=reg, centre=part, domain=domain
                ),
                kappa=self.kappa,
                delta_target=target,
                empty_value=np.zeros((b, d)),
            )
            s_parts.append(profile.s_star)
            c_parts.append(profile.choice)
            evaluations = profile.f_evaluations
        s_star, choice = np.concatenate(s_parts), np.concatenate(c_parts)
        r1 = self._draw_radius(rng, trials)
        bottom = r1 < s_star
        noise = self.sigma * rng.standard_normal((trials, d))
        theta = np.where(bottom[:, None], np.nan, np.broadcast_to(choice, (trials, d)) + noise)
        return theta, bottom, r1, s_star, evaluations

    def _release_run(
        self, data: GroupedMeans, rng, trials: int, *, reg, centre, domain, target, transcript
    ) -> OutputPertRun:
        """:meth:`_release` as a run (no gradients spent; ``r1`` and ``s_star`` kept with
        ``transcript``)."""
        theta, bottom, r1, s_star, evaluations = self._release(
            data, rng, trials, reg=reg, centre=centre, domain=domain, target=target
        )
        return OutputPertRun(
            theta=theta,
            bottom=bottom,
            gradient_evaluations=0,
            f_evaluations=evaluations,
            sigma=self.sigma,
            r1=r1 if transcript else None,
            s_star=s_star if transcript else None,
        )


def _require_atoms(data: GroupedMeans) -> None:
    if not data.point_mass:
        raise InputError(
            "the l1 loss needs every item of a user to be known; pass point-mass data "
            "(GroupedMeans(..., point_mass=True) or users holding identical items)"
        )


@dataclass(frozen=True, kw_only=True)
class DelOutputPert(_StableRelease):
    """Algorithm 1, ``DelOutputPert_{ε,δ,Δ}(f; x)`` (Theorem 3.3), with ``f = θ*_{ℓ,K}``.

    ``f`` is the exact constrained minimiser of ``loss`` over ``K = B(0, radius)`` (with
    ``radius = inf`` and the squared-distance loss, f is the mean of the items); ``f(∅) = 0``.
    Privacy holds for every ``Delta > 0`` (Thm 3.3); Δ matters only for utility.
    """

    epsilon: float
    delta: float
    Delta: float
    """Target deletion sensitivity Δ (an input of Algorithm 1)."""
    loss: Any
    radius: float = math.inf
    eps1: float = 0.0
    """``ε1 = ε/2`` (Algorithm 1 line 3 [RECON])."""
    delta1: float = 0.0
    """``δ1 = δ/(e^ε + 2)`` (Algorithm 1 line 3 [RECON])."""
    kappa: int = 0
    """``κ = 1 + ⌈ln(1/δ1)/ε1⌉`` (Definition 3.4 [RECON: rounding])."""
    sigma: float = 0.0
    """``σ = √(2 ln(2/δ1))·8κΔ/ε1`` (Algorithm 1 line 2 [RECON]: Gaussian mechanism,
    sensitivity 8κΔ)."""
    f: Any = None
    """A generic deterministic f of the type counts (``minimiser(values, weights, *, reg,
    centre, domain) -> (B, N, d)``, weights = users per type); None: ``θ*_{ℓ,K}``."""

    @classmethod
    def from_theorem(cls, problem: Problem, *, Delta: float, f: Any = None) -> DelOutputPert:
        """Every parameter of Algorithm 1 from (ε, δ, Δ); ``problem`` gives ε, δ, the radius of K
        and the loss (default ``SquaredDistanceLoss(1)``); n, m, d are read from the data.
        ``f`` replaces ``θ*_{ℓ,K}`` by a generic function (Theorem 3.3 holds for every f)."""
        epsilon, delta = _check_budget(problem)
        Delta = check_positive(Delta, "Delta")
        eps1, delta1, kappa = inner_privacy_params(epsilon, delta)
        return cls(
            epsilon=epsilon,
            delta=delta,
            Delta=Delta,
            loss=_check_loss(problem.loss, SquaredDistanceLoss(1.0)),
            radius=problem.radius,
            eps1=eps1,
            delta1=delta1,
            kappa=kappa,
            sigma=cls._gaussian_scale(eps1, delta1, kappa, Delta),
            f=f,
        )

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _claim(self, "Theorem 3.3")

    def stability(self, data) -> tuple[int, np.ndarray]:
        """``(s*(x), f(x_{−S*}))`` of the exhaustive test (spec §2.1); ``s* = 2κ+1`` means
        always ⊥."""
        data = as_grouped(data)
        values, counts = data.types()
        solver = self._solver()
        profile = stability_profile(
            values,
            counts,
            lambda s: solver.minimiser(values, s, reg=0.0, centre=None, domain=self._domain()),
            kappa=self.kappa,
            delta_target=self.Delta,
            empty_value=np.zeros((1, data.d)),
        )
        return int(profile.s_star[0]), profile.choice[0]

    def bottom_probability(self, data) -> float:
        """Exact ``Pr[⊥ | x] = Pr[R1 ≤ s*(x) − 1]`` (spec §2.1)."""
        return float(self.tdlap.cdf(self.stability(data)[0] - 1))

    def _domain(self) -> Domain:
        return Domain(self.radius)

    def run(
        self, data, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> OutputPertRun:
        """``trials`` independent runs: θ (NaN on ⊥) and the ⊥ flags."""
        trials = check_trials(trials)
        data = as_grouped(data)
        return self._release_run(
            data,
            rng,
            trials,
            reg=0.0,
            centre=None,
            domain=self._domain(),
            target=self.Delta,
            transcript=transcript,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        out = self.run(data, rng, trials)
        return encode(out.theta, out.bottom)


# ------------------------------------------------------------------------ Algorithm 2 + Appendix C


@dataclass(frozen=True, kw_only=True)
class SCOutputPert(_StableRelease):
    """Algorithm 2, ``SCOutputPert_{ε,δ,β,G,μ,K}(ℓ; x)`` (Theorem 3.1) and its Appendix-C fast
    path.

    ``f(y) = argmin_{θ∈K} L(θ; y) + (reg/2)‖θ − c‖²`` (``reg > 0`` and per-trial centres ``c``
    when called inside the phased algorithms), ``K = B(0, radius)`` (optionally ∩ a local
    ball).  ``strong_convexity`` is the μ the formulas use (λ_i inside the phases).
    """

    epsilon: float
    delta: float
    beta: float
    lipschitz: float
    strong_convexity: float
    n: int
    m: int
    radius: float = math.inf
    loss: Any = None
    reg: float = 0.0
    interior: bool = False
    path: str = "fast"
    mode: str = "paper"
    oracle_constant: float = 1.0
    eps1: float = 0.0
    """ε/2 (Algorithm 1 line 3 [RECON])."""
    delta1: float = 0.0
    """δ/(e^ε + 2) (Algorithm 1 line 3 [RECON])."""
    kappa: int = 0
    """κ(ε1, δ1) (Definition 3.4)."""
    c_delta: float = 0.0
    """C_Δ = C_γ: 5 interior / 10 constrained [DERIVED, spec §2.2]."""
    Delta: float = 0.0
    """``C_Δ G √((4κ+1) ln n + ln(2/β)) / (μ (n − 4κ − 1) √m)`` (Alg 2 line 3, Cor 3.7
    [DERIVED constant])."""
    gamma0: float = 0.0
    """``C_γ G √(ln(n/β)/m)`` (Appendix C, w.h.p. bound on γ(x^π) [DERIVED])."""
    Delta_fast: float = 0.0
    """``2(4κ+1)γ0/(μ(n − 4κ − 1))`` (Lemma C.1 [DERIVED form])."""
    sigma: float = 0.0
    """``√(2 ln(2/δ1))·8κΔ/ε1`` with Δ or Δ_fast by path; oracle: ``C·G/(μ n √m)`` (not
    private)."""
    noise_multiplier: float = 0.0
    """``C_σ = σ μ n √m / G`` (spec §2.2)."""

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        beta: float,
        reg: float = 0.0,
        interior: bool = False,
        path: str = "fast",
        oracle: float | None = None,
    ) -> SCOutputPert:
        """Every parameter of Algorithm 2 / Appendix C from ``problem`` (n, m, ε, δ, G, μ, K,
        the loss: default ``SquaredDistanceLoss(μ)``) and the failure probability β.

        ``reg`` is the phase regulariser λ_i; ``interior`` picks C_Δ; ``oracle=C`` replaces the
        paper's σ by ``C·G/(μ n √m)`` (not private).  Paper mode needs ``n ≥ 4κ + 2`` (the
        spec's explicit form of "n ≥ C ln(1/δ)/ε"; the Δ formula's denominator); privacy
        itself does not depend on it.
        """
        epsilon, delta = _check_budget(problem)
        n, m, G = problem.n, problem.m, problem.lipschitz
        mu = check_positive(problem.strong_convexity, "strong_convexity")
        beta = check_positive(beta, "beta")
        if beta >= 1:
            raise InputError(f"beta must be in (0, 1), got {beta}")
        check_choice(path, PATHS, "path")
        mode, oracle_constant = _mode(oracle)
        eps1, delta1, kappa = inner_privacy_params(epsilon, delta)
        c = C_DELTA_INTERIOR if interior else C_DELTA_CONSTRAINED
        common = dict(
            epsilon=epsilon,
            delta=delta,
            beta=beta,
            lipschitz=G,
            strong_convexity=mu,
            n=n,
            m=m,
            radius=problem.radius,
            loss=_check_loss(problem.loss, SquaredDistanceLoss(mu)),
            reg=float(reg),
            interior=bool(interior),
            path=path,
            mode=mode,
            oracle_constant=oracle_constant,
            eps1=eps1,
            delta1=delta1,
            kappa=kappa,
            c_delta=c,
        )
        if mode == "oracle":
            sigma = oracle_constant * G / (mu * n * math.sqrt(m))
            return cls(**common, sigma=sigma, noise_multiplier=oracle_constant)
        if n < 4 * kappa + 2:
            raise InputError(
                f"SCOutputPert needs n >= 4*kappa + 2 = {4 * kappa + 2} users at (epsilon, "
                f"delta) = ({epsilon:g}, {delta:g}) (kappa = {kappa}), got n = {n}; raise n or "
                "epsilon"
            )
        r = 4 * kappa
        big_delta = (
            c
            * G
            * math.sqrt((r + 1) * math.log(n) + math.log(2.0 / beta))
            / (mu * (n - r - 1) * math.sqrt(m))
        )
        gamma0 = c * G * math.sqrt(math.log(n / beta) / m)
        delta_fast = 2.0 * (r + 1) * gamma0 / (mu * (n - r - 1))
        target = big_delta if path == "exact" else delta_fast
        sigma = cls._gaussian_scale(eps1, delta1, kappa, target)
        return cls(
            **common,
            Delta=big_delta,
            gamma0=gamma0,
            Delta_fast=delta_fast,
            sigma=sigma,
            noise_multiplier=sigma * mu * n * math.sqrt(m) / G,
        )

    @property
    def target(self) -> float:
        """Δ used by the test: Δ (exact path) or Δ_fast (fast path)."""
        return self.Delta if self.path == "exact" else self.Delta_fast

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _claim(self, "Theorem 3.1")

    def certificate(self, data) -> tuple[bool, float]:
        """Lemma C.1 certificate: ``(2(4κ+1)γ(x)/(μ(n−4κ−1)) ≤ Δ_fast, γ(x))``."""
        data = as_grouped(data)
        gamma = exact_minimiser(self.loss).user_deviation(data)
        r = 4 * self.kappa
        return bool(
            2.0 * (r + 1) * gamma / (self.strong_convexity * (self.n - r - 1)) <= self.Delta_fast
        ), gamma

    def minimiser(
        self, data, centre: np.ndarray | None = None, domain: Domain | None = None
    ) -> np.ndarray:
        """``θ*(x)`` of this call's objective: (B, d) (B = 1 without centres)."""
        data = as_grouped(data)
        domain = Domain(self.radius) if domain is None else domain
        solver = exact_minimiser(self.loss)
        if isinstance(solver, L1Minimiser):  # needs the item atoms, not only the mean
            _require_atoms(data)
            values, weights = data.means, data.sizes[None, :]
        else:
            values, weights = data.mean()[None, :], np.ones((1, 1))
        return solver.minimiser(values, weights, reg=self.reg, centre=centre, domain=domain)[
            :, 0, :
        ]

    def run(
        self,
        data,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        centre: np.ndarray | None = None,
        domain: Domain | None = None,
    ) -> OutputPertRun:
        """``trials`` runs; ``centre (trials, d)`` and ``domain`` are the phase's ℓ_i and K_i."""
        trials = check_trials(trials)
        data = as_grouped(data)
        if (data.n, data.m) != (self.n, self.m):
            raise InputError(
                f"this SCOutputPert was built for (n, m) = ({self.n}, {self.m}) but the data "
                f"has ({data.n}, {data.m}); its parameters depend on n and m — rebuild with "
                "from_theorem"
            )
        domain = Domain(self.radius) if domain is None else domain
        if self.mode == "oracle":
            return self._perturbed(
                data, rng, trials, centre=centre, domain=domain, gradient_evaluations=0
            )
        if self.path == "fast":
            certified, _ = self.certificate(data)
            if certified:
                return self._perturbed(
                    data,
                    rng,
                    trials,
                    centre=centre,
                    domain=domain,
                    gradient_evaluations=self.n * self.m,
                    certified=True,
                )
            return self._fallback(
                data, rng, trials, centre=centre, domain=domain, transcript=transcript
            )
        return self._exact(data, rng, trials, centre=centre, domain=domain, transcript=transcript)

    def _perturbed(self, data, rng, trials: int, *, centre, domain, **counts) -> OutputPertRun:
        """θ* + N(0, σ²I) ``(trials, d)`` with no ⊥ (oracle mode, or the certified fast path);
        ``counts`` are the run's gradient count and certificate flag."""
        theta = self.minimiser(data, centre, domain)
        theta = theta + self.sigma * rng.standard_normal((trials, data.d))
        return OutputPertRun(
            theta=theta, bottom=np.zeros(trials, bool), f_evaluations=1, sigma=self.sigma, **counts
        )

    def _fallback(self, data, rng, trials: int, *, centre, domain, transcript) -> OutputPertRun:
        """Appendix C: the certificate failed, so run the exhaustive test (n·m gradients spent)."""
        out = self._exact(data, rng, trials, centre=centre, domain=domain, transcript=transcript)
        return replace(out, gradient_evaluations=self.n * self.m, certified=False)

    def _exact(self, data, rng, trials: int, *, centre, domain, transcript) -> OutputPertRun:
        """Algorithm 1 on this call's objective (the exhaustive stability test)."""
        return self._release_run(
            data,
            rng,
            trials,
            reg=self.reg,
            centre=centre,
            domain=domain,
            target=self.target,
            transcript=transcript,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        out = self.run(data, rng, trials)
        return encode(out.theta, out.bottom)


# --------------------------------------------------------------------------- Algorithms 3 and 4


def _domain_for(
    radius: float, trials: int, domain: Domain | None, d: int
) -> tuple[Domain, np.ndarray]:
    """The domain (K, or Alg 5/6's K ∩ B(θ0, R')) and the start point θ_0 (its centre)."""
    if domain is None:
        return Domain(radius), np.zeros((trials, d))
    start = (
        np.zeros((trials, d))
        if domain.centre is None
        else np.broadcast_to(domain.centre, (trials, d))
    )
    return domain, start


def _lam_choice(lam: float | str, rules: tuple[str, ...]) -> tuple[str, float | None]:
    """``(lam_rule, λ)``: a rule name (λ computed later) or λ itself (rule ``"given"``)."""
    if isinstance(lam, str):
        return check_choice(lam, rules, "lam"), None
    return "given", check_positive(lam, "lam")


def _diameter(problem: Problem, diameter: float | None) -> float:
    """R of Theorems 4.1/5.1: ``diameter``, by default the diameter 2·radius of K."""
    if diameter is not None:
        return check_positive(diameter, "diameter")
    if math.isinf(problem.radius):
        raise InputError(
            "the phased algorithms need a bounded K = B(0, R) for their λ: pass "
            "Problem(radius=...) or diameter="
        )
    return 2.0 * problem.radius


def _phased_fields(problem: Problem, *, diameter, beta, growth, path, interior, oracle) -> dict:
    """The checked fields Algorithms 3 and 4 share, from ``problem`` (loss default
    ``LinearLoss(1)``, β = 1/(nm) unless given); λ is a placeholder 1 until the rule sets it."""
    epsilon, delta = _check_budget(problem)
    n, m = problem.n, problem.m
    mode, oracle_constant = _mode(oracle)
    return {
        "epsilon": epsilon,
        "delta": delta,
        "beta": 1.0 / (n * m) if beta is None else check_positive(beta, "beta"),
        "lam": 1.0,
        "lipschitz": problem.lipschitz,
        "radius": problem.radius,
        "diameter": _diameter(problem, diameter),
        "n": n,
        "m": m,
        "d": problem.d,
        "loss": _check_loss(problem.loss, LinearLoss(1.0)),
        "growth": check_positive(growth, "growth"),
        "mode": mode,
        "path": path,
        "interior": bool(interior),
        "oracle_constant": oracle_constant,
    }


@dataclass(frozen=True, kw_only=True)
class _Phased:
    """What Algorithms 3 and 4 share: their fields, the phase-i call and the run over the phase
    blocks."""

    epsilon: float
    delta: float
    beta: float
    lam: float
    lipschitz: float
    radius: float
    diameter: float
    """R of the theorem (default 2·radius)."""
    n: int
    m: int
    d: int
    loss: Any
    growth: float = 4.0
    mode: str = "paper"
    path: str = "fast"
    interior: bool = False
    oracle_constant: float = 1.0
    lam_rule: str

    @classmethod
    def _with_lam(cls, lam: float | str, rules: tuple[str, ...], /, **fields) -> _Phased:
        """The algorithm from its ``fields`` with λ given, or by the rule ``lam`` (one of
        ``rules``) through :meth:`_rule_lam`."""
        lam_rule, lam = _lam_choice(lam, rules)
        obj = cls(**fields, lam_rule=lam_rule)
        if lam is None:
            lam = obj._rule_lam()
        return replace(obj, lam=check_positive(lam, "lam"))

    def _paper_lam(self) -> float:
        """λ of the paper's rule, ``G√d/(R n √m)`` (Thms 4.1/5.1 proofs)."""
        return self.lipschitz * math.sqrt(self.d) / (self.diameter * self.n * math.sqrt(self.m))

    def _run(self, data, rng, trials: int, *, blocks, domain, transcript) -> PhasedRun:
        """θ_i = SCOutputPert_i(ℓ_i; block_i) with ⊥ → θ_{i−1}, then Π_K, from θ_0 = centre of
        the domain (K, or Alg 5/6's K ∩ B(θ0, R'))."""
        domain, start = _domain_for(self.radius, trials, domain, data.d)
        theta = np.array(start, dtype=np.float64)
        phases, bottoms, grads = [], [], 0
        for call, (lo, hi) in zip(self.calls, blocks, strict=True):
            block = data if (lo, hi) == (0, data.n) else data.block(lo, hi)
            out = call.run(block, rng, trials, centre=theta, domain=domain)
            grads += out.gradient_evaluations
            theta = np.where(out.bottom[:, None], theta, out.theta)  # line 9 [DEFAULT]: ⊥ → θ_{i−1}
            theta = domain.project(theta[:, None, :])[:, 0, :]  # line 10 [DEFAULT]: Proj_K
            if transcript:
                phases.append(theta)
                bottoms.append(out.bottom)
        return PhasedRun(
            theta=theta,
            gradient_evaluations=grads,
            phases=np.stack(phases, axis=1) if transcript else None,
            bottoms=np.stack(bottoms, axis=1) if transcript else None,
        )

    def _phase_call(self, *, n: int, epsilon: float, delta: float, lam_i: float) -> SCOutputPert:
        """``SCOutputPert_{ε_i, δ_i, β/T, 2G, λ_i, K_i}(ℓ_i; block)`` of phase i."""
        problem = Problem(
            n=n,
            m=self.m,
            d=self.d,
            epsilon=epsilon,
            delta=delta,
            lipschitz=2.0 * self.lipschitz,
            strong_convexity=lam_i,
            radius=self.radius,
            loss=self.loss,
        )
        return SCOutputPert.from_theorem(
            problem,
            beta=self.beta / self.phases,
            reg=lam_i,
            interior=self.interior,
            path=self.path,
            oracle=None if self.mode == "paper" else self.oracle_constant,
        )

    @property
    def calls(self) -> list[SCOutputPert]:
        return [self.call(i) for i in range(1, self.phases + 1)]

    @property
    def params(self) -> dict:
        return _params(self)

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True, kw_only=True)
class PhasedERM(_Phased):
    """Algorithm 3, ``Phased-ERM_{ε,δ,λ,β}(ℓ; x)`` (Theorem 4.1): localisation on the full
    dataset.

    Phase i: ``λ_i = λ·growth^i``, ``ℓ_i = ℓ + (λ_i/2)‖θ − θ_{i−1}‖²`` on ``K_i``,
    ``θ_i = SCOutputPert_{ε/T, δ/T, β/T, 2G, λ_i, K_i}(ℓ_i; x)`` (basic composition).
    """

    lam: float
    """λ: ``G√d/(R n √m)`` (Thm 4.1 proof, rule ``"paper"``) × C_σ (``"balanced"``, [DEFAULT]
    recommended)."""
    phases: int
    """T = ⌈log2(nm)⌉ (paper: "log(nm)", base [DEFAULT] 2)."""
    lam_rule: str = "balanced"

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        diameter: float | None = None,
        beta: float | None = None,
        phases: int | None = None,
        lam: float | str = "balanced",
        growth: float = 4.0,
        path: str = "fast",
        interior: bool = False,
        oracle: float | None = None,
    ) -> PhasedERM:
        """Parameters of Algorithm 3 from ``problem`` (n, m, d, ε, δ, G, K, the loss: default
        ``LinearLoss(1)``): β = 1/(nm), T = ⌈log2(nm)⌉ and λ by the rule ``lam`` (``"paper"``
        or ``"balanced"``) unless given; ``path``, ``interior`` and ``oracle`` are passed to
        every :class:`SCOutputPert` call."""
        shared = _phased_fields(
            problem,
            diameter=diameter,
            beta=beta,
            growth=growth,
            path=path,
            interior=interior,
            oracle=oracle,
        )
        nm = problem.n * problem.m
        phases = max(1, math.ceil(math.log2(nm))) if phases is None else phases
        phases = check_count(phases, "phases")
        return cls._with_lam(lam, ("paper", "balanced"), **shared, phases=phases)

    def _rule_lam(self) -> float:
        """λ of the rule: ``G√d/(R n √m)`` (``"paper"``), × C_σ (``"balanced"``)."""
        base = self._paper_lam()
        return base * (
            self.call(1, lam=base).noise_multiplier if self.lam_rule == "balanced" else 1.0
        )

    def _budget_share(self) -> int:
        """Basic composition: every phase gets (ε/T, δ/T)."""
        return self.phases

    def call(self, i: int, lam: float | None = None) -> SCOutputPert:
        """The phase-i SCOutputPert (per-call budget (ε/T, δ/T, β/T), Lipschitz 2G, strong
        convexity λ_i)."""
        lam_i = (self.lam if lam is None else lam) * self.growth**i
        share = self._budget_share()
        return self._phase_call(
            n=self.n, epsilon=self.epsilon / share, delta=self.delta / share, lam_i=lam_i
        )

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _claim(self, "Theorem 4.1")

    def run(
        self,
        data,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        domain: Domain | None = None,
    ) -> PhasedRun:
        trials = check_trials(trials)
        data = as_grouped(data)
        blocks = [(0, data.n)] * self.phases
        return self._run(data, rng, trials, blocks=blocks, domain=domain, transcript=transcript)


def phased_sco_n0(epsilon: float, delta: float) -> int:
    """``N0 = 2(4κ + 1)``, ``κ = κ(ε/2, δ/(e^ε + 2))`` (Algorithm 4 line 1 [DEFAULT])."""
    return 2 * (4 * inner_privacy_params(epsilon, delta)[2] + 1)


def phased_sco_blocks(n: int, n0: int) -> list[tuple[int, int]]:
    """Disjoint user blocks of Algorithm 4: phase i uses (0-based) users
    ``[⌊n/2^i⌋, ⌊n/2^{i−1}⌋)``, ``i = 1..T``, ``T = ⌊log2(n/N0)⌋``."""
    n, n0 = check_count(n, "n"), check_count(n0, "n0")
    phases = int(math.floor(math.log2(n / n0))) if n >= n0 else 0
    return [(n // 2**i, n // 2 ** (i - 1)) for i in range(1, phases + 1)]


@dataclass(frozen=True, kw_only=True)
class PhasedSCO(_Phased):
    """Algorithm 4, ``Phased-SCO_{ε,δ,λ,β}(ℓ; x)`` (Theorem 5.1): one disjoint user block per
    phase.

    Phase i runs ``SCOutputPert_{ε, δ, β/T, 2G, λ_i, K_i}`` at the FULL budget on block i
    (parallel composition); the phase's Δ uses the block size ``n_i``.  ``growth`` of λ_i is
    the paper's 4 by default.  The final phase's output-perturbation noise
    σ_T = C_σ·2G/(λ·growth^T·n_T√m) does not shrink with m relative to RG/√(nm) (λ ∝ 1/√(nm)
    under the max rule), so on a sharp minimum the excess stays at ≈ √(2/π)·2C_σ·G·R·N0/n^{3/2}
    for every m (RT-8, a finding about Thm 5.1).  Growth 8 (Feldman et al.'s variant) divides
    that floor by 2^T but does NOT fix it: the excess is still flat in m.
    """

    lam: float
    """λ: ``(G/R)·max{C_σ√d/(n√m), 1/√(nm)}`` ([DEFAULT] max rule) or ``G√d/(R n √m)``
    (paper, [ERRATA?])."""
    n0: int
    """N0 = 2(4κ+1) [DEFAULT] (paper: C ln(1/δ)/ε)."""
    blocks: tuple
    """((lo, hi), ...) per phase; T = ⌊log2(n/N0)⌋."""
    lam_rule: str = "max"

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        diameter: float | None = None,
        beta: float | None = None,
        n0: int | None = None,
        lam: float | str = "max",
        growth: float = 4.0,
        path: str = "fast",
        interior: bool = False,
        oracle: float | None = None,
    ) -> PhasedSCO:
        """Parameters of Algorithm 4 from ``problem`` (loss default ``LinearLoss(1)``): β =
        1/(nm), N0 by :func:`phased_sco_n0` and λ by the rule ``lam`` (``"max"`` or
        ``"paper"``) unless given."""
        shared = _phased_fields(
            problem,
            diameter=diameter,
            beta=beta,
            growth=growth,
            path=path,
            interior=interior,
            oracle=oracle,
        )
        n = problem.n
        n0 = phased_sco_n0(shared["epsilon"], shared["delta"]) if n0 is None else n0
        n0 = check_count(n0, "n0")
        blocks = tuple(phased_sco_blocks(n, n0))
        if not blocks:
            raise InputError(
                f"Phased-SCO needs n >= 2*N0 = {2 * n0} users for one phase, got n = {n}"
            )
        return cls._with_lam(lam, ("paper", "max"), **shared, n0=n0, blocks=blocks)

    def _rule_lam(self) -> float:
        """λ of the rule: ``(G/R)·max{C_σ√d/(n√m), 1/√(nm)}`` (``"max"``) or ``G√d/(R n √m)``
        (``"paper"``)."""
        base = self._paper_lam()
        if self.lam_rule != "max":
            return base
        n, m = self.n, self.m
        c_sigma = self.call(1, lam=base).noise_multiplier
        return (self.lipschitz / self.diameter) * max(
            c_sigma * math.sqrt(self.d) / (n * math.sqrt(m)), 1.0 / math.sqrt(n * m)
        )

    @property
    def phases(self) -> int:
        return len(self.blocks)

    @property
    def phase_blocks(self) -> list[tuple[int, int]]:
        """The users each phase reads: block i (parallel composition)."""
        return list(self.blocks)

    def call(self, i: int, lam: float | None = None) -> SCOutputPert:
        """The phase-i SCOutputPert on block i at the full (ε, δ), β/T, Lipschitz 2G, λ_i."""
        lo, hi = self.phase_blocks[i - 1]
        lam_i = (self.lam if lam is None else lam) * self.growth**i
        return self._phase_call(n=hi - lo, epsilon=self.epsilon, delta=self.delta, lam_i=lam_i)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _claim(self, "Theorem 5.1")

    def run(
        self,
        data,
        rng: np.random.Generator,
        trials: int,
        transcript: bool = False,
        domain: Domain | None = None,
    ) -> PhasedRun:
        trials = check_trials(trials)
        data = as_grouped(data)
        if data.n != self.n:
            raise InputError(f"built for n = {self.n} users, the data has {data.n}")
        blocks = self.phase_blocks
        return self._run(data, rng, trials, blocks=blocks, domain=domain, transcript=transcript)


# --------------------------------------------------------------------------- Algorithms 5 and 6


def _localised_radius(sigma0: float, d: int, beta: float) -> float:
    """``R' = σ0(√d + √(2 ln(1/β)))`` (Alg 5 line 4 [DEFAULT]: χ_d tail bound for
    "Cσ√(d log(1/β))")."""
    return sigma0 * (math.sqrt(d) + math.sqrt(2.0 * math.log(1.0 / beta)))


@dataclass(frozen=True, kw_only=True)
class _StronglyConvex:
    epsilon: float
    delta: float
    lipschitz: float
    strong_convexity: float
    radius: float
    n: int
    m: int
    d: int
    beta: float
    """β = 1/(2n²m) (Thms 4.3 / 5.3)."""
    mode: str = "paper"
    path: str = "fast"
    interior: bool = False
    oracle_constant: float = 1.0
    lam_rule: str = "balanced"
    n0: int | None = None
    """Phased-SCO's N0 (Algorithm 6 only; default 2(4κ+1) [DEFAULT])."""

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        path: str = "fast",
        interior: bool = False,
        oracle: float | None = None,
        lam_rule: str | None = None,
        n0: int | None = None,
    ):
        """Parameters of Algorithm 5/6 from ``problem`` (n, m, d, ε, δ, G, μ > 0, K = B(0, R)
        with R finite; the loss is ``SquaredDistanceLoss(μ)``); ``lam_rule`` of the phased
        stage (default: the class's), ``n0`` of Phased-SCO (Algorithm 6)."""
        epsilon, delta = _check_budget(problem)
        n, m = problem.n, problem.m
        mu = check_positive(problem.strong_convexity, "strong_convexity")
        if problem.loss is not None and problem.loss != SquaredDistanceLoss(mu):
            raise InputError(
                f"Algorithms 5 and 6 are implemented for ℓ = (μ/2)‖θ − z‖²: pass "
                f"Problem(loss=None) or SquaredDistanceLoss({mu:g}), got {problem.loss!r}"
            )
        mode, oracle_constant = _mode(oracle)
        obj = cls(
            epsilon=epsilon,
            delta=delta,
            lipschitz=problem.lipschitz,
            strong_convexity=mu,
            radius=check_positive(problem.radius, "radius"),
            n=n,
            m=m,
            d=problem.d,
            beta=1.0 / (2.0 * n * n * m),
            mode=mode,
            path=path,
            interior=bool(interior),
            oracle_constant=oracle_constant,
            lam_rule=cls.default_lam_rule if lam_rule is None else lam_rule,
            n0=None if n0 is None else check_count(n0, "n0"),
        )
        obj.stage_one()
        obj.stage_two(obj.localised_radius)
        return obj

    def _problem(self) -> Problem:
        """The problem at half the budget (each stage gets (ε/2, δ/2))."""
        return Problem(
            n=self.n,
            m=self.m,
            d=self.d,
            epsilon=self.epsilon / 2,
            delta=self.delta / 2,
            lipschitz=self.lipschitz,
            strong_convexity=self.strong_convexity,
            radius=self.radius,
            loss=SquaredDistanceLoss(self.strong_convexity),
        )

    @property
    def _oracle(self) -> float | None:
        return None if self.mode == "paper" else self.oracle_constant

    def stage_one(self) -> SCOutputPert:
        """θ0 = SCOutputPert_{ε/2, δ/2, β, G, μ, K}(ℓ; x) (line 2)."""
        return SCOutputPert.from_theorem(
            self._problem(),
            beta=self.beta,
            interior=self.interior,
            path=self.path,
            oracle=self._oracle,
        )

    def stage_two(self, rp: float) -> _Phased:
        """The phased algorithm (class attribute ``phased``) at (ε/2, δ/2), β, R = ``rp`` and
        the class's λ rule, run on ``K' = K ∩ B(θ0, R')`` (line 5)."""
        return self.phased.from_theorem(
            self._problem(),
            diameter=rp,
            beta=self.beta,
            lam=self.lam_rule,
            path=self.path,
            interior=self.interior,
            oracle=self._oracle,
            **self._phased_knobs(),
        )

    def _phased_knobs(self) -> dict:
        """The phased algorithm's own knobs."""
        return {}

    @property
    def sigma0(self) -> float:
        return self.stage_one().sigma

    @property
    def params(self) -> dict:
        out = _params(self)
        out.update(
            sigma0=self.sigma0,
            localised_radius=self.localised_radius,
            lam=self.stage_two(self.localised_radius).lam,
        )
        return out

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return _claim(self, self.theorem)

    def run(
        self, data, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> PhasedRun:
        """θ0, then the localised phased algorithm on ``K' = K ∩ B(θ0, R')`` (⊥ → centre of K,
        R' = diam K)."""
        trials = check_trials(trials)
        data = as_grouped(data)
        first = self.stage_one().run(data, rng, trials)
        theta0 = Domain(self.radius).project(
            np.where(first.bottom[:, None], 0.0, first.theta)[:, None, :]
        )[:, 0, :]
        theta = np.empty((trials, data.d))
        grads = first.gradient_evaluations
        for lost, rp in ((False, self.localised_radius), (True, 2.0 * self.radius)):
            rows = np.flatnonzero(first.bottom == lost)
            if rows.size == 0:
                continue
            domain = Domain(self.radius, centre=theta0[rows], local_radius=np.full(rows.size, rp))
            out = self.stage_two(rp).run(data, rng, rows.size, domain=domain)
            theta[rows] = out.theta
            grads += out.gradient_evaluations
        return PhasedRun(
            theta=theta,
            gradient_evaluations=grads,
            phases=theta0[:, None, :] if transcript else None,
            bottoms=first.bottom[:, None] if transcript else None,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True, kw_only=True)
class StronglyConvexERM(_StronglyConvex):
    """Algorithm 5 (Theorem 4.3; reduction of Bassily et al. 2014) for ``ℓ = (μ/2)‖θ − z‖²``.

    ``R' = σ0(√d + √(2 ln(1/β)))``, ``λ = G√d/(R' n √m)`` (× C_σ with ``lam_rule="balanced"``),
    then ``Phased-ERM_{ε/2, δ/2, λ, β}`` on ``K' = K ∩ B(θ0, R')``.
    """

    theorem = "Theorem 4.3"
    default_lam_rule = "balanced"
    phased = PhasedERM

    @property
    def localised_radius(self) -> float:
        return _localised_radius(self.sigma0, self.d, self.beta)


@dataclass(frozen=True, kw_only=True)
class StronglyConvexSCO(_StronglyConvex):
    """Algorithm 6 (Theorem 5.3): Algorithm 5 with ``R' += 30 G √(ln(2/β))/(μ√(nm))``
    (Prop. B.1) and Phased-SCO (max-rule λ by default) in place of Phased-ERM."""

    theorem = "Theorem 5.3"
    default_lam_rule = "max"
    phased = PhasedSCO

    @property
    def localised_radius(self) -> float:
        stat = (
            PROP_B1_CONSTANT
            * self.lipschitz
            * math.sqrt(math.log(2.0 / self.beta))
            / (self.strong_convexity * math.sqrt(self.n * self.m))
        )
        return _localised_radius(self.sigma0, self.d, self.beta) + stat

    def _phased_knobs(self) -> dict:
        """Phased-SCO's N0."""
        return {"n0": self.n0}


# --------------------------------------------------------------------------- baselines (spec §2.9)


@dataclass(frozen=True, kw_only=True)
class _OutputPerturbation:
    epsilon: float
    delta: float
    lipschitz: float
    strong_convexity: float
    n: int
    m: int
    radius: float = math.inf
    calibration: str = "analytic"
    sensitivity: float = 0.0
    sigma: float = 0.0

    @classmethod
    def from_theorem(cls, problem: Problem, *, calibration: str = "analytic"):
        """``σ`` of the Gaussian mechanism for the replace sensitivity; ``calibration=
        "classical"`` is the spec's ``√(2 ln(1.25/δ))·Δ/ε`` (proved only for ε < 1),
        ``"analytic"`` the exact one (default)."""
        epsilon, delta = _check_budget(problem)
        n, m, G = problem.n, problem.m, problem.lipschitz
        mu = check_positive(problem.strong_convexity, "strong_convexity")
        sens = cls._sensitivity(G, mu, n, m)
        return cls(
            epsilon=epsilon,
            delta=delta,
            lipschitz=G,
            strong_convexity=mu,
            n=n,
            m=m,
            radius=problem.radius,
            calibration=calibration,
            sensitivity=sens,
            sigma=gaussian_sigma(epsilon, delta, sens, calibration),
        )

    @property
    def params(self) -> dict:
        return asdict(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(
            epsilon=self.epsilon,
            delta=self.delta,
            unit=self.unit,
            relation="replace",
            source=self.source,
        )

    def run(
        self, data, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> OutputPertRun:
        trials = check_trials(trials)
        data = as_grouped(data)
        if data.n != self.n:
            raise InputError(f"built for n = {self.n} users, the data has {data.n}")
        theta = QuadraticMinimiser(self.strong_convexity).minimiser(
            data.means, data.sizes[None, :], reg=0.0, centre=None, domain=Domain(self.radius)
        )[:, 0, :]
        theta = theta + self.sigma * rng.standard_normal((trials, data.d))
        return OutputPertRun(
            theta=theta,
            bottom=np.zeros(trials, bool),
            gradient_evaluations=0,
            f_evaluations=1,
            sigma=self.sigma,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True, kw_only=True)
class NaiveUserOutputPert(_OutputPerturbation):
    """Naive user-level output perturbation: replacing a user moves θ* by ≤ 2G/(μn)
    (spec §2.9)."""

    unit = "user"
    source = "spec 001 §2.9 naive user-level output perturbation"

    @staticmethod
    def _sensitivity(G, mu, n, m):
        return 2.0 * G / (mu * n)


@dataclass(frozen=True, kw_only=True)
class ItemLevelOutputPert(_OutputPerturbation):
    """Item-level output perturbation (Chaudhuri et al. 2011): sensitivity 2G/(μ n m) — NOT
    user-level private."""

    unit = "item"
    source = "Chaudhuri et al. 2011 (item level), spec 001 §2.9"

    @staticmethod
    def _sensitivity(G, mu, n, m):
        return 2.0 * G / (mu * n * m)


# --------------------------------------------------------------------------- audit helpers


@dataclass(frozen=True)
class BottomChannel:
    """Post-processing that keeps only the ⊥ flag of a ⊥-capable mechanism: (trials, 1)."""

    mechanism: Any

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.mechanism(data, rng, trials)[:, :1]


def min_users(epsilon: float, delta: float, nm: int) -> int:
    """``4κ_ph + 2`` with ``κ_ph = κ(ε/(2T), δ/(T(e^{ε/T}+2)))``, ``T = ⌈log2(nm)⌉``
    [DERIVED, spec §2.4]."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    t = max(1, math.ceil(math.log2(check_count(nm, "nm"))))
    return 4 * inner_privacy_params(epsilon / t, delta / t)[2] + 2
