"""The Python API: ``ccfair.run`` and ``ccfair.load``.

``run`` validates the experiment, resolves it to the simulator's
``RunConfig``, calls the Rust engine (``ccfair._core``, imported only here)
and wraps its output in a :class:`~ccfair.result.Result`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from ccfair import profiles
from ccfair.errors import SimulationError, SpecError
from ccfair.raw_result import RawResult
from ccfair.result import Result
from ccfair.spec import Spec

__all__ = ["BACKENDS", "run", "load", "simulate", "check_resources", "as_spec", "import_core"]

_T = TypeVar("_T")


def import_core() -> ModuleType:
    """Import the compiled simulator, or raise :class:`SimulationError` saying how to build it."""
    try:
        from ccfair import _core
    except ImportError as e:
        raise SimulationError(
            "the simulator extension ccfair._core is not built; "
            "run `maturin develop --release` (or `pip install -e .`) in the repository root"
        ) from e
    return _core


def as_spec(spec: Spec | str | Path | dict[str, Any]) -> Spec:
    """Accept a :class:`Spec`, a path to a TOML file, or a raw dict."""
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, (str, Path)):
        return Spec.from_toml(spec)
    if isinstance(spec, dict):
        return Spec.from_dict(spec)
    raise TypeError(f"expected a Spec, a path or a dict, got {type(spec).__name__}")


def simulate(config: dict[str, Any], spec: Spec | None = None, arrays: bool = False, config_json: str | None = None) -> RawResult:
    """Run the engine on a resolved ``RunConfig`` dict and return its raw output dict.

    The engine's own range checks surface as :class:`SpecError` (they name a
    field; with ``spec`` given, expanded flow indices are mapped back to the
    ``[[flows]]`` entry they came from). Anything else the engine rejects is
    a :class:`SimulationError`. ``arrays``: numeric series as numpy arrays
    (no copy) instead of lists; :class:`~ccfair.result.Result` takes either.
    ``config_json``: ``config`` already encoded as JSON (a sweep's plan has it), passed on as it is.
    """
    if spec is not None:
        profiles.check_backend(spec, "sim")
    import_core()
    from ccfair import _core

    config_json, limits_json = _encoded(config, spec, config_json)

    def call() -> RawResult:
        if limits_json is None and not arrays:
            return _core.simulate(config_json)  # the engine's default limits (a test's stand-in may take only this)
        return _core.simulate(config_json, limits_json, arrays=arrays)

    return _engine_errors(spec, call)


def check_resources(config: dict[str, Any], spec: Spec | None = None) -> float:
    """Validate a resolved ``RunConfig`` in the engine and check its projected memory,
    events and wall time against the spec's ``[limits]`` (crates/ccfair-sim/src/limits.rs),
    without running it. Raises :class:`SpecError` naming the field and the projected figure.
    Returns the projected number of events (the run's expected cost; sweeps schedule by it)."""
    import_core()
    from ccfair import _core

    config_json, limits_json = _encoded(config, spec)
    return float(
        _engine_errors(spec, lambda: _core.check(config_json) if limits_json is None else _core.check(config_json, limits_json)) or 0.0
    )


def _encoded(config: dict[str, Any], spec: Spec | None, config_json: str | None = None) -> tuple[str, str | None]:
    """The RunConfig and the spec's limits as the engine takes them (no limits set: None, the engine's defaults)."""
    limits = spec.limits.to_config() if spec is not None else {}
    return config_json or json.dumps(config), json.dumps(limits) if limits else None


def _engine_errors(spec: Spec | None, call: Callable[[], _T]) -> _T:
    """``call()`` (an engine call) with the engine's errors mapped to ours."""
    from ccfair import _core as core

    try:
        return call()
    except (core.SimValueError, core.SimResourceError) as e:
        if len(e.args) >= 2:
            field, message = e.args[0], e.args[1]
        else:
            field, message = "", str(e)
        if isinstance(e, core.SimResourceError):
            message = f"{message}; the run needs more memory than is available (lower it, see docs/experiment-file.md#limits)"
        raise SpecError(_group_field(str(field), spec), str(message)) from None
    except core.SimConfigError as e:
        raise SimulationError(f"the simulator rejected the configuration: {e}") from e


def _group_field(field: str, spec: Spec | None) -> str:
    """Map ``flows.<expanded index>.x`` back to ``flows.<[[flows]] index>.x``."""
    m = re.fullmatch(r"flows\.(\d+)(\..*)?", field)
    if spec is None or m is None:
        return field
    expanded = spec.expand_flows()
    k = int(m.group(1))
    if k >= len(expanded):
        return field
    return f"flows.{expanded[k][0]}{m.group(2) or ''}"


#: Where an experiment can run: the simulator, or real Linux TCP in network namespaces.
BACKENDS = ("sim", "testbed")


def run(spec: Spec | str | Path | dict[str, Any], seed: int | None = None, backend: str = "sim") -> Result:
    """Run one experiment on the simulator (or the testbed) and return its :class:`Result`.

    Args:
        spec: a :class:`Spec`, a path to an experiment TOML file, or a raw dict.
        seed: replaces the spec's seed (every random stream derives from it).
        backend: ``"sim"`` (default) or ``"testbed"`` (real kernel TCP; needs root, see docs/testbed.md).

    Raises:
        SpecError: the experiment is invalid (names the field).
        SimulationError: the simulator is not built or failed.
    """
    s = as_spec(spec)
    if backend not in BACKENDS:
        raise SpecError("backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    profiles.check_backend(s, backend)  # a flow setting this backend cannot apply is an error, never ignored
    config = s.to_run_config(seed)
    if backend == "testbed":
        from ccfair import testbed

        check_resources(config, s)  # the testbed records the same series: same bounds
        result: Result = testbed.run(s, seed)
        return result
    raw = simulate(config, s)
    return Result.from_raw(s, config, raw)


def load(directory: str | Path) -> Result:
    """Read a result directory written by :meth:`Result.to_parquet`."""
    return Result.load(directory)
