"""Acceptance figures: the testbed next to the simulator.

    python3 bench/testbed_acceptance.py [--reps 5] [--jobs 3] [--only single,bdp,order,pairs] [--out FILE]

Runs (each on the testbed with `ccfair run --backend testbed` in a
subprocess, `--jobs` at a time, and on the simulator with the same seeds):

* single: one CUBIC and one BBR flow alone, 10 Mbit/s, 50 ms, 1 BDP, 30 s
  (window 5-30 s): utilization and minimum RTT;
* bdp: examples/s0-cubic-vs-bbr.toml (CUBIC first, BBR 5 s later) at 0.5, 1,
  2, 4 and 8 BDP: BBR's share;
* order: the same at every BDP with BBR first (BBR 5 s before CUBIC);
* pairs: two CUBIC and two Reno flows (B 5 s after A) at 1 BDP: JFI.

On the testbed the seed only changes the start jitter (none here), so the
`reps` runs are repetitions. Prints a Markdown table per study and writes
every summary to --out (JSON). Needs root; records `uptime` before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ccfair
from ccfair.spec import Spec
from testbed_subprocess import testbed_summary

ROOT = Path(__file__).resolve().parent.parent
S0 = ROOT / "examples" / "s0-cubic-vs-bbr.toml"
BDPS = ["0.5", "1", "2", "4", "8"]


def single_spec(cca: str) -> dict[str, Any]:
    return {
        "name": f"single {cca}",
        "duration": "30s",
        "window": {"start": "5s"},
        "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
        "flows": [{"cca": cca, "rtt": "50ms"}],
    }


def pair_spec(cca: str) -> dict[str, Any]:
    raw = ccfair.Spec.from_toml(S0).raw
    raw["name"] = f"{cca} pair"
    raw["bottleneck"]["buffer"] = "1bdp"
    raw["flows"][0]["cca"] = cca
    raw["flows"][1]["cca"] = cca
    return raw


def s0_spec(bdp: str, bbr_first: bool = False) -> dict[str, Any]:
    raw = ccfair.Spec.from_toml(S0).raw
    raw["bottleneck"]["buffer"] = f"{bdp}bdp"
    if bbr_first:
        raw["flows"][0]["start"], raw["flows"][1]["start"] = "5s", "0s"
    return raw


def sim(raw: dict[str, Any], seed: int) -> dict[str, Any]:
    return ccfair.run(Spec.from_dict(raw), seed=seed).summary


def share_of(summary: dict[str, Any], cca: str) -> float:
    return sum(f["share"] for f in summary["flows"] if f["cca"] == cca)


def mean_sd(xs: list[float]) -> str:
    if not xs:
        return "-"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.3f} ± {sd:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--only", default="single,bdp,order,pairs")
    ap.add_argument("--out", default="/tmp/testbed_acceptance.json")
    args = ap.parse_args()
    only = set(args.only.split(","))
    tmp = Path("/tmp/ccfair-acceptance")
    tmp.mkdir(exist_ok=True)

    cases: list[tuple[str, dict[str, Any]]] = []
    if "single" in only:
        cases += [(f"single {c}", single_spec(c)) for c in ("cubic", "bbr")]
    if "bdp" in only:
        cases += [(f"cubic-first {b} BDP", s0_spec(b)) for b in BDPS]
    if "order" in only:
        cases += [(f"bbr-first {b} BDP", s0_spec(b, bbr_first=True)) for b in BDPS]
    if "pairs" in only:
        cases += [(f"{c} pair 1 BDP", pair_spec(c)) for c in ("cubic", "reno")]

    load_before = Path("/proc/loadavg").read_text().split()[:3]
    t_start = time.time()
    jobs = [(name, raw, seed) for name, raw in cases for seed in range(1, args.reps + 1)]
    with ThreadPoolExecutor(args.jobs) as ex:
        tb = list(ex.map(lambda j: testbed_summary(j[1], j[2], tmp), jobs))
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    sims = [sim(raw, seed) for _, raw, seed in jobs]

    results: dict[str, Any] = {"load_before": load_before, "load_after": load_after, "wall_s": time.time() - t_start, "cases": {}}
    for (name, _, seed), t, s in zip(jobs, tb, sims):
        results["cases"].setdefault(name, []).append({"seed": seed, "testbed": t, "sim": s})
    Path(args.out).write_text(json.dumps(results, indent=1))

    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}; {len(jobs)} testbed runs, {args.jobs} at a time\n")
    print("| case | metric | simulator (mean ± sd) | testbed (mean ± sd) | testbed per run |")
    print("|---|---|---|---|---|")
    for name, runs in results["cases"].items():
        if name.startswith("single"):
            metrics = [("utilization", lambda s: s["utilization"]), ("min RTT ms", lambda s: s["flows"][0].get("min_rtt_ms", float("nan")))]
        elif "pair" in name:
            metrics = [("JFI", lambda s: s["jfi"])]
        else:
            metrics = [("BBR share", lambda s: share_of(s, "bbr")), ("utilization", lambda s: s["utilization"])]
        for label, fn in metrics:
            simv = [fn(r["sim"]) for r in runs if label != "min RTT ms"]
            tbv = [fn(r["testbed"]) for r in runs]
            per = ", ".join(f"{x:.3f}" for x in tbv)
            print(f"| {name} | {label} | {mean_sd(simv)} | {mean_sd(tbv)} | {per} |")


if __name__ == "__main__":
    main()
