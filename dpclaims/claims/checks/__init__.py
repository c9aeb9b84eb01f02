"""One module per packaged paper registering the experiments that check its claims.

Each packaged claims TOML names its module here (``[paper] experiments =
"dpclaims.claims.checks.murata_suzuki_2023"``); the module is imported the first time one of its
experiments is needed (:func:`dpclaims.claims.experiment`), and decorates its factories
with :func:`dpclaims.claims.register_experiment`.
"""
