"""``dpclaims new-paper ID [DIR]``: a working skeleton of a paper plugin, written into DIR.

Three files: ``claims.toml`` (the paper, one privacy claim and one rate claim), the
experiments module it names (an :class:`~dpclaims.claims.standard.AuditExperiment` of a
Laplace mean and a :class:`~dpclaims.claims.standard.RateExperiment` of its error in
``n``, with a constant output as its trivial control, sized with
:class:`~dpclaims.claims.BySize`) and a pytest test.  As written,
``dpclaims verify --registry DIR`` finds both claims consistent in seconds; the user then
replaces the mechanism, the error function and the claims with their own.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from ..errors import InputError

__all__ = ["write_skeleton", "module_name"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")

_TOML = Template("""\
# Claims of the paper $paper_id, checked by the experiments in $module.py.
# Run them:  dpclaims verify --registry $folder --paper $paper_id
# Fields: see the docstring of dpclaims.claims.registry (or any packaged claims TOML).

[paper]
id = "$paper_id"
title = "$paper_id: replace with the paper's title"
experiments = "$module"

[[claims]]
id = "$paper_id.mean.privacy"
paper = "$paper_id"
kind = "privacy"
algorithm = "Laplace mean"
statement = "The Laplace mean of n values clipped to [0, 1] is (1, 0)-DP (user level, replace)."
formula = "mean(clip(x, 0, 1)) + Laplace(1 / (n eps)), eps = 1"
regime = "any n"
source = "Theorem 1 (replace with yours)"
exponents = {}

[[claims]]
id = "$paper_id.mean.rate"
paper = "$paper_id"
kind = "excess_risk"
algorithm = "Laplace mean"
statement = "Its root-mean-square error is O(n^-1/2 + 1/(n eps))."
formula = "RMSE <= 1/sqrt(12 n) + sqrt(2)/(n eps)"
regime = "n large (the sampling term dominates)"
source = "Theorem 2 (replace with yours)"
exponents = {n = -0.5}
bound = "upper"
margin = 0.1
""")

_MODULE = Template('''\
"""Experiments checking the claims of $paper_id (claims.toml in this folder).

dpclaims imports this module only when one of its experiments runs
(``dpclaims verify --registry $folder``); each factory ``f(claim, budget)`` returns the
experiment checking one claim at the budget ``quick``, ``standard`` or ``full``.
"""

import numpy as np
from dpclaims.target import AuditTarget
from dpclaims.claims import BySize, register_experiment
from dpclaims.claims.standard import AuditExperiment, RateExperiment
from dpclaims.data import UserDataset, replace_user
from dpclaims.privacy import PrivacyClaim

EPSILON = 1.0
USERS = 10
TRIALS = BySize(quick=20_000, standard=200_000, full=1_000_000)
"""Mechanism runs per dataset of the audit."""
GRID = BySize(
    quick=[100, 200, 400, 800, 1600, 3200],
    standard=[100, 200, 400, 800, 1600, 3200, 6400, 12800],
)
"""Values of n the error is measured at (full: as standard)."""
REPLICATES = BySize(quick=8, standard=20, full=50)


def noisy_mean(data: UserDataset, rng: np.random.Generator, trials: int) -> np.ndarray:
    """``trials`` runs of the Laplace mean of the users' values clipped to [0, 1]: (trials, 1)."""
    values = np.clip(data.x[:, 0, 0], 0.0, 1.0)
    scale = 1.0 / (len(values) * EPSILON)  # sensitivity 1/n under replacing one user
    return (values.mean() + rng.laplace(0.0, scale, size=trials))[:, None]


def mean_target() -> AuditTarget:
    """The mechanism on two datasets differing in the first user's value (0 vs 1)."""
    d0 = UserDataset(np.zeros((USERS, 1)))
    d1 = replace_user(d0, 0, np.ones((1, 1)))
    claim = PrivacyClaim(epsilon=EPSILON, delta=0.0, unit="user", relation="replace")
    return AuditTarget(
        mechanism=noisy_mean, d0=d0, d1=d1, claim=claim, name="laplace-mean"
    )


def mean_error(n: float, rng: np.random.Generator, *, draws: int = 200) -> float:
    """Root-mean-square error of the Laplace mean of ``n`` uniform values, over ``draws`` runs."""
    n = int(n)
    values = rng.uniform(size=(draws, n))
    noise = rng.laplace(0.0, 1.0 / (n * EPSILON), size=draws)
    return float(np.sqrt(np.mean((values.mean(axis=1) + noise - 0.5) ** 2)))


def constant_error(n: float, rng: np.random.Generator, *, draws: int = 200) -> float:
    """The trivial control: the error of outputting 0 whatever the data (0.5 at every n); the
    rate test must call it inconsistent for the claim to be more than consistent_weak."""
    return 0.5


@register_experiment("$paper_id.mean.privacy")
def audit_mean_privacy(claim, budget):
    return AuditExperiment(
        build=mean_target,
        trials=TRIALS[budget],
        reference_epsilon=EPSILON,
        reference_note="the Laplace mechanism at scale sensitivity/eps is exactly eps-DP here",
    )


@register_experiment("$paper_id.mean.rate")
def sweep_mean_rate_in_n(claim, budget):
    return RateExperiment.for_claim(
        claim,
        mean_error,
        "n",
        GRID[budget],
        replicates=REPLICATES[budget],
        trivial=constant_error,
    )
''')

_TEST = Template('''\
"""This paper's claims hold at the quick budget: ``python -m pytest $folder``."""

from pathlib import Path

from dpclaims.claims import Registry
from dpclaims.claims.run import run_claims
from dpclaims.execution import Execution

HERE = Path(__file__).resolve().parent


def test_claims_are_consistent_at_the_quick_budget():
    registry = Registry.discover(folders=[HERE])
    results = run_claims(
        registry.select(paper="$paper_id"),
        budget="quick",
        execution=Execution(backend="serial"),
    )
    verdicts = {entry.id: entry.verdict for entry in results.claims}
    assert verdicts == {
        "$paper_id.mean.privacy": "consistent",
        "$paper_id.mean.rate": "consistent",
    }
''')


def module_name(paper_id: str) -> str:
    """The experiments module of a new paper: ``"smith_2025_experiments"`` for ``smith-2025``."""
    slug = re.sub(r"\W", "_", paper_id).lower()
    return f"{'paper_' if slug[0].isdigit() else ''}{slug}_experiments"


def write_skeleton(paper_id: str, folder: str | Path | None = None) -> list[Path]:
    """Write the skeleton of paper ``paper_id`` into ``folder`` (default ``./paper_id``).

    Returns the files written.  Nothing is overwritten: the files are created exclusively.

    Raises
    ------
    InputError
        ``paper_id`` is not a word of letters, digits, ``-``, ``_`` and ``.``, or ``folder``
        exists and is not an empty directory.
    """
    if not isinstance(paper_id, str) or not _ID.match(paper_id):
        raise InputError(
            "ID must start with a letter or digit and hold only letters, digits, '-', '_' and "
            f"'.', e.g. smith-2025; got {paper_id!r}"
        )
    target = Path(paper_id if folder is None else folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(
            f"DIR {str(target)!r} exists and is not an empty folder; pass a new folder "
            "(new-paper never writes over existing files)"
        )
    module = module_name(paper_id)
    fields = {"paper_id": paper_id, "module": module, "folder": str(target)}
    files = {
        "claims.toml": _TOML,
        f"{module}.py": _MODULE,
        f"test_{module.removesuffix('_experiments')}.py": _TEST,
    }
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, template in files.items():
        path = target / name
        with path.open("x", encoding="utf-8") as handle:
            handle.write(template.substitute(fields))
        written.append(path)
    return written
