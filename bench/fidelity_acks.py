"""The Linux receiver's ACKs at one fidelity point: which segments it ACKs at once, which in pairs.

    sudo python3 bench/fidelity_acks.py --set map --point "cubic/bbr 10M 200ms 8bdp" --seed 4 [--until 2.0]
        [--out FILE.csv] [--flow 0]
    python3 bench/fidelity_acks.py --read FILE.csv [--until 2.0] [--flow 0]
    sudo python3 bench/fidelity_acks.py ... --kernel-trace   # and the sender's skbs: bench/lp_kicks.py FILE.csv

Runs the point on the testbed (root) with `trace = true` and, in the run's receiver namespace,
an AF_PACKET capture of every TCP header (arrival of data, departure of ACKs; this script
re-run with --sniff; per packet its TCP timestamps too). It then prints, for the flow's first `--until` seconds after its SYN
reached the receiver, the runs of ACKs that covered one segment and of ACKs that covered
two, with the advertised window (in units of 2^wscale bytes) at each end, and the flows'
slow-start exit from the kernel's trace. The capture costs the host some CPU (one Python
process reading every frame).

With `--push-after S` it prints instead, per connection and from S seconds after the first
packet on: the share of data segments that carry PSH, how often the first segment after an
ACK is ACKed at once (before the next segment, within 2 ms) with and without PSH, and the
ACKs that cover one segment by whether that segment carried PSH, sent at once or later (the
delayed-ACK timer), with the later ones' median delay after it (Linux 6.6+, commit 4720852ed9af: a full-sized PSH segment sets ICSK_ACK_PUSHED in
`tcp_measure_rcv_mss`, and `__tcp_cleanup_rbuf` ACKs when the application's read empties the
receive queue; docs/linux-ports.md "The receiver's ACK after a PSH segment").
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

COLUMNS = "t_ns,pkttype,sport,dport,seq,ack,flags,win,len,tsval,tsecr"
#: The tracepoints `--kernel-trace` records (trace clock mono, the capture's clock): each skb a
#: device queues and each ACK TCP takes (`bench/lp_kicks.py` reads them).
TRACEPOINTS = ("net/net_dev_queue", "tcp/tcp_probe")
TRACING = Path("/sys/kernel/tracing")


def timestamps(opts: bytes) -> tuple[int, int]:
    """(TSval, TSecr) of a TCP header's options (RFC 7323 kind 8), (-1, -1) without."""
    i = 0
    while i + 1 < len(opts) and opts[i] != 0:
        if opts[i] == 1:
            i += 1
            continue
        if opts[i] == 8 and opts[i + 1] == 10 and i + 10 <= len(opts):
            return struct.unpack("!II", opts[i + 2 : i + 10])
        i += max(opts[i + 1], 2)
    return -1, -1


def sniff(out: str, dur: float) -> None:
    """Write one CSV row per TCP packet seen in this namespace for `dur` seconds."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.settimeout(0.5)
    end = time.monotonic() + dur
    with open(out, "w", buffering=1) as f:  # line-buffered: the run's end kills this process
        f.write(COLUMNS + "\n")
        while time.monotonic() < end:
            try:
                data, addr = s.recvfrom(128)
            except socket.timeout:
                continue
            if len(data) < 54 or data[12:14] != b"\x08\x00" or data[23] != 6:
                continue
            ihl = (data[14] & 15) * 4
            tot = struct.unpack("!H", data[16:18])[0]
            sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", data[14 + ihl : 30 + ihl])
            tsval, tsecr = timestamps(data[34 + ihl : 14 + ihl + (off >> 4) * 4])
            length = tot - ihl - (off >> 4) * 4
            f.write(f"{time.monotonic_ns()},{addr[2]},{sport},{dport},{seq},{ack},{flags},{win},{length},{tsval},{tsecr}\n")


def run_id_of_owner(pid: int) -> str | None:
    """The testbed run whose state file names `pid` as its owner."""
    for f in Path("/run/ccfair").glob("*.json"):
        try:
            st = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if st.get("owner", [None])[0] == pid:
            return st["id"]
    return None


def kernel_trace(on: bool) -> None:
    """Turn the `TRACEPOINTS` on (trace clock mono) or off (back to the local clock)."""
    if not (TRACING / "trace_pipe").exists():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACING)], check=True)
    (TRACING / "trace_clock").write_text("mono" if on else "local")
    (TRACING / "tracing_on").write_text("1")
    for tp in TRACEPOINTS:
        (TRACING / "events" / tp / "enable").write_text("1" if on else "0")


def capture(point, seed: int, out: str, dur: float, trace: bool = False) -> object:
    """Run `point` on the testbed with a capture in its receiver namespace (and with `trace` the
    `TRACEPOINTS` to OUT.trace); returns the result."""
    stop = threading.Event()
    if trace:
        from common import read_trace_pipe

        kernel_trace(True)
        threading.Thread(target=read_trace_pipe, args=(Path(out + ".trace"), stop, ""), daemon=True).start()
    try:
        return capture_run(point, seed, out, dur)
    finally:
        if trace:
            stop.set()
            kernel_trace(False)


def capture_run(point, seed: int, out: str, dur: float) -> object:
    import ccfair

    spec = point.spec().with_overrides(["trace=true", "sample=10ms"])
    box: dict = {}
    t = threading.Thread(target=lambda: box.update(res=ccfair.run(spec, seed=seed, backend="testbed")))
    t.start()
    ns = None
    while t.is_alive() and ns is None:
        rid = run_id_of_owner(os.getpid())
        if rid and subprocess.run(["ip", "netns", "exec", f"ccf-{rid}-r", "true"], capture_output=True).returncode == 0:
            ns = f"ccf-{rid}-r"
        time.sleep(0.05)
    if ns is None:
        raise SystemExit("the run ended before its receiver namespace appeared")
    sn = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, __file__, "--sniff", out, str(dur)])
    t.join()
    sn.wait()
    return box["res"]


def runs(path: str, flow: int, until: float) -> None:
    """Print the runs of one-segment and two-segment ACKs of the `flow`-th connection."""
    import pandas as pd

    d = pd.read_csv(path)
    data = d[(d.pkttype == 0) & (d.len > 0)]
    port = data.groupby("sport").t_ns.min().sort_values().index[flow]
    syn = d[(d.sport == port) & ((d["flags"] & 2) > 0)].t_ns.min()
    seq0 = data[data.sport == port].seq.min()
    acks = d[(d.pkttype == 4) & (d.dport == port) & (d.len == 0) & ((d["flags"] & 2) == 0)]
    t = ((acks.t_ns - syn) / 1e9).to_numpy()
    segs = ((acks.ack - seq0) / 1448).round().astype(int).to_numpy()
    inc = [segs[0]] + [b - a for a, b in zip(segs[:-1], segs[1:])]
    win = acks.win.to_numpy()
    print(f"flow {flow} (port {port}): t from its SYN at the receiver; per run: ACKs x segments each, window")
    i, n = 0, int((t < until).sum())
    while i < n:
        j = i
        while j + 1 < n and min(inc[j + 1], 3) == min(inc[i], 3):
            j += 1
        print(f"  {t[i]:7.3f}-{t[j]:7.3f} s  {j - i + 1:4d} ACKs x {inc[i] if inc[i] < 3 else '3+'}  window {win[i]} -> {win[j]}")
        i = j + 1


def push_summary(path: str, after_s: float) -> None:
    """Print, per connection, the receiver's immediate ACKs after segments with and without PSH."""
    import numpy as np
    import pandas as pd

    d = pd.read_csv(path)
    data = d[(d.pkttype == 0) & (d.len > 0)]
    for port in data.sport.unique():
        seg = data[data.sport == port]
        acks = d[(d.pkttype == 4) & (d.dport == port) & (d.len == 0) & ((d["flags"] & 2) == 0)]
        ev = pd.concat([seg.assign(k=0), acks.assign(k=1)]).sort_values("t_ns", kind="stable")
        ev = ev[ev.t_ns >= ev.t_ns.min() + after_s * 1e9]
        kind, flags, t, ack = (ev[c].to_numpy() for c in ("k", "flags", "t_ns", "ack"))
        first = {False: [0, 0], True: [0, 0]}  # PSH -> [segments, ACKed at once]
        single = {False: [], True: []}  # PSH -> delays (ms) of ACKs that cover one segment
        unacked, last, last_ack = 0, None, None
        for i in range(len(ev)):
            if kind[i] == 1:
                if last is not None and last_ack is not None and round(((ack[i] - last_ack) % 2**32) / 1448) == 1:
                    single[bool(flags[last] & 8)].append((t[i] - t[last]) / 1e6)
                last_ack, unacked = ack[i], 0
                continue
            if unacked == 0 and i + 1 < len(ev):
                f = first[bool(flags[i] & 8)]
                f[0] += 1
                f[1] += int(kind[i + 1] == 1 and t[i + 1] - t[i] < 2e6)
            unacked, last = unacked + 1, i
        nseg, psh = int((kind == 0).sum()), int(((kind == 0) & ((flags & 8) > 0)).sum())
        print(f"port {port}: {nseg} data segments, {psh} with PSH ({psh / max(nseg, 1):.2f}); {int((kind == 1).sum())} ACKs")
        for p in (True, False):
            n, now = first[p]
            late = [x for x in single[p] if x >= 2.0]
            med = f"{np.median(late):.1f} ms" if late else "-"
            print(
                f"  PSH {'yes' if p else 'no '}: first segment after an ACK {n}, ACKed at once {now / max(n, 1):.3f}; "
                f"one-segment ACKs at once (< 2 ms) {len(single[p]) - len(late)}, later {len(late)} (median {med} after the segment)"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--until", type=float, default=2.0)
    ap.add_argument("--flow", type=int, default=0)
    ap.add_argument("--out", default="acks.csv")
    ap.add_argument("--read")
    ap.add_argument("--sniff", nargs=2, metavar=("OUT", "SECONDS"))
    ap.add_argument("--push-after", type=float, help="PSH summary of --read FILE from this many seconds on")
    ap.add_argument("--kernel-trace", action="store_true", help="also record net_dev_queue and tcp_probe to OUT.trace")
    args = ap.parse_args()
    if args.read and args.push_after is not None:
        push_summary(args.read, args.push_after)
        return
    if args.sniff:
        sniff(args.sniff[0], float(args.sniff[1]))
        return
    if not args.read:
        from ccfair.fidelity.points import load_set

        point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
        res = capture(point, args.seed, args.out, point.spec().duration / 1e9 + 30, args.kernel_trace)
        for name, g in res.trace.groupby("flow", sort=False):  # type: ignore[attr-defined]
            fin = g[(g.cwnd_pkts > 0) & (g.ssthresh_pkts < 2**30)]
            if len(fin):
                print(f"flow {name}: slow start left at cwnd {fin.cwnd_pkts.iloc[0]} at {fin.time_s.iloc[0]:.2f} s")
    runs(args.read or args.out, args.flow, args.until)


if __name__ == "__main__":
    main()
