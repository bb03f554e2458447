"""Executors: where the runs of a sweep are computed.

Three interchangeable executors, all yielding one outcome per task (in
completion order) from the same worker function -- for a sweep,
:func:`execute_batch` on a batch of runs:

* ``inprocess`` -- one after another in this process (debugging, tiny sweeps).
* ``pool`` -- a local :class:`concurrent.futures.ProcessPoolExecutor` with
  ``jobs`` worker processes (the default; ``jobs`` defaults to the number of
  CPU cores). Worker processes are started with ``forkserver`` so that the
  parent's threads (the progress bar) are never forked.
* ``dask`` -- a Dask ``distributed`` cluster: ``Client(scheduler)`` when an
  address is given (e.g. ``tcp://10.0.0.1:8786``, a cluster started with
  ``dask scheduler``/``dask worker`` or dask-jobqueue on SLURM), else a
  ``LocalCluster`` of ``jobs`` single-threaded worker processes. Needs the
  ``[dask]`` extra (``pip install 'ccfair[dask]'``).

A worker task is a batch of runs (up to :data:`MAX_BATCH`): one round trip
to the worker and one store directory per batch instead of per run, which is
most of the per-run overhead of a sweep of short runs. Batches are cut by
:func:`plan_batches`: the runs ordered by their expected cost (the engine's
projected events, :attr:`ccfair.sweep.RunTask.cost`), longest first, in
batches that shrink as the sweep nears its end (guided self-scheduling), so
the workers finish at nearly the same time instead of one idling while the
other computes a last batch of long runs. A worker only
computes: it simulates each run, computes its summary and row in plain
Python and encodes the batch's files as bytes (Parquet tables built from the
simulator's columns, JSON lines; ccfair.store.encode_batch). The parent
process writes them into the store, so workers need no shared filesystem and
the store has exactly one writer. Each run is a pure function of its
resolved configuration, so the stored results do not depend on the executor,
the number of jobs, the batching or the completion order.

Workers are started once per sweep (the pool's processes fork from a
forkserver that has imported the simulator and pyarrow once; a Dask
cluster's workers stay up for the whole sweep). At most
``jobs * IN_FLIGHT_PER_JOB`` batches are in flight at a time, so memory stays
bounded whatever the size of the sweep, and a killed sweep loses only those.
"""

from __future__ import annotations

import math
import os
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ccfair.errors import SimulationError, SpecError

__all__ = ["EXECUTORS", "execute_batch", "run_tasks", "default_jobs", "batch_size", "plan_batches"]

EXECUTORS = ("inprocess", "pool", "dask")
#: Batches in flight per worker (keeps workers busy while the parent writes).
IN_FLIGHT_PER_JOB = 2
#: Most runs in one worker task (= one store directory).
MAX_BATCH = 64
#: Fewest tasks per worker a sweep is cut into (so that the work spreads evenly).
MIN_TASKS_PER_JOB = 4
#: Fewest runs in a batch cut by plan_batches (a task costs ~5 ms besides its runs' ~1 ms each;
#: docs/benchmarks.md, "Sweeps, session 3").
MIN_BATCH = 4


def default_jobs() -> int:
    """Number of CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def batch_size(n_runs: int, jobs: int) -> int:
    """Runs per worker task: at most MAX_BATCH, and at least MIN_TASKS_PER_JOB tasks per worker."""
    return max(1, min(MAX_BATCH, math.ceil(n_runs / (jobs * MIN_TASKS_PER_JOB))))


def plan_batches(payloads: list[dict[str, Any]], jobs: int) -> list[list[dict[str, Any]]]:
    """Sweep runs cut into worker tasks: longest expected runs first, batches shrinking towards the end.

    The runs are sorted by ``cost`` (descending; plan order among equal costs). Each
    batch takes :func:`batch_size` of the runs still left (at least MIN_BATCH), so
    batches are MAX_BATCH runs while many remain and a few of the shortest runs near
    the end: the last tasks are short and the workers run out of work together.
    """
    ordered = sorted(payloads, key=lambda p: -float(p.get("cost") or 0.0))
    out: list[list[dict[str, Any]]] = []
    i = 0
    while i < len(ordered):
        size = max(MIN_BATCH, batch_size(len(ordered) - i, jobs))
        out.append(ordered[i : i + size])
        i += size
    return out


#: Validated specs by experiment (JSON text): a sweep repeats each grid point's experiment
#: (only the seed, which is in the config, differs), so a worker validates it once.
_SPEC_CACHE: dict[str, Any] = {}
_SPEC_CACHE_MAX = 1024


def _spec(experiment: dict[str, Any]) -> Any:
    import json

    from ccfair.spec import Spec

    key = json.dumps(experiment, sort_keys=True)
    spec = _SPEC_CACHE.get(key)
    if spec is None:
        spec = Spec.from_dict(experiment)
        if len(_SPEC_CACHE) >= _SPEC_CACHE_MAX:
            _SPEC_CACHE.clear()
        _SPEC_CACHE[key] = spec
    return spec


def _error_text(e: BaseException) -> str:
    if isinstance(e, (SpecError, SimulationError)):
        return f"{type(e).__name__}: {e}"
    return f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"


def execute_batch(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """Run a batch of sweep tasks; return ``{"n", "run_ids", "files", "errors", "cpu_s", "sim_cpu_s"}``.

    ``run_ids`` are the runs that finished, ``files`` their batch directory's
    files (``{name: bytes}``, ccfair.store.encode_batch), ``errors`` maps each
    failed run to its error text; ``cpu_s`` is the CPU time of the whole task
    and ``sim_cpu_s`` the part spent in the simulator (the rest is the Python
    overhead of a sweep: docs/benchmarks.md). Never raises for a failing run,
    so one bad run cannot take down a pool or a Dask worker.
    """
    import time

    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.store import encode_batch

    t_start, cpu0 = time.perf_counter(), time.thread_time()
    sim_cpu = 0.0
    done: list[tuple[str, dict[str, Any], Any]] = []
    errors: dict[str, str] = {}
    for p in payloads:
        try:
            spec = _spec(p["experiment"])
            t0 = time.thread_time()
            raw = simulate(p["config"], spec, arrays=True, config_json=p.get("config_json") or None)
            sim_cpu += time.thread_time() - t0
            done.append((p["run_id"], p["meta"], Result.from_raw(spec, p["config"], raw)))
        except Exception as e:  # noqa: BLE001 - reported per run, the sweep goes on
            errors[p["run_id"]] = _error_text(e)
    files: dict[str, bytes] = {}
    if done:
        try:
            files = encode_batch(done)
        except Exception as e:  # noqa: BLE001 - the batch's runs are reported as failed (retried next time)
            errors.update((rid, _error_text(e)) for rid, _, _ in done)
            done = []
    return {
        "n": len(payloads),
        "run_ids": [rid for rid, _, _ in done],
        "files": files,
        "errors": errors,
        "cpu_s": time.thread_time() - cpu0,
        "sim_cpu_s": sim_cpu,
        # for the sweep's timeline (bench/sweep_overhead.py): CLOCK_MONOTONIC, shared by the processes of a host
        "pid": os.getpid(),
        "t": (t_start, time.perf_counter()),
    }


#: A worker function: one task (a batch of sweep runs, or one payload of ``fn``) -> its outcome.
TaskFn = Callable[[Any], dict[str, Any]]


def _inprocess(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    for t in tasks:
        yield fn(t)


#: Modules the pool's fork server imports once; every worker forks from it ready to run.
#: (pandas too: pyarrow imports it on a worker's first conversion of a numpy column.)
_FORKSERVER_PRELOAD = [
    "ccfair.executors",
    "ccfair.api",
    "ccfair.result",
    "ccfair.store",
    "ccfair.spec",
    "numpy",
    "pyarrow.parquet",
    "pandas",
]


def _forkserver() -> Any:
    """The forkserver context with the preload set, its server process started (in the background)."""
    import multiprocessing as mp
    from multiprocessing import forkserver

    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(_FORKSERVER_PRELOAD)
    forkserver.ensure_running()  # returns at once; the server imports while the caller goes on
    return ctx


def warm_up(executor: str) -> None:
    """Start what ``executor`` needs before its first task (the pool's fork server), so that
    it starts while the caller prepares the store. Nothing for the others."""
    if executor == "pool":
        _forkserver()


def _pool(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    window = max(1, jobs * IN_FLIGHT_PER_JOB)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_forkserver())
    try:
        it = iter(tasks)
        pending = set()
        for p in it:
            pending.add(pool.submit(fn, p))
            if len(pending) >= window:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    out = fut.result()
                except Exception as e:  # BrokenProcessPool: a worker died (crash, OOM kill)
                    raise SimulationError(f"a worker process died: {e}") from e
                yield out
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(fn, nxt))
    finally:
        # On an interrupt, drop the queued runs instead of finishing them.
        pool.shutdown(wait=True, cancel_futures=True)


def _dask(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SpecError("--executor", "dask needs the optional dependency: pip install 'ccfair[dask]' (dask[distributed])") from None
    import logging

    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError) as e:
            raise SpecError("--scheduler", f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from None
    else:
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
    try:
        window = max(1, jobs * IN_FLIGHT_PER_JOB)
        if scheduler:
            window = max(window, sum(client.nthreads().values()) * IN_FLIGHT_PER_JOB)
        it = iter(tasks)
        ac = as_completed()
        for p in it:
            ac.add(client.submit(fn, p, key=_dask_key(p), pure=False))
            if ac.count() >= window:
                break
        for fut in ac:
            out = fut.result()
            fut.release()
            yield out
            nxt = next(it, None)
            if nxt is not None:
                ac.add(client.submit(fn, nxt, key=_dask_key(nxt), pure=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_key(task: Any) -> str:
    if isinstance(task, list):
        return f"ccfair-batch-{task[0]['run_id']}+{len(task)}"
    return f"ccfair-run-{task['run_id']}"


_IMPL: dict[str, Callable[..., Iterator[dict[str, Any]]]] = {
    "inprocess": _inprocess,
    "pool": _pool,
    "dask": _dask,
}


def run_tasks(
    payloads: list[dict[str, Any]],
    executor: str = "pool",
    jobs: int | None = None,
    scheduler: str | None = None,
    fn: TaskFn | None = None,
    batch: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Run ``payloads`` on ``executor``; yield outcomes as they finish.

    Without ``fn`` the payloads are sweep runs (:meth:`RunTask.payload`), run in
    batches by :func:`execute_batch` (``batch`` consecutive runs each, default
    :func:`plan_batches`): one outcome per batch. With ``fn`` (a module-level
    function, so that it pickles) each payload is one task and ``fn(payload)`` its
    outcome; ``ccfair reproduce`` passes its own (each payload carries ``run_id``).
    """
    if executor not in _IMPL:
        raise SpecError("--executor", f"unknown executor {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if jobs is None:
        jobs = default_jobs()
    if jobs < 1:
        raise SpecError("--jobs", f"must be >= 1, got {jobs}")
    if scheduler and executor != "dask":
        raise SpecError("--scheduler", "only used with --executor dask")
    if not payloads:
        return iter(())
    if fn is not None:
        return _IMPL[executor](payloads, jobs, scheduler, fn)
    if batch is None:
        batches = plan_batches(payloads, jobs)
    else:
        batches = [payloads[i : i + batch] for i in range(0, len(payloads), batch)]
    return _IMPL[executor](batches, jobs, scheduler, execute_batch)
