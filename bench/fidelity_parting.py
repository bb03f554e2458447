"""When in a run the runs of one point part: B's share per time bin, kernel runs against simulator seeds.

    python3 bench/fidelity_parting.py --set map --point "reno/reno 10M 100ms 1bdp" --seeds 1-10
        [--testbed-dir DIR ... [--save FILE.jsonl] | --table FILE.jsonl] [--bin-s 5] [--set-sim KEY=VALUE ...]
        [--noise-scale X [--only send|ack]] [--rows]

For every run (each simulator seed, and each stored testbed run directory holding `throughput.parquet`
and `trace.parquet`, e.g. from `bench/fidelity_trace.py --testbed --out DIR`) it takes flow group B's
share of the bytes in bins of `--bin-s` seconds over the point's window, and each flow's window
reductions (falls of cwnd in `trace.parquet`, sampled every 10 ms; the simulator runs with `trace = true`), grouped into
overflow episodes (reductions within two RTTs of each other, the base RTT or the run's median srtt: A only,
B only or both).

Per side it prints the spread of the run means (SD across runs), the mean spread of one run's bins
(SD within a run), the lag-1 autocorrelation of the bins' shares within a run (pooled; a persistent
per-run asymmetry makes it positive, independent overflows make it near zero or negative), the
"persistence" ratio Var(run means) / (mean within-run bin variance / bins) (about 1 when a run's bins
are independent draws, well above 1 when something fixed for the run moves all of its bins), and SD
across runs of the share over [window start, t] at t = each bin's end (the curve of when runs part:
spread born at the start stays flat, spread from independent overflows falls as 1/sqrt(t)); and the
start's two branch points: B's first ssthresh (where its slow start ended: HyStart's round) and whether
the first overflow at least 1 s after B's start was cut by both flows or one.
`--save` keeps the testbed runs' figures as JSON lines and `--table` reads them back
(bench/data/parting-testbed-2026-11-30.jsonl: 23 runs of reno/cubic 10M 50ms 4bdp, 4 of reno/reno 10M 100ms
1bdp, one of bbr/cubic 10M 10/100ms 80pkt, traced by `bench/fidelity_trace.py --testbed --out DIR`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import ccfair
import numpy as np
import pandas as pd
from ccfair.fidelity.points import load_set
from common import scaled_host_noise, use_host_noise


def seed_list(text: str) -> list[int]:
    """'1-10' or '1,3,5' -> seeds."""
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def group_of(spec: Any) -> dict[str, int]:
    """Flow name -> flow group index (0 = A, 1 = B; later groups counted with B)."""
    return {name: min(g, 1) for g, name, _ in spec.expand_flows()}


def bin_shares(thr: pd.DataFrame, groups: dict[str, int], w0: float, w1: float, bin_s: float) -> np.ndarray:
    """B's share of the bytes in each bin of the window."""
    t = thr[(thr["time_s"] >= w0 - 1e-9) & (thr["time_s"] < w1 - 1e-9)].copy()
    t["bin"] = ((t["time_s"] - w0 + 1e-9) // bin_s).astype(int)
    t["group"] = t["flow"].map(groups)
    by = t.groupby(["bin", "group"])["bytes"].sum().unstack(fill_value=0)
    return (by[1] / (by[0] + by[1])).to_numpy()


def cumulative_shares(thr: pd.DataFrame, groups: dict[str, int], w0: float, w1: float, bin_s: float) -> np.ndarray:
    """B's share of the bytes over [w0, w0 + k bin_s] for each k."""
    t = thr[(thr["time_s"] >= w0 - 1e-9) & (thr["time_s"] < w1 - 1e-9)].copy()
    t["bin"] = ((t["time_s"] - w0 + 1e-9) // bin_s).astype(int)
    t["group"] = t["flow"].map(groups)
    by = t.groupby(["bin", "group"])["bytes"].sum().unstack(fill_value=0).cumsum()
    return (by[1] / (by[0] + by[1])).to_numpy()


def reductions(g: pd.DataFrame) -> list[float]:
    """Times one flow's window fell: cwnd below 0.8 of its maximum over the last smoothed RTT (one
    event per fall; ssthresh may keep its value when the window falls from the same height)."""
    g = g[g["cwnd_pkts"] > 0]
    t, cwnd, srtt = g["time_s"].to_numpy(), g["cwnd_pkts"].to_numpy(float), g["srtt_ms"].to_numpy(float) / 1e3
    out: list[float] = []
    lo = 0
    for i in range(1, len(t)):
        while t[lo] < t[i] - max(srtt[i], 0.02):
            lo += 1
        peak = cwnd[lo:i].max() if i > lo else cwnd[i - 1]
        if cwnd[i] < 0.8 * peak and (not out or t[i] - out[-1] > 2 * max(srtt[i], 0.02)):
            out.append(float(t[i]))
    return out


def episode_kinds(trace: pd.DataFrame, groups: dict[str, int], t0: float, t1: float, rtt_s: float) -> list[int]:
    """Overflow episodes in [t0, t1) in time order: 0 A only, 1 B only, 2 both (reductions within
    two RTTs joined: the base RTT or the trace's median srtt, the larger)."""
    join_s = 2 * max(rtt_s, float(np.median(trace["srtt_ms"][trace["srtt_ms"] > 0])) / 1e3)
    events = []
    for name, g in trace.groupby("flow", sort=False):
        events += [(t, groups[name]) for t in reductions(g) if t0 <= t < t1]
    events.sort()
    kinds = []
    i = 0
    while i < len(events):
        j, who = i, {events[i][1]}
        while j + 1 < len(events) and events[j + 1][0] - events[i][0] <= join_s:
            j += 1
            who.add(events[j][1])
        kinds.append(2 if len(who) == 2 else next(iter(who)))
        i = j + 1
    return kinds


def episodes(trace: pd.DataFrame, groups: dict[str, int], w0: float, w1: float, rtt_s: float) -> tuple[int, int, int]:
    """Overflow episodes in the window: (A only, B only, both)."""
    kinds = episode_kinds(trace, groups, w0, w1, rtt_s)
    return kinds.count(0), kinds.count(1), kinds.count(2)


def start_branches(trace: pd.DataFrame, groups: dict[str, int], b_start_s: float, rtt_s: float) -> tuple[int, str]:
    """(B group's first finite ssthresh in packets, -1 if none: where slow start ended; the kind of the
    first overflow episode at least 1 s after B's start that both flows' windows reach: 'both' or 'one')."""
    b = trace[trace["flow"].map(groups) == 1]
    ss = b["ssthresh_pkts"].to_numpy()
    finite = ss[(ss < 2**30) & (ss > 0)]
    kinds = episode_kinds(trace, groups, b_start_s + 1.0, float(trace["time_s"].max()), rtt_s)
    return (int(finite[0]) if len(finite) else -1), ("none" if not kinds else "both" if kinds[0] == 2 else "one")


def side_stats(
    label: str, runs: list[tuple[str, np.ndarray, np.ndarray, tuple[int, int, int], tuple[int, str]]], bin_s: float, rows: bool
) -> None:
    """Print the spread figures of one side's runs."""
    n_bins = min(len(b) for _, b, _, _, _ in runs)
    bins = np.array([b[:n_bins] for _, b, _, _, _ in runs])
    cums = np.array([c[:n_bins] for _, _, c, _, _ in runs])
    means = cums[:, -1]
    within = float(np.mean(np.var(bins, axis=1, ddof=1)))
    dev = bins - bins.mean(axis=1, keepdims=True)
    lag1 = float(np.sum(dev[:, 1:] * dev[:, :-1]) / np.sum(dev * dev))
    persistence = float(np.var(means, ddof=1) / (within / n_bins))
    eps = np.array([e for _, _, _, e, _ in runs])
    firsts = [f for *_, f in runs]
    print(
        f"== {label}: {len(runs)} runs; B {means.mean():.3f}, SD of run means {means.std(ddof=1):.4f}, "
        f"SD within a run of {bin_s:g} s bins {within**0.5:.4f}, lag-1 autocorrelation {lag1:+.2f}, persistence {persistence:.2f}; "
        f"episodes per run A only / B only / both {eps[:, 0].mean():.1f} / {eps[:, 1].mean():.1f} / {eps[:, 2].mean():.1f}"
    )
    ss_counts = {v: sum(1 for f in firsts if f[0] == v) for v in sorted({f[0] for f in firsts})}
    print(
        f"   B's first ssthresh (packets: runs) {ss_counts}; first overflow after B's start cut by one flow only in "
        f"{sum(1 for f in firsts if f[1] == 'one')} of {len(firsts)} runs"
    )
    sd_t = cums.std(axis=0, ddof=1)
    print(
        "   SD across runs of B's share since the window's start, at t = "
        + " ".join(f"{(k + 1) * bin_s:g}s:{s:.4f}" for k, s in enumerate(sd_t))
    )
    if rows:
        for name, b, c, e, f in runs:
            print(
                f"   {name:>28}: B {c[-1]:.3f}  first ssthresh {f[0]}, first overflow {f[1]}  episodes {e[0]}/{e[1]}/{e[2]}  bins "
                + " ".join(f"{x:.2f}" for x in b[:n_bins])
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--point", required=True)
    ap.add_argument("--seeds", default="1-10", help="simulator seeds: 1-10 or 1,3,5; '' for none")
    ap.add_argument("--testbed-dir", action="append", default=[], help="a testbed run directory (Parquet tables)")
    ap.add_argument("--bin-s", type=float, default=5.0)
    ap.add_argument("--set-sim", action="append", default=[], help="extra override for the simulator side only")
    ap.add_argument("--noise-scale", type=float, default=1.0, help="host-noise means times this (simulator)")
    ap.add_argument("--only", choices=["send", "ack"], help="scale only the sender's or only the ACKs' noise")
    ap.add_argument("--rows", action="store_true", help="print each run's bins")
    ap.add_argument("--save", help="append the testbed runs' figures to this JSON-lines file")
    ap.add_argument("--table", help="testbed runs' figures saved by --save (this point's rows), instead of --testbed-dir")
    args = ap.parse_args()
    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=10ms"])
    groups = group_of(spec)
    w0, w1 = spec.window.start / 1e9, spec.window.end / 1e9
    rtt_s = max(f.rtt for _, _, f in spec.expand_flows()) / 1e9
    if args.noise_scale != 1.0:
        use_host_noise(scaled_host_noise(args.noise_scale, args.only))

    b_start_s = min(f.start for g, _, f in spec.expand_flows() if g >= 1) / 1e9

    def one(name: str, thr: pd.DataFrame, trace: pd.DataFrame) -> tuple[str, np.ndarray, np.ndarray, tuple[int, int, int], tuple[int, str]]:
        return (
            name,
            bin_shares(thr, groups, w0, w1, args.bin_s),
            cumulative_shares(thr, groups, w0, w1, args.bin_s),
            episodes(trace, groups, w0, w1, rtt_s),
            start_branches(trace, groups, b_start_s, rtt_s),
        )

    tb = [
        one(Path(d).parent.name, pd.read_parquet(Path(d) / "throughput.parquet"), pd.read_parquet(Path(d) / "trace.parquet"))
        for d in args.testbed_dir
    ]
    if args.save:
        with open(args.save, "a") as f:
            for name, b, c, e, first in tb:
                row = {"point": args.point, "run": name, "bin_s": args.bin_s, "bins": [round(float(x), 4) for x in b]}
                row |= {"cumulative": [round(float(x), 4) for x in c], "episodes": list(e), "first": list(first)}
                f.write(json.dumps(row) + "\n")
    if args.table:
        rows = [json.loads(line) for line in open(args.table) if line.strip()]
        tb += [
            (r["run"], np.array(r["bins"]), np.array(r["cumulative"]), tuple(r["episodes"]), tuple(r["first"]))
            for r in rows
            if r["point"] == args.point and r["bin_s"] == args.bin_s
        ]
    if tb:
        side_stats("testbed", tb, args.bin_s, args.rows)
    if args.seeds:
        sims = []
        for s in seed_list(args.seeds):
            res = ccfair.run(spec.with_overrides(args.set_sim), seed=s)
            sims.append(one(f"sim seed {s}", res.throughput, res.trace))
        side_stats("simulator", sims, args.bin_s, args.rows)


if __name__ == "__main__":
    main()
