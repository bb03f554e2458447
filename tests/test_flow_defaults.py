"""The flow settings' defaults and bounds are declared once, in the simulator (config.rs, published
as ``_core.schema()["flow"]``): the experiment file's flow and group models, the JSON Schema and
the [[flows]] table of docs/experiment-file.md must say the same, and the bounds hold when a file
is read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ccfair import spec, traffic
from ccfair.errors import SpecError
from ccfair.schema import json_schema
from ccfair.spec import Spec

DOC = Path(__file__).resolve().parents[1] / "docs" / "experiment-file.md"

FLOW = {"cca": "cubic", "rtt": "20ms"}
BASE = {"duration": "1s", "bottleneck": {"rate": "10Mbit"}}


@pytest.fixture(scope="module")
def declared() -> dict:
    core = pytest.importorskip("ccfair._core", reason="the compiled simulator is not built")
    import json

    return json.loads(core.schema())["flow"]


def _default(model, name):
    return model.model_fields[name].default


def _bounds(model, name) -> dict:
    """The effective ge / le / lt of a pydantic field (the tightest of its constraints), as the core names them."""
    out: dict = {}
    for m in model.model_fields[name].metadata:
        for attr, key, tighter in (("ge", "min", max), ("le", "max", min), ("lt", "max_exclusive", min)):
            if getattr(m, attr, None) is not None:
                out[key] = tighter(out.get(key, getattr(m, attr)), getattr(m, attr))
    return out


def test_flow_model_defaults_are_the_simulators(declared):
    assert _default(spec.Flow, "mss") == declared["mss"]["default"]
    assert _default(spec.Flow, "rwnd") == declared["rwnd"]["default"]
    assert _default(spec.Flow, "loss") == declared["loss"]["default"]
    assert _default(spec.Flow, "delayed_ack") == declared["delayed_ack"]["default"]
    # init_cwnd None = the transport's default; TCP's is written into the RunConfig explicitly
    assert _default(spec.Flow, "init_cwnd") is None
    assert spec.TCP_INIT_CWND_PKTS == declared["init_cwnd"]["default"]


def test_group_model_defaults_and_bounds_are_the_simulators(declared):
    for name in ("mss", "rwnd", "init_cwnd", "loss", "delayed_ack"):
        assert _default(traffic.Group, name) == declared[name]["default"], name
    for name in ("mss", "rwnd", "init_cwnd"):
        want = {k: v for k, v in declared[name].items() if k in ("min", "max")}
        got = {k: v for k, v in _bounds(traffic.Group, name).items() if k in want}
        assert got == want, name
    assert _bounds(traffic.Group, "loss") == {"min": declared["loss"]["min"], "max_exclusive": declared["loss"]["max_exclusive"]}


def _branch(prop: dict) -> dict:
    return next(b for b in prop.get("anyOf", [prop]) if b.get("type") in ("integer", "number"))


def test_json_schema_carries_the_simulators_defaults_and_bounds(declared):
    defs = json_schema()["$defs"]
    for model in ("Flow", "Group"):
        props = defs[model]["properties"]
        for name in ("mss", "rwnd", "loss", "delayed_ack"):
            assert props[name]["default"] == declared[name]["default"], (model, name)
        for name, decl in declared.items():
            if name not in props or name == "delayed_ack":
                continue
            b = _branch(props[name])
            for key, js in (("min", "minimum"), ("max", "maximum"), ("max_exclusive", "exclusiveMaximum")):
                if key in decl:
                    assert b[js] == decl[key], (model, name, js)


def _doc_rows() -> dict[str, list[str]]:
    """The [[flows]] table of docs/experiment-file.md: field -> its cells."""
    text = DOC.read_text()
    section = text[text.index("## `[[flows]]`") : text.index("## `[[groups]]`")]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\| `(\w+)` \|(.*)$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def test_docs_flow_table_says_the_simulators_defaults_and_bounds(declared):
    rows = _doc_rows()
    mss = declared["mss"]
    assert rows["mss"][0] == f"integer {mss['min']}..{mss['max']}"
    assert rows["mss"][1] == f"`{mss['default']}`"
    assert rows["rwnd"][0] == f"integer >= {declared['rwnd']['min']}"
    assert rows["rwnd"][1] == f"`{declared['rwnd']['default']}`"
    assert rows["init_cwnd"][0] == f"integer >= {declared['init_cwnd']['min']}"
    assert rows["init_cwnd"][1].startswith(f"TCP `{declared['init_cwnd']['default']}`")
    loss = declared["loss"]
    assert rows["loss"][0] == f"float in [{_num(loss['min'])}, {_num(loss['max_exclusive'])})"
    assert rows["loss"][1] == f"`{_num(loss['default'])}`"
    assert rows["delayed_ack"][1] == f"`{str(declared['delayed_ack']['default']).lower()}`"


@pytest.mark.parametrize(
    ("field", "outside"),
    [("mss", lambda d: d["mss"]["min"] - 1), ("mss", lambda d: d["mss"]["max"] + 1), ("rwnd", lambda d: d["rwnd"]["min"] - 1)]
    + [("init_cwnd", lambda d: d["init_cwnd"]["min"] - 1), ("loss", lambda d: d["loss"]["max_exclusive"])],
)
def test_a_value_just_outside_the_declared_bounds_is_refused_naming_the_field(declared, field, outside):
    with pytest.raises(SpecError) as e:
        Spec.from_dict({**BASE, "flows": [{**FLOW, field: outside(declared)}]})
    assert e.value.field == f"flows.0.{field}"


def test_the_declared_bounds_themselves_are_accepted(declared):
    for field, value in (("mss", declared["mss"]["min"]), ("mss", declared["mss"]["max"]), ("rwnd", declared["rwnd"]["min"])):
        Spec.from_dict({**BASE, "flows": [{**FLOW, field: value}]})
