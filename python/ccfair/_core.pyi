"""Type stubs for the compiled simulator (crates/ccfair-py); tests/test_core_stub.py checks them
against the built extension (names, parameters and defaults)."""

from ccfair.raw_result import RawResult

__version__: str

class SimConfigError(ValueError):
    """The run configuration could not be decoded."""

class SimValueError(ValueError):
    """A configuration value is out of range; ``args == (field, message)``."""

class SimResourceError(MemoryError):
    """An allocation of the run failed; ``args == (field, message)``."""

def simulate(config_json: str, limits_json: str | None = None, arrays: bool = False) -> RawResult:
    """Run one simulation of a serialized ``RunConfig`` within ``Limits``; returns the columnar result dict
    (its series as numpy arrays with ``arrays``)."""

def check(config_json: str, limits_json: str | None = None) -> float:
    """Validate a serialized ``RunConfig`` and check its projected resources, without running it;
    returns the projected number of events (the run's expected cost)."""

def ccas() -> list[tuple[str, str]]:
    """(name, source) of every congestion-control algorithm the simulator knows."""

def schema() -> str:
    """JSON: every algorithm's and discipline's declared parameters and capabilities, the flow
    settings' defaults and bounds (ccfair_sim::schema::json)."""

def resolve_cca(name: str, params_json: str) -> str:
    """JSON object of every parameter CCA ``name`` runs with; raises SimValueError((field, message))."""

def validate(config_json: str) -> None:
    """Check a serialized ``RunConfig`` without running it; raises SimConfigError / SimValueError."""

def resolve_qdisc(kind: str, params_json: str) -> str:
    """JSON object of every parameter queue discipline ``kind`` runs with; raises SimValueError((field, message))."""
