"""The fidelity map with the bottleneck's serialization time taken out of the data path.

    python3 bench/fidelity_link_latency.py [--set s0 --set map] [--jobs N] [--out FILE.json]
    python3 bench/fidelity_link_latency.py --kernel-min-rtt            # the stored kernel runs' evidence
    python3 bench/fidelity_link_latency.py --point ID --seeds N        # one point, both ways, seeds 1..N

The testbed's bottleneck (ccfair-bottleneck, like Linux's tbf) is a token bucket of one
frame: a frame that finds its tokens leaves at once, so a data packet's latency through
an idle bottleneck is its propagation delay alone; the simulator's link delivers a packet
at the end of its transmission, size / rate later (1.21 ms for 1514 B at 10 Mbit/s).
Stored kernel runs show it: the second flow's min_rtt (its SYN crossed the first flow's
queue, so its minimum is a data packet's) is the configured RTT, not RTT + size / rate.

This script emulates the token bucket's latency in the simulator without a model change:
every flow's RTT is shortened by one frame's transmission time at the bottleneck rate, the
buffer kept at the point's packet count. It is exact for data packets; handshakes and ACKs
get the same shortening (the model change proper would not), which matters for BBR's
min_rtt (seeded by the handshake). Output: the same totals as `ccfair fidelity --json`.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.fidelity.points import load_set, runs_by_point
from common import fidelity_points, fidelity_todo, print_fidelity_totals


def _sim(raw: dict[str, Any], seed: int, starts_s: list[float] | None) -> dict[str, Any]:
    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.spec import Spec

    spec = Spec.from_dict(raw)
    config = spec.to_run_config(seed)
    frame_ns = round((spec.packet_wire_bytes + spec.bottleneck.l2_overhead) * 8e9 / config["bottleneck"]["rate_bps"])
    for fc in config["flows"]:
        fc["rtt_ns"] -= frame_ns
    if starts_s is not None:
        for fc, t in zip(config["flows"], starts_s):
            fc["start_ns"] = max(0, round(t * 1e9))
            fc["start_jitter_ns"] = 0
    return Result.from_raw(spec, config, simulate(config, spec)).summary


def kernel_min_rtt(data: Path) -> None:
    """Second flows of the stored map runs: min_rtt - rtt - one frame time, per rate."""
    ps = load_set("map", data)
    runs, _ = runs_by_point(ps)
    by_rate: dict[float, list[float]] = {}
    below = total = 0
    for p in ps.points:
        spec = p.spec()
        frame_ms = (spec.packet_wire_bytes + spec.bottleneck.l2_overhead) * 8e3 / spec.bottleneck.rate
        for r in runs[p.id]:
            for f in r["summary"]["flows"][1:]:
                x = f["min_rtt_ms"] - f["rtt_ms"] - frame_ms
                by_rate.setdefault(spec.bottleneck.rate / 1e6, []).append(x)
                total += 1
                below += x < -0.05
    print(f"{below} of {total} second flows have min_rtt below rtt + one frame time (by more than 0.05 ms)")
    for rate, xs in sorted(by_rate.items()):
        xs.sort()
        print(f"{rate:5.0f} Mbit/s: min_rtt - rtt - frame time: median {xs[len(xs) // 2]:+.2f} ms ({len(xs)} flows)")


def one_point(data: Path, pid: str, seeds: int) -> None:
    """One map point over seeds 1..N with the experiment's starts, as is and with the frame time taken out."""
    point = next(p for p in load_set("map", data).points if p.id == pid)
    raw = point.raw()
    spec = point.spec()
    for label, fn in (("as modelled", _sim_plain), ("frame time out", _sim)):
        out = [fn(raw, s, None) for s in range(1, seeds + 1)]
        share = [sum(f["share"] for f, g in zip(o["flows"], _groups(spec)) if g == 1) for o in out]
        util = [o["utilization"] for o in out]
        queue = [o["queue_packets_mean"] for o in out]
        print(
            f"{pid}, {label}: B share {sum(share) / seeds:.3f}, utilization {sum(util) / seeds:.4f}, "
            f"mean queue {sum(queue) / seeds:.2f} packets"
        )


def _groups(spec: Any) -> list[int]:
    return [g for g, _, _ in spec.expand_flows()]


def _sim_plain(raw: dict[str, Any], seed: int, starts_s: list[float] | None) -> dict[str, Any]:
    from ccfair.fidelity.compare import _sim_one

    return _sim_one(raw, seed, starts_s)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-min-rtt", action="store_true")
    ap.add_argument("--point")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.kernel_min_rtt:
        return kernel_min_rtt(Path(args.data))
    if args.point:
        return one_point(Path(args.data), args.point, args.seeds)
    todo = fidelity_todo(args.sets, Path(args.data))
    jobs = [(p.raw(), r["seed"], r.get("flow_start_s")) for p, kr in todo for r in kr]
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        sims = list(ex.map(_sim, *zip(*jobs)))
    print_fidelity_totals(fidelity_points(todo, sims, 1), "", args.out)


if __name__ == "__main__":
    main()
