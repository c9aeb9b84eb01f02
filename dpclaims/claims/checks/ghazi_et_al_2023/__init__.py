"""Measuring code for the claims of Ghazi et al. 2023 (spec 001 §7; paper id ``ghazi-et-al-2023``).

The experiments are declared in :mod:`dpclaims.claims.tables.ghazi_et_al_2023`; this package
holds what they measure: :mod:`.privacy` (TDLap, Observation 3.5, Theorems 3.1 and 3.3,
Appendix C, §6's test), :mod:`.blocks` (the building blocks RT-1, 2, 3, 10, 12 and Lemma C.1),
:mod:`.rates` (composition invariants and the rate sweeps RT-4 … RT-9), :mod:`.lower_bounds`
(Appendix D) and :mod:`.baselines` (Table 1's prior-work rows).

Privacy claims: the ⊥-channel audit of §7(a) (exact value ≈ ε/2), the ⊥ frequencies against
the TDLap CDF, the M3 fast-path pair, and white-box composition invariants.  Rate claims:
the sweeps RT-1 … RT-12 of §7(b) (``oracle`` mode where the spec says paper constants make
the excess trivial; every oracle experiment says so in its note).  Spec-suspected gaps (RT-8)
are reported as measured, never tuned.  Lower bounds (Thm D.7, D.8, Lemma D.5): a reference
user-level estimator on the hard family, whose error must stay above the bound (also where the
non-private mean falls below it) and meet its Ω exponent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dpclaims.claims.standard import ValueExperiment


def value_with_exponents(
    claim,
    *,
    compute: Callable,
    exponents: Mapping[str, str],
    expected: Mapping[str, float] | None = None,
    rtol: float = 1e-6,
    atol: float = 0.0,
    note: str = "",
    transcription: bool = False,
) -> ValueExperiment:
    """A :class:`ValueExperiment` of ``compute`` expecting ``expected`` and, for each
    ``key: variable`` of ``exponents``, the claim's exponent of ``variable`` (read from the claim
    rather than restated in the table)."""
    claimed = {key: float(claim.exponents[variable]) for key, variable in exponents.items()}
    return ValueExperiment(
        compute,
        {**(expected or {}), **claimed},
        rtol=rtol,
        atol=atol,
        note=note,
        transcription=transcription,
    )
