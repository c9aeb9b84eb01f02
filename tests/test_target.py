"""AuditTarget: what to audit, validated once."""

import pytest

from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim
from dpclaims.target import AuditTarget


def _mech(data, rng):
    return rng.normal()


@pytest.mark.parametrize(
    "mechanism, claim, match",
    [(3, PrivacyClaim(epsilon=1.0), "mechanism must be callable"), (_mech, 1.0, "claim must be")],
)
def test_bad_fields_are_named(mechanism, claim, match):
    with pytest.raises(InputError, match=match):
        AuditTarget(mechanism=mechanism, d0=0, d1=1, claim=claim)
