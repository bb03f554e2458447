"""Type stubs for the compiled simulator (crates/ccfair-py)."""

from typing import Any

__version__: str

class SimConfigError(ValueError):
    """The run configuration could not be decoded."""

class SimValueError(ValueError):
    """A configuration value is out of range; ``args == (field, message)``."""

class SimResourceError(MemoryError):
    """An allocation of the run failed; ``args == (field, message)``."""

def simulate(config_json: str, limits_json: str | None = None) -> dict[str, Any]:
    """Run one simulation of a serialized ``RunConfig`` within ``Limits``; returns the columnar result dict."""

def check(config_json: str, limits_json: str | None = None) -> None:
    """Validate a serialized ``RunConfig`` and check its projected resources, without running it."""

def ccas() -> list[tuple[str, str]]:
    """(name, source) of every congestion-control algorithm the simulator knows."""
