"""BySize: one setting per budget, in one place."""

import pytest

from dpclaims.claims.experiments import BySize
from dpclaims.errors import InputError


def test_budget_picks_and_full_defaults_to_standard():
    trials = BySize(quick=10, standard=100)
    assert (trials["quick"], trials["standard"], trials["full"]) == (10, 100, 100)
    assert BySize(quick=1, standard=2, full=3)["full"] == 3


def test_unknown_budget_names_the_choices():
    with pytest.raises(InputError, match="budget must be one of 'quick', 'standard', 'full'"):
        BySize(quick=1, standard=2)["huge"]


def test_old_name_budget_warns_and_is_by_size():
    from dpclaims import claims
    from dpclaims.claims import experiments

    for module in (claims, experiments):
        with pytest.warns(DeprecationWarning, match="renamed BySize"):
            assert module.Budget is BySize
