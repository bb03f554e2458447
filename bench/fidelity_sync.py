"""Which flows cut their window at each queue overflow: synchronised or not, kernel and simulator.

    python3 bench/fidelity_sync.py DIR [DIR ...] [--jsonl FILE --condition TEXT]   # fidelity_trace.py --out DIRs
    python3 bench/fidelity_sync.py --point ID [--set map] --seeds 1-10 [--noise-set KEY=NS ...]
        [--noise-scale X [--only send|ack]]

A loss-based flow cuts its window once per overflow it loses a packet in (its ssthresh
changes). Overflow episodes are the cuts of any flow grouped while they come within
`--gap` (default 1 s) of the one before; an episode is synchronised when every flow cut in
it. Per run: B's share, then per episode in the window its time and the flows that cut
(the run's far share follows from an episode that one flow escapes). With DIRs, each
DIR/testbed and DIR/sim trace (TCP_INFO every `sample`, `fidelity_trace.py --testbed --out
DIR`); with `--point`, simulator runs of the point (trace on, 10 ms samples), the host noise
changed as `fidelity_many_seeds.py`'s options do. `--jsonl FILE` appends one line per DIR's
testbed run: the point, seed, B's share, utilisation, episodes, the run's host facts and `--condition` (how
the host was loaded, e.g. "16 busy loops at nice 19").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def cuts(trace: pd.DataFrame) -> list[tuple[float, str]]:
    """(time s, flow) of every ssthresh change after the first (the first ends slow start)."""
    out = []
    for flow, g in trace.groupby("flow", sort=False):
        ss = g["ssthresh_pkts"].to_numpy()
        t = g["time_s"].to_numpy()
        finite = np.nonzero(ss < 2**30)[0]
        if len(finite) == 0:
            continue
        ss, t = ss[finite], t[finite]
        out += [(float(t[i]), str(flow)) for i in np.nonzero(np.diff(ss) != 0)[0] + 1]
    return sorted(out)


def episodes(trace: pd.DataFrame, gap_s: float, start_s: float) -> list[tuple[float, set[str]]]:
    """(first cut's time, flows that cut) per overflow episode from ``start_s`` on."""
    eps: list[tuple[float, set[str], float]] = []
    for t, f in cuts(trace):
        if eps and t - eps[-1][2] <= gap_s:
            eps[-1][1].add(f)
            eps[-1] = (eps[-1][0], eps[-1][1], t)
        else:
            eps.append((t, {f}, t))
    return [(t0, fs) for t0, fs, _ in eps if t0 >= start_s]


def report(label: str, trace: pd.DataFrame, share_b: float, gap_s: float, start_s: float) -> tuple[int, int]:
    flows = set(map(str, trace["flow"].unique()))
    eps = episodes(trace, gap_s, start_s)
    synced = sum(fs == flows for _, fs in eps)
    text = " ".join(f"{t:.1f}:{'+'.join(sorted(fs))}" for t, fs in eps)
    print(f"{label}: B {share_b:.3f}; {synced} of {len(eps)} episodes synchronised; {text}")
    return synced, len(eps)


def from_dirs(dirs: list[str], gap_s: float, start_s: float, jsonl: str | None, condition: str) -> None:
    import json

    for d in dirs:
        for side in ("testbed", "sim"):
            p = Path(d) / side
            if not (p / "trace.parquet").exists():
                continue
            summary = json.loads((p / "summary.json").read_text())
            fl = summary["flows"]
            share_b = sum(f["share"] for f in fl[len(fl) // 2 :])
            trace = pd.read_parquet(p / "trace.parquet")
            report(f"{d} {side}", trace, share_b, gap_s, start_s)
            if jsonl and side == "testbed":
                tb = summary["testbed"]
                rec = {
                    "point": summary["name"],
                    "seed": summary["seed"],
                    "condition": condition,
                    "share_b": share_b,
                    "utilization": summary["utilization"],
                    "episodes": [{"t_s": round(t, 2), "flows": sorted(fs)} for t, fs in episodes(trace, gap_s, start_s)],
                    "kernel": tb.get("kernel"),
                    "load_avg_1min": tb.get("load_avg_1min"),
                    "bottleneck": {k: tb["bottleneck"].get(k) for k in ("late_p99_us", "late_max_ns", "stall_lost_ns")},
                }
                with open(jsonl, "a") as f:
                    f.write(json.dumps(rec) + "\n")


def from_sim(args: argparse.Namespace, start_s: float) -> None:
    import ccfair
    from ccfair.fidelity.points import group_shares, load_set
    from common import scaled_host_noise, use_host_noise

    noise = scaled_host_noise(args.noise_scale, args.only)
    noise.update({k.strip(): int(v) for k, _, v in (item.partition("=") for item in args.noise_set)})
    use_host_noise(noise)
    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=10ms"])
    lo, _, hi = args.seeds.partition("-")
    total = [0, 0]
    for seed in range(int(lo), int(hi or lo) + 1):
        res = ccfair.run(spec, seed=seed)
        s, n = report(f"sim seed {seed}", res.trace, group_shares(spec, res.summary)[1], args.gap, start_s)
        total[0] += s
        total[1] += n
    print(f"{total[0]} of {total[1]} episodes synchronised; host noise {noise}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--point")
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", default="1-5", help="simulator seeds, N or N-M")
    ap.add_argument("--gap", type=float, default=1.0, help="cuts this close (s) are one episode")
    ap.add_argument("--from-s", type=float, default=6.0, help="episodes from this time on (s)")
    ap.add_argument("--noise-scale", type=float, default=1.0)
    ap.add_argument("--only", choices=["send", "ack"])
    ap.add_argument("--noise-set", action="append", default=[], metavar="KEY=NS")
    ap.add_argument("--jsonl", help="append each DIR's testbed run to this file")
    ap.add_argument("--condition", default="", help="the host's load during the DIRs' runs (--jsonl)")
    args = ap.parse_args()
    if args.point:
        from_sim(args, args.from_s)
    else:
        from_dirs(args.dirs, args.gap, args.from_s, args.jsonl, args.condition)


if __name__ == "__main__":
    main()
