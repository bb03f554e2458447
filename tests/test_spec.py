"""Experiment description: parsing, defaults, resolution, overrides and every error case.

Each error test asserts that the message names the dotted field and says
what is allowed -- that is the contract the CLI's one-line errors rely on.
"""

from __future__ import annotations

import copy
import json

import pytest
from ccfair import Spec, SpecError, _core
from ccfair.spec_input import apply_overrides, parse_override


def spec_error(d: dict) -> SpecError:
    with pytest.raises(SpecError) as info:
        Spec.from_dict(d)
    return info.value


def modified(d: dict, path: str, value) -> dict:
    """Copy of ``d`` with ``path`` (dotted) set to ``value``; value None deletes the key."""
    out = copy.deepcopy(d)
    node = out
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if value is None:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


# ----------------------------------------------------------------- valid specs


def test_s0_base_case_resolves_to_the_run_config(s0_dict):
    cfg = Spec.from_dict(s0_dict).to_run_config()
    assert cfg["duration_ns"] == 45_000_000_000
    assert cfg["window_start_ns"] == 10_000_000_000
    assert cfg["window_end_ns"] == 45_000_000_000
    assert cfg["bin_ns"] == 100_000_000
    assert cfg["sample_ns"] == 10_000_000
    assert cfg["seed"] == 1
    assert cfg["trace"] is False
    assert cfg["bottleneck"] == {
        "rate_bps": 10_000_000,
        "delay_ns": 0,
        "qdisc": {"kind": "droptail", "limit_packets": 21, "limit_bytes": None},
        "l2_overhead_bytes": 14,  # Ethernet frames, as the testbed's
    }
    a, b = cfg["flows"]
    assert (a["name"], a["cca"], a["rtt_ns"], a["start_ns"]) == ("A", "cubic", 50_000_000, 0)
    assert (b["name"], b["cca"], b["start_ns"]) == ("B", "bbr", 5_000_000_000)
    assert a["mss_bytes"] == 1448 and a["rwnd_init_pkts"] == 200 and a["init_cwnd_pkts"] == 10
    assert a["delayed_ack"] is True and a["pacing"] is False and a["stop_ns"] is None


def test_run_config_has_exactly_the_rust_fields(s0_dict):
    """Mirror of RunConfig / FlowConfig in crates/ccfair-sim/src/config.rs (deny_unknown_fields)."""
    cfg = Spec.from_dict(s0_dict).to_run_config()
    assert set(cfg) == {
        "duration_ns", "seed", "bin_ns", "sample_ns", "sojourn_bin_ns",
        "window_start_ns", "window_end_ns", "trace", "bottleneck", "flows",
    }  # fmt: skip
    assert set(cfg["bottleneck"]) == {"rate_bps", "delay_ns", "qdisc", "l2_overhead_bytes"}
    assert set(cfg["flows"][0]) == {
        "name", "cca", "pacing", "rtt_ns", "start_ns", "start_jitter_ns", "stop_ns",
        "mss_bytes", "rwnd_init_pkts", "rwnd_max_pkts", "init_cwnd_pkts", "delayed_ack",
        "size_bytes", "rate_cap_bps", "loss", "ecn", "transport", "host_jitter_ns", "ack_jitter_ns",
        "skb_stack_ns",
    }  # fmt: skip


def test_timestamp_offsets_none_reaches_the_simulator_as_tcp_timestamps_2(s0_dict):
    """testbed.timestamp_offsets: Linux's tcp_timestamps = 1 (the RunConfig default, field
    omitted) or 2 (tcp_timestamp_offsets false), on both backends (cc/mod.rs draw_ts_clocks)."""
    assert "tcp_timestamp_offsets" not in Spec.from_dict(s0_dict).to_run_config()
    d = modified(s0_dict, "testbed", {"timestamp_offsets": "none"})
    cfg = Spec.from_dict(d).to_run_config()
    assert cfg["tcp_timestamp_offsets"] is False
    _core.validate(json.dumps(cfg))  # the Rust RunConfig accepts it


def test_seed_argument_replaces_the_spec_seed(s0_dict):
    spec = Spec.from_dict(s0_dict)
    assert spec.to_run_config(seed=7)["seed"] == 7
    with pytest.raises(SpecError, match="seed"):
        spec.to_run_config(seed=-1)


def test_defaults(s0_dict):
    d = copy.deepcopy(s0_dict)
    del d["window"], d["seed"], d["name"]
    del d["bottleneck"]["buffer"]
    for f in d["flows"]:
        del f["name"]
    spec = Spec.from_dict(d)
    assert spec.window.start == 0 and spec.window.end == spec.duration
    assert spec.seed == 1
    assert [f.name for f in spec.flows] == ["A", "B"]
    assert str(spec.bottleneck.buffer) == "1bdp"
    assert spec.bottleneck.qdisc.kind == "droptail"
    cfg = spec.to_run_config()
    assert cfg["bottleneck"]["qdisc"]["limit_packets"] == 42  # 1 BDP = 41.67 -> 42


def test_buffer_forms(s0_dict):
    def limits(buf):
        return Spec.from_dict(modified(s0_dict, "bottleneck.buffer", buf)).to_run_config()["bottleneck"]["qdisc"]

    assert limits("42pkt") == {"kind": "droptail", "limit_packets": 42, "limit_bytes": None}
    assert limits("64KB") == {"kind": "droptail", "limit_packets": None, "limit_bytes": 64_000}
    assert limits("2bdp")["limit_packets"] == 83  # 83.33
    assert limits("8bdp")["limit_packets"] == 333


def test_bdp_uses_the_minimum_base_rtt_unless_bdp_rtt_is_given(s0_dict):
    d = modified(s0_dict, "flows.1.rtt", "100ms")
    assert Spec.from_dict(d).to_run_config()["bottleneck"]["qdisc"]["limit_packets"] == 21
    d = modified(d, "bottleneck.bdp_rtt", "100ms")
    assert Spec.from_dict(d).to_run_config()["bottleneck"]["qdisc"]["limit_packets"] == 42


def test_bdp_counts_packets_of_the_flows_wire_size(s0_dict):
    d = modified(s0_dict, "flows.0.mss", 8948)  # 9000-byte jumbo frames
    d = modified(d, "flows.1.mss", 8948)
    assert Spec.from_dict(d).to_run_config()["bottleneck"]["qdisc"]["limit_packets"] == 3  # 31250/9000


@pytest.mark.parametrize(
    ("written", "cca", "pacing"),
    [
        ("newreno", "reno", False),
        ("NewReno", "reno", False),
        ("bbrv1", "bbr", False),
        ("bbr1", "bbr", False),
        ("CUBIC", "cubic", False),
        ("cubic+pacing", "cubic", True),
        ("reno+pacing", "reno", True),
    ],
)
def test_cca_aliases(s0_dict, written, cca, pacing):
    spec = Spec.from_dict(modified(s0_dict, "flows.0.cca", written))
    flow = spec.to_run_config()["flows"][0]
    assert (flow["cca"], flow["pacing"]) == (cca, pacing)


def test_pacing_suffix_conflicting_with_pacing_false(s0_dict):
    d = modified(s0_dict, "flows.0.cca", "cubic+pacing")
    d = modified(d, "flows.0.pacing", False)
    e = spec_error(d)
    assert e.field == "flows.0.pacing"


def test_count_expands_to_named_flows(s0_dict):
    d = copy.deepcopy(s0_dict)
    d["flows"] = [
        {"name": "cubic", "cca": "cubic", "rtt": "50ms", "count": 3},
        {"cca": "bbr", "rtt": "50ms", "count": 2, "start_jitter": "1s"},
    ]
    spec = Spec.from_dict(d)
    cfg = spec.to_run_config()
    assert [f["name"] for f in cfg["flows"]] == ["cubic.0", "cubic.1", "cubic.2", "B.0", "B.1"]
    assert all(f["start_jitter_ns"] == 1_000_000_000 for f in cfg["flows"][3:])
    assert [g for g, _, _ in spec.expand_flows()] == [0, 0, 0, 1, 1]


def test_two_thousand_flows(s0_dict):
    d = modified(s0_dict, "flows", [{"cca": "cubic", "rtt": "50ms", "count": 1000}, {"cca": "bbr", "rtt": "50ms", "count": 1000}])
    assert len(Spec.from_dict(d).to_run_config()["flows"]) == 2000


def test_default_names_beyond_26_groups(s0_dict):
    d = modified(s0_dict, "flows", [{"cca": "reno", "rtt": "50ms"} for _ in range(27)])
    names = [f["name"] for f in Spec.from_dict(d).to_run_config()["flows"]]
    assert names[0] == "flow0" and names[26] == "flow26"


def test_qdisc_table_form_and_aliases(s0_dict):
    for q in ("droptail", "DropTail", "pfifo", {"kind": "drop-tail"}, {}):
        spec = Spec.from_dict(modified(s0_dict, "bottleneck.qdisc", q))
        assert spec.to_run_config()["bottleneck"]["qdisc"]["kind"] == "droptail"


def test_dumped_spec_round_trips(s0_dict):
    spec = Spec.from_dict(modified(s0_dict, "flows.0.cca", "cubic+pacing"))
    dumped = spec.model_dump(mode="json")
    assert dumped["duration"] == "45s" and dumped["bottleneck"]["buffer"] == "0.5bdp"
    assert dumped["bottleneck"]["rate"] == "10Mbit"
    again = Spec.from_dict(dumped)
    assert again == spec
    assert again.to_run_config() == spec.to_run_config()


def test_examples_load(examples):
    s0 = Spec.from_toml(examples / "s0-cubic-vs-bbr.toml")
    cfg = s0.to_run_config()
    assert cfg["bottleneck"]["qdisc"]["limit_packets"] == 21
    assert (cfg["window_start_ns"], cfg["window_end_ns"], cfg["duration_ns"]) == (10 * 10**9, 45 * 10**9, 45 * 10**9)
    assert [(f["cca"], f["start_ns"], f["rwnd_init_pkts"]) for f in cfg["flows"]] == [
        ("cubic", 0, 200),
        ("bbr", 5 * 10**9, 200),
    ]
    s4 = Spec.from_toml(examples / "s4-newreno-pair.toml")
    cfg = s4.to_run_config()
    assert cfg["bottleneck"]["rate_bps"] == 100_000_000
    assert cfg["bottleneck"]["qdisc"]["limit_packets"] == 417
    assert (cfg["window_start_ns"], cfg["window_end_ns"], cfg["duration_ns"]) == (60 * 10**9, 300 * 10**9, 300 * 10**9)
    assert [(f["cca"], f["start_ns"]) for f in cfg["flows"]] == [("reno", 0), ("reno", 30 * 10**9)]


def test_name_defaults_to_file_stem(tmp_path, s0_dict):
    p = tmp_path / "my-exp.toml"
    p.write_text('duration = "10s"\n[bottleneck]\nrate = "1Mbit"\n[[flows]]\ncca = "reno"\nrtt = "20ms"\n')
    assert Spec.from_toml(p).name == "my-exp"


# ----------------------------------------------------------------- errors


def test_unknown_cca_names_the_field_and_lists_ccas(s0_dict):
    e = spec_error(modified(s0_dict, "flows.1.cca", "nosuchcca"))
    assert e.field == "flows.1.cca"
    assert "nosuchcca" in e.message
    for name in ("reno", "cubic", "bbr"):
        assert name in e.message


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("duration", "duration"),
        ("bottleneck", "bottleneck"),
        ("bottleneck.rate", "bottleneck.rate"),
        ("flows", "flows"),
        ("flows.0.cca", "flows.0.cca"),
        ("flows.1.rtt", "flows.1.rtt"),
    ],
)
def test_missing_required_field(s0_dict, path, field):
    e = spec_error(modified(s0_dict, path, None))
    assert e.field == field
    assert "missing" in e.message


@pytest.mark.parametrize(
    ("path", "field", "valid"),
    [
        ("colour", "colour", "duration"),
        ("bottleneck.rat", "bottleneck.rat", "rate"),
        ("flows.1.rttt", "flows.1.rttt", "rtt"),
        ("window.begin", "window.begin", "start"),
        ("bottleneck.qdisc", None, None),
    ],
)
def test_unknown_key_lists_the_valid_keys(s0_dict, path, field, valid):
    if field is None:  # unknown key inside a qdisc table
        e = spec_error(modified(s0_dict, "bottleneck.qdisc", {"kind": "droptail", "target": "5ms"}))
        assert e.field == "bottleneck.qdisc.target"
        assert "kind" in e.message
        return
    e = spec_error(modified(s0_dict, path, 1))
    assert e.field == field
    assert "unknown key" in e.message
    assert valid in e.message
    assert "valid keys:" in e.message


def test_unknown_key_suggests_the_closest(s0_dict):
    e = spec_error(modified(s0_dict, "bottleneck.rat", "1Mbit"))
    assert "did you mean 'rate'" in e.message


@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"start": "10s", "end": "50s"}, "window.end"),
        ({"start": "45s", "end": "45s"}, "window.start"),
        ({"start": "50s"}, "window.start"),
        ({"start": "10050ms", "end": "45s"}, "window.start"),
        ({"start": "10s", "end": "44950ms"}, "window.end"),
    ],
)
def test_window_outside_the_run_or_off_the_bins(s0_dict, window, field):
    e = spec_error(modified(s0_dict, "window", window))
    assert e.field == field


def test_defaulted_window_end_blames_duration(s0_dict):
    d = modified(s0_dict, "window", None)
    e = spec_error(modified(d, "duration", "45050ms"))
    assert e.field == "duration"
    assert "bin" in e.message


@pytest.mark.parametrize(
    ("path", "value", "field", "text"),
    [
        ("flows.0.rtt", "0ms", "flows.0.rtt", "> 0"),
        ("flows.0.rtt", 50, "flows.0.rtt", "unit"),
        ("duration", "0s", "duration", "> 0"),
        ("bin", "0ms", "bin", "> 0"),
        ("flows.0.start", "-1s", "flows.0.start", ">= 0"),
        ("flows.0.start", "45s", "flows.0.start", "duration"),
        ("flows.0.stop", "0s", "flows.0.stop", "after start"),
        ("flows.0.mss", 10, "flows.0.mss", "64"),
        ("flows.0.rwnd", 0, "flows.0.rwnd", "1"),
        ("flows.0.rwnd_max", 100, "flows.0.rwnd_max", "rwnd"),
        ("flows.0.init_cwnd", 0, "flows.0.init_cwnd", "1"),
        ("flows.0.count", 0, "flows.0.count", "1"),
        ("flows.0.pacing", "perhaps", "flows.0.pacing", "boolean"),
        ("flows.1.name", "A", "flows.1.name", "duplicate"),
        ("seed", -1, "seed", "0"),
        ("seed", "abc", "seed", "integer"),
        ("bottleneck.delay", "30ms", "flows.0.rtt", "twice"),
        ("flows", [], "flows", "at least one"),
        ("flows", "A", "flows", "list"),
        ("bottleneck", "10Mbit", "bottleneck", "table"),
        *[("bottleneck.rate", rate, "bottleneck.rate", "> 0") for rate in ("-10Mbit", "0Mbit", 0, -1)],
        *[("bottleneck.buffer", buf, "bottleneck.buffer", "> 0") for buf in ("0pkt", "0bdp", "0KB", "0B")],
        ("bottleneck.buffer", "1000B", "bottleneck.buffer", "1500"),  # smaller than a packet
        ("bottleneck.qdisc", "codel2000", "bottleneck.qdisc.kind", "droptail"),  # unknown kind: the kinds listed
    ],
)
def test_field_errors(s0_dict, path, value, field, text):
    e = spec_error(modified(s0_dict, path, value))
    assert e.field == field, str(e)
    assert text in e.message, str(e)
    assert str(e).startswith(f"{field}: ")
    assert "\n" not in str(e)


def test_top_level_must_be_a_table():
    with pytest.raises(SpecError):
        Spec.from_dict([1, 2])


def test_malformed_toml_names_file_and_line(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('duration = "45s"\n[bottleneck\nrate = "10Mbit"\n')
    with pytest.raises(SpecError) as info:
        Spec.from_toml(p)
    assert info.value.field == str(p)
    assert "malformed TOML" in info.value.message and "line 2" in info.value.message


def test_missing_file(tmp_path):
    with pytest.raises(SpecError, match="file not found") as info:
        Spec.from_toml(tmp_path / "nope.toml")
    assert info.value.field.endswith("nope.toml")


def test_binary_file(tmp_path):
    p = tmp_path / "x.toml"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match="UTF-8"):
        Spec.from_toml(p)


# ----------------------------------------------------------------- overrides


def test_overrides_from_the_issue(s0_dict):
    spec = Spec.from_dict(s0_dict).with_overrides(["bottleneck.buffer=8bdp", "flows.1.cca=reno", "flows.0.start=5s"])
    cfg = spec.to_run_config()
    assert cfg["bottleneck"]["qdisc"]["limit_packets"] == 333
    assert cfg["flows"][1]["cca"] == "reno"
    assert cfg["flows"][0]["start_ns"] == 5_000_000_000


@pytest.mark.parametrize(
    ("item", "path", "value"),
    [
        ("seed=7", ["seed"], 7),
        ("trace=true", ["trace"], True),
        ("flows.0.mss=1.5", ["flows", "0", "mss"], 1.5),
        ("bottleneck.buffer=8bdp", ["bottleneck", "buffer"], "8bdp"),
        ('name="hello world"', ["name"], "hello world"),
        ("name=hello world", ["name"], "hello world"),
        ("flows.0.cca = reno", ["flows", "0", "cca"], "reno"),
        ('window={start="1s", end="2s"}', ["window"], {"start": "1s", "end": "2s"}),
        ("name=", ["name"], ""),
    ],
)
def test_parse_override(item, path, value):
    assert parse_override(item) == (path, value)


@pytest.mark.parametrize("item", ["novalue", "=5", "a..b=1", ".a=1"])
def test_bad_override_syntax(item):
    with pytest.raises(SpecError) as info:
        parse_override(item)
    assert info.value.field == "--set"


def test_override_creates_missing_tables(s0_dict):
    d = modified(s0_dict, "window", None)
    out = apply_overrides(d, ["window.start=10s"])
    assert out["window"] == {"start": "10s"}
    assert d.get("window") is None  # the input is not modified


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ("flows.2.cca=reno", "flows.2"),
        ("flows.x.cca=reno", "flows.x"),
        ("duration.unit=s", "duration.unit"),
    ],
)
def test_override_path_errors(s0_dict, item, field):
    with pytest.raises(SpecError) as info:
        apply_overrides(s0_dict, [item])
    assert info.value.field == field


def test_override_of_an_unknown_key_is_caught_by_validation(s0_dict):
    with pytest.raises(SpecError) as info:
        Spec.from_dict(s0_dict).with_overrides(["bottleneck.buffr=2bdp"])
    assert info.value.field == "bottleneck.buffr"
    assert "buffer" in info.value.message


def test_overrides_apply_to_the_raw_file_not_the_resolved_spec(s0_dict):
    d = modified(s0_dict, "flows.0.cca", "cubic+pacing")
    d = modified(d, "window", None)
    spec = Spec.from_dict(d).with_overrides(["flows.0.cca=reno", "duration=60s"])
    cfg = spec.to_run_config()
    assert cfg["flows"][0]["pacing"] is False  # pacing came from the old "+pacing" suffix
    assert cfg["window_end_ns"] == 60_000_000_000  # the default window follows the new duration
