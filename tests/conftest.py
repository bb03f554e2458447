"""Shared fixtures.

Most tests run without the compiled simulator: spec parsing, units, metrics
and the CLI's error paths are pure Python, and the result/CLI pipeline is
exercised against ``fake_core`` (a stand-in for ``ccfair._core`` with the
same interface and hand-computable output). Tests of the real engine live in
test_sim.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON_SRC = ROOT / "python"
if str(PYTHON_SRC) not in sys.path:
    sys.path.insert(0, str(PYTHON_SRC))

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ccfair  # noqa: E402
import fake_core  # noqa: E402
from ccfair import ccas  # noqa: E402


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def examples() -> Path:
    return ROOT / "examples"


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """Environment for `python -m ccfair` subprocesses that finds the source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_SRC), env.get("PYTHONPATH", "")) if p)
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    return env


@pytest.fixture(autouse=True)
def _real_catalogue():
    """Every test starts and ends with an empty CCA-catalogue cache, so a test
    that swaps in the fake ``_core`` never leaks its catalogue into another."""
    ccas.clear_cache()
    yield
    ccas.clear_cache()


@pytest.fixture
def fake_sim(monkeypatch: pytest.MonkeyPatch):
    """Replace ``ccfair._core`` with the deterministic fake for this test."""
    monkeypatch.setitem(sys.modules, "ccfair._core", fake_core)
    monkeypatch.setattr(ccfair, "_core", fake_core, raising=False)
    ccas.clear_cache()
    yield fake_core
    ccas.clear_cache()


@pytest.fixture
def s0_dict() -> dict:
    """S0's base case as a raw dict (what a TOML file would give)."""
    return {
        "name": "s0",
        "duration": "45s",
        "window": {"start": "10s", "end": "45s"},
        "seed": 1,
        "bottleneck": {"rate": "10Mbit", "buffer": "0.5bdp"},
        "flows": [
            {"name": "A", "cca": "cubic", "rtt": "50ms", "start": "0s"},
            {"name": "B", "cca": "bbr", "rtt": "50ms", "start": "5s"},
        ],
    }
