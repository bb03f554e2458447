"""The parking lot (examples/parking-lot.toml) on the testbed (root) next to the simulator.

``collect`` runs the example on the testbed for seeds FIRST..FIRST+RUNS-1 (at most ``--jobs``
runs at a time; every link in ccfair-bottleneck) and appends one JSON line per run to
bench/data/topology-parking-lot-testbed.jsonl: per flow its share of the bytes delivered in
the analysis window, its throughput and max-min share, and per link utilisation, queue and drops.
``compare`` runs the simulator for the same seeds and prints, per flow, the mean share on
each backend and their difference (docs/topology.md, "Simulator and testbed"); ``sim`` runs only
the simulator for RUNS seeds (the literature check's variants).
``--set`` overrides apply to both (e.g. every flow's CCA).

    python bench/topology_testbed.py collect --runs 3 --jobs 2
    python bench/topology_testbed.py compare
    python bench/topology_testbed.py sim --runs 6 --set flows.0.rtt=40ms
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

from common import ROOT, ccfair_json

EXAMPLE = ROOT / "examples" / "parking-lot.toml"
OUT = ROOT / "bench" / "data" / "topology-parking-lot-testbed.jsonl"


def run(seed: int, backend: str, sets: list[str]) -> dict:
    args = ["run", str(EXAMPLE), "--json", "--seed", str(seed), "--backend", backend]
    for s in sets:
        args += ["--set", s]
    s, error = ccfair_json(args)
    if s is None:
        return {"seed": seed, "backend": backend, "set": sets, "error": error}
    return {
        "seed": seed,
        "backend": backend,
        "set": sets,
        "flows": {f["name"]: {k: f[k] for k in ("share", "throughput_bps", "maxmin_share", "cca")} for f in s["flows"]},
        "links": s.get("links"),
        **({"load_avg_1min": s["testbed"]["load_avg_1min"]} if "testbed" in s else {}),
        **({k: s["testbed"]["bottleneck"][k] for k in ("late_p99_us", "late_max_ns")} if "testbed" in s else {}),
    }


def stored(sets: list[str]) -> list[dict]:
    if not OUT.exists():
        return []
    rows = [json.loads(line) for line in OUT.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("set", []) == sets and "flows" in r]


def compare(sets: list[str]) -> None:
    tb = stored(sets)
    if not tb:
        sys.exit(f"no stored testbed runs with --set {sets} in {OUT}")
    sim = [run(r["seed"], "sim", sets) for r in tb]
    names = list(tb[0]["flows"])
    print(f"seeds {[r['seed'] for r in tb]}, --set {sets}")
    print("| flow | share, simulator (mean ± sd) | share, testbed (mean ± sd) | difference | max-min share sim / testbed |")
    print("|---|---|---|---|---|")
    for n in names:
        a = [r["flows"][n]["share"] for r in sim]
        b = [r["flows"][n]["share"] for r in tb]
        ma = [r["flows"][n]["maxmin_share"] for r in sim]
        mb = [r["flows"][n]["maxmin_share"] for r in tb]
        sd = lambda x: statistics.stdev(x) if len(x) > 1 else 0.0  # noqa: E731
        print(
            f"| {n} | {statistics.mean(a):.3f} ± {sd(a):.3f} | {statistics.mean(b):.3f} ± {sd(b):.3f} | "
            f"{statistics.mean(b) - statistics.mean(a):+.3f} | {statistics.mean(ma):.2f} / {statistics.mean(mb):.2f} |"
        )
    loads = sorted({round(r["load_avg_1min"]) for r in tb if "load_avg_1min" in r})
    for lo, hi in ((0, 6), (6, 100)):
        sub = [i for i, r in enumerate(tb) if lo <= r.get("load_avg_1min", 0) < hi]
        if sub:
            d = statistics.mean(tb[i]["flows"][names[0]]["share"] - sim[i]["flows"][names[0]]["share"] for i in sub)
            print(f"testbed runs at 1-min load {lo}-{hi}: {len(sub)}; {names[0]}'s share, testbed - simulator: {d:+.3f}")
    print(f"load averages (rounded) of the testbed runs: {loads}")
    for label, rows in (("simulator", sim), ("testbed", tb)):
        util = [[lk["utilisation"] for lk in r["links"]] for r in rows]
        print(f"{label}: link utilisation (mean over runs) " + ", ".join(f"{statistics.mean(u):.3f}" for u in zip(*util)))


def sim_only(sets: list[str], seeds: range) -> None:
    """The simulator alone: per flow its mean share, throughput and max-min share over ``seeds``."""
    rows = [run(seed, "sim", sets) for seed in seeds]
    bad = [r for r in rows if "flows" not in r]
    if bad:
        sys.exit(bad[0]["error"])
    print(f"simulator, seeds {list(seeds)}, --set {sets}")
    print("| flow | share (mean ± sd) | throughput (Mbit/s) | max-min share (mean ± sd) |")
    print("|---|---|---|---|")
    sd = lambda x: statistics.stdev(x) if len(x) > 1 else 0.0  # noqa: E731
    for n in rows[0]["flows"]:
        a = [r["flows"][n]["share"] for r in rows]
        t = [r["flows"][n]["throughput_bps"] / 1e6 for r in rows]
        m = [r["flows"][n]["maxmin_share"] for r in rows]
        print(f"| {n} | {statistics.mean(a):.3f} ± {sd(a):.3f} | {statistics.mean(t):.2f} | {statistics.mean(m):.2f} ± {sd(m):.2f} |")
    util = [[lk["utilisation"] for lk in r["links"]] for r in rows]
    print("link utilisation (mean over runs) " + ", ".join(f"{statistics.mean(u):.3f}" for u in zip(*util)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("collect", "compare", "sim"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], dest="sets")
    a = ap.parse_args()
    if a.what == "collect":
        OUT.parent.mkdir(parents=True, exist_ok=True)
        seeds = range(a.first_seed, a.first_seed + a.runs)
        with ThreadPoolExecutor(a.jobs) as ex, OUT.open("a") as f:
            for r in ex.map(lambda s: run(s, "testbed", a.sets), seeds):
                f.write(json.dumps(r) + "\n")
                f.flush()
                print(json.dumps(r)[:300], flush=True)
    elif a.what == "sim":
        sim_only(a.sets, range(a.first_seed, a.first_seed + a.runs))
    else:
        compare(a.sets)


if __name__ == "__main__":
    main()
