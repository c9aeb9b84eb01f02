"""The wall-clock limit of --claim-timeout (issue #40, N4): a bounded value, armed inside the
protected block, and enforced from outside a block that fights the timer.

Each hostile block stops by itself after :data:`RUNS` s, so that a limit that fails to stop it
fails the test instead of hanging it.
"""

import json
import signal
import threading
import time

import pytest

from dpclaims.cli import main
from dpclaims.errors import InputError
from dpclaims.timelimit import MAX_SECONDS, TimeLimitExceeded, check_time_limit, time_limit

LIMIT = 0.2
RUNS = 3.0
"""Seconds a hostile block runs when nothing stops it."""


def _spin(seconds: float = RUNS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def _ignores_the_signal() -> None:
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    _spin()


def _cancels_the_timer() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    _spin()


def _cancels_the_timer_and_sleeps() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    time.sleep(RUNS)


def _swallows_everything() -> None:
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    deadline = time.monotonic() + 1.0
    while True:
        try:
            if time.monotonic() > deadline:
                return
            sum(range(100))
        except BaseException:  # noqa: S110 - the hostile part
            pass


@pytest.mark.parametrize(
    "block",
    [_spin, _ignores_the_signal, _cancels_the_timer, _cancels_the_timer_and_sleeps],
)
def test_a_block_that_fights_the_timer_is_stopped_from_outside(block):
    handler = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    with pytest.raises(TimeLimitExceeded, match=r"^exceeded the time limit of 0.2 s \(--x\)$"):
        with time_limit(LIMIT, "--x"):
            block()
    assert time.monotonic() - start < RUNS / 2
    assert signal.getsignal(signal.SIGALRM) == handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert not any(t.name == "dpclaims-time-limit" for t in threading.enumerate())


def test_a_block_that_swallows_the_exception_ends_over_its_limit_when_it_returns():
    with pytest.raises(TimeLimitExceeded, match="exceeded the time limit of 0.2 s"):
        with time_limit(LIMIT, "--x"):
            _swallows_everything()


def test_a_block_within_its_limit_is_left_alone():
    with time_limit(5.0, "--x"):
        time.sleep(0.01)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("seconds", [1e300, 86400000000, float("nan"), float("inf"), 0, -1, "1"])
def test_a_limit_outside_zero_to_one_year_is_refused(seconds):
    with pytest.raises(InputError) as caught:
        check_time_limit(seconds, "--claim-timeout")
    assert str(caught.value) == (
        "--claim-timeout must be a finite number > 0 and at most 31_536_000 s (one year), "
        f"got {seconds!r}; pass e.g. --claim-timeout=3600"
    )


def test_the_bounds_themselves_are_accepted():
    assert check_time_limit(MAX_SECONDS, "x") == MAX_SECONDS
    assert check_time_limit(1e-9, "x") == 1e-9


@pytest.mark.parametrize("seconds", ["1e300", "86400000000"])
def test_cli_refuses_a_huge_claim_timeout_in_one_line(seconds, tmp_path, capsys):
    out = tmp_path / "report"
    argv = ["verify", "--claims", "lla24.alg1.reference_eps", "--out", str(out)]
    assert main([*argv, "--claim-timeout", seconds]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and not out.exists()
    assert err.splitlines() == [
        "dpclaims: error: --claim-timeout must be a finite number > 0 and at most "
        f"31_536_000 s (one year), got {float(seconds)!r}; pass e.g. --claim-timeout=3600"
    ]


def test_a_limit_that_runs_out_at_once_still_gives_a_report(tmp_path, capsys):
    registry = tmp_path / "registry"
    assert main(["new-paper", "n4-instant", str(registry)]) == 0
    out = tmp_path / "report"
    argv = ["verify", "--registry", str(registry), "--out", str(out), "--backend", "serial"]
    assert main([*argv, "--paper", "n4-instant", "--quiet", "--claim-timeout", "1e-9"]) == 1
    capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    assert {c["summary"] for c in results["claims"]} == {
        "error: exceeded the time limit of 1e-09 s (--claim-timeout)"
    }
