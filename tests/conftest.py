"""Test configuration and shared fixtures.

Hypothesis runs derandomized, so every machine gets the same result.  Fixtures shared by the
test folders: ``make_claim`` and ``make_results`` build results documents
(:class:`dpclaims.results.Results`) the way the runner does, counts and tests made included;
``results`` is a small one; ``user_pair`` (a small user-level neighbouring pair),
``gaussian_target`` (the Gaussian mechanism on the numbers 0 and 1 against a (1, 1e-5) claim),
``example_env`` (the example paper installed, for subprocesses), ``fork_server`` /
``cli_server`` / ``example_server`` / ``console`` (commands as fresh processes forked from one
interpreter that imported dpclaims once: :class:`ForkServer`) and ``process_cluster`` (a Dask
cluster of two worker processes for the session).
"""

import importlib.metadata
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import threadpoolctl
from hypothesis import settings

from dpclaims.results import (
    ClaimResult,
    Environment,
    PaperTitle,
    Results,
    Settings,
    multiplicity,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "erm_perturbation"
EXAMPLE_PAPER = "chaudhuri-monteleoni-sarwate-2011"

settings.register_profile("dpclaims", derandomize=True, deadline=None, database=None)
settings.load_profile("dpclaims")


def pytest_configure(config):
    """One BLAS / OpenMP thread per pytest-xdist worker (and its subprocesses): the workers
    already fill the cores, and thread pools spin-waiting beside them cost the suite about 10 %
    on two cores."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[variable] = "1"
        threadpoolctl.threadpool_limits(limits=1)


def audit_record(lower=0.8):
    """The evidence record of a certified audit of a (1, 1e-5)-DP claim."""
    return {
        "epsilon_lower": lower,
        "epsilon": 1.0,
        "delta": 1e-5,
        "confidence": 0.95,
        "method": "threshold",
        "certified": True,
        "ci": "clopper-pearson",
        "trials": 1000,
        "seed": 3,
        "tradeoff": [[0.0, 1.0], [0.3, 0.4], [1.0, 0.0]],
        "false_positives": 30,
        "false_negatives": 40,
        "n_negative": 800,
        "n_positive": 800,
        "fpr_upper": 0.05,
        "fnr_upper": 0.07,
        "calibration_trials": 200,
        "certification_trials": 800,
        "unit": "user",
        "relation": "replace",
    }


def rate_record(verdict="consistent", slope=-1.0, note=""):
    """The evidence record of a sweep of n (4 values, 3 replicates) testing exponent -1 ± 0.1."""
    values = [10, 20, 40, 80]
    errors = [[1 / v * (1 + 0.05 * r) for r in range(3)] for v in values]
    return {
        "sweep": {
            "param": "n",
            "values": values,
            "errors": errors,
            "replicates": 3,
            "seed": 1,
            "batch": 1,
            "fixed": {"d": 2},
        },
        "fit": {
            "exponent": slope,
            "intercept": 0.05,
            "interval": [slope - 0.1, slope + 0.1],
            "confidence": 0.95,
            "method": "logs",
        },
        "check": {
            "verdict": verdict,
            "exponent": slope,
            "interval": [slope - 0.05, slope + 0.05],
            "expected": -1.0,
            "margin": 0.1,
            "confidence": 0.9,
            "drifting": False,
            "message": "",
        },
        "note": note,
    }


def _claim(claim_id="x.claim", verdict="consistent", **fields):
    """A claim's result of paper ``p``: a rate check unless ``fields`` say otherwise
    (``evidence`` may be a JSON record)."""
    kind = fields.pop("type", "rate")
    record = fields.pop("evidence", None)
    if record is None:
        record = rate_record(verdict) if kind == "rate" else {}
    confirmation = fields.pop("confirmation", None)
    base = {
        "id": claim_id,
        "paper": "p",
        "kind": "excess_risk",
        "algorithm": "A",
        "source": "Thm 5.1",
        "statement": f"statement of {claim_id}",
        "verdict": verdict,
        "type": kind,
        "summary": "s",
        "reason": None,
        "error": None,
        "evidence": record if isinstance(record, dict) else record.to_json(),
        "seed": 1,
        "wall_time": 0.1,
        "confirmation": confirmation,
        **fields,
    }
    return ClaimResult.from_json(base)


def _results(claims=(), *, papers=({"id": "p", "title": "A paper"},), **settings_):
    """A results document of ``claims`` (results or JSON objects), counts and tests computed."""
    claims = tuple(c if isinstance(c, ClaimResult) else ClaimResult.from_json(c) for c in claims)
    return Results(
        dpclaims_version="0.1.0",
        created="2024-01-01T00:00:00Z",
        settings=Settings(
            **{
                "budget": "quick",
                "seed": 0,
                "backend": "auto",
                "workers": None,
                "papers": None,
                "claims": None,
                "options": {},
                "confirm": True,
                **settings_,
            }
        ),
        environment=Environment(python="3.11", platform="linux", cpu_count=2, versions={}),
        papers=tuple(PaperTitle(**p) for p in papers) if claims else (),
        claims=claims,
        multiplicity=multiplicity(claims),
        wall_time=1.0,
    )


@pytest.fixture
def make_claim():
    """``make_claim(id, verdict, **fields) -> ClaimResult`` (see :func:`_claim`)."""
    return _claim


@pytest.fixture
def make_results():
    """``make_results(claims, **settings) -> Results`` (see :func:`_results`)."""
    return _results


@pytest.fixture
def results():
    """A small results document: paper ``p`` with a certified audit, a rate check and a claim
    not checkable by experiment."""
    return _results(
        [
            _claim("x.audit", kind="privacy", type="audit", evidence=audit_record(), seed=3),
            _claim("x.rate"),
            _claim("x.open", "not_checkable", type=None, reason="context only"),
        ]
    )


@pytest.fixture(name="audit_record")
def _audit_record_fixture():
    """``audit_record(lower=0.8)``: an audit's evidence record (see :func:`audit_record`)."""
    return audit_record


@pytest.fixture(name="rate_record")
def _rate_record_fixture():
    """``rate_record(verdict, slope, note)``: a rate check's evidence record."""
    return rate_record


def gauss(data, rng, trials):
    """The Gaussian mechanism ``N(data, 1)`` on a number: sensitivity 1 between 0 and 1."""
    return data + rng.standard_normal(trials)


@pytest.fixture
def user_pair():
    """A small user-level neighbouring pair: 4 users of 2 items with one feature, all 0 in d0;
    user 1's two items are 1 in d1 (user-level replace neighbours, unlabelled)."""
    from dpclaims.data import UserDataset, replace_user

    d0 = UserDataset(np.zeros((4, 2, 1)))
    return d0, replace_user(d0, 1, np.ones((2, 1)))


@pytest.fixture
def gaussian_target():
    """``N(data, 1)`` on the numbers 0 and 1 against (1, 1e-5)-DP, as an ``AuditTarget``
    (the pair attains the sensitivity 1; the exact ε at δ = 1e-5 is about 4.4)."""
    from dpclaims.privacy import PrivacyClaim
    from dpclaims.target import AuditTarget

    claim = PrivacyClaim(epsilon=1.0, delta=1e-5)
    return AuditTarget(mechanism=gauss, d0=0.0, d1=1.0, claim=claim)


@pytest.fixture(scope="session")
def example_env(tmp_path_factory) -> dict[str, str]:
    """Environment variables under which the example paper ``examples/erm_perturbation`` is an
    installed distribution (found through its ``dpclaims.papers`` entry point).

    Where it is installed (CI runs ``pip install -e examples/erm_perturbation``) that
    installation, this checkout's example first on the path; elsewhere nothing is installed:
    the ``.dist-info`` folder ``pip install`` would leave (``METADATA`` and
    ``entry_points.txt``) in a temporary folder on ``PYTHONPATH`` is what dpclaims reads.
    """
    path = [str(EXAMPLE / "src"), str(ROOT)]
    try:
        importlib.metadata.distribution("dpclaims-erm-perturbation")
    except importlib.metadata.PackageNotFoundError:
        site = tmp_path_factory.mktemp("site")
        info = site / "dpclaims_erm_perturbation-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: dpclaims-erm-perturbation\nVersion: 0.1.0\n"
        )
        (info / "entry_points.txt").write_text(
            f"[dpclaims.papers]\n{EXAMPLE_PAPER} = erm_perturbation\n"
        )
        path.insert(0, str(site))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


FORK_SERVER = """\
import json, os, runpy, sys

for module in json.loads(sys.argv[1]):  # imported once, before any request
    __import__(module)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:  # as `python SCRIPT ARGS` (or `python -m MODULE ARGS`) in the request's folder
        os.chdir(request["cwd"])
        for fd, path in enumerate((os.devnull, request["out"], request["err"])):
            flags = os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            os.dup2(os.open(path, flags, 0o600), fd)
        sys.argv = request["argv"]
        if request["module"]:
            sys.path[0] = os.getcwd()
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
            runpy.run_path(sys.argv[0], run_name="__main__")
        sys.exit(0)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


class ForkServer:
    """Runs Python commands as fresh processes (``python SCRIPT ARGS``, ``python -m MODULE
    ARGS``) without their start-up: one interpreter imports ``warm`` once, under ``env``, and
    forks a process per command.  Only for commands whose subject is not what they import
    (a module shadowed by a local file, start-up itself): those run in a plain subprocess."""

    def __init__(self, env: dict[str, str], warm: tuple[str, ...], folder: Path):
        self.folder, self.count = folder, 0
        script = folder / "fork_server.py"
        script.write_text(FORK_SERVER)
        self.process = subprocess.Popen(
            [sys.executable, str(script), json.dumps(warm)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(folder / "server.err").open("w"),
            env=env,
            cwd=folder,
        )

    def run(self, argv, *, cwd, module=None, timeout=300) -> subprocess.CompletedProcess:
        """``argv`` (``argv[0]`` the script, or ``module`` with ``argv[0]`` ignored) in ``cwd``:
        its exit code, stdout and stderr, as ``subprocess.run(..., capture_output=True,
        text=True)`` gives them."""
        self.count += 1
        out, err = (self.folder / f"{self.count}.{name}" for name in ("out", "err"))
        request = {"argv": [str(a) for a in argv], "cwd": str(cwd), "module": module}
        request |= {"out": str(out), "err": str(err)}
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        pid = int(self._line(60))
        try:
            code = int(self._line(timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._line(60)
            raise subprocess.TimeoutExpired(argv, timeout) from None
        return subprocess.CompletedProcess(argv, code, out.read_text(), err.read_text())

    def _line(self, timeout: float) -> str:
        line, deadline = b"", time.monotonic() + timeout
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.process.stdout], [], [], deadline - time.monotonic())
            if not ready:
                raise subprocess.TimeoutExpired("fork server", timeout)
            chunk = os.read(self.process.stdout.fileno(), 1)
            if not chunk:
                raise RuntimeError((self.folder / "server.err").read_text() or "fork server ended")
            line += chunk
        return line.decode()

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:  # never leave the server behind the session
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="session")
def fork_server(tmp_path_factory):
    """``fork_server(env, warm)``: the :class:`ForkServer` of those environment variables and
    modules, started on first use and shared by the session's tests."""
    servers: dict = {}

    def server(env: dict[str, str], warm=()) -> ForkServer:
        key = (tuple(sorted(env.items())), tuple(warm))
        if key not in servers:
            servers[key] = ForkServer(env, tuple(warm), tmp_path_factory.mktemp("forks"))
        return servers[key]

    yield server
    for each in servers.values():
        each.close()


WARM = (
    "dpclaims",
    "dpclaims.audit",
    "dpclaims.claims",
    "dpclaims.rates",
    "dpclaims.cli",
    "matplotlib.pyplot",
    "statsmodels.api",
)
"""What the docs' blocks and dpclaims' commands import: a fork server of them imports it once."""


@pytest.fixture(scope="session")
def example_server(fork_server, example_env) -> ForkServer:
    """The :class:`ForkServer` of ``example_env`` with matplotlib's ``Agg`` backend and one
    thread per library (torch oversubscribes a shared machine)."""
    return fork_server(example_env | {"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}, WARM)


CONSOLE_SCRIPT = "import sys\nfrom dpclaims.cli import main\nsys.exit(main())\n"


@pytest.fixture(scope="session")
def cli_server(fork_server) -> ForkServer:
    """The :class:`ForkServer` of this checkout's dpclaims (``PYTHONPATH``) and :data:`WARM`."""
    return fork_server({**os.environ, "PYTHONPATH": str(ROOT)}, WARM)


@pytest.fixture(scope="session")
def console(cli_server):
    """``console(cwd, *argv, timeout=300)``: ``dpclaims ARGV`` run in ``cwd`` as the console
    script runs it (``sys.path[0]`` is the script's folder, not the working folder), in a fresh
    process forked from one that imported dpclaims (:class:`ForkServer`)."""
    server = cli_server

    def run(cwd: Path, *argv, timeout: float = 300) -> subprocess.CompletedProcess:
        script = cwd.parent / f"{cwd.name}-bin" / "dpclaims"
        script.parent.mkdir(exist_ok=True)
        script.write_text(CONSOLE_SCRIPT)
        return server.run([script, *argv], cwd=cwd, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def process_cluster():
    """The address of a local Dask cluster of two single-threaded worker processes that import
    this checkout's dpclaims (shared by the tests that need worker processes)."""
    distributed = pytest.importorskip("distributed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(ROOT))  # the worker processes import this dpclaims
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
        )
    with cluster:  # the session's other tests keep their PYTHONPATH
        yield cluster.scheduler_address
