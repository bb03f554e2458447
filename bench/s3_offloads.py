"""S3's mono-DCTCP point (2 DCTCP, STEP at K = 0.17, 1 Gbit/s) under the host models of
host noise, TSO/GSO bursts of unpaced senders, GRO at the receiver.

Runs bench/data/s3-mono-dctcp-{5,50}ms.toml through the simulator with each variant
and seeds 1-3 and prints one Markdown row per (RTT, variant): utilization per seed, mean
queueing delay and CE marks (seed 1). docs/fidelity.md quotes the table.

    python bench/s3_offloads.py [--seeds 3]
    python bench/s3_offloads.py --detail   # mechanism: queue and cwnd at 5 ms, seed 1

``--detail`` samples the queue and the senders every 100 us (10-30 s) and prints, per
variant, how often the queue is empty (the link then idles until the next arrival),
queue percentiles and each flow's mean cwnd.

``--mechanism`` (5 ms, seeds 1-3) compares the exact-timing simulation with the
sawtooth of Alizadeh et al., "Analysis of DCTCP" (SIGMETRICS 2011, section 3) and
prints what utilization depends on: the STEP threshold K, the TSO burst size, the
host-noise scale (the run config's per-flow ``host_jitter_ns`` / ``ack_jitter_ns``
multiplied; not an experiment-file setting), the receiver's echo and delayed ACKs.
"""

from __future__ import annotations

import argparse
import copy
import math
import tomllib
from pathlib import Path

import ccfair
import numpy as np
from ccfair.api import as_spec, simulate
from ccfair.result import Result

DATA = Path(__file__).parent / "data"

#: name -> (noise, per-flow overrides)
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "noise none, TSO off (the model without offloads)": ("none", {"tso": False}),
    "noise host, TSO off (realism round)": ("host", {"tso": False}),
    "noise none, TSO on": ("none", {}),
    "noise host, TSO on (default)": ("host", {}),
    "noise host, TSO on, GRO 50 us (S3's hosts)": ("host", {"gro": True}),
}


def spec(rtt_ms: int, noise: str, overrides: dict[str, object]) -> dict:
    d = copy.deepcopy(tomllib.loads((DATA / f"s3-mono-dctcp-{rtt_ms}ms.toml").read_text()))
    d["noise"] = noise
    for f in d["flows"]:
        f.update(overrides)
    return d


def run(rtt_ms: int, noise: str, overrides: dict[str, object], seed: int) -> dict:
    r = ccfair.run(spec(rtt_ms, noise, overrides), seed=seed)
    s = r.summary
    return {
        "util": s["utilization"],
        "delay_ms": s["queue_delay_ms"]["mean"],
        "marks": int(r.flows["ecn_marks"].sum()),
        "jfi": s["jfi"],
    }


def detail(rtt_ms: int = 5, seed: int = 1) -> None:
    print("| variant | utilization | queue empty (share of 100 us samples) | queue p50 / p99 / max (packets) | mean cwnd A, B (packets) |")
    print("|---|---|---|---|---|")
    for name, (noise, over) in VARIANTS.items():
        d = spec(rtt_ms, noise, over)
        d["sample"], d["trace"] = "100us", True
        r = ccfair.run(d, seed=seed)
        q = r.queue[(r.queue.time_s >= 10) & (r.queue.time_s < 30)].packets.to_numpy()
        t = r.trace[(r.trace.time_s >= 10) & (r.trace.time_s < 30)]
        cwnd = t.groupby("flow").cwnd_pkts.mean().tolist()
        p50, p99 = np.percentile(q, [50, 99])
        print(
            f"| {name} | {r.summary['utilization']:.3f} | {(q == 0).mean():.3f} | {p50:.0f} / {p99:.0f} / {q.max()} "
            f"| {cwnd[0]:.0f}, {cwnd[1]:.0f} |",
            flush=True,
        )


#: name -> (noise, noise scale (data, ACK), per-flow overrides, STEP K); 5 ms, seeds 1-3
#: name -> (noise, noise scale (data, ACK), per-flow overrides, STEP K, window start s); 5 ms
MECHANISM: dict[str, tuple[str, tuple[float, float], dict[str, object], float, int]] = {
    "exact timing (noise none, TSO off)": ("none", (1, 1), {"tso": False}, 0.17, 10),
    "exact timing, K = 0.05": ("none", (1, 1), {"tso": False}, 0.05, 10),
    "exact timing, K = 0.02": ("none", (1, 1), {"tso": False}, 0.02, 10),
    "noise none, TSO on": ("none", (1, 1), {}, 0.17, 10),
    "noise host, TSO off": ("host", (1, 1), {"tso": False}, 0.17, 10),
    "noise host, TSO off, K = 0.05": ("host", (1, 1), {"tso": False}, 0.05, 10),
    "default (noise host, TSO autosizing: 44 segments)": ("host", (1, 1), {}, 0.17, 10),
    "default, TSO at most 8 segments": ("host", (1, 1), {"tso": 8}, 0.17, 10),
    "default, TSO at most 16 segments": ("host", (1, 1), {"tso": 16}, 0.17, 10),
    "default, K = 0.25": ("host", (1, 1), {}, 0.25, 10),
    "default, K = 0.13": ("host", (1, 1), {}, 0.13, 10),
    "default, K = 0.10": ("host", (1, 1), {}, 0.10, 10),
    "default, K = 0.05": ("host", (1, 1), {}, 0.05, 10),
    "default, noise x 0.05": ("host", (0.05, 0.05), {}, 0.17, 10),
    "default, noise x 0.25": ("host", (0.25, 0.25), {}, 0.17, 10),
    "default, noise x 2": ("host", (2, 2), {}, 0.17, 10),
    "default, noise x 4": ("host", (4, 4), {}, 0.17, 10),
    "default, data noise x 4, no ACK noise": ("host", (4, 0), {}, 0.17, 10),
    "default, ACK noise x 4, no data noise": ("host", (0, 4), {}, 0.17, 10),
    "default, GRO 50 us": ("host", (1, 1), {"gro": True}, 0.17, 10),
    "default, GRO 200 us": ("host", (1, 1), {"gro": "200us"}, 0.17, 10),
    "default, delayed ACKs off": ("host", (1, 1), {"delayed_ack": False}, 0.17, 10),
    "default, classic (RFC 3168) ECN echo": ("host", (1, 1), {"ecn": "classic"}, 0.17, 10),
    "default, window 1-30 s (both flows' start, alpha from 1)": ("host", (1, 1), {}, 0.17, 1),
    "exact timing, window 1-30 s": ("none", (1, 1), {"tso": False}, 0.17, 1),
}


def run_scaled(
    noise: str, scale: tuple[float, float], overrides: dict[str, object], k: float, start_s: int, seed: int, sample: bool = False
) -> Result:
    """One 5 ms run with the host noise's data/ACK means multiplied by ``scale``."""
    d = spec(5, noise, overrides)
    d["bottleneck"]["qdisc"]["step"]["k"] = k
    d["window"]["start"] = f"{start_s}s"
    if sample:
        d["sample"], d["trace"] = "100us", True
    s = as_spec(d)
    config = s.to_run_config(seed)
    for fc in config["flows"]:
        if "host_jitter_ns" in fc:
            fc["host_jitter_ns"] = int(fc["host_jitter_ns"] * scale[0])
            fc["ack_jitter_ns"] = int(fc["ack_jitter_ns"] * scale[1])
    return Result.from_raw(s, config, simulate(config, s))


def fluid(bdp_pkts: float, k_pkts: float, n: int) -> dict[str, float]:
    """The sawtooth of "Analysis of DCTCP" (section 3.1, N synchronized flows):
    W* = (C RTT + K) / N, alpha = sqrt(2 / W*), per-flow cut D = (W* + 1) alpha / 2,
    queue amplitude A = N D, Q_max = K + N, Q_min = Q_max - A, period D RTTs."""
    w = (bdp_pkts + k_pkts) / n
    alpha = math.sqrt(2 / w)
    d = (w + 1) * alpha / 2
    return {"W*": w, "alpha": alpha, "D": d, "A": n * d, "Qmax": k_pkts + n, "Qmin": k_pkts + n - n * d, "period_rtt": d}


def sawtooth(r: Result) -> tuple[float, float, float, float, float]:
    """From a 100-us sampled run (10-30 s): queue min / p1 / max and the mean
    per-flow cut (cwnd before minus the new ssthresh) and mean time between cuts."""
    q = r.queue[(r.queue.time_s >= 10) & (r.queue.time_s < 30)].packets.to_numpy()
    cuts, n = [], 0
    t = r.trace[(r.trace.time_s >= 10) & (r.trace.time_s < 30)]
    for _, x in t.groupby("flow"):
        ss, cw = x.ssthresh_pkts.to_numpy(), x.cwnd_pkts.to_numpy()
        i = np.nonzero(ss[1:] != ss[:-1])[0] + 1
        cuts += (cw[i - 1] - ss[i]).tolist()
        n += 1
    return float(q.min()), float(np.percentile(q, 1)), float(q.max()), float(np.mean(cuts)), 20.0 * n / max(len(cuts), 1)


def mechanism(seeds: int) -> None:
    bdp = 1e9 * 5e-3 / 8 / 1500
    f = fluid(bdp, 0.17 * bdp, 2)
    r = run_scaled("none", (1, 1), {"tso": False}, 0.17, 10, 1, sample=True)
    qmin, q1, qmax, cut, period = sawtooth(r)
    print(
        "| quantity | Analysis of DCTCP (N = 2, BDP %.0f, K %.0f packets) | simulation, exact timing, seed 1, 10-30 s |" % (bdp, 0.17 * bdp)
    )
    print("|---|---|---|")
    print(f"| alpha | {f['alpha']:.3f} | |")
    print(f"| per-flow cut per reduction (packets) | {f['D']:.1f} | {cut:.1f} |")
    print(
        f"| time between a flow's cuts | {f['period_rtt']:.1f} RTT = {f['period_rtt'] * 5:.0f} ms (+ queueing) | {period * 1000:.0f} ms |"
    )
    print(f"| queue min / max (packets) | {f['Qmin']:.0f} / {f['Qmax']:.0f} | {qmin:.0f} (p1 {q1:.0f}) / {qmax:.0f} |")
    print(f"| utilization | 1 (Q_min > 0) | {r.summary['utilization']:.3f} |")
    print()
    print("| variant (5 ms) | utilization (seeds 1..N) | mean queueing delay, seed 1 | CE marks A+B, seed 1 | lowest JFI |")
    print("|---|---|---|---|---|")
    for name, (noise, scale, over, k, start_s) in MECHANISM.items():
        rows = [run_scaled(noise, scale, over, k, start_s, s) for s in range(1, seeds + 1)]
        utils = ", ".join(f"{x.summary['utilization']:.3f}" for x in rows)
        print(
            f"| {name} | {utils} | {rows[0].summary['queue_delay_ms']['mean']:.2f} ms | {int(rows[0].flows['ecn_marks'].sum()):,} "
            f"| {min(x.summary['jfi'] for x in rows):.2f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--detail", action="store_true", help="queue and cwnd at 5 ms, seed 1 (mechanism)")
    ap.add_argument("--mechanism", action="store_true", help="fluid model vs simulation; what utilization depends on (5 ms)")
    args = ap.parse_args()
    if args.detail:
        return detail()
    if args.mechanism:
        return mechanism(args.seeds)
    print("| RTT | variant | utilization (seeds 1..N) | JFI (seeds 1..N) | mean queueing delay, seed 1 | CE marks A+B, seed 1 |")
    print("|---|---|---|---|---|---|")
    for rtt in (5, 50):
        for name, (noise, over) in VARIANTS.items():
            rows = [run(rtt, noise, over, s) for s in range(1, args.seeds + 1)]
            utils = ", ".join(f"{x['util']:.3f}" for x in rows)
            jfis = ", ".join(f"{x['jfi']:.2f}" for x in rows)
            print(f"| {rtt} ms | {name} | {utils} | {jfis} | {rows[0]['delay_ms']:.2f} ms | {rows[0]['marks']:,} |", flush=True)


if __name__ == "__main__":
    main()
