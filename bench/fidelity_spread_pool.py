"""How much wider the kernel's run-to-run spread is than the simulator's, pooled over points by pair kind.

    python3 bench/fidelity_many_seeds.py --set s0 --set map --seeds 10 [--started-after UTC] --out FILE.json
    python3 bench/fidelity_spread_pool.py FILE.json [--started-after UTC | --started-before UTC] [--data data/fidelity]

Per point: the kernel runs' sum of squared deviations from their mean over the simulator's variance
(its K runs per kernel run; floor 0.002^2), pooled per pair kind (loss-based pairs, BBR against a
loss-based CCA, BBR against BBR, 4-8 flow mixes) as sum / degrees of freedom: about 1 when the kernel's
runs spread as the simulator's do (also without the kind's largest term: one far run can carry a sum). It also asks whether the kernel runs far from their point's median
are the runs of a busy host: the mean over points of the rank correlation, within a point, between a
run's |share - the point's median| and its host facts (`host.load_after[0]`, the bottleneck's lateness
p99 and maximum), with its standard error. The same `--started-after` / `--started-before` as the
FILE's, so that the runs line up (checked).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from common import fidelity_todo

SIM_SD_FLOOR = 0.002


def kind(p: dict) -> str:
    """The point's pair kind."""
    if p["flows"] > 2:
        return "4-8 flow mixes"
    ccas = {p["cca_a"], p["cca_b"]}
    if ccas == {"bbr"}:
        return "bbr/bbr"
    return "bbr against loss-based" if "bbr" in ccas else "loss-based pairs"


def rank_corr(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rank correlation (no tie correction); None when either side is constant."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def host_facts(run: dict) -> tuple[float, float, float]:
    """(load after the run, bottleneck lateness p99 in us, its maximum in ms); NaN where absent."""
    load = (run.get("host", {}).get("load_after") or [np.nan])[0]
    b = run.get("summary", {}).get("testbed", {}).get("bottleneck", {})
    p99 = b.get("late_p99_us")
    late_max = b.get("late_max_ns")
    return (
        float(load),
        float("nan") if p99 is None else float(p99),
        float("nan") if late_max is None else late_max / 1e6,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--started-after")
    ap.add_argument("--started-before")
    args = ap.parse_args()
    doc = json.loads(args.file.read_text())
    points = {p["id"]: p for p in doc["points"]}
    todo = {p.id: kr for p, kr in fidelity_todo(list(doc["sets"]), Path(args.data), None, args.started_after, args.started_before)}
    pooled: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    largest: dict[str, tuple[float, int, str]] = defaultdict(lambda: (0.0, 0, ""))
    corr: dict[str, list[float]] = defaultdict(list)
    for pid, p in points.items():
        k, s = np.asarray(p["kernel_share_b_runs"]), np.asarray(p["sim_share_b_runs"])
        runs = todo.get(pid, [])
        if [r["seed"] for r in runs] and len(runs) != len(k):
            raise SystemExit(f"{pid}: {len(k)} kernel runs in {args.file}, {len(runs)} selected here: use the FILE's --started-*")
        if len(k) < 2:
            continue
        var_sim = max(float(np.var(s, ddof=1)), SIM_SD_FLOOR**2)
        term = float(np.sum((k - k.mean()) ** 2)) / var_sim
        for name in (kind(p), "all"):
            pooled[name][0] += term
            pooled[name][1] += len(k) - 1
            if term > largest[name][0]:
                largest[name] = (term, len(k) - 1, pid)
        if len(k) >= 3:
            dev = np.abs(k - np.median(k))
            facts = np.array([host_facts(r) for r in runs])
            for j, fact in enumerate(("load", "lateness p99", "lateness max")):
                ok = ~np.isnan(facts[:, j])
                c = rank_corr(dev[ok], facts[ok, j]) if ok.sum() >= 3 else None
                if c is not None:
                    corr[fact].append(c)
    print(f"{args.file}: kernel / simulator variance of B's share, pooled over points (sum / degrees of freedom)")
    for name, (total, dof) in sorted(pooled.items()):
        t, d, pid = largest[name]
        print(
            f"  {name:24} {total / dof:5.2f}  ({dof:.0f} degrees of freedom); without its largest point ({pid}, {t / d:.1f}) {(total - t) / (dof - d):.2f}"
        )
    print("rank correlation within a point of |kernel run - median| with the run's host facts (mean over points, SE)")
    for fact, cs in corr.items():
        print(f"  {fact:13} {np.mean(cs):+.3f} +- {np.std(cs, ddof=1) / np.sqrt(len(cs)):.3f}  ({len(cs)} points)")


if __name__ == "__main__":
    main()
