"""The binding's result conversion: `_core.simulate`'s wall time less the engine's own (`wall_ns`),
on the 2000-flow config, as lists and as numpy arrays; the minimum over REPS runs (docs/benchmarks.md).

Usage: python bench/result_conversion.py [REPS]  (run it with two builds, interleaved, to compare them)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ccfair import _core

CONFIG = Path(__file__).resolve().parent / "identity" / "cubic2000_10G_2s.json"


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cfg = CONFIG.read_text()
    for arrays in (False, True):
        conv, total = [], []
        for _ in range(reps):
            t = time.perf_counter_ns()
            r = _core.simulate(cfg, None, arrays)
            e = time.perf_counter_ns() - t
            conv.append(e - r["wall_ns"])
            total.append(e)
            del r
        print(f"arrays={arrays}: conversion {min(conv) / 1e6:.1f} ms, simulate {min(total) / 1e6:.0f} ms (min of {reps})")


if __name__ == "__main__":
    main()
