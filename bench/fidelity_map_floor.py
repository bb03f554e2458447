"""The map's acceptance figures a perfect simulator would get: their noise floor.

    python3 bench/fidelity_map_floor.py FILE.json [FILE.json ...] [--draws N] [--seed S]

FILE: `ccfair fidelity --json` (one simulator run per kernel run, K = 1) or
bench/fidelity_many_seeds.py --out (K simulator runs per kernel run). The figures (docs/fidelity.md
"The map") compare per point the simulator's runs with the kernel's: B's share (mean |diff| over
points <= 0.03, worst <= 0.08), its run-to-run range (within [1/2, 2] x the kernel's at >= 80 % of
points), utilisation (within 0.01 at every point) and mean queue (within 10 % of the kernel's at
every point). Each side's runs are a sample, so a simulator drawing its runs from the kernel's own
distribution at every point still misses some of them, more often the more points there are.

One draw, at every point of FILE: n kernel runs and K n simulator runs resampled with replacement
from the point's counted kernel runs (each run's share, utilisation and queue together; each figure
about its mean with the spread scaled to the unbiased variance, as fidelity_cca_floor.py
`population`); then every figure as `ccfair fidelity` computes it. Over ``--draws`` draws (numpy,
``--seed``): per figure its median, 90th percentile and P(a criterion fails), P(every criterion
holds), and P(the perfect simulator's figure >= FILE's measured one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from ccfair.fidelity.compare import SPREAD_FACTOR
from ccfair.fidelity.points import QUEUE_TOLERANCE_REL, UTILISATION_TOLERANCE

MEAN_BOUND = 0.03
WORST_BOUND = 0.08
SPREAD_FRACTION = 0.80
#: per-run key and the largest value a run can take
METRICS = {"share": ("share_b_runs", 1.0), "util": ("utilisation_runs", 1.0), "queue": ("queue_packets_runs", np.inf)}


def population(x: np.ndarray, high: float) -> np.ndarray:
    """The runs about their mean, spread scaled to the sample's unbiased variance, within [0, high]."""
    n, m = len(x), x.mean()
    return x if n < 2 else np.clip(m + (x - m) * np.sqrt(n / (n - 1)), 0.0, high)


def point_draws(p: dict, draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One point's figures, one value per draw: |share diff|, spread ok, |utilisation diff|, queue ratio - 1."""
    n, k = p["kernel_runs"], p["sim_runs"] // p["kernel_runs"]
    pops = {m: population(np.array(p[f"kernel_{key}"]), high) for m, (key, high) in METRICS.items()}
    ki, si = rng.integers(0, n, size=(draws, n)), rng.integers(0, n, size=(draws, k, n))
    kern = {m: v[ki] for m, v in pops.items()}
    sim = {m: v[si] for m, v in pops.items()}
    k_range = np.ptp(kern["share"], axis=1)
    s_range = np.ptp(sim["share"], axis=2).mean(axis=1)
    ratio = np.divide(s_range, k_range, out=np.where(s_range == 0, 1.0, np.inf), where=k_range > 0)
    mean = {m: (sim[m].mean(axis=(1, 2)), kern[m].mean(axis=1)) for m in METRICS}
    return {
        "share": np.abs(mean["share"][0] - mean["share"][1]),
        "spread_ok": (ratio >= 1 / SPREAD_FACTOR) & (ratio <= SPREAD_FACTOR),
        "util": np.abs(mean["util"][0] - mean["util"][1]),
        "queue": np.abs(mean["queue"][0] / np.maximum(mean["queue"][1], 1e-9) - 1),
    }


def figures(per_point: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The acceptance figures over points, from per-point values (arrays over draws or scalars)."""
    stack = {m: np.array([d[m] for d in per_point], dtype=float) for m in per_point[0]}
    return {
        "mean |diff|": stack["share"].mean(axis=0),
        "worst |diff|": stack["share"].max(axis=0),
        "spread ok fraction": stack["spread_ok"].mean(axis=0),
        "worst utilisation |diff|": stack["util"].max(axis=0),
        "worst queue |ratio - 1|": stack["queue"].max(axis=0),
    }


#: figure -> (its bound, whether a value above the bound fails)
CRITERIA = {
    "mean |diff|": (MEAN_BOUND, True),
    "worst |diff|": (WORST_BOUND, True),
    "spread ok fraction": (SPREAD_FRACTION, False),
    "worst utilisation |diff|": (UTILISATION_TOLERANCE, True),
    "worst queue |ratio - 1|": (QUEUE_TOLERANCE_REL, True),
}


def fails(name: str, value: np.ndarray) -> np.ndarray:
    bound, above = CRITERIA[name]
    return value > bound if above else value < bound


def measured(points: list[dict]) -> dict[str, np.ndarray]:
    per_point = []
    for p in points:
        m = {k: np.mean(p[f"sim_{key}"]) for k, (key, _) in METRICS.items()}
        kern = {k: np.mean(p[f"kernel_{key}"]) for k, (key, _) in METRICS.items()}
        per_point.append(
            {
                "share": abs(m["share"] - kern["share"]),
                "spread_ok": float(p["spread_ok"]),
                "util": abs(m["util"] - kern["util"]),
                "queue": abs(m["queue"] / max(kern["queue"], 1e-9) - 1),
            }
        )
    return figures(per_point)


def report(path: Path, draws: int, rng: np.random.Generator) -> None:
    points = json.loads(path.read_text())["points"]
    missing = [f"{side}_{key}" for side in ("kernel", "sim") for key, _ in METRICS.values() if f"{side}_{key}" not in points[0]]
    if missing:
        raise SystemExit(f"{path}: no {', '.join(missing)} (written by an older `ccfair fidelity --json`; run it again)")
    ks = sorted({p["sim_runs"] // p["kernel_runs"] for p in points})
    got = measured(points)
    perfect = figures([point_draws(p, draws, rng) for p in points])
    print(f"{path}: {len(points)} points, K = {','.join(map(str, ks))}; a perfect simulator over {draws} draws:")
    for name, v in perfect.items():
        bound, above = CRITERIA[name]
        g = float(got[name])
        as_bad = v >= g if above else v <= g
        print(
            f"  {name:26s} measured {g:.4f} ({'fails' if fails(name, np.array(g)) else 'holds'}); perfect median {np.median(v):.4f}, "
            f"p90 {np.quantile(v, 0.9 if above else 0.1):.4f}, fails with P = {fails(name, v).mean():.2f}, "
            f"{'>=' if above else '<='} measured with P = {as_bad.mean():.3f}"
        )
    every = ~np.any([fails(n, v) for n, v in perfect.items()], axis=0)
    print(f"  every criterion holds: measured {'yes' if not any(fails(n, got[n]) for n in got) else 'no'}; perfect P = {every.mean():.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for f in args.files:
        report(Path(f), args.draws, rng)


if __name__ == "__main__":
    main()
