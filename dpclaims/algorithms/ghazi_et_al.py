"""User-level DP convex optimisation by deletion-sensitivity output perturbation (Ghazi et al., ICML 2023).

Spec: ``shared/papers/001_ghazi_et_al_user_level_convex.md`` (paper id ``ghazi-et-al-2023``).
Reference implementations, in the paper's order:

* :class:`DelOutputPert` — Algorithm 1 (Thm 3.3): stability test with the shifted truncated
  discrete Laplace radius, ``⊥`` output, Gaussian noise;
* :class:`SCOutputPert` — Algorithm 2 (Thm 3.1) with the exact ERM minimiser, ``path="exact"``
  (exhaustive test) or ``path="fast"`` (Appendix C gradient certificate, exhaustive fallback);
* :class:`PhasedERM` — Algorithm 3 (Thm 4.1); :class:`PhasedSCO` — Algorithm 4 (Thm 5.1);
* :class:`StronglyConvexERM` — Algorithm 5 (Thm 4.3); :class:`StronglyConvexSCO` — Algorithm 6 (Thm 5.3);
* baselines :class:`NaiveUserOutputPert` and :class:`ItemLevelOutputPert` (spec §2.9).

Every algorithm has ``mode="paper"`` (exact constants, private) and, where the spec asks for
it, ``mode="oracle"``: the per-call output is the "ideal" ``θ* + N(0, σ²)`` with
``σ = C·G/(μ n √m)`` — **not private**, only for exponent tests (spec §7(b)).  Outputs of the
⊥-capable mechanisms are encoded for auditors as ``[⊥ flag, θ (0 when ⊥)]``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError, check_choice, check_delta, check_epsilon, check_trials
from ..privacy import PrivacyClaim
from .ghazi_et_al_stability import (
    AbsoluteLoss,
    Domain,
    GroupedMeans,
    LinearLoss,
    QuadraticLoss,
    TDLap,
    as_grouped,
    inner_privacy_params,
    stability_profile,
)
from .mechanisms import gaussian_sigma

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
    "AbsoluteLoss",
    "Domain",
    "GroupedMeans",
    "LinearLoss",
    "QuadraticLoss",
    "TDLap",
]

PAPER_ID = "ghazi-et-al-2023"
C_DELTA_INTERIOR = 5.0
"""``C_Δ = C_γ`` when the minimisers are interior [DERIVED, spec §2.2]: union bound over 2n^{4κ+1} events."""
C_DELTA_CONSTRAINED = 10.0
"""``C_Δ = C_γ`` with an active constraint [DERIVED, spec §2.2] (centred gradients of norm ≤ 2G)."""
PROP_B1_CONSTANT = 30.0
"""Proposition B.1: ``‖θ*(x) − θ*(D)‖ ≤ 30 G √(ln(2/β))/(μ√(nm))``."""
MODES = ("paper", "oracle")
PATHS = ("exact", "fast")
STABILITY_CHUNK = 64
"""Per-trial functions (Phased calls with per-trial centres) handled per exhaustive-test batch."""


def _positive(value: Any, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not value > 0
    ):
        raise InputError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def _count(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_budget(epsilon: Any, delta: Any) -> tuple[float, float]:
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise InputError(
            "delta must be > 0 (the paper proves approximate DP only); pass e.g. delta=1e-5"
        )
    return epsilon, delta


def encode(theta: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Auditor encoding ``[⊥ flag, θ with ⊥ rows set to 0]``: (trials, d) → (trials, 1 + d)."""
    return np.concatenate(
        [bottom[:, None].astype(np.float64), np.where(bottom[:, None], 0.0, theta)], axis=1
    )


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class PhasedRun:
    """A run of a phased algorithm: ``theta (trials, d)``, ``gradient_evaluations`` per trial; with
    ``transcript=True`` the phase iterates ``phases (trials, T, d)`` and ⊥ flags ``bottoms (trials, T)``."""

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
    out = {}
    for key, value in asdict(obj).items():
        if isinstance(value, (QuadraticLoss, LinearLoss, AbsoluteLoss)) or isinstance(value, dict):
            out[key] = repr(getattr(obj, key))
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- Algorithm 1


def _require_atoms(data: GroupedMeans) -> None:
    if not data.point_mass:
        raise InputError(
            "AbsoluteLoss needs every item of a user to be known; pass point-mass data "
            "(GroupedMeans(..., point_mass=True) or users holding identical items)"
        )


def _stable_release(
    data: GroupedMeans,
    rng,
    trials,
    *,
    loss,
    reg,
    centre,
    domain,
    delta_target,
    sigma,
    kappa,
    tdlap: TDLap,
    mutant,
):
    """Algorithm 1 lines 3-7 on ``data`` with per-trial (``centre (trials, d)``) or shared (None) f.

    Returns ``theta (trials, d)`` (NaN on ⊥), ``bottom``, ``r1``, ``s_star`` and f evaluations.
    """
    data.require_per_user("the exhaustive stability test")
    if isinstance(loss, AbsoluteLoss):
        _require_atoms(data)
    values, counts = data.types()
    d = data.d
    if mutant == "no-stability-test":  # M1: release f(x) + N(0, σ²I) without any test
        theta = loss.minimiser(values, counts[None, :], reg, centre, domain)[:, 0, :]
        theta = np.broadcast_to(theta, (trials, d)) + sigma * rng.standard_normal((trials, d))
        return theta, np.zeros(trials, bool), None, None, 1
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
            lambda states, part=part: loss.minimiser(values, states, reg, part, domain),
            kappa,
            delta_target,
            np.zeros((b, d)),
        )
        s_parts.append(profile.s_star)
        c_parts.append(profile.choice)
        evaluations = profile.f_evaluations
    s_star, choice = np.concatenate(s_parts), np.concatenate(c_parts)
    if mutant == "fixed-threshold":  # M2: R1 ≡ κ
        r1 = np.full(trials, kappa)
    elif mutant == "tdlap-at-zero":  # M6: one-sided, P[R1 = 0] ≫ δ1
        support = np.arange(2 * kappa + 1)
        w = np.exp(-tdlap.epsilon * support)
        r1 = rng.choice(support, size=trials, p=w / w.sum())
    else:
        r1 = tdlap.sample(rng, trials)
    bottom = r1 < s_star
    noise = sigma * rng.standard_normal((trials, d))
    theta = np.where(bottom[:, None], np.nan, np.broadcast_to(choice, (trials, d)) + noise)
    return theta, bottom, r1, s_star, evaluations


DELOUTPUTPERT_MUTANTS = (
    None,
    "no-stability-test",
    "fixed-threshold",
    "tdlap-at-zero",
    "sigma-no-8kappa",
)


@dataclass(frozen=True)
class DelOutputPert:
    """Algorithm 1, ``DelOutputPert_{ε,δ,Δ}(f; x)`` (Theorem 3.3), with ``f = θ*_{ℓ,K}``.

    ``f`` is the exact constrained minimiser of ``loss`` over ``K = B(0, radius)`` (with
    ``radius = inf`` and the quadratic loss, f is the mean of the items); ``f(∅) = 0``.
    Privacy holds for every ``Delta > 0`` (Thm 3.3); Δ matters only for utility.
    """

    epsilon: float
    delta: float
    Delta: float
    """Target deletion sensitivity Δ (an input of Algorithm 1)."""
    loss: Any = QuadraticLoss(1.0)
    radius: float = math.inf
    eps1: float = 0.0
    """``ε1 = ε/2`` (Algorithm 1 line 3 [RECON])."""
    delta1: float = 0.0
    """``δ1 = δ/(e^ε + 2)`` (Algorithm 1 line 3 [RECON])."""
    kappa: int = 0
    """``κ = 1 + ⌈ln(1/δ1)/ε1⌉`` (Definition 3.4 [RECON: rounding])."""
    sigma: float = 0.0
    """``σ = √(2 ln(2/δ1))·8κΔ/ε1`` (Algorithm 1 line 2 [RECON]: Gaussian mechanism, sensitivity 8κΔ)."""
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        epsilon: float,
        delta: float,
        Delta: float,
        loss: Any = None,
        radius: float = math.inf,
        mutant: str | None = None,
    ) -> DelOutputPert:
        """Every parameter of Algorithm 1 from (ε, δ, Δ)."""
        epsilon, delta = _check_budget(epsilon, delta)
        Delta = _positive(Delta, "Delta")
        radius = _positive(radius, "radius")
        if mutant not in DELOUTPUTPERT_MUTANTS:
            raise InputError(f"mutant must be one of {DELOUTPUTPERT_MUTANTS}, got {mutant!r}")
        eps1, delta1, kappa = inner_privacy_params(epsilon, delta)
        sigma = _gaussian_scale(eps1, delta1, kappa, Delta, mutant)
        return cls(
            epsilon,
            delta,
            Delta,
            QuadraticLoss(1.0) if loss is None else loss,
            radius,
            eps1,
            delta1,
            kappa,
            sigma,
            mutant,
        )

    @property
    def tdlap(self) -> TDLap:
        """The radius distribution ``TDLap(ε1, δ1)``."""
        return TDLap(self.eps1, self.delta1)

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(
            self.epsilon, self.delta, "user", "replace", source="Ghazi et al. 2023, Theorem 3.3"
        )

    def stability(self, data) -> tuple[int, np.ndarray]:
        """``(s*(x), f(x_{−S*}))`` of the exhaustive test (spec §2.1); ``s* = 2κ+1`` means always ⊥."""
        data = as_grouped(data)
        values, counts = data.types()
        profile = stability_profile(
            values,
            counts,
            lambda s: self.loss.minimiser(values, s, 0.0, None, self._domain()),
            self.kappa,
            self.Delta,
            np.zeros((1, data.d)),
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
        theta, bottom, r1, s_star, evaluations = _stable_release(
            data,
            rng,
            trials,
            loss=self.loss,
            reg=0.0,
            centre=None,
            domain=self._domain(),
            delta_target=self.Delta,
            sigma=self.sigma,
            kappa=self.kappa,
            tdlap=self.tdlap,
            mutant=self.mutant,
        )
        return OutputPertRun(
            theta,
            bottom,
            0,
            evaluations,
            self.sigma,
            None,
            r1 if transcript else None,
            s_star if transcript else None,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        out = self.run(data, rng, trials)
        return encode(out.theta, out.bottom)


def _gaussian_scale(
    eps1: float, delta1: float, kappa: int, delta_target: float, mutant: str | None
) -> float:
    """``√(2 ln(2/δ1))·8κΔ/ε1``; mutant M4 drops the 8κ factor."""
    factor = 1.0 if mutant == "sigma-no-8kappa" else 8.0 * kappa
    return math.sqrt(2.0 * math.log(2.0 / delta1)) * factor * delta_target / eps1


# --------------------------------------------------------------------------- Algorithm 2 + Appendix C


SCOUTPUTPERT_MUTANTS = DELOUTPUTPERT_MUTANTS + ("no-fallback",)


@dataclass(frozen=True)
class SCOutputPert:
    """Algorithm 2, ``SCOutputPert_{ε,δ,β,G,μ,K}(ℓ; x)`` (Theorem 3.1) and its Appendix-C fast path.

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
    """``C_Δ G √((4κ+1) ln n + ln(2/β)) / (μ (n − 4κ − 1) √m)`` (Alg 2 line 3, Cor 3.7 [DERIVED constant])."""
    gamma0: float = 0.0
    """``C_γ G √(ln(n/β)/m)`` (Appendix C, w.h.p. bound on γ(x^π) [DERIVED])."""
    Delta_fast: float = 0.0
    """``2(4κ+1)γ0/(μ(n − 4κ − 1))`` (Lemma C.1 [DERIVED form])."""
    sigma: float = 0.0
    """``√(2 ln(2/δ1))·8κΔ/ε1`` with Δ or Δ_fast by path; oracle: ``C·G/(μ n √m)`` (not private)."""
    noise_multiplier: float = 0.0
    """``C_σ = σ μ n √m / G`` (spec §2.2)."""
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        epsilon: float,
        delta: float,
        lipschitz: float,
        strong_convexity: float,
        beta: float,
        radius: float = math.inf,
        loss: Any = None,
        reg: float = 0.0,
        interior: bool = False,
        path: str = "fast",
        mode: str = "paper",
        oracle_constant: float = 1.0,
        mutant: str | None = None,
    ) -> SCOutputPert:
        """Every parameter of Algorithm 2 / Appendix C; ``loss`` defaults to ``QuadraticLoss(μ)``.

        Paper mode needs ``n ≥ 4κ + 2`` (the spec's explicit form of "n ≥ C ln(1/δ)/ε"; the Δ
        formula's denominator); privacy itself does not depend on it.
        """
        epsilon, delta = _check_budget(epsilon, delta)
        n, m = _count(n, "n"), _count(m, "m")
        G, mu = _positive(lipschitz, "lipschitz"), _positive(strong_convexity, "strong_convexity")
        beta = _positive(beta, "beta")
        if beta >= 1:
            raise InputError(f"beta must be in (0, 1), got {beta}")
        check_choice(path, PATHS, "path")
        check_choice(mode, MODES, "mode")
        if mutant not in SCOUTPUTPERT_MUTANTS:
            raise InputError(f"mutant must be one of {SCOUTPUTPERT_MUTANTS}, got {mutant!r}")
        eps1, delta1, kappa = inner_privacy_params(epsilon, delta)
        c = C_DELTA_INTERIOR if interior else C_DELTA_CONSTRAINED
        loss = QuadraticLoss(mu) if loss is None else loss
        common = dict(
            epsilon=epsilon,
            delta=delta,
            beta=beta,
            lipschitz=G,
            strong_convexity=mu,
            n=n,
            m=m,
            radius=_positive(radius, "radius"),
            loss=loss,
            reg=float(reg),
            interior=bool(interior),
            path=path,
            mode=mode,
            oracle_constant=_positive(oracle_constant, "oracle_constant"),
            eps1=eps1,
            delta1=delta1,
            kappa=kappa,
            c_delta=c,
            mutant=mutant,
        )
        if mode == "oracle":
            sigma = oracle_constant * G / (mu * n * math.sqrt(m))
            return cls(**common, sigma=sigma, noise_multiplier=float(oracle_constant))
        if n < 4 * kappa + 2:
            raise InputError(
                f"SCOutputPert needs n >= 4*kappa + 2 = {4 * kappa + 2} users at (epsilon, delta) = "
                f"({epsilon:g}, {delta:g}) (kappa = {kappa}), got n = {n}; raise n or epsilon"
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
        sigma = _gaussian_scale(
            eps1, delta1, kappa, big_delta if path == "exact" else delta_fast, mutant
        )
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
    def tdlap(self) -> TDLap:
        return TDLap(self.eps1, self.delta1)

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        if self.mode == "oracle":
            raise InputError(
                "mode='oracle' is not private (an exponent-test device, spec §7(b)); use mode='paper'"
            )
        return PrivacyClaim(
            self.epsilon, self.delta, "user", "replace", source="Ghazi et al. 2023, Theorem 3.1"
        )

    def certificate(self, data) -> tuple[bool, float]:
        """Lemma C.1 certificate: ``(2(4κ+1)γ(x)/(μ(n−4κ−1)) ≤ Δ_fast, γ(x))``."""
        data = as_grouped(data)
        gamma = self.loss.user_deviation(data)
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
        if isinstance(self.loss, AbsoluteLoss):  # needs the item atoms, not only the mean
            _require_atoms(data)
            return self.loss.minimiser(data.means, data.sizes[None, :], self.reg, centre, domain)[
                :, 0, :
            ]
        return self.loss.minimiser(data.mean()[None, :], np.ones((1, 1)), self.reg, centre, domain)[
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
                f"this SCOutputPert was built for (n, m) = ({self.n}, {self.m}) but the data has "
                f"({data.n}, {data.m}); its parameters depend on n and m — rebuild with from_theorem"
            )
        domain = Domain(self.radius) if domain is None else domain
        d = data.d
        if self.mode == "oracle":
            theta = self.minimiser(data, centre, domain) + self.sigma * rng.standard_normal(
                (trials, d)
            )
            return OutputPertRun(theta, np.zeros(trials, bool), 0, 1, self.sigma)
        grads = 0
        certified = None
        if self.path == "fast":
            certified, _ = self.certificate(data)
            grads = self.n * self.m
            if certified:
                theta = self.minimiser(data, centre, domain) + self.sigma * rng.standard_normal(
                    (trials, d)
                )
                return OutputPertRun(theta, np.zeros(trials, bool), grads, 1, self.sigma, True)
            if self.mutant == "no-fallback":  # M3: short-circuit to ⊥ when the certificate fails
                return OutputPertRun(
                    np.full((trials, d), np.nan), np.ones(trials, bool), grads, 1, self.sigma, False
                )
        theta, bottom, r1, s_star, evaluations = _stable_release(
            data,
            rng,
            trials,
            loss=self.loss,
            reg=self.reg,
            centre=centre,
            domain=domain,
            delta_target=self.target,
            sigma=self.sigma,
            kappa=self.kappa,
            tdlap=self.tdlap,
            mutant=self.mutant,
        )
        return OutputPertRun(
            theta,
            bottom,
            grads,
            evaluations,
            self.sigma,
            certified,
            r1 if transcript else None,
            s_star if transcript else None,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        out = self.run(data, rng, trials)
        return encode(out.theta, out.bottom)


# --------------------------------------------------------------------------- Algorithms 3 and 4


def _phase_loop(calls, blocks, data: GroupedMeans, rng, trials, start, domain, transcript):
    """Shared loop of Algorithms 3/4: θ_i = SCOutputPert_i(ℓ_i; block_i) with ⊥ → θ_{i−1}, then Π_K."""
    theta = np.array(start, dtype=np.float64)
    phases, bottoms, grads = [], [], 0
    for call, (lo, hi) in zip(calls, blocks):
        block = data if (lo, hi) == (0, data.n) else data.block(lo, hi)
        out = call.run(block, rng, trials, centre=theta, domain=domain)
        grads += out.gradient_evaluations
        theta = np.where(
            out.bottom[:, None], theta, out.theta
        )  # line 9 [DEFAULT]: ⊥ → previous iterate
        theta = domain.project(theta[:, None, :])[:, 0, :]  # line 10 [DEFAULT]: Proj_K
        if transcript:
            phases.append(theta)
            bottoms.append(out.bottom)
    return PhasedRun(
        theta,
        grads,
        np.stack(phases, axis=1) if transcript else None,
        np.stack(bottoms, axis=1) if transcript else None,
    )


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


PHASED_ERM_MUTANTS = (None, "full-budget-per-phase")


@dataclass(frozen=True)
class PhasedERM:
    """Algorithm 3, ``Phased-ERM_{ε,δ,λ,β}(ℓ; x)`` (Theorem 4.1): localisation on the full dataset.

    Phase i: ``λ_i = λ·growth^i``, ``ℓ_i = ℓ + (λ_i/2)‖θ − θ_{i−1}‖²`` on ``K_i``,
    ``θ_i = SCOutputPert_{ε/T, δ/T, β/T, 2G, λ_i, K_i}(ℓ_i; x)`` (basic composition).
    """

    epsilon: float
    delta: float
    beta: float
    lam: float
    """λ: ``G√d/(R n √m)`` (Thm 4.1 proof, ``lam_rule="paper"``) × C_σ (``"balanced"``, [DEFAULT] recommended)."""
    lipschitz: float
    radius: float
    diameter: float
    """R of the theorem (default 2·radius)."""
    n: int
    m: int
    d: int
    loss: Any
    phases: int
    """T = ⌈log2(nm)⌉ (paper: "log(nm)", base [DEFAULT] 2)."""
    growth: float = 4.0
    mode: str = "paper"
    path: str = "fast"
    interior: bool = False
    oracle_constant: float = 1.0
    lam_rule: str = "balanced"
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float,
        radius: float,
        loss: Any = None,
        diameter: float | None = None,
        beta: float | None = None,
        phases: int | None = None,
        lam: float | None = None,
        lam_rule: str = "balanced",
        growth: float = 4.0,
        mode: str = "paper",
        path: str = "fast",
        interior: bool = False,
        oracle_constant: float = 1.0,
        mutant: str | None = None,
    ) -> PhasedERM:
        """Parameters of Algorithm 3; β = 1/(nm) and λ by ``lam_rule`` unless given."""
        epsilon, delta = _check_budget(epsilon, delta)
        n, m, d = _count(n, "n"), _count(m, "m"), _count(d, "d")
        G, radius = _positive(lipschitz, "lipschitz"), _positive(radius, "radius")
        diameter = 2.0 * radius if diameter is None else _positive(diameter, "diameter")
        beta = 1.0 / (n * m) if beta is None else _positive(beta, "beta")
        phases = max(1, math.ceil(math.log2(n * m))) if phases is None else _count(phases, "phases")
        check_choice(lam_rule, ("paper", "balanced"), "lam_rule")
        check_choice(mode, MODES, "mode")
        if mutant not in PHASED_ERM_MUTANTS:
            raise InputError(f"mutant must be one of {PHASED_ERM_MUTANTS}, got {mutant!r}")
        loss = LinearLoss(1.0) if loss is None else loss
        obj = cls(
            epsilon,
            delta,
            beta,
            1.0,
            G,
            radius,
            diameter,
            n,
            m,
            d,
            loss,
            phases,
            _positive(growth, "growth"),
            mode,
            path,
            bool(interior),
            _positive(oracle_constant, "oracle_constant"),
            lam_rule,
            mutant,
        )
        if lam is None:
            base = G * math.sqrt(d) / (diameter * n * math.sqrt(m))
            lam = base * (obj.call(1, lam=base).noise_multiplier if lam_rule == "balanced" else 1.0)
        return replace(obj, lam=_positive(lam, "lam"))

    def call(self, i: int, lam: float | None = None) -> SCOutputPert:
        """The phase-i SCOutputPert (per-call budget (ε/T, δ/T, β/T), Lipschitz 2G, strong convexity λ_i)."""
        lam_i = (self.lam if lam is None else lam) * self.growth**i
        share = 1 if self.mutant == "full-budget-per-phase" else self.phases
        return SCOutputPert.from_theorem(
            self.n,
            self.m,
            self.epsilon / share,
            self.delta / share,
            2.0 * self.lipschitz,
            lam_i,
            self.beta / self.phases,
            self.radius,
            self.loss,
            lam_i,
            self.interior,
            self.path,
            self.mode,
            self.oracle_constant,
        )

    @property
    def calls(self) -> list[SCOutputPert]:
        return [self.call(i) for i in range(1, self.phases + 1)]

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        if self.mode == "oracle":
            raise InputError("mode='oracle' is not private; use mode='paper'")
        return PrivacyClaim(
            self.epsilon, self.delta, "user", "replace", source="Ghazi et al. 2023, Theorem 4.1"
        )

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
        domain, start = _domain_for(self.radius, trials, domain, data.d)
        return _phase_loop(
            self.calls, [(0, data.n)] * self.phases, data, rng, trials, start, domain, transcript
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


def phased_sco_n0(epsilon: float, delta: float) -> int:
    """``N0 = 2(4κ + 1)``, ``κ = κ(ε/2, δ/(e^ε + 2))`` (Algorithm 4 line 1 [DEFAULT])."""
    return 2 * (4 * inner_privacy_params(epsilon, delta)[2] + 1)


def phased_sco_blocks(n: int, n0: int) -> list[tuple[int, int]]:
    """Disjoint user blocks of Algorithm 4: phase i uses (0-based) users ``[⌊n/2^i⌋, ⌊n/2^{i−1}⌋)``,
    ``i = 1..T``, ``T = ⌊log2(n/N0)⌋``."""
    n, n0 = _count(n, "n"), _count(n0, "n0")
    phases = int(math.floor(math.log2(n / n0))) if n >= n0 else 0
    return [(n // 2**i, n // 2 ** (i - 1)) for i in range(1, phases + 1)]


PHASED_SCO_MUTANTS = (None, "reuse-users")


@dataclass(frozen=True)
class PhasedSCO:
    """Algorithm 4, ``Phased-SCO_{ε,δ,λ,β}(ℓ; x)`` (Theorem 5.1): one disjoint user block per phase.

    Phase i runs ``SCOutputPert_{ε, δ, β/T, 2G, λ_i, K_i}`` at the FULL budget on block i
    (parallel composition); the phase's Δ uses the block size ``n_i``.  ``growth`` of λ_i is the
    paper's 4 by default.  The final phase's output-perturbation noise σ_T = C_σ·2G/(λ·growth^T·n_T√m)
    does not shrink with m relative to RG/√(nm) (λ ∝ 1/√(nm) under the max rule), so on a sharp
    minimum the excess stays at ≈ √(2/π)·2C_σ·G·R·N0/n^{3/2} for every m (RT-8, a finding about
    Thm 5.1).  Growth 8 (Feldman et al.'s variant) divides that floor by 2^T but does NOT fix it:
    the excess is still flat in m.
    """

    epsilon: float
    delta: float
    beta: float
    lam: float
    """λ: ``(G/R)·max{C_σ√d/(n√m), 1/√(nm)}`` ([DEFAULT] max rule) or ``G√d/(R n √m)`` (paper, [ERRATA?])."""
    lipschitz: float
    radius: float
    diameter: float
    n: int
    m: int
    d: int
    loss: Any
    n0: int
    """N0 = 2(4κ+1) [DEFAULT] (paper: C ln(1/δ)/ε)."""
    blocks: tuple
    """((lo, hi), ...) per phase; T = ⌊log2(n/N0)⌋."""
    growth: float = 4.0
    mode: str = "paper"
    path: str = "fast"
    interior: bool = False
    oracle_constant: float = 1.0
    lam_rule: str = "max"
    mutant: str | None = None

    @classmethod
    def from_theorem(
        cls,
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float,
        radius: float,
        loss: Any = None,
        diameter: float | None = None,
        beta: float | None = None,
        n0: int | None = None,
        lam: float | None = None,
        lam_rule: str = "max",
        growth: float = 4.0,
        mode: str = "paper",
        path: str = "fast",
        interior: bool = False,
        oracle_constant: float = 1.0,
        mutant: str | None = None,
    ) -> PhasedSCO:
        epsilon, delta = _check_budget(epsilon, delta)
        n, m, d = _count(n, "n"), _count(m, "m"), _count(d, "d")
        G, radius = _positive(lipschitz, "lipschitz"), _positive(radius, "radius")
        diameter = 2.0 * radius if diameter is None else _positive(diameter, "diameter")
        beta = 1.0 / (n * m) if beta is None else _positive(beta, "beta")
        n0 = phased_sco_n0(epsilon, delta) if n0 is None else _count(n0, "n0")
        blocks = tuple(phased_sco_blocks(n, n0))
        if not blocks:
            raise InputError(
                f"Phased-SCO needs n >= 2*N0 = {2 * n0} users for one phase, got n = {n}"
            )
        check_choice(lam_rule, ("paper", "max"), "lam_rule")
        check_choice(mode, MODES, "mode")
        if mutant not in PHASED_SCO_MUTANTS:
            raise InputError(f"mutant must be one of {PHASED_SCO_MUTANTS}, got {mutant!r}")
        loss = LinearLoss(1.0) if loss is None else loss
        obj = cls(
            epsilon,
            delta,
            beta,
            1.0,
            G,
            radius,
            diameter,
            n,
            m,
            d,
            loss,
            n0,
            blocks,
            _positive(growth, "growth"),
            mode,
            path,
            bool(interior),
            _positive(oracle_constant, "oracle_constant"),
            lam_rule,
            mutant,
        )
        if lam is None:
            base = G * math.sqrt(d) / (diameter * n * math.sqrt(m))
            if lam_rule == "max":
                c_sigma = obj.call(1, lam=base).noise_multiplier
                lam = (G / diameter) * max(
                    c_sigma * math.sqrt(d) / (n * math.sqrt(m)), 1.0 / math.sqrt(n * m)
                )
            else:
                lam = base
        return replace(obj, lam=_positive(lam, "lam"))

    @property
    def phases(self) -> int:
        return len(self.blocks)

    @property
    def phase_blocks(self) -> list[tuple[int, int]]:
        """The users each phase actually reads (mutant M5 reads all users every phase)."""
        if self.mutant == "reuse-users":
            return [(0, self.n)] * self.phases
        return list(self.blocks)

    def call(self, i: int, lam: float | None = None) -> SCOutputPert:
        lo, hi = self.phase_blocks[i - 1]
        lam_i = (self.lam if lam is None else lam) * self.growth**i
        return SCOutputPert.from_theorem(
            hi - lo,
            self.m,
            self.epsilon,
            self.delta,
            2.0 * self.lipschitz,
            lam_i,
            self.beta / self.phases,
            self.radius,
            self.loss,
            lam_i,
            self.interior,
            self.path,
            self.mode,
            self.oracle_constant,
        )

    @property
    def calls(self) -> list[SCOutputPert]:
        return [self.call(i) for i in range(1, self.phases + 1)]

    @property
    def params(self) -> dict:
        return _params(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        if self.mode == "oracle":
            raise InputError("mode='oracle' is not private; use mode='paper'")
        return PrivacyClaim(
            self.epsilon, self.delta, "user", "replace", source="Ghazi et al. 2023, Theorem 5.1"
        )

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
        domain, start = _domain_for(self.radius, trials, domain, data.d)
        return _phase_loop(
            self.calls, self.phase_blocks, data, rng, trials, start, domain, transcript
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


# --------------------------------------------------------------------------- Algorithms 5 and 6


def _localised_radius(sigma0: float, d: int, beta: float) -> float:
    """``R' = σ0(√d + √(2 ln(1/β)))`` (Alg 5 line 4 [DEFAULT]: χ_d tail bound for "Cσ√(d log(1/β))")."""
    return sigma0 * (math.sqrt(d) + math.sqrt(2.0 * math.log(1.0 / beta)))


@dataclass(frozen=True)
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
        n: int,
        m: int,
        d: int,
        epsilon: float,
        delta: float,
        lipschitz: float,
        strong_convexity: float,
        radius: float,
        mode: str = "paper",
        path: str = "fast",
        interior: bool = False,
        oracle_constant: float = 1.0,
        lam_rule: str | None = None,
        n0: int | None = None,
    ):
        epsilon, delta = _check_budget(epsilon, delta)
        n, m, d = _count(n, "n"), _count(m, "m"), _count(d, "d")
        check_choice(mode, MODES, "mode")
        lam_rule = cls.default_lam_rule if lam_rule is None else lam_rule
        obj = cls(
            epsilon,
            delta,
            _positive(lipschitz, "lipschitz"),
            _positive(strong_convexity, "strong_convexity"),
            _positive(radius, "radius"),
            n,
            m,
            d,
            1.0 / (2.0 * n * n * m),
            mode,
            path,
            bool(interior),
            _positive(oracle_constant, "oracle_constant"),
            lam_rule,
            None if n0 is None else _count(n0, "n0"),
        )
        obj.stage_one()
        obj.stage_two(obj.localised_radius)
        return obj

    def stage_one(self) -> SCOutputPert:
        """θ0 = SCOutputPert_{ε/2, δ/2, β, G, μ, K}(ℓ; x) (line 2)."""
        return SCOutputPert.from_theorem(
            self.n,
            self.m,
            self.epsilon / 2,
            self.delta / 2,
            self.lipschitz,
            self.strong_convexity,
            self.beta,
            self.radius,
            QuadraticLoss(self.strong_convexity),
            0.0,
            self.interior,
            self.path,
            self.mode,
            self.oracle_constant,
        )

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
        if self.mode == "oracle":
            raise InputError("mode='oracle' is not private; use mode='paper'")
        return PrivacyClaim(
            self.epsilon, self.delta, "user", "replace", source=f"Ghazi et al. 2023, {self.theorem}"
        )

    def run(
        self, data, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> PhasedRun:
        """θ0, then the localised phased algorithm on ``K' = K ∩ B(θ0, R')`` (⊥ → centre of K, R' = diam K)."""
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
            domain = Domain(self.radius, theta0[rows], np.full(rows.size, rp))
            out = self.stage_two(rp).run(data, rng, rows.size, domain=domain)
            theta[rows] = out.theta
            grads += out.gradient_evaluations
        return PhasedRun(
            theta,
            grads,
            theta0[:, None, :] if transcript else None,
            first.bottom[:, None] if transcript else None,
        )

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True)
class StronglyConvexERM(_StronglyConvex):
    """Algorithm 5 (Theorem 4.3; reduction of Bassily et al. 2014) for ``ℓ = (μ/2)‖θ − z‖²``-type losses.

    ``R' = σ0(√d + √(2 ln(1/β)))``, ``λ = G√d/(R' n √m)`` (× C_σ with ``lam_rule="balanced"``),
    then ``Phased-ERM_{ε/2, δ/2, λ, β}`` on ``K' = K ∩ B(θ0, R')``.
    """

    theorem = "Theorem 4.3"
    default_lam_rule = "balanced"

    @property
    def localised_radius(self) -> float:
        return _localised_radius(self.sigma0, self.d, self.beta)

    def stage_two(self, rp: float) -> PhasedERM:
        return PhasedERM.from_theorem(
            self.n,
            self.m,
            self.d,
            self.epsilon / 2,
            self.delta / 2,
            self.lipschitz,
            self.radius,
            QuadraticLoss(self.strong_convexity),
            diameter=rp,
            beta=self.beta,
            lam_rule=self.lam_rule,
            mode=self.mode,
            path=self.path,
            interior=self.interior,
            oracle_constant=self.oracle_constant,
        )


@dataclass(frozen=True)
class StronglyConvexSCO(_StronglyConvex):
    """Algorithm 6 (Theorem 5.3): Algorithm 5 with ``R' += 30 G √(ln(2/β))/(μ√(nm))`` (Prop. B.1)
    and Phased-SCO (max-rule λ by default) in place of Phased-ERM."""

    theorem = "Theorem 5.3"
    default_lam_rule = "max"

    @property
    def localised_radius(self) -> float:
        stat = (
            PROP_B1_CONSTANT
            * self.lipschitz
            * math.sqrt(math.log(2.0 / self.beta))
            / (self.strong_convexity * math.sqrt(self.n * self.m))
        )
        return _localised_radius(self.sigma0, self.d, self.beta) + stat

    def stage_two(self, rp: float) -> PhasedSCO:
        return PhasedSCO.from_theorem(
            self.n,
            self.m,
            self.d,
            self.epsilon / 2,
            self.delta / 2,
            self.lipschitz,
            self.radius,
            QuadraticLoss(self.strong_convexity),
            diameter=rp,
            beta=self.beta,
            lam_rule=self.lam_rule,
            mode=self.mode,
            path=self.path,
            n0=self.n0,
            interior=self.interior,
            oracle_constant=self.oracle_constant,
        )


# --------------------------------------------------------------------------- baselines (spec §2.9)


@dataclass(frozen=True)
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
    def from_theorem(
        cls,
        n: int,
        m: int,
        epsilon: float,
        delta: float,
        lipschitz: float,
        strong_convexity: float,
        radius: float = math.inf,
        calibration: str = "analytic",
    ):
        """``σ`` of the Gaussian mechanism for the replace sensitivity; ``calibration="classical"`` is the
        spec's ``√(2 ln(1.25/δ))·Δ/ε`` (proved only for ε < 1), ``"analytic"`` the exact one (default)."""
        epsilon, delta = _check_budget(epsilon, delta)
        n, m = _count(n, "n"), _count(m, "m")
        G, mu = _positive(lipschitz, "lipschitz"), _positive(strong_convexity, "strong_convexity")
        sens = cls._sensitivity(G, mu, n, m)
        return cls(
            epsilon,
            delta,
            G,
            mu,
            n,
            m,
            _positive(radius, "radius"),
            calibration,
            sens,
            gaussian_sigma(epsilon, delta, sens, calibration),
        )

    @property
    def params(self) -> dict:
        return asdict(self)

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta, self.unit, "replace", source=self.source)

    def run(
        self, data, rng: np.random.Generator, trials: int, transcript: bool = False
    ) -> OutputPertRun:
        trials = check_trials(trials)
        data = as_grouped(data)
        if data.n != self.n:
            raise InputError(f"built for n = {self.n} users, the data has {data.n}")
        theta = QuadraticLoss(self.strong_convexity).minimiser(
            data.means, data.sizes[None, :], 0.0, None, Domain(self.radius)
        )[:, 0, :]
        theta = theta + self.sigma * rng.standard_normal((trials, data.d))
        return OutputPertRun(theta, np.zeros(trials, bool), 0, 1, self.sigma)

    def __call__(self, data, rng: np.random.Generator, trials: int) -> np.ndarray:
        return self.run(data, rng, trials).theta


@dataclass(frozen=True)
class NaiveUserOutputPert(_OutputPerturbation):
    """Naive user-level output perturbation: replacing a user moves θ* by ≤ 2G/(μn) (spec §2.9)."""

    unit = "user"
    source = "spec 001 §2.9 naive user-level output perturbation"

    @staticmethod
    def _sensitivity(G, mu, n, m):
        return 2.0 * G / (mu * n)


@dataclass(frozen=True)
class ItemLevelOutputPert(_OutputPerturbation):
    """Item-level output perturbation (Chaudhuri et al. 2011): sensitivity 2G/(μ n m) — NOT user-level private."""

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
    """``4κ_ph + 2`` with ``κ_ph = κ(ε/(2T), δ/(T(e^{ε/T}+2)))``, ``T = ⌈log2(nm)⌉`` [DERIVED, spec §2.4]."""
    epsilon, delta = _check_budget(epsilon, delta)
    t = max(1, math.ceil(math.log2(_count(nm, "nm"))))
    return 4 * inner_privacy_params(epsilon / t, delta / t)[2] + 2
