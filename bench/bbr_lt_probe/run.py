"""Linux BBR's long-term (policer) sampling on the testbed, ACK by ACK (root).

    sudo python3 bench/bbr_lt_probe/run.py --out FILE.jsonl [--every-segment] -- CMD ...
        # CMD: a testbed run, e.g. python3 bench/fidelity_trace.py --set map --point ID --seed N --testbed
    python3 bench/bbr_lt_probe/run.py --intervals FILE.jsonl [...] [--window 1.2] [--save OUT.jsonl --label K=V ...]
    python3 bench/bbr_lt_probe/run.py --table bench/data/bbr-lt-intervals-testbed-2026-11-30.jsonl [--before 12]
    python3 bench/bbr_lt_probe/run.py --rounds FILE.jsonl [--until 4]

Builds lt.bpf.c (clang, CO-RE against the running kernel's BTF), attaches it to the tracepoint
tcp:tcp_probe (tcp_rcv_established, before it processes a segment), runs CMD and stores, for every
BBR socket on the host while CMD runs, one JSON line whenever the state the previous ACK left
differs in a long-term field (net/ipv4/tcp_bbr.c struct bbr: lt_is_sampling, lt_rtt_cnt,
lt_use_bw, lt_bw, lt_last_delivered / lost / stamp) or in tp->lost, or has round_start set: that
state, the one before it, tp->delivered, tp->delivered_mstamp, tp->lost, the scoreboard counts and
icsk_ca_state. (fentry on bbr_lt_bw_sampling itself is refused on this host; the tracepoint reads
the same state one segment later.)

`--every-segment`: an event at every segment (tens of MB a run). `--rounds`: per sending flow the events that
start a round or change BBR's mode (window, segments out, delivered, tp->lost, CA state, full_bw_cnt): where
STARTUP ends against the losses.

`--intervals`: per flow (sockets with 100 events or more, in order of their first event; times
from the first flow's first ACK) each long-term interval as Linux ran it: start, end, packet-timed
rounds, delivered, lost (tp->lost counts a segment when marked lost and a lost retransmission
again, tcp_sum_lost), lost / delivered, its delivery rate (1500-byte packets), how it ended (a lossy
interval's bw kept for the next, policed: lt_bw in use, reset past 16 rounds, reset by an
app-limited sample or undo, lt_bw's 48 rounds over), per flow its last tp->delivered and
tp->lost (the run's totals) and the lost / delivered in the `--window` seconds from the second flow's first ACK. `--save`: one JSON line per run with these
and the `--label`s (bench/data/bbr-lt-intervals-testbed-2026-11-30.jsonl). `--table`: per point
and bottleneck order of such a file, how many runs' flows A and B had lt_bw in use before `--before`
s, the loss fractions of the intervals that decided it (the first two ending after 5 s) and the
median lost / delivered of each flow in the window.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIELDS = (  # struct ev of lt.bpf.c, all 64-bit
    "kind t_ns sk netns ports losses app_limited rs_delivered interval_us acked_sacked tp_lost tp_delivered "
    "delivered_mstamp ca_state lost_out sacked_out retrans_out packets_out snd_cwnd pre_word post_word "
    "pre_lt_bw post_lt_bw pre_last_delivered post_last_delivered pre_last_lost post_last_lost pre_last_stamp "
    "post_last_stamp rtt_cnt gains_word"
).split()
SIGNED = {"losses", "app_limited", "rs_delivered", "interval_us", "acked_sacked"}
BW_UNIT = 1 << 24


def build(tmp: Path, every_segment: bool = False) -> Path:
    """lt.bpf.c compiled against this kernel's vmlinux.h (with EVERY_SEGMENT: an event per segment)."""
    vmlinux = tmp / "vmlinux.h"
    with open(vmlinux, "w") as fh:
        subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c"], stdout=fh, check=True)
    obj = tmp / "lt.bpf.o"
    cmd = ["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", f"-I{tmp}", "-c", str(HERE / "lt.bpf.c"), "-o", str(obj)]
    if every_segment:
        cmd.insert(1, "-DEVERY_SEGMENT")
    subprocess.run(cmd, check=True)
    return obj


#: struct bbr's mode values (tcp_bbr.c enum bbr_mode).
MODES = ("STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT")


def decode(word: int) -> dict[str, int]:
    """struct bbr's bitfield word after cycle_mstamp (little-endian bit order)."""
    return {
        "mode": word & 7,
        "round_start": (word >> 7) & 1,
        "lt_is_sampling": (word >> 23) & 1,
        "lt_rtt_cnt": (word >> 24) & 0x7F,
        "lt_use_bw": (word >> 31) & 1,
    }


def record(cmd: list[str], out: Path, every_segment: bool = False) -> int:
    """Run ``cmd`` with the probes attached; events to ``out`` as JSON lines. Returns its exit code."""
    lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
    vp = ctypes.c_void_p
    lib.bpf_object__open_file.restype = vp
    lib.bpf_object__open_file.argtypes = [ctypes.c_char_p, vp]
    lib.bpf_object__load.argtypes = [vp]
    lib.bpf_object__next_program.restype = vp
    lib.bpf_object__next_program.argtypes = [vp, vp]
    lib.bpf_program__attach.restype = vp
    lib.bpf_program__attach.argtypes = [vp]
    lib.bpf_object__find_map_fd_by_name.argtypes = [vp, ctypes.c_char_p]
    cb_type = ctypes.CFUNCTYPE(ctypes.c_int, vp, vp, ctypes.c_size_t)
    lib.ring_buffer__new.restype = vp
    lib.ring_buffer__new.argtypes = [ctypes.c_int, cb_type, vp, vp]
    lib.ring_buffer__poll.argtypes = [vp, ctypes.c_int]
    with tempfile.TemporaryDirectory() as d:
        obj = lib.bpf_object__open_file(str(build(Path(d), every_segment)).encode(), None)
        if not obj or lib.bpf_object__load(obj) != 0:
            raise SystemExit(f"loading lt.bpf.o failed (errno {ctypes.get_errno()})")
    links, prog = [], lib.bpf_object__next_program(obj, None)
    while prog:
        link = lib.bpf_program__attach(prog)
        if not link:
            raise SystemExit(f"attaching failed (errno {ctypes.get_errno()})")
        links.append(link)
        prog = lib.bpf_object__next_program(obj, prog)
    fh = open(out, "w")
    n = len(FIELDS)

    def on_event(_ctx: int, data: int, size: int) -> int:
        vals = (ctypes.c_uint64 * n).from_address(data)
        row = {k: (ctypes.c_int64(v).value if k in SIGNED else v) for k, v in zip(FIELDS, vals)}
        fh.write(json.dumps(row) + "\n")
        return 0

    cb = cb_type(on_event)
    rb = lib.ring_buffer__new(lib.bpf_object__find_map_fd_by_name(obj, b"events"), cb, None, None)
    child = subprocess.Popen(cmd)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while child.poll() is None and not stop.is_set():
        lib.ring_buffer__poll(rb, 200)
    lib.ring_buffer__poll(rb, 0)
    fh.close()
    return child.wait()


def flows(path: Path) -> list[tuple[str, list[dict]]]:
    """The run's flows in a probe file: sockets (address, ports, namespace: a freed address is
    reused) with 100 events or more, lettered in order of their first event."""
    by: dict[tuple, list[dict]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            by.setdefault((r["sk"], r["ports"], r["netns"]), []).append(r)
    mine = sorted((rows for rows in by.values() if len(rows) >= 100), key=lambda rows: rows[0]["t_ns"])
    return [("ABCDEFGH"[i], rows) for i, rows in enumerate(mine[:8])]


def interval_end(a: dict[str, int], b: dict[str, int], r: dict) -> dict:
    """The interval ending at event ``r`` (state ``a`` before, ``b`` after): rounds, delivered, lost, ms."""
    return {
        "rounds": a["lt_rtt_cnt"] + b["round_start"],
        "delivered": r["tp_delivered"] - r["pre_last_delivered"],
        "lost": r["tp_lost"] - r["pre_last_lost"],
        "t_ms": (r["delivered_mstamp"] // 1000 - r["pre_last_stamp"]) % (1 << 32),
    }


def why_ended(a: dict[str, int], b: dict[str, int]) -> str:
    if b["lt_use_bw"]:
        return "policed"
    if a["lt_use_bw"]:
        return "lt_bw over"
    if b["lt_is_sampling"]:
        return "kept bw"
    return "reset: > 16 rounds" if a["lt_rtt_cnt"] + b["round_start"] > 16 else "reset: app-limited or undo"


def intervals(rows: list[dict], t0_ns: int) -> list[dict]:
    """Each long-term interval of one flow's events: start, end, rounds, delivered, lost, rate, how it ended."""
    out, start = [], None
    for r in rows:
        a, b = decode(r["pre_word"]), decode(r["post_word"])
        t = round((r["t_ns"] - t0_ns) / 1e9, 3)
        moved = r["post_last_delivered"] != r["pre_last_delivered"]
        ended = a["lt_is_sampling"] and (b["lt_use_bw"] != a["lt_use_bw"] or not b["lt_is_sampling"] or (moved and not a["lt_use_bw"]))
        if ended:
            iv = {"start_s": start, "end_s": t, "end": why_ended(a, b)} | interval_end(a, b, r)
            if iv["t_ms"] and iv["end"] in ("kept bw", "policed"):
                iv["mbps"] = round(iv["delivered"] * 1500 * 8 / iv["t_ms"] / 1e3, 2)
            iv["loss_frac"] = round(iv["lost"] / max(1, iv["delivered"]), 3)
            out.append(iv)
            start = None
        if b["lt_is_sampling"] and not b["lt_use_bw"] and (not a["lt_is_sampling"] or moved):
            start = t
    return out


def window_losses(rows: list[dict], t_ns: int, span_s: float) -> dict[str, int]:
    """Delivered and lost of one flow between ``t_ns`` and ``span_s`` later (the last event before each)."""

    def at(t: float) -> tuple[int, int]:
        prior = [r for r in rows if r["t_ns"] <= t] or rows[:1]
        return prior[-1]["tp_delivered"], prior[-1]["tp_lost"]

    (d0, l0), (d1, l1) = at(t_ns), at(t_ns + span_s * 1e9)
    return {"delivered": d1 - d0, "lost": l1 - l0}


def summary(path: Path, span_s: float) -> dict:
    """Per flow of one probe file: its long-term intervals, when lt_bw came into use, the window's losses."""
    fl = flows(path)
    t0 = fl[0][1][0]["t_ns"]
    tb = fl[1][1][0]["t_ns"] if len(fl) > 1 else t0
    out = {}
    for name, rows in fl:
        ivs = intervals(rows, t0)
        policed = [iv["end_s"] for iv in ivs if iv["end"] == "policed"]
        last = rows[-1]
        out[name] = {
            "intervals": ivs,
            "lt_from_s": policed,
            "window": window_losses(rows, tb, span_s),
            "total": {"delivered": last["tp_delivered"], "lost": last["tp_lost"]},
        }
    return {"source": path.name, "b_first_ack_s": round((tb - t0) / 1e9, 3), "window_s": span_s, "flows": out}


def table(path: Path, before_s: float) -> None:
    """Per (point, bottleneck order) of a --save file: lt_bw entries and the deciding losses."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            groups.setdefault((r.get("point", "?"), r.get("bottleneck_order", "?")), []).append(r)
    for (point, order), runs in sorted(groups.items()):
        print(f"{point}, {order}: {len(runs)} runs, window {runs[0]['window_s']} s from B's first ACK")
        for name in ("A", "B"):
            fl = [r["flows"][name] for r in runs if name in r["flows"]]
            entered = sum(1 for f in fl if any(t < before_s for t in f["lt_from_s"]))
            fracs = [[iv["loss_frac"] for iv in f["intervals"] if iv["end_s"] > 5 and iv["end"] in ("kept bw", "policed")][:2] for f in fl]
            window = statistics.median(f["window"]["lost"] / max(1, f["window"]["delivered"]) for f in fl)
            print(f"  {name}: lt_bw in use before {before_s:g} s in {entered} of {len(fl)}; window lost / delivered median {window:.3f}")
            print(
                "     first two deciding intervals' lost / delivered: " + "  ".join("/".join(f"{x:.2f}" for x in fr) or "-" for fr in fracs)
            )


def rounds(path: Path, until: float) -> None:
    """Per sending flow (lettered in order of their first event), every event that starts a round (rtt_cnt moves) or changes BBR's mode, with the window, the
    segments out and delivered, tp->lost, the CA state and full_bw_cnt / full_bw_reached (struct bbr's word
    after lt_last_lost: pacing_gain 10 bits, cwnd_gain 10, full_bw_reached 1, full_bw_cnt 2)."""
    # Senders only: a receiving BBR socket (the receiver's side of a flow) delivers nothing.
    runs = [rows for _, rows in flows(path) if rows[-1]["tp_delivered"] >= 1000]
    t0 = runs[0][0]["t_ns"] if runs else 0
    for name, rows in zip("ABCDEFGH", runs):
        print(f"flow {name}:")
        last = None
        for r in rows:
            t = (r["t_ns"] - t0) / 1e9
            if t > until:
                break
            key = (r["rtt_cnt"], r["post_word"] & 7)
            if key == last:
                continue
            last = key
            g = r["gains_word"]
            print(
                f"  {t:8.4f} s round {r['rtt_cnt']:3d} mode {MODES[r['post_word'] & 7]:10s} cwnd {r['snd_cwnd']:4d} "
                f"out {r['packets_out']:4d} delivered {r['tp_delivered']:6d} lost {r['tp_lost']:5d} ca {r['ca_state']} "
                f"full_bw_cnt {(g >> 21) & 3} reached {(g >> 20) & 1}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="with CMD: the probe's events (JSON lines)")
    ap.add_argument("--intervals", nargs="+", help="probe files to analyse")
    ap.add_argument("--window", type=float, default=1.2, help="s from the second flow's first ACK")
    ap.add_argument("--save", help="append one JSON line per probe file")
    ap.add_argument("--label", action="append", default=[], help="K=V stored with each saved line")
    ap.add_argument("--table", help="a --save file to summarise")
    ap.add_argument("--before", type=float, default=12.0, help="--table: lt_bw entries before this many s")
    ap.add_argument("--every-segment", action="store_true", help="with CMD: an event at every segment, not only at changes")
    ap.add_argument("--rounds", help="a probe file: each flow's round starts and mode changes (STARTUP's exit)")
    ap.add_argument("--until", type=float, default=4.0, help="--rounds: s from the first flow's first event")
    ap.add_argument("cmd", nargs="*")
    args = ap.parse_args()
    if args.table:
        table(Path(args.table), args.before)
        return
    if args.rounds:
        rounds(Path(args.rounds), args.until)
        return
    if not args.intervals:
        sys.exit(record(args.cmd, Path(args.out), args.every_segment))
    labels = dict(kv.split("=", 1) for kv in args.label)
    for p in args.intervals:
        run = labels | summary(Path(p), args.window)
        print(f"{p}: second flow's first ACK at {run['b_first_ack_s']} s")
        for name, f in run["flows"].items():
            w = f["window"]
            print(
                f"  flow {name}: lt_bw in use from {f['lt_from_s'] or '-'} s; in the window lost {w['lost']} of {w['delivered']} delivered"
            )
            for iv in f["intervals"]:
                print("    " + " ".join(f"{k} {v}" for k, v in iv.items()))
        if args.save:
            with open(args.save, "a") as fh:
                fh.write(json.dumps(run) + "\n")


if __name__ == "__main__":
    main()
