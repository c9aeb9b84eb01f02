"""Hard instances: distributions with known optima, the papers' lower-bound constructions."""

from dpclaims.hardinstances.murata_suzuki_2023.nonconvex import CauchyCircleInstance
from dpclaims.hardinstances.pure_dp_heavy_tails import (
    HeavyPackingInstance,
    ParetoRadiusInstance,
    TwoPointInstance,
)

from . import canaries, lower_bounds
from .base import Instance
from .canaries import NeighbourPair
from .gaussian import (
    GaussianPackingFamily,
    TruncatedGaussianInstance,
    UserLevelGaussianInstance,
    sample_user_level_gaussian,
)
from .linear import AbsoluteCubeInstance, LinearBallInstance, LinearHypercubeInstance
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
