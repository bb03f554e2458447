"""The statistics and verdict rules of every claim, declared once.

Estimate: the measurement's statistic (mean, median or std over runs; or the
difference of two groups' statistics). Interval: 95 % *expanded* percentile
bootstrap over runs (each group resampled with replacement on its own, a fixed
seed so the same runs give the same interval). The plain percentile bootstrap
is too narrow with few runs (its coverage of a mean with 5 runs is about 85 %,
not 95 %); the expanded interval (Hesterberg, "What Teachers Should Know About
the Bootstrap", The American Statistician 69(4), 2015, section 4.4) takes the
bootstrap percentiles at alpha' / 2 and 1 - alpha' / 2 instead of 2.5 % and
97.5 %, where Phi^-1(alpha' / 2) = -sqrt(n / (n - 1)) t_{0.975, n-1}: the
t interval's small-sample widening applied to the bootstrap. n is the smaller
group's number of runs.

Verdicts:

- ``direction`` claims: *reproduced* when the whole interval lies on the
  claimed side of zero, *not reproduced* when it lies wholly on the other side
  (or at zero), *inconclusive* otherwise.
- ``value`` claims: the band ``published +- tolerance`` of the claim's scale
  (:data:`TOLERANCES`); *reproduced* when the interval lies inside the band,
  *not reproduced* when it does not meet the band, *inconclusive* otherwise.
- ``sign-change`` claims (an observation that inverts between two
  conditions): each group's own statistic and interval; *reproduced* when the
  ``values`` group's interval lies on the side ``sign`` of zero and the
  ``minus`` group's on the other side, *not reproduced* when either group's
  interval lies wholly on its wrong side (or at zero), *inconclusive* otherwise.
  The estimate is the ``values`` group's statistic minus the ``minus`` group's.

Words of a study that name a number (S0's fness: "-1 that Flow A absolutely
dominates Flow B", "zero indicating absolute fairness") are :data:`DOMINATES`
and :data:`FAIR`: value rules on S0's scale, so one tolerance applies to every
such sentence.

A group of fewer than :data:`MIN_RUNS` runs cannot show its own run-to-run
spread (its bootstrap interval has width zero), so such a measurement is
*inconclusive* whatever its value.

Fewer runs give a wider interval, so a quick run can only move a verdict to
*inconclusive*, not to the opposite one (up to the 5 % of the interval).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ccfair.claims.model import Claim, Measurement, Rule

__all__ = [
    "ABOVE_ZERO",
    "BELOW_ZERO",
    "BOOTSTRAP_RESAMPLES",
    "MIN_RUNS",
    "CONFIDENCE",
    "DOMINATES",
    "FAIR",
    "KINDS",
    "TOLERANCES",
    "VERDICTS",
    "Judgement",
    "check_rule",
    "describe",
    "interval",
    "judge",
]

CONFIDENCE = 0.95
#: The fewest runs per group from which a verdict is drawn.
MIN_RUNS = 2
BOOTSTRAP_RESAMPLES = 4000
_SEED = 20191101

#: The verdicts a judged claim can get.
VERDICTS = ("reproduced", "not reproduced", "inconclusive")
#: The kinds of rule.
KINDS = ("direction", "value", "sign-change")

#: Tolerance of a published number, by the kind of number: (absolute, relative).
#: The band is published +- max(absolute, relative * |published|).
TOLERANCES: dict[str, tuple[float, float]] = {
    "share": (0.10, 0.0),  # fraction of the link or of a pair's throughput
    "fness": (0.20, 0.0),  # S0's fness in [-1, 1]
    "jfi": (0.05, 0.0),  # Jain's index in [1/n, 1]
    "ratio": (0.0, 0.25),  # a ratio of two throughputs, times or delays; a count or size (packets, retransmissions)
    "percent": (5.0, 0.5),  # a relative change in %
    "db": (3.0, 0.0),  # S4's NRU in dB
    "utilisation": (0.05, 0.0),  # fraction of link capacity
}

#: "A dominates B" / "monopolizes" / "B gets little": the winner's fness is 1 (S0 III-D: -1 / +1 is
#: absolute domination); the quantity is fness oriented towards the claimed winner, per run.
DOMINATES = Rule("value", published=1.0, scale="fness")
#: "fair" / "close to the equilibrium": fness 0 (S0 III-D: "zero indicating absolute fairness");
#: the quantity is |fness| per run.
FAIR = Rule("value", published=0.0, scale="fness")
#: The study says the quantity (a difference, or a value minus the study's bar) is above / below zero.
ABOVE_ZERO = Rule("direction", sign=+1)
BELOW_ZERO = Rule("direction", sign=-1)


@dataclass(frozen=True)
class Judgement:
    verdict: str  # one of VERDICTS
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


# Student's t quantile t_{0.975, nu}: exact for nu = 1, 2; Abramowitz & Stegun 26.7.5 (error < 0.005 from nu = 3).
_T975_SMALL = {1: 12.706, 2: 4.303}


def _t975(nu: int) -> float:
    if nu in _T975_SMALL:
        return _T975_SMALL[nu]
    z = statistics.NormalDist().inv_cdf(0.975)
    g = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return z + sum(gi / nu ** (i + 1) for i, gi in enumerate(g))


def _tail(n: int) -> float:
    """alpha' / 2 of the expanded percentile interval for n runs (module docstring)."""
    if n < 2:
        return 0.0  # one run: the interval is the whole bootstrap range (a point)
    return statistics.NormalDist().cdf(-math.sqrt(n / (n - 1)) * _t975(n - 1))


def _percentiles(draws: list[float], tail: float) -> tuple[float, float]:
    draws.sort()
    k = len(draws) - 1
    return draws[int(math.floor(tail * k))], draws[int(math.ceil((1.0 - tail) * k))]


def interval(m: Measurement) -> tuple[float, float, float]:
    """(estimate, low, high): the statistic and its 95 % expanded bootstrap interval."""
    if not m.values:
        raise ValueError("a measurement needs at least one run")
    est = _estimate(m, m.values, m.minus)
    rng = random.Random(_SEED)
    draws = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        v = rng.choices(m.values, k=len(m.values))
        w = rng.choices(m.minus, k=len(m.minus)) if m.minus else ()
        draws.append(_estimate(m, v, w))
    n = min(len(m.values), len(m.minus)) if m.minus else len(m.values)
    lo, hi = _percentiles(draws, _tail(n))
    return est, lo, hi


def _group(m: Measurement, xs: tuple[float, ...]) -> tuple[float, float, float]:
    return interval(Measurement(values=xs, stat=m.stat))


def check_rule(rule: Rule, where: str) -> None:
    """Raise ValueError (naming ``where``) unless ``rule`` is complete."""
    if rule.kind not in KINDS:
        raise ValueError(f"{where}: rule kind must be one of {', '.join(KINDS)}, got {rule.kind!r}")
    if rule.kind in ("direction", "sign-change") and rule.sign not in (1, -1):
        raise ValueError(f"{where}: a {rule.kind} rule needs sign +1 or -1, got {rule.sign!r}")
    if rule.kind == "value" and (rule.published is None or rule.scale not in TOLERANCES):
        raise ValueError(f"{where}: a value rule needs published and a scale of {sorted(TOLERANCES)}")


def band(rule: Rule) -> tuple[float, float]:
    """A value rule's accepted band: published +- the scale's tolerance."""
    assert rule.published is not None
    ab, rel = TOLERANCES[rule.scale]
    tol = max(ab, rel * abs(rule.published))
    return rule.published - tol, rule.published + tol


def describe(rule: Rule) -> str:
    """The rule in words, for the board."""
    if rule.kind == "direction":
        return f"95 % interval {'> 0' if rule.sign > 0 else '< 0'}"
    if rule.kind == "sign-change":
        a, b = ("> 0", "< 0") if rule.sign > 0 else ("< 0", "> 0")
        return f"first condition's 95 % interval {a}, second's {b}"
    lo, hi = band(rule)
    return f"95 % interval within {rule.published:.4g} +- {(hi - lo) / 2:.3g} ({rule.scale})"


def _side(lo: float, hi: float, sign: int) -> str:
    a, b = (lo, hi) if sign > 0 else (-hi, -lo)
    return "reproduced" if a > 0 else "not reproduced" if b <= 0 else "inconclusive"


def judged_json(pairs: Iterable[tuple[Claim, Measurement]]) -> dict[str, dict[str, Any]]:
    """Each claim's figure and verdict (:func:`judge` on its measurement) by claim id, as the presets' JSON gives them."""
    out = {}
    for c, m in pairs:
        j = judge(c, m)
        out[c.id] = {
            "figure": m.figure,
            "verdict": j.verdict,
            "estimate": j.estimate,
            "interval": [j.low, j.high],
            "runs": j.runs,
            "note": m.note,
        }
    return out


def judge(claim: Claim, m: Measurement) -> Judgement:
    """The verdict of ``claim`` on measurement ``m`` (see the module docstring)."""
    rule = claim.rule
    check_rule(rule, f"claim {claim.id}")
    runs = len(m.values) + len(m.minus)
    if min(len(m.values), len(m.minus) if m.minus else len(m.values)) < MIN_RUNS:
        est, lo, hi = interval(m)
        return Judgement("inconclusive", est, lo, hi, runs)
    if rule.kind == "sign-change":
        if not m.minus:
            raise ValueError(f"claim {claim.id}: a sign-change rule needs two groups (values and minus)")
        e1, lo1, hi1 = _group(m, m.values)
        e2, lo2, hi2 = _group(m, m.minus)
        sides = (_side(lo1, hi1, rule.sign), _side(lo2, hi2, -rule.sign))
        verdict = (
            "reproduced" if sides == ("reproduced", "reproduced") else "not reproduced" if "not reproduced" in sides else "inconclusive"
        )
        # the interval reported is the difference's; the verdict comes from the groups' own intervals
        est, lo, hi = interval(m)
        return Judgement(verdict, est, lo, hi, runs)
    est, lo, hi = interval(m)
    if rule.kind == "direction":
        verdict = _side(lo, hi, rule.sign)
    else:
        band_lo, band_hi = band(rule)
        if band_lo <= lo and hi <= band_hi:
            verdict = "reproduced"
        elif hi < band_lo or lo > band_hi:
            verdict = "not reproduced"
        else:
            verdict = "inconclusive"
    return Judgement(verdict, est, lo, hi, runs)
