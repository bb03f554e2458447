"""Linux's tcp_veno.c on the testbed's real TCP, per ACK, next to the simulator (docs/linux-ports.md
"Veno against CUBIC"). Root:

    python bench/veno_bpf/run.py --point "veno/cubic 20M 100ms 1bdp" --seed 4 [--set kernel-ccas-loss] [--out DIR]
    python bench/veno_bpf/run.py --summary DIR/kernel_trace.txt
    python bench/veno_bpf/run.py --point "veno/cubic 20M 100ms 1bdp" --sim-seeds 30 [--noise-scale 3]  # simulator alone

Builds a traced copy of ccfair's Veno port (python/ccfair/testbed/bpf/veno.bpf.c with one bpf_printk
per hook, inserted at the anchors of TRACE below) into a private BPF cache (CCFAIR_BPF_CACHE under
DIR; the port's own source and the shared cache are untouched, so stored fidelity runs keep their
port digest), runs the point once on the testbed while reading /sys/kernel/tracing/trace_pipe, and
once on the simulator with the same seed (`trace = true`, TCP_INFO / simulator state every 5 ms).
Prints the kernel Veno's per-hook counts (RTT samples without a value, diff < beta, ssthresh
calls with cwnd and the backlog N = diff / 2, cong_avoid calls not cwnd-limited, CA states) and, for both sides, the overflow
episodes after B's start (window reductions within 0.6 s of each other): which flows lost in each.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import threading
from pathlib import Path

#: (anchor line in veno.bpf.c, trace line inserted after it). Fields: local port first.
TRACE = [
    ("\tu32 vrtt;\n", 'bpf_printk("veno1 %u %d %u", sk->__sk_common.skc_num, sample->rtt_us, sample->pkts_acked);'),
    (
        "void BPF_PROG(tcp_veno_state, struct sock *sk, u8 ca_state)\n{\n",
        'bpf_printk("veno5 %u %u", sk->__sk_common.skc_num, ca_state);',
    ),
    (
        "void BPF_PROG(tcp_veno_cong_avoid, struct sock *sk, u32 ack, u32 acked)\n{\n"
        "\tstruct tcp_sock *tp = tcp_sk(sk);\n\tstruct ccf_veno *veno = inet_csk_ca(sk);\n",
        'bpf_printk("veno6 %u %u %u", sk->__sk_common.skc_num, tcp_snd_cwnd(tp), tcp_is_cwnd_limited(sk) | (veno->doing_veno_now << 1));',
    ),
    (
        "\tveno->diff = (tcp_snd_cwnd(tp) << V_PARAM_SHIFT) - target_cwnd;\n",
        'bpf_printk("veno2 %u %u %u", sk->__sk_common.skc_num, tcp_snd_cwnd(tp), veno->diff);',
    ),
    (
        "u32 BPF_PROG(tcp_veno_ssthresh, struct sock *sk)\n{\n\tconst struct tcp_sock *tp = tcp_sk(sk);\n"
        "\tstruct ccf_veno *veno = inet_csk_ca(sk);\n",
        'bpf_printk("veno4 %u %u %u", sk->__sk_common.skc_num, tcp_snd_cwnd(tp), veno->diff);',
    ),
]


def build_traced(cache: Path) -> Path:
    """Compile the traced copy into the private cache's build directory as veno.bpf.o."""
    os.environ["CCFAIR_BPF_CACHE"] = str(cache)
    from ccfair.testbed import bpfcc

    bpfcc.build(["veno"])
    src = bpfcc.ports()["veno"].read_text()
    for anchor, line in TRACE:
        if src.count(anchor) != 1:
            raise SystemExit(f"anchor not found once in veno.bpf.c: {anchor!r}")
        src = src.replace(anchor, anchor + "\t" + line + "\n")
    d = bpfcc.build_dir()
    traced = d / "veno_trace.bpf.c"
    traced.write_text(src)
    cmd = ["clang", *bpfcc.CLANG_FLAGS, "-I", str(d), "-I", str(bpfcc.SRC_DIR), "-c", str(traced), "-o", str(d / "veno.bpf.o")]
    subprocess.run(cmd, check=True)
    return d / "veno.bpf.o"


def read_pipe(out: Path, stop: threading.Event) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import read_trace_pipe

    read_trace_pipe(out, stop, "veno")


def summary(path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import parse_trace

    ev = parse_trace(path)
    port = collections.Counter(v[0] for _, _, v in ev).most_common(1)[0][0]
    ev = [e for e in ev if e[2][0] == port]
    t0 = ev[0][0]
    rtt = [v for _, tag, v in ev if tag == "veno1"]
    diff = [(t - t0, v) for t, tag, v in ev if tag == "veno2"]
    print(
        f"kernel Veno (port {port}): {len(rtt)} pkts_acked, {sum(v[1] < 0 for v in rtt)} without an RTT sample, "
        f"{sum(v[2] == 0 for v in rtt)} with 0 packets ACKed; {len(diff)} cong_avoid computing diff, "
        f"{sum(v[2] < 6 for _, v in diff)} with diff < beta ({sum(v[2] < 6 and t >= 5 for t, v in diff)} after 5 s)"
    )
    calls = [v[2] for _, tag, v in ev if tag == "veno6"]
    print(
        f"  cong_avoid calls {len(calls)}: not cwnd-limited {sum(not c & 1 for c in calls)}, "
        f"outside Open (Reno's rule) {sum(not c & 2 for c in calls)}"
    )
    states = collections.Counter(v[1] for _, tag, v in ev if tag == "veno5")
    print(f"  set_state calls per CA state (0 Open, 1 Disorder, 3 Recovery, 4 Loss): {dict(sorted(states.items()))}")
    print("  ssthresh (s: cwnd, N): " + " ".join(f"{t - t0:.2f}: {v[1]}, {v[2] / 2:.1f}" for t, tag, v in ev if tag == "veno4"))


def episodes(tr: object, b_start_s: float) -> list[list[tuple]]:
    """Window reductions after B's start (ssthresh set below 0.9 cwnd: a loss, not a HyStart exit),
    grouped into overflow episodes (reductions within 0.6 s of each other): (time, flow, cwnd, ssthresh)."""
    import numpy as np

    ev = []
    for name, g in tr.groupby("flow", sort=False):  # type: ignore[attr-defined]
        g = g[g["cwnd_pkts"] > 0]
        ss, t, cw = g["ssthresh_pkts"].to_numpy(), g["time_s"].to_numpy(), g["cwnd_pkts"].to_numpy()
        for i in np.nonzero(np.diff(ss) != 0)[0] + 1:
            if t[i] > b_start_s and ss[i] < 0.9 * cw[i - 1]:
                ev.append((t[i], name, cw[i - 1], ss[i]))
    eps: list[list[tuple]] = []
    for e in sorted(ev):
        if eps and e[0] - eps[-1][-1][0] < 0.6:
            eps[-1].append(e)
        else:
            eps.append([e])
    return eps


def losers(eps: list[list[tuple]]) -> str:
    n = max(len(eps), 1)
    kinds = collections.Counter("+".join(sorted({x[1] for x in ep})) for ep in eps)
    hit = {f: sum(any(x[1] == f for x in ep) for ep in eps) / n for f in ("A", "B")}
    return f"{len(eps)} overflow episodes, losers {dict(sorted(kinds.items()))}, A lost in {hit['A']:.2f}, B in {hit['B']:.2f}"


def print_episodes(label: str, res: object, b_start_s: float) -> None:
    tr = res.trace  # type: ignore[attr-defined]
    eps = episodes(tr, b_start_s)
    print(f"{label}: {losers(eps)}; per episode: losers, then every flow's cwnd 0.3 s before")

    def cwnd_before(t: float) -> str:
        rows = tr[(tr["time_s"] <= t - 0.3) & (tr["cwnd_pkts"] > 0)].groupby("flow", sort=False).last()
        return "/".join(f"{n} {int(c)}" for n, c in rows["cwnd_pkts"].items())

    print(
        "  " + " | ".join(f"{ep[0][0]:.2f} " + ",".join(f"{x[1]} {x[2]}->{x[3]}" for x in ep) + f" ({cwnd_before(ep[0][0])})" for ep in eps)
    )


def sim_seeds(spec: object, seeds: int) -> None:
    """The simulator alone, seeds 1..N: the episodes' losers over all seeds and B's mean share."""
    import ccfair
    from ccfair.fidelity.points import group_shares

    eps, shares = [], []
    b_start = spec.flows[-1].start / 1e9  # type: ignore[attr-defined]
    for seed in range(1, seeds + 1):
        r = ccfair.run(spec, seed=seed)
        eps += episodes(r.trace, b_start)  # type: ignore[attr-defined]
        shares.append(group_shares(spec, r.summary)[1])  # type: ignore[attr-defined]
    print(f"sim seeds 1-{seeds}: B share {sum(shares) / len(shares):.3f}; {losers(eps)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import add_point_args

    add_point_args(ap, "kernel-ccas-loss", "veno-trace")
    ap.add_argument("--summary")
    ap.add_argument("--sim-seeds", type=int, help="the simulator alone, seeds 1..N (no root)")
    ap.add_argument("--noise-scale", type=float, help="with --sim-seeds: host-noise means times X (a what-if)")
    args = ap.parse_args()
    if args.summary:
        summary(Path(args.summary))
        return
    if not args.point:
        ap.error("--point or --summary is required")
    import ccfair
    from ccfair.fidelity.points import group_shares, load_set

    point = next(p for p in load_set(args.set_name, Path(args.data)).points if p.id == args.point)
    spec = point.spec().with_overrides(["trace=true", "sample=5ms"])
    if args.sim_seeds:
        if args.noise_scale is not None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from common import scaled_host_noise, use_host_noise

            use_host_noise(scaled_host_noise(args.noise_scale))
        sim_seeds(spec, args.sim_seeds)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    build_traced(out / "bpf-cache")
    b_start = spec.flows[-1].start / 1e9
    stop = threading.Event()
    reader = threading.Thread(target=read_pipe, args=(out / "kernel_trace.txt", stop), daemon=True)
    reader.start()
    tb = ccfair.run(spec, seed=args.seed, backend="testbed")
    stop.set()
    sim = ccfair.run(spec, seed=args.seed)
    tb.to_parquet(out / "testbed")  # type: ignore[attr-defined]
    sim.to_parquet(out / "sim")  # type: ignore[attr-defined]
    for label, res in (("testbed", tb), ("sim", sim)):
        print(f"{label} seed {args.seed}: B share {group_shares(spec, res.summary)[1]:.3f}")  # type: ignore[attr-defined]
    summary(out / "kernel_trace.txt")
    for label, res in (("testbed", tb), ("sim", sim)):
        print_episodes(label, res, b_start)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
