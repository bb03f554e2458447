"""Acceptance runs for any set of CCAs: alone and against itself.

    python3 bench/cca_acceptance.py vegas ledbat ctcp bbr2 [--seeds 10]
    python3 bench/cca_acceptance.py bbr2 bbr --vs cubic [--seeds 10]

Single flow: 10 Mbit/s, 50 ms RTT, 1 BDP drop-tail, 45 s; utilization over
seconds 15-45 (and the mean queueing delay there).
Two flows of the same CCA: same path, flow B starts 5 s after A (both with
start_jitter 100 ms), window 10-45 s; JFI per seed and its mean over the seeds.
With ``--vs OTHER``: each CCA against OTHER in both start orders instead
(same timing as the self-pair); prints the CCA's mean share for each order.
Prints a Markdown table (the figures in docs/ccas.md come from this script).
"""

from __future__ import annotations

import argparse
import statistics

import ccfair
from ccfair.spec import Spec


def base(cca_a: str, cca_b: str | None, window: tuple[str, str], seed: int) -> dict:
    flows = [{"name": "A", "cca": cca_a, "rtt": "50ms", "start": "0s", "start_jitter": "100ms"}]
    if cca_b is not None:
        flows.append({"name": "B", "cca": cca_b, "rtt": "50ms", "start": "5s", "start_jitter": "100ms"})
    else:
        flows[0].pop("start_jitter")
    return {
        "name": f"{cca_a} vs {cca_b}" if cca_b else f"{cca_a} alone",
        "duration": "45s",
        "window": {"start": window[0], "end": window[1]},
        "seed": seed,
        "bottleneck": {"rate": "10Mbit", "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
        "flows": flows,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ccas", nargs="+")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--vs", help="compare each CCA with this one instead")
    args = ap.parse_args()
    if args.vs:
        print(f"| CCA | share vs {args.vs}, CCA first | share vs {args.vs}, {args.vs} first | seeds |")
        print("|---|---|---|---|")
        for cca in args.ccas:
            first = [
                ccfair.run(Spec.from_dict(base(cca, args.vs, ("10s", "45s"), s))).summary["flows"][0]["share"]
                for s in range(1, args.seeds + 1)
            ]
            second = [
                ccfair.run(Spec.from_dict(base(args.vs, cca, ("10s", "45s"), s))).summary["flows"][1]["share"]
                for s in range(1, args.seeds + 1)
            ]
            print(f"| {cca} | {statistics.mean(first):.3f} | {statistics.mean(second):.3f} | {args.seeds} |", flush=True)
        return
    print(
        "| CCA | alone: utilization 15-45 s | alone: mean queue delay (ms) | alone: retransmissions "
        f"| self-pair: mean JFI ({args.seeds} seeds) | min JFI | mean share of B |"
    )
    print("|---|---|---|---|---|---|---|")
    for cca in args.ccas:
        alone = ccfair.run(Spec.from_dict(base(cca, None, ("15s", "45s"), 1))).summary
        jfis, shares_b = [], []
        for seed in range(1, args.seeds + 1):
            s = ccfair.run(Spec.from_dict(base(cca, cca, ("10s", "45s"), seed))).summary
            jfis.append(s["jfi"])
            shares_b.append(s["flows"][1]["share"])
        print(
            f"| {cca} | {alone['utilization']:.3f} | {alone['queue_delay_ms']['mean']:.1f} "
            f"| {alone['flows'][0]['retransmissions']} | {statistics.mean(jfis):.3f} | {min(jfis):.3f} "
            f"| {statistics.mean(shares_b):.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
