"""S3's mono-DCTCP point (2 DCTCP, STEP at K = 0.17, 1 Gbit/s) under the host models of
issue 13: host noise, TSO/GSO bursts of unpaced senders, GRO at the receiver.

Runs bench/data/s3-mono-dctcp-{5,50}ms.toml through the simulator with each variant
and seeds 1-3 and prints one Markdown row per (RTT, variant): utilization per seed, mean
queueing delay and CE marks (seed 1). docs/fidelity.md quotes the table.

    python bench/s3_offloads.py [--seeds 3]
    python bench/s3_offloads.py --detail   # mechanism: queue and cwnd at 5 ms, seed 1

``--detail`` samples the queue and the senders every 100 us (10-30 s) and prints, per
variant, how often the queue is empty (the link then idles until the next arrival),
queue percentiles and each flow's mean cwnd.
"""

from __future__ import annotations

import argparse
import copy
import tomllib
from pathlib import Path

import ccfair
import numpy as np

DATA = Path(__file__).parent / "data"

#: name -> (noise, per-flow overrides)
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "noise none, TSO off (before issue 13)": ("none", {"tso": False}),
    "noise host, TSO off (realism round)": ("host", {"tso": False}),
    "noise none, TSO on": ("none", {}),
    "noise host, TSO on (default)": ("host", {}),
    "noise host, TSO on, GRO 50 us (S3's hosts)": ("host", {"gro": True}),
}


def spec(rtt_ms: int, noise: str, overrides: dict[str, object]) -> dict:
    d = copy.deepcopy(tomllib.loads((DATA / f"s3-mono-dctcp-{rtt_ms}ms.toml").read_text()))
    d["noise"] = noise
    for f in d["flows"]:
        f.update(overrides)
    return d


def run(rtt_ms: int, noise: str, overrides: dict[str, object], seed: int) -> dict:
    r = ccfair.run(spec(rtt_ms, noise, overrides), seed=seed)
    s = r.summary
    return {
        "util": s["utilization"],
        "delay_ms": s["queue_delay_ms"]["mean"],
        "marks": int(r.flows["ecn_marks"].sum()),
        "jfi": s["jfi"],
    }


def detail(rtt_ms: int = 5, seed: int = 1) -> None:
    print("| variant | utilization | queue empty (share of 100 us samples) | queue p50 / p99 / max (packets) | mean cwnd A, B (packets) |")
    print("|---|---|---|---|---|")
    for name, (noise, over) in VARIANTS.items():
        d = spec(rtt_ms, noise, over)
        d["sample"], d["trace"] = "100us", True
        r = ccfair.run(d, seed=seed)
        q = r.queue[(r.queue.time_s >= 10) & (r.queue.time_s < 30)].packets.to_numpy()
        t = r.trace[(r.trace.time_s >= 10) & (r.trace.time_s < 30)]
        cwnd = t.groupby("flow").cwnd_pkts.mean().tolist()
        p50, p99 = np.percentile(q, [50, 99])
        print(
            f"| {name} | {r.summary['utilization']:.3f} | {(q == 0).mean():.3f} | {p50:.0f} / {p99:.0f} / {q.max()} "
            f"| {cwnd[0]:.0f}, {cwnd[1]:.0f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--detail", action="store_true", help="queue and cwnd at 5 ms, seed 1 (mechanism)")
    args = ap.parse_args()
    if args.detail:
        return detail()
    print("| RTT | variant | utilization (seeds 1..N) | JFI (seeds 1..N) | mean queueing delay, seed 1 | CE marks A+B, seed 1 |")
    print("|---|---|---|---|---|---|")
    for rtt in (5, 50):
        for name, (noise, over) in VARIANTS.items():
            rows = [run(rtt, noise, over, s) for s in range(1, args.seeds + 1)]
            utils = ", ".join(f"{x['util']:.3f}" for x in rows)
            jfis = ", ".join(f"{x['jfi']:.2f}" for x in rows)
            print(f"| {rtt} ms | {name} | {utils} | {jfis} | {rows[0]['delay_ms']:.2f} ms | {rows[0]['marks']:,} |", flush=True)


if __name__ == "__main__":
    main()
