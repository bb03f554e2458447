"""Sender profiles and application-flow keys (python/ccfair/profiles.py)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import ccfair
import pytest
from ccfair import profiles
from ccfair.errors import SpecError
from ccfair.spec import Spec

BASE = {
    "duration": "12s",
    "window": {"start": "2s"},
    "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
    "profiles": {"cp": {"cca": "bbr", "initial_cwnd": 32, "min_rto": "50ms", "source": "test"}},
    "flows": [{"cca": "cubic", "rtt": "50ms"}, {"profile": "cp", "rtt": "50ms", "start": "1s"}],
}


def spec(**changes: object) -> Spec:
    d = copy.deepcopy(BASE)
    d.update(changes)
    return Spec.from_dict(d)


def with_second_flow(**keys: object) -> dict:
    """BASE with these keys set on its second flow (the profile's)."""
    d = copy.deepcopy(BASE)
    d["flows"][1].update(keys)
    return d


def refusal(d: dict) -> SpecError:
    """The error reading ``d`` as an experiment raises."""
    with pytest.raises(SpecError) as e:
        Spec.from_dict(d)
    return e.value


def flow_config(s: Spec, i: int) -> dict:
    return s.to_run_config()["flows"][i]


def test_profile_fields_become_the_flows_settings() -> None:
    fc = flow_config(spec(), 1)
    assert fc["cca"] == "bbr"
    assert fc["init_cwnd_pkts"] == 32
    assert fc["min_rto_ns"] == 50_000_000


def test_a_key_the_flow_sets_wins_over_its_profile() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][1]["init_cwnd"] = 16
    d["flows"][1]["cca"] = "cubic+pacing"
    fc = flow_config(Spec.from_dict(d), 1)
    assert (fc["init_cwnd_pkts"], fc["cca"], fc["pacing"]) == (16, "cubic", True)


def test_every_profile_field_maps_to_a_flow_key() -> None:
    full = {"cca": "cubic", "initial_cwnd": 4, "pacing": True, "min_rto": "1s", "initial_rwnd": 64, "delayed_ack": False}
    assert set(full) | {"tso"} == set(profiles.FIELDS)
    s = spec(profiles={"full": full}, flows=[{"profile": "full", "rtt": "50ms"}])
    fc = flow_config(s, 0)
    assert (fc["cca"], fc["init_cwnd_pkts"], fc["pacing"], fc["min_rto_ns"], fc["rwnd_init_pkts"], fc["delayed_ack"]) == (
        "cubic",
        4,
        True,
        1_000_000_000,
        64,
        False,
    )


def test_flows_without_min_rto_keep_their_run_config_unchanged() -> None:
    # run ids of existing sweeps hash the RunConfig: an unset min_rto adds no key
    assert "min_rto_ns" not in flow_config(spec(), 0)


def test_unknown_profile_names_the_flow_field() -> None:
    e = refusal(with_second_flow(profile="cpp"))
    assert e.field == "flows.1.profile"
    assert "'cpp'" in e.message and "did you mean 'cp'" in e.message


def test_unknown_profile_field_is_rejected_with_a_hint() -> None:
    with pytest.raises(SpecError) as e:
        spec(profiles={"cp": {"initial_cwd": 3}})
    assert e.value.field == "profiles.cp.initial_cwd"
    assert "initial_cwnd" in e.value.message


@pytest.mark.parametrize(
    ("field", "value"),
    [("initial_cwnd", 0), ("initial_cwnd", True), ("pacing", "yes"), ("tso", 0), ("min_rto", "0ms"), ("cca", 3)],
)
def test_invalid_profile_values_name_the_field(field: str, value: object) -> None:
    with pytest.raises(SpecError) as e:
        spec(profiles={"cp": {field: value}})
    assert e.value.field == f"profiles.cp.{field}"


def test_a_file_profile_may_not_shadow_a_builtin() -> None:
    with pytest.raises(SpecError) as e:
        spec(profiles={"linux": {"initial_cwnd": 3}})
    assert e.value.field == "profiles.linux"


@pytest.mark.parametrize("name", sorted(profiles.BUILTIN))
def test_every_builtin_profile_has_a_source_and_runs(name: str) -> None:
    table = profiles.BUILTIN[name]
    assert table.get("source")
    assert set(table) <= set(profiles.FIELDS) | set(profiles.DOC_KEYS)
    s = spec(profiles={}, flows=[{"cca": "cubic", "rtt": "50ms"}, {"profile": name, "rtt": "50ms", "cca": table.get("cca", "cubic")}])
    profiles.check_backend(s, "sim")  # every built-in field is one the simulator models


def test_builtin_initial_windows_follow_their_sources() -> None:
    # RFC 6928: IW10; S0 section IV: AkamaiE IW16, AkamaiA IW32; Linux TCP_INIT_CWND 10
    iw = {n: profiles.BUILTIN[n]["initial_cwnd"] for n in ("iw10", "cdn-iw16", "cdn-iw32", "linux")}
    assert iw == {"iw10": 10, "cdn-iw16": 16, "cdn-iw32": 32, "linux": 10}
    assert profiles.BUILTIN["cp-bbr"]["cca"] == "bbr"


def test_tso_reaches_the_simulator_as_gso_max_segs() -> None:
    # the simulator models TSO/GSO for every flow; tso = N caps a burst at N
    # segments (the device's gso_max_segs), false = 1 (off), true/unset = Linux autosizing.
    assert "tso_max_segs" not in flow_config(spec(), 1)
    assert flow_config(spec(profiles={"cp": {"cca": "bbr", "tso": 4}}), 1)["tso_max_segs"] == 4
    assert flow_config(spec(profiles={"cp": {"cca": "cubic", "tso": False}}), 1)["tso_max_segs"] == 1
    assert "tso_max_segs" not in flow_config(spec(profiles={"cp": {"cca": "cubic", "tso": True}}), 1)
    # tcp_tso_autosize: a burst is ~1 ms at the pacing rate (tcp_update_pacing_rate: 1.2-2 x
    # cwnd / srtt), at least 2 segments. At 10 Mbit/s that is 1.5-2.5 KB -> 2 segments, what
    # each delayed ACK releases anyway, so bursts differ from per-ACK sending only through
    # host-noise timing (seed 1 gives the same bytes); at 100 Mbit/s a burst is ~10-17 segments,
    # which the queue and the per-bin delivery show (the totals coincide when both runs lose
    # the same segments).
    fast = {"rate": "100Mbit", "buffer": "1bdp"}
    off = ccfair.run(spec(bottleneck=fast, profiles={"cp": {"cca": "cubic", "tso": False}}))
    on = ccfair.run(spec(bottleneck=fast, profiles={"cp": {"cca": "cubic"}}))
    assert not off.queue.equals(on.queue), "TSO bursts change the queue an unpaced CUBIC flow builds"
    assert not off.throughput.equals(on.throughput), "TSO bursts change an unpaced CUBIC flow's delivery"


def test_gro_is_a_simulator_window_and_refused_by_the_testbed() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][0]["gro"] = True
    s = Spec.from_dict(d)
    assert flow_config(s, 0)["gro_ns"] == 50_000 and "gro_ns" not in flow_config(s, 1)
    d["flows"][0]["gro"] = "20us"
    assert flow_config(Spec.from_dict(d), 0)["gro_ns"] == 20_000
    assert [f for f, _ in profiles.unsupported(s, "testbed")] == ["flows.0.gro"]
    assert profiles.unsupported(s, "sim") == []


def test_sack_compression_reaches_the_simulator_and_only_on_is_the_testbeds_kernel() -> None:
    """Linux compresses SACKs by default (__tcp_ack_snd_check, tcp_comp_sack_nr = 44): the
    testbed's kernel does it for every flow, so only an explicit false is refused there; the
    simulator models it per flow, off unless the flow asks (docs/linux-ports.md)."""
    d = copy.deepcopy(BASE)
    d["flows"][0]["sack_compression"] = True
    s = Spec.from_dict(d)
    assert flow_config(s, 0)["sack_compression"] is True and "sack_compression" not in flow_config(s, 1)
    assert profiles.unsupported(s, "testbed") == [] and profiles.unsupported(s, "sim") == []
    d["flows"][1]["sack_compression"] = False
    assert [f for f, _ in profiles.unsupported(Spec.from_dict(d), "testbed")] == ["flows.1.sack_compression"]


def test_url_is_refused_by_the_simulator() -> None:
    with pytest.raises(SpecError) as e:
        ccfair.run(with_second_flow(kind="http", url="https://cp.example/big"))
    assert e.value.field == "flows.1.url"


def test_http_keys_belong_to_http_flows() -> None:
    assert refusal(with_second_flow(http="2")).field == "flows.1.http"


@pytest.mark.parametrize(("given", "canonical"), [("2", "2"), (2, "2"), ("h2", "2"), (1.1, "1.1"), ("HTTP/1.1", "1.1")])
def test_http_versions(given: object, canonical: str) -> None:
    assert Spec.from_dict(with_second_flow(kind="http", http=given)).flows[1].http == canonical


def test_http_defaults_to_http2_and_bad_values_name_the_field() -> None:
    assert Spec.from_dict(with_second_flow(kind="http")).flows[1].http == "2"
    assert refusal(with_second_flow(kind="http", http="3")).field == "flows.1.http"
    assert refusal(with_second_flow(kind="http", http="2", url="ftp://x")).field == "flows.1.url"


def test_the_simulator_runs_an_http_flow_as_the_servers_tcp_download() -> None:
    bulk = ccfair.run(spec())
    d = copy.deepcopy(BASE)
    d["flows"][1].update(kind="http", http="2")
    http = ccfair.run(d)
    assert http.flows["bytes"].tolist() == bulk.flows["bytes"].tolist()


def test_the_testbed_applies_every_profile_field_and_refuses_what_a_backend_lists(monkeypatch) -> None:
    # The testbed applies min_rto (route rto_min) and tso (gso_max_segs): its
    # testbed part (tests/test_testbed_http.py); a key a backend lists is still refused by name.
    s = spec(profiles={"cp": {"cca": "bbr", "min_rto": "50ms", "tso": 4}})
    assert profiles.unsupported(s, "testbed") == []
    monkeypatch.setitem(profiles.UNSUPPORTED, "testbed", {"min_rto": "not here"})
    fields = [f for f, _ in profiles.unsupported(s, "testbed")]
    assert fields == ["flows.1.min_rto"]


def test_min_rto_changes_recovery_in_the_simulator() -> None:
    # Linux tcp_set_rto: RTO = srtt + max(4 rttvar, rto_min). Under heavy random
    # loss a flow recovers through RTOs; a larger rto_min waits longer each time.
    def run(rto: str) -> float:
        d = {
            "duration": "20s",
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "flows": [{"cca": "cubic", "rtt": "50ms", "loss": 0.2, "min_rto": rto}],
        }
        return float(ccfair.run(d).flows["throughput_bps"].iloc[0])

    assert run("1s") < 0.8 * run("200ms")


def test_cli_exit_2_for_unknown_profile(tmp_path) -> None:
    p = tmp_path / "e.toml"
    p.write_text('duration = "5s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n[[flows]]\nprofile = "nope"\nrtt = "50ms"\n')
    r = subprocess.run([sys.executable, "-m", "ccfair", "run", str(p), "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "flows.0.profile" in r.stderr and "Traceback" not in r.stderr


def test_profiles_survive_a_json_dump() -> None:
    s = spec()
    again = Spec.from_dict(json.loads(json.dumps(s.raw)))
    assert again.to_run_config() == s.to_run_config()


def test_content_provider_example_runs_on_the_simulator() -> None:
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "s0-content-provider.toml"
    r = subprocess.run(
        [sys.executable, "-m", "ccfair", "run", str(example), "--json"], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["backend"] == "sim"
    lab, cp = d["flows"]
    assert (lab["kind"], cp["kind"], cp["cca"]) == ("bulk", "http", "bbr")
    # the keys the testbed reports per flow (testbed/runner.py) are there on the simulator too
    for f in (lab, cp):
        for key in ("share", "throughput_bps", "maxmin_share", "fair_share_bps", "target_rtt_ms", "path_min_rtt_ms", "min_rtt_ms"):
            assert f[key] is not None, key
    assert cp["target_rtt_ms"] == 50.0


def _netns_skip() -> str | None:
    try:
        from test_testbed import _WHY_NOT
    except ImportError:  # pragma: no cover
        return "tests/test_testbed.py not importable"
    return _WHY_NOT


@pytest.mark.skipif(_netns_skip() is not None, reason=_netns_skip() or "")
def test_content_provider_example_has_the_same_result_keys_on_both_backends() -> None:
    # shortened to 15 s (window 10-15 s) to keep the real-time testbed run short
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "s0-content-provider.toml"
    short = ["--set", "duration=15s", "--set", "window.end=15s"]
    out = {}
    for backend in ("sim", "testbed"):
        r = subprocess.run(
            [sys.executable, "-m", "ccfair", "run", str(example), "--json", "--backend", backend, *short],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert r.returncode == 0, r.stderr
        out[backend] = json.loads(r.stdout)
    sim, tb = out["sim"], out["testbed"]
    assert set(tb) - set(sim) == {"testbed"}  # the testbed's own details object
    assert set(sim) <= set(tb)
    for fs, ft in zip(sim["flows"], tb["flows"]):
        assert set(fs) == set(ft)
        assert ft["maxmin_share"] is not None and ft["share"] is not None


def test_a_profiles_cca_can_carry_its_parameters() -> None:
    # per-algorithm parameters reach a flow through its profile
    s = spec(profiles={"cp": {"cca": {"name": "cubic", "beta": 0.5}, "initial_cwnd": 32}})
    fc = flow_config(s, 1)
    assert (fc["cca"], fc["cca_params"], fc["init_cwnd_pkts"]) == ("cubic", {"beta": 0.5}, 32)
    with pytest.raises(SpecError) as e:
        spec(profiles={"cp": {"cca": {"name": "cubic", "betta": 0.5}}})
    assert e.value.field.startswith("flows.1.cca")
