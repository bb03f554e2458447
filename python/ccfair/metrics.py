"""Fairness and performance metrics, one small documented function each.

Every function takes plain numbers, sequences, or the pandas tables of a
:class:`~ccfair.result.Result` (``flows``, ``throughput``, ``sojourn``), so it
can be used on simulator results, testbed results or numbers from a paper
alike. Undefined values (e.g. Jain's index of all-zero throughputs) are
``float('nan')``; callers that emit JSON turn NaN into ``null``.

Sources (formulas restated in docs/metrics.md):

- Jain's index: R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of
  Fairness and Discrimination for Resource Allocation in Shared Computer
  Systems", DEC TR-301, 1984; J(t) and its mean as used by S4.
- fness: Rüth, Kunze, Hohlfeld, "An Empirical View on Content Provider
  Fairness", TMA 2019 (S0).
- NRU: Bhatti, Bateman, "Transport Protocol Throughput Fairness", Journal of
  Networks 4(9), 2009 (S4).
- Slowdown index J(V, V') and I = V/V': "Ensuring Transport Fairness with
  Smart Networks", ETH semester thesis, 2020 (S1).
- Relative throughput, utilization, sojourn statistics, drop/mark ratios:
  Fejes et al., "On the Incompatibility of Scalable Congestion Controls over
  the Internet" (S3).
- Harm: Ware, Mukerjee, Seshan, Sherry, "Beyond Jain's Fairness Index:
  Setting the Bar for the Deployment of Congestion Control Algorithms",
  HotNets 2019.
- FCT statistics: the CDN study S2 (Verizon Media, APNIC blog, 2019).
- Max-min fair share: Prudentia (Sigcomm 2024, "Prudentia: Findings of an
  Internet Fairness Watchdog"; internetfairness.net): a service's throughput
  as a fraction of its max-min fair share of the link, where a service that
  wants less than an equal share (rate-capped, application-limited) is
  entitled to what it wants and the rest is split equally (water-filling,
  Bertsekas & Gallager, Data Networks, 6.5.2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

# Re-exported: the scalar metrics live apart so that a run's summary needs no pandas.
from ccfair.scalar_metrics import (
    fness,
    histogram_mean,
    histogram_percentile,
    jain,
    max_min_fair_allocation,
    max_min_fair_rates,
    max_min_fair_rates_topology,
    max_min_fair_shares,
    max_min_share,
    share,
    utilization,
)

if TYPE_CHECKING:
    from ccfair.result import Result

__all__ = [
    "NRU",
    "NRU_CASES",
    "drop_mark_ratios",
    "fct_stats",
    "fct_stats_by",
    "flow_labels",
    "flow_weights",
    "fness",
    "harm",
    "histogram_mean",
    "histogram_percentile",
    "jain",
    "jain_over_time",
    "max_min_fair_allocation",
    "max_min_fair_rates",
    "max_min_fair_rates_topology",
    "max_min_fair_shares",
    "max_min_share",
    "mean_jain_over_time",
    "nru",
    "nru_case",
    "nru_over_time",
    "nru_summary",
    "queue_delay_stats",
    "ratio_by",
    "relative_throughput",
    "retransmissions",
    "share",
    "slowdown_index",
    "slowdown_per_cca",
    "throughput_matrix",
    "utilization",
]


# ===========================================================================
# Tables: flow labels and the per-flow throughput matrix
# ===========================================================================


def flow_labels(flows: pd.DataFrame) -> pd.Series:
    """Each flow's CCA as a person writes it, indexed by flow name: ``"cubic+pacing"`` when paced.

    Same rule as :attr:`ccfair.spec.Flow.label`: an algorithm that paces by itself
    (``ccas.needs_pacing``: BBR) is plain ``"bbr"``. Without a ``pacing`` column the label is the ``cca``.
    """
    if "cca" not in flows.columns:
        raise ValueError(f"flows table needs a 'cca' column; has {list(flows.columns)}")
    cca = flows["cca"].astype(str)
    if "pacing" in flows.columns:
        from ccfair import ccas

        paces_anyway = cca.map(ccas.needs_pacing).astype(bool)
        paced = flows["pacing"].astype(bool) & ~paces_anyway
        labels = cca.where(~paced, cca + "+pacing")
    else:
        labels = cca
    index = flows["name"] if "name" in flows.columns else flows.index
    return pd.Series(labels.to_numpy(), index=pd.Index(index, name="flow"), name="label")


def _is_result(obj: Any) -> TypeGuard[Result]:
    return hasattr(obj, "throughput") and hasattr(obj, "config") and hasattr(obj, "flows")


def throughput_matrix(
    data: Result | pd.DataFrame,
    *,
    value: str = "throughput_bps",
    start_s: float | None = None,
    end_s: float | None = None,
) -> pd.DataFrame:
    """Per-flow samples as a wide table: one row per bin start ``time_s``, one column per flow.

    ``data`` is a :class:`~ccfair.result.Result` (its ``throughput`` table;
    ``start_s``/``end_s`` default to its analysis window), a long table with
    columns ``flow``, ``time_s`` and ``value``, or an already wide table
    (index = time, columns = flows). Rows with ``start_s <= time_s < end_s``
    are kept; bins of a flow that has no row are 0 (nothing delivered).
    Columns keep the flows' order of first appearance.
    """
    if _is_result(data):
        cfg = data.config
        if start_s is None:
            start_s = cfg["window_start_ns"] / 1e9
        if end_s is None:
            end_s = cfg["window_end_ns"] / 1e9
        data = data.throughput
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"expected a Result or a DataFrame, got {type(data).__name__}")
    if {"flow", "time_s"} <= set(data.columns):
        if value not in data.columns:
            raise ValueError(f"throughput table has no column {value!r}; has {list(data.columns)}")
        order = list(pd.unique(data["flow"]))
        wide = data.pivot_table(index="time_s", columns="flow", values=value, aggfunc="sum", fill_value=0)
        wide = wide.reindex(columns=order, fill_value=0)
        wide.columns.name = "flow"
    else:
        wide = data
    t = wide.index.to_numpy(dtype=float)
    keep = np.ones(len(t), dtype=bool)
    if start_s is not None:
        keep &= t >= start_s
    if end_s is not None:
        keep &= t < end_s
    return wide.loc[keep].astype(float)


# ===========================================================================
# Jain's index over time (S4)
# ===========================================================================


def jain_over_time(data: Result | pd.DataFrame, *, start_s: float | None = None, end_s: float | None = None) -> pd.Series:
    """Jain's index across flows at every sample time: ``J(t) = (sum_n r_n(t))^2 / (N sum_n r_n(t)^2)``.

    S4 computes it on 1 s throughput samples. ``data`` as in
    :func:`throughput_matrix` (a Result is cut to its analysis window). A
    sample where every flow delivered nothing is NaN. Returns a Series
    indexed by ``time_s``.

    Example: samples (1, 1) then (1, 0) give J = [1.0, 0.5].
    """
    x = throughput_matrix(data, start_s=start_s, end_s=end_s)
    arr = x.to_numpy(dtype=float)
    if (arr < 0).any():
        raise ValueError("jain_over_time() needs non-negative throughputs")
    n = arr.shape[1]
    total = arr.sum(axis=1)
    sq = (arr * arr).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(sq > 0, total * total / (n * sq), np.nan)
    return pd.Series(j, index=x.index, name="jfi")


def mean_jain_over_time(data: Result | pd.DataFrame, *, start_s: float | None = None, end_s: float | None = None) -> float:
    """Mean of :func:`jain_over_time` over the samples where it is defined (S4's time-averaged J). NaN if none."""
    j = jain_over_time(data, start_s=start_s, end_s=end_s).to_numpy()
    j = j[~np.isnan(j)]
    return float(j.mean()) if len(j) else math.nan


# ===========================================================================
# S4: Normalised Resource Usage (NRU)
# ===========================================================================

#: Default tolerance (dB) within which a flow's NRU counts as "fair":
#: ±0.5 dB is a throughput within about -11 % .. +12 % of the expected one.
#: Our choice; S4 gives none (see :func:`nru_case`).
DEFAULT_NRU_TOL_DB = 0.5

#: S4's cases (Table II) as read by :func:`nru_case`.
NRU_CASES: dict[str, str] = {
    "A": "all unfair: every flow gets less than expected",
    "B": "some flows better, some worse than expected",
    "C": "some flows fair, some worse, none better",
    "D": "all fair or better, none worse (at least one better)",
    "E": "all fair",
}


def nru_over_time(
    data: Result | pd.DataFrame,
    weights: Mapping[str, float],
    *,
    floor_db: float | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
) -> pd.DataFrame:
    """S4's per-sample NRU ``U_n(t) = 10 log10(w_n r_n(t))`` in dB, one column per flow.

    ``w_n`` (``weights[flow]``, in 1/(bit/s) when the samples are bit/s) is
    1 / the flow's expected throughput, taken from calibration runs of the
    same CCA against itself (:func:`calibrate_nru_weights`,
    :func:`flow_weights`). 0 dB: the flow gets what it would get against its
    own kind; +3 dB about twice that; -3 dB about half.

    A sample of 0 gives -inf dB (a starved flow); ``floor_db`` clips from
    below (e.g. -30) when finite means are wanted.
    """
    x = throughput_matrix(data, start_s=start_s, end_s=end_s)
    missing = [f for f in x.columns if f not in weights]
    if missing:
        raise ValueError(f"no NRU weight for flow(s) {missing}; weights given for {sorted(weights)}")
    w = np.array([float(weights[f]) for f in x.columns])
    if not (w > 0).all():
        raise ValueError("NRU weights must be > 0 (1 / expected throughput)")
    with np.errstate(divide="ignore"):
        u = 10.0 * np.log10(x.to_numpy(dtype=float) * w)
    if floor_db is not None:
        u = np.maximum(u, floor_db)
    return pd.DataFrame(u, index=x.index, columns=x.columns)


def nru_case(flow_nru: Mapping[str, float] | Sequence[float], tol_db: float = DEFAULT_NRU_TOL_DB) -> str:
    """S4's case (Table II) of a set of flow NRUs ``U_n`` (dB): ``"A"`` .. ``"E"``.

    Our reading of S4: each flow is *better* (``U_n > tol``), *fair*
    (``|U_n| <= tol``) or *worse* (``U_n < -tol``) than its expected share.
    Then

    - A (all unfair): every flow worse;
    - B: at least one better and at least one worse;
    - C: at least one worse and one fair, none better;
    - D (all fair or better): none worse, at least one better;
    - E (all fair): every flow fair.

    With ``tol_db = 0`` this is exactly the sign pattern of S4's summary
    numbers: A = no U_n >= 0 (U_N+ undefined); B = U_N+ > 0 and U_N- < 0;
    C = U_N+ = 0 and U_N- < 0; D = U_N+ > 0, no U_n < 0; E = every U_n = 0.
    S4 does not give a tolerance; exact zeros never occur in measurements,
    hence the parameter.
    """
    values = list(flow_nru.values()) if isinstance(flow_nru, Mapping) else list(flow_nru)
    if not values:
        raise ValueError("nru_case() needs at least one flow")
    if tol_db < 0:
        raise ValueError("tol_db must be >= 0")
    u = np.asarray(values, dtype=float)
    if np.isnan(u).any():
        raise ValueError("nru_case() got a NaN flow NRU (a flow without samples?)")
    better = bool((u > tol_db).any())
    worse = bool((u < -tol_db).any())
    fair = bool((np.abs(u) <= tol_db).any())
    if worse and not better and not fair:
        return "A"
    if better and worse:
        return "B"
    if worse:
        return "C"
    if better:
        return "D"
    return "E"


@dataclass(frozen=True)
class NRU:
    """S4's NRU summary of one run.

    Attributes:
        flows: flow NRU ``U_n`` (dB), the mean over time of ``U_n(t)``.
        system: ``U_N``, the mean of the ``U_n``.
        positive: ``U_N+``, the mean of the ``U_n >= 0`` (NaN if none).
        negative: ``U_N-``, the mean of the ``U_n < 0`` (NaN if none).
        case: S4's case A-E (:func:`nru_case`).
        tol_db: the tolerance the case was classified with.
    """

    flows: dict[str, float]
    system: float
    positive: float
    negative: float
    case: str
    tol_db: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN/inf as None): ``{"U_n": {...}, "U_N": .., "U_N+": .., "U_N-": .., "case": ..}``."""

        def num(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {
            "U_n": {k: num(v) for k, v in self.flows.items()},
            "U_N": num(self.system),
            "U_N+": num(self.positive),
            "U_N-": num(self.negative),
            "case": self.case,
            "tol_db": self.tol_db,
        }


def nru_summary(flow_nru: Mapping[str, float] | Sequence[float], tol_db: float = DEFAULT_NRU_TOL_DB) -> NRU:
    """``U_N``, ``U_N+``, ``U_N-`` and the case from flow NRUs ``U_n`` (dB).

    Example: U_n = (+2, -4) gives U_N = -1, U_N+ = 2, U_N- = -4, case B.
    """
    if isinstance(flow_nru, Mapping):
        flows = {str(k): float(v) for k, v in flow_nru.items()}
    else:
        flows = {str(i): float(v) for i, v in enumerate(flow_nru)}
    case = nru_case(flows, tol_db)
    u = np.array(list(flows.values()))
    pos, neg = u[u >= 0], u[u < 0]
    return NRU(
        flows=flows,
        system=float(u.mean()),
        positive=float(pos.mean()) if len(pos) else math.nan,
        negative=float(neg.mean()) if len(neg) else math.nan,
        case=case,
        tol_db=float(tol_db),
    )


def nru(
    data: Result | pd.DataFrame,
    weights: Mapping[str, float],
    *,
    tol_db: float = DEFAULT_NRU_TOL_DB,
    floor_db: float | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
) -> NRU:
    """S4's NRU of a run: flow NRU ``U_n`` = mean over time of :func:`nru_over_time`, then :func:`nru_summary`.

    ``weights`` maps flow name -> ``w_n``; build it with
    ``flow_weights(result.flows, calibrate_nru_weights(spec, ccas))``.
    """
    u_t = nru_over_time(data, weights, floor_db=floor_db, start_s=start_s, end_s=end_s)
    if u_t.empty:
        raise ValueError("nru() got no samples in the window")
    return nru_summary({str(f): float(u_t[f].mean()) for f in u_t.columns}, tol_db)


def flow_weights(flows: pd.DataFrame, cca_weights: Mapping[str, float]) -> dict[str, float]:
    """Flow name -> NRU weight, looking each flow's CCA label (:func:`flow_labels`) up in ``cca_weights``."""
    labels = flow_labels(flows)
    missing = sorted(set(labels) - set(cca_weights))
    if missing:
        raise ValueError(f"no NRU weight for CCA(s) {missing}; have {sorted(cca_weights)} (run calibrate_nru_weights for them)")
    return {str(name): float(cca_weights[label]) for name, label in labels.items()}


# ===========================================================================
# S1: slowdown fairness
# ===========================================================================


def slowdown_index(v: Sequence[float], v_prime: Sequence[float]) -> float:
    """S1's system index ``J(V, V') = (sum v_i/v'_i)^2 / (m sum (v_i/v'_i)^2)``: Jain's index of the slowdowns.

    ``V`` is each CCA's metric when competing, ``V'`` when not (same order).
    1 when every CCA is slowed down by the same factor. Example:
    V = (1, 2), V' = (1, 1) gives 9/10.
    """
    if len(v) != len(v_prime):
        raise ValueError(f"V and V' must have the same length ({len(v)} != {len(v_prime)})")
    vp = [float(x) for x in v_prime]
    if any(x <= 0 for x in vp):
        raise ValueError("V' (the non-competing metric) must be > 0")
    return jain(float(a) / b for a, b in zip(v, vp))


def slowdown_per_cca(v: Mapping[str, float], v_prime: Mapping[str, float]) -> dict[str, float]:
    """S1's per-CCA index ``I = V / V'`` (element-wise). 1 = not slowed down; < 1 = loses; > 1 = gains."""
    if set(v) != set(v_prime):
        raise ValueError(f"V and V' need the same CCAs: {sorted(v)} vs {sorted(v_prime)}")
    out: dict[str, float] = {}
    for k, x in v.items():
        den = float(v_prime[k])
        if den <= 0:
            raise ValueError(f"V'[{k!r}] must be > 0")
        out[k] = float(x) / den
    return out


# ===========================================================================
# S3: relative throughput per connection class
# ===========================================================================


def _group_keys(flows: pd.DataFrame, by: str | None) -> pd.Series:
    """The grouping labels of the rows of a flows table: per flow (``None``), a column, or ``"label"``."""
    if by is None:
        return flows["name"].astype(str) if "name" in flows.columns else pd.Series(flows.index.astype(str), index=flows.index)
    if by in flows.columns:
        return flows[by]
    if by == "label":
        return pd.Series(flow_labels(flows).to_numpy(), index=flows.index)
    raise ValueError(f"cannot group by {by!r}: not a column ({list(flows.columns)}) nor 'label'")


def relative_throughput(
    flows: pd.DataFrame,
    capacity_bps: float,
    *,
    by: str = "cca",
    value_col: str = "throughput_bps",
) -> pd.Series:
    """S3's relative throughput of each connection class: ``class mean / (C / N)``.

    ``C`` is the bottleneck capacity, ``N`` the number of connections (rows
    of ``flows``); 1 means the class's connections get their equal share.
    ``by`` is the class column (``"cca"``, ``"label"``, a custom column).
    Example: C = 100, classes A (30, 30) and B (15, 25): A 1.2, B 0.8.
    """
    if capacity_bps <= 0:
        raise ValueError("capacity_bps must be > 0")
    if flows.empty:
        raise ValueError("relative_throughput() needs at least one flow")
    fair = float(capacity_bps) / len(flows)
    keys = _group_keys(flows, by)
    out = flows[value_col].astype(float).groupby(keys.to_numpy(), sort=False).mean() / fair
    out.index.name = by
    out.name = "relative_throughput"
    return out


# ===========================================================================
# Harm (Ware et al., HotNets 2019)
# ===========================================================================


def harm(alone: float, with_other: float, *, more_is_better: bool = True) -> float:
    """Harm that a competing flow/CCA does to a victim's metric (Ware et al., HotNets 2019).

    ``alone`` is the victim's metric when it runs by itself, ``with_other``
    when it competes. For "more is better" metrics (throughput):
    ``(alone - with) / alone``; for "less is better" ones (delay, FCT, loss):
    ``(with - alone) / with``. 0 = no harm, 1 = total harm (e.g. starved);
    a negative value means the competitor improved the metric. NaN when the
    denominator is 0.

    Examples: throughput 10 alone, 4 with: 0.6. Delay 20 ms alone, 50 ms
    with: 0.6.
    """
    a, w = float(alone), float(with_other)
    if more_is_better:
        return (a - w) / a if a != 0 else math.nan
    return (w - a) / w if w != 0 else math.nan


# ===========================================================================
# Queueing delay, drops/marks, retransmissions
# ===========================================================================


def queue_delay_stats(sojourn: Result | pd.DataFrame) -> dict[str, float]:
    """Queueing delay statistics of a sojourn-time histogram: mean, p50, p99, max (ms), packets.

    ``sojourn`` has columns ``bin_start_ms``, ``bin_end_ms``, ``count`` (a
    Result's ``sojourn`` table, or the Result). Percentiles are the upper
    edge of the first bin whose cumulative count reaches q % (at most one bin
    width too high, as :func:`histogram_percentile`); max is the upper edge of
    the highest non-empty bin; the mean takes bins at their midpoints (a
    Result's summary also has the exact mean). NaNs for an empty histogram.

    Example: 50 packets in [0, 1) ms, 49 in [1, 2), 1 in [9, 10): mean 1.08,
    p50 1, p99 2, max 10.
    """
    table: pd.DataFrame = sojourn.sojourn if _is_result(sojourn) else sojourn
    h = table[table["count"] > 0].sort_values("bin_start_ms")
    total = int(h["count"].sum())
    if total == 0:
        return {"mean_ms": math.nan, "p50_ms": math.nan, "p99_ms": math.nan, "max_ms": math.nan, "packets": 0}
    lo = h["bin_start_ms"].to_numpy(dtype=float)
    hi = h["bin_end_ms"].to_numpy(dtype=float)
    c = h["count"].to_numpy(dtype=np.int64)
    cum = np.cumsum(c)

    def pct(q: float) -> float:
        return float(hi[np.searchsorted(cum, q / 100.0 * total, side="left")])

    return {
        "mean_ms": float(((lo + hi) / 2 * c).sum() / total),
        "p50_ms": pct(50),
        "p99_ms": pct(99),
        "max_ms": float(hi[-1]),
        "packets": total,
    }


def ratio_by(flows: pd.DataFrame, numerator: str, denominator: str = "sent_packets", by: str | None = None) -> pd.Series:
    """``sum(numerator) / sum(denominator)`` per flow (``by=None``) or per class (``by`` a column or ``"label"``).

    NaN for a group whose denominator is 0.
    """
    for col in (numerator, denominator):
        if col not in flows.columns:
            raise ValueError(f"flows table has no column {col!r}; has {list(flows.columns)}")
    keys = _group_keys(flows, by).to_numpy()
    num = flows[numerator].astype(float).groupby(keys, sort=False).sum()
    den = flows[denominator].astype(float).groupby(keys, sort=False).sum()
    out = num / den.where(den != 0)
    out.index.name = by or "flow"
    return out


def drop_mark_ratios(
    flows: pd.DataFrame,
    by: str | None = None,
    *,
    sent_col: str = "sent_packets",
    drops_col: str = "drops",
    marks_col: str = "ecn_marks",
) -> pd.DataFrame:
    """Drop ratio (packets dropped at the bottleneck / packets sent) and ECN-mark ratio per flow or class (S3).

    ``sent_packets`` counts retransmissions too. The mark ratio is NaN when
    the table has no ``marks_col`` column (a run without ECN).
    """
    out = pd.DataFrame({"drop_ratio": ratio_by(flows, drops_col, sent_col, by)})
    if marks_col in flows.columns:
        out["mark_ratio"] = ratio_by(flows, marks_col, sent_col, by)
    else:
        out["mark_ratio"] = math.nan
    return out


def retransmissions(flows: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Retransmitted packets and their fraction of all packets sent, per flow or class (S0's extra measurement)."""
    keys = _group_keys(flows, by).to_numpy()
    out = pd.DataFrame(
        {
            "retransmissions": flows["retransmissions"].groupby(keys, sort=False).sum().astype(np.int64),
            "sent_packets": flows["sent_packets"].groupby(keys, sort=False).sum().astype(np.int64),
        }
    )
    out["retransmission_ratio"] = ratio_by(flows, "retransmissions", "sent_packets", by)
    out.index.name = by or "flow"
    return out


# ===========================================================================
# Flow completion times (S2)
# ===========================================================================

_FCT_PERCENTILES = (50, 95, 99)


def fct_stats(fcts: Iterable[float]) -> dict[str, float]:
    """Count, mean, p50, p95 and p99 of flow completion times (in the input's unit).

    Percentiles interpolate linearly between order statistics (numpy's
    default). Example: FCTs 1..100 s give mean 50.5, p50 50.5, p95 95.05,
    p99 99.01. Empty input: count 0, NaNs.
    """
    x = np.asarray(list(fcts), dtype=float)
    if np.isnan(x).any():
        raise ValueError("fct_stats() got NaN (an unfinished flow?); filter those first")
    if len(x) == 0:
        return {"count": 0, "mean": math.nan, **{f"p{q}": math.nan for q in _FCT_PERCENTILES}}
    p = np.percentile(x, _FCT_PERCENTILES)
    return {"count": len(x), "mean": float(x.mean()), **{f"p{q}": float(v) for q, v in zip(_FCT_PERCENTILES, p)}}


def fct_stats_by(
    df: pd.DataFrame,
    by: str | None = "class",
    *,
    fct_col: str = "fct_s",
    size_col: str = "size_bytes",
    sizes: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """:func:`fct_stats` per class (or for all flows with ``by=None``), one row per class.

    ``sizes=(lo, hi)`` keeps flows with ``lo <= size < hi`` first (S2 looks
    at 3 MB objects, e.g. ``sizes=(3e6, 3e6 + 1)``).
    """
    if fct_col not in df.columns:
        raise ValueError(f"FCT table has no column {fct_col!r}; has {list(df.columns)}")
    if sizes is not None:
        lo, hi = sizes
        s = df[size_col]
        df = df[(s >= lo) & (s < hi)]
    if by is None:
        return pd.DataFrame([fct_stats(df[fct_col])], index=pd.Index(["all"], name="class"))
    rows = {k: fct_stats(g[fct_col]) for k, g in df.groupby(by, sort=False)}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = by
    return out
