"""Ask the simulator (``ccfair._core``) for every parameter an algorithm runs with.

One place for the call shared by CCAs (ccas.py) and queue disciplines (qdiscs.py):
defaults from the Rust declaration, then the given fields, validated by Rust.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

from ccfair.errors import SpecError


def non_finite(node: Any, path: str = "") -> tuple[str, float] | None:
    """The first NaN or infinity in ``node`` (dicts, lists) as (dotted path, value), else None."""
    stack: list[tuple[Any, str]] = [(node, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where, item
        if isinstance(item, (dict, list)):
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in reversed(list(pairs)))
    return None


def to_json(obj: Any) -> str:
    """``obj`` as JSON for the simulator. JSON has no NaN or infinity: a non-finite number is
    refused here, naming its path, as no parameter of the simulator accepts one."""
    try:
        return json.dumps(obj, allow_nan=False)
    except ValueError:
        bad = non_finite(obj)
        if bad is None:
            raise
        raise SpecError(bad[0], f"must be a finite number, got {bad[1]}") from None


def resolve_with_core(function: str, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``_core.<function>(name, fields)`` as a dict; a rejected field raises :class:`SpecError`.

    Without the extension (or an older one lacking ``function``) the fields are returned as given.
    """
    try:
        from ccfair import _core
    except ImportError:
        return dict(fields)
    resolve = getattr(_core, function, None)
    if resolve is None:
        return dict(fields)
    try:
        return json.loads(resolve(name, to_json(fields)))
    except _core.SimValueError as e:
        field, msg = e.args
        raise SpecError(field, msg) from None


@lru_cache(maxsize=1024)
def resolved_json(function: str, name: str, fields_json: str) -> str:
    """:func:`resolve_with_core` as JSON, for ``fields`` given as JSON: each distinct (algorithm,
    fields) is asked once per process (reading a file and running it ask the same; a sweep's runs
    repeat a few); ``ccas.clear_cache`` forgets the answers."""
    return json.dumps(resolve_with_core(function, name, json.loads(fields_json)))
