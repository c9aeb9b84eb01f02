"""Auditing diffprivlib's tools as released: one library call per trial (``pip install
diffprivlib``).

Each function below releases once per call, ``f(data, random_state)``: ``dpclaims.percall``
makes it a mechanism (a ``RandomState`` seeded per trial, the calls spread over all cores) and
``dpclaims.audit_sequential`` stops as soon as a look decides.  Without ``bounds`` (``range``)
diffprivlib takes them from the data, which leaks the data (ε = ∞ on a pair whose extreme
record differs); with them the release is correct.  ``histogram(range=(0, 1))`` is calibrated for
add/remove neighbours, so under replace-one (a record moves from one bin to another) it is
2ε-DP, and the audit says which relation fits.  Run ``python examples/diffprivlib_percall.py``
for the table of verdicts, before (20,000 fixed trials) and after (sequential), and
``python examples/diffprivlib_percall.py search`` for the search from the plain dataset (no pair
given: :func:`plain`), fixed screens and certification against the sequential search.  From the
command line: ``dpclaims audit examples/diffprivlib_percall.py:mean_unbounded --d0 d0.npz
--d1 d1.npz --epsilon 1 --delta 0`` (datasets as .npz with an array ``x``).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from diffprivlib import tools
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import PrivacyLeakWarning

from dpclaims import PrivacyClaim, audit_sequential, percall
from dpclaims.audit import audit
from dpclaims.audit.search import search
from dpclaims.audit.sequential import trials_spent
from dpclaims.data import UserDataset
from dpclaims.targets.pairs import pairs_for

EPSILON = 1.0
FIXED_TRIALS = 20_000


def _values(data) -> np.ndarray:
    """The records as a flat array (a numpy array, or a dpclaims ``UserDataset`` from .npz)."""
    return np.ravel(getattr(data, "x", data))


def _call(tool, data, random_state, **options) -> np.ndarray:
    """One diffprivlib release, its own accountant, its leak warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        out = tool(
            _values(data),
            epsilon=EPSILON,
            random_state=random_state,
            accountant=BudgetAccountant(),
            **options,
        )
    return np.hstack(out) if isinstance(out, tuple) else out


def mean_unbounded(data, random_state):
    """``tools.mean`` without bounds: they are taken from the data (leaks)."""
    return _call(tools.mean, data, random_state)


def mean_bounded(data, random_state):
    """``tools.mean`` with ``bounds=(0, 1)`` (correct)."""
    return _call(tools.mean, data, random_state, bounds=(0.0, 1.0))


def std_unbounded(data, random_state):
    """``tools.std`` without bounds (leaks)."""
    return _call(tools.std, data, random_state)


def histogram_unranged(data, random_state):
    """``tools.histogram`` without ``range``: the bin edges come from the data (leaks); the
    release is the counts and the edges."""
    return _call(tools.histogram, data, random_state, bins=2)


def histogram_ranged(data, random_state):
    """``tools.histogram(range=(0, 1))``: calibrated for add/remove (2ε under replace-one)."""
    return _call(tools.histogram, data, random_state, bins=2, range=(0.0, 1.0))


def pairs(relation: str) -> tuple[np.ndarray, np.ndarray]:
    """The given pair: nineteen records at 0.2 and one at 0; replace-one moves that record to 1
    (the other bin, a wider range, the whole sensitivity of the bounded mean), add/remove adds
    a record at 1."""
    d0 = np.append(np.full(19, 0.2), 0.0)
    if relation == "replace":
        return d0, np.append(np.full(19, 0.2), 1.0)
    return d0, np.append(d0, 1.0)


CASES = [
    ("tools.mean, no bounds", mean_unbounded),
    ("tools.mean, bounds=(0,1)", mean_bounded),
    ("tools.std, no bounds", std_unbounded),
    ("tools.histogram, no range", histogram_unranged),
    ("tools.histogram, range=(0,1)", histogram_ranged),
]


def audit_case(function, relation: str, *, sequential: bool = True, seed: int = 0):
    """The audit of ``function`` on :func:`pairs` under ``relation`` against ε = 1 (pure)."""
    d0, d1 = pairs(relation)
    claim = PrivacyClaim(EPSILON, 0.0, unit="user", relation=relation)
    mechanism = percall(function)
    if sequential:
        return audit_sequential(mechanism, d0, d1, claim, seed=seed)
    return audit(mechanism, d0, d1, claim, trials=FIXED_TRIALS, seed=seed)


SEARCH_TRIALS = 20_000
"""Trials per dataset of the search's certifying audit (its last look when sequential); the
screens get a tenth, as ``dpclaims audit --search --trials 20000``."""


def plain() -> UserDataset:
    """The plain dataset of issue 37: 40 users, one value each, spread over [0.25, 0.75]."""
    return UserDataset(np.linspace(0.25, 0.75, 40)[:, None, None])


def search_case(function, *, sequential: bool = True, seed: int = 0):
    """The search from :func:`plain` (replace-one, ε = 1, pure), as ``dpclaims audit --search``
    runs it."""
    claim = PrivacyClaim(EPSILON, 0.0, unit="user", relation="replace")
    return search(
        percall(function),
        pairs_for(plain()),
        claim,
        trials=SEARCH_TRIALS,
        seed=seed,
        screen_trials=SEARCH_TRIALS // 10,
        progress=False,
        sequential=sequential,
    )


def main_search(modes: tuple[bool, ...] = (False, True)) -> None:
    """The table of :func:`search_case`: verdict, ε, calls per dataset (screens and
    certification, over all pairs), seconds."""
    print(
        f"{'function':30s} {'mode':10s} {'verdict':16s} {'ε ≥':>7s} {'calls/dataset':>14s} "
        f"{'certified':>10s} {'seconds':>8s}"
    )
    for name, function in CASES:
        for sequential in modes:
            found = search_case(function, sequential=sequential)
            certified = found.samples // 2 - found.screening_samples // 2
            mode = "sequential" if sequential else "fixed"
            print(
                f"{name:30s} {mode:10s} {found.verdict:16s} {found.epsilon_lower:7.3f} "
                f"{found.samples // 2:14,} {certified:10,} {found.wall_time:8.1f}",
                flush=True,
            )


def main() -> None:
    print(
        f"{'function':30s} {'relation':10s} {'mode':10s} {'verdict':16s} {'ε ≥':>7s} "
        f"{'trials/dataset':>14s} {'seconds':>8s}"
    )
    for relation in ("replace", "add-remove"):
        for name, function in CASES:
            for sequential in (False, True):
                start = time.perf_counter()
                result = audit_case(function, relation, sequential=sequential)
                seconds = time.perf_counter() - start
                spent = trials_spent(result)
                mode = "sequential" if sequential else "fixed"
                print(
                    f"{name:30s} {relation:10s} {mode:10s} {result.verdict:16s} "
                    f"{result.epsilon_lower:7.3f} {spent:14,} {seconds:8.1f}"
                )
                for note in result.warnings:
                    if "add/remove" in note:
                        print(f"{'':30s} hint: {note}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["search"]:
        main_search((True,) if sys.argv[2:3] == ["sequential"] else (False, True))
    else:
        main()
