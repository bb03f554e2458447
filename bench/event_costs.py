"""Instructions per data packet by the kind of event that runs them (callgrind).

    apt-get install valgrind
    python bench/event_costs.py CONFIG.json [CONFIG.json ...] [--rev REV]

Builds `ccfair-bench` of commit REV (default HEAD) in a temporary git
worktree with each arm of the event loop's `dispatch` (crates/ccfair-sim/
src/sim.rs) moved into a function of its own, never inlined, then runs
`ccfair-bench repeat 1 CONFIG.json` under callgrind and prints, per data
packet, each handler's inclusive instructions (the event's whole work: the
line's pop, the bottleneck, the receiver, the sender, their pushes and
schedules) and the rest of the loop (choosing the next event, the queue
samples, the dispatch). The handlers out of line add a few per cent of
instructions (printed: the total against the unchanged build's, which
the script builds as well); the split, not the sum, is the measurement.
The rewrite matches `fn dispatch` by its text: it fails loudly if the
loop's shape changes.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIM_RS = "crates/ccfair-sim/src/sim.rs"

#: An arm `Ev::Kind(x) => { body }` or `Ev::Kind(x) => expr,` of `dispatch`.
ARM = re.compile(r"^            (Ev::(\w+)(?:\((\w+)\))?) => (\{\n(?:.*\n)*?            \}|.*,)\n", re.M)


def split_dispatch(src: str) -> str:
    """`src` (sim.rs) with every arm of `dispatch` a call of its own `#[inline(never)]` method."""
    start = src.index("    fn dispatch(&mut self, now: TimeNs, ev: Ev) {")
    end = src.index("\n    }\n", src.index("        match ev {", start)) + len("\n    }\n")
    body = src[start:end]
    arms = list(ARM.finditer(body))
    if len(arms) < 10:
        sys.exit(f"error: found {len(arms)} arms in sim.rs's dispatch; its shape changed, update {__file__}")
    fns, calls = [], []
    for m in arms:
        pattern, kind, var, code = m.group(1), m.group(2), m.group(3), m.group(4)
        code = code[1:-1].strip() if code.startswith("{") else code.rstrip(",")
        arg = f", {var}: u32" if var else ""
        name = f"event_cost_{kind.lower()}"
        fns.append(
            f"    #[inline(never)]\n    fn {name}(&mut self, now: TimeNs, ev: Ev{arg}) {{\n        let _ = ev;\n        {code}\n    }}\n"
        )
        calls.append(f"            {pattern} => self.{name}(now, ev{', ' + var if var else ''}),\n")
    new = "    fn dispatch(&mut self, now: TimeNs, ev: Ev) {\n        match ev {\n" + "".join(calls) + "        }\n    }\n" + "".join(fns)
    return src[:start] + new + src[end:]


def build(rev: str, tmp: Path, split: bool) -> Path:
    wt = tmp / ("split" if split else "plain")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), rev], check=True, capture_output=True)
    try:
        if split:
            p = wt / SIM_RS
            p.write_text(split_dispatch(p.read_text()))
        target = tmp / "target"
        subprocess.run(
            ["cargo", "build", "--release", "-j", "2", "-p", "ccfair-bench", "--target-dir", str(target)],
            cwd=wt,
            check=True,
            capture_output=True,
        )
        exe = tmp / ("ccfair-bench-split" if split else "ccfair-bench")
        (target / "release" / "ccfair-bench").rename(exe)
        return exe
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], check=True)


def costs(exe: Path, config: Path, out: Path) -> tuple[dict[str, int], int, int]:
    """Inclusive instructions by handler, the program's total and the run's data packets."""
    from callgrind_phases import callgrind

    ann, pkts = callgrind(exe, config, out, "--inclusive=yes")
    by: dict[str, int] = {}
    total = 0
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?(event_cost_\w+|Simulation<Q>::run\b|PROGRAM TOTALS)", line)
        if m:
            n = int(m.group(1).replace(",", ""))
            key = m.group(2)
            by[key] = by.get(key, 0) + n
    total = by.pop("PROGRAM TOTALS", 0)
    return by, total, pkts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", type=Path, nargs="+")
    ap.add_argument("--rev", default="HEAD")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        plain, split = build(a.rev, tmp, False), build(a.rev, tmp, True)
        for c in a.configs:
            by, total, pkts = costs(split, c, tmp / "split.out")
            _, plain_total, _ = costs(plain, c, tmp / "plain.out")
            loop = by.pop("Simulation<Q>::run", 0)
            print(
                f"{c.name}: {pkts} data packets; split build {total / pkts:.0f} instructions per data packet, unchanged build {plain_total / pkts:.0f}"
            )
            print("| event | instructions per data packet |\n|---|---|")
            for k, n in sorted(by.items(), key=lambda kv: -kv[1]):
                if n / pkts >= 0.5:
                    print(f"| {k.removeprefix('event_cost_')} | {n / pkts:.0f} |")
            print(f"| loop (next event, samples, dispatch) | {(loop - sum(by.values())) / pkts:.0f} |")
            print(f"| outside the loop (set-up, results) | {(total - loop) / pkts:.0f} |\n")


if __name__ == "__main__":
    main()
