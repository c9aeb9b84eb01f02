"""Mutants M1–M8 of spec 002 §7(c) (Accelerated-DP-SRGD, paper ``choquette-choo-et-al-2024``).

Each is :class:`~dpclaims.algorithms.dp_srgd.AcceleratedDPSRGD` with one setting changed.
Privacy mutants build the spec §7(a) blank-canary audit ``(mechanism, d0, d1, claim)`` at
the claim (ε, δ) = (2, 1e-5) (δ/2 for the paper's conversion); their ``true_epsilon`` is the
exact ε of the μ their release really has.  Utility mutants build the mutated V1 algorithm
(``build(n=..., d=..., epsilon=..., loss=...)`` → ``AcceleratedDPSRGD``); the rate/level
tests of :mod:`dpclaims.claims.checks.dp_srgd` catch them.

The spec's other M6 form, a wrong τ_{t+1} = 1/(t+3), is not registered: it still accelerates
(RT1 slope ≈ −1.9, excess only 1.2–1.4× the reference for T = 8…128), so no rate test can
call it a bug (``interpolation="mistuned"`` keeps it available).
"""

from __future__ import annotations

import math

from ...hardinstances.quadratic import LeastSquaresInstance
from ..dp_srgd import AcceleratedDPSRGD, canary_audit
from . import Mutant, register_mutant

PAPER = "choquette-choo-et-al-2024"

_PRIVACY = {
    "cgt24-m1-independent-prefix-noise": (
        "M1: every prefix gets independent noise N(0, hσ²I) (the tree's per-release scale) instead of the "
        "tree-correlated e_t; the first-batch canary shifts all T prefixes ⇒ μ·sqrt(T)/h (T = 64)",
        dict(noise="independent-prefix", steps=64, batch_size=1, statistic="prefixes"),
        "gdp",
    ),
    "cgt24-m2-no-clip": (
        "M2: per-example differences δ_t(d) are not clipped while σ is calibrated for C_Δ; a linear canary "
        "with ‖g‖ = 10 C_Δ moves its leaf 10× (unbounded in general)",
        dict(mutant="no-clip", canary_norm=40.0),
        "threshold",
    ),
    "cgt24-m3-printed-sigma": (
        "M3 (a finding about the paper): σ exactly as printed in Cor. 5.7, C_Δ sqrt(log₂T ln(2.5/δ))/(εBβ), "
        "≈ sqrt(2h/log₂T) ≈ 1.5–1.6× below what Lemma 5.6 needs for μ = ε/sqrt(2 ln(2.5/δ)) (T = 16)",
        dict(calibration="printed"),
        "gdp",
    ),
    "cgt24-m4-fresh-yz-noise": (
        "M4: fresh tree noise for the y-update instead of reusing e_t of the z-update: two noisy copies of every "
        "prefix ⇒ μ·√2",
        dict(mutant="fresh-yz-noise"),
        "gdp",
    ),
    "cgt24-m5-cross-batch-difference": (
        "M5: SRG difference across batches η_t∇f(x_t; S_t) − η_{t−1}∇f(x_{t−1}; S_{t−1}) (gradients clipped): "
        "an example moves leaves t and t+1 by (t+1)C_Δ/(Bβ); canary in batch 7 of 16",
        dict(mutant="cross-batch-difference", batch=7),
        "threshold",
    ),
    "cgt24-m8-leaf-sum": (
        "M8: the leaf is the batch sum of δ_t(d) (no 1/B) while σ is calibrated for the mean ⇒ μ·B (B = 4)",
        dict(mutant="leaf-sum", batch_size=4),
        "threshold",
    ),
}


def _privacy_builder(options: dict):
    def build(epsilon: float = 2.0, delta: float = 1e-5, **overrides):
        return canary_audit(epsilon=epsilon, delta=delta, **{**options, **overrides})

    return build


def _true_epsilon(options: dict) -> float:
    mechanism = canary_audit(**options)[0]
    algo = getattr(mechanism, "algorithm", mechanism)
    return math.inf if math.isinf(algo.mu) else algo.epsilon_exact


def _utility_builder(**change):
    def build(
        n: int = 2**14,
        d: int = 16,
        epsilon: float = 0.3,
        delta: float = 1e-5,
        loss=None,
        **overrides,
    ):
        loss = LeastSquaresInstance(d).loss if loss is None else loss
        options = {"lipschitz": 2.0, "smoothness": 1.0, "radius": 1.0, **change, **overrides}
        lip, smooth, radius = (
            options.pop("lipschitz"),
            options.pop("smoothness"),
            options.pop("radius"),
        )
        return AcceleratedDPSRGD.from_theorem(
            n, 1, d, epsilon, delta, lip, smooth, radius, loss=loss, **options
        )

    return build


_LEVEL_CATCH = (
    "RT3 level (excess > 2× the reference at n = 2^14) and the RT8 envelope of cgt24.v1.rate.privacy "
    "at n = 2^16 (max ratio ≈ 3× the reference)"
)

_UTILITY = {
    "cgt24-m1p-independent-leaf-noise": (
        "M1': independent noise per leaf, accumulated (same per-node σ): private, but b_max grows by ≈ sqrt(T/h)",
        dict(noise="independent-leaf"),
        _LEVEL_CATCH,
    ),
    "cgt24-m6-unaccelerated": (
        "M6: τ ≡ 0 (no interpolation: unaccelerated SRGD of §2.6)",
        dict(interpolation="none"),
        "RT1 slope in T (≈ −1.4 instead of −2): the experiment of cgt24.utility.deterministic_accel is inconsistent",
    ),
    "cgt24-m7-y-noise-unscaled": (
        "M7: the y-update adds e_t instead of e_t/η_t: noise in y_T up by ≈ T",
        dict(mutant="y-noise-unscaled"),
        _LEVEL_CATCH,
    ),
}

for _name, (_description, _options, _method) in _PRIVACY.items():
    register_mutant(
        Mutant(
            name=_name,
            paper=PAPER,
            kind="privacy",
            description=_description,
            true_epsilon=_true_epsilon(_options),
            build=_privacy_builder(_options),
            caught_by=f"white-box transcript audit (method={_method!r})",
        )
    )

for _name, (_description, _options, _caught) in _UTILITY.items():
    register_mutant(
        Mutant(
            name=_name,
            paper=PAPER,
            kind="utility",
            description=_description,
            true_epsilon=None,
            build=_utility_builder(**_options),
            caught_by=_caught,
        )
    )

UTILITY_CHANGES = {name: dict(options) for name, (_, options, _) in _UTILITY.items()}
"""The one setting each utility mutant changes (``from_theorem``/``calibrated`` keyword → value)."""

AUDIT_METHODS = {name: method for name, (_, _, method) in _PRIVACY.items()}
"""The audit method that catches each privacy mutant (``gdp`` = the parametric estimate of spec §7(a)(ii))."""
