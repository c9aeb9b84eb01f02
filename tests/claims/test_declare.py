"""Declarations: a paper's table registers its experiments, parameters taken per budget."""

import pytest

from dpclaims import claims
from dpclaims.claims import BySize, declare
from dpclaims.claims.experiments import _FACTORIES, _SKIPS, _declared
from dpclaims.claims.standard import AuditExperiment, RateExperiment
from dpclaims.errors import InputError

CLAIM_ID = "lla24.alg1.privacy"
RATE_ID = "lla24.alg1.complexity"


@pytest.fixture(autouse=True)
def isolated_factories():
    claims.registered_experiments()
    saved, skips = dict(_FACTORIES), dict(_SKIPS)
    _FACTORIES.pop(CLAIM_ID, None)
    _FACTORIES.pop(RATE_ID, None)
    yield
    _FACTORIES.clear()
    _FACTORIES.update(saved)
    _SKIPS.clear()
    _SKIPS.update(skips)


def _count(value, rng, *, scale=1.0):
    return scale * value


def test_at_budget_resolves_bysize_also_inside_mappings():
    fixed = {"pairs": BySize(quick=1, standard=2, full=3), "d": 4, "inner": {"k": BySize(5, 6)}}
    assert declare.at_budget(fixed, "quick") == {"pairs": 1, "d": 4, "inner": {"k": 5}}
    assert declare.at_budget(fixed, "full") == {"pairs": 3, "d": 4, "inner": {"k": 6}}
    assert declare.at_budget([1, 2], "quick") == [1, 2]


def test_a_declared_sweep_builds_the_claims_rate_experiment_at_each_budget():
    grid = BySize(quick=[1, 2, 4], standard=[1, 2, 4, 8])
    declare.register(
        [
            declare.sweep(
                RATE_ID,
                _count,
                "n",
                grid,
                replicates=BySize(quick=2, standard=5),
                fixed={"scale": BySize(quick=1.0, standard=2.0)},
                note="toy",
            )
        ]
    )
    claim = claims.get(RATE_ID)
    expected = (("quick", [1, 2, 4], 2, 1.0), ("full", [1, 2, 4, 8], 5, 2.0))
    for budget, values, replicates, scale in expected:
        built = claims.experiment(claim, budget)
        assert isinstance(built, RateExperiment)
        assert list(built.values) == values and built.replicates == replicates
        assert built.fixed == {"scale": scale} and built.note == "toy"
        assert built.expected == claim.rate("n").exponent


def test_a_declared_audit_and_its_skip():
    declare.register(
        [
            declare.audit(
                CLAIM_ID,
                build=object,
                trials=BySize(quick=10, standard=20),
                skip={"quick": "too small"},
            )
        ]
    )
    claim = claims.get(CLAIM_ID)
    assert claims.status(claim, "quick") == "skipped at quick: too small"
    built = claims.experiment(claim, "standard")
    assert isinstance(built, AuditExperiment) and built.trials == 20 and built.build is object


def test_a_table_declaring_a_claim_twice_is_refused():
    twice = [declare.built(CLAIM_ID, lambda claim: None)] * 2
    with pytest.raises(InputError, match="more than once"):
        declare.register(twice)


def test_registering_the_same_table_again_is_harmless_but_another_factory_is_refused():
    table = [declare.audit(CLAIM_ID, build=object, trials=10)]
    declare.register(table)
    declare.register([declare.audit(CLAIM_ID, build=object, trials=10)])  # imported again
    with pytest.raises(InputError, match="already has the experiment declared in a table"):
        claims.register_experiment(CLAIM_ID)(lambda claim, budget: None)


def test_the_source_reader_sees_declarations(tmp_path):
    source = tmp_path / "table.py"
    source.write_text(
        "from dpclaims.claims import declare\n"
        'WHY = "needs more runs"\n'
        "TABLE = (\n"
        '    declare.sweep("a.rate", f, "n", [1, 2], skip={"quick": WHY}),\n'
        '    declare.audit("a.audit", build=g, trials=10),\n'
        '    declare.built("a.built", h, skip={"standard": "later"}),\n'
        ")\n"
        'audit("not.a.declaration")\n'
    )
    found = _declared(source, source.stat().st_mtime_ns, "table")
    assert found == {
        "a.rate": {"quick": "needs more runs"},
        "a.audit": {},
        "a.built": {"standard": "later"},
    }
