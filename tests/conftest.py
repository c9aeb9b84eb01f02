"""Test configuration: hypothesis runs derandomized, so every machine gets the same result."""

import importlib.metadata
import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "erm_perturbation"
EXAMPLE_PAPER = "chaudhuri-monteleoni-sarwate-2011"

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")


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
