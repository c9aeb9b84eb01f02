"""The registry holds every claim of the five paper specs, transcribed faithfully.

The specs' ``claims:`` blocks (``specs/*.yaml``: each spec's block verbatim, copied from the
specs beside the repository, ``../shared/papers``, so the test needs nothing outside it; copy a
spec's block again when the spec changes) are re-read here with a small line parser (no YAML
dependency): ids, kinds, text fields and exponents are compared claim by claim.
"""

import re
from fractions import Fraction
from pathlib import Path

import pytest

from dpclaims import claims

SPECS = Path(__file__).parent / "specs"
SPEC_PAPER = {
    "000": "lowy-liu-asi-2024",
    "001": "ghazi-et-al-2023",
    "002": "choquette-choo-et-al-2024",
    "003": "pure-dp-heavy-tails",
    "004": "murata-suzuki-2023",
}

ID_LINE = re.compile(r'^\s*- id:\s*"?([^"\s]+)"?\s*$')
FIELD_LINE = re.compile(r"^\s+(\w+):\s*(.*)$")


def _unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"')
    return value


def _exponents(text):
    """Parse a YAML flow mapping like ``{n: "-1/2", ln(1/delta): "1/2"}`` (no commas in values)."""
    body = text.strip()[1:-1].strip()
    if not body:
        return {}
    out = {}
    for item in body.split(", "):
        key, _, value = item.partition(": ")
        out[_unquote(key)] = _unquote(value)
    return out


def _spec_claims(path):
    """[{field: raw value}] of the ```yaml claims block of one spec, in order."""
    block = path.read_text(encoding="utf-8")
    entries = []
    for line in block.splitlines():
        match = ID_LINE.match(line)
        if match:
            entries.append({"id": match.group(1)})
            continue
        match = FIELD_LINE.match(line)
        if match and entries:
            entries[-1][match.group(1)] = match.group(2)
    return entries


def _spec_files():
    return {path.name[:3]: path for path in sorted(SPECS.glob("00[0-4]_*.yaml"))}


def test_all_five_specs_present():
    assert sorted(_spec_files()) == sorted(SPEC_PAPER)
    assert sorted(claims.papers(registry=claims.Registry.discover(installed=False))) == sorted(
        SPEC_PAPER.values()
    )


@pytest.mark.parametrize("prefix", sorted(SPEC_PAPER))
def test_registry_holds_every_claim_of_the_spec(prefix):
    spec = _spec_files()[prefix]
    spec_ids = [entry["id"] for entry in _spec_claims(spec)]
    # the line regex finds exactly as many ids as the block has list entries
    assert len(spec_ids) == len(re.findall(r"^\s*- id:", spec.read_text(encoding="utf-8"), re.M))
    # a claim the registry adds beyond the spec says why (extra field ``not_in_spec``)
    registry_ids = [
        c.id for c in claims.load(paper=SPEC_PAPER[prefix]) if "not_in_spec" not in c.extra
    ]
    assert registry_ids == spec_ids, (
        f"{spec.name}: missing {set(spec_ids) - set(registry_ids)}, "
        f"extra {set(registry_ids) - set(spec_ids)}"
    )


@pytest.mark.parametrize("prefix", sorted(SPEC_PAPER))
def test_fields_and_exponents_match_the_spec(prefix):
    spec = _spec_files()[prefix]
    for entry in _spec_claims(spec):
        claim = claims.get(entry["id"])
        assert claim.paper == SPEC_PAPER[prefix]
        # fields the registry rewrites name themselves in ``amends_spec`` (why: ``amends_why``)
        amended = {f.strip() for f in claim.extra.get("amends_spec", "").split(",") if f.strip()}
        assert not amended or claim.extra.get("amends_why"), claim.id
        for field in {"kind", "algorithm", "statement", "formula", "regime", "source"} - amended:
            assert getattr(claim, field) == _unquote(entry[field]), (claim.id, field)
        for field in set(entry) - {
            "id",
            "kind",
            "algorithm",
            "statement",
            "formula",
            "regime",
            "source",
            "exponents",
        }:
            assert claim.extra[field] == _unquote(entry[field]), (claim.id, field)
        written = _exponents(entry["exponents"])
        assert set(written) == set(claim.exponents) | set(claim.symbolic_exponents), claim.id
        for var, value in written.items():
            try:
                exact = Fraction(value)
            except ValueError:
                assert claim.symbolic_exponents[var] == value, (claim.id, var)
            else:
                assert claim.exponents[var] == float(exact), (claim.id, var)
