"""The per-CCA fidelity table of docs/linux-ports.md from `ccfair fidelity --json` output.

    ccfair fidelity --json --set kernel-ccas-delay --set kernel-ccas-loss > ONE.json
    python3 bench/fidelity_many_seeds.py --set kernel-ccas-delay --set kernel-ccas-loss --seeds 5 --jobs 2 --out FIVE.json
    python3 bench/fidelity_cca_table.py ONE.json [FIVE.json]

A point set's CCA is each point's flow that is not CUBIC (its points: against CUBIC and against
itself at two rate/RTT pairs). Per set, one row per CCA: kernel / simulator share of flow B at each
point (simulator - kernel), the mean |difference| over its points with one simulator run per kernel
run, and with FIVE.json the same mean with its simulator runs; then both means per CCA, sorted.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def cca_of(point: dict[str, Any]) -> str:
    return point["cca_a"] if point["cca_a"] != "cubic" else point["cca_b"]


def by_cca(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        out[cca_of(p)].append(p)
    return out


def mean_abs(points: list[dict[str, Any]]) -> float:
    return sum(abs(p["diff"]) for p in points) / len(points)


def cell(p: dict[str, Any]) -> str:
    return f"{p['kernel_share_b']:.3f} / {p['sim_share_b']:.3f} ({p['diff']:+.3f})"


def print_set(name: str, one: list[dict[str, Any]], five: dict[str, list[dict[str, Any]]]) -> None:
    groups = by_cca(one)
    first = next(iter(groups.values()))
    heads = [
        (("vs cubic" if "cubic" in p["id"].split(" ")[0].split("/") else "vs itself") + ", " + " ".join(p["id"].split(" ")[1:3]))
        for p in first
    ]
    print(f"{name}:\n")
    print("| CCA | " + " | ".join(heads) + " | mean abs diff |" + (" 5 seeds per run |" if five else ""))
    print("|---" * (len(heads) + 2 + bool(five)) + "|")
    for cca, pts in groups.items():
        extra = f" {mean_abs(five[cca]):.3f} |" if five else ""
        print(f"| {cca} | " + " | ".join(cell(p) for p in pts) + f" | {mean_abs(pts):.3f} |" + extra)
    print()


def main() -> None:
    one = json.load(open(sys.argv[1]))["points"]
    five_points = json.load(open(sys.argv[2]))["points"] if len(sys.argv) > 2 else []
    five = by_cca(five_points)
    for name in dict.fromkeys(p["set"] for p in one):
        print_set(name, [p for p in one if p["set"] == name], five)
    for label, groups in (("one simulator run per kernel run", by_cca(one)), ("five seeds per kernel run", five)):
        if groups:
            means = sorted(((mean_abs(v), k) for k, v in groups.items()), reverse=True)
            within = sum(1 for m, _ in means if m <= 0.05)
            print(f"{label}: " + ", ".join(f"{k} {m:.3f}" for m, k in means) + f": {within} of {len(means)} within 0.05")
    allp = [one, five_points]
    for label, pts in zip(("all points, one run", "five seeds"), allp):
        if pts:
            worst = max(pts, key=lambda p: abs(p["diff"]))
            print(f"{label}: mean {mean_abs(pts):.4f}, worst {abs(worst['diff']):.3f} ({worst['id']})")


if __name__ == "__main__":
    main()
