"""Traffic agents of the testbed, run inside a network namespace as a plain script.

    python3 agent.py probe --dst IP --port P --count N [--open [--kernel-rtt]]
    python3 agent.py listen --ip IP --port P
    python3 agent.py recv  --ip IP --ports P0,P1,.. --t0 NS|stdin --bin NS --nbins N --end NS --out FILE
                           [--rcvbuf B0,B1,..] [--ccas C0,C1,..]
    python3 agent.py send  --dst IP --port P --cca NAME [--pacing] [--mss M] --t0 NS|stdin --start NS --stop NS
                           --end NS --sample NS [--trace] --out FILE

Standard library only and no ``ccfair`` import, so it starts in tens of
milliseconds. Every time is CLOCK_MONOTONIC in ns, which all network
namespaces of one host share; ``t0`` is the experiment's time zero. With
``--t0 stdin`` an agent prints ``ready`` once it is set up and then reads ``t0``
(one line) from its standard input: the run picks ``t0`` only when every agent
is ready, so an agent that a loaded host starts slowly cannot start its flow late.
``--start``, ``--stop`` and ``--end`` are relative to ``t0``.

* probe: the time of a TCP connect to a closed port (SYN out, RST back) is one
  round trip of the path; prints the minimum of ``count`` tries in ns. With ``--open``
  the port is an open one (a remote HTTP server): a completed connect (SYN, SYN-ACK)
  is the round trip; the connection is then reset (SO_LINGER 0) to leave no state.
  ``--kernel-rtt``: the kernel's RTT sample of that handshake (``TCP_INFO`` ``tcpi_rtt``,
  us; the first sample sets srtt, RFC 6298) instead of the time around ``connect()``,
  which adds the system call and the process's wake-up (0.03-0.17 ms here).
* listen: accepts and closes connections on one port: the open port of the
  local paths' probes.
* recv: one listening socket per flow; counts the bytes the application reads
  per ``bin`` (the simulator's delivered-bytes bins) until ``end``. A non-empty
  ``--ccas`` entry sets that listener's CCA, which its accepted connection
  inherits (net/ipv4/tcp_cong.c ``tcp_ca_openreq_child``): a receiver that runs
  DCTCP's CE state machine (per-packet ECE echo) needs the flow's CCA.
* send: a bulk TCP sender with the CCA set per socket (``TCP_CONGESTION``,
  tcp(7)); pacing without fq through ``SO_MAX_PACING_RATE``, which switches on
  the kernel's internal pacing (net/core/sock.c: any value but ~0 sets
  ``sk_pacing_status = SK_PACING_NEEDED``; net/ipv4/tcp_output.c then paces at
  ``sk_pacing_rate``, 200 % / 120 % of cwnd/srtt from tcp_update_pacing_rate).
  Samples ``TCP_INFO`` (linux/tcp.h ``struct tcp_info``) every ``sample``.

Each agent asks the kernel to kill it when its parent (the ccfair run) dies
(prctl PR_SET_PDEATHSIG), so a killed run leaves no traffic behind.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
import typing

PR_SET_PDEATHSIG = 1
SO_MAX_PACING_RATE = 47
TCP_INFO_BYTES = 232
#: ``SO_MAX_PACING_RATE`` value that enables internal pacing without capping the rate (~0UL - 1).
PACING_UNCAPPED = 2**64 - 2
RECV_CHUNK_BYTES = 1 << 20
SEND_CHUNK_BYTES = 1 << 18


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    if os.getppid() == 1:  # the parent is already gone
        sys.exit(1)


def t0_arg(text: str) -> int | None:
    """``--t0``: nanoseconds, or ``stdin`` (None: read it after printing ``ready``)."""
    return None if text == "stdin" else int(text)


def await_t0(a: argparse.Namespace) -> None:
    """Say ``ready``; with ``--t0 stdin`` take ``t0`` from the first line of stdin. ``--end``
    is relative to ``t0``: it becomes absolute here."""
    print("ready", flush=True)
    if a.t0 is None:
        line = sys.stdin.readline()
        if not line.strip():
            sys.exit("agent.py: no t0 on stdin (the run ended before the experiment started)")
        a.t0 = int(line)
    a.end += a.t0


def sleep_until(t_ns: int) -> None:
    while True:
        d = t_ns - now_ns()
        if d <= 0:
            return
        time.sleep(min(d, 50_000_000) / 1e9)


def set_cca(sock: socket.socket, cca: str, pacing: bool, cmd: str) -> None:
    """Set ``TCP_CONGESTION`` (exit naming ``cmd`` if the kernel refuses it) and, with ``pacing``, uncapped internal pacing."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cca.encode())
    except OSError as e:
        sys.exit(f"{cmd}: TCP_CONGESTION {cca!r}: {e}")
    if pacing:
        sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", PACING_UNCAPPED))


def write_json(path: str, obj: object) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (through ``path.tmp``)."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------- TCP_INFO


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The ``struct tcp_info`` fields ccfair uses (offsets from linux/tcp.h)."""
    b = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
    b = b + bytes(TCP_INFO_BYTES - len(b))
    u32 = lambda off: struct.unpack_from("I", b, off)[0]  # noqa: E731
    u64 = lambda off: struct.unpack_from("Q", b, off)[0]  # noqa: E731
    unacked, sacked, lost, retrans = u32(24), u32(28), u32(32), u32(36)
    return {
        "ca_state": b[1],
        "rto_us": u32(8),
        "rtt_us": u32(68),
        "snd_ssthresh": u32(76),
        "snd_cwnd": u32(80),
        "total_retrans": u32(100),
        "pacing_rate": u64(104),  # bytes/s
        "min_rtt_us": u32(148),
        "data_segs_out": u32(156),
        "delivery_rate": u64(160),  # bytes/s
        "bytes_acked": u64(120),
        # tcp_packets_in_flight(): packets_out - (sacked_out + lost_out) + retrans_out
        "inflight": max(0, unacked - (sacked + lost) + retrans),
    }


TRACE_KEYS = ("time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")


def new_trace() -> dict[str, list[int]]:
    return {k: [] for k in TRACE_KEYS}


def trace_append(trace: dict[str, list[int]], time_ns: int, info: dict[str, int]) -> None:
    """Append one ``TCP_INFO`` sample taken at ``time_ns`` (relative to t0) to ``trace``."""
    trace["time_ns"].append(time_ns)
    trace["cwnd_pkts"].append(info["snd_cwnd"])
    trace["inflight_pkts"].append(info["inflight"])
    trace["srtt_ns"].append(info["rtt_us"] * 1000)
    trace["pacing_rate_bps"].append(min(info["pacing_rate"] * 8, 2**63 - 1))
    trace["ssthresh_pkts"].append(min(info["snd_ssthresh"], 2**32 - 1))


def netstat() -> dict[str, int]:
    """This namespace's TcpExt counters (one flow per sender namespace -> per-flow counters)."""
    out: dict[str, int] = {}
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        keys, nums = head.split(), vals.split()
        if keys[0] == "TcpExt:":
            out.update({k: int(v) for k, v in zip(keys[1:], nums[1:])})
    return out


# ---------------------------------------------------------------- modes


def probe(a: argparse.Namespace) -> None:
    """The path's base RTT: the minimum over ``count`` TCP connects. ``--open``: a handshake with a
    listening port (else SYN out, RST back from a closed one), timed around ``connect()``;
    ``--kernel-rtt`` takes the kernel's own RTT sample of the handshake instead (``TCP_INFO``
    ``tcpi_rtt``: from the SYN's transmission to the SYN-ACK's arrival, the points every data
    RTT sample uses), without the system call's entry and the process's wake-up."""
    best = None
    for _ in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2.0)
        t = now_ns()
        try:
            s.connect((a.dst, a.port))
            if a.open:
                d = tcp_info(s)["rtt_us"] * 1000 if a.kernel_rtt else now_ns() - t
                best = d if best is None else min(best, d)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except ConnectionRefusedError:
            if not a.open:
                d = now_ns() - t
                best = d if best is None else min(best, d)
        except OSError:
            pass
        finally:
            s.close()
        time.sleep(0.005)
    if best is None:
        sys.exit("probe: no answer from " + a.dst)
    print(best, flush=True)


def listen(a: argparse.Namespace) -> None:
    """Accept and close connections on ``ip:port`` (the handshakes of ``probe --open``) until SIGTERM."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.ip, a.port))
    ls.listen(128)
    print("ready", flush=True)
    while True:
        conn, _ = ls.accept()
        conn.close()


def recv(a: argparse.Namespace) -> None:
    ports = [int(p) for p in a.ports.split(",")]
    rcvbufs = [int(x) for x in a.rcvbuf.split(",")] if a.rcvbuf else [0] * len(ports)
    ccas = a.ccas.split(",") if a.ccas else [""] * len(ports)
    sel = selectors.DefaultSelector()
    for i, (port, rb) in enumerate(zip(ports, rcvbufs)):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if ccas[i]:
            set_cca(ls, ccas[i], False, "recv")
        if rb > 0:  # set before listen: accepted sockets inherit it (fixes the window, no autotuning)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rb)
        ls.bind((a.ip, port))
        ls.listen(4)
        ls.setblocking(False)
        sel.register(ls, selectors.EVENT_READ, ("listen", i))
    delivered = [[0] * a.nbins for _ in ports]
    buf = bytearray(RECV_CHUNK_BYTES)
    await_t0(a)
    while True:
        left = a.end - now_ns()
        if left <= 0:
            break
        for key, _ in sel.select(timeout=min(left, 100_000_000) / 1e9):
            kind, i = key.data
            if kind == "listen":
                try:
                    c, _ = typing.cast(socket.socket, key.fileobj).accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, ("conn", i))
                continue
            try:
                n = typing.cast(socket.socket, key.fileobj).recv_into(buf)
            except BlockingIOError:
                continue
            except OSError:
                n = 0
            if n == 0:
                sel.unregister(key.fileobj)
                typing.cast(socket.socket, key.fileobj).close()
                continue
            b = (now_ns() - a.t0) // a.bin
            if 0 <= b < a.nbins:
                delivered[i][b] += n
    write_json(a.out, {"delivered_bytes": delivered})


def send(a: argparse.Namespace) -> None:
    await_t0(a)
    sleep_until(a.t0 + a.start)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    set_cca(s, a.cca, a.pacing, "send")
    if a.mss:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    start = now_ns()
    s.connect((a.dst, a.port))
    stop_at = a.t0 + a.stop
    done = threading.Event()

    def pump() -> None:
        data = bytes(SEND_CHUNK_BYTES)
        s.settimeout(0.05)
        while now_ns() < stop_at and not done.is_set():
            try:
                s.send(data)
            except TimeoutError:
                continue
            except OSError:
                return

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    trace = new_trace()
    srtt_sum, srtt_n = 0, 0
    # Samples on the nominal grid k * sample (relative to t0), from the flow's start.
    k = -(-(start - a.t0) // a.sample)
    while True:
        t = a.t0 + k * a.sample
        if t >= a.end:
            break
        sleep_until(t)
        info = tcp_info(s)
        if info["rtt_us"]:
            srtt_sum += info["rtt_us"] * 1000
            srtt_n += 1
        if a.trace:
            trace_append(trace, k * a.sample, info)
        k += 1
    done.set()
    info = tcp_info(s)
    ns = netstat()
    out = {
        "start_ns": start - a.t0,
        "sent_packets": info["data_segs_out"],
        "retransmissions": info["total_retrans"],
        "min_rtt_ns": info["min_rtt_us"] * 1000,
        "mean_rtt_ns": srtt_sum / srtt_n if srtt_n else 0.0,
        "rto_count": ns.get("TCPTimeouts", 0),
        "recoveries": ns.get("TCPSackRecovery", 0) + ns.get("TCPRenoRecovery", 0),
        "lost_retransmits": ns.get("TCPLostRetransmit", 0),
        "bytes_acked": info["bytes_acked"],
        "rto_ns": info["rto_us"] * 1000,
        "trace": trace,
    }
    th.join(timeout=1.0)
    s.close()
    write_json(a.out, out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="agent.py")
    sub = p.add_subparsers(dest="mode", required=True)
    pr = sub.add_parser("probe")
    pr.add_argument("--dst", required=True)
    pr.add_argument("--port", type=int, required=True)
    pr.add_argument("--count", type=int, default=10)
    pr.add_argument("--open", action="store_true")
    pr.add_argument("--kernel-rtt", action="store_true")
    ls = sub.add_parser("listen")
    ls.add_argument("--ip", required=True)
    ls.add_argument("--port", type=int, required=True)
    rc = sub.add_parser("recv")
    rc.add_argument("--ip", required=True)
    rc.add_argument("--ports", required=True)
    rc.add_argument("--rcvbuf", default="")
    rc.add_argument("--ccas", default="")
    rc.add_argument("--t0", type=t0_arg, required=True)
    for name in ("--bin", "--nbins", "--end"):
        rc.add_argument(name, type=int, required=True)
    rc.add_argument("--out", required=True)
    sd = sub.add_parser("send")
    sd.add_argument("--dst", required=True)
    sd.add_argument("--port", type=int, required=True)
    sd.add_argument("--cca", required=True)
    sd.add_argument("--pacing", action="store_true")
    sd.add_argument("--mss", type=int, default=0)
    sd.add_argument("--t0", type=t0_arg, required=True)
    for name in ("--start", "--stop", "--end", "--sample"):
        sd.add_argument(name, type=int, required=True)
    sd.add_argument("--trace", action="store_true")
    sd.add_argument("--out", required=True)
    a = p.parse_args(argv)
    die_with_parent()
    {"probe": probe, "listen": listen, "recv": recv, "send": send}[a.mode](a)


if __name__ == "__main__":
    main()
