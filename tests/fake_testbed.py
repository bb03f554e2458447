"""A stand-in for the testbed run function of a sweep (executors.TESTBED_FN), for tests without
root: the simulator runs the experiment, the run holds its worker for a while as a testbed run
holds its host, and the summary gets a ``testbed`` block with the facts the quality gate reads
plus where and when the run held its worker (``testbed.fake``: worker name, start, end).

Importable by Dask worker processes (tests/ is on the path they inherit)."""

from __future__ import annotations

import time
from typing import Any

#: How long a fake testbed run holds its worker, s (long enough for overlaps to show).
HOLD_S = 0.4


def run(experiment: dict[str, Any], seed: int) -> Any:
    import ccfair
    from ccfair.spec import Spec

    try:
        from distributed import get_worker

        worker = str(get_worker().name)
    except (ImportError, ValueError):
        worker = "none"
    start = time.time()
    result = ccfair.run(Spec.from_dict(experiment), seed=seed)
    time.sleep(HOLD_S)
    result.summary["testbed"] = {
        "kernel": "fake",
        "load_avg_1min": 0.0,
        "bottleneck": {"late_p99_us": 1.0, "late_max_ns": 1000},
        "fake": {"worker": worker, "start": start, "end": time.time()},
    }
    return result
