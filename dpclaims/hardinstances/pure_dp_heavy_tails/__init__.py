"""Heavy-tailed instances of spec 003 (pure ε-DP SCO with heavy tails, Lowy 2026).

* :class:`TwoPointInstance` — the bounded non-private family of Prop G.2:
  ``z = ±G e_1`` with ``P(z = G e_1) = (1 + vδ)/2``; every ``G_j = G``.
* :class:`HeavyPackingInstance` — the private family of Prop G.4:
  ``P_{v,p} = (1 − p)δ_0 + p δ_{A v}``, ``A = G p^{−1/k}``, so ``E‖z‖^k = G^k``.
* :class:`ParetoRadiusInstance` — a fixed heavy-tailed law for upper-bound tests:
  ``x = a·u``, ``a ~ Pareto(α, x_m)``, ``u`` uniform on ``S^{d−1}``, with the weighted
  absolute loss ``|⟨θ, x⟩ − y| = a·|⟨θ, u⟩ − b|``, ``y = a·b``, ``b ~ U[−h, h]``;
  the sample Lipschitz constant is ``L_z = ‖x‖ = a`` exactly.

The two lower-bound families use the linear loss ``f(w, z) = −⟨w, z⟩`` on
``W = B(0, D/2)`` (diameter D) of Thm 4.1 / G.6, so ``L_z = ‖z‖``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dpclaims.data import UserDataset
from dpclaims.errors import InputError, check_count, check_positive
from dpclaims.hardinstances._items import check_rng, check_theta, uniform_sphere
from dpclaims.hardinstances.base import Instance
from dpclaims.hardinstances.lower_bounds import (
    _check_moment_order,
    heavy_packing_lower_bound,
    heavy_packing_probability,
    two_point_bias,
    two_point_lower_bound,
)
from dpclaims.hardinstances.packings import Packing, sphere_packing
from dpclaims.losses import AbsoluteLoss, LinearLoss
from dpclaims.problem import Problem

__all__ = ["TwoPointInstance", "HeavyPackingInstance", "ParetoRadiusInstance"]


class _LinearBallInstance(Instance):
    """Linear loss ``−⟨w, z⟩`` on ``B(0, D/2)`` with item mean ``μ``: ``F(w) = −⟨w, μ⟩``, ``w* =
    (D/2)μ/‖μ‖``."""

    mean: np.ndarray

    def population_loss(self, theta: np.ndarray) -> np.ndarray:
        """Exact ``−⟨θ, μ⟩``: ``theta (..., d)`` → ``(...)``."""
        return -(check_theta(theta, self.d) @ self.mean)

    def population_grad(self, theta: np.ndarray) -> np.ndarray:
        """``−μ`` for every θ: ``(..., d)`` → ``(..., d)``."""
        theta = check_theta(theta, self.d)
        return np.broadcast_to(-self.mean, theta.shape).copy()

    @property
    def theta_star(self) -> np.ndarray:
        """``(D/2)·μ/‖μ‖`` (0 when μ = 0, where every point is optimal)."""
        norm = float(np.linalg.norm(self.mean))
        return self.radius * self.mean / norm if norm > 0 else np.zeros(self.d)


class TwoPointInstance(_LinearBallInstance):
    """Prop G.2 family: ``z = +G e_1`` w.p. ``(1 + vδ)/2``, else ``−G e_1`` (spec 003 §5,
    ``two_point_np``).

    Parameters
    ----------
    d : int
    moment : float
        ``G = ‖z‖`` (so ``G_j = G`` for every j).
    diameter : float
        ``D``; the domain is ``B(0, D/2)``.
    bias : float
        ``δ ∈ [0, 1)``.
    sign : {+1, −1}
        ``v``.
    """

    def __init__(self, d: int, *, moment: float, diameter: float, bias: float, sign: int = 1):
        self.d = check_count(d, "d", minimum=1)
        self.moment_value = check_positive(moment, "moment")
        self.diameter = check_positive(diameter, "diameter")
        self.radius = self.diameter / 2.0
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not (0.0 <= bias < 1.0):
            raise InputError(f"bias must be a number in [0, 1), got {bias!r}")
        if sign not in (1, -1):
            raise InputError(f"sign must be +1 or -1, got {sign!r}")
        self.bias, self.sign = float(bias), int(sign)
        self.loss = LinearLoss()
        self.mean = np.zeros(self.d)
        self.mean[0] = self.sign * self.bias * self.moment_value

    @classmethod
    def from_theorem(
        cls, problem: Problem, *, moment: float, diameter: float, beta: float, sign: int = 1
    ) -> TwoPointInstance:
        """Bias ``δ = √(ln(1/(4β))/(3n))`` (Prop G.2) at ``n = problem.n`` in ``d = problem.d``
        (the family is non-private: ``problem.epsilon`` is unused); ``n, β`` are kept for
        :meth:`lower_bound`."""
        n = problem.n
        bias = two_point_bias(n, beta)
        inst = cls(problem.d, moment=moment, diameter=diameter, bias=bias, sign=sign)
        inst.n, inst.beta = int(n), float(beta)
        return inst

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``n × m`` i.i.d. items ``±G e_1`` → ``x (n, m, d)``."""
        n, m = check_count(n, "n", minimum=1), check_count(m, "m", minimum=1)
        plus = check_rng(rng).random((n, m)) < (1.0 + self.sign * self.bias) / 2.0
        x = np.zeros((n, m, self.d))
        x[..., 0] = np.where(plus, self.moment_value, -self.moment_value)
        return UserDataset(x)

    def moment(self, order: float) -> float:
        """``E‖z‖^j = G^j`` (``‖z‖ ≡ G``)."""
        return self.moment_value ** float(order)

    def lower_bound(
        self,
        n: int | None = None,
        m: int = 1,
        epsilon: float | None = None,
        delta: float = 0.0,
        beta: float | None = None,
    ) -> float:
        """``(G D/4)·δ(n, β)`` (Prop G.2 + Lemma G.1): exceeded w.p. ≥ β for v = +1 or −1, by any
        algorithm.

        ``epsilon``/``delta`` are ignored (the bound is non-private); ``n, β`` default to
        those of :meth:`from_theorem`.
        """
        n = getattr(self, "n", None) if n is None else n
        beta = getattr(self, "beta", None) if beta is None else beta
        if n is None or beta is None:
            raise InputError("pass n and beta (or build the instance with from_theorem)")
        if m != 1:
            raise InputError(f"spec 003's lower bounds are item level; m must be 1, got {m}")
        return two_point_lower_bound(n, self.moment_value, self.diameter, beta)


class HeavyPackingInstance(_LinearBallInstance):
    """Prop G.4 family: ``P_{v,p} = (1 − p)δ_0 + p δ_{A v}``, ``A = G p^{−1/k}`` (spec 003 §5,
    ``heavy_packing``).

    Parameters
    ----------
    packing : Packing
        Euclidean packing of the unit sphere (``‖v‖ = 1``).
    index : int
        Which ``v = packing.points[index]``.
    p : float
        Probability of the heavy atom, ``(0, 1]``.
    k : float
        Moment order (``E‖z‖^k = G^k``), ``k ≥ 2``.
    moment : float
        ``G``.
    diameter : float
        ``D``; domain ``B(0, D/2)``.
    """

    def __init__(
        self,
        packing: Packing,
        *,
        index: int,
        p: float,
        k: float,
        moment: float,
        diameter: float,
    ):
        if not isinstance(packing, Packing) or packing.metric != "euclidean":
            raise InputError("packing must be a Euclidean Packing of the unit sphere")
        if not np.allclose(np.linalg.norm(packing.points, axis=1), 1.0, atol=1e-12):
            raise InputError(
                "packing points must lie on the unit sphere (use sphere_packing or "
                "code.on_sphere())"
            )
        index = check_count(index, "index", minimum=0)
        if index >= packing.size:
            raise InputError(f"index must be < {packing.size} (the packing size), got {index}")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0.0 < p <= 1.0):
            raise InputError(f"p must be a number in (0, 1], got {p!r}")
        self.packing, self.index, self.p = packing, index, float(p)
        self.k = _check_moment_order(k)
        self.moment_value = check_positive(moment, "moment")
        self.diameter = check_positive(diameter, "diameter")
        self.radius = self.diameter / 2.0
        self.d = packing.d
        self.direction = packing.points[index].copy()
        self.atom = self.moment_value * self.p ** (-1.0 / self.k)
        self.rho = self.moment_value * self.p ** (1.0 - 1.0 / self.k)
        self.mean = self.rho * self.direction
        self.loss = LinearLoss()

    @classmethod
    def from_theorem(
        cls,
        problem: Problem,
        *,
        k: float,
        moment: float,
        diameter: float,
        beta: float,
        packing: Packing | None = None,
        index: int = 0,
        rng: np.random.Generator | None = None,
    ) -> HeavyPackingInstance:
        """``p = heavy_packing_probability(n, ε, |V|, β)`` at ``problem.n, problem.epsilon``;
        default ``V = sphere_packing(problem.d, 1.0, rng)``.

        ``n, ε, β`` are kept for :meth:`lower_bound`.
        """
        n, d, epsilon = problem.n, problem.d, problem.epsilon
        if packing is None:
            packing = sphere_packing(check_count(d, "d", minimum=1), 1.0, rng)
        if packing.d != d:
            raise InputError(f"packing has dimension {packing.d}, but d={d}")
        p = heavy_packing_probability(n, epsilon, packing.size, beta)
        inst = cls(packing, index=index, p=p, k=k, moment=moment, diameter=diameter)
        inst.n, inst.epsilon, inst.beta = int(n), float(epsilon), float(beta)
        return inst

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``z = B·A·v``, ``B ~ Bernoulli(p)`` i.i.d. → ``x (n, m, d)``."""
        n, m = check_count(n, "n", minimum=1), check_count(m, "m", minimum=1)
        heavy = check_rng(rng).random((n, m)) < self.p
        return UserDataset(heavy[..., None] * (self.atom * self.direction))

    def moment(self, order: float) -> float:
        """``E‖z‖^j = p A^j = G^j p^{1 − j/k}`` (``= G^k`` at j = k)."""
        order = float(order)
        return self.p * self.atom**order if order > 0 else 1.0

    def lower_bound(
        self,
        n: int | None = None,
        m: int = 1,
        epsilon: float | None = None,
        delta: float = 0.0,
        beta: float | None = None,
    ) -> float:
        """``(s_V²/16)·G D·p(n, ε, β)^{1−1/k}`` (Prop G.4 + Lemma G.1): exceeded w.p. ≥ β for some
        v.

        Pure DP only (``delta`` must be 0); ``n, ε, β`` default to those of :meth:`from_theorem`.
        """
        n = getattr(self, "n", None) if n is None else n
        epsilon = getattr(self, "epsilon", None) if epsilon is None else epsilon
        beta = getattr(self, "beta", None) if beta is None else beta
        if n is None or epsilon is None or beta is None:
            raise InputError("pass n, epsilon and beta (or build the instance with from_theorem)")
        if delta != 0.0:
            raise InputError(f"Prop G.4 is a pure-DP bound; delta must be 0, got {delta!r}")
        if m != 1:
            raise InputError(f"spec 003's lower bounds are item level; m must be 1, got {m}")
        return heavy_packing_lower_bound(
            n=n,
            epsilon=epsilon,
            k=self.k,
            moment=self.moment_value,
            diameter=self.diameter,
            beta=beta,
            packing_size=self.packing.size,
            separation=self.packing.min_distance,
        )


class ParetoRadiusInstance(Instance):
    """``x = a·u``, ``y = a·b`` with loss ``|⟨θ, x⟩ − y|`` (:class:`~dpclaims.losses.AbsoluteLoss`).

    ``a ~ Pareto(α, x_m)`` (``P(a > t) = (x_m/t)^α``, ``t ≥ x_m``), ``u`` uniform on
    ``S^{d−1}``, ``b ~ U[−h, h]``, all independent.  ``L_z = a`` exactly, so
    ``G_j = x_m (α/(α − j))^{1/j}`` for ``j < α`` (spec 003 §5) and the tail index is α.

    Population loss (exact, every θ): with ``r = ‖θ‖``, ``s = ⟨θ, u⟩`` and
    ``g(s) = (s² + h²)/(2h)`` for ``|s| ≤ h``, ``|s|`` otherwise,
    ``F(θ) = E[a]·E_u g(⟨θ, u⟩)``; ``w = ⟨θ/r, u⟩² ~ Beta(1/2, (d−1)/2)`` gives it through
    regularised incomplete Beta functions.  For ``r ≤ h`` this is
    ``E[a](r²/d + h²)/(2h)``, so ``θ* = 0`` and the excess is ``E[a]‖θ‖²/(2hd)``
    (the 1-d RT1/RT5 instance of spec 003 §7b for d = 1, h = 1/2).

    Parameters
    ----------
    d : int
    alpha : float
        Tail index (> 1 so the population loss is finite).
    scale : float
        ``x_m``.
    radius : float
        Domain ``B(0, radius)``.
    half_width : float, optional
        ``h``; default ``radius``.
    """

    def __init__(
        self,
        d: int,
        alpha: float,
        *,
        scale: float = 1.0,
        radius: float = 1.0,
        half_width: float | None = None,
    ):
        self.d = check_count(d, "d", minimum=1)
        self.alpha = check_positive(alpha, "alpha")
        if self.alpha <= 1.0:
            raise InputError(
                f"alpha must be > 1 (finite mean, finite population loss), got {alpha}"
            )
        self.scale = check_positive(scale, "scale")
        self.radius = check_positive(radius, "radius")
        self.half_width = (
            self.radius if half_width is None else check_positive(half_width, "half_width")
        )
        self.loss = AbsoluteLoss()

    def moment(self, order: float) -> float:
        """Exact ``E a^j = α x_m^j/(α − j)`` for ``j < α``, ``inf`` otherwise."""
        order = float(order)
        return (
            self.alpha * self.scale**order / (self.alpha - order)
            if order < self.alpha
            else math.inf
        )

    def moment_parameter(self, order: float) -> float:
        """``G_j = (E a^j)^{1/j}``."""
        return self.moment(order) ** (1.0 / float(order))

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``x (n, m, d) = a·u``, ``y (n, m) = a·b`` (inverse-CDF Pareto radii)."""
        n, m = check_count(n, "n", minimum=1), check_count(m, "m", minimum=1)
        rng = check_rng(rng)
        a = self.scale * (1.0 - rng.random((n, m))) ** (-1.0 / self.alpha)
        u = uniform_sphere(rng, (n, m), self.d)
        b = rng.uniform(-self.half_width, self.half_width, size=(n, m))
        return UserDataset(a[..., None] * u, a * b)

    def _mean_g(self, r: np.ndarray) -> np.ndarray:
        """``E_u g(r·⟨e, u⟩)`` for radii ``r (...)``."""
        h, d = self.half_width, self.d
        if d == 1:
            return np.where(r <= h, (r**2 + h**2) / (2.0 * h), r)
        b2 = (d - 1) / 2.0
        c = (h / np.where(r > h, r, h)) ** 2
        inner = (r**2 / d * special.betainc(1.5, b2, c) + h**2 * special.betainc(0.5, b2, c)) / (
            2.0 * h
        )
        mean_sqrt_w = special.beta(1.0, b2) / special.beta(0.5, b2)
        outer = r * mean_sqrt_w * (1.0 - special.betainc(1.0, b2, c))
        return inner + outer

    def population_loss(self, theta: np.ndarray) -> np.ndarray:
        """Exact ``E|⟨θ, x⟩ − y|``: ``theta (..., d)`` → ``(...)``."""
        r = np.linalg.norm(check_theta(theta, self.d), axis=-1)
        return self.moment(1.0) * self._mean_g(r)

    def population_grad(self, theta: np.ndarray) -> np.ndarray:
        """``E[a]·θ/(h d)`` on ``‖θ‖ ≤ h`` (the whole domain); ``(..., d)`` → ``(..., d)``."""
        theta = check_theta(theta, self.d)
        if np.any(np.linalg.norm(theta, axis=-1) > self.half_width * (1 + 1e-12)):
            raise InputError(
                f"population_grad is implemented for ||theta|| <= half_width = {self.half_width}"
            )
        return self.moment(1.0) * theta / (self.half_width * self.d)

    @property
    def theta_star(self) -> np.ndarray:
        """0 (F is increasing in ‖θ‖)."""
        return np.zeros(self.d)
