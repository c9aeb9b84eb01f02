"""The DP-SGD CI recipe (examples/dpsgd_ci_audit.py, issue #27 item 5): it passes for correct
DP-SGD (consistent, reach ≤ 2×) and fails for the noise-halved and clip-skipped ones."""

import functools
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import dpsgd_ci_audit as recipe  # noqa: E402


@pytest.mark.slow
def test_recipe_passes_for_correct_dpsgd():
    result = recipe.audit_training()
    assert result.verdict == "consistent"
    assert result.reach.factor <= 2.0


def test_recipe_fails_for_half_the_noise():
    half = functools.partial(recipe.train, noise_multiplier=recipe.SIGMA / 2)
    with pytest.raises(AssertionError, match="violated"):
        recipe.audit_training(half, trials=10_000)


def test_recipe_fails_when_clipping_is_skipped():
    no_clip = functools.partial(recipe.train, clip=False)
    with pytest.raises(AssertionError, match="violated"):
        recipe.audit_training(no_clip, trials=10_000)


def test_recipe_releases_every_step():
    d0, d1 = recipe.datasets()
    out = recipe.train(d1, np.random.default_rng(0), 5)
    assert out.shape == (5, recipe.STEPS * d0.d)
    assert recipe.canary_score(out).shape == (5,)
