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
import statistics
import sys
import tempfile
import threading
from pathlib import Path

#: The line of vegas.bpf.c after which the traced copy prints the round's state.
DIFF_LINE = "diff = tp->snd_cwnd * (rtt - vegas->baseRTT) / vegas->baseRTT;"
PRINTK = (
    '\n\t\t\tbpf_printk("vg %u %u %u", sk->__sk_common.skc_num, tp->snd_cwnd, vegas->cntRTT);'
    '\n\t\t\tbpf_printk("vg2 %u %u %u", vegas->baseRTT, rtt, diff);'
)
#: A round's minimum this far below the flow's median is a dip, us.
DIP_US = 800


def run_kernel(point, seed: int, out: Path) -> dict:  # type: ignore[no-untyped-def]
    """The point once on the testbed with the traced port, the trace pipe read meanwhile."""
    from ccfair.fidelity.collect import run_one
    from ccfair.testbed import bpfcc
    from common import build_traced_port, read_trace_pipe

    src = bpfcc.ports()["vegas"].read_text()
    if DIFF_LINE not in src:
        raise SystemExit(f"vegas.bpf.c has no line {DIFF_LINE!r} to trace after")
    build_traced_port("vegas", (out / "bpf-cache").resolve(), source=src.replace(DIFF_LINE, DIFF_LINE + PRINTK))
    stop = threading.Event()
    threading.Thread(target=read_trace_pipe, args=(out / "kernel_trace.txt", stop, "bpf_trace_printk: vg"), daemon=True).start()
    rec = run_one(point, seed)
    stop.set()
    (out / "kernel_run.json").write_text(json.dumps(rec))
    return rec


def run_sim(point, rec: dict, out: Path) -> None:  # type: ignore[no-untyped-def]
    from common import kernel_run_config, run_traced_bench

    run_traced_bench("vegas-trace", kernel_run_config(point, rec, replay_stalls=True), out)


def plain(path: Path) -> Path:
    """`path`, or if only `path`.gz is there, a plain copy of it next to a temporary name."""
    if path.exists():
        return path
    tmp = Path(tempfile.mkdtemp()) / path.name
    with gzip.open(str(path) + ".gz", "rt") as z:
        tmp.write_text(z.read())
    return tmp


def kernel_rounds(path: Path) -> dict[str, list[tuple[float, int, int, int, int, int]]]:
    """Per local port: (time s, cwnd, cntRTT, baseRTT us, minRTT us, diff) per round."""
    from common import parse_trace

    flows: dict[str, list] = collections.defaultdict(list)
    cur = None
    for t, tag, v in parse_trace(plain(path), "vg"):
        if tag == "vg":
            cur = (t, str(v[0]), v[1], v[2])
        elif tag == "vg2" and cur:
            flows[cur[1]].append((cur[0], cur[2], cur[3], *v))
            cur = None
    return flows


def sim_rounds(path: Path) -> dict[str, list[tuple[float, int, int, int, int, int]]]:
    flows: dict[str, list] = collections.defaultdict(list)
    for line in plain(path).open():
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
