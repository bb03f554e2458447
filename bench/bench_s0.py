"""Benchmark: the S0 base case through the Python API (after import).

    python3 bench/bench_s0.py [--reps 21]

Prints the median wall time of `ccfair.run(spec)` (spec validation, the Rust
simulation and building the pandas tables), the median wall time of the
simulation alone (`sim_wall_s`), and simulated data packets per wall second.
Results go into docs/benchmarks.md by hand, with the command.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import ccfair
from ccfair.spec import Spec

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    spec = Spec.from_toml(ROOT / "examples" / "s0-cubic-vs-bbr.toml")
    ccfair.run(spec)  # warm-up (first import of pandas/pyarrow paths)
    total, sim, pkts = [], [], 0
    for _ in range(args.reps):
        t = time.perf_counter()
        r = ccfair.run(spec)
        total.append(time.perf_counter() - t)
        sim.append(r.summary["sim_wall_s"])
        pkts = r.summary["data_packets"]
    med_total, med_sim = statistics.median(total), statistics.median(sim)
    print(
        f"S0 base case, {args.reps} runs (median): ccfair.run {med_total * 1e3:.2f} ms, "
        f"simulation {med_sim * 1e3:.2f} ms, {pkts} data packets, "
        f"{pkts / med_sim / 1e6:.2f} M packets per wall second (simulation), "
        f"{pkts / med_total / 1e6:.2f} M (whole call)"
    )


if __name__ == "__main__":
    main()
