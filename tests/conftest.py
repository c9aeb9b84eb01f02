"""Test configuration: hypothesis runs derandomized so the suite gives the same result on every machine."""

from hypothesis import settings

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")
