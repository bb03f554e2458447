"""Scalar fairness and performance numbers: pure Python, no numpy or pandas.

The few metrics a run's summary needs (Jain's index, fness, shares,
utilization, histogram percentiles), apart from :mod:`ccfair.metrics` so that
``ccfair run --json`` and a sweep worker compute them without importing
pandas. :mod:`ccfair.metrics` re-exports every function here; sources and
formulas are listed there and in docs/metrics.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["jain", "fness", "utilization", "share", "histogram_percentile", "histogram_mean"]


def jain(values: Iterable[float]) -> float:
    """Jain's fairness index ``J = (sum x)^2 / (n * sum x^2)`` (Jain, Chiu, Hawe 1984; S1, S4).

    Ranges from ``1/n`` (one flow gets everything) to ``1`` (all equal).
    ``jain([1, 1]) == 1``, ``jain([1, 0]) == 0.5``. NaN when every value is 0
    or the sequence is empty.
    """
    xs = [float(v) for v in values]
    if any(x < 0 for x in xs):
        raise ValueError("jain() needs non-negative values")
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        return math.nan
    return sum(xs) ** 2 / (len(xs) * sq)


def fness(a_bytes: float, b_bytes: float) -> float:
    """S0's pairwise fairness of flow A vs flow B over the same window (Rüth et al., TMA 2019).

    ``1 - A/B`` if ``B >= A``, else ``B/A - 1``. Range [-1, 1]: 0 is fair,
    -1 means A took everything, +1 means B took everything, 0.5 means B got
    twice A's bytes (``fness(1, 2) == 0.5``; ``fness(2, 1) == -0.5``).
    NaN when both are 0.
    """
    a, b = float(a_bytes), float(b_bytes)
    if a < 0 or b < 0:
        raise ValueError("fness() needs non-negative byte counts")
    if a == 0 and b == 0:
        return math.nan
    if b >= a:
        return 1.0 - a / b
    return b / a - 1.0


def utilization(tx_bytes: float, rate_bps: float, seconds: float) -> float:
    """Fraction of link capacity used: ``tx_bytes * 8 / (rate_bps * seconds)``.

    ``tx_bytes`` should be wire bytes (headers included) sent by the link in
    the interval, so a saturated link gives 1.0.
    """
    if rate_bps <= 0 or seconds <= 0:
        raise ValueError("utilization() needs a positive rate and interval")
    return float(tx_bytes) * 8.0 / (float(rate_bps) * float(seconds))


def share(values: Sequence[float]) -> list[float]:
    """Each value's fraction of the total (``share([1, 3]) == [0.25, 0.75]``); NaNs if the total is 0."""
    total = float(sum(values))
    if total == 0:
        return [math.nan] * len(values)
    return [float(v) / total for v in values]


def _sorted_bins(bins: Sequence[int], counts: Sequence[int]) -> list[tuple[int, int]]:
    if len(bins) != len(counts):
        raise ValueError("bins and counts must have the same length")
    return sorted((int(b), int(c)) for b, c in zip(bins, counts) if c)


def histogram_percentile(bins: Sequence[int], counts: Sequence[int], bin_width: float, q: float) -> float:
    """The ``q``-th percentile (0 < q <= 100) of a sparse fixed-width histogram, as the bin's upper edge.

    Bin ``i`` covers ``[i * bin_width, (i+1) * bin_width)``. The result is the
    upper edge of the first bin whose cumulative count reaches ``q`` % of the
    total, i.e. an upper bound on the true percentile that is at most one
    bin width too high. NaN for an empty histogram.

    Example: bins ``[0, 1, 9]``, counts ``[50, 49, 1]``, width 1 ms: p50 = 1 ms,
    p99 = 2 ms, p100 = 10 ms.
    """
    if not 0 < q <= 100:
        raise ValueError("q must be in (0, 100]")
    pairs = _sorted_bins(bins, counts)
    total = sum(c for _, c in pairs)
    if total == 0:
        return math.nan
    need = q / 100.0 * total
    cumulative = 0
    for b, c in pairs:
        cumulative += c
        if cumulative >= need:
            return (b + 1) * bin_width
    return (pairs[-1][0] + 1) * bin_width  # pragma: no cover - float rounding guard


def histogram_mean(bins: Sequence[int], counts: Sequence[int], bin_width: float) -> float:
    """Mean of a sparse fixed-width histogram, taking each bin at its midpoint. NaN if empty.

    Prefer exact sums when available (the simulator reports per-bin sojourn sums).
    """
    pairs = _sorted_bins(bins, counts)
    total = sum(c for _, c in pairs)
    if total == 0:
        return math.nan
    return sum((b + 0.5) * bin_width * c for b, c in pairs) / total
