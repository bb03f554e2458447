"""Flow B's share against the phase it starts in: the simulator at one fidelity point with B's start
moved in steps after A's (docs/linux-ports.md "Veno against CUBIC: the phase CUBIC meets").

    python3 bench/veno_bpf/start_phase.py --point "veno/cubic 20M 100ms 1bdp" [--set kernel-ccas-loss]
        [--seeds 1,2] [--step-ms 25] [--steps 16] [--jobs 2]

Each run is the point's experiment with A at 0 s and B at 5 s + k * step (k = 0 .. steps - 1), no start
jitter, at each seed. Prints B's share per run, its mean per seed and over all, and the counted kernel
runs' measured starts and shares next to it: the kernel's flows start within a millisecond of 0 s and
5 s, so a spread of the simulator's share over the start offset is a spread over the phase of A's
window cycle that B meets, which the kernel's runs reach by other ways (their A's history differs
from run to run).
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ccfair.fidelity.compare import _sim_one
from ccfair.fidelity.points import group_shares, load_set, runs_by_point, select_runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="kernel-ccas-loss")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--point", required=True)
    ap.add_argument("--seeds", default="1,2", help="comma-separated simulator seeds")
    ap.add_argument("--step-ms", type=float, default=25.0)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    ps = load_set(args.set_name, Path(args.data))
    points = {p.id: p for p in ps.points}
    if args.point not in points:
        raise SystemExit(f"--point {args.point!r}: not a point of set {args.set_name!r} (e.g. {next(iter(points))!r})")
    point = points[args.point]
    kernel_runs = select_runs(point, runs_by_point(ps)[0][point.id], ps.runs)
    if not kernel_runs:
        raise SystemExit(f"--point {args.point!r}: no kernel runs stored")
    spec = point.spec()
    seeds = [int(s) for s in args.seeds.split(",")]
    offsets = [k * args.step_ms / 1000 for k in range(args.steps)]
    jobs = [(point.raw(), seed, [0.0, 5.0 + off], None) for seed in seeds for off in offsets]
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        summaries = list(ex.map(_sim_one, *zip(*jobs)))
    shares = [group_shares(spec, s)[1] for s in summaries]
    for seed in seeds:
        row = [b for (_, s, _, _), b in zip(jobs, shares) if s == seed]
        print(f"seed {seed}: " + " ".join(f"{5.0 + o:.3f}:{b:.3f}" for o, b in zip(offsets, row)) + f"  mean {statistics.fmean(row):.3f}")
    print(f"simulator over {len(shares)} runs: B mean {statistics.fmean(shares):.3f}, range {min(shares):.3f}-{max(shares):.3f}")
    ks = [r["summary"] for r in kernel_runs]
    kshares = [group_shares(spec, s)[1] for s in ks]
    starts = [r.get("flow_start_s") for r in kernel_runs if r.get("flow_start_s")]
    if starts:
        print(f"kernel's B starts {min(s[1] for s in starts):.4f}-{max(s[1] for s in starts):.4f} s")
    print(f"kernel over {len(kshares)} counted runs: B mean {statistics.fmean(kshares):.3f}, range {min(kshares):.3f}-{max(kshares):.3f}")


if __name__ == "__main__":
    main()
