"""The fidelity comparison with the bottleneck's link stalling as the testbed's bottleneck does.

    cargo build --release -p ccfair-bench
    python3 bench/fidelity_link_stalls.py --set kernel-ccas-delay --set kernel-ccas-loss \
        [--stalls RATE_PER_S,MEAN_MS | replay | none] [--seeds K] [--seed-set N] [--replay-paths IDLE_US | --path-offsets-us DA,DB] [--point ID ...]
        [--data data/fidelity] [--jobs 2] [--out F.json]

What `ccfair fidelity` computes (the simulator once per counted kernel run, on its seed, measured
flow starts and timestamp clock; with ``--seeds K``, K runs per kernel run on seeds s + 1000 (N + k), N
of ``--seed-set``, as bench/fidelity_many_seeds.py), every simulator run through ``ccfair-bench json``
(``CCFAIR_BENCH``, default target/release/ccfair-bench; any build, e.g. the ``noise-batch`` one), with
the bottleneck's outages (``bottleneck.outages``, crates/ccfair-sim/src/outages.rs) chosen by
``--stalls``: ``replay`` gives each simulator run its kernel run's recorded stalls
(``testbed.bottleneck.stalls``, as `ccfair fidelity` does by default; runs without the record none);
``RATE_PER_S,MEAN_MS`` draws stalls beginning as a Poisson process of that rate, exponentially long
with that mean, from the simulator run's seed (:func:`poisson_outages`); ``none``: no outages (the
simulator as `ccfair fidelity --no-replay-stalls`). Prints per set the
mean and worst |share_B difference|, the utilisation differences, the mean queue's (relative to the
kernel's; points beyond points.py ``QUEUE_TOLERANCE_REL``), and for the kernel-CCA sets the
per-CCA mean |difference| over each CCA's points (docs/linux-ports.md "Fidelity (measured)");
the spread ratio's fraction within bounds (as `ccfair fidelity`); ``--point`` (repeatable) also
prints those points one by one. ``--path-offsets-us DA,DB`` adds DA and DB microseconds to the RTTs
of flow groups A and B (the simulator's sensitivity to unequal paths). ``--replay-paths IDLE_US`` gives each simulated flow the RTT of its
path in the kernel run: the testbed's equalizing delay plus an idle base RTT (``replayed_paths_ns``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.fidelity.compare import SPREAD_FACTOR, mean_range, recorded_stalls, with_outages
from ccfair.fidelity.points import QUEUE_TOLERANCE_REL, group_shares, load_set, runs_by_point, select_runs
from ccfair.result import Result
from ccfair.spec import Spec
from common import shift_group_rtts

ROOT = Path(__file__).resolve().parents[1]
BENCH = os.environ.get("CCFAIR_BENCH", str(ROOT / "target/release/ccfair-bench"))
#: ``--noise-scale``: both host-noise means times this (set once in main).
NOISE_SCALE = [1.0]


def sim_one(
    raw: dict[str, Any], seed: int, starts_s: list[float] | None, epoch_ns: int | None, stalls: Any, paths_ns: list[int] | None = None
) -> tuple[float, float, float]:
    """(B's share, utilisation, mean queue in packets) of one simulator run, as compare._sim_one,
    through ccfair-bench, with ``stalls`` (:func:`stalls_for`) as the bottleneck's outages; with
    ``paths_ns``, each flow's RTT (``replayed_paths_ns``)."""
    outages = poisson_outages(stalls, seed, Spec.from_dict(raw).duration) if isinstance(stalls, str) and stalls != "none" else stalls
    spec = Spec.from_dict(with_outages(raw, outages) if isinstance(outages, list) and outages else raw)
    cfg = spec.to_run_config(seed)
    if starts_s is not None:
        for fc, t in zip(cfg["flows"], starts_s):
            fc["start_ns"], fc["start_jitter_ns"] = max(0, round(t * 1e9)), 0
    if epoch_ns is not None:
        cfg["tcp_timestamp_epoch_ns"] = int(epoch_ns)
    for fc, rtt_ns in zip(cfg["flows"], paths_ns or []):
        fc["rtt_ns"] = rtt_ns
    for fc in cfg["flows"]:
        fc["host_jitter_ns"] = round(fc["host_jitter_ns"] * NOISE_SCALE[0])
        fc["ack_jitter_ns"] = round(fc["ack_jitter_ns"] * NOISE_SCALE[0])
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(cfg, f)
        f.flush()
        out = subprocess.run([BENCH, "json", f.name], capture_output=True, text=True, check=True).stdout
    summary = Result.from_raw(spec, cfg, json.loads(out)).summary
    return group_shares(spec, summary)[1], float(summary["utilization"]), float(summary["queue_packets_mean"])


def poisson_outages(rate_mean: str, seed: int, duration_ns: int) -> list[list[int]]:
    """Outages ``[start, duration]`` (ns) over ``duration_ns`` from ``RATE_PER_S,MEAN_MS``: starts of a
    Poisson process of rate RATE_PER_S, exponential lengths of mean MEAN_MS (at least 1 ns), drawn from
    ``seed``; stalls that overlap are one outage (their union), as the field requires."""
    rate_per_s, mean_ms = (float(x) for x in rate_mean.split(","))
    if not (rate_per_s >= 0 and mean_ms > 0):
        raise SystemExit(f"--stalls {rate_mean}: want RATE_PER_S >= 0, MEAN_MS > 0")
    rng, out, t_s = random.Random(seed), [], 0.0
    while rate_per_s > 0:
        t_s += rng.expovariate(rate_per_s)
        start = round(t_s * 1e9)
        if start >= duration_ns:
            return out
        end = start + max(1, round(rng.expovariate(1 / mean_ms) * 1e6))
        if out and start <= out[-1][0] + out[-1][1]:
            out[-1][1] = max(out[-1][0] + out[-1][1], end) - out[-1][0]
        else:
            out.append([start, end - start])
    return out


def replayed_paths_ns(run: dict[str, Any], idle_us: float | None) -> list[int] | None:
    """Each flow's path RTT in kernel run ``run``, ns: the delay the testbed added to equalize it
    (``added_delay_ms``, its target minus the base RTT its handshakes measured under the run's
    load) plus the path's idle base RTT ``idle_us``; None without ``idle_us`` or the facts."""
    flows = (run["summary"].get("testbed") or {}).get("flows") or []
    if idle_us is None or not flows or any(f.get("added_delay_ms") is None for f in flows):
        return None
    return [round(f["added_delay_ms"] * 1e6 + idle_us * 1e3) for f in flows]


def stalls_for(run: dict[str, Any], stalls: str) -> Any:
    """``--stalls`` for the simulator run of kernel run ``run``: with ``replay``, the run's recorded
    stalls (compare.recorded_stalls; "none" for a run without the record)."""
    if stalls != "replay":
        return stalls
    recorded = recorded_stalls(run)
    return recorded if recorded is not None else "none"


def paths_for(point: Any, run: dict[str, Any], args: argparse.Namespace) -> list[int] | None:
    """Each flow's RTT for the simulator run of kernel run ``run`` at ``point``, ns: replayed
    (``--replay-paths``), else the experiment's plus ``--path-offsets-us`` per flow group; None: as given."""
    if args.replay_paths is not None:
        return replayed_paths_ns(run, args.replay_paths)
    if not args.path_offsets_us:
        return None
    spec = point.spec()
    cfg = spec.to_run_config(0)
    shift_group_rtts(spec, cfg, [float(x) for x in args.path_offsets_us.split(",")])
    return [f["rtt_ns"] for f in cfg["flows"]]


def cca_of(point_id: str) -> str:
    a, b = point_id.split(" ")[0].split("/")
    return a if a != "cubic" else b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="sets", action="append", required=True)
    ap.add_argument("--stalls", default="none", help="RATE_PER_S,MEAN_MS, replay (each kernel run's recorded stalls), or none")
    ap.add_argument("--seeds", type=int, default=1, help="simulator runs per kernel run")
    ap.add_argument("--seed-set", type=int, default=0, help="seeds s + 1000 (N + k), as bench/fidelity_many_seeds.py")
    ap.add_argument("--point", dest="points", action="append", default=[], help="only this point (repeatable)")
    ap.add_argument("--noise-scale", type=float, default=1.0, help="both host-noise means times this")
    ap.add_argument("--path-offsets-us", metavar="DA,DB", help="add DA / DB us to the RTT of group A's / B's flows")
    ap.add_argument("--replay-paths", type=float, metavar="IDLE_US", help="each flow's RTT as the kernel run's path (replayed_paths_ns)")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    NOISE_SCALE[0] = args.noise_scale
    todo = []
    for name in args.sets:
        ps = load_set(name, Path(args.data))
        runs, _ = runs_by_point(ps)
        pts = [p for p in ps.points if not args.points or p.id in args.points]
        todo += [(name, p, kr) for p in pts if (kr := select_runs(p, runs[p.id], ps.runs))]
    jobs = [
        (
            p.raw(),
            r["seed"] + 1000 * (args.seed_set + k),
            r.get("flow_start_s"),
            r.get("ts_epoch_ns"),
            stalls_for(r, args.stalls),
            paths_for(p, r, args),
        )
        for _, p, kr in todo
        for r in kr
        for k in range(args.seeds)
    ]
    with ThreadPoolExecutor(args.jobs) as ex:
        sims = list(ex.map(lambda j: sim_one(*j), jobs))
    points, i = [], 0
    for name, p, kr in todo:
        spec, n = p.spec(), len(kr) * args.seeds
        sim, i = sims[i : i + n], i + n
        k_shares = [group_shares(spec, r["summary"])[1] for r in kr]
        kernel = statistics.fmean(k_shares)
        k_range = max(k_shares) - min(k_shares)
        s_range = mean_range([x[0] for x in sim], args.seeds)
        k_util = statistics.fmean(float(r["summary"]["utilization"]) for r in kr)
        k_queue = statistics.fmean(float(r["summary"]["queue_packets_mean"]) for r in kr)
        s_share, s_util, s_queue = (statistics.fmean(x[j] for x in sim) for j in range(3))
        points.append(
            {
                "set": name,
                "id": p.id,
                "kernel_share_b": kernel,
                "sim_share_b": s_share,
                "diff": s_share - kernel,
                "kernel_utilisation": k_util,
                "sim_utilisation": s_util,
                "spread_ratio": s_range / k_range if k_range > 0 else (1.0 if s_range == 0 else float("inf")),
                "kernel_queue_packets": k_queue,
                "sim_queue_packets": s_queue,
            }
        )
    report(points, args)
    if args.out:
        Path(args.out).write_text(json.dumps({"stalls": args.stalls, "seeds": args.seeds, "points": points}, indent=1) + "\n")


def queue_rel(p: dict[str, Any]) -> float:
    """|simulator - kernel| mean queue over the kernel's, as `ccfair fidelity`'s ``queue_worst_rel``."""
    k = p["kernel_queue_packets"]
    return abs(p["sim_queue_packets"] - k) / k if k > 0 else 0.0


def report(points: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"link stalls {args.stalls}, {args.seeds} simulator run(s) per kernel run")
    by_set: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        by_set[p["set"]].append(p)
    for name, pts in by_set.items():
        d = [abs(p["diff"]) for p in pts]
        u = [abs(p["sim_utilisation"] - p["kernel_utilisation"]) for p in pts]
        q = [queue_rel(p) for p in pts]
        beyond = sum(x > QUEUE_TOLERANCE_REL for x in q)
        spread = statistics.fmean(1 / SPREAD_FACTOR <= p["spread_ratio"] <= SPREAD_FACTOR for p in pts)
        print(
            f"  {name}: {len(pts)} points, mean |diff| {statistics.fmean(d):.4f}, worst {max(d):.3f}; utilisation |diff| worst {max(u):.4f};"
            f" mean queue worst {100 * max(q):.1f} % ({beyond} beyond {100 * QUEUE_TOLERANCE_REL:.0f} %); spread within"
            f" [1/{SPREAD_FACTOR:g}, {SPREAD_FACTOR:g}] at {100 * spread:.0f} %"
        )
    for p in points if args.points else []:
        print(
            f"  {p['id']}: B {p['sim_share_b']:.3f} (kernel {p['kernel_share_b']:.3f}), utilisation {p['sim_utilisation']:.4f}"
            f" ({p['kernel_utilisation']:.4f}), mean queue {p['sim_queue_packets']:.1f} ({p['kernel_queue_packets']:.1f}) packets"
        )
    d = [abs(p["diff"]) for p in points]
    print(f"  all {len(points)} points: mean |diff| {statistics.fmean(d):.4f}")
    per_cca: dict[str, list[float]] = defaultdict(list)
    for p in points:
        if p["set"].startswith("kernel-ccas"):
            per_cca[cca_of(p["id"])].append(abs(p["diff"]))
    if per_cca:
        figs = sorted(((statistics.fmean(v), c) for c, v in per_cca.items()), reverse=True)
        print("  per CCA: " + ", ".join(f"{c} {f:.3f}" for f, c in figs))


if __name__ == "__main__":
    main()
