"""Queue disciplines: kinds, aliases and parameters, from the simulator's registry.

Every discipline declares its parameters once, next to its code
(``declare_params!`` in crates/ccfair-sim/src/qdisc/*.rs) and registers in one
line (``registry!`` in qdisc/mod.rs). This module reads that registry
(``_core.schema()["qdiscs"]``, loaded by :func:`ccfair.ccas.schema`) and asks
the simulator to validate given values (``_core.resolve_qdisc``), so no kind,
default or range is written again in Python. :mod:`ccfair.spec` adds only
what needs the experiment (a ``limit`` as a BDP multiple, RED's thresholds
and STEP's threshold as buffers or delays, S3's ``step = {k, rtt}``).
"""

from __future__ import annotations

import json
from typing import Any

from ccfair import ccas
from ccfair.core_resolve import resolved_json

__all__ = ["aliases", "entry", "has_meter", "kinds", "needs_ecn_flows", "params_of", "resolve", "to_field"]

#: The discipline assumed when the simulator is not built: drop-tail only.
_FALLBACK = [
    {
        "kind": "droptail",
        "source": "FIFO with tail drop",
        "aliases": [],
        "params": [],
        "meter": False,
        "needs_ecn_flows": False,
    }
]


def _entries() -> dict[str, dict[str, Any]]:
    return {e["kind"]: e for e in ccas.schema().get("qdiscs", _FALLBACK)}


def kinds() -> list[str]:
    """Every discipline's ``kind``, in registry order."""
    return list(_entries())


def entry(kind: str) -> dict[str, Any]:
    return _entries()[kind]


def aliases() -> dict[str, str]:
    """Other spellings -> kind."""
    return {a: k for k, e in _entries().items() for a in e["aliases"]}


def has_meter(kind: str | None) -> bool:
    """The discipline keeps a flow-meter log (Rust ``Capabilities::meter``: RRMQS); false for no or an unknown kind."""
    return bool(_entries().get(kind or "", {}).get("meter", False))


def needs_ecn_flows(kind: str) -> bool:
    """With its ``ecn`` on, the discipline marks ECN-capable packets at a shallow threshold and drops the
    others there (Rust ``Capabilities::needs_ecn_flows``: STEP): without an ECN-capable flow, a hard drop threshold."""
    return bool(_entries()[kind].get("needs_ecn_flows", False))


def params_of(kind: str) -> list[dict[str, Any]]:
    """The declared parameters of ``kind`` (see crates/ccfair-sim/src/params.rs ``ParamSpec::to_json``)."""
    return _entries()[kind]["params"]


def to_field(kind: str, name: str, value: Any) -> tuple[str, Any]:
    """A parameter as written (``target = "5ms"``) -> (field, value in simulator units); unknown names pass through."""
    for p in params_of(kind):
        if p["name"] == name:
            return p["field"], ccas.to_units(p, value)
    return name, value


def resolve(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Every parameter ``kind`` runs with (its defaults, then ``fields``), validated by the simulator.

    Raises :class:`SpecError` naming the parameter (``"target"``; the caller prefixes ``bottleneck.qdisc``).
    Resolved once per distinct ``(kind, fields)``: reading a file and running it ask the same.
    """
    return dict(json.loads(resolved_json("resolve_qdisc", kind, json.dumps(fields, sort_keys=True))))
