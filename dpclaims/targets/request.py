"""The rules of one audit of a named mechanism, checked before anything runs: an
:class:`AuditRequest` is what ``dpclaims audit MECHANISM`` is asked to do, and a Python user
building one gets the same rules and messages.

A mechanism is a built-in target (:mod:`dpclaims.targets.catalog`) or the user's own code
(``module:function`` or ``path/to/file.py:function``).  The request fixes the claim (the unit
and relation default from the mechanism: ``item`` and ``add-remove`` for DP-SGD, else ``user``
and ``replace``; ``query`` and ``unchecked`` check array pairs under a ``replace`` claim), the
DP-SGD options (threat model and canary: DP-SGD built-ins only), where the pair comes from
(``d0`` and ``d1`` for user code, the built-in's own otherwise), the test, and what runs: a
coupled replay alone (``replay`` without ``search``), a search over pairs, or an audit of the
given pair or a search with sequential looks for a per-call function (unless
``fixed_trials``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..audit.core import MIN_TRIALS, same_data
from ..audit.options import AuditTest, Neighbours
from ..audit.search import SCREEN_TRIALS
from ..errors import InputError, check_choice, check_trials
from ..privacy import PrivacyClaim
from ..target import AuditTarget
from ..vocabulary import CANARIES, THREAT_MODELS, Relation
from .catalog import default_relation, default_unit
from .dpsgd import planned_test
from .pairs import pairs_for

__all__ = ["MAX_AUDIT_EPSILON", "AuditRequest"]

MAX_AUDIT_EPSILON = 700.0
"""The largest claimed epsilon an audit takes: e^epsilon must stay a finite float."""

_ARRAY_RELATIONS = (Relation.QUERY, Relation.UNCHECKED)


@dataclass(frozen=True, kw_only=True)
class AuditRequest:
    """One audit of a named mechanism, its options checked on construction.

    Parameters
    ----------
    mechanism : a built-in name, or ``module:function`` / ``path/to/file.py:function``
    epsilon, delta : the claimed guarantee
    unit, relation : of the claim; None: from the mechanism (``relation`` may also be
        ``query``, with ``sensitivity``, or ``unchecked``, for array pairs)
    sensitivity : l1 sensitivity of the query, with ``relation="query"``
    threat_model, canary : how a DP-SGD built-in is audited (:mod:`dpclaims.targets.dpsgd`)
    d0, d1 : the neighbouring datasets of user code (a built-in brings its own)
    method : the audit's test (:class:`~dpclaims.audit.AuditTest`), checked by :meth:`test`
    trials : mechanism runs per dataset
    search : search pairs around ``d0`` and audit the best
    derived : with ``search``, also screen pairs on a smaller dataset derived from ``d0``
    save_pair : the audited pair is saved
    replay : coupled replay trials (None: no replay)
    fixed_trials : exactly ``trials`` per dataset, no sequential looks
    """

    mechanism: str
    epsilon: float = 1.0
    delta: float = 1e-5
    unit: str | None = None
    relation: str | None = None
    sensitivity: float | None = None
    threat_model: str | None = None
    canary: str | None = None
    d0: Any = None
    d1: Any = None
    method: str = "threshold"
    trials: int = 200_000
    search: bool = False
    derived: bool = False
    save_pair: bool = False
    replay: int | None = None
    fixed_trials: bool = False
    claim: PrivacyClaim = field(init=False)
    """The claim audited (its relation ``replace`` where ``relation`` is an array relation)."""
    array_relation: Relation | None = field(init=False)
    """``query`` or ``unchecked`` when given, else None."""

    def __post_init__(self) -> None:
        given = self.relation or ("replace" if self.user_code else default_relation(self.mechanism))
        array_relation = given if given in _ARRAY_RELATIONS else None
        unit = self.unit or ("user" if self.user_code else default_unit(self.mechanism))
        claim = PrivacyClaim(self.epsilon, self.delta, unit, "replace" if array_relation else given)
        if claim.epsilon > MAX_AUDIT_EPSILON:
            raise InputError(
                f"--epsilon {self.epsilon:g} is too large to audit (e^epsilon overflows a float "
                f"beyond {MAX_AUDIT_EPSILON:g}); pass a claimed epsilon <= {MAX_AUDIT_EPSILON:g}"
            )
        object.__setattr__(self, "claim", claim)
        object.__setattr__(self, "array_relation", array_relation)
        self._check_dpsgd_options()
        self._check_pair_given()

    @property
    def user_code(self) -> bool:
        """Whether the mechanism is the user's ``module:function``, not a built-in."""
        return ":" in self.mechanism

    @property
    def replay_only(self) -> bool:
        """A coupled replay of the given pair, no audit: ``replay`` without ``search``."""
        return self.replay is not None and not self.search

    @property
    def neighbours(self) -> Neighbours | None:
        """How an array pair is checked to be neighbours; None for the claim's relation."""
        if self.array_relation is None:
            return None
        return Neighbours(relation=self.array_relation, sensitivity=self.sensitivity)

    @property
    def screen_trials(self) -> int:
        """Trials per dataset of each pair a search screens: a tenth of ``trials``, between
        the audit's minimum and the search's default."""
        return max(MIN_TRIALS, min(SCREEN_TRIALS, self.trials // 10))

    def sequential(self, *, per_call: bool) -> bool:
        """Whether the audit looks sequentially (the given pair's, or the search's screens and
        certification: ``search(..., sequential=True)``): a per-call function's, unless
        ``fixed_trials``."""
        return per_call and not self.fixed_trials

    def check_target(self, target: AuditTarget | None) -> None:
        """The rules checked once the mechanism is loaded (``target``: the built-in's, None
        for user code): a statistic fixed for a canary takes neither ``search`` nor
        ``save_pair``; ``derived`` needs ``search``."""
        if target is not None and target.statistic is not None and (self.search or self.save_pair):
            raise InputError(
                f"{self.mechanism} audits a fixed canary with a statistic fixed for it; "
                "--search and --save-pair vary or save plain datasets: drop them"
            )
        if self.derived and not self.search:
            raise InputError(
                "--derived chooses the pairs --search screens: add --search or drop it"
            )

    def check_pair(self, d0: Any, d1: Any) -> None:
        """Refuse a user's ``d0`` and ``d1`` holding the same data, unless a search varies
        them: there is no difference to audit."""
        if self.user_code and not self.search and same_data(d0, d1):
            raise InputError(
                "--d0 and --d1 hold the same data, so there is nothing to audit; pass as --d1 a "
                "neighbouring dataset that differs from --d0 (e.g. in one user), or add --search "
                "to vary --d0"
            )

    def pairs(self, d0: Any, d1: Any):
        """The pairs a search screens around ``d0`` (:func:`~dpclaims.targets.pairs.pairs_for`)."""
        return pairs_for(
            d0,
            d1,
            unit=self.claim.unit,
            relation=self.claim.relation,
            resize=True if self.derived else None,
            data_name="--d0" if self.user_code else "the built-in's data",
        )

    def test(self, target: AuditTarget | None) -> AuditTest:
        """The audit's test: ``method`` on a learned score; for a built-in whose statistic is
        fixed (DP-SGD), its threshold test planned from the claim
        (:func:`~dpclaims.targets.dpsgd.planned_test`) or ``method`` on that statistic."""
        if target is None or target.statistic is None:
            return AuditTest(method=self.method)
        if self.method == "threshold":
            return planned_test(target, trials=check_trials(self.trials, "--trials"))
        return AuditTest(method=self.method, statistic=target.statistic)

    def _check_dpsgd_options(self) -> None:
        if self.threat_model is not None:
            check_choice(self.threat_model, THREAT_MODELS, "--threat-model")
        if self.canary is not None:
            check_choice(self.canary, CANARIES, "--canary")
        if self.user_code and (self.threat_model or self.canary):
            raise InputError(
                "--threat-model and --canary choose how DP-SGD is audited; for your own "
                "mechanism release what your adversary sees and drop them"
            )

    def _check_pair_given(self) -> None:
        if self.user_code and (self.d0 is None or self.d1 is None):
            raise InputError(
                "a user mechanism needs --d0 and --d1: neighbouring datasets saved as .npz "
                "with arrays x (and y)"
            )
        if not self.user_code and (self.d0 is not None or self.d1 is not None):
            raise InputError(
                "--d0/--d1 are for a user mechanism ('module:function' or "
                "'path/to/file.py:function'); built-ins bring their own datasets"
            )
