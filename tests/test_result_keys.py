"""The raw result has one shape, declared in Rust (result.rs, ``RunResult``): the simulator's
keys, Python's model of them (raw_result.py), the testbed's raw result (testbed/runner.py,
less what it declares not measured) and the tests' stand-in (fake_core.py) must agree, and
with ``arrays=True`` every numeric series, empty or not, is a numpy array of its Rust type."""

from __future__ import annotations

import collections
import types
from typing import Any

import fake_core
import numpy as np
import pytest
from ccfair.raw_result import RawFlow, RawMeter, RawResult, RawTrace
from ccfair.spec import Spec
from ccfair.testbed import runner

NESTED = {"flows": RawFlow, "trace": RawTrace, "meter": RawMeter}

EXPERIMENT: dict[str, Any] = {
    "duration": "1s",
    "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
    "flows": [{"cca": "cubic", "rtt": "20ms"}, {"cca": "reno", "rtt": "40ms", "start": "0.1s"}],
    "trace": True,
}


def shape(raw: dict[str, Any]) -> dict[str, set[str]]:
    """The keys of a raw result: the run's, a flow's, the trace's and the meter's."""
    out = {"run": set(raw)}
    for k in ("trace", "meter"):
        if k in raw:
            out[k] = set(raw[k])
    flows = [set(f) for f in raw["flows"]]
    assert flows and all(f == flows[0] for f in flows), "every flow has the same keys"
    out["flows"] = flows[0]
    return out


def model_shape() -> dict[str, set[str]]:
    out = {"run": set(RawResult.__required_keys__)}
    out.update({k: set(td.__required_keys__) for k, td in NESTED.items()})
    return out


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccfair._core", reason="the compiled simulator is not built")


def config_json(seed: int = 1) -> str:
    import json

    return json.dumps(Spec.from_dict(EXPERIMENT).to_run_config(seed))


def test_python_model_has_the_simulators_keys(core):
    raw = core.simulate(config_json())
    assert shape(raw) == model_shape()


def test_the_model_declares_every_key_once_and_required():
    for td in (RawResult, *NESTED.values()):
        assert not td.__optional_keys__, td.__name__


def test_fake_core_has_the_simulators_keys():
    assert shape(fake_core.simulate(config_json())) == model_shape()


def _testbed_raw() -> dict[str, Any]:
    """The testbed's raw result from made-up measurements of two flows (no root needed)."""
    cfg = Spec.from_dict(EXPERIMENT).to_run_config(1)
    run = object.__new__(runner._Run)
    run.config, run.flows, run.kernel = cfg, cfg["flows"], False
    run.topo = types.SimpleNamespace(id="t")
    stats: dict[str, Any] = collections.defaultdict(lambda: [0, 0])
    trace = {k: [] for k in ("time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")}
    sender = {
        "start_ns": 0,
        "sent_packets": 1,
        "retransmissions": 0,
        "rto_count": 0,
        "min_rtt_ns": 1,
        "mean_rtt_ns": 1,
        "recoveries": 0,
        "trace": trace,
    }
    return run.raw(stats, {"delivered_bytes": [[0], [0]]}, [sender, sender], [0, 0], [0, 0], [0, 0], 1)


def test_testbed_raw_result_has_every_key_it_does_not_declare_unmeasured():
    got = shape(_testbed_raw())
    want = model_shape()
    assert got["run"] == (want["run"] - runner.NOT_MEASURED["run"]) | {"testbed"}
    assert got["flows"] == want["flows"] - runner.NOT_MEASURED["flow"]
    assert got["trace"] == want["trace"]


def test_testbed_declares_only_keys_the_simulator_has():
    want = model_shape()
    assert runner.NOT_MEASURED["run"] <= want["run"]
    assert runner.NOT_MEASURED["flow"] <= want["flows"]


def _series(raw: dict[str, Any]) -> dict[str, Any]:
    """Every value of a raw result that is a sequence of numbers in Rust, by path."""
    out = {}
    levels = [("", raw, RawResult), *((f"{k}.", raw[k], NESTED[k]) for k in ("trace", "meter"))]
    levels += [(f"flows.{i}.", f, RawFlow) for i, f in enumerate(raw["flows"])]
    for prefix, d, td in levels:
        for k, t in td.__annotations__.items():
            if t == "Series" or t is Any:
                out[prefix + k] = d[k]
    return out


def test_every_series_is_an_array_of_its_rust_type_empty_or_not(core):
    raw = core.simulate(config_json(), None, True)
    series = _series(raw)
    assert series, "the model names the series"
    lists = [k for k, v in series.items() if not isinstance(v, np.ndarray)]
    assert not lists, f"series that are not numpy arrays with arrays=True: {lists}"
    # an S0-like run has no L4S packets and no meter: those series are empty but typed as in result.rs
    assert len(raw["sojourn_l4s_count"]) == 0 and raw["sojourn_l4s_count"].dtype == raw["sojourn_count"].dtype == np.uint64
    assert len(raw["meter"]["class"]) == 0 and raw["meter"]["class"].dtype == np.uint16
    assert raw["meter"]["main_rate"].dtype == np.float64
    assert raw["queue_packets"].dtype == np.uint32


def test_lists_and_arrays_carry_the_same_values(core):
    a, b = core.simulate(config_json(), None, False), core.simulate(config_json(), None, True)
    sa, sb = _series(a), _series(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        assert isinstance(sa[k], list) and sa[k] == sb[k].tolist(), k
