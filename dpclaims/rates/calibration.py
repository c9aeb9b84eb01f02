"""False findings and power of confirmed rate verdicts, simulated on registry-shaped sweeps.

A synthetic sweep has a known exponent: at grid value ``v`` replicate ``r`` has error
``v^slope · exp(σ_v z)`` with ``z`` standard normal, on the grid, replicate count,
per-grid-value log-noise ``σ_v`` and margin of a rate experiment's design
(:data:`REGISTRY_SHAPES`, a fixed snapshot of the quick-budget designs;
:func:`shapes_from_results` measures the designs of any results document).  Each simulated
claim gets the finding rule of ``dpclaims verify``: :func:`~dpclaims.rates.fit.fit_power_law`,
:func:`~dpclaims.rates.verdict.check_exponent` at its default level with the two-sided
(``order``) band test, :func:`~dpclaims.rates.caveats.sweep_caveats`; a first-run
``inconsistent`` is rerun on fresh noise and stands only when the rerun is ``inconsistent`` on
the same side.  The true exponent lies at the band's upper edge or beyond it, the side a
one-sided upper-bound claim (in the large limit) can fail on, so the two-sided test finds what
that one-sided test would, plus rare findings on the other side (a lower bound mirrors it).
The trivial and wrong-rate controls and the exponent reach (:mod:`dpclaims.rates.controls`) are
not simulated: they only turn a ``consistent`` into ``consistent_weak`` and never make or remove
a finding.

* **False findings** — the claim is true with its exponent at the edge of its band
  (``slope = expected + margin``, the worst case for a band test): the fraction of claims
  with a confirmed finding.
* **Power** — the claim is wrong by ``gap`` beyond its band (``slope = expected + margin +
  gap``): the fraction with a confirmed finding, over the designs that can see such a gap
  at all (:meth:`SweepShape.detectable_gap` ≤ ``gap``, decided from the design before
  simulating).  Confirmation cannot give a design power it lacks in one run; the others
  are listed as underpowered.

:func:`simulate` gives both with one-sided Clopper–Pearson bounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError, check_confidence, check_positive, check_trials
from ..vocabulary import Verdict
from .caveats import apply_caveats, sweep_caveats
from .fit import fit_power_law
from .verdict import check_exponent

__all__ = [
    "SweepShape",
    "REGISTRY_SHAPES",
    "Rate",
    "Calibration",
    "shapes_from_results",
    "simulate",
]


@dataclass(frozen=True, kw_only=True)
class SweepShape:
    """A rate experiment's design: grid (G,), replicates, log-noise per value (G,), margin."""

    name: str
    values: tuple[float, ...]
    replicates: int
    sigma: tuple[float, ...]
    margin: float

    @classmethod
    def from_row(cls, row: tuple) -> SweepShape:
        """From ``(name, values, replicates, sigma, margin)``, a row of a design table."""
        name, values, replicates, sigma, margin = row
        return cls(
            name=name,
            values=tuple(float(v) for v in values),
            replicates=replicates,
            sigma=tuple(sigma),
            margin=margin,
        )

    @property
    def slope_stderr(self) -> float:
        """Standard error of the OLS log-log slope with this noise: ``sqrt(Σ w_i² σ_i² / R)``."""
        x = np.log(np.asarray(self.values))
        weights = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
        return float(np.sqrt(np.sum(weights**2 * np.asarray(self.sigma) ** 2) / self.replicates))

    def detectable_gap(self, power: float = 0.95) -> float:
        """The distance beyond the band that one run detects with about ``power``:
        ``(t_{0.95, GR-2} + z_power) · slope_stderr`` (one side of the 90 % interval).  An
        approximation from the design alone (OLS with the known noise): the fit's interval is
        the hull of its HC3 t and bootstrap intervals, which the simulation uses."""
        df = len(self.values) * self.replicates - 2
        return float(
            (stats.t.ppf(0.95, df) + stats.norm.ppf(check_confidence(power))) * self.slope_stderr
        )

    def errors(self, slope: float, rng: np.random.Generator) -> np.ndarray:
        """One synthetic sweep with exponent ``slope``: (G, R)."""
        v, s = np.asarray(self.values), np.asarray(self.sigma)
        z = rng.standard_normal((v.size, self.replicates))
        return v[:, None] ** slope * np.exp(s[:, None] * z)


# fmt: off
_REGISTRY_DESIGNS = (
    # name, grid (G,), replicates, sd of log error per grid value (G,), margin
    ("lla24.alg1.risk", (4000, 8000, 16000, 40000), 3, (0.013, 0.024, 0.054, 0.039), 0.15),
    ("lla24.alg1.suboptimality", (4000, 8000, 16000, 40000), 3, (0.011, 0.017, 0.006, 0.03), 0.5),
    ("lla24.lemma23.stability", (64, 256, 1024, 4096), 3, (0.003, 0.013, 0.027, 0.012), 0.1),
    ("lla24.alg3.risk.stat", (4000, 8000, 16000, 32000, 64000), 10,
     (1.134, 0.957, 0.944, 1.528, 1.091), 0.15),
    ("lla24.alg3.risk.priv", (4000, 8000, 16000, 40000), 2, (0.908, 1.043, 0.181, 0.455), 0.15),
    ("lla24.lemma35.variance", (10, 20, 40, 80, 160), 3, (0.009, 0.046, 0.077, 0.007, 0.005), 0.1),
    ("lla24.lemmaD1.smoothing", (0.001, 0.01, 0.1, 1), 3, (0.002, 0.011, 0.013, 0.018), 0.1),
    ("lla24.alg3sc.risk.priv", (1, 2, 4, 10), 4, (2.147, 1.037, 0.993, 1.096), 0.15),
    ("lla24.lb.lsa21.stat", (1000, 4000, 16000, 64000), 30, (0.913, 1.052, 0.928, 0.96), 0.15),
    ("lla24.lb.lsa21.priv", (4000, 8000, 16000, 40000), 2, (0.607, 0.758, 0.245, 0.328), 0.15),
    ("ghazi23.appC.fast_noise", (10000, 100000, 1000000, 10000000), 3,
     (0.02, 0.018, 0.025, 0.064), 0.1),
    ("ghazi23.lemma38.perm_concentration", (4, 16, 64, 256, 1024), 4,
     (0.0, 0.0, 0.063, 0.002, 0.018), 0.1),
    ("ghazi23.thm36.deletion_sensitivity", (30, 66, 140, 310), 12,
     (0.311, 0.191, 0.182, 0.36), 0.15),
    ("ghazi23.cor37.radius_r", (200, 440, 960, 2100), 4, (0.042, 0.03, 0.061, 0.051), 0.15),
    ("ghazi23.propB1.emp_vs_pop", (1, 10, 100, 1000, 10000), 40,
     (0.428, 0.454, 0.47, 0.385, 0.422), 0.1),
    ("ghazi23.thm41.convex_erm", (200, 440, 960, 2100), 3, (0.017, 0.014, 0.016, 0.027), 0.15),
    ("ghazi23.thm43.sc_erm", (20000, 44000, 96000, 210000), 8, (0.097, 0.152, 0.102, 0.146), 0.15),
    ("ghazi23.thm51.convex_sco.privacy_term", (128, 280, 600, 1300), 3,
     (0.006, 0.006, 0.006, 0.011), 0.15),
    ("ghazi23.thm51.convex_sco.statistical_term[sweep of n]", (4096, 8192, 16384, 32768, 65536), 3,
     (0.342, 0.235, 0.198, 0.37, 0.321), 0.15),
    ("ghazi23.thm51.convex_sco.statistical_term[sweep of m]",
     (100, 1000, 10000, 100000, 1000000, 10000000, 100000000), 3,
     (0.007, 0.046, 0.009, 0.045, 0.04, 0.052, 0.08), 0.15),
    ("ghazi23.thm53.sc_sco.privacy_term", (256, 512, 1024, 2048, 4096), 3,
     (0.009, 0.007, 0.012, 0.016, 0.007), 0.15),
    ("ghazi23.thm53.sc_sco.statistical_term", (4096, 8192, 16384, 32768, 65536), 6,
     (0.154, 0.248, 0.104, 0.359, 0.321), 0.15),
    ("ghazi23.remark.worst_case_erm", (1, 10, 100, 1000, 10000), 4,
     (0.01, 0.01, 0.011, 0.01, 0.006), 0.1),
    ("ghazi23.table1.item_convex_erm[n]", (250, 500, 1000, 2500), 3,
     (0.027, 0.008, 0.01, 0.004), 0.15),
    ("ghazi23.table1.item_convex_erm[d]", (16, 64, 256, 1024), 3,
     (0.028, 0.008, 0.003, 0.001), 0.15),
    ("ghazi23.table1.item_sc_erm", (100, 400, 1600, 6400), 3, (0.02, 0.028, 0.024, 0.02), 0.1),
    ("ghazi23.table1.item_convex_sco[n_statistical]", (1000, 3000, 10000, 30000), 3,
     (0.047, 0.054, 0.249, 0.17), 0.15),
    ("ghazi23.table1.item_convex_sco[n_privacy]", (250, 500, 1000, 2500), 3,
     (0.008, 0.009, 0.03, 0.008), 0.15),
    ("ghazi23.table1.item_convex_sco[d]", (16, 64, 256, 1024), 3,
     (0.006, 0.009, 0.007, 0.001), 0.15),
    ("ghazi23.table1.item_sc_sco", (10000, 31623, 100000, 316228), 20,
     (0.405, 0.32, 0.456, 0.306), 0.15),
    ("ghazi23.baseline.naive_user_outpert", (1, 10, 100, 1000, 10000), 3,
     (0.042, 0.011, 0.034, 0.024, 0.033), 0.1),
    ("cgt24.v1.sensitivity", (1, 2, 4, 8, 16), 3, (0.045, 0.009, 0.009, 0.015, 0.095), 0.1),
    ("cgt24.v1.gradnorm_decay", (2, 4, 8, 16, 32), 3, (0.063, 0.067, 0.07, 0.034, 0.076), 0.1),
    ("cgt24.v1.rate.statistical", (1024, 4096, 16384, 65536), 5, (0.135, 0.131, 0.116, 0.081), 0.1),
    ("cgt24.v1.rate.privacy[slope in n]", (4096, 8192, 16384, 32768, 65536), 3,
     (0.045, 0.051, 0.213, 0.196, 0.174), 0.15),
    ("cgt24.v2.rate.statistical", (4096, 8192, 16384, 32768, 65536), 3,
     (0.053, 0.018, 0.013, 0.003, 0.01), 0.1),
    ("cgt24.v2.rate.batch_flat", (4, 8, 16, 32, 64), 3, (0.012, 0.039, 0.046, 0.032, 0.042), 0.15),
    ("cgt24.indep.rate", (16, 64, 256, 1024), 6, (0.18, 0.16, 0.207, 0.161), 0.1),
    ("cgt24.srg.error", (16, 64, 256, 1024), 10, (0.099, 0.139, 0.229, 0.159), 0.1),
    ("lowy26.erm.double_output_pert_distance[n]", (1000, 2154, 4642, 10000), 4,
     (0.087, 0.069, 0.134, 0.063), 0.1),
    ("lowy26.erm.double_output_pert_distance[eps]", (0.25, 0.5, 1, 2, 4), 3,
     (0.085, 0.019, 0.115, 0.104, 0.051), 0.1),
    ("lowy26.erm.double_output_pert_distance[d]", (1, 2, 4, 8, 16), 3,
     (0.074, 0.124, 0.052, 0.043, 0.011), 0.1),
    ("lowy26.reduction.pop_localization", (1000, 2154, 4642, 10000), 3,
     (0.031, 0.023, 0.016, 0.013), 0.1),
    ("lowy26.sco.upper.private_term", (1000, 2154, 4642, 10000), 3,
     (0.082, 0.051, 0.028, 0.034), 0.1),
    ("lowy26.sco.upper.nonprivate_term", (1000, 2154, 4642, 10000), 8,
     (0.109, 0.08, 0.137, 0.113), 0.1),
    ("diff2gd.thm43.utility[N]", (640, 1280, 2560, 6400), 3, (0.003, 0.006, 0.009, 0.026), 0.1),
    ("diff2gd.thm43.utility[d]", (8, 16, 32, 64, 128), 3, (0.006, 0.009, 0.007, 0.008, 0.007), 0.1),
    ("dpgd.utility[N]", (640, 1280, 2560, 6400), 3, (0.008, 0.004, 0.002, 0.001), 0.1),
    ("dpgd.utility[d]", (8, 16, 32, 64, 128), 3, (0.005, 0.005, 0.003, 0.004, 0.003), 0.1),
    ("diff2gd.remark44.improvement_regime", (640, 1280, 2560, 6400), 3,
     (0.014, 0.016, 0.005, 0.016), 0.1),
    ("cited.dp_sgd", (200, 400, 800, 2000), 2, (0.088, 0.078, 0.118, 0.087), 0.1),
)
REGISTRY_SHAPES: tuple[SweepShape, ...] = tuple(
    SweepShape.from_row(row) for row in _REGISTRY_DESIGNS
)
# fmt: on
"""A snapshot of 51 stochastic rate designs at the quick budget (grid, replicates, margin, and the
standard deviation of log error over replicates at each grid value), measured on ``dpclaims
verify --seed 0`` at the quick budget before issue #36 redesigned some of them.  Since then
``lla24.alg3.risk.stat`` runs 20 replicates (10 here);
``ghazi23.thm51.convex_sco.statistical_term[sweep of n]`` is the claim
``ghazi23.thm51.convex_sco.rate_in_n``; ``cgt24.v1.rate.privacy``,
``lowy26.reduction.pop_localization`` and ``lowy26.sco.upper.private_term`` sweep other
families; the lower-bound sweeps of Ghazi et al.'s Appendix D are new.  The simulation needs
realistic designs, not the current ones: :func:`shapes_from_results` gives those from any
results.json.  Left out: deterministic sweeps (iteration counts, formulas) whose replicates agree
exactly."""


def _rate_leaves(result: Mapping[str, Any], name: str):
    evidence = result.get("evidence") or {}
    if isinstance(evidence.get("parts"), Mapping):
        for part, sub in evidence["parts"].items():
            yield from _rate_leaves(sub, f"{name}[{part}]")
    elif result.get("type") == "rate" and "sweep" in evidence:
        yield name, evidence


def shapes_from_results(results: Mapping[str, Any]) -> list[SweepShape]:
    """The design and log-noise of every stochastic rate sweep in a results document.

    A sweep whose replicates agree to 1e-9 in log error at every grid value (a deterministic
    count) is left out: it has no sampling noise to calibrate against.
    """
    shapes = []
    for entry in results["claims"]:
        if entry["verdict"] in (Verdict.NOT_CHECKABLE, Verdict.NOT_IMPLEMENTED, Verdict.ERROR):
            continue
        for name, evidence in _rate_leaves(entry, entry["id"]):
            sweep = evidence["sweep"]
            logs = np.log(np.asarray(sweep["errors"], dtype=float))
            if logs.ndim != 2 or logs.shape[1] < 2:
                continue
            sigma = logs.std(axis=1, ddof=1)
            if np.all(sigma < 1e-9):
                continue
            shapes.append(
                SweepShape(
                    name=name,
                    values=tuple(float(v) for v in sweep["values"]),
                    replicates=int(logs.shape[1]),
                    sigma=tuple(round(float(s), 3) for s in sigma),
                    margin=float(evidence["check"]["margin"]),
                )
            )
    return shapes


@dataclass(frozen=True)
class Rate:
    """A simulated proportion ``hits / trials``; one-sided Clopper–Pearson bounds."""

    hits: int
    trials: int
    confidence: float

    @property
    def estimate(self) -> float:
        return self.hits / self.trials

    @property
    def interval(self) -> tuple[float, float]:
        """(lower, upper): each a one-sided exact binomial bound at ``confidence``."""
        ci = stats.binomtest(self.hits, self.trials).proportion_ci(
            2 * self.confidence - 1, method="exact"
        )
        return (float(ci.low), float(ci.high))

    def to_dict(self) -> dict:
        return {
            "hits": self.hits,
            "trials": self.trials,
            "estimate": self.estimate,
            "interval": list(self.interval),
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class Calibration:
    """Outcome of :func:`simulate`: first-run and confirmed rates under the null (edge of the band,
    every design) and under a gap of ``gap`` beyond the band (designs that can detect it)."""

    false_first: Rate
    false_confirmed: Rate
    power_first: Rate
    power_confirmed: Rate
    gap: float
    shapes: tuple[str, ...]
    underpowered: tuple[str, ...]

    def summary(self) -> str:
        def show(rate: Rate) -> str:
            lo, hi = rate.interval
            return f"{rate.estimate:.4f} [{lo:.4f}, {hi:.4f}] ({rate.hits}/{rate.trials})"

        return (
            f"false findings per claim: first run {show(self.false_first)}, confirmed "
            f"{show(self.false_confirmed)}; power at a gap of {self.gap:g} beyond the band: "
            f"first run {show(self.power_first)}, confirmed {show(self.power_confirmed)}; "
            f"{len(self.shapes)} designs, {len(self.underpowered)} of them unable to detect "
            "the gap "
            "in one run and left out "
            f"of the power: {', '.join(self.underpowered) or 'none'}"
        )


def _finding(shape: SweepShape, slope: float, rng: np.random.Generator, seed: int) -> str | None:
    """The side (``"slower"``/``"faster"``) of an inconsistent verdict on one synthetic sweep."""
    errors = shape.errors(slope, rng)
    fit = fit_power_law(shape.values, errors, seed=seed)
    check = check_exponent(fit, 0.0, margin=shape.margin)
    band = (-shape.margin, shape.margin)
    verdict = apply_caveats(check.verdict, sweep_caveats(fit, shape.values, errors, band=band))
    return check.direction if verdict == Verdict.INCONSISTENT else None


def _run(shapes: Sequence[SweepShape], offset: float, trials: int, seed: int) -> tuple[int, int]:
    """(first-run findings, confirmed findings) over ``trials`` claims cycling through ``shapes``;
    each claim's exponent is ``expected + margin + offset`` (expected = 0: fits are scale-free)."""
    first = confirmed = 0
    for trial in range(trials):
        shape = shapes[trial % len(shapes)]
        rng = np.random.default_rng([seed, trial])
        slope = shape.margin + offset
        side = _finding(shape, slope, rng, seed=2 * trial)
        if side is None:
            continue
        first += 1
        confirmed += _finding(shape, slope, rng, seed=2 * trial + 1) == side
    return first, confirmed


def simulate(
    shapes: Sequence[SweepShape] = REGISTRY_SHAPES,
    *,
    null_trials: int = 1000,
    power_trials: int = 200,
    gap: float = 0.3,
    seed: int = 0,
    confidence: float = 0.95,
) -> Calibration:
    """Simulate confirmed rate verdicts on synthetic sweeps with known exponents.

    Parameters
    ----------
    shapes : the designs to imitate; simulated claims cycle through them
    null_trials : claims whose exponent is at the edge of their band (true claims)
    power_trials : claims whose exponent is ``gap`` beyond the edge (wrong claims), on the designs
        with :meth:`SweepShape.detectable_gap` ≤ ``gap``
    gap : how far beyond the band a wrong claim's exponent lies
    seed : seed of the noise and the fits' bootstraps
    confidence : level of each one-sided Clopper–Pearson bound

    Returns
    -------
    Calibration
    """
    if not shapes:
        raise InputError("shapes must list at least one SweepShape; pass e.g. REGISTRY_SHAPES")
    null_trials = check_trials(null_trials, "null_trials")
    power_trials = check_trials(power_trials, "power_trials")
    confidence = check_confidence(confidence)
    gap = check_positive(gap, "gap")
    powered = [s for s in shapes if s.detectable_gap() <= gap]
    if not powered:
        raise InputError(
            f"no design can detect a gap of {gap:g} in one run; pass a larger gap or other shapes"
        )
    false_first, false_confirmed = _run(shapes, 0.0, null_trials, seed)
    power_first, power_confirmed = _run(powered, float(gap), power_trials, seed + 1)
    return Calibration(
        false_first=Rate(hits=false_first, trials=null_trials, confidence=confidence),
        false_confirmed=Rate(hits=false_confirmed, trials=null_trials, confidence=confidence),
        power_first=Rate(hits=power_first, trials=power_trials, confidence=confidence),
        power_confirmed=Rate(hits=power_confirmed, trials=power_trials, confidence=confidence),
        gap=float(gap),
        shapes=tuple(s.name for s in shapes),
        underpowered=tuple(s.name for s in shapes if s not in powered),
    )
