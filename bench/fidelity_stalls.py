"""Kernel runs' utilisation against the simulator's, by the testbed bottleneck's longest stall.

    ccfair fidelity --json --set map > map.json
    python3 bench/fidelity_stalls.py map.json [--set map] [--data data/fidelity]

For every stored kernel run of the set that records its host facts (the gated campaign's
runs: `cpus` present), the simulator's utilisation at its point (the JSON's `sim_utilisation`)
minus the run's, grouped by the bottleneck's largest timer lateness in the run
(`bottleneck_late_max_ns`: how late the userspace bottleneck sent its most delayed frame; a
stall of the bottleneck process). The quality gate looks at the lateness p99, not the maximum.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

BINS_MS = ((0, 5), (5, 20), (20, 40), (40, 10_000))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("fidelity_json")
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--data", default="data/fidelity")
    args = ap.parse_args()
    sim = {p["id"]: p["sim_utilisation"] for p in json.loads(Path(args.fidelity_json).read_text())["points"]}
    by_bin: dict[tuple[int, int], list[float]] = {b: [] for b in BINS_MS}
    for line in (Path(args.data) / "kernel" / f"{args.set_name}.jsonl").read_text().splitlines():
        r = json.loads(line)
        host = r.get("host") or {}
        late = host.get("bottleneck_late_max_ns")
        if r["point"] not in sim or late is None or "cpus" not in host:
            continue
        b = next(b for b in BINS_MS if b[0] <= late / 1e6 < b[1])
        by_bin[b].append(sim[r["point"]] - r["summary"]["utilization"])
    for (lo, hi), d in by_bin.items():
        if d:
            beyond = sum(x > 0.01 for x in d)
            print(
                f"longest stall {lo}-{hi} ms: {len(d)} runs, simulator - kernel utilisation mean {statistics.fmean(d):+.4f}, "
                f"median {statistics.median(d):+.4f}, {beyond} beyond 0.01"
            )


if __name__ == "__main__":
    main()
