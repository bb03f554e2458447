"""How often a run lies far from the rest of its point, on the simulator and in every stored kernel run.

    python3 bench/fidelity_outliers.py --json FILE [--json FILE2] [--set s0 --set map] [--far 0.06] [--all]

The spread target compares ranges of a few runs, so one run far from the others decides it. Per
point, a run is "far" when B's share is more than ``--far`` (share of the link) from the median
of its own side: the simulator's runs of the ``--json`` files (bench/fidelity_many_seeds.py
output; several files are pooled) against their median, and each set's kernel runs against the
median of that set's gated runs. Kernel runs are counted from the point's own set (``counted``:
the runs ``ccfair fidelity`` uses) and from the sets that hold the same point id again
(``COMPANIONS``: s0-probe for s0; map-arrival and bbr-arrival for map; their gated runs), and,
apart, the stored runs over the quality gate (``gate_failures``). For BBR points (a bbr flow in
either group; ``--all``: every point) the totals, and the number of far kernel runs expected if
each point's kernel runs were far as often as its simulator runs, with the Poisson probability
of the kernel's count or fewer. Per point with a far run on either side: the counts and shares.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

COMPANIONS = {"s0": ["s0-probe"], "map": ["map-arrival", "bbr-arrival"]}


def kernel_runs(sets: list[str], data: Path) -> dict[str, dict[str, list[tuple[float, bool]]]]:
    """point id -> set name -> [(B's share, passes the gate)] over ``sets`` and their companions."""
    from ccfair.fidelity.points import gate_failures, group_shares, load_set, runs_by_point

    out: dict[str, dict[str, list[tuple[float, bool]]]] = {}
    for name in sets + [c for s in sets for c in COMPANIONS.get(s, [])]:
        ps = load_set(name, data)
        runs, _ = runs_by_point(ps)
        for p in ps.points:
            spec = p.spec()
            rows = [(group_shares(spec, r["summary"])[1], not gate_failures(spec, r)) for r in runs[p.id]]
            if rows:
                out.setdefault(p.id, {})[name] = rows
    return out


def far(values: list[float], center: float, limit: float) -> int:
    """How many of ``values`` lie more than ``limit`` from ``center``."""
    return sum(abs(v - center) > limit for v in values)


def poisson_cdf(k: int, mean: float) -> float:
    """P(X <= k) for X Poisson with ``mean``."""
    return sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1))


def point_counts(p: dict[str, Any], sim: list[float], kern: dict[str, list[tuple[float, bool]]], limit: float) -> dict[str, Any]:
    """Far counts of one point: counted kernel runs, companion sets' gated runs, runs over the gate, simulator."""
    counted = p["kernel_share_b_runs"]
    row = {"id": p["id"], "counted": (far(counted, statistics.median(counted), limit), len(counted))}
    comp, over = [0, 0], [0, 0]
    for name, rows in kern.items():
        gated = [s for s, ok in rows if ok]
        if name == p["set"] and len(gated) < len(counted):
            continue  # too few gated runs: the set counts every run (select_runs)
        center = statistics.median(counted if name == p["set"] else gated or [s for s, _ in rows])
        if name != p["set"]:
            comp[0] += far(gated, center, limit)
            comp[1] += len(gated)
        bad = [s for s, ok in rows if not ok]
        over[0] += far(bad, center, limit)
        over[1] += len(bad)
    row.update(companion=tuple(comp), over_gate=tuple(over), sim=(far(sim, statistics.median(sim), limit), len(sim)))
    row["kernel_shares"] = {n: [round(s, 3) for s, _ in rows] for n, rows in kern.items()}
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="append", required=True, help="bench/fidelity_many_seeds.py --out FILE (several: pooled)")
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--far", type=float, default=0.06, help="a run this far (share of the link) from its side's median is far")
    ap.add_argument("--all", action="store_true", help="every point, not only those with a BBR flow")
    args = ap.parse_args()
    sets = args.sets or ["s0", "map"]
    files = [json.loads(Path(f).read_text()) for f in args.json]
    kern = kernel_runs(sets, Path(args.data))
    rows = []
    for i, p in enumerate(files[0]["points"]):
        if not p["kernel_share_b_runs"] or not (args.all or "bbr" in (p["cca_a"], p["cca_b"])):
            continue
        sim = [s for f in files for s in f["points"][i]["sim_share_b_runs"]]
        rows.append(point_counts(p, sim, kern.get(p["id"], {}), args.far) | {"bbr_both": p["cca_a"] == p["cca_b"] == "bbr"})
    for label, part in (("bbr against bbr", [r for r in rows if r["bbr_both"]]), ("other", [r for r in rows if not r["bbr_both"]])):
        totals(part, args.far, label)
    report(rows, args.far)


def totals(rows: list[dict[str, Any]], limit: float, label: str) -> None:
    """Far runs of ``rows`` per side, and the kernel's gated far count expected at the simulator's per-point rates."""
    tot = {k: [sum(r[k][0] for r in rows), sum(r[k][1] for r in rows)] for k in ("counted", "companion", "over_gate", "sim")}
    gated = [tot["counted"][0] + tot["companion"][0], tot["counted"][1] + tot["companion"][1]]
    expected = sum(r["sim"][0] / r["sim"][1] * (r["counted"][1] + r["companion"][1]) for r in rows if r["sim"][1])
    print(
        f"{label}, {len(rows)} points, far = more than {limit} from the side's median: simulator {tot['sim'][0]} of {tot['sim'][1]} "
        f"({tot['sim'][0] / max(1, tot['sim'][1]):.3f}); kernel gated {gated[0]} of {gated[1]} (counted {tot['counted'][0]} of "
        f"{tot['counted'][1]}, companion sets {tot['companion'][0]} of {tot['companion'][1]}), at the simulator's rates "
        f"{expected:.1f}, P(<= {gated[0]}) = {poisson_cdf(gated[0], expected):.3f}; over the gate {tot['over_gate'][0]} of {tot['over_gate'][1]}"
    )


def report(rows: list[dict[str, Any]], limit: float) -> None:
    """The points with a far run on either side."""
    print("point | sim far | kernel counted | companion sets' gated | over the gate | kernel shares by set")
    for r in rows:
        if r["sim"][0] or r["counted"][0] or r["companion"][0] or r["over_gate"][0]:
            shares = "; ".join(f"{n} {v}" for n, v in r["kernel_shares"].items())
            print(
                f"{r['id']} | {r['sim'][0]}/{r['sim'][1]} | {r['counted'][0]}/{r['counted'][1]} | {r['companion'][0]}/{r['companion'][1]} | {r['over_gate'][0]}/{r['over_gate'][1]} | {shares}"
            )


if __name__ == "__main__":
    main()
