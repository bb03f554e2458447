"""Speed of ccfair's simulator against ns-3 on the same scenarios, with the ratio.

    pip install -e '.[bench]'          # once: the PyPI ns3 wheel (ns-3 3.44 with Python bindings)
    python bench/ns3_speed.py [--reps 3] [--only s0|cubic10]

Scenarios (both simulators run each one; the same dumbbell, the same TCP settings
as far as ns-3's attributes allow: bench/ns3_dumbbell.py):

- ``s0``: S0's base case: CUBIC vs BBR, 10 Mbit/s, 50 ms RTT, 0.5 BDP drop-tail
  (21 packets of 1500 bytes), 45 s, B starts at 5 s;
- ``cubic10``: 10 CUBIC flows at 1 Gbit/s, 50 ms RTT, 1 BDP drop-tail
  (4167 packets), 5 s (``--seconds``).

Timed: ns-3's ``Simulator::Run`` (topology built and the bindings loaded before
the clock starts; the bindings' first import JIT-compiles for ~40 s and is not
counted) against ccfair's Rust run (``sim_wall_s``) and the whole
``ccfair.run`` call (spec, simulation, summary). Medians of ``--reps`` runs,
interleaved. Printed: wall times, the goodput each simulator measured (a
sanity check that both simulated the same load, not a fidelity comparison:
bench/ns3_crosscheck.py does that) and the ratio ns-3 / ccfair.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

PKT_BYTES = 1500


@dataclass(frozen=True)
class Scenario:
    name: str
    ccas: tuple[str, ...]  # one per flow
    rate_bps: int
    rtt_ms: int
    queue_pkts: int
    seconds: float
    starts_s: tuple[float, ...]
    window_s: tuple[float, float]


def scenarios(seconds_1g: float) -> dict[str, Scenario]:
    bdp_1g = round(1_000_000_000 * 0.050 / 8 / PKT_BYTES)  # 4167
    return {
        "s0": Scenario("S0 base: cubic vs bbr, 10 Mbit/s, 50 ms, 0.5 BDP, 45 s", ("cubic", "bbr"), 10_000_000, 50, 21, 45.0, (0.0, 5.0), (10.0, 45.0)),
        "cubic10": Scenario(
            f"10 cubic, 1 Gbit/s, 50 ms, 1 BDP, {seconds_1g:g} s",
            ("cubic",) * 10, 1_000_000_000, 50, bdp_1g, seconds_1g, (0.0,) * 10, (seconds_1g / 5, seconds_1g),
        ),
    }  # fmt: skip


# ----------------------------------------------------------------- ns-3

NS3_TCP = {"cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr", "reno": "ns3::TcpNewReno"}


def ns3_run(sc: Scenario) -> dict[str, Any]:
    """One dumbbell run in ns-3; wall time of Simulator::Run only."""
    from ns3_dumbbell import build

    net = build(
        [NS3_TCP[c] for c in sc.ccas],
        rate_bps=sc.rate_bps,
        rtt_ms=sc.rtt_ms,
        starts_s=list(sc.starts_s),
        qdisc_attrs={"MaxSize": f"{sc.queue_pkts}p"},
        access_bps=sc.rate_bps * 10,
        sockbuf_bytes=16 << 20,
    )
    wall = 0.0
    marks = []
    for t in sc.window_s:
        t0 = time.perf_counter()
        net.run_until(t)
        wall += time.perf_counter() - t0
        marks.append(net.received())
    net.ns.Simulator.Destroy()
    span = sc.window_s[1] - sc.window_s[0]
    goodput = sum(b - a for a, b in zip(marks[0], marks[1])) * 8 / span
    return {"wall_s": wall, "goodput_bps": goodput}


# ----------------------------------------------------------------- ccfair


def ccfair_spec(sc: Scenario) -> Any:
    from ccfair.spec import Spec

    return Spec.from_dict(
        {
            "name": sc.name,
            "duration": f"{sc.seconds:g}s",
            "window": {"start": f"{sc.window_s[0]:g}s", "end": f"{sc.window_s[1]:g}s"},
            "seed": 1,
            "bottleneck": {"rate": f"{sc.rate_bps}bit", "buffer": f"{sc.queue_pkts}p", "qdisc": "droptail"},
            "flows": [
                {"name": f"f{i}", "cca": cca, "rtt": f"{sc.rtt_ms}ms", "start": f"{sc.starts_s[i]:g}s"} for i, cca in enumerate(sc.ccas)
            ],
        }
    )


def ccfair_run(spec: Any) -> dict[str, Any]:
    import ccfair

    t0 = time.perf_counter()
    res = ccfair.run(spec)
    call = time.perf_counter() - t0
    s = res.summary
    return {
        "wall_s": s["sim_wall_s"],
        "call_s": call,
        "goodput_bps": sum(f["throughput_bps"] or 0.0 for f in s["flows"]),
        "data_packets": s["data_packets"],
    }


# ----------------------------------------------------------------- driver


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="runs of each simulator per scenario (median)")
    ap.add_argument("--only", choices=("s0", "cubic10"), action="append", help="scenario(s) to run (default: both)")
    ap.add_argument("--seconds", type=float, default=5.0, help="simulated seconds of the 1 Gbit/s scenario")
    args = ap.parse_args()
    try:
        t0 = time.perf_counter()
        from ns import ns  # type: ignore[import-not-found]  # noqa: F401

        load_s = time.perf_counter() - t0
    except ImportError:
        sys.stderr.write("error: ns-3's Python bindings are missing; install them with: pip install -e '.[bench]'\n")
        return 2
    print(f"ns-3 bindings loaded in {load_s:.1f} s (not counted)")
    rows = []
    for key, sc in scenarios(args.seconds).items():
        if args.only and key not in args.only:
            continue
        spec = ccfair_spec(sc)
        ccfair_run(spec)  # warm-up
        ns3, ccf = [], []
        for _ in range(args.reps):  # interleaved
            ns3.append(ns3_run(sc))
            ccf.append(ccfair_run(spec))
        n_wall = statistics.median(r["wall_s"] for r in ns3)
        c_wall = statistics.median(r["wall_s"] for r in ccf)
        c_call = statistics.median(r["call_s"] for r in ccf)
        rows.append((sc.name, n_wall, c_wall, c_call, ns3[0]["goodput_bps"], ccf[0]["goodput_bps"], ccf[0]["data_packets"]))
        print(
            f"{sc.name}: ns-3 {n_wall:.3f} s, ccfair {c_wall * 1e3:.2f} ms (whole ccfair.run {c_call * 1e3:.2f} ms); "
            f"ratio ns-3/ccfair {n_wall / c_wall:.0f}x ({n_wall / c_call:.0f}x whole call); "
            f"goodput ns-3 {ns3[0]['goodput_bps'] / 1e6:.2f} Mbit/s, ccfair {ccf[0]['goodput_bps'] / 1e6:.2f} Mbit/s",
            flush=True,
        )
    print()
    print("| scenario | ns-3 Simulator::Run (s) | ccfair simulation (ms) | ccfair.run (ms) | ratio | goodput ns-3 / ccfair (Mbit/s) |")
    print("|---|---|---|---|---|---|")
    for name, nw, cw, cc, gn, gc, _ in rows:
        print(f"| {name} | {nw:.3f} | {cw * 1e3:.2f} | {cc * 1e3:.2f} | {nw / cw:.0f}x | {gn / 1e6:.2f} / {gc / 1e6:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
