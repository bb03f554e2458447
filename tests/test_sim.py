"""End-to-end tests on the real simulator (ccfair._core)."""

from __future__ import annotations

import json

import ccfair  # noqa: E402
import pytest
from ccfair import (  # noqa: E402
    Spec,
    SpecError,
    _core,  # a missing extension must fail the suite, not skip it
)


def short_s0(examples, *overrides: str) -> Spec:
    return Spec.from_toml(examples / "s0-cubic-vs-bbr.toml").with_overrides(list(overrides))


def test_catalogue_has_the_first_ccas():
    names = [n for n, _ in _core.ccas()]
    for name in ("reno", "cubic", "bbr"):
        assert name in names
    assert all(source for _, source in _core.ccas())


def test_python_config_is_accepted_verbatim(examples):
    """The RunConfig JSON produced by Python passes Rust's deny_unknown_fields decoding."""
    for f in ("s0-cubic-vs-bbr.toml", "s4-newreno-pair.toml"):
        spec = Spec.from_toml(examples / f).with_overrides(["duration=6s", "window.start=0s", "window.end=6s", "flows.1.start=1s"])
        raw = _core.simulate(json.dumps(spec.to_run_config()))
        assert raw["duration_ns"] == 6_000_000_000
        assert len(raw["flows"]) == 2


def test_s0_run_has_complete_tables(examples):
    r = ccfair.run(short_s0(examples))
    s = r.summary
    assert len(r.link) == 450
    assert len(r.throughput) == 2 * 450
    assert 0 < s["utilization"] <= 1.0 + 1e-9
    assert 0 < s["jfi"] <= 1
    assert -1 <= s["fness"] <= 1
    assert sum(f["share"] for f in s["flows"]) == pytest.approx(1.0)
    assert s["queue_delay_ms"]["mean"] is not None and s["queue_delay_ms"]["p99"] is not None
    assert s["queue_delay_ms"]["p99"] >= s["queue_delay_ms"]["mean"] * 0.5
    assert s["sim_wall_s"] > 0
    # delivered bytes can never exceed what the link carried
    assert r.flows["bytes"].sum() <= r.link["tx_bytes"].sum()


def test_same_seed_same_bytes_different_seed_differs(examples, tmp_path):
    spec = short_s0(examples, "flows.0.start_jitter=100ms", "flows.1.start_jitter=100ms")
    a = ccfair.run(spec, seed=1).to_parquet(tmp_path / "a")
    b = ccfair.run(spec, seed=1).to_parquet(tmp_path / "b")
    c = ccfair.run(spec, seed=2).to_parquet(tmp_path / "c")
    tables = [p.name for p in a.glob("*.parquet")]
    assert tables
    for name in tables:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert any((a / n).read_bytes() != (c / n).read_bytes() for n in tables)


def test_trace(examples):
    r = ccfair.run(short_s0(examples, "trace=true", "duration=8s", "window.start=0s", "window.end=8s"))
    assert r.trace is not None and len(r.trace) > 0
    assert set(r.trace["flow"]) <= {"A", "B"}


def test_engine_value_errors_are_spec_errors():
    with pytest.raises(SpecError):
        ccfair.api.simulate({"duration_ns": 0, "seed": 1, "bottleneck": {"rate_bps": 1, "qdisc": {"kind": "droptail"}}, "flows": []})


def test_cli_run_json(examples, capsys):
    from ccfair.cli import main

    assert main(["run", str(examples / "s0-cubic-vs-bbr.toml"), "--json", "--set", "duration=20s", "--set", "window.end=20s"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in summary["flows"]] == ["A", "B"]


def test_mark_ratio_of_a_runs_flows_table_counts_its_ce_marks(examples):
    """A Result names its CE marks ``ecn_marks``; metrics.drop_mark_ratios' default column must
    read them: the L4S flow behind DualPI2 is marked (RFC 9332), the classic one is not."""
    from ccfair.metrics import drop_mark_ratios

    flows = ccfair.run(examples / "l4s-dualpi2.toml").flows
    ratios = drop_mark_ratios(flows)
    l4s = flows.set_index("name").loc["l4s"]
    assert ratios.loc["l4s", "mark_ratio"] == l4s["ecn_marks"] / l4s["sent_packets"] > 0
    assert ratios.loc["classic", "mark_ratio"] == 0
