"""``ccfair fidelity``: the simulator recomputed at every stored point, next to the kernel's runs.

For each point with stored kernel runs (points.runs_by_point), the simulator
runs the point's experiment with seeds 1..n, n = the kernel's run count, and
both sides give flow B's share (the second [[flows]] entry, all its flows),
utilisation and the mean queue in packets over the window. Per point: the
kernel's mean and range beside the simulator's, ``diff`` = sim mean - kernel
mean, and the spread ratio (sim range / kernel range; criterion: within
[1/2, 2]). Over all points: mean and worst |diff|.

The spread compares like with like: the range of a sample grows with its size, so the
simulator's range is always over as many runs as the kernel's. With K simulator runs per
kernel run (bench/fidelity_many_seeds.py) the simulator gives K sets of n runs and its
spread is their mean range (:func:`mean_range`): the expected range of n runs, with the
simulator's own sampling noise averaged out.
"""

from __future__ import annotations

import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.errors import SpecError
from ccfair.fidelity.points import (
    QUEUE_TOLERANCE_REL,
    UTILISATION_TOLERANCE,
    Point,
    PointSet,
    group_shares,
    load_set,
    map_set_names,
    runs_by_point,
    select_runs,
)

#: Spread criterion: the simulator's run-to-run range of B's share within [1/SPREAD_FACTOR, SPREAD_FACTOR] of the kernel's.
SPREAD_FACTOR = 2.0


def _sim_one(
    raw: dict[str, Any],
    seed: int,
    starts_s: list[float] | None = None,
    ts_epoch_ns: int | None = None,
    stalls: list[list[int]] | None = None,
) -> dict[str, Any]:
    """The simulator's summary of the point with ``seed``; with ``starts_s``, each flow starts when the
    kernel run's flow really started (its measured connect time, no further start jitter); with
    ``ts_epoch_ns``, the hosts' TCP timestamp clock at time zero is the kernel run's (``ts_epoch_ns``,
    read by TCP-LP), else one drawn from the seed; with ``stalls`` (:func:`recorded_stalls`), the
    bottleneck's outages are the kernel run's stalls (:func:`with_outages`). The summary's
    ``replayed_stalls`` counts the outages given."""
    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.spec import Spec

    spec = Spec.from_dict(with_outages(raw, stalls) if stalls else raw)
    config = spec.to_run_config(seed)
    if starts_s is not None:
        if len(starts_s) != len(config["flows"]):
            raise ValueError(f"{len(starts_s)} measured starts for {len(config['flows'])} flows")
        for fc, t in zip(config["flows"], starts_s):
            fc["start_ns"] = max(0, round(t * 1e9))
            fc["start_jitter_ns"] = 0
    if ts_epoch_ns is not None:
        config["tcp_timestamp_epoch_ns"] = int(ts_epoch_ns)
    summary = Result.from_raw(spec, config, simulate(config, spec)).summary
    summary["replayed_stalls"] = len(stalls or [])
    return summary


def recorded_stalls(run: dict[str, Any]) -> list[list[int]] | None:
    """The stalls kernel run ``run``'s bottleneck recorded (``testbed.bottleneck.stalls``, shaper.rs
    ``Stats::stalls``: ``[end, lost]``, a transmission ended ``end`` ns after the run's t0 and the link
    then lost ``lost`` ns of service); None for a run without the record (an empty list: none)."""
    stalls = (((run.get("summary") or {}).get("testbed") or {}).get("bottleneck") or {}).get("stalls")
    return None if stalls is None else [[int(end), int(lost)] for end, lost in stalls]


def with_outages(raw: dict[str, Any], stalls: list[list[int]]) -> dict[str, Any]:
    """Experiment ``raw`` (a dumbbell) with ``stalls`` (:func:`recorded_stalls`) as its bottleneck's
    outages. A stall ``[end, lost]`` is the outage ``[start, duration] = [end, lost]``: the testbed's t0
    is the simulator's time 0, the origin of the measured flow starts (``flow_start_s``, the agents'
    start minus t0) and of the stalls' ends, and an outage of ``lost`` loses exactly ``lost`` of a
    backlogged link's service (crates/ccfair-sim/src/outages.rs), as the stall did."""
    if "bottleneck" not in raw:
        raise SpecError("links", "replaying recorded stalls needs a dumbbell ([bottleneck]); use --no-replay-stalls for a [[links]] point")
    return {**raw, "bottleneck": {**raw["bottleneck"], "outages": [[f"{end}ns", f"{lost}ns"] for end, lost in stalls]}}


def sim_args(
    raw: dict[str, Any], run: dict[str, Any], seed: int, measured_starts: bool = True, replay_stalls: bool = True
) -> tuple[Any, ...]:
    """:func:`_sim_one`'s arguments for a simulator run of point ``raw`` paired with kernel run ``run``
    on ``seed``: with ``measured_starts`` the run's measured flow starts and timestamp clock, with
    ``replay_stalls`` its recorded stalls as the bottleneck's outages (a run without either: as the spec)."""
    starts = (run.get("flow_start_s"), run.get("ts_epoch_ns")) if measured_starts else (None, None)
    return (raw, seed, *starts, recorded_stalls(run) if replay_stalls else None)


def _side(spec: Any, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    shares = [group_shares(spec, s)[1] for s in summaries]
    util = [float(s["utilization"]) for s in summaries]
    queue = [float(s["queue_packets_mean"]) for s in summaries]
    return {
        "replayed_runs": sum(1 for s in summaries if s.get("replayed_stalls")),
        "share_b": statistics.fmean(shares),
        "share_b_runs": shares,
        "share_b_range": [min(shares), max(shares)],
        "utilisation": statistics.fmean(util),
        "utilisation_runs": util,
        "queue_packets": statistics.fmean(queue),
        "queue_packets_runs": queue,
    }


def describe(point: Point) -> dict[str, Any]:
    """The point's parameters as the JSON reports them (SI units; buffer in packets)."""
    spec = point.spec()
    cfg = spec.to_run_config(1)
    flows = cfg["flows"]
    groups = [i for i, _, _ in spec.expand_flows()]
    first = {g: flows[groups.index(g)] for g in (0, 1)}
    q = cfg["bottleneck"]["qdisc"]
    buffer = q.get("limit_packets")
    if buffer is None and q.get("limit_bytes") is not None:
        buffer = q["limit_bytes"] / spec.packet_wire_bytes
    raw = point.raw()
    return {
        "set": point.set_name,
        "id": point.id,
        "rate": cfg["bottleneck"]["rate_bps"],
        "rtt": first[0]["rtt_ns"] / 1e9,
        "rtt_b": first[1]["rtt_ns"] / 1e9,
        "buffer": buffer,
        "buffer_setting": str(raw["bottleneck"].get("buffer")),
        "cca_a": spec.flows[0].cca if isinstance(spec.flows[0].cca, str) else str(raw["flows"][0]["cca"]),
        "cca_b": spec.flows[1].cca if isinstance(spec.flows[1].cca, str) else str(raw["flows"][1]["cca"]),
        "flows_a": spec.flows[0].count,
        "flows_b": spec.flows[1].count,
        "flows": len(groups),
    }


def compare(sets: list[PointSet], jobs: int = 1, measured_starts: bool = True, replay_stalls: bool = True) -> dict[str, Any]:
    """The comparison as the JSON output of ``ccfair fidelity --json``.

    Simulator run i uses kernel run i's seed; with ``measured_starts`` (default) and a kernel run that
    recorded its flows' real start times (``flow_start_s``), the simulator's flows start then too, and
    with its hosts' TCP timestamp clock (``ts_epoch_ns``) the simulator's hosts read the same clock;
    with ``replay_stalls`` (default) and a kernel run that recorded its bottleneck's stalls
    (``testbed.bottleneck.stalls``), the simulator's bottleneck has them as outages (:func:`with_outages`):
    both sides on the same link service. Each point counts its simulator runs that replayed stalls
    (``sim_runs_replaying_stalls``).
    """
    todo: list[tuple[Point, list[dict[str, Any]]]] = []
    stale = {}
    for ps in sets:
        runs, stale[ps.name] = runs_by_point(ps)
        todo += [(p, select_runs(p, runs[p.id], ps.runs)) for p in ps.points if runs[p.id]]
    jobs_list = [sim_args(p.raw(), r, r["seed"], measured_starts, replay_stalls) for p, kr in todo for r in kr]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            sims = list(ex.map(_sim_one, *zip(*jobs_list))) if jobs_list else []
    else:
        sims = [_sim_one(*job) for job in jobs_list]
    points = []
    k = 0
    for p, kr in todo:
        spec = p.spec()
        n = len(kr)
        kern, sim = _side(spec, [r["summary"] for r in kr]), _side(spec, sims[k : k + n])
        k += n
        points.append(_point_entry(p, kr, kern, sim))
    return _totals(points, stale)


def mean_range(values: list[float], sets: int) -> float:
    """Mean range of ``sets`` interleaved sets of runs: set k is ``values[k::sets]`` (runs ordered
    kernel run by kernel run, ``sets`` simulator runs each). ``sets = 1``: the range of all."""
    if sets < 1 or len(values) % sets:
        raise ValueError(f"{len(values)} runs do not form {sets} equal sets")
    return statistics.fmean(max(values[k::sets]) - min(values[k::sets]) for k in range(sets))


def _point_entry(p: Point, kr: list[dict[str, Any]], kern: dict[str, Any], sim: dict[str, Any]) -> dict[str, Any]:
    kr_range = kern["share_b_range"][1] - kern["share_b_range"][0]
    sim_range = mean_range(sim["share_b_runs"], len(sim["share_b_runs"]) // len(kr))
    ratio = sim_range / kr_range if kr_range > 0 else (1.0 if sim_range == 0 else float("inf"))
    return {
        **describe(p),
        "kernel_share_b": kern["share_b"],
        "kernel_share_b_range": kern["share_b_range"],
        "kernel_share_b_runs": kern["share_b_runs"],
        "kernel_runs": len(kr),
        "kernel_versions": sorted({r.get("kernel", "") for r in kr}),
        "sim_share_b": sim["share_b"],
        "sim_share_b_range": sim["share_b_range"],
        "sim_share_b_runs": sim["share_b_runs"],
        "sim_runs": len(sim["share_b_runs"]),
        "sim_runs_replaying_stalls": sim["replayed_runs"],
        "diff": sim["share_b"] - kern["share_b"],
        "spread_ratio": ratio,
        "spread_ok": bool(1 / SPREAD_FACTOR <= ratio <= SPREAD_FACTOR),
        "kernel_utilisation": kern["utilisation"],
        "sim_utilisation": sim["utilisation"],
        "kernel_queue_packets": kern["queue_packets"],
        "sim_queue_packets": sim["queue_packets"],
        **{f"{side}_{k}_runs": d[f"{k}_runs"] for side, d in (("kernel", kern), ("sim", sim)) for k in ("utilisation", "queue_packets")},
    }


def outside(points: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The points whose utilisation differs by more than UTILISATION_TOLERANCE of the link, and those
    whose mean queue differs by more than QUEUE_TOLERANCE_REL of the kernel's (ids)."""
    util = [p["id"] for p in points if abs(p["sim_utilisation"] - p["kernel_utilisation"]) > UTILISATION_TOLERANCE]
    queue = [
        p["id"]
        for p in points
        if p["kernel_queue_packets"] > 0 and abs(p["sim_queue_packets"] / p["kernel_queue_packets"] - 1) > QUEUE_TOLERANCE_REL
    ]
    return util, queue


def _totals(points: list[dict[str, Any]], stale: dict[str, int]) -> dict[str, Any]:
    diffs = [abs(p["diff"]) for p in points]
    worst = max(points, key=lambda p: abs(p["diff"])) if points else None
    by_set: dict[str, list[float]] = {}
    for p in points:
        by_set.setdefault(p["set"], []).append(abs(p["diff"]))
    qrel = [
        abs(p["sim_queue_packets"] - p["kernel_queue_packets"]) / p["kernel_queue_packets"] for p in points if p["kernel_queue_packets"] > 0
    ]
    util_out, queue_out = outside(points)
    return {
        "points": points,
        "utilisation_outside": util_out,
        "queue_outside": queue_out,
        "mean_abs": statistics.fmean(diffs) if diffs else None,
        "worst_abs": max(diffs) if diffs else None,
        "worst_point": worst["id"] if worst else None,
        "sets": {s: {"points": len(d), "mean_abs": statistics.fmean(d), "worst_abs": max(d)} for s, d in by_set.items()},
        "spread_ok_fraction": statistics.fmean(p["spread_ok"] for p in points) if points else None,
        "utilisation_worst_abs": max((abs(p["sim_utilisation"] - p["kernel_utilisation"]) for p in points), default=None),
        "queue_worst_rel": max(qrel, default=None),
        "rates": sorted({p["rate"] for p in points}),
        "rtts": sorted({p["rtt"] for p in points}),
        "stale_runs": stale,
        "sim_runs_replaying_stalls": sum(p.get("sim_runs_replaying_stalls", 0) for p in points),
    }


def load_sets(names: list[str] | None, data: Path) -> list[PointSet]:
    return [load_set(n, data) for n in (names or map_set_names(data))]


# ----------------------------------------------------------------- output


def table_rows(result: dict[str, Any]) -> list[list[str]]:
    """One row per point: id, kernel mean [range] (runs), sim mean [range] (runs), diff, spread, util, queue."""
    rows = []
    for p in result["points"]:
        kr, sr = p["kernel_share_b_range"], p["sim_share_b_range"]
        rows.append(
            [
                p["set"],
                p["id"],
                f"{p['kernel_share_b']:.3f} [{kr[0]:.3f}-{kr[1]:.3f}] ({p['kernel_runs']})",
                f"{p['sim_share_b']:.3f} [{sr[0]:.3f}-{sr[1]:.3f}] ({p['sim_runs']})",
                f"{p['diff']:+.3f}",
                f"{p['spread_ratio']:.2f}" + ("" if p["spread_ok"] else " !"),
                f"{p['kernel_utilisation']:.3f} / {p['sim_utilisation']:.3f}",
                f"{p['kernel_queue_packets']:.1f} / {p['sim_queue_packets']:.1f}",
            ]
        )
    return rows


TABLE_HEADER = [
    "set",
    "point",
    "kernel B share [range] (runs)",
    "sim B share [range] (runs)",
    "diff",
    "spread ratio",
    "util kernel / sim",
    "queue pkts kernel / sim",
]


def heatmap_figure(result: dict[str, Any]) -> Any:
    """Sim - kernel mean of B's share: rows = pair (start order A/B, flow counts), columns = rate, RTT, buffer."""
    import pandas as pd

    from ccfair import plots

    rows = []
    for p in result["points"]:
        pair = f"{p['cca_a']}/{p['cca_b']}" if p["flows"] == 2 else f"{p['flows_a']}x{p['cca_a']}/{p['flows_b']}x{p['cca_b']}"
        rtt = f"{p['rtt'] * 1e3:g}" + ("" if p["rtt_b"] == p["rtt"] else f"/{p['rtt_b'] * 1e3:g}")
        cond = f"{p['rate'] / 1e6:g}M {rtt}ms {p['buffer_setting']}"
        rows.append(
            {"pair": pair, "condition": cond, "sim - kernel, B share": p["diff"], "key": (p["rate"], p["rtt"], p["rtt_b"], p["buffer"])}
        )
    df = pd.DataFrame(rows)
    order = df.sort_values("key", key=lambda s: s.map(lambda k: k))["condition"].drop_duplicates().tolist()
    df["condition"] = pd.Categorical(df["condition"], categories=order, ordered=True)
    lim = max(0.1, float(df["sim - kernel, B share"].abs().max()))
    fig = plots.heatmap(df, "condition", "pair", "sim - kernel, B share", cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax = fig.axes[0]
    for label in ax.get_xticklabels():
        label.set_rotation(70)
        label.set_horizontalalignment("right")
    fig.set_size_inches(max(8.0, 0.45 * len(order) + 3), 0.5 * df["pair"].nunique() + 3)
    return fig


def html_page(result: dict[str, Any]) -> str:
    """One self-contained page: totals, the heatmap (PNG inline) and the per-point table."""
    import base64
    import html
    import io

    fig = heatmap_figure(result)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    img = base64.b64encode(buf.getvalue()).decode()
    head = "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table_rows(result))
    return (
        "<!doctype html><meta charset='utf-8'><title>ccfair fidelity</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd;font-size:13px}</style>"
        f"<h1>Simulator vs Linux: flow B's share</h1><p>{html.escape(totals_line(result))}</p>"
        f"<img src='data:image/png;base64,{img}' style='max-width:100%'><table><tr>{head}</tr>{body}</table>"
    )


def totals_line(result: dict[str, Any]) -> str:
    if not result["points"]:
        return "no point has stored kernel runs"
    per_set = "; ".join(
        f"{s}: {v['points']} points, mean {v['mean_abs']:.3f}, worst {v['worst_abs']:.3f}" for s, v in result["sets"].items()
    )
    return (
        f"{len(result['points'])} points: mean |diff| {result['mean_abs']:.3f}, worst {result['worst_abs']:.3f} ({result['worst_point']}); "
        f"spread within [1/2, 2]x at {100 * result['spread_ok_fraction']:.0f} % of points; "
        f"utilisation worst |diff| {result['utilisation_worst_abs']:.3f}; queue worst relative diff {100 * (result['queue_worst_rel'] or 0):.0f} %; "
        f"{result.get('sim_runs_replaying_stalls', 0)} simulator runs replayed their kernel run's bottleneck stalls. {per_set}"
    )
