"""Binary-tree (Fenwick) continual-counting noise and the GDP calibration of spec 002 §2.2.

Choquette-Choo, Ganesh, Thakurta (2024), Lemma 5.6: the prefix sums ``g_t = Σ_{i≤t} Δ_i``
of T leaves are released through the binary-tree mechanism [DNPR10, CSS11].  Only left
children are ever used, i.e. a Fenwick (binary-indexed) tree: node ``m = 1..T`` covers
the leaves ``[m − lowbit(m), m − 1]`` (0-indexed), carries noise ``ξ_m ~ N(0, σ² I_p)``,
and the prefix noise of leaves ``0..t`` is ``e_t = Σ_{m ∈ path(t+1)} ξ_m`` with
``path(m) = (m, m − lowbit(m), …) > 0``, computed online by ``E_m = ξ_m + E_{m−lowbit(m)}``.

Leaf t lies in the nodes ``up(t+1) = (t+1, t+1+lowbit(t+1), …) ≤ T``; the most,
``h = ⌊log₂T⌋ + 1``, for leaf 0.  If one leaf moves by at most C (ℓ₂), releasing every node
with per-node σ is μ-GDP with ``μ = C·sqrt(h)/σ`` (adaptive composition of Gaussians).
Matrix-mechanism view: prefix sums ``A u`` (A lower-triangular ones) equal ``W C_enc u``
with ``C_enc`` the node–leaf incidence and ``W`` the prefix-from-nodes matrix; the
sensitivity multiplier is the largest column norm of ``C_enc``, ``sqrt(h)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from dpclaims.errors import InputError, check_count, check_delta, check_epsilon, check_positive
from dpclaims.gdp import gdp_delta

__all__ = [
    "lowbit",
    "prefix_path",
    "up_path",
    "tree_height",
    "paper_height",
    "incidence_matrix",
    "prefix_matrix",
    "prefix_noise_covariance",
    "TreeNoise",
    "TreeState",
    "mu_exact",
    "mu_paper",
    "tree_error_bound",
    "PAPER_CONVERSION_MAX_EPSILON",
]

PAPER_CONVERSION_MAX_EPSILON = 8.5
"""Spec 002 §2.2 [SIM]: above ε ≈ 8.5 (δ = 1e-5) the classical conversion μ = ε/sqrt(2 ln(2.5/δ)) ⇒
(ε, δ/2) is false."""


def lowbit(m: int) -> int:
    """Lowest set bit of ``m ≥ 1`` (``m & −m``)."""
    return m & -m


def prefix_path(m: int) -> list[int]:
    """Nodes whose sum is the prefix ending at leaf ``m − 1``: ``(m, m − lowbit(m), …) > 0``."""
    out = []
    while m > 0:
        out.append(m)
        m -= lowbit(m)
    return out


def up_path(m: int, steps: int) -> list[int]:
    """Nodes ``≤ steps`` containing leaf ``m − 1``: ``(m, m + lowbit(m), …)``."""
    out = []
    while m <= steps:
        out.append(m)
        m += lowbit(m)
    return out


def _check_steps(steps) -> int:
    return check_count(steps, "steps")


def tree_height(steps: int) -> int:
    """``h = ⌊log₂T⌋ + 1``: the most nodes any leaf is in (attained by leaf 0)."""
    return _check_steps(steps).bit_length()


def paper_height(steps: int) -> int:
    """The paper's bound ``1 + ⌈log₂T⌉`` (Lemma 5.6).

    Equals :func:`tree_height` for T a power of two.
    """
    steps = _check_steps(steps)
    return 1 + (steps - 1).bit_length()


def incidence_matrix(steps: int) -> np.ndarray:
    """``C_enc (T, T)``: ``C_enc[m−1, t] = 1`` iff node m covers leaf t."""
    steps = _check_steps(steps)
    c = np.zeros((steps, steps))
    for m in range(1, steps + 1):
        c[m - 1, m - lowbit(m) : m] = 1.0
    return c


def prefix_matrix(steps: int) -> np.ndarray:
    """``W (T, T)``: ``W[t, m−1] = 1`` iff m ∈ path(t+1).

    So ``e = W ξ`` and ``W C_enc = A`` (lower-triangular ones).
    """
    steps = _check_steps(steps)
    w = np.zeros((steps, steps))
    for t in range(steps):
        w[t, [m - 1 for m in prefix_path(t + 1)]] = 1.0
    return w


def prefix_noise_covariance(steps: int, sigma: float = 1.0) -> np.ndarray:
    """``Cov(e_s, e_t) = σ²|path(s+1) ∩ path(t+1)|`` per coordinate: ``σ² W Wᵀ`` (T, T)."""
    w = prefix_matrix(steps)
    return sigma**2 * (w @ w.T)


@dataclass(frozen=True, kw_only=True)
class TreeNoise:
    """Fenwick-tree prefix noise with per-node std ``sigma`` over ``steps`` leaves (spec 002
    Algorithm B).

    The mutants of spec §7(c) that break the tree (M1, M1') are subclasses in
    :mod:`dpclaims.targets.mutants.choquette_choo_et_al_2024` whose :meth:`start` draws differently.
    """

    steps: int
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", _check_steps(self.steps))
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma", allow_zero=True))

    @property
    def height(self) -> int:
        """``h = ⌊log₂T⌋ + 1``."""
        return tree_height(self.steps)

    def start(self, trials: int, p: int) -> TreeState:
        """Fresh online state for ``trials`` independent runs in dimension ``p``."""
        return TreeState(self, trials, p)

    def node_values(self, prefixes: np.ndarray) -> np.ndarray:
        """Node releases ``ν_m = P_{m−1} − P_{m−lowbit(m)−1}`` from prefixes ``P (..., T, p)``."""
        prefixes = np.asarray(prefixes, dtype=np.float64)
        nodes = np.empty_like(prefixes)
        for m in range(1, self.steps + 1):
            j = m - lowbit(m)
            nodes[..., m - 1, :] = prefixes[..., m - 1, :] - (
                prefixes[..., j - 1, :] if j > 0 else 0.0
            )
        return nodes

    def mu(self, leaf_sensitivity: float) -> float:
        """μ of releasing every node when one leaf moves by ``leaf_sensitivity``.

        ``C·sqrt(h)/σ`` (Lemma 5.6).
        """
        if self.sigma == 0:
            return math.inf
        return leaf_sensitivity * math.sqrt(self.height) / self.sigma


class TreeState:
    """Online prefix noise: ``next(rng) -> e_t (trials, p)`` for t = 0, 1, …, drawn when needed."""

    def __init__(self, noise: TreeNoise, trials: int, p: int) -> None:
        self.noise, self.trials, self.p = noise, trials, p
        self.t = 0
        self.partial: dict[int, np.ndarray] = {0: np.zeros((trials, p))}

    def next(self, rng: np.random.Generator) -> np.ndarray:
        if self.t >= self.noise.steps:
            raise InputError(f"the tree has only {self.noise.steps} leaves")
        self.t += 1
        return self.draw(rng, self.t)

    def draw(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``e_{m−1} = ξ_m + E_{m−lowbit(m)}`` (the recurrence of the module docstring)."""
        value = self.noise.sigma * rng.standard_normal((self.trials, self.p))
        value = value + self.partial[m - lowbit(m)]
        self.partial[m] = value
        # E_j is the parent of the nodes j + 2^k, 2^k < lowbit(j): drop it once past j +
        # lowbit(j)/2.
        for j in [j for j in self.partial if j and j + lowbit(j) // 2 <= m]:
            del self.partial[j]
        return value


def mu_exact(epsilon: float, delta: float) -> float:
    """``μ*(ε, δ)``: the μ whose GDP curve gives exactly δ at ε (Dong–Roth–Su Cor. 2.13), by
    ``brentq``.

    Spec 002 §2.2: μ*(1, 1e-5) = 0.268, μ*(2, 1e-5) = 0.502, μ*(4, 1e-5) = 0.925.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise InputError(
            "delta must be > 0: a Gaussian mechanism is never pure ε-DP; pass e.g. delta=1e-5"
        )
    upper = 1.0
    while gdp_delta(epsilon, upper) < delta:
        upper *= 2.0
    return float(
        optimize.brentq(
            lambda mu: gdp_delta(epsilon, mu) - delta, 1e-12, upper, xtol=1e-14, rtol=1e-13
        )
    )


def mu_paper(epsilon: float, delta: float) -> float:
    """``ε / sqrt(2 ln(2.5/δ))``: the paper's GDP target.

    Proof of Thm 5.8, claimed to give (ε, δ/2)-DP.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise InputError("delta must be > 0; pass e.g. delta=1e-5")
    return epsilon / math.sqrt(2.0 * math.log(2.5 / delta))


def tree_error_bound(
    leaf_sensitivity: float, *, p: int, mu: float, steps: int, delta: float
) -> float:
    """Lemma 5.6: w.p. ≥ 1 − δ every prefix error is ≤ ``4 C log₂^{3/2}(T) sqrt(p ln(2T/δ))/μ``.

    Needs T ≥ 2.
    """
    steps = check_count(steps, "steps", minimum=2)
    delta = check_delta(delta)
    return (
        4.0
        * leaf_sensitivity
        * math.log2(steps) ** 1.5
        * math.sqrt(p * math.log(2 * steps / delta))
        / mu
    )
