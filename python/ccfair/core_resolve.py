"""Ask the simulator (``ccfair._core``) for every parameter an algorithm runs with.

One place for the call shared by CCAs (ccas.py) and queue disciplines (qdiscs.py):
defaults from the Rust declaration, then the given fields, validated by Rust.
"""

from __future__ import annotations

import json
from typing import Any

from ccfair.errors import SpecError


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
        return json.loads(resolve(name, json.dumps(fields)))
    except _core.SimValueError as e:
        field, msg = e.args
        raise SpecError(field, msg) from None
