"""TCP-LP's kicks on the testbed: ACK pairs whose TSval moved far more than their TSecr, and the
sender's skbs behind them (docs/linux-ports.md "TCP-LP", "A flight's skbs across a ms tick").

    sudo python3 bench/fidelity_acks.py --set kernel-ccas-lp-probe --point "lp/lp 10M 50ms 1bdp" \\
        --seed 102 --out F.csv --kernel-trace
    python3 bench/lp_kicks.py F.csv [--trace F.csv.trace]
    python3 bench/lp_kicks.py bench/data/lp-kicks-testbed-2026-12-01.csv.gz \
        --trace bench/data/lp-kicks-testbed-2026-12-01.trace.gz      # the stored run (seed 102)
    python3 bench/lp_kicks.py --gaps bench/data/cubic-flights-testbed-2026-12-01.trace.gz  # cubic/cubic 20M 50ms
    python3 bench/lp_kicks.py --pairs bench/data/lp-kicks-testbed-2026-12-01-seed103.csv.gz  # and seed101, 104

`tcp_lp_remote_hz_estimator` averages 1000 x dTSval / dTSecr over consecutive ACKs whose clocks
both moved; a pair of ratio 10 or more (a kick) lifts it above TCP_TS_HZ, where LP runs as Reno.
Per flow of the receiver's capture (bench/fidelity_acks.py): each kick, the data segments whose
TSvals the two ACKs echo (arrival at the receiver, TSval) and, with F.csv.trace, the sender's
events in the 40 ms before they arrived (the ACK TCP took, `tcp_probe`; each skb a device
queued, `net_dev_queue`; times from the first packet, ms). Then the gaps between consecutive
skbs of one sender device within 200 us (a flight's skbs): medians by context (softirq, task).
"""

from __future__ import annotations

import argparse
import gzip
import re
import statistics
from pathlib import Path

import pandas as pd

EVENT = re.compile(r"\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(\w+):\s+(.*)")
#: A kick: dTSval / dTSecr at least this (tcp_lp.c's average moves by (m - rhz) / 64).
KICK_RATIO = 10
#: Skbs of one device closer than this are one flight's.
FLIGHT_GAP_NS = 200_000


def trace_events(path: Path) -> pd.DataFrame:
    rows = []
    for line in gzip.open(path, "rt") if path.suffix == ".gz" else path.open():
        m = EVENT.match(line)
        if m:
            rows.append((int(float(m.group(5)) * 1e9), m.group(1), m.group(4), m.group(6), m.group(7)))
    return pd.DataFrame(rows, columns=["t_ns", "task", "flags", "event", "rest"])


def kicks(d: pd.DataFrame) -> list[tuple[int, object, object, pd.DataFrame]]:
    """(client port, ACK before, kicking ACK, the data segments they echo) per kick."""
    out = []
    for port, g in d[(d.pkttype == 0) & (d.len > 0)].groupby("sport"):
        acks = d[(d.pkttype == 4) & (d.dport == port) & ((d["flags"] & 2) == 0)].sort_values("t_ns")
        prev = None
        for a in acks.itertuples():
            if prev is not None and a.tsval != prev.tsval and a.tsecr > prev.tsecr:
                if (a.tsval - prev.tsval) >= KICK_RATIO * (a.tsecr - prev.tsecr):
                    out.append((port, prev, a, g[(g.tsval >= prev.tsecr) & (g.tsval <= a.tsecr)].sort_values("t_ns")))
            prev = a
    return out


def sender_events(tr: pd.DataFrame, port: int, lo: int, hi: int) -> pd.DataFrame:
    w = tr[(tr.t_ns >= lo) & (tr.t_ns <= hi)]
    probe = (w.event == "tcp_probe") & w.rest.str.contains(f":{port} ")
    skb = (w.event == "net_dev_queue") & w.rest.str.contains(r"dev=\S+-s\d+ ") & ~w.rest.str.contains(r"len=\d{1,3}$")
    return w[probe | skb]


def flight_gaps(tr: pd.DataFrame) -> None:
    skbs = tr[(tr.event == "net_dev_queue") & tr.rest.str.contains(r"dev=\S+-s\d+ ") & ~tr.rest.str.contains(r"len=\d{1,3}$")]
    gaps: dict[str, list[float]] = {"softirq": [], "task": []}
    last: dict[str, int] = {}
    for r in skbs.sort_values("t_ns").itertuples():
        dev = r.rest.split()[0]
        if dev in last and r.t_ns - last[dev] < FLIGHT_GAP_NS:
            gaps["softirq" if "s" in r.flags else "task"].append((r.t_ns - last[dev]) / 1e3)
        last[dev] = r.t_ns
    for ctx, v in gaps.items():
        if v:
            print(f"skbs of one flight, {ctx}: {len(v)} gaps, median {statistics.median(v):.1f} us")


def same_ack_pairs(d: pd.DataFrame) -> None:
    """Per flow: consecutive data segments sent on one ACK (equal TSecr) that reached the receiver
    back to back (under 1.5 ms apart), and how many of them carry a later TSval (a ms crossed)."""
    for port, g in d[(d.pkttype == 0) & (d.len > 0)].groupby("sport"):
        g = g.sort_values("t_ns")
        pairs = (g.tsecr.diff() == 0) & (g.t_ns.diff() < 1_500_000)
        crossed = pairs & (g.tsval.diff() > 0)
        print(f"flow {port}: {int(pairs.sum())} back-to-back pairs sent on one ACK, {int(crossed.sum())} crossed a ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="?", help="the receiver's capture (bench/fidelity_acks.py --out)")
    ap.add_argument("--trace", help="its tracepoints (default: CSV.trace, if there)")
    ap.add_argument("--gaps", help="a trace: the gaps between a flight's skbs only")
    ap.add_argument("--pairs", action="store_true", help="the capture's segment pairs sent on one ACK only")
    args = ap.parse_args()
    if args.gaps:
        return flight_gaps(trace_events(Path(args.gaps)))
    if not args.csv:
        ap.error("a capture CSV or --gaps TRACE is required")
    d = pd.read_csv(args.csv)
    d = d[d.tsval >= 0]
    if args.pairs:
        return same_ack_pairs(d)
    t0 = d.t_ns.min()
    trace = Path(args.trace or args.csv + ".trace")
    tr = trace_events(trace) if trace.exists() else None
    for port, prev, a, segs in kicks(d):
        print(f"flow {port}: kick ({a.tsval - prev.tsval}, {a.tsecr - prev.tsecr}) at {(a.t_ns - t0) / 1e6:.1f} ms")
        for s in segs.itertuples():
            print(f"    segment arrives {(s.t_ns - t0) / 1e6:10.3f}  TSval {s.tsval}")
        if tr is not None and len(segs):
            for e in sender_events(tr, port, segs.t_ns.min() - 40_000_000, segs.t_ns.max()).itertuples():
                print(f"    sender {(e.t_ns - t0) / 1e6:10.3f}  {e.flags} {e.event} {e.rest[:90]}")
    if tr is not None:
        flight_gaps(tr)


if __name__ == "__main__":
    main()
