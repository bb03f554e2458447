"""Run-to-run spread of the mean queue at fidelity points: the kernel's stored runs next to K simulator seeds.

    python3 bench/fidelity_queue_spread.py --point "reno/reno 10M 200ms 1bdp" [--point ...] [--set map] [--seeds 9]

Per point: the counted kernel runs' mean queue (docs/fidelity.md "Which runs count") and every
stored run's with its gate verdict, then the simulator's with seeds 1..K, seed k starting its
flows when counted kernel run (k - 1) mod n did (as `ccfair fidelity`), each side's mean,
range and coefficient of variation (standard deviation / mean; the kernel's over the runs that
pass the gate). The mean-queue criterion (points.py QUEUE_TOLERANCE_REL) can only judge a point
whose three-run mean is known better than it: the kernel's standard error, CV / sqrt(3), below it.
Reads the stored kernel runs; runs only the simulator.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from ccfair.fidelity.compare import _sim_one
from ccfair.fidelity.points import gate_failures, load_set, runs_by_point, select_runs


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point", action="append", required=True)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", type=int, default=9)
    args = ap.parse_args()
    ps = load_set(args.set_name, Path(args.data))
    runs, _ = runs_by_point(ps)
    for p in (p for p in ps.points if p.id in args.point):
        spec = p.spec()
        counted = select_runs(p, runs[p.id], ps.runs)
        kq = [float(r["summary"]["queue_packets_mean"]) for r in counted]
        gated = [float(r["summary"]["queue_packets_mean"]) for r in runs[p.id] if not gate_failures(spec, r)]
        stored = ", ".join(
            f"{r['seed']}: {r['summary']['queue_packets_mean']:.1f}{'' if not gate_failures(spec, r) else ' (gate fails)'}"
            for r in runs[p.id]
        )
        print(f"{p.id}: kernel counted {', '.join(f'{q:.1f}' for q in kq)} (mean {statistics.fmean(kq):.1f}), CV gated {cv(gated):.3f}")
        print(f"  stored runs {stored}")
        sq = [
            float(
                _sim_one(
                    p.raw(), k, counted[(k - 1) % len(counted)].get("flow_start_s"), counted[(k - 1) % len(counted)].get("ts_epoch_ns")
                )["queue_packets_mean"]
            )
            for k in range(1, args.seeds + 1)
        ]
        print(
            f"  simulator seeds 1-{args.seeds}: {', '.join(f'{q:.1f}' for q in sq)}; mean {statistics.fmean(sq):.1f}, "
            f"range {min(sq):.1f}-{max(sq):.1f}, CV {cv(sq):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
