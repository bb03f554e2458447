"""Where the simulator's run-to-run spread differs from the kernel's beyond chance.

    python3 bench/fidelity_many_seeds.py --set s0 --set map --seeds 10 --jobs 2 --out FILE.json
    python3 bench/fidelity_spread_test.py FILE.json [--draws N] [--alpha A]

The spread criterion compares ranges of a few runs, a noisy statistic (bench/fidelity_spread_floor.py).
This asks per point whether the kernel's runs are more (or less) spread than the simulator's
could give: with K simulator seeds per kernel run (K >= 5, so that the simulator's own
distribution is well sampled), it draws n of the simulator's runs (n the kernel's count, without
replacement; numpy seed 32) `--draws` times and counts how often their standard deviation of B's
share reaches the kernel's (P_narrow: the simulator too narrow when small) or stays at or below it
(P_wide). It prints the points with P_narrow or P_wide below `--alpha` (default 0.05) and how many a
simulator drawing from the kernel's own distribution would flag by chance (alpha x points per side).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def tail_probabilities(kernel: list[float], sim: list[float], draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """(P(SD of n simulator runs >= the kernel's), P(SD of n simulator runs <= the kernel's))."""
    n, pool = len(kernel), np.asarray(sim)
    k_sd = float(np.std(kernel, ddof=1))
    idx = np.argsort(rng.random((draws, len(pool))), axis=1)[:, :n]
    sds = np.std(pool[idx], axis=1, ddof=1)
    return float(np.mean(sds >= k_sd)), float(np.mean(sds <= k_sd))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path, help="bench/fidelity_many_seeds.py --out FILE (K >= 5)")
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    points = json.loads(args.file.read_text())["points"]
    rng = np.random.default_rng(32)
    narrow, wide = [], []
    for p in points:
        k, s = p["kernel_share_b_runs"], p["sim_share_b_runs"]
        if len(s) < 5 * len(k):
            raise SystemExit(f"{args.file}: {p['id']} has {len(s)} simulator runs for {len(k)} kernel runs; use --seeds 5 or more")
        p_narrow, p_wide = tail_probabilities(k, s, args.draws, rng)
        row = (p["id"], float(np.std(k, ddof=1)), float(np.std(s, ddof=1)), p["diff"])
        if p_narrow < args.alpha:
            narrow.append((p_narrow, *row))
        if p_wide < args.alpha:
            wide.append((p_wide, *row))
    chance = args.alpha * len(points)
    for name, rows in (("simulator narrower than the kernel", narrow), ("simulator wider than the kernel", wide)):
        print(f"{name} (P < {args.alpha}): {len(rows)} of {len(points)} points ({chance:.1f} expected by chance)")
        for pr, pid, k_sd, s_sd, diff in sorted(rows):
            print(f"  P = {pr:.3f}  {pid:34}  kernel SD {k_sd:.3f}  simulator SD {s_sd:.3f}  diff {diff:+.3f}")


if __name__ == "__main__":
    main()
