"""S3's mono-DCTCP point (2 DCTCP, STEP at K = 0.17, 1 Gbit/s) under the host models of
issue 13: host noise, TSO/GSO bursts of unpaced senders, GRO at the receiver.

Runs bench/data/s3-mono-dctcp-{5,50}ms.toml through the simulator with each variant
and seeds 1-3 and prints one Markdown row per (RTT, variant): utilization per seed, mean
queueing delay and CE marks (seed 1). docs/fidelity.md quotes the table.

    python bench/s3_offloads.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import copy
import tomllib
from pathlib import Path

import ccfair

DATA = Path(__file__).parent / "data"

#: name -> (noise, per-flow overrides)
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "noise none, TSO off (before issue 13)": ("none", {"tso": False}),
    "noise host, TSO off (realism round)": ("host", {"tso": False}),
    "noise none, TSO on": ("none", {}),
    "noise host, TSO on (default)": ("host", {}),
    "noise host, TSO on, GRO 50 us (S3's hosts)": ("host", {"gro": True}),
}


def run(rtt_ms: int, noise: str, overrides: dict[str, object], seed: int) -> dict:
    d = tomllib.loads((DATA / f"s3-mono-dctcp-{rtt_ms}ms.toml").read_text())
    d = copy.deepcopy(d)
    d["noise"] = noise
    for f in d["flows"]:
        f.update(overrides)
    r = ccfair.run(d, seed=seed)
    s = r.summary
    return {
        "util": s["utilization"],
        "delay_ms": s["queue_delay_ms"]["mean"],
        "marks": int(r.flows["ecn_marks"].sum()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    print("| RTT | variant | utilization (seeds 1..N) | mean queueing delay, seed 1 | CE marks A+B, seed 1 |")
    print("|---|---|---|---|---|")
    for rtt in (5, 50):
        for name, (noise, over) in VARIANTS.items():
            rows = [run(rtt, noise, over, s) for s in range(1, args.seeds + 1)]
            utils = ", ".join(f"{x['util']:.3f}" for x in rows)
            print(f"| {rtt} ms | {name} | {utils} | {rows[0]['delay_ms']:.2f} ms | {rows[0]['marks']:,} |", flush=True)


if __name__ == "__main__":
    main()
