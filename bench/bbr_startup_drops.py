"""Who loses the drops of a starting flow's overflow, per flow, from bottleneck slot logs of both sides.

    python3 bench/bbr_startup_drops.py K.csv [...] [--window 5.0,6.2] [--gaps 3.0,4.9] [--save F.jsonl --label K=V ...]
    python3 bench/bbr_startup_drops.py --sim "bbr/bbr 50M 50ms 1bdp" --seeds 1-8 [--noise-scale X [--only send|ack]]

Reads logs of bench/fidelity_slots.py (`--testbed` or `--sim`: every frame reaching the bottleneck
and whether it was admitted) and prints, per log and flow, in the window (s from flow A's first
data frame: the testbed's logs also hold its SYN and handshake ACK, the simulator's none): frames,
drops, drops per frame, the share of its frames meeting the queue full or at its last place, and
the mean number of frames per back-to-back run (one skb's frames); then the ratio of the second
flow's drops per frame to the first's. At bbr/bbr 50M 50ms 1bdp the window 5.0-6.2 s holds flow
B's STARTUP overflow and the losses that decide whether either flow enters BBR's long-term mode.
`--gaps LO,HI`: also flow A's gaps between the starts of its back-to-back runs (its skbs) in that
window, quartiles and 5th / 95th percentiles in us: with A alone and paced (3.0-4.9 s), how
regularly a paced flow's skbs reach the bottleneck. `--sim POINT`: the logs of the simulator at the
map's point instead, as `fidelity_slots.py --sim` writes them (its slot-log build), seeds `--seeds`,
with the host-noise means times `--noise-scale` (bench/fidelity_many_seeds.py's what-if). `--save`:
one JSON line per log with these figures and the `--label`s (the testbed's logs are 19 MB a run:
bench/data/bbr-startup-drops-testbed-2026-11-30.jsonl keeps these lines of six).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import scaled_host_noise, use_host_noise
from fidelity_slots import load, run_sim, skb_starts


def first_data_ns(rows: list[dict[str, int]]) -> int:
    """Flow 0's first frame of its initial window: its third frame (SYN and ACK first) on the testbed, its first in the simulator."""
    a = sorted(r["t"] for r in rows if r["flow"] == 0)
    return a[2] if a[1] - a[0] > 10_000_000 else a[0]


def window_stats(path: str, lo_s: float, hi_s: float) -> list[dict[str, float]]:
    """Per flow: frames, drops, drops per frame, full share, frames per back-to-back run."""
    rows = load(path)
    t0 = first_data_ns(rows)
    rows = [r for r in rows if lo_s <= (r["t"] - t0) / 1e9 < hi_s]
    limit = max(r["queue_before"] for r in rows)
    out = []
    for flow in sorted({r["flow"] for r in rows}):
        mine = [r for r in rows if r["flow"] == flow]
        drops = sum(1 for r in mine if not r["admitted"])
        runs = skb_starts(rows, flow)
        out.append(
            {
                "frames": len(mine),
                "drops": drops,
                "per_frame": drops / len(mine),
                "full": sum(1 for r in mine if r["queue_before"] >= limit - 1) / len(mine),
                "run": len(mine) / len(runs),
            }
        )
    return out


def skb_gaps_us(path: str, lo_s: float, hi_s: float) -> list[float]:
    """Flow 0's gaps between the first frames of consecutive back-to-back runs in the window, us."""
    rows = load(path)
    t0 = first_data_ns(rows)
    rows = [r for r in rows if lo_s <= (r["t"] - t0) / 1e9 < hi_s]
    starts = [x[0]["t"] for x in skb_starts(rows, 0)]
    return [(b - a) / 1e3 for a, b in zip(starts, starts[1:])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="*")
    ap.add_argument("--window", default="5.0,6.2")
    ap.add_argument("--gaps", help="LO,HI: flow A's skb gaps in this window")
    ap.add_argument("--sim", help="a map point: simulate its slot logs instead")
    ap.add_argument("--seeds", default="1-8", help="with --sim: A-B")
    ap.add_argument("--noise-scale", type=float, default=1.0)
    ap.add_argument("--only", choices=["send", "ack"])
    ap.add_argument("--save", help="append one JSON line per log")
    ap.add_argument("--label", action="append", default=[], help="K=V stored with each saved line")
    args = ap.parse_args()
    if args.sim:
        use_host_noise(scaled_host_noise(args.noise_scale, args.only))
        tmp = Path(tempfile.mkdtemp())
        first, last = (int(x) for x in args.seeds.split("-"))
        args.logs = []
        for seed in range(first, last + 1):
            out = str(tmp / f"sim-{seed}.csv")
            run_sim(argparse.Namespace(set_name="map", point=args.sim, set_sim=[], seed=seed, out=out))
            args.logs.append(out)
    gaps = {}
    if args.gaps:
        glo, ghi = (float(x) for x in args.gaps.split(","))
        for path in args.logs:
            q = statistics.quantiles(skb_gaps_us(path, glo, ghi), n=20)
            gaps[path] = {"window_s": [glo, ghi], "p5_p25_p50_p75_p95_us": [round(q[i]) for i in (0, 4, 9, 14, 18)]}
            print(f"{path}: A's skb gaps, us: p5 {q[0]:.0f} p25 {q[4]:.0f} p50 {q[9]:.0f} p75 {q[14]:.0f} p95 {q[18]:.0f}")
    lo, hi = (float(x) for x in args.window.split(","))
    ratios, per_frame = [], [[], []]
    for path in args.logs:
        fl = window_stats(path, lo, hi)
        per_frame[0].append(fl[0]["per_frame"])
        per_frame[1].append(fl[1]["per_frame"])
        parts = " | ".join(
            f"{'AB'[i]} {f['frames']} frames, {f['drops']} drops ({f['per_frame']:.3f}), full {f['full']:.2f}, run {f['run']:.2f}"
            for i, f in enumerate(fl[:2])
        )
        ratio = fl[1]["per_frame"] / fl[0]["per_frame"]
        ratios.append(ratio)
        if args.save:
            line = dict(kv.split("=", 1) for kv in args.label) | {"log": Path(path).name, "window_s": [lo, hi], "flows": fl}
            with open(args.save, "a") as fh:
                fh.write(json.dumps(line | ({"a_skb_gaps": gaps[path]} if path in gaps else {})) + "\n")
        print(f"{path}: {parts} | B/A drops per frame {ratio:.2f}")
    a, b = (statistics.median(x) for x in per_frame)
    print(f"drops per frame, median over {len(ratios)} logs: A {a:.3f}, B {b:.3f}; B/A {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
