"""Benchmark: the Python/IPC overhead of a sweep against its simulation time.

    python3 bench/sweep_overhead.py [--executor pool] [--jobs 2] [--repetitions 2] [--file examples/s0-lab-grid.toml]

Runs the sweep file (by default S0's lab grid with `sweep.repetitions` cut to
``--repetitions``; 30 gives the full 8640-run grid) into a fresh temporary
directory and prints:

- wall time of run_sweep (store preparation, every run, compaction) and runs/s;
- the CPU time of the worker tasks (thread CPU time of each task) and of this
  (parent) process besides them;
- the simulator's share: ``sim_cpu_s`` summed over runs (thread CPU time of
  ``ccfair._core.simulate``, measured in the worker);
- overhead (CPU) = (worker CPU - simulation CPU + parent CPU) / simulation CPU:
  everything a sweep costs besides simulating, on a busy machine too (CPU
  time does not count waiting for a core);
- overhead (wall) = (jobs x wall - simulation CPU) / simulation CPU, which also
  counts pool/cluster start-up, idle workers and time lost to other processes.

With ``--timeline``, also where the wall time goes (from each task's start/end
timestamps, CLOCK_MONOTONIC, and the parent's own phases): start-up until each
worker's first task, the workers' busy time and the gaps between their tasks,
the tail (the first worker idle until the last one ends), the parent's store
writes and the final compaction.

Figures go into docs/benchmarks.md by hand, with the command.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ccfair.sweep as sweep_mod
from ccfair import store
from ccfair.executors import warm_up
from ccfair.sweep import load_sweep_file, run_sweep

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=str(ROOT / "examples" / "s0-lab-grid.toml"))
    ap.add_argument("--executor", default="pool", choices=("inprocess", "pool", "dask"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=2, help="sweep.repetitions (30 = the full S0 grid)")
    ap.add_argument("--set", action="append", default=[], help="further --set overrides")
    ap.add_argument("--timeline", action="store_true", help="print where the wall time goes")
    ap.add_argument(
        "--cli-order",
        action="store_true",
        help="start the executor before planning, as `ccfair sweep` does, and also print plan + sweep wall "
        "(run_sweep's wall then no longer includes the fork server's start)",
    )
    args = ap.parse_args()
    t_plan = time.perf_counter()
    if args.cli_order:
        warm_up(args.executor)
    plan = load_sweep_file(Path(args.file), [f"sweep.repetitions={args.repetitions}", *args.set])
    jobs = 1 if args.executor == "inprocess" else args.jobs
    tasks: list[dict] = []
    phases: dict[str, list[float]] = {}
    if args.timeline:
        _instrument(phases)
    with tempfile.TemporaryDirectory(prefix="ccfair-sweep-bench-") as tmp:
        cpu0, t0 = time.process_time(), time.perf_counter()
        res = run_sweep(plan, Path(tmp) / "out", executor=args.executor, jobs=jobs, progress=lambda n, out: tasks.append(out))
        t_end = time.perf_counter()
        wall, parent_cpu = t_end - t0, time.process_time() - cpu0
    assert not res.failed, res.failed
    sim = res.sim_cpu_s
    # in-process, the worker's CPU time is part of this process's
    parent_only = parent_cpu - (res.worker_cpu_s if args.executor == "inprocess" else 0.0)
    over_cpu = (res.worker_cpu_s - sim + parent_only) / sim
    over_wall = (jobs * wall - sim) / sim
    print(
        f"{args.executor} x{jobs}: {res.stored} runs in {wall:.1f} s ({res.stored / wall:.1f} runs/s); "
        f"simulation {sim:.1f} CPU-s ({sim / res.stored * 1e3:.2f} ms/run), worker CPU {res.worker_cpu_s:.1f} s, "
        f"parent CPU {parent_only:.1f} s; overhead (CPU) {over_cpu * 100:.1f} % of the simulation, "
        f"overhead (wall x jobs) {over_wall * 100:.1f} %"
    )
    if args.cli_order:
        print(f"plan + sweep (fork server started before planning, as `ccfair sweep`): {t_end - t_plan:.1f} s (plan {t0 - t_plan:.2f} s)")
    if args.timeline:
        _print_timeline(tasks, phases, t0, t_end, jobs)


def _instrument(phases: dict[str, list[float]]) -> None:
    """Wrap the parent's phases (store preparation, batch writes, compaction) to record
    [calls, wall s, CPU s, first start, last end] each."""

    def wrap(owner: object, name: str) -> None:
        fn = getattr(owner, name)

        def timed(*a: object, **k: object) -> object:
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                rec = phases.setdefault(name, [0, 0.0, 0.0, t, 0.0])
                now = time.perf_counter()
                rec[0] += 1
                rec[1] += now - t
                rec[2] += time.process_time() - c
                rec[4] = now

        setattr(owner, name, timed)

    wrap(sweep_mod, "prepare_store")
    wrap(store, "write_batch")
    wrap(store, "compact")


def _print_timeline(tasks: list[dict], phases: dict[str, list[float]], t0: float, t_end: float, jobs: int) -> None:
    print(f"timeline (s from run_sweep's start; wall {t_end - t0:.2f}):")
    for name, (n, w, c, first, last) in phases.items():
        print(f"  parent {name}: {n} calls, wall {w:.3f} s, CPU {c:.3f} s, from {first - t0:.2f} to {last - t0:.2f}")
    ends = []
    for pid in sorted({t["pid"] for t in tasks}):
        mine = sorted((t for t in tasks if t["pid"] == pid), key=lambda t: t["t"][0])
        busy = sum(t["t"][1] - t["t"][0] for t in mine)
        cpu = sum(t["cpu_s"] for t in mine)
        sim = sum(t["sim_cpu_s"] for t in mine)
        runs = sum(t["n"] for t in mine)
        gaps = sum(b["t"][0] - a["t"][1] for a, b in zip(mine, mine[1:]))
        first, last = mine[0]["t"][0] - t0, mine[-1]["t"][1] - t0
        ends.append(last)
        print(
            f"  worker {pid}: {len(mine)} tasks, {runs} runs, first task at {first:.2f}, last end {last:.2f}; "
            f"busy {busy:.2f} s (CPU {cpu:.2f}: simulation {sim:.2f}, rest {cpu - sim:.2f} = {(cpu - sim) / runs * 1e3:.2f} ms/run; "
            f"not on a core {busy - cpu:.2f}), gaps between tasks {gaps:.2f} s"
        )
        rest = [(t["cpu_s"] - t["sim_cpu_s"]) / t["n"] * 1e3 for t in mine]
        print(
            f"    besides simulating, ms/run: first tasks {' '.join(f'{r:.2f}' for r in rest[:3])}, median {sorted(rest)[len(rest) // 2]:.2f}"
        )
    print(
        f"  tail: workers' last ends {min(ends):.2f}-{max(ends):.2f} ({max(ends) - min(ends):.2f} s apart); "
        f"after the last task: {t_end - t0 - max(ends):.2f} s"
    )


if __name__ == "__main__":
    main()
