"""How often a simulator that draws from the kernel's own distribution meets the spread criterion.

    python3 bench/fidelity_spread_floor.py [FILE.json ...] [--data data/fidelity] [--draws N]

The criterion: at a point, the simulator's range of B's share over n runs within [1/2, 2] x
the kernel's range over its n runs (ccfair.fidelity.compare.SPREAD_FACTOR), at >= 80 % of
points. A range of a few runs is a noisy statistic, so even a perfect simulator misses it at
some points. This prints:

1. the pass probability of a perfect simulator (both sides the same normal distribution; a
   range ratio does not depend on its mean or scale) for n = 3 and 10 kernel runs and K = 1
   and 5 simulator sets of n runs (the simulator's spread the mean of the K ranges,
   compare.mean_range), by Monte Carlo (seeded);
2. the kernel against itself: the S0 set's points, 10 runs each, split by seed into three
   disjoint triples; each pair of triples is one comparison at n = 3;
3. per FILE (`ccfair fidelity --json` or bench/fidelity_many_seeds.py --out): the fraction
   of points within the criterion, what a perfect simulator would give at the same points'
   n and K, and how many points have the simulator's spread below 1/2 and above 2 x the
   kernel's (a perfect simulator at K = 1 misses as often on either side).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np
from ccfair.fidelity.compare import SPREAD_FACTOR
from ccfair.fidelity.points import group_shares, load_set, runs_by_point


def within(ratio: np.ndarray) -> np.ndarray:
    return (ratio >= 1 / SPREAD_FACTOR) & (ratio <= SPREAD_FACTOR)


def perfect_pass(n: int, sets: int, draws: int, rng: np.random.Generator) -> float:
    """P(criterion met) when the simulator's K sets of n runs and the kernel's n runs share one distribution."""
    kernel = np.ptp(rng.standard_normal((draws, n)), axis=1)
    sim = np.ptp(rng.standard_normal((draws, sets, n)), axis=2).mean(axis=1)
    return float(within(sim / kernel).mean())


def kernel_against_itself(data: Path) -> tuple[int, int]:
    """(comparisons within the criterion, comparisons): the S0 set's points, triples of runs by seed."""
    ps = load_set("s0", data)
    runs, _ = runs_by_point(ps)
    ok = total = 0
    for p in ps.points:
        spec = p.spec()
        shares = [group_shares(spec, r["summary"])[1] for r in runs[p.id]]
        triples = [shares[i : i + 3] for i in range(0, len(shares) - 2, 3)]
        for a in range(len(triples)):
            for b in range(a + 1, len(triples)):
                ra, rb = np.ptp(triples[a]), np.ptp(triples[b])
                total += 1
                ok += bool(rb > 0 and within(np.array(ra / rb)))
    return ok, total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--draws", type=int, default=200_000)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    cache: dict[tuple[int, int], float] = {}

    def perfect(n: int, sets: int) -> float:
        if (n, sets) not in cache:
            cache[(n, sets)] = perfect_pass(n, sets, args.draws, rng)
        return cache[(n, sets)]

    for n in (3, 10):
        for sets in (1, 5):
            print(f"perfect simulator, n = {n} kernel runs, {sets} simulator set(s) of n: within [1/2, 2] with P = {perfect(n, sets):.3f}")
    ok, total = kernel_against_itself(Path(args.data))
    print(f"kernel against itself (S0 set, disjoint triples of runs): {ok} of {total} comparisons within ({ok / total:.2f})")
    for f in args.files:
        points = json.loads(Path(f).read_text())["points"]
        expect = statistics.fmean(perfect(p["kernel_runs"], p["sim_runs"] // p["kernel_runs"]) for p in points)
        low = sum(p["spread_ratio"] < 1 / SPREAD_FACTOR for p in points)
        high = sum(p["spread_ratio"] > SPREAD_FACTOR for p in points)
        observed = statistics.fmean(p["spread_ok"] for p in points)
        print(
            f"{f}: {len(points)} points, within {observed:.2f} (a perfect simulator: {expect:.2f}); "
            f"simulator's spread below 1/2 x at {low}, above 2 x at {high}"
        )


if __name__ == "__main__":
    main()
