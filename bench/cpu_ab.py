"""Interleaved A/B of two ccfair-bench binaries in CPU time (user + sys of
the child), not wall time, so that other load on a shared machine matters
less: ROUNDS rounds of `repeat RUNS CONFIG` with A and B, alternating which
goes first; prints the medians of CPU ms per run and the median of the
per-round ratios B/A.

    python3 bench/cpu_ab.py BIN_A BIN_B ROUNDS RUNS CONFIG.json
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys


def cpu_ms_per_run(binary: str, runs: int, config: str) -> float:
    """CPU time of `binary repeat runs config`, per run, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "repeat", str(runs), config], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return used / runs * 1000


def main() -> None:
    a_bin, b_bin, rounds, runs, config = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    rows = []
    for r in range(rounds):
        if r % 2:
            b = cpu_ms_per_run(b_bin, runs, config)
            a = cpu_ms_per_run(a_bin, runs, config)
        else:
            a = cpu_ms_per_run(a_bin, runs, config)
            b = cpu_ms_per_run(b_bin, runs, config)
        rows.append((a, b))
    a_ms = [a for a, _ in rows]
    b_ms = [b for _, b in rows]
    ratio = statistics.median(b / a for a, b in rows)
    print(
        f"rounds {rounds} x {runs} runs: CPU per run median A {statistics.median(a_ms):.3f} ms, "
        f"B {statistics.median(b_ms):.3f} ms; min A {min(a_ms):.3f}, min B {min(b_ms):.3f}; median ratio B/A {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
