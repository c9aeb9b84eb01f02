"""Pure ε-DP SCO with heavy-tailed gradients (Lowy 2026, spec 003), one module per job.

Spec tags (kept from ``shared/papers/003_pure_dp_heavy_tailed_sco.md``): **[H]** the paper's prose
or proof fixes the formula; **[M]** the form is forced by the proof, constants or logs are the
spec's; **[L]** a plausible reading.  The paper's seven algorithm boxes were lost; this package
implements the spec's reconstructions:

* :mod:`.formulas` — schedule constants, :func:`gamma_radius` (``q(d, β)`` with
  ``P(Gamma(d, 1) > q) ≤ β``, closed form ``2(d + ln 1/β)`` [M]), :func:`c_a`, :func:`clip_level`;
* :mod:`.noise` — :func:`l2_laplace` (``Lap₂(d, b)``: density ∝ ``exp(−‖ξ‖/b)``, radius
  ``Gamma(d, b)`` [H]) and :class:`L2LaplaceMechanism`;
* :mod:`.domains` — :class:`Ball`, :class:`Ellipsoid`, :class:`Polytope` and
  :func:`inexact_projection` (InexactProj, Lemma 2.8 / C.6 [H]);
* :mod:`.extension1d` — :class:`ClippedSlopes1D`, the 1-d Lipschitz extension as derivative
  clipping (§2.0 identity, PV-1): exact minimizers of ``F̂_{C,λ}`` for absolute / hinge / linear
  losses in ``O(n log n)``;
* :mod:`.adapsg` — :func:`adapsg`, Algorithm 3 (Prop 2.9 / C.5) [M], and :func:`joint_objective`,
  Φ of Lemma 2.7 / C.4 [H];
* :mod:`.pv2` — :func:`pv2_minimize` (``solver="pv2"``, d ≥ 2), the spec's PV-2 certified
  structured solver for the Cor D.7 losses on balls, ellipsoids and polytopes: batched FISTA on
  the box dual, stopped at a duality gap that certifies ``‖w − argmin‖ ≤ τ/2``; equals the paper's
  𝒲-extension wherever each heavy record's kink-hyperplane foot lies in 𝒲, else the extension
  over ℝ^d (labelled deviation);
* :mod:`.stage` — the certified stage solve shared by Algorithms 2 and 4, the §7(a)
  :class:`WorstValidPoint` harness and :class:`HeavyTailedRun`;
* :mod:`.localize` (:class:`OutPertLocalize`, Algorithm 2, Lemma 2.4),
  :mod:`.double_output_pert` (:class:`DoubleOutputPert`, Algorithm 4, Prop 3.2) and
  :mod:`.pop_localize` (:class:`PopLocalize`, Algorithm 1, Thm 2.1 / 3.1).

Everything is pure ε-DP (δ = 0) under replace-one at item level (m = 1): every ``from_theorem``
takes a :class:`~dpclaims.problem.Problem` with ``m = 1`` and ``delta = 0``.  Known-buggy
variants live in :mod:`dpclaims.targets.mutants.pure_dp_heavy_tails`.
"""

from __future__ import annotations

from dpclaims.algorithms.pure_dp_heavy_tails.adapsg import (
    ADAPSG_MAX_ITERATIONS,
    AdaPSGResult,
    adapsg,
    joint_objective,
)
from dpclaims.algorithms.pure_dp_heavy_tails.domains import (
    ELLIPSOID_NEWTON_STEPS,
    Ball,
    Ellipsoid,
    Polytope,
    inexact_projection,
)
from dpclaims.algorithms.pure_dp_heavy_tails.double_output_pert import DoubleOutputPert, StageOne
from dpclaims.algorithms.pure_dp_heavy_tails.extension1d import ClippedSlopes1D
from dpclaims.algorithms.pure_dp_heavy_tails.formulas import (
    BETA0_STRICT,
    C_J,
    C_LAMBDA,
    C_STAB,
    PAPER_ID,
    c_a,
    clip_level,
    gamma_radius,
)
from dpclaims.algorithms.pure_dp_heavy_tails.localize import OutPertLocalize
from dpclaims.algorithms.pure_dp_heavy_tails.noise import L2LaplaceMechanism, l2_laplace
from dpclaims.algorithms.pure_dp_heavy_tails.pop_localize import PopLocalize
from dpclaims.algorithms.pure_dp_heavy_tails.pv2 import (
    PV2_MAX_ITERATIONS,
    PolyhedralTerms,
    PV2Result,
    polyhedral_form,
    pv2_minimize,
)
from dpclaims.algorithms.pure_dp_heavy_tails.stage import HeavyTailedRun, WorstValidPoint

__all__ = [
    "PAPER_ID",
    "C_J",
    "C_STAB",
    "C_LAMBDA",
    "BETA0_STRICT",
    "ADAPSG_MAX_ITERATIONS",
    "gamma_radius",
    "c_a",
    "clip_level",
    "l2_laplace",
    "L2LaplaceMechanism",
    "Ball",
    "Ellipsoid",
    "Polytope",
    "ELLIPSOID_NEWTON_STEPS",
    "inexact_projection",
    "ClippedSlopes1D",
    "adapsg",
    "AdaPSGResult",
    "joint_objective",
    "WorstValidPoint",
    "OutPertLocalize",
    "DoubleOutputPert",
    "StageOne",
    "PopLocalize",
    "HeavyTailedRun",
    "PV2_MAX_ITERATIONS",
    "PolyhedralTerms",
    "polyhedral_form",
    "pv2_minimize",
    "PV2Result",
]
