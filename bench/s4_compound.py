"""S4's Compound TCP vs CCID2 point: the preset's pair (CCID2 at 0 s,
Compound at 30 s, 100 Mbit/s, 1 BDP drop-tail, 300 s, mean J(t) over 60-300 s),
with ccfair's Compound and with a "backlog-blind" Compound whose delay window
never drains (gamma = 100000 packets, tuning off), the mechanism check of
docs/presets.md ("Compound TCP vs CCID2").

    python bench/s4_compound.py [SEEDS] [RTT_MS,...]
    python bench/s4_compound.py 3 50,100,200

Prints one Markdown row per (variant, RTT), means over seeds: J (min-max),
throughput CCID2 / Compound (Mbit/s, 60-300 s), loss rate (drops / sent
packets over the whole run, including the first flow's start-up overshoot)
and window reductions (recoveries) of CCID2 / Compound.
"""

import statistics
import sys

from ccfair import metrics
from ccfair.api import run
from ccfair.presets import s4
from ccfair.spec import Spec

BLIND = {"name": "ctcp", "gamma": 100000, "gamma_low": 100000, "gamma_high": 100000}


def one(rtt: int, seed: int, ctcp: object) -> tuple[float, list[float], list[float], list[float]]:
    d = s4.pair_spec("ccid2", "ctcp", rtt, seed)
    d["flows"][1]["cca"] = ctcp
    r = run(Spec.from_dict(d))
    x = metrics.throughput_matrix(r)
    f = r.flows
    loss = [100.0 * d / s for d, s in zip(f["drops"], f["sent_packets"])]
    return metrics.mean_jain_over_time(r), [float(v) / 1e6 for v in x.mean(axis=0)], loss, [float(v) for v in f["recoveries"]]


seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
rtts = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "50,100,200").split(",")]
print("| Compound | RTT ms | J mean (min-max) | CCID2 / Compound Mbit/s | loss % CCID2 / Compound | reductions CCID2 / Compound |")
print("|---|---|---|---|---|---|")
for label, cca in (("ccfair (paper + Caltech module)", "ctcp"), ("backlog-blind (gamma 100000)", BLIND)):
    for rtt in rtts:
        rows = [one(rtt, s, cca) for s in range(1, seeds + 1)]
        js = [r[0] for r in rows]
        t, loss, red = ([statistics.mean(r[k][i] for r in rows) for i in (0, 1)] for k in (1, 2, 3))
        print(
            f"| {label} | {rtt} | {statistics.mean(js):.2f} ({min(js):.2f}-{max(js):.2f}) | {t[0]:.0f} / {t[1]:.0f} "
            f"| {loss[0]:.3f} / {loss[1]:.3f} | {red[0]:.1f} / {red[1]:.1f} |",
            flush=True,
        )
