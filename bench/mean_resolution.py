"""Can a 5-run mean resolve 0.03 at every S0 point?

    python3 bench/mean_resolution.py --testbed bench/data/realism-testbed-2026-11-25-frames.jsonl [--seeds 30]

The acceptance item compares, at each of the 14 S0 points, the simulator's
5-seed mean share of flow B with the testbed's 5-run mean and asks for
|diff| <= 0.03 at every point. Both means carry sampling error, so even a
simulator whose distribution equals the testbed's fails the bound with some
probability. This script measures that probability from the data:

* per point, the run-to-run standard deviation of B's share on the testbed
  (all runs in --testbed) and on the simulator (seeds 1..--seeds, defaults);
* **testbed against itself**: at points with >= 10 testbed runs, the first
  five runs' mean against the next five's (the same comparison the item
  makes, with the simulator replaced by the testbed);
* **simulator against itself**: seeds 1-5 against 6-10, 11-15 against 16-20,
  ... (max |diff| over the 14 points per pair of seed sets);
* **all runs**: the simulator's --seeds-seed mean against the testbed's
  all-run mean, with the standard error of that difference and z = diff / SE
  (|z| < 2: no difference the runs can resolve);
* **a perfect simulator**: the probability that every point passes when the
  simulator's runs are drawn from the testbed's own runs, by resampling
  (bootstrap, 20 000 draws, fixed seed) 5 runs for each side at each point;
  and the normal approximation with the pooled standard deviations.

Nothing here is fitted; it reads the runs and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import ccfair
import numpy as np
from ccfair.spec import Spec
from realism_calibration import load_runs, points, share_b

BOUND = 0.03
N = 5


def sim_shares(raw: dict, seeds: int) -> list[float]:
    return [share_b(ccfair.run(Spec.from_dict(raw), seed=s).summary) for s in range(1, seeds + 1)]


def p_pass_normal(sd_a: float, sd_b: float) -> float:
    """P(|mean of 5 - mean of 5| <= BOUND) for equal true means, normal approximation."""
    se = math.sqrt(sd_a**2 / N + sd_b**2 / N)
    return math.erf(BOUND / (se * math.sqrt(2))) if se > 0 else 1.0


def p_pass_bootstrap(tb: list[float], rng: np.random.Generator, draws: int) -> np.ndarray:
    """Per draw: did two 5-run means resampled from the testbed's runs agree within BOUND?"""
    x = np.asarray(tb)
    a = rng.choice(x, size=(draws, N)).mean(axis=1)
    b = rng.choice(x, size=(draws, N)).mean(axis=1)
    return np.abs(a - b) <= BOUND


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--testbed", required=True)
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--draws", type=int, default=20_000)
    args = ap.parse_args()
    tb_runs = load_runs(Path(args.testbed))
    rng = np.random.default_rng(13)
    print("| point | testbed runs | sd testbed | sd sim (seeds) | testbed 1-5 vs 6-10 | P(pass), normal | P(pass), bootstrap |")
    print("|---|---|---|---|---|---|---|")
    sims: dict[str, list[float]] = {}
    all_normal, all_boot = 1.0, np.ones(args.draws, dtype=bool)
    for name, raw in points("s0").items():
        tb = [share_b(r["summary"]) for r in sorted(tb_runs.get(name, []), key=lambda r: r["seed"])]
        sims[name] = sim = sim_shares(raw, args.seeds)
        sd_tb, sd_sim = statistics.stdev(tb), statistics.stdev(sim)
        half = f"{statistics.mean(tb[:5]) - statistics.mean(tb[5:10]):+.3f}" if len(tb) >= 10 else "-"
        pn = p_pass_normal(sd_tb, sd_sim)
        pb = p_pass_bootstrap(tb, rng, args.draws)
        all_normal *= pn
        all_boot &= pb
        print(f"| {name} | {len(tb)} | {sd_tb:.3f} | {sd_sim:.3f} | {half} | {pn:.2f} | {pb.mean():.2f} |")
    print(
        f"\nP(all 14 points within {BOUND}): normal approximation {all_normal:.3f}, bootstrap from the testbed's runs {all_boot.mean():.3f}"
    )
    print("\nAll runs: simulator seeds 1..--seeds against every testbed run\n")
    print("| point | sim mean | testbed mean | diff | SE | z |")
    print("|---|---|---|---|---|---|")
    for name, sim in sims.items():
        tb = [share_b(r["summary"]) for r in tb_runs.get(name, [])]
        d = statistics.mean(sim) - statistics.mean(tb)
        se = math.sqrt(statistics.variance(sim) / len(sim) + statistics.variance(tb) / len(tb))
        print(f"| {name} | {statistics.mean(sim):.3f} | {statistics.mean(tb):.3f} ({len(tb)}) | {d:+.3f} | {se:.3f} | {d / se:+.1f} |")
    print(f"\nSimulator against itself (max |diff| over the 14 points, {N}-seed means):\n")
    print("| seed sets | max abs diff | points outside 0.03 |")
    print("|---|---|---|")
    for k in range(0, args.seeds - 2 * N + 1, 2 * N):
        d = [abs(statistics.mean(s[k : k + N]) - statistics.mean(s[k + N : k + 2 * N])) for s in sims.values()]
        print(f"| {k + 1}-{k + N} vs {k + N + 1}-{k + 2 * N} | {max(d):.3f} | {sum(x > BOUND for x in d)} |")


if __name__ == "__main__":
    main()
