"""Sender profiles: named sets of a flow's stack settings (S0 scenarios b/c).

S0 (Rüth, Kunze, Hohlfeld, TMA 2019, section IV) competes lab flows with
content providers (CPs) whose TCP stacks are tuned beyond the RFC defaults:
initial windows of 16 or 32 segments (two Akamai configurations), BBR
(Cloudflare and Google). A *profile* names such a configuration once:

    [profiles.cp-like]
    cca = "bbr"            # or a table with its parameters: { name = "cubic", beta = 0.5 }
    initial_cwnd = 32

    [[flows]]
    profile = "cp-like"    # the profile's fields become this flow's defaults
    rtt = "50ms"

A profile is a set of defaults for the flows that name it: a key the flow
sets itself wins over the profile's. Besides the profiles of the experiment
file, the built-in ones in :data:`BUILTIN` can be named directly; each gives
its public source.

Each profile field maps onto one flow key (:data:`FIELDS`); the backends
say which flow keys they apply (:data:`UNSUPPORTED`), and
:func:`check_backend` turns a key a backend cannot apply into a
:class:`~ccfair.errors.SpecError` naming the field, never a silent no-op.

Flow keys for the testbed's application flows are declared here too
(:data:`FLOW_KINDS`, :data:`HTTP_VERSIONS`): ``kind = "http"`` downloads
from an HTTP server (``http = "1.1" | "2"``), optionally a remote ``url``.
The simulator models an HTTP flow as what it is on the wire, a TCP download
from the server's stack (bulk, or finite with ``size``); it cannot fetch a
remote URL.
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from typing import Any

from ccfair.errors import SpecError
from ccfair.units import parse_time

__all__ = [
    "FIELDS",
    "BUILTIN",
    "FLOW_KINDS",
    "HTTP_VERSIONS",
    "UNSUPPORTED",
    "ProfileField",
    "apply_profiles",
    "check_backend",
    "parse_http_version",
    "parse_tso",
    "parse_url",
    "resolve_profile",
    "unsupported",
]

#: ``kind`` of a flow: ccfair's own bulk sender, or an HTTP download.
FLOW_KINDS = ("bulk", "http")
#: HTTP versions of an ``http`` flow (S0 used HTTP/2 multiplexing through h2load).
HTTP_VERSIONS = ("1.1", "2")


@dataclass(frozen=True)
class ProfileField:
    """One profile field: the flow key it sets and what it means."""

    flow_key: str
    doc: str


#: Profile fields, in documentation order, with the flow key each one sets.
FIELDS: dict[str, ProfileField] = {
    "cca": ProfileField("cca", 'congestion control: a name ("bbr", "cubic+pacing") or a table with its parameters'),
    "initial_cwnd": ProfileField("init_cwnd", "initial congestion window, segments (Linux/RFC 6928: 10)"),
    "pacing": ProfileField("pacing", "pace the sender (Linux internal pacing / fq); BBR always paces"),
    "tso": ProfileField("tso", "TSO/GSO: true = Linux autosizing, false = off, N = at most N segments per burst"),
    "min_rto": ProfileField("min_rto", "minimum retransmission timeout (Linux route rto_min; default 200 ms)"),
    "initial_rwnd": ProfileField("rwnd", "initial advertised receive window of the receiver, segments"),
    "delayed_ack": ProfileField("delayed_ack", "delayed ACKs at the receiver (false = quick ACK every segment)"),
}

#: Keys of a profile table that document it rather than set a flow key.
DOC_KEYS = ("source", "description")


def _linux_source(what: str) -> str:
    return f"Linux defaults ({what})"


#: Built-in profiles; each only sets fields its source states.
BUILTIN: dict[str, dict[str, Any]] = {
    "linux": {
        "cca": "cubic",
        "initial_cwnd": 10,
        "pacing": False,
        "min_rto": "200ms",
        "initial_rwnd": 10,
        "delayed_ack": True,
        "description": "an untuned Linux server/client pair",
        "source": _linux_source(
            "net.ipv4.tcp_congestion_control = cubic; include/net/tcp.h: TCP_INIT_CWND 10, "
            "TCP_RTO_MIN 200 ms, TCP_DEFAULT_INIT_RCVWND 10 ('an initial receive window of 10 mss'); "
            "no pacing without fq or SO_MAX_PACING_RATE; delayed ACKs on"
        ),
    },
    "iw10": {
        "initial_cwnd": 10,
        "description": "the standard initial window",
        "source": "RFC 6928 (Increasing TCP's Initial Window): IW = min(10 MSS, max(2 MSS, 14600 B))",
    },
    "cdn-iw16": {
        "initial_cwnd": 16,
        "description": "a CDN configuration with a 16-segment initial window (S0's AkamaiE)",
        "source": "S0 section IV (AkamaiE 'then using IW16'), after Rüth & Hohlfeld, TMA 2018 (S0 ref. [10])",
    },
    "cdn-iw32": {
        "initial_cwnd": 32,
        "description": "a CDN configuration with a 32-segment initial window (S0's AkamaiA)",
        "source": "S0 section IV (AkamaiA 'then using IW32'), after Rüth & Hohlfeld, TMA 2018 (S0 ref. [10])",
    },
    "cp-bbr": {
        "cca": "bbr",
        "description": "a content provider running BBR (v1), other settings unknown (Linux defaults)",
        "source": "S0 section IV: 'Cloudflare and Google have both publicly announced to utilize BBR'",
    },
}


# --------------------------------------------------------------------------
# Field parsers (shared by the profile tables and the flow keys)
# --------------------------------------------------------------------------


def parse_tso(value: object) -> bool | int:
    """``true`` (autosizing), ``false`` (off) or a positive segment count."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and 1 <= value <= 2**32 - 1:
        return value
    raise ValueError(f"expected true (Linux TSO autosizing), false (off) or a segment count in 1..2^32-1, got {value!r}")


def parse_http_version(value: object) -> str:
    """``"1.1"`` or ``"2"`` (also ``2``, ``"2.0"``, ``1.1``, ``"h2"``)."""
    text = str(value).strip().lower().removeprefix("http/")
    text = {"2.0": "2", "h2": "2", "1": "1.1", "http1.1": "1.1"}.get(text, text)
    if text not in HTTP_VERSIONS:
        raise ValueError(f"expected one of {', '.join(repr(v) for v in HTTP_VERSIONS)}, got {value!r}")
    return text


def parse_url(value: object) -> str:
    """An ``http://`` or ``https://`` URL with a host."""
    from urllib.parse import urlsplit

    text = str(value).strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http:// or https:// URL with a host, got {value!r}")
    return text


def _check_field(name: str, value: Any, where: str) -> None:
    """Validate one profile field's value (the flow model validates it again in place)."""
    try:
        if name == "cca":
            if not isinstance(value, (str, dict)):
                raise ValueError(f"expected a CCA name or a table of its parameters, got {value!r}")
        elif name in ("initial_cwnd", "initial_rwnd"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"expected a segment count >= 1, got {value!r}")
        elif name in ("pacing", "delayed_ack"):
            if not isinstance(value, bool):
                raise ValueError(f"expected true or false, got {value!r}")
        elif name == "tso":
            parse_tso(value)
        elif name == "min_rto":
            if parse_time(value) <= 0:
                raise ValueError(f"must be > 0, got {value!r}")
    except ValueError as e:
        raise SpecError(f"{where}.{name}", str(e)) from None


def _check_profile(name: str, table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise SpecError(where, f"expected a table of profile fields, got {table!r}")
    for key, value in table.items():
        if key in DOC_KEYS:
            if not isinstance(value, str):
                raise SpecError(f"{where}.{key}", f"expected text, got {value!r}")
            continue
        if key not in FIELDS:
            valid = list(FIELDS) + list(DOC_KEYS)
            hint = difflib.get_close_matches(key, valid, n=1)
            dym = f"did you mean {hint[0]!r}? " if hint else ""
            raise SpecError(f"{where}.{key}", f"unknown profile field; {dym}valid fields: {', '.join(valid)}")
        _check_field(key, value, where)
    return table


def resolve_profile(name: str, defined: dict[str, Any], where: str) -> dict[str, Any]:
    """The profile table ``name``: one of ``defined`` (the file's ``[profiles]``) or a built-in."""
    if not isinstance(name, str):
        raise SpecError(where, f"expected a profile name, got {name!r}")
    if name in defined:
        return dict(defined[name])
    if name in BUILTIN:
        return BUILTIN[name]
    known = sorted(set(defined) | set(BUILTIN))
    hint = difflib.get_close_matches(name, known, n=1)
    dym = f"did you mean {hint[0]!r}? " if hint else ""
    raise SpecError(where, f"unknown profile {name!r}; {dym}defined: {', '.join(known)}")


def apply_profiles(data: Any) -> Any:
    """Expand ``profile = NAME`` in a raw experiment dict (before validation).

    Every flow naming a profile gets the profile's fields as defaults under
    their flow keys (:data:`FIELDS`); keys the flow sets itself win. The
    ``profile`` key stays on the flow (it labels results). Raises
    :class:`SpecError` for an unknown profile, an unknown or invalid profile
    field, and a file profile that shadows a built-in name.
    """
    if not isinstance(data, dict):
        return data
    defined = data.get("profiles", {})
    if defined is None:
        defined = {}
    if not isinstance(defined, dict):
        raise SpecError("profiles", f"expected tables [profiles.NAME], got {defined!r}")
    for name, table in defined.items():
        if name in BUILTIN:
            raise SpecError(f"profiles.{name}", f"{name!r} is a built-in profile ({BUILTIN[name]['source']}); choose another name")
        _check_profile(name, table, f"profiles.{name}")
    flows = data.get("flows")
    if not isinstance(flows, list):
        return data
    out = dict(data)
    out["flows"] = []
    for i, flow in enumerate(flows):
        if isinstance(flow, dict) and flow.get("profile") is not None:
            table = resolve_profile(flow["profile"], defined, f"flows.{i}.profile")
            merged = {FIELDS[k].flow_key: copy.deepcopy(v) for k, v in table.items() if k in FIELDS}
            if str(flow.get("cca", "")).endswith("+pacing") and "pacing" not in flow:
                merged.pop("pacing", None)  # the flow's own "cca = 'x+pacing'" wins over the profile's pacing
            merged.update(flow)
            flow = merged
        out["flows"].append(flow)
    return out


# --------------------------------------------------------------------------
# What each backend applies
# --------------------------------------------------------------------------

#: Flow settings a backend cannot apply (yet): flow key -> reason. A key
#: set to anything but its default on a flow is refused by check_backend.
UNSUPPORTED: dict[str, dict[str, str]] = {
    "sim": {
        "url": "the simulator cannot fetch a remote URL; remove url (the flow's cca/profile is then simulated as a local server) "
        "or run with --backend testbed",
    },
    # The testbed applies every profile field (python/ccfair/testbed/runner.py apply_stack,
    # httpagent.py); settings a remote URL's server does not let it apply are refused there.
    "testbed": {
        "gro": "the testbed switches GRO off on every veth (python/ccfair/testbed/netns.py), and one receiver "
        "device serves every flow; remove gro or run on the simulator",
        "sack_compression": "the testbed's kernel compresses SACKs (Linux's default tcp_comp_sack_nr = 44) for "
        "every flow of its one receiver; remove sack_compression or run on the simulator",
    },
}

#: Values of a flow key that every backend applies (nothing to refuse).
_NEUTRAL: dict[str, tuple[Any, ...]] = {
    "tso": (None,),
    "gro": (0,),
    "url": (None,),
    "min_rto": (None,),
    "kind": ("bulk",),
    "sack_compression": (None, True),
}


def unsupported(spec: Any, backend: str) -> list[tuple[str, str]]:
    """``(field, reason)`` for every flow setting of ``spec`` that ``backend`` cannot apply."""
    refused = UNSUPPORTED.get(backend, {})
    out: list[tuple[str, str]] = []
    for i, f in enumerate(spec.flows):
        for key, reason in refused.items():
            value = getattr(f, key, None)
            if value in _NEUTRAL.get(key, (None,)):
                continue
            via = f" (set by profile {f.profile!r})" if getattr(f, "profile", None) and _from_profile(spec, i, key) else ""
            out.append((f"flows.{i}.{key}", f"{_toml(value)}{via}: {reason}"))
        # CCA parameters on the testbed: checked per flow by ccfair.testbed.runner.plan_ccas (a BPF
        # port takes them as its module parameters; a host module's are global and refused there).
    return out


def _toml(value: Any) -> str:
    """A value as the experiment file writes it (true/false, "text", 4)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


def _from_profile(spec: Any, i: int, key: str) -> bool:
    """True when flow ``i``'s ``key`` came from its profile, not from the flow table."""
    raw = spec.raw.get("flows", [])
    return i < len(raw) and isinstance(raw[i], dict) and key not in raw[i]


def check_backend(spec: Any, backend: str) -> None:
    """Raise :class:`SpecError` for the first flow setting ``backend`` cannot apply."""
    problems = unsupported(spec, backend)
    if problems:
        field, message = problems[0]
        raise SpecError(field, f"{message} (backend {backend!r})")
