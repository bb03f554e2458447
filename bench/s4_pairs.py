"""S4 (Bhatti & Bateman 2009) pairwise runs: 100 Mbit/s, 1 BDP drop-tail, flow B at 30 s.

    python bench/s4_pairs.py DURATION_S WINDOW_START_S A:B[,A:B...] RTT_MS[,RTT_MS...]
    python bench/s4_pairs.py 300 60 reno:ccid2,cubic:ccid2,bic:ccid2 25,50,100,200

Prints one Markdown row per (pair, RTT): JFI and goodput over
[WINDOW_START_S, DURATION_S), drops over the whole run (seed 1).
The table in docs/ccas.md (CCID 2 section) comes from this script.
"""

import sys

import ccfair
from ccfair.spec import Spec


def run(a, b, rtt, dur, w0, seed=1):
    spec = Spec.from_dict(
        {
            "name": f"{a} vs {b}",
            "duration": f"{dur}s",
            "window": {"start": f"{w0}s", "end": f"{dur}s"},
            "seed": seed,
            "bottleneck": {"rate": "100Mbit", "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
            "flows": [{"name": "A", "cca": a, "rtt": f"{rtt}ms"}, {"name": "B", "cca": b, "rtt": f"{rtt}ms", "start": "30s"}],
        }
    )
    r = ccfair.run(spec)
    s = r.summary
    return s["jfi"], [f["throughput_bps"] / 1e6 for f in s["flows"]], list(r.flows["drops"])


dur, w0 = int(sys.argv[1]), int(sys.argv[2])
pairs = [p.split(":") for p in sys.argv[3].split(",")]
rtts = [int(x) for x in sys.argv[4].split(",")]
for a, b in pairs:
    for rtt in rtts:
        j, t, d = run(a, b, rtt, dur, w0)
        print(f"| {a} | {b} | {rtt} | {j:.3f} | {t[0]:.1f} | {t[1]:.1f} | {d[0]} / {d[1]} |", flush=True)
