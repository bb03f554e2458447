"""Where the kernel runs' run-to-run spread comes from: host facts of the deviating runs, one
point under more host noise, and utilisation against host load.

    python3 bench/fidelity_spread_sources.py [--set s0 --set map] [--json FILE]
    python3 bench/fidelity_spread_sources.py --point ID --noise-scale 1,3,10 [--seeds 6]
    python3 bench/fidelity_spread_sources.py --host-facts "10M 10ms 1bdp" [--set map]

Without options: for every point, the counted kernel run (ccfair.fidelity.points.select_runs)
farthest from the point's median of B's share, and its rank among the point's runs by each
stored host fact (the testbed bottleneck's longest and p99 lateness, the load after the run,
flow A's measured start); per fact, how many points have the deviating run highest, next to
the number expected if the fact had nothing to do with it (the sum of 1 / runs). With
`--json` (bench/fidelity_many_seeds.py's output): at each point whose simulator range is below
half the kernel's, the kernel's range without its farthest run and the simulator's ratio to it.
`--point`: the simulator at one point (the starts of its last counted run) with the host-noise
means (spec.py HOST_NOISE) times each scale, seeds 1..N: B's share and utilisation per seed.
`--host-facts`: every gated kernel run of the points whose id contains the text, loss-based
pairs only: utilisation next to load and bottleneck lateness, and their correlations.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import fidelity_todo

FACTS: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "bottleneck late max": lambda r: (r.get("host") or {}).get("bottleneck_late_max_ns"),
    "bottleneck late p99": lambda r: (r.get("host") or {}).get("bottleneck_late_p99_us"),
    "load after": lambda r: ((r.get("host") or {}).get("load_after") or [None])[0],
    "flow A's start": lambda r: (r.get("flow_start_s") or [None])[0],
}


def deviating_runs(todo: list[tuple[Any, list[dict[str, Any]]]]) -> None:
    from ccfair.fidelity.points import group_shares

    top = dict.fromkeys(FACTS, 0)
    known = dict.fromkeys(FACTS, 0.0)
    for p, runs in todo:
        if len(runs) < 3:
            continue
        spec = p.spec()
        shares = [group_shares(spec, r["summary"])[1] for r in runs]
        med = statistics.median(shares)
        i = max(range(len(runs)), key=lambda j: abs(shares[j] - med))
        for name, fact in FACTS.items():
            vals = [fact(r) for r in runs]
            if any(v is None for v in vals):
                continue
            known[name] += 1 / len(runs)
            top[name] += vals[i] == max(vals)  # type: ignore[type-var]
    for name in FACTS:
        print(f"{name}: the deviating run has the highest at {top[name]} points, expected by chance {known[name]:.1f}")


def without_farthest(path: str) -> None:
    points = [p for p in json.loads(Path(path).read_text())["points"] if p["spread_ratio"] < 0.5]
    within = 0
    for p in points:
        k = p["kernel_share_b_runs"]
        med = statistics.median(k)
        rest = sorted(k, key=lambda x: abs(x - med))[:-1]
        sim_range = p["spread_ratio"] * (max(k) - min(k))
        ratio = sim_range / (max(rest) - min(rest)) if max(rest) > min(rest) else float("inf")
        within += ratio >= 0.5
        print(
            f"{p['id']}: kernel range {max(k) - min(k):.3f}, without its farthest run {max(rest) - min(rest):.3f}; simulator {sim_range:.3f}, ratio {ratio:.2f}"
        )
    print(
        f"{within} of {len(points)} points with the simulator's range below half the kernel's reach half of it without the kernel's farthest run"
    )


def noise_scan(todo: list[tuple[Any, list[dict[str, Any]]]], scales: list[float], seeds: int) -> None:
    from ccfair.fidelity.compare import _sim_one
    from ccfair.fidelity.points import group_shares
    from common import scaled_host_noise, use_host_noise

    p, runs = todo[0]
    spec, starts = p.spec(), runs[-1].get("flow_start_s")
    base = {scale: scaled_host_noise(scale) for scale in scales}  # all from spec.py's means
    for scale in scales:
        use_host_noise(base[scale])
        out = []
        for seed in range(1, seeds + 1):
            s = _sim_one(p.raw(), seed, starts)
            out.append(f"{group_shares(spec, s)[1]:.3f}/{s['utilization']:.4f}")
        print(f"{p.id}, host noise x{scale:g}: B's share / utilisation by seed: {' '.join(out)}")


def host_facts(sets: list[str], data: Path, text: str) -> None:
    from ccfair.fidelity.points import gate_failures, load_set, runs_by_point

    rows = []
    for name in sets:
        ps = load_set(name, data)
        runs, _ = runs_by_point(ps)
        for p in ps.points:
            if text not in p.id or "bbr" in p.id:
                continue
            spec = p.spec()
            for r in runs[p.id]:
                h = r.get("host") or {}
                if gate_failures(spec, r) or h.get("bottleneck_late_mean_ns") is None:
                    continue
                util = r["summary"]["utilization"]
                rows.append((p.id, r["seed"], util, h["load_after"][0], h["bottleneck_late_mean_ns"] / 1e3, h["bottleneck_late_p99_us"]))
    rows.sort(key=lambda x: x[4])
    print("| point | seed | utilisation | load after | bottleneck lateness mean us | p99 us |")
    print("|---|---|---|---|---|---|")
    for point, seed, util, load, mean_us, p99 in rows:
        print(f"| {point} | {seed} | {util:.4f} | {load:.2f} | {mean_us:.1f} | {p99} |")
    util = [r[2] for r in rows]
    for name, col in (("load after", 3), ("lateness mean", 4), ("lateness p99", 5)):
        print(f"correlation of utilisation with {name}: {statistics.correlation([r[col] for r in rows], util):+.2f} over {len(rows)} runs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--point")
    ap.add_argument("--noise-scale", default="1,3,10")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--host-facts", metavar="TEXT")
    ap.add_argument("--json", help="bench/fidelity_many_seeds.py --out FILE")
    args = ap.parse_args()
    if args.json:
        without_farthest(args.json)
    elif args.host_facts:
        host_facts(args.sets or ["map"], Path(args.data), args.host_facts)
    elif args.point:
        todo = fidelity_todo(args.sets, Path(args.data), [args.point])
        noise_scan(todo, [float(x) for x in args.noise_scale.split(",")], args.seeds)
    else:
        deviating_runs(fidelity_todo(args.sets, Path(args.data)))


if __name__ == "__main__":
    main()
