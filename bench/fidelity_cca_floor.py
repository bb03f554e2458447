"""The per-CCA fidelity figure a perfect simulator would get: its noise floor.

    python3 bench/fidelity_cca_floor.py [ONE.json] [--set kernel-ccas-delay --set kernel-ccas-loss]
        [--data data/fidelity] [--draws N] [--seed S] [--runs N ...] [--sim-per-run K ...]

The figure (docs/linux-ports.md, "Fidelity (measured)"): per CCA, the mean over its points of
|mean simulator share of B - mean kernel share of B|, with n counted kernel runs at a point and K
simulator runs per kernel run. Even a simulator that draws its runs from the kernel's own
distribution at every point gets a figure above zero: both means carry sampling noise, their
difference has variance sigma^2 (1/n + 1/(K n)).

For each point of the sets, the kernel's distribution is the point's counted kernel runs
(points.select_runs, as ``ccfair fidelity`` counts them), each run's share of B taken about their
mean with the spread scaled by sqrt(n / (n - 1)) (so the resampled variance is the sample's
unbiased one; clipped to [0, 1]). One draw: n kernel runs and K n simulator runs resampled with
replacement from it at every point, the difference of their means, and per CCA the mean |difference|
over its points. Over ``--draws`` draws (numpy, ``--seed``): per CCA the figure's mean, its 90th
percentile and P(figure > 0.05), with the points' stored n (``n = stored``) and with n set to each
``--runs`` value (as if that many kernel runs had been counted at every point, from the same
distribution). A CCA whose perfect-simulator figure is near 0.05 cannot be judged against 0.05 with
that many runs. With ONE.json (`ccfair fidelity --json` of the same sets, one simulator run per
kernel run), each CCA's measured figure and the probability that a perfect simulator's figure (K =
1, the stored n) is at least as large.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from ccfair.fidelity.points import group_shares, load_set, runs_by_point, select_runs

#: The acceptance bound on a CCA's mean |share_B difference|.
BOUND = 0.05


def cca_of(point_id: str) -> str:
    a, b = point_id.split(" ")[0].split("/")
    return a if a != "cubic" else b


def kernel_shares(sets: list[str], data: Path) -> dict[str, list[tuple[str, np.ndarray]]]:
    """CCA -> [(point id, counted kernel runs' shares of B)]."""
    out: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)
    for name in sets:
        ps = load_set(name, data)
        runs, _ = runs_by_point(ps)
        for p in ps.points:
            kr = select_runs(p, runs[p.id], ps.runs)
            if not kr:
                continue
            spec = p.spec()
            out[cca_of(p.id)].append((p.id, np.array([group_shares(spec, r["summary"])[1] for r in kr])))
    return out


def population(x: np.ndarray) -> np.ndarray:
    """The runs about their mean, spread scaled to the sample's unbiased variance, within [0, 1]."""
    n = len(x)
    if n < 2:
        return x
    m = x.mean()
    return np.clip(m + (x - m) * np.sqrt(n / (n - 1)), 0.0, 1.0)


def point_diffs(x: np.ndarray, n: int, k: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """|mean of K n simulator draws - mean of n kernel draws|, ``draws`` times."""
    pop = population(x)
    kern = rng.choice(pop, size=(draws, n)).mean(axis=1)
    sim = rng.choice(pop, size=(draws, k * n)).mean(axis=1)
    return np.abs(sim - kern)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", help="`ccfair fidelity --json` output to place against the floor")
    ap.add_argument("--set", dest="sets", action="append", help="point set (default: kernel-ccas-delay, kernel-ccas-loss)")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--draws", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--runs", type=int, action="append", help="also with this many kernel runs at every point (repeatable)")
    ap.add_argument("--sim-per-run", type=int, action="append", help="simulator runs per kernel run (default: 1 and 5)")
    args = ap.parse_args()
    sets = args.sets or ["kernel-ccas-delay", "kernel-ccas-loss"]
    ks = args.sim_per_run or [1, 5]
    ns: list[int | None] = [None, *(args.runs or [])]
    rng = np.random.default_rng(args.seed)
    shares = kernel_shares(sets, Path(args.data))

    print("Per point: counted kernel runs n, their mean and sd of B's share, E|diff| of a perfect simulator (K = 1)\n")
    for cca, pts in shares.items():
        for pid, x in pts:
            e = point_diffs(x, len(x), 1, args.draws, rng).mean()
            print(
                f"  {pid:32s} n {len(x):2d}  mean {x.mean():.3f}  sd {x.std(ddof=1):.3f}  range {x.min():.2f}-{x.max():.2f}  E|diff| {e:.3f}"
            )
    print()
    head = "| CCA | n | " + " | ".join(f"K = {k}: mean / p90 / P(> {BOUND})" for k in ks) + " |"
    print(head)
    print("|---" * (2 + len(ks)) + "|")
    for cca, pts in shares.items():
        for n in ns:
            cells = []
            for k in ks:
                fig = np.mean([point_diffs(x, n or len(x), k, args.draws, rng) for _, x in pts], axis=0)
                cells.append(f"{fig.mean():.3f} / {np.quantile(fig, 0.9):.3f} / {(fig > BOUND).mean():.2f}")
            label = "stored (" + ",".join(str(len(x)) for _, x in pts) + ")" if n is None else str(n)
            print(f"| {cca} | {label} | " + " | ".join(cells) + " |")
    if args.file:
        measured(Path(args.file), shares, args.draws, rng)


def measured(path: Path, shares: dict[str, list[tuple[str, np.ndarray]]], draws: int, rng: np.random.Generator) -> None:
    """Each CCA's figure in ``path`` against a perfect simulator's at the same points' n (K = 1)."""
    points: dict[str, list[float]] = defaultdict(list)
    for p in json.loads(path.read_text())["points"]:
        if p["sim_runs"] != p["kernel_runs"]:
            raise SystemExit(
                f"{path}: point {p['id']!r} has {p['sim_runs']} simulator runs for {p['kernel_runs']} kernel runs; want one each"
            )
        points[cca_of(p["id"])].append(abs(p["diff"]))
    print(f"\n{path}: measured figure, and P(a perfect simulator's figure >= it) with the stored runs, K = 1\n")
    for cca, pts in shares.items():
        if cca not in points:
            continue
        fig = np.mean([point_diffs(x, len(x), 1, draws, rng) for _, x in pts], axis=0)
        got = float(np.mean(points[cca]))
        print(f"  {cca:10s} {got:.3f}  P = {(fig >= got).mean():.3f}")


if __name__ == "__main__":
    main()
