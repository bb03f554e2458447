"""The map's mean and worst |diff| a perfect simulator would get: the figures' noise floor.

    python3 bench/fidelity_map_floor.py FILE.json [FILE.json ...] [--draws N] [--seed S] [--bound B]

FILE: `ccfair fidelity --json` (one simulator run per kernel run, K = 1) or
bench/fidelity_many_seeds.py --out (K simulator runs per kernel run). The acceptance figures
(docs/fidelity.md "The map") are the mean over points and the worst point of |mean simulator
share of B - mean kernel share of B|. Both means carry sampling noise, so a simulator drawing
its runs from the kernel's own distribution at every point still gets figures above zero, and
the worst of many points grows with their number.

One draw, at every point of FILE: n kernel runs and K n simulator runs resampled with
replacement from the point's stored kernel runs (fidelity_cca_floor.py `population`: about
their mean, spread scaled to the unbiased variance, within [0, 1]; "resampled"), or drawn from
a normal with the runs' mean and sd ("normal"), the difference of their means; then the mean
and the worst |difference| over the points. Over ``--draws`` draws (numpy, ``--seed``): each
figure's median and 90th percentile, P(worst > B) and P(figure >= FILE's measured one). n and K
are each point's in FILE. The kernel runs at a point are the ones FILE counted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from fidelity_cca_floor import population

#: The acceptance bound on the worst point's |share_B difference|.
WORST_BOUND = 0.08


def point_draws(x: np.ndarray, k: int, draws: int, normal: bool, rng: np.random.Generator) -> np.ndarray:
    """|mean of K n simulator draws - mean of n kernel draws| at one point, ``draws`` times."""
    n = len(x)
    if normal:
        sd = x.std(ddof=1) if n > 1 else 0.0
        kern = rng.normal(x.mean(), sd, size=(draws, n)).mean(axis=1)
        sim = rng.normal(x.mean(), sd, size=(draws, k * n)).mean(axis=1)
    else:
        pop = population(x)
        kern = rng.choice(pop, size=(draws, n)).mean(axis=1)
        sim = rng.choice(pop, size=(draws, k * n)).mean(axis=1)
    return np.abs(sim - kern)


def floor_of(points: list[dict], draws: int, normal: bool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(mean |diff| over points, worst |diff|), one value per draw."""
    d = np.array([point_draws(np.array(p["kernel_share_b_runs"]), p["sim_runs"] // p["kernel_runs"], draws, normal, rng) for p in points])
    return d.mean(axis=0), d.max(axis=0)


def report(path: Path, draws: int, bound: float, rng: np.random.Generator) -> None:
    points = json.loads(path.read_text())["points"]
    got = np.abs([p["diff"] for p in points])
    ks = sorted({p["sim_runs"] // p["kernel_runs"] for p in points})
    print(f"{path}: {len(points)} points, K = {','.join(map(str, ks))}; measured mean {got.mean():.4f}, worst {got.max():.4f}")
    for label, normal in (("resampled", False), ("normal", True)):
        mean, worst = floor_of(points, draws, normal, rng)
        print(
            f"  perfect simulator ({label}): mean {np.median(mean):.4f} (p90 {np.quantile(mean, 0.9):.4f}), "
            f"worst {np.median(worst):.4f} (p90 {np.quantile(worst, 0.9):.4f}); P(worst > {bound}) = {(worst > bound).mean():.2f}; "
            f"P(mean >= measured) = {(mean >= got.mean()).mean():.3f}, P(worst >= measured) = {(worst >= got.max()).mean():.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--bound", type=float, default=WORST_BOUND)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for f in args.files:
        report(Path(f), args.draws, args.bound, rng)


if __name__ == "__main__":
    main()
