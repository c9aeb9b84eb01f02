"""The threshold choice bounds most tests at one corner only (``_ranked_values``): its argmax and
the value there must be those of bounding every test at every corner (``_bounded``)."""

import numpy as np
import pytest

from dpclaims.audit import threshold
from dpclaims.audit.bounds import tilt_of
from dpclaims.audit.threshold import _SWAP, Criterion, _bounded, _ranked_values


def _scan(rng, n, rate0, rate1, columns):
    """Predicted counts of a four-direction scan (4, T) as choose_threshold builds them, with
    each column repeated (equal tests: the first must win a tie)."""
    above0 = rng.binomial(n, rate0, columns).astype(float)
    above1 = rng.binomial(n, rate1, columns).astype(float)
    fp = np.repeat(np.stack([above0, n - above0, above1, n - above1]), 2, axis=1)
    size = np.full((4, 1), float(n))
    predicted = (fp, size, fp[_SWAP], size[_SWAP])
    return predicted, tilt_of(*predicted)


@pytest.mark.parametrize("batch", [1, threshold.RANK_BATCH])
@pytest.mark.parametrize("objective", ["epsilon", "mu"])
@pytest.mark.parametrize(
    "rate0,rate1",
    [(0.5, 0.5), (np.linspace(0.01, 0.99, 40), np.linspace(0.01, 0.99, 40))]
    + [(np.geomspace(1e-4, 0.5, 40), np.geomspace(1e-2, 0.9, 40))],
    ids=["null", "null-scan", "leak-scan"],
)
def test_ranked_values_keep_the_argmax_and_its_value(objective, rate0, rate1, batch, monkeypatch):
    monkeypatch.setattr(threshold, "RANK_BATCH", batch)  # batches of 1: every stop is tested
    rng = np.random.default_rng(3)
    criterion = Criterion(delta=1e-5, objective=objective)
    for n in (200, 5000):
        predicted, tilts = _scan(rng, n, rate0, rate1, 40)
        exact = _bounded(*predicted, 0.05, criterion, tilts)[0]
        ranked = _ranked_values(predicted, 0.05, criterion, tilts)
        best = int(np.argmax(exact))
        assert int(np.argmax(ranked)) == best and ranked.flat[best] == exact.flat[best]
        assert np.all(ranked >= exact)  # elsewhere an upper bound (exact where computed)
