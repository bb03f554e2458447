"""The rate a saturated Linux tbf with a one-packet burst really sends (docs/testbed.md).

    python3 bench/tbf_rate.py [--rate-mbit 10] [--seconds 3] [--reps 3]

Root. In a throw-away network namespace (``unshare --net``) a veth pair gets
the kernel bottleneck's root qdisc (``stab overhead -14 tbf rate R burst
1500``, as python/ccfair/testbed/tc.py builds it, with a large limit); an
AF_PACKET socket (no PACKET_QDISC_BYPASS) fills it with 1514-byte frames
(1500-byte IP packets), and the tbf's sent-packet counter is read
(``tc -s -j``) twice, ``--seconds`` apart, while its queue stays non-empty.
Prints packets/s next to the nominal rate. For comparison the same is done
with a two-packet burst (3000 bytes).

Why it can be below the rate: tbf caps its tokens at ``burst``
(net/sched/sch_tbf.c, tbf_dequeue: ``toks = min(now - t_c, buffer)``), so
with a one-packet burst every late watchdog wake-up (hrtimer + softirq) is
capacity lost; with a larger burst the lateness is caught up.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time

FRAME = bytes.fromhex("02cc0001000002cc000000010800") + bytes(1500)
SO_SNDBUFFORCE = 32


def child(dev: str, seconds: float, nominal_pps: float) -> None:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 256 << 20)
    for _ in range(int((seconds + 1.0) * nominal_pps * 1.2)):  # more than the link can send meanwhile
        s.send(FRAME)

    def read() -> tuple[float, int, int]:
        t0 = time.monotonic()
        q = json.loads(subprocess.run(["tc", "-s", "-j", "qdisc", "show", "dev", dev], capture_output=True, text=True, check=True).stdout)[
            0
        ]
        return (t0 + time.monotonic()) / 2, q["packets"], q["qlen"]

    time.sleep(0.3)
    a = read()
    time.sleep(seconds)
    b = read()
    if b[2] == 0:
        sys.exit("the queue ran empty; lower --seconds or the rate")
    print(json.dumps({"pps": (b[1] - a[1]) / (b[0] - a[0])}))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rate-mbit", type=float, default=10.0)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child, a.seconds, a.rate_mbit * 1e6 / (1500 * 8))
        return
    rate = int(a.rate_mbit * 1e6)
    nominal = rate / (1500 * 8)
    print(f"nominal: {nominal:.2f} packets/s of 1500 bytes at {a.rate_mbit} Mbit/s")
    for burst in (1500, 3000):
        for rep in range(a.reps):
            script = (
                "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && "
                "ip link add dev va type veth peer name vb && ip link set va up && ip link set vb up && "
                f"tc qdisc add dev va root handle 1: stab overhead -14 tbf rate {rate}bit burst {burst} limit 100000000 && "
                f"{sys.executable} {__file__} --child va --seconds {a.seconds} --rate-mbit {a.rate_mbit}"
            )
            out = subprocess.run(["unshare", "--net", "--", "sh", "-c", script], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(out.stderr.strip())
            pps = json.loads(out.stdout)["pps"]
            print(f"burst {burst} B, run {rep + 1}: {pps:.2f} packets/s = {pps / nominal:.4f} of the rate")


if __name__ == "__main__":
    main()
