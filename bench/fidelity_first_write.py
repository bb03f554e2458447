"""What-if: the simulator's flows start sending up to J later than the kernel run's measured start.

    python3 bench/fidelity_first_write.py --jitter-us J [--set s0 --set map] [--seeds K] [--seed-set N]
        [--jobs N] [--point ID ...] [--out FILE.json]

On the testbed a flow's recorded start (`flow_start_s`) is the sender agent's clock just before
`connect()`; its first data frame reaches the bottleneck 0.5-5.8 ms after the handshake's last
ACK (the agent's send thread starting; `first_data_us` of bench/fidelity_overflow.py on testbed
slot logs, bench/data/overflow-episodes-2026-11-30.jsonl), which the simulator, sending at once,
does not have. At loss-based pairs the simulator's share is a function of the flows' sub-millisecond start phase (one seed,
flow A's start moved in 50 us steps: reno/reno 10M 100ms 1bdp 0.49-0.54) and hardly of the
host-noise draws at a fixed start (0.492-0.500 over seeds 4-9). This runs
bench/fidelity_many_seeds.py's comparison (K seeds per kernel run, the measured starts) with each
flow's start delayed by a uniform draw in [0, J) from the run's seed (`start_jitter_ns`), a
what-if on the simulator side, and prints the same totals.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ccfair.fidelity.compare import sim_args
from common import add_many_seeds_args, fidelity_points, fidelity_todo, print_fidelity_totals


def sim_jittered(
    raw: dict[str, Any], seed: int, starts_s: list[float] | None, ts_epoch_ns: int | None, stalls: list[list[int]] | None, jitter_ns: int
) -> dict[str, Any]:
    """compare.py `_sim_one` with each flow's start delayed by a uniform draw in [0, jitter_ns)."""
    from ccfair.api import simulate
    from ccfair.fidelity.compare import with_outages
    from ccfair.result import Result
    from ccfair.spec import Spec

    spec = Spec.from_dict(with_outages(raw, stalls) if stalls else raw)
    config = spec.to_run_config(seed)
    for i, fc in enumerate(config["flows"]):
        if starts_s is not None:
            fc["start_ns"] = max(0, round(starts_s[i] * 1e9))
        fc["start_jitter_ns"] = jitter_ns
    if ts_epoch_ns is not None:
        config["tcp_timestamp_epoch_ns"] = int(ts_epoch_ns)
    return Result.from_raw(spec, config, simulate(config, spec)).summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jitter-us", type=float, required=True, help="J: each flow's start delayed by U[0, J) us")
    add_many_seeds_args(ap)
    args = ap.parse_args()
    if args.jitter_us < 0:
        raise SystemExit(f"--jitter-us {args.jitter_us}: must be >= 0")
    todo = fidelity_todo(args.sets, Path(args.data), args.point, args.started_after, args.started_before)
    jitter_ns = round(args.jitter_us * 1e3)
    jobs = [
        (*sim_args(p.raw(), r, r["seed"] + 1000 * (args.seed_set + k), replay_stalls=args.replay_stalls), jitter_ns)
        for p, kr in todo
        for r in kr
        for k in range(args.seeds)
    ]
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        sims = list(ex.map(sim_jittered, *zip(*jobs), chunksize=4))
    points = fidelity_points(todo, sims, args.seeds)
    print_fidelity_totals(points, f", {args.seeds} simulator seeds per kernel run, starts + U[0, {args.jitter_us:g} us)", args.out)


if __name__ == "__main__":
    main()
