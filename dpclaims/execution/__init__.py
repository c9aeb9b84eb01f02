"""Batched, seeded, parallel execution of many independent trials.

Trials are cut into *seed blocks* of :data:`SEED_BLOCK` trials; block ``b`` always
gets the ``numpy.random.SeedSequence`` child with spawn key ``(b,)`` of the
experiment's seed (:mod:`.seeds`).  Blocks are grouped into *chunks*, the unit of work
sent to a worker (:mod:`.plan`); chunking and the backend (:mod:`.backends`: ``Serial()``,
``Processes()``, ``Dask(scheduler=...)``, ``AutoBackend()``) only change where blocks run, never
the random numbers, so the same seed gives bit-identical outputs for every backend, worker
count and chunk size.  Where and how is one :class:`Execution` value (:mod:`.config`).

A mechanism is any callable ``mechanism(data, rng, trials) -> array (trials, k)``
or ``(trials,)``; a callable ``mechanism(data, rng) -> array (k,)`` is accepted
too and looped (slow: one Python call per trial; :mod:`.mechanisms`).

Long runs stay in bounded memory with :func:`reduce_trials` (:mod:`.run`): each block's
outputs are reduced on the worker to integer counts and only the counts travel back.
With ``Execution(checkpoint=DIR)`` every finished chunk is written atomically to ``DIR``
(see :mod:`dpclaims.checkpoint`) and a restarted run skips it.
"""

from .backends import (
    BACKENDS,
    AutoBackend,
    Backend,
    Dask,
    Processes,
    Runner,
    Serial,
    backend_named,
)
from .config import DEFAULT_EXECUTION, Execution, check_execution
from .mechanisms import (
    DETERMINISM_PROBE,
    as_batched,
    call_block,
    check_determinism,
    check_outputs,
    first_block,
    ignores_rng,
    reduce_blocks,
    run_blocks,
    strict_default,
)
from .plan import (
    CHECKPOINT_CHUNK_BLOCKS,
    MAX_CHUNK_BLOCKS,
    ChunkPlan,
    TaskGrid,
    plan_chunks,
    resolve_workers,
)
from .run import Session, map_tasks, reduce_trials, run_trials, session
from .seeds import SEED_BLOCK, child_seed, root_seed

__all__ = [
    "Execution",
    "DEFAULT_EXECUTION",
    "check_execution",
    "Backend",
    "Runner",
    "AutoBackend",
    "Serial",
    "Processes",
    "Dask",
    "BACKENDS",
    "backend_named",
    "SEED_BLOCK",
    "MAX_CHUNK_BLOCKS",
    "CHECKPOINT_CHUNK_BLOCKS",
    "DETERMINISM_PROBE",
    "as_batched",
    "check_outputs",
    "check_determinism",
    "first_block",
    "ignores_rng",
    "strict_default",
    "child_seed",
    "root_seed",
    "plan_chunks",
    "ChunkPlan",
    "TaskGrid",
    "call_block",
    "run_blocks",
    "reduce_blocks",
    "run_trials",
    "reduce_trials",
    "map_tasks",
    "session",
    "Session",
    "resolve_workers",
]
