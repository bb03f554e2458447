"""Loss synchronisation at a drop-tail bottleneck: when each flow reduces its window, on both sides.

    python3 bench/fidelity_phase.py --point "reno/reno 10M 10ms 1bdp" [--set map] [--seeds 1,2]
        [--noise-scale 1,3,5,10] [--only send|ack] [--kernel-trace DIR ...]

Per simulator run (the point with `trace = true`, TCP state every 5 ms; each `--noise-scale`
multiplies both host-noise means, spec.py HOST_NOISE, or with `--only` the sender's or the
ACKs' one, a what-if on the simulator only) and per
kernel trace (a `testbed` directory written by `bench/fidelity_trace.py --testbed --sample 5ms
--out DIR`): utilisation, mean queue, the fraction of queue samples with the link idle, the
window reductions per flow (a sample whose cwnd is below the previous one that was not itself
falling), the fraction of flow A's reductions with one of B's within 10 ms, and cwnd before a
reduction (10th, 50th, 90th percentile), over the point's measurement window. Drop-tail with
deterministic arrivals can lock two flows into a fixed pattern of who loses (Floyd and
Jacobson, "On traffic phase effects in packet-switched gateways", 1992); these figures show
whether a run is locked (every reduction at one cwnd, never together).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ccfair.fidelity.points import load_set

#: Two reductions count as together when this close, s (about one RTT at 10 ms).
TOGETHER_S = 0.010


def reductions(trace: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per flow: times of reduction starts and cwnd just before each."""
    out = []
    for _, g in trace.groupby("flow", sort=False):
        c = g["cwnd_pkts"].to_numpy()
        t = g["time_s"].to_numpy()
        idx = np.array([i for i in range(2, len(c)) if c[i] < c[i - 1] and c[i - 1] >= c[i - 2]], dtype=int)
        out.append((t[idx], c[idx - 1]))
    return out


def describe(label: str, summary: dict[str, Any], trace: pd.DataFrame, queue: pd.DataFrame, w0: float, w1: float) -> None:
    tr = trace[(trace["time_s"] >= w0) & (trace["time_s"] < w1)]
    q = queue[(queue["time_s"] >= w0) & (queue["time_s"] < w1)]["packets"].to_numpy()
    red = reductions(tr)
    (ta, _), (tb, _) = red[0], red[1]
    together = float(np.mean([np.min(np.abs(tb - x)) < TOGETHER_S for x in ta])) if len(ta) and len(tb) else 0.0
    cw = np.concatenate([c for _, c in red])
    pct = np.percentile(cw, [10, 50, 90]) if len(cw) else [0, 0, 0]
    print(
        f"{label}: util {summary['utilization']:.4f}, queue {summary['queue_packets_mean']:.2f} pkts, "
        f"idle samples {np.mean(q == 0):.3f}, reductions {'/'.join(str(len(t)) for t, _ in red)}, "
        f"A's with B's within 10 ms {together:.2f}, cwnd before p10/50/90 {'/'.join(f'{x:.0f}' for x in pct)}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point", required=True)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--noise-scale", default="1")
    ap.add_argument("--only", choices=["send", "ack"], help="scale only the sender's or only the ACKs' noise")
    ap.add_argument("--kernel-trace", action="append", default=[])
    args = ap.parse_args()
    from ccfair.api import simulate
    from ccfair.result import Result

    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=5ms"])
    w0, w1 = spec.window.start / 1e9, spec.window.end / 1e9
    for scale in (float(x) for x in args.noise_scale.split(",")):
        for seed in (int(x) for x in args.seeds.split(",")):
            config = spec.to_run_config(seed)
            keys = {"send": ("host_jitter_ns",), "ack": ("ack_jitter_ns",)}.get(args.only, ("host_jitter_ns", "ack_jitter_ns"))
            for fc in config["flows"]:
                for key in keys:
                    fc[key] = round(fc[key] * scale)
            res = Result.from_raw(spec, config, simulate(config, spec))
            describe(f"sim noise x{scale:g}{' ' + args.only if args.only else ''} seed {seed}", res.summary, res.trace, res.queue, w0, w1)
    for d in args.kernel_trace:
        p = Path(d)
        summary = pd.read_json(p / "summary.json", typ="series").to_dict()
        describe(f"kernel {d}", summary, pd.read_parquet(p / "trace.parquet"), pd.read_parquet(p / "queue.parquet"), w0, w1)


if __name__ == "__main__":
    main()
