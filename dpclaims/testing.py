"""CI gating helpers and the dpclaims pytest plugin.

``assert_exponent`` and ``assert_private`` raise :class:`AssertionError` (with the
fitted interval / the ε lower bound in the message) so a claim check reads like
any other test::

    import pytest
    from dpclaims.testing import assert_exponent

    @pytest.mark.dpclaims_rate
    def test_excess_risk_rate():
        assert_exponent(my_experiment, "n", [100, 300, 1000, 3000, 10000],
                        expected=-0.5, margin=0.1, replicates=10, seed=0)

This module is also a pytest plugin (entry point ``pytest11``, or ``-p
dpclaims.testing``): it registers the markers ``dpclaims_rate`` and
``dpclaims_privacy`` so such tests can be selected with ``-m dpclaims_rate``
and run under ``--strict-markers``, the ini options ``dpclaims_seed``, ``dpclaims_trials``,
``dpclaims_confidence``, ``dpclaims_on_weak`` and ``dpclaims_reproducible``, and two fixtures:

* ``dpclaims_rng``: a ``numpy.random.Generator`` seeded with ``dpclaims_seed`` (0);
* ``dpclaims_audit``: ``dpclaims_audit(mechanism, d0, d1, epsilon=..., delta=...)`` runs
  :func:`assert_private` with the project's trials, confidence and ``on_weak`` (ini options),
  which the test's marker overrides: ``@pytest.mark.dpclaims_privacy(trials=20_000)``.

A library that cannot be seeded (it draws from the OS's entropy) is gated with
``@pytest.mark.dpclaims_privacy(reproducible=False)`` (or ``dpclaims_reproducible = false`` in
the ini file): the audit is as valid, only not reproducible, and its messages say so.

A must-fail check::

    @pytest.mark.dpclaims_privacy(trials=100_000)
    def test_noise_halved_is_caught(dpclaims_audit):
        with pytest.raises(AssertionError, match="privacy claim violated"):
            dpclaims_audit(half_noise_mechanism, d0, d1, epsilon=1.0, delta=1e-5)

The helpers import pytest only when a check is skipped; the fixtures exist when pytest loads
this module as a plugin.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .errors import NotReproducibleWarning
from .execution import DEFAULT_EXECUTION, Execution
from .rates.fit import fit_power_law
from .rates.sweep import sweep
from .rates.verdict import ExponentVerdict, check_exponent
from .vocabulary import Verdict

if TYPE_CHECKING:
    from .audit.options import AuditTest, Neighbours
    from .privacy import PrivacyClaim

__all__ = [
    "INI_OPTIONS",
    "MARKERS",
    "WEAK_ACTIONS",
    "assert_exponent",
    "assert_private",
    "pytest_addoption",
    "pytest_configure",
]

MARKERS = {
    "dpclaims_rate": (
        "dpclaims rate-claim check (sweep + exponent fit); select with -m dpclaims_rate"
    ),
    "dpclaims_privacy": (
        "dpclaims privacy-claim check (statistical audit); select with -m dpclaims_privacy"
    ),
}


def assert_exponent(
    experiment: Callable,
    param: str,
    values: Sequence[float],
    *,
    expected: float,
    margin: float,
    seed: int = 0,
    method: str = "logs",
    bound: str = "order",
    limit: str = "large",
    replicates: int = 10,
    fixed: Mapping[str, Any] | None = None,
    execution: Execution = DEFAULT_EXECUTION,
) -> ExponentVerdict:
    """Sweep ``experiment`` over ``values`` of ``param`` and fail unless the exponent is
    ``consistent``.

    Runs :func:`~dpclaims.rates.sweep.sweep` (``seed``, ``replicates``, ``fixed``, and
    ``execution``: where it runs), :func:`~dpclaims.rates.fit.fit_power_law` (``method``) and
    :func:`~dpclaims.rates.verdict.check_exponent` (90 % interval inside ``expected ± margin``;
    with ``bound="upper"`` for an O(·) claim only below ``expected + margin``, so decaying
    faster than claimed passes).  Returns the verdict when it is consistent; otherwise raises
    ``AssertionError`` whose message gives the fitted exponent and its interval.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    result = sweep(
        experiment, param=param, values=values, replicates=replicates, seed=seed, fixed=fixed,
        execution=execution,
    )  # fmt: skip
    fit = fit_power_law(result.values, result.errors, method=method, seed=seed)
    verdict = check_exponent(fit, expected, margin, bound=bound, limit=limit)
    if not verdict.passed:
        raise AssertionError(f"rate claim for {param}: {verdict.message}")
    return verdict


WEAK_ACTIONS = ("fail", "skip")
"""What :func:`assert_private` does with an audit that certified no violation but does not pass
(``on_weak=``: no power, a reach beyond the limit, or an estimate above the claim): fail the
check (the default) or skip it with the reason."""


def assert_private(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    claim: PrivacyClaim | None = None,
    *,
    trials: int,
    epsilon: float | None = None,
    delta: float | None = None,
    unit: str | None = None,
    relation: str | None = None,
    on_weak: str = "fail",
    reproducible: bool = True,
    confidence: float = 0.95,
    seed: int = 0,
    test: AuditTest | None = None,
    neighbours: Neighbours | None = None,
    execution: Execution | None = None,
):
    """Audit ``mechanism`` on the neighbours ``d0``, ``d1``; pass only when the audit could
    have caught a violation and did not.

    Runs :func:`dpclaims.audit.audit` in strict mode (a mechanism that ignores its ``rng``
    is an error: a CI gate must give the same answer on every run).  With
    ``reproducible=False`` it gates a mechanism that cannot be seeded (a library drawing from
    the OS's entropy, like OpenDP): the trials run in this process (a generator outside
    ``rng`` would be copied into each worker process and repeat its draws there), they are
    independent draws all the same, so the verdict means what it means in strict mode, but a
    rerun draws other trials: the result's ``reproducible`` is False, and its summary and this
    function's messages say so.  ``claim`` is the
    :class:`~dpclaims.privacy.PrivacyClaim` under test, or the loose ``epsilon``, ``delta``
    (default 0), ``unit`` and ``relation`` (default user/replace) build it.  The other options
    go to ``audit``: ``confidence`` (0.95), ``seed`` (0), ``test`` (e.g.
    ``AuditTest(reach_limit=2.0)``), ``neighbours`` (array datasets that are query answers or
    unchecked), ``execution``.

    Raises ``AssertionError`` when the verdict is ``"violation"`` (ε certified, at
    ``confidence``, to exceed the claim), and, unless ``on_weak="skip"``, when the audit had
    no power: ``"inconclusive"`` (the same data twice, a pair the mechanism does not separate,
    a claim above what the trials can certify) or ``"consistent_weak"`` (it would have caught
    only a mechanism leaking more than ``reach_limit`` times the claimed ε); a gate that cannot
    fail must not pass.  A ``"consistent"`` whose test's point estimate is above the claim
    (``result.estimate_above_claim``) does not pass either: its message gives the trials per
    dataset that would certify the violation if the estimate holds.  With ``on_weak="skip"``
    such a check is skipped with the reason (``pytest.skip``).  Returns the audit result
    otherwise.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    from .audit import audit
    from .errors import check_choice

    check_choice(on_weak, WEAK_ACTIONS, "on_weak")
    from .audit.options import DEFAULT_TEST
    from .privacy import claim_at_door

    claim = claim_at_door(claim, epsilon=epsilon, delta=delta, unit=unit, relation=relation)
    execution = _gate_execution(execution or DEFAULT_EXECUTION, reproducible)
    with warnings.catch_warnings():
        if not reproducible:  # the result says so; the warning would only repeat it
            warnings.simplefilter("ignore", NotReproducibleWarning)
        result = audit(
            mechanism, d0, d1, claim, trials=trials, confidence=confidence, seed=seed,
            test=test or DEFAULT_TEST, neighbours=neighbours, execution=execution,
        )  # fmt: skip
    where = (
        f"(claimed epsilon={claim.epsilon:g}, delta={claim.delta:g}, {result.unit}-level "
        f"{result.relation}, {trials} trials, seed={result.provenance.seed}"
        + ("" if result.reproducible else "; not reproducible: the mechanism ignores its seed")
        + ")"
    )
    if result.verdict == Verdict.VIOLATION:
        raise AssertionError(
            f"privacy claim violated: epsilon >= {result.epsilon_lower:.4g} certified at "
            f"confidence {result.confidence:g} {where}"
        )
    message = _no_pass(result)
    if message:
        message = f"{message}: {result.verdict_line} {where}"
        if on_weak == "skip":
            import pytest

            pytest.skip(message)
        raise AssertionError(message + '; pass on_weak="skip" to skip such a check instead')
    return result


def _gate_execution(execution: Any, reproducible: bool) -> Any:
    """``execution`` strict, or with ``reproducible=False`` lenient and in this process (a
    generator outside ``rng``, copied into forked workers, would repeat its draws there)."""
    from .errors import InputError
    from .execution import check_execution

    if not isinstance(reproducible, bool):
        raise InputError(f"reproducible must be True or False, got {reproducible!r}")
    execution = check_execution(execution)
    if reproducible:
        return replace(execution, strict=True)
    if execution.backend.name not in ("auto", "serial"):
        raise InputError(
            f"reproducible=False runs the trials in this process, so draws from outside rng "
            f"cannot repeat in worker processes; drop backend={execution.backend.name!r}"
        )
    return replace(execution, strict=False, backend="serial")


EXCESS_LEVEL = 0.8
"""A ``consistent`` whose test's point estimate is above the claim fails the gate when that
excess is significant at this one-sided level.  A mechanism exactly tight to its claim (Laplace
at its ε) has an estimate above the claim about half the time, by an excess its audit cannot
resolve: failing every such estimate would fail correct code at random, so only an excess the
audit resolves at this level fails (:func:`_excess_resolved`)."""


def _excess_resolved(result: Any) -> bool:
    """Whether the test's estimate is above the claim by a significant excess.

    ``trials_needed`` (n') is where the test certifies the estimate at ``confidence`` c with
    power 0.9: in the normal approximation its standardised excess at the audit's n trials is
    z = (z_c + z_0.9) / sqrt(n' / n); the excess is resolved when z >= z at
    :data:`EXCESS_LEVEL` (None, nothing to go by: resolved, the cautious reading)."""
    from scipy.stats import norm

    if not result.estimate_above_claim:
        return False
    if result.trials_needed is None:
        return True
    z = (norm.ppf(result.confidence) + norm.ppf(0.9)) / math.sqrt(
        result.trials_needed / result.trials
    )
    return bool(z >= norm.ppf(EXCESS_LEVEL))


def _no_pass(result: Any) -> str:
    """Why an audit that certified no violation still does not pass the gate ("" when it
    passes): no power (``inconclusive``), a reach beyond the limit (``consistent_weak``), or a
    test whose point estimate is above the claim by a resolved excess (its bound is not: more
    trials decide)."""
    if result.verdict in (Verdict.INCONCLUSIVE, Verdict.CONSISTENT_WEAK):
        return "privacy audit too weak to gate on"
    if _excess_resolved(result):
        return "privacy audit undecided: the test's estimate is above the claim"
    return ""


INI_OPTIONS = {
    "dpclaims_seed": ("seed of the dpclaims_rng fixture and of dpclaims_audit's audits", "0"),
    "dpclaims_trials": ("trials per dataset of dpclaims_audit's audits", "100000"),
    "dpclaims_confidence": ("confidence of dpclaims_audit's audits", "0.95"),
    "dpclaims_on_weak": (
        "fail or skip a privacy check that could not have caught a 2x violation of the claim",
        "fail",
    ),
    "dpclaims_reproducible": (
        "false to gate mechanisms that ignore their seed (results marked not reproducible)",
        "true",
    ),
}
"""The plugin's ini options: ``name: (help, default)``."""


def pytest_addoption(parser: Any) -> None:
    """pytest hook: the ini options of :data:`INI_OPTIONS`."""
    for name, (text, default) in INI_OPTIONS.items():
        parser.addini(name, text, default=default)


def pytest_configure(config: Any) -> None:
    """pytest hook: register the ``dpclaims_rate`` and ``dpclaims_privacy`` markers."""
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def _ini(config: Any, name: str, convert: Callable) -> Any:
    """The ini option ``name`` converted, or an InputError naming it."""
    from .errors import InputError

    text = config.getini(name)
    try:
        return convert(text)
    except ValueError:
        raise InputError(
            f"ini option {name} = {text!r} is not valid; the default is {INI_OPTIONS[name][1]}"
        ) from None


def _boolean(text: str) -> bool:
    """``true`` or ``false`` (any case), else ValueError."""
    value = {"true": True, "false": False}.get(str(text).strip().lower())
    if value is None:
        raise ValueError(text)
    return value


def _audit_settings(request: Any) -> dict:
    """trials, confidence, seed, on_weak and reproducible from the ini options, overridden by
    the test's ``dpclaims_privacy`` marker arguments."""
    from .errors import InputError

    config = request.config
    settings = {
        "trials": _ini(config, "dpclaims_trials", int),
        "confidence": _ini(config, "dpclaims_confidence", float),
        "seed": _ini(config, "dpclaims_seed", int),
        "on_weak": config.getini("dpclaims_on_weak"),
        "reproducible": _ini(config, "dpclaims_reproducible", _boolean),
    }
    marker = request.node.get_closest_marker("dpclaims_privacy")
    if marker is not None and marker.args:
        raise InputError(
            f"@pytest.mark.dpclaims_privacy takes keyword arguments only, got {marker.args!r}; "
            "write e.g. @pytest.mark.dpclaims_privacy(trials=2000)"
        )
    if marker is not None:
        settings.update(marker.kwargs)
    return settings


try:  # the fixtures exist where pytest loads this module as a plugin
    import pytest as _pytest
except ImportError:  # pragma: no cover - the helpers above work without pytest
    _pytest = None

if _pytest is not None:

    @_pytest.fixture
    def dpclaims_rng(request: Any):
        """A numpy Generator seeded with the ``dpclaims_seed`` ini option (default 0)."""
        import numpy as np

        return np.random.default_rng(_ini(request.config, "dpclaims_seed", int))

    @_pytest.fixture
    def dpclaims_audit(request: Any) -> Callable:
        """``check(mechanism, d0, d1, *, epsilon, delta, **options)``: :func:`assert_private`
        with the project's settings (ini options, then the test's marker arguments, then
        ``options``)."""
        settings = _audit_settings(request)

        def check(mechanism: Callable, d0: Any, d1: Any, **options: Any):
            __tracebackhide__ = True
            return assert_private(mechanism, d0, d1, **{**settings, **options})

        return check
