"""The simulator's drop-tail phase effect between two flows' paths: B's share against a path offset.

    python3 bench/fidelity_path_phase.py --point "cubic/cubic 100M 20ms 1bdp" [--set map] [--seeds 1-10]
        [--delta-us 50] [--shifts 0,20,40] [--noise-scale X [--only send|ack]] [--noise-set KEY=NS ...] [--set-sim KEY=VALUE ...] [--episodes]

Per common shift s (us, added to both flows' RTTs), B's mean share over the seeds with the paths
(s, s), (s, s + delta) (B's longer) and (s + delta, s) (A's longer), and the last two's
difference: the simulator's sensitivity to a path difference of delta. Each run is the point's
spec (A at 0 s, B at 5 s, window 10-45 s) on seed k with its start jitter, as `ccfair run`; the
host noise (spec.py HOST_NOISE) times `--noise-scale`, with `--only` the sender's or the ACKs'
mean only (bench/common.py `scaled_host_noise`; `--noise-scale 0` runs without host noise),
`--noise-set` a further per-flow RunConfig key (e.g. `ack_tail_ppm=2000 --noise-set ack_tail_ns=3000000`);
`--set-sim` overrides the spec (e.g. `flows.0.gro=300us`). `--episodes` also counts, over the
window, the overflow episodes (the flows' window cuts, ssthresh changes in 10 ms trace samples,
grouped while each comes within 0.3 s of the one before) that only A, only B or both cut in,
and prints B's slow-start exits (first finite ssthresh: time s / ssthresh, per seed).

What it shows (bench/data/spread-what-ifs.md, "The simulator's path-phase effect"): at a full
drop-tail queue an arrival finds one packet fewer queued for each departure between the
departure that clocked it (its flow's ACK clock) and itself, so the flow whose lag (path plus
host noise) reaches past one more multiple of the frame time takes the overflow's drop, cuts
alone, and the other escapes (Floyd and Jacobson, "On traffic phase effects in packet-switched
gateways", 1992). Without host noise that is a step in the shift; the noise spreads it over all
shifts. A what-if on the simulator only: no model change.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
from ccfair.api import simulate
from ccfair.fidelity.points import group_shares, load_set
from ccfair.result import Result
from ccfair.spec import Spec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import scaled_host_noise, shift_group_rtts  # noqa: E402

#: Cuts this close, s, are one overflow episode (CUBIC's cycle at 20-50 ms is seconds long).
EPISODE_GAP_S = 0.3


def seeds_of(text: str) -> list[int]:
    """Seeds from "1-10" or "1,2,5"."""
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def run_one(spec: Spec, seed: int, offsets_us: tuple[float, float], noise: dict[str, int], trace: bool) -> tuple[float, Any]:
    """(B's share, the trace or None) of one run with each group's RTT plus its offset."""
    s = spec.with_overrides(["trace=true", "sample=10ms"]) if trace else spec
    cfg = s.to_run_config(seed)
    shift_group_rtts(s, cfg, offsets_us)
    for fc in cfg["flows"]:
        fc.update(noise)
    res = Result.from_raw(s, cfg, simulate(cfg, s))
    return group_shares(s, res.summary)[1], (res.trace if trace else None)


def slow_start_exit(trace: Any, flow: str) -> str:
    """`time/ssthresh` of the flow's first finite ssthresh."""
    g = trace[trace["flow"] == flow]
    ss = g["ssthresh_pkts"].to_numpy()
    i = np.nonzero(ss < 2**30)[0]
    return f"{g['time_s'].iloc[i[0]]:.2f}/{ss[i[0]]}" if len(i) else "-"


def episodes(trace: Any, w0: float, w1: float) -> dict[str, int]:
    """Overflow episodes in [w0, w1) by the flows that cut in them: "A", "B" or "AB"."""
    cuts = []
    for name, g in trace.groupby("flow", sort=False):
        ss = g["ssthresh_pkts"].to_numpy()
        t = g["time_s"].to_numpy()
        idx = np.nonzero(np.diff(ss) != 0)[0] + 1
        cuts += [(float(t[i]), str(name)) for i in idx if w0 <= t[i] < w1]
    groups: list[tuple[float, set[str]]] = []
    for t, f in sorted(cuts):
        if groups and t - groups[-1][0] < EPISODE_GAP_S:
            groups[-1] = (t, groups[-1][1] | {f})
        else:
            groups.append((t, {f}))
    out = {"A": 0, "B": 0, "AB": 0}
    for _, who in groups:
        out["".join(sorted(who))] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point", required=True)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--delta-us", type=float, default=50.0)
    ap.add_argument("--shifts", default="0", help="common shifts of both paths, us")
    ap.add_argument("--noise-scale", type=float, default=1.0)
    ap.add_argument("--only", choices=["send", "ack"])
    ap.add_argument("--noise-set", action="append", default=[], metavar="KEY=NS", help="per-flow RunConfig key, integer")
    ap.add_argument("--set-sim", action="append", default=[], help="spec override KEY=VALUE (repeatable)")
    ap.add_argument("--episodes", action="store_true")
    args = ap.parse_args()
    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(args.set_sim)
    w0, w1 = spec.window.start / 1e9, spec.window.end / 1e9
    noise = scaled_host_noise(args.noise_scale, args.only)
    noise.update({k: int(v) for k, v in (x.split("=", 1) for x in args.noise_set)})
    seeds = seeds_of(args.seeds)
    d = args.delta_us
    print(f"{args.point}: host noise {noise}, seeds {args.seeds}, delta {d:g} us")
    print(
        "shift_us | B equal | B longer | A longer | difference"
        + (" | episodes A/B/both: equal; B longer; A longer" if args.episodes else "")
    )
    for shift in (float(x) for x in args.shifts.split(",")):
        means, eps, exits = [], [], []
        for offsets in ((shift, shift), (shift, shift + d), (shift + d, shift)):
            runs = [run_one(spec, k, offsets, noise, args.episodes) for k in seeds]
            means.append(statistics.mean(b for b, _ in runs))
            if args.episodes:
                tot = {"A": 0, "B": 0, "AB": 0}
                for _, tr in runs:
                    for k, v in episodes(tr, w0, w1).items():
                        tot[k] += v
                eps.append(f"{tot['A']}/{tot['B']}/{tot['AB']}")
                exits.append(" ".join(slow_start_exit(tr, "B") for _, tr in runs))
        line = f"{shift:g} | {means[0]:.3f} | {means[1]:.3f} | {means[2]:.3f} | {means[1] - means[2]:+.3f}"
        print(line + (" | " + "; ".join(eps) if eps else ""), flush=True)
        for label, e in zip(("equal", "B longer", "A longer"), exits):
            print(f"    B's slow-start exits, {label}: {e}")


if __name__ == "__main__":
    main()
