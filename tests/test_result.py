"""Result tables, summary and Parquet I/O, on the fake simulator (see fake_core.py).

With the fake, flow A delivers 1000 B and flow B 2000 B per 100 ms bin from
their starts, so over the S0 window (10-45 s, 350 bins):
A = 350 000 B, B = 700 000 B, throughput 80 / 160 kbit/s, shares 1/3 and 2/3,
JFI = 9/10, fness(A, B) = 1 - 1/2 = 0.5.
"""

from __future__ import annotations

import json

import ccfair
import pandas as pd
import pytest
from ccfair import Spec, SpecError
from ccfair.result import window_bins


def test_summary_numbers(fake_sim, s0_dict):
    r = ccfair.run(Spec.from_dict(s0_dict))
    s = r.summary
    assert s["name"] == "s0" and s["seed"] == 1
    assert s["window_s"] == {"start": 10.0, "end": 45.0}
    a, b = s["flows"]
    assert (a["name"], a["cca"], a["rtt_ms"]) == ("A", "cubic", 50.0)
    assert a["bytes"] == 350_000 and b["bytes"] == 700_000
    assert a["throughput_bps"] == pytest.approx(80_000)
    assert b["throughput_bps"] == pytest.approx(160_000)
    assert a["share"] == pytest.approx(1 / 3) and b["share"] == pytest.approx(2 / 3)
    assert b["retransmissions"] == 3
    assert s["jfi"] == pytest.approx(0.9)
    assert s["fness"] == pytest.approx(0.5)
    # link: 3000 B of payload per bin -> 3107 wire bytes per bin
    assert s["utilization"] == pytest.approx(350 * 3107 * 8 / (10e6 * 35))
    assert s["queue_delay_ms"]["mean"] == pytest.approx(2.0)
    assert s["queue_delay_ms"]["p99"] == pytest.approx(2.1)  # bin 20 of 0.1 ms, upper edge
    assert s["queue_packets_mean"] == pytest.approx(2.0)  # (k+1) % 5 over whole cycles
    assert s["sim_wall_s"] == pytest.approx(0.005)
    json.dumps(s, allow_nan=False)  # JSON-clean


def test_required_summary_keys(fake_sim, s0_dict):
    s = ccfair.run(Spec.from_dict(s0_dict)).summary
    for key in ("flows", "jfi", "fness", "utilization", "queue_delay_ms", "sim_wall_s", "seed", "name", "window_s"):
        assert key in s
    assert set(s["queue_delay_ms"]) == {"mean", "p99"}
    for key in ("name", "cca", "rtt_ms", "throughput_bps", "share", "retransmissions"):
        assert key in s["flows"][0]


def test_fness_only_for_two_flows(fake_sim, s0_dict):
    d = dict(s0_dict, flows=s0_dict["flows"] + [{"cca": "reno", "rtt": "50ms"}])
    s = ccfair.run(Spec.from_dict(d)).summary
    assert s["fness"] is None
    assert s["jfi"] == pytest.approx(jain3 := (1 + 2 + 3) ** 2 / (3 * (1 + 4 + 9)))
    assert 0 < jain3 < 1


def test_tables(fake_sim, s0_dict):
    r = ccfair.run(Spec.from_dict(s0_dict))
    assert list(r.flows.columns[:8]) == ["name", "cca", "pacing", "rtt_ms", "start_s", "throughput_bps", "share", "bytes"]
    for col in ("retransmissions", "losses", "drops", "rto", "min_rtt_ms"):
        assert col in r.flows.columns
    assert r.flows["min_rtt_ms"].tolist() == [51.0, 51.0]
    assert len(r.throughput) == 2 * 450
    row = r.throughput[(r.throughput.flow == "B") & (r.throughput.time_s == 5.0)].iloc[0]
    assert row["bytes"] == 2000 and row["throughput_bps"] == pytest.approx(160_000)
    assert list(r.link.columns) == ["time_s", "tx_bytes", "utilization", "sojourn_packets", "queue_delay_ms"]
    assert len(r.link) == 450 and r.link["queue_delay_ms"].iloc[0] == pytest.approx(2.0)
    assert list(r.queue.columns) == ["time_s", "packets", "bytes"]
    assert r.sojourn["bin_start_ms"].tolist() == pytest.approx([1.0, 2.0, 3.0])  # sorted
    assert r.sojourn["count"].tolist() == [90, 9, 1]
    assert r.trace is None


def test_trace_table(fake_sim, s0_dict):
    r = ccfair.run(Spec.from_dict(dict(s0_dict, trace=True)))
    assert r.trace is not None
    assert set(r.trace["flow"]) == {"A", "B"}
    assert list(r.trace.columns) == ["flow", "time_s", "cwnd_pkts", "inflight_pkts", "srtt_ms", "pacing_rate_bps", "ssthresh_pkts"]


def test_counted_flows_have_expanded_names(fake_sim, s0_dict):
    d = dict(s0_dict, flows=[{"name": "c", "cca": "cubic", "rtt": "50ms", "count": 3}])
    r = ccfair.run(Spec.from_dict(d))
    assert r.flows["name"].tolist() == ["c.0", "c.1", "c.2"]


def test_parquet_is_deterministic_and_loads_back(fake_sim, s0_dict, tmp_path):
    spec = Spec.from_dict(dict(s0_dict, trace=True))
    one = ccfair.run(spec, seed=3).to_parquet(tmp_path / "one")
    two = ccfair.run(spec, seed=3).to_parquet(tmp_path / "two")
    other = ccfair.run(spec, seed=4).to_parquet(tmp_path / "other")
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(
        ["flows.parquet", "throughput.parquet", "link.parquet", "queue.parquet", "sojourn.parquet",
         "trace.parquet", "summary.json", "spec.json", "run_config.json", "versions.json"]
    )  # fmt: skip
    for name in names:
        if name != "summary.json":
            assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert (one / "queue.parquet").read_bytes() != (other / "queue.parquet").read_bytes()

    loaded = ccfair.load(one)
    original = ccfair.run(spec, seed=3)
    assert loaded.summary == json.loads((one / "summary.json").read_text())
    assert loaded.spec == spec
    assert loaded.config["seed"] == 3
    for table in ("flows", "throughput", "link", "queue", "sojourn", "trace"):
        pd.testing.assert_frame_equal(getattr(loaded, table), getattr(original, table), check_dtype=False)


def test_no_wall_time_in_parquet(fake_sim, s0_dict):
    r = ccfair.run(Spec.from_dict(s0_dict))
    for df in r.tables().values():
        assert not any("wall" in c for c in df.columns)


def test_run_accepts_path_dict_and_spec(fake_sim, examples, s0_dict):
    assert ccfair.run(examples / "s0-cubic-vs-bbr.toml").summary["fness"] == pytest.approx(0.5)
    assert ccfair.run(str(examples / "s0-cubic-vs-bbr.toml")).summary["seed"] == 1
    assert ccfair.run(s0_dict, seed=9).summary["seed"] == 9


def test_engine_range_errors_become_spec_errors_with_group_index(fake_sim, s0_dict, monkeypatch):
    # the fake rejects "bbr" here; flow group 1 expands to flows 2..3 of the run
    monkeypatch.setattr(fake_sim, "ccas", lambda: [("reno", ""), ("cubic", ""), ("bbr", "")])
    d = dict(s0_dict, flows=[{"cca": "cubic", "rtt": "50ms", "count": 2}, {"cca": "bbr", "rtt": "50ms", "count": 2}])
    spec = Spec.from_dict(d)
    original = fake_sim.simulate

    def reject_bbr(config_json: str) -> dict:
        cfg = json.loads(config_json)
        for i, f in enumerate(cfg["flows"]):
            if f["cca"] == "bbr":
                raise fake_sim.SimValueError(f"flows.{i}.cca", "not today")
        return original(config_json)

    monkeypatch.setattr(fake_sim, "simulate", reject_bbr)
    with pytest.raises(SpecError) as info:
        ccfair.run(spec)
    assert info.value.field == "flows.1.cca"
    assert info.value.message == "not today"


def test_missing_extension_is_a_simulation_error(monkeypatch, s0_dict):
    import sys

    monkeypatch.setitem(sys.modules, "ccfair._core", None)  # makes the import fail
    monkeypatch.delattr(ccfair, "_core", raising=False)
    with pytest.raises(ccfair.SimulationError, match="maturin develop"):
        ccfair.run(Spec.from_dict(s0_dict))


def test_window_bins():
    assert window_bins(10_000, 45_000, 100, 450) == (100, 450)
    assert window_bins(50, 250, 100, 450) == (1, 2)  # only whole bins
    assert window_bins(0, 10**9, 100, 450) == (0, 450)  # clipped to the run
