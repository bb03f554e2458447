"""Cross-check ccfair's CCAs against ns-3 3.44 on the acceptance dumbbell (below).

    python bench/ns3_crosscheck.py [--ccas reno cubic ...] [--venv /tmp/ccfair-ns3-venv] [--out table.md]

Installs the ``ns3`` wheel from PyPI (3.44.post0) into a throwaway venv
(``--venv``; NOT a dependency of ccfair), then runs for every CCA that both
simulators implement:

- single flow: 10 Mbit/s bottleneck, 50 ms RTT, 1 BDP drop-tail (42 packets
  of 1500 bytes), 45 s; goodput over seconds 15-45;
- two flows of the same CCA, same path, B starts at 5 s; goodput of each over
  seconds 10-45 and Jain's index;

once in ns-3 (one subprocess of the venv's Python running this file with
``--worker``, all ns-3 runs in sequence) and once in ccfair (seed 1, no start jitter), and prints a
Markdown table: goodput (Mbit/s), JFI and bottleneck drops per simulator.

ns-3 topology and TCP settings: bench/ns3_dumbbell.py (10 Mbit/s, 21 ms
bottleneck with a 42-packet FifoQueueDisc in front of a 1-packet device queue,
a plain FIFO as ccfair's drop-tail; 4 MB socket buffers, PRR recovery).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

NS3_VERSION = "3.44.post0"

#: ccfair name -> ns-3 TypeId. DCTCP is left out: ns-3's TcpDctcp needs an
#: ECN-marking queue and is not meaningful on drop-tail.
PAIRS: dict[str, str] = {
    "reno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "bbr": "ns3::TcpBbr",
    "bic": "ns3::TcpBic",
    "highspeed": "ns3::TcpHighSpeed",
    "htcp": "ns3::TcpHtcp",
    "hybla": "ns3::TcpHybla",
    "illinois": "ns3::TcpIllinois",
    "scalable": "ns3::TcpScalable",
    "vegas": "ns3::TcpVegas",
    "veno": "ns3::TcpVeno",
    "westwood": "ns3::TcpWestwoodPlus",
    "yeah": "ns3::TcpYeah",
    "ledbat": "ns3::TcpLedbat",
}

RATE_BPS = 10_000_000
RTT_MS = 50
QUEUE_PKTS = 42  # 1 BDP: 10 Mbit/s x 50 ms / 1500 B = 41.7 -> 42
DURATION_S = 45
SINGLE_WINDOW = (15, 45)
PAIR_WINDOW = (10, 45)
B_START_S = 5


# ----------------------------------------------------------------- ns-3 side


def ns3_run(tid: str, nflows: int) -> dict:
    """One dumbbell run in ns-3 (called inside the ns-3 venv)."""
    from ns3_dumbbell import build

    starts = [0.0 if i == 0 else B_START_S for i in range(nflows)]
    net = build([tid] * nflows, rate_bps=RATE_BPS, rtt_ms=RTT_MS, starts_s=starts, qdisc_attrs={"MaxSize": f"{QUEUE_PKTS}p"})
    window = SINGLE_WINDOW if nflows == 1 else PAIR_WINDOW
    marks = {}
    for t in sorted({window[0], window[1]}):
        net.run_until(t)
        marks[t] = (net.received(), net.drops())
    net.ns.Simulator.Destroy()
    span = window[1] - window[0]
    goodput = [(marks[window[1]][0][i] - marks[window[0]][0][i]) * 8 / span for i in range(nflows)]
    return {"goodput_bps": goodput, "drops": int(marks[window[1]][1])}


# --------------------------------------------------------------- ccfair side


def ccfair_run(cca: str, nflows: int) -> dict:
    import ccfair
    from ccfair.spec import Spec

    window = SINGLE_WINDOW if nflows == 1 else PAIR_WINDOW
    flows = [{"name": "A", "cca": cca, "rtt": f"{RTT_MS}ms"}]
    if nflows == 2:
        flows.append({"name": "B", "cca": cca, "rtt": f"{RTT_MS}ms", "start": f"{B_START_S}s"})
    spec = Spec.from_dict(
        {
            "name": f"ns3 crosscheck {cca} x{nflows}",
            "duration": f"{DURATION_S}s",
            "window": {"start": f"{window[0]}s", "end": f"{window[1]}s"},
            "seed": 1,
            "bottleneck": {"rate": "10Mbit", "delay": "0ms", "buffer": f"{QUEUE_PKTS}p", "qdisc": "droptail"},
            "flows": flows,
        }
    )
    res = ccfair.run(spec)
    goodput = [float(f["throughput_bps"]) for f in res.summary["flows"]]
    drops = int(res.flows["drops"].sum())
    return {"goodput_bps": goodput, "drops": drops}


def jfi(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if any(x) else float("nan")


# ------------------------------------------------------------------- driver


def ensure_venv(venv: Path) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(py), "-c", "import ns3"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"ns3=={NS3_VERSION}"], check=True)
    return py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ccas", nargs="+", default=list(PAIRS))
    ap.add_argument("--venv", type=Path, default=Path(os.environ.get("CCFAIR_NS3_VENV", "/tmp/ccfair-ns3-venv")))
    ap.add_argument("--out", type=Path, help="also write the table here")
    ap.add_argument("--worker", nargs="+", metavar="TYPEID:NFLOWS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        # One process runs every job (ns-3's Python bindings take ~40 s to start).
        for job in args.worker:
            tid, n = job.rsplit(":", 1)
            print(f"RESULT {job} " + json.dumps(ns3_run(tid, int(n))), flush=True)
        return
    py = ensure_venv(args.venv)
    jobs = [f"{PAIRS[c]}:{n}" for c in args.ccas for n in (1, 2)]
    p = subprocess.run([str(py), __file__, "--worker", *jobs], capture_output=True, text=True)
    ns3 = {}
    for ln in p.stdout.splitlines():
        if ln.startswith("RESULT "):
            _, job, js = ln.split(" ", 2)
            ns3[job] = json.loads(js)
    missing = [j for j in jobs if j not in ns3]
    if p.returncode != 0 or missing:
        raise SystemExit(f"ns-3 runs {missing} failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    lines = [
        "| CCA (ns-3 type) | alone: goodput ns-3 / ccfair (Mbit/s) | alone: drops ns-3 / ccfair "
        "| pair: goodput A, B ns-3 | pair: goodput A, B ccfair | pair: JFI ns-3 / ccfair | pair: drops ns-3 / ccfair |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for cca in args.ccas:
        tid = PAIRS[cca]
        row = {}
        for n in (1, 2):
            row[("ns3", n)] = ns3[f"{tid}:{n}"]
            row[("ccfair", n)] = ccfair_run(cca, n)
        m = lambda v: f"{v / 1e6:.2f}"  # noqa: E731
        a3, af = row[("ns3", 1)], row[("ccfair", 1)]
        p3, pf = row[("ns3", 2)], row[("ccfair", 2)]
        line = (
            f"| {cca} ({tid.split('::')[1]}) | {m(a3['goodput_bps'][0])} / {m(af['goodput_bps'][0])} "
            f"| {a3['drops']} / {af['drops']} "
            f"| {m(p3['goodput_bps'][0])}, {m(p3['goodput_bps'][1])} "
            f"| {m(pf['goodput_bps'][0])}, {m(pf['goodput_bps'][1])} "
            f"| {jfi(p3['goodput_bps']):.3f} / {jfi(pf['goodput_bps']):.3f} | {p3['drops']} / {pf['drops']} |"
        )
        lines.append(line)
        print(line, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
