"""Reference implementations: DP mechanisms, baselines and, per paper, the algorithms audited."""

from .baselines import DPSGD, BaselineRun
from .mechanisms import (
    ClippedQuery,
    ExponentialMechanism,
    FeatureCountQuery,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ReportNoisyMax,
    analytic_gaussian_sigma,
    gaussian_sigma,
    user_mean_query,
    user_sum_query,
)
from .transcript import GaussianRelease, ReleaseModel, ReleasesTranscript, StepRelease

__all__ = [
    "DPSGD",
    "BaselineRun",
    "GaussianRelease",
    "ReleaseModel",
    "ReleasesTranscript",
    "StepRelease",
    "ClippedQuery",
    "ExponentialMechanism",
    "FeatureCountQuery",
    "GaussianMechanism",
    "LaplaceMechanism",
    "RandomizedResponse",
    "ReportNoisyMax",
    "analytic_gaussian_sigma",
    "gaussian_sigma",
    "user_mean_query",
    "user_sum_query",
]
