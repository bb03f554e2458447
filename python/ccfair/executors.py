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

Small commits: a worker task stops starting runs once it has run for
:data:`BATCH_BUDGET_S` and hands the runs it did not start back (``rest``), which go
back to the front of the queue; so a batch is committed within about that time of its
start, and a sweep killed at any instant loses at most that much finished work per worker.

Testbed runs (``backend = "testbed"`` in a payload: ``ccfair sweep --backend testbed``)
are one run per task, run in a child process (:func:`ccfair.testbed.child.run`) and
checked against the quality gate (:mod:`ccfair.testbed.quality`: re-run when over its
limits). On Dask a testbed task asks for the worker resource :data:`TESTBED_RESOURCE`
(one unit): only workers started with ``--resources testbed=1`` take it, one at a time
each; simulator tasks ask for nothing and go to every worker. A task whose worker is lost
is re-run by the scheduler on another worker; only a task's returned outcome is stored.

Stopping: the pool's workers ignore SIGINT (Ctrl-C reaches the whole process group; the
parent stops them) and exit as soon as the sweep's main process has gone, however it
ended (a thread waits on a pidfd of that process), so kill -9 of the main process leaves
no worker, and with them the fork server and the resource tracker end. On an interrupt
the parent kills its workers instead of waiting for their tasks.
"""

from __future__ import annotations

import math
import os
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ccfair.errors import SimulationError, SpecError

__all__ = ["EXECUTORS", "TESTBED_RESOURCE", "execute_batch", "run_tasks", "default_jobs", "batch_size", "plan_batches"]

EXECUTORS = ("inprocess", "pool", "dask")
#: Batches in flight per worker (keeps workers busy while the parent writes).
IN_FLIGHT_PER_JOB = 2
#: Most runs in one worker task (= one store directory).
MAX_BATCH = 64
#: Fewest tasks per worker a sweep is cut into (so that the work spreads evenly).
MIN_TASKS_PER_JOB = 4
#: Fewest runs in a batch cut by plan_batches (a task costs ~5 ms besides its runs' ~1 ms each;
#: docs/benchmarks.md, "Sweeps").
MIN_BATCH = 4
#: A worker task starts no further run after this long (seconds) and returns the rest.
BATCH_BUDGET_S = 2.0
#: The Dask worker resource a testbed task needs (one unit): `dask worker --resources testbed=1`.
TESTBED_RESOURCE = "testbed"
#: The environment variable that tells the pool's fork server the main process's PID (ccfair._forkserver_guard).
FORKSERVER_PARENT_ENV = "CCFAIR_FORKSERVER_PARENT"
#: The function a testbed run goes through: experiment dict, seed -> Result ("module:function").
TESTBED_FN = "ccfair.testbed.child:run"


def check_options(executor: str, jobs: int | None, scheduler: str | None) -> None:
    """Where the runs go (``--executor``, ``--jobs``, ``--scheduler``), each value refused naming its option."""
    if executor not in EXECUTORS:
        raise SpecError("--executor", f"unknown executor {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if jobs is not None and jobs < 1:
        raise SpecError("--jobs", f"must be >= 1, got {jobs}")
    if scheduler and executor != "dask":
        raise SpecError("--scheduler", "only used with --executor dask")


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
    # testbed runs: one per task (each is committed as it finishes), first (they are the longest)
    out: list[list[dict[str, Any]]] = [[p] for p in payloads if p.get("backend") == "testbed"]
    sim = [p for p in payloads if p.get("backend") != "testbed"]
    ordered = sorted(sim, key=lambda p: -float(p.get("cost") or 0.0))
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


def _worker_name() -> str:
    """The Dask worker's name when running on one, else ``pid N`` of this process."""
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def _testbed_fn(name: str) -> Callable[[dict[str, Any], int], Any]:
    import importlib

    module, _, attr = name.partition(":")
    fn: Callable[[dict[str, Any], int], Any] = getattr(importlib.import_module(module), attr)
    return fn


def _testbed_run(p: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """One testbed run of a sweep through the quality gate: (meta with its host facts, Result).

    Re-run while over the gate's limits, :data:`ccfair.testbed.quality.MAX_ATTEMPTS` attempts in
    all (the payload's ``max_attempts``: ``ccfair sweep --testbed-attempts``); the last attempt is
    kept, marked in ``quality`` with what it exceeded."""
    import time

    from ccfair.testbed import quality

    spec = _spec(p["experiment"])
    run = _testbed_fn(p.get("testbed_fn") or TESTBED_FN)
    rejected: list[str] = []
    for attempt in range(1, int(p.get("max_attempts") or quality.MAX_ATTEMPTS) + 1):
        t0 = time.perf_counter()
        result = run(p["experiment"], int(p["meta"]["seed"]))
        facts = quality.host_facts(result.summary, result.config, spec.packet_wire_bytes)
        reasons = quality.over_limits(facts)
        if not reasons:
            break
        rejected.append("; ".join(reasons))
    facts.update(
        worker=_worker_name(),
        wall_s=round(time.perf_counter() - t0, 3),
        attempts=attempt,
        quality="ok" if not reasons else "over limits: " + "; ".join(reasons),
        rejected=" | ".join(rejected[:-1] if reasons else rejected),
    )
    return {**p["meta"], "facts": facts}, result


def execute_batch(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """Run a batch of sweep tasks; return ``{"n", "run_ids", "files", "errors", "rest", "cpu_s", "sim_cpu_s", ...}``.

    ``run_ids`` are the runs that finished, ``files`` their batch directory's
    files (``{name: bytes}``, ccfair.store.encode_batch), ``errors`` maps each
    failed run to its error text; ``rest`` are the payloads not started because the
    task had run for :data:`BATCH_BUDGET_S` (the caller queues them again; ``n`` counts
    the runs done, finished or failed); ``cpu_s`` is the CPU time of the whole task
    and ``sim_cpu_s`` the part spent in the simulator (the rest is the Python
    overhead of a sweep: docs/benchmarks.md). Never raises for a failing run,
    so one bad run cannot take down a pool or a Dask worker.
    """
    import socket
    import time

    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.store import encode_batch

    t_start, cpu0 = time.perf_counter(), time.thread_time()
    sim_cpu = 0.0
    done: list[tuple[str, dict[str, Any], Any]] = []
    errors: dict[str, str] = {}
    rest: list[dict[str, Any]] = []
    for k, p in enumerate(payloads):
        if k and time.perf_counter() - t_start > BATCH_BUDGET_S:
            rest = payloads[k:]
            break
        try:
            if p.get("backend") == "testbed":
                meta, result = _testbed_run(p)
                done.append((p["run_id"], meta, result))
                continue
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
        "n": len(payloads) - len(rest),
        "run_ids": [rid for rid, _, _ in done],
        "files": files,
        "errors": errors,
        "rest": rest,
        "host": socket.gethostname(),
        "worker": _worker_name(),
        "facts": {rid: meta["facts"] for rid, meta, _ in done if "facts" in meta},
        "cpu_s": time.thread_time() - cpu0,
        "sim_cpu_s": sim_cpu,
        # for the sweep's timeline (bench/sweep_overhead.py): CLOCK_MONOTONIC, shared by the processes of a host
        "pid": os.getpid(),
        "t": (t_start, time.perf_counter()),
    }


#: A worker function: one task (a batch of sweep runs, or one payload of ``fn``) -> its outcome.
TaskFn = Callable[[Any], dict[str, Any]]


def _inprocess(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    queue = deque(tasks)
    while queue:
        out = fn(queue.popleft())
        if out.get("rest"):
            queue.appendleft(out["rest"])
        yield out


def _task_runs(task: Any) -> list[str]:
    """The run ids of a task (a batch of sweep payloads, or one payload of ``fn``)."""
    return [p["run_id"] for p in task] if isinstance(task, list) else [task["run_id"]]


def _needs_testbed(task: Any) -> bool:
    return any(p.get("backend") == "testbed" for p in (task if isinstance(task, list) else [task]))


#: Modules the pool's fork server imports once; every worker forks from it ready to run.
#: (pandas too: pyarrow imports it on a worker's first conversion of a numpy column.)
_FORKSERVER_PRELOAD = [
    "ccfair._forkserver_guard",  # first: the server dies with the main process, even while importing the rest
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
    os.environ[FORKSERVER_PARENT_ENV] = str(os.getpid())  # read by the server's first preload module
    try:
        forkserver.ensure_running()  # returns at once; the server imports while the caller goes on
    finally:
        del os.environ[FORKSERVER_PARENT_ENV]  # for the server only, not for other children
    return ctx


def _exit_with(main_pid: int) -> None:
    """A pool worker's set-up: ignore SIGINT (the parent stops the pool) and exit as soon as the
    sweep's main process ``main_pid`` has gone (its parent is the fork server, so prctl's
    parent-death signal would not see the main process die): a daemon thread waits on a pidfd."""
    import select
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fd = os.pidfd_open(main_pid)
    except (ProcessLookupError, OSError):
        os._exit(1)

    def watch() -> None:
        select.select([fd], [], [])
        os._exit(1)  # a testbed child of this worker gets SIGTERM (its parent-death signal)

    threading.Thread(target=watch, name="ccfair-watch-main", daemon=True).start()


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Stop a pool's workers now (SIGKILL): on an interrupt, their tasks' results are not wanted."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):
            pass
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.join(5)
        except (OSError, ValueError, AssertionError):
            pass


def warm_up(executor: str) -> None:
    """Start what ``executor`` needs before its first task (the pool's fork server), so that
    it starts while the caller prepares the store. Nothing for the others."""
    if executor == "pool":
        _forkserver()


def _pool(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    window = max(1, jobs * IN_FLIGHT_PER_JOB)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_forkserver(), initializer=_exit_with, initargs=(os.getpid(),))
    finished = False
    try:
        queue = deque(tasks)
        pending: set[Any] = set()
        while queue or pending:
            while queue and len(pending) < window:
                pending.add(pool.submit(fn, queue.popleft()))
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    out = fut.result()
                except Exception as e:  # BrokenProcessPool: a worker died (crash, OOM kill)
                    raise SimulationError(f"a worker process died: {e}") from e
                if out.get("rest"):
                    queue.appendleft(out["rest"])
                yield out
        finished = True
    finally:
        if not finished:  # interrupted (or the consumer stopped): the workers' tasks are not wanted
            _kill_workers(pool)
        pool.shutdown(wait=finished, cancel_futures=True)


def _dask(tasks: list[Any], jobs: int, scheduler: str | None, fn: TaskFn) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SpecError("--executor", "dask needs the optional dependency: pip install 'ccfair[dask]' (dask[distributed])") from None
    import logging

    testbed = any(_needs_testbed(t) for t in tasks)
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
            **({"resources": {TESTBED_RESOURCE: 1}} if testbed else {}),
        )
        client = Client(cluster)
    try:
        if testbed:
            _check_testbed_workers(client, scheduler)
        window = max(1, jobs * IN_FLIGHT_PER_JOB)
        if scheduler:
            window = max(window, sum(client.nthreads().values()) * IN_FLIGHT_PER_JOB)
        queue = deque(tasks)
        ac = as_completed()
        submitted: dict[str, Any] = {}

        def submit(task: Any) -> None:
            key = _dask_key(task)
            resources = {TESTBED_RESOURCE: 1} if _needs_testbed(task) else None
            submitted[key] = task
            ac.add(client.submit(fn, task, key=key, pure=False, resources=resources))

        while queue and ac.count() < window:
            submit(queue.popleft())
        for fut in ac:
            task = submitted.pop(fut.key)
            try:
                out = fut.result()
            except Exception as e:  # noqa: BLE001 - e.g. KilledWorker: its workers died too often; retried next time
                out = {"n": len(_task_runs(task)), "run_ids": [], "files": {}, "errors": dict.fromkeys(_task_runs(task), _error_text(e))}
            fut.release()
            if out.get("rest"):
                queue.appendleft(out["rest"])
            yield out
            while queue and ac.count() < window:
                submit(queue.popleft())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _check_testbed_workers(client: Any, scheduler: str | None) -> None:
    """A sweep with testbed runs on a cluster where no worker declares the testbed resource
    would wait forever: refuse it naming the option workers need."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {}) if scheduler else {}
    if scheduler and not any((w.get("resources") or {}).get(TESTBED_RESOURCE) for w in workers.values()):
        raise SpecError(
            "--backend",
            f"no worker of the Dask cluster at {scheduler} declares the {TESTBED_RESOURCE!r} resource; start the workers "
            f"of testbed hosts with `dask worker {scheduler} --resources {TESTBED_RESOURCE}=1` (docs/testbed.md)",
        )


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
    testbed_fn: str | None = None,
    testbed_attempts: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Run ``payloads`` on ``executor``; yield outcomes as they finish.

    Without ``fn`` the payloads are sweep runs (:meth:`RunTask.payload`), run in
    batches by :func:`execute_batch` (``batch`` consecutive runs each, default
    :func:`plan_batches`): one outcome per batch. With ``fn`` (a module-level
    function, so that it pickles) each payload is one task and ``fn(payload)`` its
    outcome; ``ccfair reproduce`` passes its own (each payload carries ``run_id``).
    """
    check_options(executor, jobs, scheduler)
    if jobs is None:
        jobs = default_jobs()
    if not payloads:
        return iter(())
    if testbed_fn is not None:  # tests: a stand-in for the testbed ("module:function", importable by the workers)
        payloads = [dict(p, testbed_fn=testbed_fn) if p.get("backend") == "testbed" else p for p in payloads]
    if testbed_attempts is not None:
        if testbed_attempts < 1:
            raise SpecError("--testbed-attempts", f"must be >= 1, got {testbed_attempts}")
        payloads = [dict(p, max_attempts=testbed_attempts) if p.get("backend") == "testbed" else p for p in payloads]
    if fn is not None:
        return _IMPL[executor](payloads, jobs, scheduler, fn)
    if batch is None:
        batches = plan_batches(payloads, jobs)
    else:
        batches = [payloads[i : i + batch] for i in range(0, len(payloads), batch)]
        batches = [[p] for b in batches for p in b if p.get("backend") == "testbed"] + [
            sim for b in batches if (sim := [p for p in b if p.get("backend") != "testbed"])
        ]
    return _IMPL[executor](batches, jobs, scheduler, execute_batch)
