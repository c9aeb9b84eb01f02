"""Packings: certified separation over all pairs and the Gilbert–Varshamov size."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

from dpclaims.errors import InputError
from dpclaims.hardinstances.packings import (
    Packing,
    exact_sphere_packing,
    gilbert_varshamov_bound,
    gilbert_varshamov_code,
    hamming_ball_volume,
    min_pairwise_distance,
    sphere_packing,
)


def hamming_pairs(code: Packing) -> np.ndarray:
    """All pairwise Hamming distances (counts) of a ±1 code, via scipy's pdist."""
    return np.rint(pdist(code.points > 0, metric="hamming") * code.d)


def test_hamming_ball_volume_and_gv_bound_by_hand():
    assert hamming_ball_volume(7, 1) == 8  # 1 + 7
    assert hamming_ball_volume(4, 10) == 16
    # GV for the [7, 4, 3] Hamming-code parameters: 2^7 / V(7, 2) = 128 / 29 -> 5
    assert gilbert_varshamov_bound(7, 3) == 5
    assert gilbert_varshamov_bound(10, 1) == 2**10


# (d, r) pairs whose GV size is between 2 and ~1000, for d up to 64
GV_CASES = [
    (4, 2),
    (8, 3),
    (12, 4),
    (16, 4),
    (16, 6),
    (24, 6),
    (32, 8),
    (32, 12),
    (48, 14),
    (64, 20),
    (64, 24),
    (64, 40),
]


@pytest.mark.parametrize("d, r", GV_CASES)
def test_gv_code_reaches_gv_size_with_all_pairs_certified(d, r):
    rng = np.random.default_rng(1000 + d + r)
    code = gilbert_varshamov_code(d, r, rng)
    assert code.size >= 2**d / hamming_ball_volume(d, r - 1)
    assert code.size == gilbert_varshamov_bound(d, r)
    assert set(np.unique(code.points)) <= {-1.0, 1.0}
    dist = hamming_pairs(code)
    assert dist.min() >= r
    assert code.min_distance == dist.min()  # the certificate is the true minimum


@pytest.mark.parametrize("d, r", [(7, 3), (10, 4), (12, 2), (20, 19)])
def test_gv_code_by_exhaustive_sweep_alone(d, r):
    # max_draws=0: no random proposals, only the lexicographic completion (d <= 20)
    code = gilbert_varshamov_code(d, r, np.random.default_rng(0), max_draws=0)
    assert code.size == gilbert_varshamov_bound(d, r)
    assert hamming_pairs(code).min() >= r


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 64), frac=st.floats(0.05, 1.0), seed=st.integers(0, 2**31))
def test_gv_code_invariant(d, frac, seed):
    r = max(1, int(round(frac * d)))
    size = min(gilbert_varshamov_bound(d, r), 150)
    code = gilbert_varshamov_code(d, r, np.random.default_rng(seed), size=max(size, 2))
    assert code.size == max(size, 2)
    assert hamming_pairs(code).min() >= r


def test_code_on_sphere_scales_distances():
    code = gilbert_varshamov_code(32, 10, np.random.default_rng(3))
    sph = code.on_sphere()
    assert np.allclose(np.linalg.norm(sph.points, axis=1), 1.0)
    assert sph.min_distance == pytest.approx(2 * math.sqrt(code.min_distance / 32))
    assert pdist(sph.points).min() >= 2 * math.sqrt(10 / 32) - 1e-12


@pytest.mark.parametrize(
    "d, s, size, sep",
    [
        (1, 1.0, 2, 2.0),  # spec 003 §5: "d=1: {±1} (s_V=2)"
        (2, 1.0, 6, 1.0),  # "d=2: 6 points at 60° (s_V=1)"
        (3, 1.0, 12, 1.0515),  # "d=3: icosahedron (12, s_V≈1.05)"
        (3, 1.2, 6, math.sqrt(2)),
        (3, 1.6, 4, math.sqrt(8 / 3)),
        (3, 1.9, 2, 2.0),
        (2, 0.5, 12, 2 * math.sin(math.pi / 12)),
    ],
)
def test_exact_small_packings(d, s, size, sep):
    pk = exact_sphere_packing(d, s)
    assert pk.size == size
    assert np.allclose(np.linalg.norm(pk.points, axis=1), 1.0)
    assert pdist(pk.points).min() == pytest.approx(sep, abs=1e-4)
    assert pdist(pk.points).min() >= s - 1e-12


def test_regular_polygon_is_maximal_on_the_circle():
    # one more point than floor(2π/θ) cannot fit at angular distance θ
    for s in (0.3, 0.7, 1.0, 1.3, 1.8):
        pk = exact_sphere_packing(2, s)
        theta = 2 * math.asin(s / 2)
        assert pk.size * theta <= 2 * math.pi + 1e-9 < (pk.size + 1) * theta


@pytest.mark.parametrize("d, s", [(4, 1.0), (6, 1.0), (8, 1.2), (12, 1.3)])
def test_greedy_sphere_packing_certified(d, s):
    pk = sphere_packing(d, s, np.random.default_rng(d))
    assert pk.size >= 2
    assert np.allclose(np.linalg.norm(pk.points, axis=1), 1.0)
    assert pdist(pk.points).min() >= s
    assert pk.min_distance == pytest.approx(pdist(pk.points).min())
    # a greedy maximal packing: the caps of angular radius θ (chord s) cover the sphere,
    # so it is at least as large as the GV-type covering bound 1 / (cap fraction)
    from scipy.special import betainc

    cap = 0.5 * betainc((d - 1) / 2, 0.5, 1 - (1 - s**2 / 2) ** 2)
    assert pk.size >= 0.5 / cap


def test_greedy_sphere_packing_respects_size_and_seed():
    a = sphere_packing(5, 1.0, np.random.default_rng(7), size=10)
    b = sphere_packing(5, 1.0, np.random.default_rng(7), size=10)
    assert a.size == 10 and np.array_equal(a.points, b.points)


def test_min_pairwise_distance_blockwise_matches_pdist():
    pts = np.random.default_rng(0).standard_normal((5000, 3))
    assert min_pairwise_distance(pts) == pytest.approx(pdist(pts).min())


def test_bad_inputs_raise_named_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="min_distance"):
        gilbert_varshamov_code(8, 9, rng)
    with pytest.raises(InputError, match="size"):
        gilbert_varshamov_code(40, 2, rng)
    with pytest.raises(InputError, match="separation"):
        sphere_packing(3, 2.5)
    with pytest.raises(InputError, match="rng"):
        sphere_packing(5, 1.0)
    with pytest.raises(InputError, match="points"):
        Packing(np.ones((1, 3)))
    with pytest.raises(InputError, match="-1, \\+1"):
        Packing(np.array([[0.0, 1.0], [1.0, 1.0]]), metric="hamming")
    with pytest.raises(InputError, match="rng"):
        gilbert_varshamov_code(8, 3, rng=5)
    with pytest.raises(InputError, match="on_sphere"):
        exact_sphere_packing(2, 1.0).on_sphere()
