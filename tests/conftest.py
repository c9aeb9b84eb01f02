"""Test configuration and shared fixtures.

Hypothesis runs derandomized, so every machine gets the same result.  Fixtures shared by the
test folders: ``user_pair`` (a small user-level neighbouring pair), ``gaussian_target`` (the
Gaussian mechanism on the numbers 0 and 1 against a (1, 1e-5) claim) and ``example_env`` (the
example paper installed, for subprocesses).
"""

import importlib.metadata
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "erm_perturbation"
EXAMPLE_PAPER = "chaudhuri-monteleoni-sarwate-2011"

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")


def gauss(data, rng, trials):
    """The Gaussian mechanism ``N(data, 1)`` on a number: sensitivity 1 between 0 and 1."""
    return data + rng.standard_normal(trials)


@pytest.fixture
def user_pair():
    """A small user-level neighbouring pair: 4 users of 2 items with one feature, all 0 in d0;
    user 1's two items are 1 in d1 (user-level replace neighbours, unlabelled)."""
    from dpclaims.data import UserDataset, replace_user

    d0 = UserDataset(np.zeros((4, 2, 1)))
    return d0, replace_user(d0, 1, np.ones((2, 1)))


@pytest.fixture
def gaussian_target():
    """``N(data, 1)`` on the numbers 0 and 1 against (1, 1e-5)-DP, as an ``AuditTarget``
    (the pair attains the sensitivity 1; the exact ε at δ = 1e-5 is about 4.4)."""
    from dpclaims.privacy import PrivacyClaim
    from dpclaims.target import AuditTarget

    claim = PrivacyClaim(epsilon=1.0, delta=1e-5)
    return AuditTarget(mechanism=gauss, d0=0.0, d1=1.0, claim=claim)


@pytest.fixture(scope="session")
def example_env(tmp_path_factory) -> dict[str, str]:
    """Environment variables under which the example paper ``examples/erm_perturbation`` is an
    installed distribution (found through its ``dpclaims.papers`` entry point).

    Where it is installed (CI runs ``pip install -e examples/erm_perturbation``) that
    installation, this checkout's example first on the path; elsewhere nothing is installed:
    the ``.dist-info`` folder ``pip install`` would leave (``METADATA`` and
    ``entry_points.txt``) in a temporary folder on ``PYTHONPATH`` is what dpclaims reads.
    """
    path = [str(EXAMPLE / "src"), str(ROOT)]
    try:
        importlib.metadata.distribution("dpclaims-erm-perturbation")
    except importlib.metadata.PackageNotFoundError:
        site = tmp_path_factory.mktemp("site")
        info = site / "dpclaims_erm_perturbation-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: dpclaims-erm-perturbation\nVersion: 0.1.0\n"
        )
        (info / "entry_points.txt").write_text(
            f"[dpclaims.papers]\n{EXAMPLE_PAPER} = erm_perturbation\n"
        )
        path.insert(0, str(site))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
