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

With ``--by-source`` the binary must carry line tables
(``CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release -p
ccfair-bench``, the same code): code of sim.rs counts in the phase of the sim.rs
function it was written in (``Simulation::deliver`` inlined into the loop
counts as the receiver's, ``start_tx`` as the bottleneck's), code of the
queue disciplines, token_bucket.rs, receiver.rs, lines.rs and the CCAs in
their phase wherever it was inlined, any other code (ring.rs, engine.rs,
the sender, the standard library) as the function it was compiled into, as
without the option.
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


def callgrind_process(args: list[str], out: Path, packets_re: str) -> tuple[int, int]:
    """Run the command `args` under callgrind (output in `out`): the whole process's instructions and
    the data packets its output reports (the first group of `packets_re`)."""
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *args], capture_output=True, text=True, check=True)
    refs = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    m = re.search(packets_re, r.stdout)
    if not (refs and m):
        sys.exit(f"error: no instruction count or data packets in the output of {args[0]}: {r.stdout[-300:]!r}")
    return int(refs.group(1).replace(",", "")), int(m.group(1))


def callgrind(bench: Path, config: Path, out: Path, *annotate: str) -> tuple[str, int]:
    """Run `bench repeat 1 config` under callgrind (output in `out`): callgrind_annotate's text
    (with the options `annotate`) and the run's data packets."""
    _, pkts = callgrind_process([str(bench), "repeat", "1", str(config)], out, r"data pkts (\d+)")
    ann = subprocess.run(["callgrind_annotate", *annotate, str(out)], capture_output=True, text=True, check=True).stdout
    return ann, pkts


def run(bench: Path, config: Path, out: Path) -> tuple[dict[str, int], int, int]:
    """Instructions by function, the total and the data packets of one run (callgrind output in `out`)."""
    ann, pkts = callgrind(bench, config, out, "--inclusive=no", "--threshold=100")
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
    return by_fn, total, pkts


#: sim.rs's functions by phase, for ``--by-source`` (first match wins; the
#: rest of sim.rs is the event loop).
SIM_FNS: list[tuple[str, str]] = [
    ("delay lines and host noise", r"^prefetch_"),
    ("bottleneck queue and link", r"^(start_tx|bottleneck_arrive|tx_done|access_arrive)$"),
    ("receiver (data in, ACKs out)", r"^(deliver|flush_receiver_out)$"),
    ("sender: send path and timers", r"^(flush_sender_out|flush_sender_out_shared|sync_sender_timers|sender_timer)$"),
    (
        "statistics",
        r"^(account_delivery|sample|samples_before|take_samples_before|record_sojourn|count_drop|bin|next_bin|"
        r"flush_bin|count|add_arrival|add_delivered|trace_flows)$",
    ),
]


#: Source files whose code counts in one phase wherever it was compiled into,
#: for ``--by-source`` (containers such as ring.rs and engine.rs's sifts
#: count as the function they were compiled into).
SOURCE_FILES: list[tuple[str, str]] = [
    ("bottleneck queue and link", r"ccfair-sim/src/(qdisc/|token_bucket\.rs)"),
    ("receiver (data in, ACKs out)", r"ccfair-sim/src/tcp/receiver\.rs"),
    ("delay lines and host noise", r"ccfair-sim/src/lines\.rs"),
    ("congestion control", r"ccfair-sim/src/(cc/|tcp/rtt\.rs)"),
]


def source_fns(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every ``fn`` in a Rust source file, in order."""
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"\s*(?:pub(?:\([\w:]+\))? )?(?:const )?fn (\w+)", line)
        if m:
            out.append((i, m.group(1)))
    return out


def self_costs_by_source(out: Path) -> list[tuple[str, str, int, int]]:
    """(function, source file, line, instructions) of a callgrind output's self costs."""
    names: dict[tuple[str, str], str] = {}

    def name(kind: str, v: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?$", v)
        if not m:
            return v
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), "")

    rows: list[tuple[str, str, int, int]] = []
    npos, last, fl, fi, fn, skip = 1, [0, 0], "", "", "", False
    for line in out.read_text().splitlines():
        if line.startswith("positions:"):
            npos = len(line.split()) - 1
        elif line.startswith(("fl=", "fi=", "fe=", "fn=")):
            k, v = line[:2], name("fl" if line[:2] in ("fl", "fi", "fe") else "fn", line[3:])
            if k == "fl":
                fl = fi = v
            elif k == "fn":
                fn, fi = v, fl
            else:
                fi = v
        elif line.startswith(("cfl=", "cfi=", "cfn=", "cob=")):
            name("fn" if line.startswith("cfn") else ("ob" if line.startswith("cob") else "fl"), line[4:])
        elif line.startswith("ob="):
            name("ob", line[3:])
        elif line.startswith("calls="):
            skip = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            f = line.split()
            for j in range(npos):
                t = f[j]
                last[j] = last[j] if t == "*" else last[j] + int(t) if t[0] in "+-" else int(t, 0)
            if skip:
                skip = False
                continue
            rows.append((fn, fi, last[npos - 1], int(f[npos]) if len(f) > npos else 0))
    return rows


def phases_by_source(out: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Instructions by phase and by (function or sim.rs function) for ``--by-source``."""
    fns: dict[str, list[tuple[int, str]]] = {}
    by_fn: dict[str, int] = {}
    for fn, fi, line, n in self_costs_by_source(out):
        key = fn
        if fi.endswith("ccfair-sim/src/sim.rs"):
            table = fns.setdefault(fi, source_fns(Path(fi)))
            before = [name for start, name in table if start <= line]
            key = f"sim.rs::{before[-1] if before else '?'}"
        else:
            phase = next((p for p, pat in SOURCE_FILES if re.search(pat, fi)), None)
            key = f"{phase}::" if phase else fn
        by_fn[key] = by_fn.get(key, 0) + n
    phases: dict[str, int] = {}
    for key, n in by_fn.items():
        if key.startswith("sim.rs::"):
            f = key.removeprefix("sim.rs::")
            phase = next((p for p, pat in SIM_FNS if re.search(pat, f)), "event queue and loop (dispatch inlined)")
        elif key.endswith("::") and key.removesuffix("::") in dict(SOURCE_FILES):
            phase = key.removesuffix("::")
        else:
            phase = next((p for p, pat in PHASES if re.search(pat, key)), "other")
        phases[phase] = phases.get(phase, 0) + n
    return phases, by_fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", type=Path)
    ap.add_argument("--bench", type=Path, default=REPO / "target" / "release" / "ccfair-bench")
    ap.add_argument("--top", type=int, default=12, help="also list the N costliest functions")
    ap.add_argument("--by-source", action="store_true", help="sim.rs's code by the function it was written in (line tables)")
    a = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="ccfair-cg-")) / "callgrind.out"
    by_fn, total, packets = run(a.bench, a.config, out)
    phases = {p: 0 for p, _ in PHASES} | {"other": 0}
    if a.by_source:
        found, by_fn = phases_by_source(out)
        if not any(k.startswith("sim.rs::") for k in by_fn):
            sys.exit("error: --by-source needs a binary with line tables (CARGO_PROFILE_RELEASE_DEBUG=line-tables-only)")
        phases |= found
    else:
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
