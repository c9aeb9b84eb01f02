"""Scaling of ``audit``: throughput on 1 and 2 worker processes, and peak memory up to 10^8 trials.

Run ``python benchmarks/bench_scaling.py`` (add ``--quick`` for smaller runs).

1. Throughput (mechanism runs per second, both datasets counted) of a full audit of
   the Gaussian mechanism and of DP-SGD with ``backend="processes"`` on 1 and 2
   workers, and the scaling efficiency ``throughput(2) / (2 × throughput(1))``.
   The machine's other load shows up in these numbers: read them as a lower bound.
2. Peak memory of a Gaussian audit at 10^6, 10^7 and 10^8 trials per side (each
   in a fresh process): the main process's maximum resident set (``getrusage``), the
   largest worker's, and the main process's peak of Python-tracked allocations
   (``tracemalloc``).  Outputs are reduced to counts per seed block on the workers, so
   memory stays flat while holding all outputs would need 16 bytes per trial pair.
3. Peak memory while running an audit of 10^12 trials per side (far beyond any run that
   completes: ``max_seconds=inf`` lifts the time limit), sampled every 0.1 s for
   ``--stream-seconds`` seconds of running: resident set of the main process, of the largest
   worker and of all of them together (``/proc`` via psutil).  The plan and the tasks are
   built on demand, so this is the memory of any trial count; before, the plan of 10^12
   trials alone grew past 20 GB.  The main process is then SIGKILLed and the workers
   still alive 5 s later are counted (they must be 0: workers die with their parent).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_audit_speed import gaussian_case  # noqa: E402

from dpclaims.algorithms.baselines import DPSGD  # noqa: E402
from dpclaims.audit import audit  # noqa: E402
from dpclaims.data import UserDataset, remove_user  # noqa: E402
from dpclaims.execution import Execution
from dpclaims.losses import LogisticLoss  # noqa: E402


def dpsgd_case(steps: int):
    """DP-SGD (n = 1000, d = 20, Poisson rate 0.1, ``steps`` steps), a canary item, add/remove
    pair."""
    rng = np.random.default_rng(0)
    n, d = 1000, 20
    x = rng.standard_normal((n, 1, d)) / np.sqrt(d)
    x[0, 0] = 5.0 * np.eye(d)[0]
    y = np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)
    d0 = UserDataset(x, y)
    algo = DPSGD.from_accountant(
        2.0,
        1e-5,
        LogisticLoss(),
        steps=steps,
        step_size=0.5,
        clip_norm=1.0,
        sampling_rate=0.1,
        batch_size=100.0,
    )
    return algo, d0, remove_user(d0, 0)


def throughput(
    mechanism, d0, d1, trials: int, workers: int, chunk: int | None
) -> tuple[float, float]:
    """(mechanism runs per second, ε lower bound) of one audit on ``workers`` processes."""
    start = time.perf_counter()
    result = audit(
        mechanism,
        d0,
        d1,
        trials=trials,
        claim=mechanism.privacy_claim,
        seed=1,
        execution=Execution(backend="processes", workers=workers, chunk=chunk),
    )
    return 2 * trials / (time.perf_counter() - start), result.epsilon_lower


def memory_child(trials: int, workers: int) -> None:
    """Run one Gaussian audit of ``trials`` per side and print its memory use as JSON."""
    mech, g0, g1 = gaussian_case()
    tracemalloc.start()
    start = time.perf_counter()
    result = audit(
        mech,
        g0,
        g1,
        trials=trials,
        claim=mech.privacy_claim,
        execution=Execution(backend="processes", workers=workers),
    )
    wall = time.perf_counter() - start
    _, traced = tracemalloc.get_traced_memory()
    print(
        json.dumps(
            {
                "trials": trials,
                "wall": wall,
                "main_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                "traced_mb": traced / 2**20,
                "epsilon_lower": result.epsilon_lower,
            }
        )
    )


def stream_child(trials: int, workers: int) -> None:
    """Run a Gaussian audit of ``trials`` per side with no time limit (the parent kills it)."""
    mech, g0, g1 = gaussian_case()
    audit(
        mech,
        g0,
        g1,
        trials=trials,
        claim=mech.privacy_claim,
        execution=Execution(backend="processes", workers=workers, max_seconds=float("inf")),
    )


def stream_memory(trials: int, seconds: float) -> dict:
    """Peak resident memory (MB) of an audit of ``trials`` per side over ``seconds`` of running,
    then
    the number of its workers alive 5 s after the main process is SIGKILLed."""
    import psutil

    child = subprocess.Popen([sys.executable, __file__, "--stream-child", str(trials)])
    main = psutil.Process(child.pid)
    peak = {"main_mb": 0.0, "worker_mb": 0.0, "total_mb": 0.0}
    workers: list = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and child.poll() is None:
        try:
            workers = main.children(recursive=True)
            rss = [main.memory_info().rss] + [
                w.memory_info().rss for w in workers if w.is_running()
            ]
        except psutil.Error:
            continue
        peak["main_mb"] = max(peak["main_mb"], rss[0] / 2**20)
        peak["worker_mb"] = max([peak["worker_mb"], *(r / 2**20 for r in rss[1:])])
        peak["total_mb"] = max(peak["total_mb"], sum(rss) / 2**20)
        time.sleep(0.1)
    if child.poll() is not None:
        raise RuntimeError(
            f"the 10^{math.log10(trials):.0f}-trial audit stopped early (exit {child.returncode})"
        )
    child.kill()
    child.wait()
    time.sleep(5.0)
    peak["orphans"] = sum(
        1 for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE
    )
    return peak


def table(header: tuple[str, ...], rows: list[tuple]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(row, widths, strict=True)))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (10^7 trials at most)")
    parser.add_argument(
        "--stream-seconds", type=float, default=30.0, help="seconds of the 10^12-trial run sampled"
    )
    parser.add_argument(
        "--memory-only", action="store_true", help="only the 10^12-trial memory measurement"
    )
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stream-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, 2)
        return
    if args.stream_child:
        stream_child(args.stream_child, 2)
        return
    if args.memory_only:
        print_stream(args.stream_seconds)
        return

    mech, g0, g1 = gaussian_case()
    steps = 20
    algo, s0, s1 = dpsgd_case(steps)
    cases = [
        ("Gaussian", mech, g0, g1, 2 * 10**6 if args.quick else 10**7, None),
        (f"DP-SGD (T={steps})", algo, s0, s1, 4096 if args.quick else 16384, 2048),
    ]
    rows = []
    for name, m, a, b, trials, chunk in cases:
        one, eps1 = throughput(m, a, b, trials, 1, chunk)
        two, eps2 = throughput(m, a, b, trials, 2, chunk)
        assert eps1 == eps2, "the worker count changed the result"
        rows.append(
            (name, trials, f"{one:,.0f}", f"{two:,.0f}", f"{two / (2 * one):.2f}", f"{eps1:.4f}")
        )
    print(
        "Throughput of a full audit (mechanism runs per second, both datasets), backend='processes'"
    )
    table(("mechanism", "trials/side", "1 worker", "2 workers", "efficiency", "eps_lower"), rows)

    rows = []
    for trials in (10**6, 10**7) if args.quick else (10**6, 10**7, 10**8):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(trials)],
            capture_output=True,
            text=True,
            check=True,
        )
        m = json.loads(out.stdout.strip().splitlines()[-1])
        held = 2 * trials * 8 / 2**20
        rows.append(
            (
                f"{trials:.0e}",
                f"{m['wall']:.1f}",
                f"{m['main_rss_mb']:.0f}",
                f"{m['worker_rss_mb']:.0f}",
                f"{m['traced_mb']:.1f}",
                f"{held:,.0f}",
                f"{m['epsilon_lower']:.4f}",
            )
        )
    print("Peak memory of a Gaussian audit, 2 worker processes (MB)")
    table(
        (
            "trials/side",
            "wall_s",
            "main RSS",
            "worker RSS",
            "main traced",
            "all outputs would be",
            "eps_lower",
        ),
        rows,
    )
    print_stream(args.stream_seconds)


def print_stream(seconds: float) -> None:
    m = stream_memory(10**12, seconds)
    print(
        f"Peak memory over {seconds:g} s of running a Gaussian audit of 10^12 trials per side, 2 "
        "workers (MB)"
    )
    table(
        ("main RSS", "largest worker RSS", "all processes", "workers alive after SIGKILL of main"),
        [(f"{m['main_mb']:.0f}", f"{m['worker_mb']:.0f}", f"{m['total_mb']:.0f}", m["orphans"])],
    )


if __name__ == "__main__":
    main()
