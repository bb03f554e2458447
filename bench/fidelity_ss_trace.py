"""BBR's state per flow on the testbed from `ss -tin` in each sender's namespace (root).

    sudo python3 bench/fidelity_ss_trace.py --set map --point "bbr/bbr 20M 50ms 1bdp" --seed 36 [--every 0.02]
        [--sniff] [--out FILE.jsonl]
    python3 bench/fidelity_ss_trace.py --summary FILE.jsonl [--b-start 5]
    python3 bench/fidelity_ss_trace.py --bursts FILE.jsonl.0.csv FILE.jsonl.1.csv [--window 10,40]
    python3 bench/fidelity_ss_trace.py --point ID --sim-seeds 8 [--set-sim flows.1.rtt=50.2ms]

Runs one testbed run of the point and, while it runs, `ss -tin` every `--every` seconds (about
every 50 ms on a loaded host) in each sender namespace of that run (a loop inside the namespace,
one `ss` per sample). It prints B's share and each flow's packets sent, retransmissions and drops
at the bottleneck, and stores each sample as one JSON line: flow index, wall time, cwnd, BBR's
`bw` (bbr_bw(): lt_bw while policed), `mrtt`, `pacing_gain`, `cwnd_gain`, `pacing_rate`,
`delivered`, `lost`, `sacked`, `unacked`, `retrans` (out and total), `snd_wnd`, `rto`,
`backoff`. With `--sniff` each sender namespace also records its outgoing data frames and the
ACKs arriving, with the kernel's timestamps (SO_TIMESTAMPNS; a capture's read time is late and batched on a loaded host)
in FILE.jsonl.<flow>.csv.
`--summary`: per flow and stretch of the run, retransmissions per delivered segment and the
delivery rate; the stretches with `lt_bw` in use. `--bursts`: the share of each sender's frames
sent back to back (gaps below 30 us) in runs of 1, 2, ... frames and the share of runs sent at an
ACK (within 30 us of one arriving). `--sim-seeds N`: the
simulator at the point instead (A at 0 s, B at `--b-start`), seeds 1..N: B's share and each
flow's drops per packet sent.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = {
    "cwnd": r"\bcwnd:(\d+)",
    "bw_bps": r"bbr:\(bw:([\d.]+[KMG]?)bps",
    "mrtt_ms": r"mrtt:([\d.]+)",
    "pacing_gain": r"pacing_gain:([\d.]+)",
    "cwnd_gain": r"cwnd_gain:([\d.]+)",
    "pacing_rate_bps": r"pacing_rate ([\d.]+[KMG]?)bps",
    "delivered": r"\bdelivered:(\d+)",
    "lost": r"\blost:(\d+)",
    "retrans_total": r"\bretrans:\d+/(\d+)",
    "retrans_out": r"\bretrans:(\d+)/\d+",
    "sacked": r"\bsacked:(\d+)",
    "bytes_retrans": r"bytes_retrans:(\d+)",
    "unacked": r"\bunacked:(\d+)",
    "snd_wnd": r"\bsnd_wnd:(\d+)",
    "rwnd_limited_ms": r"\brwnd_limited:(\d+)ms",
    "sndbuf_limited_ms": r"\bsndbuf_limited:(\d+)ms",
    "busy_ms": r"\bbusy:(\d+)ms",
    "rto_ms": r"\brto:(\d+)",
    "backoff": r"\bbackoff:(\d+)",
}
SO_TIMESTAMPNS = 35  # asm-generic/socket.h
SCALE = {"K": 1e3, "M": 1e6, "G": 1e9}


def number(s: str) -> float:
    return float(s[:-1]) * SCALE[s[-1]] if s[-1] in SCALE else float(s)


def parse_block(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, pat in FIELDS.items():
        m = re.search(pat, text)
        if m:
            out[k] = number(m.group(1))
    return out


def run_testbed(set_name: str, point_id: str, seed: int) -> None:
    import ccfair
    from ccfair.fidelity.points import load_set

    point = next(p for p in load_set(set_name, Path("data/fidelity")).points if p.id == point_id)
    res = ccfair.run(point.spec(), seed=seed, backend="testbed")
    raw = res._raw or {"flows": []}
    flows = [{k: f.get(k) for k in ("sent_packets", "retransmissions", "drops")} for f in raw["flows"]]
    print(json.dumps({"shares": [f["share"] for f in res.summary["flows"]], "flows": flows}))


def sender_namespaces(before: set[str]) -> list[str]:
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    new = sorted(n for n in names if n not in before and re.fullmatch(r"ccf-[0-9a-f]{4}-s\d+", n))
    return new


def trace(args: argparse.Namespace) -> None:
    before = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
    proc = multiprocessing.Process(target=run_testbed, args=(args.set_name, args.point, args.seed))
    proc.start()
    ns: list[str] = []
    while proc.is_alive() and len(ns) < 2:
        time.sleep(0.05)
        ns = sender_namespaces(before)
    sniffers = []
    if args.sniff:
        sniffers = [
            subprocess.Popen(["ip", "netns", "exec", n, sys.executable, __file__, "--sniff-here", f"{args.out}.{i}.csv"])
            for i, n in enumerate(ns)
        ]
    loop = f'while :; do echo "@@ $(date +%s.%N)"; ss -tinH state established dst 10.77.0.1 2>/dev/null; sleep {args.every}; done'
    logs = [tempfile.TemporaryFile("w+") for _ in ns]  # a pipe would fill and stop the loop
    loops = [subprocess.Popen(["ip", "netns", "exec", n, "sh", "-c", loop], stdout=log) for n, log in zip(ns, logs)]
    proc.join()
    for p in sniffers:
        p.terminate()
    for p in loops:
        p.terminate()
        p.wait()
    t0 = None
    with open(args.out, "w") as f:
        for i, log in enumerate(logs):
            log.seek(0)
            out = log.read()
            for block in out.split("@@ ")[1:]:
                stamp, _, body = block.partition("\n")
                if "bbr:" not in body and "cwnd:" not in body:
                    continue
                t = float(stamp)
                t0 = t if t0 is None else min(t0, t)
                f.write(json.dumps({"flow": i, "t": t, **parse_block(body)}) + "\n")
    print(f"wrote {args.out} (namespaces {ns})")


def sniff_here(out: str, dur_s: float = 60.0) -> None:
    """Write the kernel's receive/send timestamp (SO_TIMESTAMPNS, not the read time: a loaded
    host reads late and in batches) of every outgoing TCP data frame in this namespace."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.5)
    end = time.monotonic() + dur_s
    with open(out, "w", buffering=1) as f:
        f.write("t_ns,seq,len\n")
        while time.monotonic() < end:
            try:
                data, anc, _, addr = s.recvmsg(128, 64)
            except socket.timeout:
                continue
            if len(data) < 54 or data[12:14] != b"\x08\x00" or data[23] != 6:
                continue
            outgoing = addr[2] == socket.PACKET_OUTGOING
            ihl = (data[14] & 15) * 4
            tot = struct.unpack("!H", data[16:18])[0]
            seq, off = struct.unpack("!4xIxxxxB", data[14 + ihl : 27 + ihl])
            length = tot - ihl - (off >> 4) * 4
            stamp = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc if typ == SO_TIMESTAMPNS), (0, 0))
            if length > 0 and outgoing:
                f.write(f"{stamp[0] * 10**9 + stamp[1]},{seq},{length}\n")
            elif length == 0 and not outgoing:
                f.write(f"{stamp[0] * 10**9 + stamp[1]},{seq},0\n")  # an ACK arriving


def bursts(paths: list[str], window: tuple[float, float]) -> None:
    """Per capture: the share of data frames sent in back-to-back runs (gaps below 30 us) of k
    frames, and the share of runs that leave within 30 us of an arriving ACK (sent by the ACK,
    not by the pacing timer)."""
    for path in paths:
        rows = [tuple(int(v) for v in x.split(",")) for x in open(path).read().splitlines()[1:]]
        t0 = rows[0][0]
        rows = [r for r in rows if window[0] <= (r[0] - t0) / 1e9 < window[1]]
        runs: list[int] = []
        by_ack = 0
        last_ack, last_data = -(10**18), -(10**18)
        for t, _, length in rows:
            if length == 0:
                last_ack = t
                continue
            if t - last_data < 30_000:
                runs[-1] += 1
            else:
                runs.append(1)
                by_ack += t - last_ack < 30_000
            last_data = t
        total = sum(runs)
        share = {k: sum(r for r in runs if min(r, 6) == k) / total for k in range(1, 7)}
        print(
            f"{path}: {total} frames; share in runs of k (6 = 6 or more): "
            + ", ".join(f"{k}: {v:.3f}" for k, v in share.items())
            + f"; runs within 30 us of an ACK {by_ack / len(runs):.3f}"
        )


def summary(path: str, b_start: float) -> None:
    """Per flow and stretch of the run: retransmissions per delivered segment, delivery rate; and
    the stretches at pacing gain 1 in PROBE_BW (cwnd gain 2) longer than 12 rounds of min_rtt:
    `lt_bw` in use (bbr_lt_bw_sampling holds the gain at 1 for 48 rounds)."""
    rows = [json.loads(x) for x in open(path)]
    first = [r["t"] for r in rows if r["flow"] == 1 and r.get("delivered", 0) > 1]
    shift = (min(first) - b_start) if first else min(r["t"] for r in rows)
    for r in rows:
        r["t"] -= shift  # the times of the experiment: flow B's first delivery at its start
    flows = sorted({r["flow"] for r in rows})
    for a, b in [(b_start + 1, 10), (10, 15), (15, 20), (20, 30), (30, 45)]:
        parts = []
        for f in flows:
            w = [r for r in rows if r["flow"] == f and a <= r["t"] < b and "delivered" in r]
            if len(w) < 2:
                continue
            d = w[-1]["delivered"] - w[0]["delivered"]
            rt = w[-1].get("retrans_total", 0) - w[0].get("retrans_total", 0)
            parts.append(f"flow {f}: {rt / max(d, 1):.3f} retransmissions / delivered, {d / (b - a):.0f} segments/s")
        print(f"{a:4.0f}-{b:2.0f} s  " + " | ".join(parts))
    for f in flows:
        runs, cur = [], None
        for r in (r for r in rows if r["flow"] == f and r.get("delivered", 0) > 1):
            if r.get("pacing_gain") == 1 and r.get("cwnd_gain") == 2:
                cur = [cur[0] if cur else r["t"], r["t"], r.get("bw_bps", 0), r.get("mrtt_ms", 50)]
            else:
                if cur and cur[1] - cur[0] > 12 * cur[3] / 1e3:
                    runs.append(cur)
                cur = None
        if cur and cur[1] - cur[0] > 12 * cur[3] / 1e3:
            runs.append(cur)
        print(
            f"flow {f}: gain 1 held (lt_bw) "
            + (", ".join(f"{x:.1f}-{y:.1f} s at {bw / 1e6:.1f} Mbit/s" for x, y, bw, _ in runs) or "never")
        )


def sim_drops(set_name: str, point_id: str, seeds: int, overrides: list[str], b_start: float) -> None:
    """The simulator at the point (A at 0 s, B at `b_start`, no start jitter), seeds 1..`seeds`:
    B's mean share and each flow's bottleneck drops per packet sent."""
    import statistics

    from ccfair.api import simulate
    from ccfair.fidelity.points import group_shares, load_set
    from ccfair.result import Result

    point = next(p for p in load_set(set_name, Path("data/fidelity")).points if p.id == point_id)
    spec = point.spec().with_overrides(overrides)
    shares, per_flow = [], []
    for seed in range(1, seeds + 1):
        cfg = spec.to_run_config(seed)
        for fc, t in zip(cfg["flows"], [0.0, b_start]):
            fc["start_ns"], fc["start_jitter_ns"] = round(t * 1e9), 0
        raw = simulate(cfg, spec)
        shares.append(group_shares(spec, Result.from_raw(spec, cfg, raw).summary)[1])
        per_flow.append([f["drops"] / f["sent_packets"] for f in raw["flows"]])
    a, b = (statistics.fmean(x[i] for x in per_flow) for i in (0, 1))
    print(f"{point_id} {' '.join(overrides)}: B {statistics.fmean(shares):.3f}, drops / sent A {a:.4f} B {b:.4f} (B / A {b / a:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--every", type=float, default=0.02)
    ap.add_argument("--out", default="ss-trace.jsonl")
    ap.add_argument("--summary")
    ap.add_argument("--sniff", action="store_true", help="also capture each sender's data frames with kernel timestamps (OUT.i.csv)")
    ap.add_argument("--sniff-here", help=argparse.SUPPRESS)
    ap.add_argument("--sim-seeds", type=int, help="the simulator instead, seeds 1..N: B's share and drops per packet")
    ap.add_argument("--set-sim", action="append", default=[], help="--sim-seeds: an override, e.g. flows.1.rtt=50.2ms")
    ap.add_argument("--bursts", nargs="+", help="captures to summarise: frames sent back to back")
    ap.add_argument("--window", default="10,40", help="--bursts: seconds from the capture's first frame")
    ap.add_argument("--b-start", type=float, default=5.0, help="--summary: flow B's start in the experiment, s")
    args = ap.parse_args()
    if args.sim_seeds:
        sim_drops(args.set_name, args.point, args.sim_seeds, args.set_sim, args.b_start)
    elif args.sniff_here:
        sniff_here(args.sniff_here)
    elif args.bursts:
        a, b = (float(x) for x in args.window.split(","))
        bursts(args.bursts, (a, b))
    elif args.summary:
        summary(args.summary, args.b_start)
    else:
        trace(args)


if __name__ == "__main__":
    main()
