"""Sample a kernel qdisc's counters over netlink (the testbed's kernel bottleneck path).

    python3 qstats.py --dev IFNAME --handle 0x10000 --t0 NS --duration NS --sample NS --bin NS --out FILE

Run inside the bottleneck namespace (``ip netns exec``). Standard library only
and no ``ccfair`` import but agent.py beside it (its clock and wait), like httpagent.py.
Every ``sample`` from ``t0`` it reads the qdisc's ``qlen`` and ``backlog`` (the queue-length series); at every
``bin`` boundary its cumulative sent bytes (the per-bin link bytes are the
differences). With ``stab overhead -14`` on the root tbf (see tc.py) bytes and
backlog are IP lengths, as the simulator counts them. Sent bytes are counted
when tbf dequeues a packet (net/sched/sch_tbf.c ``tbf_dequeue`` ->
``qdisc_bstats_update``), i.e. when its transmission starts.

Netlink: an RTM_GETQDISC dump (linux/rtnetlink.h, struct tcmsg), attribute
TCA_STATS2 with TCA_STATS_BASIC (struct gnet_stats_basic: u64 bytes, u32
packets) and TCA_STATS_QUEUE (struct gnet_stats_queue: qlen, backlog, drops,
requeues, overlimits), linux/gen_stats.h. One dump costs tens of
microseconds, unlike forking ``tc -s -j`` every sample.

The run's counters (``start``, ``end``) span the bottleneck's whole life, as its
per-flow drop charges do: ``start`` is read before ``ready``, ``end`` once stdin
closes (the runner closes it after stopping the bottleneck, which may still
forward, and so be refused, after the last sample).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import struct
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING or __package__:  # imported (tests)
    from . import agent
else:  # run as a script: agent.py is beside it on sys.path[0]
    import agent

NETLINK_ROUTE = 0
RTM_NEWQDISC = 36
RTM_GETQDISC = 38
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
TCA_STATS2 = 7
TCA_STATS_BASIC = 1
TCA_STATS_QUEUE = 3
NLA_TYPE_MASK = 0x3FFF
NLMSG_HDR = struct.Struct("=IHHII")
TCMSG = struct.Struct("=BxxxiIII")
PR_SET_PDEATHSIG = 1


def _attrs(buf: bytes, off: int, end: int) -> dict[int, bytes]:
    out = {}
    while off + 4 <= end:
        length, typ = struct.unpack_from("=HH", buf, off)
        if length < 4:
            break
        out[typ & NLA_TYPE_MASK] = buf[off + 4 : off + length]
        off += (length + 3) & ~3
    return out


class QdiscReader:
    """Reads one qdisc's counters (by interface index and handle) with RTM_GETQDISC dumps."""

    def __init__(self, ifindex: int, handle: int) -> None:
        self.ifindex = ifindex
        self.handle = handle
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.sock.bind((0, 0))
        self.seq = 0

    def read(self) -> dict[str, int]:
        self.seq += 1
        req = TCMSG.pack(socket.AF_UNSPEC, self.ifindex, 0, 0, 0)
        self.sock.send(NLMSG_HDR.pack(NLMSG_HDR.size + len(req), RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0) + req)
        found: dict[str, int] | None = None
        while True:
            buf = self.sock.recv(1 << 16)
            off = 0
            while off + NLMSG_HDR.size <= len(buf):
                length, typ, _, seq, _ = NLMSG_HDR.unpack_from(buf, off)
                if length < NLMSG_HDR.size:
                    raise RuntimeError("bad netlink message")
                if seq == self.seq:
                    if typ == NLMSG_DONE:
                        if found is None:
                            raise RuntimeError(f"qdisc {self.handle:#x} not found on interface {self.ifindex}")
                        return found
                    if typ == NLMSG_ERROR:
                        (errno,) = struct.unpack_from("=i", buf, off + NLMSG_HDR.size)
                        raise OSError(-errno, os.strerror(-errno))
                    if typ == RTM_NEWQDISC:
                        _, ifindex, handle, _, _ = TCMSG.unpack_from(buf, off + NLMSG_HDR.size)
                        if ifindex == self.ifindex and handle == self.handle:
                            a = _attrs(buf, off + NLMSG_HDR.size + TCMSG.size, off + length)
                            st = _attrs(a[TCA_STATS2], 0, len(a[TCA_STATS2]))
                            nbytes, packets = struct.unpack_from("=QI", st[TCA_STATS_BASIC])
                            qlen, backlog, drops, requeues, overlimits = struct.unpack_from("=IIIII", st[TCA_STATS_QUEUE])
                            found = {
                                "bytes": nbytes, "packets": packets, "qlen": qlen, "backlog": backlog,
                                "drops": drops, "requeues": requeues, "overlimits": overlimits,
                            }  # fmt: skip
                off += (length + 3) & ~3


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="qstats.py")
    p.add_argument("--dev", required=True)
    p.add_argument("--handle", type=lambda s: int(s, 0), required=True)
    for k in ("t0", "duration", "sample", "bin"):
        p.add_argument(f"--{k}", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    reader = QdiscReader(socket.if_nametoindex(a.dev), a.handle)
    first = reader.read()
    print("ready", flush=True)
    n_bins = -(-a.duration // a.bin)
    samples = list(range(0, a.duration, a.sample))
    bounds = [j * a.bin for j in range(n_bins + 1)]
    times = sorted(set(samples) | set(bounds))
    sample_set, bound_set = set(samples), set(bounds)
    out: dict[str, list[int]] = {"queue_time_ns": [], "queue_packets": [], "queue_bytes": []}
    sent_at: list[int] = []
    late_max = 0
    st = first
    for t in times:
        agent.sleep_until(a.t0 + t)
        late_max = max(late_max, agent.now_ns() - a.t0 - t)
        st = reader.read()
        if t in sample_set:
            out["queue_time_ns"].append(t)
            out["queue_packets"].append(st["qlen"])
            out["queue_bytes"].append(st["backlog"])
        if t in bound_set:
            sent_at.append(st["bytes"])
    sys.stdin.read()  # until the runner has stopped the bottleneck (or died: EOF either way)
    st = reader.read()
    result = {
        **out,
        "link_tx_bytes": [sent_at[j + 1] - sent_at[j] for j in range(n_bins)],
        "start": first,
        "end": st,
        "sample_late_max_ns": late_max,
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError, KeyError, struct.error) as e:
        print(f"qstats: {e}", file=sys.stderr)
        sys.exit(1)
