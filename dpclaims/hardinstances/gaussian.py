"""Gaussian hard instances: the user-level reduction, packing-indexed families, truncated-Gaussian
fingerprinting.

* :class:`UserLevelGaussianInstance` — items ``z ~ N(μ, σ² I_d)`` with the mean-estimation
  loss ``(s/2)‖θ − z‖²`` (population loss and optimum from
  :class:`~dpclaims.hardinstances.quadratic.GaussianMeanInstance`), sampled through the
  user-level reduction of Lemma D.3 of Ghazi et al. (Levy et al. 2021; spec 001 §5.2):
  a user's mean ``y_i ~ N(μ, σ²/m I)`` is a sufficient statistic and the m items are
  regenerated from it as ``x_ij = y_i + σ(w_ij − w̄_i)``, ``w_ij ~ N(0, I)`` — exactly
  i.i.d. ``N(μ, σ² I)``.  Its lower bound is Lemma D.5 (Gaussian fingerprinting).
* :class:`GaussianPackingFamily` — the family ``{N(scale·v, σ² I) : v ∈ V}`` indexed by
  a :class:`~dpclaims.hardinstances.packings.Packing` (the mixture over the packing
  under a uniform prior is :meth:`GaussianPackingFamily.sample_mixture`).
* :class:`TruncatedGaussianInstance` — ``x = z·1[‖z‖ ≤ B]`` (zeroed, not resampled;
  Definition D.1), the hard instance of Thm D.7 (spec 001 §5.3, ``hard_instance_sc``),
  with an exact population loss through non-central χ² identities; optionally with the
  linear loss of spec 001 §5.3's [DEFAULT] convex proposal.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..data import UserDataset
from ..errors import (
    InputError,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from ..losses import LinearLoss, SquaredDistanceLoss, project_l2_ball
from ._items import check_rng, check_theta, check_vector
from .base import Instance
from .lower_bounds import (
    ghazi_thm_d7_explicit_lower_bound,
    ghazi_thm_d7_scales,
    user_gaussian_mean_lower_bound,
)
from .packings import Packing
from .quadratic import GaussianMeanInstance

__all__ = [
    "UserLevelGaussianInstance",
    "GaussianPackingFamily",
    "TruncatedGaussianInstance",
    "sample_user_level_gaussian",
]

LOSS_KINDS = ("squared_distance", "linear")


def sample_user_level_gaussian(
    mean: np.ndarray, sigma: float, n: int, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """User-level reduction sampler (Lemma D.3 of Ghazi et al., spec 001 §5.2).

    Parameters
    ----------
    mean : array (d,)
    sigma : float
        Item standard deviation.
    n, m : int
        Users and items per user.
    rng : numpy.random.Generator

    Returns
    -------
    x : array (n, m, d)
        ``x_ij = y_i + σ(w_ij − w̄_i)``: i.i.d. ``N(mean, σ² I)`` items.
    user_means : array (n, d)
        ``y_i ~ N(mean, σ²/m I)``, equal to ``x.mean(axis=1)``.
    """
    mean = check_vector(mean, "mean")
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    n, m, rng = check_count(n, "n"), check_count(m, "m"), check_rng(rng)
    user_means = mean + (sigma / math.sqrt(m)) * rng.standard_normal((n, mean.shape[0]))
    w = rng.standard_normal((n, m, mean.shape[0]))
    x = user_means[:, None, :] + sigma * (w - w.mean(axis=1, keepdims=True))
    return x, user_means


class UserLevelGaussianInstance(GaussianMeanInstance):
    """``N(mean, σ² I_d)`` items, loss ``(strength/2)‖θ − x‖²`` on ``B(0, radius)``, user-level
    sampler.

    Same distribution, loss, ``population_loss``, ``population_grad`` and ``theta_star`` as
    :class:`~dpclaims.hardinstances.quadratic.GaussianMeanInstance`; :meth:`sample` goes
    through the user means (Lemma D.3), and :meth:`lower_bound` is Lemma D.5.
    """

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``n`` users × ``m`` i.i.d. items via the user-mean reduction → ``x (n, m, d)``."""
        x, _ = sample_user_level_gaussian(self.mean, self.sigma, n=n, m=m, rng=rng)
        return UserDataset(x)

    def sample_user_means(self, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
        """The sufficient statistic only: user means ``(n, d)``, ``N(mean, σ²/m I)``."""
        n, m, rng = check_count(n, "n"), check_count(m, "m"), check_rng(rng)
        return self.mean + (self.sigma / math.sqrt(m)) * rng.standard_normal((n, self.d))

    def lower_bound(
        self, n: int, m: int, epsilon: float, delta: float = 0.0, psi: float = 1.0
    ) -> float:
        """Minimax excess over the box family containing this instance (Lemma D.5, Ghazi et al.).

        The excess is ``(s/2)‖θ − μ‖²``, so ``(s/2)·user_gaussian_mean_lower_bound(n, m, d, σ, ε,
        ψ)``
        lower-bounds the worst excess over means ``μ ∈ [−ψσ/√m, ψσ/√m]^d`` of any user-level
        (ε, δ)-DP algorithm, for δ small (the paper's δ condition is garbled and not checked).
        """
        check_delta(delta)
        return (
            0.5
            * self.strength
            * user_gaussian_mean_lower_bound(
                n, m, self.d, sigma=self.sigma, epsilon=epsilon, psi=psi
            )
        )


class GaussianPackingFamily:
    """``{N(scale·v, σ² I_d) : v ∈ V}`` for a packing ``V``: the Fano/packing family.

    Parameters
    ----------
    packing : Packing
        Euclidean packing (e.g. :func:`~dpclaims.hardinstances.packings.sphere_packing`
        or ``gilbert_varshamov_code(...).on_sphere()``).
    scale, sigma, radius, strength : float
        Means are ``scale·v``; item standard deviation; domain radius; loss strength
        (members are :class:`UserLevelGaussianInstance`).
    """

    def __init__(
        self, packing: Packing, scale: float, sigma: float, radius: float, strength: float = 1.0
    ):
        if not isinstance(packing, Packing) or packing.metric != "euclidean":
            raise InputError(
                "packing must be a Euclidean Packing; map a code with .on_sphere() first"
            )
        self.packing = packing
        self.scale = check_positive(scale, "scale")
        self.sigma = check_positive(sigma, "sigma")
        self.radius = check_positive(radius, "radius")
        self.strength = check_positive(strength, "strength")

    @property
    def means(self) -> np.ndarray:
        """All member means ``(|V|, d)``."""
        return self.scale * self.packing.points

    @property
    def mean_separation(self) -> float:
        """Certified minimum distance between member means, ``scale·s_V``."""
        return self.scale * self.packing.min_distance

    def __len__(self) -> int:
        return self.packing.size

    def member(self, index: int) -> UserLevelGaussianInstance:
        """The instance with mean ``scale·V[index]``."""
        index = check_count(index, "index", minimum=0)
        if index >= len(self):
            raise InputError(f"index must be < {len(self)} (the packing size), got {index}")
        return UserLevelGaussianInstance(self.means[index], self.sigma, self.radius, self.strength)

    def sample_mixture(self, n: int, m: int, rng: np.random.Generator) -> tuple[int, UserDataset]:
        """Draw ``v`` uniformly from the packing (the Fano prior), then ``n × m`` items of member
        ``v``."""
        rng = check_rng(rng)
        index = int(rng.integers(len(self)))
        return index, self.member(index).sample(n, m, rng)

    def to_dict(self) -> dict:
        """Parameters and the packing's certificate."""
        return {
            "family": type(self).__name__,
            "scale": self.scale,
            "sigma": self.sigma,
            "radius": self.radius,
            "strength": self.strength,
            "packing": self.packing.to_dict(),
        }


class TruncatedGaussianInstance(Instance):
    """``x = z·1[‖z‖ ≤ B]``, ``z ~ N(χ, σ² I_d)`` (Definition D.1 of Ghazi et al.) on ``K = B(0,
    radius)``.

    Parameters
    ----------
    chi : array (d,)
        Mean of the untruncated Gaussian.
    sigma : float
    truncation : float
        ``B``; items with ``‖z‖ > B`` are replaced by 0.
    strength : float
        ``loss_kind="squared_distance"``: ``μ`` in ``(μ/2)‖θ − x‖²``
        (:class:`~dpclaims.losses.SquaredDistanceLoss`; the paper's ``ℓ^ζ_sq``, ζ = μ/2).
        ``"linear"``: ``s`` in ``−s⟨θ, x⟩`` (:class:`~dpclaims.losses.LinearLoss`; spec 001
        §5.3's [DEFAULT] convex proposal with ``s = G/B`` — ours, not the paper's).
    radius : float
        Domain radius.
    loss_kind : {"squared_distance", "linear"}

    Notes
    -----
    With ``b = B²/σ²`` and ``λ = ‖χ‖²/σ²`` (χ'² = non-central chi-square),
    ``E x = χ·P(χ'²_{d+2}(λ) ≤ b)`` and ``E‖x‖² = σ²(d·P(χ'²_{d+2}(λ) ≤ b) + λ·P(χ'²_{d+4}(λ) ≤
    b))``
    (Stein-type identities), so the population loss is exact up to the accuracy of
    :func:`scipy.stats.ncx2.cdf`.
    """

    def __init__(
        self,
        chi,
        sigma: float,
        truncation: float,
        strength: float,
        radius: float,
        loss_kind: str = "squared_distance",
    ):
        self.chi = check_vector(chi, "chi")
        self.d = int(self.chi.shape[0])
        self.sigma = check_positive(sigma, "sigma")
        self.truncation = check_positive(truncation, "truncation")
        self.strength = check_positive(strength, "strength")
        self.radius = check_positive(radius, "radius")
        self.loss_kind = check_choice(loss_kind, LOSS_KINDS, "loss_kind")
        self.loss = (
            SquaredDistanceLoss(self.strength)
            if loss_kind == "squared_distance"
            else LinearLoss(self.strength)
        )
        b = (self.truncation / self.sigma) ** 2
        lam = float(self.chi @ self.chi) / self.sigma**2

        def cdf(dof: int) -> float:
            return float(stats.chi2.cdf(b, dof) if lam == 0.0 else stats.ncx2.cdf(b, dof, lam))

        self.keep_probability = cdf(self.d)
        self.chi_tr = self.chi * cdf(self.d + 2)
        self.second_moment = self.sigma**2 * (self.d * cdf(self.d + 2) + lam * cdf(self.d + 4))

    @classmethod
    def from_theorem(
        cls,
        d: int,
        n: int,
        m: int,
        strong_convexity: float,
        lipschitz: float,
        epsilon: float,
        rng: np.random.Generator,
        convention: str = "lipschitz",
    ) -> TruncatedGaussianInstance:
        """``hard_instance_sc(d, n, m, mu, G, eps, rng)`` of spec 001 §5.3 (proof of Thm D.7).

        ``B, σ = ghazi_thm_d7_scales(d, G, μ, convention)`` (σ = B/(1000√d), ψ = 1),
        ``χ ~ Uniform([−σ/√m, σ/√m]^d)``, loss ``(μ/2)‖θ − x‖²``, ``K = B(0, B)``.
        ``convention="lipschitz"``: B = G/(2μ), so the loss is exactly G-Lipschitz on K;
        ``"paper"``: B = G/μ as printed (gradients up to 2G on K; spec 001 [ERRATA?]).
        ``n, m, epsilon`` are stored for :meth:`lower_bound`.
        """
        d, n, m = check_count(d, "d"), check_count(n, "n"), check_count(m, "m")
        epsilon = check_epsilon(epsilon)
        truncation, sigma = ghazi_thm_d7_scales(d, lipschitz, strong_convexity, convention)
        half_width = sigma / math.sqrt(m)
        chi = check_rng(rng).uniform(-half_width, half_width, size=d)
        inst = cls(
            chi, sigma=sigma, truncation=truncation, strength=strong_convexity, radius=truncation
        )
        inst.lipschitz = float(lipschitz)
        inst.convention = convention
        inst.n, inst.m, inst.epsilon = n, m, epsilon
        return inst

    def sample(self, n: int, m: int, rng: np.random.Generator) -> UserDataset:
        """``n × m`` i.i.d. zero-truncated items → ``x (n, m, d)``."""
        n, m = check_count(n, "n"), check_count(m, "m")
        z = self.chi + self.sigma * check_rng(rng).standard_normal((n, m, self.d))
        z[np.sum(z**2, axis=-1) > self.truncation**2] = 0.0
        return UserDataset(z)

    def population_loss(self, theta: np.ndarray) -> np.ndarray:
        """Exact ``(μ/2)E‖θ − x‖²`` or ``−s⟨θ, χ^tr⟩``: ``theta (..., d)`` → ``(...)``."""
        theta = check_theta(theta, self.d)
        if self.loss_kind == "linear":
            return -self.strength * (theta @ self.chi_tr)
        quad = np.sum(theta**2, axis=-1) - 2.0 * theta @ self.chi_tr + self.second_moment
        return 0.5 * self.strength * quad

    def population_grad(self, theta: np.ndarray) -> np.ndarray:
        """``μ(θ − χ^tr)`` or ``−s χ^tr``: ``(..., d)`` → ``(..., d)``."""
        theta = check_theta(theta, self.d)
        if self.loss_kind == "linear":
            return np.broadcast_to(-self.strength * self.chi_tr, theta.shape).copy()
        return self.strength * (theta - self.chi_tr)

    @property
    def theta_star(self) -> np.ndarray:
        """``Π_K(χ^tr)`` (squared distance; = χ^tr up to ~e^{−10d}σ for Thm D.7) or
        ``radius·χ^tr/‖χ^tr‖``."""
        if self.loss_kind == "squared_distance":
            return project_l2_ball(self.chi_tr[None, :], self.radius)[0]
        norm = float(np.linalg.norm(self.chi_tr))
        return self.radius * self.chi_tr / norm if norm > 0 else np.zeros(self.d)

    def lower_bound(
        self,
        n: int | None = None,
        m: int | None = None,
        epsilon: float | None = None,
        delta: float = 0.0,
    ) -> float:
        """Thm D.7 private term with the proof's constants: ``(μ/2)α²``, ``α = dσ/(100 ε n √m)``.

        Delegates to :func:`~dpclaims.hardinstances.lower_bounds.ghazi_thm_d7_explicit_lower_bound`
        with this instance's σ and μ; ``n, m, epsilon`` default to those given to
        :meth:`from_theorem`.  Valid for n ≥ √d/ε and δ polynomially small in n (the
        condition is garbled in the source and not checked).  Only the squared-distance
        loss has a proved bound.
        """
        if self.loss_kind != "squared_distance":
            raise InputError(
                "lower_bound is proved only for loss_kind='squared_distance' (Thm D.7)"
            )
        check_delta(delta)
        n = getattr(self, "n", None) if n is None else n
        m = getattr(self, "m", None) if m is None else m
        epsilon = getattr(self, "epsilon", None) if epsilon is None else epsilon
        if n is None or m is None or epsilon is None:
            raise InputError("pass n, m and epsilon (or build the instance with from_theorem)")
        return ghazi_thm_d7_explicit_lower_bound(
            n, m, self.d, epsilon=epsilon, sigma=self.sigma, strong_convexity=self.strength
        )
