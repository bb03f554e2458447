"""Congestion-control algorithms: names, aliases, variants and parameters.

The simulator is the authority: every algorithm declares its parameters once,
next to its code (``declare_params!`` in crates/ccfair-sim/src/cc/*.rs), and
registers in one line (``cc::REGISTRY``). This module reads that registry
through ``ccfair._core.schema()`` and derives everything from it: the names
and aliases an experiment may use, the parameters of each algorithm with
their units, and the validation of given values (``_core.resolve_cca``), so
no name, default or range is written again here.

A CCA is written as a name (``"cubic"``, ``"cubic+pacing"``, an alias or a
variant such as ``"prague-rttdep"``) or as a table with parameters
(``{ name = "cubic", beta = 0.7, hystart = false }``). Parameter values use
human units where the parameter has one (``target = "25ms"``), converted by
:mod:`ccfair.units` according to the unit the simulator declares.

When the extension is not built (e.g. while editing an experiment file on a
machine without a Rust toolchain) the names fall back to :data:`FALLBACK` and
parameters are not checked until the simulator runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

from ccfair.core_resolve import resolve_with_core, resolved_json
from ccfair.errors import SpecError
from ccfair.units import format_rate, format_size, format_time, parse_rate, parse_size, parse_time

__all__ = [
    "FALLBACK",
    "PACING_SUFFIX",
    "Cca",
    "CcaField",
    "available",
    "canonical_table",
    "catalogue",
    "clear_cache",
    "colour",
    "needs_ecn",
    "needs_pacing",
    "pacing_label",
    "parse",
    "resolve",
    "schema",
    "transport",
]

#: Algorithms assumed when ``ccfair._core`` is not importable: (name, source).
FALLBACK: tuple[tuple[str, str], ...] = (
    ("reno", "RFC 5681 / RFC 6582 (NewReno)"),
    ("cubic", "RFC 9438, Linux tcp_cubic.c (HyStart)"),
    ("bbr", "BBRv1: Linux tcp_bbr.c, draft-cardwell-iccrg-bbr-congestion-control"),
    ("dctcp", "DCTCP: RFC 8257, Linux tcp_dctcp.c"),
    ("prague", "TCP Prague (L4S), RTT-independent increase"),
)

#: Suffix that turns pacing on: ``"cubic+pacing"``.
PACING_SUFFIX = "+pacing"

#: Human-unit parsers and printers by the unit a parameter declares.
_PARSE: dict[str, Callable[[object], int]] = {"ns": parse_time, "bit/s": parse_rate, "bytes": parse_size}
_FORMAT: dict[str, Callable[[int], str]] = {"ns": format_time, "bit/s": format_rate, "bytes": format_size}


def _bare(name: str, source: str) -> dict[str, Any]:
    return {"name": name, "source": source, "aliases": [], "variants": [], "params": [], "needs_ecn": False, "transport": "tcp"} | {
        "needs_pacing": False
    }


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The simulator's registry (``_core.schema()``): ``{"ccas": [...]}``, see crates/ccfair-sim/src/schema.rs."""
    try:
        from ccfair import _core
    except ImportError:
        return {"ccas": [_bare(n, s) for n, s in FALLBACK]}
    if not hasattr(_core, "schema"):  # a stand-in core (tests/fake_core.py) lists names only
        return {"ccas": [_bare(str(n), str(s)) for n, s in _core.ccas()]}
    return json.loads(_core.schema())


def clear_cache() -> None:
    """Forget the loaded registry (after swapping ``ccfair._core``)."""
    for f in (schema, catalogue, _index, resolved_params_json, resolved_json):
        getattr(f, "cache_clear", lambda: None)()  # (a test may have replaced one)


@lru_cache(maxsize=1)
def catalogue() -> tuple[tuple[str, str], ...]:
    """(name, source) of every algorithm and variant, in registry order."""
    out: list[tuple[str, str]] = []
    for e in schema()["ccas"]:
        out.append((e["name"], e["source"]))
        out.extend((v["name"], v["doc"]) for v in e["variants"])
    return tuple(out)


@lru_cache(maxsize=1)
def _index() -> dict[str, tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """Every accepted spelling -> (name as the simulator takes it, its entry, its variant or None)."""
    idx: dict[str, tuple[str, dict[str, Any], dict[str, Any] | None]] = {}
    for e in schema()["ccas"]:
        for n in [e["name"], *e["aliases"]]:
            idx[n] = (e["name"], e, None)
        for v in e["variants"]:
            for n in [v["name"], *v.get("aliases", [])]:
                idx[n] = (v["name"], e, v)
    return idx


def available() -> list[str]:
    """Canonical names (and variants) of the algorithms that can be used in an experiment."""
    return [name for name, _ in catalogue()]


def aliases_of(name: str) -> list[str]:
    """Other spellings accepted for ``name``."""
    return [a for a, (n, _, _) in _index().items() if n == name and a != name]


def resolve(name: str) -> tuple[str, bool]:
    """Map a name as written to ``(simulator_name, pacing_requested)``.

    Case-insensitive; applies the registry's aliases and the ``+pacing`` suffix.
    Raises :class:`ValueError` listing the allowed names if the algorithm is unknown.
    """
    written = name.strip().lower()
    pacing = written.endswith(PACING_SUFFIX)
    if pacing:
        written = written[: -len(PACING_SUFFIX)]
    hit = _index().get(written)
    if hit is None:
        raise ValueError(
            f"unknown CCA {name!r}; allowed: {', '.join(available())}"
            f" (add '{PACING_SUFFIX}' to pace, e.g. 'cubic{PACING_SUFFIX}'; `ccfair list ccas` shows aliases and parameters)"
        )
    return hit[0], pacing


def params_of(name: str) -> list[dict[str, Any]]:
    """The declared parameters of algorithm (or variant) ``name``."""
    return _index()[name][1]["params"]


def _capability(name: str, key: str, default: Any) -> Any:
    """A registry entry's (or its variant's) declared ``key``; ``default`` for an unknown name."""
    hit = _index().get(str(name).lower())
    if hit is None:
        return default
    _, entry, variant = hit
    return (variant or entry).get(key, entry.get(key, default))


def needs_ecn(name: str) -> bool:
    """The algorithm is ECN-based (Rust ``needs_ecn``): its flows default to scalable ECN."""
    return bool(_capability(name, "needs_ecn", False))


def needs_pacing(name: str) -> bool:
    """The algorithm paces whatever the flow asks (Rust ``needs_pacing``: BBR's family, Prague),
    so ``+pacing`` adds nothing to its label."""
    return bool(_capability(name, "needs_pacing", False))


def transport(name: str) -> str:
    """The transport the algorithm runs on: ``"tcp"``, or ``"dccp"`` for CCID 2 (the registry's)."""
    return str(_capability(name, "transport", "tcp"))


def colour(name: str, paced: bool = False) -> str | None:
    """The algorithm's colour in figures (``#rrggbb``; its paced flows' when they have their own),
    or None when the registry gives it none."""
    own = _capability(name, "colour", None)
    return (_capability(name, "paced_colour", None) or own) if paced else own


def pacing_label(name: str, pacing: bool) -> str:
    """``name`` with ``+pacing`` when the flow asks for pacing the algorithm does not do anyway."""
    return name + (PACING_SUFFIX if pacing and not needs_pacing(name) else "")


class Cca(str):
    """A resolved CCA: the name the simulator takes, plus the parameters given (simulator units).

    A ``str`` (``flow.cca == "cubic"`` holds whatever the parameters), with
    :attr:`params` (field -> value, as sent to the simulator) and :attr:`written`
    (name -> value in the units written, for printing the experiment back).
    """

    params: dict[str, Any]
    written: dict[str, Any]

    def __new__(cls, name: str, params: dict[str, Any] | None = None, written: dict[str, Any] | None = None) -> Cca:
        obj = super().__new__(cls, name)
        obj.params = dict(params or {})
        obj.written = dict(written or {})
        return obj

    def dump(self) -> str | dict[str, Any]:
        """``"cubic"`` without parameters, else ``{"name": "cubic", "beta": 0.7, ...}`` (human units)."""
        return str(self) if not self.written else {"name": str(self), **self.written}

    def tag(self) -> str:
        """``"cubic"`` or ``"cubic[beta=0.5,hystart=false]"``: a label that tells parameter sets apart."""
        if not self.written:
            return str(self)
        items = ",".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in sorted(self.written.items()))
        return f"{self}[{items}]"

    def resolved(self) -> dict[str, Any]:
        """Every parameter the simulator runs this CCA with (defaults, variant, given), by field."""
        return dict(json.loads(resolved_params_json(str(self), _params_json(self.params))))


def to_units(p: dict[str, Any], value: Any) -> Any:
    """A value given for parameter ``p`` in simulator units (``"25ms"`` -> 25000000 for a time)."""
    parse = _PARSE.get(p["unit"])
    if parse is None or value is None or isinstance(value, bool):
        return value
    return parse(value)


def parse(value: object) -> tuple[Cca, bool]:
    """A CCA as written (name or table) -> (:class:`Cca`, pacing requested).

    Raises :class:`SpecError` naming the sub-field (``"beta"``, ``"name"``; the
    caller prefixes ``flows.N.cca``) with the simulator's message.
    """
    if isinstance(value, Cca):
        return value, False
    if isinstance(value, str):
        try:
            name, paced = resolve(value)
        except ValueError as e:
            raise SpecError("", str(e)) from None
        return Cca(name), paced
    if not isinstance(value, dict):
        raise SpecError("", f"expected a CCA name ('cubic') or a table {{ name = 'cubic', beta = 0.7 }}, got {value!r}")
    given = dict(value)
    written_name = given.pop("name", None)
    if not isinstance(written_name, str):
        raise SpecError(
            "name", "required: the algorithm, e.g. name = 'cubic'" if written_name is None else f"expected a CCA name, got {written_name!r}"
        )
    try:
        name, paced = resolve(written_name)
    except ValueError as e:
        raise SpecError("name", str(e)) from None
    by_name = {p["name"]: p for p in params_of(name)}
    params: dict[str, Any] = {}
    for key, v in given.items():
        p = by_name.get(key)
        try:
            params[p["field"] if p else key] = to_units(p, v) if p else v
        except ValueError as e:
            raise SpecError(key, str(e)) from None
    resolved_params_json(name, _params_json(params))  # validates (raises SpecError); the run's result reuses it
    return Cca(name, params, given), paced


def canonical_table(data: Any) -> Any:
    """A flow's or a group's table as written, its ``cca`` canonical (:func:`parse`: aliases, variants,
    parameters); ``+pacing`` sets ``pacing`` (written ``pacing = false`` contradicts it)."""
    if not isinstance(data, dict) or "cca" not in data:
        return data
    try:
        canonical, paced = parse(data["cca"])
    except SpecError as e:
        raise SpecError(".".join(p for p in ("cca", e.field) if p), e.message) from None
    data = dict(data, cca=canonical)
    if paced:
        if data.get("pacing") is False:
            raise SpecError("pacing", f"false contradicts cca = {data['cca']}{PACING_SUFFIX!r}")
        data["pacing"] = True
    return data


def resolved_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Validate ``params`` (fields, simulator units) with the simulator; every parameter ``name`` runs with."""
    return resolve_with_core("resolve_cca", name, params)


def _params_json(params: dict[str, Any]) -> str:
    """The key of :func:`resolved_params_json`: given fields as sorted JSON (as a RunConfig flow's ``cca_params``)."""
    return json.dumps(params, sort_keys=True)


@lru_cache(maxsize=1024)
def resolved_params_json(name: str, params_json: str) -> str:
    """:func:`resolved_params` as sorted JSON, for ``params`` given as JSON (cached: a sweep
    worker resolves the same few CCAs in every run; :func:`clear_cache` forgets them)."""
    return json.dumps(resolved_params(name, json.loads(params_json)), sort_keys=True)


def format_param(p: dict[str, Any], value: Any) -> str:
    """A parameter value as a person writes it (``25ms``, ``0.7``, ``true``)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    fmt = _FORMAT.get(p["unit"])
    if fmt is not None and isinstance(value, int):
        return fmt(value)
    unit = p["unit"]
    return f"{value} {unit}" if unit and unit not in _FORMAT else str(value)


def label_of(name: str, params: dict[str, Any] | None = None, pacing: bool = False) -> str:
    """How a run's flow is shown: ``cubic``, ``cubic+pacing``, ``cubic[beta=0.5]+pacing``.

    ``params`` are the fields a RunConfig flow gives (``cca_params``, simulator units), shown
    as written in an experiment file (``target=25ms``); an algorithm that paces by itself
    (:func:`needs_pacing`) is never shown with ``+pacing``.
    """
    text = name
    if params:
        by_field = {p["field"]: p for p in params_of(name)} if name in _index() else {}
        shown = []
        for field, value in sorted(params.items()):
            p = by_field.get(field)
            shown.append(f"{p['name']}={format_param(p, value)}" if p else f"{field}={value}")
        text += "[" + ",".join(shown) + "]"
    return text + (PACING_SUFFIX if pacing and not needs_pacing(name) else "")


def _field_value(value: object) -> Cca:
    cca, paced = parse(value)
    if paced:
        raise SpecError("", f"write the pacing request as pacing = true, not as part of {value!r} here")
    return cca


#: A model field holding a CCA: a name (``"cubic"``) or a table with parameters
#: (``{ name = "cubic", beta = 0.7 }``); dumped back as written. The model's
#: before-validator handles ``+pacing`` (it sets the model's ``pacing``).
CcaField = Annotated[Cca, PlainValidator(_field_value), PlainSerializer(lambda c: c.dump())]
