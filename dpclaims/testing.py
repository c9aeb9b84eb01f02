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
and run under ``--strict-markers``.  It does not import pytest itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .rates.fit import fit_power_law
from .rates.sweep import sweep
from .rates.verdict import ExponentVerdict, check_exponent

__all__ = ["MARKERS", "WEAK_ACTIONS", "assert_exponent", "assert_private", "pytest_configure"]

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
    **sweep_options: Any,
) -> ExponentVerdict:
    """Sweep ``experiment`` over ``values`` of ``param`` and fail unless the exponent is
    ``consistent``.

    Runs :func:`~dpclaims.rates.sweep.sweep` (``seed`` and ``sweep_options``: ``replicates``,
    ``fixed``, where it runs), :func:`~dpclaims.rates.fit.fit_power_law` (``method``) and
    :func:`~dpclaims.rates.verdict.check_exponent` (90 % interval inside ``expected ± margin``;
    with ``bound="upper"`` for an O(·) claim only below ``expected + margin``, so decaying
    faster than claimed passes).  Returns the verdict when it is consistent; otherwise raises
    ``AssertionError`` whose message gives the fitted exponent and its interval.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    result = sweep(experiment, param=param, values=values, seed=seed, **sweep_options)
    fit = fit_power_law(result.values, result.errors, method=method, seed=seed)
    verdict = check_exponent(fit, expected, margin, bound=bound, limit=limit)
    if not verdict.passed:
        raise AssertionError(f"rate claim for {param}: {verdict.message}")
    return verdict


WEAK_ACTIONS = ("fail", "skip")
"""What :func:`assert_private` does with an audit that could not have caught a violation of
its reach limit (``on_weak=``): fail the check (the default) or skip it with the reason."""


def assert_private(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float,
    trials: int,
    on_weak: str = "fail",
    **options: Any,
):
    """Audit ``mechanism`` on the neighbours ``d0``, ``d1``; pass only when the audit could
    have caught a violation and did not.

    Runs :func:`dpclaims.audit.audit` in strict mode (a mechanism that ignores its ``rng``
    is an error: a CI gate must give the same answer on every run); ``options`` go to
    ``audit``: ``confidence`` (0.95), ``seed`` (0), ``unit`` and ``relation`` (default
    user/replace; ``"query"`` with ``sensitivity`` or ``"unchecked"`` for array datasets)
    state the claim's neighbour relation, ``reach_limit`` (2) and e.g. ``method``,
    ``execution``.

    Raises ``AssertionError`` when the verdict is ``"violation"`` (ε certified, at
    ``confidence``, to exceed the claim), and, unless ``on_weak="skip"``, when the audit had
    no power: ``"inconclusive"`` (the same data twice, a pair the mechanism does not separate,
    a claim above what the trials can certify) or ``"consistent_weak"`` (it would have caught
    only a violation beyond ``reach_limit`` times the pair's leakage); a gate that cannot fail
    must not pass.  With ``on_weak="skip"`` such a check is skipped with the reason
    (``pytest.skip``).  Returns the audit result otherwise; its ``verdict_line`` says when the
    test's estimate is above the claim.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    from .audit import audit
    from .errors import InputError, check_choice

    check_choice(on_weak, WEAK_ACTIONS, "on_weak")
    if "strict" in options:
        raise InputError(
            "assert_private always runs in strict mode; call dpclaims.audit.audit(..., "
            "strict=False) instead"
        )
    result = audit(
        mechanism, d0, d1, epsilon=epsilon, delta=delta, trials=trials, strict=True, **options
    )
    where = (
        f"(claimed epsilon={epsilon:g}, delta={delta:g}, {result.unit}-level "
        f"{result.relation}, {trials} trials, seed={result.provenance.seed})"
    )
    if result.verdict == "violation":
        raise AssertionError(
            f"privacy claim violated: epsilon >= {result.epsilon_lower:.4g} certified at "
            f"confidence {result.confidence:g} {where}"
        )
    if result.verdict in ("inconclusive", "consistent_weak"):
        message = f"privacy audit too weak to gate on: {result.verdict_line} {where}"
        if on_weak == "skip":
            import pytest

            pytest.skip(message)
        raise AssertionError(message + '; pass on_weak="skip" to skip such a check instead')
    return result


def pytest_configure(config: Any) -> None:
    """pytest hook: register the ``dpclaims_rate`` and ``dpclaims_privacy`` markers."""
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
