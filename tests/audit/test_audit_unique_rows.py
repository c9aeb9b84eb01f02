"""``unique_rows`` is ``np.unique(x, axis=0, return_inverse=True)``, faster."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpclaims.audit.scores import unique_rows


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(0, 40), st.integers(1, 4)),
        elements=st.sampled_from([-1.5, -1.0, 0.0, 0.5, 2.0, 1e9]),
    )
)
def test_unique_rows_matches_numpy(x):
    rows, inverse = unique_rows(x)
    expected_rows, expected_inverse = np.unique(x, axis=0, return_inverse=True)
    assert np.array_equal(rows, expected_rows)
    assert np.array_equal(inverse, np.asarray(expected_inverse).reshape(-1))
    assert np.array_equal(rows[inverse], x)
