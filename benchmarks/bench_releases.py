"""Release corpus (issue 37, item 3): each bug of the real-bug corpus (and the accountant and
sampler bugs of the field scan) checked through the library's public API at its buggy release
and at its fixed one, each release installed from the package index into its own cached
environment.

An environment is ``python -m venv --system-site-packages`` (numpy, scipy, torch, dp-accounting
come from the running interpreter) plus ``pip install --no-deps --ignore-installed`` of the
release and the pins it needs to import; it is kept under ``--cache`` (default
``~/.cache/dpclaims/releases/<lib>-<version>``) and reused.  In it
``benchmarks/releases_probe.py CHECK`` runs with this checkout on ``PYTHONPATH`` and prints one
JSON line.  A row whose release does not install or import says so, with the error.

Usage: ``python benchmarks/bench_releases.py [--only BUG ...] [--cache DIR] [--out FILE.md]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "benchmarks" / "releases_probe.py"
CACHE = Path.home() / ".cache" / "dpclaims" / "releases"
INSTALL_TIMEOUT = 900
CHECK_TIMEOUT = 900


@dataclass(frozen=True)
class Release:
    """A library release and the pins it needs to import on this interpreter."""

    library: str
    version: str
    pins: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.library}-{self.version}"

    @property
    def requirements(self) -> tuple[str, ...]:
        return (f"{self.library}=={self.version}", *self.pins)


@dataclass(frozen=True)
class Bug:
    """A corpus bug, the check that shows it, where it shows, and where it should not."""

    name: str
    source: str
    check: str
    buggy: Release
    fixed: Release | None = None
    no_fix: str = ""
    control: str | None = None
    control_label: str = ""
    kind: str = "audit"
    """``audit`` (per-call sequential audit), ``accountant`` (ε against dp-accounting),
    ``delta`` (a release rate against the reported δ), ``sampler`` (χ² against the exact law)
    or ``sensitivity`` (a library's sensitivity against a brute-force maximum)."""


DIFFPRIVLIB = Release("diffprivlib", "0.6.6", ("scikit-learn==1.8.0",))
NUMPY_1 = ("numpy==1.26.4",)  # OpenDP 0.6 reads np.bool8, gone in numpy 2
SMARTNOISE = (  # what `import snsynth` needs beyond the interpreter's packages
    "smartnoise-sql==1.0.10",
    "SQLAlchemy==2.1.9",
    "antlr4-python3-runtime==4.9.3",
    "graphviz==0.21",
    "Faker==40.63.0",
)
JAX = (  # jax_privacy 2.0.0's dependencies and keras (its keras_api imports it) not already here
    "jax==0.10.2",
    "jaxlib==0.10.2",
    "ml_dtypes==0.7.0",
    "chex==0.1.92",
    "optax==0.2.8",
    "keras==3.15.1",
    "h5py==3.16.0",
    "namex==0.1.0",
    "optree==0.20.0",
    "rich==15.0.0",
    "markdown-it-py==4.3.0",
    "mdurl==0.1.2",
)

BUGS = (
    Bug(
        name="diffprivlib-sensitivity-lower-bound-only",
        source="diffprivlib #105, PR #110",
        check="diffprivlib-linreg-bounds-0-4",
        buggy=DIFFPRIVLIB,
        no_fix="none released (PR #110 open; 0.6.6 is the latest)",
        control="diffprivlib-linreg-bounds-sym",
        control_label="same release, bounds_X=(−4, 4), where max(|L|,|L|)² is right",
    ),
    Bug(
        name="diffprivlib-classes-from-private-labels",
        source="diffprivlib #106",
        check="diffprivlib-gnb-singleton-class",
        buggy=DIFFPRIVLIB,
        no_fix="none released (0.6.6's GaussianNB takes no label set)",
        control="diffprivlib-gnb-classes-kept",
        control_label="same release, a relabelling that keeps every class",
    ),
    Bug(
        name="diffprivlib-mean-bounds-from-data",
        source="diffprivlib tools.mean(bounds=None), PrivacyLeakWarning",
        check="diffprivlib-mean-no-bounds",
        buggy=DIFFPRIVLIB,
        no_fix="documented use, no fix: bounds are the fix",
        control="diffprivlib-mean-bounds",
        control_label="same release, bounds=(0, 1)",
    ),
    Bug(
        name="diffprivlib-histogram-range-from-data",
        source="diffprivlib tools.histogram(range=None), PrivacyLeakWarning",
        check="diffprivlib-histogram-no-range",
        buggy=DIFFPRIVLIB,
        no_fix="documented use, no fix: a range is the fix",
        control="diffprivlib-histogram-range",
        control_label="same release, range=(0, 1), add/remove",
    ),
    Bug(
        name="opacus-ghost-clipping-ignores-max-grad-norm",
        source="Opacus PR #664",
        check="opacus-ghost-clipping",
        buggy=Release("opacus", "1.5.2"),
        fixed=Release("opacus", "1.5.3"),
    ),
    Bug(
        name="opacus-closure-recomputes-after-noise",
        source="Opacus PR #330",
        check="opacus-closure",
        buggy=Release("opacus", "1.0.1"),
        fixed=Release("opacus", "1.0.2"),
    ),
    Bug(
        name="opacus-expected-batch-size-private-n",
        source="Opacus #571, #819",
        check="opacus-expected-batch-size",
        buggy=Release("opacus", "1.6.0"),
        no_fix="none released (#571 open; 1.6.0 is the latest)",
        control="opacus-expected-batch-size-replace",
        control_label="same release, replace-one (equal sizes)",
    ),
    Bug(
        name="opacus-weighted-sampler-rate",
        source="Opacus #813",
        check="opacus-weighted-sampler",
        buggy=Release("opacus", "1.6.0"),
        no_fix="none released (#813 open; PRs #814–#816 not merged; 1.6.0 is the latest)",
        control="opacus-weighted-sampler-poisson",
        control_label="same release, poisson_sampling=True (the default)",
        kind="sampler",
    ),
    Bug(
        name="smartnoise-covariance-unclipped",
        source="SmartNoise #622",
        check="smartnoise_synth-covariance-unclipped",
        buggy=Release("smartnoise-synth", "1.0.5", SMARTNOISE),
        fixed=Release("smartnoise-synth", "1.0.6", SMARTNOISE),
    ),
    Bug(
        name="opendp zCDP→approxDP negative ε",
        source="OpenDP #621, PR #622",
        check="opendp-zcdp-to-approxdp",
        buggy=Release("opendp", "0.6.1", NUMPY_1),
        fixed=Release("opendp", "0.6.2", NUMPY_1),
        kind="accountant",
    ),
    Bug(
        name="opacus accountants: negative ε, GDP below PLD",
        source="Opacus #585, PR #844",
        check="opacus-accountants",
        buggy=Release("opacus", "1.6.0"),
        no_fix="none released (PR #844 open; 1.6.0 is the latest)",
        kind="accountant",
    ),
    Bug(
        name="opendp-sized-sum-sensitivity",
        source="OpenDP #314",
        check="opendp-sized-sum-sensitivity",
        buggy=Release("opendp", "0.3.0"),
        fixed=Release("opendp", "0.4.0", NUMPY_1),
    ),
    Bug(
        name="tensorflow-privacy-rdp-order-near-one",
        source="TF Privacy #166",
        check="tensorflow_privacy-rdp-order-near-one",
        buggy=Release("tensorflow-privacy", "0.6.1"),
        no_fix="none released (#166 open)",
        kind="accountant",
    ),
    Bug(
        name="opendp-threshold-mass-omitted",
        source="OpenDP #2922",
        check="opendp-threshold-delta",
        buggy=Release("opendp", "0.16.0"),
        no_fix="none released (#2922 open; 0.16.0 is the latest)",
        kind="delta",
    ),
    Bug(
        name="opendp-sampler-bias",
        source="OpenDP #2638, PR #2639",
        check="opendp-sampler-bias",
        buggy=Release("opendp", "0.14.1"),
        fixed=Release("opendp", "0.14.2"),
        kind="sampler",
    ),
    Bug(
        name="jax_privacy-sigma-validated-at-physical-batch",
        source="jax_privacy PR #287",
        check="jax_privacy-noise-multiplier-validation",
        buggy=Release("jax-privacy", "2.0.0", JAX),
        no_fix="none released (PR #287 merged after 2.0.0, the latest)",
        kind="accountant",
    ),
    Bug(
        name="jax_privacy-minsep-sensitivity-without-n",
        source="jax_privacy PR #238",
        check="jax_privacy-minsep-sensitivity-example-call",
        buggy=Release("jax-privacy", "2.0.0", JAX),
        no_fix=(
            "no release has it: the call is in `examples/dpmf_strategy_optimization.py`, "
            "which the wheel does not ship; the released function is right when given n"
        ),
        control="jax_privacy-minsep-sensitivity-with-n",
        control_label="same release, n passed (the PR's fix)",
        kind="sensitivity",
    ),
)


@dataclass
class Environment:
    """A release's environment: its python, or why there is none."""

    release: Release
    python: Path | None = None
    error: str = ""
    seconds: float = 0.0
    cached: bool = False


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def environment(release: Release, cache: Path) -> Environment:
    """The cached environment of ``release``, created (venv + pinned install) if missing."""
    env = Environment(release)
    path = cache / release.name
    python = path / "bin" / "python"
    if (path / "ok").exists():
        env.python, env.cached = python, True
        return env
    start = time.perf_counter()
    commands = [
        [sys.executable, "-m", "venv", "--system-site-packages", str(path)],
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed"]
        + list(release.requirements),
    ]
    for command in commands:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
        if done.returncode != 0:
            env.error = f"install failed: {_last_line(done.stderr or done.stdout)}"
            env.seconds = time.perf_counter() - start
            return env
    (path / "ok").write_text(" ".join(release.requirements) + "\n")
    env.python, env.seconds = python, time.perf_counter() - start
    return env


def probe(env: Environment, check: str) -> dict:
    """Run ``check`` in ``env``: its JSON result, or ``{"error": ...}``."""
    if env.python is None:
        return {"error": env.error}
    process_env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    try:
        done = subprocess.run(
            [str(env.python), str(PROBE), check],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            env=process_env,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no answer in {CHECK_TIMEOUT} s"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": _last_line(done.stderr)}


def _eps(value) -> str:
    return "—" if value is None else f"{value:.3g}"


def audit_cell(result: dict) -> str:
    """A per-call audit's outcome: verdict, ε ≥, trials per dataset, seconds."""
    if "error" in result:
        return f"error: {result['error']}"
    return (
        f"{result['outcome']}, ε ≥ {_eps(result['epsilon_lower'])}, "
        f"{result['trials']:,} trials, {result['seconds']} s"
    )


def accountant_cell(result: dict) -> str:
    if "error" in result:
        return f"error: {result['error']}"
    flagged = sum(bool(r.get("failed") or "error" in r) for r in result["rows"])
    return f"{flagged} of {len(result['rows'])} configurations flagged, {result['seconds']} s"


def delta_cell(result: dict) -> str:
    """A δ claim: the reported δ, the measured release rate and its lower confidence bound."""
    if "error" in result:
        return f"error: {result['error']}"
    verdict = "**flagged**" if result["failed"] else "ok"
    return (
        f"ε = {result['epsilon']:.3g}, δ reported {result['reported']:.3g}; a key of one record "
        f"released at rate {result['rate']:.3g} (≥ {result['lower']:.3g} at 95 %, "
        f"{result['rate'] / result['reported']:.2f}× δ): {verdict}, {result['seconds']} s"
    )


def tests_cell(result: dict) -> str:
    """Each test's configuration and numbers, flagged when it fails."""
    if "error" in result:
        return f"error: {result['error']}"
    tests = "; ".join(
        f"{r['config']}: {r['line']}" + (" **flagged**" if r["failed"] else " ok")
        for r in result["rows"]
    )
    return f"{tests}, {result['seconds']} s"


CELLS = {
    "audit": audit_cell,
    "accountant": accountant_cell,
    "delta": delta_cell,
    "sampler": tests_cell,
    "sensitivity": tests_cell,
}


def accountant_rows(bug: Bug, result: dict) -> list[str]:
    """Must-show 4: configuration, the library's ε, dp-accounting's PLD and RDP, the ratio."""
    rows = []
    for r in result.get("rows", []):
        if "error" in r:
            cells = f"raised {r['error']} | — | — | — | flagged (no ε)"
        elif "rejected" in r:
            cells = f"rejected ({r['rejected']}) | {r['pld']:.4g} | {r['rdp']:.4g} | — | ok"
        else:
            ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f}"
            cells = f"{r['reported']:.4g} | {r['pld']:.4g} | {r['rdp']:.4g} | {ratio} | " + (
                "**flagged**" if r["failed"] else "ok"
            )
        rows.append(f"| {bug.source} | {result['version']} | {r['config']} | {cells} |")
    return rows


def _install_note(env: Environment) -> str:
    if env.error:
        return f"**{env.error}**"
    return "cached" if env.cached else f"installed in {env.seconds:.0f} s"


def run(bugs, cache: Path) -> tuple[list[str], list[str], list[str]]:
    """The release table, the accountant table, the environment lines."""
    environments: dict[str, Environment] = {}

    def env_of(release: Release) -> Environment:
        if release.name not in environments:
            environments[release.name] = environment(release, cache)
        return environments[release.name]

    table, accountants = [], []
    for bug in bugs:
        cell = CELLS[bug.kind]
        buggy = probe(env_of(bug.buggy), bug.check)
        if bug.fixed is not None:
            fixed = probe(env_of(bug.fixed), bug.check)
            fixed_cell = f"{bug.fixed.version}: {cell(fixed)}"
        else:
            fixed, fixed_cell = None, bug.no_fix
        control = "—"
        if bug.control:
            control = f"{bug.control_label}: {cell(probe(env_of(bug.buggy), bug.control))}"
        row = (
            f"| {bug.buggy.library} | {bug.name} ({bug.source}) | "
            f"{bug.buggy.version}: {cell(buggy)} | {fixed_cell} | {control} |"
        )
        table.append(row)
        print(row, flush=True)
        if bug.kind == "accountant":
            for result in (buggy, fixed):
                if result is not None:
                    accountants += accountant_rows(bug, result)
    env_lines = [
        f"- `{e.release.name}`: `pip install --no-deps --ignore-installed "
        f"{' '.join(e.release.requirements)}` — {_install_note(e)}"
        for e in environments.values()
    ]
    return table, accountants, env_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=None, help="bug names (default: all)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    unknown = sorted(set(args.only or ()) - {b.name for b in BUGS})
    if unknown:
        parser.error(f"--only: unknown bug {', '.join(unknown)}; choose from the BUGS names")
    bugs = [b for b in BUGS if not args.only or b.name in args.only]
    start = time.perf_counter()
    table, accountants, env_lines = run(bugs, args.cache)
    lines = [
        "| library | bug (issue/PR) | buggy release: outcome | fixed release: outcome | "
        "control on the buggy release |",
        "|---|---|---|---|---|",
        *table,
        "",
        "| bug | release | configuration | library's ε | PLD ε | RDP ε | library / PLD | check |",
        "|---|---|---|---|---|---|---|---|",
        *accountants,
        "",
        "Environments:",
        *env_lines,
        "",
        f"Total: {time.perf_counter() - start:.0f} s.",
    ]
    print("\n".join(lines[len(table) + 2 :]))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
