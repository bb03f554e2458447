"""Python accepts exactly what the simulator accepts: a corpus of experiment files.

Each case is an experiment file (written to disk and read with
``Spec.from_toml``) and the same change made directly to the simulator's
``RunConfig`` (checked by ``_core.validate``, i.e. Rust's
``RunConfig::validate``, without Python's checks). Both must give the same
verdict and, when invalid, name the same field. The parameter cases are
generated from the registry (every parameter of every CCA and queue
discipline: its default is accepted, a value outside its declared range or of
the wrong type is refused); the flow cases are hand-written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from ccfair import _core, ccas, qdiscs
from ccfair.errors import SpecError
from ccfair.spec import Spec

BASE: dict[str, Any] = {
    "name": "corpus",
    "duration": "2s",
    "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
    "flows": [{"cca": "cubic", "rtt": "20ms"}],
}
#: Settings a discipline needs besides its defaults to run in BASE.
QDISC_BASE: dict[str, dict[str, Any]] = {"step": {"threshold": "10pkt"}}
#: Parameters the experiment file writes in its own forms (spec.py's bases), not passed through.
EXPERIMENT_FORMS = {"limit", "min_th", "max_th", "threshold"}


def _bad_value(p: dict[str, Any]) -> Any:
    """A value outside what ``p`` declares (wrong type, below the minimum, or an unknown choice)."""
    if p["type"] == "boolean":
        return 1
    if "choices" in p:
        return "nosuch"
    if p["type"] == "array":
        return [-1.0]
    as_type = int if p["type"] == "integer" else float
    if "minimum" in p:
        return as_type(p["minimum"] - 1)
    if "exclusive_minimum" in p:
        return as_type(p["exclusive_minimum"])
    if "maximum" in p:
        return as_type(p["maximum"] + 1)
    return -1


def _written(p: dict[str, Any], value: Any) -> Any:
    """``value`` (simulator units) as an experiment file writes it."""
    if p["unit"] == "ns" and isinstance(value, int) and value >= 0:
        return f"{value}ns"
    if p["unit"] == "ns" and isinstance(value, int):
        return value  # not a time at all: the units parser refuses it
    return value


def _cases() -> list[tuple[str, dict[str, Any], Any, str | None]]:
    """(name, experiment dict, change to the RunConfig, expected field or None)."""
    out: list[tuple[str, dict[str, Any], Any, str | None]] = []

    def flow_cca(name: str, params: dict[str, Any]) -> dict[str, Any]:
        d = copy.deepcopy(BASE)
        d["flows"][0]["cca"] = {"name": name, **params}
        return d

    for e in ccas.schema()["ccas"]:
        if e["transport"] != "tcp":
            continue
        for p in e["params"]:
            field = f"flows.0.cca.{p['name']}"
            out.append(
                (
                    f"cca-{e['name']}-{p['name']}-default",
                    flow_cca(e["name"], {p["name"]: _written(p, p["default"])}),
                    ("cca", e["name"], {p["field"]: p["default"]}),
                    None,
                )
            )
            bad = _bad_value(p)
            out.append(
                (
                    f"cca-{e['name']}-{p['name']}-bad",
                    flow_cca(e["name"], {p["name"]: _written(p, bad)}),
                    ("cca", e["name"], {p["field"]: bad}),
                    field,
                )
            )
    for kind in qdiscs.kinds():
        for p in qdiscs.params_of(kind):
            if p["name"] in EXPERIMENT_FORMS or (kind == "csaqm" and p["name"] == "target"):
                continue
            for tag, value, expect in (("default", p["default"], None), ("bad", _bad_value(p), f"bottleneck.qdisc.{p['name']}")):
                if value is None:
                    continue  # unset by default: TOML cannot write "unset"
                d = copy.deepcopy(BASE)
                d["bottleneck"]["qdisc"] = {"kind": kind, **QDISC_BASE.get(kind, {}), p["name"]: _written(p, value)}
                out.append((f"qdisc-{kind}-{p['name']}-{tag}", d, ("qdisc", kind, {p["field"]: value}), expect))
    # flow settings checked by RunConfig::validate
    for key, written, field, value, ok in (
        ("mss", 10, "mss_bytes", 10, False),
        ("mss", 9000, "mss_bytes", 9000, True),
        ("loss", 1.0, "loss", 1.0, False),
        ("loss", 0.5, "loss", 0.5, True),
        ("init_cwnd", 0, "init_cwnd_pkts", 0, False),
        ("rwnd", 0, "rwnd_init_pkts", 0, False),
        ("size", "0B", "size_bytes", 0, False),
        ("size", "1B", "size_bytes", 1, True),
        ("rate_cap", "0bit", "rate_cap_bps", 0, False),
        ("rtt", "1ms", "rtt_ns", 1_000_000, True),
    ):
        d = copy.deepcopy(BASE)
        d["flows"][0][key] = written
        out.append((f"flow-{key}-{written}", d, ("flow", field, value), None if ok else f"flows.0.{key}"))
    return out


CASES = _cases()


def test_the_corpus_has_at_least_50_valid_and_50_invalid_files():
    assert sum(c[3] is None for c in CASES) >= 50
    assert sum(c[3] is not None for c in CASES) >= 50


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for these plain texts
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"


def _toml(exp: dict[str, Any]) -> str:
    """An experiment dict as a TOML file (inline tables)."""
    return "".join(f"{k} = {_toml_value(v)}\n" for k, v in exp.items())


def _python_verdict(tmp_path: Path, name: str, exp: dict[str, Any]) -> str | None:
    f = tmp_path / f"{name}.toml"
    f.write_text(_toml(exp))
    try:
        Spec.from_toml(f)
    except SpecError as e:
        return e.field
    return None


def _rust_verdict(change: tuple[str, str, Any]) -> str | None:
    """The simulator's verdict on BASE's RunConfig with ``change``, without Python's checks."""
    config = Spec.from_dict(BASE).to_run_config()
    what, key, value = change
    if what == "cca":
        config["flows"][0]["cca"] = key
        config["flows"][0]["cca_params"] = value
    elif what == "qdisc":
        q = copy.deepcopy(BASE)
        q["bottleneck"]["qdisc"] = {"kind": key, **QDISC_BASE.get(key, {})}
        config["bottleneck"]["qdisc"] = {**Spec.from_dict(q).to_run_config()["bottleneck"]["qdisc"], **value}
    else:
        config["flows"][0][key] = value
    try:
        _core.validate(json.dumps(config))
    except _core.SimValueError as e:
        return {"flows.0.mss_bytes": "flows.0.mss"}.get(e.args[0], e.args[0])
    return None


@pytest.mark.parametrize(("name", "exp", "change", "expect"), CASES, ids=[c[0] for c in CASES])
def test_python_and_the_simulator_give_the_same_verdict_and_field(tmp_path, name, exp, change, expect):
    py = _python_verdict(tmp_path, name, exp)
    rust = _rust_verdict(change)
    assert py == expect, (py, expect)
    assert rust == expect, (rust, expect)
