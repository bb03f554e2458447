"""Type stubs for the compiled simulator (crates/ccfair-py)."""

from typing import Any

__version__: str

class SimConfigError(ValueError):
    """The run configuration could not be decoded."""

class SimValueError(ValueError):
    """A configuration value is out of range; ``args == (field, message)``."""

def simulate(config_json: str) -> dict[str, Any]:
    """Run one simulation of a serialized ``RunConfig``; returns the columnar result dict."""

def ccas() -> list[tuple[str, str]]:
    """(name, source) of every congestion-control algorithm the simulator knows."""
