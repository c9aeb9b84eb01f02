"""Budget: one setting per budget, in one place."""

import pytest

from dpclaims.claims.experiments import Budget
from dpclaims.errors import InputError


def test_budget_picks_and_full_defaults_to_standard():
    trials = Budget(quick=10, standard=100)
    assert (trials["quick"], trials["standard"], trials["full"]) == (10, 100, 100)
    assert Budget(quick=1, standard=2, full=3)["full"] == 3


def test_unknown_budget_names_the_choices():
    with pytest.raises(InputError, match="budget must be one of 'quick', 'standard', 'full'"):
        Budget(quick=1, standard=2)["huge"]
