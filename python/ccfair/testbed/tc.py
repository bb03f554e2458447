"""The testbed's kernel bottleneck path (``[testbed] bottleneck = "kernel"``).

Linux's own qdiscs do the queue and the rate, configured with tc(8) on the
bottleneck namespace's receiver-facing port (its egress carries every data
packet towards the receiver), as S0 does::

    tc qdisc add dev BR root handle 1: stab overhead O tbf rate R burst B limit L
    tc qdisc replace dev BR parent 1:1 handle 10: CHILD ...

* tbf (tc-tbf(8), net/sched/sch_tbf.c): token bucket at ``bottleneck.rate``
  with a one-frame burst (``B`` = the spec's largest packet plus
  ``bottleneck.l2_overhead``: 1514 bytes by default). The size table
  ``stab overhead O`` (tc-stab(8)) with ``O = l2_overhead - 14`` makes the
  kernel charge each frame its IP length plus the configured L2 overhead
  (the skb length includes the 14-byte Ethernet header; by default the
  frame is charged as it is and no size table is set, as tc refuses
  ``stab overhead 0``), the same size the simulator and the
  userspace bottleneck charge; byte limits, backlog and sent bytes count the
  same bytes. tbf keeps the head packet in the child (peek) until its
  tokens are there, so ``pfifo limit N`` holds N packets with the one "on the
  link", as the simulator's limits (ccfair-sim qdisc/mod.rs).
* the child is the queue discipline: drop-tail becomes ``pfifo limit N`` when
  the buffer resolves to packets (BDP multiples, ``42pkt``) and ``bfifo limit
  B`` when it is given in bytes (tc-pfifo(8)/tc-bfifo(8)); CoDel and FQ-CoDel
  map to ``codel``/``fq_codel`` with their parameters (tc-codel(8),
  tc-fq_codel(8)). The others have no kernel mapping here.

The delay stays in ccfair-bottleneck (delay-only mode: no rate, no queue):
sender -> userspace delay line -> AF_PACKET send without PACKET_QDISC_BYPASS
-> tbf + child -> receiver. A netem delay path is not implemented (this
machine's kernel has no netem, so it could not be tested); the probe records
whether netem exists.

Before a run, :func:`probe` applies the exact commands to a veth pair in a
throw-away network namespace (``unshare --net``: the namespace has no name and
disappears with the process), so a missing qdisc fails the run before any of
its namespaces exists. During the run :mod:`ccfair.testbed.qstats` samples
the root tbf's counters over netlink.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import Any

from ccfair.errors import SpecError

__all__ = ["ROOT_HANDLE", "KERNEL_QDISCS", "commands", "probe", "configure"]

#: tc handles: the root tbf (1:, 0x10000 in netlink) and its child (10:).
ROOT_HANDLE = "1:"
ROOT_HANDLE_ID = 0x10000
CHILD_HANDLE = "10:"
#: Ethernet header bytes in a frame's skb length; the size table adds ``l2_overhead - ETH_HEADER_BYTES``.
ETH_HEADER_BYTES = 14
#: Queue disciplines of the spec that have a kernel (tc) mapping here.
KERNEL_QDISCS = ("droptail", "codel", "fq_codel")
USE_USERSPACE = 'use the userspace bottleneck instead: testbed.bottleneck = "userspace" (the default)'


def _us(ns: int) -> str:
    return f"{max(1, round(ns / 1000))}us"


def _packets(q: dict[str, Any], wire_bytes: int) -> int:
    """A packet limit for qdiscs that only take packets (a byte limit -> whole full-size packets)."""
    if q.get("limit_packets") is not None:
        return int(q["limit_packets"])
    return max(1, int(q["limit_bytes"]) // wire_bytes)


def child_args(q: dict[str, Any], wire_bytes: int) -> list[str]:
    """The tc arguments of the queue discipline (the run config's ``bottleneck.qdisc``)."""
    kind = q["kind"]
    if kind == "droptail":
        if q.get("limit_packets") is not None:
            return ["pfifo", "limit", str(int(q["limit_packets"]))]
        return ["bfifo", "limit", str(int(q["limit_bytes"]))]
    ecn = ["ecn"] if q.get("ecn") else ["noecn"]
    if kind == "codel":
        return ["codel", "limit", str(_packets(q, wire_bytes)), "target", _us(q["target_ns"]), "interval", _us(q["interval_ns"]), *ecn]
    if kind == "fq_codel":
        args = [
            "fq_codel", "limit", str(_packets(q, wire_bytes)), "flows", str(q["flows"]), "quantum", str(q["quantum_bytes"]),
            "target", _us(q["target_ns"]), "interval", _us(q["interval_ns"]), "drop_batch", str(q["drop_batch"]), *ecn,
        ]  # fmt: skip
        if q.get("memory_limit_bytes") is not None:
            args += ["memory_limit", str(q["memory_limit_bytes"])]
        return args
    raise SpecError(
        "bottleneck.qdisc",
        f"{kind!r} has no kernel (tc) mapping in ccfair; the kernel bottleneck supports {', '.join(KERNEL_QDISCS)}; {USE_USERSPACE}",
    )


def commands(dev: str, config: dict[str, Any], wire_bytes: int) -> list[list[str]]:
    """The tc argument lists (without ``tc``) that build the kernel bottleneck on ``dev``
    (``wire_bytes``: the largest packet's IP length; the link charges it plus the L2 overhead)."""
    b = config["bottleneck"]
    q = b["qdisc"]
    l2 = int(b.get("l2_overhead_bytes", 0))
    frame = wire_bytes + l2
    child = child_args(q, frame)
    limit = q["limit_bytes"] if q.get("limit_bytes") is not None else _packets(q, frame) * frame
    # tc refuses `stab overhead 0`: the frame as it is needs no size table.
    stab = ["stab", "overhead", str(l2 - ETH_HEADER_BYTES)] if l2 != ETH_HEADER_BYTES else []
    root = [
        "qdisc", "add", "dev", dev, "root", "handle", ROOT_HANDLE, *stab,
        "tbf", "rate", f"{int(b['rate_bps'])}bit", "burst", str(frame), "limit", str(int(limit)),
    ]  # fmt: skip
    return [root, ["qdisc", "replace", "dev", dev, "parent", "1:1", "handle", CHILD_HANDLE, *child]]


def _kernel() -> str:
    return f"Linux {os.uname().release}"


#: Successful probes of this process, by their commands (the kernel's qdiscs do not change during a run).
_probed: dict[tuple[tuple[str, ...], ...], dict[str, Any]] = {}


def probe(cmds: list[list[str]], qdisc_kind: str) -> dict[str, Any]:
    """Try ``cmds`` on a veth pair in a throw-away network namespace; raise :class:`SpecError` if the
    kernel lacks a qdisc. Returns ``{"netem": bool}`` (whether the kernel also has netem)."""
    test = [[*c[:3], "p0", *c[4:]] for c in cmds]  # same commands on the probe's veth "p0"
    key = tuple(tuple(c) for c in test)
    if key not in _probed:
        _probed[key] = _probe(test, qdisc_kind)
    return dict(_probed[key])


def _probe(test: list[list[str]], qdisc_kind: str) -> dict[str, Any]:
    if shutil.which("tc") is None or shutil.which("unshare") is None:
        raise SpecError("testbed.bottleneck", f"the kernel bottleneck needs iproute2's `tc` and util-linux's `unshare`; {USE_USERSPACE}")
    script = "\n".join(
        [
            "ip link add dev p0 type veth peer name p1 || exit 9",
            *(f"tc {shlex.join(c)} || exit {10 + i}" for i, c in enumerate(test)),
            "tc qdisc add dev p1 root netem delay 1ms 2>/dev/null && echo netem",
            "exit 0",
        ]
    )
    p = subprocess.run(["unshare", "--net", "--", "sh", "-c", script], capture_output=True, text=True)
    err = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
    if p.returncode == 10:
        raise SpecError("testbed.bottleneck", f"the kernel ({_kernel()}) cannot set up tbf (tc: {err}); {USE_USERSPACE}")
    if p.returncode == 11:
        name = test[1][8]
        what = f"has no {name!r} qdisc" if "unknown" in err.lower() else f"refused the {name!r} qdisc"
        raise SpecError(
            "bottleneck.qdisc",
            f"{qdisc_kind!r}: the kernel ({_kernel()}) {what} (tc: {err}); {USE_USERSPACE}",
        )
    if p.returncode != 0:
        raise SpecError("testbed.bottleneck", f"probing the kernel's qdiscs failed ({err}); {USE_USERSPACE}")
    return {"netem": "netem" in p.stdout.split()}


def configure(ns: str, cmds: list[list[str]]) -> None:
    """Apply ``cmds`` in namespace ``ns``; raise RuntimeError with tc's message on failure."""
    for c in cmds:
        p = subprocess.run(["ip", "netns", "exec", ns, "tc", *c], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"`tc {' '.join(c)}` in {ns} failed: {p.stderr.strip()}")
