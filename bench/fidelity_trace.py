"""Per-flow traces of one fidelity point on both sides: cwnd, in-flight, srtt, pacing rate, ssthresh.

    python3 bench/fidelity_trace.py --set map --point "reno/cubic 10M 10ms 1bdp" --seed 1 [--testbed] [--sample 10ms]
        [--out DIR] [--set-sim KEY=VALUE ...] [--every 1.0]

Runs the point with `trace = true` on the simulator (and with --testbed on real Linux TCP:
TCP_INFO every `sample`, root) and prints, per flow and side, the slow-start exit (first
finite ssthresh and when), the number of window reductions (ssthresh changes), mean cwnd,
srtt and pacing rate over the window, and a coarse time series (every --every s). With
--out the Parquet tables of both runs are kept in DIR/sim and DIR/testbed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import ccfair
import numpy as np
from ccfair.fidelity.points import group_shares, load_set
from ccfair.spec import Spec


def describe(label: str, res: object, spec: Spec, every: float) -> None:
    tr = res.trace  # type: ignore[attr-defined]
    w0, w1 = spec.window.start / 1e9, spec.window.end / 1e9
    print(
        f"== {label}: B share {group_shares(spec, res.summary)[1]:.3f}, util {res.summary['utilization']:.3f}, "  # type: ignore[attr-defined]
        f"queue {res.summary['queue_packets_mean']:.1f} pkts"
    )  # type: ignore[attr-defined]
    for name, g in tr.groupby("flow", sort=False):
        g = g[g["cwnd_pkts"] > 0]
        ss = g["ssthresh_pkts"].to_numpy()
        t = g["time_s"].to_numpy()
        finite = np.nonzero(ss < 2**30)[0]
        first = (
            f"ssthresh {ss[finite[0]]} at {t[finite[0]]:.2f} s (cwnd then {g['cwnd_pkts'].iloc[finite[0]]})"
            if len(finite)
            else "no ssthresh"
        )
        changes = int(np.count_nonzero(np.diff(ss[finite]) != 0)) if len(finite) else 0
        win = g[(g["time_s"] >= w0) & (g["time_s"] < w1)]
        print(
            f"  flow {name}: first {first}; {changes} ssthresh changes; window mean cwnd {win['cwnd_pkts'].mean():.1f}, "
            f"inflight {win['inflight_pkts'].mean():.1f}, srtt {win['srtt_ms'].mean():.1f} ms, pacing {win['pacing_rate_bps'].mean() / 1e6:.2f} Mbit/s"
        )
        grid = np.arange(0, t.max() if len(t) else 0, every)
        idx = np.searchsorted(t, grid)
        idx = idx[idx < len(t)]
        print(
            "    t/cwnd/ssth/srtt: "
            + " ".join(f"{t[i]:.0f}:{g['cwnd_pkts'].iloc[i]}/{min(ss[i], 9999)}/{g['srtt_ms'].iloc[i]:.0f}" for i in idx)
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--testbed", action="store_true")
    ap.add_argument("--sample", default="10ms")
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--out")
    ap.add_argument("--set-sim", action="append", default=[], help="extra override for the simulator side only")
    args = ap.parse_args()
    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", f"sample={args.sample}"])
    sim = ccfair.run(spec.with_overrides(args.set_sim), seed=args.seed)
    describe(f"sim seed {args.seed}", sim, spec, args.every)
    if args.out:
        sim.to_parquet(Path(args.out) / "sim")
    if args.testbed:
        tb = ccfair.run(spec, seed=args.seed, backend="testbed")
        describe(f"testbed seed {args.seed}", tb, spec, args.every)
        if args.out:
            tb.to_parquet(Path(args.out) / "testbed")


if __name__ == "__main__":
    main()
