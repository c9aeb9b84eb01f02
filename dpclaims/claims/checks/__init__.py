"""One module per source paper registering the experiments that check its claims.

Modules here are imported on first use by :func:`dpclaims.claims.experiments.load_checks`;
each decorates its factories with :func:`dpclaims.claims.register_experiment`.
"""
