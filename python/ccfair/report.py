"""``ccfair report DIR``: one self-contained HTML page for a sweep.

The page embeds everything it shows -- figures as base64 PNG ``data:``
URIs, tables as HTML, the experiment file, the sweep's axes, the seeds of
every run and the versions that produced the results -- and references no
external file, script, style sheet or font, so it opens offline and can be
mailed or archived as one file.

Figures are drawn with :mod:`ccfair.plots` when that module provides the
function (``fness_scatter_kde``, ``throughput_over_time``,
``queue_delay_hist``); otherwise, or if it fails, with the small built-in
helpers below, so a report is always complete. Every figure is a
:class:`matplotlib.figure.Figure` rendered with the Agg canvas (no pyplot,
no display needed).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccfair import store

__all__ = ["build_report", "loss_overlay_figure", "ware_overlay_figure", "write_report"]

#: Rows of the runs table shown in the page (the rest is in runs.parquet).
MAX_RUN_ROWS = 2000
#: Most fness figures (one per setting of the non-pair axes) in one report.
MAX_FNESS_FIGURES = 24
#: Most grid points in the JFI box plot.
MAX_BOX_POINTS = 60

_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { font-size: 0.85em; color: #555; max-width: 640px; }
img { max-width: 100%; height: auto; }
.note { color: #666; font-size: 0.9em; }
.wide { overflow-x: auto; max-width: 100%; }
nav ol { margin: 0.2em 0; } nav ol.figs { font-size: 0.85em; columns: 2; }
"""


# --------------------------------------------------------------------------
# figure helpers
# --------------------------------------------------------------------------


def _new_figure(width: float = 6.4, height: float = 3.6) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _as_figure(obj: Any) -> Any:
    """A Figure from whatever a plotting function returned (Figure, Axes, (fig, ax), array of Axes)."""
    from matplotlib.figure import Figure

    if isinstance(obj, Figure):
        return obj
    if isinstance(obj, tuple) and obj and isinstance(obj[0], Figure):
        return obj[0]
    fig = getattr(obj, "figure", None) or getattr(obj, "get_figure", lambda: None)()
    if fig is None and isinstance(obj, (list, np.ndarray)):
        flat = np.asarray(obj, dtype=object).ravel()
        fig = getattr(flat[0], "figure", None) if len(flat) else None
    if fig is None:
        raise TypeError(f"expected a matplotlib Figure or Axes, got {type(obj).__name__}")
    return fig


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots_function(name: str) -> Any:
    try:
        from ccfair import plots  # provided by the metrics/plots work; optional here
    except Exception:  # noqa: BLE001 - absent or broken: use the built-in helpers
        return None
    return getattr(plots, name, None)


def _try_plots(name: str, *args: Any, **kwargs: Any) -> Any:
    fn = _plots_function(name)
    if fn is None:
        return None
    try:
        return _as_figure(fn(*args, **kwargs))
    except Exception:  # noqa: BLE001 - fall back to the built-in figure
        return None


def _kde(values: np.ndarray, grid: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """plots.gaussian_kde within ``bounds`` (the metric's domain); zeros for fewer than
    plots.MIN_KDE_POINTS values or no spread (the runs are then shown as points only)."""
    from ccfair import plots

    v = values[np.isfinite(values)]
    if len(v) < plots.MIN_KDE_POINTS or np.std(v) == 0:
        return np.zeros_like(grid)
    return plots.gaussian_kde(v, grid, bounds=bounds)


def _fness_figure(df: pd.DataFrame, group: str, title: str) -> Any:
    """S0-style: per pair, fness of every run (dots) and its kernel density, "A first" | "B first"."""
    orders = [o for o in ("A first", "B first") if (df["order"] == o).any()] or ["A first"]
    pairs = list(dict.fromkeys(df[group]))
    fig = _new_figure(4.0 * len(orders) + 1.5, 0.7 * len(pairs) + 1.6)
    axes = fig.subplots(1, len(orders), sharey=True, squeeze=False)[0]
    grid = np.linspace(-1, 1, 201)
    rng = np.random.default_rng(0)  # jitter only; deterministic pictures
    for ax, order in zip(axes, orders):
        sub = df[df["order"] == order]
        for k, pair in enumerate(pairs):
            v = sub.loc[sub[group] == pair, "fness"].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            ax.scatter(v, k + rng.uniform(-0.15, 0.15, len(v)), s=12, alpha=0.7, color="C0")
            dens = _kde(v, grid, (-1.0, 1.0))
            if dens.max() > 0:
                ax.plot(grid, k - 0.4 + 0.8 * dens / dens.max(), color="C1", lw=1)
        ax.axvline(0, color="#888", lw=0.8, ls="--")
        ax.set_xlim(-1.05, 1.05)
        ax.set_xlabel("fness(A, B)   (-1: A takes all, +1: B takes all)")
        ax.set_title(order)
    axes[0].set_yticks(range(len(pairs)), [str(p) for p in pairs])
    axes[0].set_ylim(len(pairs) - 0.4, -0.6)  # first pair on top
    fig.suptitle(title, fontsize=10)
    return fig


def _jfi_box(df: pd.DataFrame, keys: list[str]) -> Any:
    labels, data = [], []
    for key, sub in df.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        labels.append(", ".join(str(k) for k in key))
        data.append(sub["jfi"].dropna().to_numpy(dtype=float))
    fig = _new_figure(6.4, 0.28 * len(labels) + 1.4)
    ax = fig.subplots()
    ax.boxplot(data, **_horizontal_box_kwargs(labels))
    ax.set_xlabel("Jain's index over the flows (analysis window)")
    ax.set_xlim(0, 1.02)
    ax.tick_params(axis="y", labelsize=7)
    ax.invert_yaxis()
    return fig


def _horizontal_box_kwargs(labels: list[str]) -> dict[str, Any]:
    """boxplot() keywords for horizontal boxes with labels across matplotlib versions
    (``labels`` became ``tick_labels`` in 3.9, ``vert`` became ``orientation`` in 3.10)."""
    import matplotlib

    version = tuple(int(x) for x in re.findall(r"\d+", matplotlib.__version__)[:2])
    kw: dict[str, Any] = {"tick_labels" if version >= (3, 9) else "labels": labels}
    if version >= (3, 10):
        kw["orientation"] = "horizontal"
    else:
        kw["vert"] = False
    return kw


def _heatmap(df: pd.DataFrame, x: str, y: str, metric: str) -> Any:
    table = df.pivot_table(index=y, columns=x, values=metric, aggfunc="mean", sort=False)
    fig = _new_figure(1.2 * len(table.columns) + 2.5, 0.6 * len(table.index) + 1.6)
    ax = fig.subplots()
    im = ax.imshow(table.to_numpy(dtype=float), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=30, ha="right")
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    for (i, j), val in np.ndenumerate(table.to_numpy(dtype=float)):
        if np.isfinite(val):
            ax.text(j, i, f"{val:.2f}", ha="center", va="center", color="w" if val < 0.6 else "k", fontsize=8)
    fig.colorbar(im, ax=ax, label=f"mean {metric}")
    return fig


def _throughput_figure(tp: pd.DataFrame, title: str) -> Any:
    fig = _try_plots("throughput_over_time", tp)
    if fig is not None:
        return fig
    fig = _new_figure()
    ax = fig.subplots()
    for name, sub in tp.groupby("flow", sort=False):
        ax.plot(sub["time_s"], sub["throughput_bps"] / 1e6, lw=1, label=str(name))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    return fig


def _queue_figure(queue: pd.DataFrame, sojourn: pd.DataFrame, title: str) -> tuple[Any, str]:
    """The queue figure and what it shows (its caption's start): plots' histogram, or
    (without it) queue length over time next to the histogram."""
    fig = _try_plots("queue_delay_hist", sojourn)
    if fig is not None:
        return fig, "Queueing-delay histogram (analysis window)"
    fig = _new_figure(9.0, 3.2)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(queue["time_s"], queue["packets"], lw=0.8)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("queue (packets)")
    width = (sojourn["bin_end_ms"] - sojourn["bin_start_ms"]).to_numpy(dtype=float)
    ax2.bar(sojourn["bin_start_ms"], sojourn["count"], width=width, align="edge")
    ax2.set_xlabel("queueing delay (ms), analysis window")
    ax2.set_ylabel("packets")
    fig.suptitle(title, fontsize=9)
    return fig, "Bottleneck queue over time and queueing-delay histogram"


# --------------------------------------------------------------------------
# page
# --------------------------------------------------------------------------


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _table(df: pd.DataFrame, left: tuple[str, ...] = ()) -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{_esc(c)}</th>' for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = []
        for c, v in zip(df.columns, rec):
            if isinstance(v, float):
                text = "" if not math.isfinite(v) else f"{v:.4g}"
            else:
                text = _esc(v)
            cells.append(f'<td class="{"l" if c in left else ""}">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _kv_table(pairs: list[tuple[str, Any]]) -> str:
    rows = "".join(f'<tr><th class="l">{_esc(k)}</th><td class="l">{_esc(v)}</td></tr>' for k, v in pairs)
    return f"<table>{rows}</table>"


class _Page:
    """The report's parts in order, with the sections and figures its contents list links to."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.n_figures = 0
        #: (section id, title, [(figure id, caption)]) in page order.
        self.sections: list[tuple[str, str, list[tuple[str, str]]]] = []
        self._contents_at: int | None = None

    def add(self, text: str) -> None:
        self.parts.append(text)

    def contents_here(self) -> None:
        """Where the contents list goes (filled in by :meth:`html`)."""
        self._contents_at = len(self.parts)
        self.parts.append("")

    def section(self, title: str) -> None:
        sid = f"s{len(self.sections) + 1}"
        self.sections.append((sid, title, []))
        self.parts.append(f'<h2 id="{sid}">{_esc(title)}</h2>')

    def figure(self, fig: Any, caption: str) -> None:
        data = _png(fig)
        self.n_figures += 1
        fid = f"fig{self.n_figures}"
        if self.sections:
            self.sections[-1][2].append((fid, caption))
        self.parts.append(
            f'<figure id="{fid}"><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {self.n_figures}. {_esc(caption)}</figcaption></figure>"
        )

    def contents(self) -> str:
        """The contents list: every section, and under it every figure by number and first sentence."""
        items = []
        for sid, title, figs in self.sections:
            sub = "".join(
                f'<li><a href="#{fid}">Figure {fid[3:]}. {_esc(caption.split(":")[0].split(". ")[0])}</a></li>' for fid, caption in figs
            )
            items.append(f'<li><a href="#{sid}">{_esc(title)}</a>' + (f"<ol class='figs'>{sub}</ol>" if sub else "") + "</li>")
        return f"<nav><h2>Contents</h2><ol>{''.join(items)}</ol></nav>"

    def html(self) -> str:
        parts = list(self.parts)
        if self._contents_at is not None:
            parts[self._contents_at] = self.contents()
        return "\n".join(parts)


def build_report(directory: str | Path) -> str:
    """The HTML text of the report of the sweep in ``directory``."""
    d = Path(directory)
    meta = json.loads((d / store.SWEEP_JSON).read_text())
    runs = store.load_sweep(d)
    axis_names = [a["name"] for a in meta.get("axes", []) if a["name"] in runs.columns]
    failed_dir = d / store.FAILED_DIR
    failed = sorted(failed_dir.glob("*.json")) if failed_dir.is_dir() else []

    page = _Page()
    title = f"ccfair sweep report: {meta.get('name', d.name)}"
    page.add(f"<h1>{_esc(title)}</h1>")
    n_planned = int(meta.get("n_runs", len(runs)))
    status = f"{len(runs)} of {n_planned} runs stored"
    if failed:
        status += f", {len(failed)} failed"
    if len(runs) < n_planned:
        status += " (incomplete: re-run `ccfair sweep` with the same file and --out to finish it)"
    page.add(f"<p>{_esc(status)}. Directory: <code>{_esc(d.resolve())}</code>.</p>")
    page.contents_here()
    _sweep_section(page, meta, n_planned)

    page.section("Figures")
    if len(runs):
        _figures(page, runs, axis_names, d)
    else:
        page.add('<p class="note">No run is stored yet.</p>')
    if len(runs):
        page.section("Summary per grid point")
        keys = axis_names + (["order"] if runs["order"].nunique() > 1 else []) + (["backend"] if "backend" in runs.columns else [])
        page.add('<div class="wide">' + _table(_summary(runs, keys), left=(*keys, "runs of")) + "</div>")
        _testbed_spread(page, runs, [k for k in keys if k != "backend"])
        _links_section(page, d, meta, runs, keys)
    if failed:
        _failed_section(page, failed)
    _experiment_section(page, d, meta)
    _runs_section(page, runs, axis_names)
    page.section("Versions")
    page.add(_kv_table(sorted((meta.get("versions") or {}).items())))

    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>\n" + page.html() + "\n</body></html>\n"
    )


def _sweep_section(page: _Page, meta: dict[str, Any], n_planned: int) -> None:
    """The sweep's description: its axes and settings."""
    page.section("Sweep")
    axis_rows = [(a["name"], ", ".join(str(v) for v in a["values"])) for a in meta.get("axes", [])]
    settings = [
        ("grid points", meta.get("n_points")),
        ("repetitions", meta.get("repetitions")),
        ("flip_order", meta.get("flip_order")),
        ("runs", n_planned),
        ("base seed", meta.get("base_seed")),
        ("seed derivation", _seed_text(meta.get("seeds", "independent"))),
        ("--set overrides", " ".join(meta.get("overrides", [])) or "none"),
    ]
    page.add(_kv_table(axis_rows + settings))


def _failed_section(page: _Page, failed: list[Path]) -> None:
    """The failed runs: run id and the first line of the error."""
    page.section("Failed runs")
    fail_rows = [json.loads(p.read_text()) for p in failed]
    page.add(
        _table(
            pd.DataFrame({"run_id": [f["run_id"] for f in fail_rows], "error": [f["error"].splitlines()[0] for f in fail_rows]}),
            left=("run_id", "error"),
        )
    )


def _experiment_section(page: _Page, d: Path, meta: dict[str, Any]) -> None:
    """The sweep file as given and the base experiment after overrides."""
    page.section("Experiment")
    source = d / "experiment.toml"
    if source.exists():
        page.add("<p>The sweep file as given:</p>")
        page.add(f"<pre>{_esc(source.read_text())}</pre>")
    page.add("<p>The base experiment after <code>--set</code> overrides (JSON):</p>")
    page.add(f"<pre>{_esc(json.dumps(meta.get('experiment', {}), indent=2))}</pre>")


def _runs_section(page: _Page, runs: Any, axis_names: list[str]) -> None:
    """Every run (up to MAX_RUN_ROWS) with its parameters, seed and metrics."""
    page.section("Runs")
    shown = runs.head(MAX_RUN_ROWS)
    if len(runs) > MAX_RUN_ROWS:
        page.add(f'<p class="note">First {MAX_RUN_ROWS} of {len(runs)} runs; all of them: runs.parquet or ccfair.load_sweep().</p>')
    page.add(
        "<details><summary>run id, parameters, repetition, order, seed and metrics of every run</summary>"
        + _table(shown, left=("run_id", *axis_names, "order", "ccas", "first"))
        + "</details>"
    )


def _seed_text(mode: str) -> str:
    if mode == "common":
        return "common: seed = blake2b(base seed, repetition) -- the same seeds at every grid point and order"
    return "independent: seed = blake2b(base seed, grid point, order, repetition) -- see docs/sweeps.md"


#: The summary table's metrics: (runs column, heading, format of a value, with the spread over repetitions).
SUMMARY_METRICS = (
    ("jfi", "Jain's index", "{:.3f}", True),
    ("fness", "fness (A vs B)", "{:+.3f}", True),
    ("maxmin_share_min", "min max-min share", "{:.2f}", True),
    ("utilization", "utilization", "{:.1%}", False),
    ("queue_delay_mean_ms", "queueing delay mean", "{:.1f} ms", False),
    ("queue_delay_p99_ms", "queueing delay p99", "{:.1f} ms", False),
)


#: The links table's values shown per grid point and link: (column, heading, format).
LINK_METRICS = (
    ("utilisation", "utilisation", "{:.1%}"),
    ("mean_queue_packets", "mean queue", "{:.1f} pkt"),
    ("drops", "drops", "{:.0f}"),
    ("marks", "marks", "{:.0f}"),
)


def _point_labels(runs: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Each run's grid point in words ("a = 1, b = x"; "all runs" without keys), indexed by run_id."""
    if not keys:
        return pd.Series("all runs", index=runs["run_id"])
    text = runs[keys].astype(str).apply(lambda r: ", ".join(f"{k} = {v}" for k, v in zip(keys, r)), axis=1)
    return pd.Series(text.to_numpy(), index=runs["run_id"])


def _links_summary(runs: pd.DataFrame, links: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per grid point and link (the links table joined to the runs' grid keys): runs, and the mean
    of each :data:`LINK_METRICS` value over the point's repetitions, formatted for reading."""
    if not keys:
        runs = runs.assign(_all="all runs")
        keys = ["_all"]
    df = links.merge(runs[["run_id", *keys]], on="run_id")
    g = df.groupby([*keys, "name"], sort=False, dropna=False)
    out = g.size().rename("runs").to_frame()
    for col, heading, fmt in LINK_METRICS:
        out[heading + " (mean)"] = [fmt.format(m) if math.isfinite(m) else "-" for m in g[col].mean()]
    return out.reset_index().rename(columns={"_all": "runs of", "name": "link"})


def _links_section(page: _Page, d: Path, meta: dict[str, Any], runs: pd.DataFrame, keys: list[str]) -> None:
    """A topology sweep's links (the store's links table): a figure and the table per grid point and link."""
    if not (meta.get("experiment") or {}).get("links"):
        return
    links = store.load_sweep(d, table="links")
    if not len(links):
        return
    page.section("Links per grid point")
    points = _point_labels(runs, keys)
    fig = _try_plots("links_by_point", links.assign(point=links["run_id"].map(points)), "point")
    if fig is not None:
        page.figure(fig, "Per link: mean utilisation over the analysis window (bars) and mean queue (points) of each grid point's runs.")
    page.add('<div class="wide">' + _table(_links_summary(runs, links, keys), left=(*keys, "runs of", "link")) + "</div>")


def _summary(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per grid point: runs, and each metric's mean (``mean ± standard deviation`` over the
    repetitions for the fairness metrics), formatted for reading; headings in words."""
    if not keys:
        runs = runs.assign(_all="all runs")
        keys = ["_all"]
    g = runs.groupby(keys, sort=False, dropna=False)
    out = g.size().rename("runs").to_frame()
    for col, heading, fmt, spread in SUMMARY_METRICS:
        if col not in runs.columns or not runs[col].notna().any():
            continue
        mean = g[col].mean()
        std = g[col].std() if spread else None  # NaN for a single run: shown without the spread

        def cell(key: Any, fmt: str = fmt, mean: pd.Series = mean, std: pd.Series | None = std) -> str:
            m = mean[key]
            if not math.isfinite(m):
                return "-"
            sd = None if std is None else std[key]
            return fmt.format(m) + ("" if sd is None or not math.isfinite(sd) else " ± " + fmt.format(sd).lstrip("+"))

        out[heading + (" (mean ± sd)" if spread else " (mean)")] = [cell(k) for k in out.index]
    return out.reset_index().rename(columns={"_all": "runs of"})


def _testbed_spread(page: _Page, runs: pd.DataFrame, keys: list[str]) -> None:
    """Testbed runs (``ccfair sweep --backend testbed`` or ``both``): per grid point and kernel,
    the spread of fness and JFI over the repetitions, the hosts that ran them and the quality
    gate's verdicts (docs/testbed.md, "Campaigns")."""
    if "kernel" not in runs.columns:
        return
    tb = runs[runs["kernel"].notna()]
    if not len(tb):
        return
    by = [*keys, "kernel"]
    g = tb.groupby(by, sort=False, dropna=False)
    out = g.size().rename("runs").to_frame()
    for m in ("fness", "jfi"):
        if tb[m].notna().any():
            out[f"{m} mean"] = g[m].mean()
            out[f"{m} std"] = g[m].std()
            out[f"{m} min"] = g[m].min()
            out[f"{m} max"] = g[m].max()
    out["over limits"] = g["quality"].agg(lambda q: int((q != "ok").sum()))
    out["late p99 max (us)"] = g["late_p99_us"].max()
    out["hosts"] = g["host"].agg(lambda h: ", ".join(sorted(set(map(str, h)))))
    page.section("Testbed: the kernel's spread per grid point")
    page.add(
        '<p class="note">Testbed runs only, by grid point and kernel: fness and JFI over the repetitions '
        "(min, max, standard deviation), runs stored over the quality gate's limits, the largest p99 "
        "bottleneck lateness and the hosts (docs/testbed.md, Quality gate).</p>"
    )
    page.add(_table(out.reset_index(), left=tuple(by)))


def _figures(page: _Page, runs: pd.DataFrame, axis_names: list[str], d: Path) -> None:
    from ccfair import matrix

    is_matrix = matrix.is_matrix(runs)
    if is_matrix:
        summary = matrix.summarize(runs, store.load_sweep(d, table="flows"))
        for col, fig in matrix.figures(summary).items():
            title = dict(matrix.HEATMAPS)[col]
            page.figure(fig, f"CCA matrix: {title}; rows A (flow 0, starts first), columns B; mean over repetitions.")
    has_fness = "fness" in runs.columns and runs["fness"].notna().any() and not is_matrix
    group = "pair" if "pair" in runs.columns else "ccas"
    others = [a for a in axis_names if a != "pair"]
    if has_fness:
        settings = list(runs.groupby(others, sort=False, dropna=False)) if others else [((), runs)]
        made = 0
        for key, sub in settings[:MAX_FNESS_FIGURES]:
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{a} = {v}" for a, v in zip(others, key)) or "all runs"
            fig = _try_plots("fness_scatter_kde", sub)
            if fig is None:
                fig = _fness_figure(sub, group, label)
            page.figure(fig, f"fness per CCA pair, {label}: every run (dots) and kernel density, by start order.")
            made += 1
        if len(settings) > made:
            page.add(f'<p class="note">{len(settings) - made} more settings not drawn (limit {MAX_FNESS_FIGURES}).</p>')
    if "maxmin_share_a" in runs.columns and runs["maxmin_share_a"].notna().any():
        settings = list(runs.groupby(others, sort=False, dropna=False)) if others else [((), runs)]
        for key, sub in settings[:MAX_FNESS_FIGURES]:
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{a} = {v}" for a, v in zip(others, key)) or "all runs"
            fig = _try_plots("maxmin_share_by_pair", sub, pair_col=group, title=label)
            if fig is not None:
                page.figure(
                    fig,
                    f"Max-min fair share (Prudentia), {label}: each flow's throughput over its max-min fair share "
                    "(1 = exactly fair; below 1 it got less than it was entitled to), every run, by start order.",
                )

    varying = [a for a in axis_names if runs[a].nunique() > 1]
    if len(varying) >= 2:
        y, x = sorted(varying, key=lambda a: runs[a].nunique())[-2:]
        page.figure(_heatmap(runs, x, y, "jfi"), f"Mean Jain's index over {x} and {y} (averaged over the other parameters).")
    keys = axis_names + (["order"] if runs["order"].nunique() > 1 else [])
    if keys and runs.groupby(keys, sort=False, dropna=False).ngroups <= MAX_BOX_POINTS:
        page.figure(_jfi_box(runs, keys), "Jain's index of every grid point over its repetitions.")
    elif not keys:
        page.figure(_jfi_box(runs.assign(all="all runs"), ["all"]), "Jain's index over the repetitions.")

    ware = ware_overlay_figure(d)
    if ware is not None:
        page.figure(
            ware,
            "BBR's aggregate share of the link over the buffer size (every run, means joined), beside the model "
            "of Ware et al., IMC 2019 (ccfair.models.ware_bbr_share), which has no term for the number of loss-based flows.",
        )

    lossfig = loss_overlay_figure(d)
    if lossfig is not None:
        page.figure(
            lossfig,
            "Throughput over the random loss rate (every run, means joined), beside Mathis et al.'s model for Reno and "
            "RFC 9438's response function for CUBIC (ccfair.models), capped at the bottleneck rate.",
        )

    first = str(runs["run_id"].iloc[0])
    label = ", ".join(f"{a} = {runs[a].iloc[0]}" for a in axis_names) or "base experiment"
    label = f"run {first} ({label}, repetition {runs['repetition'].iloc[0]}, {runs['order'].iloc[0]})"
    run = store.load_run(d, first)
    page.figure(_throughput_figure(run.throughput, label), f"Per-flow throughput over time, {label}.")
    queue_fig, shows = _queue_figure(run.queue, run.sojourn, label)
    page.figure(queue_fig, f"{shows}, {label}.")


#: The CCA the Ware et al. model describes (BBRv1) and the loss-based CCAs it models it against.
WARE_BBR = "bbr"
WARE_LOSS_BASED = ("cubic", "reno")


def ware_overlay_figure(directory: str | Path) -> Any:
    """BBR's aggregate share over a buffer sweep beside Ware et al.'s model (ccfair.models), or None.

    Applies to a sweep with a ``bottleneck.buffer`` axis in BDP multiples,
    one bottleneck rate and base RTT, and only BBR(v1) and CUBIC/Reno flows.
    Points are grouped by the flow mix ("1 bbr vs 4 cubic"); the model is one
    curve per number of BBR flows, whatever the number of loss-based flows.
    """
    from ccfair import models, plots, units
    from ccfair.spec import Spec

    d = Path(directory)
    runs = store.load_sweep(d)
    if "bottleneck.buffer" not in runs.columns or not len(runs):
        return None
    try:
        bufs = [units.parse_buffer(b) for b in runs["bottleneck.buffer"]]
    except (TypeError, ValueError):
        return None
    if any(b.kind != "bdp" for b in bufs):
        return None
    flows = store.load_sweep(d, table="flows")
    if not set(flows["cca"]) <= {WARE_BBR, *WARE_LOSS_BASED} or WARE_BBR not in set(flows["cca"]):
        return None
    meta = json.loads((d / store.SWEEP_JSON).read_text())
    cfg = Spec.from_dict(meta["experiment"]).to_run_config()
    rtts = {f["rtt_ns"] for f in cfg["flows"]}
    if len(rtts) != 1 or any(a["name"] in ("bottleneck.rate", "flows.*.rtt") for a in meta.get("axes", [])):
        return None
    rate_bps, rtt_s = float(cfg["bottleneck"]["rate_bps"]), rtts.pop() / 1e9
    start_ns = cfg.get("window_start_ns") or 0
    end_ns = cfg.get("window_end_ns") or cfg["duration_ns"]
    duration_s = (end_ns - start_ns) / 1e9

    per_run = []
    for run_id, sub in flows.groupby("run_id", sort=False):
        is_bbr = sub["cca"] == WARE_BBR
        if not is_bbr.any() or is_bbr.all():
            continue  # the model is about BBR against loss-based flows
        loss = sub.loc[~is_bbr, "cca"]
        label = f"{int(is_bbr.sum())} bbr vs {len(loss)} {'/'.join(sorted(set(loss))) or 'none'}"
        per_run.append({"run_id": run_id, "n_bbr": int(is_bbr.sum()), "mix": label, "share": float(sub.loc[is_bbr, "share"].sum())})
    if not per_run:
        return None
    pts = pd.DataFrame(per_run).merge(runs[["run_id", "bottleneck.buffer"]], on="run_id")
    pts["buffer_bdp"] = [float(units.parse_buffer(b).value) for b in pts["bottleneck.buffer"]]
    xs = np.geomspace(pts["buffer_bdp"].min(), pts["buffer_bdp"].max(), 80)
    curves = {}
    for n in sorted(pts["n_bbr"].unique()):
        tag = f", {n} BBR flows" if pts["n_bbr"].nunique() > 1 else ""
        curves[f"Ware et al. model{tag} (eq. 9-11, d = {duration_s:g} s)"] = (
            xs, models.ware_bbr_share(xs, rate_bps, rtt_s, duration_s=duration_s, n_bbr=int(n)),
        )  # fmt: skip
    title = f"BBR's share vs buffer, {rate_bps / 1e6:g} Mbit/s, {rtt_s * 1e3:g} ms"
    return plots.share_vs_buffer(pts, group="mix", curves=curves, title=title)


#: Loss-based CCAs with a response-function model: Reno (Mathis et al.) and CUBIC (RFC 9438).
LOSS_MODELS = ("reno", "cubic")


def loss_overlay_figure(directory: str | Path) -> Any:
    """Single-flow throughput over a random-loss axis beside Mathis (Reno) and RFC 9438 (CUBIC), or None.

    Applies to a sweep of one-flow runs with a ``flows.0.loss`` / ``flows.*.loss``
    axis and only Reno/CUBIC flows. Models: Mathis with random loss, C = 1.31
    (the paper's constant without delayed ACKs: ccfair's Reno, like Linux,
    grows cwnd by the segments an ACK covers, RFC 3465, so ACKing every second
    segment does not slow it) and CUBIC's response function, both capped at
    the bottleneck rate.
    """
    from ccfair import models, plots
    from ccfair.spec import Spec

    d = Path(directory)
    runs = store.load_sweep(d)
    axis = next((a for a in ("flows.0.loss", "flows.*.loss") if a in runs.columns), None)
    if axis is None or not len(runs):
        return None
    flows = store.load_sweep(d, table="flows")
    if flows.groupby("run_id").size().max() != 1 or not set(flows["cca"]) <= set(LOSS_MODELS):
        return None
    meta = json.loads((d / store.SWEEP_JSON).read_text())
    cfg = Spec.from_dict(meta["experiment"]).to_run_config()
    rtt_s, rate_bps, mss = cfg["flows"][0]["rtt_ns"] / 1e9, float(cfg["bottleneck"]["rate_bps"]), cfg["flows"][0].get("mss", 1448)
    pts = flows.merge(runs[["run_id", axis]], on="run_id")
    pts = pts[pts[axis] > 0].assign(loss=lambda t: t[axis].astype(float), throughput_mbps=lambda t: t["throughput_bps"] / 1e6)
    if pts.empty:
        return None
    xs = np.geomspace(pts["loss"].min(), pts["loss"].max(), 60)
    curves = {}
    if "reno" in set(pts["cca"]):
        y = np.minimum(models.mathis_throughput_bps(xs, rtt_s, mss, loss="random"), rate_bps)
        curves["Mathis et al. 1997 (Reno, random loss, C = 1.31)"] = (xs, y / 1e6)
    if "cubic" in set(pts["cca"]):
        y = np.minimum(models.cubic_throughput_bps(xs, rtt_s, mss), rate_bps)
        curves["RFC 9438 response function (CUBIC)"] = (xs, y / 1e6)
    title = f"throughput vs random loss, {rate_bps / 1e6:g} Mbit/s, {rtt_s * 1e3:g} ms"
    return plots.throughput_vs_loss(pts, group="cca", curves=curves, title=title)


def write_report(directory: str | Path, out: str | Path | None = None) -> Path:
    """Write the report of the sweep in ``directory`` to ``out`` (default ``DIR/report.html``)."""
    d = Path(directory)
    path = Path(out) if out is not None else d / "report.html"
    text = build_report(d)
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
