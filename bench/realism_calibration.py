"""Calibration: run-to-run spread and means, testbed next to simulator.

    python3 bench/realism_calibration.py collect --reps 10 --points spread --jobs 3 --out FILE.jsonl
    python3 bench/realism_calibration.py collect --reps 5 --points s0 --jobs 3 --out FILE.jsonl
    python3 bench/realism_calibration.py table --testbed FILE.jsonl [--seeds 10] [--set noise=none]
    python3 bench/realism_calibration.py fit --testbed FILE.jsonl [--means 0/0,20/20,200/200]
    python3 bench/realism_calibration.py fit --acceptance --testbed FILE.jsonl --first-seed 1 --means ...

Points (10 Mbit/s, 50 ms, drop-tail, examples/s0-cubic-vs-bbr.toml timing:
A at 0 s, B at 5 s, 45 s, window 10-45 s):

* spread: cubic/cubic, reno/reno, reno/cubic, bbr/bbr at 1 BDP; cubic/bbr
  (CUBIC first) at 2 and 4 BDP;
* s0: the 14 S0 points: cubic/bbr in both orders at 0.5, 1, 2, 4, 8 BDP and
  cubic/cubic, reno/reno, bbr/bbr, reno/cubic at 1 BDP.

`collect` runs each point `--reps` times on the testbed (root; each run in a
subprocess, `--jobs` at a time) and appends one JSON line per run (point,
seed, summary, load average) to --out, so an interrupted collection resumes.
`table` runs the simulator with seeds 1..--seeds at the same points and prints
flow B's share (range, mean) and utilization / mean queue next to the
testbed's, as Markdown.

`fit` runs candidate host-noise means (send/ack[/start jitter], us). Without
--acceptance it prints the range of B's share at the --points over --seeds
seeds against the testbed's range. With --acceptance it scores each candidate
on the two acceptance figures at once, on the seeds
--first-seed..--first-seed+9: the six spread points' range ratios (ten seeds
vs all testbed runs; target within 2x) and the 14 S0 points' mean |diff| and
max |diff| (the first five of those seeds vs the first five testbed runs;
targets 0.02 and 0.03). Fitting on one seed set and reading the chosen
candidate again on a fresh one (e.g. --first-seed 11) shows whether the
choice is tuned to one seed set.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ccfair
from ccfair.api import simulate
from ccfair.result import Result
from ccfair.spec import Spec
from testbed_subprocess import testbed_summary

ROOT = Path(__file__).resolve().parent.parent
S0 = ROOT / "examples" / "s0-cubic-vs-bbr.toml"


def point(a: str, b: str, bdp: str) -> dict[str, Any]:
    """Flow A (cca a) at 0 s, flow B (cca b) at 5 s, S0 timing, buffer bdp x BDP."""
    raw = ccfair.Spec.from_toml(S0).raw
    raw["name"] = f"{a}/{b} {bdp} BDP"
    raw["bottleneck"]["buffer"] = f"{bdp}bdp"
    raw["flows"][0]["cca"] = a
    raw["flows"][1]["cca"] = b
    return raw


def points(which: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if which in ("spread", "all"):
        for a, b, bdp in [
            ("cubic", "cubic", "1"),
            ("reno", "reno", "1"),
            ("reno", "cubic", "1"),
            ("bbr", "bbr", "1"),
            ("cubic", "bbr", "2"),
            ("cubic", "bbr", "4"),
        ]:
            out[f"{a}/{b} {bdp}"] = point(a, b, bdp)
    if which in ("s0", "all"):
        for bdp in ["0.5", "1", "2", "4", "8"]:
            out[f"cubic/bbr {bdp}"] = point("cubic", "bbr", bdp)
            out[f"bbr/cubic {bdp}"] = point("bbr", "cubic", bdp)
        for a, b in [("cubic", "cubic"), ("reno", "reno"), ("bbr", "bbr"), ("reno", "cubic")]:
            out[f"{a}/{b} 1"] = point(a, b, "1")
    return out


def share_b(summary: dict[str, Any]) -> float:
    return float(summary["flows"][1]["share"])


def load_runs(path: Path) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                runs.setdefault(r["point"], []).append(r)
    return runs


def collect(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = {(p, r["seed"]) for p, rs in load_runs(out).items() for r in rs}
    tmp = Path("/tmp/ccfair-realism")
    tmp.mkdir(exist_ok=True)
    jobs = [(name, raw, seed) for name, raw in points(args.points).items() for seed in range(1, args.reps + 1) if (name, seed) not in done]

    def one(job: tuple[str, dict[str, Any], int]) -> None:
        name, raw, seed = job
        load = Path("/proc/loadavg").read_text().split()[:3]
        try:
            s = testbed_summary(raw, seed, tmp)
        except RuntimeError as e:
            print(f"{name} seed {seed}: {e}", file=sys.stderr)
            return
        with out.open("a") as fh:
            fh.write(json.dumps({"point": name, "seed": seed, "load": load, "summary": s}) + "\n")
        print(f"{name} seed {seed}: B share {share_b(s):.3f}", flush=True)

    with ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(one, jobs))


def rng(xs: list[float]) -> str:
    return f"{min(xs):.3f}-{max(xs):.3f} ({max(xs) - min(xs):.3f})" if xs else "-"


def mean(xs: list[float]) -> float:
    return statistics.mean(xs) if xs else float("nan")


def table(args: argparse.Namespace) -> None:
    tb = load_runs(Path(args.testbed))
    pts = points(args.points)
    print(
        "| point (A/B, buffer) | B share sim range | B share testbed range | range ratio | B mean sim | B mean testbed | diff | util sim / tb | queue ms sim / tb |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    diffs = []
    for name, raw in pts.items():
        for kv in args.set or []:
            k, v = kv.split("=", 1)
            raw[k] = v
        sims = [ccfair.run(Spec.from_dict(raw), seed=s).summary for s in range(1, args.seeds + 1)]
        tbs = [r["summary"] for r in tb.get(name, [])][: args.tb_reps or None]
        sb, tbb = [share_b(s) for s in sims], [share_b(s) for s in tbs]
        ratio = (max(sb) - min(sb)) / (max(tbb) - min(tbb)) if len(tbb) > 1 and max(tbb) > min(tbb) else float("nan")
        d = mean(sb) - mean(tbb)
        diffs.append(abs(d))
        us, ut = mean([s["utilization"] for s in sims]), mean([s["utilization"] for s in tbs])
        qs, qt = mean([s["queue_delay_ms"]["mean"] for s in sims]), mean([s["queue_delay_ms"]["mean"] for s in tbs])
        print(
            f"| {name} | {rng(sb)} | {rng(tbb)} ({len(tbb)} runs) | {ratio:.2f} | {mean(sb):.3f} | {mean(tbb):.3f} | "
            f"{d:+.3f} | {us:.3f} / {ut:.3f} | {qs:.1f} / {qt:.1f} |",
            flush=True,
        )
    if diffs:
        print(f"\nmean |diff| {mean(diffs):.3f}, max {max(diffs):.3f}")


def sim_summary(raw: dict[str, Any], seed: int, send_ns: int, ack_ns: int, start_ns: int = 0) -> dict[str, Any]:
    """The simulator's summary with the host-noise means (and a start jitter) set explicitly."""
    spec = Spec.from_dict({**raw, "noise": "none"})
    config = spec.to_run_config(seed)
    for fc in config["flows"]:
        fc.update(host_jitter_ns=send_ns, ack_jitter_ns=ack_ns)
        fc["start_jitter_ns"] = max(fc["start_jitter_ns"], start_ns)
    return Result.from_raw(spec, config, simulate(config, spec)).summary


SPREAD_SEEDS = 10
MEAN_SEEDS = 5


def candidate(cand: str) -> tuple[int, int, int]:
    """Candidate send/ack[/start] in microseconds -> nanoseconds."""
    snd, ack, start = (int(float(x) * 1000) for x in (cand.split("/") + ["0", "0"])[:3])
    return snd, ack, start


def acceptance_fit(args: argparse.Namespace) -> None:
    """The Spread and Mean figures per candidate, on seeds --first-seed..+9."""
    tb = load_runs(Path(args.testbed))
    spread, s0 = points("spread"), points("s0")
    seeds = range(args.first_seed, args.first_seed + SPREAD_SEEDS)
    print("| send/ack/start (us) | " + " | ".join(f"{n} ratio" for n in spread) + " | worst ratio | mean abs diff | max abs diff (point) |")
    print("|---|" + "---|" * (len(spread) + 3))
    for cand in args.means.split(","):
        snd, ack, start = candidate(cand)
        ratios, diffs = {}, {}
        for n, raw in s0.items():
            xs = [share_b(sim_summary(raw, s, snd, ack, start)) for s in seeds]
            tbs = [share_b(r["summary"]) for r in tb[n]]
            diffs[n] = mean(xs[:MEAN_SEEDS]) - mean(tbs[:MEAN_SEEDS])
            if n in spread:
                ratios[n] = (max(xs) - min(xs)) / (max(tbs) - min(tbs))
        worst = max(ratios.values(), key=lambda r: abs(math.log2(r)) if r > 0 else 99.0)
        far = max(diffs, key=lambda n: abs(diffs[n]))
        print(
            f"| {cand} | "
            + " | ".join(f"{ratios[n]:.2f}" for n in spread)
            + f" | {worst:.2f} | {mean([abs(d) for d in diffs.values()]):.3f} | {abs(diffs[far]):.3f} ({far} {diffs[far]:+.3f}) |",
            flush=True,
        )


def fit(args: argparse.Namespace) -> None:
    """Range of B's share over --seeds seeds per candidate noise mean vs the testbed's."""
    if args.acceptance:
        acceptance_fit(args)
        return
    tb = load_runs(Path(args.testbed))
    pts = points(args.points)
    tb_rng = {n: (lambda x: max(x) - min(x))([share_b(r["summary"]) for r in tb[n]]) for n in pts if n in tb}
    print(
        "| send/ack mean/start jitter (us) | "
        + " | ".join(f"{n} (tb {tb_rng.get(n, float('nan')):.3f})" for n in pts)
        + " | max abs log2 ratio |"
    )
    print("|---|" + "---|" * (len(pts) + 1))
    for cand in args.means.split(","):
        snd, ack, start = candidate(cand)
        us = cand
        cells, worst = [], 0.0
        for n, raw in pts.items():
            xs = [share_b(sim_summary(raw, s, snd, ack, start)) for s in range(args.first_seed, args.first_seed + args.seeds)]
            r = max(xs) - min(xs)
            ratio = r / tb_rng[n] if tb_rng.get(n) else float("nan")
            worst = max(worst, abs(math.log2(ratio)) if ratio > 0 else 99.0)
            cells.append(f"{r:.3f} ({ratio:.2f}x, mean {statistics.mean(xs):.3f})")
        print(f"| {us} | " + " | ".join(cells) + f" | {worst:.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--reps", type=int, default=10)
    c.add_argument("--jobs", type=int, default=3)
    c.add_argument("--points", default="spread", choices=["spread", "s0", "all"])
    c.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("--testbed", required=True)
    t.add_argument("--points", default="spread", choices=["spread", "s0", "all"])
    t.add_argument("--seeds", type=int, default=10)
    t.add_argument("--tb-reps", type=int, default=0, help="use only the first N testbed runs per point (0: all)")
    t.add_argument("--set", action="append", help="top-level spec key=value for the simulator runs, e.g. noise=none")
    f = sub.add_parser("fit")
    f.add_argument("--testbed", required=True)
    f.add_argument("--points", default="spread", choices=["spread", "s0", "all"])
    f.add_argument("--seeds", type=int, default=10)
    f.add_argument("--first-seed", type=int, default=1)
    f.add_argument("--means", default="0/0,20/20,100/100", help="candidates send/ack[/start jitter], us, comma-separated")
    f.add_argument("--acceptance", action="store_true", help="score each candidate on the Spread and Mean figures")
    args = ap.parse_args()
    {"collect": collect, "table": table, "fit": fit}[args.cmd](args)


if __name__ == "__main__":
    main()
