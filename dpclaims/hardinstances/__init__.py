"""Hard instances: distributions with known optima, the papers' lower-bound constructions."""

from . import canaries, lower_bounds
from .base import Instance
from .canaries import NeighbourPair
from .gaussian import (
    GaussianPackingFamily,
    TruncatedGaussianInstance,
    UserLevelGaussianInstance,
    sample_user_level_gaussian,
)
from .heavy_tailed import HeavyPackingInstance, ParetoRadiusInstance, TwoPointInstance
from .linear import AbsoluteCubeInstance, LinearBallInstance, LinearHypercubeInstance
from .nonconvex import CauchyCircleInstance
from .packings import (
    Packing,
    exact_sphere_packing,
    gilbert_varshamov_bound,
    gilbert_varshamov_code,
    hamming_ball_volume,
    min_pairwise_distance,
    sphere_packing,
)
from .quadratic import (
    GaussianMeanInstance,
    LeastSquaresInstance,
    NesterovChainInstance,
    QuadraticHypercubeInstance,
    SphereMeanInstance,
)

__all__ = [
    "canaries",
    "lower_bounds",
    "Instance",
    "NeighbourPair",
    "GaussianPackingFamily",
    "TruncatedGaussianInstance",
    "UserLevelGaussianInstance",
    "sample_user_level_gaussian",
    "HeavyPackingInstance",
    "ParetoRadiusInstance",
    "TwoPointInstance",
    "AbsoluteCubeInstance",
    "LinearBallInstance",
    "LinearHypercubeInstance",
    "CauchyCircleInstance",
    "Packing",
    "exact_sphere_packing",
    "gilbert_varshamov_bound",
    "gilbert_varshamov_code",
    "hamming_ball_volume",
    "min_pairwise_distance",
    "sphere_packing",
    "GaussianMeanInstance",
    "LeastSquaresInstance",
    "NesterovChainInstance",
    "QuadraticHypercubeInstance",
    "SphereMeanInstance",
]
