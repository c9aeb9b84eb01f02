"""Real bugs: minimal numpy reproductions of privacy bugs that shipped in public libraries.

Each :class:`RealBug` is one bug as it shipped (Opacus, diffprivlib, SmartNoise, OpenDP, TF
Privacy, InterpretML, textbook pitfalls), reduced to a batched mechanism
``mechanism(data, rng, trials) -> (trials, k)`` on a :class:`~dpclaims.data.UserDataset` of
records ``(features, label)`` (``m = 1``), with

- its *correct twin* (the fixed code, same interface), which must never be found in violation;
- the claim the buggy code makes (ε, δ, unit, relation);
- a plain user dataset (:func:`plain_dataset`: 100 records, two features, three classes, no
  crafted values) for a search from scratch, and a crafted neighbouring pair that shows the bug;
- its ground truth (``true_epsilon``: a number, ``inf``, or None with ``ground_truth`` saying
  "> claim" and why) and the source (issue, PR or paper);
- the cheapest way to catch it (``caught_by``) and, for samplers and normalisers, the hooks the
  configuration checks of :mod:`dpclaims.audit.sampler` take.

One module per library registers its bugs on import; :func:`list_bugs` imports them all.  The
bugs are also registered as privacy mutants (``corpus="real"``), so ``dpclaims mutants --corpus
real`` audits each on its crafted pair.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from dpclaims.target import AuditTarget

from ...data import UserDataset
from ...errors import InputError
from ...privacy import PrivacyClaim

__all__ = [
    "RealBug",
    "register_bug",
    "list_bugs",
    "get_bug",
    "plain_dataset",
    "records",
    "clip_rows",
    "gaussian_epsilon_exact",
    "LIBRARIES",
]

LIBRARIES = (
    "opacus",
    "accounting",
    "diffprivlib",
    "smartnoise",
    "opendp",
    "interpret",
    "textbook",
)
"""The modules of the corpus, one per library (``accounting``: accountants across libraries)."""

PLAIN_SEED = 2024
PLAIN_CLASSES = (60, 35, 5)
"""Class sizes of :func:`plain_dataset`: imbalanced, as real labels are."""


def plain_dataset(n: int = 100, d: int = 2) -> UserDataset:
    """A user's dataset: ``n`` records of ``d`` standard-normal features and a label in {0, 1, 2}
    (60 %, 35 %, 5 %), fixed seed — nothing crafted; x ``(n, 1, d)``, y ``(n, 1)``."""
    rng = np.random.default_rng(PLAIN_SEED)
    counts = np.floor(np.array(PLAIN_CLASSES) * n / 100).astype(int)
    counts[0] += n - counts.sum()
    y = rng.permutation(np.repeat(np.arange(3), counts)).astype(float)
    return UserDataset(rng.standard_normal((n, 1, d)), y[:, None])


def records(x: Any, y: Any = None) -> UserDataset:
    """A record-level dataset from features ``x (n, d)`` and labels ``y (n,)``."""
    x = np.asarray(x, dtype=np.float64)
    return UserDataset(x[:, None, :], None if y is None else np.asarray(y, float)[:, None])


def clip_rows(v: np.ndarray, bound: float) -> np.ndarray:
    """Rows of ``v (..., d)`` scaled to l2 norm at most ``bound``."""
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v * np.minimum(1.0, bound / np.maximum(norms, 1e-300))


def labels(data: UserDataset) -> np.ndarray:
    """The records' labels ``(n,)`` (zeros when the dataset has none)."""
    return np.zeros(data.n * data.m) if data.y is None else data.y.reshape(-1)


def gaussian_epsilon_exact(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Exact ε at δ of ``N(f(D), σ²)`` with l2-sensitivity Δ (Balle & Wang 2018, Theorem 8),
    by root-finding on the analytic δ(ε); works where an accountant's grid would not (ε ≫ 1)."""
    from ...algorithms.mechanisms import _log_delta

    target = math.log(delta)

    def gap(eps: float) -> float:
        return max(_log_delta(sigma, eps, sensitivity), -1e6) - target

    if gap(1e-9) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2.0
    return float(brentq(gap, 1e-9, hi, xtol=1e-10))


@dataclass(frozen=True, kw_only=True)
class RealBug:
    """One shipped privacy bug, reproduced.

    Attributes
    ----------
    name : ``LIBRARY-what-goes-wrong``
    library : the module (one of :data:`LIBRARIES`)
    source : the issue, PR or paper that reports it
    description : the bug, in one sentence
    fix : what the correct twin does instead
    mechanism, twin : ``(data, rng, trials) -> (trials, k)``, buggy and fixed
    claim : what the buggy code claims (the twin meets it)
    pair : ``pair() -> (d0, d1)``, the crafted neighbours that show the bug
    plain : ``plain() -> UserDataset``, a user's dataset to search from
    true_epsilon : the buggy mechanism's ε at the claim's δ (float or ``inf``), None when only
        a lower bound is known
    ground_truth : the ground truth in words ("∞: ...", "2 (exact: ...)", "> 1: ...")
    caught_by : the cheapest way to catch it
    statistic : an audit statistic ``(n, k) -> (n,)`` the cheapest catch needs, else None
    method : the audit method (``threshold``, or ``histogram`` for discrete outputs)
    sampler : ``sampler(data, rng, trials) -> bool (trials, n)``, the units a step uses
    sampling_rate : the rate the accounting assumes, with ``sampler``
    normaliser : ``normaliser(data) -> float``, a denominator the release divides by
    twin_sampler, twin_normaliser : the same hooks of the twin
    recompute : ``recompute() -> float``, the computation behind a finite ``true_epsilon``
        (kept out of import; the tests check the stored value against it)
    trials : trials per dataset that catch it on the crafted pair (the ``quick`` budget)
    """

    name: str
    library: str
    source: str
    description: str
    fix: str
    mechanism: Callable
    twin: Callable
    claim: PrivacyClaim
    pair: Callable[[], tuple[UserDataset, UserDataset]]
    true_epsilon: float | None
    ground_truth: str
    caught_by: str
    plain: Callable[[], UserDataset] = plain_dataset
    statistic: Callable | None = None
    method: str = "threshold"
    sampler: Callable | None = None
    twin_sampler: Callable | None = None
    sampling_rate: float | None = None
    normaliser: Callable | None = None
    twin_normaliser: Callable | None = None
    recompute: Callable[[], float] | None = None
    trials: int = 20_000

    def __post_init__(self) -> None:
        if self.library not in LIBRARIES:
            raise InputError(f"library must be one of {', '.join(LIBRARIES)}, got {self.library!r}")

    def target(self, *, twin: bool = False) -> AuditTarget:
        """The crafted pair and the claim, with the buggy mechanism (or its ``twin``)."""
        d0, d1 = self.pair()
        return AuditTarget(
            mechanism=self.twin if twin else self.mechanism,
            d0=d0,
            d1=d1,
            claim=self.claim,
            name=self.name + ("-twin" if twin else ""),
            description=self.description,
        )

    def audit_options(self) -> dict:
        """Keywords of :func:`~dpclaims.audit.audit` the cheapest catch needs: its ``test``."""
        from ...audit import AuditTest

        return {"test": AuditTest(method=self.method, statistic=self.statistic)}

    def to_dict(self) -> dict:
        eps = self.true_epsilon
        return {
            "name": self.name,
            "library": self.library,
            "source": self.source,
            "description": self.description,
            "fix": self.fix,
            "claim": self.claim.to_dict(),
            "true_epsilon": None if eps is None else ("inf" if math.isinf(eps) else eps),
            "ground_truth": self.ground_truth,
            "caught_by": self.caught_by,
        }


_BUGS: dict[str, RealBug] = {}
_LOADED = False


def register_bug(bug: RealBug) -> RealBug:
    """Add ``bug`` to the corpus (names are unique)."""
    if bug.name in _BUGS and _BUGS[bug.name] is not bug:
        raise InputError(f"a real bug named {bug.name!r} is already registered")
    _BUGS[bug.name] = bug
    return bug


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")


def list_bugs(library: str | None = None) -> list[RealBug]:
    """Every real bug (of one ``library``), in registration order."""
    _load()
    return [b for b in _BUGS.values() if library is None or b.library == library]


def get_bug(name: str) -> RealBug:
    """The real bug called ``name``."""
    _load()
    if name not in _BUGS:
        raise InputError(f"unknown real bug {name!r}; known: {', '.join(_BUGS)}")
    return _BUGS[name]
