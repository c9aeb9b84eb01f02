"""Privacy calibration of DIFF2 (Murata & Suzuki, ICML 2023): the paper's RDP formulas and the tight
GDP value.

Every σ here is a noise *multiplier*: the noise std is ``σ·C`` with C the clipping
radius of that round (spec 004 §2.6).  Silo sizes ``n_p`` enter through ``n_min``.

* :func:`alpha_star` — the Rényi order the paper fixes, ``α* = 1 + ⌈2 ln(1/δ)/ε⌉``.
* :func:`diff2_gd_sigmas`, :func:`dpgd_sigma` — Proposition 4.1 (and its T = 1 limit, §6).
* :func:`diff2_rdp_epsilon` — Prop. 4.1's ``ε(α)`` minimised over α (Lemma B.4).
* :func:`transcript_mu`, :func:`tight_epsilon` — [DERIVED, spec §3.6] the transcript is exactly
  μ-GDP (composition of Gaussian mechanisms with a constant sensitivity-to-std ratio).
* :func:`subsampled_rdp_wor` — Lemma B.7 (Wang, Balle, Kasiviswanathan 2019, Thm 9), log space.
* :func:`lemma_b8_bound` — Lemma B.8's simple bound.
* :func:`bvr_sigma3_exact`, :func:`bvr_sigma3_closed_form`, :func:`bvr_minibatch` — Prop. E.2.
* :func:`bvr_accountant_epsilon` — dp-accounting RDP (REPLACE_ONE, sampling w/o replacement).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
from scipy import optimize, special

from dpclaims.errors import InputError, check_count, check_delta, check_epsilon, check_positive
from dpclaims.gdp import gdp_epsilon
from dpclaims.privacy import gaussian_epsilon

__all__ = [
    "alpha_star",
    "restart_rounds",
    "prop41_scale",
    "diff2_gd_sigmas",
    "dpgd_sigma",
    "diff2_rdp_epsilon",
    "transcript_mu",
    "tight_epsilon",
    "accountant_tight_epsilon",
    "subsampled_rdp_wor",
    "lemma_b8_bound",
    "bvr_sigmas",
    "bvr_sigma3_exact",
    "bvr_sigma3_closed_form",
    "bvr_minibatch",
    "bvr_accountant_epsilon",
]


def _share(u, name: str) -> float:
    u = check_positive(u, name)
    if u <= 1:
        raise InputError(
            f"{name} must be > 1 (the budget share 1/{name} goes to restarts), got {u!r}; "
            f"e.g. {name}=2"
        )
    return u


def alpha_star(epsilon: float, delta: float) -> int:
    """``α* = 1 + ⌈2 ln(1/δ)/ε⌉`` (Prop. 4.1; natural log): 25, 9, 6 for ε = 1, 3, 5 at δ = 1e-5."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InputError("delta must be > 0 for DIFF2's (ε, δ) calibration; pass e.g. delta=1e-5")
    return 1 + math.ceil(2.0 * math.log(1.0 / delta) / epsilon)


def restart_rounds(rounds: int, period: int) -> int:
    """``⌈R/T⌉``: rounds r ∈ 1..R with ``(r − 1) mod T = 0`` (Alg. 1 line 2)."""
    rounds, period = check_count(rounds, "rounds"), check_count(period, "period")
    return -(-rounds // period)


def _active_rounds(rounds: int, silos: int) -> int:
    """``⌈R/P⌉``: the rounds in which one silo runs its local steps (Prop. E.2)."""
    return -(-check_count(rounds, "rounds") // check_count(silos, "silos"))


def prop41_scale(*, n_min: int, silos: int, epsilon: float, delta: float) -> float:
    """``4α*/(n_min²P²ε)``: Prop. 4.1's σ² per unit of budget share and round (sensitivity
    ``2C/(n_min P)`` of a replaced record)."""
    n_min, silos = check_count(n_min, "n_min"), check_count(silos, "silos")
    return 4.0 * alpha_star(epsilon, delta) / (n_min**2 * silos**2 * epsilon)


def diff2_gd_sigmas(
    *,
    n_min: int,
    silos: int,
    rounds: int,
    period: int,
    epsilon: float,
    delta: float,
    u: float = 2.0,
) -> tuple[float, float]:
    """Noise multipliers ``(σ1, σ2)`` of Proposition 4.1.

    ``σ1² = 4uα*⌈R/T⌉/(n_min²P²ε)``, ``σ2² = (4u/(u−1))α*(R − ⌈R/T⌉)/(n_min²P²ε)``; σ2 is 0
    when every round restarts (T = 1).
    """
    u = _share(u, "u")
    scale = prop41_scale(n_min=n_min, silos=silos, epsilon=epsilon, delta=delta)
    restarts = restart_rounds(rounds, period)
    diffs = rounds - restarts
    sigma1 = math.sqrt(scale * u * restarts)
    sigma2 = math.sqrt(scale * u / (u - 1.0) * diffs)
    return sigma1, sigma2


def dpgd_sigma(*, n_min: int, silos: int, rounds: int, epsilon: float, delta: float) -> float:
    """DP-GD's multiplier ``σ² = 4α*R/(n_min²P²ε)`` (Prop. 4.1 with T = 1, u → 1; §6 setup)."""
    n_min, silos = check_count(n_min, "n_min"), check_count(silos, "silos")
    rounds = check_count(rounds, "rounds")
    return math.sqrt(4.0 * alpha_star(epsilon, delta) * rounds / (n_min**2 * silos**2 * epsilon))


def _rdp_rate(
    *, n_p: int, silos: int, rounds: int, period: int, sigma1: float, sigma2: float
) -> float:
    """ρ with RDP ``ρα``: ``2⌈R/T⌉/(n_p²P²σ1²) + 2(R − ⌈R/T⌉)/(n_p²P²σ2²)`` (Prop. 4.1, Lemma
    B.6)."""
    n_p, silos = check_count(n_p, "n_p"), check_count(silos, "silos")
    restarts = restart_rounds(rounds, period)
    diffs = rounds - restarts
    rho = 2.0 * restarts / (n_p**2 * silos**2 * check_positive(sigma1, "sigma1") ** 2)
    if diffs:
        rho += 2.0 * diffs / (n_p**2 * silos**2 * check_positive(sigma2, "sigma2") ** 2)
    return rho


def diff2_rdp_epsilon(
    *,
    n_p: int,
    silos: int,
    rounds: int,
    period: int,
    sigma1: float,
    sigma2: float,
    delta: float,
    alpha: float | None = None,
) -> float:
    """Prop. 4.1's ε: ``ρα + ln(1/δ)/(α − 1)`` at ``alpha``, or minimised over α > 1 (spec §3.5 item
    3).

    The minimum is at ``α − 1 = sqrt(ln(1/δ)/ρ)`` and equals ``ρ + 2 sqrt(ρ ln(1/δ))``.
    """
    rho = _rdp_rate(
        n_p=n_p, silos=silos, rounds=rounds, period=period, sigma1=sigma1, sigma2=sigma2
    )
    log_inv = math.log(1.0 / check_delta(delta))
    if alpha is None:
        return rho + 2.0 * math.sqrt(rho * log_inv)
    alpha = check_positive(alpha, "alpha")
    if alpha <= 1:
        raise InputError(f"alpha must be > 1, got {alpha!r}")
    return rho * alpha + log_inv / (alpha - 1.0)


def transcript_mu(
    *, n_p: int, silos: int, rounds: int, period: int, sigma1: float, sigma2: float
) -> float:
    """[DERIVED, spec §3.6] μ of the transcript, ``μ² = 2ρ`` =
    ``4⌈R/T⌉/(n_p²P²σ1²) + 4(R − ⌈R/T⌉)/(n_p²P²σ2²)``."""
    rho = _rdp_rate(
        n_p=n_p, silos=silos, rounds=rounds, period=period, sigma1=sigma1, sigma2=sigma2
    )
    return math.sqrt(2.0 * rho)


def tight_epsilon(mu: float, delta: float) -> float:
    """Exact ε(δ) of a μ-GDP mechanism (Dong, Roth, Su, Cor. 2.13): 0.726/2.341/3.940 at μ² =
    ε/α*."""
    return gdp_epsilon(mu, delta)


def accountant_tight_epsilon(mu: float, delta: float) -> float:
    """The same ε from the dp-accounting PLD bridge: one Gaussian with noise multiplier ``1/μ``.

    A composition of Gaussian mechanisms with ratios ``μ_r`` has the privacy-loss distribution of
    one Gaussian with ``μ² = Σ μ_r²``, so this must agree with :func:`tight_epsilon` (spec §3.7).
    """
    return gaussian_epsilon(1.0 / check_positive(mu, "mu"), delta)


# --------------------------------------------------------------------------- subsampling (App. B)


def subsampled_rdp_wor(alpha: int, sigma3: float, batch: int, size: int) -> float:
    """Lemma B.7 bound ``ε'(α)`` for the sampled-without-replacement Gaussian step of Alg. 4.

    Base RDP ``ε(j) = 2j/(b²σ3²)`` (sensitivity ``2C/b``, std ``σ3C``), ``γ = b/n``, integer α ≥ 2,
    ε(∞) = ∞::

        ε'(α) = ln(1 + γ²C(α,2)·min{4(e^{ε(2)} − 1), 2e^{ε(2)}} + Σ_{j=3}^{α} 2γ^j C(α,j)
        e^{(j−1)ε(j)}) / (α − 1)

    evaluated with ``scipy.special.logsumexp``.
    """
    alpha = check_count(alpha, "alpha", minimum=2)
    sigma3 = check_positive(sigma3, "sigma3")
    batch, size = check_count(batch, "batch"), check_count(size, "size")
    if batch > size:
        raise InputError(f"batch must be <= size, got batch={batch}, size={size}")
    gamma = batch / size

    def base(j):
        return 2.0 * j / (batch**2 * sigma3**2)

    e2 = base(2)
    # 4(e^x − 1) < 2e^x iff x < ln 2; beyond that the second branch is the minimum (and expm1 may
    # overflow)
    # (e2 underflows to 0 for very large σ3: that term is then 0, log −inf)
    if e2 < math.log(2.0):
        log_min2 = math.log(4.0) + math.log(math.expm1(e2)) if e2 > 0 else -math.inf
    else:
        log_min2 = math.log(2.0) + e2
    terms = [0.0, 2 * math.log(gamma) + math.log(special.comb(alpha, 2, exact=True)) + log_min2]
    j = np.arange(3, alpha + 1)
    if j.size:
        log_comb = (
            special.gammaln(alpha + 1) - special.gammaln(j + 1) - special.gammaln(alpha - j + 1)
        )
        terms.extend((math.log(2.0) + j * math.log(gamma) + log_comb + (j - 1) * base(j)).tolist())
    return float(special.logsumexp(terms)) / (alpha - 1)


def lemma_b8_bound(alpha: int, eps2: float, gamma: float, c: float = 1.0) -> float:
    """Lemma B.8: ``ε'(α) ≤ (2/3)(4 + e/c)γ²α²ε(2)/(α − 1)`` (valid under the lemma's
    conditions)."""
    alpha = check_count(alpha, "alpha", minimum=2)
    return (
        (2.0 / 3.0)
        * (4.0 + math.e / check_positive(c, "c"))
        * check_positive(gamma, "gamma") ** 2
        * alpha**2
        * check_positive(eps2, "eps2")
        / (alpha - 1)
    )


def bvr_sigmas(
    *,
    n_min: int,
    silos: int,
    rounds: int,
    period: int,
    epsilon: float,
    delta: float,
    u1: float = 3.0,
    u2: float = 3.0,
) -> tuple[float, float]:
    """``(σ1, σ2)`` of Prop. E.2: ``σ1² = 4u1α*⌈R/T⌉/(n_min²P²ε)``, ``σ2² = 4u2α*(R −
    ⌈R/T⌉)/(n_min²P²ε)``."""
    u1, u2 = _share(u1, "u1"), _share(u2, "u2")
    if 1 / u1 + 1 / u2 >= 1:
        raise InputError(
            f"Prop. E.2 needs 1/u1 + 1/u2 < 1, got u1={u1}, u2={u2}; the default is u1 = u2 = 3"
        )
    scale = prop41_scale(n_min=n_min, silos=silos, epsilon=epsilon, delta=delta)
    restarts = restart_rounds(rounds, period)
    return math.sqrt(scale * u1 * restarts), math.sqrt(scale * u2 * (rounds - restarts))


def _local_budget(epsilon, u1, u2) -> float:
    share = 1.0 - 1.0 / u1 - 1.0 / u2
    if share <= 0:
        raise InputError(f"Prop. E.2 needs 1/u1 + 1/u2 < 1, got u1={u1}, u2={u2}")
    return share * epsilon


def bvr_sigma3_exact(
    *,
    n_min: int,
    silos: int,
    rounds: int,
    local_steps: int,
    batch: int,
    epsilon: float,
    delta: float,
    u1: float = 3.0,
    u2: float = 3.0,
) -> float:
    """[DEFAULT, spec §2.6.3] smallest σ3 with ``2K⌈R/P⌉ε'_{B7}(α*) ≤ (1 − 1/u1 − 1/u2)ε``.

    [PROTOTYPE] 0.354 at (n_min=1651, b=13, K=10, R=2000, P=10, ε=3, δ=1e-5).
    """
    alpha = alpha_star(epsilon, delta)
    active = _active_rounds(rounds, silos)
    steps = 2 * check_count(local_steps, "local_steps") * active
    target = _local_budget(epsilon, u1, u2)

    def excess(log_sigma):
        return steps * subsampled_rdp_wor(alpha, math.exp(log_sigma), batch, n_min) - target

    lo, hi = -3.0, 3.0
    while excess(lo) <= 0:
        lo -= 3.0
    while excess(hi) > 0:
        hi += 3.0
    log_sigma = optimize.brentq(excess, lo, hi, xtol=1e-12)
    return math.exp(log_sigma) * (1 + 1e-9)


def bvr_sigma3_closed_form(
    *,
    n_min: int,
    silos: int,
    rounds: int,
    local_steps: int,
    batch: int,
    epsilon: float,
    delta: float,
) -> float:
    """Proof of Prop. E.2 (u1 = u2 = 3): ``σ3² = max{16(4+e)α*²/(α*−1)·K⌈R/P⌉/(n_min²ε),
    6α*/b²}``."""
    alpha = alpha_star(epsilon, delta)
    active = _active_rounds(rounds, silos)
    first = (
        16.0
        * (4.0 + math.e)
        * alpha**2
        / (alpha - 1)
        * check_count(local_steps, "local_steps")
        * active
        / (check_count(n_min, "n_min") ** 2 * epsilon)
    )
    return math.sqrt(max(first, 6.0 * alpha / check_count(batch, "batch") ** 2))


def bvr_minibatch(
    *, n_min: int, silos: int, rounds: int, local_steps: int, epsilon: float, delta: float
) -> int:
    """[DEFAULT, spec §2.6.7] largest b with ``b ≤ n_min/(2eα*)`` and ``b ≤ (4n_min/(α*σ3²))^{1/3}``
    (Prop. E.2).

    σ3 is the closed form at that b (the b-condition depends on σ3, so b is decreased until both
    hold).
    """
    alpha = alpha_star(epsilon, delta)

    def fits(b):
        return (
            b**3
            * alpha
            * bvr_sigma3_closed_form(
                n_min=n_min,
                silos=silos,
                rounds=rounds,
                local_steps=local_steps,
                batch=b,
                epsilon=epsilon,
                delta=delta,
            )
            ** 2
            <= 4 * n_min
        )

    lo, hi = 0, math.floor(check_count(n_min, "n_min") / (2 * math.e * alpha))
    if hi >= 1 and fits(hi):
        return hi
    while hi - lo > 1:  # b³α*σ3(b)² = max(b³α*·first, 6α*²b) increases with b: bisect
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    if lo < 1:
        raise InputError(
            f"no minibatch size satisfies Prop. E.2's b-condition for n_min={n_min}; "
            "use larger silos"
        )
    return lo


def bvr_accountant_epsilon(algorithm) -> float:
    """dp-accounting RDP ε of a whole DIFF2-BVR-L-SGD transcript (spec §3.7), REPLACE_ONE.

    ``algorithm`` is a :class:`~dpclaims.algorithms.murata_suzuki_2023.DIFF2BVRLSGD` (its n_min =
    n_p, P, R,
    T, K, b, σ's and δ).  Gaussian restart/difference rounds with multipliers ``σ n_p P/2`` and
    ``(K−1)·⌈R/P⌉`` local steps ``SampledWithoutReplacementDpEvent(n_p, b, Gaussian(σ3 b/2))``;
    must be ≤ the paper's Lemma B.7 value.
    """
    n_p, silos, rounds = algorithm.n_min, algorithm.silos, algorithm.rounds
    local_steps, batch = algorithm.local_steps, algorithm.batch
    sigma1, sigma2, sigma3 = algorithm.sigma1, algorithm.sigma2 or 1.0, algorithm.sigma3
    restarts = restart_rounds(rounds, algorithm.period)
    active = _active_rounds(rounds, silos)
    events = [
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(sigma1 * n_p * silos / 2), restarts
        )
    ]
    if rounds > restarts:
        events.append(
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(sigma2 * n_p * silos / 2), rounds - restarts
            )
        )
    if local_steps > 1:
        local = dp_accounting.SampledWithoutReplacementDpEvent(
            n_p, batch, dp_accounting.GaussianDpEvent(sigma3 * batch / 2)
        )
        events.append(dp_accounting.SelfComposedDpEvent(local, (local_steps - 1) * active))
    acc = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    acc.compose(dp_accounting.ComposedDpEvent(events))
    return float(acc.get_epsilon(algorithm.delta))
