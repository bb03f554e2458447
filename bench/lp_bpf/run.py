"""Linux's tcp_lp.c on the testbed's real TCP, through ccfair's BPF port (docs/fidelity.md "TCP-LP").

The kernel here does not build tcp_lp (it offers reno, cubic, bbr); the testbed runs
ccfair's port, python/ccfair/testbed/bpf/lp.bpf.c (ccfair.testbed.bpfcc builds and loads
it). This script runs it on the testbed (10 Mbit/s, 50 ms, 42-packet drop-tail, 45 s,
window 10-45 s, as crates/ccfair-sim/tests/lp.rs) or the same experiment on the
simulator. Root:

    python bench/lp_bpf/run.py alone 2 1            # scenario, tcp_timestamps, delayed ACKs
    python bench/lp_bpf/run.py renofirst 1 1        # tcp_timestamps = 1: random TS offsets (Linux's default)
    python bench/lp_bpf/run.py alone 2 1 sim        # the simulator (cc/lp.rs), same experiment
    python bench/lp_bpf/run.py trace /sys/kernel/tracing/trace   # summary of a traced run's per-ACK state

A traced run: compile the port with -DLP_TRACE over the cached object first
(clang flags and include directories: ccfair.testbed.bpfcc.build; the object is
`python -c "from ccfair.testbed import bpfcc; print(bpfcc.build_dir())"`/lp.bpf.o).

Scenarios: alone (LP only), lpfirst (LP at 0 s, Reno at 5 s), renofirst (the reverse).
The testbed maps ccfair's "lp" to the given kernel name and sets net.ipv4.tcp_timestamps
in the sender's and receiver's namespaces (patched in here; ccfair has no such setting).
Prints one JSON line: per flow throughput and share; utilization = throughput x 1500/1448 / 10 Mbit/s.
"""

from __future__ import annotations

import collections
import json
import re
import sys

LINE = re.compile(r"bpf_trace_printk: (lp\d?) (\d+) (\d+) (\d+)")


def spec(scenario: str, delayed_ack: bool) -> dict:
    def flow(name: str, cca: str, start: str) -> dict:
        return {"name": name, "cca": cca, "rtt": "50ms", "start": start, "delayed_ack": delayed_ack}

    flows = {
        "alone": [flow("A", "lp", "0s")],
        "lpfirst": [flow("A", "lp", "0s"), flow("B", "reno", "5s")],
        "renofirst": [flow("A", "reno", "0s"), flow("B", "lp", "5s")],
    }[scenario]
    return {
        "name": f"tcp-lp {scenario}",
        "duration": "45s",
        "window": {"start": "10s", "end": "45s"},
        "seed": 1,
        "bin": "100ms",
        "bottleneck": {"rate": "10Mbit", "delay": "0ms", "buffer": "42pkt", "qdisc": "droptail"},
        "flows": flows,
    }


def run(scenario: str, timestamps: int, delayed_ack: bool, backend: str) -> dict:
    from ccfair import api
    from ccfair.testbed import netns

    route_options = netns.Topology.route_options

    def with_timestamps(self, i, *args, **kwargs):  # type: ignore[no-untyped-def]
        for ns in (self.ns_snd[i], self.ns_rcv):
            netns.sysctls(ns, {"net.ipv4.tcp_timestamps": timestamps})
        return route_options(self, i, *args, **kwargs)

    netns.Topology.route_options = with_timestamps  # type: ignore[method-assign]
    r = api.run(spec(scenario, delayed_ack), backend=backend)
    flows = [{k: f[k] for k in ("name", "cca", "throughput_bps", "share")} for f in r.flows.to_dict("records")]
    return {
        "scenario": scenario,
        "tcp_timestamps": timestamps,
        "delayed_ack": delayed_ack,
        "backend": backend,
        "flows": flows,
    }


def trace(path: str) -> None:
    """Per-ACK state printed by the port built with -DLP_TRACE: (now, cwnd, flag), (TSval, TSecr, remote_hz),
    (sowd, owd_min, owd_max), (local port, inference, rtt_us)."""
    acks, cur = [], {}
    for line in open(path):
        m = LINE.search(line)
        if not m:
            continue
        kind, a, b, c = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        if kind == "lp":
            cur = {"now": a, "cwnd": b, "flag": c}
        elif kind == "lp2":
            cur.update(tsval=a, tsecr=b, rhz=c)
        elif kind == "lp3":
            cur.update(sowd=a, owd_min=b, owd_max=c)
            acks.append(cur)
        else:  # lp4: the flow's local port, the inference time, the sample's RTT (us)
            cur.update(port=a, inference=b, rtt_us=c)
    t0 = acks[0]["now"]
    for r in acks[:45]:
        flag = ("within" if r["flag"] & 8 else "INDICATION") + (" inference" if r["flag"] & 16 else "")
        owd = (r["tsval"] - r["tsecr"]) % 2**32
        print(
            f"t={r['now'] - t0:6d} ms cwnd={r['cwnd']:3d} TSval-TSecr={owd:4d} remote_hz={r['rhz']:5d} sowd={r['sowd']} [{r['owd_min']}, {r['owd_max']}] {flag}"
        )
    at_one = collections.Counter((r["tsval"] - r["tsecr"]) % 2**32 for r in acks if r["cwnd"] == 1)
    print(f"{len(acks)} ACKs; indications {sum(1 for r in acks if not r['flag'] & 8)}")
    print("TSval-TSecr at cwnd 1 (ms: count):", at_one.most_common(6))
    print("cwnd (value: ACKs):", collections.Counter(r["cwnd"] for r in acks).most_common(6))
    print("remote_hz min/max:", min(r["rhz"] for r in acks if r["rhz"]), max(r["rhz"] for r in acks))
    # remote_hz above TCP_TS_HZ = 1000 makes LP_RESOL / remote_hz zero: the owd sample is
    # 2^32 - TSecr and sowd overflows (docs/linux-ports.md, "TCP-LP").
    for prev, r in zip(acks, acks[1:]):
        if (r["rhz"] > 1000) != (prev["rhz"] > 1000):
            print(
                f"t={r['now'] - t0} ms: remote_hz {prev['rhz']} -> {r['rhz']} on TSval +{r['tsval'] - prev['tsval']} ms, "
                f"TSecr +{r['tsecr'] - prev['tsecr']} ms (cwnd {r['cwnd']}, sowd {r['sowd']}); indications after: "
                f"{sum(1 for x in acks if x['now'] > r['now'] and not x['flag'] & 8)}"
            )


if __name__ == "__main__":
    if sys.argv[1] == "trace":
        trace(sys.argv[2])
    else:
        backend = sys.argv[4] if len(sys.argv) > 4 else "testbed"
        print(json.dumps(run(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", backend)))
