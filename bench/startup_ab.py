"""Start-up of the ccfair command, before vs after, interleaved: wall and CPU time.

    python bench/startup_ab.py BEFORE_PYTHON_DIR [--rounds 11]

BEFORE_PYTHON_DIR is the ``python/`` directory of another checkout (e.g.
``git worktree add OLD_DIR COMMIT``, then its ``python/`` with a built
``ccfair/_core*.so`` copied in); it is put first on PYTHONPATH for the
"before" runs, the current installation is "after". Each round runs every
command once per side, alternating which side goes first; prints the medians
of wall time and of CPU time (user + sys, rusage of the child), which a busy
machine inflates far less than wall time. Figures go into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics as st
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "python -c 'import ccfair'": ["-c", "import ccfair"],
    "ccfair --help": ["-m", "ccfair", "--help"],
    "ccfair run examples/s0-cubic-vs-bbr.toml --json": ["-m", "ccfair", "run", "examples/s0-cubic-vs-bbr.toml", "--json"],
}


def one(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    before = dict(os.environ, PYTHONPATH=str(args.before.resolve()))
    after = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name, cmd in COMMANDS.items():
        a: list[tuple[float, float]] = []
        b: list[tuple[float, float]] = []
        for r in range(args.rounds):
            for env, acc in ((before, a), (after, b)) if r % 2 else ((after, b), (before, a)):
                acc.append(one(cmd, env))
        aw, ac = st.median(x for x, _ in a), st.median(y for _, y in a)
        bw, bc = st.median(x for x, _ in b), st.median(y for _, y in b)
        print(
            f"{name}: before wall {aw * 1e3:.0f} ms / CPU {ac * 1e3:.0f} ms; after wall {bw * 1e3:.0f} ms / CPU {bc * 1e3:.0f} ms; CPU ratio {bc / ac:.2f}"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
