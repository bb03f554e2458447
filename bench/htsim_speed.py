"""Speed of ccfair's simulator against htsim on the same NewReno dumbbells, with the ratio.

htsim is not part of this repository: get it with

    git clone https://github.com/Broadcom/csg-htsim /path/to/csg-htsim

then (g++ with LTO; the ccfair side is the release `ccfair-bench` binary):

    cargo build --release -p ccfair-bench
    python bench/htsim_speed.py --htsim /path/to/csg-htsim [--rounds 5] [--model defaults|matched] [--only A,B,C] [--instructions]

(or set HTSIM_DIR instead of ``--htsim``). The bench builds htsim's library
(the objects of sim/Makefile's OBJS) with ``g++ -O3 -flto -DNDEBUG`` into
``--build`` (default bench/htsim/build, not tracked) and links
bench/htsim/dumbbell_reno.cpp, the scenario written for this comparison.

Scenarios (Reno / NewReno flows, drop-tail, 1 BDP of 1500-byte packets, all
flows' RTTs equal):

- ``A``: 2 flows, 10 Mbit/s, 50 ms, 45 s;
- ``B``: 10 flows, 1 Gbit/s, 10 ms, 10 s;
- ``C``: 2000 flows, 10 Gbit/s, 10 ms, 2 s.

ccfair runs each as an experiment file would (``Spec.to_run_config``): with
``--model defaults`` the product's defaults (host noise, TSO/GSO, delayed
ACKs, SACK, RACK, ...); with ``--model matched`` closer to htsim's model (no
host noise, an ACK per packet, no TSO). Both count data packets sent by all
senders (htsim: new data plus the bottleneck's drops, each retransmitted
once) per second of the event loop's wall time (ccfair: `ccfair-bench repeat`,
whole `run`). Rounds interleave the tools (the first alternates); per round
and scenario each tool runs ``--reps`` times (median). Printed: per
scenario the medians over rounds of both tools' packets per wall second and
of the per-round ratio ccfair / htsim, with their ranges. With
``--instructions`` (valgrind installed) also each tool's instructions per
data packet (callgrind, one run of the whole process) and per wall second
(times the median packets per wall second): a tool's rate of instructions is
what its code's instructions per clock allow on the host, so the target
ccfair / htsim needs at most (the higher rate) / (target x htsim's packets per
wall second) instructions per data packet unless ccfair's code reaches a
higher instruction rate than either tool measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from callgrind_phases import callgrind_process

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PKT_BYTES = 1500
CXXFLAGS = ["-std=c++11", "-O3", "-flto", "-DNDEBUG", "-w"]


@dataclass(frozen=True)
class Scenario:
    name: str
    flows: int
    rate_bps: int
    rtt_ms: int
    seconds: float
    reps: int  # runs per tool per round (short runs: several)

    @property
    def buffer_bytes(self) -> int:
        return round(self.rate_bps * self.rtt_ms / 1000 / 8 / PKT_BYTES) * PKT_BYTES


SCENARIOS = {
    "A": Scenario("A: 2 flows, 10 Mbit/s, 50 ms, 45 s", 2, 10_000_000, 50, 45.0, 9),
    "B": Scenario("B: 10 flows, 1 Gbit/s, 10 ms, 10 s", 10, 1_000_000_000, 10, 10.0, 1),
    "C": Scenario("C: 2000 flows, 10 Gbit/s, 10 ms, 2 s", 2000, 10_000_000_000, 10, 2.0, 1),
}


# ------------------------------------------------------------------ htsim


def build_htsim(src: Path, build: Path, jobs: int) -> Path:
    """libhtsim.a from `src`/sim (-O3 -flto -DNDEBUG) and the dumbbell; returns the binary."""
    sim = src / "sim"
    makefile = (sim / "Makefile").read_text()
    m = re.search(r"^OBJS=(.*)$", makefile, re.M)
    if not m:
        sys.exit(f"error: no OBJS= line in {sim / 'Makefile'} (is --htsim a csg-htsim checkout?)")
    objs = m.group(1).split()
    build.mkdir(parents=True, exist_ok=True)
    exe = build / "dumbbell_reno"
    main = HERE / "htsim" / "dumbbell_reno.cpp"
    stamp = build / "flags"
    flags = " ".join(CXXFLAGS) + f" {src.resolve()}"
    if exe.exists() and stamp.exists() and stamp.read_text() == flags and exe.stat().st_mtime > main.stat().st_mtime:
        return exe

    def compile_one(o: str) -> None:
        cpp = sim / o.replace(".o", ".cpp")
        subprocess.run(["g++", *CXXFLAGS, "-I", str(sim), "-c", str(cpp), "-o", str(build / o)], check=True)

    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(compile_one, objs))
    lib = build / "libhtsim.a"
    lib.unlink(missing_ok=True)
    subprocess.run(["gcc-ar", "rcs", str(lib), *(str(build / o) for o in objs)], check=True)
    subprocess.run(["g++", *CXXFLAGS, "-I", str(sim), str(main), str(lib), "-o", str(exe)], check=True)
    stamp.write_text(flags)
    return exe


def htsim_args(exe: Path, sc: Scenario) -> list[str]:
    return [str(exe), str(sc.flows), str(sc.rate_bps), str(sc.rtt_ms * 1000), str(sc.seconds), str(sc.buffer_bytes)]


def run_htsim(exe: Path, sc: Scenario) -> tuple[int, float]:
    out = subprocess.run(htsim_args(exe, sc), check=True, capture_output=True, text=True).stdout
    m = re.search(r"data_packets (\d+) wall_s ([\d.]+)", out)
    if not m:
        sys.exit(f"error: unexpected htsim output: {out[-300:]!r}")
    return int(m.group(1)), float(m.group(2))


# ----------------------------------------------------------------- ccfair


def ccfair_config(sc: Scenario, model: str) -> dict:
    from ccfair.spec import Spec

    flow = {"name": "reno", "cca": "reno", "rtt": f"{sc.rtt_ms}ms", "count": sc.flows}
    if model == "matched":
        flow |= {"delayed_ack": False, "tso": False}
    spec = {
        "name": sc.name,
        "duration": f"{sc.seconds}s",
        "bottleneck": {"rate": sc.rate_bps, "buffer": "1bdp", "qdisc": "droptail"},
        "flows": [flow],
    }
    if model == "matched":
        spec["noise"] = "none"
    return Spec.from_dict(spec).to_run_config(1)


def ccfair_args(bench: Path, config: Path, reps: int) -> list[str]:
    return [str(bench), "repeat", str(reps), str(config)]


def run_ccfair(bench: Path, config: Path, reps: int) -> tuple[int, float]:
    out = subprocess.run(ccfair_args(bench, config, reps), check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([\d.]+) ms .* data pkts (\d+)", out)
    if not m:
        sys.exit(f"error: unexpected ccfair-bench output: {out!r}")
    return int(m.group(2)), float(m.group(1)) / 1e3


# ------------------------------------------------------- instruction rates

#: The speed targets, ccfair / htsim in data packets per wall second (docs/benchmarks.md).
TARGETS = {"A": 1.5, "B": 2.0, "C": 2.0}


def instructions_per_packet(args: list[str], packets_re: str) -> float:
    """Instructions of the whole process (valgrind's callgrind) per data packet of its run."""
    with tempfile.TemporaryDirectory() as d:
        refs, pkts = callgrind_process(args, Path(d) / "cg.out", packets_re)
    return refs / pkts


def print_instruction_rates(names: list[str], rows: dict[str, list[dict]], ipp: dict[str, dict[str, float]]) -> None:
    """Each tool's instructions per wall second (instructions per data packet x median data packets per
    wall second) and the instructions per data packet ccfair's target needs at the higher of the two rates."""
    print(
        "\n| scenario | instructions per data packet: htsim / ccfair | G instructions per wall second: htsim / ccfair | target | instructions per data packet the target needs at the higher rate |"
    )
    print("|---|---|---|---|---|")
    for n in names:
        pps = {t: statistics.median(x[t]["pkts_per_s"] for x in rows[n]) for t in ("htsim", "ccfair")}
        rate = {t: ipp[n][t] * pps[t] for t in pps}
        need = max(rate.values()) / (TARGETS[n] * pps["htsim"])
        print(
            f"| {n} | {ipp[n]['htsim']:.0f} / {ipp[n]['ccfair']:.0f} | {rate['htsim'] / 1e9:.1f} / {rate['ccfair'] / 1e9:.1f} "
            f"| {TARGETS[n]}x | {need:.0f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", type=Path, default=os.environ.get("HTSIM_DIR"), help="checkout of Broadcom/csg-htsim (or HTSIM_DIR)")
    ap.add_argument("--build", type=Path, default=HERE / "htsim" / "build")
    ap.add_argument("--ccfair-bench", type=Path, default=REPO / "target" / "release" / "ccfair-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--model", choices=("defaults", "matched"), default="defaults")
    ap.add_argument("--only", default="A,B,C", help="comma-separated scenarios")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compiles of htsim")
    ap.add_argument("--json", type=Path, help="also write every round's figures here")
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="also count both tools' instructions per data packet (valgrind's callgrind, one run each) and print their instruction rates",
    )
    a = ap.parse_args()
    if a.htsim is None or not (a.htsim / "sim" / "Makefile").exists():
        sys.exit("error: --htsim (or HTSIM_DIR): a checkout of https://github.com/Broadcom/csg-htsim is required")
    if not a.ccfair_bench.exists():
        sys.exit(f"error: {a.ccfair_bench} missing: cargo build --release -p ccfair-bench")
    names = [n.strip() for n in a.only.split(",")]
    if bad := [n for n in names if n not in SCENARIOS]:
        sys.exit(f"error: --only: unknown scenario(s) {bad}; allowed: {', '.join(SCENARIOS)}")
    exe = build_htsim(a.htsim, a.build, a.jobs)
    tmp = Path(tempfile.mkdtemp(prefix="ccfair-htsim-"))
    configs = {}
    for n in names:
        configs[n] = tmp / f"{n}.json"
        configs[n].write_text(json.dumps(ccfair_config(SCENARIOS[n], a.model)))
    ipp = {}
    if a.instructions:
        for n in names:
            ipp[n] = {
                "htsim": instructions_per_packet(htsim_args(exe, SCENARIOS[n]), r"data_packets (\d+)"),
                "ccfair": instructions_per_packet(ccfair_args(a.ccfair_bench, configs[n], 1), r"data pkts (\d+)"),
            }
    rows: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(a.rounds):
        for n in names:
            sc = SCENARIOS[n]
            order = ["htsim", "ccfair"] if r % 2 == 0 else ["ccfair", "htsim"]
            got = {}
            for tool in order:
                if tool == "htsim":
                    runs = [run_htsim(exe, sc) for _ in range(sc.reps)]
                    got["htsim"] = (runs[0][0], statistics.median(w for _, w in runs))
                else:
                    got["ccfair"] = run_ccfair(a.ccfair_bench, configs[n], sc.reps)
            row = {k: {"packets": p, "wall_s": w, "pkts_per_s": p / w} for k, (p, w) in got.items()}
            row["ratio"] = row["ccfair"]["pkts_per_s"] / row["htsim"]["pkts_per_s"]
            row["load"] = os.getloadavg()[0]
            rows[n].append(row)
            print(
                f"round {r + 1} {n}: htsim {row['htsim']['pkts_per_s'] / 1e6:.2f} M/s ({row['htsim']['packets']} pkts), "
                f"ccfair {row['ccfair']['pkts_per_s'] / 1e6:.2f} M/s ({row['ccfair']['packets']} pkts), "
                f"ratio {row['ratio']:.2f}, load {row['load']:.1f}",
                flush=True,
            )
    print(f"\nmodel: {a.model}; medians of {a.rounds} rounds (range)")
    print("| scenario | htsim data pkts/s | ccfair data pkts/s | ccfair / htsim |")
    print("|---|---|---|---|")
    for n in names:
        rs = rows[n]

        def fig(xs: list[float], scale: float = 1e6, fmt: str = ".2f", unit: str = " M") -> str:
            return f"{statistics.median(xs) / scale:{fmt}}{unit} ({min(xs) / scale:{fmt}}-{max(xs) / scale:{fmt}})"

        h = [x["htsim"]["pkts_per_s"] for x in rs]
        c = [x["ccfair"]["pkts_per_s"] for x in rs]
        q = [x["ratio"] for x in rs]
        print(f"| {SCENARIOS[n].name} | {fig(h)} | {fig(c)} | **{fig(q, 1, '.2f', '')}** |")
    if a.instructions:
        print_instruction_rates(names, rows, ipp)
    if a.json:
        a.json.write_text(json.dumps({"model": a.model, "rounds": rows, "instructions_per_packet": ipp}, indent=1))


if __name__ == "__main__":
    main()
