"""CCA parameters: declared once in Rust (cc/*.rs), reachable from the
experiment file, ``--set``, Python and sweep grids; recorded in results and the store."""

from __future__ import annotations

import json
import subprocess
import sys

import ccfair
import pytest
from ccfair import (
    _core,  # noqa: F401  a missing extension must fail the suite, not skip it
    ccas,
    store,
)
from ccfair.errors import SpecError
from ccfair.spec import Spec
from ccfair.sweep import plan_sweep, run_sweep

BASE = {
    "name": "params",
    "duration": "6s",
    "window": {"start": "2s", "end": "6s"},
    "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
    "flows": [{"cca": "reno", "rtt": "40ms"}, {"cca": "cubic", "rtt": "40ms", "start": "1s"}],
}


def _with(**flow1) -> dict:
    d = json.loads(json.dumps(BASE))
    d["flows"][1].update(flow1)
    return d


def test_table_form_and_set_give_the_same_run_config():
    a = Spec.from_dict(_with(cca={"name": "cubic", "beta": 0.5, "hystart": False}))
    b = Spec.from_dict(BASE).with_overrides(["flows.1.cca.beta=0.5", "flows.1.cca.hystart=false"])
    assert a.to_run_config() == b.to_run_config()
    assert a.to_run_config()["flows"][1]["cca_params"] == {"beta": 0.5, "hystart": False}
    # without parameters nothing is added: configs (and so results) of old files are unchanged
    assert "cca_params" not in Spec.from_dict(BASE).to_run_config()["flows"][1]


def test_toml_flows_cca_subtable(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('duration = "2s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\nrtt = "20ms"\n[flows.cca]\nname = "ledbat"\ntarget = "25ms"\n')
    spec = Spec.from_toml(f)
    assert spec.to_run_config()["flows"][0]["cca_params"] == {"target_ns": 25_000_000}
    # printed back in the units written, and re-read to the same spec
    dumped = spec.model_dump(mode="json")
    assert dumped["flows"][0]["cca"] == {"name": "ledbat", "target": "25ms"}
    assert Spec.from_dict(dumped) == spec


@pytest.mark.parametrize(
    ("cca", "field", "needle"),
    [
        ({"name": "cubic", "beta": 1.5}, "flows.1.cca.beta", "must be a number in (0, 1), got 1.5"),
        ({"name": "cubic", "bta": 0.5}, "flows.1.cca.bta", "unknown parameter; valid: beta, c,"),
        ({"name": "cubic", "hystart": 1}, "flows.1.cca.hystart", "must be true or false, got 1"),
        ({"name": "ledbat", "target": 5}, "flows.1.cca.target", "a time needs a unit"),
        ({"name": "ledbat", "target": "0ms"}, "flows.1.cca.target", "must be a time > 0ns, got 0ns"),
        ({"name": "vegas", "alpha": 5}, "flows.1.cca.alpha", "must be <= beta (4), got 5"),
        ({"name": "reno", "beta": 0.5}, "flows.1.cca.beta", "this algorithm has no parameters"),
        ({"beta": 0.5}, "flows.1.cca.name", "required"),
        ({"name": "nosuch"}, "flows.1.cca.name", "unknown CCA 'nosuch'"),
    ],
)
def test_invalid_parameter_names_field_value_and_range(cca, field, needle):
    with pytest.raises(SpecError) as e:
        Spec.from_dict(_with(cca=cca))
    assert e.value.field == field
    assert needle in e.value.message


def test_cli_gives_the_same_message_and_exit_2(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('duration = "2s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "20ms"\n')
    p = subprocess.run([sys.executable, "-m", "ccfair", "check", str(f), "--set", "flows.0.cca.beta=1.5"], capture_output=True, text=True)
    assert p.returncode == 2
    with pytest.raises(SpecError) as e:
        Spec.from_toml(f).with_overrides(["flows.0.cca.beta=1.5"])
    assert str(e.value) in p.stderr


def test_variant_is_the_base_algorithm_with_its_parameter_set():
    """Prague-rttdep = prague with rtt_independence = false; ledbat25 = ledbat with target 25 ms (cc/*.rs VARIANTS)."""
    for variant, table in (
        ("prague-rttdep", {"name": "prague", "rtt_independence": False}),
        ("ledbat25", {"name": "ledbat", "target": "25ms"}),
    ):
        a = ccfair.run(Spec.from_dict(_with(cca=variant)))
        b = ccfair.run(Spec.from_dict(_with(cca=table)))
        assert a.flows["bytes"].tolist() == b.flows["bytes"].tolist(), variant
        assert a.flows["cca_params"][1] == b.flows["cca_params"][1]


def test_result_records_every_resolved_parameter():
    r = ccfair.run(Spec.from_dict(_with(cca={"name": "cubic", "beta": 0.5})))
    params = json.loads(r.flows["cca_params"][1])
    assert params["beta"] == 0.5 and params["hystart"] is True and params["c"] == 0.4  # given + defaults
    assert json.loads(r.flows["cca_params"][0]) == {}  # reno declares none


def _sweep(tmp_path, axis: str, values: list) -> list[float]:
    data = _with()
    data["sweep"] = {axis: values}
    plan = plan_sweep(data)
    run_sweep(plan, tmp_path, executor="inprocess")
    runs = store.load_sweep(tmp_path).sort_values(axis)
    flows = store.load_sweep(tmp_path, "flows")
    assert sorted(runs[axis].tolist()) == sorted(values)
    return runs, flows


def test_sweep_over_cubic_beta_changes_the_outcome(tmp_path):
    runs, flows = _sweep(tmp_path, "flows.1.cca.beta", [0.5, 0.7, 0.85])
    cubic = flows[flows["position"] == 1].set_index("run_id").loc[runs["run_id"]]
    assert len(set(cubic["bytes"].tolist())) == 3, cubic["bytes"].tolist()
    assert [json.loads(p)["beta"] for p in cubic["cca_params"]] == [0.5, 0.7, 0.85]
    assert all(json.loads(q)["kind"] == "droptail" for q in runs["qdisc"])


def test_sweep_over_codel_target_changes_the_outcome(tmp_path):
    data = _with()
    data["bottleneck"] = {"rate": "10Mbit", "buffer": "4bdp", "qdisc": {"kind": "codel"}}
    data["sweep"] = {"bottleneck.qdisc.target": ["1ms", "5ms", "20ms"]}
    run_sweep(plan_sweep(data), tmp_path, executor="inprocess")
    runs = store.load_sweep(tmp_path)
    assert len(set(runs["queue_delay_mean_ms"].round(6).tolist())) == 3
    assert sorted(json.loads(q)["target_ns"] for q in runs["qdisc"]) == [1_000_000, 5_000_000, 20_000_000]


def test_every_declared_parameter_is_settable_from_python():
    """Each parameter of each CCA, set to a non-default allowed value, reaches the simulator's resolution."""
    checked = 0
    for entry in ccas.schema()["ccas"]:
        for p in entry["params"]:
            value = _other_value(p)
            spec = Spec.from_dict(_with(cca={"name": entry["name"], p["name"]: value}))
            resolved = spec.flows[1].cca.resolved()
            assert resolved[p["field"]] != p["default"], (entry["name"], p["name"])
            checked += 1
    assert checked >= 25


def _other_value(p: dict):
    """An allowed value different from the default, in the units a person writes."""
    if p["type"] == "boolean":
        return not p["default"]
    lo = p.get("minimum", p.get("exclusive_minimum", 0))
    hi = p.get("maximum", p.get("exclusive_maximum"))
    d = p["default"]
    if p["type"] == "integer":
        v = d + 1 if hi is None or d + 1 <= hi else d - 1
        return f"{v}ns" if p["unit"] == "ns" and v % 1000 else (f"{v // 1000}us" if p["unit"] == "ns" else v)
    v = (d + lo) / 2 if d > lo else d * 1.5
    return v if hi is None or v < hi else (d + lo) / 2


def test_a_new_algorithm_needs_no_python_edit(monkeypatch, fake_sim):
    """Python takes every name, alias, parameter and unit from the registry (`_core.schema()`):
    an algorithm and a discipline that exist only there are usable as written."""
    from ccfair import qdiscs
    from ccfair.spec import _model_for

    toy_param = {
        "name": "target",
        "field": "target_ns",
        "type": "integer",
        "nullable": False,
        "unit": "ns",
        "default": 5_000_000,
        "doc": "Target.",
        "allowed": "a time > 0ns",
        "exclusive_minimum": 0.0,
    }
    schema = {
        "ccas": [
            {
                "name": "toy",
                "source": "a test",
                "aliases": ["toy-tcp"],
                "variants": [],
                "needs_ecn": False,
                "transport": "tcp",
                "params": [toy_param],
            }
        ],
        "qdiscs": [
            {"kind": "droptail", "source": "fifo", "aliases": [], "params": []},
            {"kind": "toyq", "source": "a test", "aliases": ["toy-aqm"], "params": [toy_param]},
        ],
    }
    ccas.clear_cache()
    monkeypatch.setattr(ccas, "schema", lambda: schema)
    cca, paced = ccas.parse({"name": "TOY-TCP", "target": "2ms"})
    assert (str(cca), cca.params, paced) == ("toy", {"target_ns": 2_000_000}, False)
    model = _model_for("toyq")
    assert "target" in model.model_fields and qdiscs.aliases() == {"toy-aqm": "toyq"}
    assert model(kind="toyq", target="3ms").given() == {"target_ns": 3_000_000}


def test_groups_take_cca_parameters_too():
    d = {
        "duration": "5s",
        "bottleneck": {"rate": "10Mbit"},
        "groups": [{"name": "g", "cca": {"name": "cubic", "beta": 0.5}, "rtt": "20ms", "arrival_rate": 2, "size": "10KB"}],
    }
    flows = Spec.from_dict(d).to_run_config()["flows"]
    assert flows and all(f["cca_params"] == {"beta": 0.5} for f in flows)
    d["groups"][0]["cca"] = {"name": "cubic", "beta": 2}
    with pytest.raises(SpecError) as e:
        Spec.from_dict(d)
    assert e.value.field == "groups.0.cca.beta"
