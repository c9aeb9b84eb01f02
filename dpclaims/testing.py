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

__all__ = ["MARKERS", "assert_exponent", "assert_private", "pytest_configure"]

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


def assert_private(
    mechanism: Callable,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float,
    trials: int,
    **options: Any,
):
    """Audit ``mechanism`` on the neighbours ``d0``, ``d1`` and fail on a privacy violation.

    Runs :func:`dpclaims.audit.audit` in strict mode (a mechanism that ignores its ``rng``
    is an error: a CI gate must give the same answer on every run); ``options`` go to
    ``audit``: ``confidence`` (0.95), ``seed`` (0), ``unit`` and ``relation`` (default
    user/replace; ``"query"`` with ``sensitivity`` or ``"unchecked"`` for array datasets)
    state the claim's neighbour relation, and e.g. ``method``, ``execution``.  Raises
    ``AssertionError`` (with the certified ε lower bound and the claimed ε in the message)
    when the verdict is ``"violation"``, i.e. when ε is certified, at ``confidence``, to
    exceed the claim.  Returns the audit result otherwise.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    from .audit import audit
    from .errors import InputError

    if "strict" in options:
        raise InputError(
            "assert_private always runs in strict mode; call dpclaims.audit.audit(..., "
            "strict=False) instead"
        )
    result = audit(
        mechanism, d0, d1, epsilon=epsilon, delta=delta, trials=trials, strict=True, **options
    )
    if result.verdict == "violation":
        raise AssertionError(
            f"privacy claim violated: epsilon >= {result.epsilon_lower:.4g} certified at "
            f"confidence {result.confidence:g} (claimed epsilon={epsilon:g}, delta={delta:g}, "
            f"{result.unit}-level {result.relation}, {trials} trials, "
            f"seed={result.provenance.seed})"
        )
    return result


def pytest_configure(config: Any) -> None:
    """pytest hook: register the ``dpclaims_rate`` and ``dpclaims_privacy`` markers."""
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
