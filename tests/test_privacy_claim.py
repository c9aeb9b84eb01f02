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


def test_unit_and_relation_are_words_coerced_at_the_door():
    """A string naming a word comes back as the member; the member prints, formats, reprs and
    serialises as the string, so results and messages read as before."""
    import json

    from dpclaims.vocabulary import Relation, Unit

    claim = PrivacyClaim(1.0, 1e-5, unit="item", relation="add-remove")
    assert claim.unit is Unit.ITEM and claim.relation is Relation.ADD_REMOVE
    assert not claim.is_user_level and claim.is_add_remove
    assert PrivacyClaim(1.0).is_user_level and not PrivacyClaim(1.0).is_add_remove
    assert json.dumps(claim.to_dict()) == (
        '{"epsilon": 1.0, "delta": 1e-05, "unit": "item", "relation": "add-remove", "source": ""}'
    )
    assert f"{claim.unit}-level {claim.relation}" == "item-level add-remove"
    assert repr(claim) == (
        "PrivacyClaim(epsilon=1.0, delta=1e-05, unit='item', relation='add-remove', source='')"
    )
