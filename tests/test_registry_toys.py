"""Adding a CCA or a queue discipline needs no Python edit: everything Python knows of them comes
from the simulator's registry (``_core.schema()``). Here the registry is the real one plus a toy
CCA (one parameter, paces by itself, its own colour) and a toy discipline (one parameter), as the
Rust toy tests (cc::registry_tests, qdisc::toy_registry_tests) declare them; a fresh interpreter
reads it and must accept, label, colour and describe both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ccfair._core", reason="the compiled simulator is not built")

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import importlib, json, sys, types

real = importlib.import_module("ccfair._core")
stub = types.ModuleType("ccfair._core")
stub.__dict__.update({k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
TOY_CCA = {
    "name": "toy", "source": "a test", "aliases": ["toy-tcp"], "variants": [], "transport": "tcp",
    "needs_ecn": False, "needs_pacing": True, "colour": "#123456", "paced_colour": None,
    "params": [{"name": "beta", "field": "beta", "type": "number", "unit": "", "default": 0.5, "nullable": False,
                "doc": "Multiplicative decrease factor.", "exclusive_minimum": 0.0, "exclusive_maximum": 1.0}],
}
TOY_QDISC = {
    "kind": "toy", "source": "a test", "aliases": ["toy-aqm"],
    "params": [{"name": "limit", "field": "limit_packets", "type": "integer", "unit": "packets", "default": 100,
                "nullable": True, "doc": "Queue limit, packets.", "minimum": 1},
               {"name": "nth", "field": "nth", "type": "integer", "unit": "", "default": 3, "nullable": False,
                "doc": "Drop every nth arrival.", "minimum": 1}],
}

def schema():
    s = json.loads(real.schema())
    s["ccas"].append(TOY_CCA)
    s["qdiscs"].append(TOY_QDISC)
    return json.dumps(s)

def _toy_resolve(defaults, params_json):
    given = json.loads(params_json)
    for k, v in given.items():
        if k not in defaults:
            raise real.SimValueError(k, "unknown parameter")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "limit_packets" and v <= 0:
            raise real.SimValueError(k, f"must be > 0, got {v}")
    return json.dumps({**defaults, **given})

def resolve_cca(name, params_json):
    return _toy_resolve({"beta": 0.5}, params_json) if name == "toy" else real.resolve_cca(name, params_json)

def resolve_qdisc(kind, params_json):
    return _toy_resolve({"limit_packets": 100, "nth": 3}, params_json) if kind == "toy" else real.resolve_qdisc(kind, params_json)

def validate(config_json):
    return None  # the real engine does not know the toys; the Rust toy tests run them

stub.schema, stub.resolve_cca, stub.resolve_qdisc, stub.validate = schema, resolve_cca, resolve_qdisc, validate
sys.modules["ccfair._core"] = stub
import ccfair
ccfair._core = stub

from ccfair import ccas, plots, qdiscs
from ccfair.schema import json_schema
from ccfair.spec import Spec

spec = Spec.from_dict({
    "duration": "2s",
    "bottleneck": {"rate": "10Mbit", "qdisc": {"kind": "toy-aqm", "nth": 4}},
    "flows": [{"cca": "toy-tcp+pacing", "rtt": "20ms"}, {"cca": {"name": "toy", "beta": 0.25}, "rtt": "20ms"},
              {"cca": "cubic+pacing", "rtt": "20ms"}],
})
rc = spec.to_run_config(1)
out = {
    "qdisc": rc["bottleneck"]["qdisc"],
    "flows": [(f["cca"], f.get("cca_params", {}), f["pacing"]) for f in rc["flows"]],
    "labels": [f.label for f in spec.flows],
    "colours": [plots.cca_color("toy"), plots.cca_color("toy+pacing")],
    "kinds": qdiscs.kinds()[-1],
    "schema_cca": "toy" in json.dumps(json_schema()["$defs"]["Cca"]),
    "schema_qdisc": "Toy" in json_schema()["$defs"],
}
try:
    Spec.from_dict({"duration": "2s", "bottleneck": {"rate": "10Mbit", "qdisc": {"kind": "toy", "nth": 0}},
                    "flows": [{"cca": "toy", "rtt": "20ms"}]}).to_run_config(1)
except Exception as e:
    out["error"] = [type(e).__name__, getattr(e, "field", None)]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def toys() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_toy_discipline_is_accepted_by_its_alias_with_its_parameter(toys):
    assert toys["qdisc"]["kind"] == "toy" and toys["qdisc"]["nth"] == 4
    assert toys["kinds"] == "toy"
    assert toys["schema_qdisc"]


def test_a_toy_cca_is_accepted_with_its_parameter_and_aliases(toys):
    assert toys["flows"][0][0] == "toy" and toys["flows"][1] == ["toy", {"beta": 0.25}, False]
    assert toys["schema_cca"]


def test_a_toy_cca_that_paces_by_itself_is_never_labelled_plus_pacing(toys):
    assert toys["labels"] == ["toy", "toy[beta=0.25]", "cubic+pacing"]


def test_a_toy_cca_gets_its_registry_colour(toys):
    assert toys["colours"] == ["#123456", "#123456"]


def test_a_toy_parameter_out_of_range_names_its_field(toys):
    assert toys["error"] == ["SpecError", "bottleneck.qdisc.nth"]
