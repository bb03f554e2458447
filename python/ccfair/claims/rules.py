"""The statistics and verdict rules of every claim, declared once.

Estimate: the measurement's statistic (mean, median or std over runs; or the
difference of two groups' statistics). Interval: 95 % percentile bootstrap
over runs (each group resampled with replacement on its own), with a fixed
seed so the same runs give the same interval.

Verdicts:

- ``direction`` claims: *reproduced* when the whole interval lies on the
  claimed side of zero, *not reproduced* when it lies wholly on the other side
  (or at zero), *inconclusive* otherwise.
- ``value`` claims: the band ``published +- tolerance`` of the claim's scale
  (:data:`TOLERANCES`); *reproduced* when the interval lies inside the band,
  *not reproduced* when it does not meet the band, *inconclusive* otherwise.

Fewer runs give a wider interval, so a quick run can only move a verdict to
*inconclusive*, not to the opposite one (up to the 5 % of the interval).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ccfair.claims.model import Claim, Measurement

__all__ = ["BOOTSTRAP_RESAMPLES", "CONFIDENCE", "TOLERANCES", "Judgement", "interval", "judge"]

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
_SEED = 20191101

#: Tolerance of a published number, by the kind of number: (absolute, relative).
#: The band is published +- max(absolute, relative * |published|).
TOLERANCES: dict[str, tuple[float, float]] = {
    "share": (0.10, 0.0),  # fraction of the link or of a pair's throughput
    "fness": (0.20, 0.0),  # S0's fness in [-1, 1]
    "jfi": (0.05, 0.0),  # Jain's index in [1/n, 1]
    "ratio": (0.0, 0.25),  # a ratio of two throughputs, times or delays
    "percent": (5.0, 0.5),  # a relative change in %
    "db": (3.0, 0.0),  # S4's NRU in dB
    "utilisation": (0.05, 0.0),  # fraction of link capacity
}


@dataclass(frozen=True)
class Judgement:
    verdict: str  # "reproduced" | "not reproduced" | "inconclusive"
    estimate: float
    low: float
    high: float
    runs: int


def _stat(name: str, xs: Sequence[float]) -> float:
    if name == "mean":
        return statistics.fmean(xs)
    if name == "median":
        return statistics.median(xs)
    if name == "std":
        return statistics.stdev(xs) if len(xs) > 1 else 0.0
    raise ValueError(f"stat must be mean, median or std, got {name!r}")


def _estimate(m: Measurement, values: Sequence[float], minus: Sequence[float]) -> float:
    est = _stat(m.stat, values)
    return est - _stat(m.stat, minus) if m.minus else est


def interval(m: Measurement) -> tuple[float, float, float]:
    """(estimate, low, high): the statistic and its 95 % bootstrap interval."""
    est = _estimate(m, m.values, m.minus)
    rng = random.Random(_SEED)
    draws = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        v = rng.choices(m.values, k=len(m.values))
        w = rng.choices(m.minus, k=len(m.minus)) if m.minus else ()
        draws.append(_estimate(m, v, w))
    draws.sort()
    tail = (1.0 - CONFIDENCE) / 2.0
    lo = draws[int(tail * (len(draws) - 1))]
    hi = draws[int((1.0 - tail) * (len(draws) - 1))]
    return est, lo, hi


def judge(claim: Claim, m: Measurement) -> Judgement:
    """The verdict of ``claim`` on measurement ``m`` (see the module docstring)."""
    est, lo, hi = interval(m)
    runs = len(m.values) + len(m.minus)
    rule = claim.rule
    if rule.kind == "direction":
        a, b = (lo, hi) if rule.sign > 0 else (-hi, -lo)
        verdict = "reproduced" if a > 0 else "not reproduced" if b <= 0 else "inconclusive"
    else:
        if rule.published is None or rule.scale not in TOLERANCES:
            raise ValueError(f"claim {claim.id}: a value rule needs published and a scale of {sorted(TOLERANCES)}")
        ab, rel = TOLERANCES[rule.scale]
        tol = max(ab, rel * abs(rule.published))
        band_lo, band_hi = rule.published - tol, rule.published + tol
        if band_lo <= lo and hi <= band_hi:
            verdict = "reproduced"
        elif hi < band_lo or lo > band_hi:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
    return Judgement(verdict, est, lo, hi, runs)
