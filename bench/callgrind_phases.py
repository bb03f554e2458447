"""Instructions per data packet of one simulator run, by phase (callgrind).

    apt-get install valgrind        # callgrind; the release binary needs no debug info
    cargo build --release -p ccfair-bench
    python bench/callgrind_phases.py CONFIG.json [--bench target/release/ccfair-bench]

Runs ``ccfair-bench repeat 1 CONFIG.json`` under callgrind (about 50x slower
than native), counts the instructions of every function itself (exclusive;
inlined code counts in its caller) and groups them into phases by function
name (PHASES, first match wins), divided by the run's data packets (the
bench's ``data pkts``). A RunConfig JSON comes from ``ccfair check FILE``
or from bench/htsim_speed.py's scenarios.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: (phase, function-name pattern), first match wins.
PHASES: list[tuple[str, str]] = [
    ("delay lines and host noise", r"lines::|prefetch_next_sender|prefetch_receiver"),
    ("event queue and loop (dispatch inlined)", r"engine::|sim::try_run|Simulation<Q>::run\b|next_event|shared_next"),
    ("bottleneck queue and link", r"start_tx|bottleneck_arrive|tx_done|qdisc::|access_arrive"),
    ("receiver (data in, ACKs out)", r"receiver::|Simulation<Q>::deliver|flush_receiver_out"),
    ("sender: ACK processing, SACK, RACK, recovery", r"on_ack|scoreboard|recovery|tsorted|sacktag|rack_"),
    ("sender: send path and timers", r"try_send|flush_sender_out|sender::|sync_sender_timers|on_pace|on_rto"),
    ("congestion control", r"cc::|cong_avoid|rtt::"),
    ("statistics", r"account_delivery|Simulation<Q>::sample|samples_before"),
    ("memory (allocation, copies)", r"malloc|free|realloc|memcpy|memmove|alloc::"),
]


def run(bench: Path, config: Path) -> tuple[dict[str, int], int, int]:
    out = Path(tempfile.mkdtemp(prefix="ccfair-cg-")) / "callgrind.out"
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(bench), "repeat", "1", str(config)],
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"data pkts (\d+)", r.stdout)
    if not m:
        sys.exit(f"error: no 'data pkts' in the bench's output: {r.stdout!r}")
    ann = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)], capture_output=True, text=True, check=True
    ).stdout
    by_fn: dict[str, int] = {}
    total = 0
    for line in ann.splitlines():
        fm = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if not fm:
            continue
        n, name = int(fm.group(1).replace(",", "")), fm.group(2)
        if "PROGRAM TOTALS" in name:
            total = n
            continue
        by_fn[name] = by_fn.get(name, 0) + n
    return by_fn, total, int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", type=Path)
    ap.add_argument("--bench", type=Path, default=REPO / "target" / "release" / "ccfair-bench")
    ap.add_argument("--top", type=int, default=12, help="also list the N costliest functions")
    a = ap.parse_args()
    by_fn, total, packets = run(a.bench, a.config)
    phases = {p: 0 for p, _ in PHASES} | {"other": 0}
    for name, n in by_fn.items():
        phase = next((p for p, pat in PHASES if re.search(pat, name)), "other")
        phases[phase] += n
    print(f"{a.config.name}: {total:,} instructions, {packets:,} data packets, {total / packets:.0f} per data packet\n")
    print("| phase | instructions per data packet | share |")
    print("|---|---|---|")
    for p, n in sorted(phases.items(), key=lambda kv: -kv[1]):
        print(f"| {p} | {n / packets:.0f} | {100 * n / total:.1f} % |")
    print(f"| **total** | **{total / packets:.0f}** | |")
    print("\ncostliest functions (instructions per data packet):")
    for name, n in sorted(by_fn.items(), key=lambda kv: -kv[1])[: a.top]:
        short = re.sub(r"\s*\[.*\]$", "", name).replace("???:", "")
        print(f"  {n / packets:7.0f}  {short}")


if __name__ == "__main__":
    main()
