"""Kernel runs' utilisation against the simulator's, by the testbed bottleneck's longest stall.

    ccfair fidelity --json --set map > map.json
    python3 bench/fidelity_stalls.py map.json [--set map] [--data data/fidelity]

For every stored kernel run of the set that passes the quality gate but for its stall limit, the simulator's utilisation at its point (the JSON's `sim_utilisation`)
minus the run's, grouped by the bottleneck's largest timer lateness in the run
(`bottleneck_late_max_ns`: how late the userspace bottleneck sent its most delayed frame; a
stall of the bottleneck process). Then, per run whose longest stall is over the gate's limit
(ccfair.fidelity.points.stall_limit_s), the utilisation it lacks against the simulator next to
what that one stall costs at least ((stall - one frame time) / window): their ratio says how much
more than its longest stall the run lost.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from ccfair.fidelity.points import frame_time_s, gate_failures, load_set, stall_limit_s

BINS_MS = ((0, 5), (5, 20), (20, 40), (40, 10_000))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("fidelity_json")
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--data", default="data/fidelity")
    args = ap.parse_args()
    sim = {p["id"]: p["sim_utilisation"] for p in json.loads(Path(args.fidelity_json).read_text())["points"]}
    specs = {p.id: p.spec() for p in load_set(args.set_name, Path(args.data)).points}
    by_bin: dict[tuple[int, int], list[float]] = {b: [] for b in BINS_MS}
    over = []
    for line in (Path(args.data) / "kernel" / f"{args.set_name}.jsonl").read_text().splitlines():
        r = json.loads(line)
        host = r.get("host") or {}
        late = host.get("bottleneck_late_max_ns")
        if r["point"] not in sim or late is None:
            continue
        if [f for f in gate_failures(specs[r["point"]], r) if not f.startswith("bottleneck stalled")]:
            continue
        b = next(b for b in BINS_MS if b[0] <= late / 1e6 < b[1])
        by_bin[b].append(sim[r["point"]] - r["summary"]["utilization"])
        spec = specs[r["point"]]
        if late / 1e9 > stall_limit_s(spec):
            window_s = (spec.window_end_ns - spec.window.start) / 1e9
            least = (late / 1e9 - frame_time_s(spec)) / window_s
            over.append((r["point"], r["seed"], late / 1e6, sim[r["point"]] - r["summary"]["utilization"], least))
    for (lo, hi), d in by_bin.items():
        if d:
            beyond = sum(x > 0.01 for x in d)
            print(
                f"longest stall {lo}-{hi} ms: {len(d)} runs, simulator - kernel utilisation mean {statistics.fmean(d):+.4f}, "
                f"median {statistics.median(d):+.4f}, {beyond} beyond 0.01"
            )
    for point, seed, late_ms, lack, least in over:
        print(f"over the stall limit: {point} seed {seed}: longest stall {late_ms:.1f} ms, lacks {lack:+.4f}, the stall alone {least:.4f}")
    if over:
        ratios = [lack / least for _, _, _, lack, least in over]
        print(
            f"{len(over)} runs over the limit: utilisation lacking / the longest stall's own cost, median {statistics.median(ratios):.1f}"
        )


if __name__ == "__main__":
    main()
