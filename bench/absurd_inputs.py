"""Wall time, CPU time and peak RSS of `ccfair run` on the five absurd inputs.

Each must be refused (exit 2, naming the field) before anything is allocated:
within 2 s and under 200 MB RSS. tests/test_hardening.py asserts the exit code,
the field and the RSS; the times are measured here (no timing assertions in tests).

Usage: .venv/bin/python bench/absurd_inputs.py [--repeat 5]
Prints a markdown table: median wall, median user+sys CPU, max peak RSS per case.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("absurd-rate-gbit", "absurd-rate-float", "absurd-count", "absurd-duration", "absurd-bins-flows")


#: `ccfair run` in a fresh interpreter, printing its own peak RSS (VmHWM, KiB) on stdout at exit
#: (os.wait4's ru_maxrss would include the RSS of the forking parent).
PROBE = (
    "import sys\n"
    "from ccfair.cli import main\n"
    "code = main(['run', sys.argv[1]])\n"
    "print([ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0].split()[1])\n"
    "sys.exit(code)\n"
)


def one(path: Path, env: dict[str, str]) -> tuple[int, str, float, float, int]:
    """(exit code, stderr, wall s, CPU s, peak RSS KiB) of one `ccfair run`."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", PROBE, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    # communicate() reaped the child; its CPU time is in RUSAGE_CHILDREN, taken around the call by the caller
    return p.returncode, err.decode().strip(), wall, 0.0, int(out.split()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| case | exit | field | median wall (s) | median CPU (s) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        rows = []
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            code, err, wall, _, rss = one(ROOT / "tests" / "bad_inputs" / f"{case}.toml", env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            rows.append((code, err, wall, cpu, rss))
        codes = {r[0] for r in rows}
        field = rows[0][1].split(":")[1].strip() if rows[0][1].startswith("error:") else rows[0][1][:40]
        rss = max(r[4] for r in rows) / 1024
        print(
            f"| {case} | {','.join(map(str, sorted(codes)))} | {field} | {statistics.median(r[2] for r in rows):.2f} | "
            f"{statistics.median(r[3] for r in rows):.2f} | {rss:.0f} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
