"""Reading an experiment file and applying ``--set`` overrides, before validation.

The raw side of the experiment description (spec.py validates what this returns):
TOML into a dict (every failure a :class:`~ccfair.errors.SpecError` naming the
file), the one parse-time range check every integer passes, and ``PATH=VALUE``
overrides with their shorthand expansion (``cca = "cubic"`` is a table).
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from ccfair.errors import SpecError
from ccfair.units import U64_MAX


def check_integers(node: Any, path: str = "") -> None:
    """Refuse any integer outside the engine's widest types (-2^63 .. 2^64-1), naming its path.

    The one parse-time range check every integer passes before validation
    (``count = 10^30`` must not reach code that counts to it); each field's
    own, narrower range is declared on the field (``Field(le=U32_MAX)``).
    """
    if isinstance(node, bool):
        return
    if isinstance(node, int):
        if not -(2**63) <= node <= U64_MAX:
            raise SpecError(path, f"integer {node} is out of range; at most {U64_MAX} (2^64-1)")
    elif isinstance(node, dict):
        for k, v in node.items():
            check_integers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check_integers(v, f"{path}.{i}" if path else str(i))


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file into a dict; every failure is a :class:`SpecError` naming the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(str(path), "file not found") from None
    except IsADirectoryError:
        raise SpecError(str(path), "is a directory, expected an experiment file (.toml)") from None
    except OSError as e:
        raise SpecError(str(path), f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(str(path), f"not UTF-8 text (byte {e.start}); expected a TOML experiment file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(path), f"malformed TOML: {e}") from None


def parse_override(item: str) -> tuple[list[str], Any]:
    """Split ``"a.b.0.c=VALUE"`` into (path parts, value).

    The value is read as a TOML value when it parses (``8`` -> int, ``true``
    -> bool, ``"x"`` -> str, ``{start="1s"}`` -> table), else kept as a
    string (``8bdp``, ``5s``, ``reno``).
    """
    path, sep, text = item.partition("=")
    path = path.strip()
    if not sep or not path:
        raise SpecError("--set", f"expected PATH=VALUE (e.g. bottleneck.buffer=8bdp), got {item!r}")
    parts = path.split(".")
    if any(not p.strip() for p in parts):
        raise SpecError("--set", f"empty component in path {path!r}")
    text = text.strip()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    return [p.strip() for p in parts], value


#: Keys whose value may be a bare name standing for a table: ``cca = "cubic"`` is
#: ``cca = { name = "cubic" }``, ``qdisc = "codel"`` is ``qdisc = { kind = "codel" }``.
SHORTHAND_KEYS = {"cca": "name", "qdisc": "kind"}


def expand_shorthand(node: dict[str, Any], key: str) -> None:
    """Turn ``node[key]`` from a bare name into its table, so a sub-key can be set (``flows.0.cca.beta``)."""
    if key in SHORTHAND_KEYS and isinstance(node.get(key), str):
        node[key] = {SHORTHAND_KEYS[key]: node[key]}


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``PATH=VALUE`` overrides to a copy of ``raw`` (before validation).

    Path components are table keys or list indices (``flows.1.cca``); missing
    tables are created, list indices must exist. Unknown keys are caught later
    by validation, which names them.
    """
    out = copy.deepcopy(raw)
    for item in overrides:
        parts, value = parse_override(item)
        node: Any = out
        for depth, part in enumerate(parts):
            here = ".".join(parts[: depth + 1])
            parent = ".".join(parts[:depth]) or "the experiment"
            last = depth == len(parts) - 1
            if isinstance(node, list):
                if not part.isdigit():
                    raise SpecError(here, f"{parent} is a list; use an index 0..{len(node) - 1}")
                idx = int(part)
                if idx >= len(node):
                    raise SpecError(here, f"{parent} has {len(node)} entries (indices 0..{len(node) - 1})")
                if last:
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if part not in node:
                        node[part] = {}
                    expand_shorthand(node, part)
                    node = node[part]
            else:
                raise SpecError(here, f"{parent} is a value ({node!r}), not a table or list")
    return out
