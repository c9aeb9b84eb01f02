"""Loading, validating and querying the claims registry."""

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims import claims
from dpclaims.claims import KINDS, Claim, ClaimsFileError, Registry, UnknownClaimError
from dpclaims.errors import InputError

COUNTS = {
    "lowy-liu-asi-2024": 33,
    "ghazi-et-al-2023": 41,
    "choquette-choo-et-al-2024": 25,
    "pure-dp-heavy-tails": 24,
    "murata-suzuki-2023": 29,
}
CONTEXT_ONLY = {
    "cited.srn_sgd",
    "cited.dp_srm",
    "lowerbound.none_for_nonconvex",
    "lowy26.complexity.impossibility",
}
PACKAGED = Registry.discover(installed=False)  # installed plugins (e.g. the example) excluded
TEXT_FIELDS = ("id", "paper", "kind", "algorithm", "statement", "formula", "regime", "source")


def test_every_claim_loads_and_validates():
    loaded = claims.load(registry=PACKAGED)
    assert len(loaded) == sum(COUNTS.values())
    assert len({c.id for c in loaded}) == len(loaded)
    for claim in loaded:
        assert isinstance(claim, Claim)
        for field in TEXT_FIELDS:
            assert isinstance(getattr(claim, field), str) and getattr(claim, field).strip(), (
                claim.id,
                field,
            )
        assert claim.kind in KINDS
        assert claim.paper in COUNTS
        assert all(isinstance(v, float) and math.isfinite(v) for v in claim.exponents.values()), (
            claim.id
        )
        assert all(isinstance(v, str) for v in claim.symbolic_exponents.values()), claim.id
        assert not set(claim.exponents) & set(claim.symbolic_exponents)
        record = json.loads(json.dumps(claim.to_dict()))
        assert record["id"] == claim.id and record["exponents"] == dict(claim.exponents)


def test_counts_per_paper_and_filters():
    for paper, count in COUNTS.items():
        assert len(claims.load(paper=paper, registry=PACKAGED)) == count
    by_kind = {kind: claims.load(kind=kind, registry=PACKAGED) for kind in KINDS}
    assert sum(len(v) for v in by_kind.values()) == sum(COUNTS.values())
    assert all(c.kind == kind for kind, group in by_kind.items() for c in group)
    both = claims.load(paper="murata-suzuki-2023", kind="utility", registry=PACKAGED)
    assert both and all(c.paper == "murata-suzuki-2023" and c.kind == "utility" for c in both)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [({"paper": "lowy-2024"}, "paper must be one of"), ({"kind": "rate"}, "kind must be one of")],
)
def test_bad_filters_raise_input_error(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        claims.load(**kwargs)


def test_papers_lists_ids_with_titles():
    titles = claims.papers(registry=PACKAGED)
    assert list(titles) == list(COUNTS)  # spec order 000..004
    assert "DIFF2" in titles["murata-suzuki-2023"]
    assert "User-Level" in titles["lowy-liu-asi-2024"]


def test_algorithm_names_are_the_claims_algorithms():
    names = claims.algorithm_names(registry=PACKAGED)
    assert names == frozenset(c.algorithm for c in claims.load(registry=PACKAGED))
    assert {"DIFF2-GD", "DP-GD", "DelOutputPert", "Algorithm 1"} <= names


def test_get_returns_the_claim():
    claim = claims.get("diff2gd.prop41.calibration")
    assert claim.paper == "murata-suzuki-2023" and claim.kind == "privacy"
    assert claim.exponents == {"N": -2.0, "eps": -1.0, "R": 1.0, "T": -1.0}
    assert claims.get("lla24.alg3.complexity.stat").exponents["n"] == 9 / 8


@pytest.mark.parametrize(
    "typo, expected",
    [
        ("diff2gd.prop41.calibraton", "diff2gd.prop41.calibration"),
        ("lla24.alg1.privcy", "lla24.alg1.privacy"),
        ("cgt24.tree", "cgt24.tree.gdp"),
    ],
)
def test_unknown_id_lists_close_ids(typo, expected):
    with pytest.raises(UnknownClaimError, match="unknown claim id") as info:
        claims.get(typo)
    assert isinstance(info.value, InputError)
    assert repr(expected) in str(info.value)


def test_unknown_id_without_neighbours_and_non_string():
    with pytest.raises(UnknownClaimError, match="no id is close"):
        claims.get("zzzzzzzz")
    with pytest.raises(UnknownClaimError, match="must be a string"):
        claims.get(3)


def test_claims_are_frozen():
    claim = claims.get("lla24.alg1.risk")
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.kind = "privacy"
    with pytest.raises(TypeError):
        claim.exponents["n"] = 0.0
    assert claims.get("lla24.alg1.risk").exponents["n"] == -0.5
    assert hash(claim) == hash(claims.get("lla24.alg1.risk"))


def test_extra_spec_fields_are_kept():
    assert claims.get("lowy26.privacy.alg2").extra == {"confidence": "high"}


def test_context_only_claims_carry_their_reason():
    marked = {
        c.id: c.uncheckable_reason
        for c in claims.load(registry=PACKAGED)
        if c.uncheckable_reason is not None
    }
    assert CONTEXT_ONLY <= set(marked)
    assert all(reason.strip() for reason in marked.values())
    claim = claims.get("cited.dp_srm")
    assert claims.status(claim).startswith("not implemented: cited result")
    assert not claim.implemented
    proven_for_all = claims.get("lowy26.complexity.impossibility")  # over every algorithm
    assert proven_for_all.implemented and claims.status(proven_for_all).startswith(
        "not checkable: impossibility theorem"
    )
    # a cited minimax bound gets a sanity run of the paper's algorithm (as lowy26.lb.sco)
    assert claims.status(claims.get("cgt24.lb.dpsco")) == "checkable"


def test_symbolic_exponents():
    annotated = claims.get("ghazi23.table1.narayanan_smooth_erm")
    assert annotated.symbolic_exponents == {
        "n": "-0.5 (additive term dominates as m grows)",
        "m": "0 (floor)",
    }
    assert annotated.exponents_at() == {
        "d": 0.5
    }  # annotations are not numbers, so they are left out
    claim = claims.get("lowy26.sco.upper.private_term")
    with pytest.raises(InputError, match="k=..."):
        claim.exponents_at()
    with pytest.raises(InputError, match="divides by zero"):
        claim.exponents_at(k=0)
    with pytest.raises(InputError, match="finite number"):
        claim.exponents_at(k=float("nan"))
    assert claims.get("lowy26.complexity.em_pgm").exponents_at(d=3) == {"1/gamma": 3.0}


@settings(max_examples=30, deadline=None)
@given(st.floats(1.01, 50))
def test_heavy_tail_exponents_follow_k(k):
    upper = claims.get("lowy26.sco.upper.private_term").exponents_at(k=k)
    assert upper["n"] == pytest.approx(-(1 - 1 / k)) and upper["d"] == pytest.approx(1 - 1 / k)
    assert upper["G_k"] == 1.0
    mean = claims.get("lowy26.lb.mean_estimation").exponents_at(k=k)
    assert mean["n"] == pytest.approx(2 * upper["n"])


# ---------------------------------------------------------------- malformed files

VALID = """
[paper]
id = "toy-paper"
title = "A toy paper"
experiments = "toy_paper_experiments"

[[claims]]
id = "toy.claim.one"
paper = "toy-paper"
kind = "privacy"
algorithm = "Toy"
statement = "Toy is DP."
formula = "sigma = 1/eps"
regime = "all"
source = "Theorem 1"
exponents = {eps = -1.0}
bound = "order"
confidence = "high"
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_temp_directory_loads(tmp_path):
    _write(tmp_path, "toy.toml", VALID)
    only = Registry.from_folders(tmp_path)
    loaded = claims.load(registry=only)
    assert [c.id for c in loaded] == ["toy.claim.one"]
    assert loaded[0].extra == {"confidence": "high"} and loaded[0].exponents == {"eps": -1.0}
    assert claims.papers(registry=only) == {"toy-paper": "A toy paper"}
    assert claims.get("toy.claim.one", registry=only).formula == "sigma = 1/eps"
    assert claims.algorithm_names(registry=only) == {"Toy"}
    with pytest.raises(InputError, match="paper must be one of 'toy-paper'"):
        claims.load(paper="lowy-liu-asi-2024", registry=only)
    paper = only.papers["toy-paper"]
    assert paper.experiments == "toy_paper_experiments" and paper.folder == tmp_path.resolve()
    assert paper.source == f"folder {tmp_path}" and paper.file.name == "toy.toml"
    # with the packaged papers, as `--registry DIR` reads it
    both = claims.load(registry=[tmp_path])
    assert [c.id for c in both][-1] == "toy.claim.one" and len(both) == len(claims.load()) + 1
    assert list(claims.papers(registry=[str(tmp_path)]))[-1] == "toy-paper"


def test_caveats_are_read_with_their_kind(tmp_path):
    text = VALID + '\n[[claims.caveats]]\nkind = "erratum"\ntext = "eq. (3) drops a 1/2."\n'
    _write(tmp_path, "toy.toml", text)
    (claim,) = claims.load(registry=Registry.from_folders(tmp_path))
    assert [(c.kind, c.text) for c in claim.caveats] == [("erratum", "eq. (3) drops a 1/2.")]
    assert claim.to_dict()["caveats"] == [{"kind": "erratum", "text": "eq. (3) drops a 1/2."}]
    assert "caveats" not in claim.extra


_MARKERS = {  # what marks each kind in a claim's text (a reconstructed garbling is no erratum)
    "ambiguity": r"AMBIGUITY",
    "reconstruction": r"(?i)\[RECON|reconstruct|chosen by the spec|the spec supplies|"
    r"unspecified \(assume",
    "erratum": r"(?i)\berrat|\bgarbled\b",
}


def _marked_kinds(text):
    kinds = {k for k in ("ambiguity", "reconstruction") if re.search(_MARKERS[k], text)}
    if "reconstruction" not in kinds and re.search(_MARKERS["erratum"], text):
        kinds.add("erratum")
    return kinds


@pytest.mark.parametrize("kind", sorted(_MARKERS))
def test_every_marked_claim_lists_its_caveat(kind):
    """A claim whose TOML text marks an ambiguity, an erratum or a reconstruction carries a
    caveat of that kind (the report's "Ambiguities and reconstructions" lists caveats only)."""
    marked, listed = set(), set()
    for claim in claims.load(registry=Registry.discover(installed=False)):
        texts = [claim.statement, claim.formula, claim.regime, claim.source]
        texts += [v for k, v in claim.extra.items() if isinstance(v, str) and k != "amends_why"]
        if any(kind in _marked_kinds(text) for text in texts):
            marked.add(claim.id)
        if any(c.kind == kind for c in claim.caveats):
            listed.add(claim.id)
    assert marked and marked <= listed, sorted(marked - listed)


@pytest.mark.parametrize(
    "old, new, fragments",
    [
        (
            'statement = "Toy is DP."\n',
            "",
            ["claim 'toy.claim.one'", "missing required field 'statement'"],
        ),
        (
            'kind = "privacy"',
            'kind = "rate"',
            ["claim 'toy.claim.one'", "field 'kind' must be one of"],
        ),
        ("{eps = -1.0}", '{eps = "-1/2"}', ["'exponents' entry 'eps' must be a finite number"]),
        ("{eps = -1.0}", "{eps = nan}", ["'exponents' entry 'eps'"]),
        ("exponents = {eps = -1.0}", "exponents = -1.0", ["field 'exponents' must be a table"]),
        ("exponents = {eps = -1.0}\n", "", ["missing required field 'exponents'"]),
        (
            "exponents = {eps = -1.0}",
            'exponents = {eps = -1.0}\nsymbolic_exponents = {eps = "k"}',
            ["both 'exponents' and 'symbolic_exponents'"],
        ),
        (
            'paper = "toy-paper"\nkind',
            'paper = "other-paper"\nkind',
            ["field 'paper' is 'other-paper'"],
        ),
        ('source = "Theorem 1"', "source = 1", ["field 'source' must be a non-empty string"]),
        (
            'id = "toy.claim.one"',
            'id = "toy claim"',
            ["claim #1", "claim id 'toy claim' may hold only letters"],
        ),
        ('id = "toy.claim.one"', "", ["claim #1", "missing required field 'id'"]),
        ('confidence = "high"', "checkable = false", ["needs a field 'reason'"]),
        (
            'confidence = "high"',
            'reason = "context"',
            ["'reason' is only allowed with `checkable = false`"],
        ),
        ('confidence = "high"', 'checkable = "no"', ["field 'checkable' must be true or false"]),
        ('confidence = "high"', "confidence = [1, 2]", ["extra field 'confidence'"]),
        ('title = "A toy paper"', "", ["[paper]", "missing required field 'title'"]),
        (
            'title = "A toy paper"',
            'title = "A toy paper"\nyear = 2024',
            ["[paper]", "unknown fields ['year']"],
        ),
        ("[[claims]]", "[[claim]]", ["unknown top-level keys ['claim']"]),
        ('bound = "order"\n', "", ["missing field 'bound' (the claim has exponents)"]),
        ('bound = "order"', 'bound = "O"', ["field 'bound' must be one of upper, lower, order"]),
        ('bound = "order"', 'bound = "order"\nmargin = 0', ["'margin' must be a positive number"]),
        (
            'bound = "order"',
            'bound = "order"\nlimits = {eps = "tiny"}',
            ["'limits' entry 'eps' must be one of"],
        ),
        (
            'bound = "order"',
            'bound = "order"\nlimits = {n = "small"}',
            ["'limits' names 'n', which has no exponent"],
        ),
        (
            'bound = "order"',
            'bound = "order"\ntested_exponents = {eps = 0.0}',
            ["missing required field 'tested'"],
        ),
        (
            'bound = "order"',
            'bound = "order"\nwhy = "because"',
            ["'why' is only allowed with 'tested_exponents'"],
        ),
        ('statement = "Toy is DP."', 'statement = "Toy is DP.', ["not valid TOML"]),
        (
            'bound = "order"',
            'bound = "order"\nimplemented = false',
            ["`implemented = false` needs a field 'reason'"],
        ),
        (
            'bound = "order"',
            'bound = "order"\nimplemented = false\ncheckable = false\nreason = "x"',
            ["exclude each other"],
        ),
        ('bound = "order"', 'bound = "order"\nimplemented = "no"', ["'implemented' must be true"]),
        ('confidence = "high"', "transcription = 1", ["'transcription' must be true or false"]),
        ('confidence = "high"', 'caveats = "typo"', ["field 'caveats' must be a list"]),
        (
            'confidence = "high"',
            'caveats = [{kind = "typo", text = "x"}]',
            ["'caveats' entry 1: kind must be one of ambiguity, erratum, reconstruction"],
        ),
        (
            'confidence = "high"',
            'caveats = [{kind = "erratum"}]',
            ["'caveats' entry 1 must be a table like"],
        ),
        (
            'confidence = "high"',
            'caveats = [{kind = "erratum", text = ""}]',
            ["'caveats' entry 1", "field 'text' must be a non-empty string"],
        ),
    ],
)
def test_malformed_file_names_file_claim_and_field(tmp_path, old, new, fragments):
    assert old in VALID
    _write(tmp_path, "broken.toml", VALID.replace(old, new, 1))
    with pytest.raises(ClaimsFileError) as info:
        Registry.from_folders(tmp_path)
    message = str(info.value)
    assert "broken.toml" in message
    for fragment in fragments:
        assert fragment in message


def test_duplicate_ids_and_papers_name_both_sources(tmp_path):
    _write(tmp_path, "a.toml", VALID)
    _write(
        tmp_path,
        "b.toml",
        VALID.replace('id = "toy-paper"', 'id = "toy-paper-2"').replace(
            'paper = "toy-paper"', 'paper = "toy-paper-2"'
        ),
    )
    with pytest.raises(ClaimsFileError) as info:
        Registry.from_folders(tmp_path)
    message = str(info.value)
    assert message.startswith("claim id 'toy.claim.one' is defined twice: in ")
    assert f"a.toml (folder {tmp_path})" in message and f"b.toml (folder {tmp_path})" in message
    _write(tmp_path, "b.toml", VALID.replace("toy.claim.one", "toy.claim.two"))
    with pytest.raises(ClaimsFileError, match="paper id 'toy-paper' is defined twice: in .*a.toml"):
        Registry.from_folders(tmp_path)


def test_a_folder_redefining_a_packaged_id_names_both_sources(tmp_path):
    packaged = claims.get("lla24.alg1.privacy")
    _write(tmp_path, "mine.toml", VALID.replace("toy.claim.one", packaged.id))
    with pytest.raises(ClaimsFileError) as info:
        claims.load(registry=[tmp_path])
    message = str(info.value)
    assert f"claim id {packaged.id!r} is defined twice" in message
    assert "lowy_liu_asi_2024.toml (dpclaims)" in message and "mine.toml (folder " in message
    _write(tmp_path, "mine.toml", VALID.replace('"toy-paper"', '"lowy-liu-asi-2024"'))
    with pytest.raises(ClaimsFileError, match="paper id 'lowy-liu-asi-2024' is defined twice"):
        claims.load(registry=[tmp_path])


def test_bad_directories(tmp_path):
    with pytest.raises(ClaimsFileError, match="no claims files"):
        Registry.from_folders(tmp_path)
    with pytest.raises(InputError, match="existing folder"):
        claims.load(registry=[tmp_path / "missing"])
    with pytest.raises(InputError, match="must be paths"):
        Registry.from_folders(3)
    with pytest.raises(InputError, match="must be a Registry or a list of folders"):
        claims.load(registry=3)
    _write(tmp_path, "empty.toml", '[paper]\nid = "p"\ntitle = "t"\nexperiments = "m"\n')
    with pytest.raises(ClaimsFileError, match=r"empty\.toml: file: no \[\[claims\]\] entries"):
        Registry.from_folders(tmp_path)
    _write(tmp_path, "empty.toml", VALID.replace('experiments = "toy_paper_experiments"\n', ""))
    with pytest.raises(ClaimsFileError, match="missing required field 'experiments'"):
        Registry.from_folders(tmp_path)
    _write(tmp_path, "empty.toml", VALID.replace('"toy_paper_experiments"', '"toy-paper.py"'))
    with pytest.raises(ClaimsFileError, match="must be a dotted module name"):
        Registry.from_folders(tmp_path)


def test_rate_reads_exponent_bound_margin_and_tested_fields(tmp_path):
    text = VALID.replace(
        'bound = "order"',
        'bound = "upper"\nmargin = 0.15\n'
        'limits = {eps = "small"}\ntested_exponents = {n = 0.0}\n'
        'tested = "a normalised risk"\n'
        'why = "a regime"',
    )
    _write(tmp_path, "toy.toml", text)
    claim = Registry.from_folders(tmp_path).get("toy.claim.one")
    rate = claim.rate("eps")
    assert (rate.exponent, rate.bound, rate.margin, rate.limit) == (-1.0, "upper", 0.15, "small")
    assert rate.stated == "O(eps^-1) as eps → 0" and not rate.tested
    tested = claim.rate("n")
    assert (tested.exponent, tested.tested, tested.why) == (0.0, "a normalised risk", "a regime")
    assert "tested: a normalised risk" in tested.describe()
    with pytest.raises(InputError, match="states no exponent for 'd'"):
        claim.rate("d")


def test_rate_states_the_claim_as_the_paper_does():
    assert claims.get("lla24.alg3.risk.stat").rate("n").stated == "O(n^-1/2)"
    lower = claims.get("lla24.lb.lsa21.stat").rate("n").describe()
    assert lower.startswith("claimed Ω(n^-1/2) (lower bound")
    assert claims.get("lla24.alg3.complexity.stat").rate("n").stated == "O(n^9/8)"
    symbolic = claims.get("lowy26.sco.upper.private_term").rate("n", k=4.0)
    assert symbolic.exponent == -0.75 and symbolic.stated == "O(n^(-(1-1/k))) at k=4"


def test_kind_and_bound_are_words():
    """A claim's ``kind`` is a :class:`ClaimKind` and its ``bound`` a :class:`Bound` (coerced from
    the TOML's strings); a rate claim's ``bound`` and ``limit`` too."""
    from dpclaims import claims
    from dpclaims.vocabulary import Bound, ClaimKind, Limit

    every = claims.load()
    assert all(isinstance(c.kind, ClaimKind) for c in every)
    rated = [c for c in every if c.bound is not None]
    assert rated and all(isinstance(c.bound, Bound) for c in rated)
    claim = next(c for c in rated if c.exponents and c.margin is not None)
    rate = claim.rate(next(iter(claim.exponents)))
    assert isinstance(rate.bound, Bound) and isinstance(rate.limit, Limit)
