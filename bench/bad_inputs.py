"""Wall time of ``ccfair`` refusing every file of the bad-input corpus (tests/bad_inputs/).

Each file runs as a user runs it: a fresh ``python -m ccfair check FILE`` process
(``sweep FILE --out DIR --dry-run`` for sweep files), set up as the test harness sets it
up (tests/test_bad_inputs.py: FIFO, sparse 17 MiB file, CSV files). Prints, for wall time
and for the process's CPU time (user + system: what the machine's load does not inflate),
the median and the maximum, how many took over ``--bound`` seconds (2 s: every refusal
within 2 s), and the slowest files. Figures in docs/benchmarks.md ("Bad inputs").

    python bench/bad_inputs.py [--bound 2] [--python .venv/bin/python]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_bad_inputs import FILES, expectation, prepare  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bound", type=float, default=2.0, help="seconds every refusal must stay within")
    ap.add_argument("--python", default=sys.executable, help="interpreter with ccfair installed")
    a = ap.parse_args()
    rows: list[tuple[float, float, str, int | None]] = []  # wall, cpu, file, exit status (None: killed at 60 s)
    for path in FILES:
        _, _, command, setup = expectation(path)
        with tempfile.TemporaryDirectory() as tmp:
            copy = prepare(path, Path(tmp), setup)
            args = ["sweep", str(copy), "--out", f"{tmp}/out", "--dry-run"] if command == "sweep" else ["check", str(copy)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            try:
                code: int | None = subprocess.run([a.python, "-m", "ccfair", *args], capture_output=True, timeout=60).returncode
            except subprocess.TimeoutExpired:
                code = None
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            rows.append((wall, cpu, path.name, code))
    print(f"{len(rows)} files; exit statuses {sorted({str(c) for *_, c in rows})}; load average {open('/proc/loadavg').read().split()[0]}")
    for i, what in ((0, "wall"), (1, "CPU")):
        xs = sorted(r[i] for r in rows)
        over = sum(x > a.bound for x in xs)
        print(f"{what} per file: median {statistics.median(xs):.2f} s, max {xs[-1]:.2f} s; over {a.bound:g} s: {over}")
    for wall, cpu, name, code in sorted(rows, reverse=True)[:5]:
        print(f"  wall {wall:.2f} s, CPU {cpu:.2f} s, exit {code}: {name}")


if __name__ == "__main__":
    main()
