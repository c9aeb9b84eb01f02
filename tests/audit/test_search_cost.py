"""Issue 41 (item 5): a search's whole cost is estimated before it starts, its progress shows
off a terminal (CI logs) as plain lines, and its screens run on the chosen backend with the same
outputs as serially."""

import numpy as np
import pytest

from dpclaims.audit.search import SCREEN_SECONDS, SearchEstimate, search
from dpclaims.cli import main
from dpclaims.execution import Execution
from dpclaims.privacy import PrivacyClaim
from dpclaims.resources import FIXED_SECONDS
from dpclaims.targets.pairs import QueryPairs


def _per_trial(q, rng, trials):
    """A mechanism with a Python call per trial (as a wrapped library function): Laplace(1)."""
    return np.array([np.asarray(q) + rng.laplace(0.0, 1.0, len(q)) for _ in range(trials)])


def _search(**options):
    return search(
        _per_trial,
        QueryPairs(2),
        trials=2_000,
        screen_trials=400,
        seed=3,
        claim=PrivacyClaim(epsilon=1.0),
        **options,
    )


def test_the_estimate_covers_screens_and_certification_and_proposes_fewer_trials():
    """The issue's search: ~2.5 M runs of a 0.58 ms function (it took 24 min 50 s)."""
    slow = SearchEstimate(
        screens=45,
        screen_runs=2_120_000,
        certify_runs=400_000,
        screen_trials=10_000,
        seconds_per_run=5.8e-4,
        workers=1,
    )
    fixed = 45 * SCREEN_SECONDS + FIXED_SECONDS  # the screens' scores, the audit's own work
    assert slow.seconds() == pytest.approx(2_520_000 * 5.8e-4 + fixed)
    line = slow.describe()
    assert line.startswith("search: about 2,520,000 mechanism runs (2,120,000 screening, ")
    assert "0.58 ms each on 1 worker: about 24.4 min" in line
    # 20,000 trials (screens of 2,000) take 4.5 min, 10,000 2.2 min: 5,000 fit in two minutes
    assert line.endswith("; --trials 5000 would take about 1.13 min")
    fast = SearchEstimate(
        screens=45,
        screen_runs=2_120_000,
        certify_runs=400_000,
        screen_trials=10_000,
        seconds_per_run=1e-6,
        workers=2,
    )
    assert fast.seconds() == pytest.approx(2.52 / 1.5 + fixed) and "--trials" not in fast.describe()


def test_off_a_terminal_the_estimate_comes_first_then_progress_lines(capsys):
    found = _search(execution=Execution(backend="serial"))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("search: about ") and "ms each on 1 worker: about" in lines[0]
    progress = [line for line in lines if line.startswith("search: screening ")]
    assert 3 <= len(progress) <= 12 and "% (" in progress[0] and "elapsed" in progress[0]
    assert lines[-1].startswith(f"search: screened {len(found.screened)} pairs in ")
    assert f"certifying {found.pair.name!r} on 2,000 trials per dataset" in lines[-1]
    assert len(lines) == len(progress) + 2 and "\r" not in "".join(lines)  # no tqdm bar
    _search(execution=Execution(backend="serial"), progress=False)
    assert capsys.readouterr().err == ""


def test_screens_are_the_same_on_every_backend_worker_count_and_chunk():
    runs = [
        _search(execution=Execution(backend=backend, workers=workers, chunk=chunk, progress=False))
        for backend, workers, chunk in [("serial", 1, None), ("processes", 2, 100)]
    ]
    assert runs[0].screened == runs[1].screened and runs[0].pair.name == runs[1].pair.name
    assert runs[0].epsilon_lower == runs[1].epsilon_lower


def test_the_cli_search_prints_its_estimate_first_in_a_log(capsys, tmp_path):
    (tmp_path / "looped.py").write_text(
        "import numpy as np\n\n\n"
        "def one(x, rng):  # a clipped mean of 100 users: sensitivity 0.02\n"
        "    return np.clip(x, -1, 1).mean() + rng.laplace(0.0, 0.02)\n\n\n"
        "def release(data, rng, trials):\n"
        "    return np.array([one(data.x, rng) for _ in range(trials)])\n"
    )
    np.savez(tmp_path / "d0.npz", x=np.zeros((100, 1, 1)))
    data = ["--d0", str(tmp_path / "d0.npz"), "--d1", str(tmp_path / "d0.npz")]
    argv = ["audit", f"{tmp_path / 'looped.py'}:release", *data, "--search", "--trials", "1000"]
    assert main([*argv, "--backend", "serial"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("search: about ") and " mechanism runs (" in err[0]
    assert any(line.startswith("search: screening ") for line in err)


def test_a_sequential_search_states_its_most_and_its_first_look(capsys):
    """QueryPairs(2)'s fixed patterns screened at 400 trials, then a first look of 500."""
    found = _search(execution=Execution(backend="serial"), sequential=True)
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("search: at most about ") and "on 1 worker: at most about " in first
    patterns = sum(not np.array_equal(p.d0, p.d1) for p in QueryPairs(2).patterns())
    runs = 2 * 400 * patterns + 2 * 500
    assert f"; a violation the first screens show stops it after about {runs:,} runs" in first
    assert found.samples <= found.screening_samples + 2 * 2_000
