"""Registry consistency: each rate experiment tests the exponent, bound and margin of its claim.

Each registered experiment is built (not run) at every budget; every rate sweep in it must have
been built from its claim (:meth:`RateExperiment.for_claim`) and carry exactly what
:meth:`Claim.rate` gives.  An exponent other than the paper's is allowed only through the claim's
``tested_exponents`` with ``tested`` and ``why``, which the report prints.
"""

import math

import pytest

from dpclaims import claims
from dpclaims.claims import BUDGETS, Skipped
from dpclaims.claims.model import RateClaim
from dpclaims.claims.standard import CombinedExperiment, RateExperiment


def _rate_parts(experiment, name="-"):
    if isinstance(experiment, RateExperiment):
        yield name, experiment
    elif isinstance(experiment, CombinedExperiment):
        for key, part in experiment.parts.items():
            yield from _rate_parts(part, key)


def _built():
    for claim in claims.load():
        if not claims.status(claim).startswith("checkable"):
            continue
        for budget in BUDGETS:
            try:
                experiment = claims.experiment(claim, budget)
            except Skipped:
                continue
            for name, part in _rate_parts(experiment):
                yield claim, budget, name, part


BUILT = list(_built())


def _paper_exponent(claim, variable, at):
    if variable in claim.exponents:
        return claim.exponents[variable]
    try:
        return claim.exponents_at(**at).get(variable)
    except Exception:
        return None


def test_the_registry_has_rate_experiments():
    assert len({(c.id, n) for c, _, n, _ in BUILT}) >= 60


def _problem(claim, part):
    """Why ``part`` does not test what ``claim`` states, or None."""
    stated = part.stated
    if stated is None:
        return "built with literal numbers; use RateExperiment.for_claim"
    if stated.claim_id != claim.id or claim.rate(stated.variable, **stated.at) != stated:
        return f"carries another claim's rate ({stated.claim_id}, {stated.variable})"
    if (part.expected, part.margin, part.bound, part.limit) != (
        stated.exponent,
        stated.margin,
        stated.bound,
        stated.limit,
    ):
        return f"tests {part.expected} ± {part.margin} ({part.bound}) but the claim gives {stated}"
    paper = _paper_exponent(claim, stated.variable, stated.at)
    if (paper is None or not math.isclose(paper, part.expected, abs_tol=1e-12)) and not (
        stated.tested and stated.why
    ):
        return (
            f"tests exponent {part.expected} of {stated.variable}, the claim states {paper}; "
            "say what is tested "
            "and why (tested_exponents, tested, why) in the TOML entry"
        )
    return None


@pytest.mark.parametrize(
    "claim, budget, name, part", BUILT, ids=[f"{c.id}[{n}]@{b}" for c, b, n, _ in BUILT]
)
def test_rate_experiment_tests_what_its_claim_states(claim, budget, name, part):
    assert _problem(claim, part) is None, (
        f"{claim.id} [{name}] at {budget}: {_problem(claim, part)}"
    )


def test_the_check_catches_moved_bands_and_untold_exponents():
    claim = claims.get("cgt24.v1.rate.privacy")
    good = RateExperiment.for_claim(claim, abs, "n", [1, 10, 100, 1000])
    assert _problem(claim, good) is None
    assert "literal numbers" in _problem(
        claim, RateExperiment(abs, "n", [1, 10, 100, 1000], -1.5, margin=0.65)
    )
    moved = RateExperiment(
        abs, "n", [1, 10, 100, 1000], -1.5, margin=0.65, bound="upper", stated=good.stated
    )
    assert "tests -1.5 ± 0.65" in _problem(claim, moved)
    untold = RateExperiment.for_claim(
        claims.get("lla24.lb.lsa21.priv"), abs, "n", [1, 10, 100, 1000]
    )
    assert untold.expected == 0.0 and _problem(claims.get("lla24.lb.lsa21.priv"), untold) is None
    bare = RateClaim(
        claim_id="lla24.lb.lsa21.priv",
        variable="n",
        exponent=0.0,
        bound="lower",
        margin=0.15,
        stated="Ω(n^-1)",
    )  # the tested exponent without saying what is tested and why
    bare_part = RateExperiment(
        abs, "n", [1, 10, 100, 1000], 0.0, margin=0.15, bound="lower", stated=bare
    )
    assert _problem(claims.get("lla24.lb.lsa21.priv"), bare_part) is not None


def test_tested_fields_are_used_by_an_experiment():
    used = {(c.id, p.stated.variable) for c, _, _, p in BUILT if p.stated.tested}
    declared = {(c.id, v) for c in claims.load() for v in c.tested_exponents}
    assert declared == used


@pytest.mark.parametrize(
    "claim_id",
    [
        "cgt24.indep.rate",
        "cgt24.v1.rate.privacy",
        "cgt24.utility.generic",
        "cgt24.v2.rate.statistical",
        "cgt24.v1.sensitivity",
    ],
)
def test_formerly_moved_bands_test_the_stated_upper_bound(claim_id):
    claim = claims.get(claim_id)
    for c, _, _, part in BUILT:
        if c.id == claim_id:
            assert (
                part.bound == "upper" and part.expected == claim.rate(part.stated.variable).exponent
            )
            assert part.expected == claim.exponents[part.stated.variable]
