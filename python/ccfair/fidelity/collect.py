"""``ccfair fidelity collect``: run every point of a set on the testbed until it has its runs.

Resumable: a run is (point, seed) with seeds 1..runs; the runs already stored
for the point's current spec are skipped. Each finished run is appended to
``kernel/<set>.jsonl`` as one line and synced at once (points.append_run), so a
kill -9 of the collector loses only runs that had not finished. Runs go in
rounds (every point's seed 1, then every point's seed 2, ...) so that an
interrupted campaign has the most points covered.

One testbed run per child process, through :func:`ccfair.testbed.child.run`, the
function every testbed campaign uses (``ccfair sweep --backend testbed`` too); the
equivalent ``ccfair run ... --backend testbed --json`` command is stored with the run.
The child gets SIGTERM when the collector dies (PR_SET_PDEATHSIG): the testbed runner
turns SIGTERM into its normal clean-up, and every testbed run first removes what dead
runs left (docs/testbed.md, Robustness).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.errors import SpecError
from ccfair.fidelity.points import Point, PointSet, append_run, gate_failures, ports_used, repair_tail, runs_by_point, spec_sha

#: Where live testbed runs keep their state files (one per run; docs/testbed.md).
STATE_DIR = Path("/run/ccfair")


def pending(ps: PointSet, runs: int, gated: bool = False) -> list[tuple[Point, int]]:
    """(point, seed) still to run. Without ``gated``: seeds 1..runs, in rounds of seeds.
    With ``gated``: each point until ``runs`` of its runs pass the quality gate
    (points.gate_failures), with new seeds after its highest stored one, point by point,
    the points with the lowest kernel utilisation first (a stalled host lowers it)."""
    stored, _ = runs_by_point(ps)
    if not gated:
        done = {(pid, r["seed"]) for pid, rs in stored.items() for r in rs}
        return [(p, s) for s in range(1, runs + 1) for p in ps.points if (p.id, s) not in done]

    def utilisation(p: Point) -> float:
        rs = stored[p.id]
        return sum(r["summary"]["utilization"] for r in rs) / len(rs) if rs else 0.0

    todo = []
    for p in sorted(ps.points, key=utilisation):
        spec = p.spec()
        have = sum(1 for r in stored[p.id] if not gate_failures(spec, r))
        top = max((r["seed"] for r in stored[p.id]), default=0)
        todo += [(p, top + k) for k in range(1, runs - have + 1)]
    return todo


def live_testbed_runs() -> int:
    """Testbed runs on this host right now (state files in /run/ccfair), anyone's."""
    try:
        return sum(1 for p in STATE_DIR.glob("*.json"))
    except OSError:
        return 0


def _loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def host_facts(summary: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """Load and the bottleneck's health figures of one run."""
    tb = summary.get("testbed", {})
    bn = tb.get("bottleneck", {})
    return {
        **before,
        "cpus": os.cpu_count(),
        "load_after": _loadavg(),
        "load_avg_1min": tb.get("load_avg_1min"),
        "bottleneck_late_p50_us": bn.get("late_p50_us"),
        "bottleneck_late_p99_us": bn.get("late_p99_us"),
        "bottleneck_late_max_ns": bn.get("late_max_ns"),
        "bottleneck_late_mean_ns": bn.get("late_mean_ns"),
        "bottleneck_rx_socket_drops": bn.get("rx_socket_drops"),
        "bottleneck_tx_errors": bn.get("tx_errors"),
    }


def run_one(point: Point, seed: int) -> dict[str, Any]:
    """One testbed run of ``point`` in a child process (:func:`ccfair.testbed.child.run`); the
    record to store. Raises RuntimeError. The record also has what the summary lacks: when each
    flow really started (``flow_start_s``, from the flows table; a loaded host starts agents late) and
    the hosts' TCP timestamp clock at the run's time zero (``ts_epoch_ns``, CLOCK_MONOTONIC ns).
    """
    from ccfair.errors import SimulationError
    from ccfair.testbed import child

    raw = point.raw()
    before = {"load_before": _loadavg(), "live_testbed_runs_before": live_testbed_runs()}
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    cmd = point.command(seed)
    t0 = time.monotonic()
    try:
        result = child.run(raw, seed)
    except (SpecError, SimulationError) as e:
        raise RuntimeError(str(e)) from None
    summary = json.loads(json.dumps(result.summary))
    flow_start_s = [float(x) for x in result.flows["start_s"]]
    ports = ports_used(summary)
    return {
        "set": point.set_name,
        "point": point.id,
        "seed": seed,
        "spec_sha": spec_sha(raw, ports),
        "bpf_ports": ports,
        "spec": raw,
        "command": shlex.join(cmd),
        "kernel": summary.get("testbed", {}).get("kernel", os.uname().release),
        "started_utc": started,
        "wall_s": round(time.monotonic() - t0, 1),
        "host": host_facts(summary, before),
        "flow_start_s": flow_start_s,
        "ts_epoch_ns": summary.get("testbed", {}).get("ts_epoch_ns"),
        "summary": summary,
    }


@contextlib.contextmanager
def set_lock(ps: PointSet) -> Iterator[None]:
    """One collector per set: ``flock`` on ``kernel/.<set>.lock`` (released by the kernel when the process dies)."""
    path = ps.kernel_path.with_name(f".{ps.name}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise SpecError("--set", f"set {ps.name!r} is being collected by {holder}; wait for it or stop it") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"PID {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def collect(ps: PointSet, runs: int, jobs: int, log: Callable[[str], None], gated: bool = False) -> tuple[int, int]:
    """Run what is missing of ``ps`` (``runs`` per point, with ``gated`` runs that pass the
    quality gate; ``jobs`` at a time); (finished, failed). With ``gated``, pass after pass until
    nothing is missing, or until a pass adds no run that passes the gate (the host too noisy for
    the gate: said in the log, and the same command resumes)."""
    with set_lock(ps):
        ok = failed = 0
        while True:
            passing = passing_runs(ps) if gated else 0
            o, f = _collect(ps, runs, jobs, log, gated)
            ok, failed = ok + o, failed + f
            if not gated or not o:
                return ok, failed
            missing = len(pending(ps, runs, gated=True))
            if not missing:
                return ok, failed
            if passing_runs(ps) == passing:
                log(f"{ps.name}: no run of that pass passed the gate (a noisy host?); {missing} still missing; stopping (resumable)")
                return ok, failed
            log(f"{ps.name}: {missing} run(s) still missing (runs of that pass failed the gate); another pass")


def passing_runs(ps: PointSet) -> int:
    """How many of the set's stored runs (of its points as they are now) pass the quality gate."""
    stored, _ = runs_by_point(ps)
    return sum(sum(1 for r in stored[p.id] if not gate_failures(spec, r)) for p in ps.points for spec in [p.spec()])


def _collect(ps: PointSet, runs: int, jobs: int, log: Callable[[str], None], gated: bool) -> tuple[int, int]:
    repair_tail(ps.kernel_path)
    todo = pending(ps, runs, gated)
    log(f"{ps.name}: {len(todo)} run(s) to do ({len(ps.points)} points x {runs} runs), {jobs} at a time -> {ps.kernel_path}")
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0}

    def one(job: tuple[Point, int]) -> None:
        point, seed = job
        try:
            rec = run_one(point, seed)
        except (RuntimeError, ValueError) as e:
            with lock:
                counts["failed"] += 1
                log(f"{point.id} seed {seed}: FAILED: {e}")
            return
        with lock:
            append_run(ps.kernel_path, rec)
            counts["ok"] += 1
            h = rec["host"]
            log(
                f"[{counts['ok'] + counts['failed']}/{len(todo)}] {point.id} seed {seed}: "
                f"B share {_share_b(rec):.3f}, load {h['load_before'][0]:.1f}, "
                f"late p99 {h['bottleneck_late_p99_us']} us, max {(h['bottleneck_late_max_ns'] or 0) / 1e6:.1f} ms"
            )

    _run_all(
        one,
        todo,
        jobs,
        lambda: log(f"{ps.name}: interrupted: no new run starts; the runs under way are stored when they end; the same command resumes"),
    )
    return counts["ok"], counts["failed"]


def _run_all(one: Callable[[tuple[Point, int]], None], todo: list[tuple[Point, int]], jobs: int, on_interrupt: Callable[[], None]) -> None:
    """``one`` over ``todo``, ``jobs`` at a time. Interrupted (Ctrl-C, or any exception in this
    thread), no new job starts and the ones under way end (their runs stored) before it re-raises."""
    cond = threading.Condition()
    state = {"stopped": False, "active": 0}

    def guarded(job: tuple[Point, int]) -> None:
        with cond:
            if state["stopped"]:
                return
            state["active"] += 1
        try:
            one(job)
        finally:
            with cond:
                state["active"] -= 1
                cond.notify_all()

    ex = ThreadPoolExecutor(max(1, jobs))
    try:
        list(ex.map(guarded, todo))
    except BaseException:
        with cond:
            state["stopped"] = True
        on_interrupt()
        with cond:
            cond.wait_for(lambda: state["active"] == 0)
        raise
    finally:
        ex.shutdown(wait=False, cancel_futures=True)


def _share_b(rec: dict[str, Any]) -> float:
    from ccfair.fidelity.points import group_shares
    from ccfair.spec import Spec

    return group_shares(Spec.from_dict(rec["spec"]), rec["summary"])[1]
