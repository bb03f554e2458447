"""Per-run CPU cost of a sweep worker besides the simulation (in-process), for A/B between versions.

    python bench/sweep_worker_ab.py [--runs 96]          # the installed ccfair
    PYTHONPATH=OTHER/python python bench/sweep_worker_ab.py   # another checkout's Python code

Takes the first ``--runs`` runs of S0's lab grid (one repetition) and, for 3
rounds, times (CPU) simulating them alone and running them through the
executor's worker function (``execute_batch`` in batches of 32, or an older
checkout's per-run ``execute``); prints medians per run and the overhead.
"""

from __future__ import annotations

import argparse
import statistics as st
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    import ccfair.executors as ex
    from ccfair.api import simulate
    from ccfair.sweep import load_sweep_file

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=96)
    args = ap.parse_args()
    plan = load_sweep_file(ROOT / "examples" / "s0-lab-grid.toml", ["sweep.repetitions=1"])
    payloads = [t.payload() for t in plan.tasks[: args.runs]]
    batched = hasattr(ex, "execute_batch")

    def work() -> None:
        if batched:
            for i in range(0, len(payloads), 32):
                ex.execute_batch(payloads[i : i + 32])
        else:
            for p in payloads:
                ex.execute(p)  # type: ignore[attr-defined]

    work()  # warm-up: imports
    sims, works = [], []
    for _ in range(3):
        t0 = time.process_time()
        for p in payloads:
            simulate(p["config"])
        sims.append(time.process_time() - t0)
        t0 = time.process_time()
        work()
        works.append(time.process_time() - t0)
    s, w = st.median(sims) / len(payloads) * 1e3, st.median(works) / len(payloads) * 1e3
    print(
        f"{'execute_batch' if batched else 'execute'}: simulate {s:.2f} ms/run, worker path {w:.2f} ms/run, overhead {w - s:.2f} ms/run ({(w - s) / s * 100:.0f} % of simulation)"
    )


if __name__ == "__main__":
    main()
