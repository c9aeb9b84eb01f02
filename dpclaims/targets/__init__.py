"""Audit setups: what to audit — a mechanism, a neighbouring pair and a claim."""
