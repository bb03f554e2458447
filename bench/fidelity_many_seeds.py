"""The fidelity map with the simulator's expectation: K simulator seeds per kernel run.

    python3 bench/fidelity_many_seeds.py [--set s0 --set map] [--seeds K] [--jobs N] [--out FILE.json]
        [--noise-scale X [--only send|ack]] [--noise-set KEY=NS] [--seed-set N] [--flow-set KEY=VALUE]

`ccfair fidelity` runs the simulator once per counted kernel run (same seed, same measured
flow starts), so each side's mean is over three draws at a map point; at loss-based pairs a
mean of three simulator draws moves by 0.04-0.08 of the link between two equally good models
(a change that moves every event a little reseeds the chaos). To compare two models, this
script runs K seeds per kernel run (seed s, s + 1000, ..., each with that run's measured
starts) and reports the same totals with the simulator side's mean over 3K runs: what remains
is the kernel side's draw and the model's bias. Run it from a tree with the model to measure
(its `ccfair` on the path): the figures of two trees are comparable. `--noise-scale X` multiplies
the host-noise means (spec.py HOST_NOISE; with `--only` the sender's or the ACKs' one): a
what-if on the simulator side. `--seed-set N` takes seeds s + 1000 (N + k) instead: another
independent draw of the same K per kernel run, to see how far a figure moves between draws.
`--noise-set KEY=NS` adds or sets a per-flow host-noise RunConfig key beside spec.py HOST_NOISE's
on the simulator side: e.g. the ACKs' heavy tail, `--noise-set ack_tail_ppm=5000 --noise-set
ack_tail_ns=3000000` (lines.rs `TailLaw`). `--flow-set KEY=VALUE` sets a flow key of the
experiment file (VALUE in TOML) on every flow of every point, on the simulator side: e.g.
`--flow-set sack_compression=true`. Each simulator run replays its kernel run's recorded bottleneck
stalls as outages, as `ccfair fidelity` (`--no-replay-stalls`: not). `--started-after UTC` (`--started-before UTC`) counts only the kernel runs started
later (earlier) (e.g. 2026-11-29T11:07, the testbed's handshake probe timed by the kernel's RTT sample:
docs/testbed.md "Stored runs and the probe").
"""

from __future__ import annotations

import argparse
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ccfair.fidelity.compare import _sim_one, sim_args
from common import add_many_seeds_args, fidelity_points, fidelity_todo, print_fidelity_totals, scaled_host_noise, use_host_noise


def main() -> None:
    ap = argparse.ArgumentParser()
    add_many_seeds_args(ap)
    ap.add_argument("--noise-scale", type=float, default=1.0, help="host-noise means times this")
    ap.add_argument("--only", choices=["send", "ack"], help="scale only the sender's or only the ACKs' noise")
    ap.add_argument("--flow-set", action="append", default=[], metavar="KEY=VALUE", help="a flow key (TOML value) on every flow")
    ap.add_argument("--noise-set", action="append", default=[], metavar="KEY=NS", help="a per-flow host-noise RunConfig key, integer")
    args = ap.parse_args()
    todo = fidelity_todo(args.sets, Path(args.data), args.point, args.started_after, args.started_before)
    settings = flow_settings(args.flow_set)
    jobs = [
        sim_args(with_flows(p.raw(), settings), r, r["seed"] + 1000 * (args.seed_set + k), replay_stalls=args.replay_stalls)
        for p, kr in todo
        for r in kr
        for k in range(args.seeds)
    ]
    noise = scaled_host_noise(args.noise_scale, args.only)
    noise.update({k: int(v) for k, v in flow_settings(args.noise_set).items()})
    with ProcessPoolExecutor(max(1, args.jobs), initializer=use_host_noise, initargs=(noise,)) as ex:
        sims = list(ex.map(_sim_one, *zip(*jobs), chunksize=4))
    points = fidelity_points(todo, sims, args.seeds)
    replay = "replayed" if args.replay_stalls else "not replayed"
    print_fidelity_totals(points, f", {args.seeds} simulator seeds per kernel run, host noise {noise}, recorded stalls {replay}", args.out)


def flow_settings(items: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` items (VALUE a TOML value) as a dict."""
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key.strip()] = tomllib.loads(f"v = {value}")["v"]
    return out


def with_flows(raw: dict, settings: dict[str, object]) -> dict:
    """``raw`` with ``settings`` on every flow."""
    for f in raw.get("flows", []):
        f.update(settings)
    return raw


if __name__ == "__main__":
    main()
