"""The studies' figures, drawn with matplotlib (no display needed), saved as PNG and SVG.

Every function returns a :class:`matplotlib.figure.Figure`; pass ``ax=`` to
draw into an existing axes instead (the function then returns that axes'
figure). Figures are built with ``matplotlib.figure.Figure`` directly, not
pyplot, so nothing depends on the interactive backend or global state; saving
uses the Agg renderer. :func:`save` writes ``<stem>.png`` and ``<stem>.svg``
(the SVG is deterministic: fixed id salt, no date).

Figures (source study in brackets):

- :func:`throughput_over_time` -- per-flow throughput of one run.
- :func:`queue_delay_over_time`, :func:`queue_delay_hist` -- bottleneck
  queueing delay of one run, over time and as the per-packet sojourn
  histogram (S3's 1 ms-bin histogram).
- :func:`fness_scatter_kde` -- S0's figure: per CCA pair, the runs' fness as
  points plus a Gaussian kernel density (Scott's rule), "A first" and
  "B first" side by side.
- :func:`maxmin_share_by_pair` -- each flow's throughput as a fraction of its
  max-min fair share (Prudentia), per pair, flows A and B side by side.
- :func:`jfi_nru_vs_rtt` -- S4's J and NRU tuple (U_N, U_N+, U_N-) vs RTT.
- :func:`relative_throughput_vs` -- S3's relative throughput per class vs a
  swept parameter.
- :func:`fct_cdf` -- S2's flow-completion-time CDFs per class.
- :func:`heatmap` -- any metric over two swept parameters.
- :func:`measured_vs_model`, :func:`share_vs_buffer`, :func:`throughput_vs_loss` --
  measured points with an analytic model's curve (ccfair.models) beside them.

Colours: every CCA keeps its colour in every figure (:func:`cca_color`: the registry's,
cc/mod.rs, Okabe & Ito's colour-blind-safe palette for the common ones).
"""

from __future__ import annotations

import math
import textwrap
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ccfair import metrics
from ccfair.topology import primary_rate_bps

__all__ = [
    "cca_color",
    "gaussian_kde",
    "save",
    "throughput_over_time",
    "queue_delay_over_time",
    "queue_delay_hist",
    "fness_scatter_kde",
    "maxmin_share_by_pair",
    "jfi_nru_vs_rtt",
    "relative_throughput_vs",
    "fct_cdf",
    "heatmap",
    "measured_vs_model",
    "share_vs_buffer",
    "throughput_vs_loss",
    "links_summary",
]

_CYCLE = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
    "#8c564b", "#7f7f7f", "#bcbd22", "#9467bd", "#17becf",
]  # fmt: skip
_LINESTYLES = ["-", "--", ":", "-."]
#: Model curves for :func:`measured_vs_model`: label -> (xs, ys) of an analytic model (ccfair.models).
Curves = Mapping[str, tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]]

#: A run's flows beyond this many are drawn per CCA (summed) rather than one line each.
MAX_FLOW_LINES = 12


def _registry_color(label: Any) -> str | None:
    """The colour the registry gives a CCA label (``"cubic"``, ``"cubic+pacing"``); None for other labels."""
    from ccfair import ccas

    key = str(label).lower()
    paced = key.endswith(ccas.PACING_SUFFIX)
    name = key[: -len(ccas.PACING_SUFFIX)] if paced else key
    return ccas.colour(name, paced)


def cca_color(label: str) -> str:
    """The colour of a CCA label (``"cubic"``, ``"cubic+pacing"``, ...): the registry's
    (cc/mod.rs), else a stable colour drawn from the label."""
    own = _registry_color(label)
    if own is not None:
        return own
    key = str(label).lower()
    cmap = matplotlib.colormaps["tab20"]
    return matplotlib.colors.to_hex(cmap(zlib.crc32(key.encode()) % 20))


def _key_color(key: Any, i: int) -> str:
    """A CCA's colour when ``key`` names one, else the i-th colour of the cycle."""
    return _registry_color(key) or _CYCLE[i % len(_CYCLE)]


#: Fewest runs a kernel density is drawn from (below it: the runs as points only).
MIN_KDE_POINTS = 3


def gaussian_kde(
    values: Sequence[float] | np.ndarray, grid: Sequence[float] | np.ndarray, bounds: tuple[float, float] | None = None
) -> np.ndarray:
    """Gaussian kernel density of ``values`` evaluated on ``grid``, bandwidth by Scott's rule.

    ``h = s * n^(-1/5)`` with ``s`` the sample standard deviation (ddof 1),
    as scipy.stats.gaussian_kde does in one dimension. The density
    integrates to 1. With ``bounds`` (a metric's domain: fness in [-1, 1], a
    share in [0, 1]) the kernels are reflected at both bounds (Silverman 1986,
    "Density Estimation", sec. 2.10): no mass falls outside the domain, the
    density still integrates to 1 over it, and it is 0 on grid points outside.
    Raises ValueError for fewer than two values or zero spread.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 2:
        raise ValueError("a kernel density needs at least two values")
    s = float(np.std(x, ddof=1))
    if s == 0:
        raise ValueError("a kernel density needs values that are not all equal")
    h = s * len(x) ** (-1 / 5)
    g = np.asarray(grid, dtype=float)
    centres = x if bounds is None else np.concatenate([x, 2 * bounds[0] - x, 2 * bounds[1] - x])
    z = (g[:, None] - centres[None, :]) / h
    dens = np.exp(-0.5 * z * z).sum(axis=1) / (len(x) * h * math.sqrt(2 * math.pi))
    if bounds is not None:
        dens[(g < bounds[0]) | (g > bounds[1])] = 0.0
    return dens


# ---------------------------------------------------------------- helpers


def _new_figure(width: float = 6.4, height: float = 3.6, ncols: int = 1, sharey: bool = False) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, sharey=sharey, squeeze=False)[0]
    return fig, list(axes)


def _figure_for(ax: Axes | None, width: float = 6.4, height: float = 3.6) -> tuple[Figure, Axes]:
    if ax is not None:
        return cast(Figure, ax.figure), ax  # our axes are on Figures, never SubFigures
    fig, axes = _new_figure(width, height)
    return fig, axes[0]


def _style(ax: Axes) -> None:
    ax.grid(True, alpha=0.3, linewidth=0.6)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)


def _is_result(obj: Any) -> bool:
    return hasattr(obj, "throughput") and hasattr(obj, "config") and hasattr(obj, "flows")


def _need(df: pd.DataFrame, *cols: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; has {list(df.columns)}")


def save(fig: Figure, path_stem: str | Path, *, formats: Sequence[str] = ("png", "svg"), dpi: int = 150) -> list[Path]:
    """Write ``fig`` as ``<path_stem>.png`` and ``<path_stem>.svg`` (creating the directory); return the paths.

    A ``.png``/``.svg`` suffix on ``path_stem`` is dropped. The SVG carries no
    date and uses a fixed id salt, so the same figure gives the same bytes.
    """
    stem = Path(path_stem)
    if stem.suffix.lower() in (".png", ".svg"):
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    with matplotlib.rc_context({"svg.hashsalt": "ccfair", "svg.fonttype": "path"}):
        for fmt in formats:
            p = stem.with_name(stem.name + "." + fmt)
            meta = {"Date": None} if fmt == "svg" else ({"Software": None} if fmt == "png" else None)
            fig.savefig(p, format=fmt, dpi=dpi, metadata=meta)
            paths.append(p)
    return paths


# ---------------------------------------------------------------- one run


def throughput_over_time(
    result_or_df: Any,
    ax: Axes | None = None,
    *,
    unit: str = "Mbit/s",
    title: str | None = None,
) -> Figure:
    """Per-flow throughput over time of one run.

    ``result_or_df`` is a :class:`~ccfair.result.Result` (its ``throughput``
    table; flows coloured by CCA, the analysis window shaded) or a long table
    with ``flow``, ``time_s``, ``throughput_bps`` (and optionally ``cca``).
    Flows of the same CCA share its colour and differ in line style. With more
    than :data:`MAX_FLOW_LINES` flows the lines are per CCA: the sum over its flows.
    A result's figure also shows the link rate (dashed) and says, below the axes, why
    a bin can exceed it (:data:`THROUGHPUT_NOTE`).
    """
    scale = {"bit/s": 1.0, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9}
    if unit not in scale:
        raise ValueError(f"unit must be one of {list(scale)}, got {unit!r}")
    window = None
    capacity_bps = None
    if _is_result(result_or_df):
        r = result_or_df
        df = r.throughput
        capacity_bps = float(primary_rate_bps(r.config))
        labels = metrics.flow_labels(r.flows)
        window = (r.config["window_start_ns"] / 1e9, r.config["window_end_ns"] / 1e9)
        if title is None:
            title = r.summary.get("name")
    else:
        df = result_or_df
        _need(df, "flow", "time_s", "throughput_bps")
        if "cca" in df.columns:
            labels = df.groupby("flow", sort=False)["cca"].first()
        else:
            labels = pd.Series({f: None for f in pd.unique(df["flow"])}, dtype=object)
    fig, ax = _figure_for(ax)
    wide = metrics.throughput_matrix(df) / scale[unit]
    bin_s = float(np.diff(wide.index[:2])[0]) if len(wide) > 1 else 1.0
    t = wide.index.to_numpy() + bin_s / 2  # plot each bin at its middle
    if wide.shape[1] > MAX_FLOW_LINES and labels.notna().all():
        per_label = wide.T.groupby(labels.reindex(wide.columns).to_numpy(), sort=False).sum().T
        counts = labels.value_counts()
        for lab in per_label.columns:
            ax.plot(t, per_label[lab], color=cca_color(lab), lw=1.2, label=f"{lab} ({counts[lab]} flows, total)")
    else:
        used: dict[str, int] = {}
        for i, flow in enumerate(wide.columns):
            lab = labels.get(flow)
            if lab is None or (isinstance(lab, float) and math.isnan(lab)):
                color, style, name = _CYCLE[i % len(_CYCLE)], "-", str(flow)
            else:
                k = used.get(lab, 0)
                used[lab] = k + 1
                color, style, name = cca_color(lab), _LINESTYLES[k % len(_LINESTYLES)], f"{flow} ({lab})"
            ax.plot(t, wide[flow], color=color, ls=style, lw=1.2, label=name)
    if window is not None:
        ax.axvspan(*window, color="0.5", alpha=0.08, lw=0, label="analysis window")
    if capacity_bps is not None:
        ax.axhline(capacity_bps / scale[unit], color="0.2", ls="--", lw=0.9, label=f"link rate ({capacity_bps / scale[unit]:g} {unit})")
        note = textwrap.fill(THROUGHPUT_NOTE.format(bin_ms=bin_s * 1e3), 115)
        fig.supxlabel(note, fontsize="x-small", color="0.35", x=0.01, ha="left")  # constrained layout keeps room for it
    ax.set_xlabel("Time (s)")
    ax.set_ylabel(f"Throughput ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_xlim(0, t[-1] + bin_s / 2 if len(t) else 1)
    if title:
        ax.set_title(textwrap.fill(title, 70))
    ax.legend(loc="best", fontsize="small", frameon=False)
    _style(ax)
    return fig


#: The caption of a run's throughput figure: why a bin can exceed the link rate.
THROUGHPUT_NOTE = (
    "Bytes delivered in order to the receiving application per {bin_ms:g} ms bin. After a loss, the bytes "
    "held behind the hole are released at once when it is repaired, so a bin can exceed the link rate; "
    "over the run no flow exceeds it."
)

#: Trace columns drawn by :func:`trace_over_time`: (column, axis label, scale to the unit shown).
TRACE_SERIES = {
    "cwnd": ("cwnd_pkts", "Congestion window (packets)", 1.0),
    "pacing-rate": ("pacing_rate_bps", "Pacing rate (Mbit/s)", 1e6),
    "rtt": ("srtt_ms", "Smoothed RTT (ms)", 1.0),
}


def trace_over_time(result: Any, what: str, ax: Axes | None = None, *, title: str | None = None) -> Figure:
    """One traced series per flow over time (``trace = true``): ``what`` is a key of
    :data:`TRACE_SERIES` (``cwnd``, ``pacing-rate``, ``rtt``: the sender's cwnd, its pacing
    rate, and its smoothed RTT estimate, sampled every ``sample``)."""
    if what not in TRACE_SERIES:
        raise ValueError(f"what must be one of {list(TRACE_SERIES)}, got {what!r}")
    trace = result.trace
    if trace is None or not len(trace):
        raise ValueError("the run has no trace (set trace = true in the experiment)")
    col, ylabel, div = TRACE_SERIES[what]
    labels = metrics.flow_labels(result.flows)
    fig, ax = _figure_for(ax)
    used: dict[str, int] = {}
    for flow, g in trace.groupby("flow", sort=False):
        lab = labels.get(flow)
        k = used.get(lab, 0)
        used[lab] = k + 1
        ax.plot(g["time_s"], g[col] / div, color=cca_color(lab), ls=_LINESTYLES[k % len(_LINESTYLES)], lw=1.0, label=f"{flow} ({lab})")
    if what == "pacing-rate":
        ax.axhline(primary_rate_bps(result.config) / div, color="0.2", ls="--", lw=0.9, label="link rate")
    ax.set_xlabel("Time (s)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(textwrap.fill(title if title is not None else str(result.summary.get("name")), 70))
    ax.legend(loc="best", fontsize="small", frameon=False)
    _style(ax)
    return fig


def queue_delay_over_time(result_or_df: Any, ax: Axes | None = None, *, rate_bps: float | None = None, title: str | None = None) -> Figure:
    """Bottleneck queueing delay over time of one run (ms).

    From a Result two lines: the sampled backlog converted to delay
    (``queue.bytes * 8 / rate``, what a packet arriving then would wait) and
    the per-bin mean sojourn time of the packets that left the queue
    (``link.queue_delay_ms``). From a table: its ``queue_delay_ms`` column,
    or ``bytes`` converted with ``rate_bps``.
    """
    fig, ax = _figure_for(ax)
    if _is_result(result_or_df):
        r = result_or_df
        rate = float(primary_rate_bps(r.config))
        q = r.queue
        ax.plot(q["time_s"], q["bytes"] * 8 / rate * 1e3, color="0.55", lw=0.6, label="backlog / rate (sampled)")
        link = r.link
        bin_s = float(np.diff(link["time_s"].to_numpy()[:2])[0]) if len(link) > 1 else 0.0
        ax.plot(link["time_s"] + bin_s / 2, link["queue_delay_ms"], color="#0072B2", lw=1.4, label="mean sojourn per bin")
        ax.axvspan(
            r.config["window_start_ns"] / 1e9, r.config["window_end_ns"] / 1e9, color="0.5", alpha=0.08, lw=0, label="analysis window"
        )
        if title is None:
            title = r.summary.get("name")
    else:
        df = result_or_df
        _need(df, "time_s")
        if "queue_delay_ms" in df.columns:
            ax.plot(df["time_s"], df["queue_delay_ms"], color="#0072B2", lw=1.2, label="queueing delay")
        elif "bytes" in df.columns and rate_bps:
            ax.plot(df["time_s"], df["bytes"] * 8 / float(rate_bps) * 1e3, color="0.4", lw=0.8, label="backlog / rate")
        else:
            raise ValueError("need a 'queue_delay_ms' column, or 'bytes' and rate_bps=")
    ax.set_xlabel("Time (s)")
    ax.set_ylabel("Queueing delay (ms)")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    if title:
        ax.set_title(title)
    ax.legend(loc="best", fontsize="small", frameon=False)
    _style(ax)
    return fig


def queue_delay_hist(result_or_df: Any, ax: Axes | None = None, *, log: bool = False, title: str | None = None) -> Figure:
    """Histogram of per-packet sojourn times (S3), as the fraction of packets per bin, with p50 and p99 marked.

    ``result_or_df``: a Result (its ``sojourn`` table, packets that left the
    queue inside the analysis window) or a table with ``bin_start_ms``,
    ``bin_end_ms``, ``count``. ``log=True`` uses a log y axis.
    """
    if _is_result(result_or_df):
        h = result_or_df.sojourn
        if title is None:
            title = result_or_df.summary.get("name")
    else:
        h = result_or_df
        _need(h, "bin_start_ms", "bin_end_ms", "count")
    fig, ax = _figure_for(ax)
    total = float(h["count"].sum())
    if total > 0:
        ax.bar(
            h["bin_start_ms"],
            h["count"] / total,
            width=h["bin_end_ms"] - h["bin_start_ms"],
            align="edge",
            color="#0072B2",
            lw=0,
            label=f"{int(total)} packets",
        )
        stats = metrics.queue_delay_stats(h)
        ax.axvline(stats["p50_ms"], color="#009E73", ls="--", lw=1, label=f"p50 {stats['p50_ms']:.2f} ms")
        ax.axvline(stats["p99_ms"], color="#D55E00", ls="--", lw=1, label=f"p99 {stats['p99_ms']:.2f} ms")
    else:
        ax.text(0.5, 0.5, "no packets", transform=ax.transAxes, ha="center", va="center")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("Sojourn time in the bottleneck queue (ms)")
    ax.set_ylabel("Fraction of packets")
    ax.set_xlim(left=0)
    if title:
        ax.set_title(title)
    ax.legend(loc="best", fontsize="small", frameon=False)
    _style(ax)
    return fig


# ---------------------------------------------------------------- sweeps


def fness_scatter_kde(
    runs_df: pd.DataFrame,
    pair_col: str = "pair",
    order_col: str | None = "order",
    value_col: str = "fness",
    *,
    order_labels: Mapping[Any, str] | None = None,
    a_col: str | None = None,
    b_col: str | None = None,
    title: str | None = None,
) -> Figure:
    """S0's fness figure: for every CCA pair (a row), each run as a point plus a Gaussian KDE of the runs.

    One panel per value of ``order_col`` (side by side, e.g. ``"A first"``
    and ``"B first"``; titles from ``order_labels`` or the values
    themselves); ``order_col=None`` gives one panel. x is fness in [-1, 1]:
    -1 flow A took everything, +1 flow B did, 0 fair. Points are jittered
    vertically (deterministically). With ``a_col``/``b_col`` (the CCA labels
    of flows A and B) a point takes the colour of the CCA that got more;
    otherwise each pair has one colour. The KDE (Scott's rule, reflected at
    -1 and 1) is drawn for pairs with at least :data:`MIN_KDE_POINTS` runs that differ.
    """
    _need(runs_df, pair_col, value_col)
    if order_col is not None:
        _need(runs_df, order_col)
        orders = list(pd.unique(runs_df[order_col]))
        try:
            orders = sorted(orders)
        except TypeError:
            pass
    else:
        orders = [None]
    pairs = list(pd.unique(runs_df[pair_col]))
    fig, axes = _new_figure(4.2 * len(orders), 0.9 + 0.75 * max(len(pairs), 1), ncols=len(orders), sharey=True)
    grid = np.linspace(-1, 1, 401)
    rng = np.random.default_rng(0)
    winners: set[str] = set()
    for ax, order in zip(axes, orders):
        sub = runs_df if order is None else runs_df[runs_df[order_col] == order]
        for i, pair in enumerate(pairs):
            rows = sub[sub[pair_col] == pair]
            vals = rows[value_col].to_numpy(dtype=float)
            ok = ~np.isnan(vals)
            vals, rows = vals[ok], rows[ok]
            y0 = len(pairs) - 1 - i  # first pair on top
            color = "0.45" if (a_col and b_col) else _key_color(pair, i)
            if len(vals) >= MIN_KDE_POINTS and np.std(vals) > 0:
                dens = gaussian_kde(vals, grid, bounds=(-1.0, 1.0))
                ax.fill_between(grid, y0 - 0.05, y0 - 0.05 + 0.45 * dens / dens.max(), color=color, alpha=0.25, lw=0)
                ax.plot(grid, y0 - 0.05 + 0.45 * dens / dens.max(), color=color, lw=1)
            jitter = y0 - 0.25 + rng.uniform(-0.12, 0.12, size=len(vals))
            if a_col and b_col:
                winner = np.where(vals < 0, rows[a_col].astype(str), rows[b_col].astype(str))
                colors = [cca_color(w) for w in winner]
                winners.update(winner)
            else:
                colors = [color] * len(vals)
            ax.scatter(vals, jitter, s=12, c=colors, alpha=0.8, lw=0)
        ax.axvline(0, color="0.3", lw=0.8, ls=":")
        ax.set_xlim(-1.05, 1.05)
        ax.set_xlabel("fness (−1: A takes all, +1: B takes all)")
        if order is not None:
            label = order_labels.get(order, str(order)) if order_labels else (order if isinstance(order, str) else f"{order_col} = {order}")
            ax.set_title(label)
        _style(ax)
        ax.grid(False, axis="y")
    axes[0].set_yticks(range(len(pairs)))
    axes[0].set_yticklabels([str(p) for p in reversed(pairs)])
    axes[0].set_ylim(-0.6, len(pairs) - 0.4)
    axes[0].set_ylabel("CCA pair (A vs B)")
    if winners:
        handles = [Line2D([], [], ls="", marker="o", ms=5, color=cca_color(w), label=f"{w} got more") for w in sorted(winners)]
        axes[-1].legend(handles=handles, loc="upper left", fontsize="small", frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def maxmin_share_by_pair(
    runs_df: pd.DataFrame,
    pair_col: str = "pair",
    a_col: str = "maxmin_share_a",
    b_col: str = "maxmin_share_b",
    *,
    order_col: str | None = "order",
    title: str | None = None,
) -> Figure:
    """Max-min fair share (Prudentia) per pair: every run's A and B as points, 1 = exactly its fair share.

    One row per pair (first on top), flow A's values just above the row's
    line and B's just below; one panel per value of ``order_col``. x is the
    flow's throughput / its max-min fair share (metrics.max_min_fair_rates):
    below 1 the flow got less than it was entitled to.
    """
    _need(runs_df, pair_col, a_col, b_col)
    orders: list[Any] = [None]
    if order_col is not None and order_col in runs_df.columns:
        orders = sorted(pd.unique(runs_df[order_col]), key=str)
    pairs = list(pd.unique(runs_df[pair_col]))
    fig, axes = _new_figure(4.2 * len(orders), 0.9 + 0.6 * max(len(pairs), 1), ncols=len(orders), sharey=True)
    rng = np.random.default_rng(0)
    top = 0.0
    for ax, order in zip(axes, orders):
        sub = runs_df if order is None else runs_df[runs_df[order_col] == order]
        for i, pair in enumerate(pairs):
            rows = sub[sub[pair_col] == pair]
            y0 = len(pairs) - 1 - i
            for col, dy, color, label in ((a_col, 0.15, "#0072B2", "flow A"), (b_col, -0.15, "#D55E00", "flow B")):
                v = rows[col].to_numpy(dtype=float)
                v = v[np.isfinite(v)]
                top = max(top, float(v.max()) if len(v) else 0.0)
                ax.scatter(
                    v, y0 + dy + rng.uniform(-0.06, 0.06, size=len(v)), s=10, c=color, alpha=0.7, lw=0, label=label if i == 0 else None
                )
        ax.axvline(1.0, color="0.3", lw=0.8, ls=":")
        ax.set_xlabel("throughput / max-min fair share")
        if order is not None:
            ax.set_title(str(order))
        _style(ax)
        ax.grid(False, axis="y")
    for ax in axes:
        ax.set_xlim(0, max(2.0, top * 1.05))
    axes[0].set_yticks(range(len(pairs)))
    axes[0].set_yticklabels([str(p) for p in reversed(pairs)])
    axes[0].set_ylim(-0.6, len(pairs) - 0.4)
    axes[0].set_ylabel("pair (A vs B)")
    axes[-1].legend(loc="upper right", fontsize="small", frameon=False)
    if title:
        fig.suptitle(title, fontsize="small")
    return fig


def _mean_std(df: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    g = df.groupby(keys, sort=True)[col]
    return pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1).fillna(0.0)}).reset_index()


def jfi_nru_vs_rtt(
    runs_df: pd.DataFrame,
    *,
    rtt_col: str = "rtt_ms",
    group_col: str = "pair",
    jfi_col: str = "jfi",
    nru_cols: Sequence[str] = ("U_N", "U_N+", "U_N-"),
    title: str | None = None,
) -> Figure:
    """S4's figure: Jain's index (left) and the NRU tuple U_N, U_N+, U_N- (right) against RTT, one colour per group.

    Points are means over the runs at each RTT, bars one standard deviation.
    U_N is solid, U_N+ dashed, U_N- dotted; 0 dB (every flow got its
    calibrated share) is marked. The NRU panel is left out when none of
    ``nru_cols`` is a column.
    """
    _need(runs_df, rtt_col, group_col, jfi_col)
    present = [c for c in nru_cols if c in runs_df.columns]
    fig, axes = _new_figure(9.0 if present else 5.0, 3.6, ncols=2 if present else 1)
    groups = list(pd.unique(runs_df[group_col]))
    styles = {0: ("-", "o"), 1: ("--", "^"), 2: (":", "v")}
    for i, grp in enumerate(groups):
        sub = runs_df[runs_df[group_col] == grp]
        color = _key_color(grp, i)
        j = _mean_std(sub, [rtt_col], jfi_col)
        axes[0].errorbar(j[rtt_col], j["mean"], yerr=j["std"], color=color, marker="o", ms=4, capsize=3, lw=1.2, label=str(grp))
        for k, col in enumerate(present):
            m = _mean_std(sub.dropna(subset=[col]), [rtt_col], col)
            if m.empty:
                continue
            ls, mk = styles.get(k, ("-.", "s"))
            axes[1].errorbar(
                m[rtt_col], m["mean"], yerr=m["std"], color=color, ls=ls, marker=mk, ms=4, capsize=3, lw=1.2,
                label=f"{grp}: {col}",
            )  # fmt: skip
    axes[0].set_xlabel("RTT (ms)")
    axes[0].set_ylabel("Jain's index J")
    axes[0].set_ylim(0, 1.05)
    axes[0].legend(fontsize="small", frameon=False)
    _style(axes[0])
    if present:
        axes[1].axhline(0, color="0.3", lw=0.8)
        axes[1].set_xlabel("RTT (ms)")
        axes[1].set_ylabel("NRU (dB)")
        axes[1].legend(fontsize="x-small", frameon=False, ncol=2 if len(groups) > 2 else 1)
        _style(axes[1])
    if title:
        fig.suptitle(title)
    return fig


def relative_throughput_vs(
    df: pd.DataFrame,
    x: str,
    *,
    class_col: str = "class",
    value_col: str = "relative_throughput",
    group_col: str | None = None,
    logx: bool = False,
    xlabel: str | None = None,
    title: str | None = None,
) -> Figure:
    """S3's figure: relative throughput of each connection class against a swept parameter ``x``.

    ``df`` has one row per (run, class): ``x``, ``class_col``, ``value_col``
    (see :func:`ccfair.metrics.relative_throughput`). Points are means over
    runs, bars one standard deviation; 1 (equal share) is marked. With
    ``group_col`` (e.g. the AQM) one panel per group, sharing the y axis.
    """
    _need(df, x, class_col, value_col)
    groups = [None] if group_col is None else list(pd.unique(df[group_col]))
    if group_col is not None:
        _need(df, group_col)
    fig, axes = _new_figure(max(5.0, 3.6 * len(groups)), 3.6, ncols=len(groups), sharey=True)
    classes = list(pd.unique(df[class_col]))
    ymax = 1.0
    for ax, grp in zip(axes, groups):
        sub = df if grp is None else df[df[group_col] == grp]
        for i, cls in enumerate(classes):
            m = _mean_std(sub[sub[class_col] == cls], [x], value_col)
            if m.empty:
                continue
            ymax = max(ymax, float((m["mean"] + m["std"].fillna(0)).max()))
            ax.errorbar(m[x], m["mean"], yerr=m["std"], color=_key_color(cls, i), marker="o", ms=4, capsize=3, lw=1.2, label=str(cls))
        ax.axhline(1.0, color="0.3", lw=0.8, ls=":", label="equal share")
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel or x)
        if grp is not None:
            ax.set_title(f"{group_col} = {grp}" if not isinstance(grp, str) else grp)
        _style(ax)
    # One y range for all panels (shared axis), from 0 to the highest point
    # of any panel: a per-panel set_ylim would freeze the first panel's range.
    for ax in axes:
        ax.set_ylim(0, ymax * 1.05)
    axes[0].set_ylabel("Relative throughput (class mean / (C/N))")
    axes[-1].legend(fontsize="small", frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def fct_cdf(
    df: pd.DataFrame,
    *,
    fct_col: str = "fct_s",
    class_col: str | None = "class",
    logx: bool = True,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """S2's figure: empirical CDF of flow completion times, one step line per class (``class_col=None``: one line).

    x is the FCT in seconds (log scale by default); filter the table first to
    look at one object size (S2: 3 MB objects).
    """
    _need(df, fct_col)
    fig, ax = _figure_for(ax)
    groups = [(None, df)] if class_col is None else list(df.groupby(class_col, sort=False))
    for i, (cls, g) in enumerate(groups):
        x = np.sort(g[fct_col].dropna().to_numpy(dtype=float))
        if len(x) == 0:
            continue
        y = np.arange(1, len(x) + 1) / len(x)
        label = f"{cls} (n={len(x)})" if cls is not None else f"all (n={len(x)})"
        ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post", color=_key_color(cls, i), lw=1.4, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel("Flow completion time (s)")
    ax.set_ylabel("CDF (fraction of flows)")
    ax.set_ylim(0, 1.02)
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small", frameon=False)
    _style(ax)
    return fig


def heatmap(
    runs_df: pd.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    agg: str = "mean",
    ax: Axes | None = None,
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    fmt: str = ".2f",
    title: str | None = None,
) -> Figure:
    """A metric over two swept parameters: cells are ``agg`` (mean, median, ...) of ``value`` over runs.

    Each cell is annotated with its number. Values of both signs (e.g. fness,
    NRU) get a diverging colour map centred on 0; otherwise viridis.
    """
    _need(runs_df, x, y, value)
    table = runs_df.pivot_table(index=y, columns=x, values=value, aggfunc=agg)
    data = table.to_numpy(dtype=float)
    fig, ax = _figure_for(ax, width=1.6 + 1.0 * max(table.shape[1], 2), height=1.4 + 0.6 * max(table.shape[0], 2))
    finite = data[np.isfinite(data)]
    if cmap is None:
        if len(finite) and finite.min() < 0 < finite.max():
            cmap = "RdBu_r"
            lim = float(np.abs(finite).max())
            vmin = -lim if vmin is None else vmin
            vmax = lim if vmax is None else vmax
        else:
            cmap = "viridis"
    im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", origin="lower")
    ax.set_xticks(range(table.shape[1]))
    ax.set_xticklabels([str(c) for c in table.columns])
    ax.set_yticks(range(table.shape[0]))
    ax.set_yticklabels([str(r) for r in table.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    norm = im.norm
    cm = im.get_cmap()
    for (r, c), v in np.ndenumerate(data):
        if not np.isfinite(v):
            continue
        rgba = cm(norm(v))
        luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
        ax.text(c, r, format(v, fmt), ha="center", va="center", fontsize="small", color="black" if luminance > 0.5 else "white")
    fig.colorbar(im, ax=ax, label=f"{value} ({agg})" if agg != "mean" else value)
    if title:
        ax.set_title(title)
    return fig


# ---------------------------------------------------------------- measurements beside models


def measured_vs_model(
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    group: str | None = None,
    curves: Curves | None = None,
    ax: Axes | None = None,
    logx: bool = False,
    xbase: int = 10,
    logy: bool = False,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
) -> Figure:
    """Every measured point (``y`` over ``x``, one colour per ``group``), their means joined, and model curves.

    ``curves`` maps a label to (xs, ys) of an analytic model (ccfair.models),
    drawn as dashed black-ish lines so measurement and model stay apart.
    """
    _need(df, x, y, *([group] if group else []))
    fig, ax = _figure_for(ax)
    groups = list(df.groupby(group, sort=False)) if group else [(None, df)]
    for i, (key, sub) in enumerate(groups):
        color = _key_color(key, i) if key is not None else _CYCLE[0]
        ax.scatter(sub[x], sub[y], s=14, alpha=0.6, color=color, label=None if key is None else f"{key} (measured)")
        means = sub.groupby(x)[y].mean().sort_index()
        ax.plot(means.index, means.to_numpy(), color=color, lw=1.2, marker="o", ms=4)
    for j, (label, (xs, ys)) in enumerate((curves or {}).items()):
        ax.plot(xs, ys, color=["#222222", "#777777", "#aaaaaa"][j % 3], ls=_LINESTYLES[1 + j % 3], lw=1.6, label=label)
    if logx:
        ax.set_xscale("log", base=xbase)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    _style(ax)
    ax.legend(fontsize="small")
    return fig


def share_vs_buffer(
    df: pd.DataFrame,
    *,
    x: str = "buffer_bdp",
    y: str = "share",
    group: str | None = None,
    curves: Curves | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """A buffer sweep: measured share over the buffer (in BDP, log scale) with model curves (e.g. Ware et al.)."""
    fig = measured_vs_model(
        df, x, y, group=group, curves=curves, ax=ax, logx=True, xbase=2, xlabel="buffer (BDP)", ylabel="share of the link", title=title
    )
    axis = fig.axes[0] if ax is None else ax
    axis.set_ylim(0, 1)
    ticks = sorted(df[x].unique())
    axis.set_xticks(ticks, [f"{t:g}" for t in ticks])
    return fig


def throughput_vs_loss(
    df: pd.DataFrame,
    *,
    x: str = "loss",
    y: str = "throughput_mbps",
    group: str | None = None,
    curves: Curves | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """A loss sweep: measured throughput over the random loss rate (log-log) with model curves (Mathis, CUBIC)."""
    return measured_vs_model(
        df, x, y, group=group, curves=curves, ax=ax, logx=True, logy=True,
        xlabel="random loss probability", ylabel="throughput (Mbit/s)", title=title,
    )  # fmt: skip


def links_by_point(links: pd.DataFrame, point: str, ax: Axes | None = None, *, title: str | None = None) -> Figure:
    """A sweep's links table (``store.load_sweep(DIR, "links")`` with a ``point`` column naming each
    run's grid point): per link, one bar per grid point of the mean utilisation over its runs (left
    axis) and the mean queue in packets as a point on it (right axis)."""
    fig, ax = _figure_for(ax)
    g = links.groupby([point, "name"], sort=False)[["utilisation", "mean_queue_packets"]].mean()
    points = list(dict.fromkeys(links[point]))
    names = list(dict.fromkeys(links["name"]))
    width = 0.8 / max(1, len(points))
    q = ax.twinx()
    for i, pt in enumerate(points):
        x = np.arange(len(names)) + (i - (len(points) - 1) / 2) * width
        rows = [g.loc[(pt, n)] if (pt, n) in g.index else None for n in names]
        util = [np.nan if r is None else r["utilisation"] for r in rows]
        colour = f"C{i % 10}"
        ax.bar(x, util, width=width * 0.95, color=colour, alpha=0.75, label=str(pt))
        q.plot(x, [np.nan if r is None else r["mean_queue_packets"] for r in rows], "o", color=colour, markeredgecolor="black")
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("Utilisation (bars; mean over runs)")
    q.set_ylabel("Mean queue (points; packets)")
    q.set_ylim(bottom=0)
    ax.set_title(textwrap.fill(title if title is not None else "links per grid point", 70))
    ax.legend(loc="lower right", fontsize="x-small", frameon=False, title=point, title_fontsize="x-small")
    _style(ax)
    return fig


def links_summary(result: Any, ax: Axes | None = None, *, title: str | None = None) -> Figure:
    """Per link of a run (``summary["links"]``): utilisation as bars (left axis) and the mean queue in
    packets as points (right axis), drops and marks written above each bar."""
    fig, ax = _figure_for(ax)
    links = result.summary.get("links") or []
    names = [lk["name"] for lk in links]
    x = np.arange(len(links))
    ax.bar(x, [lk["utilisation"] for lk in links], color="#0072B2", width=0.6, label="utilisation")
    for i, lk in enumerate(links):
        ax.annotate(f"{lk['drops']} drops, {lk['marks']} marks", (i, lk["utilisation"]), ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("Utilisation (analysis window)")
    q = ax.twinx()
    q.plot(x, [lk["mean_queue_packets"] for lk in links], "o", color="#D55E00", label="mean queue")
    q.set_ylabel("Mean queue (packets)")
    q.set_ylim(bottom=0)
    ax.set_title(textwrap.fill(title if title is not None else str(result.summary.get("name")), 70))
    handles = ax.get_legend_handles_labels()[0] + q.get_legend_handles_labels()[0]
    ax.legend(handles, ["utilisation", "mean queue"], loc="lower right", fontsize="small", frameon=False)
    _style(ax)
    return fig
