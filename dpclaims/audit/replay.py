"""Coupled replay: both neighbours on the same random stream, read without statistics.

:func:`replay` runs ``mechanism`` on ``d0`` and on ``d1`` with the *same* seed, so on each
trial the two runs draw the same randomness and differ only through the data (the grey-box
idea of Re:cord-play, PETS 2026).  It then reports what needs no statistics:

- *identical* — the outputs are equal on every trial: this pair shows nothing (other pairs
  may leak: replay never certifies privacy);
- *infinite* — the outputs' widths differ: an output one dataset gives and the other cannot,
  ε = ∞ on this pair, certain;
- *point-mass* — a column is one constant on every trial of one dataset while the other
  dataset's column is continuous and never took that value: ε = ∞ if the other side cannot
  give it, but not seeing an atom in N trials does not make its probability 0, so the replay
  reports the finite bound the counts certify (:func:`_point_mass_bound`: ≈ ln(N / 4.4),
  5.43 at N = 1,000, on a one-column output at confidence 0.95); discrete rows seen on one
  side only are reported as a support difference *seen* (not certain: a rare value may just
  not have come up);
- *sensitivity* — for mechanisms that draw their noise through :mod:`dpclaims.noise`, the
  sensitivity each noisy release realises on this pair (the distance of the two noiseless
  values under the same noise, in the declared norm) exceeds the declared one;
- *differs* — the outputs differ and nothing above is seen: audit the pair for a bound.

It is a falsification check, never a certification: "identical" or "differs" say nothing
about ε; :attr:`ReplayResult.epsilon_lower` is the lower bound on ε it certifies on the pair.
It answers in the time of ``2 × trials`` mechanism runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import noise
from ..data import read_only
from ..errors import InputError, check_confidence, check_delta, check_trials
from ..execution import as_batched, call_block, child_seed
from .bounds import alpha_per_test, epsilon_from_rates, rate_upper
from .scores import is_discrete, unique_rows

__all__ = ["replay", "ReplayResult", "SensitivityCheck", "NOT_A_CERTIFICATE"]

NOT_A_CERTIFICATE = (
    "a coupled replay is a falsification check on this one pair, never a certification of privacy"
)

REPLAY_FINDINGS = ("infinite", "point-mass", "sensitivity", "support", "differs", "identical")
"""The headline finding, most telling first."""

_TOLERANCE = 1e-9
"""Relative slack on the declared sensitivity (float rounding of the noiseless values)."""


def _fraction(ratio: float) -> str:
    """``0.5`` as ``"1/2"`` when it is one over a whole number, else ``"0.37×"``."""
    inverse = 1.0 / ratio
    if abs(inverse - round(inverse)) < 1e-6 * inverse and round(inverse) > 1:
        return f"1/{round(inverse)}"
    return f"{ratio:.3g}×"


@dataclass(frozen=True)
class SensitivityCheck:
    """One noisy release of :mod:`dpclaims.noise` on this pair: the sensitivity it realises
    (largest over trials of ‖value0 − value1‖ in the declared ``norm``, at ``trial``) against
    the declared one; ``epsilon_pair``: the release's own privacy loss on this pair
    (realised / b for Laplace; for Gaussian the GDP μ = realised / σ)."""

    release: int
    kind: str
    norm: int
    declared: float
    realised: float
    scale: float
    trial: int

    @property
    def exceeded(self) -> bool:
        return self.realised > self.declared * (1 + _TOLERANCE)

    @property
    def epsilon_pair(self) -> float:
        return self.realised / self.scale

    def describe(self) -> str:
        loss = "ε" if self.kind == "laplace" else "μ (GDP)"
        line = (
            f"release {self.release} ({self.kind}, l{self.norm}): realised "
            f"{self.realised:.6g} {'>' if self.exceeded else '<='} declared {self.declared:.6g}"
        )
        if self.exceeded:
            line += (
                f": the noise is calibrated for {_fraction(self.declared / self.realised)} of "
                f"the sensitivity (trial {self.trial}; {loss} of this release on this pair "
                f"{self.epsilon_pair:.4g})"
            )
        return line

    def to_dict(self) -> dict:
        return {
            "release": self.release,
            "kind": self.kind,
            "norm": self.norm,
            "declared": self.declared,
            "realised": self.realised,
            "scale": self.scale,
            "trial": self.trial,
            "exceeded": self.exceeded,
            "epsilon_pair": self.epsilon_pair,
        }


@dataclass(frozen=True)
class ReplayResult:
    """What a coupled replay saw: the headline ``finding`` (one of :data:`REPLAY_FINDINGS`), the
    lines that say it, how many trials differ, and the sensitivity of each recorded release.
    ``epsilon_lower``: the ε the replay certifies on this pair at ``confidence`` for a claim's
    ``delta`` (∞ when the widths differ, the largest point-mass bound, else 0).
    ``certified`` is always False: it never certifies privacy (:data:`NOT_A_CERTIFICATE`)."""

    finding: str
    lines: tuple
    trials: int
    seed: int
    differing_trials: int
    sensitivity: tuple = ()
    epsilon_lower: float = 0.0
    confidence: float = 0.95
    delta: float = 0.0
    certified: bool = False

    @property
    def infinite(self) -> bool:
        """ε = ∞ on this pair, certain (the outputs' widths differ)."""
        return self.finding == "infinite"

    def refutes(self, epsilon: float) -> bool:
        """Whether the replay's bound refutes a claimed ``epsilon`` (at ``delta``)."""
        return self.epsilon_lower > epsilon

    def summary(self) -> str:
        return "\n".join([*self.lines, f"note: {NOT_A_CERTIFICATE}"])

    def to_dict(self) -> dict:
        return {
            "finding": self.finding,
            "lines": list(self.lines),
            "trials": self.trials,
            "seed": self.seed,
            "differing_trials": self.differing_trials,
            "sensitivity": [check.to_dict() for check in self.sensitivity],
            "epsilon_lower": None if self.infinite else self.epsilon_lower,
            "confidence": self.confidence,
            "delta": self.delta,
            "certified": False,
            "note": NOT_A_CERTIFICATE,
        }


def _run(mechanism, data, seed: int, trials: int) -> tuple[np.ndarray, list]:
    with noise.recording() as releases:
        outputs = call_block(mechanism, read_only(data), child_seed(seed, 0), index=0, size=trials)
    return outputs, releases


def _point_mass_bound(n_a: int, n_b: int, alpha: float, delta: float) -> float:
    """The ε a point mass certifies: side A gave the constant ``c`` on all ``n_a`` trials (the
    first chose ``c``, so ``n_a - 1`` count), side B on none of its ``n_b``.  Exact one-sided
    Clopper–Pearson bounds, failing with probability ``alpha / 2`` each (the two sides share a
    random stream, so a union bound), give ``p_A >= p_A_low``, ``p_B <= p_B_high`` and
    ``ε >= ln((p_A_low - δ) / p_B_high)`` (0 when the numerator is not positive)."""
    p_b_high = rate_upper(0, n_b, alpha / 2)
    p_a_miss = rate_upper(0, n_a - 1, alpha / 2)  # 1 - p_A_low
    return float(epsilon_from_rates(p_b_high, p_a_miss, delta))


def _point_masses(
    x0: np.ndarray, x1: np.ndarray, confidence: float, delta: float
) -> list[tuple[float, str]]:
    """``(ε bound, line)`` of each column constant on every trial of one side whose other side
    is continuous (all values distinct) and never that constant; the bounds hold jointly at
    ``confidence`` (a union bound over the 2 × width column-and-side candidates)."""
    alpha = alpha_per_test(confidence, 2 * x0.shape[1])
    out = []
    for j in range(x0.shape[1]):
        for (a, na), (b, nb) in (((x0, "d0"), (x1, "d1")), ((x1, "d1"), (x0, "d0"))):
            column, other = a[:, j], b[:, j]
            if (
                len(column) > 1
                and np.all(column == column[0])
                and len(np.unique(other)) == len(other)
                and not np.any(other == column[0])
            ):
                bound = _point_mass_bound(len(column), len(other), alpha, delta)
                out.append(
                    (
                        bound,
                        f"point mass: ε >= {bound:.4g} at confidence {confidence:g} on this "
                        f"pair (δ = {delta:g}): column {j} is {column[0]:g} on every trial of "
                        f"{na}, a value {nb} never gave in {len(other)} trials (continuous "
                        f"there; trial 0: {other[0]:.6g}); ε = ∞ only if {nb} cannot give it "
                        "(seen, not certain)",
                    )
                )
    return out


def _support(x0: np.ndarray, x1: np.ndarray) -> list[str]:
    """Discrete outputs: rows one side gave that the other never gave, with a trial."""
    if not (is_discrete(x0) and is_discrete(x1)):
        return []
    rows0, rows1 = unique_rows(x0)[0], unique_rows(x1)[0]
    seen0, seen1 = {tuple(r) for r in rows0}, {tuple(r) for r in rows1}
    out = []
    for x, name, own, other, label in (
        (x1, "d1", seen1, seen0, "d0"),
        (x0, "d0", seen0, seen1, "d1"),
    ):
        for row in sorted(own - other)[:2]:
            hits = np.flatnonzero(np.all(x == np.array(row), axis=1))
            out.append(
                f"{name} gave {list(row)} on {len(hits)} of {len(x)} trials (first: trial "
                f"{hits[0]}), {label} never did: ε = ∞ on this pair if {label} cannot give it "
                "(seen, not certain)"
            )
    return out


def _sensitivity(r0: list, r1: list, trials: int) -> tuple[list, list[str]]:
    if len(r0) != len(r1):
        return [], [
            f"the mechanism made {len(r0)} noisy releases on d0 but {len(r1)} on d1: their "
            "control flow depends on the data"
        ]
    checks = []
    for i, (a, b) in enumerate(zip(r0, r1, strict=True)):
        v0, v1 = np.atleast_2d(a.value), np.atleast_2d(b.value)
        if v0.shape[1:] != v1.shape[1:] or a.kind != b.kind:
            return checks, [f"release {i} differs in kind or shape between d0 and d1"]
        distance = np.linalg.norm((v0 - v1).reshape(max(len(v0), len(v1)), -1), ord=a.norm, axis=1)
        worst = int(np.argmax(distance))
        checks.append(
            SensitivityCheck(
                release=i,
                kind=a.kind,
                norm=a.norm,
                declared=max(a.sensitivity, b.sensitivity),
                realised=float(distance[worst]),
                scale=min(a.scale, b.scale),
                trial=worst if len(distance) == trials else 0,
            )
        )
    return checks, []


def replay(
    mechanism: Any,
    d0: Any,
    d1: Any,
    *,
    trials: int = 1_000,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 0.0,
) -> ReplayResult:
    """Run ``d0`` and ``d1`` on the same random stream and report what needs no statistics.

    Parameters
    ----------
    mechanism : as for :func:`~dpclaims.audit.audit` (it must draw all its randomness from
        the ``rng`` it is given, else the coupling is lost and the outputs differ anyway)
    d0, d1 : the pair (any data the mechanism takes)
    trials : coupled trials (each a run on d0 and one on d1 with the same seed)
    seed : both runs draw from ``child_seed(seed, 0)``
    confidence : of the point-mass bounds (jointly)
    delta : the claim's δ, for the point-mass bounds

    Returns
    -------
    ReplayResult — a falsification, never a certificate (module docstring)
    """
    trials = check_trials(trials, "trials")
    confidence, delta = check_confidence(confidence), check_delta(delta)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    batched = as_batched(mechanism)
    x0, r0 = _run(batched, d0, int(seed), trials)
    x1, r1 = _run(batched, d1, int(seed), trials)
    checks: list = []
    masses: list = []
    if x0.shape[1] != x1.shape[1]:
        differing = trials
        found = {
            "infinite": [
                f"ε = ∞ on this pair (certain): the outputs have {x0.shape[1]} columns on d0 "
                f"but {x1.shape[1]} on d1 (trial 0 onwards)"
            ]
        }
    else:
        differing = int(np.count_nonzero(np.any(x0 != x1, axis=1)))
        checks, notes = _sensitivity(r0, r1, trials)
        masses = _point_masses(x0, x1, confidence, delta)
        found = {
            "point-mass": [line for _, line in masses],
            "sensitivity": [c.describe() for c in checks if c.exceeded],
            "support": _support(x0, x1),
        }
        found["differs"] = notes
        if differing:
            gap = float(np.max(np.abs(x0 - x1)))
            stronger = any(found[kind] for kind in ("point-mass", "sensitivity", "support"))
            found["differs"].append(
                f"the outputs differ on {differing} of {trials} coupled trials (by up to "
                f"{gap:.4g})"
                + ("" if stronger else "; replay sees no certain leak: audit the pair for a bound")
            )
    finding = next((kind for kind in REPLAY_FINDINGS[:-1] if found.get(kind)), "identical")
    lines = [line for kind in REPLAY_FINDINGS[:-1] for line in found.get(kind, [])]
    if finding == "identical":
        lines = [
            f"outputs identical on all {trials} coupled trials: this pair shows nothing "
            "(no leakage on it; other pairs may leak)"
        ]
    lines += [c.describe() for c in checks if not c.exceeded]
    bound = math.inf if found.get("infinite") else max((b for b, _ in masses), default=0.0)
    return ReplayResult(
        finding=finding,
        lines=tuple(lines),
        trials=trials,
        seed=int(seed),
        differing_trials=differing,
        sensitivity=tuple(checks),
        epsilon_lower=bound,
        confidence=confidence,
        delta=delta,
    )
