"""The measuring code of each packaged paper's experiments: the swept functions, audit targets,
value computations and the builders its table names.

The experiments themselves are declared in the paper's table, :mod:`dpclaims.claims.tables`
(the module the paper's TOML names as ``experiments``, imported the first time one of its
experiments is needed: :func:`dpclaims.claims.experiment`).
"""
