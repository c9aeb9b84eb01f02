"""Test configuration: hypothesis runs derandomized, so every machine gets the same result."""

from hypothesis import settings

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")
