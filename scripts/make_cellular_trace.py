"""Generate examples/traces/cellular.up: a synthetic cellular downlink in mahimahi's trace format.

Method (seeded, so the file is reproducible bit for bit): the link's rate is a log-normal
AR(1) process sampled every 100 ms, ln R_k = ln R_mean - sigma^2/2 + x_k with
x_k = phi x_{k-1} + sqrt(1 - phi^2) sigma e_k, e_k ~ N(0, 1) (phi = 0.9: a correlation time of
about 1 s; sigma = 0.6; mean rate 10 Mbit/s), the shape of the rate traces in Winstein et
al., "Stochastic Forecasts Achieve High Throughput and Low Delay over Cellular Networks"
(NSDI 2013), whose Sprout model is a rate that varies as a random walk. Each 1 ms slot of a
100 ms interval gets a Poisson number of delivery opportunities with mean R_k x 1 ms / (1500 x
8 bit), as a cellular link's bursty grants; every opportunity is one line (its ms). The
trace repeats with period = its last line (mahimahi), so the last slot always has one.
Draws: numpy's PCG64 from --seed.

    python scripts/make_cellular_trace.py --seed 1 --seconds 60 --out examples/traces/cellular.up
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

MTU_BITS = 1500 * 8
INTERVAL_MS = 100


def trace(seed: int, seconds: int, mean_bps: float, sigma: float, phi: float) -> list[int]:
    rng = np.random.Generator(np.random.PCG64(seed))
    n = seconds * 1000 // INTERVAL_MS
    x = sigma * rng.standard_normal()  # the stationary distribution from the start
    out: list[int] = []
    for k in range(n):
        x = phi * x + math.sqrt(1 - phi * phi) * sigma * rng.standard_normal()
        rate = mean_bps * math.exp(x - sigma * sigma / 2)
        counts = rng.poisson(rate / 1000 / MTU_BITS, INTERVAL_MS)
        for j, c in enumerate(counts):
            out += [k * INTERVAL_MS + j + 1] * int(c)
    last = seconds * 1000
    if not out or out[-1] != last:
        out.append(last)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--mean-mbit", type=float, default=10.0)
    ap.add_argument("--sigma", type=float, default=0.6)
    ap.add_argument("--phi", type=float, default=0.9)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "examples" / "traces" / "cellular.up")
    a = ap.parse_args()
    t = trace(a.seed, a.seconds, a.mean_mbit * 1e6, a.sigma, a.phi)
    a.out.write_text("".join(f"{ms}\n" for ms in t))
    print(f"{a.out}: {len(t)} opportunities over {t[-1]} ms, mean {len(t) * MTU_BITS / t[-1] / 1e3:.2f} Mbit/s")


if __name__ == "__main__":
    main()
