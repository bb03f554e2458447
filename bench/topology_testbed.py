"""The parking lot (examples/parking-lot.toml) on the testbed (root) next to the simulator.

``collect`` runs the example on the testbed for seeds FIRST..FIRST+RUNS-1 (at most ``--jobs``
runs at a time; every link in ccfair-bottleneck) and appends one JSON line per run to the data
file (``--data``): per flow its share of the bytes delivered in the analysis window, throughput,
max-min share, drops, data packets sent and measured start, per link utilisation, queue and
drops, and the run's quality-gate facts (bottleneck lateness, host load per CPU).
``compare`` runs the simulator for the same seeds and prints, per flow, the mean share on each
backend and their difference over the runs that pass the testbed's quality gate (p99 lateness
<= one frame time, load <= 10 per CPU, every flow started <= 0.5 s late; ccfair.testbed.quality,
ccfair.fidelity.points), and the drop probability per packet and link of the long flow against
the cross flows' on both backends (docs/topology.md, "Simulator and testbed").
``sim`` runs only the simulator for RUNS seeds (the literature check's variants); ``phase`` the
simulator with the cross flows' RTT moved by fractions of one frame time (the phase effect).
``--set`` overrides apply to both (e.g. every flow's CCA).

    python bench/topology_testbed.py collect --runs 3 --jobs 1
    python bench/topology_testbed.py compare
    python bench/topology_testbed.py sim --runs 6 --set flows.0.rtt=40ms
    python bench/topology_testbed.py phase --runs 12 --steps 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import ROOT, ccfair_json

EXAMPLE = ROOT / "examples" / "parking-lot.toml"
DATA = ROOT / "bench" / "data" / "topology-parking-lot-testbed-2026-11-29.jsonl"
#: One 1514-byte frame at the example's 10 Mbit/s, ns.
FRAME_NS = 1514 * 8 * 1000 // 10


def run(seed: int, backend: str, sets: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as out:
        args = ["run", str(EXAMPLE), "--json", "--seed", str(seed), "--backend", backend, "--out", out]
        for x in sets:
            args += ["--set", x]
        s, error = ccfair_json(args)
        if s is None:
            return {"seed": seed, "backend": backend, "set": sets, "error": error}
        import pandas as pd

        table = pd.read_parquet(Path(out) / "flows.parquet").set_index("name")
    row = {
        "seed": seed,
        "backend": backend,
        "set": sets,
        "flows": {
            f["name"]: {
                **{k: f[k] for k in ("share", "throughput_bps", "maxmin_share", "cca")},
                **{k: int(table.loc[f["name"], k]) for k in ("drops", "sent_packets")},
                "start_s": float(table.loc[f["name"], "start_s"]),
            }
            for f in s["flows"]
        },
        "links": s.get("links"),
    }
    if "testbed" in s:
        for f in s["testbed"]["flows"]:  # the path's base RTT (handshakes, no added delay) and the kernel's min_rtt
            row["flows"][f["name"]].update({k: f[k] for k in ("base_rtt_ms", "min_rtt_ms")})
        bn = s["testbed"]["bottleneck"]
        row["load_avg_1min"] = s["testbed"]["load_avg_1min"]
        row["cpus"] = os.cpu_count()
        row.update({k: bn[k] for k in ("late_p50_us", "late_p99_us", "late_max_ns")})
    return row


def gate(row: dict) -> list[str]:
    """What a stored testbed run exceeds of the quality gate (empty: it passes)."""
    from ccfair.fidelity.points import FLOW_START_LATE_MAX_S
    from ccfair.testbed import quality

    if "late_p99_us" not in row:
        return ["no host facts"]
    facts = {
        "late_p99_us": row["late_p99_us"],
        "frame_time_us": FRAME_NS / 1000,
        "load_per_cpu": row["load_avg_1min"] / row["cpus"],
    }
    out = quality.over_limits(facts)
    late = max(f["start_s"] for f in row["flows"].values())  # every flow of the example starts at 0
    if late > FLOW_START_LATE_MAX_S:
        out.append(f"a flow started {late:.2f} s late")
    return out


def stored(data: Path, sets: list[str]) -> list[dict]:
    if not data.exists():
        return []
    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("set", []) == sets and "flows" in r]


def _sd(x: list[float]) -> float:
    return statistics.stdev(x) if len(x) > 1 else 0.0


def drop_probability(rows: list[dict], names: list[str]) -> tuple[float, float]:
    """Mean over runs of the drop probability per data packet and link crossed: the first flow
    (the long one, crossing every link) and the mean of the others (one link each)."""
    n_links = len(rows[0]["links"])
    long = [r["flows"][names[0]]["drops"] / r["flows"][names[0]]["sent_packets"] / n_links for r in rows]
    cross = [statistics.mean(r["flows"][n]["drops"] / r["flows"][n]["sent_packets"] for n in names[1:]) for r in rows]
    return statistics.mean(long), statistics.mean(cross)


def compare(data: Path, sets: list[str]) -> None:
    every = stored(data, sets)
    if not every:
        sys.exit(f"no stored testbed runs with --set {sets} in {data}")
    tb = [r for r in every if not gate(r)]
    for r in every:
        if gate(r):
            print(f"seed {r['seed']}: left out, {'; '.join(gate(r))}")
    if not tb:
        sys.exit("no stored run passes the quality gate")
    sim = [run(r["seed"], "sim", sets) for r in tb]
    names = list(tb[0]["flows"])
    print(f"{len(tb)} of {len(every)} testbed runs pass the gate: seeds {[r['seed'] for r in tb]}, --set {sets}")
    print("| flow | share, simulator (mean ± sd) | share, testbed (mean ± sd) | difference | max-min share sim / testbed |")
    print("|---|---|---|---|---|")
    for n in names:
        a = [r["flows"][n]["share"] for r in sim]
        b = [r["flows"][n]["share"] for r in tb]
        ma = [r["flows"][n]["maxmin_share"] for r in sim]
        mb = [r["flows"][n]["maxmin_share"] for r in tb]
        print(
            f"| {n} | {statistics.mean(a):.3f} ± {_sd(a):.3f} | {statistics.mean(b):.3f} ± {_sd(b):.3f} | "
            f"{statistics.mean(b) - statistics.mean(a):+.3f} | {statistics.mean(ma):.2f} / {statistics.mean(mb):.2f} |"
        )
    loads = [r["load_avg_1min"] / r["cpus"] for r in tb]
    print(
        f"testbed: load per CPU {min(loads):.1f}-{max(loads):.1f}, bottleneck lateness p99 {max(r['late_p99_us'] for r in tb)} us at most"
    )
    for label, rows in (("simulator", sim), ("testbed", tb)):
        util = [[lk["utilisation"] for lk in r["links"]] for r in rows]
        pl, px = drop_probability(rows, names)
        print(
            f"{label}: link utilisation (mean over runs) " + ", ".join(f"{statistics.mean(u):.3f}" for u in zip(*util)) + f"; drops per "
            f"packet and link: {names[0]} {pl:.3%}, the others {px:.3%} (ratio {pl / px:.2f})"
        )


def sim_only(sets: list[str], seeds: range) -> None:
    """The simulator alone: per flow its mean share, throughput and max-min share over ``seeds``."""
    rows = [run(seed, "sim", sets) for seed in seeds]
    bad = [r for r in rows if "flows" not in r]
    if bad:
        sys.exit(bad[0]["error"])
    print(f"simulator, seeds {list(seeds)}, --set {sets}")
    print("| flow | share (mean ± sd) | throughput (Mbit/s) | max-min share (mean ± sd) |")
    print("|---|---|---|---|")
    for n in rows[0]["flows"]:
        a = [r["flows"][n]["share"] for r in rows]
        t = [r["flows"][n]["throughput_bps"] / 1e6 for r in rows]
        m = [r["flows"][n]["maxmin_share"] for r in rows]
        print(f"| {n} | {statistics.mean(a):.3f} ± {_sd(a):.3f} | {statistics.mean(t):.2f} | {statistics.mean(m):.2f} ± {_sd(m):.2f} |")
    util = [[lk["utilisation"] for lk in r["links"]] for r in rows]
    print("link utilisation (mean over runs) " + ", ".join(f"{statistics.mean(u):.3f}" for u in zip(*util)))


def phase(sets: list[str], seeds: range, steps: int, jobs: int) -> None:
    """The simulator with every cross flow's RTT raised by k/steps of one frame time (k = 0..steps-1):
    the long flow's share and its drops per packet and link against the cross flows'."""
    from ccfair.spec import Spec

    spec = Spec.from_toml(EXAMPLE).with_overrides(sets) if sets else Spec.from_toml(EXAMPLE)
    cross = [i for i, f in enumerate(spec.flows) if i > 0]
    print(f"simulator, seeds {seeds.start}-{seeds.stop - 1}, cross flows' RTT + k/{steps} of a frame time ({FRAME_NS / 1e6:.4f} ms)")
    print("| offset (us) | long flow's share (mean ± sd) | drops per packet and link: long / cross |")
    print("|---|---|---|")
    means = []
    for k in range(steps):
        off_ns = k * FRAME_NS // steps
        extra = [f"flows.{i}.rtt={(spec.flows[i].rtt + off_ns) / 1e6}ms" for i in cross]
        with ThreadPoolExecutor(jobs) as ex:
            rows = list(ex.map(lambda s: run(s, "sim", [*sets, *extra]), seeds))
        names = list(rows[0]["flows"])
        share = [r["flows"][names[0]]["share"] for r in rows]
        pl, px = drop_probability(rows, names)
        means.append(statistics.mean(share))
        print(f"| {off_ns / 1000:.0f} | {statistics.mean(share):.3f} ± {_sd(share):.3f} | {pl / px:.2f} |")
    print(f"mean over the offsets: {statistics.mean(means):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("collect", "compare", "sim", "phase"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--set", action="append", default=[], dest="sets")
    a = ap.parse_args()
    seeds = range(a.first_seed, a.first_seed + a.runs)
    if a.what == "collect":
        a.data.parent.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(a.jobs) as ex, a.data.open("a") as f:
            for r in ex.map(lambda s: run(s, "testbed", a.sets), seeds):
                f.write(json.dumps(r) + "\n")
                f.flush()
                print(json.dumps(r)[:300], flush=True)
    elif a.what == "sim":
        sim_only(a.sets, seeds)
    elif a.what == "phase":
        phase(a.sets, seeds, a.steps, a.jobs)
    else:
        compare(a.data, a.sets)


if __name__ == "__main__":
    main()
