"""CoDel/PIE with N long-lived CUBIC flows on both backends.

    python3 bench/aqm_testbed.py [--flows 4,16] [--qdiscs codel,pie] [--seeds 1,2,3] [--backends sim,testbed]

10 Mbit/s, 50 ms, 2 BDP limit, N CUBIC flows starting within the first
second (start_jitter 1 s, drawn from the seed), 30 s, window 10-30 s — the
issue's "many flows" case. On the testbed the senders are real Linux kernel
TCP stacks and the queue discipline is ccfair's own (the userspace
bottleneck reuses the simulator's qdisc code), so the two backends differ
only in the TCP senders. The testbed needs root. Prints one Markdown row per
run: mean sojourn, mean queue, utilization, JFI, retransmissions.
"""

from __future__ import annotations

import argparse

import ccfair
from ccfair.spec import Spec
from common import table_header


def spec(n: int, qdisc: str) -> dict:
    return {
        "name": f"{qdisc} {n} cubic",
        "duration": "30s",
        "window": {"start": "10s"},
        "bottleneck": {"rate": "10Mbit", "buffer": "2bdp", "qdisc": qdisc},
        "flows": [{"cca": "cubic", "rtt": "50ms", "count": n, "start_jitter": "1s"}],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", default="4,16")
    ap.add_argument("--qdiscs", default="codel,pie")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--backends", default="sim,testbed")
    a = ap.parse_args()
    table_header("qdisc", "flows", "backend", "seed", "mean sojourn (ms)", "mean queue (pkts)", "utilization", "JFI", "retransmissions")
    for qdisc in a.qdiscs.split(","):
        for n in (int(x) for x in a.flows.split(",")):
            for backend in a.backends.split(","):
                for seed in (int(x) for x in a.seeds.split(",")):
                    s = ccfair.run(Spec.from_dict(spec(n, qdisc)), seed=seed, backend=backend).summary
                    retx = sum(f.get("retransmissions") or 0 for f in s["flows"])
                    print(
                        f"| {qdisc} | {n} | {backend} | {seed} | {s['queue_delay_ms']['mean']:.2f} "
                        f"| {s['queue_packets_mean']:.1f} | {s['utilization']:.3f} | {s['jfi']:.3f} | {retx} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
