"""The BPF twins of cubic and reno against the kernel's built-in modules, on the testbed (root).

Each point runs flow A = reno and flow B = cubic (10 Mbit/s, 50 ms, drop-tail at the given
buffer, B starting 5 s after A; 25 s, window 10-25 s) with the host's modules
(`testbed.cca_impl = "auto"`) and with ccfair's BPF ports of tcp_cong.c's reno and
tcp_cubic.c (`"bpf"`), interleaved seed by seed, at most two runs at a time. Writes one JSON
line per run to bench/data/bpf_twins.jsonl and prints, per point, flow B's mean share with
each implementation and their difference (docs/ccas.md, "BPF twins").

    python bench/bpf_twins.py --runs 5 --jobs 2
    python bench/bpf_twins.py --summary          # only the table, from the stored lines
"""

from __future__ import annotations

import argparse
import json
import statistics
from concurrent.futures import ThreadPoolExecutor

from common import ROOT, ccfair_json

OUT = ROOT / "bench" / "data" / "bpf_twins.jsonl"
EXAMPLE = ROOT / "examples" / "s0-cubic-vs-bbr.toml"
BUFFERS = ("0.5bdp", "1bdp", "2bdp")
IMPLS = ("auto", "bpf")


def run_one(buffer: str, impl: str, seed: int) -> dict:
    args = [
        "run", str(EXAMPLE), "--backend", "testbed", "--json", "--seed", str(seed),
        "--set", "flows.0.cca=reno", "--set", "flows.1.cca=cubic", "--set", f"bottleneck.buffer={buffer}",
        "--set", "duration=25s", "--set", "window.start=10s", "--set", "window.end=25s",
        "--set", f"testbed.cca_impl={impl}",
    ]  # fmt: skip
    s, error = ccfair_json(args)
    if s is None:
        return {"buffer": buffer, "impl": impl, "seed": seed, "error": error}
    return {
        "buffer": buffer,
        "impl": impl,
        "seed": seed,
        "share_b": s["flows"][1]["share"],
        "throughput_bps": [f["throughput_bps"] for f in s["flows"]],
        "kernel_names": [c["kernel_name"] for c in s["testbed"]["ccas"]],
        "load_avg_1min": s["testbed"]["load_avg_1min"],
    }


def summary() -> None:
    rows = [json.loads(line) for line in OUT.read_text().splitlines() if line.strip()]
    print("| buffer | share B, modules (mean ± sd, n) | share B, BPF ports (mean ± sd, n) | difference |")
    print("|---|---|---|---|")
    for b in BUFFERS:
        got = {}
        for impl in IMPLS:
            xs = [r["share_b"] for r in rows if r["buffer"] == b and r["impl"] == impl and "share_b" in r]
            got[impl] = xs
        if not all(got.values()):
            continue
        m = {i: statistics.mean(x) for i, x in got.items()}
        sd = {i: statistics.stdev(x) if len(x) > 1 else 0.0 for i, x in got.items()}
        cells = [f"{m[i]:.3f} ± {sd[i]:.3f} ({len(got[i])})" for i in IMPLS]
        print(f"| {b} | {cells[0]} | {cells[1]} | {m['bpf'] - m['auto']:+.3f} |")
    errors = [r for r in rows if "error" in r]
    if errors:
        print(f"{len(errors)} failed runs, e.g. {errors[0]['error']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    if not a.summary:
        tasks = [(b, impl, seed) for seed in range(a.first_seed, a.first_seed + a.runs) for b in BUFFERS for impl in IMPLS]
        OUT.parent.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(a.jobs) as ex, OUT.open("a") as f:
            for r in ex.map(lambda t: run_one(*t), tasks):
                f.write(json.dumps(r) + "\n")
                f.flush()
                print(json.dumps(r), flush=True)
    summary()


if __name__ == "__main__":
    main()
