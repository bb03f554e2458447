"""Character check of the window-based CCAs: one flow, 50 ms, 1 BDP drop-tail.

For each algorithm and bottleneck rate prints, as a Markdown table, what the
loss-based laws should make visibly different: utilization (20-60 s), loss
recoveries and retransmissions over the whole 60 s run (slow start
included), and the mean RTT (a larger decrease factor drains more queue).

    python3 bench/cca_character.py [--rates 10Mbit,100Mbit]

The output is recorded in docs/ccas.md.
"""

from __future__ import annotations

import argparse

import ccfair
from ccfair import Spec
from common import table_header

CCAS = ["reno", "cubic", "bic", "highspeed", "htcp", "hybla", "illinois", "scalable", "veno", "westwood", "yeah"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="10Mbit,100Mbit")
    ap.add_argument("--rtt", default="50ms")
    args = ap.parse_args()
    table_header("rate", "CCA", "utilization 20-60 s", "recoveries", "retransmissions", "mean RTT (ms)")
    for rate in args.rates.split(","):
        for cca in CCAS:
            d = {
                "name": "character",
                "duration": "60s",
                "window": {"start": "20s", "end": "60s"},
                "seed": 1,
                "bottleneck": {"rate": rate, "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
                "flows": [{"name": "A", "cca": cca, "rtt": args.rtt}],
            }
            r = ccfair.run(Spec.from_dict(d), seed=1)
            f = r.flows.iloc[0]
            print(
                f"| {rate} | {cca} | {r.summary['utilization']:.4f} | {int(f['recoveries'])} "
                f"| {int(f['retransmissions'])} | {float(f['mean_rtt_ms']):.1f} |"
            )


if __name__ == "__main__":
    main()
