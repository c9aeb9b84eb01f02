import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim


@given(
    st.floats(1e-6, 50),
    st.floats(0, 0.999),
    st.sampled_from(["user", "item"]),
    st.sampled_from(["replace", "add-remove"]),
)
def test_valid_claims_round_trip(epsilon, delta, unit, relation):
    claim = PrivacyClaim(epsilon, delta, unit, relation)
    assert claim.to_dict() == {
        "epsilon": epsilon,
        "delta": delta,
        "unit": unit,
        "relation": relation,
        "source": "",
    }
    assert claim.pure == (delta == 0)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"epsilon": 0}, "epsilon must be"),
        ({"epsilon": -1}, "epsilon must be"),
        ({"epsilon": math.inf}, "epsilon must be"),
        ({"epsilon": math.nan}, "epsilon must be"),
        ({"epsilon": "1"}, "epsilon must be"),
        ({"epsilon": 1, "delta": 1}, "delta must be"),
        ({"epsilon": 1, "delta": -1e-9}, "delta must be"),
        ({"epsilon": 1, "unit": "group"}, "unit must be one of"),
        ({"epsilon": 1, "relation": "swap"}, "relation must be one of"),
    ],
)
def test_invalid_claims_name_the_argument(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        PrivacyClaim(**kwargs)
