"""Vegas's per-round state at one fidelity point on both backends, and how often a round's minimum
RTT dips (docs/linux-ports.md "Vegas against itself at 20 Mbit/s, 20 ms").

    sudo python3 bench/vegas_rounds.py --set kernel-ccas-delay-probe --point "vegas/vegas 20M 20ms 1bdp" \\
        --seed 2 --out DIR
    python3 bench/vegas_rounds.py --summary DIR [--after 6]
    python3 bench/vegas_rounds.py --summary bench/data/vegas-rounds-2026-12-01/run-a   # and run-b: the stored runs

The testbed side: a copy of the Vegas port (python/ccfair/testbed/bpf/vegas.bpf.c) with a
`bpf_printk` of each round's cwnd, cntRTT, baseRTT, minRTT and diff right after
`tcp_vegas_cong_avoid` computes diff, built into a private CCFAIR_BPF_CACHE under DIR (the port's
source and digest untouched), runs the point once, recorded as `ccfair fidelity collect` records a
run (DIR/kernel_run.json), while the trace pipe is read (DIR/kernel_trace.txt). The simulator
side: `ccfair-bench json` built with the feature vegas-trace (cc/vegas.rs prints the same per
round) on the kernel run's seed, measured flow starts, clock and recorded stalls (as `ccfair
fidelity`; DIR/sim_trace.txt). The summary, per flow and side, from `--after` s on: rounds, the
median of the rounds' minimum RTT, the rounds whose minimum lies more than 0.8 ms below it, and the
window's moves up and down.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The line of vegas.bpf.c after which the traced copy prints the round's state.
DIFF_LINE = "diff = tp->snd_cwnd * (rtt - vegas->baseRTT) / vegas->baseRTT;"
PRINTK = (
    '\n\t\t\tbpf_printk("vg %u %u %u", sk->__sk_common.skc_num, tp->snd_cwnd, vegas->cntRTT);'
    '\n\t\t\tbpf_printk("vg2 %u %u %u", vegas->baseRTT, rtt, diff);'
)
#: A round's minimum this far below the flow's median is a dip, us.
DIP_US = 800


def build_traced(cache: Path) -> None:
    os.environ["CCFAIR_BPF_CACHE"] = str(cache)
    from ccfair.testbed import bpfcc

    bpfcc.build(["vegas"])
    src = bpfcc.ports()["vegas"].read_text()
    if DIFF_LINE not in src:
        raise SystemExit(f"vegas.bpf.c has no line {DIFF_LINE!r} to trace after")
    traced = cache / "vegas_traced.bpf.c"
    traced.write_text(src.replace(DIFF_LINE, DIFF_LINE + PRINTK))
    d = bpfcc.build_dir()
    cmd = ["clang", *bpfcc.CLANG_FLAGS, "-I", str(d), "-I", str(bpfcc.SRC_DIR)]
    subprocess.run([*cmd, "-c", str(traced), "-o", str(d / "vegas.bpf.o")], check=True)


def run_kernel(point, seed: int, out: Path) -> dict:  # type: ignore[no-untyped-def]
    from ccfair.fidelity.collect import run_one
    from common import read_trace_pipe

    build_traced((out / "bpf-cache").resolve())
    stop = threading.Event()
    threading.Thread(target=read_trace_pipe, args=(out / "kernel_trace.txt", stop, "bpf_trace_printk: vg"), daemon=True).start()
    rec = run_one(point, seed)
    stop.set()
    (out / "kernel_run.json").write_text(json.dumps(rec))
    return rec


def run_sim(point, rec: dict, out: Path) -> None:  # type: ignore[no-untyped-def]
    from ccfair.fidelity.compare import recorded_stalls, with_outages
    from ccfair.spec import Spec

    target = ROOT / "target" / "vegas-trace"
    cargo = ["cargo", "build", "--release", "-q", "-p", "ccfair-bench", "--features", "vegas-trace", "--target-dir", str(target)]
    subprocess.run(["nice", "-n", "15", *cargo], check=True, cwd=ROOT)
    stalls = recorded_stalls(rec)
    config = Spec.from_dict(with_outages(point.raw(), stalls) if stalls else point.raw()).to_run_config(rec["seed"])
    for fc, t in zip(config["flows"], rec["flow_start_s"]):
        fc["start_ns"], fc["start_jitter_ns"] = max(0, round(t * 1e9)), 0
    if rec.get("ts_epoch_ns") is not None:
        config["tcp_timestamp_epoch_ns"] = int(rec["ts_epoch_ns"])
    (out / "sim_config.json").write_text(json.dumps(config))
    with open(out / "sim_trace.txt", "w") as err, open(out / "sim_result.json", "w") as res:
        subprocess.run([str(target / "release" / "ccfair-bench"), "json", str(out / "sim_config.json")], stdout=res, stderr=err, check=True)


def lines(path: Path) -> object:
    """A text file's lines; `path` or, if only that is there, `path`.gz."""
    return path.open() if path.exists() else gzip.open(str(path) + ".gz", "rt")


def kernel_rounds(path: Path) -> dict[str, list[tuple[float, int, int, int, int, int]]]:
    """Per local port: (time s, cwnd, cntRTT, baseRTT us, minRTT us, diff) per round."""
    flows: dict[str, list] = collections.defaultdict(list)
    cur = None
    for line in lines(path):  # type: ignore[attr-defined]
        m = re.search(r"([\d.]+): bpf_trace_printk: (vg2?) (\d+) (\d+) (\d+)", line)
        if not m:
            continue
        t, tag, a, b, c = float(m.group(1)), m.group(2), *map(int, m.group(3, 4, 5))
        if tag == "vg":
            cur = (t, str(a), b, c)
        elif cur:
            flows[cur[1]].append((cur[0], cur[2], cur[3], a, b, c))
            cur = None
    return flows


def sim_rounds(path: Path) -> dict[str, list[tuple[float, int, int, int, int, int]]]:
    flows: dict[str, list] = collections.defaultdict(list)
    for line in lines(path):  # type: ignore[attr-defined]
        f = line.split()
        if len(f) == 8 and f[0] == "vg":
            flows[f[1]].append((int(f[2]) / 1e9, *map(int, f[3:])))
    return flows


def describe(label: str, rounds: list, since: float) -> None:
    rows = [r for r in rounds if r[0] >= since]
    if len(rows) < 2:
        return
    mins = [r[4] for r in rows]
    med = statistics.median(mins)
    dips = sum(1 for m in mins if m < med - DIP_US)
    up = sum(1 for a, b in zip(rows, rows[1:]) if b[1] > a[1])
    down = sum(1 for a, b in zip(rows, rows[1:]) if b[1] < a[1])
    print(
        f"{label}: {len(rows)} rounds, minimum RTT median {med / 1e3:.2f} ms, {dips} dips > {DIP_US} us, "
        f"cwnd +1 {up}, -1 {down}, cwnd at the end {rows[-1][1]}, baseRTT {rows[-1][3] / 1e3:.2f} ms"
    )


def summary(out: Path, after: float) -> None:
    k = kernel_rounds(out / "kernel_trace.txt")
    t0 = min(r[0][0] for r in k.values())
    for port, rounds in sorted(k.items(), key=lambda kv: kv[1][0][0]):
        describe(f"kernel flow (port {port})", rounds, t0 + after)
    for i, rounds in enumerate(sorted(sim_rounds(out / "sim_trace.txt").values(), key=lambda r: r[0][0])):
        describe(f"simulator flow {'AB'[i] if i < 2 else i}", rounds, after)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import add_point_args

    ap = argparse.ArgumentParser()
    add_point_args(ap, "kernel-ccas-delay-probe", "vegas-rounds")
    ap.add_argument("--summary", help="a directory of this script's output")
    ap.add_argument("--after", type=float, default=6.0, help="count rounds from this many seconds on")
    args = ap.parse_args()
    if args.summary:
        return summary(Path(args.summary), args.after)
    from ccfair.fidelity.points import load_set

    point = next((p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point), None)
    if point is None:
        ap.error("--point: an id of the set")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rec = run_kernel(point, args.seed, out)
    run_sim(point, rec, out)
    summary(out, args.after)


if __name__ == "__main__":
    main()
