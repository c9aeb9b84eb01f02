"""Quick-budget run of every registered experiment of lowy-liu-asi-2024 (spec 000), with the
verdict expected."""

import pytest

from dpclaims import claims
from dpclaims.execution import Execution

SERIAL = Execution(backend="serial")

PAPER = "lowy-liu-asi-2024"

CONSISTENT = {
    "lla24.alg1.score_test",
    "lla24.alg1.noise_calibration",
    "lla24.alg1.reference_eps",
    "lla24.alg2.noise_calibration",
    "lla24.alg2.reference_eps",
    "lla24.lemmaB3.sgd",
}
# privacy audits in parts (#36), all on the same pair and statistic: the paper's theorem
# ("theorem", (2, δ)), the paper's intermediate guarantee where it states one for the released
# statistic, and a bound derived here ("derived", labelled, never "claimed") that the pair comes
# within 2× of.  The claim is as weak as its weakest part (reach against each part's own ε).
# claim id: (the pair's exact ε, the derived bound, the intermediate part and its ε)
WITHIN_REACH = {
    "lla24.alg1.privacy": (0.1775, 0.1999, "eq. (2) halt bit", 0.5001),
    "lla24.alg3.privacy": (0.4435, 0.49995, "eq. (9) halting pattern", 1.0),
    "lla24.alg2.abovethreshold": (0.4435, 0.49995, "eq. (9)", 1.0),
    "lla24.alg3ns.privacy": (0.4361, 0.49995, "eq. (9) halting pattern", 1.0),
    "lla24.privacy.tau_free": (0.4435, 0.49995, "eq. (9) halting pattern", 1.0),
}
DERIVED = "derived bound, not the paper's"
# the halt bit's derived ε 0.2 is small: at quick, 2× it is out of the audit's reach (3.1×)
DERIVED_OUT_OF_REACH = {"lla24.alg1.privacy"}
POWERLESS: set = set()
# tiny quick sweeps of full algorithm runs: too small to be conclusive, must not contradict
# the claim
NOT_CONTRADICTED = {
    "lla24.alg3.risk.priv",
    "lla24.lb.lsa21.priv",
    "lla24.lb.lsa21.stat",
}
# the spec's strongly convex wrapper (§2.5, not from the paper) is flat in m with privacy noise,
# but at the quick budget its excess never gets below that of outputting the origin: saturated,
# so inconclusive
OBSERVED: dict = {
    "lla24.alg3sc.risk.priv": "inconclusive",
    # issue 36: a rate test is consistent only when a trivial output fails it and its exponent
    # reach is <= 0.25 (else consistent_weak); a zero-spread sweep (a schedule) is formula
    "lla24.alg1.complexity": "formula",
    "lla24.alg1.risk": "consistent_weak",
    "lla24.alg1.suboptimality": "inconclusive",
    "lla24.alg3.complexity.C1": "formula",
    "lla24.alg3.complexity.headline": "formula",
    "lla24.alg3.complexity.priv": "formula",
    "lla24.alg3.complexity.stat": "formula",
    "lla24.alg3.risk.stat": "consistent_weak",
    "lla24.alg3ns.complexity": "formula",
    "lla24.alg3ns.complexity.omitted": "formula",
    "lla24.alg3sc.complexity": "formula",
    "lla24.lemma23.stability": "consistent_weak",
    "lla24.lemma35.variance": "consistent_weak",
    "lla24.lemmaC4.acsa": "formula",
    "lla24.lemmaD1.smoothing": "consistent_weak",
}
# full Algorithm 3 sweeps: ~2 s each alone, > 5 s on a loaded machine
SLOW = {
    "lla24.alg3.risk.priv",
    "lla24.alg3.risk.stat",
    "lla24.lb.lsa21.priv",
    "lla24.alg1.suboptimality",
}
# RT-9 (smoothed Algorithm 3): registered for standard/full; no sweep fits the quick budget
SKIPPED_AT_QUICK = {"lla24.alg3ns.risk.stat": -0.5, "lla24.alg3ns.risk.priv": -1.0}


def test_every_claim_is_covered():
    ids = {c.id for c in claims.load(paper=PAPER)}
    expected = CONSISTENT | POWERLESS | NOT_CONTRADICTED | set(OBSERVED) | set(SKIPPED_AT_QUICK)
    expected |= set(WITHIN_REACH)
    assert ids == expected | {"lla24.alg3sc.risk.stat"}
    assert ids <= claims.registered_experiments()
    assert not any(claims.get(i).uncheckable_reason for i in ids)


@pytest.mark.parametrize("claim_id", sorted(SKIPPED_AT_QUICK))
def test_rt9_registered_for_standard_and_full(claim_id):
    claim = claims.get(claim_id)
    with pytest.raises(claims.Skipped, match="quick"):
        claims.experiment(claim, "quick")
    standard, full = claims.experiment(claim, "standard"), claims.experiment(claim, "full")
    assert standard.expected == full.expected == SKIPPED_AT_QUICK[claim_id]
    assert (
        full.values == [4000, 8000, 16000, 40000]
        and full.fixed["m"] == 16
        and full.fixed["epsilon"] == 4.0
    )
    assert standard.fixed["smoothed"] and standard.values[-1] / standard.values[0] >= 10


def test_rt10_statistical_term_is_checked_from_the_standard_budget():
    claim = claims.get("lla24.alg3sc.risk.stat")
    with pytest.raises(claims.Skipped, match="pre-asymptotic"):
        claims.experiment(claim, "quick")
    assert (
        claims.experiment(claim, "standard").param == "n"
        and claims.experiment(claim, "standard").expected == -1.0
    )


def _params():
    for cid in sorted(
        CONSISTENT | POWERLESS | NOT_CONTRADICTED | set(OBSERVED) | set(WITHIN_REACH)
    ):
        marks = [pytest.mark.slow] if cid in SLOW else []
        yield pytest.param(cid, marks=marks, id=cid)


@pytest.mark.parametrize("claim_id", list(_params()))
def test_quick_verdict(claim_id, quick_outcome):
    result = quick_outcome(claim_id)
    if claim_id in WITHIN_REACH:
        _check_privacy_parts(claim_id, result)
    elif claim_id in CONSISTENT:
        assert result.verdict == "consistent", result.summary
    elif claim_id in POWERLESS:
        assert result.verdict == "inconclusive", result.summary
        assert result.evidence.reason
    elif claim_id in OBSERVED:
        assert result.verdict == OBSERVED[claim_id], result.summary
    else:
        assert result.verdict in ("consistent", "consistent_weak", "inconclusive"), result.summary


def _check_privacy_parts(claim_id, result):
    exact, derived, intermediate, paper_eps = WITHIN_REACH[claim_id]
    parts = result.evidence.parts
    weakest = "consistent_weak" if any(p.verdict != "consistent" for p in parts.values()) else ""
    assert result.verdict == (weakest or "consistent"), result.summary
    for part in parts.values():
        assert part.evidence.reference.epsilon == pytest.approx(exact, abs=1e-3)
    low = parts["derived"]
    if claim_id in DERIVED_OUT_OF_REACH:  # reach against the small derived ε (#41) is > 2
        assert low.verdict == "consistent_weak" and low.evidence.reach.factor > 2.0
    else:
        assert low.verdict == "consistent" and low.evidence.reach.factor <= 2.0
    assert low.evidence.bound == DERIVED and low.evidence.epsilon == pytest.approx(derived, 1e-3)
    assert f"vs {DERIVED}: " in low.summary and "claimed" not in low.summary
    assert parts[intermediate].evidence.epsilon == pytest.approx(paper_eps, abs=1e-3)
    if "theorem" in parts:  # the paper's own (ε, δ) = (2, δ), printed as claimed
        theorem = parts["theorem"]
        assert theorem.evidence.epsilon == 2.0 and not theorem.evidence.bound
        assert theorem.verdict == "consistent_weak" and "vs claimed 2 " in theorem.summary
    else:  # lla24.alg2.abovethreshold: the claim is eq. (9) itself
        assert "vs claimed 1 " in parts[intermediate].summary
    assert "TIGHT" not in str(result.evidence) and "conservative by" not in str(result.evidence)


def test_suboptimality_compares_the_two_algorithms_on_one_family(monkeypatch):
    """lla24.alg1.suboptimality fits Algorithm 1's normalised risk over Algorithm 3's, both on
    one family (#36; it used to fit Algorithm 1's alone, which rose as n^0.23 while Algorithm 3's
    rose as n^0.245).  With an Algorithm 3 that did not rise, Algorithm 1's own rise would show
    the gap."""
    from dpclaims.claims.checks import lowy_liu_asi_2024 as checks

    experiment = claims.experiment(claims.get("lla24.alg1.suboptimality"), "quick")
    assert experiment.experiment is checks.alg1_over_alg3
    seen = []

    def flat_alg3(n, rng, **setting):
        seen.append(setting)
        return 0.1

    monkeypatch.setattr(checks, "alg3_risk", flat_alg3)
    result = experiment.run(seed=0, execution=SERIAL)
    # the gap shows (not inconclusive); at quick its exponent reach (0.56) keeps it weak (#36)
    assert result.verdict == "consistent_weak" and "reach" in result.summary, result.summary
    assert all(s == {"normalised": True, **checks.GAP_FAMILY} for s in seen)
