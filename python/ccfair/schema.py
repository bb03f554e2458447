"""The experiment file's JSON Schema, and the generated parameter tables of the docs.

``ccfair schema`` prints :func:`json_schema`: the structure of the experiment
file from the spec models (:mod:`ccfair.spec`), with every CCA and its
parameters taken from the simulator's registry (``_core.schema()``, declared
once in crates/ccfair-sim/src/cc/*.rs). Values with human units (``"50ms"``)
are strings there; their ranges are checked when the file is read, where the
same registry validates them (one message for the CLI and Python).

``python -m ccfair.schema --write-docs`` regenerates the parameter tables in
docs/ccas.md and docs/qdiscs.md between the ``<!-- BEGIN GENERATED ... -->`` markers;
tests/test_schema.py checks they are current.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from ccfair import ccas

__all__ = ["cca_schema", "ccas_markdown", "json_schema", "qdiscs_markdown", "write_docs"]

#: JSON Schema of a value with a human unit: a string such as "50ms", or a plain number.
_UNIT_TYPES = {"ns": ["string", "integer"], "bit/s": ["string", "integer"], "bytes": ["string", "integer"]}


def _param_schema(p: dict[str, Any]) -> dict[str, Any]:
    """One declared parameter as JSON Schema (ranges in simulator units; human units as strings)."""
    if p["unit"] in _UNIT_TYPES:
        out: dict[str, Any] = {"type": list(_UNIT_TYPES[p["unit"]])}
    elif p["type"] == "array":
        out = {"type": ["array"], "items": {"type": "number"}}
    else:
        out = {"type": [p["type"]]}
        for key, js in (
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("exclusive_minimum", "exclusiveMinimum"),
            ("exclusive_maximum", "exclusiveMaximum"),
        ):
            if key in p:
                out[js] = p[key]
        if "choices" in p:
            out["enum"] = list(p["choices"])
    if p["nullable"]:
        out["type"].append("null")
    out["description"] = p["doc"] + (f" Unit: {p['unit']}." if p["unit"] else "")
    out["default"] = p["default"]
    return out


def _flow_bounds(props: dict[str, Any]) -> None:
    """Sets the bounds the simulator declares for flow settings (``_core.schema()["flow"]``) on a
    flow or group model's properties (on the number branch of a nullable one)."""
    for name, decl in ccas.schema().get("flow", {}).items():
        if name not in props:
            continue
        prop = props[name]
        branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") in ("integer", "number")]
        for b in branches:
            for key, js in (("min", "minimum"), ("max", "maximum"), ("max_exclusive", "exclusiveMaximum")):
                if key in decl:
                    b[js] = decl[key]


def cca_schema() -> dict[str, Any]:
    """A CCA as written: a name (with aliases, variants, ``+pacing``) or a table with its parameters."""
    names: list[str] = []
    tables = []
    for e in ccas.schema()["ccas"]:
        own = [e["name"], *e["aliases"]] + [n for v in e["variants"] for n in [v["name"], *v.get("aliases", [])]]
        names += own
        tables.append(
            {
                "type": "object",
                "description": e["source"],
                "properties": {"name": {"enum": own + [n + ccas.PACING_SUFFIX for n in own]}}
                | {p["name"]: _param_schema(p) for p in e["params"]},
                "required": ["name"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": [{"type": "string", "enum": names + [n + ccas.PACING_SUFFIX for n in names]}, *tables]}


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of an experiment file."""
    from ccfair.spec import Spec

    s = copy.deepcopy(Spec.model_json_schema())
    s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    s["title"] = "ccfair experiment file"
    defs = s["$defs"]
    defs["Cca"] = cca_schema()
    for model in ("Flow", "Group"):
        if model in defs and "cca" in defs[model].get("properties", {}):
            defs[model]["properties"]["cca"] = {"$ref": "#/$defs/Cca"}
    # a flow with a profile may take its cca from the profile ([profiles.NAME], applied when the file is read)
    if "required" in defs.get("Flow", {}):
        defs["Flow"]["required"] = [r for r in defs["Flow"]["required"] if r != "cca"]
    # `qdisc = "codel"` is shorthand for `{ kind = "codel" }`; the discriminated union stays for tables.
    bottleneck = defs["Bottleneck"]["properties"]
    union = bottleneck["qdisc"]
    union.pop("discriminator", None)
    bottleneck["qdisc"] = {"anyOf": [{"type": "string"}, {"oneOf": union.pop("oneOf")}], **union}
    # each discipline's declared parameters (qdisc/*.rs), where the model passes them through
    from ccfair import qdiscs
    from ccfair.spec import QDISCS

    for kind, qmodel in QDISCS.items():
        props = defs.get(qmodel.__name__, {}).get("properties", {})
        for p in qdiscs.params_of(kind):
            if p["name"] in props and p["name"] not in ("limit", *qmodel._OWN):
                props[p["name"]] = _param_schema(p)
    # the flow settings' bounds as the simulator declares them (config.rs, checked when the file is read)
    for name in ("Flow", "Group"):
        _flow_bounds(defs.get(name, {}).get("properties", {}))
    # a sweep file's [sweep] grid (ccfair.sweep validates its axes against this schema's paths)
    s["properties"]["sweep"] = {"type": "object", "description": "Sweep grid: parameter path -> list of values (docs/sweeps.md)."}
    return s


def ccas_markdown() -> str:
    """The CCA parameter tables of docs/ccas.md, generated from the registry."""
    lines = []
    for e in ccas.schema()["ccas"]:
        alias = f" ({', '.join(e['aliases'])})" if e["aliases"] else ""
        lines.append(f"### `{e['name']}`{alias}\n")
        lines.append(f"{e['source']}\n")
        if e["params"]:
            lines += _param_rows(e["params"])
        else:
            lines.append("No parameters.")
        for v in e["variants"]:
            lines.append(f"\nVariant `{v['name']}` = `{e['name']}` with {_variant_params(e, v)}: {v['doc']}.")
        lines.append("")
    return "\n".join(lines)


def _param_rows(params: list[dict[str, Any]]) -> list[str]:
    """Declared parameters as a Markdown table (listing.param_rows: as written, with their unit)."""
    from ccfair import listing

    return _table(listing.param_rows(params))


def _table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| parameter | default | unit | allowed | meaning |", "|---|---|---|---|---|"]
    out += [f"| `{r['name']}` | {r['default']} | {r['unit']} | {r['allowed']} | {r['doc']} |" for r in rows]
    return out


def qdiscs_markdown() -> str:
    """The queue-discipline parameter tables of docs/qdiscs.md, generated from the registry."""

    from ccfair import listing

    lines = []
    for row in listing.qdisc_rows():  # the experiment's forms (limit, thresholds) once, then the declared parameters
        names = row["aliases"]
        lines.append(f"### `{row['name']}`" + (f" ({', '.join(names)})" if names else "") + "\n")
        lines.append(f"{row['source']}\n")
        lines += _table(row["params"]) if row["params"] else ["No parameters."]
        lines.append("")
    return "\n".join(lines)


def _variant_params(entry: dict[str, Any], variant: dict[str, Any]) -> str:
    by_field = {p["field"]: p for p in entry["params"]}
    return ", ".join(f"{by_field[f]['name']} = {ccas.format_param(by_field[f], v)}" for f, v in variant["params"].items())


_BEGIN = "<!-- BEGIN GENERATED: {} (python -m ccfair.schema --write-docs) -->"
_END = "<!-- END GENERATED -->"
_DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
#: docs file -> the function generating its tables.
DOCS = {_DOCS_DIR / "ccas.md": ccas_markdown, _DOCS_DIR / "qdiscs.md": qdiscs_markdown}


def _bounds(text: str, make: Any) -> tuple[int, int]:
    begin = _BEGIN.format(f"ccfair.schema.{make.__name__}")
    return text.index(begin) + len(begin), text.index(_END)


def generated_section(path: Path) -> str:
    """The text between the markers of a docs file."""
    text = path.read_text()
    start, end = _bounds(text, DOCS[path])
    return text[start:end].strip("\n")


def write_docs() -> list[Path]:
    """Rewrite the generated tables in every docs file of :data:`DOCS`; the files that changed."""
    changed = []
    for path, make in DOCS.items():
        text = path.read_text()
        start, end = _bounds(text, make)
        new = text[:start] + "\n" + make().strip("\n") + "\n" + text[end:]
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-docs"]:
        print("updated:", ", ".join(map(str, write_docs())) or "nothing (up to date)")
    else:
        import json

        print(json.dumps(json_schema(), indent=2))
