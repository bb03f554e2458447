"""Wall time, CPU time and peak RSS of `ccfair run` on issue 17's five absurd inputs.

Each must be refused (exit 2, naming the field) before anything is allocated:
within 2 s and under 200 MB RSS. tests/test_hardening.py asserts the exit code,
the field and the RSS; the times are measured here (no timing assertions in tests).

Usage: .venv/bin/python bench/absurd_inputs.py [--repeat 5]
Prints a markdown table: median wall, median user+sys CPU, max peak RSS per case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("absurd-rate-gbit", "absurd-rate-float", "absurd-count", "absurd-duration", "absurd-bins-flows")


def one(path: Path, env: dict[str, str]) -> tuple[int, str, float, float, int]:
    """(exit code, stderr, wall s, CPU s, peak RSS KiB) of one `ccfair run` (os.wait4's rusage)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "ccfair", "run", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read().decode() if p.stderr else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    return os.waitstatus_to_exitcode(status), err.strip(), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| case | exit | field | median wall (s) | median CPU (s) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        rows = [one(ROOT / "tests" / "bad_inputs" / f"{case}.toml", env) for _ in range(args.repeat)]
        codes = {r[0] for r in rows}
        field = rows[0][1].split(":")[1].strip() if rows[0][1].startswith("error:") else rows[0][1][:40]
        rss = max(r[4] for r in rows) / 1024
        print(f"| {case} | {','.join(map(str, sorted(codes)))} | {field} | {statistics.median(r[2] for r in rows):.2f} | "
              f"{statistics.median(r[3] for r in rows):.2f} | {rss:.0f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
