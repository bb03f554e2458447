"""ccfair: measure fairness between congestion-control algorithms at a shared bottleneck.

Typical use::

    import ccfair
    result = ccfair.run("examples/s0-cubic-vs-bbr.toml", seed=3)
    print(result.summary["fness"])
    result.flows            # per-flow summary (pandas DataFrame)
    result.to_parquet("out/run3")

The simulator extension (``ccfair._core``) is imported only when a run starts,
so specs can be loaded and validated without it. Everything heavier than the
error types (pydantic models, pandas, pyarrow) is imported on first use of
the name that needs it: ``import ccfair`` stays cheap (tests/test_startup.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccfair.errors import SimulationError, SpecError

__version__ = "0.1.0"

__all__ = ["Result", "SimulationError", "Spec", "SpecError", "load", "load_sweep", "run", "__version__"]

if TYPE_CHECKING:
    from ccfair.api import load, run
    from ccfair.result import Result
    from ccfair.spec import Spec
    from ccfair.store import load_sweep


def __getattr__(name: str) -> Any:
    # Spec pulls in pydantic, run/load/Result the simulator and pandas: import them on first use.
    if name == "Spec":
        from ccfair.spec import Spec

        return Spec
    if name in ("run", "load"):
        from ccfair import api

        return getattr(api, name)
    if name == "load_sweep":
        from ccfair.store import load_sweep

        return load_sweep
    if name == "Result":
        from ccfair.result import Result

        return Result
    raise AttributeError(f"module 'ccfair' has no attribute {name!r}")
