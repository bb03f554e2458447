"""Who takes the bottleneck's losses: retransmissions per flow group, kernel runs next to the simulator.

    python3 bench/fidelity_losses.py --set kernel-ccas-delay [--set ...] [--cca nv ...] [--seeds K] [--jobs N]
        [--sim-set KEY=VALUE ...]

Per fidelity point: flow groups A's and B's retransmissions per run (the kernel's counted runs,
docs/fidelity.md "Which runs count", and the simulator with K seeds per kernel run, each with
that run's measured flow starts, as bench/fidelity_many_seeds.py), and B's share on both sides.
A flow that loses more packets on one side than on the other, with the same share of the link,
points at the packet pattern it sends into the full queue (bursts, growth while others fill
it). `--sim-set` applies an override to the simulator side only (a what-if, e.g.
`flows.0.delayed_ack=false`). Reads the stored kernel runs; runs only the simulator.
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.fidelity.compare import _sim_one
from ccfair.fidelity.points import group_shares, load_set, runs_by_point, select_runs
from ccfair.spec_input import apply_overrides


def group_retransmissions(spec: Any, summary: dict[str, Any]) -> tuple[int, int]:
    """Retransmissions of flow group A and of flow group B (the first and second [[flows]] entry)."""
    groups = [i for i, _, _ in spec.expand_flows()]
    flows = summary["flows"]
    a = sum(int(f["retransmissions"]) for g, f in zip(groups, flows) if g == 0)
    b = sum(int(f["retransmissions"]) for g, f in zip(groups, flows) if g == 1)
    return a, b


def side(spec: Any, summaries: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Mean retransmissions of A and of B per run, and B's mean share."""
    rt = [group_retransmissions(spec, s) for s in summaries]
    return (
        statistics.fmean(r[0] for r in rt),
        statistics.fmean(r[1] for r in rt),
        statistics.fmean(group_shares(spec, s)[1] for s in summaries),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="sets", action="append", required=True)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--cca", action="append", help="only the points whose flow A runs this CCA")
    ap.add_argument("--seeds", type=int, default=5, help="simulator seeds per kernel run")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sim-set", action="append", default=[], help="override for the simulator side only")
    args = ap.parse_args()
    todo = []
    for name in args.sets:
        ps = load_set(name, Path(args.data))
        runs, _ = runs_by_point(ps)
        todo += [
            (p, select_runs(p, runs[p.id], ps.runs)) for p in ps.points if runs[p.id] and (not args.cca or p.id.split("/")[0] in args.cca)
        ]
    jobs = [
        (apply_overrides(p.raw(), args.sim_set), r["seed"] + 1000 * k, r.get("flow_start_s"), r.get("ts_epoch_ns"))
        for p, kr in todo
        for r in kr
        for k in range(args.seeds)
    ]
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        sims = list(ex.map(_sim_one, *zip(*jobs), chunksize=4))
    print(f"{'point':36s} {'kernel A/B retx':>16s} {'sim A/B retx':>16s} {'kernel B':>8s} {'sim B':>6s}")
    i = 0
    for p, kr in todo:
        spec = p.spec()
        n = len(kr) * args.seeds
        ka, kb, ks = side(spec, [r["summary"] for r in kr])
        sa, sb, ss = side(spec, sims[i : i + n])
        i += n
        print(f"{p.id:36s} {ka:7.0f} /{kb:7.0f} {sa:7.0f} /{sb:7.0f} {ks:8.3f} {ss:6.3f}")


if __name__ == "__main__":
    main()
