"""Flow A's window reductions before flow B's start, and B's share, per simulator seed
(docs/linux-ports.md "H-TCP against CUBIC at 20 Mbit/s, 100 ms"):

    python3 bench/cubic_bpf/first_loss.py --point "htcp/cubic 20M 100ms 1bdp" --seeds 30 [--noise-scale 3]
    python3 bench/cubic_bpf/first_loss.py --testbed DIR/testbed   # a testbed run's trace (run.py --out DIR)

Prints per seed B's share and A's reductions before 7 s (time: cwnd before -> ssthresh), then how
often each first ssthresh came with B's mean share. The slow-start overshoot ends at ssthresh
= cwnd / 2 with cwnd about twice the path's capacity (BDP + buffer); whether it lands on the
capacity or one packet below decides when A overflows next, and so the phase B meets at 5 s.
`--noise-scale X` multiplies the simulator's host-noise means (a what-if, as
bench/fidelity_many_seeds.py).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

import numpy as np


def reductions(tr: object, flow: str, until_s: float) -> list[tuple[float, int, int]]:
    g = tr[(tr["flow"] == flow) & (tr["cwnd_pkts"] > 0)]  # type: ignore[index]
    ss, t, cw = g["ssthresh_pkts"].to_numpy(), g["time_s"].to_numpy(), g["cwnd_pkts"].to_numpy()
    return [(float(t[i]), int(cw[i - 1]), int(ss[i])) for i in np.nonzero(np.diff(ss) != 0)[0] + 1 if t[i] < until_s]


def show(label: str, share: float, red: list[tuple[float, int, int]]) -> None:
    print(f"{label} B {share:.3f} A " + " ".join(f"{t:.2f}: {c} -> {s}" for t, c, s in red), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="kernel-ccas-loss")
    ap.add_argument("--point")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--noise-scale", type=float)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--testbed", help="a saved result directory (trace.parquet, summary.json) instead")
    args = ap.parse_args()
    import ccfair
    from ccfair.fidelity.points import group_shares, load_set

    if args.testbed:
        res = ccfair.Result.load(args.testbed)
        show(args.testbed, group_shares(res.spec, res.summary)[1], reductions(res.trace, "A", 7.0))
        return
    if not args.point:
        ap.error("--point or --testbed is required")
    if args.noise_scale is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from common import scaled_host_noise, use_host_noise

        use_host_noise(scaled_host_noise(args.noise_scale))
    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=5ms"])
    by_first: dict[int, list[float]] = collections.defaultdict(list)
    for seed in range(1, args.seeds + 1):
        r = ccfair.run(spec, seed=seed)
        share, red = group_shares(spec, r.summary)[1], reductions(r.trace, "A", 7.0)  # type: ignore[attr-defined]
        show(f"seed {seed}:", share, red)
        if red:
            by_first[red[0][2]].append(share)
    for ss, v in sorted(by_first.items()):
        print(f"first ssthresh {ss}: {len(v)} seeds, B {statistics.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})")


if __name__ == "__main__":
    main()
