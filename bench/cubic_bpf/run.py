"""Linux's tcp_cubic.c on the testbed's real TCP, per ACK: HyStart and bictcp_update's internals
(docs/linux-ports.md "CUBIC as the second flow at 20 Mbit/s, 100 ms"). Root:

    python bench/cubic_bpf/run.py --point "hybla/cubic 20M 100ms 1bdp" --seed 1 [--set kernel-ccas-loss] [--out DIR]
    python bench/cubic_bpf/run.py --summary DIR/kernel_trace.txt [--from 5 --to 12]

Builds a traced copy of ccfair's CUBIC twin (python/ccfair/testbed/bpf/cubic.bpf.c with bpf_printk
lines inserted at the anchors of TRACE below) into a private BPF cache (CCFAIR_BPF_CACHE under
DIR; the twin's own source and the shared cache are untouched), and runs the point once on the
testbed with `testbed.cca_impl = "bpf"` (flow B's CUBIC is the traced twin) while reading
/sys/kernel/tracing/trace_pipe (the twin follows the testbed's 6.18 module, which B runs in the
stored fidelity runs, HyStart's order of commit 25c1a9ca53db included). Prints B's slow-start exit (HyStart's detector,
cwnd, delay_min, the round's curr_rtt and ACK-train length at the exit or at the first loss),
its window reductions (cwnd, W_max) and its epochs (K, origin, cnt) over the run.

Trace lines (fields after the tag; the socket's local port first):
  cub1 port delay_us delay_min_us cwnd              cubictcp_acked, each RTT sample kept
  cub2 port cwnd since_round_us train_us curr_rtt   hystart_update, each call (after the round reset)
  cub3 port cwnd threshold_us since_round_us        ACK-train exit
  cub4 port cwnd curr_rtt_us delay_min_us           delay exit
  cub5 port cwnd last_max_cwnd                      cubictcp_recalc_ssthresh (before the update)
  cub6 port cwnd acked cnt epoch_start bic_K origin tcp_cwnd   after bictcp_update in cong_avoid
  cub7 port new_state                               cubictcp_state
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import threading
from pathlib import Path

_PORT = "sk->__sk_common.skc_num"
#: (anchor in cubic.bpf.c, trace line inserted after it).
TRACE = [
    ("\t\tca->delay_min = delay;\n", f'bpf_printk("cub1 %u %u %u %u", {_PORT}, delay, ca->delay_min, tcp_snd_cwnd(tp));'),
    (
        "\tif (tcp_snd_cwnd(tp) < (u32)param_hystart_low_window)\n\t\treturn;\n",
        f'bpf_printk("cub2 %u %u %u %u %u", {_PORT}, tcp_snd_cwnd(tp), bictcp_clock_us(sk) - ca->round_start, '
        "bictcp_clock_us(sk) - ca->last_ack, ca->curr_rtt);",
    ),
    (
        "\t\t\tif ((s32)(now - ca->round_start) > threshold) {\n\t\t\t\tca->found = 1;\n",
        f'bpf_printk("cub3 %u %u %u %u", {_PORT}, tcp_snd_cwnd(tp), threshold, now - ca->round_start);',
    ),
    (
        "HYSTART_DELAY_THRESH(ca->delay_min >> 3)) {\n\t\t\t\tca->found = 1;\n",
        f'bpf_printk("cub4 %u %u %u %u", {_PORT}, tcp_snd_cwnd(tp), ca->curr_rtt, ca->delay_min);',
    ),
    (
        "\tca->epoch_start = 0; /* end of epoch */\n",
        f'bpf_printk("cub5 %u %u %u", {_PORT}, tcp_snd_cwnd(tp), ca->last_max_cwnd);',
    ),
    (
        "\tbictcp_update(ca, tcp_snd_cwnd(tp), acked);\n",
        f'bpf_printk("cub6 %u %u %u %u %u %u %u %u", {_PORT}, tcp_snd_cwnd(tp), acked, ca->cnt, ca->epoch_start, '
        "ca->bic_K, ca->bic_origin_point, ca->tcp_cwnd);",
    ),
    (
        "void BPF_PROG(cubictcp_state, struct sock *sk, u8 new_state)\n{\n",
        f'bpf_printk("cub7 %u %u", {_PORT}, new_state);',
    ),
]


def traced_source(src: str) -> str:
    """The twin's source with the trace lines."""
    for anchor, line in TRACE:
        if src.count(anchor) != 1:
            raise SystemExit(f"anchor not found once in cubic.bpf.c: {anchor!r}")
        src = src.replace(anchor, anchor + "\t" + line + "\n")
    return src


def build_traced(cache: Path) -> Path:
    """Compile the traced copy into the private cache's build directory as cubic.bpf.o."""
    os.environ["CCFAIR_BPF_CACHE"] = str(cache)
    from ccfair.testbed import bpfcc

    bpfcc.build()
    d = bpfcc.build_dir()
    traced = d / "cubic_trace.bpf.c"
    traced.write_text(traced_source(bpfcc.ports()["cubic"].read_text()))
    cmd = ["clang", *bpfcc.CLANG_FLAGS, "-I", str(d), "-I", str(bpfcc.SRC_DIR), "-c", str(traced), "-o", str(d / "cubic.bpf.o")]
    subprocess.run(cmd, check=True)
    return d / "cubic.bpf.o"


def parse(path: Path) -> list[tuple[float, str, list[int]]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import parse_trace

    return parse_trace(path, "cub")


def summary(path: Path, t_from: float, t_to: float) -> None:
    """B's slow start, exit and epochs. Times relative to the first cub line (B's first ACK)."""
    ev = parse(path)
    by_port = collections.Counter(v[0] for _, _, v in ev)
    for port, n in by_port.most_common():
        e = [x for x in ev if x[2][0] == port]
        t0 = e[0][0]
        print(f"port {port}: {n} trace lines from {t0:.3f} (times below from there)")
        found = [(t - t0, tag, v) for t, tag, v in e if tag in ("cub3", "cub4")]
        for t, tag, v in found[:1]:
            kind = "ACK train" if tag == "cub3" else "delay"
            print(f"  HyStart exit by {kind} at {t:.3f} s: cwnd {v[1]}, {v[2]} / {v[3]} us")
        rounds = []
        for t, tag, v in e:
            if tag == "cub2" and t - t0 <= t_to:
                if not rounds or v[2] < rounds[-1][2]:
                    rounds.append([t - t0, v[1], v[2], v[3], v[4], 0, 0])
                r = rounds[-1]
                r[2], r[4], r[5] = v[2], v[4], r[5] + 1
                if v[3] <= 2000:
                    r[6] = max(r[6], v[2])
        dmin = [(t - t0, v) for t, tag, v in e if tag == "cub1"]
        for r in rounds[:12]:
            dm = next((v[2] for t, v in reversed(dmin) if t <= r[0] + 1e-6), None) if dmin else None
            print(
                f"  round at {r[0]:.3f} s: cwnd {r[1]}, {r[5]} samples, curr_rtt {r[4]} us, delay_min {dm} us, "
                f"last since round start {r[2]} us, train's last ACK at {r[6]} us"
            )
        red = [(t - t0, v) for t, tag, v in e if tag == "cub5"]
        print("  reductions (s: cwnd, W_max before): " + " ".join(f"{t:.2f}: {v[1]}, {v[2]}" for t, v in red[:30]))
        states = collections.Counter(v[1] for _, tag, v in e if tag == "cub7")
        print(f"  set_state calls per CA state: {dict(sorted(states.items()))}")
        ca = [(t - t0, v) for t, tag, v in e if tag == "cub6" and t_from <= t - t0 <= t_to]
        acked = collections.Counter(v[2] for _, v in ca)
        print(f"  cong_avoid calls {t_from}-{t_to} s: {len(ca)}, acked per call {dict(sorted(acked.items()))}")
        last = None
        for t, v in ca:
            key = (v[4], v[5], v[6])
            if key != last:
                print(f"    {t:.3f} s epoch {v[4]} K {v[5]} origin {v[6]} cwnd {v[1]} cnt {v[3]} tcp_cwnd {v[7]}")
                last = key


def read_pipe(out: Path, stop: threading.Event) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import read_trace_pipe

    read_trace_pipe(out, stop, "cub")


def main() -> None:
    ap = argparse.ArgumentParser()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import add_point_args

    add_point_args(ap, "kernel-ccas-loss", "cubic-trace")
    ap.add_argument("--summary")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0)
    ap.add_argument("--to", dest="t_to", type=float, default=10.0)
    args = ap.parse_args()
    if args.summary:
        summary(Path(args.summary), args.t_from, args.t_to)
        return
    if not args.point:
        ap.error("--point or --summary is required")
    import ccfair
    from ccfair.fidelity.points import group_shares, load_set

    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=5ms", "testbed.cca_impl=bpf"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    build_traced(out / "bpf-cache")
    stop = threading.Event()
    reader = threading.Thread(target=read_pipe, args=(out / "kernel_trace.txt", stop), daemon=True)
    reader.start()
    tb = ccfair.run(spec, seed=args.seed, backend="testbed")
    stop.set()
    tb.to_parquet(out / "testbed")  # type: ignore[attr-defined]
    print(f"testbed seed {args.seed}: B share {group_shares(spec, tb.summary)[1]:.3f}")  # type: ignore[attr-defined]
    summary(out / "kernel_trace.txt", args.t_from, args.t_to)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
