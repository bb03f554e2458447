"""What ``ccfair list ccas`` and ``ccfair list qdiscs`` show, as plain data.

One row per algorithm, variant or discipline: its name, aliases, source and
parameters, each parameter as the experiment file writes it (``target =
25ms``), with its unit and what is allowed. Everything comes from the
simulator's registry (``_core.schema()``, via ccas.py and qdiscs.py) and, for
a queue discipline's experiment-level forms (``limit``, RED's thresholds,
STEP's threshold; spec.py), from the experiment model: nothing is written here
twice. The command line renders these rows as a table (output.py) or as JSON
(``--json``); both listings share :func:`param_rows`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cca_rows", "param_rows", "qdisc_rows", "unit_of"]

#: How a unit-less declared parameter is labelled, by its JSON type.
_NO_UNIT = {"boolean": "true/false", "string": "text", "array": "list of numbers", "integer": "count", "number": "ratio"}


#: Declared units shown as the experiment file writes them (a time is written "25ms", not in ns).
_SHOWN_UNIT = {"ns": "time"}


def unit_of(p: dict[str, Any]) -> str:
    """The unit shown for a declared parameter: its declared unit, else what kind of value it is."""
    return _SHOWN_UNIT.get(p["unit"], p["unit"]) or _NO_UNIT.get(p["type"], p["type"])


def param_rows(params: list[dict[str, Any]], overrides: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Declared parameters as written in an experiment file: name, default (``overrides``, by
    field, replace the declared default: a variant's own values), unit, allowed values, doc."""
    from ccfair import ccas

    overrides = overrides or {}
    rows = []
    for p in params:
        value = overrides.get(p["field"], p["default"])
        rows.append(
            {
                "name": p["name"],
                "default": ccas.format_param(p, value),
                "unit": unit_of(p),
                "allowed": p["allowed"],
                "doc": p["doc"],
                **({"variant": True} if p["field"] in overrides else {}),
            }
        )
    return rows


def cca_rows() -> list[dict[str, Any]]:
    """Every algorithm and every variant (with the defaults it runs with), in registry order."""
    from ccfair import ccas

    out = []
    for e in ccas.schema()["ccas"]:
        out.append(
            {"name": e["name"], "aliases": list(e["aliases"]), "source": e["source"], "variant_of": None, "params": param_rows(e["params"])}
        )
        for v in e["variants"]:
            out.append(
                {
                    "name": v["name"],
                    "aliases": list(v.get("aliases", [])),
                    "source": v["doc"],
                    "variant_of": e["name"],
                    "params": param_rows(e["params"], v["params"]),
                }
            )
    return out


def _form_rows(kind: str, declared: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parameters the experiment file writes in its own forms for ``kind`` (spec.py's bases):
    one row each, replacing the declared fields they resolve to (``limit`` for limit_packets/limit_bytes)."""
    from ccfair import ccas
    from ccfair.spec import QDISCS

    model = QDISCS[kind]
    rows = []
    for name, f in model.model_fields.items():
        if name == "kind" or not f.description or f.annotation is Any:
            continue  # declared parameters (generated Any fields) are listed from the registry
        doc, *parts = f.description.split("; ")
        keyed = dict(part.partition(": ")[::2] for part in parts)
        same = [p for p in declared if p["name"] == name and p["field"] not in ("limit_packets", "limit_bytes")]
        default = keyed.get("default") or (ccas.format_param(same[0], same[0]["default"]) if same else "unset")
        meaning, _, examples = doc.partition(" (")  # "Queue limit ('100pkt', '64KB', '1bdp')"
        allowed = f"e.g. {examples.rstrip(')')}" if examples and doc.endswith(")") else doc
        rows.append(
            {"name": name, "default": default, "unit": keyed.get("unit", ""), "allowed": allowed, "doc": meaning if allowed != doc else doc}
        )
    return rows


def qdisc_rows() -> list[dict[str, Any]]:
    """Every queue discipline with its parameters as the experiment file writes them."""
    from ccfair import qdiscs

    aliases = qdiscs.aliases()
    out = []
    for kind in qdiscs.kinds():
        declared = qdiscs.params_of(kind)
        forms = _form_rows(kind, declared)
        own = {r["name"] for r in forms}
        rows = forms + param_rows([p for p in declared if p["name"] not in own and p["field"] not in ("limit_packets", "limit_bytes")])
        out.append(
            {"name": kind, "aliases": [a for a, k in aliases.items() if k == kind], "source": qdiscs.entry(kind)["source"], "params": rows}
        )
    return out
