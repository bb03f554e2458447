"""``ccfair matrix``: every ordered pair of a list of CCAs at one setting (Prudentia-style).

For CCAs c_1..c_n the matrix runs the n^2 ordered pairs (A, B) -- A is flow 0,
which starts first, B flow 1 -- each ``repetitions`` times, at a setting that
defaults to S0's base case (10 Mbit/s, 50 ms, 0.5 BDP drop-tail, B 5 s after
A, window 10-45 s; the definition of ``ccfair preset s0``) or is any
experiment file with at least two flows. It is an ordinary sweep: the
matrix writes a sweep file (``DIR/matrix.toml``, a ``pairs`` axis of ordered
pairs) and runs it with the sweep machinery into the usual Parquet store
(``runs.parquet``, ``flows.parquet``), so ``ccfair report DIR`` and
``ccfair.load_sweep`` work on it as on any sweep.

Per pair (means over the repetitions), in ``DIR/matrix.parquet``:

- ``share_a`` / ``share_b``: A's / B's share of the bytes delivered in the
  analysis window;
- ``maxmin_a`` / ``maxmin_b``: throughput as a fraction of the max-min fair
  share (:func:`ccfair.metrics.max_min_share`; 1 = fair);
- ``harm_a``: the harm B does to A (Ware et al., HotNets 2019,
  :func:`ccfair.metrics.harm`): A's throughput against B relative to A's
  throughput against another A in the same position (the status-quo
  baseline, the A-vs-A pair of the same matrix); ``harm_b`` likewise for B
  against B-vs-B. 0 = no harm, 1 = starved, negative = better off;
- ``jfi``.

Heatmaps (rows A, columns B) of share_a, maxmin_a and harm_a go to
``DIR/figures/matrix-*.png|svg`` and into the sweep's HTML report.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ccfair import ccas as ccas_mod
from ccfair.errors import SpecError

__all__ = [
    "MATRIX_FILE",
    "SUMMARY_FILE",
    "all_ccas",
    "default_setting",
    "figures",
    "is_matrix",
    "summarize",
    "sweep_dict",
    "to_toml",
    "write_summary",
]

#: The sweep file the matrix writes into its directory (re-run with ``ccfair sweep``).
MATRIX_FILE = "matrix.toml"
#: The per-pair table.
SUMMARY_FILE = "matrix.parquet"
#: Heatmaps drawn: (column of the summary, title).
HEATMAPS = (
    ("share_a", "A's share of the bytes (A starts first)"),
    ("maxmin_a", "A's throughput / max-min fair share"),
    ("harm_a", "harm B does to A (vs A-against-A)"),
)


def all_ccas() -> list[str]:
    """Every CCA the simulator has (canonical names)."""
    return list(ccas_mod.available())


def default_setting() -> dict[str, Any]:
    """S0's base case as an experiment dict (the definition of ``ccfair preset s0``), CCAs to be set."""
    from ccfair.presets import s0

    p = s0.Point("lab", "cubic", "cubic", *s0.BASE, 0.5, "droptail", s0.ORDERS[0], 0)
    raw = s0.spec_dict(p)
    raw["name"] = "S0 base case (10 Mbit/s, 50 ms, 0.5 BDP drop-tail)"
    raw["seed"] = 1
    return raw


def _resolve(names: list[str]) -> list[str]:
    out = []
    for n in names:
        try:
            canonical, paced = ccas_mod.resolve(n)
        except ValueError as e:
            raise SpecError("--ccas", str(e)) from None
        label = canonical + (ccas_mod.PACING_SUFFIX if paced else "")
        if label in out:
            raise SpecError("--ccas", f"{n!r} appears twice (as {label!r})")
        out.append(label)
    if not out:
        raise SpecError("--ccas", "needs at least one CCA")
    return out


def sweep_dict(base: dict[str, Any], cca_names: list[str], repetitions: int = 5) -> dict[str, Any]:
    """The sweep file of the matrix: ``base`` plus a ``pairs`` axis of every ordered pair.

    ``base`` is an experiment dict with >= 2 flows; a ``[sweep]`` table in it
    keeps its other axes (the heatmaps then average over them) but must not
    have ``pairs`` or ``flip_order`` (the matrix's pairs are ordered already).
    """
    if repetitions < 1:
        raise SpecError("--repetitions", f"must be >= 1, got {repetitions}")
    names = _resolve(cca_names)
    raw = copy.deepcopy(base)
    flows = raw.get("flows")
    if not isinstance(flows, list) or len(flows) < 2:
        raise SpecError("flows", "a matrix needs an experiment with at least two [[flows]] (A and B)")
    sweep = dict(raw.pop("sweep", None) or {})
    for key in ("pairs", "flip_order"):
        if key in sweep:
            raise SpecError(f"sweep.{key}", "a matrix sets the ordered CCA pairs itself; remove it from the file")
    sweep["repetitions"] = repetitions
    sweep["pairs"] = [[a, b] for a in names for b in names]
    raw["sweep"] = sweep
    return raw


def _toml_value(v: Any) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items() if x is not None) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v))


def to_toml(raw: dict[str, Any]) -> str:
    """TOML text of an experiment / sweep dict (tables inline; enough for what ``sweep_dict`` makes)."""
    lines = ["# written by `ccfair matrix`; re-run with `ccfair sweep THIS_FILE --out DIR`"]
    tables = {k: v for k, v in raw.items() if isinstance(v, dict)}
    for k, v in raw.items():
        if k not in tables and v is not None:
            lines.append(f"{json.dumps(k)} = {_toml_value(v)}")
    for k, v in tables.items():
        lines.append(f"\n[{json.dumps(k)}]")
        lines.extend(f"{json.dumps(str(kk))} = {_toml_value(vv)}" for kk, vv in v.items() if vv is not None)
    return "\n".join(lines) + "\n"


def is_matrix(runs: pd.DataFrame) -> bool:
    """Whether a sweep's runs table holds every ordered pair of its CCAs (n^2 >= 4 pairs)."""
    if "pair" not in runs.columns or not len(runs):
        return False
    pairs = {tuple(p.split(" vs ")) for p in runs["pair"].unique()}
    if any(len(p) != 2 for p in pairs):
        return False
    names = {c for p in pairs for c in p}
    return len(names) >= 2 and pairs == {(a, b) for a in names for b in names}


def summarize(runs: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    """Per ordered pair (A, B): repetitions, shares, max-min shares, harm both ways, JFI (means)."""
    from ccfair import metrics

    r = runs[["run_id", "pair", "jfi"]].copy()
    r[["a", "b"]] = r["pair"].str.split(" vs ", n=1, expand=True)
    f = flows[flows["position"].isin([0, 1])].pivot_table(
        index="run_id", columns="position", values=["share", "maxmin_share", "throughput_bps"]
    )
    f.columns = [f"{m}_{'a' if pos == 0 else 'b'}" for m, pos in f.columns]
    m = r.merge(f.reset_index(), on="run_id")
    g = m.groupby(["a", "b"], sort=False)
    out = g.agg(
        repetitions=("run_id", "size"),
        share_a=("share_a", "mean"),
        share_b=("share_b", "mean"),
        maxmin_a=("maxmin_share_a", "mean"),
        maxmin_b=("maxmin_share_b", "mean"),
        throughput_a_bps=("throughput_bps_a", "mean"),
        throughput_b_bps=("throughput_bps_b", "mean"),
        jfi=("jfi", "mean"),
    ).reset_index()
    own = out[out["a"] == out["b"]].set_index("a")
    nan = float("nan")
    base_a = [own["throughput_a_bps"].get(a, nan) for a in out["a"]]
    base_b = [own["throughput_b_bps"].get(b, nan) for b in out["b"]]
    out["harm_a"] = [metrics.harm(x, t) for x, t in zip(base_a, out["throughput_a_bps"], strict=True)]
    out["harm_b"] = [metrics.harm(x, t) for x, t in zip(base_b, out["throughput_b_bps"], strict=True)]
    return out


def figures(summary: pd.DataFrame, directory: str | Path | None = None) -> dict[str, Any]:
    """The heatmaps (rows A, columns B, in the matrix's CCA order); saved under ``directory`` if given."""
    from ccfair import plots

    order = list(dict.fromkeys(summary["a"]))
    df = summary.assign(
        A=pd.Categorical(summary["a"], categories=order, ordered=True),
        B=pd.Categorical(summary["b"], categories=order, ordered=True),
    )
    out = {}
    for col, title in HEATMAPS:
        if df[col].notna().any():
            fig = plots.heatmap(df, "B", "A", col, title=title, vmin=None if col == "harm_a" else 0.0)
            ax = fig.axes[0]
            ax.invert_yaxis()
            for label in ax.get_xticklabels():
                label.set_rotation(60)
                label.set_horizontalalignment("right")
            fig.set_size_inches(max(6.0, 0.55 * len(order) + 3), max(4.5, 0.45 * len(order) + 2))
            out[col] = fig
            if directory is not None:
                plots.save(fig, Path(directory) / "figures" / f"matrix-{col.replace('_', '-')}")
    return out


def write_summary(directory: str | Path) -> pd.DataFrame:
    """Summarize the matrix stored in ``directory``: ``matrix.parquet`` and the heatmaps; returns the table."""
    from ccfair import store

    d = Path(directory)
    runs = store.load_sweep(d)
    flows = store.load_sweep(d, table="flows")
    summary = summarize(runs, flows)
    summary.to_parquet(d / SUMMARY_FILE, index=False)
    figures(summary, d)
    return summary
