"""The metrics a run's summary needs, without pandas (numpy only inside the max-min functions).

Jain's index, fness, shares, utilization, histogram percentiles and the
max-min fair share, apart from :mod:`ccfair.metrics` so that ``ccfair run
--json`` and a sweep worker compute them without importing pandas. :mod:`ccfair.metrics` re-exports every function here; sources and
formulas are listed there and in docs/metrics.md.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "jain",
    "fness",
    "utilization",
    "share",
    "histogram_percentile",
    "histogram_mean",
    "max_min_fair_shares",
    "max_min_fair_rates",
    "max_min_fair_allocation",
    "max_min_fair_rates_topology",
    "max_min_share",
]


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
    return [(b, c) for b, c in sorted(zip(map(int, bins), map(int, counts))) if c]


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
    if hasattr(bins, "dtype") and hasattr(counts, "dtype"):
        return _histogram_percentile_arrays(bins, counts, bin_width, q)
    pairs = _sorted_bins(bins, counts)
    cumulative = list(itertools.accumulate(c for _, c in pairs))
    total = cumulative[-1] if cumulative else 0
    if total == 0:
        return math.nan
    need = q / 100.0 * total
    first = bisect.bisect_left(cumulative, need)  # the first bin whose cumulative count reaches it
    return (pairs[min(first, len(pairs) - 1)][0] + 1) * bin_width  # (min: float rounding guard)


def _histogram_percentile_arrays(bins: np.ndarray | Sequence[int], counts: np.ndarray | Sequence[int], bin_width: float, q: float) -> float:
    """:func:`histogram_percentile` of numpy arrays (a sweep worker's simulator output), in numpy:
    the same steps and the same result (the cumulative counts are exact integers in float64)."""
    import numpy as np

    if len(bins) != len(counts):
        raise ValueError("bins and counts must have the same length")
    b, c = np.asarray(bins, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    order = np.lexsort((c, b))  # the order of sorted(zip(bins, counts))
    keep = c[order] != 0
    b, c = b[order][keep], c[order][keep]
    cumulative = np.cumsum(c)
    total = int(cumulative[-1]) if len(cumulative) else 0
    if total == 0:
        return math.nan
    need = q / 100.0 * total
    first = int(np.searchsorted(cumulative, need, side="left"))
    return (int(b[min(first, len(b) - 1)]) + 1) * bin_width


def histogram_mean(bins: Sequence[int], counts: Sequence[int], bin_width: float) -> float:
    """Mean of a sparse fixed-width histogram, taking each bin at its midpoint. NaN if empty.

    Prefer exact sums when available (the simulator reports per-bin sojourn sums).
    """
    pairs = _sorted_bins(bins, counts)
    total = sum(c for _, c in pairs)
    if total == 0:
        return math.nan
    return sum((b + 0.5) * bin_width * c for b, c in pairs) / total


# ===========================================================================
# Max-min fair share (Prudentia, Sigcomm 2024)
# ===========================================================================


def max_min_fair_shares(capacity: float, demands: Sequence[float | None]) -> list[float]:
    """Max-min fair allocation of ``capacity`` among flows wanting ``demands`` (water-filling).

    A demand of ``None`` or ``inf`` is unlimited. Every flow whose demand is
    below the water level gets its demand; the others share the rest
    equally. The allocations sum to ``min(capacity, sum(demands))``.

    Examples: capacity 10, demands (None, None) -> (5, 5); capacity 50,
    demands (10, None) -> (10, 40) (internetfairness.net's rate-capped video
    service next to a bulk download); capacity 12, demands (2, 3, None, None)
    -> (2, 3, 3.5, 3.5).
    """
    import numpy as np

    d = np.asarray([math.inf if x is None else float(x) for x in demands], dtype=float)
    if d.size == 0:
        return []
    return [float(x) for x in _water_fill(np.asarray([float(capacity)]), d[None, :])[0]]


def _water_fill(capacity: np.ndarray, demands: np.ndarray) -> np.ndarray:
    """Row-wise water-filling: ``capacity`` (B,), ``demands`` (B, n) -> allocations (B, n).

    With the demands of a row sorted, d_(1) <= ... <= d_(n), flow k is below
    the water if d_(k) <= (C - sum_{j<k} d_(j)) / (n - k + 1); those flows
    form a prefix of length m, and everyone else gets the level
    (C - sum_{j<=m} d_(j)) / (n - m).
    """
    import numpy as np

    b, n = demands.shape
    srt = np.sort(demands, axis=1)
    finite = np.where(np.isfinite(srt), srt, 0.0)
    before = np.cumsum(finite, axis=1) - finite  # sum of the smaller demands
    left = n - np.arange(n)  # flows not yet below the water, including this one
    level = (capacity[:, None] - before) / left
    below = srt <= level
    m = np.where(below.all(axis=1), n, np.argmin(below, axis=1))
    water = np.where(m < n, level[np.arange(b), np.minimum(m, n - 1)], np.inf)
    return np.minimum(demands, np.maximum(water, 0.0)[:, None])


def max_min_fair_rates(
    capacity_bps: float,
    window_ns: tuple[int, int],
    active_ns: Sequence[tuple[int, int]],
    caps_bps: Sequence[float | None],
    step_ns: int,
) -> np.ndarray:
    """Each flow's mean max-min fair rate over a window in which flows come and go.

    The window is cut into steps of ``step_ns``. In each step a flow that is
    active (``active_ns[i]`` = ``(start, end)``; a finite flow ends when it
    completes) for a fraction f of the step wants at most f x its rate cap
    (``caps_bps[i]``, None = the link): the step's capacity is water-filled
    among these demands (:func:`max_min_fair_shares`). Returns the mean fair
    rate per flow in bit/s (same unit as ``capacity_bps``).
    """
    import numpy as np

    ws, we = int(window_ns[0]), int(window_ns[1])
    n = len(active_ns)
    if n == 0 or we <= ws or step_ns <= 0:
        return np.full(n, math.nan)
    edges = np.arange(ws, we, int(step_ns), dtype=np.int64)
    ends = np.minimum(edges + int(step_ns), we)
    starts = np.asarray([a for a, _ in active_ns], dtype=np.int64)
    stops = np.asarray([e for _, e in active_ns], dtype=np.int64)
    overlap = np.clip(np.minimum(ends[:, None], stops[None, :]) - np.maximum(edges[:, None], starts[None, :]), 0, None)
    frac = overlap / (ends - edges)[:, None]
    caps = np.asarray([capacity_bps if c is None else min(float(c), capacity_bps) for c in caps_bps], dtype=float)
    alloc = _water_fill(np.full(len(edges), float(capacity_bps)), frac * caps[None, :])
    weights = (ends - edges) / (we - ws)
    return np.asarray(weights @ alloc, dtype=float)


def max_min_fair_allocation(
    capacities: Sequence[float],
    paths: Sequence[Sequence[int]],
    demands: Sequence[float | None],
    cost: Sequence[Sequence[float]] | None = None,
) -> list[float]:
    """Max-min fair rates of flows over a network of links (progressive filling).

    Bertsekas and Gallager, *Data Networks* (2nd ed., 1992), section 6.5.2: every flow's
    rate rises at the same pace from 0; a flow stops rising when it reaches its demand
    (``demands[i]``, None or inf = unlimited) or when a link on its path (``paths[i]``,
    indices into ``capacities``) is full; the others go on. The result is the unique
    max-min fair allocation: no flow can get more without taking from a flow with no more.
    ``cost[i][k]`` (default 1) is what one unit of flow i's rate uses of the k-th link of its
    path (a payload rate's wire rate on that link). On one link with unit costs this is
    :func:`max_min_fair_shares` (water-filling). Examples: a parking lot of two 10 Mbit/s
    links, a long flow over both and one cross flow on each: 5 each; capacities (10, 20),
    flows A over both, B on the first, C on the second: A 5, B 5, C 15.
    """
    n = len(paths)
    demand = [math.inf if d is None else float(d) for d in demands]
    use = [[1.0] * len(p) for p in paths] if cost is None else [list(map(float, c)) for c in cost]
    rate = [0.0] * n
    left = [float(c) for c in capacities]
    frozen = [demand[i] <= 0.0 or not paths[i] for i in range(n)]
    while not all(frozen):
        load = [0.0] * len(left)  # what one more unit of every unfrozen flow's rate uses of each link
        for i in range(n):
            if not frozen[i]:
                for link, u in zip(paths[i], use[i]):
                    load[link] += u
        step = min((demand[i] - rate[i] for i in range(n) if not frozen[i]), default=math.inf)
        step = min([step] + [left[k] / load[k] for k in range(len(left)) if load[k] > 0])
        step = max(step, 0.0)
        for i in range(n):
            if not frozen[i]:
                rate[i] += step
        for k in range(len(left)):
            left[k] -= step * load[k]
        full = {k for k in range(len(left)) if load[k] > 0 and left[k] <= 1e-9 * max(1.0, float(capacities[k]))}
        for i in range(n):
            if not frozen[i] and (rate[i] >= demand[i] or any(link in full for link in paths[i])):
                frozen[i] = True
    return rate


def max_min_fair_rates_topology(
    capacities_bps: Sequence[float],
    paths: Sequence[Sequence[int]],
    cost: Sequence[Sequence[float]],
    window_ns: tuple[int, int],
    active_ns: Sequence[tuple[int, int]],
    caps_bps: Sequence[float | None],
    step_ns: int,
) -> list[float]:
    """Each flow's mean max-min fair rate over a window in which flows come and go, on a topology.

    As :func:`max_min_fair_rates` with :func:`max_min_fair_allocation` in every step of
    ``step_ns``: a flow active for a fraction f of a step wants at most f x its cap
    (``caps_bps[i]``, None = what its path's slowest link carries). Steps with the same demands
    are computed once.
    """
    ws, we = int(window_ns[0]), int(window_ns[1])
    n = len(paths)
    if n == 0 or we <= ws or step_ns <= 0:
        return [math.nan] * n
    # an uncapped flow wants what its path can carry, as max_min_fair_rates' link rate
    caps = [
        min(float(capacities_bps[k]) / u for k, u in zip(p, c)) if cap is None else float(cap) for p, c, cap in zip(paths, cost, caps_bps)
    ]
    total = [0.0] * n
    memo: dict[tuple[float, ...], list[float]] = {}
    for edge in range(ws, we, int(step_ns)):
        end = min(edge + int(step_ns), we)
        frac = [max(0, min(end, b) - max(edge, a)) / (end - edge) for a, b in active_ns]
        demand = tuple(f * c if f > 0 else 0.0 for f, c in zip(frac, caps))
        if demand not in memo:
            memo[demand] = max_min_fair_allocation(capacities_bps, paths, list(demand), cost)
        weight = (end - edge) / (we - ws)
        total = [t + weight * r for t, r in zip(total, memo[demand])]
    return total


def max_min_share(throughput: float, fair_share: float) -> float:
    """Throughput as a fraction of the max-min fair share (1 = exactly fair; NaN if the share is 0)."""
    return float(throughput) / float(fair_share) if fair_share > 0 else math.nan
