"""AuditTarget: what to audit, validated once."""

import numpy as np
import pytest

from dpclaims.audit.target import AuditTarget
from dpclaims.errors import InputError
from dpclaims.privacy import PrivacyClaim


def _mech(data, rng):
    return rng.normal()


def test_coerce_converts_the_tuple_shape():
    claim = PrivacyClaim(epsilon=1.0, delta=0.0)
    d0, d1 = np.zeros(3), np.ones(3)
    target = AuditTarget.coerce((_mech, d0, d1, claim))
    assert (target.mechanism, target.d0, target.d1, target.claim) == (_mech, d0, d1, claim)
    assert AuditTarget.coerce(target) is target


@pytest.mark.parametrize(
    "mechanism, claim, match",
    [(3, PrivacyClaim(epsilon=1.0), "mechanism must be callable"), (_mech, 1.0, "claim must be")],
)
def test_bad_fields_are_named(mechanism, claim, match):
    with pytest.raises(InputError, match=match):
        AuditTarget(mechanism=mechanism, d0=0, d1=1, claim=claim)
