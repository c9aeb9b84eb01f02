"""Lower-bound formulas of the five papers (and the bounds they cite), as plain functions.

Every function returns a float.  Bounds stated only up to an absolute constant
(``Ω(·)``) take ``constant`` (default 1) and return ``constant × (the expression)``:
compare *shapes and exponents* with them, not levels.  Bounds whose proofs fix the
constants (Ghazi et al. Thm D.7 / Lemma D.5, the spec-003 generators) are returned
with those constants.

Spec references are to ``shared/papers/00x_*.md``.
"""

from __future__ import annotations

import math

from ..errors import InputError, check_choice, check_count, check_epsilon, check_positive

__all__ = [
    "user_level_sco_lower_bound",
    "user_level_erm_lower_bound",
    "user_level_sc_sco_lower_bound",
    "user_level_sc_erm_lower_bound",
    "ghazi_thm_d7_scales",
    "ghazi_thm_d7_alpha",
    "ghazi_thm_d7_explicit_lower_bound",
    "ghazi_thm_d8_explicit_lower_bound",
    "user_gaussian_mean_lower_bound",
    "dpsco_lower_bound",
    "item_level_erm_lower_bound",
    "nesterov_lower_bound",
    "two_point_bias",
    "two_point_kl",
    "two_point_lower_bound",
    "heavy_packing_probability",
    "heavy_packing_lower_bound",
    "heavy_tailed_sco_lower_bound",
    "heavy_tailed_mean_lower_bound",
]

PARTS = ("both", "statistical", "private")


def _parts(stat: float, priv: float, part: str) -> float:
    check_choice(part, PARTS, "part")
    return {"both": stat + priv, "statistical": stat, "private": priv}[part]


def _positive_product(**factors: float) -> float:
    """The product of the named factors, each checked positive in the order given."""
    product = 1.0
    for name, value in factors.items():
        product *= check_positive(value, name)
    return product


def _check_beta(beta, upper: float = 0.25) -> float:
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not (0.0 < beta < upper):
        raise InputError(f"beta must be a number in (0, {upper}), got {beta!r}; pass e.g. beta=0.1")
    return float(beta)


def _check_moment_order(k) -> float:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 2:
        raise InputError(
            f"k must be a finite number >= 2 (the moment order of Assumption 1.1), got {k!r}"
        )
    return float(k)


# ---------------------------------------------------------------------- user-level (specs 000, 001)


def user_level_sco_lower_bound(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    lipschitz: float = 1.0,
    diameter: float = 1.0,
    constant: float = 1.0,
    part: str = "both",
) -> float:
    """User-level (ε, δ)-DP SCO lower bound of [LSA+21] (convex, G-Lipschitz, diameter R).

    ``constant · G R (1/√(nm) + √d/(ε n √m))`` — spec 000 §5.1 (claims
    ``lla24.lb.lsa21.stat`` / ``.priv``) and spec 001 §5.1 "LB-convex-SCO" (cited by
    Ghazi et al. §1.2 / App. D), for n ≥ Ω(√d/ε).  ``part`` selects the statistical
    term, the private term or their sum.
    """
    n, m, d = check_count(n, "n"), check_count(m, "m"), check_count(d, "d")
    epsilon = check_epsilon(epsilon)
    scale = _positive_product(constant=constant, lipschitz=lipschitz, diameter=diameter)
    return scale * _parts(1.0 / math.sqrt(n * m), math.sqrt(d) / (epsilon * n * math.sqrt(m)), part)


def user_level_erm_lower_bound(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    lipschitz: float = 1.0,
    diameter: float = 1.0,
    constant: float = 1.0,
) -> float:
    """Convex user-level DP-ERM lower bound ``constant · R G √d/(ε n √m)`` (spec 001 §5.1, App. D
    remark).

    Regime: ``Ω(√d/ε) ≤ n ≤ O(d/ε²)``.
    """
    return user_level_sco_lower_bound(
        n,
        m,
        d,
        epsilon,
        lipschitz=lipschitz,
        diameter=diameter,
        constant=constant,
        part="private",
    )


def user_level_sc_sco_lower_bound(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    lipschitz: float = 1.0,
    strong_convexity: float = 1.0,
    constant: float = 1.0,
    part: str = "both",
) -> float:
    """Strongly convex user-level DP-SCO lower bound, Thm D.7 of Ghazi et al. (spec 001 §5.1).

    ``constant · (G²/μ)(1/(nm) + d/(ε² n² m))`` for n ≥ √d/ε and δ small.  The
    proof's explicit private-term constant is :func:`ghazi_thm_d7_explicit_lower_bound`.
    """
    n, m, d = check_count(n, "n"), check_count(m, "m"), check_count(d, "d")
    epsilon = check_epsilon(epsilon)
    g = check_positive(lipschitz, "lipschitz")
    scale = (
        check_positive(constant, "constant")
        * g
        * g
        / check_positive(strong_convexity, "strong_convexity")
    )
    return scale * _parts(1.0 / (n * m), d / (epsilon**2 * n**2 * m), part)


def user_level_sc_erm_lower_bound(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    lipschitz: float = 1.0,
    strong_convexity: float = 1.0,
    constant: float = 1.0,
) -> float:
    """Strongly convex user-level DP-ERM lower bound, Thm D.8 (spec 001 §5.1).

    ``constant · G² d/(μ ε² n² m)`` for ``√d/ε ≤ n ≤ c·d/ε²``.
    """
    return user_level_sc_sco_lower_bound(
        n,
        m,
        d,
        epsilon,
        lipschitz=lipschitz,
        strong_convexity=strong_convexity,
        constant=constant,
        part="private",
    )


def ghazi_thm_d7_scales(
    d: int, lipschitz: float, strong_convexity: float, convention: str = "lipschitz"
) -> tuple[float, float]:
    """Truncation radius ``B`` and item scale ``σ = B/(1000√d)`` of the Thm D.7 hard instance.

    ``convention="lipschitz"``: ``B = G/(2μ)`` (spec 001 §5.3; then ``(μ/2)‖θ − x‖²`` is
    exactly G-Lipschitz on ``B(0, B)``).  ``"paper"``: ``B = G/μ`` as printed in the proof
    of Thm D.7 (gradients reach 2G on ``K = B(0, G/μ)``; spec 001 [ERRATA?]).
    """
    d = check_count(d, "d")
    ratio = check_positive(lipschitz, "lipschitz") / check_positive(
        strong_convexity, "strong_convexity"
    )
    check_choice(convention, ("lipschitz", "paper"), "convention")
    truncation = ratio / 2.0 if convention == "lipschitz" else ratio
    return truncation, truncation / (1000.0 * math.sqrt(d))


def ghazi_thm_d7_alpha(n: int, m: int, d: int, epsilon: float, sigma: float) -> float:
    """``α = dσ/(100 ε n √m)``: the accuracy the proof of Thm D.7 shows unattainable."""
    n, m, d = check_count(n, "n"), check_count(m, "m"), check_count(d, "d")
    return d * check_positive(sigma, "sigma") / (100.0 * check_epsilon(epsilon) * n * math.sqrt(m))


def ghazi_thm_d7_explicit_lower_bound(
    n: int, m: int, d: int, epsilon: float, sigma: float, strong_convexity: float
) -> float:
    """Thm D.7 private term with the proof's constants: ``(μ/2)·α²``, ``α = dσ/(100 ε n √m)``.

    Lemma D.6 (``n ≥ dσ/(50 α ε √m)``) with this α gives ``E‖θ̂ − χ^tr‖² > α²`` for some χ,
    and the excess of ``(μ/2)‖θ − x‖²`` is ``(μ/2)‖θ̂ − χ^tr‖²``.  With σ from
    :func:`ghazi_thm_d7_scales` this is ``G² d/(8·10^10 μ ε² n² m)`` (lipschitz convention).
    Needs n ≥ √d/ε (so that ``α² ≤ dσ²/(12m)``) and δ small.
    """
    alpha = ghazi_thm_d7_alpha(n, m, d, epsilon, sigma=sigma)
    return 0.5 * check_positive(strong_convexity, "strong_convexity") * alpha**2


def ghazi_thm_d8_explicit_lower_bound(
    n: int,
    m: int,
    d: int,
    epsilon: float,
    sigma: float,
    strong_convexity: float,
    item_variance: float,
) -> float:
    """Thm D.8 with the proof's constants: ``(μ/2)(α²/2 − v/(nm))``, α of Thm D.7, ``v =
    E‖x − χ^tr‖²`` the item variance (≈ dσ²).

    The proof splits ``E‖χ̂ − χ^tr‖² > α²`` (Thm D.7) as ``≤ 2E‖χ̂ − x̄‖² + 2E‖x̄ − χ^tr‖²`` with
    ``E‖x̄ − χ^tr‖² = v/(nm)``; the excess empirical risk is ``(μ/2)E‖χ̂ − x̄‖²``.  Positive only
    for ``n < d²σ²/(2·10⁴ ε² v)`` (≈ d/(2·10⁴ ε²): the theorem's ``n ≤ c·d/ε²``); raises outside.
    """
    alpha = ghazi_thm_d7_alpha(n, m, d, epsilon, sigma=sigma)
    value = alpha**2 / 2.0 - check_positive(item_variance, "item_variance") / (n * m)
    if value <= 0:
        raise InputError(
            f"n = {n} is above Thm D.8's range n <= c d/eps^2 (c = 1/(2e4) with the proof's "
            f"constants) at d = {d}, eps = {epsilon}: the bound is vacuous"
        )
    return 0.5 * check_positive(strong_convexity, "strong_convexity") * value


def user_gaussian_mean_lower_bound(
    n: int, m: int, d: int, sigma: float, epsilon: float, psi: float = 1.0, truncated: bool = False
) -> float:
    """Worst-case ``E‖χ̂ − χ‖²`` of user-level (ε, δ)-DP mean estimation, Lemma D.5 / D.6 (Ghazi et
    al.).

    Lemma D.5 (from Thm D.4, Kamath et al. 2019): an estimator with ``E‖χ̂ − χ‖² ≤ α² ≤ dσ²ψ²/(6m)``
    for every ``χ ∈ [−ψσ/√m, ψσ/√m]^d`` needs ``n ≥ dσ/(24 α ε √m)``.  So the worst case is
    at least ``min(dσ²ψ²/(6m), (dσ/(24 ε n √m))²)``.  ``truncated=True`` uses Lemma D.6
    (truncated Gaussians; constants 12 and 50).  δ must be small (condition garbled, unchecked).
    """
    n, m, d = check_count(n, "n"), check_count(m, "m"), check_count(d, "d")
    sigma, epsilon = check_positive(sigma, "sigma"), check_epsilon(epsilon)
    psi = check_positive(psi, "psi")
    if psi > 1.0:
        raise InputError(f"psi must be in (0, 1] (Lemma D.5), got {psi}")
    cap_div, n_div = (12.0, 50.0) if truncated else (6.0, 24.0)
    return min(
        d * sigma**2 * psi**2 / (cap_div * m),
        (d * sigma / (n_div * epsilon * n * math.sqrt(m))) ** 2,
    )


# ---------------------------------------------------------------------- item-level (specs 002, 004)


def dpsco_lower_bound(
    n: int,
    d: int,
    epsilon: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    constant: float = 1.0,
    part: str = "both",
) -> float:
    """Item-level (ε, δ)-DP SCO lower bound [BST14, BFTT19] cited by spec 002 §5 ("LB-DPSCO").

    ``constant · L R (1/√n + min{1, √p/(ε n)})`` (p = d) on a ball of radius R.
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    epsilon = check_epsilon(epsilon)
    scale = _positive_product(constant=constant, lipschitz=lipschitz, radius=radius)
    return scale * _parts(1.0 / math.sqrt(n), min(1.0, math.sqrt(d) / (epsilon * n)), part)


def item_level_erm_lower_bound(
    n: int,
    d: int,
    epsilon: float,
    strongly_convex: bool = False,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    strong_convexity: float = 1.0,
    constant: float = 1.0,
) -> float:
    """Item-level DP-ERM lower bounds cited by spec 004 §5 (Bassily–Smith–Thakurta 2014).

    Convex: ``constant · L R √d/(n ε)``; strongly convex: ``constant · L² d/(μ n² ε²)``
    (objective gap; spec 004 states them as ``Ω̃(√d/(nε))`` and ``Ω̃(d/(n²ε²))``).
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    epsilon = check_epsilon(epsilon)
    lip, c = check_positive(lipschitz, "lipschitz"), check_positive(constant, "constant")
    if strongly_convex:
        return (
            c
            * lip**2
            * d
            / (check_positive(strong_convexity, "strong_convexity") * n**2 * epsilon**2)
        )
    return c * lip * check_positive(radius, "radius") * math.sqrt(d) / (n * epsilon)


def nesterov_lower_bound(steps: int, smoothness: float, distance: float) -> float:
    """First-order (span) lower bound ``3 M ‖x_0 − x*‖² / (32 (t + 1)²)`` ([Nes04], spec 002 §5 H1).

    Holds after ``t = steps`` queries on the Nesterov chain of dimension ``k = 2t + 1``.
    """
    steps = check_count(steps, "steps", minimum=0)
    return (
        3.0
        * check_positive(smoothness, "smoothness")
        * check_positive(distance, "distance") ** 2
        / (32.0 * (steps + 1) ** 2)
    )


# --------------------------------------------------------------- heavy tails, pure DP (spec 003 §5)


def two_point_bias(n: int, beta: float) -> float:
    """``δ = √(ln(1/(4β))/(3n))`` of the non-private two-point family (Prop G.2; spec 003 §5).

    Needs ``n ≥ (4/3) ln(1/(4β))`` so that ``δ ≤ 1/2``.
    """
    n, beta = check_count(n, "n"), _check_beta(beta)
    need = 4.0 / 3.0 * math.log(1.0 / (4.0 * beta))
    if n < need:
        raise InputError(
            f"n must be >= (4/3) ln(1/(4 beta)) = {need:.3f} for the two-point bias to be <= 1/2, "
            f"got {n}"
        )
    return math.sqrt(math.log(1.0 / (4.0 * beta)) / (3.0 * n))


def two_point_kl(bias: float) -> float:
    """``KL(P_+ ‖ P_−) = δ ln((1 + δ)/(1 − δ))`` for the two-point laws (spec 003 §5, Prop G.2)."""
    if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not (0.0 <= bias < 1.0):
        raise InputError(f"bias must be a number in [0, 1), got {bias!r}")
    return bias * math.log((1.0 + bias) / (1.0 - bias))


def two_point_lower_bound(n: int, moment: float, diameter: float, beta: float) -> float:
    """Non-private term: excess ≥ ``(G D / 4)·δ`` w.p. ≥ β for some v (Prop G.2 + Lemma G.1; spec
    003 §5).

    ``δ = two_point_bias(n, β)``; ``G`` = ``moment`` (every G_j equals G on this bounded family).
    """
    bias = two_point_bias(n, beta)
    return check_positive(moment, "moment") * check_positive(diameter, "diameter") / 4.0 * bias


def heavy_packing_probability(n: int, epsilon: float, packing_size: int, beta: float) -> float:
    """``p = min{1, ln((|V| − 1)/(2β)) / (8 ε n)}`` of the private family (Prop G.4; spec 003 §5,
    spec's constant)."""
    n, size = check_count(n, "n"), check_count(packing_size, "packing_size", minimum=2)
    epsilon, beta = check_epsilon(epsilon), _check_beta(beta)
    return min(1.0, math.log((size - 1) / (2.0 * beta)) / (8.0 * epsilon * n))


def heavy_packing_lower_bound(
    n: int,
    epsilon: float,
    k: float,
    moment: float,
    diameter: float,
    beta: float,
    packing_size: int,
    separation: float,
) -> float:
    """Private term: excess ≥ ``(s_V²/16)·G D·p^{1−1/k}`` w.p. ≥ β for some v (Prop G.4 + Lemma G.1;
    spec 003 §5).

    ``p = heavy_packing_probability(n, ε, |V|, β)``; ``G`` = ``moment`` (``E‖z‖^k = G^k``);
    ``s_V`` = ``separation`` of a packing of the unit sphere.
    """
    k = _check_moment_order(k)
    p = heavy_packing_probability(n, epsilon, packing_size, beta)
    s = check_positive(separation, "separation")
    if s > 2.0:
        raise InputError(f"separation must be <= 2 for a packing of the unit sphere, got {s}")
    return (
        s**2
        / 16.0
        * check_positive(moment, "moment")
        * check_positive(diameter, "diameter")
        * p ** (1.0 - 1.0 / k)
    )


def heavy_tailed_sco_lower_bound(
    n: int,
    d: int,
    epsilon: float,
    *,
    k: float,
    moment_2: float,
    moment_k: float,
    diameter: float,
    beta: float,
    constant: float = 1.0,
    part: str = "both",
) -> float:
    """High-probability pure ε-DP SCO lower bound, Thm 4.1 / G.6 (spec 003 §5, claim
    ``lowy26.lb.sco``).

    ``constant · ( G_2 D √(log(1/β)/n) + G_k D min{1, (d + log(1/β))/(ε n)}^{1−1/k} )``,
    exceeded with probability ≥ β on some instance; β ∈ (0, 1/4).
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    epsilon, beta, k = check_epsilon(epsilon), _check_beta(beta), _check_moment_order(k)
    diam = check_positive(diameter, "diameter")
    stat = check_positive(moment_2, "moment_2") * diam * math.sqrt(math.log(1.0 / beta) / n)
    priv = (
        check_positive(moment_k, "moment_k")
        * diam
        * min(1.0, (d + math.log(1.0 / beta)) / (epsilon * n)) ** (1.0 - 1.0 / k)
    )
    return check_positive(constant, "constant") * _parts(stat, priv, part)


def heavy_tailed_mean_lower_bound(
    n: int,
    d: int,
    epsilon: float,
    k: float,
    moment: float,
    beta: float,
    constant: float = 1.0,
    part: str = "both",
) -> float:
    """Quantile squared-error lower bound for ε-DP heavy-tailed mean estimation, Thm G.5 (spec 003
    claims).

    ``constant · G² ( log(1/β)/n + min{1, (d + log(1/β))/(ε n)}^{2−2/k} )``.
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    epsilon, beta, k = check_epsilon(epsilon), _check_beta(beta), _check_moment_order(k)
    g2 = check_positive(moment, "moment") ** 2
    stat = math.log(1.0 / beta) / n
    priv = min(1.0, (d + math.log(1.0 / beta)) / (epsilon * n)) ** (2.0 - 2.0 / k)
    return check_positive(constant, "constant") * g2 * _parts(stat, priv, part)
