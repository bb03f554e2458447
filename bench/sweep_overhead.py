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

Figures go into docs/benchmarks.md by hand, with the command.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ccfair.sweep import load_sweep_file, run_sweep

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=str(ROOT / "examples" / "s0-lab-grid.toml"))
    ap.add_argument("--executor", default="pool", choices=("inprocess", "pool", "dask"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=2, help="sweep.repetitions (30 = the full S0 grid)")
    ap.add_argument("--set", action="append", default=[], help="further --set overrides")
    args = ap.parse_args()
    plan = load_sweep_file(Path(args.file), [f"sweep.repetitions={args.repetitions}", *args.set])
    jobs = 1 if args.executor == "inprocess" else args.jobs
    with tempfile.TemporaryDirectory(prefix="ccfair-sweep-bench-") as tmp:
        cpu0, t0 = time.process_time(), time.perf_counter()
        res = run_sweep(plan, Path(tmp) / "out", executor=args.executor, jobs=jobs)
        wall, parent_cpu = time.perf_counter() - t0, time.process_time() - cpu0
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


if __name__ == "__main__":
    main()
