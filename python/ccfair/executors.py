"""Executors: where the runs of a sweep are computed.

Three interchangeable executors, all yielding one outcome per run (in
completion order) from the same worker function, :func:`execute`:

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

A worker only computes: it simulates, builds the tables and encodes the
run's files as bytes (Parquet, JSON). The parent process writes them into
the store, so workers need no shared filesystem and the store has exactly
one writer. Each run is a pure function of its resolved configuration, so
the stored results do not depend on the executor, the number of jobs or the
completion order.

At most ``window`` runs are in flight at a time, so memory stays bounded
whatever the size of the sweep.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ccfair.errors import SimulationError, SpecError

__all__ = ["EXECUTORS", "execute", "run_tasks", "default_jobs"]

EXECUTORS = ("inprocess", "pool", "dask")
#: Runs in flight per worker (keeps workers busy while the parent writes).
IN_FLIGHT_PER_JOB = 4


def default_jobs() -> int:
    """Number of CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def execute(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one sweep task; return ``{"run_id", "files": {name: bytes}}`` or ``{"run_id", "error"}``.

    Never raises for a failing run (the error is returned as text), so one
    bad run cannot take down a pool or a Dask worker.
    """
    import json

    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.spec import Spec
    from ccfair.store import _json_bytes, encode_result, make_row

    run_id = payload["run_id"]
    try:
        spec = Spec.from_dict(payload["experiment"])
        config = payload["config"]
        raw = simulate(config, spec)
        result = Result.from_raw(spec, config, raw)
        files = encode_result(result)
        files["row.json"] = _json_bytes(make_row(run_id, payload["meta"], result))
        json.loads(files["row.json"])  # fail here, not in the parent, if it cannot be read back
        return {"run_id": run_id, "files": files}
    except (SpecError, SimulationError) as e:
        return {"run_id": run_id, "error": f"{type(e).__name__}: {e}"}
    except Exception as e:  # noqa: BLE001 - reported per run, the sweep goes on
        tb = traceback.format_exc(limit=5)
        return {"run_id": run_id, "error": f"{type(e).__name__}: {e}\n{tb}"}


def _inprocess(
    payloads: list[dict[str, Any]], jobs: int, scheduler: str | None, fn: Callable[[dict[str, Any]], dict[str, Any]] = execute
) -> Iterator[dict[str, Any]]:
    for p in payloads:
        yield fn(p)


def _pool(
    payloads: list[dict[str, Any]], jobs: int, scheduler: str | None, fn: Callable[[dict[str, Any]], dict[str, Any]] = execute
) -> Iterator[dict[str, Any]]:
    import multiprocessing as mp

    window = max(1, jobs * IN_FLIGHT_PER_JOB)
    ctx = mp.get_context("forkserver")
    # Import the heavy modules once in the fork server; every worker forks from it ready to run.
    ctx.set_forkserver_preload(["ccfair.executors", "ccfair.api", "ccfair.result", "ccfair.store", "pyarrow.parquet"])
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
    try:
        it = iter(payloads)
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


def _dask(
    payloads: list[dict[str, Any]], jobs: int, scheduler: str | None, fn: Callable[[dict[str, Any]], dict[str, Any]] = execute
) -> Iterator[dict[str, Any]]:
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
        it = iter(payloads)
        ac = as_completed()
        for p in it:
            ac.add(client.submit(fn, p, key=f"ccfair-run-{p['run_id']}", pure=False))
            if ac.count() >= window:
                break
        for fut in ac:
            out = fut.result()
            fut.release()
            yield out
            nxt = next(it, None)
            if nxt is not None:
                ac.add(client.submit(fn, nxt, key=f"ccfair-run-{nxt['run_id']}", pure=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


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
    fn: Callable[[dict[str, Any]], dict[str, Any]] = execute,
) -> Iterator[dict[str, Any]]:
    """Run ``payloads`` on ``executor``; yield outcomes as they finish.

    ``fn`` (a module-level function, so that it pickles) runs one payload;
    the default :func:`execute` takes payloads from :meth:`RunTask.payload`.
    ``ccfair reproduce`` passes its own (each payload carries ``run_id``).
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
    return _IMPL[executor](payloads, jobs, scheduler, fn)
