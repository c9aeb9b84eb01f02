"""The real-bug corpus: every bug caught on its crafted pair, no twin a violation, the sampler
checks catch the Opacus sampler bugs; the statistical ones are marked slow."""

import math

import numpy as np
import pytest

from dpclaims.audit import audit
from dpclaims.audit.sampler import check_sampler, independence_check, normaliser_check
from dpclaims.claims.mutation import audit_settings, kill_matrix
from dpclaims.data import are_neighbours
from dpclaims.errors import InputError
from dpclaims.execution import Execution
from dpclaims.targets.mutants import list_mutants
from dpclaims.targets.realbugs import get_bug, list_bugs

BUGS = list_bugs()
FAST = [
    "opacus-closure-recomputes-after-noise",
    "diffprivlib-classes-from-private-labels",
    "smartnoise-covariance-unclipped",
    "textbook-lattice-laplace",
    "opendp-threshold-mass-omitted",
]


def test_corpus_has_twenty_bugs_with_sources_pairs_and_ground_truth():
    assert len(BUGS) >= 20 and len({b.library for b in BUGS}) >= 6
    for bug in BUGS:
        assert bug.source and bug.ground_truth and bug.caught_by
        assert bug.true_epsilon is None or bug.true_epsilon > bug.claim.epsilon
        d0, d1 = bug.pair()
        assert are_neighbours(d0, d1, bug.claim.unit, bug.claim.relation), bug.name
        rng = np.random.default_rng(0)
        for data in (d0, d1, bug.plain()):
            for mechanism in (bug.mechanism, bug.twin):
                out = mechanism(data, rng, 3)
                assert out.ndim == 2 and out.shape[0] == 3 and np.all(np.isfinite(out))


def test_real_bugs_are_registered_mutants_of_the_real_corpus():
    real = {m.name for m in list_mutants(corpus="real")}
    assert real == {b.name for b in BUGS}
    assert not real & {m.name for m in list_mutants(corpus="papers")}
    assert audit_settings("realbug:opendp-threshold-mass-omitted", "quick")["trials"] == 100_000


@pytest.mark.parametrize("name", FAST)
def test_fast_bugs_are_caught_on_their_crafted_pair_and_their_twins_are_not(name):
    report = kill_matrix(names=[name], corpus="real", execution=Execution(backend="serial"))
    assert report["killed"] == 1, report["matrix"]
    bug = get_bug(name)
    twin = bug.target(twin=True)
    settings = audit_settings(f"realbug:{name}", "quick")
    result = audit(
        twin.mechanism,
        twin.d0,
        twin.d1,
        claim=twin.claim,
        seed=1,
        **{**settings, **bug.audit_options()},
        execution=Execution(progress=False),
    )
    assert result.verdict != "violation"


@pytest.mark.slow
@pytest.mark.parametrize("name", [b.name for b in BUGS if b.name not in FAST])
def test_every_other_bug_is_caught_and_its_twin_never_a_violation_at_two_seeds(name):
    """Two seeds of the twin: at four (0..3) every twin stayed below its claim ε = 1 (highest:
    unary encoding 0.97, 0.96 | 0.95, 0.94), seeds 2 and 3 never above seeds 0 and 1 by 0.1 or
    more; a twin that kept its bug is caught at seed 0, as the bug is here.

    A quarter of the quick budget's trials: each bug is still a violation at seed 0 with ε far
    above its claim of 1 (lowest: histogram replace sensitivity 1.52, composition not split
    1.80, unary encoding 1.81, add-remove sensitivity 1.83, shuffled batches 1.85; 1.83, 1.83,
    1.91, 1.90, 3.07 at the whole budget), and no twin is a violation at seeds 0 and 1 (highest
    ε: add-remove sensitivity 0.93, 0.87; unary encoding 0.87, 0.91)."""
    bug = get_bug(name)
    settings = {**audit_settings(f"realbug:{name}", "quick"), **bug.audit_options()}
    settings["trials"] //= 4
    t = bug.target()
    caught = audit(
        t.mechanism,
        t.d0,
        t.d1,
        claim=t.claim,
        seed=0,
        **settings,
        execution=Execution(progress=False),
    )
    assert caught.verdict == "violation"
    twin = bug.target(twin=True)
    for seed in range(2):
        result = audit(
            twin.mechanism,
            twin.d0,
            twin.d1,
            claim=twin.claim,
            seed=seed,
            **settings,
            execution=Execution(progress=False),
        )
        assert result.verdict != "violation", (seed, result.epsilon_lower)


@pytest.mark.slow
@pytest.mark.parametrize("bug", [b for b in BUGS if b.recompute is not None], ids=lambda b: b.name)
def test_stored_ground_truths_match_their_computation(bug):
    assert math.isclose(bug.true_epsilon, bug.recompute(), rel_tol=2e-3)


def test_sampler_checks_catch_the_opacus_sampler_bugs_and_pass_their_fixes():
    weighted = get_bug("opacus-weighted-sampler-rate")
    plain = weighted.plain()
    bad = check_sampler(weighted.sampler, plain, rate=weighted.sampling_rate, draws=2000)
    good = check_sampler(weighted.twin_sampler, plain, rate=weighted.sampling_rate, draws=2000)
    assert not bad[0].passed and bad[0].numbers["units_above"] == 5
    assert all(f.passed for f in good)
    size = get_bug("opacus-expected-batch-size-private-n")
    d0, d1 = size.pair()
    assert not normaliser_check(size.normaliser, d0, d1).passed
    assert normaliser_check(size.twin_normaliser, d0, d1).passed
    assert "depends on the data" in normaliser_check(size.normaliser, d0, d1).summary()


def test_independence_check_flags_fixed_size_batches_accounted_as_poisson():
    def fixed_size(data, rng, draws):  # shuffled batches of 10: what Chua et al. 2024 audit
        order = np.argsort(rng.random((draws, data.n)), axis=1)[:, :10]
        masks = np.zeros((draws, data.n), bool)
        np.put_along_axis(masks, order, True, axis=1)
        return masks

    plain = BUGS[0].plain()
    finding = independence_check(fixed_size, plain, rate=0.1, draws=1000)
    assert not finding.passed and finding.numbers["batch_variance"] == 0.0


def test_shuffle_lower_bound_is_chua_et_al_s_cube_bound_and_far_above_the_poisson_claim():
    from dpclaims.privacy import subsampled_gaussian_epsilon
    from dpclaims.targets.realbugs import accounting

    bug = get_bug("accounting-shuffled-batches-as-poisson")
    sigma = accounting.shuffle_sigma()
    steps = accounting.SHUFFLE_STEPS
    assert math.isclose(
        subsampled_gaussian_epsilon(sigma, 1 / steps, steps, 1e-5), 1.0, rel_tol=1e-2
    )
    bound = accounting.shuffle_max_epsilon()
    assert math.isclose(bound, accounting.SHUFFLE_LOWER_BOUND, abs_tol=0.01)
    assert (
        bound > 3.5 * bug.claim.epsilon and str(accounting.SHUFFLE_LOWER_BOUND) in bug.ground_truth
    )
    # the bound grows as the noise shrinks, and vanishes with no signal to find
    assert (
        accounting.shuffle_max_epsilon(0.8 * sigma)
        > bound
        > accounting.shuffle_max_epsilon(4 * sigma)
    )


def test_the_shuffled_and_poisson_transcripts_have_the_batch_laws_they_claim():
    """Every record at +1: a shuffled batch sums to exactly b (plus noise); a Poisson batch to a
    Binomial(n, 1/T) count, mean n/T, variance n/T (1 − 1/T) (plus noise)."""
    from dpclaims.targets.realbugs import accounting, records

    n, steps = 100, accounting.SHUFFLE_STEPS
    ones = records(np.ones((n, 2)), np.zeros(n))
    rng = np.random.default_rng(0)
    sigma2 = accounting.shuffle_sigma() ** 2
    shuffled = accounting.shuffled_batches(ones, rng, 20_000)
    poisson = accounting.poisson_batches(ones, rng, 20_000)
    assert shuffled.shape == poisson.shape == (20_000, steps)
    assert np.allclose(shuffled.sum(axis=1).mean(), n, atol=0.5)
    assert abs(shuffled.var() - sigma2) < 0.03
    q = 1 / steps
    assert abs(poisson.mean() - n * q) < 0.01
    assert abs(poisson.var() - (n * q * (1 - q) + sigma2)) < 0.05
    with pytest.raises(InputError, match="at most that many records"):
        accounting.shuffled_batches(records(np.ones((n + 1, 2))), rng, 2)


def _search_plain(bug, screen_trials: int):
    from dpclaims.audit import AuditTest
    from dpclaims.audit.search import search
    from dpclaims.targets.pairs import CanaryPairs

    family = CanaryPairs(bug.plain(), unit=bug.claim.unit, relation=bug.claim.relation)
    return search(
        bug.mechanism,
        family,
        claim=bug.claim,
        trials=bug.trials,  # what the crafted pair needs
        screen_trials=screen_trials,
        seed=0,
        test=AuditTest(statistic=bug.statistic),
        execution=Execution(progress=False),
    )


@pytest.mark.parametrize(
    "name,pair,screen_trials",
    [
        ("textbook-svt-no-query-noise", "tied features", 10_000),
        ("opendp-threshold-mass-omitted", "class 2", 10_000),
        pytest.param(
            "opacus-expected-batch-size-private-n", "tiny data", 2_000, marks=pytest.mark.slow
        ),
        pytest.param(
            "accounting-shuffled-batches-as-poisson", "opposed", 2_000, marks=pytest.mark.slow
        ),
    ],
)
def test_search_from_the_plain_dataset_catches_the_bugs_that_need_derived_data(
    name, pair, screen_trials
):
    """Answers tied at a threshold (SVT), a key held by one record (OpenDP), a dataset of two
    (a normaliser from the private size), every other record opposed (shuffled batches): the
    search's derived-data and label pairs reach what the plain data's canaries cannot.  The
    found pair is certified at the bug's own trials (20,000 / 100,000 / 20,000 / 200,000), not
    the CLI's 200,000: ε ≥ 6.61, 3.07, 7.51 and 3.07 at seed 0, claims 1.  The screens are the
    CLI's 10,000 trials where the bug needs them (OpenDP's one-record key is `consistent`, 0.97,
    at seeds 0-2 after screens of 2,000) and 2,000 for the normaliser and the shuffled batches,
    found at seeds 0-2 either way (ε ≥ 7.49-7.52 and 2.36-3.07; 7.44 and 3.07 after the CLI's
    screens at seed 0), 14 s of CPU less."""
    found = _search_plain(get_bug(name), screen_trials)
    assert found.verdict == "violation", (found.epsilon_lower, found.pair.name)
    screened = [n for n, _ in found.screened if n.startswith(pair)]
    assert screened  # the pattern the catch grew from was screened
