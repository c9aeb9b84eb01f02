"""Mutants M1–M8 of spec 002 §7(c) (Accelerated-DP-SRGD, paper ``choquette-choo-et-al-2024``).

Each is a subclass of :class:`~dpclaims.algorithms.choquette_choo_et_al_2024.AcceleratedDPSRGD`
that overrides
the one hook where it departs from Algorithm 1 (M3 is the reference with the σ printed in
Cor. 5.7, ``calibration="printed"``).  Privacy mutants build the spec §7(a) blank-canary
:class:`~dpclaims.target.AuditTarget` at the claim (ε, δ) = (2, 1e-5) (δ/2 for the
paper's conversion); their ``true_epsilon`` is the exact ε of the μ their release really has.
Utility mutants build the mutated V1 algorithm (``build(problem)`` → the algorithm, on the
spec's LS instance by default); the rate/level tests of
:mod:`dpclaims.claims.checks.choquette_choo_et_al_2024` catch them.

The spec's other M6 form, a wrong τ_{t+1} = 1/(t+3) (:class:`MistunedInterpolation`), is
not registered: it still accelerates (RT1 slope ≈ −1.9, excess only 1.2–1.4× the reference
for T = 8…128), so no rate test can call it a bug.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.algorithms.choquette_choo_et_al_2024 import AcceleratedDPSRGD
from dpclaims.algorithms.choquette_choo_et_al_2024.tree import (
    TreeNoise,
    TreeState,
    incidence_matrix,
    tree_height,
)
from dpclaims.hardinstances.quadratic import LeastSquaresInstance
from dpclaims.problem import Problem
from dpclaims.targets.choquette_choo_et_al_2024 import canary_audit
from dpclaims.targets.mutants import Mutant, register_mutant

__all__ = [
    "IndependentPrefixNoise",
    "IndependentLeafNoise",
    "NoClip",
    "FreshYNoise",
    "CrossBatchDifference",
    "YNoiseUnscaled",
    "LeafSum",
    "MistunedInterpolation",
    "UTILITY_CHANGES",
    "AUDIT_TRIALS",
]

PAPER = "choquette-choo-et-al-2024"


# --------------------------------------------------------------------------- broken trees (M1, M1')


class _IndependentPrefixState(TreeState):
    def draw(self, rng: np.random.Generator, m: int) -> np.ndarray:
        noise = self.noise
        return math.sqrt(noise.height) * noise.sigma * rng.standard_normal((self.trials, self.p))


class _IndependentLeafState(TreeState):
    def draw(self, rng: np.random.Generator, m: int) -> np.ndarray:
        shape = (self.trials, self.p)
        self.partial[0] = self.partial[0] + self.noise.sigma * rng.standard_normal(shape)
        return self.partial[0]


@dataclass(frozen=True, kw_only=True)
class _IndependentPrefixTree(TreeNoise):
    """e_t i.i.d. N(0, hσ²I): the tree's per-release scale without its correlation."""

    def start(self, trials: int, p: int) -> TreeState:
        return _IndependentPrefixState(self, trials, p)


@dataclass(frozen=True, kw_only=True)
class _IndependentLeafTree(TreeNoise):
    """One fresh N(0, σ²I) per leaf, accumulated: e_t = Σ_{i≤t} ξ_i."""

    def start(self, trials: int, p: int) -> TreeState:
        return _IndependentLeafState(self, trials, p)


class IndependentPrefixNoise(AcceleratedDPSRGD):
    """M1: every prefix gets independent noise N(0, hσ²I) instead of the tree's e_t (Lemma 5.6).

    Leaf 0 shifts all T prefixes, each with std sqrt(h)σ: μ·sqrt(T/h).
    """

    def _noise_tree(self) -> TreeNoise:
        return _IndependentPrefixTree(steps=self.steps, sigma=self.sigma)

    @property
    def mu(self) -> float:
        ratio = self.leaf_sensitivity / self.sigma
        return ratio * math.sqrt(self.steps / tree_height(self.steps))


class IndependentLeafNoise(AcceleratedDPSRGD):
    """M1': independent noise per leaf, accumulated (Lemma 5.6's tree replaced by a running sum).

    Private (each noisy leaf released once, μ = s/σ) but b_max grows by ≈ sqrt(T/h).
    """

    def _noise_tree(self) -> TreeNoise:
        return _IndependentLeafTree(steps=self.steps, sigma=self.sigma)

    @property
    def mu(self) -> float:
        return self.leaf_sensitivity / self.sigma


# ---------------------------------------------------------------- broken steps (M2, M4, M5, M7, M8)


class NoClip(AcceleratedDPSRGD):
    """M2: the differences δ_t(d) are not clipped (Algorithm 1 line 5); σ is still for C_Δ."""

    def _clipped(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        norms = np.linalg.norm(vectors, axis=-1)
        return vectors, norms.max(axis=1), np.zeros(norms.shape[0], dtype=np.int64)

    @property
    def mu(self) -> float:
        return math.inf


class FreshYNoise(AcceleratedDPSRGD):
    """M4: fresh tree noise for the y-update (Algorithm 1 line 8 reuses e_t): two noisy copies."""

    def _second_tree(self, trials: int, p: int):
        return self._tree.start(trials, p)

    @property
    def mu(self) -> float:
        return super().mu * math.sqrt(2.0)


class CrossBatchDifference(AcceleratedDPSRGD):
    """M5: SRG difference across batches, η_t∇f(x_t; S_t) − η_{t−1}∇f(x_{t−1}; S_{t−1}).

    Breaks Algorithm 1 line 5 (both gradients at the same example); with no per-example
    difference left to clip, each gradient is clipped at C_Δ.  An example then moves leaves
    t and t+1 by (t+1)C_Δ/(Bβ).
    """

    def _srg_leaf(self, xs, ys, t: int, *, x_cur, x_prev):
        current, max_norm, count = self._clipped(self._grad(x_cur, xs, ys, t))
        leaf = (t + 1.0) * current.mean(axis=1)
        evaluations = self.batch_size
        if t > 0:
            previous = self._clipped(self._grad(x_prev, xs, ys, t - 1))[0]
            leaf = leaf - t * previous.mean(axis=1)
            evaluations += self.batch_size
        return leaf, max_norm, count, evaluations

    @property
    def mu(self) -> float:
        ratio = self.leaf_sensitivity / self.sigma
        enc = incidence_matrix(self.steps)
        shifts = [
            (t + 1) * np.linalg.norm(enc[:, t] - (enc[:, t + 1] if t + 1 < self.steps else 0.0))
            for t in range(self.steps)
        ]
        return ratio * float(max(shifts))


class YNoiseUnscaled(AcceleratedDPSRGD):
    """M7: the y-update adds e_t instead of e_t/η_t (Algorithm 1 line 8): noise in y_T up by ≈ T."""

    def _y_step(self, x_cur, prefix_y, noise, eta: float) -> np.ndarray:
        return self._project(x_cur - (prefix_y - noise) / eta - noise)


class LeafSum(AcceleratedDPSRGD):
    """M8: the leaf is the batch sum of δ_t(d) (no 1/B) while σ is calibrated for the mean: μ·B."""

    def _aggregate(self, diff: np.ndarray) -> np.ndarray:
        return diff.sum(axis=1)

    @property
    def mu(self) -> float:
        return super().mu * self.batch_size


class MistunedInterpolation(AcceleratedDPSRGD):
    """M6b (not registered): τ_{t+1} = 1/(t+3) instead of 2/(t+3) (Algorithm 1 line 9)."""

    def _tau(self, t: int) -> float:
        return 1.0 / (t + 3)


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True, kw_only=True)
class _PrivacyMutant:
    description: str
    variant: type[AcceleratedDPSRGD] = AcceleratedDPSRGD
    setting: dict  # AcceleratedDPSRGD.for_canary keywords
    audit: dict  # canary_audit keywords
    trials: int = 30_000  # per dataset, of the certified threshold audit that catches it

    def build(self, **overrides):
        """The §7(a) audit target; ``overrides`` are ``for_canary`` keywords (e.g. ``steps=2``)."""
        algorithm = self.variant.for_canary(**{**self.setting, **overrides})
        return canary_audit(algorithm, **self.audit)

    def true_epsilon(self) -> float:
        algo = self.variant.for_canary(**self.setting)
        return math.inf if math.isinf(algo.mu) else algo.epsilon_exact


_PRIVACY = {
    "cgt24-m1-independent-prefix-noise": _PrivacyMutant(
        description="M1: every prefix gets independent noise N(0, hσ²I) (the tree's per-release "
        "scale) instead of the tree-correlated e_t; the first-batch canary shifts all T "
        "prefixes ⇒ μ·sqrt(T)/h (T = 127, h = 7: 1.61×)",
        variant=IndependentPrefixNoise,
        setting={"steps": 127, "batch_size": 1},
        audit={"statistic": "prefixes"},
        trials=100_000,
    ),
    "cgt24-m2-no-clip": _PrivacyMutant(
        description="M2: per-example differences δ_t(d) are not clipped while σ is calibrated "
        "for C_Δ; a linear canary with ‖g‖ = 10 C_Δ moves its leaf 10× (unbounded in general)",
        variant=NoClip,
        setting={"batch_size": 1},
        audit={"canary_norm": 40.0},
    ),
    "cgt24-m3-printed-sigma": _PrivacyMutant(
        description="M3 (a finding about the paper): σ exactly as printed in Cor. 5.7, "
        "C_Δ sqrt(log₂T ln(2.5/δ))/(εBβ), sqrt(2(1+⌈log₂T⌉)/log₂T) below what Lemma 5.6 "
        "needs for μ = ε/sqrt(2 ln(2.5/δ)): 1.58× at T = 16 (ε 2.71 at δ/2), audited at T = 2 "
        "where it is 2× (the claim cgt24.v1.privacy.printed_sigma states it at T = 16)",
        setting={"calibration": "printed", "steps": 2, "batch_size": 1},
        audit={},
        trials=100_000,
    ),
    "cgt24-m4-fresh-yz-noise": _PrivacyMutant(
        description="M4: fresh tree noise for the y-update instead of reusing e_t of the "
        "z-update: two noisy copies of every prefix ⇒ μ·√2",
        variant=FreshYNoise,
        setting={"batch_size": 1},
        audit={},
        trials=300_000,
    ),
    "cgt24-m5-cross-batch-difference": _PrivacyMutant(
        description="M5: SRG difference across batches η_t∇f(x_t; S_t) − η_{t−1}∇f(x_{t−1}; "
        "S_{t−1}) (gradients clipped): an example moves leaves t and t+1 by (t+1)C_Δ/(Bβ); "
        "canary in batch 7 of 16",
        variant=CrossBatchDifference,
        setting={"batch_size": 1},
        audit={"batch": 7},
    ),
    "cgt24-m8-leaf-sum": _PrivacyMutant(
        description="M8: the leaf is the batch sum of δ_t(d) (no 1/B) while σ is calibrated for "
        "the mean ⇒ μ·B (B = 4)",
        variant=LeafSum,
        setting={"batch_size": 4},
        audit={},
    ),
}

_LEVEL_CATCH = "the level check (excess > 2× the reference's on LS, p = 16, ε = 0.3, n = 2^14)"


def _utility_builder(variant: type[AcceleratedDPSRGD], **knobs):
    def build(problem: Problem | None = None):
        """The mutated V1 algorithm on ``problem`` (default: LS, n = 2^14, p = 16, ε = 0.3)."""
        if problem is None:
            problem = Problem(
                n=2**14,
                d=16,
                epsilon=0.3,
                delta=1e-5,
                lipschitz=2.0,
                smoothness=1.0,
                radius=1.0,
                loss=LeastSquaresInstance(16).loss,
            )
        return variant.from_theorem(problem, **knobs)

    return build


_UTILITY = {
    "cgt24-m1p-independent-leaf-noise": (
        "M1': independent noise per leaf, accumulated (same per-node σ): private, but b_max "
        "grows by ≈ sqrt(T/h)",
        IndependentLeafNoise,
        {},
        _LEVEL_CATCH,
    ),
    "cgt24-m6-unaccelerated": (
        "M6: τ ≡ 0 (no interpolation: unaccelerated SRGD of §2.6)",
        AcceleratedDPSRGD,
        {"interpolation": "none"},
        "RT1 slope in T (≈ −1.4 instead of −2): the experiment of "
        "cgt24.utility.deterministic_accel is inconsistent",
    ),
    "cgt24-m7-y-noise-unscaled": (
        "M7: the y-update adds e_t instead of e_t/η_t: noise in y_T up by ≈ T",
        YNoiseUnscaled,
        {},
        _LEVEL_CATCH,
    ),
}

for _name, _mutant in _PRIVACY.items():
    register_mutant(
        Mutant(
            name=_name,
            paper=PAPER,
            kind="privacy",
            description=_mutant.description,
            true_epsilon=_mutant.true_epsilon(),
            build=_mutant.build,
            caught_by=f"white-box transcript audit (certified threshold test, {_mutant.trials:,} "
            "trials per dataset)",
        )
    )

for _name, (_description, _variant, _knobs, _caught) in _UTILITY.items():
    register_mutant(
        Mutant(
            name=_name,
            paper=PAPER,
            kind="utility",
            description=_description,
            true_epsilon=None,
            build=_utility_builder(_variant, **_knobs),
            caught_by=_caught,
        )
    )

UTILITY_CHANGES = {
    name: (variant, dict(knobs)) for name, (_, variant, knobs, _) in _UTILITY.items()
}
"""The one change of each utility mutant: ``(class, from_theorem knobs)``."""

AUDIT_TRIALS = {name: mutant.trials for name, mutant in _PRIVACY.items()}
"""Trials per dataset at which the certified threshold audit catches each privacy mutant (the
Gaussian-DP estimate of spec §7(a)(ii) is not certified, so it never gives a violation)."""
