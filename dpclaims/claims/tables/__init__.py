"""One table per paper: the declarations of its experiments (:mod:`dpclaims.claims.declare`).

Each module is its paper's ``experiments`` module (named in the paper's TOML): importing it
registers every experiment of the paper; the measuring code lives in
:mod:`dpclaims.claims.checks`.
"""
