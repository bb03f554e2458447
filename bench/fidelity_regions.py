"""The fidelity map's regions: per group of points, mean |diff|, mean diff, worst, spread criterion.

    ccfair fidelity --json --set map > map.json
    python3 bench/fidelity_regions.py map.json [--set map]

``--set``: the point set whose points are grouped (default ``map``; ``map-probe`` for the probed one).

Regions (docs/fidelity.md, "The map"): mixes of 4-8 flows, unequal RTTs, then by pair in
start order (reno/cubic in both orders together).
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any


def region(p: dict[str, Any]) -> str:
    if p["flows"] > 2:
        return "4-8 flow mixes"
    if abs(p["rtt"] - p["rtt_b"]) > 1e-9:
        return "unequal RTTs (10 / 100 ms)"
    pair = {p["cca_a"], p["cca_b"]}
    if pair == {"reno", "cubic"}:
        return "reno/cubic (both orders)"
    return f"{p['cca_a']}/{p['cca_b']}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="the JSON of ccfair fidelity --json or bench/fidelity_many_seeds.py --out")
    ap.add_argument("--set", default="map", help="the point set to group (default: map)")
    args = ap.parse_args()
    with open(args.file) as f:
        points = [p for p in json.load(f)["points"] if p["set"] == args.set]
    if not points:
        raise SystemExit(f"--set: no points of set {args.set!r} in {args.file}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        groups.setdefault(region(p), []).append(p)
    print(f"| region ({args.set} set) | points | mean abs diff | mean diff | worst diff (point) | spread within [1/2, 2] |")
    print("|---|---|---|---|---|---|")
    for name in sorted(groups):
        g = groups[name]
        worst = max(g, key=lambda p: abs(p["diff"]))
        print(
            f"| {name} | {len(g)} | {statistics.fmean(abs(p['diff']) for p in g):.3f} | "
            f"{statistics.fmean(p['diff'] for p in g):+.3f} | {worst['diff']:+.3f} ({worst['id']}) | "
            f"{sum(bool(p['spread_ok']) for p in g)} of {len(g)} |"
        )


if __name__ == "__main__":
    main()
