"""The real-bug corpus (:mod:`dpclaims.targets.realbugs`) as privacy mutants, ``corpus="real"``.

Each bug's paper is its library (``opacus``, ``diffprivlib``, ...) and its audit
``realbug:NAME``: the crafted pair with the trials and method that catch it.
"""

from __future__ import annotations

from dpclaims.targets.mutants import Mutant, register_mutant
from dpclaims.targets.realbugs import list_bugs

for _bug in list_bugs():
    register_mutant(
        Mutant(
            name=_bug.name,
            paper=_bug.library,
            kind="privacy",
            description=f"{_bug.description} [{_bug.source}]",
            true_epsilon=_bug.true_epsilon,
            build=_bug.target,
            caught_by=_bug.caught_by,
            audit=f"realbug:{_bug.name}",
            corpus="real",
            audit_options=_bug.audit_options(),
        )
    )
